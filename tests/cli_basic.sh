#!/bin/sh
# The command-line contract of shared/SPEC.md that needs no scenario: help,
# version, orders, and exit status 2 for bad usage.
DLSIM=$1
fail=0
check() { # expected-status description command...
	want=$1; shift; what=$1; shift
	"$@" >/tmp/dlsim-cli.$$ 2>&1; got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: $what: exit $got, expected $want"; cat /tmp/dlsim-cli.$$; fail=$((fail + 1))
	else
		echo "ok: $what"
	fi
}
check 0 "--help" "$DLSIM" --help
check 0 "--version" "$DLSIM" --version
check 2 "no verb" "$DLSIM"
check 2 "unknown verb" "$DLSIM" frobnicate
check 0 "orders" "$DLSIM" orders
check 2 "orders with junk" "$DLSIM" orders junk
"$DLSIM" --version | grep -q '^dlsim [0-9]' || { echo "FAIL: version format"; fail=$((fail + 1)); }
n=$("$DLSIM" orders | wc -l)
[ "$n" = 6 ] || { echo "FAIL: orders lists $n lines, expected 6"; fail=$((fail + 1)); }
for o in sync kernel-async kernel-async-v2 levels cp-first naive; do
	"$DLSIM" orders | grep -q "^$o " || { echo "FAIL: order $o missing"; fail=$((fail + 1)); }
done
for v in run compare check report validate import-dtb orders; do
	check 0 "$v --help" "$DLSIM" $v --help
done
rm -f /tmp/dlsim-cli.$$
echo "cli_basic: $fail failed"
[ "$fail" = 0 ]
