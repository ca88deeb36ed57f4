#!/usr/bin/env python3
"""Pooling, views and elementwise functions between quantized products,
on the bytes.

Usage: int8_between_test.py MODEL_RUNNER WORKDIR

QDQ MaxPool, Flatten, Transpose + Reshape, GlobalAveragePool, Sigmoid,
Clip, Tanh and SiLU (x * Sigmoid(x), the Sigmoid quantized between) as
onnxruntime's quantizer writes them between two products,
Quantize(op(Dequantize(x))), which fold-qdq turns into the op on the bytes
(MaxPool and the views; a Dequantize/Quantize pair stays where the
output's scale, zero point or type differ from the input's), into an
Int32 sum and one requantize (the mean) and into a TableLookup in a table
of the chain's 256 values (the elementwise functions, SiLU's whole chain
one table; the CPU's lookup kernel is vpermi2b on the host where it has
AVX512-VBMI, one load per byte for the AVX2 CPU). Types UInt8 and Int8,
zero points 0 and non-zero, odd sizes (tails of the 64-byte vectors),
asymmetric pads, output scales that saturate.

Each model runs with -quantized-products=integer on the Interpreter and on
the CPU for the host and for an AVX2 CPU; the outputs must be equal byte
for byte. Each result is also checked against an oracle: MaxPool and the
views against the unfolded chain (-quantized-products=float on the
Interpreter: Float32 Dequantize, op, Quantize), byte for byte, since the
movement commutes with a per-tensor Dequantize exactly and the table holds
the chain's values as the Interpreter computes them; the mean against
its definition computed here in numpy's float32 (the integer sum less
N * zero, times the scale, times 1/N, then Quantize), byte for byte, and
within one output step of the unfolded chain. The lowered graphs must
show the fold: no Round (no Quantize chain) where input and output share
their quantization or a table replaces the chain, an Int32 ReduceSum for
the mean.
"""
import os
import re
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

import int8_harness
from int8_harness import TYPES

RNG = np.random.default_rng(3710)
CPU_RUNS = {"CPU": [], "CPU-avx2": ["-mcpu=haswell"]}
INTEGER = ["-quantized-products=integer", "-dump-graph"]


def zero_of(dtype, nonzero, which=0):
    if not nonzero:
        return np.array(0, dtype)
    return np.array({np.int8: (-7, 11), np.uint8: (131, 97)}[dtype][which],
                    dtype)


