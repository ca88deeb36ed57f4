#!/usr/bin/env python3
"""A small CNN in onnxruntime's QOperator format against onnxruntime.

Usage: qop_cnn_ort.py MODEL_RUNNER WORKDIR

Builds by hand, node for node, what quantize_static(quant_format=
QuantFormat.QOperator) writes for a CNN (uint8 activations per tensor, int8
weights per output channel, Int32 biases at x_scale * w_scale, ReLUs
absorbed into the output ranges): QuantizeLinear, a strided QLinearConv
stem, a residual block closed by QLinearAdd, a squeeze-and-excitation gate
(QLinearGlobalAveragePool, two 1x1 QLinearConvs, QLinearSigmoid,
QLinearMul), a SiLU (QLinearSigmoid and QLinearMul), QLinearGlobalAveragePool,
Flatten, QGemm with transB to 100 classes and DequantizeLinear. Built here
rather than by the quantizer so that it runs with the source venv's onnx.
On the Interpreter and the CPU (-quantized-products=integer and auto) it
checks that:
- the CPU's lowered graph with integer products (-dump-graph) holds the
  integer nodes it runs for the QDQ form: a RequantConv per QLinearConv,
  RequantAdd, RequantMul for the gate, one TableLookup for the gate's
  sigmoid and one for the whole SiLU, RequantMatMul for QGemm, and no
  float Sigmoid, Conv, Gemm, MatMul or ReduceMean (the means are Int32
  sums) and no unfused IntConv;
- on three inputs the logits are within two output steps of onnxruntime's
  on >= 99 % of elements with the same top-1 (each integer node matches
  onnxruntime's within one step, tipping a later rounding at most).
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(8)
MS = "com.microsoft"


class Builder:
    def __init__(self):
        self.nodes, self.inits = [], []

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def act(self, name, scale, zero):
        """The scale and zero point names of activation \\p name."""
        return (self.const(name + "_scale", np.array(scale, np.float32)),
                self.const(name + "_zero_point", np.array(zero, np.uint8)))

    def node(self, op, ins, out, ms=False, **attrs):
        self.nodes.append(helper.make_node(op, ins, [out],
                                           domain=MS if ms else "", **attrs))
        return out

    def conv(self, name, x, xq, cin, cout, k, yq, **attrs):
        """QLinearConv of \\p x (params \\p xq) to params \\p yq."""
        grp = attrs.get("group", 1)
        w = RNG.normal(0, 0.7 / np.sqrt(cin / grp * k * k),
                       (cout, cin // grp, k, k))
        ws = (np.abs(w).max(axis=(1, 2, 3)) / 127).astype(np.float32)
        wq = np.round(w / ws[:, None, None, None]).astype(np.int8)
        xs = float(numpy_helper.to_array(next(
            i for i in self.inits if i.name == xq[0])))
        bq = np.round(RNG.normal(0, 0.1, cout) / (np.float32(xs) * ws))
        ins = [x, *xq, self.const(name + "_w", wq), self.const(
            name + "_ws", ws), self.const(name + "_wz", np.zeros(cout,
                                                                np.int8)),
               *yq, self.const(name + "_b", bq.astype(np.int32))]
        return self.node("QLinearConv", ins, name, **attrs)


def build():
    b = Builder()
    xq = b.act("x", 0.03, 128)
    x = b.node("QuantizeLinear", ["x", *xq], "x_quantized")
    sq = b.act("stem", 0.02, 0)
    stem = b.conv("stem", x, xq, 3, 16, 3, sq, pads=[1, 1, 1, 1],
                  strides=[2, 2])
    aq = b.act("blk", 0.03, 120)
    a = b.conv("blk", stem, sq, 16, 16, 3, aq, pads=[1, 1, 1, 1])
    rq = b.act("res", 0.03, 60)
    r = b.node("QLinearAdd", [a, *aq, stem, *sq, *rq], "res", ms=True)
    gq = b.act("gap1", 0.01, 40)
    g = b.node("QLinearGlobalAveragePool", [r, *rq, *gq], "gap1", ms=True,
               channels_last=0)
    f1q = b.act("fc1", 0.01, 0)
    f1 = b.conv("fc1", g, gq, 16, 4, 1, f1q)
    f2q = b.act("fc2", 0.05, 128)
    f2 = b.conv("fc2", f1, f1q, 4, 16, 1, f2q)
    sgq = b.act("sig", 1 / 256, 0)
    sg = b.node("QLinearSigmoid", [f2, *f2q, *sgq], "sig", ms=True)
    mq = b.act("gate", 0.02, 60)
    m = b.node("QLinearMul", [r, *rq, sg, *sgq, *mq], "gate", ms=True)
    hq = b.act("pw", 0.04, 100)
    h = b.conv("pw", m, mq, 16, 32, 1, hq)
    hsq = b.act("hsig", 1 / 256, 0)
    hs = b.node("QLinearSigmoid", [h, *hq, *hsq], "hsig", ms=True)
    siq = b.act("silu", 0.02, 20)
    si = b.node("QLinearMul", [h, *hq, hs, *hsq, *siq], "silu", ms=True)
    pq = b.act("gap2", 0.01, 10)
    p = b.node("QLinearGlobalAveragePool", [si, *siq, *pq], "gap2", ms=True)
    fl = b.node("Flatten", [p], "flat")
    w = RNG.normal(0, 0.3, (100, 32))
    ws = (np.abs(w).max(axis=1) / 127).astype(np.float32)
    bq = np.round(RNG.normal(0, 0.1, 100) / (np.float32(0.01) * ws))
    yq = b.act("logits", 0.02, 128)
    y = b.node("QGemm", [fl, *pq, b.const("fc_w", np.round(
        w / ws[:, None]).astype(np.int8)), b.const("fc_ws", ws),
        b.const("fc_wz", np.zeros(100, np.int8)),
        b.const("fc_b", bq.astype(np.int32)), *yq], "logits", ms=True,
        alpha=1.0, transA=0, transB=1)
    b.node("DequantizeLinear", [y, *yq], "y")
    graph = helper.make_graph(
        b.nodes, "qop_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        b.inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return model, 0.02


# The CPU's lowered graph with integer products: these many of each...
WANT = {"RequantConv": 5, "RequantAdd": 1, "RequantMul": 1, "TableLookup": 2,
        "RequantMatMul": 1}
# ...and none of these float (or unfused integer) products.
FLOAT_OPS = ("Sigmoid", "Conv", "Gemm", "MatMul", "ReduceMean", "IntConv",
             "IntMatMul")


def check_graph(label, dump):
    ops = re.findall(r"= (\w+)\(", dump)
    failures = ["%s: %d %s nodes, want %d" % (label, ops.count(op), op, n)
                for op, n in WANT.items() if ops.count(op) != n]
    left = sorted(set(op for op in ops if op in FLOAT_OPS))
    if left:
        failures.append("%s: float nodes left: %s" % (label, left))
    return failures


def main():
    runner, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    model, step = build()
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    failures = []
    for seed in range(3):
        x = np.random.default_rng(50 + seed).uniform(
            -3, 3, (1, 3, 32, 32)).astype(np.float32)
        xin = os.path.join(work, "x%d.pb" % seed)
        onnx.save_tensor(numpy_helper.from_array(x, "x"), xin)
        ref = sess.run(None, {"x": x})[0]
        for backend, mode in [("Interpreter", "integer"), ("CPU", "integer"),
                              ("CPU", "auto")]:
            label = "%s %s input %d" % (backend, mode, seed)
            out = os.path.join(work, "%s-%s-%d" % (backend, mode, seed))
            r = subprocess.run([runner, "-model=" + path, "-backend=" +
                                backend, "-input=x=" + xin, "-output-dir=" +
                                out, "-quantized-products=" + mode,
                                "-dump-graph"], capture_output=True,
                               text=True)
            if r.returncode != 0:
                failures.append("%s: %s" % (label, r.stderr.strip()))
                continue
            if backend == "CPU" and mode == "integer":
                failures += check_graph(label, r.stdout)
            got = numpy_helper.to_array(onnx.load_tensor(
                os.path.join(out, "output_0.pb")))
            diff = np.abs(got.astype(np.float64) - ref) / step
            near = float((diff <= 2.01).mean())
            print("%s: max %.2f steps, %.1f %% equal, %.1f %% within 2, "
                  "top-1 %d vs %d" % (label, diff.max(),
                                      100 * float((diff < 0.5).mean()),
                                      100 * near, got.argmax(), ref.argmax()))
            if near < 0.99 or got.argmax() != ref.argmax():
                failures.append("%s: %.1f %% within 2 steps, top-1 %d vs %d"
                                % (label, 100 * near, got.argmax(),
                                   ref.argmax()))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
