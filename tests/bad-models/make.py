#!/usr/bin/env python3
"""Writes the catalog of malformed ONNX models into the directory argv[1].

Each case is OUT/models/NAME.onnx; OUT/cases.tsv lists "NAME<TAB>SUBSTRING",
the text that the tools' one error line must contain. OUT/inputs/ and
OUT/inputs.tsv do the same for malformed input tensors (.npy, .pb) given to
model-runner with the digits model. Models are built
with onnx.helper and then broken by hand, so that the checker in onnx does
not stop us from writing them. Run with /usr/bin/python3 (onnx 1.12).
"""
import base64
import os
import random
import sys

import onnx
from onnx import TensorProto, helper

OUT = sys.argv[1]
MODELS = os.path.join(OUT, "models")
os.makedirs(MODELS, exist_ok=True)
SRC = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(SRC, "..", "..", "models", "digits", "digits.onnx")
F = TensorProto.FLOAT
cases = []


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opsets=(("", 13),), name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    ops = [helper.make_opsetid(d, v) for d, v in opsets]
    return helper.make_model(g, opset_imports=ops)


def case(name, expect, m=None, raw=None, run_only=False):
    """run_only: the problem shows when the model runs (memory it needs),
    so only tools that run models must reject it; a compiler may build it."""
    path = os.path.join(MODELS, name + ".onnx")
    with open(path, "wb") as f:
        f.write(raw if raw is not None else m.SerializeToString())
    cases.append((name, expect + ("\trun" if run_only else "")))


def unary(op, x_shape, y_shape, **attrs):
    n = helper.make_node(op, ["x"], ["y"], name="n1", **attrs)
    return model([n], [vi("x", x_shape)], [vi("y", y_shape)])


def conv(x_shape, w_shape, **attrs):
    w = helper.make_tensor("w", F, w_shape, [0.5] * _count(w_shape))
    n = helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", **attrs)
    return model([n], [vi("x", x_shape)], [vi("y", None)], [w])


def _count(shape):
    c = 1
    for d in shape:
        c *= d
    return c


X = vi("x", [1, 4])
Y = vi("y", [1, 4])
relu = helper.make_node("Relu", ["x"], ["y"], name="relu1")

