#!/bin/bash
# Regenerates docs/onnx-support.md with the conformance runner, every input
# fed at run time. The report is also the floor the onnx.conformance.*
# ctests hold: it is rewritten when no pass count falls below it (counts
# that rise raise the floor); when one falls, the runner prints the tests
# that moved from pass and leaves the record alone unless -accept-drop is
# given. -freeze-inputs shows which unsupported tests would pass with their
# shape inputs frozen to constants (they are not counted as passes).
# Usage: scripts/onnx-support.sh [BUILD_DIR] [extra onnx-conformance flags]
#        scripts/onnx-support.sh --cuda [BUILD_DIR]: the CUDA backend's host
#        emulation (cuBLASLt/cuDNN stand-ins, and generated kernels only)
#        into docs/onnx-support-cuda.md (no floor: over an hour on 2 cores).
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--cuda" ]; then
  BUILD=${2:-$SRC/build}
  exec "$BUILD/bin/onnx-conformance" -jobs=2 -timeout=300 \
    -backends=CUDAHostEmu,CUDAHostEmuGen \
    -known-failures="$SRC/tests/onnx/known_failures.txt" \
    -report="$SRC/docs/onnx-support-cuda.md"
fi
BUILD=${1:-$SRC/build}
shift || true
"$BUILD/bin/onnx-conformance" -jobs=2 -backends=Interpreter,CPU \
  -known-failures="$SRC/tests/onnx/known_failures.txt" \
  -floor="$SRC/docs/onnx-support.md" \
  -report="$SRC/docs/onnx-support.md" "$@"
