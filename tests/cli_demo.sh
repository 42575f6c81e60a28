#!/bin/sh
# `make demo` is quiet (issue 22): the results come first, no build output
# (it goes to build.log and is shown only on failure), no progress lines
# when not on a terminal; and it ends with the report's path.  Runs the real
# target on the already built tree that ctest tests.
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"
BUILD=$(dirname "$DLSIM")
# the same configuration as the tree under test (a sanitizer build stays one)
SAN=$(sed -n 's/^DLSIM_SAN:STRING=//p' "$BUILD/CMakeCache.txt")
if ! make -s -C "$SRC" demo BUILD="$BUILD" SAN="$SAN" >"$T/out" 2>"$T/err" </dev/null; then
	bad "make demo failed"; cat "$T/out" "$T/err"
fi
head -1 "$T/out" | grep -q '^compare: default, 2000 devices' && ok "the results come first" \
	|| bad "first line: $(head -1 "$T/out")"
grep -E -q 'Built target|Building C|cmake|\[ *[0-9]+%\]' "$T/out" "$T/err" && bad "build output in the demo's" \
	|| ok "no build output"
grep -q '\[op ' "$T/err" && bad "progress lines without a terminal" || ok "no progress lines off a terminal"
grep -q '^run [0-9]*: default, order kernel-async' "$T/out" && ok "the run's table" || bad "no run table"
tail -1 "$T/out" | grep -q 'report: .*demo-report/index.html' && ok "ends with the report" || bad "last line: $(tail -1 "$T/out")"
[ -s "$BUILD/demo-report/index.html" ] && ok "the report is written" || bad "no demo report"
finish cli_demo
