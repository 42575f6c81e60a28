# lib_cli.sh - what the cli_*.sh tests share; sourced after DLSIM is set.
# T is a scratch directory removed on exit; ok/bad report one check each and
# count failures; expect STATUS WHAT CMD... runs CMD with stdout in $T/out and
# stderr in $T/err and checks its exit status; finish prints the count and
# exits non-zero if anything failed.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
expect() { # status description command...
	want=$1; shift; what=$1; shift
	"$@" >"$T/out" 2>"$T/err"; got=$?
	if [ "$got" = "$want" ]; then ok "$what"; else bad "$what: exit $got, expected $want"; cat "$T/err"; fi
}
finish() { # name
	[ "$fail" = 0 ] && echo "$1: all ok" || echo "$1: $fail failed"
	[ "$fail" = 0 ]
}
need_real() { # FILE...: REAL is ../shared/real (or DLSIM_REAL_DIR); skip (exit 77) without it or a FILE
	REAL=${DLSIM_REAL_DIR:-$SRC/../shared/real}
	[ -d "$REAL" ] || REAL=/work/shared/real
	for f in . "$@"; do
		[ -e "$REAL/$f" ] || { echo "SKIP: no $REAL/$f (set DLSIM_REAL_DIR)"; exit 77; }
	done
}
# Does $DLSIM have the DLSIM_TEST_HOOK points (sim/log/dl_testhook.h)?  Its
# build tree's CMake cache says (on in the test builds, off in Release).
have_test_hooks() {
	grep -q '^DLSIM_TEST_HOOKS:BOOL=ON' "$(dirname "$DLSIM")/CMakeCache.txt" 2>/dev/null
}
# A job started with & by a non-interactive sh ignores SIGINT until dlsim
# installs its handler: a signal sent before (a fixed sleep on a loaded
# machine) is lost.  wait_caught PID [MASK] waits (at most 60 s, or until PID
# ends) for the handlers in MASK, SigCgt's bits (default 2: SIGINT; 0x4002
# adds SIGTERM).
wait_caught() {
	i=0
	while [ $i -lt 600 ] && kill -0 "$1" 2>/dev/null; do
		m=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
		[ -n "$m" ] && [ $((0x$m & ${2:-2})) = $((${2:-2})) ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
}
# signal_wait SIG PID: send SIG to PID and wait for it to end; rc is its exit
# status, ms the milliseconds from the signal to its end.
signal_wait() {
	t0=$(date +%s%N)
	kill "-$1" "$2"
	wait "$2"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
}
# Tests run as root, which ignores permissions: AS runs a reader as nobody
# (setpriv); without setpriv the test is skipped (exit 77).
as_nobody() {
	if [ "$(id -u)" = 0 ]; then
		command -v setpriv >/dev/null || { echo "SKIP: root without setpriv"; exit 77; }
		AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	else
		AS=
	fi
}
