/*
 * test_threads.c - the real-thread engine (threads.c) and the six orders, checked
 * against the ordering rules of LINK-CORE.md, under real concurrency.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sim/core/dl_core.h"
#include "sim/engine/engine.h"
#include "sim/engine/threads.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"
#include "sim/scenario/scenario.h"

#include "tests/tsc.h"

/* ---- recording sink (mutex-protected: the test does not rely on the engine's merge) ---- */

struct rec {
	pthread_mutex_t mx;
	struct dl_event *ev;
	size_t n, cap;
};

static void rec_emit(void *ctx, struct dl_event *e)
{
	struct rec *r = ctx;

	pthread_mutex_lock(&r->mx);
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4096;
		r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
	}
	r->ev[r->n++] = *e;
	pthread_mutex_unlock(&r->mx);
}

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mx, NULL);
}

static void rec_fini(struct rec *r)
{
	free(r->ev);
	pthread_mutex_destroy(&r->mx);
}

static int run_at(struct tsc *t, enum dl_order o, uint32_t workers, struct rec *rec,
		  struct dl_run_result *r, double scale)
{
	struct dl_engine_opts eo = { .order = o, .workers = workers, .seed = t->sc.seed };

	if (rec)
		eo.sink = (struct dl_sink){ .emit = rec_emit, .ctx = rec };
	return dl_threads_run(&t->sc, &eo, scale, r);
}

static int run(struct tsc *t, enum dl_order o, uint32_t workers, struct rec *rec,
	       struct dl_run_result *r)
{
	return run_at(t, o, workers, rec, r, 0.001);
}

/*
 * Violations of the system-sleep ordering rules for the listed links and
 * parents: in every suspend phase the consumer's (child's) suspend_end
 * precedes the supplier's (parent's) suspend_start, by time and by event
 * order; resume phases the other way round.  Every occurrence counts (a
 * phase may run twice: the rollback after a fault).
 */
struct occ {
	int64_t t;
	size_t idx;
};

static unsigned count_violations(const struct tsc *t, const struct rec *rec)
{
	uint32_t n = t->sc.ndev;
	struct occ (*st)[DL_PH_COUNT] = calloc(n, sizeof(*st));
	struct occ (*en)[DL_PH_COUNT] = calloc(n, sizeof(*en));
	int64_t prev_t = INT64_MIN;
	unsigned bad = 0;

	for (uint32_t i = 0; i < n; i++)
		for (int p = 0; p < DL_PH_COUNT; p++)
			st[i][p].idx = en[i][p].idx = SIZE_MAX;
	for (size_t i = 0; i < rec->n; i++) {
		const struct dl_event *e = &rec->ev[i];

		if (e->t_ns < prev_t)
			bad++;   /* the merged stream is ordered by time */
		prev_t = e->t_ns;
		if (e->kind == DL_EV_SUSPEND_START || e->kind == DL_EV_RESUME_START) {
			if (st[e->dev][e->phase].idx == SIZE_MAX)
				st[e->dev][e->phase] = (struct occ){ e->t_ns, i };
		} else if (e->kind == DL_EV_SUSPEND_END || e->kind == DL_EV_RESUME_END) {
			if (en[e->dev][e->phase].idx == SIZE_MAX)
				en[e->dev][e->phase] = (struct occ){ e->t_ns, i };
		}
	}
	for (uint32_t i = 0; i < t->sc.nlink + n; i++) {
		uint32_t c, s;

		if (i < t->sc.nlink) {
			c = t->sc.link[i].consumer;
			s = t->sc.link[i].supplier;
		} else {
			c = i - t->sc.nlink;
			s = t->sc.dev[c].parent;
			if (s == DL_SC_NONE)
				continue;
		}
		for (int p = 0; p < DL_PH_COUNT; p++) {
			bool susp = p <= DL_PH_SUSPEND_NOIRQ;
			uint32_t first = susp ? c : s, second = susp ? s : c;
			const struct occ *a = &en[first][p], *b = &st[second][p];

			/*
			 * Both must have taken part: after an aborted suspend a
			 * device left running is not resumed, and its
			 * dependents do not wait for it.
			 */
			if (a->idx == SIZE_MAX || b->idx == SIZE_MAX)
				continue;
			if (a->idx > b->idx || a->t > b->t)
				bad++;
		}
	}
	free(st);
	free(en);
	return bad;
}

