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
#include "sim/cli/cli_opts.h"
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

/* The options, DB and RUN. */
struct twin_args {
	const char *in, *runs, *out;
	struct dl_override set[TWIN_MAX_SET];	/* keys strndup()ed: twin_args_free() */
	size_t nset;
	bool json, have_profile;
	enum dl_cost_profile profile;
	uint64_t run;
};

static void twin_args_free(struct twin_args *a)
{
	for (size_t i = 0; i < a->nset; i++)
		free((char *)a->set[i].key);
}

/* --help or -h anywhere, even after a bad option or as another's value: the usage, nothing else. */
static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

/* --set cost.KEY=VALUE: the cost model's keys only. */
static int opt_set(void *obj, const char *verb, const char *v)
{
	struct twin_args *a = obj;
	const char *eq = strchr(v, '=');

	if (!eq || strncmp(v, "cost.", 5) || a->nset == TWIN_MAX_SET) {
		fprintf(stderr, "dlsim %s: --set '%s'; expected cost.KEY=VALUE (at most %d)\n", verb,
			v, TWIN_MAX_SET);
		return -1;
	}
	a->set[a->nset++] = (struct dl_override){ .key = strndup(v, (size_t)(eq - v)),
						  .value = eq + 1 };
	return 0;
}

static int opt_profile(void *obj, const char *verb, const char *v)
{
	struct twin_args *a = obj;

	if (dl_cost_profile_parse(v, &a->profile)) {
		fprintf(stderr, "dlsim %s: --profile '%s'; expected hardware or guest\n", verb, v);
		return -1;
	}
	a->have_profile = true;
	return 0;
}

/* An argument no row names: an unknown option ("-" is not one), DB, then RUN. */
static int opt_other(void *obj, const char *verb, const char *arg)
{
	struct twin_args *a = obj;

	if (arg[0] == '-' && arg[1]) {
		fprintf(stderr, "dlsim %s: unknown option '%s'\n", verb, arg);
		twin_usage(stderr);
		return -1;
	}
	if (!a->in) {
		a->in = arg;
	} else if (!a->runs) {
		a->runs = arg;
	} else {
		fprintf(stderr, "dlsim %s: unexpected argument '%s'\n", verb, arg);
		return -1;
	}
	return 0;
}

static const struct cli_opt twin_opts[] = {
	{ CLI_STR("--db", struct twin_args, out) },
	{ CLI_FN("--set", opt_set) },
	{ CLI_FN("--profile", opt_profile) },
	{ CLI_TRUE("--json", NULL, struct twin_args, json) },
};

static const struct cli_verb twin_verb = {
	.name = "twin", .opt = twin_opts, .nopt = sizeof(twin_opts) / sizeof(twin_opts[0]),
	.other = opt_other,
};