# --- Bytes that are not a model -------------------------------------------
digits = open(DIGITS, "rb").read()
case("truncated", "not a valid ONNX model", raw=digits[: len(digits) // 2])
case("random-bytes", "not a valid ONNX model",
     raw=random.Random(9).randbytes(4096))
case("empty-file", "the model has no graph", raw=b"")

# --- Graph structure -------------------------------------------------------
case("empty-graph", "the graph is empty", model([], [], []))
case("no-outputs", "the graph has no outputs", model([relu], [X], []))
case("cycle", "is on a node cycle", model(
    [helper.make_node("Add", ["x", "b"], ["a"], name="add1"),
     helper.make_node("Relu", ["a"], ["b"], name="relu1"),
     helper.make_node("Relu", ["a"], ["y"], name="relu2")], [X], [Y]))
case("self-loop", "node 'self' (Add): is on a node cycle", model(
    [helper.make_node("Add", ["x", "y"], ["y"], name="self")], [X], [Y]))
case("unsorted-nodes", "is produced by a later node", model(
    [helper.make_node("Relu", ["a"], ["y"], name="second"),
     helper.make_node("Relu", ["x"], ["a"], name="first")], [X], [Y]))
case("unproduced-input", "node 'relu1' (Relu): input 'ghost' is not produced",
     model([helper.make_node("Relu", ["ghost"], ["y"], name="relu1")],
           [X], [Y]))
case("unproduced-output", "graph output 'zz' is not produced",
     model([relu], [X], [Y, vi("zz", [1])]))
case("duplicate-node-output", "output 'y' is already produced by node 'r1'",
     model([helper.make_node("Relu", ["x"], ["y"], name="r1"),
            helper.make_node("Sigmoid", ["x"], ["y"], name="r2")], [X], [Y]))
case("output-shadows-input", "already produced by a graph input",
     model([helper.make_node("Relu", ["x"], ["x"], name="r1")], [X], [X]))
case("duplicate-graph-output", "graph output 'y' is listed twice",
     model([relu], [X], [Y, Y]))
case("duplicate-graph-input", "graph input 'x' is declared twice",
     model([relu], [X, X], [Y]))
w4 = helper.make_tensor("w", F, [1, 4], [1.0] * 4)
case("duplicate-initializer", "initializer 'w' is defined twice",
     model([helper.make_node("Add", ["x", "w"], ["y"], name="add1")],
           [X], [Y], [w4, w4]))
case("graph-output-declared-int", "graph output 'y' is declared i64",
     model([relu], [X], [vi("y", [1, 4], TensorProto.INT64)]))

# --- Opsets and domains ----------------------------------------------------
case("opset-zero", "opset version 0", model([relu], [X], [Y],
                                            opsets=(("", 0),)))

# --- Op attributes: missing, wrong type, out of range -----------------------
case("concat-missing-axis", "node 'n1' (Concat): invalid per the ONNX schema "
     "(opset 13): Required attribute 'axis' is missing",
     unary("Concat", [1, 4], [1, 4]))
case("conv-strides-wrong-type", "node 'conv1' (Conv): invalid per the ONNX "
     "schema (opset 13): Mismatched attribute type in 'conv1 : strides'",
     conv([1, 1, 5, 5], [1, 1, 3, 3], strides=[1.0, 1.0]))
case("conv-negative-pads", "node 'conv1' (Conv): pads must not be negative",
     conv([1, 1, 5, 5], [1, 1, 3, 3], pads=[-1, 0, 0, 0]))
case("conv-zero-strides", "strides and dilations must be positive",
     conv([1, 1, 5, 5], [1, 1, 3, 3], strides=[0, 1]))
case("conv-kernel-larger-than-input", "node 'conv1' (Conv)",
     conv([1, 1, 3, 3], [1, 1, 5, 5]))
case("maxpool-kernel-larger-than-input", "node 'n1' (MaxPool)",
     unary("MaxPool", [1, 1, 2, 2], None, kernel_shape=[4, 4]))
case("conv-bad-auto-pad", "unknown auto_pad 'SIDEWAYS'",
     conv([1, 1, 5, 5], [1, 1, 3, 3], auto_pad="SIDEWAYS"))
case("softmax-axis-out-of-range", "axis 5 is out of range for rank 2",
     unary("Softmax", [1, 4], [1, 4], axis=5))
case("hardmax-scalar", "input must have rank >= 1",
     unary("Hardmax", [], []))
case("constant-without-value", "has no supported value attribute",
     model([helper.make_node("Constant", [], ["y"], name="c1")], [], [Y]))

# --- Rank and shape mismatches --------------------------------------------
case("conv-rank-3-input", "convolutions are supported",
     conv([1, 1, 5], [1, 1, 3, 3]))
case("conv-channel-mismatch", "node 'conv1' (Conv)",
     conv([1, 2, 5, 5], [1, 3, 3, 3]))
case("add-not-broadcastable", "are not broadcastable", model(
    [helper.make_node("Add", ["a", "b"], ["y"], name="add1")],
    [vi("a", [1, 3]), vi("b", [1, 4])], [Y]))
case("matmul-inner-mismatch", "node 'mm' (MatMul)", model(
    [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
    [vi("a", [2, 3]), vi("b", [4, 5])], [vi("y", None)]))
case("gemm-rank-3", "A and B must be 2-D", model(
    [helper.make_node("Gemm", ["a", "b"], ["y"], name="gemm1")],
    [vi("a", [1, 2, 3]), vi("b", [3, 4])], [vi("y", None)]))
shape = helper.make_tensor("shape", TensorProto.INT64, [2], [3, 3])
case("reshape-wrong-size", "node 'rs' (Reshape)", model(
    [helper.make_node("Reshape", ["x", "shape"], ["y"], name="rs")],
    [X], [vi("y", None)], [shape]))
case("reshape-shape-not-constant", "must be a constant", model(
    [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
    [X, vi("s", [2], TensorProto.INT64)], [vi("y", None)]))

# --- Constant indices out of range (ONNX allows [-n, n-1]) ----------------
def indexing(op, idx_shape, idx, extra=(), inits=(), x_shape=(4,), **attrs):
    i = helper.make_tensor("i", TensorProto.INT64, idx_shape, idx)
    n = helper.make_node(op, ["x", "i"] + list(extra), ["y"], name="ix1",
                         **attrs)
    return model([n], [vi("x", list(x_shape))], [vi("y", None)],
                 [i] + list(inits))


U = helper.make_tensor("u", F, [1], [5.0])
case("gather-index-out-of-range",
     "node 'ix1' (Gather): constant index 100 is out of range for axis 0 "
     "of size 4 (valid: -4 to 3)", indexing("Gather", [1], [100]))
case("gather-negative-index-out-of-range", "constant index -5 is out of range",
     indexing("Gather", [2], [-4, -5]))
case("gather-elements-index-out-of-range",
     "node 'ix1' (GatherElements): constant index 2 is out of range for "
     "axis 1 of size 2", indexing("GatherElements", [2, 1], [0, 2],
                                  x_shape=(2, 2), axis=1))
case("gather-nd-index-out-of-range",
     "node 'ix1' (GatherND): constant index 3 is out of range for dim 1 of "
     "size 3", indexing("GatherND", [1, 2], [1, 3], x_shape=(2, 3)))
case("scatter-elements-index-out-of-range",
     "node 'ix1' (ScatterElements): constant index 4 is out of range",
     indexing("ScatterElements", [1], [4], ["u"], [U]))
case("scatter-nd-index-out-of-range",
     "node 'ix1' (ScatterND): constant index -9 is out of range for dim 0",
     indexing("ScatterND", [1, 1], [-9], ["u"], [U]))

# --- Dimensions and element counts ----------------------------------------
case("negative-dim", "graph input 'x': negative dimension -3",
     model([relu], [vi("x", [1, -3])], [Y]))
# Empty data flows through Relu (tests/onnx/handmade/empty); a reduction
# of it would give a non-empty result, which Ember does not compute.
case("zero-dim", "node 'sum1' (ReduceSum): input 'x' is empty float<0 x 4>",
     model([helper.make_node("ReduceSum", ["x"], ["y"], name="sum1",
                             keepdims=0)], [vi("x", [0, 4])], [Y]))
case("dims-overflow-2-63", "more than 2147483648 elements",
     model([relu], [vi("x", [2**31, 2**31, 2**31])], [Y]))
case("input-1e12-elements", "graph input 'x': declared shape has more than",
     model([relu], [vi("x", [1000000, 1000000])], [Y]))
big = TensorProto(name="w", data_type=F, dims=[1000000, 1000000])
case("initializer-1e12-elements", "tensor 'w': shape [1000000, 1000000] has "
     "more than", model([helper.make_node("Add", ["x", "w"], ["y"],
                                           name="add1")], [X], [Y], [big]))
case("rank-9", "rank 9 exceeds the maximum 8",
     model([relu], [vi("x", [1] * 9)], [Y]))
case("symbolic-dim-without-value", "has symbolic dimension 'N'",
     model([relu], [vi("x", ["N", 4])], [Y]))
case("broadcast-result-too-large", "would compute", model(
    [helper.make_node("Add", ["a", "b"], ["y"], name="add1")],
    [vi("a", [65536, 1]), vi("b", [1, 65536])], [vi("y", None)]))
case("gemm-zero-c-too-large", "node 'gemm1' (Gemm)", model(
    [helper.make_node("Gemm", ["a", "b"], ["y"], name="gemm1")],
    [vi("a", [65536, 1]), vi("b", [1, 65536])], [vi("y", None)]))

# 17 tensors of 2^31 floats (8 GiB each): within every per-tensor limit, but
# the Interpreter needs 2 x 136 GiB; refused before allocating (this test
# assumes a machine with less memory than that).
big_in = vi("x", [2**31])
case("needs-more-memory-than-the-machine", "more than this machine's", model(
    [helper.make_node("Relu", ["x"], ["y%d" % i], name="r%d" % i)
     for i in range(16)], [big_in], [vi("y%d" % i, None) for i in range(16)]),
     run_only=True)

# --- Initializer payloads --------------------------------------------------
short = TensorProto(name="w", data_type=F, dims=[4, 4], raw_data=b"\0" * 8)
case("short-raw-data", "raw_data has 8 bytes, shape [4, 4] needs 64",
     model([helper.make_node("Add", ["x", "w"], ["y"], name="add1")],
           [X], [Y], [short]))
few = TensorProto(name="w", data_type=F, dims=[1, 4], float_data=[1, 2, 3])
case("too-few-float-data", "has 3 values, shape [1, 4] needs 4",
     model([helper.make_node("Add", ["x", "w"], ["y"], name="add1")],
           [X], [Y], [few]))


# --- External data ---------------------------------------------------------
def external(name, expect, location, offset=None, length=None, dims=(1, 4)):
    t = TensorProto(name="w", data_type=F, dims=list(dims))
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset),
                 ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    case(name, expect, model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add1")],
        [X], [Y], [t]))


with open(os.path.join(OUT, "secret.bin"), "wb") as f:
    f.write(b"\0" * 64)  # Exists, but outside the models' directory.
with open(os.path.join(MODELS, "weights.bin"), "wb") as f:
    f.write(b"\0" * 16)  # Exactly one float<1 x 4>.
link = os.path.join(MODELS, "link.bin")
if os.path.lexists(link):
    os.remove(link)
os.symlink(os.path.join("..", "secret.bin"), link)
external("external-dotdot", "outside the model's directory ('..')",
         "../secret.bin")
external("external-absolute", "outside the model's directory (absolute",
         os.path.join(OUT, "secret.bin"))
external("external-symlink-escape", "outside the model's directory (through "
         "a link)", "link.bin")
external("external-missing-file", "external data file 'nothere.bin' is "
         "missing", "nothere.bin")
external("external-past-end", "is past the end of 'weights.bin'",
         "weights.bin", offset=8)
external("external-length-mismatch", "length 12 does not match shape",
         "weights.bin", length=12)
external("external-nul-byte", "location contains a NUL byte",
         "weights.bin\0/../../secret.bin")
external("external-bad-offset", "offset '-4' is not a non-negative integer",
         "weights.bin", offset=-4)


# --- Nesting ---------------------------------------------------------------
def nested(depth):
    """An If whose then-branch holds an If ... depth levels deep."""
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])],
                             "leaf", [], [Y])
    g = leaf
    for i in range(depth):
        node = helper.make_node("If", ["cond"], ["y"], name="if%d" % i,
                                then_branch=g, else_branch=leaf)
        g = helper.make_graph([node], "level%d" % i, [], [Y])
    m = model(list(g.node), [vi("cond", [], TensorProto.BOOL), X], [Y])
    return m


