#!/usr/bin/env bash
# Checks zoo models on a backend against onnxruntime's outputs (made by
# models/zoo/reference.py): max|d| <= 1e-4 * max|y_ref| and equal top-1.
#   scripts/zoo-check.sh ZOO_DIR [BACKEND] [MODEL...]
set -u
cd "$(dirname "$0")/.."
ZOO=$1
BACKEND=${2:-CPU}
shift 2 2>/dev/null || shift $#
models=${*:-$(ls "$ZOO"/*.onnx | xargs -n1 basename | sed 's/\.onnx$//')}
BUILD_DIR=${BUILD_DIR:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
for m in $models; do
  if ! out=$("$BUILD_DIR/bin/model-runner" -model="$ZOO/$m.onnx" -backend="$BACKEND" \
      -input="$ZOO/$m.input.pb" -output-dir="$TMP/$m" 2>&1); then
    echo "$m: cannot run: $(echo "$out" | head -1)"; fails=$((fails + 1)); continue
  fi
  /usr/bin/python3 - "$ZOO/$m.output.pb" "$TMP/$m/output_0.pb" "$m" <<'PYEOF' || fails=$((fails + 1))
import sys, numpy as np, onnx
from onnx import numpy_helper
ref = numpy_helper.to_array(onnx.load_tensor(sys.argv[1])).astype(np.float64)
got = numpy_helper.to_array(onnx.load_tensor(sys.argv[2])).astype(np.float64)
d = np.max(np.abs(got - ref)); scale = np.max(np.abs(ref))
ok = d <= 1e-4 * scale and np.argmax(got) == np.argmax(ref)
print("%s: max|d| = %.3g = %.2g * max|y_ref|, top-1 %d vs %d  %s" % (
    sys.argv[3], d, d / scale, np.argmax(got), np.argmax(ref), "ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PYEOF
done
exit $((fails > 0))
