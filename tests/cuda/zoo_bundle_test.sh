#!/bin/bash
# Zoo models as CUDA bundles without a GPU. For each model: export it (as
# tests/zoo/zoo_test.sh does, reusing the build tree's exports and
# onnxruntime references), compile it with -backend=CUDA (every kernel
# through NVRTC for sm_90; MatMul/Conv on cuBLASLt/cuDNN by the default
# rule), link the bundle with cudart_static, cuBLASLt and cuDNN, then run
# the bundle's own host code against host stand-ins of cudart, cuBLASLt and
# cuDNN (fake_*.c, with the CUDA C built for the host) and compare with
# onnxruntime: max|d| <= 1e-4 * max|y_ref| and the same top-1 (the zoo
# tolerance; everything is fp32).
#
# usage: zoo_bundle_test.sh MC SRC CUDA_INC CUDA_LIB ZOODIR MODELS [heavy]
#   MODELS: comma-separated; a model written NAME:generated is compiled
#   with -cuda-gemm=generated -cuda-conv=generated instead.
#   heavy: skip (exit 77) unless EMBER_ZOO_HEAVY=1 is set.
set -uo pipefail
MC=$1 SRC=$2 CUDA_INC=$3 CUDA_LIB=$4 OUT=$5 MODELS=$6
if [ "${7:-}" = heavy ] && [ "${EMBER_ZOO_HEAVY:-0}" != 1 ]; then
  echo "skipped: set EMBER_ZOO_HEAVY=1 to run the heavy zoo models"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$OUT"
names=$(echo "$MODELS" | tr ',' '\n' | sed 's/:.*//' | sort -u)
missing=$(for m in $names; do
  [ -f "$OUT/$m.onnx" ] && [ -f "$OUT/$m.input.pb" ] || echo "$m"; done | paste -sd,)
if [ -n "$missing" ]; then
  /usr/bin/python3 "$SRC/models/zoo/export.py" "$OUT" --models "$missing" \
    > "$T/export.log" 2>&1 || { tail "$T/export.log"; echo "FAIL: export"; exit 1; }
fi
refs=$(for m in $names; do [ -f "$OUT/$m.output.pb" ] || echo "$m"; done)
if [ -n "$refs" ]; then
  "$SRC/.venv/bin/python" "$SRC/models/zoo/reference.py" "$OUT" $refs || exit 1
fi
# The host stand-ins, built once.
(cd "$T" && cc -std=c99 -O2 -D_ISOC11_SOURCE -w -I"$CUDA_INC" -c \
  "$SRC/tests/cuda/fake_cudart.c" "$SRC/tests/cuda/fake_cudnn.c" \
  "$SRC/tests/cuda/fake_cublaslt.c") ||
  { echo "FAIL: building the stand-ins"; exit 1; }

status=0
for spec in ${MODELS//,/ }; do
  m=${spec%%:*} flags=()
  [ "$spec" != "${spec#*:generated}" ] && flags=(-cuda-gemm=generated -cuda-conv=generated)
  d=$T/$m
  start=$(date +%s)
  if ! "$MC" -model="$OUT/$m.onnx" -backend=CUDA -emit-bundle="$d" \
      -network-name=net "${flags[@]}" -dump-cuda-source -verbose \
      > "$d.cu" 2> "$d.log"; then
    echo "FAIL $spec: model-compiler:"; tail -3 "$d.log"; status=1; continue
  fi
  libs=$(grep -o "Link with:.*\*/" "$d/net.h" | sed 's/Link with://; s/\*\///')
  if ! cc -std=c99 -D_POSIX_C_SOURCE=199309L -DNET=net -include "$d/net.h" \
      -I"$CUDA_INC" "$SRC/tests/cuda/run_cuda_bundle.c" "$d/net.o" \
      -L"$CUDA_LIB" ${libs//-lcudart/-lcudart_static} -ldl -lpthread -lrt \
      -o "$d/run" 2> "$d.link"; then
    echo "FAIL $spec: linking with$libs:"; tail -3 "$d.link"; status=1; continue
  fi
  c++ -x c++ -std=c++17 -O2 -fPIC -shared -w \
    -include "$SRC/tests/cuda/HostEmulation.h" "$d.cu" -o "$d/kern.so" &&
  cc -std=c99 -D_POSIX_C_SOURCE=199309L -D_ISOC11_SOURCE -DNET=net -w \
    -include "$d/net.h" -I"$CUDA_INC" "$SRC/tests/cuda/run_cuda_bundle.c" \
    "$T"/fake_*.o "$d/net.o" -ldl -lm -o "$d/fakerun" ||
    { echo "FAIL $spec: building the emulation"; status=1; continue; }
  /usr/bin/python3 -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
numpy_helper.to_array(t).astype(np.float32).tofile(sys.argv[2])" \
    "$OUT/$m.input.pb" "$d/in.bin"
  if ! EMBER_FAKE_KERNELS="$d/kern.so" "$d/fakerun" "$d/net.weights.bin" \
      "$d" "$d/in.bin" > "$d.run" 2>&1; then
    echo "FAIL $spec: the bundle failed on the stand-ins:"; tail -3 "$d.run"
    status=1; continue
  fi
  lib=$(grep -c -- "-> cuBLASLt\|-> cuDNN" "$d.log")
  /usr/bin/python3 -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
ref = numpy_helper.to_array(t).astype(np.float32).ravel()
y = np.fromfile(sys.argv[2], dtype=np.float32)
d = float(np.abs(y - ref).max()) / float(np.abs(ref).max()) if y.shape == ref.shape else float('inf')
ok = d <= 1e-4 and int(y.argmax()) == int(ref.argmax())
print('%s %s: max|d|/max|y_ref| = %.2e, top-1 %s, %s library calls, %s s' % (
    'PASS' if ok else 'FAIL', sys.argv[3], d,
    'equal' if int(y.argmax()) == int(ref.argmax()) else 'differs', sys.argv[4], sys.argv[5]))
sys.exit(0 if ok else 1)" "$OUT/$m.output.pb" "$d/out0.bin" "$spec" "$lib" \
    "$(( $(date +%s) - start ))" || status=1
  rm -rf "$d" "$d.cu"
done
exit $status
