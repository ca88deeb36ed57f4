#!/usr/bin/env bash
# Bundles end to end: model-compiler writes CPU bundles of digits, a Loop
# kept as a loop and generated models; each is linked with `cc` into a C program, run (single
# and multi-threaded entry, -embed-weights, NAME.so through dlopen) and
# compared with the Interpreter (model-runner). Also checks an aarch64
# cross-compiled object's machine type and symbols.
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
# digits: its first test input as .npy and .bin.
$PY - "$SRC/models/digits/test_data/digit-3.input.pb" "$TMP/m/digits" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import numpy_helper
x = numpy_helper.to_array(onnx.load_tensor(sys.argv[1]))
np.save(sys.argv[2] + ".in0.npy", x); x.tofile(sys.argv[2] + ".in0.bin")
PYEOF
cp "$SRC/models/digits/digits.onnx" "$TMP/m/digits.onnx"
# A Loop kept as a loop (10,000 iterations; docs/ControlFlow.md): the
# entries' basic-block loop, NAME_mt running the one-thread entry.
LOOP=$SRC/tests/onnx/handmade/loops/test_loop_static_over_limit
cp "$LOOP/model.onnx" "$TMP/m/loop.onnx"
$PY - "$LOOP/test_data_set_0/input_0.pb" "$TMP/m/loop" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import numpy_helper
x = numpy_helper.to_array(onnx.load_tensor(sys.argv[1]))
np.save(sys.argv[2] + ".in0.npy", x); x.tofile(sys.argv[2] + ".in0.bin")
PYEOF

# check NAME: compile, link, run the given variants, compare each.
check() {
  local name=$1 flags=$2
  local dir=$TMP/$name.b model=$TMP/m/$name.onnx
  local ins=$(ls "$TMP/m/$name".in*.bin)
  local npys=$(ls "$TMP/m/$name".in*.npy | sed 's/^/-input=/')
  "$RUNNER" -model="$model" -backend=Interpreter $npys -output-dir="$TMP/$name.ref" >/dev/null ||
    { fail "$name: Interpreter reference"; return; }
  local nout=$(ls "$TMP/$name.ref" | wc -l)
  local out
  out=$("$COMPILER" -model="$model" -backend=CPU -emit-bundle="$dir" -network-name="$name" $flags 2>&1)
  [ $? = 0 ] && [ -z "$out" ] || { fail "$name $flags: model-compiler: $out"; return; }
  cc -std=c99 -D_ISOC11_SOURCE -DNET="$name" -include "$dir/$name.h" \
    "$SRC/tests/bundles/run_bundle.c" "$dir/$name.o" -lm -lpthread -o "$dir/run" ||
    { fail "$name: link"; return; }
  local weights="$dir/$name.weights.bin"
  case "$flags" in *-embed-weights*) weights=-;
    [ -e "$dir/$name.weights.bin" ] && fail "$name: -embed-weights wrote a weights file";;
  esac
  for threads in 0 3; do
    "$dir/run" "$weights" $threads "$dir/out$threads." $ins || { fail "$name: run ($threads threads) exit $?"; continue; }
    $PY "$SRC/tests/bundles/compare.py" "$TMP/$name.ref" "$dir/out$threads." "$nout" |
      sed "s/^/$name threads=$threads /" || fail "$name ($threads threads) differs from the Interpreter"
    [ ${PIPESTATUS[0]} = 0 ] || fail "$name ($threads threads) differs from the Interpreter"
  done
  case "$flags" in *-bundle-shared*)
    cc -std=c99 -D_ISOC11_SOURCE -I"$SRC/include" "$SRC/tests/bundles/dlopen_bundle.c" -ldl -o "$dir/dl" &&
      "$dir/dl" "$dir/$name.so" "$name" "$weights" "$dir/dl." $ins &&
      $PY "$SRC/tests/bundles/compare.py" "$TMP/$name.ref" "$dir/dl." "$nout" | sed "s/^/$name dlopen /" &&
      [ ${PIPESTATUS[0]} = 0 ] || fail "$name: dlopen run";;
  esac
}

check digits "-bundle-shared"
check loop ""
check mlp ""
check gemv ""
# The weights file holds the packed classifier weight (1000 columns padded
# to 1024) and the bias, not also the original the packing replaced.
gemv_bytes=$(stat -c %s "$TMP/gemv.b/gemv.weights.bin")
[ "$gemv_bytes" -le $(((1024 * 256 + 1024) * 4 + 4096)) ] ||
  fail "gemv: weights file of $gemv_bytes bytes keeps unread constants"
check convnet "-embed-weights"
# Without AVX-512 libjit's convolutions take their narrow-vector path.
check convnet "-mcpu=haswell"
# Both conv GEMMs' narrow paths (channel-vector tiles in 3-pixel strips).
for path in panels channels; do
  check convnet "-mcpu=haswell -cpu-conv-path=$path"
done

# The generated header is C99 and C++ clean, and two bundle headers can be
# included together with the tools' EmberBundle.h.
printf '#include "ember/Bundle/EmberBundle.h"\n#include "digits.h"\n#include "mlp.h"\nint main(void){return mlp_in_0_RANK != 2 || mlp_v2nd_RANK != 2 || mlp_prob_out_RANK != 2 || digits_input_RANK != 4;}\n' >"$TMP/h.c"
gcc -std=c99 -pedantic -Werror -Wall -I"$SRC/include" -I"$TMP/digits.b" -I"$TMP/mlp.b" -fsyntax-only "$TMP/h.c" || fail "headers are not clean C99"
cp "$TMP/h.c" "$TMP/h.cpp"
g++ -std=c++11 -pedantic -Werror -Wall -I"$SRC/include" -I"$TMP/digits.b" -I"$TMP/mlp.b" -fsyntax-only "$TMP/h.cpp" || fail "headers are not clean C++"

# The generated header's types are the text of include/ember/Bundle/EmberBundle.h.
types() { sed -n '/^#ifndef EMBER_BUNDLE_TYPES_DEFINED/,/^#endif \/\* EMBER_BUNDLE_TYPES_DEFINED/p' "$1"; }
[ -n "$(types "$TMP/digits.b/digits.h")" ] &&
  diff <(types "$TMP/digits.b/digits.h") <(types "$SRC/include/ember/Bundle/EmberBundle.h") ||
  fail "the header's ABI types differ from include/ember/Bundle/EmberBundle.h"

# Cross-compiling: an aarch64 object with the entry points and metadata.
"$COMPILER" -model="$TMP/m/convnet.onnx" -emit-bundle="$TMP/arm" -network-name=net \
  -target=aarch64-unknown-linux-gnu -mcpu=cortex-a72 || fail "aarch64 compile"
machine=$($PY -c "import struct,sys; d=open(sys.argv[1],'rb').read(20); print(struct.unpack('<H', d[18:20])[0])" "$TMP/arm/net.o")
[ "$machine" = 183 ] || fail "aarch64 object has ELF machine $machine, not 183 (EM_AARCH64)"
syms=$(nm "$TMP/arm/net.o")
for s in "T net" "T net_mt" "[DR] net_info"; do
  echo "$syms" | grep -qE "^[0-9a-f]+ $s\$" || fail "aarch64 object lacks '$s'"
done
echo "aarch64: ELF machine $machine, symbols ok"

[ $fails = 0 ] && echo "all bundle checks passed"
exit $((fails > 0))
