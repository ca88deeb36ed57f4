#!/usr/bin/env bash
# Runs one libFuzzer target for a number of seconds, single-threaded.
#   scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags...]
# TARGET: import (ember-fuzz-import: ONNX bytes -> import -> lowering -> IR
# -> memory plan). The build is build-asan/ (shared with test.sh --sanitize);
# the corpus grows in build-asan/fuzz/TARGET/corpus, seeded from the ONNX
# test data models; crashes land in build-asan/fuzz/TARGET/artifacts.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
SECS=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
shift 2
TARGET=${TARGET#ember-fuzz-}
BIN_NAME=ember-fuzz-$TARGET

bash scripts/setup.sh >/dev/null
export CCACHE_BASEDIR=$(pwd)
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
BUILD_DIR=${BUILD_DIR:-build-asan}
source scripts/sanitizer-env.sh
configure_sanitizer_build "$BUILD_DIR"
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" --target "$BIN_NAME"

WORK=$BUILD_DIR/fuzz/$TARGET
SEEDS=$BUILD_DIR/fuzz/seeds-onnx
mkdir -p "$WORK/corpus" "$WORK/artifacts" "$SEEDS"
if [ -z "$(ls -A "$SEEDS")" ]; then
  i=0
  while IFS= read -r f; do
    cp "$f" "$SEEDS/seed-$i.onnx"; i=$((i+1))
  done < <(find /usr/share/libonnx-testdata/data -name model.onnx | sort)
  cp models/digits/digits.onnx "$SEEDS/digits.onnx"
fi
# Leak checking stays on; a seconds budget, 2 GiB of memory, 10 s per input.
exec "$BUILD_DIR/bin/$BIN_NAME" -max_total_time="$SECS" -rss_limit_mb=2048 \
  -malloc_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$WORK/artifacts/" "$@" "$WORK/corpus" "$SEEDS"