case("nested-subgraphs-10", "subgraphs are nested deeper than 8 levels",
     nested(10))
case("nested-subgraphs-40", "not a valid ONNX model", nested(40))

# --- Element types ---------------------------------------------------------
case("float64-input", "graph output 'y' is declared float but computed as double",
     model([relu], [vi("x", [1, 4], TensorProto.DOUBLE)], [Y]))
case("string-input", "graph input 'x': unsupported element type STRING",
     model([relu], [vi("x", [1, 4], TensorProto.STRING)], [Y]))
seq = helper.make_value_info(
    "x", helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(F, [1, 4])))
case("sequence-input", "graph value 'x' is not a tensor",
     model([relu], [seq], [Y]))

# --- Nodes against ONNX's operator schemas ---------------------------------
# Found by the importer fuzzer: a QuantizeLinear whose only input is
# y_zero_point (x and y_scale missing) crashed both tools.
FUZZ_QUANTIZE = base64.b64decode(
    "CAcSDGJhY2tkbmQtdGVzdDqRAQotGgF4Ggd5X3NjYWxlCgx5X3plcm9fcG9pbnQSAXkiDlF1"
    "YW50aXplTGluZWFyEhN0ZXN2X3F1YW50aXplbGluZWFyWg8KAXgSCgoICAESBAoCCAZaEQoH"
    "eV9zY2FsZRIGCgQIARIAWhYKDHlfemVyb19wb2ludBIGCgQIAhIAYg8KAXkSCgoICAISBAoC"
    "CAZCBAoAEA0=")
