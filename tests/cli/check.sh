# Shared helpers of the CLI test scripts. Source it after setting TMP.
#
# check WHAT WANT PATTERN CMD...
#   Runs CMD with stdout and stderr captured in $TMP/out. WANT is 0 (must
#   succeed) or anything else (must fail). PATTERN is an extended regular
#   expression the output must contain, or EMPTY: nothing may be printed.
#   When ERROR_PREFIX is set, a failing command's first line must start with
#   it (the tools print one "TOOL: error: ..." line).
# fail MESSAGE...   counts a failure
# finish NAME       prints the summary and exits non-zero after a failure
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() {
  local what=$1 want=$2 pattern=$3
  shift 3
  "$@" >"$TMP/out" 2>&1
  local rc=$?
  if { [ "$want" = 0 ] && [ $rc != 0 ]; } || { [ "$want" != 0 ] && [ $rc = 0 ]; }; then
    fail "$what: exit $rc"; cat "$TMP/out"; return
  fi
  if [ "$want" != 0 ] && [ -n "${ERROR_PREFIX:-}" ] &&
    [ "$(head -1 "$TMP/out" | cut -c1-${#ERROR_PREFIX})" != "$ERROR_PREFIX" ]; then
    fail "$what: the first line is not the error"; cat "$TMP/out"; return
  fi
  if [ "$pattern" = EMPTY ]; then
    if [ -s "$TMP/out" ]; then fail "$what: printed something"; cat "$TMP/out"; return; fi
  elif ! grep -qE -- "$pattern" "$TMP/out"; then
    fail "$what: output lacks /$pattern/"; cat "$TMP/out"; return
  fi
  echo "ok: $what"
}
finish() {
  if [ $fails = 0 ]; then echo "all $1 checks passed"; exit 0; fi
  echo "$fails $1 check(s) failed"
  exit 1
}
