#!/usr/bin/env python3
"""The GELU fusion test's models and its comparison.

export OUTDIR (Debian's /usr/bin/python3, which has torch): writes
  OUTDIR/gelu_erf.onnx and OUTDIR/gelu_tanh.onnx, torch.nn.GELU() and
  GELU(approximate='tanh') exported at opset 17 (as arithmetic: Erf or Tanh
  with Mul/Add/Div/Pow around it), and OUTDIR/input.pb, a [64, 256] input
  of normal values scaled by 4 with exact zeros, tiny and large values.
reference OUTDIR (the venv, which has onnxruntime): writes
  OUTDIR/NAME.output.pb from onnxruntime.
compare GOT.pb REF.pb INPUT.pb NAME BACKEND: passes when
  |got - ref| <= 4e-7 * max(1, |x|) elementwise, NaN where ref is NaN. The
  bound is about 3 float ulps of max(1, |x|): onnxruntime and the unfused
  graph compute 1 + erf (or 1 + tanh) in float, which loses up to an ulp of
  1 where x < 0, and Ember's inline erf/tanh are within 2 ulps
  (docs/Math.md); for x >= 0 the result is about x, so the bound is also
  a few ulps of the result there.
"""
import os
import sys

import numpy as np


def export(out):
    import onnx
    import onnx.numpy_helper
    import torch
    for name, approx in (("gelu_erf", "none"), ("gelu_tanh", "tanh")):
        x = torch.zeros(64, 256)
        torch.onnx.export(torch.nn.GELU(approximate=approx), (x,),
                          os.path.join(out, name + ".onnx"), opset_version=17,
                          input_names=["x"], output_names=["y"])
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 256)) * 4).astype(np.float32)
    x.flat[:8] = [0, -0.0, 1e-30, -1e-30, 30, -30, 1e4, -1e4]
    t = onnx.numpy_helper.from_array(x, "x")
    with open(os.path.join(out, "input.pb"), "wb") as f:
        f.write(t.SerializeToString())


def load(path):
    import onnx
    import onnx.numpy_helper
    return onnx.numpy_helper.to_array(onnx.load_tensor(path))


def reference(out):
    import onnx.numpy_helper
    import onnxruntime as ort
    x = load(os.path.join(out, "input.pb"))
    for name in ("gelu_erf", "gelu_tanh"):
        s = ort.InferenceSession(os.path.join(out, name + ".onnx"),
                                 providers=["CPUExecutionProvider"])
        y = s.run(None, {"x": x})[0]
        with open(os.path.join(out, name + ".output.pb"), "wb") as f:
            f.write(onnx.numpy_helper.from_array(y, "y").SerializeToString())


def compare(got_p, ref_p, x_p, name, backend):
    got = load(got_p).astype(np.float64)
    ref = load(ref_p).astype(np.float64)
    x = load(x_p).astype(np.float64)
    bound = 4e-7 * np.maximum(1.0, np.abs(x))
    nan_ok = np.array_equal(np.isnan(got), np.isnan(ref))
    err = np.abs(np.nan_to_num(got - ref))
    worst = float((err / bound).max())
    ok = nan_ok and worst <= 1
    print("%s %s on %s: max|d| %.3g, worst |d| / bound %.3f%s" %
          ("PASS" if ok else "FAIL", name, backend, float(err.max()), worst,
           "" if nan_ok else ", NaN placement differs"))
    return 0 if ok else 1


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "export":
        export(sys.argv[2])
    elif cmd == "reference":
        reference(sys.argv[2])
    else:
        sys.exit(compare(*sys.argv[2:7]))
