#!/usr/bin/env python3
"""onnxruntime references and the comparison for tests/transformers.

    compare.py reference DIR NAME
        runs DIR/NAME.onnx on DIR/NAME.input_K.pb with onnxruntime (CPU,
        one thread, graph optimizations off: its plain kernels) and writes
        DIR/NAME.output.pb
    compare.py check GOT.pb REF.pb NAME BACKEND SECONDS [REL]
        passes when max|got - ref| <= REL * max|ref| (REL: 1e-4; 3e-2 for
        -precision=bf16, whose MatMul operands carry 8 significant bits)

The bound is relative to the output scale: these random-weight models end in
a LayerNorm or a classifier with outputs of order one, and float32 sums in a
different order (Ember's blocked kernels against onnxruntime's) differ by
2e-7 to 1e-6 of the scale on them, the 12-layer benchmark models included;
an Erf off by 0.1 % already fails (2e-4), and a wrong mask, broadcast or
activation shows up as an error of order one.
"""
import glob
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh


def reference(d, name):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(os.path.join(d, name + ".onnx"), so,
                                providers=["CPUExecutionProvider"])
    feed = {}
    for path in sorted(glob.glob(os.path.join(d, name + ".input_*.pb"))):
        t = onnx.load_tensor(path)
        feed[t.name] = nh.to_array(t)
    (y,) = sess.run(None, feed)
    with open(os.path.join(d, name + ".output.pb"), "wb") as f:
        f.write(nh.from_array(y, "output").SerializeToString())
    print("%s: onnxruntime %s, output %s, max|y| %.4g" %
          (name, ort.__version__, y.shape, np.abs(y).max()))
    return 0


def check(got_p, ref_p, name, backend, secs, rel="1e-4"):
    got = nh.to_array(onnx.load_tensor(got_p)).astype(np.float64)
    ref = nh.to_array(onnx.load_tensor(ref_p)).astype(np.float64)
    if got.shape != ref.shape:
        print("FAIL %s on %s: shape %s, expected %s" %
              (name, backend, got.shape, ref.shape))
        return 1
    err = float(np.abs(got - ref).max())
    scale = float(np.abs(ref).max())
    ok = err <= float(rel) * scale
    print("%s %s on %s: max|d| %.3g = %.3g of max|ref| %.3g, run %s s" %
          ("PASS" if ok else "FAIL", name, backend, err,
           err / scale if scale else 0.0, scale, secs))
    return 0 if ok else 1


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "reference":
        return reference(sys.argv[2], sys.argv[3])
    if len(sys.argv) in (7, 8) and sys.argv[1] == "check":
        return check(*sys.argv[2:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
