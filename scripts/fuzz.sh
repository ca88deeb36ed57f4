#!/usr/bin/env bash
# Runs one libFuzzer target for a number of seconds, single-threaded.
#   scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags...]
# TARGET: import (ember-fuzz-import: ONNX bytes -> import -> lowering -> IR
# -> memory plan, seeded from the ONNX test data models) or tensor
# (ember-fuzz-tensor: input tensor files, .pb and .npy, seeded from the ONNX
# test data's tensors), ir (ember-fuzz-ir: textual instruction IR, parsed,
# printed, reparsed, optimized and planned) or graph (ember-fuzz-graph: the
# graph text format, parsed, printed and reparsed); ir and graph are seeded
# with what the tools print for the ONNX test data models, written by
# ember-fuzz-text-seeds on the first run; model (ember-fuzz-model: valid
# models mutated structurally, imported, compiled for the Interpreter and run
# when small, seeded with tests/fuzz/model-seeds, the hand-made models and the
# ONNX test data's node models). The build is build-asan/ (shared with
# test.sh --sanitize); the corpus grows in build-asan/fuzz/TARGET/corpus;
# crashes land in build-asan/fuzz/TARGET/artifacts.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
SECS=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
shift 2
TARGET=${TARGET#ember-fuzz-}
BIN_NAME=ember-fuzz-$TARGET

BUILD_DIR=${BUILD_DIR:-build-asan}
source scripts/sanitizer-env.sh
TARGETS=$BIN_NAME
case $TARGET in ir|graph) TARGETS="$TARGETS ember-fuzz-text-seeds" ;; esac
# shellcheck disable=SC2086
build_fuzz_targets "$BUILD_DIR" $TARGETS

WORK=$BUILD_DIR/fuzz/$TARGET
SEEDS=$BUILD_DIR/fuzz/seeds-$TARGET
mkdir -p "$WORK/corpus" "$WORK/artifacts" "$SEEDS"
if [ -z "$(ls -A "$SEEDS")" ]; then
  case $TARGET in
  import) # every ONNX test-data model, and the digits model
    i=0
    while IFS= read -r f; do
      cp "$f" "$SEEDS/seed-$i.onnx"; i=$((i+1))
    done < <(find /usr/share/libonnx-testdata/data -name model.onnx | sort)
    cp models/digits/digits.onnx "$SEEDS/digits.onnx" ;;
  model) # the committed seeds, the hand-made models, the node models
    cp tests/fuzz/model-seeds/*.onnx models/digits/digits.onnx "$SEEDS/"
    i=0
    while IFS= read -r f; do
      cp "$f" "$SEEDS/handmade-$i.onnx"; i=$((i+1))
    done < <(find tests/onnx/handmade -name model.onnx | sort)
    i=0
    while IFS= read -r f; do
      cp "$f" "$SEEDS/node-$i.onnx"; i=$((i+1))
    done < <(find /usr/share/libonnx-testdata/data/node -name model.onnx | sort) ;;
  tensor) # byte 0 picks the parser: 0 TensorProto, 1 .npy
    /usr/bin/python3 - "$SEEDS" <<'PY'
import glob, io, os, sys
import numpy as np
out = sys.argv[1]
files = sorted(glob.glob("/usr/share/libonnx-testdata/data/node/*/test_data_set_0/*.pb"))
for i, f in enumerate(files[:300]):
    open(os.path.join(out, "pb-%d" % i), "wb").write(b"\0" + open(f, "rb").read())
for i, a in enumerate([np.zeros((1, 3, 4), np.float32), np.arange(6, dtype=np.int64),
                       np.ones((2, 2), np.int32), np.array([True, False])]):
    b = io.BytesIO(); np.save(b, a)
    open(os.path.join(out, "npy-%d" % i), "wb").write(b"\1" + b.getvalue())
PY
    ;;
  ir|graph) # both corpora at once, from the ONNX test data models
    mkdir -p "$BUILD_DIR/fuzz/seeds-ir" "$BUILD_DIR/fuzz/seeds-graph"
    find /usr/share/libonnx-testdata/data -name model.onnx | sort |
      xargs "$BUILD_DIR/bin/ember-fuzz-text-seeds" "$BUILD_DIR/fuzz/seeds-ir" \
        "$BUILD_DIR/fuzz/seeds-graph" ;;
  *) echo "fuzz.sh: unknown target '$TARGET' (import, tensor, ir, graph, model)" >&2
    exit 2 ;;
  esac
fi
# Leak checking stays on; a seconds budget, 2 GiB of memory, 10 s per input.
# Tensor files: every parser path is reached by small inputs, while the two
# large seeds (357 and 393 KB) let mutations grow to that size, which made
# the target 2.5 times slower; inputs are capped at 16 KB.
MAX_LEN=
[ "$TARGET" = tensor ] && MAX_LEN=-max_len=16384
# Model: a mutated model may be valid and within the documented limits
# (2^31 elements per tensor, docs/Reliability.md) yet need more than the 2
# GiB the fuzzer allows (a window function of 2^30 points is 4 GiB of
# constants); such out-of-memory reports are not bugs. The target runs in
# a forked child that may run out of memory and is restarted; crashes,
# sanitizer reports, leaks and timeouts still fail the run.
[ "$TARGET" = model ] && MAX_LEN="-fork=1 -ignore_ooms=1 -ignore_timeouts=0 -ignore_crashes=0"

# The committed corpus (tests/fuzz/corpus/TARGET.tar.xz, minimized by
# scripts/fuzz-corpus.sh from earlier campaigns) is unpacked beside the
# seeds, so a fresh clone's smoke starts where those campaigns stopped.
COMMITTED=$BUILD_DIR/fuzz/committed-$TARGET
TARBALL=tests/fuzz/corpus/$TARGET.tar.xz
if [ -f "$TARBALL" ] && [ ! "$COMMITTED.stamp" -nt "$TARBALL" ]; then
  rm -rf "$COMMITTED" && mkdir -p "$COMMITTED"
  tar -C "$COMMITTED" -xJf "$TARBALL" && touch "$COMMITTED.stamp"
fi
mkdir -p "$COMMITTED"

# shellcheck disable=SC2086
exec "$BUILD_DIR/bin/$BIN_NAME" -max_total_time="$SECS" -rss_limit_mb=2048 \
  -malloc_limit_mb=2048 -timeout=10 -print_final_stats=1 $MAX_LEN \
  -artifact_prefix="$WORK/artifacts/" "$@" "$WORK/corpus" "$COMMITTED" "$SEEDS"
