#!/usr/bin/env bash
# Bundles are deterministic: compiling one model twice (in two processes,
# into two directories) gives byte-identical NAME.o, NAME.h and
# NAME.weights.bin, with and without -embed-weights; and running the
# bundle twice on one input (also with threads) gives bit-identical outputs.
#   bundle_test.sh MODEL_COMPILER SOURCE_DIR
set -u
COMPILER=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
MODEL=$SRC/models/digits/digits.onnx
fails=0
for flags in "" "-embed-weights"; do
  for i in 1 2; do
    "$COMPILER" -model="$MODEL" -emit-bundle="$TMP/b$i" -network-name=net $flags ||
      { echo "FAIL: compile $i ($flags)"; exit 1; }
  done
  for f in net.o net.h net.weights.bin; do
    [ -f "$TMP/b1/$f" ] || continue
    cmp -s "$TMP/b1/$f" "$TMP/b2/$f" || { echo "FAIL: $f differs ($flags)"; fails=$((fails + 1)); }
  done
  rm -rf "$TMP/b1" "$TMP/b2"
done
# Run twice, single-threaded and with 3 threads: outputs bit-identical.
"$COMPILER" -model="$MODEL" -emit-bundle="$TMP/r" -network-name=net || exit 1
cat >"$TMP/run.c" <<'C'
#define _POSIX_C_SOURCE 200112L
#include "net.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static uint8_t *region(uint64_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n ? n : 1)) exit(2);
  memset(p, 0, n ? n : 1);
  return p;
}
int main(int argc, char **argv) {
  uint8_t *w = region(net_CONSTANT_SIZE), *io = region(net_MUTABLE_SIZE),
          *act = region(net_ACTIVATIONS_SIZE);
  FILE *f = fopen(argv[1], "rb");
  if (!f || fread(w, 1, net_CONSTANT_SIZE, f) != net_CONSTANT_SIZE) return 2;
  fclose(f);
  float *in = (float *)(io + net_input_OFFSET);
  for (int i = 0; i < 64; ++i) in[i] = (float)((i * 37) % 17) / 16.0f;
  int threads = atoi(argv[2]);
  if ((threads > 1 ? net_mt(w, io, act, threads) : net(w, io, act)) != 0) return 3;
  fwrite(io + net_logits_OFFSET, 1, net_logits_SIZE, stdout);
  return 0;
}
C
cc -std=c99 -O1 -I"$TMP/r" "$TMP/run.c" "$TMP/r/net.o" -lm -lpthread -o "$TMP/run" ||
  { echo "FAIL: cannot link the bundle"; exit 1; }
for t in 1 3; do
  "$TMP/run" "$TMP/r/net.weights.bin" $t >"$TMP/o$t.a" && "$TMP/run" "$TMP/r/net.weights.bin" $t >"$TMP/o$t.b" ||
    { echo "FAIL: run with $t thread(s)"; fails=$((fails + 1)); continue; }
  cmp -s "$TMP/o$t.a" "$TMP/o$t.b" || { echo "FAIL: two runs with $t thread(s) differ"; fails=$((fails + 1)); }
done
cmp -s "$TMP/o1.a" "$TMP/o3.a" || { echo "FAIL: 1 and 3 threads differ"; fails=$((fails + 1)); }
[ $fails = 0 ] && echo "ok: bundle files and outputs are bit-identical"
exit $fails
