#!/usr/bin/env bash
# Builds Ember and runs every test with ctest.
#   scripts/test.sh                       Release build in build/, every test
#   scripts/test.sh --sanitize            ASan+UBSan build (clang-19) in
#                                         build-asan/, every test
#   scripts/test.sh --sanitize --subset   the same, but only the unit tests,
#                                         the CLI, bad-model and determinism
#                                         tests (what CI runs)
#   BUILD_DIR=dir scripts/test.sh
#   EMBER_WERROR=ON scripts/test.sh       warnings are errors (what CI runs;
#                                         see .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SANITIZE=0
SUBSET=0
for arg in "$@"; do
  case $arg in
  --sanitize) SANITIZE=1 ;;
  --subset) SUBSET=1 ;;
  *) echo "usage: $0 [--sanitize [--subset]]" >&2; exit 2 ;;
  esac
done
if [ $SUBSET = 1 ] && [ $SANITIZE = 0 ]; then
  echo "$0: --subset goes with --sanitize" >&2; exit 2
fi

bash scripts/setup.sh

JOBS=${JOBS:-$(nproc)}
export CCACHE_BASEDIR="$ROOT"
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}

if [ $SANITIZE = 0 ]; then
  BUILD_DIR=${BUILD_DIR:-build}
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    ${EMBER_WERROR:+-DEMBER_WERROR=$EMBER_WERROR} >/dev/null
  cmake --build "$BUILD_DIR" -j "$JOBS"
  cd "$BUILD_DIR"
  ctest --output-on-failure -j "$JOBS"
  exit 0
fi

# Sanitizer build: the same tree as scripts/fuzz.sh uses, so the libraries
# are compiled once for both (they carry libFuzzer coverage hooks too).
BUILD_DIR=${BUILD_DIR:-build-asan}
source scripts/sanitizer-env.sh
configure_sanitizer_build "$BUILD_DIR"
if [ $SUBSET = 1 ]; then
  cmake --build "$BUILD_DIR" -j "$JOBS" --target ember-unit-tests model-runner
  "$BUILD_DIR/bin/ember-unit-tests" --gtest_brief=1
  cd "$BUILD_DIR"
  ctest --output-on-failure -j "$JOBS" \
    -R '^(bad-models|cli\.model-runner|determinism\.)'
else
  cmake --build "$BUILD_DIR" -j "$JOBS"
  cd "$BUILD_DIR"
  ctest --output-on-failure -j "$JOBS"
fi
