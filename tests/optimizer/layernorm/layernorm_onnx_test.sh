#!/bin/bash
# LayerNorm fusion on real exports: torch.nn.LayerNorm exported at opset 17
# (LayerNormalization) and 16 (the ReduceMean pattern) into OUTDIR, fused by
# fuse-layernorm (the lowered graph must hold one LayerNorm and no
# ReduceMean), run on each backend on a plain and a large-mean input and
# compared with onnxruntime or, for the large-mean input, a float64
# reference (bounds and why in layernorm_models.py).
# layernorm_onnx_test.sh RUNNER SRC OUTDIR BACKENDS
set -u
RUNNER=$1 SRC=$2 OUT=$3 BACKENDS=$4
PY=$SRC/tests/optimizer/layernorm/layernorm_models.py
VPY=$SRC/.venv/bin/python
[ -x "$VPY" ] || { echo "SKIP: no $VPY (onnxruntime)"; exit 77; }
mkdir -p "$OUT"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 has no torch to export the LayerNorm models"
  exit 77
fi
/usr/bin/python3 "$PY" export "$OUT" > "$OUT/export.log" 2>&1 ||
  { echo "export failed:"; tail "$OUT/export.log"; exit 1; }
"$VPY" "$PY" reference "$OUT" || exit 1
status=0
for m in ln17 ln16; do
  graph=$("$RUNNER" -model="$OUT/$m.onnx" -backend=CPU -dump-graph \
    -compile-only 2>&1)
  if [ "$(grep -c ' = LayerNorm(' <<< "$graph")" != 1 ] ||
      grep -q ' = ReduceMean(' <<< "$graph"; then
    echo "FAIL $m: not fused into one LayerNorm:"; echo "$graph"; status=1
  fi
  for b in ${BACKENDS//,/ }; do
    for in in input offset; do
      dir=$OUT/$b/$m.$in
      rm -rf "$dir"
      if ! "$RUNNER" -model="$OUT/$m.onnx" -backend="$b" \
          -input="$OUT/$in.pb" -output-dir="$dir" > "$OUT/$b-$m.$in.log" 2>&1
      then
        echo "FAIL $m $in on $b:"; tail -5 "$OUT/$b-$m.$in.log"; status=1
        continue
      fi
      "$VPY" "$PY" compare "$dir/output_0.pb" "$OUT/$m.$in.output.pb" \
        "$m.$in" "$b" || status=1
    done
  done
done
exit $status
