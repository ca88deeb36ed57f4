#!/bin/bash
# CUDA bundles without a GPU: model-compiler -backend=CUDA writes NAME.o/.h/
# .weights.bin for digits; the header's ABI types equal EmberBundle.h; the
# object needs only the CUDA runtime and cuDNN (the runtime alone with
# generated kernels); it links with a C99 program against cudart_static,
# and that program says "no CUDA device is present" (exit 2) here, or runs
# where a GPU exists; on host stand-ins of cudart/cuDNN/cuBLASLt it matches
# onnxruntime.
# usage: cuda_bundle_test.sh MODEL_COMPILER MODEL_RUNNER SRC_DIR CUDA_INC CUDA_LIB
set -euo pipefail
MC=$1 MR=$2 SRC=$3 CUDA_INC=$4 CUDA_LIB=$5
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$MC" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
  -emit-bundle="$T/b" -network-name=digits -verbose 2> "$T/log"
grep -q "CUDA: .*Conv -> cuDNN" "$T/log" ||
  { cat "$T/log"; fail "-verbose does not report the Conv choice"; }
grep -q "CUDA: .*MatMul -> generated kernel .*too small for cuBLASLt" "$T/log" ||
  { cat "$T/log"; fail "-verbose does not report the MatMul choice"; }
grep -q "link with -lcudnn -lcudart" "$T/log" || fail "no link line"
grep -q "Link with: -lcudnn -lcudart" "$T/b/digits.h" || fail "header: no link line"
grep -q "#define digits_USES_CUDNN 1" "$T/b/digits.h" || fail "header: USES_CUDNN"
grep -q "compiled by NVRTC for sm_90" "$T/log" || fail "no NVRTC report"
for f in digits.o digits.h digits.weights.bin; do
  [ -s "$T/b/$f" ] || fail "missing $f"
done

# The ABI types block is the same text as include/ember/Bundle/EmberBundle.h.
types() { sed -n '/^#ifndef EMBER_BUNDLE_TYPES_DEFINED/,/^#endif \/\* EMBER_BUNDLE_TYPES_DEFINED/p' "$1"; }
diff <(types "$T/b/digits.h") <(types "$SRC/include/ember/Bundle/EmberBundle.h") ||
  fail "the ABI types differ from EmberBundle.h"
grep -q "cudaStream_t stream" "$T/b/digits.h" || fail "entry lacks the stream"

# Undefined symbols: the CUDA runtime's and cuDNN's (no cuBLASLt: no large
# MatMul), nothing of ours; the library-op code is internal.
undef=$(nm -u "$T/b/digits.o" | awk '{print $2}' | sort)
bad=$(echo "$undef" | grep -vE '^(cuda[A-Z]|cudnn)[A-Za-z0-9_]*$|^memset$' || true)
[ -z "$bad" ] || fail "unexpected undefined symbols: $bad"
echo "$undef" | grep -qx cudnnConvolutionForward || fail "no cuDNN call"
echo "$undef" | grep -qx cudnnConvolutionBiasActivationForward || fail "no fused cuDNN call"
if echo "$undef" | grep -q cublasLt; then fail "cuBLASLt referenced"; fi
if nm "$T/b/digits.o" | grep -q " T ember_lib"; then fail "LibOps symbols exported"; fi
# With generated kernels only: five runtime functions (the last two for
# NAME_sync_each_step), nothing else.
"$MC" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
  -emit-bundle="$T/g" -network-name=digits -cuda-gemm=generated \
  -cuda-conv=generated -verbose 2> "$T/glog"
grep -q "Conv -> generated (.*; -cuda-conv=generated)" "$T/glog" ||
  { cat "$T/glog"; fail "no generated Conv report"; }
undef=$(nm -u "$T/g/digits.o" | awk '{print $2}' | sort | tr '\n' ' ')
[ "$undef" = "cudaGetLastError cudaLaunchKernelExC cudaLibraryGetKernel cudaLibraryLoadData cudaStreamSynchronize " ] ||
  fail "unexpected undefined symbols (generated): $undef"
