#!/bin/bash
# scripts/gpu-test.sh without a GPU: prepare makes the correctness and
# latency packages (a small selection: digits, one node test, resnet18's
# latency case is left to the full script) within the size limit and
# prints their sizes; run on each prints the summary table with every case
# "no device", writes results/run.log and results/summary.md, and exits 0.
# usage: gpu_script_dry_run.sh SRC_DIR BUILD_DIR
set -euo pipefail
SRC=$1 BUILD=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
MODELS=digits FLAVOURS=gen LATENCY_MODELS=bert_mini NODE_TESTS=test_relu \
  "$SRC/scripts/gpu-test.sh" prepare "$T/pkg" "$BUILD" > "$T/prep" 2>&1 ||
  { cat "$T/prep"; fail "prepare"; }
grep -q "correctness package .*: 2 bundles, 1 node tests, [0-9]* bytes" "$T/prep" ||
  { cat "$T/prep"; fail "no correctness package size"; }
grep -q "latency package .*: 1 bundles, 0 node tests, [0-9]* bytes" "$T/prep" ||
  { cat "$T/prep"; fail "no latency package size"; }
[ ! -e "$T/pkg/latency/bert_mini_b1/weights.bin" ] || fail "latency weights carried"
for kind in correctness latency; do
  PYTHON=/usr/bin/python3 "$T/pkg/$kind/gpu-test.sh" run "$T/pkg/$kind" \
    > "$T/$kind.out" 2>&1 || { cat "$T/$kind.out"; fail "$kind: run failed"; }
  rows=$(grep -c '^| [a-z]' "$T/$kind.out" || true)
  # Every cell of every case row: "no device".
  nodev=$(grep '^| [a-z]' "$T/$kind.out" | grep -v '^| model\|^| case' |
    grep -cE '^\| [^|]* (\| no device )+\|$' || true)
  [ "$nodev" -ge 1 ] && [ "$nodev" -eq $((rows - 1)) ] ||
    { cat "$T/$kind.out"; fail "$kind: not every case reads 'no device'"; }
  [ -s "$T/pkg/$kind/results/run.log" ] && [ -s "$T/pkg/$kind/results/summary.md" ] ||
    fail "$kind: no log or summary"
done
# The latency weights were made from the seed on the "device" side.
[ -s "$T/pkg/latency/bert_mini_b1/weights.bin" ] || fail "no generated weights"
echo PASS
