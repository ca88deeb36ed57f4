#!/usr/bin/env bash
# Installs Ember from BUILD_DIR into a scratch prefix, builds the consumer
# project against it and checks that it classifies the digits test inputs.
# Usage: run.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SRC=$1
BUILD=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
# Nothing installed may point back into the build tree or the sources.
if grep -rqs --include='*.cmake' --include='*.pc' -e "$BUILD" -e "$SRC" "$TMP/prefix"; then
  echo "FAIL: installed CMake/pkg-config files refer to the build or source tree"
  exit 1
fi
cmake -S "$SRC/tests/consumer" -B "$TMP/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$TMP/prefix" -DDIGITS_MODEL="$SRC/models/digits/digits.onnx" >/dev/null
cmake --build "$TMP/build" >/dev/null
# Raw float inputs from the shipped TensorProto files.
/usr/bin/python3 - "$SRC/models/digits/test_data" "$TMP" <<'PY'
import sys, onnx, onnx.numpy_helper as nh
for d in range(10):
    a = nh.to_array(onnx.load_tensor("%s/digit-%d.input.pb" % (sys.argv[1], d)))
    a.astype("float32").tofile("%s/digit-%d.bin" % (sys.argv[2], d))
PY
fails=0
for exe in classify classify_embedded; do
  right=0
  for d in 0 1 2 3 4 5 6 7 8 9; do
    pred=$("$TMP/build/$exe" "$TMP/digit-$d.bin" | awk '{print $2}')
    [ "$pred" = "$d" ] && right=$((right + 1))
  done
  echo "$exe: $right of 10 right"
  [ $right -ge 9 ] || fails=$((fails + 1))
done
echo "$fails failures"
[ $fails = 0 ]
