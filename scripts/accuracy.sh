#!/usr/bin/env bash
# Fashion-MNIST accuracy check (issue 7): writes the first N (default 1000)
# test images as PNGs under OUT, classifies them with image-classifier in
# one process (minibatch 100), and compares with onnxruntime on the same
# preprocessed inputs. Exit 0 pass, 1 fail, 77 skip (dataset or venv absent).
#   scripts/accuracy.sh build/bin/image-classifier OUT [N] [extra flags...]
# With -precision=bf16 (or fp16) among the extra flags, the criterion is the
# reduced-precision one
# (accuracy within 0.3 points of fp32; tests/accuracy/fashion_accuracy.py).
set -euo pipefail
CLASSIFIER=$1
OUT=$2
N=${3:-1000}
shift $(( $# < 3 ? $# : 3 ))
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=$SRC/.venv/bin/python
[ -x "$PY" ] || { echo "SKIP: $PY missing (run scripts/setup.sh)"; exit 77; }
mkdir -p "$OUT"
"$PY" "$SRC/tests/accuracy/fashion_accuracy.py" prepare "$OUT" "$N" || exit $?
start=$(date +%s%N)
rc=0
"$CLASSIFIER" -model="$SRC/models/fashion/fashion.onnx" -image-mode=0to1 \
  -minibatch=100 -topk=1 -input-image-list-file="$OUT/list.txt" "$@" \
  >"$OUT/ember.txt" || rc=$?
[ $rc = 0 ] || { echo "FAIL: image-classifier exited $rc"; tail -3 "$OUT/ember.txt"; exit 1; }
echo "image-classifier: $(tail -1 "$OUT/ember.txt")"
echo "wall time of image-classifier: $(( ($(date +%s%N) - start) / 1000000 )) ms"
mode=fp32
for f in "$@"; do
  case $f in -precision=bf16) mode=bf16 ;; -precision=fp16) mode=fp16 ;; esac
done
"$PY" "$SRC/tests/accuracy/fashion_accuracy.py" compare "$OUT" $mode
