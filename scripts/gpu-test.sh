#!/bin/bash
# CUDA backend checks on a GPU machine that has no compilers and no LLVM, in
# two calls that each fit a short GPU slot (<= 5 minutes, <= 60 MiB carried).
#
#   scripts/gpu-test.sh prepare DIR [BUILD_DIR]   (here: needs the build)
#   scripts/gpu-test.sh run DIR/correctness       (there, call 1)
#   scripts/gpu-test.sh run DIR/latency           (there, call 2)
#
# prepare writes two packages and prints each one's size:
# DIR/correctness: for every model (the generated op models of
# tests/bundles/make_models.py, digits, and the transformer block
# bert_mini of models/transformers; each at batch 1 and 64 (bert_mini: 1),
# in two flavours: NAME_bB with MatMul/Conv on cuBLASLt/cuDNN by the
# default rule, NAME_bB_gen with generated kernels only):
#   NAME/run            the CUDA bundle linked with cudart_static (and, for
#                       the library flavour, -lcublasLt -lcudnn as its
#                       header says; run finds them on the GPU machine, e.g.
#                       in PyTorch's wheels)
#   NAME/weights.bin    its constant region (shared between flavours and
#                       batch sizes when equal)
#   NAME/in*.spec       deterministic inputs (scripts/gpu_inputs.py)
#   NAME/ref*.bin       the CPU backend's outputs for those inputs
#   NAME/compile.log    model-compiler -verbose (per-op choices)
# and, for a subset of the ONNX backend node tests (NODE_TESTS, globs; the
# ones -backend=CUDA compiles and whose outputs are float32):
#   node/TEST/net.so    the CUDA bundle as a shared object, run by the one
#                       runner run-so (cudart_static inside)
#   node/TEST/in*.bin, ref*.bin   the test's inputs and ONNX's expected
#                       outputs
# DIR/latency: resnet18 and resnet50 (batch 1 and 64) and the BERT-base
# encoder (batch 1), library flavour, each NAME/run with NAME/weights.map
# and NAME/weights.keep instead of its weights: gpu_weights.py makes
# weights.bin there from a seed (only non-float constants travel).
# Each package carries gpu-test.sh, gpu_run.py and its helpers and a file
# kind. run (gpu_run.py) runs every case under a timeout (TIMEOUT, 90 s) and
# the call under a budget (BUDGET, 270 s), goes on after failures, writes PACKAGE/results/run.log (everything) and summary.md, and
# prints the summary table: correctness compares every output with its
# reference (max|d| <= 1e-3 * max|y_ref|; fp32 everywhere: no TF32 in
# cuBLASLt (CUBLAS_COMPUTE_32F) or cuDNN (CUDNN_FMA_MATH)) for stream
# launches and for CUDA-graph replay; latency times Ember (stream, graph)
# next to PyTorch eager, torch.compile and PyTorch with a CUDA graph. On a
# machine without a GPU every case reads "no device" (a dry run).
# MODELS (default "mlp convnet digits bert_mini"), LATENCY_MODELS (default
# "resnet18 resnet50 bert_base"; "" skips the package), FLAVOURS (default
# "lib gen") and NODE_TESTS narrow prepare.
set -euo pipefail
cmd=${1:-}
DIR=${2:-}
[ -n "$cmd" ] && [ -n "$DIR" ] || { sed -n 2,48p "$0"; exit 1; }
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
  # cudart_static hides its symbols, so the shared objects could not
  # resolve them against a statically linked runner: run-so links the
  # shared runtime, carried next to it (found through $ORIGIN).
  cc -std=c99 -O1 -D_POSIX_C_SOURCE=199309L -DEMBER_DLOPEN \
    -I"$SRC/include" -I"$CUDA/include" "$SRC/tests/cuda/run_cuda_bundle.c" \
    -L"$CUDA/lib" -L"$CUDA/lib64" -Wl,-rpath,'$ORIGIN' -Wl,--no-as-needed \
    -lcudart -ldl -lpthread -lrt -static-libgcc -o "$DIR/run-so"
  cp "$(readlink -f "$CUDA/lib64/libcudart.so")" "$DIR/libcudart.so.13"
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

NODE_TESTS=${NODE_TESTS-test_conv_* test_gemm_* test_matmul_* test_relu test_add test_add_bcast test_mul test_sigmoid test_tanh test_softmax_* test_maxpool_2d_* test_averagepool_2d_* test_globalaveragepool test_batchnorm_* test_concat_* test_transpose_* test_reshape_* test_flatten_* test_clip* test_leakyrelu* test_exp test_log test_sqrt test_reduce_mean_* test_reduce_sum_* test_sub test_div test_pow test_abs test_neg test_loop11}

