#!/usr/bin/env python3
"""onnxruntime's QDQ form folded into integer products, against onnxruntime.

Usage: qdq_fold_ort.py MODEL_RUNNER WORKDIR

Builds the QDQ model onnxruntime's quantize_static writes for a small CNN
(uint8 activations per tensor, int8 weights per output channel, Int32
biases at scale x_scale * w_scale): Conv 3x3 + Relu, Conv 1x1,
GlobalAveragePool (stays dequantized), Gemm with transB, and a MatMul with
per-column weights. Runs it on the Interpreter and the CPU, with
-quantized-products=integer and with the default (integer products on a
CPU whose kernel target has AVX512-VNNI with 16 lanes, float products of
the dequantized operands elsewhere), and checks:
- the lowered graph (-dump-graph) has the products as IntConv / IntMatMul
  and no float Conv, Gemm or MatMul is left where the pass folds, and no
  integer product where it does not;
- each output, in units of its quantization step, is within 1 step of
  onnxruntime's everywhere (the float GlobalAveragePool may sum in another
  order and tip one requantization) and equal on >= 99 % of elements.
A product of two run-time operands (attention's P.V) folds with
-quantized-products=integer but stays a float MatMul in auto mode on the
CPU, whose integer GEMM packs only constant weights, within 1 step.
Then a resnet-style net (strided stem, residual block with a quantized Add,
depthwise conv, 1x1 conv, pooling, a 100-class Gemm) on three inputs: the
dequantized logits within two output steps of onnxruntime's on >= 99.9 %
of elements and the same top-1, on the Interpreter and the CPU.
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


def build_resnet():
    """A resnet-style QDQ net: stem conv 3x3/2 + Relu, a residual block
    (two 3x3 convs, a quantized Add, Relu), a depthwise 3x3 + Relu, a 1x1
    conv, GlobalAveragePool and a Gemm to 100 classes."""
    b = Builder()
    x, xs = b.qdq("x", 0.03, 128)

    def conv(name, h, hs, cin, cout, k, relu, **attrs):
        grp = attrs.get("group", 1)
        w, ws = b.weight(name, RNG.normal(0, 0.6 / np.sqrt(cin / grp * k * k),
                                          (cout, cin // grp, k, k)), 0)
        c = b.node("Conv", [h, w, b.bias(name + "b", RNG.normal(
            0, 0.1, cout), hs, ws)], name + "c", **attrs)
        if relu:
            c = b.node("Relu", [c], name + "r")
        return c

    h = conv("stem", x, xs, 3, 32, 3, True, pads=[1, 1, 1, 1],
             strides=[2, 2])
    h, hs = b.qdq(h, 0.02, 0)
    a = conv("blk1", h, hs, 32, 32, 3, True, pads=[1, 1, 1, 1])
    a, as_ = b.qdq(a, 0.02, 0)
    a = conv("blk2", a, as_, 32, 32, 3, False, pads=[1, 1, 1, 1])
    a, _ = b.qdq(a, 0.04, 128)
    s_ = b.node("Add", [a, h], "sum")
    s_ = b.node("Relu", [s_], "sumr")
    h, hs = b.qdq(s_, 0.03, 0)
    d = conv("dw", h, hs, 32, 32, 3, True, pads=[1, 1, 1, 1], group=32)
    d, ds = b.qdq(d, 0.02, 0)
    p = conv("pw", d, ds, 32, 64, 1, True)
    p, _ = b.qdq(p, 0.02, 0)
    g = b.node("GlobalAveragePool", [p], "gap")
    f = b.node("Flatten", [g], "flat")
    fq, fs = b.qdq(f, 0.01, 0)
    w, ws = b.weight("fc", RNG.normal(0, 0.3, (100, 64)), 0)
    b.node("Gemm", [fq, w, b.bias("fcb", RNG.normal(0, 0.1, 100), fs, ws)],
           "logits", transB=1)
    y, _ = b.qdq("logits", 0.02, 128)
    graph = helper.make_graph(
        b.nodes, "qdq_resnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, 3, 32, 32])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)],
        b.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, 0.02


def cpu_prefers_integers(runner):
    """The CPU backend's choice for this host: integer products where its
    kernel target has AVX512-VNNI with the 16-lane kernels."""
    r = subprocess.run([runner, "-print-target"], capture_output=True,
                       text=True)
    info = dict(line.split(": ", 1) for line in r.stdout.splitlines()
                if ": " in line)
    return ("avx512vnni" in info.get("extensions", "").split() and
            int(info.get("float-lanes", 0)) >= 16 and
            int(info.get("vector-registers", 0)) >= 32)


def run_model(runner, path, xin, out, backend, mode):
    return subprocess.run([runner, "-model=" + path, "-backend=" + backend,
                           "-input=x=" + xin, "-output-dir=" + out,
                           "-quantized-products=" + mode, "-dump-graph"],
                          capture_output=True, text=True)


def check_resnet(runner, work):
    """The resnet-style net within two output steps of onnxruntime on
    >= 99.9 % of elements, with the same top-1, in every mode."""
    d = os.path.join(work, "resnet")
    os.makedirs(d, exist_ok=True)
    m, step = build_resnet()
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    failures = []
    for seed in range(3):
        x = np.random.default_rng(100 + seed).uniform(
            -3, 3, (1, 3, 32, 32)).astype(np.float32)
        xin = os.path.join(d, "x%d.pb" % seed)
        onnx.save_tensor(numpy_helper.from_array(x, "x"), xin)
        ref = ort.InferenceSession(path, providers=[
            "CPUExecutionProvider"]).run(None, {"x": x})[0]
        for backend, mode in [("Interpreter", "integer"), ("CPU", "integer"),
                              ("CPU", "auto")]:
            out = os.path.join(d, "%s-%s-%d" % (backend, mode, seed))
            r = run_model(runner, path, xin, out, backend, mode)
            label = "resnet %s %s input %d" % (backend, mode, seed)
            if r.returncode != 0:
                failures.append("%s: %s" % (label, r.stderr.strip()))
                continue
            got = numpy_helper.to_array(onnx.load_tensor(
                os.path.join(out, "output_0.pb")))
            diff = np.abs(got.astype(np.float64) - ref) / step
            near = float((diff <= 2.01).mean())
            print("%s: %d IntConv, max %.2f steps, %.2f %% within 2, top-1 "
                  "%d vs %d" % (label, len(re.findall(r"= (Int|Requant)Conv\(",
                                               r.stdout)),
                                diff.max(), 100 * near, got.argmax(),
                                ref.argmax()))
            if near < 0.999 or got.argmax() != ref.argmax():
                failures.append("%s: %.2f %% within 2 steps, top-1 %d vs %d"
                                % (label, 100 * near, got.argmax(),
                                   ref.argmax()))
    return failures


def check_runtime_product(runner, work, cpu_int):
    """MatMul(Dequantize(a), Dequantize(b)) of two run-time operands: an
    IntMatMul when asked for integers, a float MatMul in auto mode on the
    CPU (no packed weights), within 1 output step of onnxruntime."""
    d = os.path.join(work, "runtime")
    os.makedirs(d, exist_ok=True)
    b = Builder()
    a, _ = b.qdq("x", 0.02, 128)
    v, _ = b.qdq("v", 0.03, 120)
    b.node("MatMul", [a, v], "pv")
    y, _ = b.qdq("pv", 0.05, 128)
    shapes = {"x": [2, 5, 24], "v": [2, 24, 6]}
    graph = helper.make_graph(
        b.nodes, "runtime_product",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
         for n, s in shapes.items()],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], b.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    feeds = {n: RNG.uniform(-2, 2, s).astype(np.float32)
             for n, s in shapes.items()}
    for n, t in feeds.items():
        onnx.save_tensor(numpy_helper.from_array(t, n),
                         os.path.join(d, n + ".pb"))
    ref = ort.InferenceSession(path, providers=[
        "CPUExecutionProvider"]).run(None, feeds)[0]
    failures = []
    for mode, want in [("integer", "IntMatMul"),
                       ("auto", "MatMul" if cpu_int else None)]:
        out = os.path.join(d, mode)
        r = subprocess.run([runner, "-model=" + path, "-backend=CPU",
                            "-output-dir=" + out, "-dump-graph",
                            "-quantized-products=" + mode] +
                           ["-input=%s=%s" % (n, os.path.join(d, n + ".pb"))
                            for n in feeds], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append("runtime %s: %s" % (mode, r.stderr.strip()))
            continue
        ops = [re.sub("^Requant", "Int", op)
               for op in re.findall(r"= (\w+)\(", r.stdout)]
        got = numpy_helper.to_array(onnx.load_tensor(
            os.path.join(out, "output_0.pb")))
        diff = float(np.abs(got.astype(np.float64) - ref).max()) / 0.05
        print("runtime product CPU %s: %s, max %.2f steps" % (
            mode, [o for o in ops if "MatMul" in o], diff))
        if want and ops.count(want) != 1:
            failures.append("runtime %s: no %s in %s" % (mode, want, ops))
        if diff > 1.01:
            failures.append("runtime %s: %.2f steps" % (mode, diff))
    return failures


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
    cpu_int = cpu_prefers_integers(runner)
    for backend, mode in [(b, m) for b in ["Interpreter", "CPU"]
                          for m in ["integer", "auto"]]:
        out = os.path.join(work, backend + "-" + mode)
        r = run_model(runner, path, xin, out, backend, mode)
        folds = mode == "integer" or (backend == "CPU" and cpu_int)
        backend += " " + mode
        if r.returncode != 0:
            failures.append("%s: %s" % (backend, r.stderr.strip()))
            continue
        # The CPU keeps the requantized products whole (RequantConv,
        # RequantMatMul), the Interpreter lowers them to IntConv/IntMatMul.
        ops = [re.sub("^Requant", "Int", op)
               for op in re.findall(r"= (\w+)\(", r.stdout)]
        want = ({"IntConv": 2, "IntMatMul": 2} if folds else
                {"IntConv": 0, "IntMatMul": 0})
        for op, n in want.items():
            if ops.count(op) != n:
                failures.append("%s: %d %s nodes, want %d" % (
                    backend, ops.count(op), op, n))
        left = [op for op in ops if op in ("Conv", "Gemm", "MatMul")]
        if left and folds:
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
    failures += check_runtime_product(runner, work, cpu_int)
    failures += check_resnet(runner, work)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
