#!/usr/bin/env bash
# The main job on the shipped model: compile models/digits/digits.onnx to a
# CPU bundle with model-compiler, build the example C program against it,
# and classify the ten held-out test images, printing true and predicted
# digits.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

if [ ! -x "$BUILD_DIR/bin/model-compiler" ]; then
  bash scripts/setup.sh
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" --target model-compiler
fi

OUT=$BUILD_DIR/demo
MODEL=models/digits/digits.onnx
echo "1. model-compiler: $MODEL -> $OUT/digits.{o,h,weights.bin}"
"$BUILD_DIR/bin/model-compiler" -model="$MODEL" -backend=CPU \
  -emit-bundle="$OUT" -network-name=digits
echo "2. cc: examples/classify-c/classify.c + $OUT/digits.o -> $OUT/classify"
cc -std=c99 -D_ISOC11_SOURCE -O2 -I"$OUT" -Iexamples/common \
  examples/classify-c/classify.c "$OUT/digits.o" -lm -o "$OUT/classify"
echo "3. classify the ten test images"
right=0
for label in 0 1 2 3 4 5 6 7 8 9; do
  input=models/digits/test_data/digit-$label.input.pb
  pred=$("$OUT/classify" "$OUT/digits.weights.bin" "$input" |
    sed -n 's/.*: predicted \([0-9]*\) .*/\1/p')
  mark="wrong"
  if [ "$pred" = "$label" ]; then mark="ok"; right=$((right + 1)); fi
  echo "image digit-$label.png: true $label, predicted $pred  $mark"
done
echo "$right of 10 correct"
[ "$right" -ge 9 ]
