#!/usr/bin/env python3
"""compare.py REF_DIR OUT_PREFIX N: compares bundle outputs OUT_PREFIXk.bin
with the Interpreter's REF_DIR/output_k.pb for k < N.

Tolerance: max|d| <= 1e-4 * max(1, max|ref|). Both sides compute in float32
but sum in different orders (blocked conv/matmul, FMA contraction), so they
agree to a few ulps of the largest magnitudes involved; 1e-4 relative is
far above that and far below any real bug."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ref_dir, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ok = True
for k in range(n):
    ref = numpy_helper.to_array(onnx.load_tensor("%s/output_%d.pb" % (ref_dir, k)))
    got = np.fromfile("%s%d.bin" % (prefix, k), dtype=ref.dtype).reshape(ref.shape)
    d = float(np.max(np.abs(got.astype(np.float64) - ref))) if ref.size else 0.0
    tol = 1e-4 * max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
    status = "ok" if d <= tol else "MISMATCH"
    ok &= d <= tol
    print("output %d: max|d| = %.3g (tol %.3g) %s" % (k, d, tol, status))
sys.exit(0 if ok else 1)
