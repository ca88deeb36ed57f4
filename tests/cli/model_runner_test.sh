#!/usr/bin/env bash
# End-to-end checks of the model-runner command line: errors are one clear
# line with a non-zero exit; success prints outputs, files and timings.
set -u
RUNNER=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 "$SRC/tests/cli/make_models.py" "$TMP" || exit 1
source "$SRC/tests/cli/check.sh"
DIGITS=$SRC/models/digits

check "unsupported ops are all listed" 1 "3 unsupported node\(s\) of 2 op type\(s\) \[Gelu, Mish\]" \
  "$RUNNER" -model="$TMP/unsupported.onnx"
check "unsupported listing names each node" 1 "Gelu \(node 'gelu2', opset 13\)" \
  "$RUNNER" -model="$TMP/unsupported.onnx"
check "custom-domain ops are listed with the rest" 1 "2 unsupported node\(s\) of 2 op type\(s\) \[Gelu, com.example::MyOp\]" \
  "$RUNNER" -model="$TMP/custom_domain.onnx"
check "custom-domain nodes name their domain and opset" 1 "MyOp \(node 'custom1', domain 'com.example', opset 1\)" \
  "$RUNNER" -model="$TMP/custom_domain.onnx"
check "bad -model-input" 1 "^model-runner: error: -model-input expects NAME,TYPE" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -model-input=x,float
check "absurd result size" 1 "^model-runner: error: .*more than the maximum of 2147483648 elements" \
  "$RUNNER" -model="$TMP/huge_tile.onnx"
check "shape arithmetic folds at import" 0 "output .y. float<2 x 12>" \
  "$RUNNER" -model="$TMP/view_flatten.onnx"
check "run-time shape operand giving the declared shape" 0 "output 'y' float<4 x 3 x 2>" \
  "$RUNNER" -model="$TMP/runtime_reshape.onnx" -input="$TMP/runtime_x.pb" -input="$TMP/runtime_s_good.pb"
check "run-time shape operand checked" 1 "run-time input check: node 'r' \(Reshape\): s = \[2, 12, 1\]: gives output 'y' float<2 x 12 x 1>; the network was compiled for \[4, 3, 2\]" \
  "$RUNNER" -model="$TMP/runtime_reshape.onnx" -input="$TMP/runtime_x.pb" -input="$TMP/runtime_s_bad.pb"
check "garbage model" 1 "^model-runner: error: .*not a valid ONNX model" \
  "$RUNNER" -model="$TMP/garbage.onnx"
check "missing model" 1 "^model-runner: error: cannot read model" \
  "$RUNNER" -model="$TMP/none.onnx"
check "unknown flag" 1 "Unknown command line argument" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -no-such-flag
check "unknown backend" 1 "unknown backend 'Nope' \(available: Interpreter" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -backend=Nope
check "wrong input shape" 1 "input 'a' expects float<1 x 4>" \
  "$RUNNER" -model="$TMP/add.onnx" -input="a=$DIGITS/test_data/digit-0.input.pb" -input="b=$DIGITS/test_data/digit-0.input.pb"
check "unknown input name" 1 "the model has no input named 'q'" \
  "$RUNNER" -model="$TMP/add.onnx" -input="q=$DIGITS/test_data/digit-0.input.pb"
check "random inputs are announced" 0 "no inputs given: using random inputs" \
  "$RUNNER" -model="$DIGITS/digits.onnx"
check "topk" 0 "top 1: index 7 value" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -input="$DIGITS/test_data/digit-7.input.pb" -topk=3
check "iterations end with the median" 0 "^median ms per run: [0-9.]+$" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -iterations=3
[ "$(tail -1 "$TMP/out" | cut -d: -f1)" = "median ms per run" ] || fail "median is not the last line"
check "output dir" 0 "output 'logits'" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -input="$DIGITS/test_data/digit-1.input.pb" -output-dir="$TMP/outs"
[ -s "$TMP/outs/output_0.pb" ] || fail "output_0.pb missing"
check "dump-graph" 0 "Conv\(%input" "$RUNNER" -model="$DIGITS/digits.onnx" -dump-graph
check "dump-ir shows offsets" 0 "allocactivation float<1 x 16 x 8 x 8> // @activations\+[0-9]+ size 4096" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -dump-ir
check "dump-graph-dot" 0 "output 'logits'" "$RUNNER" -model="$DIGITS/digits.onnx" -dump-graph-dot="$TMP/g.dot"
grep -q digraph "$TMP/g.dot" || fail "dot file"
# Issue 5: memory summary, compile-only and the IR optimizer switch.
check "print-memory" 0 "^  activations: [0-9]+ bytes \(lower bound [0-9]+, ratio 1\.[0-9]+, no reuse [0-9]+\)$" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -print-memory -compile-only
check "print-memory lists the regions" 0 "^  mutable weights \(inputs and outputs\): [0-9]+ bytes$" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -print-memory -compile-only
grep -q "output '" "$TMP/out" && fail "-compile-only ran the model"
check "optimize-ir=false keeps the output copy" 0 "= copy @out %logits" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -dump-ir -compile-only -optimize-ir=false

# The target description and the code generation flags (one error line).
check "print-target needs no model" 0 "^vector-registers: (16|32)$" "$RUNNER" -print-target
check "print-target of the host" 0 "^host: yes$" "$RUNNER" -print-target
check "bad -cpu-winograd" 1 "^model-runner: error: -cpu-winograd 'f3' is not auto, off, f2 or f4$" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -cpu-winograd=f3
check "bad -mattr" 1 "^model-runner: error: -mattr entry 'avx2' is not \+FEATURE or -FEATURE" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -mattr=avx2
[ "$(wc -l <"$TMP/out")" = 1 ] || fail "bad -mattr printed more than one line"
if [ "$(uname -m)" = x86_64 ]; then
  check "print-target -mcpu -mattr" 0 "^float-lanes: 8$" \
    "$RUNNER" -print-target -mcpu=znver4 -mattr=-avx512f
  # The JIT runs what it compiles: another architecture is an error.
  check "JIT needs the host architecture" 1 "in-process runs need the host's architecture" \
    "$RUNNER" -model="$DIGITS/digits.onnx" -backend=CPU -target=aarch64-unknown-linux-gnu
fi
# The forced paths and 8-lane kernels through flags give the same answer.
check "forced paths" 0 "top 1: index 7 value" \
  "$RUNNER" -model="$DIGITS/digits.onnx" -backend=CPU -input="$DIGITS/test_data/digit-7.input.pb" -topk=1 \
  -cpu-conv-path=channels -cpu-simd-width=256 -cpu-winograd=off

finish "model-runner CLI"
