/*
 * cmd_run.c - `dlsim run` and `dlsim compare`: load a scenario, simulate it
 * under one or several orders, log to SQLite, print a summary.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/cli/cli.h"
#include "sim/core/dl_core.h"
#include "sim/engine/engine.h"
#include "sim/engine/threads.h"
#include "sim/log/dl_log.h"
#include "sim/scenario/scenario.h"

#define MAX_SET 64
#define MAX_ORDERS 16
#define MAX_SEEDS 1000
#define EV_BATCH 8192

struct run_opts {
	const char *scenario, *db, *order_list, *mode;
	enum dl_order order;
	uint64_t seed;
	bool have_seed, json, no_log;
	uint32_t workers, seeds;
	double time_scale;
	struct dl_override set[MAX_SET];
	size_t nset;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void run_usage(FILE *f, bool compare)
{
	if (compare)
		fprintf(f, "usage: dlsim compare SCENARIO --orders A,B,... [--seeds N] [opts]\n\n"
			   "Run each order on the same devices, links and sampled latencies (same seeds)\n"
			   "and print one side-by-side table per op with mean and sd over the seeds and\n"
			   "the ratio to the lower bound max(critical path, work / K), the same for\n"
			   "every order, and to the order's own bound, which adds the main thread's\n"
			   "serial share of sync devices (des mode; see README).\n\n");
	else
		fprintf(f, "usage: dlsim run SCENARIO [opts]\n\n"
			   "Simulate the scenario's script, log every event to the database and print\n"
			   "a summary table per op.\n\n");
	fprintf(f, "options:\n"
		   "  --db PATH         SQLite log to append runs to (default dlsim.db)\n"
		   "%s"
		   "  --mode des|threads  des: deterministic virtual time (default); threads: real\n"
		   "                    POSIX threads, wall-clock timed\n"
		   "  --seed N          override the scenario's seed\n"
		   "  --workers K       simulated CPUs shared by the main thread and workers\n"
		   "                    (default: the order's own, 1 for sync and naive, else 8)\n"
		   "  --set KEY=VALUE   override a field of the scenario's generate object\n"
		   "  --json            print the summary as JSON on stdout\n"
		   "  --no-log          simulate without writing the database\n"
		   "  --busy-timeout MS wait this long for another writer's lock on the\n"
		   "                    database, then give up with exit 2 (default 5000)\n"
		   "  --time-scale X    threads mode: real seconds per simulated second (0.01)\n"
		   "\nexit status: 0 ok, 1 an injected fault made an op fail, 2 bad usage or input,\n"
		   "130 interrupted (what was simulated is committed, the run is 'interrupted')\n",
		compare ? "  --orders A,B,...  the orders to compare (see dlsim orders)\n"
			  "  --seeds N         seeds per order: seed, seed+1, ... (default 1)\n"
			: "  --order NAME      ordering algorithm (default kernel-async; see dlsim orders)\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return (errno || *end) ? -EINVAL : 0;
}

static int parse_args(int argc, char **argv, struct run_opts *o, bool compare)
{
	const char *me = compare ? "compare" : "run";

	memset(o, 0, sizeof(*o));
	o->db = "dlsim.db";
	o->order = DL_ORDER_KERNEL_ASYNC;
	o->mode = "des";
	o->seeds = 1;
	o->time_scale = 0.01;
	for (int i = 1; i < argc; i++) {
		const char *v;
		uint64_t u;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			run_usage(stdout, compare);
			return 1;
		} else if (!strcmp(argv[i], "--json")) {
			o->json = true;
		} else if (!strcmp(argv[i], "--no-log")) {
			o->no_log = true;
		} else if ((v = cli_opt_value(argc, argv, &i, "--db"))) {
			o->db = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--busy-timeout"))) {
			if (parse_u64(v, &u) || u > 3600000) {
				fprintf(stderr, "dlsim %s: --busy-timeout '%s': expected 0..3600000 ms\n",
					me, v);
				return -1;
			}
			dl_log_set_busy_timeout((int)u);
		} else if (!compare && (v = cli_opt_value(argc, argv, &i, "--order"))) {
			if (dl_order_parse(v, &o->order)) {
				fprintf(stderr, "dlsim %s: unknown order '%s'; see 'dlsim orders'\n", me, v);
				return -1;
			}
		} else if (compare && (v = cli_opt_value(argc, argv, &i, "--orders"))) {
			o->order_list = v;
		} else if (compare && (v = cli_opt_value(argc, argv, &i, "--seeds"))) {
			if (parse_u64(v, &u) || u < 1 || u > MAX_SEEDS) {
				fprintf(stderr, "dlsim %s: --seeds '%s': expected 1..%d\n", me, v, MAX_SEEDS);
				return -1;
			}
			o->seeds = (uint32_t)u;
		} else if ((v = cli_opt_value(argc, argv, &i, "--mode"))) {
			if (strcmp(v, "des") && strcmp(v, "threads")) {
				fprintf(stderr, "dlsim %s: --mode '%s': expected des or threads\n", me, v);
				return -1;
			}
			o->mode = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--seed"))) {
			if (parse_u64(v, &o->seed)) {
				fprintf(stderr, "dlsim %s: --seed '%s': expected a non-negative integer\n", me, v);
				return -1;
			}
			o->have_seed = true;
		} else if ((v = cli_opt_value(argc, argv, &i, "--workers"))) {
			if (parse_u64(v, &u) || u < 1 || u > 4096) {
				fprintf(stderr, "dlsim %s: --workers '%s': expected 1..4096\n", me, v);
				return -1;
			}
			o->workers = (uint32_t)u;
		} else if ((v = cli_opt_value(argc, argv, &i, "--time-scale"))) {
			char *end;

			o->time_scale = strtod(v, &end);
			if (*end || !(o->time_scale > 0)) {
				fprintf(stderr, "dlsim %s: --time-scale '%s': expected a positive number\n", me, v);
				return -1;
			}
		} else if ((v = cli_opt_value(argc, argv, &i, "--set"))) {
			char *eq = strchr(v, '=');

			if (!eq || eq == v || o->nset == MAX_SET) {
				fprintf(stderr, "dlsim %s: --set '%s': expected KEY=VALUE\n", me, v);
				return -1;
			}
			*eq = '\0';
			o->set[o->nset].key = v;
			o->set[o->nset++].value = eq + 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "dlsim %s: unknown option '%s'; try 'dlsim %s --help'\n", me, argv[i], me);
			return -1;
		} else if (!o->scenario) {
			o->scenario = argv[i];
		} else {
			fprintf(stderr, "dlsim %s: unexpected argument '%s'\n", me, argv[i]);
			return -1;
		}
	}
	if (!o->scenario) {
		fprintf(stderr, "dlsim %s: missing SCENARIO; try 'dlsim %s --help'\n", me, me);
		return -1;
	}
	if (compare && !o->order_list) {
		fprintf(stderr, "dlsim compare: missing --orders A,B,...\n");
		return -1;
	}
	return 0;
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

/* Events from the engine are batched, then handed to the log writer. */
struct batch {
	struct dl_log *log;
	struct dl_event ev[EV_BATCH];
	size_t n;
};

