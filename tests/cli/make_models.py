#!/usr/bin/env python3
"""Writes small ONNX models for the CLI tests into the directory argv[1]."""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, nodes, inputs, outputs, inits=(), opset=13, domains=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    ops = [helper.make_opsetid("", opset)]
    ops += [helper.make_opsetid(d, v) for d, v in domains]
    m = helper.make_model(g, opset_imports=ops)
    onnx.save(m, os.path.join(out, name + ".onnx"))


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])

# Three unsupported ops of two types between supported ones: Gelu and Mish
# are opset 20's and 18's, so not ops yet at opset 13. (An op libonnx has a
# later schema for, Bernoulli at opset 13, is refused alone: it does not
# exist yet.)
save("unsupported",
     [helper.make_node("Relu", ["x"], ["a"], name="relu"),
      helper.make_node("Gelu", ["a"], ["b"], name="gelu1"),
      helper.make_node("Mish", ["b"], ["c"], name="mish"),
      helper.make_node("Gelu", ["c"], ["y"], name="gelu2")],
     [x], [y])

# A custom-domain op is listed with the other unsupported nodes, with its
# domain and that domain's opset, not refused for its domain.
save("custom_domain",
     [helper.make_node("Relu", ["x"], ["a"], name="relu"),
      helper.make_node("MyOp", ["a"], ["b"], name="custom1",
                       domain="com.example"),
      helper.make_node("Gelu", ["b"], ["y"], name="gelu1")],
     [x], [y], domains=(("com.example", 1),))

# Two inputs, one output: y = a + b.
a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 4])
b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 4])
save("add", [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
     [a, b], [y])

with open(os.path.join(out, "garbage.onnx"), "wb") as f:
    f.write(bytes(range(256)) * 4)

# Issue 3: a Tile whose declared result is absurdly large (2 * 10^10
# elements) must be a clean error, not an allocation failure.
save("huge_tile",
     [helper.make_node("Tile", ["c", "r"], ["t"], name="tile")],
     [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
     [helper.make_tensor("c", TensorProto.FLOAT, [2, 2], [1, 2, 3, 4]),
      helper.make_tensor("r", TensorProto.INT64, [2], [100000, 100000])])

# Issue 3: shape arithmetic folded at import (x.view(x.size(0), -1)).
shape_in = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
save("view_flatten",
     [helper.make_node("Shape", ["x"], ["s"]),
      helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
      helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"]),
      helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
      helper.make_node("Reshape", ["x", "shape"], ["y"])],
     [shape_in], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
     [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
      helper.make_tensor("zero1", TensorProto.INT64, [1], [0]),
      helper.make_tensor("minus1", TensorProto.INT64, [1], [-1])])

# Run-time shape operands (docs/RuntimeInputs.md): Reshape's shape is a graph
# input; the declared output shape implies [4, 3, 2] and is checked at run
# time. Input files: one shape giving [4, 3, 2], one that does not.
save("runtime_reshape",
     [helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
      helper.make_tensor_value_info("s", TensorProto.INT64, [3])],
     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3, 2])])
for fname, tensor in [
        ("runtime_x", helper.make_tensor("x", TensorProto.FLOAT, [2, 3, 4],
                                         [float(i) for i in range(24)])),
        ("runtime_s_good", helper.make_tensor("s", TensorProto.INT64, [3],
                                              [4, -1, 2])),
        ("runtime_s_bad", helper.make_tensor("s", TensorProto.INT64, [3],
                                             [2, 12, 1]))]:
    with open(os.path.join(out, fname + ".pb"), "wb") as f:
        f.write(tensor.SerializeToString())
