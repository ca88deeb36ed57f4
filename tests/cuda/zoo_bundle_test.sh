#!/bin/bash
# resnet18 as a CUDA bundle without a GPU (a slow test, ~1-2 min on 2 cores):
# export it (models/zoo/export.py), compile it with -backend=CUDA (every
# kernel through NVRTC for sm_90), link the bundle with cudart_static, and
# run the bundle's launch code on the host stand-in for cudart
# (fake_cudart.c + the CUDA C built for the host), comparing with the CPU
# backend: max|d| <= 1e-3 * max|y_ref| (fp32 both; summation order differs).
# usage: zoo_bundle_test.sh MODEL_COMPILER MODEL_RUNNER SRC_DIR CUDA_INC CUDA_LIB
set -euo pipefail
MC=$1 MR=$2 SRC=$3 CUDA_INC=$4 CUDA_LIB=$5
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

/usr/bin/python3 "$SRC/models/zoo/export.py" "$T" --models resnet18 \
  > "$T/export.log" 2>&1 || { cat "$T/export.log"; fail "export"; }
"$MC" -model="$T/resnet18.onnx" -backend=CUDA -emit-bundle="$T/b" \
  -network-name=resnet18 -dump-cuda-source > "$T/resnet18.cu"
cc -std=c99 -D_POSIX_C_SOURCE=199309L -DNET=resnet18 \
  -include "$T/b/resnet18.h" -I"$CUDA_INC" "$SRC/tests/cuda/run_cuda_bundle.c" \
  "$T/b/resnet18.o" -L"$CUDA_LIB" -lcudart_static -ldl -lpthread -lrt \
  -o "$T/run" || fail "linking with cudart_static"

c++ -x c++ -std=c++17 -O2 -fPIC -shared -w \
  -include "$SRC/tests/cuda/HostEmulation.h" "$T/resnet18.cu" -o "$T/kern.so"
cc -std=c99 -D_POSIX_C_SOURCE=199309L -D_ISOC11_SOURCE -DNET=resnet18 -w \
  -include "$T/b/resnet18.h" -I"$CUDA_INC" "$SRC/tests/cuda/run_cuda_bundle.c" \
  "$SRC/tests/cuda/fake_cudart.c" "$T/b/resnet18.o" -ldl -o "$T/fakerun"
/usr/bin/python3 -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
numpy_helper.to_array(t).astype(np.float32).tofile(sys.argv[2])" \
  "$T/resnet18.input.pb" "$T/in.bin"
EMBER_FAKE_KERNELS="$T/kern.so" "$T/fakerun" "$T/b/resnet18.weights.bin" \
  "$T" "$T/in.bin" || fail "the bundle failed on the fake runtime"
"$MR" -model="$T/resnet18.onnx" -backend=CPU -input="$T/resnet18.input.pb" \
  -output-dir="$T/ref" > /dev/null
/usr/bin/python3 -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
ref = numpy_helper.to_array(t).astype(np.float32).ravel()
y = np.fromfile(sys.argv[2], dtype=np.float32)
d = float(np.abs(y - ref).max()) / float(np.abs(ref).max())
print('resnet18: max|d|/max|y_ref| = %.2e' % d)
sys.exit(0 if d <= 1e-3 else 1)" "$T/ref/output_0.pb" "$T/out0.bin" ||
  fail "resnet18 on the emulated CUDA bundle differs from the CPU backend"
echo PASS
