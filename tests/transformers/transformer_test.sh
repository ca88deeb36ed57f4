#!/bin/bash
# Transformer accuracy test: exports one model of models/transformers at test
# size into the build tree, computes its onnxruntime reference, runs it with
# model-runner on each backend and compares (tests/transformers/compare.py:
# max|d| <= 1e-4 * max|ref|).
#
# transformer_test.sh RUNNER SRC OUTDIR BACKENDS MODEL [heavy] [bf16|fp16]
#   BACKENDS: comma-separated list.
#   heavy: skip (exit 77) unless EMBER_TRANSFORMERS_HEAVY=1 is set (the
#   full-size benchmark models: minutes each).
#   bf16: run with -precision=bf16 and pass at 3e-2 * max|ref| (the fp32
#   runs pass at 1e-4, so this bounds bf16 against fp32 as well).
#   fp16: -precision=fp16 at 1e-2 * max|ref| (Float16 operands round at
#   2^-11, a quarter of bfloat16's 2^-9).
# Exit status: 1 when an enabled case fails; else 77 (ctest: "Skipped", so
# it stays visible) when a case of the DISABLED list below was run but not
# counted; else 0. Exports are redone when the export code is newer.
set -u
RUNNER=$1 SRC=$2 OUT=$3 BACKENDS=$4 MODEL=$5

# Known failures, MODEL:BACKEND -> reason. They still run and print their
# result, which does not count; delete an entry once the case passes (the
# run says so).
declare -A DISABLED=()
heavy=0 precision=() rel=1e-4 tag=
for a in "${@:6}"; do
  case $a in
    heavy) heavy=1 ;;
    bf16) precision=(-precision=bf16) rel=3e-2 tag=-bf16 ;;
    fp16) precision=(-precision=fp16) rel=1e-2 tag=-fp16 ;;
    *) echo "unknown argument '$a'"; exit 2 ;;
  esac
done
if [ $heavy = 1 ] && [ "${EMBER_TRANSFORMERS_HEAVY:-0}" != 1 ]; then
  echo "skipped: set EMBER_TRANSFORMERS_HEAVY=1 to run the full-size $MODEL"
  exit 77
fi

VPY=$SRC/.venv/bin/python
EXPORT=$SRC/models/transformers
mkdir -p "$OUT"
stale=0
[ -f "$OUT/$MODEL.onnx" ] || stale=1
for f in "$EXPORT/export.py" "$EXPORT/nets.py"; do
  [ "$f" -nt "$OUT/$MODEL.onnx" ] && stale=1
done
if [ $stale = 1 ]; then
  if ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no torch/torchvision to export $MODEL"
    exit 77
  fi
  rm -f "$OUT/$MODEL".*
  /usr/bin/python3 "$EXPORT/export.py" "$OUT" --models "$MODEL" \
    > "$OUT/export-$MODEL.log" 2>&1 ||
    { echo "export failed:"; tail "$OUT/export-$MODEL.log"; exit 1; }
  grep "^$MODEL:" "$OUT/export-$MODEL.log"
fi
if [ ! -f "$OUT/$MODEL.output.pb" ]; then
  "$VPY" "$SRC/tests/transformers/compare.py" reference "$OUT" "$MODEL" || exit 1
fi
inputs=()
for f in "$OUT/$MODEL".input_*.pb; do inputs+=("-input=$f"); done

status=0 disabled=0
for b in ${BACKENDS//,/ }; do
  reason=${DISABLED[$MODEL:$b]:-}
  dir=$OUT/$b$tag/$MODEL
  rm -rf "$dir"
  start=$(date +%s%N)
  if "$RUNNER" -model="$OUT/$MODEL.onnx" -backend="$b" "${inputs[@]}" \
      "${precision[@]}" -output-dir="$dir" > "$OUT/$b$tag-$MODEL.log" 2>&1; then
    secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    "$VPY" "$SRC/tests/transformers/compare.py" check "$dir/output_0.pb" \
      "$OUT/$MODEL.output.pb" "$MODEL" "$b$tag" "$secs" "$rel"
    rc=$?
  else
    echo "FAIL $MODEL on $b: model-runner failed:"
    grep -v '^output ' "$OUT/$b$tag-$MODEL.log" | tail -3
    rc=1
  fi
  if [ -n "$reason" ]; then
    disabled=1
    if [ $rc = 0 ]; then
      echo "DISABLED $MODEL on $b now passes: remove it from DISABLED in $0"
    else
      echo "DISABLED $MODEL on $b (not counted): $reason"
    fi
  elif [ $rc != 0 ]; then
    status=1
  fi
done
[ $status != 0 ] && exit $status
[ $disabled != 0 ] && exit 77
exit 0
