#!/usr/bin/env python3
"""Compares an Ember output with onnxruntime's for one zoo model.

Usage: compare.py GOT.pb REF.pb NAME BACKEND SECONDS
Passes when max|got - ref| <= 1e-4 * max|ref| and the top-1 classes agree.
The bound is relative to the output scale because logits of these random-
weight networks are O(1) and float32 accumulation order differs between
Ember's kernels and onnxruntime's (measured errors are ~1e-6 of max|ref|).
"""
import sys

import numpy as np
import onnx
import onnx.numpy_helper


def main():
    got_p, ref_p, name, backend, secs = sys.argv[1:6]
    got = onnx.numpy_helper.to_array(onnx.load_tensor(got_p)).astype(np.float64)
    ref = onnx.numpy_helper.to_array(onnx.load_tensor(ref_p)).astype(np.float64)
    if got.shape != ref.shape:
        print("FAIL %s on %s: shape %s, expected %s" %
              (name, backend, got.shape, ref.shape))
        return 1
    err = float(np.abs(got - ref).max())
    scale = float(np.abs(ref).max())
    top_ok = int(got.argmax()) == int(ref.argmax())
    ok = err <= 1e-4 * scale and top_ok
    print("%s %s on %s: max|d| %.3g = %.3g of max|ref| %.3g, top-1 %s, "
          "run %s s" % ("PASS" if ok else "FAIL", name, backend, err,
                        err / scale if scale else 0.0, scale,
                        "equal" if top_ok else "DIFFERS", secs))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