def qdq_model(op_nodes, x, xs, xz, ys, yz, name):
    """x -> DequantizeLinear(xs, xz) -> op_nodes (f -> g) ->
    QuantizeLinear(ys, yz) -> y."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["f"])]
    nodes += op_nodes
    nodes.append(helper.make_node("QuantizeLinear", ["g", "ys", "yz"], ["y"]))
    inits = {"xs": np.array(xs, np.float32), "xz": xz,
             "ys": np.array(ys, np.float32), "yz": yz}
    return int8_harness.one_input_model(nodes, name, x, TYPES[yz.dtype.type],
                                        inits)


def pool_cases():
    shapes = [((1, 3, 7, 9), [3, 3], [2, 2], [1, 1, 1, 1]),
              ((2, 5, 13, 11), [2, 2], [2, 2], [0, 0, 0, 0]),
              ((1, 4, 6, 5), [3, 2], [1, 1], [0, 1, 2, 0]),
              ((1, 64, 56, 57), [3, 3], [2, 2], [1, 1, 1, 1])]
    i = 0
    for xt in (np.uint8, np.int8):
        for nonzero in (False, True):
            # The output quantized as the input, with another step and zero
            # point, or as the other type.
            for mode in ("same", "rescale", "retype"):
                shape, k, s, p = shapes[i % len(shapes)]
                i += 1
                x = int8_harness.values(RNG, xt, shape)
                xz = zero_of(xt, nonzero)
                yt = xt if mode != "retype" else (
                    np.int8 if xt == np.uint8 else np.uint8)
                ys, yz = (0.05, xz) if mode == "same" else (
                    0.031, zero_of(yt, nonzero, 1))
                node = helper.make_node("MaxPool", ["f"], ["g"],
                                        kernel_shape=k, strides=s, pads=p)
                name = "maxpool_%s_%s_%s_%s" % (
                    "x".join(map(str, shape)), xt.__name__,
                    "z" if nonzero else "z0", mode)
                yield name, qdq_model([node], x, 0.05, xz, ys, yz, name), \
                    x, mode == "same"


def view_cases():
    for xt in (np.uint8, np.int8):
        for nonzero in (False, True):
            x = int8_harness.values(RNG, xt, (2, 6, 5, 3))
            xz = zero_of(xt, nonzero)
            flat = [helper.make_node("Flatten", ["f"], ["g"], axis=1)]
            perm = [helper.make_node("Transpose", ["f"], ["t"],
                                     perm=[0, 2, 3, 1]),
                    helper.make_node("Reshape", ["t", "shape"], ["g"])]
            tag = "%s_%s" % (xt.__name__, "z" if nonzero else "z0")
            yield "flatten_" + tag, qdq_model(flat, x, 0.02, xz, 0.02, xz,
                                              "flatten_" + tag), x, True
            m = qdq_model(perm, x, 0.02, xz, 0.02, xz, "reshape_" + tag)
            m.graph.initializer.append(helper.make_tensor(
                "shape", 7, [3], [2, 30, 3]))
            yield "transpose_reshape_" + tag, m, x, True


def mean_cases():
    # Planes below 16 bytes take the generic sum, larger ones the CPU's
    # ember_sum_i32 (143: two 64-element blocks and a tail).
    shapes = [(1, 16, 7, 7), (2, 5, 3, 5), (1, 9, 1, 1), (1, 2048, 7, 7),
              (1, 3, 11, 13)]
    i = 0
    for xt in (np.uint8, np.int8):
        for yt in (np.uint8, np.int8):
            for nonzero in (False, True):
                shape = shapes[i % len(shapes)]
                # From a step that saturates to one that rounds coarsely.
                ys = (0.004, 0.02, 0.3)[i % 3]
                i += 1
                x = int8_harness.values(RNG, xt, shape)
                xz, yz = zero_of(xt, nonzero), zero_of(yt, nonzero, 1)
                node = helper.make_node("GlobalAveragePool", ["f"], ["g"])
                name = "gap_%s_%s_%s_%s" % ("x".join(map(str, shape)),
                                            xt.__name__, yt.__name__,
                                            "z" if nonzero else "z0")
                yield name, qdq_model([node], x, 0.047, xz, ys, yz, name), \
                    x, (0.047, xz, ys, yz)


def silu_nodes():
    """SiLU as onnxruntime's quantizer writes it: x * Sigmoid(x), the
    Sigmoid quantized (scale ss, zero point sz) between."""
    return [helper.make_node("Sigmoid", ["f"], ["s"]),
            helper.make_node("QuantizeLinear", ["s", "ss", "sz"], ["sq"]),
            helper.make_node("DequantizeLinear", ["sq", "ss", "sz"], ["sd"]),
            helper.make_node("Mul", ["f", "sd"], ["g"])]


def table_cases():
    funcs = [("sigmoid", lambda: helper.make_node("Sigmoid", ["f"], ["g"])),
             ("clip", lambda: helper.make_node("Clip", ["f", "lo", "hi"],
                                               ["g"])),
             ("tanh", lambda: helper.make_node("Tanh", ["f"], ["g"])),
             ("silu", silu_nodes)]
    i = 0
    for xt in (np.uint8, np.int8):
        for nonzero in (False, True):
            for fname, make in funcs:
                # Every function meets every shape and both output types.
                k = i + i // 4
                shape = [(1, 3, 5, 7), (2, 37, 9, 11), (1, 32, 56, 57),
                         (1, 1, 3, 67)][k % 4]
                yt = (np.uint8, np.int8)[k % 2]
                i += 1
                x = int8_harness.values(RNG, xt, shape)
                xz, yz = zero_of(xt, nonzero), zero_of(yt, nonzero, 1)
                name = "%s_%s_%s_%s_%s" % (fname, "x".join(map(str, shape)),
                                           xt.__name__, yt.__name__,
                                           "z" if nonzero else "z0")
                made = make()
                m = qdq_model(made if isinstance(made, list) else [made], x,
                              0.06, xz, 0.0041, yz, name)
                if fname == "silu":
                    m.graph.initializer.extend([
                        numpy_helper.from_array(np.array(0.0039, np.float32),
                                                "ss"),
                        numpy_helper.from_array(zero_of(yt, nonzero), "sz")])
                if fname == "clip":
                    m.graph.initializer.extend([
                        helper.make_tensor("lo", 1, [], [-1.5]),
                        helper.make_tensor("hi", 1, [], [0.75])])
                yield name, m, x


def clip_conv(x, w, act, ys, name):
    """A QDQ 3x3 Conv (UInt8 x, Int8 weights w per tensor) whose result
    goes through act (Relu, or Clip to [lo, hi]) into a UInt8 Quantize at
    step ys (zero point 0)."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["f"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"]),
             helper.make_node("Conv", ["f", "wf"], ["c"], pads=[1, 1, 1, 1])]
    inits = {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8),
             "w": w, "ws": np.array(0.01, np.float32),
             "wz": np.array(0, np.int8), "ys": np.array(ys, np.float32),
             "yz": np.array(0, np.uint8)}
    if act == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["g"]))
    else:
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["g"]))
        inits["lo"] = np.array(act[0], np.float32)
        inits["hi"] = np.array(act[1], np.float32)
    nodes.append(helper.make_node("QuantizeLinear", ["g", "ys", "yz"], ["y"]))
    return int8_harness.one_input_model(nodes, name, x, TYPES[np.uint8],
                                        inits)


