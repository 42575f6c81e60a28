/*
 * cmd_check.c - `dlsim check DB [--run ID] [--all]`: re-verify the
 * invariants of LINK-CORE.md from the SQLite log alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_opts.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_shard.h"

static void check_usage(FILE *f)
{
	fputs("usage: dlsim check DB [--run ID] [--all] [--verbose]\n"
	      "\n"
	      "Re-verifies, from the SQLite log DB alone, the invariants of the link core\n"
	      "(LINK-CORE.md): 1 probe/bind only while managed suppliers are bound,\n"
	      "2 suppliers unbind after their consumers, 3 suspend/resume order along\n"
	      "links and parent/child, prepare in dpm_list order and complete in the\n"
	      "reverse, each walk on one thread, one callback at a time, 4 resume only\n"
	      "what was suspended, PM callbacks only with a driver bound, one phase at a\n"
	      "time, a failed run ends resumed, 5 a PM_RUNTIME consumer is never runtime-\n"
	      "active while its supplier is runtime-suspended, 6 no cycle of links and\n"
	      "parents and every refusal has a reason, 7 the dpm_list (replayed from the\n"
	      "register, dpm_move and device_del events) is a topological order whenever\n"
	      "the PM core walks it.\n"
	      "Each violation is printed as\n"
	      "  run R: invariant N: <what>, devices \"<consumer>\" and \"<supplier>\", t=<ns>\n"
	      "(names as JSON strings) and stored in the violations table (replacing that\n"
	      "run's earlier rows); a run with violations whose status was 'ok' is marked\n"
	      "'violations'.\n"
	      "\n"
	      "The log itself is verified, each event before the rules see it (one read):\n"
	      "the runs row (status, counts, makespan, workers and links in range), the\n"
	      "metrics (numbers, times in 0..2^62, makespan and events equal to the row's),\n"
	      "devices (ids dense, a name, parents in range), links (known flags), and\n"
	      "every event (seq dense from 0, kind and phase known, ids, worker, err and\n"
	      "flags in range, 0 <= t_ns <= 2^62, each device's times non-decreasing, each\n"
	      "probe_end/unbind_end after its start, the count equal to runs.events); a\n"
	      "finished run has every device registered and the callbacks of every suspend\n"
	      "and resume that took time.  A log that fails is reported as corrupt,\n"
	      "  run R: corrupt log: <what>\n"
	      "no violation of it is reported and nothing is written into it.  report, diff\n"
	      "and explain run the same verification first.  check reads in one read\n"
	      "transaction (a run being written is not blocked) and writes only the\n"
	      "violations, at the end.  A sweep's run whose events stay in its shard\n"
	      "(DB.shards/, dlsim sweep --help) is read from there, as report, diff,\n"
	      "explain and twin read it.\n"
	      "\n"
	      "  --run ID    check run ID (default: the newest run)\n"
	      "  --all       check every run in DB\n"
	      "  --verbose   print every violation (default: at most 50 per invariant)\n"
	      "\n"
	      "Exit status: 0 no violation; 1 a violation was found or a run is incomplete\n"
	      "(still 'running', or its log failed: runs.log_error); 2 bad usage, not a\n"
	      "dlsim database, no such run, or its shard missing or not the one DB names;\n"
	      "3 a run's log is corrupt (with --all: the\n"
	      "worst of the runs, 3 above 1).\n", f);
}

int cli_log_verify_run(const char *verb, const char *path, sqlite3 *db, int64_t run)
{
	struct dl_check_result res;
	int rc = dl_check_verify(db, run, &res);

	if (rc == -ENOENT) {
		fprintf(stderr, "dlsim %s: %s: no run %" PRId64 " in the database\n", verb, path, run);
		return DL_EXIT_USAGE;
	}
	if (rc < 0) {
		fprintf(stderr, "dlsim %s: %s: run %" PRId64 ": cannot read the log: %s\n", verb, path,
			run, rc == -ENOMEM ? "out of memory" : sqlite3_errmsg(db));
		return DL_EXIT_USAGE;
	}
	if (rc == DL_CHECK_CORRUPT) {
		fprintf(stderr, "dlsim %s: %s: run %" PRId64 ": corrupt log (%s); nothing of it is shown"
			" ('dlsim check %s --run %" PRId64 "' lists the problems)\n", verb, path, run,
			res.corrupt_first, path, run);
		return DL_EXIT_CORRUPT;
	}
	if (res.log_error[0])
		fprintf(stderr, "dlsim %s: warning: run %" PRId64 "'s log is incomplete (it could not"
			" be written: %s); what follows covers the events stored\n", verb, run,
			res.log_error);
	else if (res.incomplete)
		fprintf(stderr, "dlsim %s: warning: run %" PRId64 " is still 'running' (being written,"
			" or its writer died); what follows covers the events stored so far\n", verb, run);
	return -1;
}

int cli_log_validate(const char *verb, const char *path, int64_t *run)
{
	sqlite3 *db;
	char err[1024];
	int ret = -1;

	if (dl_log_open_existing(path, &db, err, sizeof(err))) {
		fprintf(stderr, "dlsim %s: %s\n", verb, err);
		return DL_EXIT_USAGE;
	}
	if (*run <= 0) {
		int64_t newest = dl_check_newest_run(db);

		if (newest < 0) {
			fprintf(stderr, "dlsim %s: %s: cannot read the runs: %s\n", verb, path,
				sqlite3_errmsg(db));
			ret = DL_EXIT_USAGE;
		}
		*run = newest > 0 ? newest : 0;
	}
	if (*run > 0 && dl_log_attach_shards(db, run, 1, err, sizeof(err))) {
		fprintf(stderr, "dlsim %s: %s\n", verb, err);
		ret = DL_EXIT_USAGE;
	} else if (*run > 0) {
		ret = cli_log_verify_run(verb, path, db, *run);
	}
	sqlite3_close(db);
	return ret;
}

static int check_one(sqlite3 *db, int64_t run, int verbose)
{
	struct dl_check_result res;
	int rc = dl_check_run_ex(db, run, verbose, stdout, &res);

	if (rc == -ENOENT) {
		fprintf(stderr, "dlsim check: no run %" PRId64 " in the database\n", run);
		return DL_EXIT_USAGE;
	}
	if (rc < 0) {
		fprintf(stderr, "dlsim check: run %" PRId64 ": cannot read the log: %s\n", run,
			sqlite3_errmsg(db));
		return DL_EXIT_USAGE;
	}
	if (rc == DL_CHECK_CORRUPT) {
		printf("run %" PRId64 ": corrupt log (%" PRIu64 "%s problem%s, the first: %s); the"
		       " invariants were not checked\n", run, res.corrupt,
		       res.corrupt >= 1000 ? " or more" : "", res.corrupt == 1 ? "" : "s",
		       res.corrupt_first);
		return DL_EXIT_CORRUPT;
	}
	if (res.total) {
		printf("run %" PRId64 ": %" PRIu64 " violation%s in %" PRIu64 " events (", run,
		       res.total, res.total == 1 ? "" : "s", res.events);
		for (int i = 1, first = 1; i < DL_CHECK_NINV; i++) {
			if (!res.by_inv[i])
				continue;
			printf("%sinvariant %d: %" PRIu64, first ? "" : ", ", i, res.by_inv[i]);
			first = 0;
		}
		printf(")%s\n", rc == DL_CHECK_INCOMPLETE ? ", run incomplete" : "");
		return DL_EXIT_VIOLATION;
	}
	if (rc == DL_CHECK_INCOMPLETE)
		return DL_EXIT_VIOLATION;
	printf("run %" PRId64 ": ok, %" PRIu64 " events, status '%s', no violation\n", run,
	       res.events, res.status);
	return DL_EXIT_OK;
}

/* The options and DB. */
struct check_args {
	const char *path;
	int64_t run;		/* 0: the newest */
	bool all, verbose;
};

