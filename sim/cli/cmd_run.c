/*
 * cmd_run.c - `dlsim run` and `dlsim compare`: load a scenario, simulate it
 * under one or several orders, log to SQLite, print a summary.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_opts.h"
#include "sim/core/dl_core.h"
#include "sim/core/dl_sat.h"
#include "sim/engine/cost.h"
#include "sim/engine/engine.h"
#include "sim/kernel/kmode.h"
#include "sim/engine/wakeup.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_batch.h"
#include "sim/run/dl_run.h"
#include "sim/run/dl_run_kernel.h"
#include "sim/scenario/scenario.h"

#define MAX_SET 64
#define MAX_ORDERS 16
_Static_assert(MAX_ORDERS >= DL_ORDER_COUNT, "every order fits a compare");
#define MAX_SEEDS 1000
/* --time-scale: below, a simulated second is less than a real microsecond;
 * above, a 1 ms latency sleeps over 16 minutes */
#define TIME_SCALE_MIN 1e-6
#define TIME_SCALE_MAX 1e6

struct run_opts {
	const char *scenario, *db, *order_list;
	enum dl_backend backend;	/* --mode */
	enum dl_order order;
	uint64_t seed;
	bool have_seed, json, no_log, have_scale;
	uint32_t workers, seeds;
	uint32_t busy_ms;	/* --busy-timeout */
	uint32_t max_wall;	/* --max-wall: threads, seconds of real time a run may take (0: any) */
	double time_scale;
	struct dl_override set[MAX_SET];
	size_t nset;
	/* --kernel: booted in kernel mode, whose rules in des and threads */
	const char *kernel;
	uint32_t kver;          /* des, threads: DL_KVER(); 0: each order's default */
	/* --mode kernel */
	const char *kernel_dump, *kernel_save;
	int64_t kernel_timeout_ms;
	bool probe_module;      /* --probe-context module */
	bool compare;           /* dlsim compare (else run) */
	enum dl_cost_profile profile;   /* --profile: the cost model's defaults */
};

/* What run or compare does. */
static void usage_intro(FILE *f, bool compare)
{
	if (compare)
		fprintf(f, "usage: dlsim compare SCENARIO [--orders A,B,...] [--seeds N] [opts]\n\n"
			   "Run each order on the same devices, links and sampled latencies (same seeds)\n"
			   "and print one side-by-side table per op with the mean (and sd, with two\n"
			   "seeds or more) over the seeds, and the ratio to the lower bound\n"
			   "max(critical path, CPU work / K), the same for every order, and to the order's\n"
			   "own bound, which adds the main thread's serial share of sync devices (des\n"
			   "mode; see README).\n\n");
	else
		fprintf(f, "usage: dlsim run SCENARIO [opts]\n\n"
			   "Simulate the scenario's script, log every event to the database and print\n"
			   "a summary table per op.\n\n");
}

/* The options: run's --order, compare's --orders and --seeds among them. */
static void usage_options(FILE *f, bool compare)
{
	fprintf(f, "options:\n"
		   "  --db PATH         SQLite log to append runs to (default dlsim.db)\n"
		   "%s"
		   "  --mode des|threads|kernel  des: deterministic virtual time (default);\n"
		   "                    threads: real POSIX threads, wall-clock timed; kernel: the\n"
		   "                    script played on a real Linux kernel booted in QEMU (one\n"
		   "                    boot for all the runs; 'make kernels' fetches it), timed\n"
		   "                    by the guest; bounds are not computed (\u2013)\n"
		   "  --kernel VERSION  the kernel whose rules are simulated (des, threads) or\n"
		   "                    booted (kernel mode: 6.12 or 7.3), MAJOR.MINOR from 6.12\n"
		   "                    to 7.3.  Rules that change: 6.16, the async rework\n"
		   "                    (kernel-async runs up to 6.15, kernel-async-v2 from\n"
		   "                    6.16; a pair no kernel ran is refused, exit 2); 6.18, PM\n"
		   "                    stops waiting on SYNC_STATE_ONLY links.  Default: the\n"
		   "                    order's own (dlsim orders): 7.3 for kernel-async-v2,\n"
		   "                    6.12 for the others; kernel mode boots 6.12\n"
		   "  --kernel-timeout S  kernel mode: kill the guest after S seconds (default:\n"
		   "                    180 plus 5 ms per callback); its runs are marked failed\n"
		   "  --kernel-save FILE  kernel mode: keep the guest's raw dump in FILE\n"
		   "  --kernel-dump FILE  kernel mode: convert a dump kept earlier, do not boot\n"
		   "  --seed N          override the scenario's seed\n"
		   "  --workers K       simulated CPUs shared by the main thread and workers\n"
		   "                    (default: the order's own, 1 for sync and naive, else 8)\n"
		   "  --probe-context boot|module  des, orders that probe with the deferred-\n"
		   "                    probe retry: boot (default), retries held until\n"
		   "                    late_initcall, then walked by the main thread; module,\n"
		   "                    as --mode kernel's module does: retries on from the\n"
		   "                    start, each bind re-queues deferred_probe_work_func(),\n"
		   "                    which retries on a kworker of its own beside the\n"
		   "                    registration walk (the sync driver's devices probed in\n"
		   "                    turn, then the async driver's queued)\n"
		   "  --profile hardware|guest|phone  the cost model's defaults (des,\n"
		   "                    threads): hardware (default: the scenario's cost.profile\n"
		   "                    if it names one), guest, the TCG guest of --mode kernel,\n"
		   "                    for twins of kernel runs, or phone, the PM dispatch\n"
		   "                    calibrated on the Pixel 6 (sim/engine/cost.c)\n"
		   "  --set KEY=VALUE   override a field of the scenario's generate object;\n"
		   "                    dev.NAME.KEY=VALUE: a listed device's latency or async\n"
		   "                    defaults.KEY=VALUE: a key of \"defaults\", for every device\n"
		   "                    cost.KEY=VALUE: a key of the cost model (cost.wake_ns=70us)\n"
		   "  --json            print the summary as JSON on stdout\n"
		   "  --no-log          simulate without writing the database\n"
		   "  --busy-timeout MS wait this long for another writer's lock on the\n"
		   "                    database, then give up with exit 2 (default %d)\n"
		   "  --time-scale X    threads mode: real seconds per simulated second.  dlsim\n"
		   "                    measures this machine's wake-up latency W at start\n"
		   "                    (DLSIM_WAKEUP_NS=N overrides it) and needs the shortest\n"
		   "                    callback to take %d W of real time; default: the\n"
		   "                    smallest 1, 2 or 5 x 10^k that does; a smaller X is\n"
		   "                    refused (exit 2), naming one that works; at most 1e6;\n"
		   "                    Ctrl-C ends any sleep within 100 ms\n"
		   "  --max-wall S      threads mode: before the runs, the DES times each order\n"
		   "                    (its makespan times the time scale is the real time the\n"
		   "                    run takes); one over S seconds is refused (exit 2),\n"
		   "                    saying why (default 3600; 0: no limit)\n",
		compare ? "  --orders A,B,...  the orders to compare (default: every order but naive,\n"
			  "                    the negative control; with --kernel, only those that\n"
			  "                    kernel ran: kernel-async or kernel-async-v2)\n"
			  "  --seeds N         seeds per order: seed, seed+1, ... (default 1)\n"
			: "  --order NAME      ordering algorithm (default kernel-async; see dlsim orders)\n",
		DL_LOG_BUSY_MS, DL_WAKEUP_FACTOR);
}

