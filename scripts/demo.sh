#!/usr/bin/env bash
# The main job on the shipped model: compile models/digits/digits.onnx and
# classify its ten held-out test images, printing true and predicted digits.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

if [ ! -x "$BUILD_DIR/bin/model-runner" ]; then
  bash scripts/setup.sh
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" --target model-runner
fi

MODEL=models/digits/digits.onnx
right=0
echo "model: $MODEL (Interpreter backend)"
for label in 0 1 2 3 4 5 6 7 8 9; do
  input=models/digits/test_data/digit-$label.input.pb
  pred=$("$BUILD_DIR/bin/model-runner" -model="$MODEL" -input="$input" -topk=1 |
    sed -n 's/^  top 1: index \([0-9]*\) .*/\1/p')
  mark="wrong"
  if [ "$pred" = "$label" ]; then mark="ok"; right=$((right + 1)); fi
  echo "image digit-$label.png: true $label, predicted $pred  $mark"
done
echo "$right of 10 correct"
[ "$right" -ge 9 ]
