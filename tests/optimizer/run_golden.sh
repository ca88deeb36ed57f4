#!/bin/sh
# Runs one golden pass test: ember-opt applies the pipeline named on the
# file's "// PASSES:" line (with -verify-each and the flags of an optional
# "// FLAGS:" line) and FileCheck matches the
# printed graph against the file's CHECK lines.
# usage: run_golden.sh EMBER_OPT FILECHECK FILE
set -e
opt=$1; filecheck=$2; file=$3
tmp=$(mktemp)
passes=$(sed -n 's|^// PASSES: *||p' "$file" | head -n 1)
flags=$(sed -n 's|^// FLAGS: *||p' "$file" | head -n 1)
if [ -z "$passes" ]; then
  echo "$file: no '// PASSES:' line" >&2
  exit 1
fi
# $flags is a list of words on purpose.
# shellcheck disable=SC2086
"$opt" "$file" -passes="$passes" -verify-each $flags > "$tmp" || {
  rm -f "$tmp"; exit 1; }
status=0
"$filecheck" --dump-input=fail "$file" < "$tmp" || status=$?
rm -f "$tmp"
exit $status