/* Parse argv into @a, DB and RUN required: 0, or DL_EXIT_USAGE with the reason printed. */
static int parse_args(int argc, char **argv, struct twin_args *a)
{
	if (cli_opts_parse(&twin_verb, argc, argv, a))
		return DL_EXIT_USAGE;
	if (!a->in || !a->runs || (a->out && !*a->out)) {
		twin_usage(stderr);
		return DL_EXIT_USAGE;
	}
	if (cli_parse_u64(a->runs, &a->run) || !a->run || a->run > INT64_MAX) {
		fprintf(stderr, "dlsim twin: RUN '%s'; expected a run id\n", a->runs);
		return DL_EXIT_USAGE;
	}
	return DL_EXIT_OK;
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

/* One twin being run: what it reads, what it writes. */
struct twin_job {
	const struct twin_args *a;
	const char *out;		/* --db, else DB */
	struct dl_twin tw;
	struct dl_scenario *sc;
	struct dl_run_result *r;
	struct dl_log_batch *b;
	struct dl_log *log;
	int64_t id;
};

/*
 * Run the twin's engine into @j's open log, as one logged run: 0 with the
 * engine's return in *@ret, or DL_EXIT_USAGE with the reason printed.
 */
static int run_logged(struct twin_job *j, int *ret)
{
	const struct dl_twin *tw = &j->tw;
	struct dl_engine_opts eo = {
		.order = tw->order, .workers = tw->workers, .kernel = tw->kernel, .seed = tw->seed,
		.probe_module = tw->probe_module, .replay = &tw->lat, .stop = cli_stop_flag(),
		.cost_profile = j->a->have_profile ? j->a->profile : !strcmp(tw->mode, "kernel") ?
				DL_PROFILE_GUEST : DL_PROFILE_HARDWARE,
	};
	char kernel[16], why[160];
	struct dl_run_info info = {
		.scenario = tw->name, .order = dl_order_name(tw->order), .mode = "des",
		.version = DLSIM_VERSION, .kernel = kernel, .seed = tw->seed,
		.devices = j->sc->ndev, .links = j->sc->nlink, .workers = tw->workers,
		.probe_context = tw->probe_module ? "module" : "boot",
	};

	dl_kver_format(dl_order_kernel(tw->order, tw->kernel), kernel, sizeof(kernel));
	if (dl_order_check_kernel(tw->order, dl_order_kernel(tw->order, tw->kernel), why,
				  sizeof(why))) {
		fprintf(stderr, "dlsim twin: run %" PRIu64 ": %s\n", j->a->run, why);
		return DL_EXIT_USAGE;
	}
	dl_log_set_twin_of(j->log, (int64_t)j->a->run);   /* marked as it ends: one transaction */
	/*
	 * Ctrl-C from the run's first row on: its devices rows stop (a
	 * million take seconds), the engine stops, the run ends
	 * 'interrupted' (never left 'running'), an older database's index
	 * build is abandoned; before, it is the default action (only
	 * reading so far).
	 */
	cli_catch_stop();
	dl_log_set_stop(j->log, cli_stop_flag());
	dl_test_hook("twin-begin");   /* tests: Ctrl-C as the twin's run begins */
	*ret = dl_run_log_begin(j->log, j->b, cli_stop_flag(), cli_stop_flag(), j->sc, &info,
				&j->id, &eo.sink);
	if (*ret && *ret != -EINTR) {
		fprintf(stderr, "dlsim twin: %s: %s\n", j->out, dl_log_error(j->log));
		return DL_EXIT_USAGE;
	}
	if (!*ret && !atomic_load(cli_stop_flag()))
		*ret = dl_engine_run(j->sc, &eo, j->r);
	else
		*ret = -EINTR;
	if (!j->r->status)
		j->r->status = *ret == -EINTR ? "interrupted" : "failed";
	if (dl_run_log_end(j->log, j->b, j->r)) {
		fprintf(stderr, "dlsim twin: %s: %s\n", j->out, dl_log_error(j->log));
		return DL_EXIT_USAGE;
	}
	return DL_EXIT_OK;
}

/* Load, run, log and print the twin @a asks for: the exit status. */
static int twin(const struct twin_args *a)
{
	struct twin_job j = { .a = a };
	char msg[1024];
	int rc, ret = 0;

	rc = load_twin(a->in, (int64_t)a->run, a->set, a->nset, &j.tw, &j.sc);
	if (rc)
		return rc;
	j.out = a->out ? a->out : a->in;
	j.r = calloc(1, sizeof(*j.r));
	j.b = malloc(sizeof(*j.b));
	if (!j.r || !j.b) {
		fprintf(stderr, "dlsim twin: out of memory\n");
		rc = DL_EXIT_USAGE;
		goto done;
	}
	if (dl_log_open(j.out, &j.log, msg, sizeof(msg))) {
		fprintf(stderr, "dlsim twin: %s\n", msg);
		rc = DL_EXIT_USAGE;
		goto done;
	}
	if ((rc = run_logged(&j, &ret)))
		goto done;
	dl_log_close(j.log);
	j.log = NULL;
	dl_test_hook("twin-recorded");   /* tests: killed once the twin's run is committed */
	print_result(&j.tw, j.r, (int64_t)a->run, j.id, a->json);
	rc = ret == -EINTR ? DL_EXIT_INTERRUPTED : ret < 0 ? DL_EXIT_USAGE :
	     ret ? DL_EXIT_VIOLATION : DL_EXIT_OK;
	if (ret < 0 && ret != -EINTR)
		fprintf(stderr, "dlsim twin: the engine stopped: %s\n", dl_run_strerror(ret));
done:
	if (j.log)
		dl_log_close(j.log);
	free(j.r);
	free(j.b);
	dl_scenario_free(j.sc);
	dl_twin_free(&j.tw);
	return rc;
}

int cmd_twin(int argc, char **argv)
{
	struct twin_args a = { .profile = DL_PROFILE_HARDWARE };
	int rc;

	if (wants_help(argc, argv)) {
		twin_usage(stdout);
		return DL_EXIT_OK;
	}
	rc = parse_args(argc, argv, &a);
	if (!rc)
		rc = twin(&a);
	twin_args_free(&a);
	return rc;
}