case("fuzz-quantize-only-zero-point",
     "(QuantizeLinear): missing required input 1 'y_scale'", raw=FUZZ_QUANTIZE)
U8 = TensorProto.UINT8
case("quantize-only-x", "node 'q' (QuantizeLinear): missing required input 1",
     model([helper.make_node("QuantizeLinear", ["x"], ["y"], name="q")],
           [X], [vi("y", [1, 4], U8)]))
case("dequantize-only-float-x",
     "node 'dq' (DequantizeLinear): missing required input 1 'x_scale'",
     model([helper.make_node("DequantizeLinear", ["x"], ["y"], name="dq")],
           [X], [Y]))
case("quantize-empty-scale", "node 'q' (QuantizeLinear): required input 1 "
     "'y_scale' is empty",
     model([helper.make_node("QuantizeLinear", ["x", ""], ["y"], name="q")],
           [X], [vi("y", [1, 4], U8)]))
case("relu-two-inputs", "node 'relu1' (Relu): invalid per the ONNX schema",
     model([helper.make_node("Relu", ["x", "x"], ["y"], name="relu1")],
           [X], [Y]))
case("add-mixed-types", "node 'add1' (Add): inputs 0 and 1 must have the "
     "same type", model(
         [helper.make_node("Add", ["x", "i"], ["y"], name="add1")],
         [X, vi("i", [1, 4], TensorProto.INT32)], [Y]))