grep -q "Link with: -lcudart" "$T/g/digits.h" || fail "header (generated): link line"
nm "$T/b/digits.o" | grep -q " T digits_init" || fail "no digits_init"
nm "$T/b/digits.o" | grep -qE " [DR] digits_info" || fail "no digits_info"

# The header compiles without cuda_runtime.h (C99) and with it (C++).
printf '#include "digits.h"\nint main(void){return (int)digits_info.numInputs - 1;}\n' > "$T/h.c"
cc -std=c99 -I"$T/b" -c "$T/h.c" -o "$T/h.o" || fail "header: C99"
printf '#include <cuda_runtime_api.h>\n#include "digits.h"\nint main(){return 0;}\n' > "$T/h.cpp"
c++ -I"$CUDA_INC" -I"$T/b" -c "$T/h.cpp" -o "$T/h2.o" || fail "header: C++ with CUDA"

# Link with cudart_static and cuDNN, and run.
cc -std=c99 -D_POSIX_C_SOURCE=199309L -DNET=digits -include "$T/b/digits.h" \
  -I"$CUDA_INC" "$SRC/tests/cuda/run_cuda_bundle.c" "$T/b/digits.o" \
  -L"$CUDA_LIB" -Wl,-rpath,"$CUDA_LIB" -lcudnn -lcudart_static -ldl \
  -lpthread -lrt -lstdc++ -o "$T/run" || fail "linking the bundle"
cc -std=c99 -D_POSIX_C_SOURCE=199309L -DNET=digits -include "$T/g/digits.h" \
  -I"$CUDA_INC" "$SRC/tests/cuda/run_cuda_bundle.c" "$T/g/digits.o" \
  -L"$CUDA_LIB" -lcudart_static -ldl -lpthread -lrt -o "$T/grun" ||
  fail "linking the generated-only bundle with cudart_static alone"
set +e
"$T/run" "$T/b/digits.weights.bin" "$T" "$T/b/digits.weights.bin" > "$T/out" 2>&1
rc=$?
set -e
if [ $rc -eq 2 ]; then
  grep -q "^no CUDA device is present" "$T/out" || fail "exit 2 without the message"
  echo "SKIP (GPU part): no CUDA device is present; bundle built and linked"
elif [ $rc -ne 0 ]; then
  cat "$T/out"; fail "the bundle runner failed ($rc)"
fi

# The bundle's own launch code, linked against host stand-ins for cudart
# (fake_cudart.c, running the same CUDA C compiled for the host), cuDNN
# and cuBLASLt (fake_cudnn.c, fake_cublaslt.c): checks the embedded cubin,
# kernel names, launch configs and arguments, and the library calls (every
# MatMul on cuBLASLt here, -cuda-gemm=cublaslt) end to end against
# onnxruntime's outputs (1e-4 absolute, as tests/e2e/DigitsTest).
"$MC" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
  -emit-bundle="$T/e" -network-name=digits -cuda-gemm=cublaslt \
  -dump-cuda-source -verbose > "$T/digits.cu" 2> "$T/elog"
grep -q "MatMul -> cuBLASLt (fp32, 1 x 1x10x" "$T/elog" ||
  { cat "$T/elog"; fail "-cuda-gemm=cublaslt not honoured"; }
grep -q "+ bias epilogue" "$T/elog" || { cat "$T/elog"; fail "no bias epilogue"; }
c++ -x c++ -std=c++17 -O1 -fPIC -shared -w \
  -include "$SRC/tests/cuda/HostEmulation.h" "$T/digits.cu" -o "$T/kern.so" ||
  fail "the CUDA C does not build for the host"
cc -std=c99 -D_POSIX_C_SOURCE=199309L -D_ISOC11_SOURCE -DNET=digits -w \
  -include "$T/e/digits.h" -I"$CUDA_INC" "$SRC/tests/cuda/run_cuda_bundle.c" \
  "$SRC/tests/cuda/fake_cudart.c" "$SRC/tests/cuda/fake_cudnn.c" \
  "$SRC/tests/cuda/fake_cublaslt.c" "$T/e/digits.o" -ldl -lm -o "$T/fakerun" ||
  fail "linking the bundle with the fake runtime and libraries"
