#!/usr/bin/env bash
# model-runner -profile on digits (CPU): the table has one row per
# instruction group, in execution order with -profile-order=program and
# slowest first by default (one row per kernel, FLOPs on the products
# only, with -profile-order=kernels), its shares add up to 100 %, and the
# total line matches the rows; with -num-threads=2 (the threaded schedule)
# and with -profile-stat=min the same table comes out and the outputs equal
# the 1-thread run's; bad use (and -profile-stat=min on several threads,
# whose fastest run can be one where thread 0 timed no work) is a one-line
# error.
#   profile_test.sh MODEL_RUNNER SOURCE_DIR
set -u
RUNNER=$1
SRC=$2
MODEL=$SRC/models/digits/digits.onnx
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$RUNNER" -model="$MODEL" -backend=CPU -profile -profile-order=program \
  -iterations=3 >"$TMP/program" 2>&1 || fail "-profile exited $?"
"$RUNNER" -model="$MODEL" -backend=CPU -profile >"$TMP/time" 2>&1 ||
  fail "-profile (by time) exited $?"
"$RUNNER" -model="$MODEL" -backend=CPU -profile -profile-order=program \
  -iterations=3 -num-threads=2 >"$TMP/program2" 2>&1 ||
  fail "-profile -num-threads=2 exited $?"
"$RUNNER" -model="$MODEL" -backend=CPU -profile -profile-order=program \
  -iterations=3 -profile-stat=min >"$TMP/min" 2>&1 ||
  fail "-profile -profile-stat=min exited $?"
"$RUNNER" -model="$MODEL" -backend=CPU -profile -profile-order=kernels \
  -iterations=3 >"$TMP/kernels" 2>&1 ||
  fail "-profile -profile-order=kernels exited $?"
/usr/bin/python3 - "$TMP/program" "$TMP/time" "$TMP/program2" "$TMP/min" \
  "$TMP/kernels" <<'PY' || fails=$((fails + 1))
import re, sys

def table(path, runs):
    lines = open(path).read().splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith("profile: ")]
    assert len(head) == 1, "no 'profile:' line"
    m = re.match(r"profile: (\d+) run\(s\), (\d+) kernels, (\d+) rows", lines[head[0]])
    assert m and int(m.group(1)) == runs, lines[head[0]]
    cols = lines[head[0] + 1].split()
    assert cols == ["#", "ms", "%", "GFLOP/s", "kind", "shape", "name"], cols
    nrows = int(m.group(3))
    rows = [l.split() for l in lines[head[0] + 2: head[0] + 2 + nrows]]
    total = lines[head[0] + 2 + nrows]
    t = re.match(r"total +([0-9.]+) ms per run, ([0-9.]+) GFLOP, ([0-9.]+) GFLOP/s", total)
    assert t, total
    for r in rows:
        assert len(r) >= 7, r
        int(r[0]); float(r[1]); float(r[2]); float(r[3])
        assert re.fullmatch(r"[0-9x]+", r[5]), r
    share = sum(float(r[2]) for r in rows)
    assert abs(share - 100) < 0.5, "shares add up to %g" % share
    ms = sum(float(r[1]) for r in rows)
    assert abs(ms - float(t.group(1))) <= 1e-3 * max(1, ms) + 4e-4 * nrows, (ms, total)
    return rows

rows = table(sys.argv[1], 3)
kinds = [r[4] for r in rows]
# The CPU fuses each Relu into its convolution's epilogue (see CPU.h) and
# the classifier's bias into the MatMul's (fuse-matmul-epilogue).
want = ["conv", "maxpool", "conv", "maxpool", "matmul"]
assert kinds == want, kinds
assert [int(r[0]) for r in rows] == list(range(len(rows)))
assert rows[0][5] == "1x16x8x8" and rows[0][6].startswith("/features/features.0/Conv_1"), rows[0]
assert float(rows[0][3]) > 0 and float(rows[2][3]) > 0, "convs have FLOPs"
rows2 = table(sys.argv[3], 3)
assert [r[4:] for r in rows2] == [r[4:] for r in rows], "threaded table differs"
out = lambda p: [l for l in open(p).read().splitlines() if l.startswith("output ")]
assert out(sys.argv[3]) == out(sys.argv[1]) != [], "threaded outputs differ"
# Per-kernel minima: the same rows.
rows3 = table(sys.argv[4], 3)
assert [r[4:] for r in rows3] == [r[4:] for r in rows], "min table differs"
# One row per kernel: each convolution's padding kernel (NAME.pad, no
# FLOPs) apart from its product (NAME, all of them).
rows4 = table(sys.argv[5], 3)
names = [r[6] for r in rows4]
assert [r[4] for r in rows4] == ["conv", "conv", "maxpool", "conv", "conv",
                                 "maxpool", "matmul"], rows4
assert names[0] == names[1] + ".pad" and names[3] == names[4] + ".pad", names
assert float(rows4[0][3]) == 0 and float(rows4[3][3]) == 0, "helpers have FLOPs"
assert float(rows4[1][3]) > 0 and float(rows4[4][3]) > 0, "convs have FLOPs"
assert names[1] == rows[0][6] and names[4] == rows[2][6], (names, rows)
rows = table(sys.argv[2], 1)
ms = [float(r[1]) for r in rows]
assert ms == sorted(ms, reverse=True), "not slowest first"
assert sorted(r[4] for r in rows) == sorted(want)
print("ok: profile tables")
PY

out=$("$RUNNER" -model="$MODEL" -backend=CPU -profile -profile-order=fastest 2>&1)
[ $? != 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] &&
  echo "$out" | grep -q "^model-runner: error: -profile-order must be" ||
  fail "bad -profile-order: $out"
out=$("$RUNNER" -model="$MODEL" -backend=CPU -profile -profile-stat=median 2>&1)
[ $? != 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] &&
  echo "$out" | grep -q "^model-runner: error: -profile-stat must be" ||
  fail "bad -profile-stat: $out"
out=$("$RUNNER" -model="$MODEL" -backend=CPU -profile -profile-stat=min \
  -num-threads=2 2>&1)
[ $? != 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] &&
  echo "$out" | grep -q "^model-runner: error: -profile-stat=min needs -num-threads=1" ||
  fail "-profile-stat=min with 2 threads: $out"
out=$("$RUNNER" -model="$MODEL" -backend=CPU -num-threads=0 2>&1)
[ $? != 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] &&
  echo "$out" | grep -q "^model-runner: error: -num-threads must be at least 1" ||
  fail "-num-threads=0: $out"
out=$("$RUNNER" -model="$MODEL" -backend=Interpreter -num-threads=2 2>&1)
[ $? != 0 ] && echo "$out" | grep -q "^model-runner: error: .*runs on one thread" ||
  fail "-num-threads=2 on the Interpreter: $out"
out=$("$RUNNER" -model="$MODEL" -backend=Interpreter -profile 2>&1)
[ $? != 0 ] && echo "$out" | grep -q "^model-runner: error: .*cannot time its kernels" ||
  fail "-profile on the Interpreter: $out"
[ $fails = 0 ] && echo "all profile checks passed"
exit $((fails > 0))
