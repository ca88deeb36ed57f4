#!/usr/bin/env python3
"""MatMul forms and Dropout against onnxruntime, through model-runner.

Usage: matmul_forms_ort.py MODEL_RUNNER WORKDIR

Builds tiny ONNX models (a Linear on rank-3 and rank-4 activations, batch
dims broadcast on both sides, attention scores Q * K^T with K transposed by a
Transpose node, Gemm with transB, Dropout with ratio 0 in training mode),
runs each on the Interpreter and the CPU and compares with onnxruntime:
max|d| <= 1e-5 * max(1, max|ref|) (float32 sums over K <= 64 terms in
different orders). Also checks the CPU's lowered graph (-dump-graph): no MatMul operand is made
by a Broadcast, Tile or Transpose node (a copy), and each Linear became a
MatMul with a 2-D result.
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(7)
# float32 sums over K <= 64 terms in different orders.
TOLERANCE = 1e-5


def rand(*dims):
    return RNG.uniform(-1, 1, dims).astype(np.float32)


def model(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
         for n, a in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def cases():
    """(name, model, inputs, wants a 2-D MatMul)"""
    x3, w3 = rand(50, 1, 64), rand(64, 96)
    yield ("linear_rank3", model(
        "l3", [helper.make_node("MatMul", ["x", "w"], ["m"]),
               helper.make_node("Add", ["m", "b"], ["y"])],
        [("x", x3)], [("y", TensorProto.FLOAT)],
        [("w", w3), ("b", rand(96))]), {"x": x3}, True)
    x4 = rand(1, 7, 7, 32)
    yield ("linear_rank4", model(
        "l4", [helper.make_node("MatMul", ["x", "w"], ["y"])],
        [("x", x4)], [("y", TensorProto.FLOAT)], [("w", rand(32, 48))]),
        {"x": x4}, True)
    a, b = rand(2, 1, 5, 8), rand(1, 3, 8, 6)
    yield ("broadcast_both", model(
        "bc", [helper.make_node("MatMul", ["a", "b"], ["y"])],
        [("a", a), ("b", b)], [("y", TensorProto.FLOAT)]),
        {"a": a, "b": b}, False)
    q, k = rand(2, 4, 10, 16), rand(2, 4, 12, 16)
    yield ("scores_qkt", model(
        "qk", [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
               helper.make_node("MatMul", ["q", "kt"], ["y"])],
        [("q", q), ("k", k)], [("y", TensorProto.FLOAT)]),
        {"q": q, "k": k}, False)
    g, wb = rand(4, 16), rand(24, 16)
    yield ("gemm_transb", model(
        "gt", [helper.make_node("Gemm", ["a", "w", "c"], ["y"], transB=1)],
        [("a", g), ("w", wb)], [("y", TensorProto.FLOAT)], [("c", rand(24))]),
        {"a": g, "w": wb}, True)
    d = rand(3, 5)
    ratio = numpy_helper.from_array(np.array(0.0, np.float32), "r")
    train = numpy_helper.from_array(np.array(True), "t")
    m = model("do", [helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"]),
                     helper.make_node("Relu", ["y"], ["z"])],
              [("x", d)], [("z", TensorProto.FLOAT),
                           ("mask", TensorProto.BOOL)])
    m.graph.initializer.extend([ratio, train])
    yield ("dropout_ratio0_training", m, {"x": d}, False)


def run(runner, backend, path, feeds, outdir, dump):
    args = [runner, "-model=" + path, "-backend=" + backend,
            "-output-dir=" + outdir]
    for name in feeds:
        args.append("-input=%s=%s" % (name, os.path.join(
            os.path.dirname(path), name + ".pb")))
    if dump:
        args.append("-dump-graph")
    return subprocess.run(args, capture_output=True, text=True)


def check_graph(name, text, want_2d):
    """Fails when a MatMul operand is made by a Broadcast, Tile or Transpose
    (through free Reshape views), or a Linear did not become a 2-D MatMul."""
    producer = {}
    for op_name, op, args in re.findall(r"%(\S+) = (\w+)\(([^)]*)\)", text):
        producer[op_name] = (op, [a.strip().lstrip("%")
                                  for a in args.split(",")])
    for op, args in list(producer.values()):
        if op != "MatMul":
            continue
        for a in args:
            while a in producer and producer[a][0] == "Reshape":
                a = producer[a][1][0]
            if a in producer and producer[a][0] in ("Broadcast", "Tile",
                                                    "Transpose"):
                return "%s: a MatMul operand is a %s in the CPU graph" % (
                    name, producer[a][0])
    dims = re.findall(r"= MatMul\(.*: float<([^>]*)>", text)
    if want_2d and not any(d.count(" x ") == 1 for d in dims):
        return "%s: no 2-D MatMul in the CPU graph (%s)" % (name, dims)
    return None


def check_all(runner, work, all_cases, graph_check):
    """Runs each (name, model, feeds, want) of \a all_cases on the
    Interpreter and the CPU against onnxruntime; graph_check(name, CPU
    -dump-graph text, want) returns why the lowered graph is wrong, or None.
    Returns the exit status."""
    failures = []
    for name, m, feeds, want_2d in all_cases:
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        onnx.save(m, path)
        for n, v in feeds.items():
            onnx.save_tensor(numpy_helper.from_array(v, n),
                             os.path.join(d, n + ".pb"))
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        refs = sess.run(None, feeds)
        for backend in ["Interpreter", "CPU"]:
            out = os.path.join(d, backend)
            r = run(runner, backend, path, feeds, out, backend == "CPU")
            if r.returncode != 0:
                failures.append("%s on %s: %s" % (name, backend,
                                                  r.stderr.strip()))
                continue
            if backend == "CPU":
                why = graph_check(name, r.stdout, want_2d)
                if why:
                    failures.append(why)
            for i, ref in enumerate(refs):
                got = numpy_helper.to_array(onnx.load_tensor(
                    os.path.join(out, "output_%d.pb" % i)))
                if got.shape != ref.shape or got.dtype != ref.dtype:
                    failures.append("%s on %s: output %d is %s %s, want %s %s"
                                    % (name, backend, i, got.dtype, got.shape,
                                       ref.dtype, ref.shape))
                    continue
                err = float(np.abs(got.astype(np.float64) - ref).max())
                tol = TOLERANCE * max(1.0, float(np.abs(ref).max()))
                print("%s %s on %s output %d: max|d| %.3g (tol %.3g)" %
                      ("PASS" if err <= tol else "FAIL", name, backend, i,
                       err, tol))
                if err > tol:
                    failures.append("%s on %s: max|d| %g" % (name, backend,
                                                             err))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


def main():
    runner, work = sys.argv[1:3]
    return check_all(runner, work, cases(), check_graph)


if __name__ == "__main__":
    sys.exit(main())
