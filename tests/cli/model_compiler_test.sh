#!/usr/bin/env bash
# model-compiler's command line: silent success, one error line and a
# non-zero exit for every kind of bad input, and the dump flags.
set -u
COMPILER=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 "$SRC/tests/cli/make_models.py" "$TMP" || exit 1
ERROR_PREFIX="model-compiler: error: "
source "$SRC/tests/cli/check.sh"
D=$SRC/models/digits/digits.onnx
B=$TMP/b
check "success is silent" 0 EMPTY "$COMPILER" -model="$D" -emit-bundle="$B" -network-name=net
[ -s "$B/net.o" ] && [ -s "$B/net.h" ] && [ -s "$B/net.weights.bin" ] ||
  fail "bundle files missing"
check "network name defaults to the model stem" 0 EMPTY "$COMPILER" -model="$D" -emit-bundle="$B"
[ -s "$B/digits.o" ] || fail "digits.o missing"
check "no model" 1 "^model-compiler: error: -model is required" "$COMPILER" -emit-bundle="$B"
# Without -emit-bundle the model is compiled as a check; nothing is written.
check "no bundle dir compiles as a check" 0 EMPTY "$COMPILER" -model="$D"
check "bad network name" 1 "^model-compiler: error: -network-name '9lives' is not a C identifier" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -network-name=9lives
# With EMBER_WITH_CUDA the CUDA backend is tested in tests/cuda.
if ! "$COMPILER" -model="$D" -emit-bundle="$B/cuda" -backend=CUDA >/dev/null 2>&1; then
  check "CUDA not built in" 1 "^model-compiler: error: backend CUDA is not built in" \
    "$COMPILER" -model="$D" -emit-bundle="$B" -backend=CUDA
else
  check "fp16 on CUDA" 1 "^model-compiler: error: backend CUDA does not support -precision=fp16 yet$" \
    "$COMPILER" -model="$D" -emit-bundle="$B/cuda16" -backend=CUDA -precision=fp16
  check "fp16 weights on CUDA" 1 "^model-compiler: error: backend CUDA does not support -weights-precision yet$" \
    "$COMPILER" -model="$D" -emit-bundle="$B/cuda16" -backend=CUDA -weights-precision=fp16
fi
# -print-conv-plans: one line per convolution, then the compile goes on.
check "-print-conv-plans" 0 "^conv '/features/features.4/Conv_1_1' \\[1, 16, 4, 4\\] \\* \\[32, 16, 3, 3\\] stride 1x1 group 1 -> \\[1, 32, 4, 4\\]: [a-z]" \
  "$COMPILER" -model="$D" -emit-bundle="$B/plans" -print-conv-plans
[ -s "$B/plans/digits.o" ] || fail "-print-conv-plans stopped the compile"
# -weights-precision=fp16 (alone or with -precision=fp16): the Conv and
# Gemm weights are stored in 2 bytes (the biases stay 4), so the weights
# file is under 60 % of fp32's; bf16 weights likewise. -precision=fp16
# alone widens its rounded weights at compile time: not halved.
check "-weights-precision=fp16" 0 EMPTY "$COMPILER" -model="$D" \
  -emit-bundle="$B/w16" -weights-precision=fp16
check "-precision=fp16 -weights-precision=fp16" 0 EMPTY "$COMPILER" \
  -model="$D" -emit-bundle="$B/p16" -precision=fp16 -weights-precision=fp16
check "-precision=fp16" 0 EMPTY "$COMPILER" -model="$D" \
  -emit-bundle="$B/p16wide" -precision=fp16
[ "$(stat -c %s "$B/p16wide/digits.weights.bin")" -ge \
  "$(stat -c %s "$B/digits.weights.bin")" ] ||
  fail "-precision=fp16 alone stored its weights narrow"
check "-weights-precision=bf16" 0 EMPTY "$COMPILER" -model="$D" \
  -emit-bundle="$B/wb16" -weights-precision=bf16