static unsigned count_kind(const struct rec *rec, unsigned kind, unsigned phase)
{
	unsigned k = 0;

	for (size_t i = 0; i < rec->n; i++)
		if (rec->ev[i].kind == kind && rec->ev[i].phase == phase && !rec->ev[i].err)
			k++;
	return k;
}

static void check_orders_on(int shape, uint32_t n)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(shape, n, 7 + (uint64_t)shape, false);
		struct rec rec;
		struct dl_run_result r;
		int rc;

		rec_init(&rec);
		rc = run(t, (enum dl_order)o, 4, &rec, &r);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_STRING_EQUAL(r.status, "ok");
		CU_ASSERT_EQUAL(r.nops, 3);
		CU_ASSERT_EQUAL(r.events, rec.n);
		for (int p = 0; p < DL_PH_COUNT; p++) {
			CU_ASSERT_EQUAL(count_kind(&rec, DL_EV_SUSPEND_END, p) +
					count_kind(&rec, DL_EV_RESUME_END, p), n);
		}
		if (o != DL_ORDER_NAIVE)
			CU_ASSERT_EQUAL(count_violations(t, &rec), 0);
		for (uint32_t i = 0; i < r.nops; i++)
			CU_ASSERT(r.op[i].makespan_ns > 0);
		if (o == DL_ORDER_CP_FIRST || o == DL_ORDER_LEVELS)
			CU_ASSERT(r.peak_workers >= 1 && r.peak_workers <= 4);
		rec_fini(&rec);
		free(t);
	}
}

static void test_orders_respect_links_on_chain(void) { check_orders_on(0, 60); }
static void test_orders_respect_links_on_random_dag(void) { check_orders_on(1, 300); }
static void test_orders_respect_parents_on_tree(void) { check_orders_on(2, 300); }

/* The checker itself: naive ignores links, so it must be caught. */
static void test_naive_is_caught(void)
{
	struct tsc *t = make(1, 200, 3, false);
	struct rec rec;
	struct dl_run_result r;

	rec_init(&rec);
	run(t, DL_ORDER_NAIVE, 4, &rec, &r);
	CU_ASSERT(count_violations(t, &rec) > 0);
	rec_fini(&rec);
	free(t);
}

/* sync probes in registration order: consumers first, so they defer and are retried */
static void test_probe_deferral_orders_retry(void)
{
	struct tsc *t = make(0, 50, 3, false);
	struct dl_run_result r;

	CU_ASSERT_EQUAL(run(t, DL_ORDER_SYNC, 1, NULL, &r), 0);
	CU_ASSERT(r.op[0].probe_defers > 0);
	CU_ASSERT(r.op[0].probe_attempts >= 50 + r.op[0].probe_defers);
	free(t);
}

/*
 * Link-aware orders probe a device on a worker once its suppliers are
 * bound: never a deferral, every device bound once, several at a time, and
 * every probe after its suppliers' (LINK-CORE.md, "Parallel (async) probing").
 */
