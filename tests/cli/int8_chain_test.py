#!/usr/bin/env python3
"""The CPU's quantized elementwise kernels against the Interpreter, bit for
bit.

Usage: int8_chain_test.py MODEL_RUNNER WORKDIR

QDQ Add as onnxruntime's quantizer writes the residual Add of a quantized
network, Quantize([Relu](Add(Dequantize(a), Dequantize(b)))), which
fold-qdq turns into RequantAdd: the CPU keeps it whole and its libjit
kernel computes the chain's Float32 operations on the bytes; the
Interpreter runs the lowered chain. Operands and result UInt8 or Int8 in
every combination, zero points 0 and non-zero, with and without Relu,
scales that saturate part of the output (both ends); sizes below one
vector, not a multiple of the vector, and over several parallel chunks
with a tail. Each model runs with -quantized-products=integer on the
Interpreter and on the CPU for the host and for an AVX2 CPU; the outputs
must be equal byte for byte and the CPU's lowered graph must hold the
RequantAdd.

QDQ Mul, Quantize(Mul(Dequantize(a), Dequantize(b))), the same way
(RequantMul): b of a's shape, and b broadcast along a's trailing dims (the
gating Mul of squeeze-and-excitation blocks, [N, C, 1, 1] times [N, C, H,
W], rows of 1 to 57 elements) as either operand, and of a lower rank (the
importer's Reshape moves to the bytes); the CPU's lowered graph must hold
the RequantMul. A b broadcast along a's leading dims folds too but the
CPU lowers it to the chain (its kernel takes one byte per row): equal
bytes, no RequantMul required.
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

import int8_harness
from int8_harness import TYPES

RNG = np.random.default_rng(3709)
CPU_RUNS = {"CPU": [], "CPU-avx2": ["-mcpu=haswell"]}
SHAPES = [(1, 3, 5, 7), (7, 13), (2, 37, 9, 11), (1, 64, 56, 57)]


def values(dtype, shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, size=shape).astype(dtype)


def zp(dtype, nonzero, which):
    if not nonzero:
        return np.array(0, dtype)
    table = {np.int8: (-9, 5, -3), np.uint8: (131, 120, 128)}
    return np.array(table[dtype][which], dtype)


def build(shape, at, bt, yt, nonzero, relu, ys):
    """The QDQ Add of inputs a (as at) and b (as bt), quantized to yt at
    scale ys."""
    inits = {"as": np.array(0.05, np.float32), "az": zp(at, nonzero, 0),
             "bs": np.array(0.031, np.float32), "bz": zp(bt, nonzero, 1),
             "ys": np.array(ys, np.float32), "yz": zp(yt, nonzero, 2)}
    nodes = [helper.make_node("DequantizeLinear", ["a", "as", "az"], ["af"]),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]),
             helper.make_node("Add", ["af", "bf"], ["s"])]
    last = "s"
    if relu:
        nodes.append(helper.make_node("Relu", ["s"], ["r"]))
        last = "r"
    nodes.append(helper.make_node("QuantizeLinear", [last, "ys", "yz"],
                                  ["y"]))
    g = helper.make_graph(
        nodes, "qadd",
        [helper.make_tensor_value_info("a", TYPES[at], shape),
         helper.make_tensor_value_info("b", TYPES[bt], shape)],
        [helper.make_tensor_value_info("y", TYPES[yt], None)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def build_mul(ashape, bshape, at, bt, yt, nonzero, ys, swap):
    """The QDQ Mul of inputs a (as at) and b (as bt; Mul(b, a) if swap),
    quantized to yt at scale ys."""
    inits = {"as": np.array(0.05, np.float32), "az": zp(at, nonzero, 0),
             "bs": np.array(0.031, np.float32), "bz": zp(bt, nonzero, 1),
             "ys": np.array(ys, np.float32), "yz": zp(yt, nonzero, 2)}
    ops = ["bf", "af"] if swap else ["af", "bf"]
    nodes = [helper.make_node("DequantizeLinear", ["a", "as", "az"], ["af"]),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]),
             helper.make_node("Mul", ops, ["s"]),
             helper.make_node("QuantizeLinear", ["s", "ys", "yz"], ["y"])]
    g = helper.make_graph(
        nodes, "qmul",
        [helper.make_tensor_value_info("a", TYPES[at], ashape),
         helper.make_tensor_value_info("b", TYPES[bt], bshape)],
        [helper.make_tensor_value_info("y", TYPES[yt], None)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


# (a's shape, b's shape, whether the CPU keeps the RequantMul).
MUL_SHAPES = [((1, 3, 5, 7), (1, 3, 5, 7), True),
              ((1, 64, 56, 57), (1, 64, 56, 57), True),
              ((1, 96, 7, 7), (1, 96, 1, 1), True),
              ((2, 37, 9, 11), (2, 37, 1, 1), True),
              ((1, 144, 56, 56), (1, 144, 1, 1), True),
              ((1, 40, 1, 3), (1, 40, 1, 1), True),
              ((1, 24, 5, 5), (24, 1, 1), True),
              ((7, 13), (7, 1), True),
              ((1, 8, 9, 10), (1, 1, 9, 10), False)]


def mul_models():
    i = 0
    for ashape, bshape, kept in MUL_SHAPES:
        for at, bt, yt in ((np.uint8, np.uint8, np.uint8),
                           (np.int8, np.uint8, np.int8),
                           (np.uint8, np.int8, np.uint8),
                           (np.int8, np.int8, np.int8)):
            nonzero, swap = i % 2 == 1, i % 3 == 2
            # Products up to about 100: some saturate, many round.
            ys = (0.1, 0.3, 0.5)[i % 3]
            i += 1
            name = "mul_%s_%s_%s_%s_%s_%s%s" % (
                "x".join(map(str, ashape)), "x".join(map(str, bshape)),
                at.__name__, bt.__name__, yt.__name__,
                "z" if nonzero else "z0", "_swap" if swap else "")
            feeds = {"a": values(at, ashape), "b": values(bt, bshape)}
            yield name, build_mul(ashape, bshape, at, bt, yt, nonzero, ys,
                                  swap), feeds, "RequantMul" if kept else None


def models():
    i = 0
    for at in (np.uint8, np.int8):
        for bt in (np.uint8, np.int8):
            for yt in (np.uint8, np.int8):
                for nonzero in (False, True):
                    shape = SHAPES[i % len(SHAPES)]
                    relu = i % 3 == 1
                    # Output steps from fine (saturating at both ends) to
                    # coarse (ties of the rounding on exact halves).
                    ys = (0.02, 0.05, 0.1)[i % 3]
                    i += 1
                    name = "add_%s_%s_%s_%s_%s_%s" % (
                        "x".join(map(str, shape)), at.__name__, bt.__name__,
                        yt.__name__, "z" if nonzero else "z0",
                        "relu" if relu else "id")
                    feeds = {"a": values(at, shape), "b": values(bt, shape)}
                    yield name, build(shape, at, bt, yt, nonzero, relu,
                                      ys), feeds, "RequantAdd"


def run(runner, backend, extra, path, inputs, outdir):
    args = [runner, "-model=" + path, "-backend=" + backend,
            "-output-dir=" + outdir, "-quantized-products=integer",
            "-dump-graph"] + ["-input=%s=%s" % kv for kv in inputs] + extra
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip(), ""
    return numpy_helper.to_array(onnx.load_tensor(
        os.path.join(outdir, "output_0.pb"))), "", r.stdout


def check(runner, work, name, m, feeds, fused):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    inputs = []
    for k, v in feeds.items():
        p = os.path.join(d, k + ".pb")
        onnx.save_tensor(numpy_helper.from_array(v, k), p)
        inputs.append((k, p))
    ref, err, _ = run(runner, "Interpreter", [], path, inputs,
                      os.path.join(d, "Interpreter"))
    if ref is None:
        return ["%s on Interpreter: %s" % (name, err)]
    info = np.iinfo(ref.dtype)
    saturated = float(np.isin(ref, [info.min, info.max]).mean())
    failures = []
    for label, extra in CPU_RUNS.items():
        got, err, graph = run(runner, "CPU", extra, path, inputs,
                              os.path.join(d, label))
        if got is None:
            failures.append("%s on %s: %s" % (name, label, err))
            continue
        ops = re.findall(r"= (\w+)\(", graph)
        if fused and fused not in ops:
            failures.append("%s on %s: no %s in %s" % (
                name, label, fused, sorted(set(ops))))
        failures += int8_harness.compare(name, label, got, ref)
    print("%s %s (%.0f %% saturated)" % ("FAIL" if failures else "PASS",
                                         name, 100 * saturated))
    return failures


def main():
    runner, work = sys.argv[1:3]
    failures, count = [], 0
    for name, m, feeds, fused in list(models()) + list(mul_models()):
        failures += check(runner, work, name, m, feeds, fused)
        count += 1
    return int8_harness.report(count, failures)


if __name__ == "__main__":
    sys.exit(main())