/* The summary table's columns. */
static void usage_columns(FILE *f, bool compare)
{
	fputs(compare ? "columns (times in ms of simulated time; \u2013: not computed in this mode):\n"
			"  makespan          from the op's start to its last callback's end; with\n"
			"                    several seeds: mean +- standard deviation\n"
			"  lower bd          per phase max(critical path, CPU work / K), summed over\n"
			"                    the op's phases: no order on K CPUs can do better\n"
			"  ratio             makespan / lower bd (\u2013 when the bound is 0: the op\n"
			"                    has no latency at all, only modelled overhead)\n"
			"  order bd          the bound for this order: adds what its main PM thread\n"
			"                    must run alone (des only; \u2013 in threads mode)\n"
			"  ratio             makespan / order bd\n"
	      : "columns (times in ms of simulated time):\n"
			"  makespan ms       from the op's start to its last callback's end\n"
			"  lower bd ms       per phase max(critical path, CPU work / K), summed: no\n"
			"                    order on K CPUs can do better\n"
			"  ratio             makespan / lower bd (\u2013 when the bound is 0: the op has\n"
			"                    no latency, only modelled overhead)\n"
			"  attempts          probe attempts, deferred ones included\n"
			"  defers            probes that returned -EPROBE_DEFER (a supplier not bound)\n"
			"  peak items        most work items alive at once, running or asleep on a\n"
			"                    dependency; above K when items block (kernel-async)\n"
			"  blocked wkr-ms    worker time asleep on dependencies, summed over the\n"
			"                    workers (can exceed the makespan: 8 workers blocked\n"
			"                    for 1 ms are 8 ms)\n"
			"after the table (des and kernel mode): a line for each op that spent at\n"
			"least 10% of its makespan in device_pm_move_to_tail() before deferred\n"
			"retries (one call per path below the device; in des priced by\n"
			"cost.reorder_ns and cost.reorder_visit_ns, in kernel mode measured)\n", f);
}

static void run_usage(FILE *f, bool compare)
{
	usage_intro(f, compare);
	usage_options(f, compare);
	fputc('\n', f);
	usage_columns(f, compare);
	fputs("\nexit status: 0 ok, 1 an injected fault made an op fail, 2 bad usage or input\n"
	      "(nothing written), or the log could not be written (disk full, locked past the\n"
	      "busy timeout: SQLite's message and the path on stderr, the run marked 'failed',\n"
	      "no summary), 130 interrupted (what was simulated is committed, the run is\n"
	      "'interrupted')\n", f);
}

/* NAME as an order; an unknown one is named with what it probably meant. */
static int parse_order(const char *me, const char *name, enum dl_order *out)
{
	const char *names[DL_ORDER_COUNT], *guess;

	if (!dl_order_parse(name, out))
		return 0;
	for (int i = 0; i < DL_ORDER_COUNT; i++)
		names[i] = dl_order_name((enum dl_order)i);
	guess = cli_suggest(name, names, DL_ORDER_COUNT);
	if (guess)
		fprintf(stderr, "dlsim %s: unknown order '%s'; did you mean '%s'? (see 'dlsim orders')\n",
			me, name, guess);
	else
		fprintf(stderr, "dlsim %s: unknown order '%s'; see 'dlsim orders'\n", me, name);
	return -EINVAL;
}

/*
 * --kernel: in des and threads a version whose rules the engines follow
 * (the run's order checked here; compare checks each in parse_orders());
 * kernel mode keeps the string for dl_kernel_refuse().  Without it, each
 * order's default (dl_order_default_kernel()); kernel mode boots
 * DL_KERNEL_DEFAULT.
 */
static int parse_kernel(struct run_opts *o, const char *me, bool compare)
{
	char why[256];
	int rc;

	if (o->backend == DL_BACKEND_KERNEL) {
		if (!o->kernel)
			o->kernel = DL_KERNEL_DEFAULT;
		return 0;
	}
	if (!o->kernel)
		return 0;
	rc = dl_kver_parse(o->kernel, &o->kver);
	if (rc == -ERANGE) {
		fprintf(stderr, "dlsim %s: --kernel '%s': dlsim models the kernels from 6.12 to 7.3\n",
			me, o->kernel);
		return -1;
	}
	if (rc) {
		fprintf(stderr, "dlsim %s: --kernel '%s': expected MAJOR.MINOR, a version from 6.12"
			" to 7.3 such as 6.12 or 7.3\n", me, o->kernel);
		return -1;
	}
	if (!compare && dl_order_check_kernel(o->order, o->kver, why, sizeof(why))) {
		fprintf(stderr, "dlsim %s: --kernel %s: %s\n", me, o->kernel, why);
		return -1;
	}
	return 0;
}

/* The option handlers: each 0, or -1 with the refusal printed (1: --help printed). */
static int opt_help(void *obj, const char *verb, const char *v)
{
	(void)verb, (void)v;
	run_usage(stdout, ((struct run_opts *)obj)->compare);
	return 1;
}

static int opt_order(void *obj, const char *verb, const char *v)
{
	return parse_order(verb, v, &((struct run_opts *)obj)->order) ? -1 : 0;
}

static int opt_mode(void *obj, const char *verb, const char *v)
{
	return cli_opt_backend(verb, v, &((struct run_opts *)obj)->backend);
}

static int opt_profile(void *obj, const char *verb, const char *v)
{
	return cli_opt_profile(verb, v, &((struct run_opts *)obj)->profile);
}

static int opt_probe_context(void *obj, const char *verb, const char *v)
{
	return cli_opt_probe_context(verb, v, &((struct run_opts *)obj)->probe_module);
}

static int opt_kernel_timeout(void *obj, const char *verb, const char *v)
{
	uint64_t u;

	if (cli_parse_u64(v, &u) || u < 1 || u > 86400) {
		fprintf(stderr, "dlsim %s: --kernel-timeout '%s': expected 1..86400 s\n", verb, v);
		return -1;
	}
	((struct run_opts *)obj)->kernel_timeout_ms = (int64_t)u * 1000;
	return 0;
}

static int opt_seed(void *obj, const char *verb, const char *v)
{
	struct run_opts *o = obj;

	if (cli_parse_u64(v, &o->seed)) {
		fprintf(stderr, "dlsim %s: --seed '%s': expected a non-negative integer\n", verb, v);
		return -1;
	}
	o->have_seed = true;
	return 0;
}

static int opt_time_scale(void *obj, const char *verb, const char *v)
{
	struct run_opts *o = obj;
	char *end;

	o->time_scale = strtod(v, &end);
	o->have_scale = true;
	if (!*v || *end || !(o->time_scale >= TIME_SCALE_MIN && o->time_scale <= TIME_SCALE_MAX)) {
		fprintf(stderr, "dlsim %s: --time-scale '%s': expected a number from %g to %g"
			" (real seconds per simulated second)\n", verb, v, TIME_SCALE_MIN,
			TIME_SCALE_MAX);
		return -1;
	}
	return 0;
}

static int opt_set(void *obj, const char *verb, const char *v)
{
	struct run_opts *o = obj;

	return cli_opt_override(verb, v, o->set, &o->nset, MAX_SET);
}

