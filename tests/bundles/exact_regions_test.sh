#!/usr/bin/env bash
# Bundles run with every region allocated at exactly its declared size
# (issue 9). Each model is compiled to a CPU bundle and linked twice with
# tests/bundles/run_bundle.c: as usual (regions padded), and with
# -DEXACT_REGIONS under ASan+UBSan (clang-19 when present), where each
# region is mapped at its exact size against an inaccessible page, once
# after its end and once before its start. The bundle code itself is not
# instrumented, so the guard pages are what catch its overruns; ASan
# watches the driver and the libc calls (memcpy, memset) the bundle makes.
# The exact runs must succeed and give bit-identical outputs to the padded
# run, single- and multi-threaded.
#   exact_regions_test.sh MODEL_COMPILER SOURCE_DIR [ZOO_DIR]
# Models: digits, the generated mlp, convnet and pwtail of the bundle test, and
# squeezenet1_1 when ZOO_DIR holds squeezenet1_1.onnx and .input.pb.
set -u
COMPILER=$1
SRC=$2
ZOO=${3:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PY=/usr/bin/python3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

SAN_CC=cc
SAN_FLAGS=
if command -v clang-19 >/dev/null; then
  SAN_CC=clang-19
  SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -g"
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0

$PY "$SRC/tests/bundles/make_models.py" "$TMP/m" >/dev/null || exit 1
cp "$SRC/models/digits/digits.onnx" "$TMP/m/digits.onnx"
toBin() { # TensorProto file, .bin output
  $PY - "$1" "$2" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import numpy_helper
numpy_helper.to_array(onnx.load_tensor(sys.argv[1])).tofile(sys.argv[2])
PYEOF
}
toBin "$SRC/models/digits/test_data/digit-3.input.pb" "$TMP/m/digits.in0.bin"
models="digits mlp convnet pwtail"
if [ -n "$ZOO" ] && [ -f "$ZOO/squeezenet1_1.onnx" ] && [ -f "$ZOO/squeezenet1_1.input.pb" ]; then
  cp "$ZOO/squeezenet1_1.onnx" "$TMP/m/squeezenet1_1.onnx"
  toBin "$ZOO/squeezenet1_1.input.pb" "$TMP/m/squeezenet1_1.in0.bin"
  models="$models squeezenet1_1"
else
  echo "note: no squeezenet1_1 in '$ZOO'; zoo model not checked"
fi

for name in $models; do
  dir=$TMP/$name.b
  out=$("$COMPILER" -model="$TMP/m/$name.onnx" -backend=CPU -emit-bundle="$dir" \
    -network-name="$name" 2>&1)
  [ $? = 0 ] && [ -z "$out" ] || { fail "$name: model-compiler: $out"; continue; }
  ins=$(ls "$TMP/m/$name".in*.bin)
  cc -std=c99 -D_ISOC11_SOURCE -DNET="$name" -include "$dir/$name.h" \
    "$SRC/tests/bundles/run_bundle.c" "$dir/$name.o" -lm -lpthread -o "$dir/padded" ||
    { fail "$name: link (padded)"; continue; }
  # shellcheck disable=SC2086
  $SAN_CC $SAN_FLAGS -std=c99 -D_DEFAULT_SOURCE -D_ISOC11_SOURCE -DEXACT_REGIONS \
    -DNET="$name" -include "$dir/$name.h" "$SRC/tests/bundles/run_bundle.c" \
    "$dir/$name.o" -lm -lpthread -o "$dir/exact" ||
    { fail "$name: link (exact, $SAN_CC)"; continue; }
  for threads in 0 3; do
    "$dir/padded" "$dir/$name.weights.bin" $threads "$dir/ref$threads." $ins ||
      { fail "$name: padded run ($threads threads) exit $?"; continue; }
    for at in end start; do
      log=$dir/log-$at-$threads
      EMBER_REGION_AT=$at "$dir/exact" "$dir/$name.weights.bin" $threads \
        "$dir/$at$threads." $ins >"$log" 2>&1
      rc=$?
      if [ $rc != 0 ] || grep -q "Sanitizer" "$log"; then
        fail "$name: exact regions (guard at $at, $threads threads) exit $rc"
        head -20 "$log"
        continue
      fi
      for f in "$dir/ref$threads."*.bin; do
        k=${f##*/ref$threads.}
        cmp -s "$f" "$dir/$at$threads.$k" ||
          fail "$name: output $k differs with exact regions (guard at $at, $threads threads)"
      done
    done
  done
  echo "$name: exact regions ok (guard after the end and before the start, 0 and 3 threads)"
done
[ $fails = 0 ] && echo "all exact-region checks passed ($SAN_CC ${SAN_FLAGS:-without sanitizers})"
exit $((fails > 0))