case("relu-int8-input", "node 'relu1' (Relu): input 0 'x' has type "
     "tensor(int8)", model([relu], [vi("x", [1, 4], TensorProto.INT8)], [Y]))
case("softmax-axis-float", "node 'sm' (Softmax): invalid per the ONNX schema",
     model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1.5)],
           [X], [Y]))
case("relu-unknown-attribute", "node 'relu1' (Relu): invalid per the ONNX "
     "schema", model([helper.make_node("Relu", ["x"], ["y"], name="relu1",
                                       colour=3)], [X], [Y]))
# Opsets past libonnx's schemas get the checks that hold in every opset:
# required inputs and outputs. The model fuzzer's NonZero without outputs
# (tests/fuzz/regressions/nonzero-no-output.onnx) crashed both tools.
# An op at an opset before ONNX introduced it (fuzz finding 31: a Scan at
# opset 5 was imported with no schema to check it against).
case("op-before-its-opset", "node 'ln' (LayerNormalization): "
     "LayerNormalization does not exist at opset 13; ONNX introduced it at "
     "opset 17", model([helper.make_node("LayerNormalization", ["x", "g"],
                                         ["y"], name="ln")],
                       [X], [Y], inits=[helper.make_tensor("g", F, [4],
                                                           [1.0] * 4)]))