static int opt_help(void *obj, const char *verb, const char *v)
{
	(void)obj, (void)verb, (void)v;
	check_usage(stdout);
	return 1;
}

static int opt_run(void *obj, const char *verb, const char *v)
{
	struct check_args *a = obj;
	char *end;

	if (!*v) {
		fprintf(stderr, "dlsim %s: --run needs a run id\n", verb);
		return -1;
	}
	errno = 0;
	a->run = strtoll(v, &end, 10);
	if (errno || *end || end == v || a->run <= 0) {
		fprintf(stderr, "dlsim %s: --run '%s': expected a positive run id\n", verb, v);
		return -1;
	}
	return 0;
}

/* An argument no row names: an unknown option ("-" is not one), else DB, one only. */
static int opt_other(void *obj, const char *verb, const char *arg)
{
	struct check_args *a = obj;

	if (arg[0] == '-' && arg[1]) {
		fprintf(stderr, "dlsim %s: unknown option '%s'\n", verb, arg);
		check_usage(stderr);
		return -1;
	}
	if (a->path) {
		fprintf(stderr, "dlsim %s: unexpected argument '%s' (one DB expected)\n", verb, arg);
		return -1;
	}
	a->path = arg;
	return 0;
}

static const struct cli_opt check_opts[] = {
	{ CLI_ACTION("--help", "-h", opt_help) },
	{ CLI_FN("--run", opt_run) },
	{ CLI_TRUE("--all", NULL, struct check_args, all) },
	{ CLI_TRUE("--verbose", "-v", struct check_args, verbose) },
};