# DIR/NAME_bBATCH of latency model $1 (base name $2) at batch $3, work in
# $4: the bundle, its runner and the weights map (no weights).
one_latency() {
  local onnx=$1 base=$2 batch=$3 W=$4
  local name=${base}_b$batch out=$DIR/${base}_b$batch
  mkdir -p "$out"
  $PY "$SRC/scripts/gpu_prepare.py" "$onnx" "$batch" "$out" "$W/$name.onnx" ||
    return 1
  rm -f "$out"/in*.bin
  local cu=$W/$name.cuda
  "$MC" -model="$W/$name.onnx" -backend=CUDA -emit-bundle="$cu" \
    -network-name=net -cuda-arch="${CUDA_ARCH:-sm_90}" -verbose -dump-ir \
    > "$W/$name.ir" 2> "$out/compile.log" || { cat "$out/compile.log"; return 1; }
  $PY "$SRC/scripts/gpu_weights.py" map "$W/$name.ir" "$out/weights.map" \
    "$cu/net.weights.bin" "$out/weights.keep" || return 1
  local libs; libs=$(sed -n 's/^ *Link with:\(.*\) -lcudart \*\/$/\1/p' "$cu/net.h")
  cc -std=c99 -O1 -D_POSIX_C_SOURCE=199309L -DNET=net \
    -include "$cu/net.h" -I"$CUDA/include" \
    "$SRC/tests/cuda/run_cuda_bundle.c" "$cu/net.o" \
    -L"$CUDA/lib" -L"$CUDA/lib64" $libs -lcudart_static -ldl -lpthread -lrt \
    -static-libgcc -o "$out/run" && strip "$out/run"
}

# Copies the run side into package $1 of kind $2 and checks its size.
finish_package() {
  local pkg=$1 kind=$2
  shift 2
  echo "$kind" > "$pkg/kind"
  cp "$SRC/scripts/gpu_run.py" "$SRC/scripts/gpu_inputs.py" "$0" "$@" "$pkg/"
  local real; real=$(du -sb "$pkg" | cut -f1)
  echo "gpu-test: $kind package $pkg: $(ls -d "$pkg"/*/run 2> /dev/null | wc -l) bundles, $(ls -d "$pkg"/node/*/ 2> /dev/null | wc -l) node tests, $real bytes ($((real / 1024)) KiB of the 61440 KiB limit)"
  [ "$real" -le "$LIMIT" ] || { echo "gpu-test: $pkg exceeds 60 MiB"; exit 1; }
}

prepare() {
  local BUILD=${1:-$SRC/build} ROOT=$DIR
  MC=$BUILD/bin/model-compiler
  CUDA=${CUDA_HOME:-/usr/local/cuda}
  PY=/usr/bin/python3 # Debian's: onnx, numpy, torch, torchvision
  [ -x "$MC" ] || { echo "gpu-test: no $MC (build first)"; exit 1; }
  local W=$ROOT/.work
  mkdir -p "$W"
  DIR=$ROOT/correctness
  mkdir -p "$DIR"
  $PY "$SRC/tests/bundles/make_models.py" "$W/ops" > /dev/null
  cp "$SRC/models/digits/digits.onnx" "$W/digits.onnx"
  local m onnx base batch flavour tag
  for m in ${MODELS-mlp convnet digits bert_mini}; do
    case $m in
    mlp|convnet) onnx=$W/ops/$m.onnx;;
    digits) onnx=$W/digits.onnx;;
    *) $PY "$SRC/models/transformers/export.py" "$W/tfm" --models "$m" \
         > "$W/export.log" 2>&1 || { cat "$W/export.log"; exit 1; }
       onnx=$W/tfm/$m.onnx;;
    esac
    base=$(basename "$onnx" .onnx)
    for batch in 1 64; do
      case $base in bert_*|gpt_*) [ "$batch" = 1 ] || continue;; esac
      for flavour in ${FLAVOURS:-lib gen}; do
        tag=${base}_b$batch; [ "$flavour" = gen ] && tag=${tag}_gen
        if ! one "$onnx" "$base" "$batch" "$W" "$flavour" > "$W/log" 2>&1; then
          cat "$W/log"
          echo "gpu-test: skipped $tag (see above)"
          rm -rf "${DIR:?}/$tag"
        fi
      done
    done
  done
  [ -z "$NODE_TESTS" ] || nodes "$W"
  finish_package "$DIR" correctness
  local lat=${LATENCY_MODELS-resnet18 resnet50 bert_base}
  if [ -n "$lat" ]; then
    DIR=$ROOT/latency
    mkdir -p "$DIR"
    for m in $lat; do
      case $m in
      bert_*) $PY "$SRC/models/transformers/export.py" "$W/tfm" --models "$m" \
                > "$W/export.log" 2>&1 || { cat "$W/export.log"; exit 1; }
              onnx=$W/tfm/$m.onnx;;
      *) $PY "$SRC/models/zoo/export.py" "$W/zoo" --models "$m" \
           > "$W/export.log" 2>&1 || { cat "$W/export.log"; exit 1; }
         onnx=$W/zoo/$m.onnx;;
      esac
      for batch in 1 64; do
        case $m in bert_*) [ "$batch" = 1 ] || continue;; esac
        one_latency "$onnx" "$m" "$batch" "$W" > "$W/log" 2>&1 ||
          { cat "$W/log"; echo "gpu-test: skipped ${m}_b$batch"; rm -rf "${DIR:?}/${m}_b$batch"; }
      done
    done
    finish_package "$DIR" latency "$SRC/scripts/gpu_weights.py" \
      "$SRC/scripts/gpu_torch.py" "$SRC/models/transformers/nets.py"
  fi
  rm -rf "$W"
}

run() {
  command -v nvidia-smi > /dev/null && nvidia-smi -L || true
  # Only the package is needed: it carries its own copy of gpu_run.py.
  "${PYTHON:-python3}" "$DIR/gpu_run.py" "$DIR" ${TIMEOUT:+--timeout "$TIMEOUT"} \
    ${BUDGET:+--budget "$BUDGET"}
}

case $cmd in
prepare) shift 2; prepare "$@";;
run) run;;
*) echo "usage: $0 prepare|run DIR"; exit 1;;
esac
