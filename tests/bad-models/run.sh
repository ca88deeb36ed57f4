#!/usr/bin/env bash
# Runs every model of the bad-model catalog (make.py) through each tool (and
# every bad input tensor through model-runner with the digits model), and
# checks: a non-zero exit that is neither a signal nor a timeout, exactly one
# line of output, of the form "TOOL: error: ...", containing the case's
# expected text, and no sanitizer report.
#   run.sh SOURCE_DIR TOOL [TOOL...]
# A TOOL is a command line (split on spaces); the model is passed to it as
# -model=FILE after its own arguments.
set -u
SRC=$1
shift
[ $# -gt 0 ] || { echo "usage: run.sh SOURCE_DIR TOOL..."; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 "$SRC/tests/bad-models/make.py" "$TMP" || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
fails=0
total=0
# Runs "$@" and checks its output against $expect; sets nothing else.
check() {
  local name=$1 out=$TMP/$1.out
  shift
  total=$((total + 1))
  timeout 60 "$@" >"$out" 2>&1
  local rc=$?
  local why=""
  if [ $rc = 0 ]; then why="exit 0"
  elif [ $rc -ge 124 ]; then why="exit $rc (timeout or signal)"
  elif grep -qE 'Sanitizer|runtime error:' "$out"; then why="sanitizer report"
  elif [ "$(wc -l <"$out")" != 1 ]; then why="$(wc -l <"$out") lines, want 1"
  elif [ "$(head -c ${#prefix} "$out")" != "$prefix" ]; then
    why="line does not start with '$prefix'"
  elif ! grep -qF -- "$expect" "$out"; then why="lacks '$expect'"
  fi
  if [ -n "$why" ]; then
    echo "FAIL: $name via $(basename "$1"): $why"
    head -c 2000 "$out"
    fails=$((fails + 1))
  else
    echo "ok: $name: $(cat "$out")"
  fi
}
for tool in "$@"; do
  read -r -a cmd <<<"$tool"
  prefix="$(basename "${cmd[0]}"): error: "
  while IFS=$'\t' read -r name expect when; do
    # Cases marked "run" fail only when the model runs (model-runner).
    if [ "$when" = run ] && [ "$(basename "${cmd[0]}")" != model-runner ]; then
      continue
    fi
    check "$name" "${cmd[@]}" -model="$TMP/models/$name.onnx"
  done <"$TMP/cases.tsv"
  [ "$(basename "${cmd[0]}")" = model-runner ] || continue
  while IFS=$'\t' read -r name expect; do
    check "$name" "${cmd[@]}" -model="$SRC/models/digits/digits.onnx" \
      -input="$TMP/inputs/$name"
  done <"$TMP/inputs.tsv"
done
echo "$fails failures of $total"
[ $fails = 0 ]
