/*
 * sc_locate.c - where in a scenario file a value is: line and column for
 * an error found after parsing ("devices[5].parent: unknown device").
 *
 * Jansson parses the file and keeps no positions, so this walks the text
 * along the key path only: it steps over strings, brackets and commas to
 * count members and elements, and never decodes a value (the file already
 * parsed as JSON, so the walk can trust its shape).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/scenario/sc_internal.h"

struct cursor {
	const char *p, *end;
};

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

/* At '"': past the closing quote. */
static void skip_string(struct cursor *c)
{
	for (c->p++; c->p < c->end && *c->p != '"'; c->p++)
		if (*c->p == '\\')
			c->p++;
	c->p++;
}

/* Past one value of any kind. */
static void skip_value(struct cursor *c)
{
	int depth = 0;

	skip_ws(c);
	while (c->p < c->end) {
		char ch = *c->p;

		if (ch == '"') {
			skip_string(c);
			if (!depth)
				return;
			continue;
		}
		if (ch == '{' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ']') {
			if (!depth)
				return;		/* the end of the container around it */
			c->p++;
			if (!--depth)
				return;
			continue;
		} else if (!depth && (ch == ',' || ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')) {
			return;			/* the end of a number or literal */
		}
		c->p++;
	}
}

/* At '{': to the value of KEY (LEN bytes, compared as written); 0, or -1 if absent. */
static int enter_key(struct cursor *c, const char *key, size_t len)
{
	c->p++;
	for (;;) {
		const char *k;

		skip_ws(c);
		if (c->p >= c->end || *c->p != '"')
			return -1;
		k = c->p + 1;
		skip_string(c);
		skip_ws(c);
		if (c->p >= c->end || *c->p != ':')
			return -1;
		c->p++;
		skip_ws(c);
		if (!strncmp(k, key, len) && k[len] == '"')
			return 0;
		skip_value(c);
		skip_ws(c);
		if (c->p >= c->end || *c->p != ',')
			return -1;
		c->p++;
	}
}

/* At '[': to element N; 0, or -1 if there are fewer. */
static int enter_index(struct cursor *c, unsigned long n)
{
	c->p++;
	for (unsigned long i = 0; i < n; i++) {
		skip_value(c);
		skip_ws(c);
		if (c->p >= c->end || *c->p != ',')
			return -1;
		c->p++;
	}
	skip_ws(c);
	return c->p < c->end && *c->p != ']' ? 0 : -1;
}

int sc_locate(const char *text, size_t len, const char *path, unsigned *line, unsigned *col)
{
	struct cursor c = { text, text + len };
	const char *q = path;

	skip_ws(&c);
	while (*q) {
		if (*q == '[') {
			char *end;
			unsigned long n = strtoul(q + 1, &end, 10);

			if (*end != ']' || c.p >= c.end || *c.p != '[' || enter_index(&c, n))
				return -1;
			q = end + 1;
		} else {
			size_t n = strcspn(q, ".[");

			if (c.p >= c.end || *c.p != '{' || enter_key(&c, q, n))
				return -1;
			q += n;
		}
		if (*q == '.')
			q++;
		skip_ws(&c);
	}
	*line = 1;
	*col = 1;
	for (const char *p = text; p < c.p; p++) {
		if (*p == '\n') {
			++*line;
			*col = 1;
		} else if (((unsigned char)*p & 0xc0) != 0x80) {
			++*col;	/* columns count characters, as Jansson's do */
		}
	}
	return 0;
}
