#!/usr/bin/env python3
"""Integer products of quantized ONNX ops against onnxruntime, bit for bit.

Usage: int_products_ort.py MODEL_RUNNER WORKDIR

ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul with an inner
dimension of 3*3*512 = 4608 and extreme operands (0/255 and -128/127), so
the Int32 sums reach ~1.5e8, far beyond 2^24 where float32 stops holding
every integer: a product composed in float loses low bits there. UInt8 MatMulInteger
weights with zero points other than 128 check center-int-weights. Runs each
model on the Interpreter and the CPU (with run-time and with constant
weights) and requires outputs equal to onnxruntime's, element for element.
One QLinearConv cancels the large sum with its bias (scales 1), so its
uint8 output shows any error of a few units in the Int32 sum.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(11)
C, M, HW = 512, 8, 6  # 3x3 conv over 512 channels: K = 4608


def extreme(dtype, shape):
    """Values near the top of the range: sums of one sign grow past 2^24."""
    top = np.iinfo(dtype).max
    return RNG.choice([top, top - 1, top - 2, top - 5],
                      size=shape).astype(dtype)


def model(name, node, feeds, consts, out_type):
    inits = [numpy_helper.from_array(v, n) for n, v in consts.items()]
    ins = [helper.make_tensor_value_info(
        n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape)
        for n, v in feeds.items()]
    g = helper.make_graph([node], name, ins,
                          [helper.make_tensor_value_info("y", out_type, None)],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def scalar(v, dtype):
    return np.array(v, dtype)


def conv_cases():
    x = extreme(np.uint8, (1, C, HW, HW))
    w = extreme(np.int8, (M, C, 3, 3))
    # onnxruntime's ConvInteger takes uint8 filters, with one zero point.
    wu = extreme(np.uint8, (M, C, 3, 3))
    zx, zw = scalar(3, np.uint8), scalar(131, np.uint8)
    node = helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"],
                            pads=[1, 1, 1, 1])
    yield "convinteger", node, {"x": x}, {"w": wu, "zx": zx, "zw": zw}, \
        TensorProto.INT32
    # QLinearConv, per-channel weight scales, bias, padding.
    ws = RNG.uniform(0.001, 0.01, M).astype(np.float32)
    consts = {"xs": scalar(0.02, np.float32), "zx": scalar(128, np.uint8),
              "w": w, "ws": ws, "zw": np.zeros(M, np.int8),
              "ys": scalar(5000.0, np.float32), "zy": scalar(120, np.uint8),
              "b": RNG.integers(-500000, 500000, M).astype(np.int32)}
    node = helper.make_node(
        "QLinearConv", ["x", "xs", "zx", "w", "ws", "zw", "ys", "zy", "b"],
        ["y"], pads=[1, 1, 1, 1])
    yield "qlinearconv", node, {"x": x}, consts, TensorProto.UINT8
    # Scales 1 and a bias that cancels the interior sum of a constant input:
    # the output is small, so an error of a few units in the sum shows.
    xc = np.full((1, C, HW, HW), 255, np.uint8)
    interior = w.astype(np.int64).sum(axis=(1, 2, 3)) * 255
    one = scalar(1.0, np.float32)
    consts = {"xs": one, "zx": scalar(0, np.uint8), "w": w,
              "ws": np.ones(M, np.float32), "zw": np.zeros(M, np.int8),
              "ys": one, "zy": scalar(100, np.uint8),
              "b": (-interior).astype(np.int32)}
    yield "qlinearconv_cancel", node, {"x": xc}, consts, TensorProto.UINT8


def matmul_cases():
    a = extreme(np.uint8, (2, 5, 9 * C))
    b = extreme(np.int8, (9 * C, 7))
    za, zb = scalar(5, np.uint8), np.arange(7, dtype=np.int8) - 3
    node = helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])
    yield "matmulinteger", node, {"a": a}, {"b": b, "za": za, "zb": zb}, \
        TensorProto.INT32
    # UInt8 weights off their center 128 (asymmetric, as quantize_dynamic
    # writes QUInt8): center-int-weights moves them to 128 with a row-sum
    # correction, per tensor and per column.
    bu = extreme(np.uint8, (9 * C, 7))
    bu[::3] = 0
    for suffix, zbu in [("", scalar(131, np.uint8)),
                        ("_percol", np.arange(7, dtype=np.uint8) * 40)]:
        yield "matmulinteger_u8" + suffix, node, {"a": a}, \
            {"b": bu, "za": za, "zb": zbu}, TensorProto.INT32
    consts = {"as": scalar(0.05, np.float32), "za": scalar(7, np.uint8),
              "b": b, "bs": RNG.uniform(0.01, 0.02, 7).astype(np.float32),
              "zb": np.zeros(7, np.int8), "ys": scalar(4000.0, np.float32),
              "zy": scalar(3, np.uint8)}
    node = helper.make_node(
        "QLinearMatMul", ["a", "as", "za", "b", "bs", "zb", "ys", "zy"], ["y"])
    yield "qlinearmatmul", node, {"a": a}, consts, TensorProto.UINT8


def run_ember(runner, backend, path, feeds, outdir):
    args = [runner, "-model=" + path, "-backend=" + backend,
            "-output-dir=" + outdir]
    for name in feeds:
        args.append("-input=%s=%s" % (name, os.path.join(
            os.path.dirname(path), name + ".pb")))
    return subprocess.run(args, capture_output=True, text=True)


def check(runner, work, name, m, feeds):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    for n, v in feeds.items():
        onnx.save_tensor(numpy_helper.from_array(v, n),
                         os.path.join(d, n + ".pb"))
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    ref = sess.run(None, feeds)[0]
    failures = []
    for backend in ["Interpreter", "CPU"]:
        out = os.path.join(d, backend)
        r = run_ember(runner, backend, path, feeds, out)
        if r.returncode != 0:
            failures.append("%s on %s: %s" % (name, backend, r.stderr.strip()))
            continue
        got = numpy_helper.to_array(onnx.load_tensor(
            os.path.join(out, "output_0.pb")))
        if got.shape != ref.shape or got.dtype != ref.dtype:
            failures.append("%s on %s: %s %s, want %s %s" % (
                name, backend, got.dtype, got.shape, ref.dtype, ref.shape))
            continue
        bad = int((got != ref).sum())
        diff = np.abs(got.astype(np.int64) - ref.astype(np.int64)).max()
        print("%s %s on %s: %d of %d elements differ (max %d), |ref| <= %d"
              % ("PASS" if bad == 0 else "FAIL", name, backend, bad, ref.size,
                 diff, np.abs(ref.astype(np.int64)).max()))
        if bad:
            failures.append("%s on %s: %d elements differ" % (name, backend,
                                                              bad))
    return failures


def main():
    runner, work = sys.argv[1:3]
    failures = []
    for name, node, feeds, consts, out_type in (list(conv_cases()) +
                                                list(matmul_cases())):
        # Weights as initializers (constant) and as run-time inputs.
        for variant, f, c in [("const", feeds, consts),
                              ("runtime", {**feeds, **{k: v for k, v in
                                                       consts.items()
                                                       if k in ("w", "b")}},
                               {k: v for k, v in consts.items()
                                if k not in ("w", "b")})]:
            m = model(name, node, f, c, out_type)
            failures += check(runner, work, name + "_" + variant, m, f)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
