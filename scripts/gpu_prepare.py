#!/usr/bin/env python3
"""gpu-test.sh helper: writes ONNX model argv[1] with batch size argv[2] to
argv[4] (the first dim of every input and output set to the batch), and for
each input i the spec argv[3]/in<i>.spec of a deterministic input
(gpu_inputs.py) plus the input itself as argv[3]/in<i>.bin (raw
little-endian; prepare deletes it after computing the references)."""
import os
import sys

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_inputs  # noqa: E402

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
kinds = {1: "float32", 6: "int32", 7: "int64", 9: "bool"}
n = 0
for vi in m.graph.input:
    if vi.name in inits:
        continue
    shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    spec = "%s %s %d" % (kinds[vi.type.tensor_type.elem_type],
                         ",".join(map(str, shape)) or "-", 8 + n)
    with open(os.path.join(out, "in%d.spec" % n), "w") as f:
        f.write(spec + "\n")
    gpu_inputs.make(spec).tofile(os.path.join(out, "in%d.bin" % n))
    n += 1