case("nonzero-no-output-new-opset",
     "node 'nz' (NonZero): missing required output 0 'Y'",
     model([helper.make_node("NonZero", ["x"], [], name="nz"), relu], [X], [Y],
           opsets=(("", 21),)))
case("topk-without-indices-new-opset",
     "node 'tk' (TopK): missing required output 1 'Indices'",
     model([helper.make_node("TopK", ["x", "k"], ["v"], name="tk"), relu],
           [X], [Y], inits=[helper.make_tensor("k", TensorProto.INT64, [1],
                                               [2])], opsets=(("", 21),)))
# Every output of an LSTM is optional; one with none is refused whatever
# the op, as a node of a custom domain would be.
case("lstm-no-outputs", "node 'lstm' (LSTM): has no outputs",
     model([helper.make_node("LSTM", ["s", "w", "r"], [], name="lstm",
                             hidden_size=2), relu],
           [X, vi("s", [1, 1, 4])], [Y],
           inits=[helper.make_tensor("w", F, [1, 8, 4], [0.0] * 32),
                  helper.make_tensor("r", F, [1, 8, 2], [0.0] * 16)]))


# --- Control flow that cannot become straight-line graph (ControlFlow.md) --
B1 = TensorProto.BOOL
if_then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then",
                            [], [vi("t", [1, 4])])
if_else = helper.make_graph(
    [helper.make_node("ReduceSum", ["x"], ["e"], keepdims=0)], "else", [],
    [vi("e", [])])
case("if-branch-types-differ", "node 'if1' (If): with a run-time condition "
     "both branches must give outputs of one type", model(
         [helper.make_node("If", ["c"], ["y"], name="if1",
                           then_branch=if_then, else_branch=if_else)],
         [vi("c", [], B1), X], [Y]))
loop_body = helper.make_graph(
    [helper.make_node("Identity", ["ci"], ["co"]),
     helper.make_node("Relu", ["yi"], ["yo"])], "body",
    [vi("i", [], TensorProto.INT64), vi("ci", [], B1), vi("yi", [1, 4])],
    [vi("co", [], B1), vi("yo", [1, 4])])
scan_body = helper.make_graph(
    [helper.make_node("Identity", ["ci"], ["co"]),
     helper.make_node("Relu", ["yi"], ["yo"]),
     helper.make_node("Identity", ["yo"], ["s"])], "body",
    [vi("i", [], TensorProto.INT64), vi("ci", [], B1), vi("yi", [1, 4])],
    [vi("co", [], B1), vi("yo", [1, 4]), vi("s", [1, 4])])
# A body declaring fewer inputs than iteration, condition and carried
# values (fuzz finding 32: both loop imports read the missing ones).
short_body = helper.make_graph(
    [helper.make_node("Identity", ["ci"], ["co"]),
     helper.make_node("Relu", ["x"], ["yo"])], "body",
    [vi("ci", [], B1)], [vi("co", [], B1), vi("yo", [1, 4])])
case("loop-body-too-few-inputs", "node 'loop2' (Loop): the body takes 1 "
     "inputs; a Loop with 1 carried value(s) gives it 3", model(
         [helper.make_node("Loop", ["m", "", "x"], ["y"], name="loop2",
                           body=short_body)],
         [vi("m", [], TensorProto.INT64), X], [Y]))
case("loop-scan-no-bound", "node 'loop1' (Loop): scan output 'ys' has no "
     "static bound", model(
         [helper.make_node("Loop", ["m", "", "x"], ["y", "ys"], name="loop1",
                           body=scan_body)],
         [vi("m", [], TensorProto.INT64), X], [Y, vi("ys", None)]))
