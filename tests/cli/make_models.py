#!/usr/bin/env python3
"""Writes small ONNX models for the CLI tests into the directory argv[1]."""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, os.path.join(out, name + ".onnx"))


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])

# Three unsupported ops of two types between supported ones.
save("unsupported",
     [helper.make_node("Relu", ["x"], ["a"], name="relu"),
      helper.make_node("Det", ["a"], ["b"], name="det1"),
      helper.make_node("Mish", ["b"], ["c"], name="mish"),
      helper.make_node("Det", ["c"], ["y"], name="det2")],
     [x], [y])

# Two inputs, one output: y = a + b.
a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 4])
b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 4])
save("add", [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
     [a, b], [y])

with open(os.path.join(out, "garbage.onnx"), "wb") as f:
    f.write(bytes(range(256)) * 4)
