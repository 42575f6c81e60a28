/*
 * cmd_diff.c - `dlsim diff DB RUN_A RUN_B`: two runs of one scenario side by
 * side (any modes: des, threads, kernel): per op and phase both makespans and
 * their ratio, the share of device pairs ordered the same way, and the pairs
 * that disagree (sim/log/dl_diff.c does the work).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_opts.h"
#include "sim/log/dl_diff.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_shard.h"

#define DIFF_DEFAULT_TOL_NS 1000000
#define DIFF_DEFAULT_PAIRS 50
#define DIFF_MAX_PAIRS 1000000

static void diff_usage(FILE *f)
{
	fprintf(f, "usage: dlsim diff DB RUN_A RUN_B [--tolerance T] [--max-pairs N] [--json]\n\n"
		   "Compare two runs of one scenario (any modes: des, threads, kernel), from\n"
		   "their events alone:\n"
		   "- per op and phase, the makespan in each run (first callback start to last\n"
		   "  end) and the ratio B/A;\n"
		   "- the order agreement: of the device pairs that both runs order with a gap\n"
		   "  above the tolerance (callback starts), the share ordered the same way;\n"
		   "- the disagreeing pairs: devices, phase, start times in both runs.\n"
		   "Ops are matched by kind and occurrence (the 2nd suspend of A with the 2nd\n"
		   "of B), devices by name; for probe a device's time is the attempt that\n"
		   "bound it, not the deferred ones.\n\n"
		   "options:\n"
		   "  --tolerance T   gaps up to T do not order a pair (default 1ms; units ns,\n"
		   "                  us, ms, s; a bare number is ns)\n"
		   "  --max-pairs N   list at most N disagreeing pairs, count the rest (default %d)\n"
		   "  --json          one JSON object on stdout\n\n"
		   "Both runs' logs are verified first, as by dlsim check: a corrupt log is\n"
		   "refused.\n\n"
		   "exit status: 0 ok, 2 bad usage, not a dlsim database or no such run,\n"
		   "3 a corrupt log\n",
		DIFF_DEFAULT_PAIRS);
}

static int parse_duration(const char *s, int64_t *out)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || v > 1e18)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].u)) {
			double ns = v * units[i].mul;

			if (ns > 9e18)
				return -EINVAL;
			*out = (int64_t)llround(ns);
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_run(const char *s, int64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	return (errno || end == s || *end || *out <= 0) ? -EINVAL : 0;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void print_ms(char *buf, size_t len, int64_t ns)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3f", ms(ns));
}

static void print_share(char *buf, size_t len, uint64_t agree, uint64_t pairs)
{
	if (!pairs)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f%%", 100.0 * (double)agree / (double)pairs);
}

static void print_table(const struct dl_diff *d)
{
	char a[32], b[32], r[32], s[32];
	char q[6][CLI_QUOTE_MAX];       /* the log's strings, escaped (cli_name()) */

	printf("diff: run %" PRId64 " (%s, %s, seed %" PRId64 ") vs run %" PRId64
	       " (%s, %s, seed %" PRId64 "), scenario '%s'\n",
	       d->run_a, cli_name(d->mode_a, q[0], sizeof(q[0])),
	       cli_name(d->order_a, q[1], sizeof(q[1])), d->seed_a, d->run_b,
	       cli_name(d->mode_b, q[2], sizeof(q[2])), cli_name(d->order_b, q[3], sizeof(q[3])),
	       d->seed_b, cli_name(d->scenario_a, q[4], sizeof(q[4])));
	printf("devices: %" PRIu64 " in A, %" PRIu64 " in B, %" PRIu64
	       " in both (matched by name); tolerance %.3f ms\n\n",
	       d->devices_a, d->devices_b, d->devices_common, ms(d->tol_ns));
	printf("%-12s %-14s %12s %12s %7s %8s %12s %8s\n", "op", "phase", "A ms", "B ms", "B/A",
	       "devices", "pairs", "same");
	for (uint32_t i = 0; i < d->nrows; i++) {
		const struct dl_diff_row *w = &d->rows[i];

		print_ms(a, sizeof(a), w->a_ns);
		print_ms(b, sizeof(b), w->b_ns);
		if (w->a_ns > 0 && w->b_ns >= 0)
			snprintf(r, sizeof(r), "%.3f", (double)w->b_ns / (double)w->a_ns);
		else
			snprintf(r, sizeof(r), "-");
		print_share(s, sizeof(s), w->agree, w->pairs);
		printf("%-12s %-14s %12s %12s %7s %8" PRIu64 " %12" PRIu64 " %8s\n",
		       w->phase[0] ? "" : w->op, w->phase[0] ? w->phase : "(op)", a, b, r,
		       w->matched, w->pairs, s);
	}
	print_share(s, sizeof(s), d->agree, d->pairs);
	printf("\norder agreement: %" PRIu64 " of %" PRIu64 " pairs ordered the same way (%s)\n",
	       d->agree, d->pairs, s);
	if (d->dep_known) {
		char t[32];

		print_share(s, sizeof(s), d->dep_agree, d->dep_pairs);
		print_share(t, sizeof(t), d->agree - d->dep_agree, d->pairs - d->dep_pairs);
		printf("  pairs a dependency orders (links, and parents in PM phases): %" PRIu64
		       " of %" PRIu64 " (%s): a difference here is a rule one run breaks\n"
		       "  pairs only timing orders: %" PRIu64 " of %" PRIu64
		       " (%s): which of two independent devices a thread reached first\n",
		       d->dep_agree, d->dep_pairs, s, d->agree - d->dep_agree,
		       d->pairs - d->dep_pairs, t);
	} else if (!d->devices_a) {
		printf("  (not split by dependency: run A has no devices)\n");
	} else {
		printf("  (not split by dependency: more than %d devices in A, or its links form a "
		       "cycle)\n", DL_DIFF_DEP_MAX);
	}
	if (d->pairs == d->agree)
		return;
	printf("disagreeing pairs (%" PRIu32 " listed%s):\n", d->npair,
	       d->disagree_unlisted ? ", more below" : "");
	for (uint32_t i = 0; i < d->npair; i++) {
		const struct dl_diff_pair *p = &d->pair[i];
		const struct dl_diff_row *w = &d->rows[p->row];

		printf("  %s/%s: '%s' before '%s' in A (%.3f, %.3f ms), after it in B (%.3f, %.3f ms)\n",
		       w->op, w->phase, cli_name(p->dev1, q[0], sizeof(q[0])),
		       cli_name(p->dev2, q[1], sizeof(q[1])), ms(p->a1_ns), ms(p->a2_ns), ms(p->b1_ns),
		       ms(p->b2_ns));
	}
	if (d->disagree_unlisted)
		printf("  ... and %" PRIu64 " more (--max-pairs N lists more)\n", d->disagree_unlisted);
}

