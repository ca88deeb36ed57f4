#!/usr/bin/env bash
# Exports the zoo models named in MODELS (comma-separated) into ZOO_DIR if
# they are not there yet, then runs ember-zoo-tests on them.
# Usage: run_zoo_tests.sh EMBER_ZOO_TESTS SOURCE_DIR ZOO_DIR MODELS
# Exits 77 (ctest: skipped) when Debian's python3 lacks torch/torchvision.
set -euo pipefail
tests=$1 src=$2 dir=$3 models=$4
mkdir -p "$dir"
missing=()
for m in ${models//,/ }; do
  [[ -f "$dir/$m.onnx" ]] || missing+=("$m")
done
if (( ${#missing[@]} )); then
  if ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no torch/torchvision to export the zoo"
    exit 77
  fi
  list=$(IFS=,; echo "${missing[*]}")
  /usr/bin/python3 "$src/models/zoo/export.py" "$dir" --models "$list" \
    2> >(grep -v -e UserWarning -e 'warnings.warn' >&2)
fi
EMBER_ZOO_DIR="$dir" EMBER_ZOO_MODELS="$models" exec "$tests"