static void test_link_aware_probe_is_parallel_and_never_defers(void)
{
	const enum dl_order ord[] = { DL_ORDER_KERNEL_ASYNC_V2, DL_ORDER_CP_FIRST, DL_ORDER_LEVELS };

	for (size_t k = 0; k < sizeof(ord) / sizeof(ord[0]); k++) {
		struct tsc *t = make(1, 200, 11, false);
		struct rec rec;
		struct dl_run_result r;
		int64_t *bound_at = calloc(200, sizeof(*bound_at));
		unsigned early = 0, bound = 0, probing = 0, overlap = 0;

		rec_init(&rec);
		t->sc.nop = 1;
		/* time scale 1: probes of 0.1-0.9 ms, well above the threads' wake-up latency */
		CU_ASSERT_EQUAL(run_at(t, ord[k], 4, &rec, &r, 1.0), 0);
		CU_ASSERT_EQUAL(r.op[0].probe_defers, 0);
		CU_ASSERT_EQUAL(r.op[0].probe_attempts, 200);
		CU_ASSERT(r.op[0].peak_workers > 1);
		for (size_t i = 0; i < rec.n; i++) {
			const struct dl_event *e = &rec.ev[i];

			if (e->kind == DL_EV_PROBE_START && ++probing > 1)
				overlap++;   /* parallel: a probe starts while another runs */
			if (e->kind == DL_EV_PROBE_END)
				probing--;
			if (e->kind == DL_EV_PROBE_END && !e->err) {
				bound_at[e->dev] = (int64_t)i + 1;
				bound++;
			}
			if (e->kind != DL_EV_PROBE_START)
				continue;
			for (uint32_t j = 0; j < t->sc.nlink; j++)
				if (t->sc.link[j].consumer == e->dev && !bound_at[t->sc.link[j].supplier])
					early++;
		}
		CU_ASSERT_EQUAL(bound, 200);
		CU_ASSERT_EQUAL(early, 0);
		CU_ASSERT(overlap > 0);
		free(bound_at);
		rec_fini(&rec);
		free(t);
	}
}

/*
 * A probe that fails releases nobody (des.c): on a chain, the consumers above
 * the failing device stay unprobed and deferred, the others bind, nothing
 * hangs, whether they wait on a worker or on the main thread (sync devices).
 */
static void test_failed_probe_releases_nobody(void)
{
	const enum dl_order ord[] = { DL_ORDER_KERNEL_ASYNC_V2, DL_ORDER_CP_FIRST, DL_ORDER_LEVELS };

	for (size_t k = 0; k < sizeof(ord) / sizeof(ord[0]); k++) {
		struct tsc *t = make(0, 40, 2, false);
		struct rec rec;
		struct dl_run_result r;
		unsigned bound = 0, above = 0;

		t->fault[0] = (struct dl_sc_fault){ .dev = 20, .lat_key = DL_LAT_PROBE, .err = 5 };
		t->sc.nfault = 1;
		t->sc.nop = 1;
		rec_init(&rec);
		CU_ASSERT_EQUAL(run(t, ord[k], 4, &rec, &r), 0);
		CU_ASSERT_EQUAL(r.op[0].probe_attempts, 20);   /* 20..39: the rest never try */
		for (size_t i = 0; i < rec.n; i++)
			if (rec.ev[i].kind == DL_EV_PROBE_END && !rec.ev[i].err) {
				bound++;
				above += rec.ev[i].dev < 20;
			}
		CU_ASSERT_EQUAL(bound, 19);
		CU_ASSERT_EQUAL(above, 0);
		rec_fini(&rec);
		free(t);
	}
}

/* Lower bounds: the same samples give the same bound as des.c, and the makespan is above it. */
static void test_lower_bound_as_des(void)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(1, 150, 5, false);
		struct dl_engine_opts eo = { .order = (enum dl_order)o, .workers = 4, .seed = 5 };
		static struct dl_run_result rd, rt;

		CU_ASSERT_EQUAL(dl_engine_run(&t->sc, &eo, &rd), 0);
		CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 4, NULL, &rt), 0);
		CU_ASSERT_EQUAL(rt.nops, rd.nops);
		for (uint32_t i = 0; i < rt.nops && i < rd.nops; i++) {
			CU_ASSERT_EQUAL(rt.op[i].lower_bound_ns, rd.op[i].lower_bound_ns);
			CU_ASSERT_EQUAL(rt.op[i].critical_path_ns, rd.op[i].critical_path_ns);
			CU_ASSERT_EQUAL(rt.op[i].work_ns, rd.op[i].work_ns);
			CU_ASSERT(rt.op[i].lower_bound_ns > 0);
			/* real time never beats the bound (1 us: rounding of the time scale) */
			CU_ASSERT(rt.op[i].makespan_ns + 1000 >= rt.op[i].lower_bound_ns);
		}
		CU_ASSERT_EQUAL(rt.lower_bound_ns, rd.lower_bound_ns);
		free(t);
	}
}