for d in 0 3 7; do
  base="$SRC/models/digits/test_data/digit-$d"
  /usr/bin/python3 -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
numpy_helper.to_array(t).astype(np.float32).tofile(sys.argv[2])" \
    "$base.input.pb" "$T/in.bin"
  EMBER_FAKE_KERNELS="$T/kern.so" "$T/fakerun" "$T/e/digits.weights.bin" \
    "$T" "$T/in.bin" || fail "the bundle failed on the fake runtime"
  /usr/bin/python3 -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
ref = numpy_helper.to_array(t).astype(np.float32).ravel()
y = np.fromfile(sys.argv[2], dtype=np.float32)
d = float(np.abs(y - ref).max()) if y.shape == ref.shape else float('inf')
print('digit %s: max|d| = %.2e' % (sys.argv[3], d))
sys.exit(0 if d <= 1e-4 and int(y.argmax()) == int(ref.argmax()) else 1)" \
    "$base.output.pb" "$T/out0.bin" "$d" || fail "digit $d differs from onnxruntime"
done

# The runner's eager first run, then the entry captured into a graph and
# replayed (outputs cleared in between); where the stand-ins refuse the
# capture, the cubin or a library's plan, the run goes on (stream launches,
# the PTX, the op's generated kernel) and says so once.
check_refusal() { # REFUSE EXPECTED-MESSAGE [TIMES]
  EMBER_FAKE_REFUSE="$1" EMBER_FAKE_KERNELS="$T/kern.so" "$T/fakerun" \
    "$T/e/digits.weights.bin" "$T" -graph "$T/in.bin" 2> "$T/rerr" ||
    { cat "$T/rerr"; fail "refusing '$1': the run failed"; }
  /usr/bin/python3 -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
ref = numpy_helper.to_array(t).astype(np.float32).ravel()
y = np.fromfile(sys.argv[2], dtype=np.float32)
sys.exit(0 if y.shape == ref.shape and np.abs(y - ref).max() <= 1e-4 else 1)" \
    "$base.output.pb" "$T/out0.bin" || fail "refusing '$1': wrong result"
  if [ -z "$2" ]; then
    [ ! -s "$T/rerr" ] || { cat "$T/rerr"; fail "unexpected messages"; }
  else
    [ "$(grep -c -- "$2" "$T/rerr")" -eq "${3:-1}" ] ||
      { cat "$T/rerr"; fail "refusing '$1': not said ${3:-1} time(s): $2"; }
  fi
}
check_refusal "" ""
check_refusal capture "no CUDA graph (starting the capture: cudaErrorStreamCaptureUnsupported"
check_refusal instantiate "no CUDA graph (instantiating: cudaErrorFake"
check_refusal cubin ""
check_refusal cudnn-plan ": cuDNN cannot run it (planning returned CUDNN_STATUS_NOT_SUPPORTED_SHAPE (3002)); running its generated kernel instead" "$(grep -c 'Conv -> cuDNN' "$T/elog")"
# A fault surfaces at the synchronize; -sync-each-step names its step.
if EMBER_FAKE_REFUSE=fault EMBER_FAKE_KERNELS="$T/kern.so" "$T/fakerun" \
    "$T/e/digits.weights.bin" "$T" "$T/in.bin" 2> "$T/ferr"; then
  fail "a fault went unreported"; fi
grep -q "rerun with -sync-each-step.*: cudaErrorIllegalAddress: an illegal memory access" "$T/ferr" ||
  { cat "$T/ferr"; fail "fault: no error name or hint"; }
if EMBER_FAKE_REFUSE=fault EMBER_FAKE_KERNELS="$T/kern.so" "$T/fakerun" \
    "$T/e/digits.weights.bin" "$T" -sync-each-step "$T/in.bin" 2> "$T/ferr"; then
  fail "a fault went unreported (-sync-each-step)"; fi
grep -q "the first run failed at step [0-9]* of [0-9]*, kernel digits_k[0-9]* (" "$T/ferr" &&
  grep -q "cudaErrorIllegalAddress" "$T/ferr" ||
  { cat "$T/ferr"; fail "-sync-each-step does not name the failing step"; }