static const struct cli_verb check_verb = {
	.name = "check", .opt = check_opts, .nopt = sizeof(check_opts) / sizeof(check_opts[0]),
	.other = opt_other,
};

/* Every run of @db in run_id order into *@ids, *@n of them (0: none): 0, or -1 with the error said. */
static int all_runs(sqlite3 *db, const char *path, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st;
	size_t cap = 0;

	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT run_id FROM runs ORDER BY run_id", -1, &st, NULL)
	    != SQLITE_OK) {
		fprintf(stderr, "dlsim check: %s: %s\n", path, sqlite3_errmsg(db));
		return -1;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			int64_t *ni = realloc(*ids, (cap = cap ? cap * 2 : 16) * sizeof(*ni));

			if (!ni)
				break;
			*ids = ni;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return 0;
}

/* --all: every run of @db checked; the worst exit status (3 above 1). */
static int check_all(sqlite3 *db, const char *path, int verbose)
{
	char err[512];
	int64_t *ids;
	size_t n;
	int ret = DL_EXIT_OK;

	if (all_runs(db, path, &ids, &n))
		return DL_EXIT_USAGE;
	if (!n) {
		fprintf(stderr, "dlsim check: %s: no runs in the database\n", path);
		ret = DL_EXIT_USAGE;
	}
	/*
	 * A sweep's shards: all at once (past SQLite's 10 attached, read into
	 * TEMP copies); when one is missing or foreign, run by run, so that
	 * the runs of the others are still checked.
	 */
	bool each = n && dl_log_attach_shards(db, NULL, 0, err, sizeof(err));

	for (size_t i = 0; i < n; i++) {
		int r = each && dl_log_attach_shards(db, &ids[i], 1, err, sizeof(err)) ?
			(fprintf(stderr, "dlsim check: %s\n", err), DL_EXIT_USAGE) :
			check_one(db, ids[i], verbose);

		if (r > ret)
			ret = r;
	}
	free(ids);
	return ret;
}

/* RUN of @db, or its newest run when RUN is 0: the exit status. */
static int check_run(sqlite3 *db, const char *path, int64_t run, int verbose)
{
	char err[512];

	if (!run)
		run = dl_check_newest_run(db);
	if (run <= 0) {
		fprintf(stderr, "dlsim check: %s: no runs in the database\n", path);
		return DL_EXIT_USAGE;
	}
	if (dl_log_attach_shards(db, &run, 1, err, sizeof(err))) {
		fprintf(stderr, "dlsim check: %s\n", err);
		return DL_EXIT_USAGE;
	}
	return check_one(db, run, verbose);
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = { 0 };
	sqlite3 *db;
	char err[512];
	int ret;

	ret = cli_opts_parse(&check_verb, argc, argv, &a);
	if (ret)
		return ret > 0 ? DL_EXIT_OK : DL_EXIT_USAGE;
	if (!a.path) {
		check_usage(stderr);
		return DL_EXIT_USAGE;
	}
	if (a.all && a.run) {
		fprintf(stderr, "dlsim check: --run and --all exclude each other\n");
		return DL_EXIT_USAGE;
	}
	if (dl_log_open_existing(a.path, &db, err, sizeof(err))) {
		fprintf(stderr, "dlsim check: %s\n", err);
		return DL_EXIT_USAGE;
	}
	ret = a.all ? check_all(db, a.path, a.verbose ? 2 : 1) :
		      check_run(db, a.path, a.run, a.verbose ? 2 : 1);
	sqlite3_close(db);
	return ret;
}
