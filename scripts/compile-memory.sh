#!/usr/bin/env bash
# Peak resident memory of model-compiler per model, beside the model's
# weight bytes and the bound 2 x weights + 256 MiB (docs/Reliability.md).
# Each model is compiled to a CPU bundle in a scratch directory under
# /usr/bin/time -v ("Maximum resident set size", the kernel's getrusage
# ru_maxrss of the process); the weights are the bytes of the model's
# initializers (external data included), read with Debian's python3 onnx.
#
# Usage: scripts/compile-memory.sh [BUILD_DIR] MODEL.onnx...
#   or:  scripts/compile-memory.sh [BUILD_DIR] --zoo ZOO_DIR --transformers DIR
# --zoo takes the nine zoo models from ZOO_DIR (models/zoo/export.py), and
# --transformers the full-size transformer set (models/transformers/export.py)
# from DIR; missing ones are listed as such. Prints a Markdown table; exits 1
# when a model compiles over the bound or fails to compile.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build
if [[ $# -gt 0 && -d $1 && -x $1/bin/model-compiler ]]; then
  build=$1
  shift
fi
compiler=$build/bin/model-compiler
[[ -x $compiler ]] || { echo "error: build $compiler first" >&2; exit 1; }
ZOO_MODELS=(resnet18 resnet50 mobilenet_v2 squeezenet1_1 densenet121
            shufflenet_v2_x1_0 efficientnet_b0 googlenet inception_v3)
TFM_MODELS=(bert_base gpt2_small vit_b_16 swin_t)
models=()
while [[ $# -gt 0 ]]; do
  case $1 in
  --zoo) for m in "${ZOO_MODELS[@]}"; do models+=("$2/$m.onnx"); done; shift 2 ;;
  --transformers) for m in "${TFM_MODELS[@]}"; do models+=("$2/$m.onnx"); done; shift 2 ;;
  *) models+=("$1"); shift ;;
  esac
done
[[ ${#models[@]} -gt 0 ]] || { sed -n 2,14p "$0"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

weightBytes() {
  /usr/bin/python3 - "$1" <<'EOF'
import os, sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
total = 0
for t in m.graph.initializer:
    n = 1
    for d in t.dims:
        n *= d
    size = onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize \
        if hasattr(onnx.helper, "tensor_dtype_to_np_dtype") else \
        onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type].itemsize
    total += n * size
print(total)
EOF
}

echo "| model | weights (MiB) | peak RSS (MiB) | bound 2w+256 (MiB) | RSS / bound | compile (s) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
bad=0
for f in "${models[@]}"; do
  name=$(basename "$f" .onnx)
  if [[ ! -f $f ]]; then
    echo "| $name | – | – | – | missing ($f) | – |"
    continue
  fi
  w=$(weightBytes "$f")
  /usr/bin/time -v "$compiler" -model="$f" -backend=CPU -quiet \
    -emit-bundle="$tmp/$name" >"$tmp/out" 2>"$tmp/time"
  rc=$?
  kb=$(sed -n 's/^\tMaximum resident set size (kbytes): //p' "$tmp/time")
  secs=$(sed -n 's/^\tElapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; print s }')
  rm -rf "${tmp:?}/$name"
  if [[ $rc != 0 ]]; then
    echo "| $name | – | – | – | compile failed: $(grep -m1 error "$tmp/time") | – |"
    bad=1
    continue
  fi
  awk -v w="$w" -v kb="$kb" -v n="$name" -v s="$secs" 'BEGIN {
    mib = 1048576; rss = kb * 1024; bound = 2 * w + 256 * mib
    printf "| %s | %.1f | %.1f | %.1f | %.2f | %.1f |\n", n, w / mib, rss / mib,
      bound / mib, rss / bound, s
    exit rss > bound }' || bad=1
done
exit $bad
