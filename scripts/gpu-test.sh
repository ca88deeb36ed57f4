#!/bin/bash
# CUDA backend checks on a GPU machine that has no compilers and no LLVM.
#
#   scripts/gpu-test.sh prepare DIR [BUILD_DIR]   (here: needs the build)
#   scripts/gpu-test.sh run DIR                   (there: driver + Python/PyTorch)
#
# prepare writes, for every model (the generated op models of
# tests/bundles/make_models.py, digits, resnet18 and any zoo model named in
# MODELS; each at batch 1 and 64, in up to two flavours: NAME_bB with
# MatMul/Conv on cuBLASLt/cuDNN by the default rule, NAME_bB_gen with
# generated kernels only):
#   DIR/NAME/run            the CUDA bundle linked with cudart_static (and,
#                           for the library flavour, -lcublasLt -lcudnn as
#                           its header says; run finds them on the GPU
#                           machine, e.g. in PyTorch's wheels)
#   DIR/NAME/weights.bin    its constant region (shared between flavours and
#                           batch sizes when equal)
#   DIR/NAME/in*.spec       deterministic inputs (scripts/gpu_inputs.py)
#   DIR/NAME/ref*.bin       the CPU backend's outputs for those inputs
#   DIR/NAME/compile.log    model-compiler -verbose (per-op choices)
# and, for a subset of the ONNX backend node tests (NODE_TESTS, globs; the
# ones -backend=CUDA compiles and whose outputs are float32):
#   DIR/node/TEST/net.so    the CUDA bundle as a shared object, run by the
#                           one runner DIR/run-so (cudart_static inside)
#   DIR/node/TEST/in*.bin, ref*.bin   the test's inputs and ONNX's expected
#                           outputs
# plus copies of this script, gpu_run.py and gpu_inputs.py, and checks that
# DIR stays within 60 MiB. run compares every CUDA output with its reference
# (max|d| <= 1e-3 * max|y_ref|; fp32 everywhere: no TF32 in cuBLASLt
# (CUBLAS_COMPUTE_32F) or cuDNN (CUDNN_FMA_MATH)), then prints a latency
# table with PyTorch eager and torch.compile (resnet18, defined in
# gpu_run.py) next to it.
# MODELS="digits resnet18" limits prepare to some models; FLAVOURS (default
# "lib gen") picks the flavours of mlp/convnet/digits and ZOO_FLAVOURS
# (default "lib") those of zoo models. Later rounds when the weights do not
# fit at once, e.g. MODELS=resnet18 ZOO_FLAVOURS=gen NODE_TESTS= , or
# MODELS=resnet50 NODE_TESTS= .
set -euo pipefail
cmd=${1:-}
DIR=${2:-}
[ -n "$cmd" ] && [ -n "$DIR" ] || { sed -n 2,38p "$0"; exit 1; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
LIMIT=$((60 * 1024 * 1024))

# Builds DIR/NAME_bBATCH[_gen] for model $1 (base name $2) at batch $3,
# flavour $5 (lib or gen); work in $4.
# (Called in a condition, where set -e is off: every step checks.)
one() {
  local onnx=$1 base=$2 batch=$3 W=$4 flavour=$5
  local name=${base}_b$batch sfx="" flags=()
  if [ "$flavour" = gen ]; then
    sfx=_gen flags=(-cuda-gemm=generated -cuda-conv=generated)
  fi
  local out=$DIR/$name$sfx
  mkdir -p "$out"
  $PY "$SRC/scripts/gpu_prepare.py" "$onnx" "$batch" "$out" "$W/$name.onnx" ||
    return 1
  if [ ! -f "$W/$name.ref/ref0.bin" ]; then # once per model and batch
    "$MC" -model="$W/$name.onnx" -backend=CPU -emit-bundle="$W/$name.cpu" \
      -network-name=net -mcpu=x86-64-v2 || return 1
    cc -std=c99 -O1 -D_ISOC11_SOURCE -DNET=net -include "$W/$name.cpu/net.h" \
      "$SRC/tests/bundles/run_bundle.c" "$W/$name.cpu/net.o" -lm -lpthread \
      -o "$W/$name.cpu/run" || return 1
    mkdir -p "$W/$name.ref"
    "$W/$name.cpu/run" "$W/$name.cpu/net.weights.bin" 0 "$W/$name.ref/ref" \
      $(ls "$out"/in*.bin | sort) || return 1
  fi
  cp "$W/$name.ref"/ref*.bin "$out/"
  rm -f "$out"/in*.bin # the GPU side remakes them from in*.spec
  local cu=$W/$name$sfx.cuda
  "$MC" -model="$W/$name.onnx" -backend=CUDA -emit-bundle="$cu" \
    -network-name=net -cuda-arch="${CUDA_ARCH:-sm_90}" "${flags[@]}" -verbose \
    2> "$out/compile.log" || { cat "$out/compile.log"; return 1; }
  # The libraries the header names: -lcudart becomes cudart_static.
  local libs; libs=$(sed -n 's/^ *Link with:\(.*\) -lcudart \*\/$/\1/p' "$cu/net.h")
  cc -std=c99 -O1 -D_POSIX_C_SOURCE=199309L -DNET=net \
    -include "$cu/net.h" -I"$CUDA/include" \
    "$SRC/tests/cuda/run_cuda_bundle.c" "$cu/net.o" \
    -L"$CUDA/lib" -L"$CUDA/lib64" $libs -lcudart_static -ldl -lpthread -lrt \
    -static-libgcc -o "$out/run" || return 1
  strip "$out/run" || return 1
  # Flavours and batch sizes share one weights file when the images agree.
  local w
  for w in "$DIR/${base}_b1/weights.bin" "$DIR/${base}_b1_gen/weights.bin" \
      "$DIR/${name}/weights.bin"; do
    if [ -f "$w" ] && [ ! -L "$w" ] && [ "$w" != "$out/weights.bin" ] &&
        cmp -s "$cu/net.weights.bin" "$w"; then
      ln -sf "../$(basename "$(dirname "$w")")/weights.bin" "$out/weights.bin"
      return 0
    fi
  done
  cp "$cu/net.weights.bin" "$out/weights.bin"
}

# ONNX node tests matching NODE_TESTS into DIR/node (see the header).
nodes() {
  local W=$1 data=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}/node
  [ -d "$data" ] || { echo "gpu-test: no ONNX node tests in $data"; return 0; }
  cc -std=c99 -O1 -D_POSIX_C_SOURCE=199309L -DEMBER_DLOPEN \
    -I"$SRC/include" -I"$CUDA/include" "$SRC/tests/cuda/run_cuda_bundle.c" \
    -L"$CUDA/lib" -L"$CUDA/lib64" -Wl,--export-dynamic \
    -Wl,-u,cudaLibraryLoadData -Wl,-u,cudaLibraryGetKernel \
    -Wl,-u,cudaLaunchKernelExC -Wl,-u,cudaMemcpyAsync -Wl,-u,cudaFree \
    -lcudart_static -ldl -lpthread -lrt -static-libgcc -o "$DIR/run-so"
  strip "$DIR/run-so"
  local t n=0 skipped=0
  for t in $(cd "$data" && ls -d $NODE_TESTS 2> /dev/null | sort -u); do
    local src=$data/$t out=$DIR/node/$t
    [ -f "$src/model.onnx" ] && [ -d "$src/test_data_set_0" ] || continue
    mkdir -p "$out"
    if "$MC" -model="$src/model.onnx" -backend=CUDA -emit-bundle="$W/$t" \
          -network-name=net -cuda-arch="${CUDA_ARCH:-sm_90}" -verbose \
          2> "$out/compile.log" &&
        $PY "$SRC/scripts/gpu_node_data.py" "$src/test_data_set_0" "$out" &&
        cc -shared -s -o "$out/net.so" "$W/$t/net.o" -L"$CUDA/lib64" \
          $(sed -n 's/^ *Link with:\(.*\) -lcudart \*\/$/\1/p' "$W/$t/net.h"); then
      cp "$W/$t/net.weights.bin" "$out/weights.bin"
      n=$((n + 1))
    else
      rm -rf "$out"
      skipped=$((skipped + 1))
    fi
  done
  echo "gpu-test: $n ONNX node tests prepared ($skipped skipped: unsupported or not float32)"
}

