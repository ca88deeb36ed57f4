#!/usr/bin/env bash
# cli.compile-memory-bound: a model of four 64 MiB MatMul weights compiles
# to a CPU bundle within 2 x weights + 256 MiB of peak resident memory
# (scripts/compile-memory.sh exits 1 above it). With the Module's payloads
# held beside the constant image, and each weight's original beside its
# packed panels, the peak was 923 MiB against the bound of 768.
# Usage: compile_memory_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1 work=$2
mkdir -p "$work"
/usr/bin/python3 - "$work/four_matmuls.onnx" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
n = 4096
rs = np.random.RandomState(0)
nodes, inits, x = [], [], 'x'
for i in range(4):
    w = (rs.rand(n, n).astype(np.float32) - 0.5) / 64
    inits.append(numpy_helper.from_array(w, 'w%d' % i))
    y = 'y' if i == 3 else 'h%d' % i
    nodes.append(helper.make_node('MatMul', [x, 'w%d' % i], [y]))
    x = y
g = helper.make_graph(
    nodes, 'four_matmuls',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, n])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, n])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]),
          sys.argv[1])
PY
status=0
"$(dirname "$0")/../../scripts/compile-memory.sh" "$build" \
  "$work/four_matmuls.onnx" || status=$?
rm -f "$work/four_matmuls.onnx"
exit $status
