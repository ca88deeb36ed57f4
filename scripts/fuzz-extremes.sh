#!/usr/bin/env bash
# The extremes sweep: every integer attribute, graph-input and graph-output
# dim and small integer constant of the ONNX node-test models, the
# hand-made models and the model seeds, set one at a time to an extreme
# (int32/int64 limits, -1, 0, 2^40; tests/fuzz/extremes.py), each copy run
# once through ember-fuzz-model (import, Interpreter pipeline, memory plan,
# and a run when small) under ASan+UBSan. Deterministic, unlike the 60 s
# smokes: it reaches every such number every time. Exits 1 listing each
# failing file.
#   scripts/fuzz-extremes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
source scripts/sanitizer-env.sh
build_fuzz_targets "$BUILD_DIR" ember-fuzz-model
OUT=$BUILD_DIR/fuzz/extremes
rm -rf "$OUT"
mkdir -p "$OUT"
echo "fuzz-extremes: $(.venv/bin/python tests/fuzz/extremes.py "$OUT" \
  /usr/share/libonnx-testdata/data/node tests/onnx/handmade \
  tests/fuzz/model-seeds) inputs"
exec .venv/bin/python tests/fuzz/run_inputs.py "$BUILD_DIR/bin/ember-fuzz-model" \
  "$OUT" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10
