#!/bin/bash
# GELU fusion on real exports: torch.nn.GELU() and GELU(approximate='tanh')
# exported at opset 17 into OUTDIR, fused by fuse-gelu (the lowered graph
# must hold one Gelu and no Erf or Tanh), run on each backend and compared
# with onnxruntime (bound in gelu_models.py).
# gelu_onnx_test.sh RUNNER SRC OUTDIR BACKENDS
set -u
RUNNER=$1 SRC=$2 OUT=$3 BACKENDS=$4
PY=$SRC/tests/optimizer/gelu/gelu_models.py
VPY=$SRC/.venv/bin/python
[ -x "$VPY" ] || { echo "SKIP: no $VPY (onnxruntime)"; exit 77; }
mkdir -p "$OUT"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 has no torch to export the GELU models"
  exit 77
fi
/usr/bin/python3 "$PY" export "$OUT" > "$OUT/export.log" 2>&1 ||
  { echo "export failed:"; tail "$OUT/export.log"; exit 1; }
"$VPY" "$PY" reference "$OUT" || exit 1
status=0
for m in gelu_erf gelu_tanh; do
  graph=$("$RUNNER" -model="$OUT/$m.onnx" -backend=CPU -dump-graph \
    -compile-only 2>&1)
  if [ "$(grep -c ' = Gelu(' <<< "$graph")" != 1 ] ||
      grep -q -e ' = Erf(' -e ' = Tanh(' <<< "$graph"; then
    echo "FAIL $m: not fused into one Gelu:"; echo "$graph"; status=1
  fi
  for b in ${BACKENDS//,/ }; do
    dir=$OUT/$b/$m
    rm -rf "$dir"
    if ! "$RUNNER" -model="$OUT/$m.onnx" -backend="$b" -input="$OUT/input.pb" \
        -output-dir="$dir" > "$OUT/$b-$m.log" 2>&1; then
      echo "FAIL $m on $b:"; tail -5 "$OUT/$b-$m.log"; status=1; continue
    fi
    "$VPY" "$PY" compare "$dir/output_0.pb" "$OUT/$m.output.pb" \
      "$OUT/input.pb" "$m" "$b" || status=1
  done
done
exit $status
