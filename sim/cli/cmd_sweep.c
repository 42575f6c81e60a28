/*
 * cmd_sweep.c - `dlsim sweep`: scenarios/DTBs × orders × seeds × kernels,
 * each a normal logged run, into one database; resumable; a local pool of
 * worker processes (--jobs) or, under mpirun, the MPI ranks (sim/sweep/).
 * Prints a progress line (stderr, terminal only) and a summary per scenario.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_opts.h"
#include "sim/cli/sweep_cli.h"
#include "sim/kernel/kmode.h"
#include "sim/log/dl_log.h"
#include "sim/measure/atlas.h"
#include "sim/run/dl_run.h"
#include "sim/sweep/sweep.h"

#define MAX_JOBS 1024
#define MAX_PROBLEMS 50
#define KERNEL_BATCH 8          /* kernel mode: scenarios per boot (--kernel-batch) */

/* The synopsis, and what a sweep does and where it writes. */
static void sweep_usage_intro(FILE *f)
{
	fputs("usage: dlsim sweep [--scenarios PATH|DIR|GLOB]... [--dtbs DIR]... --orders A,B|all\n"
	      "                   [--seeds N] [--seed S] [--set KEY=VALUE]... [--db OUT.db]\n"
	      "                   [--jobs N] [--json] [opts]\n"
	      "       mpirun -np N dlsim sweep ...     (the ranks share the runs)\n"
	      "       dlsim sweep --compact OUT.db     (the runs' events into OUT.db)\n\n"
	      "Run every scenario × order × seed (× kernel), each a normal run logged to\n"
	      "OUT.db as `dlsim run` logs it and re-checked from its log, and print a\n"
	      "summary per scenario: the best order, by how much, its ratio to the lower\n"
	      "bound, and the runs that failed or violated a rule.  DTBs are imported on\n"
	      "the fly (no JSON written).  Resumable: a run already in OUT.db (same\n"
	      "scenario content, order, seed, kernel, mode and workers) is skipped, so\n"
	      "running the same command again completes an interrupted sweep.\n\n"
	      "Each worker logs its runs into its own shard, OUT.db.shards/HOST-PID-s0.db,\n"
	      "where their events, devices and links stay.  It commits each finished run's\n"
	      "runs, metrics, violations and sweep rows and the name of its shard into\n"
	      "OUT.db in one transaction (SQLite's write lock, held for some 60 rows; the\n"
	      "others simulate meanwhile).  MPI ranks on another node than rank 0 leave\n"
	      "that to rank 0, every second.  check, report, diff, explain and twin read\n"
	      "OUT.db's runs from their shards; keep OUT.db.shards/ beside OUT.db (a\n"
	      "folder moves whole).  --compact OUT.db copies every run's events into\n"
	      "OUT.db and then removes the files the sweep wrote in OUT.db.shards/ (not\n"
	      "while a sweep writes OUT.db).\n\n", f);
}

static void sweep_usage(FILE *f)
{
	sweep_usage_intro(f);
	fprintf(f,
		"options:\n"
		"  --scenarios P     a scenario file, a directory of *.json or a glob (repeatable)\n"
		"  --dtbs DIR        every *.dtb under DIR, or one .dtb file (repeatable)\n"
		"  --orders A,B|all  orders to run (all: every order but naive; see dlsim orders)\n"
		"  --seeds N         seeds S..S+N-1 for every scenario (default 1)\n"
		"  --seed S          the first seed (default 1; overrides the scenarios' seeds)\n"
		"  --kernel V[,W]    6.12 or 7.3: the kernel whose rules every run follows\n"
		"                    (as dlsim run --kernel; an order that kernel did not\n"
		"                    run is refused) and whose fw_devlink parsers and driver\n"
		"                    table import the DTBs (as import-dtb --kernel); default:\n"
		"                    each order's own kernel, DTBs imported with 6.12's.  A\n"
		"                    list (6.12,7.3) runs every order on each kernel that ran\n"
		"                    it (kernel-async on 6.12, kernel-async-v2 on 7.3), each\n"
		"                    kernel's runs on DTBs imported with its own table\n"
		"  --async M         DTBs: driver (default), none or all (as import-dtb)\n"
		"  --drivers M       DTBs: table (default) or all (as import-dtb)\n"
		"  --probe-context boot|module  des: as dlsim run (default boot); kernel mode:\n"
		"                    the model twins' (default module, as the guest's module\n"
		"                    probes; boot: sweep.mode twin-model-boot)\n"
		"  --mode des|threads|kernel  as dlsim run (threads: runs in parallel disturb\n"
		"                    the timing).  kernel: each worker boots its own guest\n"
		"                    (QEMU, one vCPU) per kernel for a batch of scenarios and\n"
		"                    plays every pending order of each in it; a guest that\n"
		"                    hangs or dies fails the runs it did not finish (the\n"
		"                    error says where it stopped) and the sweep goes on\n"
		"  --twins model|replay|both  kernel mode: after each kernel run its DES twin,\n"
		"                    logged as a run of its own (runs.twin_of, sweep.mode\n"
		"                    twin-model or twin-replay): model, the same scenario in\n"
		"                    the DES (one CPU, the module's probe context, the guest\n"
		"                    cost profile); replay, dlsim twin's DES with the kernel\n"
		"                    run's own callback times.  The summary then gives per\n"
		"                    scenario the pairs of devices a dependency orders that\n"
		"                    the twin orders as the kernel did, the pairs only timing\n"
		"                    orders, and per phase the makespan ratio twin/kernel\n"
		"  --kernel-batch N  kernel mode: scenarios per boot (default %d; fewer when\n"
		"                    the workers would otherwise idle)\n"
		"  --kernel-timeout S  kernel mode: kill a guest after S seconds (default: 180\n"
		"                    plus 5 ms per callback of its batch)\n"
		"  --workers K       simulated CPUs (default: each order's own)\n"
		"  --time-scale X    threads mode: real seconds per simulated second (0.01)\n"
		"  --max-wall S      threads mode: a run the DES puts over S seconds of real\n"
		"                    time is not run but recorded failed, saying why\n"
		"                    (default 3600; 0: no limit)\n"
		"  --set KEY=VALUE   override a field of every scenario's generate object\n"
		"  --db OUT.db       the database (default dlsim.db)\n"
		"  --jobs N          worker processes (default: the cores; under mpirun: 1 per rank)\n"
		"  --distribute queue|static  under mpirun: a shared counter on rank 0 hands out\n"
		"                    tasks (default), or rank r runs every N-th task\n"
		"  --write direct|shards  direct (default): workers on OUT.db's host commit\n"
		"                    their runs' rows into it; shards: the coordinator copies\n"
		"                    them from the shards (OUT.db on a file system whose\n"
		"                    locks SQLite cannot rely on)\n"
		"  --node-shards DIR under mpirun: every rank but rank 0 writes its shard into\n"
		"                    DIR (a node-local disk, the same path on every node) and\n"
		"                    leaves its runs there; at the end copy every node's DIR/*\n"
		"                    into OUT.db.shards/ and run dlsim sweep --compact OUT.db\n"
		"  --compact OUT.db  alone: merge the shards' events into OUT.db, remove them;\n"
		"                    refused (exit 2) while a sweep writes OUT.db\n"
		"  --no-check        do not re-check the runs from their logs\n"
		"  --verbose         a line per finished scenario/seed on stdout\n"
		"  --json            the summary as one JSON object on stdout\n\n"
		"exit status: 0 every run ok; 1 a run failed or violated a rule; 2 bad usage or\n"
		"input (nothing written); 130 interrupted (finished runs are kept; run again)\n", KERNEL_BATCH);
}

