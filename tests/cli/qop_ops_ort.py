#!/usr/bin/env python3
"""onnxruntime's com.microsoft quantized operators against onnxruntime.

Usage: qop_ops_ort.py MODEL_RUNNER WORKDIR

One small model per operator onnxruntime's quantizer writes in QOperator
format (QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QGemm,
QLinearSigmoid, QLinearLeakyRelu, QLinearConcat, QLinearAveragePool,
QLinearSoftmax, QLinearWhere, QLinearReduceMean: against its definition,
onnxruntime having no CPU kernel) and quantize_dynamic's MatMulIntegerToFloat
and DynamicQuantizeMatMul, with uint8 and int8 operands, broadcasting,
absent zero points, channels_last and QGemm's alpha, bias and float output.
Runs each on the Interpreter and the CPU and requires every element within
one output step of onnxruntime's: Ember computes the definition,
quantize(op(dequantize(x))) rounding half to even in Float32, while
onnxruntime's kernels fold the scales differently (QLinearAdd and QLinearMul
scale each operand by its ratio to the output scale, the pools divide the
Int32 sum by y_scale * N, QLinearSigmoid's table uses its own logistic
approximation), so a value within a rounding error of a tie may round the
other way; nothing else differs. Float outputs (QGemm without y_scale,
the two float products) are compared relative to their largest value
(1e-5: the same Float32 operations, sums in another order).
Then malformed nodes (a missing input, a scale of 3 elements, an unsupported
channels_last) must fail with a one-line message naming the problem.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(37)
ort.set_default_logger_severity(3)
MS = "com.microsoft"
U8, I8 = np.uint8, np.int8


def q(dtype, shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


def s(v, dtype=np.float32):
    return np.array(v, dtype)


def model(node, feeds, consts, out_type):
    inits = [numpy_helper.from_array(v, n) for n, v in consts.items()]
    ins = [helper.make_tensor_value_info(
        n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape)
        for n, v in feeds.items()]
    nodes = node if isinstance(node, list) else [node]
    g = helper.make_graph(nodes, nodes[-1].op_type, ins,
                          [helper.make_tensor_value_info("y", out_type, None)],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m


def ms(op, ins, **attrs):
    return helper.make_node(op, ins, ["y"], domain=MS, **attrs)


def binary_cases():
    for op in ["QLinearAdd", "QLinearMul"]:
        feeds = {"a": q(U8, (1, 8, 5, 5)), "b": q(U8, (1, 8, 5, 5))}
        consts = {"as": s(0.0517), "az": s(128, U8), "bs": s(0.0291),
                  "bz": s(100, U8), "ys": s(0.0613 if op == "QLinearAdd"
                                            else 0.417), "yz": s(120, U8)}
        yield op.lower() + "_u8", ms(op, ["a", "as", "az", "b", "bs", "bz",
                                          "ys", "yz"]), feeds, consts, U8
        # int8, the gating shape of squeeze-and-excitation, zero points
        # absent (0, the output int8 like A).
        feeds = {"a": q(I8, (1, 8, 5, 5)), "b": q(I8, (1, 8, 1, 1))}
        consts = {"as": s(0.0213), "bs": s(0.0117), "z": s(0, I8),
                  "ys": s(0.0291 if op == "QLinearAdd" else 0.0052)}
        # onnxruntime's type inference refuses absent zero points: its
        # reference has explicit zeros.
        yield op.lower() + "_i8_bcast", ms(op, ["a", "as", "", "b", "bs",
                                                "", "ys"]), feeds, consts, I8, \
            ms(op, ["a", "as", "z", "b", "bs", "z", "ys", "z"])


def unary_cases():
    x = q(U8, (1, 8, 9, 9))
    pq = {"xs": s(0.04), "xz": s(130, U8), "ys": s(0.02), "yz": s(3, U8)}
    ins = ["x", "xs", "xz", "ys", "yz"]
    yield "gap", ms("QLinearGlobalAveragePool", ins), {"x": x}, pq, U8
    yield "gap_channels_last", ms("QLinearGlobalAveragePool", ins,
                                  channels_last=1), \
        {"x": q(I8, (2, 6, 7, 5))}, {"xs": s(0.04), "xz": s(-3, I8),
                                     "ys": s(0.01), "yz": s(5, I8)}, I8
    yield "sigmoid", ms("QLinearSigmoid", ins), {"x": x}, \
        {**pq, "ys": s(1 / 256), "yz": s(0, U8)}, U8
    yield "leakyrelu_i8", ms("QLinearLeakyRelu", ["x", "xs", "xz", "ys"],
                             alpha=0.1), {"x": q(I8, (2, 3, 4, 5))}, \
        {"xs": s(0.05), "xz": s(7, I8), "ys": s(0.03), "z": s(0, I8)}, I8, \
        ms("QLinearLeakyRelu", ["x", "xs", "xz", "ys", "z"], alpha=0.1)
    yield "averagepool", ms("QLinearAveragePool", ins, kernel_shape=[3, 3],
                            strides=[2, 2], pads=[1, 1, 1, 1]), {"x": x}, \
        pq, U8
    # onnxruntime has no CPU kernel for QLinearReduceMean: the reference is
    # its definition, DequantizeLinear -> ReduceMean -> QuantizeLinear.
    yield "reducemean", ms("QLinearReduceMean", ins, axes=[1, 3],
                           keepdims=0), {"x": x}, pq, U8, [
        helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
        helper.make_node("ReduceMean", ["xd"], ["m"], axes=[1, 3],
                         keepdims=0),
        helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"])]
    yield "softmax", ms("QLinearSoftmax", ins, axis=-1, opset=13), \
        {"x": q(U8, (2, 3, 10))}, {**pq, "ys": s(1 / 256), "yz": s(0, U8)}, \
        U8


def other_cases():
    consts = {"ys": s(0.05), "yz": s(128, U8), "s0": s(0.05), "z0": s(128, U8),
              "s1": s(0.02), "z1": s(10, U8), "s2": s(0.1), "z2": s(200, U8)}
    yield "concat", ms("QLinearConcat", ["ys", "yz", "x0", "s0", "z0", "x1",
                                         "s1", "z1", "x2", "s2", "z2"],
                       axis=1), \
        {"x0": q(U8, (1, 2, 3, 3)), "x1": q(U8, (1, 4, 3, 3)),
         "x2": q(U8, (1, 1, 3, 3))}, consts, U8
    yield "where", ms("QLinearWhere", ["c", "x", "xs", "xz", "w", "ws", "wz",
                                       "ys", "yz"]), \
        {"c": RNG.integers(0, 2, (3, 7)).astype(bool), "x": q(U8, (3, 7)),
         "w": q(U8, (1, 7))}, \
        {"xs": s(0.05), "xz": s(128, U8), "ws": s(0.02), "wz": s(9, U8),
         "ys": s(0.04), "yz": s(100, U8)}, U8


def gemm_cases():
    a = q(U8, (3, 16))
    w = q(I8, (10, 16))
    consts = {"as": s(0.02), "az": s(120, U8), "w": w,
              "ws": RNG.uniform(0.001, 0.01, 10).astype(np.float32),
              "wz": np.zeros(10, I8),
              "c": RNG.integers(-3000, 3000, 10).astype(np.int32),
              "ys": s(0.05), "yz": s(128, U8)}
    ins = ["a", "as", "az", "w", "ws", "wz", "c", "ys", "yz"]
    yield "qgemm", ms("QGemm", ins, transB=1), {"a": a}, consts, U8
    yield "qgemm_alpha", ms("QGemm", ins, transB=1, alpha=0.5), {"a": a}, \
        consts, U8
    wt = np.ascontiguousarray(w.T)
    yield "qgemm_float", ms("QGemm", ["a", "as", "az", "w", "ws", "wz"]), \
        {"a": a}, {**consts, "w": wt, "ws": s(0.004), "wz": s(3, I8)}, \
        np.float32


def float_product_cases():
    a = q(U8, (2, 3, 16))
    consts = {"w": q(I8, (16, 8)), "as": s(0.02), "az": s(120, U8),
              "ws": RNG.uniform(0.001, 0.01, 8).astype(np.float32),
              "wz": np.zeros(8, I8),
              "bias": RNG.normal(0, 1, 8).astype(np.float32)}
    yield "matmulintegertofloat", ms("MatMulIntegerToFloat",
                                     ["a", "w", "as", "ws", "az", "wz",
                                      "bias"]), {"a": a}, consts, np.float32
    yield "dynamicquantizematmul", ms("DynamicQuantizeMatMul",
                                      ["x", "w", "ws", "wz", "bias"]), \
        {"x": RNG.normal(0, 2, (4, 16)).astype(np.float32)}, consts, \
        np.float32


def run(runner, path, feeds, out, backend):
    args = [runner, "-model=" + path, "-backend=" + backend,
            "-output-dir=" + out]
    d = os.path.dirname(path)
    for name, v in feeds.items():
        p = os.path.join(d, name + ".pb")
        onnx.save_tensor(numpy_helper.from_array(v, name), p)
        args.append("-input=%s=%s" % (name, p))
    return subprocess.run(args, capture_output=True, text=True)


def check(runner, work, name, node, feeds, consts, out_dtype,
          ref_node=None):
    """Runs \p node on Ember against onnxruntime on \p ref_node (the
    same op with explicit zero points where \p node omits them)."""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    out_type = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(out_dtype)]
    onnx.save(model(node, feeds, consts, out_type), path)
    ref_model = model(ref_node or node, feeds, consts, out_type)
    ref = ort.InferenceSession(ref_model.SerializeToString(), providers=[
        "CPUExecutionProvider"]).run(None, feeds)[0]
    failures = []
    for backend in ["Interpreter", "CPU"]:
        r = run(runner, path, feeds, os.path.join(d, backend), backend)
        label = "%s on %s" % (name, backend)
        if r.returncode != 0:
            failures.append("%s: %s" % (label, r.stderr.strip()))
            continue
        got = numpy_helper.to_array(onnx.load_tensor(
            os.path.join(d, backend, "output_0.pb")))
        if got.shape != ref.shape or got.dtype != ref.dtype:
            failures.append("%s: %s %s, want %s %s" % (
                label, got.dtype, got.shape, ref.dtype, ref.shape))
            continue
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        if ref.dtype == np.float32:
            err, bound = diff.max() / np.abs(ref).max(), 1e-5
            print("%s: max |diff| %.2g of max |y|" % (label, err))
        else:
            err, bound = diff.max(), 1
            print("%s: max %d steps, %d of %d elements differ" % (
                label, err, int((diff > 0).sum()), ref.size))
        if err > bound:
            failures.append("%s: error %g over %g" % (label, err, bound))
    return failures


def negative_cases():
    """(name, node, feeds, consts, the message's substring)."""
    ab = {"a": q(U8, (1, 4)), "b": q(U8, (1, 4))}
    c = {"as": s(0.1), "az": s(1, U8), "bs": s(0.1), "bz": s(1, U8),
         "ys": s(0.1), "yz": s(1, U8)}
    yield "add_arity", ms("QLinearAdd", ["a", "as", "az", "b", "bs"]), ab, c, \
        "expects 7 to 8 inputs, got 5"
    yield "add_scale_rank", ms("QLinearAdd", ["a", "as", "az", "b", "bs",
                                              "bz", "ys", "yz"]), ab, \
        {**c, "bs": np.full(3, 0.1, np.float32)}, \
        "input 4 (a scale) must be one float (per tensor)"
    yield "add_zero_kind", ms("QLinearAdd", ["a", "as", "az", "b", "bs",
                                             "bz", "ys", "yz"]), ab, \
        {**c, "bz": s(1, I8)}, "input 5 (a zero point) must be one"
    yield "avgpool_channels_last", ms("QLinearAveragePool",
                                      ["x", "xs", "xz", "ys", "yz"],
                                      kernel_shape=[2, 2], channels_last=1), \
        {"x": q(U8, (1, 4, 4, 2))}, {"xs": s(0.1), "xz": s(1, U8),
                                     "ys": s(0.1), "yz": s(1, U8)}, \
        "channels_last=1 is not supported"


def check_negative(runner, work, name, node, feeds, consts, want):
    d = os.path.join(work, "bad_" + name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(model(node, feeds, consts, TensorProto.UINT8), path)
    r = run(runner, path, feeds, os.path.join(d, "out"), "Interpreter")
    lines = [ln for ln in r.stderr.splitlines() if want in ln]
    print("%s: exit %d, %s" % (name, r.returncode, r.stderr.strip()))
    if r.returncode == 0 or not lines or "\n" in r.stderr.strip():
        return ["%s: exit %d, stderr %r is not one line with %r" % (
            name, r.returncode, r.stderr.strip(), want)]
    return []


def main():
    runner, work = sys.argv[1:3]
    failures = []
    for case in (list(binary_cases()) + list(unary_cases()) +
                 list(other_cases()) + list(gemm_cases()) +
                 list(float_product_cases())):
        failures += check(runner, work, *case)
    for case in negative_cases():
        failures += check_negative(runner, work, *case)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