/* ---- Ctrl-C inside a phase ---- */

static volatile sig_atomic_t stop_flag;

static void on_usr1(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct stopper {
	pthread_t target;
	struct rec *rec;
	size_t ndev;
};

/* Once the prepare phase is logged (the suspend phase runs), wait a little, then Ctrl-C. */
static void *stopper_main(void *arg)
{
	struct stopper *s = arg;
	size_t prepared = 0;

	for (int tries = 0; prepared < s->ndev && tries < 5000; tries++) {
		usleep(2000);
		pthread_mutex_lock(&s->rec->mx);
		prepared = 0;
		for (size_t i = 0; i < s->rec->n; i++)
			prepared += s->rec->ev[i].kind == DL_EV_SUSPEND_END &&
				    s->rec->ev[i].phase == DL_PH_PREPARE;
		pthread_mutex_unlock(&s->rec->mx);
	}
	usleep(50000);
	pthread_kill(s->target, SIGUSR1);   /* the handler runs on the engine's main thread */
	return NULL;
}

/*
 * The stop flag is honoured inside a phase: workers take no new work, work
 * in flight finishes (every callback started also ends), and the run is
 * 'interrupted' long before the phase would have ended.
 */
static void test_stop_inside_a_phase(void)
{
	const enum dl_order ord[] = { DL_ORDER_KERNEL_ASYNC_V2, DL_ORDER_KERNEL_ASYNC, DL_ORDER_SYNC };

	for (size_t k = 0; k < sizeof(ord) / sizeof(ord[0]); k++) {
		struct tsc *t = make(1, 64, 9, false);
		struct dl_engine_opts eo = { .order = ord[k], .workers = 4, .seed = 9,
					     .stop = &stop_flag };
		struct sigaction sa = { .sa_handler = on_usr1 };
		struct stopper st = { .target = pthread_self(), .ndev = 64 };
		struct dl_run_result r;
		struct rec rec;
		pthread_t tid;
		unsigned starts = 0, ends = 0;
		int rc;

		/* suspend 20 ms per device, time scale 1: the phase alone takes >= 320 ms */
		for (unsigned key = DL_LAT_PREPARE; key <= DL_LAT_COMPLETE; key++)
			fixed(&t->prof[0].lat[key], 0);
		fixed(&t->prof[0].lat[DL_LAT_SUSPEND], 20000000);
		fixed(&t->prof[0].lat[DL_LAT_PROBE], 0);
		sigaction(SIGUSR1, &sa, NULL);
		stop_flag = 0;
		rec_init(&rec);
		st.rec = &rec;
		eo.sink = (struct dl_sink){ .emit = rec_emit, .ctx = &rec };
		pthread_create(&tid, NULL, stopper_main, &st);
		rc = dl_threads_run(&t->sc, &eo, 1.0, &r);
		pthread_join(tid, NULL);
		CU_ASSERT_EQUAL(rc, -EINTR);
		CU_ASSERT_STRING_EQUAL(r.status, "interrupted");
		/* the suspend phase alone would take 64 * 20 ms / 4 workers */
		CU_ASSERT(r.op[1].makespan_ns < 250000000);
		for (size_t i = 0; i < rec.n; i++) {
			starts += rec.ev[i].kind == DL_EV_SUSPEND_START && rec.ev[i].phase == DL_PH_SUSPEND;
			ends += rec.ev[i].kind == DL_EV_SUSPEND_END && rec.ev[i].phase == DL_PH_SUSPEND;
		}
		CU_ASSERT(starts > 0 && starts < 64);
		CU_ASSERT_EQUAL(starts, ends);
		rec_fini(&rec);
		free(t);
	}
	signal(SIGUSR1, SIG_DFL);
}

static void test_suspend_fault_rolls_back(void)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(1, 100, 17, false);
		struct rec rec;
		struct dl_run_result r;
		unsigned susp[DL_PH_COUNT] = { 0 }, res[DL_PH_COUNT] = { 0 };

		rec_init(&rec);
		t->fault[0] = (struct dl_sc_fault){ .dev = 50, .lat_key = DL_LAT_SUSPEND_LATE,
						    .err = 16 };
		t->sc.nfault = 1;
		t->sc.nop = 2;   /* probe, suspend: the rollback must resume by itself */
		CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 4, &rec, &r), 1);
		CU_ASSERT_STRING_EQUAL(r.status, "failed");
		CU_ASSERT_EQUAL(r.fail_dev, 50);
		CU_ASSERT_EQUAL(r.err, -16);
		for (int p = 0; p < DL_PH_COUNT; p++) {
			susp[p] = count_kind(&rec, DL_EV_SUSPEND_END, p);
			res[p] = count_kind(&rec, DL_EV_RESUME_END, p);
		}
		CU_ASSERT_EQUAL(susp[DL_PH_SUSPEND_NOIRQ], 0);
		for (int p = DL_PH_PREPARE; p <= DL_PH_SUSPEND_NOIRQ; p++)
			CU_ASSERT_EQUAL(susp[p], res[DL_PH_COMPLETE - p]);
		CU_ASSERT_EQUAL(susp[DL_PH_PREPARE], 100);
		CU_ASSERT(susp[DL_PH_SUSPEND_LATE] < 100);
		/* the aborted phase is bounded over the callbacks that ran, as in des.c */
		for (uint32_t i = 0; i < r.nops; i++)
			CU_ASSERT(r.op[i].makespan_ns + 1000 >= r.op[i].lower_bound_ns);
		if (o != DL_ORDER_NAIVE)
			CU_ASSERT_EQUAL(count_violations(t, &rec), 0);
		rec_fini(&rec);
		free(t);
	}
}