check_refusal cublaslt-plan ": cuBLASLt cannot run it (planning returned CUBLAS_STATUS_NOT_SUPPORTED (15)); running its generated kernel instead" "$(grep -c 'MatMul -> cuBLASLt' "$T/elog")"

# Builds the hand-made model $1 (a dir under tests/onnx/handmade) as the
# CUDA bundle $2 in $T/$2 with its host-emulated kernels ($T/$2.so) and
# the runner ($T/$2.run); the rest are extra model-compiler flags.
handmade_bundle() {
  local model=$1 net=$2
  shift 2
  "$MC" -model="$SRC/tests/onnx/handmade/$model/model.onnx" -backend=CUDA \
    -emit-bundle="$T/$net" -network-name="$net" -dump-cuda-source "$@" \
    > "$T/$net.cu" || fail "$net bundle"
  c++ -x c++ -std=c++17 -O1 -fPIC -shared -w \
    -include "$SRC/tests/cuda/HostEmulation.h" "$T/$net.cu" -o "$T/$net.so" ||
    fail "the $net bundle's CUDA C does not build for the host"
  local checks=()
  ! grep -q "define ${net}_CHECK_MESSAGES" "$T/$net/$net.h" ||
    checks=(-DCHECK_MESSAGES="${net}_CHECK_MESSAGES")
  cc -std=c99 -D_POSIX_C_SOURCE=199309L -D_ISOC11_SOURCE -DNET="$net" -w \
    "${checks[@]}" -include "$T/$net/$net.h" -I"$CUDA_INC" "$SRC/tests/cuda/run_cuda_bundle.c" \
    "$SRC/tests/cuda/fake_cudart.c" "$SRC/tests/cuda/fake_cudnn.c" \
    "$SRC/tests/cuda/fake_cublaslt.c" "$T/$net/$net.o" -ldl -lm -o "$T/$net.run" ||
    fail "linking the $net bundle with the fake runtime"
}
# Writes inputs 0 and 1 of data set dir $1 as raw $T/in0.bin, $T/in1.bin.
raw_inputs() {
  /usr/bin/python3 -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
for i in range(2):
    t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1] + '/input_%d.pb' % i, 'rb').read())
    numpy_helper.to_array(t).tofile(sys.argv[2] + '/in%d.bin' % i)" "$1" "$T"
}
# Succeeds when $T/out0.bin equals the float output_0.pb of data set $1.
same_output() {
  /usr/bin/python3 -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
ref = numpy_helper.to_array(t).astype(np.float32).ravel()
y = np.fromfile(sys.argv[2], dtype=np.float32)
sys.exit(0 if y.shape == ref.shape and np.abs(y - ref).max() <= 1e-5 * max(1, np.abs(ref).max()) else 1)" \
    "$1/output_0.pb" "$T/out0.bin"
}

# A loop kept as a loop (tests/onnx/handmade/loops, a trip count that the
# data decides): the entry reads the loop flag back after every test and
# jumps; against onnxruntime's outputs, zero iterations (set 1) included.
# -graph: the entry synchronizes, so the capture fails, said once, and the
# runs stay stream launches.
handmade_bundle loops/test_loop_while_data_cond wloop -cuda-gemm=generated \
  -cuda-conv=generated