static json_t *run_json(int64_t id, const char *scenario, const char *mode, const char *order,
			int64_t seed, uint64_t devices)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:I, s:I}", "run_id", (json_int_t)id,
			 "scenario", scenario, "mode", mode, "order", order, "seed", (json_int_t)seed,
			 "devices", (json_int_t)devices);
}

/*
 * The split of @pairs (@same of them agreeing) into those a dependency
 * orders and the rest; null when the diff could not tell (dep_known).
 */
static void dependent_json(json_t *o, const struct dl_diff *d, uint64_t pairs, uint64_t same)
{
	json_object_set_new(o, "dependent_pairs", d->dep_known ?
			    json_integer((json_int_t)pairs) : json_null());
	json_object_set_new(o, "dependent_same", d->dep_known ?
			    json_integer((json_int_t)same) : json_null());
}

static int print_json(const struct dl_diff *d)
{
	json_t *o = json_object(), *rows = json_array(), *pairs = json_array();
	int ret = -ENOMEM;

	if (!o || !rows || !pairs)
		goto out;
	for (uint32_t i = 0; i < d->nrows; i++) {
		const struct dl_diff_row *w = &d->rows[i];
		json_t *r = json_pack("{s:s, s:s?, s:I, s:I, s:I, s:I, s:I, s:I}", "op", w->op,
				      "phase", w->phase[0] ? w->phase : NULL,
				      "a_makespan_ns", (json_int_t)w->a_ns,
				      "b_makespan_ns", (json_int_t)w->b_ns,
				      "devices", (json_int_t)w->matched,
				      "pairs", (json_int_t)w->pairs, "same", (json_int_t)w->agree,
				      "different", (json_int_t)(w->pairs - w->agree));

		if (!r || json_array_append_new(rows, r))
			goto out;
		json_object_set_new(r, "ratio", w->a_ns > 0 && w->b_ns >= 0 ?
				    json_real((double)w->b_ns / (double)w->a_ns) : json_null());
		json_object_set_new(r, "agreement", w->pairs ?
				    json_real((double)w->agree / (double)w->pairs) : json_null());
		dependent_json(r, d, w->dep_pairs, w->dep_agree);
		if (w->a_ns < 0)
			json_object_set_new(r, "a_makespan_ns", json_null());
		if (w->b_ns < 0)
			json_object_set_new(r, "b_makespan_ns", json_null());
	}
	for (uint32_t i = 0; i < d->npair; i++) {
		const struct dl_diff_pair *p = &d->pair[i];
		json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:[I,I], s:[I,I]}",
				      "op", d->rows[p->row].op, "phase", d->rows[p->row].phase,
				      "first_in_a", p->dev1, "second_in_a", p->dev2,
				      "a_start_ns", (json_int_t)p->a1_ns, (json_int_t)p->a2_ns,
				      "b_start_ns", (json_int_t)p->b1_ns, (json_int_t)p->b2_ns);

		if (!r || json_array_append_new(pairs, r))
			goto out;
	}
	json_object_set_new(o, "a", run_json(d->run_a, d->scenario_a, d->mode_a, d->order_a,
					     d->seed_a, d->devices_a));
	json_object_set_new(o, "b", run_json(d->run_b, d->scenario_b, d->mode_b, d->order_b,
					     d->seed_b, d->devices_b));
	json_object_set_new(o, "devices_matched", json_integer((json_int_t)d->devices_common));
	json_object_set_new(o, "tolerance_ns", json_integer(d->tol_ns));
	json_object_set_new(o, "rows", rows);
	rows = NULL;
	json_object_set_new(o, "pairs", json_integer((json_int_t)d->pairs));
	json_object_set_new(o, "same", json_integer((json_int_t)d->agree));
	json_object_set_new(o, "agreement", d->pairs ?
			    json_real((double)d->agree / (double)d->pairs) : json_null());
	dependent_json(o, d, d->dep_pairs, d->dep_agree);
	json_object_set_new(o, "disagreeing", pairs);
	pairs = NULL;
	json_object_set_new(o, "disagreeing_unlisted", json_integer((json_int_t)d->disagree_unlisted));
	ret = json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER) ? -EIO : 0;
	putchar('\n');
