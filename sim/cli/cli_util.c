/*
 * cli_util.c - what several verbs print the same way: errno names as the
 * kernel spells them, "did you mean" for a mistyped name, op keys.
 */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/cli.h"
#include "sim/engine/engine.h"

#define EPROBE_DEFER_NR 517	/* include/linux/errno.h: not a libc errno */

static atomic_int stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

atomic_int *cli_stop_flag(void)
{
	return &stop_flag;
}

void cli_catch_stop(void)
{
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
}

void cli_release_stop(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

const char *cli_errno_name(int err, char *buf, size_t len)
{
	int e = err < 0 ? -err : err;
	const char *name = e == EPROBE_DEFER_NR ? "EPROBE_DEFER" : strerrorname_np(e);

	if (name)
		snprintf(buf, len, "%s%s", err < 0 ? "-" : "", name);
	else
		snprintf(buf, len, "%d", err);
	return buf;
}

/* Lower-case letters and digits of S only: "CP_First" and "cpfirst" agree. */
static size_t squash(const char *s, char *out, size_t len)
{
	size_t n = 0;

	for (; *s && n + 1 < len; s++)
		if (isalnum((unsigned char)*s))
			out[n++] = (char)tolower((unsigned char)*s);
	out[n] = '\0';
	return n;
}

/* Levenshtein distance of A and B (both at most CLI_NAME_MAX bytes). */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	size_t row[CLI_NAME_MAX + 1];

	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[nb];
}

const char *cli_suggest(const char *word, const char *const *names, size_t n)
{
	char w[CLI_NAME_MAX + 1], c[CLI_NAME_MAX + 1];
	size_t nw = squash(word, w, sizeof(w)), best = SIZE_MAX;
	const char *pick = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t nc = squash(names[i], c, sizeof(c)), d = edit_distance(w, nw, c, nc);

		if (d < best) {
			best = d;
			pick = names[i];
		}
	}
	/* a third of the name may be wrong, and at least one letter */
	return pick && best <= 1 + strlen(pick) / 3 ? pick : NULL;
}

const char *cli_op_key(const struct dl_run_result *r, uint32_t i, char *buf, size_t len)
{
	unsigned seen = 0;

	for (uint32_t j = 0; j < i; j++)
		seen += r->op[j].kind == r->op[i].kind;
	if (seen)
		snprintf(buf, len, "%s%u", dl_op_name(r->op[i].kind), seen + 1);
	else
		snprintf(buf, len, "%s", dl_op_name(r->op[i].kind));
	return buf;
}

uint32_t cli_usable_cpus(uint32_t max)
{
	cpu_set_t set;
	long n = 0;

	/* the affinity (taskset, a container's cpuset), not the machine's online count */
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n <= 0 ? 1 : n < (long)max ? (uint32_t)n : max;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);     /* "010" is ten, not eight */
	return (errno || *end) ? -EINVAL : 0;
}
