# Sourced by test.sh --sanitize and fuzz.sh: the ASan+UBSan (+libFuzzer
# coverage) build of Ember with clang-19, and the sanitizer run-time options.
# shellcheck shell=bash

SANITIZER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$SANITIZER_ROOT/scripts/lsan.supp:print_suppressions=0}

configure_sanitizer_build() { # build dir
  CC=clang-19 CXX=clang++-19 cmake -S "$SANITIZER_ROOT" -B "$1" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBER_SANITIZE=ON -DEMBER_FUZZ=ON \
    ${EMBER_WERROR:+-DEMBER_WERROR=$EMBER_WERROR} >/dev/null
}

# Installs the dependencies, configures the sanitizer build in $1 and
# builds the targets that follow (the fuzz scripts' common start). Fuzz
# runs started side by side (one per core) take turns here: two cmake
# configures of one build directory at once corrupt its generated files.
build_fuzz_targets() { # build dir, targets...
  local dir=$1
  shift
  bash "$SANITIZER_ROOT/scripts/setup.sh" >/dev/null
  export CCACHE_BASEDIR=$SANITIZER_ROOT
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
  mkdir -p "$dir"
  (
    flock 9
    configure_sanitizer_build "$dir"
    cmake --build "$dir" -j "${JOBS:-$(nproc)}" --target "$@"
  ) 9>"$dir/.build-lock"
}