out:
	json_decref(rows);
	json_decref(pairs);
	json_decref(o);
	return ret;
}

/* The options, DB and the two runs. */
struct diff_args {
	const char *pos[3];	/* DB RUN_A RUN_B, as given */
	int npos;
	bool json;
	int64_t tol, run[2];
	uint64_t max_pairs;
};

static int opt_help(void *obj, const char *verb, const char *v)
{
	(void)obj, (void)verb, (void)v;
	diff_usage(stdout);
	return 1;
}

static int opt_tolerance(void *obj, const char *verb, const char *v)
{
	if (parse_duration(v, &((struct diff_args *)obj)->tol)) {
		fprintf(stderr, "dlsim %s: --tolerance '%s': expected a duration like 1ms, 250us"
			" or 0\n", verb, v);
		return -1;
	}
	return 0;
}

static int opt_max_pairs(void *obj, const char *verb, const char *v)
{
	struct diff_args *a = obj;
	char *end;

	errno = 0;
	a->max_pairs = strtoull(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || a->max_pairs > DIFF_MAX_PAIRS) {
		fprintf(stderr, "dlsim %s: --max-pairs '%s': expected 0..%d\n", verb, v,
			DIFF_MAX_PAIRS);
		return -1;
	}
	return 0;
}

/* An argument no row names: an unknown option ("-" is not one), else DB RUN_A RUN_B. */
static int opt_other(void *obj, const char *verb, const char *arg)
{
	struct diff_args *a = obj;

	if (arg[0] == '-' && arg[1])
		return cli_opts_refuse(verb, arg);
	if (a->npos == 3) {
		fprintf(stderr, "dlsim %s: unexpected argument '%s'\n", verb, arg);
		return -1;
	}
	a->pos[a->npos++] = arg;
	return 0;
}

