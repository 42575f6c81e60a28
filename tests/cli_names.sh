#!/bin/sh
# Names are data (issue 34): a scenario whose names hold terminal escapes
# (OSC "ESC]0;...BEL" sets the window title, CSI "ESC[2J" clears the screen,
# a CR rewrites the line, U+009B is CSI in one character) is run, explained
# and diffed; no control character but newline reaches stdout or stderr, and
# the names are printed escaped as check prints them (\u001b).
DLSIM=$1
SRC=$2
. "$(dirname "$0")/lib_cli.sh"

cat >"$T/e.json" <<'JSON'
{ "format": "dlsim-scenario/1", "name": "esc\u001b[2J", "seed": 3,
  "defaults": {"probe": "1ms", "suspend": "1ms", "resume": "1ms", "async": true},
  "devices": [ {"name": "root\u001b]0;pwned\u0007", "probe": "4ms"}, {"name": "cr\rline", "parent": "root\u001b]0;pwned\u0007"},
	       {"name": "c1\u009b2J"}, {"name": "x", "suspend": "3ms"}, {"name": "y", "suspend": "2ms"} ],
  "faults": [ {"device": "cr\rline", "op": "suspend", "error": "EBUSY"} ] }
JSON
clean() { # what file...: no control byte but newline in the files
	what=$1; shift
	for f in "$@"; do
		[ -s "$f" ] || [ "${f#"$T"/e}" != "$f" ] || { bad "$what: $f is empty"; return; }
		if tr -d '\n' <"$f" | LC_ALL=C grep -q '[[:cntrl:]]' || LC_ALL=C grep -q "$(printf '\302\233')" "$f"; then
			bad "$what: a control character reached the terminal"; return
		fi
	done
	ok "$what: names escaped"
}
"$DLSIM" run "$T/e.json" --db "$T/e.db" >"$T/o1" 2>"$T/e1"
"$DLSIM" run "$T/e.json" --db "$T/e.db" --order sync >"$T/o2" 2>"$T/e2"
clean run "$T/o1" "$T/e1" "$T/o2" "$T/e2"
grep -q '^run 1: esc\\u001b\[2J, order' "$T/o1" && ok "run: the scenario's name escaped" || bad "run: $(head -1 "$T/o1")"
grep -q "failed: device 'cr\\\\u000dline' returned" "$T/o1" && ok "run: the failing device escaped" \
	|| bad "run: failing device: $(grep failed "$T/o1")"
"$DLSIM" explain "$T/e.db" --run 1 >"$T/o3" 2>"$T/e3"
clean explain "$T/o3" "$T/e3"
grep -q 'root\\u001b\]0;pwned\\u0007' "$T/o3" && ok "explain: the chain's names escaped" \
	|| bad "explain: $(grep chain "$T/o3" | head -3)"
"$DLSIM" diff "$T/e.db" 1 2 >"$T/o4" 2>"$T/e4"
clean diff "$T/o4" "$T/e4"
grep -q "scenario 'esc\\\\u001b\[2J'" "$T/o4" && ok "diff: the scenario's name escaped" || bad "diff: $(head -1 "$T/o4")"

# two names of 255 bytes in a message: the reason used to be cut off at 512 bytes
A=$(printf '%0255d' 0 | tr 0 a)
B=$(printf '%0255d' 0 | tr 0 b)
cat >"$T/long.json" <<JSON
{ "format": "dlsim-scenario/1", "name": "long", "devices": [ {"name": "$A"}, {"name": "$B"} ],
  "links": [ {"consumer": "$A", "supplier": "$B", "flags": ["BOGUS"]} ] }
JSON
expect 2 "a bad flag on a link of long names" "$DLSIM" validate "$T/long.json"
grep -q "unknown flag 'BOGUS'; expected STATELESS" "$T/err" && ok "the reason survives the long names" \
	|| bad "long names: $(tail -c 120 "$T/err")"
finish cli_names
