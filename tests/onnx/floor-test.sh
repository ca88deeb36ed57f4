#!/bin/bash
# The conformance floor: a pass count below the record and a test that moved
# from pass each fail the runner with a message naming them, and a record
# that holds lets it succeed.
# Usage: floor-test.sh ONNX_CONFORMANCE DATA_DIR SOURCE_DIR WORK_DIR
set -u
RUNNER=$1 DATA=$2 SRC=$3 WORK=$4
mkdir -p "$WORK"
REC=$SRC/tests/onnx/floor-record.md
status=0

expect() { # expect NAME WANTED_EXIT REGEX -- runner args
  local name=$1 want=$2 regex=$3
  shift 4
  "$RUNNER" -data="$DATA" -jobs=2 "$@" >"$WORK/$name.log" 2>&1
  local rc=$?
  if [ "$rc" != "$want" ] || ! grep -qE "$regex" "$WORK/$name.log"; then
    echo "FAIL $name: exit $rc (want $want), output:"
    cat "$WORK/$name.log"
    status=1
  else
    echo "ok $name"
  fi
}

expect drop 1 'pytorch-operator on Interpreter: 35 pass, below the recorded 36' \
  -- -sets=pytorch-operator -backends=Interpreter -floor="$REC"
expect moved 1 'moved from pass: Interpreter node/test_cast_FLOAT_to_STRING is unsupported' \
  -- -sets=node -filter=test_cast_FLOAT_to_STRING -backends=Interpreter -floor="$REC"
# A filtered run compares tests, not counts: test_abs passes, nothing moved.
expect holds 0 'node on Interpreter: 1/1 pass' \
  -- -sets=node -filter=test_abs -backends=Interpreter -floor="$REC"
# The record is not overwritten when counts fall.
cp "$REC" "$WORK/record.md"
expect kept 1 'left as it was' -- -sets=pytorch-operator \
  -backends=Interpreter -floor="$WORK/record.md" -report="$WORK/record.md"
cmp -s "$REC" "$WORK/record.md" || { echo "FAIL kept: record rewritten"; status=1; }
exit $status