/* 20 seeds, tiny latencies, every order: races show up as violations or hangs. */
static void test_stress_seeds(void)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		for (int o = 0; o < DL_ORDER_COUNT; o++) {
			struct tsc *t = make((int)(seed % 3), 120, seed, false);
			struct rec rec;
			struct dl_run_result r;

			for (unsigned k = DL_LAT_PREPARE; k <= DL_LAT_COMPLETE; k++)
				t->prof[0].lat[k] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 0, 2000, 0, NULL };
			t->prof[0].lat[DL_LAT_PROBE] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 0, 2000, 0, NULL };
			if (seed % 4 == 0) {
				t->fault[0] = (struct dl_sc_fault){ .dev = (uint32_t)(seed * 7 % 120),
								    .lat_key = (uint8_t)(DL_LAT_PREPARE + seed % 4),
								    .err = 5 };
				t->sc.nfault = 1;
			}
			rec_init(&rec);
			CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 4, &rec, &r), t->sc.nfault ? 1 : 0);
			if (o != DL_ORDER_NAIVE)
				CU_ASSERT_EQUAL(count_violations(t, &rec), 0);
			rec_fini(&rec);
			free(t);
		}
	}
}

/* ---- racing script ops, every log re-checked by dl_check ---- */

static char tmpdir[] = "/tmp/dlsim-test-threads-XXXXXX";

static void log_emit(void *ctx, struct dl_event *e)
{
	dl_log_events(ctx, e, 1);
}

/*
 * Runs @t under @o (threads mode at time scale 1, or DES), logs it to a
 * database the way `dlsim run` does, and returns what `dlsim check` finds
 * on that log (-1: the check could not run).
 */