_Static_assert(DL_SWEEP_MAX_ORDERS >= DL_ORDER_COUNT, "\"all\" orders fit a plan");

static int parse_orders(const char *v, struct dl_sweep_plan *p)
{
	char list[512];

	p->norders = 0;
	if (!strcmp(v, "all")) {
		p->norders = dl_order_link_aware(p->order, 0);
		return 0;
	}
	snprintf(list, sizeof(list), "%s", v);
	for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (p->norders == DL_SWEEP_MAX_ORDERS || dl_order_parse(t, &p->order[p->norders])) {
			fprintf(stderr, "dlsim sweep: unknown order '%s'; see 'dlsim orders'\n", t);
			return -EINVAL;
		}
		for (uint32_t k = 0; k < p->norders; k++)
			if (p->order[k] == p->order[p->norders]) {
				fprintf(stderr, "dlsim sweep: order '%s' given twice\n", t);
				return -EINVAL;
			}
		p->norders++;
	}
	return p->norders ? 0 : -EINVAL;
}

/* --kernel V or a list V,W: the kernels every run follows (kernel mode: boots). */
static int parse_kernels(const char *arg, struct dl_sweep_plan *p)
{
	static char list[128];   /* the plan points into it: one sweep per process */
	char *v = list;

	if (strlen(arg) >= sizeof(list)) {
		fprintf(stderr, "dlsim sweep: --kernel '%s': expected 6.12 or 7.3 (or a list)\n", arg);
		return -1;
	}
	snprintf(list, sizeof(list), "%s", arg);
	p->nkernels = 0;
	for (char *save = NULL, *t = strtok_r(v, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint32_t kv;
		enum dl_dtb_kernel dk;

		if (dl_dtb_parse_kernel(t, &dk) || dl_kver_parse(t, &kv)) {
			fprintf(stderr, "dlsim sweep: --kernel '%s': expected 6.12 or 7.3 (or a list:"
				" 6.12,7.3)\n", t);
			return -1;
		}
		if (p->nkernels == DL_SWEEP_MAX_KERNELS) {
			fprintf(stderr, "dlsim sweep: --kernel: at most %d kernels\n",
				DL_SWEEP_MAX_KERNELS);
			return -1;
		}
		for (uint32_t k = 0; k < p->nkernels; k++)
			if (!strcmp(p->kernel[k], t)) {
				fprintf(stderr, "dlsim sweep: --kernel '%s' given twice\n", t);
				return -1;
			}
		/* the first kernel's parsers and driver table name the DTB's import in the
		 * scenario's hash; each kernel's runs import it with their own (sw_worker.c) */
		if (!p->nkernels) {
			p->dtb.kernel = dk;
			p->kver = kv;
		}
		p->kernel[p->nkernels++] = t;
	}
	if (!p->nkernels) {
		fprintf(stderr, "dlsim sweep: --kernel needs a version\n");
		return -1;
	}
	return 0;
}

/*
 * Orders × kernels: with one --kernel an order that kernel did not run is
 * refused; with a list, those pairs are left out (skip) and an order no
 * kernel of the list ran is refused.  Kernel mode: one vCPU, the guest's
 * kernels, and twins only there.
 */
static int check_kernels(struct dl_sweep_plan *p)
{
	bool kernel = !strcmp(p->mode, "kernel");
	uint32_t nv;

	if (p->twins && !kernel) {
		fprintf(stderr, "dlsim sweep: --twins: kernel mode only (--mode kernel)\n");
		return -1;
	}
	if (p->batch && !kernel) {
		fprintf(stderr, "dlsim sweep: --kernel-batch: kernel mode only (--mode kernel)\n");
		return -1;
	}
	if (kernel && !p->batch)
		p->batch = KERNEL_BATCH;
	if (p->timeout_ms && !kernel) {
		fprintf(stderr, "dlsim sweep: --kernel-timeout: kernel mode only (--mode kernel)\n");
		return -1;
	}
	if (kernel) {
		if (p->workers > 1) {
			fprintf(stderr, "dlsim sweep: --workers %u: the guest has one CPU\n", p->workers);
			return -1;
		}
		p->workers = 1;
		if (!p->kernel[0])
			p->kernel[0] = DL_KERNEL_DEFAULT;
		/* a kernel not fetched: refused before OUT.db is written, as dlsim run does */
		for (uint32_t k = 0; k < p->nkernels; k++) {
			char msg[600];

			if (dl_kernel_available(p->kernel[k], NULL, msg, sizeof(msg))) {
				fprintf(stderr, "dlsim sweep: %s\n", msg);
				return -1;
			}
		}
	}
	nv = dl_sweep_variants(p);
	p->skip = 0;
	for (uint32_t o = 0; p->kernel[0] && o < p->norders; o++) {
		uint32_t ran = 0;
		char why[256], why1[300] = "";

		for (uint32_t k = 0; k < p->nkernels; k++) {
			uint32_t kv;

			dl_kver_parse(p->kernel[k], &kv);
			if (dl_order_check_kernel(p->order[o], kv, why, sizeof(why)) ||
			    (kernel && !dl_order_policy(p->order[o])->kernel_native)) {
				if (kernel && !dl_order_policy(p->order[o])->kernel_native)
					snprintf(why, sizeof(why), "order '%s' is not the kernel's",
						 dl_order_name(p->order[o]));
				if (!why1[0])
					snprintf(why1, sizeof(why1), "%s: %s", p->kernel[k], why);
				for (uint32_t v = 0; v < nv; v++)
					p->skip |= 1ull << ((o * p->nkernels + k) * nv + v);
			} else {
				ran++;
			}
		}
		if (!ran || (p->nkernels == 1 && why1[0])) {
			fprintf(stderr, "dlsim sweep: --kernel %s\n", why1);
			return -1;
		}
	}
	return 0;
}

/* The option handlers: each 0, or -1 with the refusal printed (1: --help printed). */
static int opt_help(void *obj, const char *verb, const char *v)
{
	(void)obj, (void)verb, (void)v;
	sweep_usage(stdout);
	return 1;
}

static int add_input(struct sweep_opts *o, const char *v, bool dtb)
{
	char err[512];

	if (!*v || dl_sweep_add_scenarios(&o->plan, v, dtb, err, sizeof(err))) {
		fprintf(stderr, "dlsim sweep: %s\n", *v ? err : "--scenarios/--dtbs need a path");
		return -1;
	}
	o->have_input = true;
	return 0;
}

static int opt_scenarios(void *obj, const char *verb, const char *v)
{
	(void)verb;
	return add_input(obj, v, false);
}

static int opt_dtbs(void *obj, const char *verb, const char *v)
{
	(void)verb;
	return add_input(obj, v, true);
}

static int opt_orders(void *obj, const char *verb, const char *v)
{
	struct sweep_opts *o = obj;

	(void)verb;
	if (parse_orders(v, &o->plan))
		return -1;
	o->have_orders = true;
	return 0;
}

static int opt_kernel(void *obj, const char *verb, const char *v)
{
	struct sweep_opts *o = obj;

	(void)verb;
	return parse_kernels(v, &o->plan);
}

static int opt_twins(void *obj, const char *verb, const char *v)
{
	struct dl_sweep_plan *p = &((struct sweep_opts *)obj)->plan;

	(void)verb;
	if (!strcmp(v, "model"))
		p->twins = DL_SWEEP_TWIN_MODEL;
	else if (!strcmp(v, "replay"))
		p->twins = DL_SWEEP_TWIN_REPLAY;
	else if (!strcmp(v, "both"))
		p->twins = DL_SWEEP_TWIN_MODEL | DL_SWEEP_TWIN_REPLAY;
	else if (!strcmp(v, "none"))
		p->twins = 0;
	else {
		fprintf(stderr, "dlsim sweep: --twins '%s': expected model, replay, both or none\n", v);
		return -1;
	}
	return 0;
}

static int opt_kernel_timeout(void *obj, const char *verb, const char *v)
{
	struct sweep_opts *o = obj;
	uint64_t u;

	(void)verb;
	if (cli_parse_u64(v, &u) || u < 1 || u > 86400) {
		fprintf(stderr, "dlsim sweep: --kernel-timeout '%s': expected 1..86400 seconds\n", v);
		return -1;
	}
	o->plan.timeout_ms = (int64_t)u * 1000;
	return 0;
}

static int opt_async(void *obj, const char *verb, const char *v)
{
	struct sweep_opts *o = obj;

	(void)verb;
	if (dl_dtb_parse_async(v, &o->plan.dtb.async)) {
		fprintf(stderr, "dlsim sweep: --async '%s': expected driver, none or all\n", v);
		return -1;
	}
	return 0;
}

static int opt_drivers(void *obj, const char *verb, const char *v)
{
	struct sweep_opts *o = obj;

	(void)verb;
	if (strcmp(v, "table") && strcmp(v, "all")) {
		fprintf(stderr, "dlsim sweep: --drivers '%s': expected table or all\n", v);
		return -1;
	}
	o->plan.dtb.drivers = !strcmp(v, "all") ? DL_DTB_DRIVERS_ALL : DL_DTB_DRIVERS_TABLE;
	return 0;
}

static int opt_probe_context(void *obj, const char *verb, const char *v)
{
	struct sweep_opts *o = obj;

	o->pc_given = true;
	return cli_opt_probe_context(verb, v, &o->plan.probe_module);
}

static int opt_mode(void *obj, const char *verb, const char *v)
{
	struct sweep_opts *o = obj;
	enum dl_backend be;

	if (cli_opt_backend(verb, v, &be))
		return -1;
	o->plan.mode = dl_backend_name(be);
	return 0;
}

static int opt_time_scale(void *obj, const char *verb, const char *v)
{
	struct dl_sweep_plan *p = &((struct sweep_opts *)obj)->plan;
	char *end;

	(void)verb;
	p->time_scale = strtod(v, &end);
	if (*end || !(p->time_scale > 0)) {
		fprintf(stderr, "dlsim sweep: --time-scale '%s': expected a positive number\n", v);
		return -1;
	}
	return 0;
}

static int opt_set(void *obj, const char *verb, const char *v)
{
	struct dl_sweep_plan *p = &((struct sweep_opts *)obj)->plan;

	return cli_opt_override(verb, v, p->set, &p->nset, DL_SWEEP_MAX_SET);
}

static int opt_db(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (!*v) {
		fprintf(stderr, "dlsim sweep: --db needs a path\n");
		return -1;
	}
	((struct sweep_opts *)obj)->db = v;
	return 0;
}

static int opt_write(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (strcmp(v, "direct") && strcmp(v, "shards")) {
		fprintf(stderr, "dlsim sweep: --write '%s': expected direct or shards\n", v);
		return -1;
	}
	((struct sweep_opts *)obj)->shards = !strcmp(v, "shards");
	return 0;
}

static int opt_node_shards(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (!*v || !sweep_under_mpi()) {
		fprintf(stderr, "dlsim sweep: --node-shards %s: a folder, under mpirun only"
			" (ranks on other nodes)\n", v);
		return -1;
	}
	((struct sweep_opts *)obj)->node_shards = v;
	return 0;
}

static int opt_distribute(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (strcmp(v, "queue") && strcmp(v, "static")) {
		fprintf(stderr, "dlsim sweep: --distribute '%s': expected queue or static\n", v);
		return -1;
	}
	((struct sweep_opts *)obj)->distribute = v;
	return 0;
}

#define SW struct sweep_opts
static const struct cli_opt sweep_opts_table[] = {
	{ CLI_ACTION("--help", "-h", opt_help) },
	{ CLI_TRUE("--json", NULL, SW, json) },
	{ CLI_TRUE("--verbose", "-v", SW, verbose) },
	{ CLI_FALSE("--no-check", SW, plan.check) },
	{ CLI_FN("--scenarios", opt_scenarios) },
	{ CLI_FN("--dtbs", opt_dtbs) },
	{ CLI_FN("--orders", opt_orders) },
	{ CLI_U32("--seeds", SW, plan.nseeds, 1, DL_SWEEP_MAX_SEEDS, NULL) },
	{ CLI_U64("--seed", SW, plan.seed0) },
	{ CLI_FN("--kernel", opt_kernel) },
	{ CLI_FN("--twins", opt_twins) },
	{ CLI_U32("--kernel-batch", SW, plan.batch, 1, DL_SWEEP_MAX_BATCH, NULL) },
	{ CLI_FN("--kernel-timeout", opt_kernel_timeout) },
	{ CLI_FN("--async", opt_async) },
	{ CLI_FN("--drivers", opt_drivers) },
	{ CLI_FN("--probe-context", opt_probe_context) },
	{ CLI_FN("--mode", opt_mode) },
	{ CLI_U32("--workers", SW, plan.workers, 1, 4096, NULL) },
	{ CLI_FN("--time-scale", opt_time_scale) },
	{ CLI_U32("--max-wall", SW, plan.max_wall, 0, 31536000, " s") },
	{ CLI_FN("--set", opt_set) },
	{ CLI_FN("--db", opt_db) },
	{ CLI_U32("--jobs", SW, jobs, 1, MAX_JOBS, NULL) },
	{ CLI_FN("--write", opt_write) },
	{ CLI_FN("--node-shards", opt_node_shards) },
	{ CLI_FN("--distribute", opt_distribute) },
};
#undef SW

static const struct cli_verb sweep_verb = {
	.name = "sweep", .opt = sweep_opts_table,
	.nopt = sizeof(sweep_opts_table) / sizeof(sweep_opts_table[0]),
};

static void set_defaults(struct sweep_opts *o)
{
	struct dl_sweep_plan *p = &o->plan;

	p->mode = "des";
	p->nseeds = 1;
	p->seed0 = 1;
	p->time_scale = 0.01;
	p->max_wall = 3600;
	p->check = true;
	p->nkernels = 1;
	p->kernel[0] = NULL;
	/* DTBs get the latency atlas's figures, as import-dtb gives them (parsed on first use) */
	p->dtb.dev_hook = dl_atlas_dtb_hook;
	o->db = "dlsim.db";
	o->distribute = "queue";
}

/* What the options say together: 0, or -1 with the refusal printed. */
static int check_options(struct sweep_opts *o)
{
	struct dl_sweep_plan *p = &o->plan;

	if (!o->have_input) {
		fprintf(stderr, "dlsim sweep: nothing to run: give --scenarios PATH or --dtbs DIR\n");
		return -1;
	}
	if (!o->have_orders) {
		fprintf(stderr, "dlsim sweep: missing --orders A,B,... (or all)\n");
		return -1;
	}
	if (check_kernels(p))
		return -1;
	if (!strcmp(p->mode, "kernel")) {
		/* the guest's module always probes after boot; the option is the model twins' */
		p->twin_boot = o->pc_given && !p->probe_module;
		p->probe_module = false;
	}
	if (p->probe_module && strcmp(p->mode, "des")) {
		fprintf(stderr, "dlsim sweep: --probe-context module: des mode only\n");
		return -1;
	}
	if ((uint64_t)p->nsc * p->nseeds > UINT32_MAX / 2) {
		fprintf(stderr, "dlsim sweep: %u scenarios × %u seeds is too many tasks\n", p->nsc,
			p->nseeds);
		return -1;
	}
	return 0;
}

/* 0, 1 (--help printed) or -1 (refused, the reason printed). */
static int parse_args(int argc, char **argv, struct sweep_opts *o)
{
	int rc;

	set_defaults(o);
	rc = cli_opts_parse(&sweep_verb, argc, argv, o);
	if (rc)
		return rc;
	if (check_options(o))
		return -1;
	if (!o->jobs)
		o->jobs = cli_usable_cpus(MAX_JOBS);
	return 0;
}

/* JSON scenario files are validated up front (bad input: exit 2, nothing written). */
static int validate(const struct dl_sweep_plan *p)
{
	for (uint32_t i = 0; i < p->nsc; i++) {
		struct dl_scenario *sc;
		struct dl_error err;
		uint64_t seed = p->seed0;

		if (p->sc[i].dtb)
			continue;
		if (dl_scenario_load(p->sc[i].path, p->set, p->nset, &seed, &sc, &err)) {
			fprintf(stderr, "dlsim sweep: %s\n", err.msg);
			return -EINVAL;
		}
		dl_scenario_free(sc);
	}
	return 0;
}

static double elapsed(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

void sweep_progress(struct dl_sweep_coord *co)
{
	struct sweep_run *sr = co->ctx;
	double el = elapsed(&sr->t0), rate = el > 0 ? co->done / el : 0;
	double eta = rate > 0 ? (co->total - co->done) / rate : 0;

	if (!sr->tty || el - sr->last_shown < 0.2)
		return;
	sr->last_shown = el;
	fprintf(stderr, "\rsweep: %u/%u runs, %.1f runs/s, ETA %d:%02d, %u failed, %u violating   ",
		co->done, co->total, rate, (int)eta / 60, (int)eta % 60, co->failed, co->violations);
	sr->shown = true;
}


void sweep_task_line(struct dl_sweep_coord *co, uint32_t task,
		     const struct dl_sweep_task_result *res)
{
	struct sweep_run *sr = co->ctx;
	const struct dl_sweep_plan *p = sr->plan;

	if (sr->shown)
		fprintf(stderr, "\r%90s\r", "");
	sr->shown = false;
	printf("[%u/%u] %s seed %llu: %u run%s%s", co->done, co->total,
	       p->sc[task / p->nseeds].label,
	       (unsigned long long)(p->seed0 + task % p->nseeds), res->runs,
	       res->runs == 1 ? "" : "s", res->failed || res->violations ? "," : " ok");
	if (res->failed)
		printf(" %u failed", res->failed);
	if (res->violations)
		printf(" %u violating", res->violations);
	printf("\n");
	fflush(stdout);
}

/* ---- the summary, from OUT.db: every run of this plan, old or new ---- */

struct order_stat {
	uint32_t runs, ok, failed, violations;
	double mk, ratio;            /* means over ok runs */
};

/* The statement order_stats() steps: prepared once per summary, not once per
 * scenario and order (1,023 boards x 4 orders made Ctrl-C's summary slow). */
static const char order_stats_sql[] =
	"SELECT w.status, r.makespan_ns, m.value FROM sweep w"
	" LEFT JOIN runs r ON r.run_id = w.run_id"
	" LEFT JOIN metrics m ON m.run_id = w.run_id AND m.name = 'lower_bound_ns'"
	" WHERE w.scenario_hash = ?1 AND w.order_name = ?2 AND w.seed BETWEEN ?3 AND ?4"
	" AND w.mode = ?5 AND w.workers = ?6";

static void order_stats(sqlite3_stmt *q, const struct dl_sweep_plan *p, uint32_t s, enum dl_order o,
			struct order_stat *st)
{
	memset(st, 0, sizeof(*st));
	if (!q)
		return;
	sqlite3_bind_text(q, 1, p->sc[s].hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, dl_order_name(o), -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 3, (int64_t)p->seed0);
	sqlite3_bind_int64(q, 4, (int64_t)(p->seed0 + p->nseeds - 1));
	sqlite3_bind_text(q, 5, p->mode, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 6, dl_sweep_workers(p, o));
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *status = (const char *)sqlite3_column_text(q, 0);
		double mk = sqlite3_column_double(q, 1), lb = sqlite3_column_double(q, 2);

		st->runs++;
		if (status && !strcmp(status, "failed")) {
			st->failed++;
			continue;
		}
		if (status && !strcmp(status, "violations"))
			st->violations++;
		if (sqlite3_column_type(q, 1) == SQLITE_NULL)
			continue;
		st->ok++;
		st->mk += mk;
		st->ratio += lb > 0 ? mk / lb : 1.0;
	}
	sqlite3_reset(q);
	if (st->ok) {
		st->mk /= st->ok;
		st->ratio /= st->ok;
	}
}

static json_t *problems(sqlite3 *db, const struct dl_sweep_plan *p, uint32_t *count)
{
	json_t *arr = json_array();
	sqlite3_stmt *q;

	*count = 0;
	if (!arr || sqlite3_prepare_v2(db, "SELECT w.run_id, w.order_name, w.seed, w.status, w.error, w.mode"
				       " FROM sweep w WHERE w.scenario_hash = ?1 AND (w.mode = ?2 OR (?5 AND w.mode IN"
				       " ('twin-model', 'twin-model-boot', 'twin-replay'))) AND"
				       " w.seed BETWEEN ?3 AND ?4 AND w.status <> 'ok' ORDER BY w.rowid",
				       -1, &q, NULL) != SQLITE_OK)
		return arr;
	for (uint32_t s = 0; s < p->nsc; s++) {
		sqlite3_bind_text(q, 1, p->sc[s].hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, p->mode, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 3, (int64_t)p->seed0);
		sqlite3_bind_int64(q, 4, (int64_t)(p->seed0 + p->nseeds - 1));
		sqlite3_bind_int(q, 5, p->twins != 0);
		while (sqlite3_step(q) == SQLITE_ROW) {
			const char *err = (const char *)sqlite3_column_text(q, 4);
			json_t *r = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s?}", "scenario", p->sc[s].path,
					      "label", p->sc[s].label,
					      "order", (const char *)sqlite3_column_text(q, 1),
					      "seed", (json_int_t)sqlite3_column_int64(q, 2),
					      "status", (const char *)sqlite3_column_text(q, 3),
					      "error", err);

			if (!r)
				continue;
			json_object_set_new(r, "mode", json_string((const char *)sqlite3_column_text(q, 5)));
			json_object_set_new(r, "run_id", sqlite3_column_type(q, 0) == SQLITE_NULL ?
					    json_null() : json_integer(sqlite3_column_int64(q, 0)));
			json_array_append_new(arr, r);
			(*count)++;
		}
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	return arr;
}

