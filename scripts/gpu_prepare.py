#!/usr/bin/env python3
"""gpu-test.sh helper: writes ONNX model argv[1] with batch size argv[2] to
argv[4] (the first dim of every input and output set to the batch) and
seeded random inputs argv[3]/in<i>.bin (raw little-endian) for it."""
import os
import sys

import numpy as np
import onnx

src, batch, out, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
m = onnx.load(src)
del m.graph.value_info[:]
inits = {i.name for i in m.graph.initializer}
for vi in list(m.graph.input) + list(m.graph.output):
    if vi.name in inits:
        continue
    dims = vi.type.tensor_type.shape.dim
    if dims:
        dims[0].ClearField("dim_param")
        dims[0].dim_value = batch
onnx.save(m, dst)
rng = np.random.default_rng(8)
kinds = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_}
n = 0
for vi in m.graph.input:
    if vi.name in inits:
        continue
    shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    dt = kinds[vi.type.tensor_type.elem_type]
    x = rng.standard_normal(shape).astype(dt)
    x.tofile(os.path.join(out, "in%d.bin" % n))
    n += 1
