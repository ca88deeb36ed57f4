#!/usr/bin/env python3
"""The LayerNorm fusion test's models and its comparison.

export OUTDIR (Debian's /usr/bin/python3, which has torch): writes
  OUTDIR/ln17.onnx, torch.nn.LayerNorm(256) exported at opset 17 (the
  LayerNormalization op, which the importer composes), OUTDIR/ln16.onnx,
  the same at opset 16 (ReduceMean, Sub, Pow, Sqrt, Div, Mul, Add), both
  with random scale and bias (also saved as OUTDIR/weight.npy, bias.npy), and two [64, 256] inputs: OUTDIR/input.pb
  (normal values) and OUTDIR/offset.pb (normal values plus 1000: rows
  whose mean is large against their spread, where sums of x and x^2
  cancel).
reference OUTDIR (the venv, which has onnxruntime): writes
  OUTDIR/NAME.INPUT.output.pb: from onnxruntime for the plain input, and
  for the offset input in float64 with numpy from the model's scale and
  bias (onnxruntime's float32 E[x^2] - E[x]^2 loses the whole variance to
  cancellation there: its rows are off by up to 5).
compare GOT.pb REF.pb NAME BACKEND: passes when
  max|got - ref| <= 2e-5 * max|ref|. The outputs are of order one; a
  float32 row statistic over 256 elements is within about 256 ulps of
  exact in the worst case (1.5e-5 relative), typically far less, and the
  offset input's elements themselves carry an ulp of 6e-5 against a spread
  of one, which both computations see alike.
"""
import os
import sys

import numpy as np

MODELS = ("ln17", "ln16")
INPUTS = ("input", "offset")


def export(out):
    import onnx
    import onnx.numpy_helper
    import torch
    torch.manual_seed(0)
    ln = torch.nn.LayerNorm(256)
    with torch.no_grad():
        ln.weight.normal_()
        ln.bias.normal_()
    np.save(os.path.join(out, "weight.npy"), ln.weight.detach().numpy())
    np.save(os.path.join(out, "bias.npy"), ln.bias.detach().numpy())
    x = torch.zeros(64, 256)
    for name, opset in (("ln17", 17), ("ln16", 16)):
        torch.onnx.export(ln, (x,), os.path.join(out, name + ".onnx"),
                          opset_version=opset, input_names=["x"],
                          output_names=["y"])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    for name, v in (("input", x), ("offset", x + np.float32(1000))):
        t = onnx.numpy_helper.from_array(v, "x")
        with open(os.path.join(out, name + ".pb"), "wb") as f:
            f.write(t.SerializeToString())


def load(path):
    import onnx
    import onnx.numpy_helper
    return onnx.numpy_helper.to_array(onnx.load_tensor(path))


def exact(out, x):
    """LayerNorm over the last axis in float64, eps 1e-5, with the scale and
    bias that export saved beside the models."""
    w = np.load(os.path.join(out, "weight.npy")).astype(np.float64)
    b = np.load(os.path.join(out, "bias.npy")).astype(np.float64)
    x = x.astype(np.float64)
    d = x - x.mean(axis=-1, keepdims=True)
    y = d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * w + b
    return y.astype(np.float32)


def reference(out):
    import onnx.numpy_helper
    import onnxruntime as ort
    for name in MODELS:
        path = os.path.join(out, name + ".onnx")
        s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        for inp in INPUTS:
            x = load(os.path.join(out, inp + ".pb"))
            if inp == "offset":
                y = exact(out, x)
            else:
                y = s.run(None, {"x": x})[0]
            path = os.path.join(out, "%s.%s.output.pb" % (name, inp))
            with open(path, "wb") as f:
                f.write(onnx.numpy_helper.from_array(y, "y")
                        .SerializeToString())


def compare(got_p, ref_p, name, backend):
    got = load(got_p).astype(np.float64)
    ref = load(ref_p).astype(np.float64)
    err = float(np.abs(got - ref).max())
    bound = 2e-5 * float(np.abs(ref).max())
    ok = err <= bound
    print("%s %s on %s: max|d| %.3g, bound %.3g" %
          ("PASS" if ok else "FAIL", name, backend, err, bound))
    return 0 if ok else 1


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "export":
        export(sys.argv[2])
    elif cmd == "reference":
        reference(sys.argv[2])
    else:
        sys.exit(compare(*sys.argv[2:6]))