def clip_cases():
    """(name, Clip model, Relu model or None, folds): ReLU6 whose top
    saturates the output (Quantize(6) >= 255) is the Relu fold, bit for
    bit; one whose top lies inside the output range keeps its Clip."""
    x = int8_harness.values(RNG, np.uint8, (1, 5, 9, 11))
    w = int8_harness.values(RNG, np.int8, (4, 5, 3, 3))
    yield ("clip6_saturating", clip_conv(x, w, (0., 6.), 6 / 255, "c6"),
           clip_conv(x, w, "relu", 6 / 255, "r6"), True), x
    yield ("clip6_inside", clip_conv(x, w, (0., 6.), 0.05, "c6i"), None,
           False), x


def check_clip(runner, work, name, m, relu, folds, x):
    """A Clip that folds: RequantConv without Clip on the CPU, bytes equal
    to the Interpreter's and to the Relu model's. One that does not: no
    integer product on the Interpreter (its float product is not
    bit-exact across backends)."""
    if not folds:
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        path, xpath = os.path.join(d, "model.onnx"), os.path.join(d, "x.pb")
        onnx.save(m, path)
        onnx.save_tensor(numpy_helper.from_array(x, "x"), xpath)
        got, err, out = int8_harness.run(runner, "Interpreter", INTEGER, path,
                                         xpath, os.path.join(d, "out"))
        if got is None:
            return ["%s: %s" % (name, err)]
        return graph_checks(name, {r"= IntConv\(": False})("Interpreter",
                                                            out)
    want = {r"= RequantConv\(": True, r"= Clip\(": False}
    f, ref = int8_harness.check(runner, work, name, m, x, INTEGER,
                                graph_checks(name, want), CPU_RUNS)
    if ref is None:
        return f
    f2, rref = int8_harness.check(runner, work, name + "_relu", relu, x,
                                  INTEGER, None, {"CPU": []})
    if rref is not None:
        f2 += int8_harness.compare(name, "the Relu fold", ref, rref)
    return f + f2