/* One JSON object with everything; the text summary is printed from it. */
static json_t *summary(sqlite3 *db, const struct dl_sweep_plan *p, const struct sweep_run *sr,
		       const struct dl_sweep_coord *co)
{
	json_t *o = json_object(), *groups = json_array();
	uint32_t nprob = 0;
	double wall = elapsed(&sr->t0);
	sqlite3_stmt *q = NULL;

	if (sqlite3_prepare_v2(db, order_stats_sql, -1, &q, NULL) != SQLITE_OK)
		q = NULL;       /* the groups then show no runs; problems() says what failed */
	for (uint32_t s = 0; s < p->nsc; s++) {
		json_t *g = json_object(), *orders = json_array();
		int best = -1, second = -1;
		struct order_stat st[DL_SWEEP_MAX_ORDERS];

		for (uint32_t k = 0; k < p->norders; k++) {
			order_stats(q, p, s, p->order[k], &st[k]);
			json_array_append_new(orders, json_pack(
				"{s:s, s:i, s:i, s:i, s:o, s:o}", "order", dl_order_name(p->order[k]),
				"runs", st[k].runs, "failed", st[k].failed, "violations", st[k].violations,
				"mean_makespan_ns", st[k].ok ? json_real(st[k].mk) : json_null(),
				"ratio_to_bound", st[k].ok ? json_real(st[k].ratio) : json_null()));
			if (!st[k].ok)
				continue;
			if (best < 0 || st[k].mk < st[best].mk) {
				second = best;
				best = (int)k;
			} else if (second < 0 || st[k].mk < st[second].mk) {
				second = (int)k;
			}
		}
		json_object_set_new(g, "scenario", json_string(p->sc[s].path));
		json_object_set_new(g, "label", json_string(p->sc[s].label));
		json_object_set_new(g, "orders", orders);
		json_object_set_new(g, "best", best >= 0 ? json_string(dl_order_name(p->order[best]))
				    : json_null());
		json_object_set_new(g, "best_mean_makespan_ns", best >= 0 ? json_real(st[best].mk)
				    : json_null());
		json_object_set_new(g, "best_ratio_to_bound", best >= 0 ? json_real(st[best].ratio)
				    : json_null());
		json_object_set_new(g, "next", second >= 0 ? json_string(dl_order_name(p->order[second]))
				    : json_null());
		/* by how much the best beats the next: its makespan is this much shorter */
		json_object_set_new(g, "margin", second >= 0 && st[second].mk > 0 ?
				    json_real(1.0 - st[best].mk / st[second].mk) : json_null());
		if (p->twins)
			json_object_set_new(g, "kernel_fidelity", sweep_kernel_fidelity(db, p, s));
		json_array_append_new(groups, g);
	}
	sqlite3_finalize(q);
	json_object_set_new(o, "database", json_string(sr->db));
	json_object_set_new(o, "planned", json_integer(sr->planned));
	json_object_set_new(o, "skipped", json_integer(sr->planned - co->total));
	json_object_set_new(o, "ran", json_integer(co->done));
	json_object_set_new(o, "failed", json_integer(co->failed));
	json_object_set_new(o, "violations", json_integer(co->violations));
	json_object_set_new(o, "interrupted", json_boolean(*cli_stop_flag()));
	json_object_set_new(o, "workers", json_integer(sr->workers));
	json_object_set_new(o, "write", json_string(co->direct ? "direct" : "shards"));
	/* direct: the workers' time waiting for OUT.db's write lock and holding it */
	json_object_set_new(o, "lock_wait_s", json_real((double)co->lock_wait_ns / 1e9));
	json_object_set_new(o, "lock_hold_s", json_real((double)co->lock_hold_ns / 1e9));
	/* ... and the CPU time spent holding it: the serial part of a sweep, unlike the wall
	 * time not inflated by other load on the machine */
	json_object_set_new(o, "lock_hold_cpu_s", json_real((double)co->lock_hold_cpu_ns / 1e9));
	json_object_set_new(o, "wall_s", json_real(wall));
	json_object_set_new(o, "runs_per_s", json_real(wall > 0 ? co->done / wall : 0));
	{
		/* the coordinator's CPU is the merge's; the workers' is the runs' (local pool) */
		struct rusage self, kids;

		getrusage(RUSAGE_SELF, &self);
		getrusage(RUSAGE_CHILDREN, &kids);
		json_object_set_new(o, "coordinator_cpu_s", json_real(
			(double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
			(double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6));
		json_object_set_new(o, "workers_cpu_s", json_real(
			(double)(kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) +
			(double)(kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) / 1e6));
	}
	json_object_set_new(o, "groups", groups);
	json_object_set_new(o, "problems", problems(db, p, &nprob));
	return o;
}

static void print_text(const json_t *o)
{
	json_t *g, *pr;
	size_t i;

	printf("sweep: %lld runs planned, %lld already in %s, %lld run now by %lld worker%s in"
	       " %.1f s (%.1f runs/s); %lld failed, %lld violating%s\n",
	       (long long)json_integer_value(json_object_get(o, "planned")),
	       (long long)json_integer_value(json_object_get(o, "skipped")),
	       json_string_value(json_object_get(o, "database")),
	       (long long)json_integer_value(json_object_get(o, "ran")),
	       (long long)json_integer_value(json_object_get(o, "workers")),
	       json_integer_value(json_object_get(o, "workers")) == 1 ? "" : "s",
	       json_real_value(json_object_get(o, "wall_s")),
	       json_real_value(json_object_get(o, "runs_per_s")),
	       (long long)json_integer_value(json_object_get(o, "failed")),
	       (long long)json_integer_value(json_object_get(o, "violations")),
	       json_is_true(json_object_get(o, "interrupted")) ? " (interrupted: run again to finish)" : "");
	printf("\n%-48s %5s  %-16s %12s %8s  %-16s %7s\n", "scenario", "runs", "best order",
	       "makespan ms", "margin", "next", "/bound");
	json_array_foreach(json_object_get(o, "groups"), i, g) {
		json_t *orders = json_object_get(g, "orders"), *x;
		const char *best = json_string_value(json_object_get(g, "best"));
		const char *next = json_string_value(json_object_get(g, "next"));
		json_int_t runs = 0;
		size_t k;
		char margin[32] = "-";

		json_array_foreach(orders, k, x)
			runs += json_integer_value(json_object_get(x, "runs"));
		if (json_is_real(json_object_get(g, "margin")))
			snprintf(margin, sizeof(margin), "%.1f%%",
				 100 * json_real_value(json_object_get(g, "margin")));
		printf("%-48.48s %5lld  %-16s %12.3f %8s  %-16s %7.3f\n",
		       json_string_value(json_object_get(g, "label")), (long long)runs,
		       best ? best : "-", json_real_value(json_object_get(g, "best_mean_makespan_ns")) / 1e6,
		       margin, next ? next : "-",
		       json_real_value(json_object_get(g, "best_ratio_to_bound")));
	}
	sweep_kernel_print(o);
	pr = json_object_get(o, "problems");
	if (json_array_size(pr)) {
		printf("\nruns that failed or violated a rule (%zu):\n", json_array_size(pr));
		json_array_foreach(pr, i, g) {
			const char *err = json_string_value(json_object_get(g, "error"));
			json_t *id = json_object_get(g, "run_id");

			if (i == MAX_PROBLEMS) {
				printf("  ... and %zu more (--json lists them all)\n", json_array_size(pr) - i);
				break;
			}
			const char *mode = json_string_value(json_object_get(g, "mode"));

			printf("  %s %s%s%s seed %lld: %s%s%s", json_string_value(json_object_get(g, "label")),
			       json_string_value(json_object_get(g, "order")),
			       mode && !strncmp(mode, "twin-", 5) ? " " : "",
			       mode && !strncmp(mode, "twin-", 5) ? mode : "",
			       (long long)json_integer_value(json_object_get(g, "seed")),
			       json_string_value(json_object_get(g, "status")), err ? ": " : "", err ? err : "");
			if (json_is_integer(id))
				printf(" (run %lld)", (long long)json_integer_value(id));
			printf("\n");
		}
	}
}

int sweep_finish(struct sweep *sw)
{
	const struct dl_sweep_plan *p = &sw->o.plan;
	struct sweep_run *sr = &sw->sr;
	sqlite3 *db = sw->db;
	json_t *o;
	int ret;

	if (sr->shown)
		fprintf(stderr, "\r%90s\r", "");
	if (p->twins)
		sweep_set_twin_of(db);
	o = summary(db, p, sr, &sw->co);
	if (!o)
		return DL_EXIT_USAGE;
	if (sw->o.json) {
		json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		putchar('\n');
	} else {
		print_text(o);
	}
	ret = *cli_stop_flag() ? DL_EXIT_INTERRUPTED :
	      json_array_size(json_object_get(o, "problems")) ? DL_EXIT_VIOLATION : DL_EXIT_OK;
	json_decref(o);
	return ret;
}

/* Plan, validate, hash: 0 or an exit status. */
int sweep_prepare(int argc, char **argv, struct sweep_opts *o)
{
	char err[512];
	int rc;

	o->lock_fd = -1;
	rc = parse_args(argc, argv, o);

	if (rc)
		return rc > 0 ? -1 : DL_EXIT_USAGE;
	if (dl_sweep_task_runs(&o->plan) > 64) {
		fprintf(stderr, "dlsim sweep: at most 64 orders × kernels per sweep\n");
		return DL_EXIT_USAGE;
	}
	if (validate(&o->plan))
		return DL_EXIT_USAGE;
	if (dl_sweep_hash_all(&o->plan, err, sizeof(err))) {
		fprintf(stderr, "dlsim sweep: %s\n", err);
		return DL_EXIT_USAGE;
	}
	cli_catch_stop();
	return 0;
}

/* Open OUT.db, merge shards a killed sweep left, and find what is left to run. */
int sweep_open_out(struct sweep *sw)
{
	struct sweep_opts *o = &sw->o;
	sqlite3 **db = &sw->db;
	uint64_t **pending = &sw->pending;
	uint32_t *planned = &sw->sr.planned, *todo = &sw->co.total;
	uint32_t nt = dl_sweep_ntasks(&o->plan), rec = 0, stale = 0;
	char err[1024];

	/* held till the end: --compact may not take the shards from under it */
	if (dl_sweep_lock(o->db, false, &o->lock_fd, err, sizeof(err))) {
		fprintf(stderr, "dlsim sweep: %s\n", err);
		return DL_EXIT_USAGE;
	}
	if (dl_sweep_out_open(o->db, db, err, sizeof(err))) {
		fprintf(stderr, "dlsim sweep: %s\n", err);
		return DL_EXIT_USAGE;
	}
	if (dl_sweep_recover(*db, o->db, &rec, err, sizeof(err))) {
		fprintf(stderr, "dlsim sweep: recovering the shards of an earlier sweep: %s\n", err);
		return DL_EXIT_USAGE;
	}
	if (rec && !o->json)
		fprintf(stderr, "dlsim sweep: kept %u runs an interrupted sweep had left in its shards\n",
			rec);
	*pending = calloc((size_t)nt + 1, sizeof(**pending));
	if (!*pending || dl_sweep_pending(*db, &o->plan, *pending, &stale)) {
		fprintf(stderr, "dlsim sweep: %s: cannot read the sweep table: %s\n", o->db,
			sqlite3_errmsg(*db));
		return DL_EXIT_USAGE;
	}
	if (stale && !o->json)
		fprintf(stderr, "dlsim sweep: %u runs of DTBs imported with another kernel's driver table"
			" than their own (an older dlsim) are run again\n", stale);
	*planned = nt * (dl_sweep_task_runs(&o->plan) - (uint32_t)__builtin_popcountll(o->plan.skip));
	*todo = 0;
	for (uint32_t t = 0; t < nt; t++)
		*todo += (uint32_t)__builtin_popcountll((*pending)[t]);
	o->first_id = dl_sweep_out_next_id(*db);
	if (dl_sweep_assign_ids(&o->plan, *pending, o->first_id)) {
		fprintf(stderr, "dlsim sweep: out of memory\n");
		return DL_EXIT_USAGE;
	}
	return 0;
}

void sweep_release(struct sweep *sw)
{
	free(sw->pending);
	sqlite3_close(sw->db);
	dl_sweep_unlock(sw->o.db, sw->o.lock_fd, true);
	dl_sweep_plan_free(&sw->o.plan);
}

int sweep_close_out(sqlite3 *db)
{
	char err[512];

	if (!dl_sweep_out_finish(db, err, sizeof(err)))
		return 0;
	fprintf(stderr, "dlsim sweep: %s\n", err);
	return DL_EXIT_USAGE;
}

void sweep_start(struct sweep *sw, uint32_t workers, bool tty)
{
	struct dl_sweep_coord *co = &sw->co;
	struct sweep_run *sr = &sw->sr;
	const struct sweep_opts *o = &sw->o;
	sqlite3 *db = sw->db;

	sr->db = o->db;
	sr->workers = workers;
	sr->plan = &o->plan;
	sr->tty = tty;
	clock_gettime(CLOCK_MONOTONIC, &sr->t0);
	co->outpath = o->db;
	co->out = db;
	co->direct = !o->shards;
	co->node_shards = o->node_shards;
	co->stop = cli_stop_flag();
	co->progress = sweep_progress;
	co->ctx = sr;
}

/* dlsim sweep --compact OUT.db: the runs' events from the shards into OUT.db. */
static int sweep_compact(int argc, char **argv)
{
	const char *path = argc == 3 ? argv[2] : NULL;
	uint32_t rec = 0, runs = 0;
	char err[1024];
	sqlite3 *db = NULL;
	int rc = DL_EXIT_USAGE, lock = -1;

	if (!path || !*path) {
		fprintf(stderr, "dlsim sweep: --compact takes one database: dlsim sweep --compact OUT.db\n");
		return DL_EXIT_USAGE;
	}
	if (access(path, F_OK)) {
		fprintf(stderr, "dlsim sweep: --compact %s: %s\n", path, strerror(errno));
		return DL_EXIT_USAGE;
	}
	/* runs a killed sweep finished but did not commit: into OUT.db first, not lost with their
	 * shard; never while a sweep writes them (it holds the lock shared) */
	if (dl_sweep_lock(path, true, &lock, err, sizeof(err)) ||
	    dl_sweep_out_open(path, &db, err, sizeof(err)) ||
	    dl_sweep_recover(db, path, &rec, err, sizeof(err)) ||
	    dl_sweep_compact(db, path, &runs, err, sizeof(err)) ||
	    dl_sweep_out_finish(db, err, sizeof(err)))
		fprintf(stderr, "dlsim sweep: --compact: %s\n", err);
	else
		rc = DL_EXIT_OK;
	if (!rc)
		printf("compacted %s: the events of %u runs moved in from their shards%s\n", path, runs,
		       rec ? " (and runs an interrupted sweep had left)" : "");
	sqlite3_close(db);
	dl_sweep_unlock(path, lock, !rc);
	return rc;
}

int cmd_sweep(int argc, char **argv)
{
	struct sweep sw = { 0 };
	int rc;

	if (argc >= 2 && !strcmp(argv[1], "--compact"))
		return sweep_compact(argc, argv);
	if (sweep_under_mpi())
		return sweep_mpi_main(argc, argv);
	rc = sweep_prepare(argc, argv, &sw.o);
	if (rc)
		goto out;
	rc = sweep_open_out(&sw);
	if (rc)
		goto out;
	sweep_start(&sw, sw.o.jobs, isatty(STDERR_FILENO));
	sw.co.task_done = sw.o.verbose ? sweep_task_line : NULL;
	if (sw.co.total && dl_sweep_pool(&sw.co, &sw.o.plan, sw.pending, sw.o.jobs)) {
		fprintf(stderr, "dlsim sweep: %s\n", sw.co.err);
		sweep_close_out(sw.db);
		rc = DL_EXIT_USAGE;
		goto out;
	}
	rc = sweep_close_out(sw.db);
	if (!rc)
		rc = sweep_finish(&sw);
out:
	if (rc == -1)
		rc = DL_EXIT_OK;        /* --help */
	sweep_release(&sw);
	return rc;
}