for set in 0 1 2; do
  D="$SRC/tests/onnx/handmade/loops/test_loop_while_data_cond/test_data_set_$set"
  raw_inputs "$D"
  for g in "" -graph; do
    EMBER_FAKE_KERNELS="$T/wloop.so" "$T/wloop.run" "$T/wloop/wloop.weights.bin" \
      "$T" $g "$T/in0.bin" "$T/in1.bin" 2> "$T/lerr" ||
      { cat "$T/lerr"; fail "loop bundle, set $set $g: the run failed"; }
    if [ -n "$g" ]; then
      [ "$(grep -c "no CUDA graph (capturing: step .*(reading its loop flag)" "$T/lerr")" -eq 1 ] ||
        { cat "$T/lerr"; fail "loop bundle -graph: no one-line capture refusal"; }
    else
      [ ! -s "$T/lerr" ] || { cat "$T/lerr"; fail "loop bundle: messages"; }
    fi
    same_output "$D" || fail "loop bundle, set $set $g: differs from onnxruntime"
  done
done

# Bad options give one-line errors.
if "$MC" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
    -emit-bundle="$T/c" -cuda-arch=sm_x 2> "$T/err"; then fail "accepted sm_x"; fi
grep -q "is not an architecture like sm_90" "$T/err" || fail "bad arch message"
if "$MC" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
    -emit-bundle="$T/c" -cuda-arch=sm_5 2> "$T/err"; then fail "accepted sm_5"; fi
grep -q "^model-compiler: error: -cuda-arch 'sm_5' is not supported by this NVRTC (sm_" "$T/err" &&
  [ "$(wc -l < "$T/err")" -eq 1 ] || { cat "$T/err"; fail "unsupported arch: not one line"; }
if "$MC" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
    -emit-bundle="$T/c" -embed-weights 2> "$T/err"; then fail "accepted -embed-weights"; fi
grep -q "not supported by the CUDA backend" "$T/err" || fail "embed message"
if "$MC" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
    -emit-bundle="$T/c" -cuda-conv=cublaslt 2> "$T/err"; then fail "accepted -cuda-conv=cublaslt"; fi
grep -qx "model-compiler: error: -cuda-conv 'cublaslt' is not auto, cudnn or generated" "$T/err" ||
  { cat "$T/err"; fail "bad -cuda-conv message"; }
if "$MC" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
    -emit-bundle="$T/c" -cuda-gemm=cublaslt -target=aarch64-linux-gnu 2> "$T/err"; then
  fail "accepted cuBLASLt for an aarch64 host"; fi
grep -q "need an x86_64 host target" "$T/err" || { cat "$T/err"; fail "aarch64 message"; }
"$MC" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
  -emit-bundle="$T/d" -network-name=d80 -cuda-arch=sm_80 || fail "sm_80"

# In-process: a clean one-line error without a GPU.
set +e
"$MR" -model="$SRC/models/digits/digits.onnx" -backend=CUDA \
  -input="$SRC/models/digits/test_data/digit-3.input.pb" > "$T/mr" 2>&1
rc=$?
set -e
if [ $rc -ne 0 ]; then
  grep -q "no CUDA device is present" "$T/mr" || { cat "$T/mr"; fail "model-runner message"; }
  [ "$(wc -l < "$T/mr")" -eq 1 ] || { cat "$T/mr"; fail "more than one line"; }
fi

# Run-time checks (tests/onnx/handmade/checks): the entry reads the status
# back at its end; passing data gives onnxruntime's output, a window that
# runs off the data returns 30000 + the check's number k, which the runner
# prints as the check's message and "(check k)".
handmade_bundle checks/test_check_loop_slice chk
grep -q "#define chk_CHECK_CODE_BASE 30000" "$T/chk/chk.h" ||
  fail "the checks bundle's header has no check code base"
for kind in checks checks_fail; do
  D="$SRC/tests/onnx/handmade/$kind/test_check_loop_slice/test_data_set_0"
  raw_inputs "$D"
  rm -f "$T/out0.bin"
  rc=0
  EMBER_FAKE_KERNELS="$T/chk.so" "$T/chk.run" "$T/chk/chk.weights.bin" "$T" \
    "$T/in0.bin" "$T/in1.bin" 2> "$T/cerr" || rc=$?
  if [ $kind = checks ]; then
    [ $rc -eq 0 ] || { cat "$T/cerr"; fail "checks bundle: passing data failed"; }
    same_output "$D" || fail "checks bundle: differs from onnxruntime on passing data"
  else
    [ $rc -ne 0 ] && grep -q "run-time check failed: node '.*' (Slice): .* (check [0-9]*)$" "$T/cerr" ||
      { cat "$T/cerr"; fail "checks bundle: a window off the data did not fail the call"; }
  fi
done
echo PASS
