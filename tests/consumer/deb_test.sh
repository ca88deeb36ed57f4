#!/usr/bin/env bash
# The Debian package builds (cpack -G DEB) and declares the runtime
# libraries the tools need; its contents include the tools, the CMake
# package and the headers.
#   deb_test.sh BUILD_DIR
set -u
BUILD=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$TMP" >"$TMP/log" 2>&1 ||
  { echo "FAIL: cpack"; cat "$TMP/log"; exit 1; }
deb=$(ls "$TMP"/*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "FAIL: no .deb written"; exit 1; }
info=$(dpkg-deb -I "$deb")
fails=0
for dep in libllvm19 libprotobuf32 libonnx1 libgoogle-glog0v6; do
  echo "$info" | grep -q "Depends:.*$dep" || { echo "FAIL: Depends lacks $dep"; fails=$((fails + 1)); }
done
files=$(dpkg-deb -c "$deb")
for f in ./usr/bin/model-compiler ./usr/lib/cmake/Ember/EmberConfig.cmake \
    ./usr/include/ember/Bundle/EmberBundle.h; do
  echo "$files" | grep -q " $f\$" || { echo "FAIL: the package lacks $f"; fails=$((fails + 1)); }
done
echo "$info" | grep -E "Package|Version|Depends"
[ $fails = 0 ] && echo "ok: $(basename "$deb")"
exit $fails
