/*
 * cmd_twin.c - `dlsim twin DB RUN [--db OUT.db] [--json]`: the replay twin
 * of a logged run (issue 31, sim/twin/twin.h): a DES run of the same
 * devices, links, script, order, K, kernel rules, probe context and seed,
 * in which every callback lasts what it lasted in RUN, logged as a normal
 * run whose runs.twin_of names RUN.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sim/cli/cli.h"
#include "sim/core/dl_core.h"
#include "sim/engine/engine.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_batch.h"
#include "sim/log/dl_log_shard.h"
#include "sim/log/dl_log_result.h"
#include "sim/log/dl_testhook.h"
#include "sim/run/dl_run.h"
#include "sim/twin/twin.h"

#define TWIN_MAX_SET 64

static void twin_usage(FILE *f)
{
	fprintf(f, "usage: dlsim twin DB RUN [--db OUT.db] [--json] [--profile P] [--set cost.KEY=V]...\n\n"
		   "The replay twin of run RUN of DB (des, threads or kernel): a DES run of the\n"
		   "same devices, parents, async flags, listed links and script (rebuilt from the\n"
		   "run's events: probe, suspend, resume, unbind, bind), the same order, K, kernel\n"
		   "rules, probe context and seed, and the failures the run logged, in which every\n"
		   "callback (probe, remove, each PM phase) lasts exactly what it lasted in RUN\n"
		   "(its sleep's late end included: cost.sleep_end_ns is 0 unless --set).\n"
		   "What differs between a run and its twin is then the engine's scheduling and\n"
		   "cost model alone.  The twin is logged as a normal run (runs.twin_of = RUN,\n"
		   "metric twin_of) and its id printed; 'dlsim diff DB RUN TWIN' sets them side by\n"
		   "side.\n\n"
		   "  --db OUT.db       log the twin there (default: DB itself)\n"
		   "  --json            print {\"run_id\": N, \"twin_of\": RUN, ...} on stdout\n"
		   "  --profile P       the cost model's defaults, hardware, guest or phone\n"
		   "                    (default: guest for a kernel run, hardware for the others)\n"
		   "  --set cost.KEY=V  a key of the cost model for the twin (e.g. the guest's\n"
		   "                    cost.main_ns=3500 for a kernel run)\n\n"
		   "DB is only read (it is checked first, as by 'dlsim check'); the twin is\n"
		   "written as 'dlsim run' writes a log.\n\n"
		   "exit status: 0 ok, 1 the twin's run failed, 2 bad usage, no such run, or a run\n"
		   "the twin cannot rebuild (the reason on stderr), 3 RUN's log is corrupt (nothing\n"
		   "replayed), 130 interrupted\n");
}

/* Read RUN of @in into @tw and its scenario into *@sc; exit status on failure. */
static int load_twin(const char *in, int64_t run, const struct dl_override *set, size_t nset,
		     struct dl_twin *tw, struct dl_scenario **sc)
{
	struct dl_error err;
	char msg[1024];
	sqlite3 *db;
	char label[64];
	int ret;

	/* the source is only read (it may be on a read-only mount), and
	 * validated first as every reader's log is: a corrupt run is not replayed */
	if (dl_log_open_reader(in, &db, msg, sizeof(msg))) {
		fprintf(stderr, "dlsim twin: %s\n", msg);
		return DL_EXIT_USAGE;
	}
	if (dl_log_attach_shards(db, &run, 1, msg, sizeof(msg))) {
		fprintf(stderr, "dlsim twin: %s\n", msg);
		sqlite3_close(db);
		return DL_EXIT_USAGE;
	}
	if ((ret = cli_log_verify_run("twin", in, db, run)) >= 0) {
		sqlite3_close(db);
		return ret;
	}
	ret = dl_twin_read(db, run, tw, &err);
	sqlite3_close(db);
	if (ret) {
		fprintf(stderr, "dlsim twin: %s: run %" PRId64 ": %s\n", in, run, err.msg);
		return DL_EXIT_USAGE;
	}
	snprintf(label, sizeof(label), "twin of run %" PRId64, run);
	if (dl_scenario_load_json(label, tw->scenario, set, nset, NULL, sc, &err)) {
		fprintf(stderr, "dlsim twin: %s\n", err.msg);
		dl_twin_free(tw);
		return DL_EXIT_USAGE;
	}
	/*
	 * Its JSON is loaded: freed now, while Ctrl-C still ends the twin at
	 * once, not after the run (a million devices' tree: seconds of free()
	 * after a Ctrl-C)
	 */
	json_decref(tw->scenario);
	tw->scenario = NULL;
	return DL_EXIT_OK;
}

