#!/usr/bin/env bash
# Runs one golden IR test: ember-ir-opt FILE with the passes named on its
# "// PASSES:" line (and any "// ARGS:" flags), piped into FileCheck FILE.
# A test whose "// EXPECT-ERROR:" line is present must instead fail with
# that text on stderr and a non-zero exit.
# Usage: run_ir_test.sh EMBER_IR_OPT FILECHECK FILE
set -uo pipefail
tool=$1 filecheck=$2 file=$3
passes=$(sed -n 's|^// PASSES: *||p' "$file" | head -1)
args=$(sed -n 's|^// ARGS: *||p' "$file" | head -1)
expect_error=$(sed -n 's|^// EXPECT-ERROR: *||p' "$file" | head -1)
if [[ -n "$expect_error" ]]; then
  err=$("$tool" "$file" ${passes:+-passes="$passes"} $args 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -eq 0 ]]; then
    echo "FAIL: $file: expected an error, got exit 0"; exit 1
  fi
  if [[ "$err" != *"$expect_error"* ]]; then
    echo "FAIL: $file: stderr lacks '$expect_error':"; echo "$err"; exit 1
  fi
  exit 0
fi
"$tool" "$file" ${passes:+-passes="$passes"} $args | "$filecheck" "$file"