/* SCENARIO, the one argument that is not an option. */
static int opt_other(void *obj, const char *verb, const char *arg)
{
	struct run_opts *o = obj;

	if (arg[0] == '-' && arg[1]) {
		fprintf(stderr, "dlsim %s: unknown option '%s'; try 'dlsim %s --help'\n", verb, arg,
			verb);
		return -1;
	}
	if (o->scenario) {
		fprintf(stderr, "dlsim %s: unexpected argument '%s'\n", verb, arg);
		return -1;
	}
	o->scenario = arg;
	return 0;
}

/* Which rows run and compare each take (cli_opt.only). */
enum { ONLY_RUN = 1, ONLY_COMPARE = 2 };

#define RO struct run_opts
static const struct cli_opt run_opts_table[] = {
	{ CLI_ACTION("--help", "-h", opt_help) },
	{ CLI_TRUE("--json", NULL, RO, json) },
	{ CLI_TRUE("--no-log", NULL, RO, no_log) },
	{ CLI_STR("--db", RO, db) },
	{ CLI_U32("--busy-timeout", RO, busy_ms, 0, 3600000, " ms") },
	{ CLI_FN("--order", opt_order), .only = ONLY_RUN },
	{ CLI_STR("--orders", RO, order_list), .only = ONLY_COMPARE },
	{ CLI_U32("--seeds", RO, seeds, 1, MAX_SEEDS, NULL), .only = ONLY_COMPARE },
	{ CLI_FN("--mode", opt_mode) },
	{ CLI_STR("--kernel", RO, kernel) },
	{ CLI_FN("--profile", opt_profile) },
	{ CLI_FN("--probe-context", opt_probe_context) },
	{ CLI_STR("--kernel-dump", RO, kernel_dump) },
	{ CLI_STR("--kernel-save", RO, kernel_save) },
	{ CLI_FN("--kernel-timeout", opt_kernel_timeout) },
	{ CLI_FN("--seed", opt_seed) },
	{ CLI_U32("--workers", RO, workers, 1, 4096, NULL) },
	{ CLI_FN("--time-scale", opt_time_scale) },
	{ CLI_U32("--max-wall", RO, max_wall, 0, 31536000, " s") },
	{ CLI_FN("--set", opt_set) },
};
#undef RO

/* What the options say together: 0, or -1 with the refusal printed. */
static int check_options(struct run_opts *o, const char *me)
{
	if (!o->scenario) {
		fprintf(stderr, "dlsim %s: missing SCENARIO; try 'dlsim %s --help'\n", me, me);
		return -1;
	}
	if (o->probe_module && o->backend != DL_BACKEND_DES) {
		fprintf(stderr, "dlsim %s: --probe-context module: des mode only (threads mode models"
			" boot; kernel mode is a module by construction)\n", me);
		return -1;
	}
	if ((o->kernel_dump || o->kernel_save || o->kernel_timeout_ms) && o->backend != DL_BACKEND_KERNEL) {
		fprintf(stderr, "dlsim %s: --kernel-dump, --kernel-save and --kernel-timeout need"
			" --mode kernel\n", me);
		return -1;
	}
	return parse_kernel(o, me, o->compare);
}

/* 0, 1 (--help printed) or -1 (refused, the reason printed). */
static int parse_args(int argc, char **argv, struct run_opts *o, bool compare)
{
	const struct cli_verb verb = {
		.name = compare ? "compare" : "run", .opt = run_opts_table,
		.nopt = sizeof(run_opts_table) / sizeof(run_opts_table[0]),
		.mask = compare ? ONLY_COMPARE : ONLY_RUN, .other = opt_other,
	};
	int rc;

	memset(o, 0, sizeof(*o));
	o->compare = compare;
	o->db = "dlsim.db";
	o->order = DL_ORDER_DEFAULT;
	o->backend = DL_BACKEND_DES;
	o->seeds = 1;
	o->busy_ms = DL_LOG_BUSY_MS;
	o->max_wall = 3600;
	rc = cli_opts_parse(&verb, argc, argv, o);
	return rc ? rc : check_options(o, verb.name);
}

/* A progress line on stderr, only on a terminal, only once a run is slow. */
struct progress {
	const struct dl_scenario *sc;
	struct timespec t0;
	bool shown;
};

static void show_progress(void *ctx, uint32_t op, uint32_t nops, uint64_t events)
{
	struct progress *p = ctx;
	struct timespec now;
	double el;

	clock_gettime(CLOCK_MONOTONIC, &now);
	el = (double)(now.tv_sec - p->t0.tv_sec) + (double)(now.tv_nsec - p->t0.tv_nsec) / 1e9;
	if (el < 0.5)
		return;
	fprintf(stderr, "\r[op %u/%u %-8s] %10.1fM events  %6.1f s", op + 1, nops,
		dl_op_name(p->sc->op[op].kind), (double)events / 1e6, el);
	p->shown = true;
}

/* Everything one `run` or `compare` owns, on the verb's stack. */
struct runner {
	struct run_opts o;
	struct dl_scenario *sc;
	struct dl_log *log;		/* NULL with --no-log */
	struct dl_log_batch *batch;	/* NULL with --no-log */
	struct dl_run_result *r;	/* the last simulation's result */
	int64_t wakeup_ns;		/* threads mode: measured (or DLSIM_WAKEUP_NS) */
	/* kernel mode: every run's dump, booted before the database is opened */
	struct dl_run_kernel k;
	char krelease[96];
};

static bool threads_mode(const struct run_opts *o)
{
	return o->backend == DL_BACKEND_THREADS;
}

static bool kernel_mode(const struct run_opts *o)
{
	return o->backend == DL_BACKEND_KERNEL;
}

/* N-th op of its kind: "suspend", then "suspend2", ... (JSON keys, metrics). */
static void op_key(const struct dl_run_result *r, uint32_t i, char *buf, size_t len)
{
	cli_op_key(r, i, buf, len);
}

