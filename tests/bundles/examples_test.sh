#!/usr/bin/env bash
# classify-c and classify-cpp (examples/) on the ten shipped digits: at
# least 9 right each, and both print the same predictions.
set -u
C=$1 CPP=$2 WEIGHTS=$3 SRC=$4
inputs=$(for d in 0 1 2 3 4 5 6 7 8 9; do echo "$SRC/models/digits/test_data/digit-$d.input.pb"; done)
c_out=$("$C" "$WEIGHTS" $inputs) || { echo "FAIL: classify-c exit $?"; exit 1; }
cpp_out=$("$CPP" "$WEIGHTS" $inputs) || { echo "FAIL: classify-cpp exit $?"; exit 1; }
echo "$c_out"
[ "$c_out" = "$cpp_out" ] || { echo "FAIL: C and C++ examples disagree"; echo "$cpp_out"; exit 1; }
right=$(echo "$c_out" | sed -n 's/.*digit-\([0-9]\)\.input\.pb: predicted \1 .*/x/p' | wc -l)
echo "$right of 10 correct"
[ "$right" -ge 9 ]
