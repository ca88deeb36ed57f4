#!/usr/bin/env bash
# The threaded entry is deterministic: a bundle of a model with many small
# kernels (six SE blocks, ~60 kernels and barriers) gives bit-identical
# outputs from NAME and from NAME_mt with 1, 2, 3 and 4 threads, repeated,
# and matches the Interpreter; NAME_mt's worker pool keeps that over many
# calls, releases, concurrent callers and a fork.
#   threads_test.sh MODEL_COMPILER MODEL_RUNNER SOURCE_DIR
set -u
COMPILER=$1
RUNNER=$2
SRC=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PY=/usr/bin/python3
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

$PY "$SRC/tests/bundles/make_models.py" "$TMP/m" || exit 1
"$COMPILER" -model="$TMP/m/seblocks.onnx" -emit-bundle="$TMP/b" -network-name=se ||
  { echo "FAIL: compile"; exit 1; }
cc -std=c99 -D_ISOC11_SOURCE -DNET=se -include "$TMP/b/se.h" \
  "$SRC/tests/bundles/run_bundle.c" "$TMP/b/se.o" -lm -lpthread -o "$TMP/run" ||
  { echo "FAIL: link"; exit 1; }
"$RUNNER" -model="$TMP/m/seblocks.onnx" -input="$TMP/m/seblocks.in0.npy" \
  -output-dir="$TMP/ref" >/dev/null || { echo "FAIL: Interpreter reference"; exit 1; }
"$TMP/run" "$TMP/b/se.weights.bin" 0 "$TMP/o0." "$TMP/m/seblocks.in0.bin" ||
  { echo "FAIL: NAME"; exit 1; }
$PY "$SRC/tests/bundles/compare.py" "$TMP/ref" "$TMP/o0." 1 || fail "NAME differs from the Interpreter"
for t in 1 2 3 4; do
  for rep in a b c; do
    "$TMP/run" "$TMP/b/se.weights.bin" $t "$TMP/o$t$rep." "$TMP/m/seblocks.in0.bin" ||
      { fail "NAME_mt with $t threads: exit $?"; continue; }
    cmp -s "$TMP/o0.0.bin" "$TMP/o$t$rep.0.bin" ||
      fail "NAME_mt with $t threads (run $rep) differs from NAME"
  done
done
# The pool of workers NAME_mt keeps between calls (tests/bundles/pool_bundle.c).
cc -std=c99 -D_DEFAULT_SOURCE -DNET=se -include "$TMP/b/se.h" \
  "$SRC/tests/bundles/pool_bundle.c" "$TMP/b/se.o" -lm -lpthread -o "$TMP/pool" ||
  { echo "FAIL: link pool_bundle"; exit 1; }
"$TMP/pool" "$TMP/b/se.weights.bin" "$TMP/m/seblocks.in0.bin" || fail "worker pool"
[ $fails = 0 ] && echo "ok: NAME and NAME_mt with 1-4 threads are bit-identical"
exit $((fails > 0))
