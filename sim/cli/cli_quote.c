/*
 * cli_quote.c - names from scenarios, DTBs and logs are data: nothing in them
 * reaches a terminal as a control sequence.  Control characters (C0, DEL and
 * the C1 range U+0080..U+009F, which some terminals obey in UTF-8 too) are
 * written as JSON escapes (\u001b), as `dlsim check` prints names; bytes that
 * are not UTF-8 as \xNN.  Everything else is left as it is, so that an
 * ordinary name prints unchanged.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sim/cli/cli.h"

/* Length of the valid UTF-8 sequence at @s (@n bytes left), 0 if not valid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;

	if (k == 0 || k > n || s[0] >= 0xf5)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong 3- and 4-byte forms, surrogates, past U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return k;
}

/*
 * The escape for the character at @s (@n bytes left) into @esc, and its
 * length in *@k: "" when it is printed as it is.  @keep_nl: newlines and tabs
 * are text, not names.
 */
static const char *escape_at(const unsigned char *s, size_t n, bool keep_nl, char esc[8],
			     size_t *k)
{
	*k = 1;
	if (s[0] < 0x80) {
		if ((s[0] >= 0x20 && s[0] != 0x7f) || (keep_nl && (s[0] == '\n' || s[0] == '\t')))
			return "";
		snprintf(esc, 8, "\\u%04x", s[0]);
		return esc;
	}
	*k = utf8_len(s, n);
	if (*k == 0) {
		*k = 1;
		snprintf(esc, 8, "\\x%02x", s[0]);
		return esc;
	}
	if (*k == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
		snprintf(esc, 8, "\\u%04x", s[1]);
		return esc;
	}
	return "";
}

const char *cli_name(const char *name, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n, i, o = 0, k;
	char esc[8];

	if (!name)
		return "(none)";
	n = strlen(name);
	for (i = 0; i < n; i += k)
		if (*escape_at(s + i, n - i, false, esc, &k))
			break;
	if (i == n)
		return name;
	for (i = 0; i < n && o + 1 < len; i += k) {
		const char *e = escape_at(s + i, n - i, false, esc, &k);
		size_t w = *e ? strlen(e) : k;

		if (o + w + 4 > len) {          /* room for "..." and the NUL */
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(buf + o, *e ? e : (const char *)s + i, w);
		o += w;
	}
	buf[o] = '\0';
	return buf;
}

void cli_write_text(FILE *f, const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, run = 0, k;
	char esc[8];

	while (i < n) {
		const char *e = escape_at(s + i, n - i, true, esc, &k);

		if (*e) {
			fwrite(s + run, 1, i - run, f);
			fputs(e, f);
			run = i + k;
		}
		i += k;
	}
	fwrite(s + run, 1, n - run, f);
}
