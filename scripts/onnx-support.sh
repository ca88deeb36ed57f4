#!/bin/bash
# Regenerates docs/onnx-support.md with the conformance runner.
# Usage: scripts/onnx-support.sh [BUILD_DIR] [extra onnx-conformance flags]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
shift || true
"$BUILD/bin/onnx-conformance" -jobs=2 \
  -known-failures="$SRC/tests/onnx/known_failures.txt" \
  -report="$SRC/docs/onnx-support.md" "$@"
