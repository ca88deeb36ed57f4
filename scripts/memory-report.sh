#!/usr/bin/env bash
# Compiles the nine torchvision zoo models and writes docs/Memory.md: per
# model the activation arena, its lower bound (the largest total of
# simultaneously live activations under the chosen schedule), their ratio,
# and the naive sum of all activations. It also runs ember-zoo-tests on every
# model that imports (IR round trip, arena <= 1.10 x bound, concat copies).
#
# Usage: scripts/memory-report.sh [BUILD_DIR] [ZOO_DIR]
#   BUILD_DIR defaults to build (built beforehand), ZOO_DIR to BUILD_DIR/zoo;
#   models missing from ZOO_DIR are exported with Debian's python3 (torch).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
zoo=${2:-$build/zoo}
runner=$build/bin/model-runner
models=(resnet18 resnet50 mobilenet_v2 squeezenet1_1 densenet121
        shufflenet_v2_x1_0 efficientnet_b0 googlenet inception_v3)
[[ -x $runner ]] || { echo "error: build $runner first" >&2; exit 1; }

mkdir -p "$zoo"
missing=()
for m in "${models[@]}"; do [[ -f $zoo/$m.onnx ]] || missing+=("$m"); done
if (( ${#missing[@]} )); then
  /usr/bin/python3 models/zoo/export.py "$zoo" \
    --models "$(IFS=,; echo "${missing[*]}")" 2>/dev/null
fi

mib() { awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'; }
# Field N of the "activations:" line of model-runner -print-memory.
field() { sed -n 's/^  activations: \([0-9]*\) bytes (lower bound \([0-9]*\), ratio \([0-9.]*\), no reuse \([0-9]*\))$/\'"$2"'/p' <<<"$1"; }

rows=() skipped=() importable=()
for m in "${models[@]}"; do
  if ! out=$("$runner" -model="$zoo/$m.onnx" -print-memory -compile-only 2>&1); then
    reason=$(head -1 <<<"$out" | sed -e 's/^model-runner: error: //' -e "s|$zoo/||" -e 's/:$//')
    skipped+=("| $m | $reason |")
    continue
  fi
  importable+=("$m")
  plain=$("$runner" -model="$zoo/$m.onnx" -print-memory -compile-only -optimize-ir=false)
  arena=$(field "$out" 1) bound=$(field "$out" 2) ratio=$(field "$out" 3)
  naive=$(field "$plain" 4) plainArena=$(field "$plain" 1)
  rows+=("| $m | $arena ($(mib "$arena")) | $bound | $ratio | $naive ($(mib "$naive")) | $plainArena ($(mib "$plainArena")) |")
done

checks="not run (no model imports)"
if (( ${#importable[@]} )); then
  if EMBER_ZOO_DIR=$zoo EMBER_ZOO_MODELS=$(IFS=,; echo "${importable[*]}") \
      "$build/bin/ember-zoo-tests" >/dev/null 2>&1; then
    checks="passed on ${importable[*]}"
  else
    checks="FAILED (run $build/bin/ember-zoo-tests with EMBER_ZOO_DIR=$zoo)"
  fi
fi

{
  echo "# Activation memory on the zoo models"
  echo
  echo "Written by \`scripts/memory-report.sh\` (do not edit by hand): batch 1,"
  echo "Interpreter backend (which asks for every lowering), models from"
  echo "\`models/zoo/export.py\`. Bytes; every buffer is rounded up to 64 bytes."
  echo
  echo "- **arena**: the activation region the memory planner lays out."
  echo "- **lower bound**: the largest total of activations alive at one"
  echo "  instruction under the chosen schedule, after the IR optimizer; no"
  echo "  placement can use less."
  echo "- **naive sum**: every activation of the unoptimized IR in its own"
  echo "  buffer (no reuse at all)."
  echo "- **arena without IR optimizer**: \`model-runner -optimize-ir=false\`."
  echo
  echo "| model | arena | lower bound | arena / bound | naive sum | arena without IR optimizer |"
  echo "| --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  if (( ${#skipped[@]} )); then
    echo
    echo "Not importable yet (the importer reports the missing ops):"
    echo
    echo "| model | importer message |"
    echo "| --- | --- |"
    printf '%s\n' "${skipped[@]}"
  fi
  echo
  echo "IR round trip, arena <= 1.10 x lower bound and no concat/copy left in"
  echo "concat networks (ember-zoo-tests): $checks."
} > docs/Memory.md
cat docs/Memory.md
