#!/usr/bin/env bash
# End-to-end checks of image-classifier: the shipped digits and fashion
# models on the Interpreter, the -bundle loader on hand-written bundles
# (tests/bundle), input sources, and bad inputs (one error line, exit != 0).
#   image_classifier_test.sh IMAGE_CLASSIFIER SOURCE_DIR TEST_BUNDLE_DIR
set -u
IC=$1
SRC=$2
BUNDLES=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 "$SRC/tests/cli/make_images.py" "$TMP" || exit 1
DIGITS=$SRC/models/digits
FASHION=$SRC/models/fashion
fails=0
failed() { echo "FAIL: $1"; sed 's/^/    /' "$TMP/out" "$TMP/err"; fails=$((fails+1)); }

# check WHAT WANT_RC PATTERN CMD...: exit status must be WANT_RC ("nz": any
# non-zero) and stdout must match PATTERN (extended regex).
check() {
  local what=$1 want=$2 pattern=$3
  shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$want" = nz ] && [ $rc = 0 ] || { [ "$want" != nz ] && [ $rc != "$want" ]; }; then
    failed "$what: exit $rc, want $want"; return
  fi
  if ! grep -qE -- "$pattern" "$TMP/out"; then
    failed "$what: stdout lacks /$pattern/"; return
  fi
  echo "ok: $what"
}

# error WHAT PATTERN CMD...: exit 1, stderr is exactly one line, an
# "image-classifier: error:" line matching PATTERN.
error() {
  local what=$1 pattern=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
  local rc=$?
  if [ $rc != 1 ]; then failed "$what: exit $rc, want 1"; return; fi
  if [ "$(wc -l <"$TMP/err")" != 1 ]; then failed "$what: not one line"; return; fi
  if ! grep -qE -- "^image-classifier: error: .*$pattern" "$TMP/err"; then
    failed "$what: stderr lacks /$pattern/"; return
  fi
  echo "ok: $what"
}

