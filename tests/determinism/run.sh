#!/usr/bin/env bash
# Determinism across processes: two model-runner runs of the same model on
# the same input print byte-identical graphs and IR (with every planned
# offset) and write byte-identical output files. ASLR gives each process
# other heap addresses, so pointer-ordered iteration would show up here.
#   run.sh MODEL_RUNNER SOURCE_DIR
# When model-compiler exists, compare its bundle files the same way.
set -u
RUNNER=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DIGITS=$SRC/models/digits
for i in 1 2; do
  "$RUNNER" -model="$DIGITS/digits.onnx" -input="$DIGITS/test_data/digit-4.input.pb" \
    -dump-graph -dump-ir -output-dir="$TMP/out$i" >"$TMP/stdout$i" 2>&1 ||
    { echo "FAIL: run $i exited non-zero"; cat "$TMP/stdout$i"; exit 1; }
done
fails=0
grep -q 'allocactivation' "$TMP/stdout1" || { echo "FAIL: no IR in the dump"; fails=1; }
cmp "$TMP/stdout1" "$TMP/stdout2" || { echo "FAIL: dumps differ"; diff "$TMP/stdout1" "$TMP/stdout2" | head -20; fails=1; }
cmp "$TMP/out1/output_0.pb" "$TMP/out2/output_0.pb" || { echo "FAIL: outputs differ"; fails=1; }
[ $fails = 0 ] && echo "ok: graph, IR, plan and outputs identical across processes"
exit $fails