static const struct cli_opt diff_opts[] = {
	{ CLI_ACTION("--help", "-h", opt_help) },
	{ CLI_TRUE("--json", NULL, struct diff_args, json) },
	{ CLI_FN("--tolerance", opt_tolerance) },
	{ CLI_FN("--max-pairs", opt_max_pairs) },
};

static const struct cli_verb diff_verb = {
	.name = "diff", .opt = diff_opts, .nopt = sizeof(diff_opts) / sizeof(diff_opts[0]),
	.other = opt_other,
};

/* Parse argv into @a, the two run ids too: 0 to go on, 1 when --help was printed, else DL_EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct diff_args *a)
{
	int ret = cli_opts_parse(&diff_verb, argc, argv, a);

	if (ret)
		return ret > 0 ? 1 : DL_EXIT_USAGE;
	if (a->npos < 3) {
		diff_usage(stderr);
		return DL_EXIT_USAGE;
	}
	for (int k = 0; k < 2; k++) {
		if (parse_run(a->pos[1 + k], &a->run[k])) {
			fprintf(stderr, "dlsim diff: run '%s': expected a positive run id\n",
				a->pos[1 + k]);
			return DL_EXIT_USAGE;
		}
	}
	return 0;
}

/*
 * The two runs of DB, each verified first, compared into *@d: 0, or the exit
 * status with the reason printed.
 */
static int read_diff(const struct diff_args *a, struct dl_diff **d)
{
	const char *path = a->pos[0];
	int64_t which, run[2] = { a->run[0], a->run[1] };
	sqlite3 *db;
	char err[512];
	int ret;

	if (dl_log_open_existing(path, &db, err, sizeof(err))) {
		fprintf(stderr, "dlsim diff: %s\n", err);
		return DL_EXIT_USAGE;
	}
	if (dl_log_attach_shards(db, run, 2, err, sizeof(err))) {
		fprintf(stderr, "dlsim diff: %s\n", err);
		sqlite3_close(db);
		return DL_EXIT_USAGE;
	}
	for (int k = 0; k < 2; k++) {
		if (k == 1 && run[1] == run[0])
			break;
		if ((ret = cli_log_verify_run("diff", path, db, run[k])) >= 0) {
			sqlite3_close(db);
			return ret;
		}
	}
	ret = dl_diff_runs(db, run[0], run[1], a->tol, (uint32_t)a->max_pairs, d, &which);
	if (ret == -ENOENT)
		fprintf(stderr, "dlsim diff: %s: no run %" PRId64 " in the database\n", path, which);
	else if (ret == -ENOMEM)
		fprintf(stderr, "dlsim diff: out of memory\n");
	else if (ret)
		fprintf(stderr, "dlsim diff: %s: cannot read the log: %s\n", path, sqlite3_errmsg(db));
	sqlite3_close(db);
	return ret ? DL_EXIT_USAGE : 0;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a = { .tol = DIFF_DEFAULT_TOL_NS, .max_pairs = DIFF_DEFAULT_PAIRS };
	struct dl_diff *d;
	char q[2][CLI_QUOTE_MAX];
	int ret;

	if ((ret = parse_args(argc, argv, &a)))
		return ret == 1 ? DL_EXIT_OK : ret;
	if ((ret = read_diff(&a, &d)))
		return ret;
	if (strcmp(d->scenario_a, d->scenario_b))
		fprintf(stderr, "dlsim diff: warning: run %" PRId64 " is scenario '%s', run %" PRId64
			" is '%s'; devices are matched by name\n", d->run_a,
			cli_name(d->scenario_a, q[0], sizeof(q[0])), d->run_b,
			cli_name(d->scenario_b, q[1], sizeof(q[1])));
	if (a.json)
		ret = print_json(d);
	else
		print_table(d);
	dl_diff_free(d);
	if (ret || fflush(stdout)) {
		fprintf(stderr, "dlsim diff: writing stdout failed\n");
		return DL_EXIT_USAGE;
	}
	return DL_EXIT_OK;
}