def mean_oracle(x, q):
    """The folded mean's definition in float32 (FoldQDQPool.cpp)."""
    xs, xz, ys, yz = q
    n = x.shape[2] * x.shape[3]
    s = x.astype(np.int64).sum(axis=(2, 3), keepdims=True) - n * int(xz)
    v = s.astype(np.float32) * np.float32(xs)
    v = v * (np.float32(1) / np.float32(n))
    info = np.iinfo(yz.dtype)
    q = np.round(v / np.float32(ys)) + np.float32(int(yz))
    return np.clip(q, info.min, info.max).astype(yz.dtype)


# Patterns of the lowered graph's lines (model-runner -dump-graph).
BYTE_MAXPOOL = r"= MaxPool\(.*: [ui]8<"
INT32_SUM = r"= ReduceSum\(.*: i32<"
ROUND = r"= Round\("
LOOKUP = r"= TableLookup\("


def graph_checks(name, want):
    """A per-CPU-run check that some line of the lowered graph matches
    each pattern of want mapped to True, and no line one mapped to False."""
    def check(label, out):
        bad = [p for p, present in want.items()
               if bool(re.search(p, out, re.M)) != present]
        return ["%s on %s: lowered graph %s %s" % (
            name, label, "lacks" if want[p] else "holds", p) for p in bad]
    return check


def check(runner, work, name, m, x, want, exact=None):
    """Failure lines of one model: CPU against Interpreter, then the
    Interpreter against the unfolded chain (equal, or within one step where
    \p exact, the definition's bytes, is given and must be met)."""
    failures, ref = int8_harness.check(runner, work, name, m, x, INTEGER,
                                       graph_checks(name, want), CPU_RUNS)
    if ref is None:
        return failures
    d = os.path.join(work, name)
    chain, err, _ = int8_harness.run(
        runner, "Interpreter", ["-quantized-products=float"],
        os.path.join(d, "model.onnx"), os.path.join(d, "x.pb"),
        os.path.join(d, "float"))
    if chain is None:
        return failures + ["%s unfolded: %s" % (name, err)]
    if exact is None:
        return failures + int8_harness.compare(name, "unfolded chain", ref,
                                               chain)
    failures += int8_harness.compare(name, "definition", ref, exact)
    if np.abs(ref.astype(int) - chain.astype(int)).max() > 1:
        failures.append("%s: more than one step from the unfolded chain" %
                        name)
    return failures


def main():
    runner, work = sys.argv[1:3]
    failures, count = [], 0
    for name, m, x, same in pool_cases():
        # Where the quantization is shared, no Quantize chain is left.
        want = {BYTE_MAXPOOL: True, ROUND: not same}
        f = check(runner, work, name, m, x, want)
        print("%s %s" % ("FAIL" if f else "PASS", name))
        failures += f
        count += 1
    for name, m, x, _ in view_cases():
        f = check(runner, work, name, m, x, {ROUND: False})
        print("%s %s" % ("FAIL" if f else "PASS", name))
        failures += f
        count += 1
    for name, m, x in table_cases():
        f = check(runner, work, name, m, x, {LOOKUP: True, ROUND: False})
        print("%s %s" % ("FAIL" if f else "PASS", name))
        failures += f
        count += 1
    for (name, m, relu, folds), x in clip_cases():
        f = check_clip(runner, work, name, m, relu, folds, x)
        print("%s %s" % ("FAIL" if f else "PASS", name))
        failures += f
        count += 1
    for name, m, x, q in mean_cases():
        want = {INT32_SUM: True}
        f = check(runner, work, name, m, x, want, mean_oracle(x, q))
        print("%s %s" % ("FAIL" if f else "PASS", name))
        failures += f
        count += 1
    return int8_harness.report(count, failures)


if __name__ == "__main__":
    sys.exit(main())
