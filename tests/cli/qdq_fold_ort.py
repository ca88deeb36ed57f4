#!/usr/bin/env python3
"""onnxruntime's QDQ form folded into integer products, against onnxruntime.

Usage: qdq_fold_ort.py MODEL_RUNNER WORKDIR

Builds the QDQ model onnxruntime's quantize_static writes for a small CNN
(uint8 activations per tensor, int8 weights per output channel, Int32
biases at scale x_scale * w_scale): Conv 3x3 + Relu, Conv 1x1,
GlobalAveragePool (stays dequantized), Gemm with transB, and a MatMul with
per-column weights. Runs it on the Interpreter and the CPU, with
-quantized-products=integer and with the default (float products of the
dequantized operands on every backend today), and checks:
- the lowered graph (-dump-graph) has the products as IntConv / IntMatMul
  and no float Conv, Gemm or MatMul is left (the fold-qdq pass ran), or by
  default no integer product;
- each output, in units of its quantization step, is within 1 step of
  onnxruntime's everywhere (the float GlobalAveragePool may sum in another
  order and tip one requantization) and equal on >= 99 % of elements.
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(5)


class Builder:
    def __init__(self):
        self.nodes, self.inits = [], []

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op, ins, out, **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def qdq(self, x, scale, zero):
        """QuantizeLinear then DequantizeLinear (uint8, per tensor)."""
        s = self.const(x + "_s", np.array(scale, np.float32))
        z = self.const(x + "_z", np.array(zero, np.uint8))
        q = self.node("QuantizeLinear", [x, s, z], x + "_q")
        return self.node("DequantizeLinear", [q, s, z], x + "_dq"), scale

    def weight(self, name, w, axis):
        """Int8 weights per channel along axis, dequantized."""
        red = tuple(i for i in range(w.ndim) if i != axis)
        scale = (np.abs(w).max(axis=red) / 127).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        q = np.clip(np.round(w / scale.reshape(shape)), -127, 127)
        wq = self.const(name + "_q", q.astype(np.int8))
        s = self.const(name + "_s", scale)
        z = self.const(name + "_z", np.zeros(scale.shape, np.int8))
        return self.node("DequantizeLinear", [wq, s, z], name + "_dq",
                         axis=axis), scale

    def bias(self, name, b, xs, ws):
        scale = (np.float32(xs) * ws).astype(np.float32)
        bq = self.const(name + "_q", np.round(b / scale).astype(np.int32))
        s = self.const(name + "_s", scale)
        z = self.const(name + "_z", np.zeros(scale.shape, np.int32))
        return self.node("DequantizeLinear", [bq, s, z], name + "_dq", axis=0)


def build():
    b = Builder()
    x, xs = b.qdq("x", 0.02, 128)
    w1, ws1 = b.weight("w1", RNG.normal(0, 0.1, (32, 16, 3, 3)), 0)
    b1 = b.bias("b1", RNG.normal(0, 0.1, 32), xs, ws1)
    c1 = b.node("Conv", [x, w1, b1], "c1", pads=[1, 1, 1, 1])
    r1 = b.node("Relu", [c1], "r1")
    h, hs = b.qdq(r1, 0.03, 0)
    w2, ws2 = b.weight("w2", RNG.normal(0, 0.2, (24, 32, 1, 1)), 0)
    c2 = b.node("Conv", [h, w2, b.bias("b2", RNG.normal(0, 0.1, 24), hs,
                                       ws2)], "c2")
    h2, _ = b.qdq(c2, 0.05, 120)
    g = b.node("GlobalAveragePool", [h2], "gap")
    f = b.node("Flatten", [g], "flat")
    fq, fs = b.qdq(f, 0.02, 128)
    w3, ws3 = b.weight("w3", RNG.normal(0, 0.3, (10, 24)), 0)
    b.node("Gemm", [fq, w3, b.bias("b3", RNG.normal(0, 0.1, 10), fs, ws3)],
           "gemm", transB=1)
    y1, _ = b.qdq("gemm", 0.04, 100)
    w4, _ = b.weight("w4", RNG.normal(0, 0.3, (24, 6)), 1)
    b.node("MatMul", [fq, w4], "mm")
    y2, _ = b.qdq("mm", 0.05, 128)
    graph = helper.make_graph(
        b.nodes, "qdq_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, 16, 8, 8])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)
         for y in (y1, y2)], b.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, [0.04, 0.05]


def main():
    runner, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    m, steps = build()
    path = os.path.join(work, "model.onnx")
    onnx.save(m, path)
    x = RNG.uniform(-2.5, 2.5, (1, 16, 8, 8)).astype(np.float32)
    xin = os.path.join(work, "x.pb")
    onnx.save_tensor(numpy_helper.from_array(x, "x"), xin)
    refs = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
        None, {"x": x})
    failures = []
    for backend, mode in [(b, m) for b in ["Interpreter", "CPU"]
                          for m in ["integer", "auto"]]:
        out = os.path.join(work, backend + "-" + mode)
        r = subprocess.run([runner, "-model=" + path, "-backend=" + backend,
                            "-input=x=" + xin, "-output-dir=" + out,
                            "-quantized-products=" + mode, "-dump-graph"],
                           capture_output=True, text=True)
        backend += " " + mode
        if r.returncode != 0:
            failures.append("%s: %s" % (backend, r.stderr.strip()))
            continue
        ops = re.findall(r"= (\w+)\(", r.stdout)
        want = ({"IntConv": 2, "IntMatMul": 2} if mode == "integer" else
                {"IntConv": 0, "IntMatMul": 0})
        for op, n in want.items():
            if ops.count(op) != n:
                failures.append("%s: %d %s nodes, want %d" % (
                    backend, ops.count(op), op, n))
        left = [op for op in ops if op in ("Conv", "Gemm", "MatMul")]
        if left and mode == "integer":
            failures.append("%s: float products left: %s" % (backend, left))
        for i, (ref, step) in enumerate(zip(refs, steps)):
            got = numpy_helper.to_array(onnx.load_tensor(
                os.path.join(out, "output_%d.pb" % i)))
            d = np.abs(got.astype(np.float64) - ref) / step
            exact = float((d < 0.5).mean())
            print("%s output %d: max %.2f steps, %.1f %% equal" % (
                backend, i, d.max(), 100 * exact))
            if d.max() > 1.01 or exact < 0.99:
                failures.append("%s output %d: max %.2f steps, %.1f %% equal"
                                % (backend, i, d.max(), 100 * exact))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