# The same refusal for a loop nested in a kept loop (docs/ControlFlow.md
# "Nested loops"): the inner error names the inner node.
nest_body = helper.make_graph(
    [helper.make_node("Identity", ["ci"], ["co"]),
     helper.make_node("Loop", ["i", "", "yi"], ["yo", "ys2"], name="inner1",
                      body=scan_body)], "outer",
    [vi("i", [], TensorProto.INT64), vi("ci", [], B1), vi("yi", [1, 4])],
    [vi("co", [], B1), vi("yo", [1, 4])])
case("loop-nested-scan-no-bound", "node 'inner1' (Loop): scan output 'ys2' "
     "has no static bound", model(
         [helper.make_node("Loop", ["m", "", "x"], ["y"], name="loop1",
                           body=nest_body)],
         [vi("m", [], TensorProto.INT64), X], [Y]))
grow_body = helper.make_graph(
    [helper.make_node("Identity", ["ci"], ["co"]),
     helper.make_node("Concat", ["yi", "yi"], ["yo"], axis=0)], "body",
    [vi("i", [], TensorProto.INT64), vi("ci", [], B1), vi("yi", [1, 4])],
    [vi("co", [], B1), vi("yo", [2, 4])])
case("loop-carried-type-changes", "node 'loop1' (Loop): carried value 0 is "
     "float<1 x 4> on entry but the body gives float<2 x 4>", model(
         [helper.make_node("Loop", ["m", "", "x"], ["y"], name="loop1",
                           body=grow_body)],
         [vi("m", [], TensorProto.INT64), X], [vi("y", None)]))
case("loop-trip-count-limit", "a constant trip count of 100000000; the limit "
     "is 1048576", model(
    [helper.make_node("Loop", ["m", "", "x"], ["y"], name="loop1",
                      body=loop_body)], [X], [Y],
    [helper.make_tensor("m", TensorProto.INT64, [], [100000000])]))
# A Slice at [i, 2 i) in a loop body: ends - starts is not a constant (the
# affine rule of docs/RuntimeInputs.md does not apply), so its length is
# unknown at compile time: the importer's one-line refusal.
I64 = TensorProto.INT64
var_body = helper.make_graph(
    [helper.make_node("Identity", ["ci"], ["co"]),
     helper.make_node("Constant", [], ["tbl"], value=helper.make_tensor(
         "tbl", F, [8], [float(v) for v in range(8)])),
     helper.make_node("Constant", [], ["ax"], value=helper.make_tensor(
         "ax", I64, [1], [0])),
     helper.make_node("Unsqueeze", ["i", "ax"], ["st"]),
     helper.make_node("Add", ["st", "st"], ["en"]),
     helper.make_node("Slice", ["tbl", "st", "en"], ["w"], name="slice1"),
     helper.make_node("ReduceSum", ["w"], ["sw"], keepdims=1),
     helper.make_node("Add", ["yi", "sw"], ["yo"])], "body",
    [vi("i", [], I64), vi("ci", [], B1), vi("yi", [1, 4])],
    [vi("co", [], B1), vi("yo", [1, 4])])
case("loop-slice-variable-length", "node 'slice1' (Slice): input 'st' must "
     "be a constant", model(
         [helper.make_node("Loop", ["m", "", "x"], ["y"], name="loop1",
                           body=var_body)],
         [vi("m", [], I64), X], [Y]))
# Ops new past opset 17: attributes the importers refuse.
QKV = [vi(n, [1, 2, 3, 4]) for n in "qkv"]
case("attention-softmax-precision", "node 'att1' (Attention): "
     "softmax_precision 10 is not supported", model(
         [helper.make_node("Attention", ["q", "k", "v"], ["y"], name="att1",
                           softmax_precision=TensorProto.FLOAT16)],
         QKV, [vi("y", None)], opsets=(("", 23),)))
case("groupnorm-num-groups", "node 'gn1' (GroupNormalization): num_groups 4 "
     "does not divide the 6 channels", model(
         [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                           name="gn1", num_groups=4)],
         [vi("x", [1, 6, 3])], [vi("y", None)],
         [helper.make_tensor(n, F, [6], [1.0] * 6) for n in "sb"],
         opsets=(("", 21),)))
