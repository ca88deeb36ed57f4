#!/usr/bin/env bash
# Profile-guided quantization end to end (docs/Quantization.md): profiles
# recorded by model-runner and image-classifier, the digits model quantized
# by model-runner, image-classifier and model-compiler (a bundle run by
# image-classifier), Interpreter and CPU outputs equal bit for bit, the
# graph folded into integer products, the SQNR report, and one error line
# for each malformed or mismatched profile and bad flag value.
#   quantization_test.sh MODEL_RUNNER MODEL_COMPILER IMAGE_CLASSIFIER SRC
MR=$1 MC=$2 IC=$3 SRC=$4
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$SRC/tests/cli/check.sh"
DIGITS=$SRC/models/digits
M=$DIGITS/digits.onnx
mkdir -p "$TMP/inputs"
cp "$DIGITS"/test_data/*.input.pb "$TMP/inputs/"
P=$TMP/digits.yaml

# --- recording
check "model-runner -dump-profile over a directory" 0 \
  '^profile: 11 values over 10 input set\(s\) written to ' \
  "$MR" -model="$M" -input="$TMP/inputs" -dump-profile="$P"
grep -qE '^bins: +2048$' "$P" || fail "profile: bins"
grep -qE '^inputs: +10$' "$P" || fail "profile: inputs"
grep -qE "^  - name: +'/features/features.2/Relu_output_0'$" "$P" ||
  fail "profile: values are named by their ONNX names"
check "image-classifier -dump-profile" 0 '^summary: 10 images' \
  "$IC" -model="$M" -dump-profile="$TMP/ic.yaml" "$DIGITS"/images/*.png
grep -qE '^inputs: +10$' "$TMP/ic.yaml" || fail "image-classifier profile: inputs"

# --- quantized runs: integer products, Interpreter == CPU bit for bit
for b in Interpreter CPU; do
  check "model-runner -load-profile ($b)" 0 "^output 'logits'" \
    "$MR" -model="$M" -backend=$b -load-profile="$P" -enable-channelwise \
    -input="$DIGITS/test_data/digit-7.input.pb" -output-dir="$TMP/out-$b"
done
cmp -s "$TMP/out-Interpreter/output_0.pb" "$TMP/out-CPU/output_0.pb" ||
  fail "CPU and Interpreter logits differ"
"$MR" -model="$M" -input="$DIGITS/test_data/digit-7.input.pb" \
  -output-dir="$TMP/out-fp32" >/dev/null
cmp -s "$TMP/out-fp32/output_0.pb" "$TMP/out-CPU/output_0.pb" &&
  fail "quantized logits equal fp32's"
check "the products are integer" 0 '(Int|Requant)Conv' \
  "$MR" -model="$M" -load-profile="$P" -dump-graph -compile-only
# fold-qdq makes RequantConv/RequantMatMul where the product's requantize
# folds into it, IntConv/IntMatMul otherwise.
[ "$(grep -cE ' = (Int|Requant)Conv\(' "$TMP/out")" = 2 ] || fail "not 2 integer Convs"
[ "$(grep -cE ' = (Int|Requant)MatMul\(' "$TMP/out")" = 1 ] || fail "not 1 integer MatMul"
grep -qE ' = (Conv|Gemm|MatMul)\(' "$TMP/out" && fail "a float product is left"
check "-keep-original-precision-for-nodes=Conv" 0 '(Int|Requant)MatMul' \
  "$MR" -model="$M" -load-profile="$P" -dump-graph -compile-only \
  -keep-original-precision-for-nodes=Conv
grep -qE ' = (Int|Requant)Conv\(' "$TMP/out" && fail "a kept Conv was quantized"
check "-dump-quantization-report" 0 \
  '^  Gemm +[0-9.]+ dB  logits$' \
  "$MR" -model="$M" -load-profile="$P" -dump-quantization-report \
  -input="$TMP/inputs"
[ "$(grep -cE '^  Conv +[0-9.]+ dB  /features/' "$TMP/out")" = 2 ] ||
  fail "report: not 2 Conv rows"
for s in symmetric symmetric_with_uint8 symmetric_with_power2_scale; do
  check "-quantization-schema=$s -quantization-calibration=KL" 0 \
    '^mismatches: 0 of 10$' "$IC" -model="$M" -backend=CPU \
    -load-profile="$P" -quantization-schema=$s -quantization-calibration=KL \
    -expected-labels=0,1,2,3,4,5,6,7,8,9 "$DIGITS"/images/*.png
done

# --- the quantized bundle, run by image-classifier, equals the in-process CPU run
check "model-compiler -load-profile" 0 EMPTY \
  "$MC" -model="$M" -load-profile="$P" -enable-channelwise \
  -emit-bundle="$TMP/bundle" -bundle-shared
check "quantized bundle" 0 '^mismatches: 0 of 10$' \
  "$IC" -bundle="$TMP/bundle/digits" -expected-labels=0,1,2,3,4,5,6,7,8,9 \
  -topk=3 "$DIGITS"/images/*.png
grep '^  ' "$TMP/out" >"$TMP/bundle.txt"
check "quantized model, CPU" 0 '^mismatches: 0 of 10$' \
  "$IC" -model="$M" -backend=CPU -load-profile="$P" -enable-channelwise \
  -expected-labels=0,1,2,3,4,5,6,7,8,9 -topk=3 "$DIGITS"/images/*.png
grep '^  ' "$TMP/out" | cmp -s - "$TMP/bundle.txt" ||
  fail "bundle and in-process scores differ"

# --- errors: one line each, exit 1
ERROR_PREFIX="model-runner: error: "
run() { "$MR" -model="$M" -input="$DIGITS/test_data/digit-7.input.pb" "$@"; }
check "missing profile" 1 "cannot read profile" run -load-profile="$TMP/none.yaml"
printf 'version: [1\n' >"$TMP/bad.yaml"
check "bad YAML" 1 "is not a valid profile: line 1" run -load-profile="$TMP/bad.yaml"
sed 's/^bins: .*/bins: 16/' "$P" >"$TMP/bins.yaml"
check "wrong bin count" 1 "has 16 bins; this Ember uses 2048" \
  run -load-profile="$TMP/bins.yaml"
