#!/usr/bin/env bash
# Quantized inputs and outputs in a bundle header: model-compiler compiles a
# QDQ model with a per-tensor uint8 input, a per-axis int8 input and an
# int8 output; quant_header.c, compiled against the header, checks each
# one's scale and zero point macros (docs/Bundle.md "The header").
set -u
COMPILER=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 - "$TMP/qnet.onnx" <<'PYEOF' || exit 1
import sys, numpy as np, onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
inits = [nh.from_array(np.array(0.5, np.float32), "xs"),
         nh.from_array(np.array(128, np.uint8), "xz"),
         nh.from_array(np.array([0.25, 0.5, 0.125], np.float32), "ws"),
         nh.from_array(np.array([0, 1, -1], np.int8), "wz"),
         nh.from_array(np.array(0.125, np.float32), "ys"),
         nh.from_array(np.array(-3, np.int8), "yz")]
nodes = [h.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
         h.make_node("Relu", ["xd"], ["r"]),
         h.make_node("QuantizeLinear", ["r", "ys", "yz"], ["y"]),
         h.make_node("DequantizeLinear", ["w", "ws", "wz"], ["z"], axis=0)]
g = h.make_graph(nodes, "qnet",
                 [h.make_tensor_value_info("x", T.UINT8, [1, 4]),
                  h.make_tensor_value_info("w", T.INT8, [3, 2])],
                 [h.make_tensor_value_info("y", T.INT8, [1, 4]),
                  h.make_tensor_value_info("z", T.FLOAT, [3, 2])], inits)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), sys.argv[1])
PYEOF
"$COMPILER" -model="$TMP/qnet.onnx" -backend=CPU -emit-bundle="$TMP/b" \
  -network-name=qnet || exit 1
grep -E '_(SCALES?|ZERO_POINTS?|QUANT_AXIS) ' "$TMP/b/qnet.h"
cc -std=c99 -Wall -Werror -include "$TMP/b/qnet.h" \
  "$SRC/tests/bundles/quant_header.c" -o "$TMP/check" || exit 1
"$TMP/check"
