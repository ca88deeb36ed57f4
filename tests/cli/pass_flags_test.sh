#!/usr/bin/env bash
# The pass-manager flags (tools/common) on model-runner and ember-opt:
# each one does what it says, and bad values are one clear error line.
# usage: pass_flags_test.sh MODEL_RUNNER EMBER_OPT SOURCE_DIR
set -u
RUNNER=$1
OPT=$2
SRC=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$SRC/tests/cli/check.sh"
MODEL=$SRC/models/digits/digits.onnx

check "print-after" 0 "^// after fuse-conv-activation" \
  "$RUNNER" -model="$MODEL" -print-after=fuse-conv-activation
check "print-after-all prints lowering" 0 "^// after lower" \
  "$RUNNER" -model="$MODEL" -print-after-all
check "time-passes table" 0 "^fold-batchnorm +[0-9.]+ +[0-9.]+ +1 +1" \
  "$RUNNER" -model="$MODEL" -time-passes -verify-each
check "optimization stats" 0 "^BatchNorm +2 +0" \
  "$RUNNER" -model="$MODEL" -print-optimization-stats
if "$RUNNER" -model="$MODEL" -disable-pass=fold-batchnorm \
    -print-optimization-stats 2>&1 | grep -q "fold-batchnorm.folded"; then
  fail "disable-pass: fold-batchnorm still ran"
else
  echo "ok: disable-pass skips the pass"
fi
check "unknown pass" 1 "^model-runner: error: -disable-pass: unknown pass 'nope'" \
  "$RUNNER" -model="$MODEL" -disable-pass=nope
check "dump-graph-dot-after" 0 "" \
  "$RUNNER" -model="$MODEL" -dump-graph-dot-after=fold-batchnorm="$TMP/g.dot"
if grep -q "^digraph" "$TMP/g.dot" 2>/dev/null; then echo "ok: dot file written"
else fail "$TMP/g.dot missing"; fi
check "dot file unwritable" 1 "cannot write '/nonexistent/g.dot'" \
  "$RUNNER" -model="$MODEL" -dump-graph-dot-after=dce=/nonexistent/g.dot
check "conv-layout=nhwc makes ConvNHWC" 0 "^ConvNHWC +0 +[1-9]" \
  "$RUNNER" -model="$MODEL" -conv-layout=nhwc -print-optimization-stats
check "conv-layout bad value" 1 "^model-runner: error: -conv-layout: expected nchw or nhwc, got 'nwhc'" \
  "$RUNNER" -model="$MODEL" -conv-layout=nwhc
check "ember-opt lists passes" 0 "^fuse-conv-residual " "$OPT" -list-passes
check "ember-opt on ONNX" 0 "Conv\(.*FusedActivation=1" "$OPT" "$MODEL"
check "ember-opt bad pipeline" 1 "^ember-opt: error: unknown pass 'x' in pipeline" \
  "$OPT" "$MODEL" -passes="dce,x"
printf 'function f {\n  %%r = Relu(%%q)\n}\n' > "$TMP/bad.txt"
check "ember-opt parse error names the line" 1 "bad.txt: line 2: unknown value %q" \
  "$OPT" "$TMP/bad.txt"
check "ember-opt missing file" 1 "^ember-opt: error: cannot read" "$OPT" "$TMP/none.txt"

finish "pass-flag"
