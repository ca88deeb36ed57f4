#!/usr/bin/env bash
# Soak of the threaded entry: a CPU bundle of squeezenet1_1 (a zoo model of
# 26 convolutions that compiles in seconds) called by several application
# threads at once, each with its own mutable and activation regions and one
# shared constant region, thousands of times in all
# (tests/bundles/soak_bundle.c): every output bit-identical to NAME's
# one-thread reference for that caller's input, and the resident set size
# flat between the first and the last quarter of the calls.
#   soak_test.sh MODEL_COMPILER SOURCE_DIR ZOO_DIR [CALLERS CALLS THREADS]
# Exits 77 (ctest: skipped) when ZOO_DIR lacks squeezenet1_1 and Debian's
# python3 cannot export it.
set -u
COMPILER=$1
SRC=$2
ZOO=$3
CALLERS=${4:-3}
CALLS=${5:-1000}
THREADS=${6:-2}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PY=/usr/bin/python3
name=squeezenet1_1

if [ ! -f "$ZOO/$name.onnx" ] || [ ! -f "$ZOO/$name.input.pb" ]; then
  if ! $PY -c 'import torch, torchvision' 2>/dev/null; then
    echo "SKIP: no $name in '$ZOO' and no torch/torchvision to export it"
    exit 77
  fi
  mkdir -p "$ZOO"
  $PY "$SRC/models/zoo/export.py" "$ZOO" --models $name \
    2> >(grep -v -e UserWarning -e 'warnings.warn' >&2) ||
    { echo "FAIL: export $name"; exit 1; }
fi
$PY - "$ZOO/$name.input.pb" "$TMP/in.bin" <<'PYEOF' || exit 1
import sys, onnx
from onnx import numpy_helper
numpy_helper.to_array(onnx.load_tensor(sys.argv[1])).tofile(sys.argv[2])
PYEOF
"$COMPILER" -model="$ZOO/$name.onnx" -backend=CPU -emit-bundle="$TMP/b" \
  -network-name=$name || { echo "FAIL: compile"; exit 1; }
cc -std=c99 -O2 -D_DEFAULT_SOURCE -DNET=$name -include "$TMP/b/$name.h" \
  "$SRC/tests/bundles/soak_bundle.c" "$TMP/b/$name.o" -lm -lpthread \
  -o "$TMP/soak" || { echo "FAIL: link"; exit 1; }
SECONDS=0
"$TMP/soak" "$TMP/b/$name.weights.bin" "$TMP/in.bin" "$CALLERS" "$CALLS" \
  "$THREADS" || { echo "FAIL: soak"; exit 1; }
echo "soak: ${SECONDS} s"