# --- the fashion model (issue 7's acceptance command) ---------------------
FASHION_EXPECTED=0,0,1,1,2,2,3,3,4,4,5,5,6,6,7,7,8,8,9,9
"$IC" -model="$FASHION/fashion.onnx" -image-mode=0to1 -labels="$FASHION/labels.txt" \
  -topk=3 -expected-labels=$FASHION_EXPECTED "$FASHION"/images/*.png >"$TMP/fashion1" 2>"$TMP/err"
rc=$?
cp "$TMP/fashion1" "$TMP/out"
if [ $rc -gt 2 ]; then failed "fashion: $rc of 20 wrong (want <= 2)"
elif [ "$(grep -c '^  3: ' "$TMP/fashion1")" != 20 ]; then failed "fashion: 20 top-3 lists"
elif ! grep -qE '^summary: 20 images, batch 1, 20 runs .* images/s$' "$TMP/fashion1"; then failed "fashion: summary"
else echo "ok: fashion: $((20 - rc))/20 right"; fi
grep -A3 '9-ankle-boot-0.png' "$TMP/fashion1"

# A minibatch of 8 (last batch padded with 4 zero images) changes nothing
# but the batch; scores match to the printed 6 digits.
"$IC" -model="$FASHION/fashion.onnx" -labels="$FASHION/labels.txt" -topk=3 \
  -expected-labels=$FASHION_EXPECTED -minibatch=8 "$FASHION"/images/*.png >"$TMP/fashion8" 2>"$TMP/err"
cp "$TMP/fashion8" "$TMP/out"
if [ "$(grep -v '^summary' "$TMP/fashion1")" != "$(grep -v '^summary' "$TMP/fashion8")" ]; then
  failed "minibatch 8 differs from minibatch 1"
elif ! grep -qE '^summary: 20 images, batch 8, 3 runs' "$TMP/fashion8"; then failed "minibatch summary"
else echo "ok: minibatch 8 with padding equals minibatch 1"; fi

check "softmax scores are probabilities" 0 '^  1: 9 Ankle boot (0\.[0-9]+|1)$' \
  "$IC" -model="$FASHION/fashion.onnx" -labels="$FASHION/labels.txt" -compute-softmax \
  "$FASHION/images/9-ankle-boot-0.png"
check "a JPEG classifies like its PNG" 0 '^  1: 9 Ankle boot ' \
  "$IC" -model="$FASHION/fashion.onnx" -labels="$FASHION/labels.txt" "$TMP/boot.jpg"

# --- digits: fixed batch 1, input sources, exit status ----------------------
check "digits all right" 0 '^mismatches: 0 of 10$' \
  "$IC" -model="$DIGITS/digits.onnx" -expected-labels=0,1,2,3,4,5,6,7,8,9 "$DIGITS"/images/*.png
# Oracle: every printed logit equals onnxruntime's reference for the same
# image (test_data/*.output.pb, made from inputs equal to PNG/255). Scores
# are printed with 6 significant digits; the tolerance covers that rounding
# plus float32 summation order (|logit| < 20).
"$IC" -model="$DIGITS/digits.onnx" -topk=10 "$DIGITS"/images/*.png >"$TMP/out" 2>"$TMP/err"
if /usr/bin/python3 - "$TMP/out" "$DIGITS/test_data" <<'PY'
import os, sys
import onnx, onnx.numpy_helper as nh
blocks, cur = {}, None
for line in open(sys.argv[1]):
    if line.startswith("  "):
        _, idx, score = line.split()
        blocks[cur][int(idx)] = float(score)
    elif not line.startswith(("summary", "mismatches")):
        cur = os.path.basename(line.strip()).replace(".png", "")
        blocks[cur] = {}
assert len(blocks) == 10, blocks.keys()
for name, scores in blocks.items():
    t = onnx.TensorProto()
    t.ParseFromString(open(os.path.join(sys.argv[2], name + ".output.pb"), "rb").read())
    ref = nh.to_array(t)[0]
    assert len(scores) == 10
    for k, v in scores.items():
        assert abs(v - ref[k]) <= 1e-4 + 1e-5 * abs(ref[k]), (name, k, v, ref[k])
PY
then echo "ok: digits logits match onnxruntime"; else failed "digits logits vs onnxruntime"; fi
# Layout and channel order end to end: wrapped digits models must print the
# logits of the plain model (same kernels after an exact Transpose or an
# exact 1*x + 0*g + 0*b selection, so the text is identical).
scores() { "$@" 2>&1 | grep '^  '; }
plain=$(scores "$IC" -model="$DIGITS/digits.onnx" -topk=10 "$DIGITS/images/digit-3.png")
[ "$(scores "$IC" -model="$TMP/digits_nhwc.onnx" -image-layout=NHWC -topk=10 "$DIGITS/images/digit-3.png")" = "$plain" ] \
  && echo "ok: NHWC model" || { failed "NHWC model"; }
[ "$(scores "$IC" -model="$TMP/digits_rgb.onnx" -topk=10 "$TMP/digit3-red.png")" = "$plain" ] \
  && echo "ok: RGB order reads red first" || { failed "RGB order"; }
[ "$(scores "$IC" -model="$TMP/digits_rgb.onnx" -image-channel-order=BGR -topk=10 "$TMP/digit3-blue.png")" = "$plain" ] \
  && echo "ok: BGR order reads blue first" || { failed "BGR order"; }
[ "$(scores "$IC" -model="$TMP/digits_rgb.onnx" -image-channel-order=BGR -topk=10 "$TMP/digit3-red.png")" != "$plain" ] \
  && echo "ok: BGR order does not read red first" || { failed "BGR on red"; }
[ "$(scores "$IC" -model="$TMP/digits_rgb.onnx" -topk=10 "$DIGITS/images/digit-3.png")" = "$plain" ] \
  && echo "ok: gray fills every channel" || { failed "gray on RGB model"; }
[ "$(scores "$IC" -model="$TMP/digits_hw.onnx" -onnx-define-symbol=H,8 -onnx-define-symbol=W,8 -topk=10 "$DIGITS/images/digit-3.png")" = "$plain" ] \
  && echo "ok: -onnx-define-symbol" || { failed "-onnx-define-symbol"; }
check "exit status counts mismatches" 9 '^mismatches: 9 of 10$' \
  "$IC" -model="$DIGITS/digits.onnx" -expected-labels=0,0,0,0,0,0,0,0,0,0 "$DIGITS"/images/*.png
check "input-image-dir" 0 '^mismatches: 0 of 10$' \
  "$IC" -model="$DIGITS/digits.onnx" -expected-labels=0,1,2,3,4,5,6,7,8,9 -input-image-dir="$DIGITS/images"
ls "$DIGITS"/images/*.png >"$TMP/list.txt"
check "input-image-list-file" 0 '^mismatches: 0 of 10$' \
  "$IC" -model="$DIGITS/digits.onnx" -expected-labels=0,1,2,3,4,5,6,7,8,9 -input-image-list-file="$TMP/list.txt"
check "paths from stdin" 0 '^mismatches: 0 of 10$' \
  sh -c "ls '$DIGITS'/images/*.png | '$IC' -model='$DIGITS/digits.onnx' -expected-labels=0,1,2,3,4,5,6,7,8,9 -"
check "iterations and warmup" 0 '^summary: 10 images, batch 1, 30 runs over 3 iteration' \
  "$IC" -model="$DIGITS/digits.onnx" -iterations=3 -warmup=2 "$DIGITS"/images/*.png
check "-resize fits a 28x28 image to 8x8" 0 '^  1: [0-9] ' \
  "$IC" -model="$DIGITS/digits.onnx" -resize "$FASHION/images/9-ankle-boot-0.png"

# --- bundles: scores[k] = w[k]*pixel[k] + c[k], w = (1,-1,.5,2), c = (0,255,0,0)
# tiny-a (200,10,0,0) -> 200 245 0 0; tiny-b (0,255,100,90) -> 0 0 50 180;
# tiny-c (50,250,255,0) -> 50 5 127.5 0. Batch 2: the third image is padded.
# tinynet reads w and c from its weights file, tinyemb has them embedded.
mkdir -p "$TMP/ok"
cp "$BUNDLES/tinynet.so" "$BUNDLES/tinyemb.so" "$TMP/ok/"
/usr/bin/python3 -c "import struct, sys; open(sys.argv[1], 'wb').write(struct.pack('<8f', 1, -1, .5, 2, 0, 255, 0, 0))" \
  "$TMP/ok/tinynet.weights.bin"
for b in tinynet tinyemb; do
  check "bundle $b" 0 '^  1: 1 245$' "$IC" -bundle="$TMP/ok/$b" -image-mode=0to255 -topk=2 \
    "$TMP"/tiny-a.png "$TMP"/tiny-b.png "$TMP"/tiny-c.png
  want=$'  1: 1 245\n  2: 0 200\n  1: 3 180\n  2: 2 50\n  1: 2 127.5\n  2: 0 50'
  [ "$(grep '^  ' "$TMP/out")" = "$want" ] || failed "bundle $b: scores"
  grep -qE '^summary: 3 images, batch 2, 2 runs' "$TMP/out" || failed "bundle $b: summary"
done
error "bundle with another ABI version" "ABI version 99; this tool reads versions 1 to 3" \
  "$IC" -bundle="$BUNDLES/tinybad" "$TMP"/tiny-a.png
error "bundle .so missing" "cannot load bundle '$TMP/nothing.so'" \
  "$IC" -bundle="$TMP/nothing" "$TMP"/tiny-a.png
cp "$BUNDLES/tinynet.so" "$TMP/tinynet.so"
error "bundle weights missing" "cannot read bundle weights '$TMP/tinynet.weights.bin'" \
  "$IC" -bundle="$TMP/tinynet" "$TMP"/tiny-a.png
head -c 16 "$TMP/ok/tinynet.weights.bin" >"$TMP/tinynet.weights.bin"
error "bundle weights of the wrong size" "hold 16 bytes; the bundle expects 32" \
  "$IC" -bundle="$TMP/tinynet" "$TMP"/tiny-a.png
error "bundle minibatch mismatch" "compiled for a batch of 2; -minibatch=3" \
  "$IC" -bundle="$TMP/ok/tinynet" -minibatch=3 "$TMP"/tiny-a.png

# --- bad inputs ---------------------------------------------------------------
error "missing image" "cannot read image '$TMP/none.png'" \
  "$IC" -model="$DIGITS/digits.onnx" "$TMP/none.png"
error "corrupt PNG" "corrupt PNG '$TMP/corrupt.png'" \
  "$IC" -model="$FASHION/fashion.onnx" "$TMP/corrupt.png"
error "not an image" "'$TMP/fake.png' is neither a PNG nor a JPEG" \
  "$IC" -model="$DIGITS/digits.onnx" "$TMP/fake.png"
error "wrong channel count" "image '$TMP/rgb.png' has 3 channels \(RGB\); the model input expects 1" \
  "$IC" -model="$DIGITS/digits.onnx" "$TMP/rgb.png"
error "size mismatch names both sizes" "is 28x28 \(WxH\); the model input expects 8x8; pass -resize" \
  "$IC" -model="$DIGITS/digits.onnx" "$FASHION/images/9-ankle-boot-0.png"
error "unknown -image-mode" "-image-mode=foo is not one of 0to1, neg1to1, 0to255, neg128to127" \
  "$IC" -model="$DIGITS/digits.onnx" -image-mode=foo "$DIGITS/images/digit-0.png"
error "unknown -image-layout" "-image-layout=CHW is not one of NCHW, NHWC" \
  "$IC" -model="$DIGITS/digits.onnx" -image-layout=CHW "$DIGITS/images/digit-0.png"
error "unknown flag" "Unknown command line argument '-no-such-flag'" \
  "$IC" -model="$DIGITS/digits.onnx" -no-such-flag "$DIGITS/images/digit-0.png"
# LLVM's own one-line message for a malformed number (no "error:" prefix).
"$IC" -model="$DIGITS/digits.onnx" -minibatch=abc "$DIGITS/images/digit-0.png" >"$TMP/out" 2>"$TMP/err"
if [ $? = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q "'abc' value invalid" "$TMP/err"; then
  echo "ok: malformed -minibatch"; else failed "malformed -minibatch"; fi
error "wrong layout is explained" "would have 8 channels as NHWC" \
  "$IC" -model="$DIGITS/digits.onnx" -image-layout=NHWC "$DIGITS/images/digit-0.png"
error "bad -mean" "-mean: 'x' is not a number" \
  "$IC" -model="$DIGITS/digits.onnx" -mean=0.5,x "$DIGITS/images/digit-0.png"
error "-mean count" "-mean has 2 values; the model input has 1 channel\\(s\\) \\(give 1 value\\)" \
  "$IC" -model="$DIGITS/digits.onnx" -mean=0.5,0.5 "$DIGITS/images/digit-0.png"
printf 'a\nb\n' >"$TMP/list2.txt"
error "labels/classes mismatch" "the labels file has 2 lines; the model output 'logits' has 10 classes" \
  "$IC" -model="$DIGITS/digits.onnx" -labels="$TMP/list2.txt" "$DIGITS/images/digit-0.png"
error "expected-labels count" "-expected-labels has 2 entries for 1 images" \
  "$IC" -model="$DIGITS/digits.onnx" -expected-labels=1,2 "$DIGITS/images/digit-0.png"
error "expected label out of range" "-expected-labels: 12 is not a class" \
  "$IC" -model="$DIGITS/digits.onnx" -expected-labels=12 "$DIGITS/images/digit-0.png"
error "fixed batch vs -minibatch" "fixed batch of 1; -minibatch=4 needs a symbolic batch" \
  "$IC" -model="$DIGITS/digits.onnx" -minibatch=4 "$DIGITS/images/digit-0.png"
error "undefined spatial symbol" "symbolic dimension 'H'; give it a value with -onnx-define-symbol=H,VALUE" \
  "$IC" -model="$TMP/digits_hw.onnx" "$DIGITS/images/digit-3.png"
error "batch symbol via -onnx-define-symbol" "give the batch symbol 'N' of input 'input' with -minibatch" \
  "$IC" -model="$FASHION/fashion.onnx" -onnx-define-symbol=N,2 "$DIGITS/images/digit-3.png"
error "unused -onnx-define-symbol" "-onnx-define-symbol names 'h', which is not a symbolic dimension of any graph input \\(symbols: 'H', 'W'\\)" \
  "$IC" -model="$TMP/digits_hw.onnx" -onnx-define-symbol=H,8 -onnx-define-symbol=W,8 -onnx-define-symbol=h,8 "$DIGITS/images/digit-3.png"
error "-onnx-define-symbol with a bundle" "-onnx-define-symbol applies to -model" \
  "$IC" -bundle="$TMP/none" -onnx-define-symbol=H,8 "$DIGITS/images/digit-3.png"
error "malformed -onnx-define-symbol" "-onnx-define-symbol expects NAME,POSITIVE_INT, got 'H'" \
  "$IC" -model="$TMP/digits_hw.onnx" -onnx-define-symbol=H "$DIGITS/images/digit-3.png"
error "missing model" "cannot read model '$TMP/none.onnx'" \
  "$IC" -model="$TMP/none.onnx" "$DIGITS/images/digit-0.png"
error "no images" "no images given" "$IC" -model="$DIGITS/digits.onnx"
error "model and bundle" "exactly one of -model" \
  "$IC" -model="$DIGITS/digits.onnx" -bundle=x "$DIGITS/images/digit-0.png"
error "unknown backend" "unknown backend 'Nope'" \
  "$IC" -model="$DIGITS/digits.onnx" -backend=Nope "$DIGITS/images/digit-0.png"

echo "$fails failures"
[ $fails = 0 ]
