#!/usr/bin/env python3
"""Writes the small generated models of the bundle test, with random inputs
as .npy (for model-runner) and raw little-endian .bin (for the C driver),
into the directory argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(6)


def init(name, shape):
    return numpy_helper.from_array(
        rng.standard_normal(shape).astype(np.float32) * 0.5, name)


def save(name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    for i, vi in enumerate(inputs):
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        x = rng.standard_normal(shape).astype(np.float32)
        np.save(os.path.join(out, "%s.in%d.npy" % (name, i)), x)
        x.tofile(os.path.join(out, "%s.in%d.bin" % (name, i)))


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# An MLP with two inputs (names that are not C identifiers): Gemm, MatMul,
# Relu, Sigmoid, Softmax and elementwise chains (fused on the CPU).
save("mlp",
     [helper.make_node("Gemm", ["in:0", "w1", "b1"], ["h1"], transB=1),
      helper.make_node("Relu", ["h1"], ["r1"]),
      helper.make_node("MatMul", ["r1", "w2"], ["h2"]),
      helper.make_node("Mul", ["h2", "2nd"], ["m"]),
      helper.make_node("Sigmoid", ["m"], ["s"]),
      helper.make_node("Sub", ["s", "h2"], ["d"]),
      helper.make_node("Softmax", ["d"], ["prob-out"], axis=1)],
     [vi("in:0", [3, 20]), vi("2nd", [3, 24])], [vi("prob-out", [3, 24])],
     [init("w1", [40, 20]), init("b1", [40]), init("w2", [40, 24])])

# A classifier head: its weight is transposed and packed at compile time,
# and only the packed copy ships (bundle_test.sh checks the weights size).
save("gemv",
     [helper.make_node("Gemm", ["feat", "fcw", "fcb"], ["logits"], transB=1)],
     [vi("feat", [1, 256])], [vi("logits", [1, 1000])],
     [init("fcw", [1000, 256]), init("fcb", [1000])])

# A convnet: plain, strided, grouped, depthwise and 1x1 convolutions, pools,
# concat, transpose, and two outputs.
save("convnet",
     [helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1]),
      helper.make_node("Relu", ["c1"], ["r1"]),
      helper.make_node("Conv", ["r1", "c2w", "c2b"], ["c2"], strides=[2, 2],
                       pads=[1, 0, 1, 0], group=2),
      helper.make_node("Conv", ["c2", "dww", "dwb"], ["dw"], pads=[1, 1, 1, 1],
                       group=12),
      helper.make_node("Clip", ["dw", "lo", "hi"], ["cl"]),
      helper.make_node("Conv", ["cl", "pww", "pwb"], ["pw"]),
      helper.make_node("MaxPool", ["pw"], ["mp"], kernel_shape=[2, 2],
                       strides=[2, 2], pads=[0, 0, 0, 1]),
      helper.make_node("AveragePool", ["pw"], ["ap"], kernel_shape=[3, 3],
                       strides=[2, 2], pads=[1, 1, 1, 1]),
      helper.make_node("Concat", ["mp", "ap"], ["cat"], axis=1),
      helper.make_node("Tanh", ["cat"], ["th"]),
      helper.make_node("Transpose", ["th"], ["y0"], perm=[0, 2, 3, 1]),
      helper.make_node("GlobalAveragePool", ["pw"], ["y1"])],
     [vi("x", [2, 3, 11, 10])], [vi("y0", [2, 3, 3, 32]), vi("y1", [2, 16, 1, 1])],
     [init("c1w", [12, 3, 3, 3]), init("c1b", [12]), init("c2w", [12, 6, 3, 2]),
      init("c2b", [12]), init("dww", [12, 1, 3, 3]), init("dwb", [12]),
      numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
      numpy_helper.from_array(np.array(0.7, np.float32), "hi"),
      init("pww", [16, 12, 1, 1]), init("pwb", [16])])

# Many small kernels (the threaded entry's barriers): six SE blocks as in
# efficientnet, each a 1x1 conv, SiLU, depthwise conv, global average pool,
# two small FCs (1x1 convs), a broadcast Mul and a residual Add.
C, S = 16, 12
nodes, inits, x = [], [], "x"
for b in range(6):
    p = "b%d_" % b
    nodes += [
        helper.make_node("Conv", [x, p + "ew", p + "eb"], [p + "e"]),
        helper.make_node("Sigmoid", [p + "e"], [p + "es"]),
        helper.make_node("Mul", [p + "e", p + "es"], [p + "silu"]),
        helper.make_node("Conv", [p + "silu", p + "dw", p + "db"], [p + "d"],
                         pads=[1, 1, 1, 1], group=C),
        helper.make_node("GlobalAveragePool", [p + "d"], [p + "g"]),
        helper.make_node("Conv", [p + "g", p + "f1", p + "f1b"], [p + "h"]),
        helper.make_node("Relu", [p + "h"], [p + "hr"]),
        helper.make_node("Conv", [p + "hr", p + "f2", p + "f2b"], [p + "s"]),
        helper.make_node("Sigmoid", [p + "s"], [p + "ss"]),
        helper.make_node("Mul", [p + "d", p + "ss"], [p + "m"]),
        helper.make_node("Add", [p + "m", x], [p + "y"])]
    inits += [init(p + "ew", [C, C, 1, 1]), init(p + "eb", [C]),
              init(p + "dw", [C, 1, 3, 3]), init(p + "db", [C]),
              init(p + "f1", [4, C, 1, 1]), init(p + "f1b", [4]),
              init(p + "f2", [C, 4, 1, 1]), init(p + "f2b", [C])]
    x = p + "y"
nodes.append(helper.make_node("Identity", [x], ["y"]))
save("seblocks", nodes, [vi("x", [1, C, S, S])], [vi("y", [1, C, S, S])],
     inits)

# A pointwise convolution read in place, whose input fills the activation
# region (2688 bytes, no alignment slack): 28 pixels end in a 12-pixel
# tile, two vectors of 8, and those of its last row must not run past the
# tensor (exact_regions_test.sh maps the region against a guard page).
save("pwtail",
     [helper.make_node("Relu", ["x"], ["t"]),
      helper.make_node("Conv", ["t", "pw", "pb"], ["y"])],
     [vi("x", [1, 24, 4, 7])], [vi("y", [1, 10, 4, 7])],
     [init("pw", [10, 24, 1, 1]), init("pb", [10])])