sed -E '/^  - name: +input$/,/^    max:/ s/^    max: .*/    max: nan/' \
  "$P" >"$TMP/nan.yaml"
check "NaN range" 1 "value 'input' has the range \[0, nan\], not a finite interval" \
  run -load-profile="$TMP/nan.yaml"
awk '/^  - name: / { skip = ($3 == "input") } !skip' "$P" >"$TMP/missing.yaml"
check "missing value" 1 \
  "has no value 'input' \(input of Conv '/features/features.0/Conv'\)" \
  run -load-profile="$TMP/missing.yaml"
"$IC" -model="$SRC/models/fashion/fashion.onnx" -dump-profile="$TMP/fashion.yaml" \
  "$SRC"/models/fashion/images/*.png >/dev/null
check "another model's profile" 1 \
  "records value '/classifier/classifier.0/Gemm_output_0', which this model does not have" \
  run -load-profile="$TMP/fashion.yaml"
check "unknown schema" 1 "-quantization-schema: expected asymmetric" \
  run -load-profile="$P" -quantization-schema=foo
check "unknown calibration" 1 "-quantization-calibration: expected None or KL" \
  run -load-profile="$P" -quantization-calibration=KLD
check "Int16" 1 "-quantization-precision: only Int8" \
  run -load-profile="$P" -quantization-precision=Int16
check "Int8 bias" 1 "-quantization-precision-bias: only Int32" \
  run -load-profile="$P" -quantization-precision-bias=Int8
check "dump and load" 1 "cannot be combined with -load-profile" \
  run -load-profile="$P" -dump-profile="$TMP/x.yaml"
check "report without profile" 1 "needs -load-profile" run -dump-quantization-report
check "profile without inputs" 1 "give the inputs to run" \
  "$MR" -model="$M" -dump-profile="$TMP/x.yaml"
ERROR_PREFIX="model-compiler: error: "
check "model-compiler -dump-profile" 1 "use model-runner or image-classifier" \
  "$MC" -model="$M" -dump-profile="$TMP/x.yaml"
check "model-compiler, bad profile" 1 "is not a valid profile" \
  "$MC" -model="$M" -load-profile="$TMP/bad.yaml"
ERROR_PREFIX="image-classifier: error: "
check "image-classifier, another model's profile" 1 "which this model does not have" \
  "$IC" -model="$M" -load-profile="$TMP/fashion.yaml" "$DIGITS/images/digit-0.png"
check "image-classifier -bundle with a profile" 1 "apply to -model" \
  "$IC" -bundle="$TMP/bundle/digits" -load-profile="$P" "$DIGITS/images/digit-0.png"
finish quantization
