#!/usr/bin/env bash
# Installs every dependency Ember needs, idempotently: Debian packages and a
# Python venv (.venv) for the oracles (onnx, onnxruntime).
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential cmake ninja-build ccache pkg-config
  llvm-19-dev clang-19 llvm-19-tools libzstd-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libgoogle-glog-dev libgtest-dev libgmock-dev
  libpng-dev libjpeg-dev
  dataset-fashion-mnist
  python3-torch python3-torchvision python3-sklearn python3-venv python3-onnx
  python3-numpy python3-pil)
# Issue 9: clang-19's sanitizer and libFuzzer run-times (test.sh --sanitize).
PKGS+=(libclang-rt-19-dev)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The venv sees Debian's torch (numpy 1.x), so numpy stays below 2 there.
# Versions: scripts/requirements-tests.txt; a copy in the venv marks them
# installed, so a changed pin reinstalls.
VENV=.venv
REQ=scripts/requirements-tests.txt
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
if ! cmp -s "$REQ" "$VENV/requirements-tests.txt" ||
  ! "$VENV/bin/python" -c "import onnxruntime, onnx, numpy" 2>/dev/null; then
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$VENV/requirements-tests.txt"
fi
echo "setup: done"