static void print_result(const struct dl_twin *tw, const struct dl_run_result *r, int64_t of,
			 int64_t id, bool json)
{
	char key[32];

	if (json) {
		json_t *j = json_pack("{s:I, s:I, s:s, s:s, s:i, s:I, s:i, s:s}", "run_id",
				      (json_int_t)id, "twin_of", (json_int_t)of, "order",
				      dl_order_name(tw->order), "of_mode", tw->mode, "workers",
				      (int)r->workers, "makespan_ns", (json_int_t)r->makespan_ns,
				      "replayed_callbacks", (int)tw->ncallbacks, "status", r->status);
		json_t *ops = json_object();

		for (uint32_t i = 0; j && ops && i < r->nops; i++)
			json_object_set_new(ops, cli_op_key(r, i, key, sizeof(key)),
					    json_integer(r->op[i].makespan_ns));
		if (j && ops && !json_object_set_new(j, "ops", ops)) {
			char *s = json_dumps(j, JSON_PRESERVE_ORDER);

			if (s)
				puts(s);
			free(s);
		}
		json_decref(j);
		return;
	}
	printf("twin of run %" PRId64 " (%s, %s, K=%u): run %" PRId64 ", %u callbacks replayed,"
	       " status %s\n", of, tw->mode, dl_order_name(tw->order), r->workers, id,
	       tw->ncallbacks, r->status);
	for (uint32_t i = 0; i < r->nops; i++)
		printf("  %-10s %12.3f ms\n", cli_op_key(r, i, key, sizeof(key)),
		       r->op[i].makespan_ns / 1e6);
	printf("  %-10s %12.3f ms\n", "total", r->makespan_ns / 1e6);
}

