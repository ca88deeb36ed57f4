#!/bin/bash
# CUDA backend checks on a GPU machine that has no compilers and no LLVM.
#
#   scripts/gpu-test.sh prepare DIR [BUILD_DIR]   (here: needs the build)
#   scripts/gpu-test.sh run DIR                   (there: driver + Python/PyTorch)
#
# prepare writes, for every model (the generated op models of
# tests/bundles/make_models.py, digits, resnet18; each at batch 1 and 64):
#   DIR/NAME/run            the CUDA bundle linked with cudart_static
#   DIR/NAME/weights.bin    its constant region
#   DIR/NAME/in*.spec       deterministic inputs (scripts/gpu_inputs.py)
#   DIR/NAME/ref*.bin       the CPU backend's outputs for those inputs
#   DIR/NAME/compile.log    model-compiler -verbose (per-op choices)
# plus copies of this script, gpu_run.py and gpu_inputs.py, and checks that
# DIR stays within 60 MiB (batch sizes share one weights file). run compares
# every CUDA output with the CPU reference (max|d| <= 1e-3 * max|y_ref|; all
# our kernels compute in fp32, no TF32), then prints a latency table with
# PyTorch eager and torch.compile (resnet18, defined in gpu_run.py) next to it.
# MODELS="digits resnet18" limits prepare to some models (a second round
# when the weights do not fit at once).
set -euo pipefail
cmd=${1:-}
DIR=${2:-}
[ -n "$cmd" ] && [ -n "$DIR" ] || { sed -n 2,20p "$0"; exit 1; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
LIMIT=$((60 * 1024 * 1024))

# Builds DIR/NAME_bBATCH for model $1 (base name $2) at batch $3; work in $4.
# (Called in a condition, where set -e is off: every step checks.)
one() {
  local onnx=$1 base=$2 batch=$3 W=$4
  local name=${base}_b$batch out=$DIR/${base}_b$batch
  mkdir -p "$out"
  $PY "$SRC/scripts/gpu_prepare.py" "$onnx" "$batch" "$out" "$W/$name.onnx" ||
    return 1
  "$MC" -model="$W/$name.onnx" -backend=CPU -emit-bundle="$W/$name.cpu" \
    -network-name=net -mcpu=x86-64-v2 || return 1
  cc -std=c99 -O1 -D_ISOC11_SOURCE -DNET=net -include "$W/$name.cpu/net.h" \
    "$SRC/tests/bundles/run_bundle.c" "$W/$name.cpu/net.o" -lm -lpthread \
    -o "$W/$name.cpu/run" || return 1
  "$W/$name.cpu/run" "$W/$name.cpu/net.weights.bin" 0 "$out/ref" \
    $(ls "$out"/in*.bin | sort) || return 1
  rm -f "$out"/in*.bin # the GPU side remakes them from in*.spec
  "$MC" -model="$W/$name.onnx" -backend=CUDA -emit-bundle="$W/$name.cuda" \
    -network-name=net -cuda-arch="${CUDA_ARCH:-sm_90}" -verbose \
    2> "$out/compile.log" || { cat "$out/compile.log"; return 1; }
  cc -std=c99 -O1 -D_POSIX_C_SOURCE=199309L -DNET=net \
    -include "$W/$name.cuda/net.h" -I"$CUDA/include" \
    "$SRC/tests/cuda/run_cuda_bundle.c" "$W/$name.cuda/net.o" \
    -L"$CUDA/lib" -L"$CUDA/lib64" -lcudart_static -ldl -lpthread -lrt \
    -static-libgcc -o "$out/run" || return 1
  strip "$out/run" || return 1
  # Batch sizes share one weights file when the images are equal.
  if [ "$batch" != 1 ] && cmp -s "$W/$name.cuda/net.weights.bin" \
      "$DIR/${base}_b1/weights.bin"; then
    ln -sf "../${base}_b1/weights.bin" "$out/weights.bin"
  else
    cp "$W/$name.cuda/net.weights.bin" "$out/weights.bin"
  fi
}

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
      if ! one "$onnx" "$base" "$batch" "$W" > "$W/log" 2>&1; then
        cat "$W/log"
        echo "gpu-test: skipped ${base}_b$batch (see above)"
        rm -rf "$DIR/${base}_b$batch"
      fi
    done
  done
  rm -rf "$W"
  cp "$SRC/scripts/gpu_run.py" "$SRC/scripts/gpu_inputs.py" "$0" "$DIR/"
  local real; real=$(du -sb "$DIR" | cut -f1)
  echo "gpu-test: prepared $(ls -d "$DIR"/*/ | wc -l) bundles in $DIR ($real bytes on disk)"
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