static void batch_emit(void *ctx, struct dl_event *e)
{
	struct batch *b = ctx;

	b->ev[b->n++] = *e;
	if (b->n == EV_BATCH) {
		dl_log_events(b->log, b->ev, b->n);
		b->n = 0;
	}
}

static void json_result(FILE *f, const struct dl_scenario *sc, const char *order,
			const char *mode, uint64_t seed, int64_t run_id, const struct dl_run_result *r)
{
	fprintf(f, "{\"run_id\":%lld,\"scenario\":", (long long)run_id);
	/* scenario names are data: escape for JSON */
	fputc('"', f);
	for (const char *p = sc->name; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
	fprintf(f, ",\"order\":\"%s\",\"mode\":\"%s\",\"seed\":%llu,\"workers\":%u,"
		   "\"devices\":%u,\"links\":%u,\"links_refused\":%u,\"status\":\"%s\","
		   "\"makespan_ns\":%lld,\"lower_bound_ns\":%lld,\"critical_path_ns\":%lld,"
		   "\"work_ns\":%lld,\"events\":%llu,\"wall_ns\":%lld,\"probe_attempts\":%llu,"
		   "\"probe_defers\":%llu,\"blocked_ns\":%lld,\"wakeups\":%llu,\"peak_workers\":%u,"
		   "\"main_bound_ns\":%lld,\"order_bound_ns\":%lld",
		order, mode, (unsigned long long)seed, r->workers, r->devices, r->links,
		r->links_refused, r->status, (long long)r->makespan_ns,
		(long long)r->lower_bound_ns, (long long)r->critical_path_ns,
		(long long)r->work_ns, (unsigned long long)r->events, (long long)r->wall_ns,
		(unsigned long long)r->probe_attempts, (unsigned long long)r->probe_defers,
		(long long)r->blocked_ns, (unsigned long long)r->wakeups, r->peak_workers,
		(long long)r->main_bound_ns, (long long)r->order_bound_ns);
	/* per op: the first op of each kind under its name, later ones suffixed */
	for (uint32_t i = 0; i < r->nops; i++) {
		const struct dl_op_result *op = &r->op[i];
		unsigned seen = 0;

		for (uint32_t j = 0; j < i; j++)
			seen += r->op[j].kind == op->kind;
		fprintf(f, ",\"%s%.0u\":{\"makespan_ns\":%lld,\"lower_bound_ns\":%lld,"
			   "\"critical_path_ns\":%lld,\"work_ns\":%lld,\"probe_attempts\":%llu,"
			   "\"probe_defers\":%llu,\"blocked_ns\":%lld,\"wakeups\":%llu,"
			   "\"peak_workers\":%u,\"err\":%d,\"main_bound_ns\":%lld,"
			   "\"order_bound_ns\":%lld}",
			dl_op_name(op->kind), seen ? seen + 1 : 0, (long long)op->makespan_ns,
			(long long)op->lower_bound_ns, (long long)op->critical_path_ns,
			(long long)op->work_ns, (unsigned long long)op->probe_attempts,
			(unsigned long long)op->probe_defers, (long long)op->blocked_ns,
			(unsigned long long)op->wakeups, op->peak_workers, op->err,
			(long long)op->main_bound_ns, (long long)op->order_bound_ns);
	}
	fprintf(f, "}");
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void table_result(FILE *f, const struct dl_scenario *sc, const char *order,
			 int64_t run_id, const struct dl_run_result *r)
{
	/* an interrupted run's last op stopped early: its bound is for the whole op */
	bool cut = !strcmp(r->status, "interrupted");
	char rs[16];

	fprintf(f, "run %lld: %s, order %s, %u workers, %u devices, %u links (%u refused): %s\n",
		(long long)run_id, sc->name, order, r->workers, r->devices, r->links,
		r->links_refused, r->status);
	fprintf(f, "%-10s %12s %12s %7s %9s %8s %6s %12s\n", "op", "makespan ms",
		"lower bd ms", "ratio", "attempts", "defers", "peak", "blocked ms");
	for (uint32_t i = 0; i < r->nops; i++) {
		const struct dl_op_result *op = &r->op[i];
		double ratio = op->lower_bound_ns ? (double)op->makespan_ns / (double)op->lower_bound_ns : 1.0;

		if (cut && i + 1 == r->nops)
			snprintf(rs, sizeof(rs), "-");
		else
			snprintf(rs, sizeof(rs), "%.3f", ratio);
		fprintf(f, "%-10s %12.3f %12.3f %7s %9llu %8llu %6u %12.3f\n", dl_op_name(op->kind),
			ms(op->makespan_ns), ms(op->lower_bound_ns), rs,
			(unsigned long long)op->probe_attempts, (unsigned long long)op->probe_defers,
			op->peak_workers, ms(op->blocked_ns));
	}
	if (cut)
		snprintf(rs, sizeof(rs), "-");
	else
		snprintf(rs, sizeof(rs), "%.3f", r->lower_bound_ns ?
			 (double)r->makespan_ns / (double)r->lower_bound_ns : 1.0);
	fprintf(f, "%-10s %12.3f %12.3f %7s   events %llu, wall %.1f ms\n", "total",
		ms(r->makespan_ns), ms(r->lower_bound_ns), rs,
		(unsigned long long)r->events, ms(r->wall_ns));
	if (cut)
		fprintf(f, "interrupted: the last op did not finish, so it has no ratio\n");
	if (r->fail_dev != DL_NONE)
		fprintf(f, "failed: device '%s' returned %d\n", dl_sc_name(sc, r->fail_dev), r->err);
}

static int log_metrics(struct dl_log *log, const struct dl_run_result *r)
{
	struct dl_metric m[16 + 4 * DL_MAX_OPS];
	static char names[DL_MAX_OPS][4][40];
	size_t n = 0;

	m[n++] = (struct dl_metric){ "makespan_ns", (double)r->makespan_ns };
	m[n++] = (struct dl_metric){ "lower_bound_ns", (double)r->lower_bound_ns };
	m[n++] = (struct dl_metric){ "critical_path_ns", (double)r->critical_path_ns };
	m[n++] = (struct dl_metric){ "work_ns", (double)r->work_ns };
	m[n++] = (struct dl_metric){ "events", (double)r->events };
	m[n++] = (struct dl_metric){ "wall_ns", (double)r->wall_ns };
	m[n++] = (struct dl_metric){ "probe_attempts", (double)r->probe_attempts };
	m[n++] = (struct dl_metric){ "probe_defers", (double)r->probe_defers };
	m[n++] = (struct dl_metric){ "peak_workers", (double)r->peak_workers };
	m[n++] = (struct dl_metric){ "blocked_ns", (double)r->blocked_ns };
	m[n++] = (struct dl_metric){ "wakeups", (double)r->wakeups };
	m[n++] = (struct dl_metric){ "links_refused", (double)r->links_refused };
	/* DES only (0 in threads mode): bounds for the order run, see engine.h */
	m[n++] = (struct dl_metric){ "main_bound_ns", (double)r->main_bound_ns };
	m[n++] = (struct dl_metric){ "order_bound_ns", (double)r->order_bound_ns };
	for (uint32_t i = 0; i < r->nops; i++) {
		const struct dl_op_result *op = &r->op[i];
		unsigned seen = 0;

		for (uint32_t j = 0; j < i; j++)
			seen += r->op[j].kind == op->kind;
		if (seen)
			continue;   /* per-op metrics name the first op of each kind */
		snprintf(names[i][0], sizeof(names[i][0]), "%s.makespan_ns", dl_op_name(op->kind));
		snprintf(names[i][1], sizeof(names[i][1]), "%s.lower_bound_ns", dl_op_name(op->kind));
		snprintf(names[i][2], sizeof(names[i][2]), "%s.critical_path_ns", dl_op_name(op->kind));
		m[n++] = (struct dl_metric){ names[i][0], (double)op->makespan_ns };
		m[n++] = (struct dl_metric){ names[i][1], (double)op->lower_bound_ns };
		m[n++] = (struct dl_metric){ names[i][2], (double)op->critical_path_ns };
		snprintf(names[i][3], sizeof(names[i][3]), "%s.order_bound_ns", dl_op_name(op->kind));
		m[n++] = (struct dl_metric){ names[i][3], (double)op->order_bound_ns };
	}
	return dl_log_run_end(log, r->status, r->makespan_ns, m, n);
}

/* One simulation, logged; returns the engine's result code. */
static int simulate(const struct run_opts *o, const struct dl_scenario *sc, struct dl_log *log,
		    enum dl_order order, uint64_t seed, struct dl_run_result *r, int64_t *run_id)
{
	static struct batch b;
	struct dl_engine_opts eo = { .order = order, .workers = o->workers, .seed = seed,
				     .stop = &stop_flag };
	int rc;

	*run_id = 0;
	if (log) {
		struct dl_run_info info = {
			.scenario = sc->name, .order = dl_order_name(order), .mode = o->mode,
			.version = DLSIM_VERSION, .seed = seed, .devices = sc->ndev,
			.links = sc->nlink,
			.workers = o->workers ? o->workers : dl_order_policy(order)->default_workers,
		};

		if (dl_log_run_begin(log, &info, run_id))
			return -EIO;
		for (uint32_t i = 0; i < sc->ndev; i++)
			dl_log_device(log, i, dl_sc_name(sc, i), sc->dev[i].parent, sc->dev[i].async);
		b.log = log;
		b.n = 0;
		eo.sink = (struct dl_sink){ .emit = batch_emit, .ctx = &b };
	}
	{
		static struct progress pr;

		pr = (struct progress){ .sc = sc };
		clock_gettime(CLOCK_MONOTONIC, &pr.t0);
		if (isatty(STDERR_FILENO)) {
			eo.progress = show_progress;
			eo.progress_ctx = &pr;
		}
		if (!strcmp(o->mode, "threads"))
			rc = dl_threads_run(sc, &eo, o->time_scale, r);
		else
			rc = dl_engine_run(sc, &eo, r);
		if (pr.shown)
			fprintf(stderr, "\r%60s\r", "");
	}
	if (log) {
		if (b.n)
			dl_log_events(log, b.ev, b.n);
		b.n = 0;
		if (log_metrics(log, r))
			return -EIO;
	}
	return rc;
}

static int setup(const struct run_opts *o, const char *me, struct dl_scenario **sc,
		 struct dl_log **log)
{
	struct dl_error err;
	char msg[512];

	if (dl_scenario_load(o->scenario, o->set, o->nset, o->have_seed ? &o->seed : NULL, sc, &err)) {
		fprintf(stderr, "dlsim %s: %s\n", me, err.msg);
		return DL_EXIT_USAGE;
	}
	*log = NULL;
	if (!o->no_log && dl_log_open(o->db, log, msg, sizeof(msg))) {
		fprintf(stderr, "dlsim %s: %s\n", me, msg);
		dl_scenario_free(*sc);
		return DL_EXIT_USAGE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
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
	struct run_opts o;
	struct dl_scenario *sc;
	struct dl_log *log;
	static struct dl_run_result r;
	int64_t run_id;
	int rc = parse_args(argc, argv, &o, false);

	if (rc)
		return rc > 0 ? DL_EXIT_OK : DL_EXIT_USAGE;
	rc = setup(&o, "run", &sc, &log);
	if (rc)
		return rc;
	rc = simulate(&o, sc, log, o.order, sc->seed, &r, &run_id);
	if (rc == -EIO || (rc < 0 && rc != -EINTR))
		fprintf(stderr, "dlsim run: simulation failed: %s\n", strerror(-rc));
	if (o.json) {
		json_result(stdout, sc, dl_order_name(o.order), o.mode, sc->seed, run_id, &r);
		printf("\n");
	} else {
		table_result(stdout, sc, dl_order_name(o.order), run_id, &r);
	}
	if (r.fail_dev != DL_NONE)
		fprintf(stderr, "dlsim run: %s failed on device '%s' (error %d)\n",
			r.nops ? "an op" : "the run", dl_sc_name(sc, r.fail_dev), r.err);
	if (log)
		dl_log_close(log);
	dl_scenario_free(sc);
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

int cmd_compare(int argc, char **argv)
{
	struct run_opts o;
	struct dl_scenario *sc;
	struct dl_log *log;
	static struct dl_run_result r;
	enum dl_order orders[MAX_ORDERS];
	uint32_t norders = 0;
	char list[256];
	int rc = parse_args(argc, argv, &o, true), worst = 0;
	/* [order][op][0 makespan, 1 lower bound] */
	static struct agg stats[MAX_ORDERS][DL_MAX_OPS][3];
	uint32_t nops = 0;
	uint8_t opkind[DL_MAX_OPS] = { 0 };
	bool first = true;

	if (rc)
		return rc > 0 ? DL_EXIT_OK : DL_EXIT_USAGE;
	snprintf(list, sizeof(list), "%s", o.order_list);
	for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (norders == MAX_ORDERS || dl_order_parse(t, &orders[norders])) {
			fprintf(stderr, "dlsim compare: unknown order '%s'; see 'dlsim orders'\n", t);
			return DL_EXIT_USAGE;
		}
		norders++;
	}
	if (!norders) {
		fprintf(stderr, "dlsim compare: --orders is empty\n");
		return DL_EXIT_USAGE;
	}
	rc = setup(&o, "compare", &sc, &log);
	if (rc)
		return rc;
	memset(stats, 0, sizeof(stats));
	if (o.json)
		printf("[");
	for (uint32_t s = 0; s < o.seeds && !stop_flag; s++) {
		for (uint32_t k = 0; k < norders && !stop_flag; k++) {
			int64_t run_id;
			uint64_t seed = sc->seed + s;

			rc = simulate(&o, sc, log, orders[k], seed, &r, &run_id);
			if (rc < 0) {
				worst = rc;
				break;
			}
			if (rc > worst)
				worst = rc;
			if (o.json) {
				printf("%s\n", first ? "" : ",");
				json_result(stdout, sc, dl_order_name(orders[k]), o.mode, seed, run_id, &r);
				first = false;
			}
			nops = r.nops;
			for (uint32_t i = 0; i < r.nops; i++) {
				opkind[i] = r.op[i].kind;
				agg_add(&stats[k][i][0], (double)r.op[i].makespan_ns);
				agg_add(&stats[k][i][1], (double)r.op[i].lower_bound_ns);
				agg_add(&stats[k][i][2], (double)r.op[i].order_bound_ns);
			}
		}
	}
	if (o.json) {
		printf("\n]\n");
	} else {
		printf("compare: %s, %u devices, %u links, %u seed(s) from %llu, times in ms (mean ± sd)\n",
		       sc->name, sc->ndev, sc->nlink, o.seeds, (unsigned long long)sc->seed);
		for (uint32_t i = 0; i < nops; i++) {
			printf("\n%-8s %-16s %22s %12s %7s %12s %7s\n", dl_op_name(opkind[i]), "order",
			       "makespan", "lower bd", "ratio", "order bd", "ratio");
			for (uint32_t k = 0; k < norders; k++) {
				double mk = agg_mean(&stats[k][i][0]), lb = agg_mean(&stats[k][i][1]);
				double ob = agg_mean(&stats[k][i][2]);

				printf("%-8s %-16s %12.3f ± %7.3f %12.3f %7.3f %12.3f %7.3f\n", "",
				       dl_order_name(orders[k]), mk / 1e6, agg_sd(&stats[k][i][0]) / 1e6,
				       lb / 1e6, lb > 0 ? mk / lb : 1.0, ob / 1e6, ob > 0 ? mk / ob : 1.0);
			}
		}
	}
	if (log)
		dl_log_close(log);
	dl_scenario_free(sc);
	return exit_for(worst);
}