int cmd_twin(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *runs = NULL, *v;
	struct dl_override set[TWIN_MAX_SET];
	size_t nset = 0;
	bool json = false, have_profile = false;
	enum dl_cost_profile profile = DL_PROFILE_HARDWARE;
	uint64_t run;
	struct dl_twin tw;
	struct dl_scenario *sc = NULL;
	struct dl_run_result *r = NULL;
	struct dl_log_batch *b = NULL;
	struct dl_log *log = NULL;
	char msg[1024], kernel[16];
	int64_t id = 0;
	int rc, ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			twin_usage(stdout);
			return DL_EXIT_OK;
		}
	}
	for (int i = 1; i < argc; i++) {
		if ((v = cli_opt_value(argc, argv, &i, "--db"))) {
			out = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--set"))) {
			const char *eq = strchr(v, '=');

			if (!eq || strncmp(v, "cost.", 5) || nset == TWIN_MAX_SET) {
				fprintf(stderr, "dlsim twin: --set '%s'; expected cost.KEY=VALUE (at most"
					" %d)\n", v, TWIN_MAX_SET);
				rc = DL_EXIT_USAGE;
				goto done_set;
			}
			set[nset++] = (struct dl_override){ .key = strndup(v, (size_t)(eq - v)),
							    .value = eq + 1 };
		} else if ((v = cli_opt_value(argc, argv, &i, "--profile"))) {
			if (dl_cost_profile_parse(v, &profile)) {
				fprintf(stderr, "dlsim twin: --profile '%s'; expected hardware or guest\n", v);
				rc = DL_EXIT_USAGE;
				goto done_set;
			}
			have_profile = true;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "dlsim twin: unknown option '%s'\n", argv[i]);
			twin_usage(stderr);
			rc = DL_EXIT_USAGE;
			goto done_set;
		} else if (!in) {
			in = argv[i];
		} else if (!runs) {
			runs = argv[i];
		} else {
			fprintf(stderr, "dlsim twin: unexpected argument '%s'\n", argv[i]);
			rc = DL_EXIT_USAGE;
			goto done_set;
		}
	}
	if (!in || !runs || (out && !*out)) {
		twin_usage(stderr);
		rc = DL_EXIT_USAGE;
		goto done_set;
	}
	if (cli_parse_u64(runs, &run) || !run || run > INT64_MAX) {
		fprintf(stderr, "dlsim twin: RUN '%s'; expected a run id\n", runs);
		rc = DL_EXIT_USAGE;
		goto done_set;
	}
	rc = load_twin(in, (int64_t)run, set, nset, &tw, &sc);
	if (rc)
		goto done_set;
	out = out ? out : in;
	r = calloc(1, sizeof(*r));
	b = malloc(sizeof(*b));
	if (!r || !b) {
		fprintf(stderr, "dlsim twin: out of memory\n");
		rc = DL_EXIT_USAGE;
		goto done;
	}
	if (dl_log_open(out, &log, msg, sizeof(msg))) {
		fprintf(stderr, "dlsim twin: %s\n", msg);
		rc = DL_EXIT_USAGE;
		goto done;
	}
	{
		struct dl_engine_opts eo = {
			.order = tw.order, .workers = tw.workers, .kernel = tw.kernel, .seed = tw.seed,
			.probe_module = tw.probe_module, .replay = &tw.lat, .stop = cli_stop_flag(),
			.cost_profile = have_profile ? profile : !strcmp(tw.mode, "kernel") ?
					DL_PROFILE_GUEST : DL_PROFILE_HARDWARE,
		};
		struct dl_run_info info = {
			.scenario = tw.name, .order = dl_order_name(tw.order), .mode = "des",
			.version = DLSIM_VERSION, .kernel = kernel, .seed = tw.seed,
			.devices = sc->ndev, .links = sc->nlink, .workers = tw.workers,
			.probe_context = tw.probe_module ? "module" : "boot",
		};
		char why[160];

		dl_kver_format(dl_order_kernel(tw.order, tw.kernel), kernel, sizeof(kernel));
		if (dl_order_check_kernel(tw.order, dl_order_kernel(tw.order, tw.kernel), why,
					  sizeof(why))) {
			fprintf(stderr, "dlsim twin: run %" PRIu64 ": %s\n", run, why);
			rc = DL_EXIT_USAGE;
			goto done;
		}
		dl_log_set_twin_of(log, (int64_t)run);   /* marked as it ends: one transaction */
		/*
		 * Ctrl-C from the run's first row on: its devices rows stop (a
		 * million take seconds), the engine stops, the run ends
		 * 'interrupted' (never left 'running'), an older database's index
		 * build is abandoned; before, it is the default action (only
		 * reading so far).
		 */
		cli_catch_stop();
		dl_log_set_stop(log, cli_stop_flag());
		dl_test_hook("twin-begin");   /* tests: Ctrl-C as the twin's run begins */
		ret = dl_run_log_begin(log, b, cli_stop_flag(), cli_stop_flag(), sc, &info, &id, &eo.sink);
		if (ret && ret != -EINTR) {
			fprintf(stderr, "dlsim twin: %s: %s\n", out, dl_log_error(log));
			rc = DL_EXIT_USAGE;
			goto done;
		}
		if (!ret && !atomic_load(cli_stop_flag()))
			ret = dl_engine_run(sc, &eo, r);
		else
			ret = -EINTR;
		if (!r->status)
			r->status = ret == -EINTR ? "interrupted" : "failed";
		if (dl_run_log_end(log, b, r)) {
			fprintf(stderr, "dlsim twin: %s: %s\n", out, dl_log_error(log));
			rc = DL_EXIT_USAGE;
			goto done;
		}
	}
	dl_log_close(log);
	log = NULL;
	dl_test_hook("twin-recorded");   /* tests: killed once the twin's run is committed */
	print_result(&tw, r, (int64_t)run, id, json);
	rc = ret == -EINTR ? DL_EXIT_INTERRUPTED : ret < 0 ? DL_EXIT_USAGE :
	     ret ? DL_EXIT_VIOLATION : DL_EXIT_OK;
	if (ret < 0 && ret != -EINTR)
		fprintf(stderr, "dlsim twin: the engine stopped: %s\n", strerror(-ret));
done:
	if (log)
		dl_log_close(log);
	free(r);
	free(b);
	dl_scenario_free(sc);
	dl_twin_free(&tw);
done_set:
	for (size_t i = 0; i < nset; i++)
		free((char *)set[i].key);
	return rc;
}
