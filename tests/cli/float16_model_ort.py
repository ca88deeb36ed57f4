#!/usr/bin/env python3
"""A model stored in float16 against onnxruntime.

Usage: float16_model_ort.py MODEL_RUNNER WORKDIR

Exporters' fp16 conversion stores inputs, weights and every intermediate
in float16. Ember has no float16 compute kernels: widen-half runs each op
on Float32 operands and rounds its result to float16, the rounding point
the model states. The model (Conv, Relu, MaxPool, Gemm, LayerNormalization,
Softmax, Add, Mul, a MatMul of two run-time operands) runs on the
Interpreter and the CPU against onnxruntime, which also computes most of
these in float32 between float16 tensors; results must be within 4 float16
steps at the largest output (4 * 2^-10 relative: each backend's sums run
in another order, and one rounding to float16 may land on the other side).
Random model-runner inputs of float16 must not be all zeros. A float32
model with bfloat16 initializers (Cast to float before a MatMul) must
import and match onnxruntime to 1e-6 of the largest output.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper as h, numpy_helper as nh

RNG = np.random.default_rng(16)
ort.set_default_logger_severity(3)
H = T.FLOAT16


def f16(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float16)


def build():
    consts = {"w": f16(8, 3, 3, 3, scale=0.3), "b": f16(8),
              "g": f16(16, 32, scale=0.2), "gb": f16(16),
              "ln_s": f16(16), "ln_b": f16(16), "half": np.float16(0.5)}
    nodes = [
        h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c"], ["r"]),
        h.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2],
                    strides=[2, 2]),
        h.make_node("Flatten", ["p"], ["f"]),
        h.make_node("Gemm", ["f", "g", "gb"], ["m"], transB=1),
        h.make_node("LayerNormalization", ["m", "ln_s", "ln_b"], ["n"]),
        h.make_node("Mul", ["n", "half"], ["nh"]),
        h.make_node("Transpose", ["nh"], ["nt"]),
        h.make_node("MatMul", ["nh", "nt"], ["gram"]),
        h.make_node("Softmax", ["gram"], ["s"]),
        h.make_node("Add", ["s", "s"], ["y"]),
    ]
    g = h.make_graph(nodes, "fp16", [h.make_tensor_value_info(
        "x", H, [2, 3, 4, 4])], [h.make_tensor_value_info("y", H, [2, 2])],
        [nh.from_array(v, n) for n, v in consts.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def bf16_weights_model():
    w = RNG.standard_normal((8, 4)).astype(np.float32)
    bits = (w.view(np.uint32) >> 16).astype(np.uint16)
    wb = h.make_tensor("wb", T.BFLOAT16, [8, 4], bits.tobytes(), raw=True)
    g = h.make_graph(
        [h.make_node("Cast", ["wb"], ["wf"], to=T.FLOAT),
         h.make_node("MatMul", ["x", "wf"], ["y"])], "bf16w",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 4])], [wb])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def check_bf16_weights(runner, work):
    path = os.path.join(work, "bf16w.onnx")
    onnx.save(bf16_weights_model(), path)
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    xf = os.path.join(work, "xb.pb")
    with open(xf, "wb") as fh:
        fh.write(nh.from_array(x, "x").SerializeToString())
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    out = os.path.join(work, "bf16w.out")
    p = subprocess.run([runner, "-model=" + path, "-backend=CPU",
                        "-input=x=" + xf, "-output-dir=" + out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode:
        print("bfloat16 weights FAILED:", p.stdout.strip())
        return 1
    got = nh.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
    rel = np.abs(got - want).max() / np.abs(want).max()
    print("bfloat16 weights", "ok" if rel <= 1e-6 else "FAIL", rel)
    return int(not rel <= 1e-6)


def main():
    runner, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "fp16.onnx")
    onnx.save(build(), path)
    x = f16(2, 3, 4, 4)
    xf = os.path.join(work, "x.pb")
    with open(xf, "wb") as fh:
        fh.write(nh.from_array(x, "x").SerializeToString())
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    fails = 0
    for backend in ["Interpreter", "CPU"]:
        out = os.path.join(work, backend)
        p = subprocess.run([runner, "-model=" + path, "-backend=" + backend,
                            "-input=x=" + xf, "-output-dir=" + out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if p.returncode:
            print(backend, "FAILED:", p.stdout.strip())
            fails += 1
            continue
        got = nh.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
        err = np.abs(got.astype(np.float32) - want.astype(np.float32)).max()
        rel = err / np.abs(want.astype(np.float32)).max()
        ok = got.dtype == np.float16 and rel <= 4 * 2.0 ** -10
        print("%-11s %s max|d|/max|y| %.3g" % (backend, "ok" if ok else
                                                "FAIL", rel))
        fails += not ok
    p = subprocess.run([runner, "-model=" + path, "-backend=CPU"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    vals = p.stdout.split("float16<2 x 2>:")[-1].split()[:4]
    ok = p.returncode == 0 and any(float(v) != 0 for v in vals)
    print("random float16 inputs", "ok" if ok else "FAIL", vals)
    fails += not ok
    fails += check_bf16_weights(runner, work)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
