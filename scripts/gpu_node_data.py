#!/usr/bin/env python3
"""gpu-test.sh helper: writes an ONNX node test's inputs (argv[1]/input_*.pb)
as argv[2]/in<i>.bin and its expected outputs (output_*.pb) as ref<i>.bin,
raw little-endian. Fails (exit 1) unless every output is float32, the only
kind gpu_run.py compares."""
import glob
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

src, out = sys.argv[1], sys.argv[2]


def ordered(pattern):
    files = glob.glob(os.path.join(src, pattern))
    return sorted(files, key=lambda f: int(re.findall(r"\d+", f)[-1]))


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


outputs = [load(p) for p in ordered("output_*.pb")]
if not outputs or any(y.dtype != np.float32 for y in outputs):
    sys.exit(1)
for i, p in enumerate(ordered("input_*.pb")):
    x = load(p)
    x.astype(x.dtype.newbyteorder("<")).tofile(os.path.join(out, "in%d.bin" % i))
for i, y in enumerate(outputs):
    y.astype("<f4").tofile(os.path.join(out, "ref%d.bin" % i))
