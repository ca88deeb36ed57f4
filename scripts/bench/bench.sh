#!/usr/bin/env bash
# Ember CPU bundles against onnxruntime, same ONNX files, same thread count,
# one model after the other in one run; prints a Markdown table.
#   scripts/bench/bench.sh ZOO_DIR [THREADS] [ITERATIONS] [MODEL...]
# ZOO_DIR holds NAME.onnx files (models/zoo/export.py). Needs a build
# (BUILD_DIR, default build) and .venv with onnxruntime.
set -u
cd "$(dirname "$0")/../.."
ZOO=$1
THREADS=${2:-1}
ITERS=${3:-20}
shift 3 2>/dev/null || shift $#
models=${*:-$(ls "$ZOO"/*.onnx | xargs -n1 basename | sed 's/\.onnx$//')}
BUILD_DIR=${BUILD_DIR:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "| model | Ember CPU ms | onnxruntime ms | ratio | compile s |"
echo "| --- | ---: | ---: | ---: | ---: |"
for m in $models; do
  start=$(date +%s.%N)
  if ! err=$("$BUILD_DIR/bin/model-compiler" -model="$ZOO/$m.onnx" \
      -emit-bundle="$TMP/$m" -network-name=net 2>&1); then
    echo "| $m | ${err#model-compiler: error: } | | | |" | head -1; continue
  fi
  compile=$(echo "$(date +%s.%N) - $start" | bc)
  cc -O2 -std=c11 -D_GNU_SOURCE -DNET=net -include "$TMP/$m/net.h" \
    scripts/bench/bench_bundle.c "$TMP/$m/net.o" -lm -lpthread -o "$TMP/$m/bench" || continue
  ours=$("$TMP/$m/bench" "$TMP/$m/net.weights.bin" "$THREADS" "$ITERS" | sed 's/median ms: //')
  ort=$(.venv/bin/python scripts/bench/ort_time.py "$ZOO/$m.onnx" "$ITERS" "$THREADS" | sed 's/median ms: //')
  printf "| %s | %.2f | %.2f | %.2f | %.1f |\n" "$m" "$ours" "$ort" \
    "$(echo "$ours / $ort" | bc -l)" "$compile"
done
