# funclen.awk - the body lengths of the top-level C functions of FILEs: the
# lines strictly between a definition's opening brace (alone at column 0,
# or ending its signature line) and its closing brace at column 0, as the
# kernel's style and ours write them.  Prints "LINES FILE NAME" for each
# function longer than MIN (default 0); sort -rn for a table:
#
#   find sim -name '*.c' | sort | xargs awk -v MIN=80 -f tests/tools/funclen.awk | sort -rn
#
# (issue 37's counts of 212, 204, ... for the same functions include one
# brace: one more than this.)
BEGIN { if (MIN == "") MIN = 0 }
FNR == 1 { infn = 0; cand = "" }
!infn && /^[A-Za-z_].*\(/ && !/;[ \t]*$/ { cand = $0 }
!infn && /^\{/ && cand != "" { infn = 1; start = FNR; name = cand; next }
!infn && /^[A-Za-z_].*\)[ \t]*\{[ \t]*$/ { infn = 1; start = FNR; name = $0; next }
infn && /^\}/ {
	n = FNR - start - 1
	if (n > MIN) {
		match(name, /[A-Za-z_0-9]+[ \t]*\(/)
		fn = substr(name, RSTART, RLENGTH - 1)
		sub(/[ \t]+$/, "", fn)
		printf "%4d %s %s\n", n, FILENAME, fn
	}
	infn = 0; cand = ""; next
}
!infn && /^[ \t]*$/ { cand = "" }