full=$(stat -c %s "$B/digits.weights.bin")
for d in w16 p16 wb16; do
  half=$(stat -c %s "$B/$d/digits.weights.bin")
  [ $((half * 10)) -lt $((full * 6)) ] ||
    fail "$d weights file $half bytes, fp32 $full: not halved"
done
# The CPU runs no widening Cast of a 16-bit weight: the Conv filters are
# packed in 16 bits at compile time and widened by one kernel each, and the
# classifier's MatMul widens its 16-bit B as its tiles read it.
ir=$("$COMPILER" -model="$D" -weights-precision=fp16 -dump-llvm-ir 2>&1)
echo "$ir" | grep -q '^define .*@"kernel\.[0-9]*\..*\.wide"(' &&
  fail "-weights-precision=fp16 runs a widening Cast kernel"
echo "$ir" | grep -q '^define .*@"kernel\.[0-9]*\..*\.packed\.widen"(' ||
  fail "-weights-precision=fp16: no filter packed in 16 bits"
echo "$ir" | awk '/^define .*Gemm\.mm_1"\(/,/^}/' | grep -q 'fpext .*half' ||
  fail "-weights-precision=fp16: the MatMul does not read its 16-bit B"
check "bad -weights-precision" 1 "^model-compiler: error: -weights-precision 'int8' is not fp32, fp16 or bf16$" \
  "$COMPILER" -model="$D" -weights-precision=int8
check "fp16 weights with bf16 precision" 1 "^model-compiler: error: -weights-precision=fp16 does not combine with -precision=bf16" \
  "$COMPILER" -model="$D" -weights-precision=fp16 -precision=bf16
check "bad -precision" 1 "^model-compiler: error: -precision 'fp8' is not fp32, bf16 or fp16$" \
  "$COMPILER" -model="$D" -precision=fp8
check "run-time shape operand has no bundle" 1 "^model-compiler: error: input 's' is a shape operand fed at run time" \
  "$COMPILER" -model="$TMP/runtime_reshape.onnx" -emit-bundle="$B/rt"
check "Interpreter has no bundles" 1 "^model-compiler: error: backend Interpreter cannot emit bundles" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -backend=Interpreter
check "unknown backend" 1 "^model-compiler: error: unknown backend 'Nope'" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -backend=Nope
check "missing model" 1 "^model-compiler: error: cannot read model" \
  "$COMPILER" -model="$TMP/none.onnx" -emit-bundle="$B"
check "garbage model" 1 "^model-compiler: error: .*not a valid ONNX model" \
  "$COMPILER" -model="$TMP/garbage.onnx" -emit-bundle="$B"
check "unsupported ops" 1 "^model-compiler: error: .*unsupported node" \
  "$COMPILER" -model="$TMP/unsupported.onnx" -emit-bundle="$B"
check "unknown target" 1 "^model-compiler: error: unknown target 'nosuch" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -target=nosuch-unknown-linux
check "unsupported target" 1 "^model-compiler: error: target 'i686.*' is not supported" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -target=i686-pc-linux-gnu
check "unknown cpu" 1 "^model-compiler: error: unknown CPU 'pentium9'" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -mcpu=pentium9
check "unknown feature" 1 "^model-compiler: error: -mattr entry '\+avx9' is not \+FEATURE or -FEATURE" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -mattr=+avx9
check "bad -cpu-conv-path" 1 "^model-compiler: error: -cpu-conv-path 'sideways' is not auto, panels, channels or rows$" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -cpu-conv-path=sideways
check "bad -cpu-simd-width" 1 "^model-compiler: error: -cpu-simd-width '128' is not auto, 256 or 512$" \
  "$COMPILER" -model="$D" -cpu-simd-width=128
check "bad -cuda-gemm" 1 "^model-compiler: error: -cuda-gemm 'cudnn' is not auto, cublaslt or generated$" \
  "$COMPILER" -model="$D" -cuda-gemm=cudnn
