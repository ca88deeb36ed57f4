#!/bin/bash
# Zoo test: exports torchvision models into the build tree (never into the
# source tree), computes onnxruntime references, compiles and runs each with
# model-runner on each backend, and compares (tests/zoo/compare.py).
#
# zoo_test.sh RUNNER SRC OUTDIR BACKENDS MODELS [heavy]
#   BACKENDS, MODELS: comma-separated lists (the lead adds CPU to BACKENDS).
#   heavy: skip (exit 77) unless EMBER_ZOO_HEAVY=1 is set.
# Exports and references are reused when present, so reruns are fast.
set -u
RUNNER=$1 SRC=$2 OUT=$3 BACKENDS=$4 MODELS=$5
if [ "${6:-}" = heavy ] && [ "${EMBER_ZOO_HEAVY:-0}" != 1 ]; then
  echo "skipped: set EMBER_ZOO_HEAVY=1 to run the heavy zoo models"
  exit 77
fi
VPY=$SRC/.venv/bin/python
mkdir -p "$OUT"
missing=()
for m in ${MODELS//,/ }; do
  [ -f "$OUT/$m.onnx" ] && [ -f "$OUT/$m.input.pb" ] || missing+=("$m")
done
if [ ${#missing[@]} -gt 0 ]; then
  list=$(IFS=,; echo "${missing[*]}")
  /usr/bin/python3 "$SRC/models/zoo/export.py" "$OUT" --models "$list" \
    > "$OUT/export-$list.log" 2>&1 || { echo "export failed:"; tail "$OUT/export-$list.log"; exit 1; }
fi
refs=()
for m in ${MODELS//,/ }; do
  [ -f "$OUT/$m.output.pb" ] || refs+=("$m")
done
if [ ${#refs[@]} -gt 0 ]; then
  "$VPY" "$SRC/models/zoo/reference.py" "$OUT" "${refs[@]}" || exit 1
fi
status=0
for b in ${BACKENDS//,/ }; do
  for m in ${MODELS//,/ }; do
    dir=$OUT/$b/$m
    rm -rf "$dir"
    start=$(date +%s%N)
    if ! "$RUNNER" -model="$OUT/$m.onnx" -backend="$b" \
        -input="$OUT/$m.input.pb" -output-dir="$dir" > "$OUT/$b-$m.log" 2>&1; then
      echo "FAIL $m on $b: model-runner failed:"; tail -5 "$OUT/$b-$m.log"
      status=1; continue
    fi
    secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    "$VPY" "$SRC/tests/zoo/compare.py" "$dir/output_0.pb" "$OUT/$m.output.pb" \
      "$m" "$b" "$secs" || status=1
  done
done
exit $status