/* A count JSON can hold: json_int_t is signed, so a saturated one reads as INT64_MAX. */
static json_t *json_count(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/*
 * Does this run's backend compute a figure of @avail (figures.h)?  des
 * computes them all; threads mode all but the bounds; kernel mode measures
 * the reorder walks and their time, not the calls, the cap or the bounds.
 * JSON says null for the others.
 */
static bool figure_known(const struct runner *rn, int avail)
{
	if (avail == DL_FIG_DES)
		return rn->o.backend == DL_BACKEND_DES;
	if (avail == DL_FIG_ENGINES)
		return rn->o.backend != DL_BACKEND_KERNEL;
	return true;
}

#define FIGURE_JSON(v) _Generic((v), uint64_t: json_count, default: json_integer)(v)
#define SET_FIGURE(type, name, avail, op_metric, heading, width)                          \
	json_object_set_new(j, #name, figure_known(rn, avail) ? FIGURE_JSON(x->name) : json_null());

/* The figures a run and each of its ops share (figures.h), into @j. */
static void run_figures_json(json_t *j, const struct runner *rn, const struct dl_run_result *x)
{
	DL_FIGURES(SET_FIGURE)
}

static void op_figures_json(json_t *j, const struct runner *rn, const struct dl_op_result *x)
{
	DL_FIGURES(SET_FIGURE)
}

/*
 * The simulator's own CPU time in op @x (engine.h: dl_op_result.cpu_ns),
 * and in each phase of the op's kind that ran, "phases": {"suspend":
 * {"cpu_ns": ...}, ...} ("probe" for the probe op's phase); kernel mode
 * does not measure it (null, no phases).
 */
static void op_cpu_json(json_t *j, const struct runner *rn, const struct dl_op_result *x)
{
	json_t *ph;

	if (kernel_mode(&rn->o)) {
		json_object_set_new(j, "cpu_ns", json_null());
		return;
	}
	json_object_set_new(j, "cpu_ns", json_integer(x->cpu_ns));
	ph = json_object();
	for (unsigned p = 0; p < DL_OP_PHASES; p++) {
		json_t *pj;

		if (!(x->ph_ran & (1u << p)))
			continue;
		pj = json_object();
		json_object_set_new(pj, "cpu_ns", json_integer(x->ph_cpu_ns[p]));
		json_object_set_new(ph, p == DL_OP_PROBE_PHASE ? "probe" : dl_phase_name(p), pj);
	}
	json_object_set_new(j, "phases", ph);
}

static json_t *result_json(const struct runner *rn, const char *order, uint64_t seed, int64_t run_id)
{
	const struct dl_run_result *r = rn->r;
	json_t *j = json_object();
	char err[32];

	json_object_set_new(j, "run_id", json_integer(run_id));
	json_object_set_new(j, "scenario", json_string(rn->sc->name));
	json_object_set_new(j, "order", json_string(order));
	json_object_set_new(j, "mode", json_string(dl_backend_name(rn->o.backend)));
	json_object_set_new(j, "seed", json_integer((json_int_t)seed));
	json_object_set_new(j, "workers", json_integer(r->workers));
	json_object_set_new(j, "devices", json_integer(r->devices));
	json_object_set_new(j, "links", json_integer(r->links));
	json_object_set_new(j, "links_refused", json_integer(r->links_refused));
	json_object_set_new(j, "status", json_string(r->status));
	json_object_set_new(j, "events", json_integer((json_int_t)r->events));
	json_object_set_new(j, "wall_ns", json_integer(r->wall_ns));
	json_object_set_new(j, "cpu_ns", kernel_mode(&rn->o) ? json_null() : json_integer(r->cpu_ns));
	run_figures_json(j, rn, r);
	if (threads_mode(&rn->o)) {
		json_object_set_new(j, "time_scale", json_real(rn->o.time_scale));
		json_object_set_new(j, "wakeup_ns", json_integer(rn->wakeup_ns));
	}
	if (!kernel_mode(&rn->o)) {
		char kv[16];

		dl_kver_format(r->kernel, kv, sizeof(kv));
		json_object_set_new(j, "kernel", json_string(kv));
	}
	if (kernel_mode(&rn->o)) {
		json_object_set_new(j, "kernel", json_string(rn->krelease));
		json_object_set_new(j, "kernel_runs_per_boot", json_integer((json_int_t)rn->k.njobs));
		json_object_set_new(j, "kernel_build_wall_ns", json_integer(rn->k.stats.build_ms * 1000000));
		json_object_set_new(j, "kernel_boot_wall_ns", json_integer(rn->k.stats.boot_ms * 1000000));
		json_object_set_new(j, "kernel_qemu_wall_ns", json_integer(rn->k.stats.qemu_ms * 1000000));
	}
	if (r->fail_dev != DL_NONE) {
		json_object_set_new(j, "failed_device", json_string(dl_sc_name(rn->sc, r->fail_dev)));
		json_object_set_new(j, "error", json_string(cli_errno_name(r->err, err, sizeof(err))));
	}
	for (uint32_t i = 0; i < r->nops; i++) {
		const struct dl_op_result *op = &r->op[i];
		json_t *oj = json_object();
		char key[40];

		op_figures_json(oj, rn, op);
		op_cpu_json(oj, rn, op);
		json_object_set_new(oj, "err", json_integer(op->err));
		op_key(r, i, key, sizeof(key));
		json_object_set_new(j, key, oj);
	}
	return j;
}

/* One JSON value on a line of stdout. */
static void print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(j);
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* What a column prints where it has no value: not computed, or a ratio to nothing. */
#define NO_VALUE "\u2013"

/* S right-aligned in WIDTH terminal columns (S may hold UTF-8, such as NO_VALUE). */
static const char *cell(char *buf, size_t len, int width, const char *s)
{
	size_t n = strlen(s), pad = 0;
	int cols = 0;

	for (const char *p = s; *p; p++)
		cols += ((unsigned char)*p & 0xc0) != 0x80;
	if (width > cols)
		pad = (size_t)(width - cols);
	if (pad + n >= len)
		pad = 0, n = n < len ? n : len - 1;
	memset(buf, ' ', pad);
	memcpy(buf + pad, s, n);
	buf[pad + n] = '\0';
	return buf;
}

/* "%.3f" of A / B right-aligned in WIDTH, or NO_VALUE when B is 0 (a ratio to nothing) or CUT. */
static const char *ratio(char *buf, size_t len, int width, double a, double b, bool cut)
{
	char v[32];

	if (cut || !(b > 0))
		snprintf(v, sizeof(v), NO_VALUE);
	else
		snprintf(v, sizeof(v), "%.3f", a / b);
	return cell(buf, len, width, v);
}

/* Kernel mode: the guest's release and where the boot's wall time went. */
static void kernel_wall_line(const struct runner *rn)
{
	const struct dl_kernel_stats *k = &rn->k.stats;

	printf("kernel %s (guest time); ", rn->krelease);
	if (k->qemu_ms < 0) {
		printf("from a saved dump\n");
		return;
	}
	printf("wall %.1f s for %zu run(s): module %.1f s, boot %.1f s, runs and power-off %.1f s\n",
	       (double)(k->build_ms + k->qemu_ms) / 1e3, rn->k.njobs, (double)k->build_ms / 1e3,
	       (double)k->boot_ms / 1e3, (double)(k->qemu_ms - k->boot_ms) / 1e3);
}

/* @v with a comma every three digits: "1,830,345". */
static const char *grouped(char *buf, size_t len, uint64_t v)
{
	char d[24];
	int n = snprintf(d, sizeof(d), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = '\0';
	return buf;
}

/* @ns in the unit @unit chose: 2 grouped whole seconds, 1 grouped whole ms, 0 ms. */
static const char *span(char *buf, size_t len, int64_t ns, int unit)
{
	char g[32];

	/* rounded without adding first: a saturated sum is INT64_MAX */
	if (ns == INT64_MAX)
		snprintf(buf, len, "more than %s s (the sum saturated)",
			 grouped(g, sizeof(g), (uint64_t)(ns / 1000000000)));
	else if (unit == 2)
		snprintf(buf, len, "%s s", grouped(g, sizeof(g), (uint64_t)(ns / 1000000000 +
			 (ns % 1000000000 >= 500000000))));
	else if (unit == 1)
		snprintf(buf, len, "%s ms", grouped(g, sizeof(g), (uint64_t)(ns / 1000000 +
			 (ns % 1000000 >= 500000))));
	else
		snprintf(buf, len, "%.3f ms", ms(ns));
	return buf;
}

/*
 * The run passed 2^62 ns of virtual time: say which cost did it.  Mostly
 * the walk before each deferred retry, device_pm_move_to_tail(): the
 * kernel's device_reorder_to_tail() keeps no visited set, so it makes one
 * call per path below the device, which in a generated DAG of a few
 * thousand devices is past 2^64 (issue 34: sync and kernel-async-v2 at
 * 200,000 devices).  The kernel would not finish such a probe either.
 */
static void overflow_message(const struct runner *rn, char *q, size_t qlen)
{
	const struct dl_run_result *r = rn->r;
	uint64_t walks = 0, capped = 0, calls = 0;
	struct dl_costs c;
	char a[32], b[32];

	dl_costs_resolve(rn->sc, &c);
	for (uint32_t i = 0; i < r->nops; i++) {
		walks += r->op[i].reorder_walks;
		capped += r->op[i].reorder_capped;
		calls = dl_sat_add_u64(calls, r->op[i].reorder_calls);
	}
	fprintf(stderr, "dlsim run: %s: virtual time passed %lld s (2^62 ns)",
		cli_name(rn->sc->name, q, qlen), (long long)(DL_T_MAX / 1000000000));
	if (!dl_run_overflowed_in_walk(r)) {
		fprintf(stderr, ": a latency is too large for this scenario\n");
		return;
	}
	fprintf(stderr, " in device_pm_move_to_tail(), which deferred_probe_work_func() does before"
		" each of the %s deferred-probe retries: the kernel's device_reorder_to_tail() keeps"
		" no visited set, so it makes one call per path below the retried device, and %s of"
		" these walks had more paths than %lld s of calls (cost.reorder_visit_ns %lld ns a"
		" call).  With %s calls, even at 100 ns a call a kernel would spend %s%.2g s (%.0f"
		" years) in this probe: the graph has far more paths than a real device tree, and no"
		" kernel could probe it.  " DL_RUN_WALK_OUT "\n",
		grouped(a, sizeof(a), walks), grouped(b, sizeof(b), capped),
		(long long)(DL_COST_REORDER_CAP_NS / 1000000000), (long long)c.reorder_visit_ns,
		calls == UINT64_MAX ? "more than 1.8e19" : grouped(q, qlen, calls),
		calls == UINT64_MAX ? "over " : "", (double)calls * 1e-7,
		(double)calls * 1e-7 / (365.25 * 86400));
}

/*
 * Why an op took long, when most of it is the walk deferred_probe_work_func()
 * does before each retry (device_pm_move_to_tail(), charged by des only):
 * one line per op where it is at least a tenth of the makespan, with the
 * cost keys that set its price.
 */
static void reorder_lines(const struct runner *rn)
{
	const struct dl_run_result *r = rn->r;
	struct dl_costs c;
	bool any = false;

	dl_costs_resolve(rn->sc, &c);
	for (uint32_t i = 0; i < r->nops; i++) {
		const struct dl_op_result *op = &r->op[i];
		/* s from 1000 s, whole ms from 10 s */
		int secs = op->makespan_ns >= 1000 * 1000000000LL ? 2 :
			   op->makespan_ns >= 10 * 1000000000LL;
		char a[64], b[64], w[32], k[48];

		if (op->reorder_ns <= 0 || op->reorder_ns < op->makespan_ns / 10)
			continue;
		any = true;
		if (op->reorder_calls == UINT64_MAX)
			snprintf(k, sizeof(k), "more than 1.8e19");
		else if (op->reorder_calls >= 1000000000)
			snprintf(k, sizeof(k), "%.2g", (double)op->reorder_calls);
		else
			grouped(k, sizeof(k), op->reorder_calls);
		printf("%s: %s of its %s (%.1f%%) is device_pm_move_to_tail() before each of %s"
		       " deferred retries", dl_op_name(op->kind), span(a, sizeof(a), op->reorder_ns, secs),
		       span(b, sizeof(b), op->makespan_ns, secs),
		       op->makespan_ns ? 100.0 * (double)op->reorder_ns / (double)op->makespan_ns : 0.0,
		       grouped(w, sizeof(w), op->reorder_walks));
		if (kernel_mode(&rn->o)) {
			/* measured: the guest's time in it (dlsim_kmod's reorder records) */
			printf(", in the guest; its device_reorder_to_tail() makes one call per path"
			       " below the device (no visited set)\n");
			continue;
		}
		printf(": %s device_reorder_to_tail() calls, one per path below the retried"
		       " device (the kernel's walk keeps no visited set)", k);
		if (op->reorder_capped)
			printf("; %s walk%s hit the cap of %lld s a walk (uncapped, the calls would take"
			       " %.2g s)", grouped(w, sizeof(w), op->reorder_capped),
			       op->reorder_capped == 1 ? "" : "s",
			       (long long)(DL_COST_REORDER_CAP_NS / 1000000000),
			       ((double)op->reorder_walks * (double)c.reorder_ns +
				(double)op->reorder_calls * (double)c.reorder_visit_ns) / 1e9);
		printf("\n");
	}
	if (!any || kernel_mode(&rn->o))
		return;
	printf("  the lower bound counts callbacks only, not this walk; its price is cost.reorder_ns"
	       " %lld + cost.reorder_visit_ns %lld a call (defaults measured in the 6.12 TCG guest;"
	       " real hardware is perhaps ~100 ns a call); \"cost\": {\"reorder_ns\": 0,"
	       " \"reorder_visit_ns\": 0} leaves it out\n",
	       (long long)c.reorder_ns, (long long)c.reorder_visit_ns);
}

/*
 * The table's columns: the figures with a heading (figures.h), ns in ms,
 * and after the lower bound the ratio of the makespan to it (@rs).
 */
#define RATIO_WIDTH 7
#define TABLE_HEAD(type, name, avail, op_metric, heading, width) \
	table_head(#name, heading, width);
#define TABLE_CELL(type, name, avail, op_metric, heading, width) \
	table_cell(#name, heading, width, (double)op->name, (uint64_t)op->name, rs);

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

static void table_head(const char *name, const char *heading, int width)
{
	if (!heading)
		return;
	printf(" %*s", width, heading);
	if (!strcmp(name, "lower_bound_ns"))
		printf(" %*s", RATIO_WIDTH, "ratio");
}

static void table_cell(const char *name, const char *heading, int width, double ns, uint64_t count,
		       const char *rs)
{
	if (!heading)
		return;
	if (ends_with(name, "_ns"))
		printf(" %*.3f", width, ns / 1e6);
	else
		printf(" %*llu", width, (unsigned long long)count);
	if (!strcmp(name, "lower_bound_ns"))
		printf(" %s", rs);
}

static void table_result(const struct runner *rn, const char *order, int64_t run_id)
{
	const struct dl_run_result *r = rn->r;
	/* an interrupted run's last op stopped early: its bound is for the whole op */
	bool cut = !strcmp(r->status, "interrupted");
	char rs[32], err[32], q[CLI_QUOTE_MAX];

	if (run_id)
		printf("run %lld: ", (long long)run_id);
	else
		printf("run (not logged): ");
	printf("%s, order %s, ", cli_name(rn->sc->name, q, sizeof(q)), order);
	if (!kernel_mode(&rn->o))
		printf("kernel %u.%u rules, ", r->kernel >> 8, r->kernel & 0xff);
	printf("K = %u CPUs, %u devices, %u links (%u refused): %s\n", r->workers, r->devices,
	       r->links, r->links_refused, r->status);
	if (threads_mode(&rn->o))
		printf("threads: time scale %g, wake-up latency %.1f us\n", rn->o.time_scale,
		       (double)rn->wakeup_ns / 1e3);
	if (kernel_mode(&rn->o))
		kernel_wall_line(rn);
	printf("%-10s", "op");
	DL_FIGURES(TABLE_HEAD)
	printf("\n");
	for (uint32_t i = 0; i < r->nops; i++) {
		const struct dl_op_result *op = &r->op[i];

		ratio(rs, sizeof(rs), RATIO_WIDTH, (double)op->makespan_ns, (double)op->lower_bound_ns,
		      cut && i + 1 == r->nops);
		printf("%-10s", dl_op_name(op->kind));
		DL_FIGURES(TABLE_CELL)
		printf("\n");
	}
	printf("%-10s %12.3f %12.3f %s   events %llu, wall %.1f ms\n", "total",
	       ms(r->makespan_ns), ms(r->lower_bound_ns),
	       ratio(rs, sizeof(rs), 7, (double)r->makespan_ns, (double)r->lower_bound_ns, cut),
	       (unsigned long long)r->events, ms(r->wall_ns));
	reorder_lines(rn);
	if (cut)
		printf("interrupted: the last op did not finish, so it has no ratio (" NO_VALUE ")\n");
	if (r->fail_dev != DL_NONE)
		printf("failed: device '%s' returned %s\n",
		       cli_name(dl_sc_name(rn->sc, r->fail_dev), q, sizeof(q)),
		       cli_errno_name(r->err, err, sizeof(err)));
	if (!dl_order_policy(rn->o.order)->link_aware)
		printf("note: %s ignores device links; 'dlsim check' finds the orderings it breaks\n",
		       order);
}

/*
 * --mode kernel: every run of the command is booted at once (or read from
 * --kernel-dump) before the database is opened (dl_run_kernel.h);
 * kernel_run() then converts the runs' dumps one by one.
 */
static int kernel_batch(struct runner *rn, const char *me, const enum dl_order *orders,
			uint32_t norders)
{
	const struct run_opts *o = &rn->o;
	struct dl_kernel_opts ko = { .version = o->kernel, .timeout_ms = o->kernel_timeout_ms,
				     .dump_out = o->kernel_save, .stop = cli_stop_flag() };
	char msg[4096], warn[4096];
	int rc = dl_run_kernel_boot(&rn->k, rn->sc, orders, norders, o->seeds, &ko, o->kernel_dump,
				    msg, sizeof(msg), warn, sizeof(warn));

	if (warn[0])
		fprintf(stderr, "dlsim %s: %s\n", me, warn);
	if (rc == -EINTR)
		return DL_EXIT_INTERRUPTED;
	if (rc) {
		fprintf(stderr, "dlsim %s: %s\n", me, msg);
		return DL_EXIT_USAGE;
	}
	return 0;
}

/* The next run's dump, converted and logged like a simulation (dl_run() of @q). */
static int kernel_run(struct runner *rn, struct dl_run_req *q, int64_t *run_id)
{
	const struct dl_scenario *sc = rn->sc;
	struct dl_kernel_info ki = { .last_op = -1, .last_phase = -1 };   /* if not converted */
	const struct dl_kjob *j = dl_run_kernel_next(&rn->k, q, rn->o.kernel, &ki);
	char release[96];
	int rc, log_err;

	/* kernel_batch() refused the dumps that do not convert */
	dl_kernel_release(j->dump ? j->dump : "", j->len, release, sizeof(release));
	snprintf(rn->krelease, sizeof(rn->krelease), "%s", release[0] ? release : rn->o.kernel);
	rc = dl_run(q, rn->r, run_id, &log_err);
	if (ki.retry_walks || ki.core_defers)
		fprintf(stderr, "dlsim: kernel (seed %llu): the driver core deferred %u probes before"
			" their callback; %u deferred-probe walks took %.3f ms, %u reorders"
			" (device_pm_move_to_tail) in them %.3f ms\n", (unsigned long long)j->seed,
			ki.core_defers, ki.retry_walks, ki.retry_ns / 1e6, ki.reorders,
			ki.reorder_ns / 1e6);
	if (rc == -EPIPE) {
		fprintf(stderr, "dlsim: kernel run (order %s, seed %llu) failed: %s; last op %d (%s),"
			" last phase %s\n", dl_order_name(j->order), (unsigned long long)j->seed, ki.msg,
			ki.last_op + 1, ki.last_op >= 0 && (uint32_t)ki.last_op < sc->nop ?
			dl_op_name(sc->op[ki.last_op].kind) : "none",
			ki.last_phase >= 0 ? dl_phase_name((unsigned)ki.last_phase) : "none");
		rc = 1;
	}
	return log_err ? log_err : rc;
}

/* The engine's options of a run of @order with @seed, as the command line set them. */
static struct dl_engine_opts engine_opts(const struct run_opts *o, enum dl_order order,
					 uint64_t seed)
{
	return (struct dl_engine_opts){ .order = order, .workers = o->workers, .kernel = o->kver,
					.seed = seed, .probe_module = o->probe_module,
					.cost_profile = o->profile, .stop = cli_stop_flag() };
}

/* One simulation, logged, into rn->r; returns the engine's result code. */
static int simulate(struct runner *rn, enum dl_order order, uint64_t seed, int64_t *run_id)
{
	const struct run_opts *o = &rn->o;
	struct dl_run_req q = {
		.sc = rn->sc, .backend = o->backend, .time_scale = o->time_scale,
		.eo = engine_opts(o, order, seed),
		.log = rn->log, .batch = rn->batch, .log_stop = cli_stop_flag(),
	};
	struct progress pr = { .sc = rn->sc };
	int rc, log_err;

	*run_id = 0;
	if (kernel_mode(o))
		return kernel_run(rn, &q, run_id);
	clock_gettime(CLOCK_MONOTONIC, &pr.t0);
	if (isatty(STDERR_FILENO)) {
		q.eo.progress = show_progress;
		q.eo.progress_ctx = &pr;
	}
	rc = dl_run(&q, rn->r, run_id, &log_err);
	if (pr.shown)
		fprintf(stderr, "\r%60s\r", "");
	return log_err ? log_err : rc;
}

/*
 * The writer never reports what it did not store: a run whose log failed is
 * 'failed' in the database (or still 'running' if even that could not be
 * written), and its summary is not printed as if it had succeeded.
 */
static int log_failed(const char *me, struct dl_log *log, int64_t run_id)
{
	const char *msg = dl_log_error(log);

	if (!msg)
		return 0;
	fprintf(stderr, "dlsim %s: the log could not be written: %s\n", me, msg);
	if (!run_id)
		fprintf(stderr, "dlsim %s: no run was recorded; nothing is printed\n", me);
	else if (dl_log_run_recorded(log))
		fprintf(stderr, "dlsim %s: run %lld is marked 'failed' in the database with the events"
			" stored before the failure (%llu rows were not stored); its summary is not"
			" printed\n", me, (long long)run_id, (unsigned long long)dl_log_lost(log));
	else
		fprintf(stderr, "dlsim %s: run %lld could not even be marked 'failed' and stays"
			" 'running' (dlsim check reports it incomplete); its summary is not printed\n",
			me, (long long)run_id);
	return 1;
}

/*
 * Threads mode times callbacks in real time, so a wake-up latency that is
 * not small beside the shortest of them is measured instead of the order:
 * pick, or insist on, a time scale at which it is.
 */
static int pick_time_scale(struct runner *rn, const char *me)
{
	const char *env = getenv("DLSIM_WAKEUP_NS");
	double pick;
	bool enough;

	if (env && *env) {
		char *end;

		rn->wakeup_ns = strtoll(env, &end, 10);
		if (*end || rn->wakeup_ns < 0) {
			fprintf(stderr, "dlsim %s: DLSIM_WAKEUP_NS='%s': expected ns >= 0\n", me, env);
			return -EINVAL;
		}
	} else {
		rn->wakeup_ns = dl_wakeup_latency_ns();
		if (rn->wakeup_ns < 0) {
			fprintf(stderr, "dlsim %s: cannot start a thread to measure the wake-up latency\n", me);
			return -EINVAL;
		}
	}
	enough = dl_run_time_scale(rn->sc, rn->wakeup_ns, rn->o.time_scale, &pick);
	if (!rn->o.have_scale) {
		rn->o.time_scale = pick;
		return 0;
	}
	if (enough)
		return 0;
	fprintf(stderr, "dlsim %s: --time-scale %g: the shortest callback (%.1f us) would take %.2f us "
		"of real time, less than %d x this machine's wake-up latency (%.1f us), which would "
		"then be measured instead of the order; use --time-scale %g or more (the default "
		"picks it)\n", me, rn->o.time_scale, (double)dl_shortest_callback_ns(rn->sc) / 1e3,
		(double)dl_shortest_callback_ns(rn->sc) * rn->o.time_scale / 1e3, DL_WAKEUP_FACTOR,
		(double)rn->wakeup_ns / 1e3, pick);
	return -EINVAL;
}

/* Each order's threads run timed by the DES first: one over --max-wall is refused (dl_run.h). */
static int check_threads_wall(struct runner *rn, const char *me, const enum dl_order *orders,
			      uint32_t norders)
{
	const struct run_opts *o = &rn->o;
	char why[512];

	for (uint32_t i = 0; i < norders; i++) {
		struct dl_engine_opts eo = engine_opts(o, orders[i], rn->sc->seed);
		int rc = dl_run_wall_over(rn->sc, &eo, o->time_scale, o->max_wall, rn->r, why,
					  sizeof(why));

		if (rc == -EINTR)
			return DL_EXIT_INTERRUPTED;
		if (rc) {
			fprintf(stderr, "dlsim %s: %s\n", me, why);
			return DL_EXIT_USAGE;
		}
	}
	return 0;
}

static void runner_free(struct runner *rn)
{
	dl_run_kernel_free(&rn->k);
	if (rn->log)
		dl_log_close(rn->log);
	dl_scenario_free(rn->sc);
	free(rn->batch);
	free(rn->r);
}

static int setup(struct runner *rn, const char *me, const enum dl_order *orders, uint32_t norders)
{
	const struct run_opts *o = &rn->o;
	struct dl_error err;
	char msg[512];

	if (dl_scenario_load(o->scenario, o->set, o->nset, o->have_seed ? &o->seed : NULL, &rn->sc,
			     &err)) {
		fprintf(stderr, "dlsim %s: %s\n", me, err.msg);
		return DL_EXIT_USAGE;
	}
	rn->r = malloc(sizeof(*rn->r));
	if (!rn->r || (!o->no_log && !(rn->batch = malloc(sizeof(*rn->batch))))) {
		fprintf(stderr, "dlsim %s: out of memory\n", me);
		runner_free(rn);
		return DL_EXIT_USAGE;
	}
	if (threads_mode(o) && pick_time_scale(rn, me)) {
		runner_free(rn);
		return DL_EXIT_USAGE;
	}
	if (threads_mode(o) || kernel_mode(o)) {
		int rc;

		/* the DES's timing of each order, or the kernel's boot, before any run */
		cli_catch_stop();
		rc = threads_mode(o) ? check_threads_wall(rn, me, orders, norders)
				     : kernel_batch(rn, me, orders, norders);
		if (rc) {
			runner_free(rn);
			return rc;
		}
	}
	if (!o->no_log && dl_log_open_wait(o->db, (int)o->busy_ms, &rn->log, msg, sizeof(msg))) {
		fprintf(stderr, "dlsim %s: %s\n", me, msg);
		runner_free(rn);
		return DL_EXIT_USAGE;
	}
	if (rn->log)
		dl_log_set_stop(rn->log, cli_stop_flag());
	cli_catch_stop();
	return 0;
}

static int exit_for(int rc)
{
	if (rc == -EINTR)
		return DL_EXIT_INTERRUPTED;
	if (rc < 0)
		return DL_EXIT_USAGE;
	return rc ? DL_EXIT_VIOLATION : DL_EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
	struct runner rn = { 0 };
	int64_t run_id;
	char err[32], q[CLI_QUOTE_MAX];
	int rc = parse_args(argc, argv, &rn.o, false);

	if (rc)
		return rc > 0 ? DL_EXIT_OK : DL_EXIT_USAGE;
	rc = setup(&rn, "run", &rn.o.order, 1);
	if (rc)
		return rc;
	rc = simulate(&rn, rn.o.order, rn.sc->seed, &run_id);
	if (rn.log && log_failed("run", rn.log, run_id)) {
		runner_free(&rn);
		return DL_EXIT_USAGE;
	}
	if (rc == -EOVERFLOW)
		overflow_message(&rn, q, sizeof(q));
	else if (rc < 0 && rc != -EINTR)
		fprintf(stderr, "dlsim run: simulation failed: %s\n", dl_run_strerror(rc));
	if (rn.o.json)
		print_json(result_json(&rn, dl_order_name(rn.o.order), rn.sc->seed, run_id));
	else
		table_result(&rn, dl_order_name(rn.o.order), run_id);
	if (!rn.o.json && !rn.o.no_log)
		cli_explain_after(rn.o.db, run_id, rn.r->devices, 0);
	if (rn.r->fail_dev != DL_NONE)
		fprintf(stderr, "dlsim run: %s failed on device '%s' (%s)\n",
			rn.r->nops ? "an op" : "the run",
			cli_name(dl_sc_name(rn.sc, rn.r->fail_dev), q, sizeof(q)),
			cli_errno_name(rn.r->err, err, sizeof(err)));
	runner_free(&rn);
	return exit_for(rc);
}

struct agg { double sum, sq; uint32_t n; };

static void agg_add(struct agg *a, double v)
{
	a->sum += v;
	a->sq += v * v;
	a->n++;
}

static double agg_mean(const struct agg *a) { return a->n ? a->sum / a->n : 0; }

static double agg_sd(const struct agg *a)
{
	double m = agg_mean(a), v = a->n > 1 ? (a->sq - a->n * m * m) / (a->n - 1) : 0;

	return v > 0 ? sqrt(v) : 0;
}

/* compare's statistics: per order and op, makespan, lower bound and order bound. */
enum { AGG_MK, AGG_LB, AGG_OB, AGG_RO, AGG_N };   /* AGG_RO: reorder_ns */

struct compare_stats {
	struct agg a[MAX_ORDERS][DL_MAX_OPS][AGG_N];
	uint8_t opkind[DL_MAX_OPS];
	uint32_t nops;
};

/* --orders, or every order but the negative control (and those --kernel did not run). */
static int parse_orders(const struct run_opts *o, enum dl_order *orders, uint32_t *n)
{
	char list[256];

	*n = 0;
	if (!o->order_list) {
		/* with --kernel V, those V ran (kernel-async or kernel-async-v2, not both) */
		*n = dl_order_link_aware(orders, o->kver);
		return 0;
	}
	snprintf(list, sizeof(list), "%s", o->order_list);
	for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_ORDERS) {
			fprintf(stderr, "dlsim compare: at most %d orders\n", MAX_ORDERS);
			return -EINVAL;
		}
		if (parse_order("compare", t, &orders[*n]))
			return -EINVAL;
		(*n)++;
	}
	if (!*n) {
		fprintf(stderr, "dlsim compare: --orders is empty\n");
		return -EINVAL;
	}
	return 0;
}

/* --kernel V with each order (des, threads; kernel mode: dl_kernel_refuse()). */
static int check_order_kernels(const struct run_opts *o, const enum dl_order *orders, uint32_t n)
{
	char why[256];

	for (uint32_t k = 0; o->kver && k < n; k++)
		if (dl_order_check_kernel(orders[k], o->kver, why, sizeof(why))) {
			fprintf(stderr, "dlsim compare: --kernel %s: %s\n", o->kernel, why);
			return -EINVAL;
		}
	return 0;
}

/*
 * After op @i's rows: the orders whose makespan is at least 10%
 * device_pm_move_to_tail() before deferred retries (reorder_lines() for one
 * run), in one line.
 */
static void compare_reorder_line(const struct compare_stats *st, uint32_t i,
				 const enum dl_order *orders, uint32_t norders)
{
	bool any = false;

	for (uint32_t k = 0; k < norders; k++) {
		double mk = agg_mean(&st->a[k][i][AGG_MK]), ro = agg_mean(&st->a[k][i][AGG_RO]);

		if (!(ro > 0) || ro < mk / 10)
			continue;
		printf("%s%.1f%% of %s's", any ? ", " : "  device_pm_move_to_tail() before deferred retries is ",
		       100.0 * ro / mk, dl_order_name(orders[k]));
		any = true;
	}
	if (any)
		printf(" makespan (one device_reorder_to_tail() call per path below the device;"
		       " cost.reorder_ns, cost.reorder_visit_ns; 'dlsim run' says more)\n");
}

static void compare_table(const struct runner *rn, const struct compare_stats *st,
			  const enum dl_order *orders, uint32_t norders)
{
	bool sd = rn->o.seeds > 1, des = rn->o.backend == DL_BACKEND_DES;
	char r1[32], r2[32], ob[32], v[32], q[CLI_QUOTE_MAX];

	printf("compare: %s, %u devices, %u links, ", cli_name(rn->sc->name, q, sizeof(q)),
	       rn->sc->ndev, rn->sc->nlink);
	if (sd)
		printf("%u seeds from %llu, times in ms (mean ± sd)\n", rn->o.seeds,
		       (unsigned long long)rn->sc->seed);
	else
		printf("seed %llu, times in ms\n", (unsigned long long)rn->sc->seed);
	if (threads_mode(&rn->o))
		printf("threads: time scale %g, wake-up latency %.1f us\n", rn->o.time_scale,
		       (double)rn->wakeup_ns / 1e3);
	if (kernel_mode(&rn->o))
		kernel_wall_line(rn);
	for (uint32_t i = 0; i < st->nops; i++) {
		printf("\n%-8s %-16s %*s %12s %7s %12s %7s\n", dl_op_name(st->opkind[i]), "order",
		       sd ? 22 : 12, "makespan", "lower bd", "ratio", "order bd", "ratio");
		for (uint32_t k = 0; k < norders; k++) {
			const struct agg *a = st->a[k][i];
			double mk = agg_mean(&a[AGG_MK]), lb = agg_mean(&a[AGG_LB]);
			double obd = agg_mean(&a[AGG_OB]);

			printf("%-8s %-16s %12.3f", "", dl_order_name(orders[k]), mk / 1e6);
			if (sd)
				printf(" ± %7.3f", agg_sd(&a[AGG_MK]) / 1e6);
			snprintf(v, sizeof(v), "%.3f", obd / 1e6);
			printf(" %12.3f %s %s %s\n", lb / 1e6, ratio(r1, sizeof(r1), 7, mk, lb, false),
			       cell(ob, sizeof(ob), 12, des ? v : NO_VALUE), ratio(r2, sizeof(r2), 7, mk, obd, !des));
		}
		compare_reorder_line(st, i, orders, norders);
	}
}

int cmd_compare(int argc, char **argv)
{
	struct runner rn = { 0 };
	enum dl_order orders[MAX_ORDERS];
	struct compare_stats *st;
	json_t *all = NULL;
	uint32_t norders = 0;
	int64_t first_run[MAX_ORDERS] = { 0 };	/* the first seed's run of each order: explained */
	int rc = parse_args(argc, argv, &rn.o, true), worst = 0;

	if (rc)
		return rc > 0 ? DL_EXIT_OK : DL_EXIT_USAGE;
	if (parse_orders(&rn.o, orders, &norders) || check_order_kernels(&rn.o, orders, norders))
		return DL_EXIT_USAGE;
	st = calloc(1, sizeof(*st));
	if (!st) {
		fprintf(stderr, "dlsim compare: out of memory\n");
		return DL_EXIT_USAGE;
	}
	rc = setup(&rn, "compare", orders, norders);
	if (rc) {
		free(st);
		return rc;
	}
	if (rn.o.json)
		all = json_array();
	for (uint32_t s = 0; s < rn.o.seeds && !*cli_stop_flag(); s++) {
		for (uint32_t k = 0; k < norders && !*cli_stop_flag(); k++) {
			const struct dl_run_result *r = rn.r;
			uint64_t seed = rn.sc->seed + s;
			int64_t run_id;

			rc = simulate(&rn, orders[k], seed, &run_id);
			if (rn.log && log_failed("compare", rn.log, run_id)) {
				json_decref(all);
				free(st);
				runner_free(&rn);
				return DL_EXIT_USAGE;
			}
			if (rc < 0) {
				worst = rc;
				break;
			}
			if (rc > worst)
				worst = rc;
			if (!s)
				first_run[k] = run_id;
			if (all)
				json_array_append_new(all, result_json(&rn, dl_order_name(orders[k]), seed,
								       run_id));
			st->nops = r->nops;
			for (uint32_t i = 0; i < r->nops; i++) {
				st->opkind[i] = r->op[i].kind;
				agg_add(&st->a[k][i][AGG_MK], (double)r->op[i].makespan_ns);
				agg_add(&st->a[k][i][AGG_LB], (double)r->op[i].lower_bound_ns);
				agg_add(&st->a[k][i][AGG_OB], (double)r->op[i].order_bound_ns);
				agg_add(&st->a[k][i][AGG_RO], (double)r->op[i].reorder_ns);
			}
		}
	}
	if (all)
		print_json(all);
	else
		compare_table(&rn, st, orders, norders);
	for (uint32_t k = 0; !rn.o.json && !rn.o.no_log && k < norders && k < MAX_ORDERS; k++)
		cli_explain_after(rn.o.db, first_run[k], rn.r->devices, 1);
	free(st);
	runner_free(&rn);
	return exit_for(worst);
}