NODE_TESTS=${NODE_TESTS-test_conv_* test_gemm_* test_matmul_* test_relu test_add test_add_bcast test_mul test_sigmoid test_tanh test_softmax_* test_maxpool_2d_* test_averagepool_2d_* test_globalaveragepool test_batchnorm_* test_concat_* test_transpose_* test_reshape_* test_flatten_* test_clip* test_leakyrelu* test_exp test_log test_sqrt test_reduce_mean_* test_reduce_sum_* test_sub test_div test_pow test_abs test_neg}

prepare() {
  local BUILD=${1:-$SRC/build}
  MC=$BUILD/bin/model-compiler
  CUDA=${CUDA_HOME:-/usr/local/cuda}
  PY=/usr/bin/python3 # Debian's: onnx, numpy, torch, torchvision
  [ -x "$MC" ] || { echo "gpu-test: no $MC (build first)"; exit 1; }
  mkdir -p "$DIR/.work"
  local W=$DIR/.work
  $PY "$SRC/tests/bundles/make_models.py" "$W/ops" > /dev/null
  local zoo; zoo=$(echo ${MODELS:-resnet18} | tr ' ' '\n' |
    grep -vxE 'mlp|convnet|digits' | paste -sd, || true)
  [ -z "$zoo" ] || $PY "$SRC/models/zoo/export.py" "$W/zoo" --models "$zoo" \
    > "$W/export.log" 2>&1 || { cat "$W/export.log"; exit 1; }
  cp "$SRC/models/digits/digits.onnx" "$W/digits.onnx"
  local models=""
  for m in ${MODELS:-mlp convnet digits resnet18}; do
    case $m in
    mlp|convnet) models="$models $W/ops/$m.onnx";;
    digits) models="$models $W/digits.onnx";;
    *) models="$models $W/zoo/$m.onnx";;
    esac
  done
  for onnx in $models; do
    local base; base=$(basename "$onnx" .onnx)
    for batch in 1 64; do
      local flavours=${FLAVOURS:-lib gen}
      case $base in mlp|convnet|digits) ;; *) flavours=${ZOO_FLAVOURS:-lib};; esac
      for flavour in $flavours; do
        local tag=${base}_b$batch; [ "$flavour" = gen ] && tag=${tag}_gen
        if ! one "$onnx" "$base" "$batch" "$W" "$flavour" > "$W/log" 2>&1; then
          cat "$W/log"
          echo "gpu-test: skipped $tag (see above)"
          rm -rf "$DIR/$tag"
        fi
      done
    done
  done
  [ -z "$NODE_TESTS" ] || nodes "$W"
  rm -rf "$W"
  cp "$SRC/scripts/gpu_run.py" "$SRC/scripts/gpu_inputs.py" "$0" "$DIR/"
  local real; real=$(du -sb "$DIR" | cut -f1)
  echo "gpu-test: prepared $(ls -d "$DIR"/*/run | wc -l) bundles and $(ls -d "$DIR"/node/*/ 2> /dev/null | wc -l) node tests in $DIR ($real bytes on disk)"
  [ "$real" -le "$LIMIT" ] || { echo "gpu-test: $DIR exceeds 60 MiB"; exit 1; }
}

run() {
  command -v nvidia-smi > /dev/null && nvidia-smi -L || true
  # Only the folder is needed: it carries its own copy of gpu_run.py.
  "${PYTHON:-python3}" "$DIR/gpu_run.py" "$DIR"
}

case $cmd in
prepare) shift 2; prepare "$@";;
run) run;;
*) echo "usage: $0 prepare|run DIR"; exit 1;;
esac
