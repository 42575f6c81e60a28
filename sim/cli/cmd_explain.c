/*
 * cmd_explain.c - `dlsim explain DB [--run ID]`, and the account printed
 * under `run`'s and `compare`'s tables (report/explain.c does the work).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/explain.h"
#include "sim/cli/cli.h"

/* Past this many devices `run` and `compare` only say how to get the account. */
#define EXPLAIN_AFTER_RUN_MAX_DEVICES 100000u

static void explain_usage(FILE *f)
{
	fprintf(f, "usage: dlsim explain DB [--run ID]\n\n"
		   "Why a run took what it took, from its log alone.  Per op and phase its time,\n"
		   "split into parts that add up to it, found by walking back from the phase's\n"
		   "last callback through what each callback waited for:\n"
		   "  main thread       callbacks the main PM thread ran one after another in\n"
		   "                    dpm_list order (sync devices; every prepare, complete),\n"
		   "                    with the longest named\n"
		   "  chain             callbacks on workers, each waiting for the one before (a\n"
		   "                    child, consumer, parent or supplier), in time order\n"
		   "  CPU contention    ready, but all K CPUs busy (only where the model has the\n"
		   "                    callbacks' CPU work)\n"
		   "  dispatch          ready, not yet running: queueing, wake-ups, the walk\n"
		   "  waiting to start  the same where the CPU share is unknown (--mode kernel,\n"
		   "                    older logs): contention or dispatch, no verdict\n"
		   "Beside each, the engine's bound max(chain, CPU work/K) and whether the phase\n"
		   "was chain-bound or CPU-bound, when the callbacks' CPU work is known (\"cpu\"\n"
		   "given; sleeping callbacks, the default, give none: no verdict).  Then the\n"
		   "time charged for device_pm_move_to_tail() before deferred probe retries, when\n"
		   "at least a tenth of the run; the links the core refused and why; the unbind\n"
		   "cascades by name.\n"
		   "--run: the run (default: the newest).\n\n"
		   "The run's log is verified first, as by dlsim check: a corrupt log is refused.\n\n"
		   "exit status: 0 success, 2 bad usage, no such database or run, 3 a corrupt log\n");
}

/* The account to stdout, names escaped (cli_write_text()): the log's names are data. */
static int explain_escaped(const char *db, int64_t run, enum dl_explain_detail mode,
			   const atomic_int *stop, char *err, size_t errlen)
{
	char *text = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&text, &n);
	int ret = m ? dl_explain_path_stop(db, run, mode, m, stop, err, errlen) : -ENOMEM;

	if (m)
		fclose(m);
	if (!m)
		snprintf(err, errlen, "out of memory");
	if (text && ret != -EINTR)
		cli_write_text(stdout, text, n);
	free(text);
	return ret;
}

int cmd_explain(int argc, char **argv)
{
	const char *db = NULL, *v;
	int64_t run = 0;
	char err[512];
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			explain_usage(stdout);
			return DL_EXIT_OK;
		} else if ((v = cli_opt_value(argc, argv, &i, "--run"))) {
			char *end;

			run = strtoll(v, &end, 10);
			if (!*v || *end || run <= 0) {
				fprintf(stderr, "dlsim explain: --run '%s'; expected a run id (1 or more)\n",
					v);
				return DL_EXIT_USAGE;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "dlsim explain: unknown option '%s'\n", argv[i]);
			explain_usage(stderr);
			return DL_EXIT_USAGE;
		} else if (db) {
			fprintf(stderr, "dlsim explain: more than one database ('%s')\n", argv[i]);
			return DL_EXIT_USAGE;
		} else {
			db = argv[i];
		}
	}
	if (!db) {
		explain_usage(stderr);
		return DL_EXIT_USAGE;
	}
	if (access(db, R_OK)) {
		fprintf(stderr, "dlsim explain: %s: %s; expected a dlsim database\n", db,
			strerror(errno));
		return DL_EXIT_USAGE;
	}
	if ((ret = cli_log_validate("explain", db, &run)) >= 0)
		return ret;
	if (explain_escaped(db, run, DL_EXPLAIN_FULL, NULL, err, sizeof(err))) {
		fprintf(stderr, "dlsim explain: %s: %s\n", db, err);
		return DL_EXIT_USAGE;
	}
	return DL_EXIT_OK;
}

void cli_explain_after(const char *db, int64_t run_id, uint32_t devices, int is_short)
{
	char err[512];
	int ret;

	if (!db || run_id <= 0)
		return;
	printf("\n");
	if (devices > EXPLAIN_AFTER_RUN_MAX_DEVICES) {
		printf("(%u devices: 'dlsim explain %s --run %lld' for why the run took what it "
		       "took)\n", devices, db, (long long)run_id);
		return;
	}
	fflush(stdout);
	/*
	 * The run is recorded by now: Ctrl-C (the verb's handler sets the flag)
	 * ends the account at once, and the run's exit status stands.
	 */
	if (atomic_load(cli_stop_flag()))
		return;
	ret = explain_escaped(db, run_id, is_short ? DL_EXPLAIN_SHORT : DL_EXPLAIN_FULL,
			      cli_stop_flag(), err, sizeof(err));
	if (ret == -EINTR)
		printf("(interrupted: 'dlsim explain %s --run %lld' gives the account)\n", db,
		       (long long)run_id);
	else if (ret)
		fprintf(stderr, "dlsim: explain run %lld: %s\n", (long long)run_id, err);
}
