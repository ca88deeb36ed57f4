#!/usr/bin/env bash
# Minimizes what the fuzz campaigns grew into the committed corpus:
#   scripts/fuzz-corpus.sh [TARGET...]   (default: all five)
# For each target, libFuzzer's -merge=1 keeps the smallest set of inputs of
# the grown corpus (build-asan/fuzz/TARGET/corpus), the committed corpus and
# the seeds that together reach every coverage feature any of them reaches,
# and writes it to tests/fuzz/corpus/TARGET.tar.xz, which scripts/fuzz.sh
# (and so CI's smoke) starts from. Run scripts/fuzz.sh first so that the
# build, the seeds and a grown corpus exist.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
source scripts/sanitizer-env.sh
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(import tensor ir graph model)
for target in "${TARGETS[@]}"; do
  bin=$BUILD_DIR/bin/ember-fuzz-$target
  work=$BUILD_DIR/fuzz/$target
  if [ ! -x "$bin" ] || [ ! -d "$work/corpus" ]; then
    echo "fuzz-corpus.sh: run 'scripts/fuzz.sh $target SECONDS' first (no $bin or $work/corpus)" >&2
    exit 2
  fi
  mkdir -p "$BUILD_DIR/fuzz/committed-$target" "$BUILD_DIR/fuzz/seeds-$target"
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  max_len=
  [ "$target" = tensor ] && max_len=-max_len=16384
  # shellcheck disable=SC2086
  "$bin" -merge=1 -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=30 \
    $max_len "$out" "$work/corpus" "$BUILD_DIR/fuzz/committed-$target" \
    "$BUILD_DIR/fuzz/seeds-$target" >"$work/merge.log" 2>&1
  tar -C "$out" -cJf "tests/fuzz/corpus/$target.tar.xz" .
  echo "fuzz-corpus.sh: $target: $(find "$out" -type f | wc -l) inputs," \
    "$(stat -c %s "tests/fuzz/corpus/$target.tar.xz") bytes compressed"
  rm -rf "$out"
  trap - EXIT
done