static int64_t run_checked(struct tsc *t, enum dl_order o, bool threads, struct dl_run_result *r,
			   int *rc)
{
	struct dl_run_info ri = { .scenario = "race", .order = dl_order_name(o),
				  .mode = threads ? "threads" : "des", .version = "test",
				  .seed = t->sc.seed, .workers = 4, .devices = t->sc.ndev,
				  .links = t->sc.nlink };
	struct dl_engine_opts eo = { .order = o, .workers = 4, .seed = t->sc.seed };
	struct dl_check_result res;
	char path[600], err[512];
	struct dl_log *l;
	sqlite3 *db;
	int64_t run_id = 0;
	int c;

	snprintf(path, sizeof(path), "%s/race.db", tmpdir);
	if (dl_log_open(path, &l, err, sizeof(err)) || dl_log_run_begin(l, &ri, &run_id))
		return -1;
	for (uint32_t i = 0; i < t->sc.ndev; i++)
		dl_log_device(l, i, dl_sc_name(&t->sc, i), t->sc.dev[i].parent, t->sc.dev[i].async);
	eo.sink = (struct dl_sink){ .emit = log_emit, .ctx = l };
	*rc = threads ? dl_threads_run(&t->sc, &eo, 1.0, r) : dl_engine_run(&t->sc, &eo, r);
	dl_log_run_end(l, r->status, r->makespan_ns, NULL, 0);
	dl_log_close(l);
	if (dl_log_open_existing(path, &db, err, sizeof(err)))
		return -1;
	c = dl_check_run_ex(db, run_id, o != DL_ORDER_NAIVE, stdout, &res);
	sqlite3_close(db);
	return c == DL_CHECK_DONE ? (int64_t)res.total : -1;
}

static struct dl_sc_op race_op(unsigned kind, uint32_t dev, uint32_t dev2, uint32_t flags,
			       bool concurrent, int64_t delay_ns)
{
	return (struct dl_sc_op){ .kind = (uint8_t)kind, .dev = dev, .dev2 = dev2,
				  .flags = flags, .concurrent = concurrent, .delay_ns = delay_ns };
}

/*
 * A random DAG with tiny latencies; while probes are in flight an unbind,
 * a STATELESS link_add and its link_del race the probe; during resume
 * devices 1 and 0 are hot-plugged and the unbound device is bound again.
 * Devices 0 and 1 are only ever consumers, as a hot-plugged device usually
 * is.  (A hot-plug racing the boot-time registration itself is left out: a
 * device registered and probing before its fw_devlink suppliers exist gets
 * its links while probing, which the kernel WARNs about.)
 */
static void make_race(struct tsc *t, struct dl_sc_op *ops)
{
	uint32_t n = t->sc.ndev, u = 2 + rnd(n - 2), a = 2 + rnd(n - 12), b = a + 1 + rnd(10);

	t->prof[0].lat[DL_LAT_PROBE] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 0, 20000, 0, NULL };
	t->prof[0].lat[DL_LAT_REMOVE] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 0, 10000, 0, NULL };
	for (unsigned k = DL_LAT_PREPARE; k <= DL_LAT_COMPLETE; k++)
		t->prof[0].lat[k] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 0, 10000, 0, NULL };
	t->dev[0].hotplug = 1;
	t->dev[1].hotplug = 1;
	ops[0] = race_op(DL_OP_PROBE, DL_SC_NONE, DL_SC_NONE, 0, false, 0);
	ops[1] = race_op(DL_OP_UNBIND, u, DL_SC_NONE, 0, true, rnd(800) * 1000);
	ops[2] = race_op(DL_OP_LINK_ADD, a, b, DL_FLAG_STATELESS, true, rnd(800) * 1000);
	ops[3] = race_op(DL_OP_LINK_DEL, a, b, 0, true, rnd(800) * 1000);
	ops[4] = race_op(DL_OP_SUSPEND, DL_SC_NONE, DL_SC_NONE, 0, false, 0);
	ops[5] = race_op(DL_OP_RESUME, DL_SC_NONE, DL_SC_NONE, 0, false, 0);
	ops[6] = race_op(DL_OP_ADD, 1, DL_SC_NONE, 0, true, rnd(300) * 1000);
	ops[7] = race_op(DL_OP_ADD, 0, DL_SC_NONE, 0, true, rnd(300) * 1000);
	ops[8] = race_op(DL_OP_BIND, u, DL_SC_NONE, 0, true, rnd(300) * 1000);
	t->sc.op = ops;
	t->sc.nop = 9;
}