# -print-target needs no model: one field per line, read from LLVM's CPU
# model (x86-64-v3: AVX2 and FMA, no AVX-512) and the ISA-level caches.
check "-print-target (x86-64-v3)" 0 "^float-lanes: 8$" \
  "$COMPILER" -print-target -target=x86_64-unknown-linux-gnu -mcpu=x86-64-v3
check "-print-target (x86-64-v3 caches)" 0 "^cache-source: default$" \
  "$COMPILER" -print-target -target=x86_64-unknown-linux-gnu -mcpu=x86-64-v3
check "-print-target -mattr drops AVX-512" 0 "^vector-registers: 16$" \
  "$COMPILER" -print-target -mcpu=skylake-avx512 -mattr=-avx512f
check "-print-target (aarch64)" 0 "^extensions: neon dotprod$" \
  "$COMPILER" -print-target -target=aarch64-unknown-linux-gnu -mcpu=cortex-a76
check "-print-target bad cpu" 1 "^model-compiler: error: unknown CPU 'pentium9'" \
  "$COMPILER" -print-target -mcpu=pentium9
check "unwritable bundle dir" 1 "^model-compiler: error: cannot create" \
  "$COMPILER" -model="$D" -emit-bundle=/proc/nope
check "-dump-llvm-ir" 0 "define .*i32 @net\\(" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -network-name=net -dump-llvm-ir
check "-dump-llvm-asm (AVX2 target)" 0 "vfmadd" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -network-name=net -mcpu=haswell -dump-llvm-asm
check "-dump-ir" 0 "allocactivation" "$COMPILER" -model="$D" -emit-bundle="$B" -dump-ir
check "-dump-graph" 0 "Conv" "$COMPILER" -model="$D" -emit-bundle="$B" -dump-graph
check "-print-memory" 0 "^  activations: [0-9]+ bytes \(lower bound" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -print-memory
check "-time-passes" 0 "^codegen +[0-9.]+ ms" "$COMPILER" -model="$D" -emit-bundle="$B" -time-passes
check "-onnx-define-symbol is validated" 1 "expects NAME,POSITIVE_INT" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -onnx-define-symbol=N
check "-onnx-define-symbol names a symbol of the inputs" 1 "^model-compiler: error: .*-onnx-define-symbol names 'batch', which is not a symbolic dimension of any graph input \(symbols: none\)$" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -onnx-define-symbol=batch,2
check "-model-input names an input" 1 "^model-compiler: error: .*-model-input names 'imput', which is not an input of the graph \(inputs: 'input'\)$" \
  "$COMPILER" -model="$D" -emit-bundle="$B" -model-input=imput,float,[1,1,8,8]
check "-model-input with the declared type" 0 EMPTY \
  "$COMPILER" -model="$D" -emit-bundle="$B" -model-input=input,float,[1,1,8,8]
# Progress: with the threshold forced to 0 s every stage reports, once and
# in pipeline order; -quiet silences it.
"$COMPILER" -model="$D" -emit-bundle="$B" -progress-after=0 >"$TMP/progress" 2>&1 ||
  fail "-progress-after=0: exit $?"
stages=$(sed -nE 's/^model-compiler: ([A-Za-z]+) +done in +[0-9.]+ s \( *[0-9.]+ s in all, peak memory [0-9]+ MiB\)$/\1/p' \
  "$TMP/progress" | tr '\n' ' ')
if [ "$stages" = "import optimize IR plan lower codegen object " ] &&
  [ "$(wc -l <"$TMP/progress")" = 7 ]; then
  echo "ok: -progress-after=0 reports the seven stages in order"
else
  fail "-progress-after=0: stages '$stages'"; cat "$TMP/progress"
fi
check "-quiet silences progress" 0 EMPTY "$COMPILER" -model="$D" -emit-bundle="$B" \
  -progress-after=0 -quiet
check "progress stays quiet below its threshold" 0 EMPTY "$COMPILER" -model="$D" \
  -emit-bundle="$B" -progress-after=1000
finish "model-compiler CLI"
