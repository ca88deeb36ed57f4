#!/usr/bin/env bash
# The threaded-bundle tests under ThreadSanitizer: the worker-pool test
# (tests/bundles/pool_bundle.c: changing thread counts, more threads than
# cores, NAME_threads_release, two callers at once, fork after start) and
# the soak (tests/bundles/soak_bundle.c: several callers of NAME_mt with
# their own regions and one shared constant region), built with clang-19
# -fsanitize=thread against CPU bundles of the se-blocks test model and,
# when ZOO_DIR has it, squeezenet1_1. Any ThreadSanitizer report fails.
#
# What TSan sees: the drivers, the libc calls the bundle makes (memcpy,
# memset) and the pthread calls of its worker pool (create, join, mutex,
# condition variable), which the TSan runtime intercepts. The bundle's own
# loads, stores and atomics come from LLVM without TSan instrumentation,
# so a race inside a kernel is out of its sight (the bit-exact comparisons
# of the same tests catch its effects).
#
# Usage: scripts/tsan-bundles.sh [BUILD_DIR] [ZOO_DIR] [SOAK_CALLS]
#   BUILD_DIR defaults to build (model-compiler built), ZOO_DIR to
#   BUILD_DIR/zoo, SOAK_CALLS (per caller) to 200.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
build=${1:-build}
zoo=${2:-$build/zoo}
calls=${3:-200}
compiler=$build/bin/model-compiler
[[ -x $compiler ]] || { echo "error: build $compiler first" >&2; exit 1; }
# 77: ctest's skip code (bundles.tsan) where clang-19 is not installed.
command -v clang-19 >/dev/null || { echo "skipped: clang-19 is needed" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PY=/usr/bin/python3
# die_after_fork=0: pool_bundle.c forks after the workers started on
# purpose (the child runs without them); halt_on_error: the first report
# fails the run.
# No suppressions: the pool makes its locks once per process through
# pthread_once, which TSan sees (backends/CPU/libjit/Runtime.cpp).
export TSAN_OPTIONS="die_after_fork=0:halt_on_error=1:exitcode=66"
fails=0
SECONDS=0

$PY "$SRC/tests/bundles/make_models.py" "$tmp/m" >/dev/null || exit 1
models=(seblocks:"$tmp/m/seblocks.onnx":"$tmp/m/seblocks.in0.bin")
if [[ -f $zoo/squeezenet1_1.onnx && -f $zoo/squeezenet1_1.input.pb ]]; then
  $PY - "$zoo/squeezenet1_1.input.pb" "$tmp/sq.in.bin" <<'EOF' || exit 1
import sys, onnx
from onnx import numpy_helper
numpy_helper.to_array(onnx.load_tensor(sys.argv[1])).tofile(sys.argv[2])
EOF
  models+=(squeezenet1_1:"$zoo/squeezenet1_1.onnx":"$tmp/sq.in.bin")
else
  echo "note: no squeezenet1_1 in '$zoo'; only the se-blocks model runs"
fi

for entry in "${models[@]}"; do
  IFS=: read -r name model input <<<"$entry"
  dir=$tmp/$name
  "$compiler" -model="$model" -emit-bundle="$dir" -network-name="$name" -quiet ||
    { echo "FAIL: $name: compile"; fails=$((fails + 1)); continue; }
  for driver in pool soak; do
    clang-19 -std=c99 -g -O1 -fsanitize=thread -D_DEFAULT_SOURCE \
      -DNET="$name" -include "$dir/$name.h" \
      "$SRC/tests/bundles/${driver}_bundle.c" "$dir/$name.o" -lm -lpthread \
      -o "$dir/$driver" || { echo "FAIL: $name: link $driver"; fails=$((fails + 1)); continue; }
  done
  "$dir/pool" "$dir/$name.weights.bin" "$input" >"$dir/pool.log" 2>&1
  rc=$?
  if [[ $rc != 0 ]] || grep -q "ThreadSanitizer" "$dir/pool.log"; then
    echo "FAIL: $name: worker pool under TSan (exit $rc)"; head -40 "$dir/pool.log"
    fails=$((fails + 1))
  else
    echo "ok: $name: $(tail -1 "$dir/pool.log")"
  fi
  # TSan's own memory grows with the calls: RSS is the plain soak's check.
  "$dir/soak" "$dir/$name.weights.bin" "$input" 3 "$calls" 2 no-rss \
    >"$dir/soak.log" 2>&1
  rc=$?
  if [[ $rc != 0 ]] || grep -q "ThreadSanitizer" "$dir/soak.log"; then
    echo "FAIL: $name: soak under TSan (exit $rc)"; head -40 "$dir/soak.log"
    fails=$((fails + 1))
  else
    echo "ok: $name: $(tail -1 "$dir/soak.log")"
  fi
done
echo "tsan-bundles: $fails failure(s), ${SECONDS} s"
exit $((fails > 0))
