#!/usr/bin/env python3
"""Writes the graph fuzzer's seed models (tests/fuzz/model-seeds/*.onnx).

Small, valid models with the structures of the zoo and transformer sets --
convolution stacks, a fire module, residual and depthwise blocks, a channel
shuffle, squeeze-excitation, attention, a GELU MLP, layer normalization,
shape arithmetic, QDQ, recurrent cells -- at sizes that the Interpreter runs
in milliseconds under ASan, so that ember-fuzz-model (scripts/fuzz.sh model)
mutates graphs like the ones users compile. Deterministic: the same files
on every run.

Usage: make_model_seeds.py OUT_DIR   (run with Debian's python3, which has
onnx and numpy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(0)
F = TensorProto.FLOAT


def w(name, *shape, dtype=np.float32):
    return numpy_helper.from_array(
        RNG.uniform(-0.5, 0.5, shape).astype(dtype), name)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(name, nodes, inputs, outputs, inits, opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def n(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0], **attrs)


def conv_stack():
    return model("conv_stack", [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["p1"], ["g"]),
        n("Flatten", ["g"], ["f"]),
        n("Gemm", ["f", "w2", "b2"], ["y0"], transB=1),
        n("Softmax", ["y0"], ["y"], axis=1),
    ], [vi("x", [1, 3, 8, 8])], [vi("y", [1, 2])],
        [w("w1", 4, 3, 3, 3), w("b1", 4), w("w2", 2, 4), w("b2", 2)])


def fire():
    return model("fire", [
        n("Conv", ["x", "ws"], ["s"]),
        n("Relu", ["s"], ["sr"]),
        n("Conv", ["sr", "we1"], ["e1"]),
        n("Conv", ["sr", "we3"], ["e3"], pads=[1, 1, 1, 1]),
        n("Concat", ["e1", "e3"], ["cat"], axis=1),
        n("Relu", ["cat"], ["y"]),
    ], [vi("x", [1, 8, 6, 6])], [vi("y", [1, 8, 6, 6])],
        [w("ws", 2, 8, 1, 1), w("we1", 4, 2, 1, 1), w("we3", 4, 2, 3, 3)])


def residual():
    c = 4
    return model("residual", [
        n("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c1", "s", "b", "m", "v"], ["bn"]),
        n("Relu", ["bn"], ["r"]),
        n("Conv", ["r", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[1, 1]),
        n("Add", ["c2", "x"], ["a"]),
        n("Relu", ["a"], ["y"]),
    ], [vi("x", [1, c, 5, 5])], [vi("y", [1, c, 5, 5])],
        [w("w1", c, c, 3, 3), w("w2", c, c, 3, 3), w("s", c), w("b", c),
         w("m", c), numpy_helper.from_array(np.ones(c, np.float32), "v")])


def depthwise():
    return model("depthwise", [
        n("Conv", ["x", "wd"], ["d"], group=6, pads=[1, 1, 1, 1],
          strides=[2, 2]),
        n("Clip", ["d", "lo", "hi"], ["r6"]),
        n("Conv", ["r6", "wp"], ["y"]),
    ], [vi("x", [1, 6, 7, 7])], [vi("y", [1, 3, 4, 4])],
        [w("wd", 6, 1, 3, 3), w("wp", 3, 6, 1, 1),
         numpy_helper.from_array(np.array(0, np.float32), "lo"),
         numpy_helper.from_array(np.array(6, np.float32), "hi")])


def shuffle():
    return model("shuffle", [
        n("Split", ["x", "sp"], ["a", "b"], axis=1),
        n("Relu", ["b"], ["br"]),
        n("Concat", ["a", "br"], ["c"], axis=1),
        n("Reshape", ["c", "s1"], ["r1"]),
        n("Transpose", ["r1"], ["t"], perm=[0, 2, 1, 3, 4]),
        n("Reshape", ["t", "s2"], ["y"]),
    ], [vi("x", [1, 4, 3, 3])], [vi("y", [1, 4, 3, 3])],
        [i64("sp", [2, 2]), i64("s1", [1, 2, 2, 3, 3]),
         i64("s2", [1, 4, 3, 3])])


def squeeze_excite():
    return model("squeeze_excite", [
        n("GlobalAveragePool", ["x"], ["g"]),
        n("Conv", ["g", "w1", "b1"], ["c1"]),
        n("Relu", ["c1"], ["r"]),
        n("Conv", ["r", "w2", "b2"], ["c2"]),
        n("Sigmoid", ["c2"], ["s"]),
        n("Mul", ["x", "s"], ["y"]),
    ], [vi("x", [1, 4, 3, 3])], [vi("y", [1, 4, 3, 3])],
        [w("w1", 2, 4, 1, 1), w("b1", 2), w("w2", 4, 2, 1, 1), w("b2", 4)])


def attention():
    d, h, s = 8, 2, 4
    return model("attention", [
        n("MatMul", ["x", "wq"], ["q"]),
        n("MatMul", ["x", "wk"], ["k"]),
        n("MatMul", ["x", "wv"], ["v"]),
        n("Reshape", ["q", "hs"], ["qh"]),
        n("Reshape", ["k", "hs"], ["kh"]),
        n("Reshape", ["v", "hs"], ["vh"]),
        n("Transpose", ["qh"], ["qt"], perm=[0, 2, 1, 3]),
        n("Transpose", ["kh"], ["kt"], perm=[0, 2, 3, 1]),
        n("Transpose", ["vh"], ["vt"], perm=[0, 2, 1, 3]),
        n("MatMul", ["qt", "kt"], ["sc"]),
        n("Div", ["sc", "scale"], ["scd"]),
        n("Softmax", ["scd"], ["p"], axis=-1),
        n("MatMul", ["p", "vt"], ["o"]),
        n("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ot", "ds"], ["or"]),
        n("Add", ["or", "x"], ["res"]),
        n("LayerNormalization", ["res", "g", "be"], ["y"], axis=-1),
    ], [vi("x", [1, s, d])], [vi("y", [1, s, d])],
        [w("wq", d, d), w("wk", d, d), w("wv", d, d),
         i64("hs", [1, s, h, d // h]), i64("ds", [1, s, d]),
         numpy_helper.from_array(np.array(2, np.float32), "scale"),
         w("g", d), w("be", d)], opset=17)


def gelu_mlp():
    return model("gelu_mlp", [
        n("MatMul", ["x", "w1"], ["m1"]),
        n("Add", ["m1", "b1"], ["a1"]),
        n("Div", ["a1", "sqrt2"], ["dv"]),
        n("Erf", ["dv"], ["e"]),
        n("Add", ["e", "one"], ["e1"]),
        n("Mul", ["a1", "e1"], ["m"]),
        n("Mul", ["m", "half"], ["gl"]),
        n("MatMul", ["gl", "w2"], ["y"]),
    ], [vi("x", [2, 4])], [vi("y", [2, 4])],
        [w("w1", 4, 8), w("b1", 8), w("w2", 8, 4),
         numpy_helper.from_array(np.array(1.4142135, np.float32), "sqrt2"),
         numpy_helper.from_array(np.array(1, np.float32), "one"),
         numpy_helper.from_array(np.array(0.5, np.float32), "half")])


def layernorm_decomposed():
    return model("layernorm_decomposed", [
        n("ReduceMean", ["x"], ["mu"], axes=[-1]),
        n("Sub", ["x", "mu"], ["d"]),
        n("Pow", ["d", "two"], ["sq"]),
        n("ReduceMean", ["sq"], ["var"], axes=[-1]),
        n("Add", ["var", "eps"], ["ve"]),
        n("Sqrt", ["ve"], ["sd"]),
        n("Div", ["d", "sd"], ["nrm"]),
        n("Mul", ["nrm", "g"], ["sc"]),
        n("Add", ["sc", "b"], ["y"]),
    ], [vi("x", [2, 3, 6])], [vi("y", [2, 3, 6])],
        [numpy_helper.from_array(np.array(2, np.float32), "two"),
         numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
         w("g", 6), w("b", 6)])


def shape_arith():
    return model("shape_arith", [
        n("Shape", ["x"], ["s"]),
        n("Gather", ["s", "i0"], ["d0"], axis=0),
        n("Unsqueeze", ["d0", "ax"], ["d0u"]),
        n("Concat", ["d0u", "m1"], ["ns"], axis=0),
        n("Reshape", ["x", "ns"], ["r"]),
        n("Slice", ["r", "st", "en", "ax1"], ["sl"]),
        n("Gather", ["sl", "idx"], ["y"], axis=1),
    ], [vi("x", [2, 3, 4])], [vi("y", [2, 3])],
        [i64("i0", 0), i64("ax", [0]), i64("m1", [-1]), i64("st", [1]),
         i64("en", [10]), i64("ax1", [1]), i64("idx", [0, 2, 4])])


def qdq_conv():
    u8 = TensorProto.UINT8
    sc = numpy_helper.from_array(np.array(0.05, np.float32), "sc")
    zp = numpy_helper.from_array(np.array(128, np.uint8), "zp")
    return model("qdq_conv", [
        n("QuantizeLinear", ["x", "sc", "zp"], ["xq"]),
        n("DequantizeLinear", ["xq", "sc", "zp"], ["xd"]),
        n("QuantizeLinear", ["w", "sc", "zp"], ["wq"]),
        n("DequantizeLinear", ["wq", "sc", "zp"], ["wd"]),
        n("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1]),
        n("QuantizeLinear", ["c", "sc", "zp"], ["cq"]),
        n("DequantizeLinear", ["cq", "sc", "zp"], ["y"]),
    ], [vi("x", [1, 2, 4, 4])], [vi("y", [1, 3, 4, 4])],
        [w("w", 3, 2, 3, 3), sc, zp])


def recurrent():
    hid, inp = 3, 4
    return model("recurrent", [
        n("LSTM", ["x", "wl", "rl", "bl"], ["yl", "hl"], hidden_size=hid),
        n("Squeeze", ["yl", "ax1"], ["ys"]),
        n("GRU", ["ys", "wg", "rg"], ["yg", "y"], hidden_size=hid,
          linear_before_reset=1),
    ], [vi("x", [5, 1, inp])], [vi("y", [1, 1, hid])],
        [w("wl", 1, 4 * hid, inp), w("rl", 1, 4 * hid, hid),
         w("bl", 1, 8 * hid), w("wg", 1, 3 * hid, hid),
         w("rg", 1, 3 * hid, hid), i64("ax1", [1])])


def upsample():
    return model("upsample", [
        n("ConvTranspose", ["x", "wt"], ["ct"], strides=[2, 2],
          pads=[1, 1, 1, 1], output_padding=[1, 1]),
        n("Resize", ["ct", "", "scales"], ["rs"], mode="nearest"),
        n("Pad", ["rs", "pads"], ["pd"], mode="reflect"),
        n("AveragePool", ["pd"], ["y"], kernel_shape=[3, 3]),
    ], [vi("x", [1, 2, 3, 3])], [vi("y", [1, 2, 12, 12])],
        [w("wt", 2, 2, 3, 3),
         numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
         i64("pads", [0, 0, 1, 1, 0, 0, 1, 1])])


def select_misc():
    return model("select_misc", [
        n("Greater", ["x", "zero"], ["gt"]),
        n("Where", ["gt", "x", "zero"], ["wh"]),
        n("Cast", ["wh"], ["ci"], to=TensorProto.INT64),
        n("Cast", ["ci"], ["cf"], to=F),
        n("Expand", ["cf", "es"], ["ex"]),
        n("Tile", ["ex", "reps"], ["tl"]),
        n("TopK", ["tl", "k"], ["tv", "ti"], axis=-1),
        n("CumSum", ["tv", "cax"], ["cs"]),
        n("ReduceMax", ["cs"], ["y"], axes=[1], keepdims=0),
        n("ArgMax", ["tl"], ["am"], axis=1),
    ], [vi("x", [2, 1, 3])],
        [vi("y", [2, 2]), vi("am", [2, 1, 6], TensorProto.INT64)],
        [numpy_helper.from_array(np.array(0, np.float32), "zero"),
         i64("es", [2, 2, 3]), i64("reps", [1, 1, 2]), i64("k", [2]),
         numpy_helper.from_array(np.array(0, np.int32), "cax")])


def einsum_gemm():
    return model("einsum_gemm", [
        n("Einsum", ["x", "w"], ["e"], equation="bij,jk->bik"),
        n("Transpose", ["e"], ["t"], perm=[0, 2, 1]),
        n("ReduceSum", ["t", "ax"], ["rs"], keepdims=1),
        n("Mul", ["rs", "t"], ["y"]),
    ], [vi("x", [2, 3, 4])], [vi("y", [2, 5, 3])],
        [w("w", 4, 5), i64("ax", [2])])


SEEDS = [conv_stack, fire, residual, depthwise, shuffle, squeeze_excite,
         attention, gelu_mlp, layernorm_decomposed, shape_arith, qdq_conv,
         recurrent, upsample, select_misc, einsum_gemm]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for make in SEEDS:
        m = make()
        onnx.save(m, os.path.join(out, m.graph.name + ".onnx"))


if __name__ == "__main__":
    main()