/*
 * Many seeds, every order but naive: the core stays consistent under racing
 * ops and `dlsim check` finds nothing in the threads log; DES accepts the
 * same script and serializes the concurrent ops.
 */
static void test_racing_ops_stress(void)
{
	const enum dl_order ord[] = { DL_ORDER_KERNEL_ASYNC_V2, DL_ORDER_CP_FIRST,
				      DL_ORDER_KERNEL_ASYNC, DL_ORDER_SYNC, DL_ORDER_LEVELS };
	unsigned raced = 0, runs = 0;

	for (uint64_t seed = 1; seed <= 20; seed++) {
		enum dl_order o = ord[seed % 5];
		struct tsc *t = make(1, 100, seed, false);
		struct dl_sc_op ops[9];
		static struct dl_run_result r;
		int rc = -1;

		make_race(t, ops);
		CU_ASSERT_EQUAL(run_checked(t, o, true, &r, &rc), 0);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_STRING_EQUAL(r.status, "ok");
		CU_ASSERT_EQUAL(r.nops, 9);
		/* an op issued before the op it races had ended: a race really happened */
		raced += r.op[1].start_ns < r.op[0].start_ns + r.op[0].makespan_ns;
		raced += r.op[6].start_ns < r.op[5].start_ns + r.op[5].makespan_ns;
		runs++;
		if (seed % 5 == 0) {
			CU_ASSERT_EQUAL(run_checked(t, o, false, &r, &rc), 0);
			CU_ASSERT_EQUAL(rc, 0);
			for (uint32_t i = 1; i < r.nops; i++)   /* DES: one op after the other */
				CU_ASSERT(r.op[i].start_ns >= r.op[i - 1].start_ns + r.op[i - 1].makespan_ns);
		}
		free(t);
	}
	CU_ASSERT(raced > runs / 2);
	{
		/* the harness itself: naive ignores links, the checker must say so */
		struct tsc *t = make(1, 100, 3, false);
		struct dl_sc_op ops[9];
		static struct dl_run_result r;
		int rc;

		make_race(t, ops);
		CU_ASSERT(run_checked(t, DL_ORDER_NAIVE, true, &r, &rc) > 0);
		free(t);
	}
}

int main(void)
{
	CU_pSuite s;

	if (!mkdtemp(tmpdir))
		return 2;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("threads", NULL, NULL);
	CU_add_test(s, "test_orders_respect_links_on_chain", test_orders_respect_links_on_chain);
	CU_add_test(s, "test_orders_respect_links_on_random_dag", test_orders_respect_links_on_random_dag);
	CU_add_test(s, "test_orders_respect_parents_on_tree", test_orders_respect_parents_on_tree);
	CU_add_test(s, "test_naive_is_caught", test_naive_is_caught);
	CU_add_test(s, "test_probe_deferral_orders_retry", test_probe_deferral_orders_retry);
	CU_add_test(s, "test_link_aware_probe_is_parallel_and_never_defers",
		    test_link_aware_probe_is_parallel_and_never_defers);
	CU_add_test(s, "test_failed_probe_releases_nobody", test_failed_probe_releases_nobody);
	CU_add_test(s, "test_lower_bound_as_des", test_lower_bound_as_des);
	CU_add_test(s, "test_stop_inside_a_phase", test_stop_inside_a_phase);
	CU_add_test(s, "test_suspend_fault_rolls_back", test_suspend_fault_rolls_back);
	CU_add_test(s, "test_stress_seeds", test_stress_seeds);
	CU_add_test(s, "test_racing_ops_stress", test_racing_ops_stress);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	{
		unsigned f = CU_get_number_of_failures();

		char cmd[700];

		CU_cleanup_registry();
		/* DLSIM_TEST_KEEP=1 keeps the racing runs' database for a look with sqlite3 */
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (!getenv("DLSIM_TEST_KEEP") && system(cmd) != 0)
			f++;
		return f ? 1 : 0;
	}
}