case("rotary-odd-dim", "node 'rot1' (RotaryEmbedding): rotary_embedding_dim "
     "3 must be even", model(
         [helper.make_node("RotaryEmbedding", ["x", "c", "s"], ["y"],
                           name="rot1", rotary_embedding_dim=3)],
         [vi("x", [1, 2, 3, 4])], [vi("y", None)],
         [helper.make_tensor(n, F, [1, 3, 1], [1.0] * 3) for n in "cs"],
         opsets=(("", 23),)))


def tfidf(**attrs):
    n = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tf1",
                         min_gram_length=1, max_gram_length=2,
                         max_skip_count=0, mode="TF", **attrs)
    return model([n], [vi("x", [2, 5], TensorProto.INT64)], [vi("y", None)],
                 opsets=(("", 9),))


case("tfidf-string-pool", "node 'tf1' (TfIdfVectorizer): string n-gram "
     "pools (pool_strings) are not supported",
     tfidf(ngram_counts=[0, 1], ngram_indexes=[0, 1],
           pool_strings=["a", "b", "c"]))
case("tfidf-ragged-pool", "node 'tf1' (TfIdfVectorizer): the pool's 2-grams "
     "hold 3 items, not a multiple of 2",
     tfidf(ngram_counts=[0, 1], ngram_indexes=[0, 1], pool_int64s=[1, 2, 3, 4]))

# --- Bad input tensors (for model-runner -input, with digits.onnx) ---------
INPUTS = os.path.join(OUT, "inputs")
os.makedirs(INPUTS, exist_ok=True)
input_cases = []


def npy(name, expect, header, data=b""):
    """A .npy file (format 1.0) with the given header dict text."""
    h = header.encode()
    raw = b"\x93NUMPY\x01\x00" + bytes([len(h) & 255, len(h) >> 8]) + h + data
    with open(os.path.join(INPUTS, name + ".npy"), "wb") as f:
        f.write(raw)
    input_cases.append((name + ".npy", expect))


def pb(name, expect, raw):
    with open(os.path.join(INPUTS, name + ".pb"), "wb") as f:
        f.write(raw)
    input_cases.append((name + ".pb", expect))


npy("npy-dim-overflows-int64", "does not fit in 64 bits",
    "{'descr': '<f4', 'fortran_order': False, "
    "'shape': (99999999999999999999999,), }")
npy("npy-1e12-elements", "has more than 2147483648 elements",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }")
npy("npy-float64", "dtype must be float32",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 64), }")
npy("npy-short-data", "data is shorter than the shape",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 64), }", b"\0" * 8)
npy("npy-huge-header", "header longer than 4096 bytes",
    "{'descr': '<f4', 'shape': (" + "1, " * 20000 + "), }")
with open(os.path.join(INPUTS, "npy-truncated.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00\xff\x00{'descr'")
input_cases.append(("npy-truncated.npy", "truncated header"))
pb("pb-random-bytes", "is not a valid ONNX TensorProto",
   random.Random(10).randbytes(512))
pb("pb-short-raw-data", "raw_data has 8 bytes",
   TensorProto(name="x", data_type=F, dims=[1, 64],
               raw_data=b"\0" * 8).SerializeToString())
pb("pb-wrong-shape", "expects float<",
   helper.make_tensor("x", F, [2, 2], [0.0] * 4).SerializeToString())

with open(os.path.join(OUT, "inputs.tsv"), "w") as f:
    for name, expect in input_cases:
        f.write("%s\t%s\n" % (name, expect))

with open(os.path.join(OUT, "cases.tsv"), "w") as f:
    for name, expect in cases:
        f.write("%s\t%s\n" % (name, expect))
print("%d bad models, %d bad inputs in %s" % (len(cases), len(input_cases),
                                              OUT))
