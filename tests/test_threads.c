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
#include "sim/engine/cost.h"
#include "sim/engine/engine.h"
#include "sim/engine/threads.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"
#include "sim/scenario/scenario.h"

#include "tests/tsc.h"
#include "tests/tcheck.h"

static void rec_emit(void *ctx, struct dl_event *e)
{
	rec_push(ctx, e);
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

/* A threads run at time scale 0.001, logged and re-verified by dl_check (tcheck.h). */
static int run_checked(struct tsc *t, enum dl_order o, uint32_t workers, struct rec *rec,
		       struct dl_run_result *r, int64_t *violations)
{
	struct tc_run x = { .order = o, .workers = workers, .backend = TC_THREADS, .rec = rec,
			    .quiet = o == DL_ORDER_NAIVE };
	int rc = tc_run(t, &x, r);

	*violations = x.violations;
	return rc;
}

/* Events out of time order in the merged stream (the engine merges per-thread buffers). */
static unsigned unordered_events(const struct rec *rec)
{
	unsigned bad = 0;

	for (size_t i = 1; i < rec->n; i++)
		bad += rec->ev[i].t_ns < rec->ev[i - 1].t_ns;
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
		int64_t bad;
		int rc;

		rec_init(&rec);
		rc = run_checked(t, (enum dl_order)o, 4, &rec, &r, &bad);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(unordered_events(&rec), 0);
		CU_ASSERT_STRING_EQUAL(r.status, "ok");
		CU_ASSERT_EQUAL(r.nops, 3);
		CU_ASSERT_EQUAL(r.events, rec.n);
		for (int p = 0; p < DL_PH_COUNT; p++) {
			CU_ASSERT_EQUAL(count_kind(&rec, DL_EV_SUSPEND_END, p) +
					count_kind(&rec, DL_EV_RESUME_END, p), n);
		}
		if (o != DL_ORDER_NAIVE)   /* (naive is caught on the DAG: test_naive_is_caught) */
			CU_ASSERT_EQUAL(bad, 0);
		for (uint32_t i = 0; i < r.nops; i++)
			CU_ASSERT(r.op[i].makespan_ns > 0);
		/* sleeping callbacks keep their worker, not their CPU: the pool is max_active */
		if (o == DL_ORDER_CP_FIRST || o == DL_ORDER_LEVELS)
			CU_ASSERT(r.peak_workers >= 1 && r.peak_workers <= DL_COST_MAX_ACTIVE);
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
	struct dl_run_result r;
	int64_t bad;

	CU_ASSERT_EQUAL(run_checked(t, DL_ORDER_NAIVE, 4, NULL, &r, &bad), 0);
	CU_ASSERT(bad > 0);
	free(t);
}

/*
 * sync and kernel-async-v2 probe in registration order: consumers first, so
 * they defer and are retried
 */
static void test_probe_deferral_orders_retry(void)
{
	const enum dl_order ord[] = { DL_ORDER_SYNC, DL_ORDER_KERNEL_ASYNC_V2 };

	for (size_t k = 0; k < sizeof(ord) / sizeof(ord[0]); k++) {
		struct tsc *t = make(0, 50, 3, false);
		struct dl_run_result r;

		CU_ASSERT_EQUAL(run(t, ord[k], 1, NULL, &r), 0);
		CU_ASSERT(r.op[0].probe_defers > 0);
		CU_ASSERT(r.op[0].probe_attempts >= 50 + r.op[0].probe_defers);
		free(t);
	}
}

/*
 * Link-aware orders probe a device on a worker once its suppliers are
 * bound: never a deferral, every device bound once, several at a time, and
 * every probe after its suppliers' (LINK-CORE.md, "Parallel (async) probing").
 */
static void test_link_aware_probe_is_parallel_and_never_defers(void)
{
	const enum dl_order ord[] = { DL_ORDER_CP_FIRST, DL_ORDER_LEVELS };

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
	const enum dl_order ord[] = { DL_ORDER_CP_FIRST, DL_ORDER_LEVELS };

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

static atomic_int stop_flag;

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
 * in flight finishes (every callback started also ends), the run is
 * 'interrupted' and some callbacks of the phase never start.  (How soon is
 * a matter of timing: benchmarks, not tests.)
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
		int64_t bad;

		rec_init(&rec);
		t->fault[0] = (struct dl_sc_fault){ .dev = 50, .lat_key = DL_LAT_SUSPEND_LATE,
						    .err = 16 };
		t->sc.nfault = 1;
		t->sc.nop = 2;   /* probe, suspend: the rollback must resume by itself */
		CU_ASSERT_EQUAL(run_checked(t, (enum dl_order)o, 4, &rec, &r, &bad), 1);
		CU_ASSERT(o == DL_ORDER_NAIVE ? bad > 0 : bad == 0);
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
		rec_fini(&rec);
		free(t);
	}
}

/*
 * The async pool and async probe start on real threads (cost.h, as
 * test_engine.c's test_kworker_pool_and_async_probe_start): 64 independent
 * async devices probing 10 ms each, every other cost zero, one CPU, at 10
 * real ns a simulated one so that the costs outweigh the machine's noise.
 * Under the guest profile the 64 items alive at once make the pool create
 * 64 - pool_init workers at least, worker_new_ns each on the one CPU (a
 * scenario key: the guest profile charges none, cost.c), and each
 * queueing costs async_probe_ns: the probe op is longer than under
 * hardware by at least half that (real threads on a shared machine add
 * their own delays, to either run; without the costs the two are equal).
 */
static void test_kworker_pool_on_real_threads(void)
{
	struct tsc *t = make_independent(64, 10000000);
	struct dl_costs hw, gu;
	struct dl_run_result a, b;
	struct dl_engine_opts eo = { .order = DL_ORDER_KERNEL_ASYNC, .workers = 1, .seed = 31 };
	int64_t want, got = 0, hw_min = 0, gu_min = 0;

	for (uint32_t i = 0; i < 64; i++)
		t->dev[i].async = 1;
	fixed(&t->prof[0].lat[DL_LAT_PROBE], 10000000);
	t->sc.nop = 1;   /* the probe op alone */
	t->sc.cost = (struct dl_cost){ .queue_ns = -1, .resume_wake_ns = 0, .worker_new_ns = 150000,
				       .has = DL_COST_HAS_WORKER_NEW };
	dl_costs_resolve_profile(&t->sc, DL_PROFILE_HARDWARE, &hw);
	dl_costs_resolve_profile(&t->sc, DL_PROFILE_GUEST, &gu);
	want = 64 * (gu.async_probe_ns - hw.async_probe_ns) +
	       (64 - (int64_t)gu.pool_init) * gu.worker_new_ns;
	/*
	 * A loaded machine stalls either run, and a stall only adds time: the
	 * shortest of each profile's runs is the least disturbed, so compare
	 * those, over up to 5 interleaved pairs.
	 */
	for (int attempt = 0; attempt < 5; attempt++) {
		eo.cost_profile = DL_PROFILE_HARDWARE;
		CU_ASSERT_EQUAL_FATAL(dl_threads_run(&t->sc, &eo, 10.0, &a), 0);
		eo.cost_profile = DL_PROFILE_GUEST;
		CU_ASSERT_EQUAL_FATAL(dl_threads_run(&t->sc, &eo, 10.0, &b), 0);
		if (!attempt || a.op[0].makespan_ns < hw_min)
			hw_min = a.op[0].makespan_ns;
		if (!attempt || b.op[0].makespan_ns < gu_min)
			gu_min = b.op[0].makespan_ns;
		got = gu_min - hw_min;
		if (got >= want / 2)
			break;
	}
	CU_ASSERT(got >= want / 2);
	if (got < want / 2)
		printf("\n  guest - hardware probe: %lld ns, expected %lld\n", (long long)got,
		       (long long)want);
	free(t);
}

/*
 * The guest's own devices between phases (cost.h dl_cost_phase_gap()) on
 * real threads too: one sync device, guest profile against hardware, at 10
 * real ns a simulated one.  The guest's suspend spends 18 + 732 + 791 us
 * before suspend, suspend_late and suspend_noirq, its resume 573 + 647 +
 * 15 us before resume_early, resume and complete, on main's CPU.  Each
 * difference must show at least 90% of that (a loaded machine can stall
 * either run: up to 3 interleaved pairs, one must show both).
 */
static void test_guest_phase_gaps_on_real_threads(void)
{
	struct tsc *t = make_independent(1, 0);
	struct dl_run_result a, b;
	struct dl_engine_opts eo = { .order = DL_ORDER_SYNC, .workers = 1, .seed = 31 };
	const int64_t sus = 18000 + 732000 + 791000, res = 573000 + 647000 + 15000;
	int64_t ds = 0, dr = 0;

	t->dev[0].async = 0;
	for (int attempt = 0; attempt < 3; attempt++) {
		eo.cost_profile = DL_PROFILE_HARDWARE;
		CU_ASSERT_EQUAL_FATAL(dl_threads_run(&t->sc, &eo, 10.0, &a), 0);
		eo.cost_profile = DL_PROFILE_GUEST;
		CU_ASSERT_EQUAL_FATAL(dl_threads_run(&t->sc, &eo, 10.0, &b), 0);
		ds = b.op[1].makespan_ns - a.op[1].makespan_ns;
		dr = b.op[2].makespan_ns - a.op[2].makespan_ns;
		if (ds >= sus * 9 / 10 && dr >= res * 9 / 10)
			break;
	}
	CU_ASSERT(ds >= sus * 9 / 10);
	CU_ASSERT(dr >= res * 9 / 10);
	/* and in the op's bound, as the DES counts it (dl_op_add_serial()) */
	CU_ASSERT(b.op[1].lower_bound_ns - a.op[1].lower_bound_ns >= sus);
	if (ds < sus * 9 / 10 || dr < res * 9 / 10)
		printf("\n  guest - hardware: suspend %lld ns (want %lld), resume %lld ns (want %lld)\n",
		       (long long)ds, (long long)sus, (long long)dr, (long long)res);
	free(t);
}

/*
 * A worker back from its item takes the next one without a wake on real
 * threads too (cost.h dl_cost_start(), thr_pool.c's worker_main()): 64
 * async devices whose callbacks take no time, one CPU, wake_ns 200 us, at
 * 10 real ns a simulated one.  Each of suspend's three phases that run
 * items would take 64 wakes, 12.8 ms, if every start woke a kworker; the
 * workers come back for most items, so the op takes well under half of
 * the 38.4 ms (a loaded machine makes workers idle between items, which
 * then wake: up to 3 runs, one must show it).
 */
static void test_worker_back_takes_the_next_item_on_real_threads(void)
{
	const int64_t dw = 200000, all = 3 * 64 * dw;
	struct tsc *t = make_independent(64, 0);
	struct dl_run_result r;
	int64_t got = all;

	for (uint32_t i = 0; i < 64; i++)
		t->dev[i].async = 1;
	fixed(&t->prof[0].lat[DL_LAT_PROBE], 0);
	t->sc.nop = 2;   /* probe, suspend */
	t->sc.cost = (struct dl_cost){ .queue_ns = 0, .wake_ns = dw, .switch_ns = 0, .main_ns = 0,
				       .probe_check_ns = 0, .handoff_ns = 0, .reorder_ns = 0,
				       .reorder_visit_ns = 0, .rpm_ns = 0, .rpm_idle_ns = 0,
				       .register_ns = 0, .link_add_ns = 0, .sleep_end_ns = 0,
				       .resume_wake_ns = 0 };
	for (int attempt = 0; attempt < 3 && got >= all / 2; attempt++) {
		CU_ASSERT_EQUAL_FATAL(run_at(t, DL_ORDER_KERNEL_ASYNC, 1, NULL, &r, 10.0), 0);
		CU_ASSERT_EQUAL_FATAL(r.nops, 2);
		got = r.op[1].makespan_ns;
	}
	CU_ASSERT(got < all / 2);
	if (got >= all / 2)
		printf("\n  suspend: %lld ns, every start a wake: %lld\n", (long long)got,
		       (long long)all);
	free(t);
}

/*
 * A chain of eight registered consumer first, sync, probes of no time, the
 * probe op alone at time scale 1, with @retry_ns and @reorder_ns a walk
 * (no reorder_visit_ns): its figures in *@r and its retries, the attempts
 * after the registration walk's eight (-1 if the run failed).
 */
static int64_t run_retry_chain(int64_t retry_ns, int64_t reorder_ns, struct dl_run_result *r)
{
	struct tsc *t = make(0, 8, 5, true);
	int rc;

	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		fixed(&t->prof[0].lat[k], 0);
	t->sc.nop = 1;
	t->sc.cost.retry_ns = retry_ns;
	t->sc.cost.has |= DL_COST_HAS_RETRY;
	t->sc.cost.reorder_ns = reorder_ns;
	t->sc.cost.reorder_visit_ns = 0;
	rc = run_at(t, DL_ORDER_SYNC, 1, NULL, r, 1.0);
	free(t);
	CU_ASSERT_EQUAL(rc, 0);
	return rc ? -1 : (int64_t)r->op[0].probe_attempts - 8;
}

/*
 * Threads mode charges the deferred-probe retry path (cost.h retry_ns) on
 * the walk for every device it takes off the active list, as the DES does:
 * the probe op lasts at least that many retry_ns.
 */
static void test_retry_cost_on_real_threads(void)
{
	const int64_t rns = 2000000;
	struct dl_run_result r;
	int64_t retries = run_retry_chain(rns, 0, &r);

	CU_ASSERT(retries >= 7);
	CU_ASSERT(r.op[0].makespan_ns >= retries * rns);
	if (r.op[0].makespan_ns < retries * rns)
		printf("\n  probe %lld ns for %lld retries of %lld ns\n", (long long)r.op[0].makespan_ns,
		       (long long)retries, (long long)rns);
}

/*
 * And device_pm_move_to_tail()'s walk with it (cost.c dl_op_retry_walk(),
 * as the DES charges it): reorder_ns 2 ms a walk and no retry_ns; the
 * walks are counted, and the op lasts at least that many.
 */
static void test_reorder_walk_cost_on_real_threads(void)
{
	const int64_t rns = 2000000;
	struct dl_run_result r;
	int64_t retries = run_retry_chain(0, rns, &r);

	CU_ASSERT(retries >= 7);
	CU_ASSERT((int64_t)r.op[0].reorder_walks >= retries);
	CU_ASSERT_EQUAL(r.op[0].reorder_ns, (int64_t)r.op[0].reorder_walks * rns);
	CU_ASSERT(r.op[0].makespan_ns >= retries * rns);
	if (r.op[0].makespan_ns < retries * rns || (int64_t)r.op[0].reorder_walks < retries)
		printf("\n  probe %lld ns, %llu walks for %lld retries of %lld ns\n",
		       (long long)r.op[0].makespan_ns, (unsigned long long)r.op[0].reorder_walks,
		       (long long)retries, (long long)rns);
}

/* Never-bound devices run no PM callbacks (tcheck.h). */
static void test_never_bound_devices_run_no_pm_callbacks(void)
{
	tc_check_never_bound(TC_THREADS);
}

/* Issue 18, items 4 and 5: prepare and complete walk dpm_list on the main thread (see test_engine.c). */
static void test_prepare_and_complete_walk_the_list_on_main(void)
{
	tc_check_serial_walks(TC_THREADS, 120, 60);
}

/* Issue 18, item 6 (see test_engine.c), in real time: 100 ms callbacks at time scale 1. */
static void test_classic_resume_queues_async_up_front(void)
{
	struct tsc *t = make_independent(20, 100000000);
	struct tc_run x = { .order = DL_ORDER_KERNEL_ASYNC, .workers = 32, .backend = TC_THREADS,
			    .scale = 1.0 };
	struct dl_run_result r;
	struct rec rec;

	rec_init(&rec);
	x.rec = &rec;
	CU_ASSERT_EQUAL(tc_run(t, &x, &r), 0);
	CU_ASSERT_EQUAL(x.violations, 0);
	CU_ASSERT_EQUAL(rec_upfront_problems(&rec, 20), 0);
	rec_fini(&rec);
	free(t);
}

/* Issue 18, item 7 (see test_engine.c), in real time: 100 ms callbacks at time scale 1. */
static void test_v2_walk_queues_and_items_block(void)
{
	struct tsc *t = make_v2_block(100000000);
	struct tc_run x = { .order = DL_ORDER_KERNEL_ASYNC_V2, .workers = 4, .backend = TC_THREADS,
			    .scale = 1.0 };
	struct dl_run_result r;
	struct rec rec;

	rec_init(&rec);
	x.rec = &rec;
	CU_ASSERT_EQUAL(tc_run(t, &x, &r), 0);
	CU_ASSERT_EQUAL(x.violations, 0);
	CU_ASSERT_EQUAL(rec_v2_block_missing(&rec), 0);
	CU_ASSERT(r.op[1].wakeups > 0 && r.op[2].wakeups > 0);
	rec_fini(&rec);
	free(t);
}

/*
 * resume_wake_ns in real time (test_engine.c's test_resume_wake_cost): a
 * chain of four async devices with 5 ms callbacks in the three resume phases
 * that run items, classic and v2, time scale 1.  Each item pays the 50 ms
 * wake as it starts, and again when woken after its supplier ends: 12 of
 * them per op in DES.  Real threads on a loaded machine may miss any second
 * wake (a consumer whose start's wake ends late finds its supplier done), so
 * the bound asserted is what no schedule avoids: each phase pays one start
 * wake and the chain's four callbacks, 3 * (50 + 20) ms.  With wake_ns in
 * resume instead the op takes about 60 ms.  Suspend pays wake_ns (35 us) and
 * takes a few ms; at load 20 the former bounds (at least 9 of 12 wakes,
 * suspend under 100 ms) failed.  It must stay under 4 resume wakes, 200 ms.
 */
static void test_resume_wake_cost(void)
{
	static const enum dl_order orders[] = { DL_ORDER_KERNEL_ASYNC, DL_ORDER_KERNEL_ASYNC_V2 };
	const int64_t rw = 50000000, cb = 5000000;

	for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
		struct tsc *t = make(0, 4, 9, false);
		struct dl_run_result r;

		for (uint32_t i = 0; i < 4; i++)
			t->dev[i].async = 1;
		for (unsigned k = DL_LAT_RESUME_NOIRQ; k <= DL_LAT_RESUME; k++)
			fixed(&t->prof[0].lat[k], cb);
		t->sc.cost.resume_wake_ns = rw;
		CU_ASSERT_EQUAL_FATAL(run_at(t, orders[o], 8, NULL, &r, 1.0), 0);
		CU_ASSERT(r.op[2].makespan_ns >= 3 * (rw + 4 * cb));
		CU_ASSERT(r.op[1].makespan_ns < 4 * rw);
		free(t);
	}
}

/* 20 seeds, tiny latencies, every order: races show up as violations or hangs. */
static void test_stress_seeds(void)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		for (int o = 0; o < DL_ORDER_COUNT; o++) {
			struct tsc *t = make((int)(seed % 3), 120, seed, false);
			struct dl_run_result r;
			int64_t bad;

			for (unsigned k = DL_LAT_PREPARE; k <= DL_LAT_COMPLETE; k++)
				t->prof[0].lat[k] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 0, 2000, 0, NULL };
			t->prof[0].lat[DL_LAT_PROBE] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 0, 2000, 0, NULL };
			if (seed % 4 == 0) {
				t->fault[0] = (struct dl_sc_fault){ .dev = (uint32_t)(seed * 7 % 120),
								    .lat_key = (uint8_t)(DL_LAT_PREPARE + seed % 4),
								    .err = 5 };
				t->sc.nfault = 1;
			}
			CU_ASSERT_EQUAL(run_checked(t, (enum dl_order)o, 4, NULL, &r, &bad),
					t->sc.nfault ? 1 : 0);
			if (o != DL_ORDER_NAIVE)
				CU_ASSERT_EQUAL(bad, 0);
			free(t);
		}
	}
}

/* ---- the two backends side by side ---- */

static bool is_callback(unsigned kind)
{
	return kind == DL_EV_PROBE_START || kind == DL_EV_PROBE_END ||
	       kind == DL_EV_UNBIND_START || kind == DL_EV_UNBIND_END ||
	       kind == DL_EV_RPM_RESUME || kind == DL_EV_RPM_SUSPEND ||
	       (kind >= DL_EV_SUSPEND_START && kind <= DL_EV_RESUME_END);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The callbacks of @rec as sorted (kind, phase, err, device) keys: a multiset per phase. */
static size_t callback_multiset(const struct rec *rec, uint64_t **out)
{
	uint64_t *v = malloc((rec->n + 1) * sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < rec->n; i++) {
		const struct dl_event *e = &rec->ev[i];

		if (is_callback(e->kind))
			v[n++] = (uint64_t)e->kind << 56 | (uint64_t)e->phase << 48 |
				 (uint64_t)(uint16_t)e->err << 32 | e->dev;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	*out = v;
	return n;
}

/*
 * Both backends, on the same scenario (generated shapes; a probe that fails
 * once; an unbind and a bind; runtime-PM get and put; a suspend/resume
 * cycle), run the very same callbacks in every phase, and both logs pass
 * every check of dl_check.  (A failing suspend callback is left out: it
 * halts a threads phase wherever the other threads are, so which callbacks
 * ran before the halt is a matter of timing; test_suspend_fault_rolls_back.)
 */
static void test_backends_run_the_same_callbacks(void)
{
	for (int shape = 0; shape < 3; shape++) {
		for (int o = 0; o < DL_ORDER_COUNT; o++) {
			struct tsc *t = make(shape, 120, 40 + (uint64_t)shape, false);
			struct rec rd, rt;
			struct dl_run_result r;
			struct tc_run xd = { .order = (enum dl_order)o, .workers = 4, .backend = TC_DES,
					     .rec = &rd, .quiet = o == DL_ORDER_NAIVE };
			struct tc_run xt = xd;
			uint64_t *md, *mt;
			size_t nd, nt;
			unsigned rpm = 0;
			uint32_t u = 60, g = 100;

			xt.backend = TC_THREADS;
			xt.rec = &rt;
			t->fault[0] = (struct dl_sc_fault){ .dev = 90, .lat_key = DL_LAT_PROBE,
							    .err = 5, .times = 1 };
			t->sc.nfault = 1;
			t->op[1] = (struct dl_sc_op){ .kind = DL_OP_UNBIND, .dev = u, .dev2 = DL_SC_NONE };
			t->op[2] = (struct dl_sc_op){ .kind = DL_OP_BIND, .dev = u, .dev2 = DL_SC_NONE };
			t->op[3] = (struct dl_sc_op){ .kind = DL_OP_RPM_GET, .dev = g, .dev2 = DL_SC_NONE };
			t->op[4] = (struct dl_sc_op){ .kind = DL_OP_RPM_PUT, .dev = g, .dev2 = DL_SC_NONE };
			t->op[5] = (struct dl_sc_op){ .kind = DL_OP_SUSPEND, .dev = DL_SC_NONE,
						      .dev2 = DL_SC_NONE };
			t->op[6] = (struct dl_sc_op){ .kind = DL_OP_RESUME, .dev = DL_SC_NONE,
						      .dev2 = DL_SC_NONE };
			t->sc.nop = 7;
			rec_init(&rd);
			rec_init(&rt);
			CU_ASSERT_EQUAL(tc_run(t, &xd, &r), 0);
			CU_ASSERT_EQUAL(r.nops, 7);
			CU_ASSERT_EQUAL(tc_run(t, &xt, &r), 0);
			CU_ASSERT_EQUAL(r.nops, 7);
			if (o != DL_ORDER_NAIVE) {
				CU_ASSERT_EQUAL(xd.violations, 0);
				CU_ASSERT_EQUAL(xt.violations, 0);
			}
			nd = callback_multiset(&rd, &md);
			nt = callback_multiset(&rt, &mt);
			/*
			 * at least half the devices run their eight PM callbacks: unbinding
			 * u unbinds its consumers (60 of the chain's), bind probes u alone,
			 * and a device without a driver runs none (oploop.h dl_pm_part())
			 */
			CU_ASSERT(nd > 8 * 60);
			CU_ASSERT_EQUAL(nd, nt);
			CU_ASSERT(nd == nt && memcmp(md, mt, nd * sizeof(*md)) == 0);
			for (size_t i = 0; i < nd; i++)
				rpm += md[i] >> 56 == DL_EV_RPM_RESUME;
			CU_ASSERT(shape != 1 || rpm > 0);   /* the DAG has PM_RUNTIME links */
			free(md);
			free(mt);
			rec_fini(&rd);
			rec_fini(&rt);
			free(t);
		}
	}
}

/* ---- racing script ops, every log re-checked by dl_check ---- */

/*
 * Runs @t under @o (threads mode at time scale 1, or DES), logged and
 * re-verified by dl_check: returns what the checker found (-1: it could
 * not run), the engine's result in *@rc.
 */
static int64_t race_checked(struct tsc *t, enum dl_order o, bool threads, struct dl_run_result *r,
			    int *rc)
{
	struct tc_run x = { .order = o, .workers = 4, .scale = 1.0,
			    .backend = threads ? TC_THREADS : TC_DES, .quiet = o == DL_ORDER_NAIVE };

	*rc = tc_run(t, &x, r);
	return x.violations;
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
		CU_ASSERT_EQUAL(race_checked(t, o, true, &r, &rc), 0);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_STRING_EQUAL(r.status, "ok");
		CU_ASSERT_EQUAL(r.nops, 9);
		/* an op issued before the op it races had ended: a race really happened */
		raced += r.op[1].start_ns < r.op[0].start_ns + r.op[0].makespan_ns;
		raced += r.op[6].start_ns < r.op[5].start_ns + r.op[5].makespan_ns;
		runs++;
		if (seed % 5 == 0) {
			CU_ASSERT_EQUAL(race_checked(t, o, false, &r, &rc), 0);
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
		CU_ASSERT(race_checked(t, DL_ORDER_NAIVE, true, &r, &rc) > 0);
		free(t);
	}
}

int main(void)
{
	CU_pSuite s;

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
	CU_add_test(s, "test_v2_walk_queues_and_items_block", test_v2_walk_queues_and_items_block);
	CU_add_test(s, "test_classic_resume_queues_async_up_front",
		    test_classic_resume_queues_async_up_front);
	CU_add_test(s, "test_prepare_and_complete_walk_the_list_on_main",
		    test_prepare_and_complete_walk_the_list_on_main);
	CU_add_test(s, "test_resume_wake_cost", test_resume_wake_cost);
	CU_add_test(s, "test_stress_seeds", test_stress_seeds);
	CU_add_test(s, "test_racing_ops_stress", test_racing_ops_stress);
	CU_add_test(s, "test_backends_run_the_same_callbacks", test_backends_run_the_same_callbacks);
	CU_add_test(s, "test_kworker_pool_on_real_threads", test_kworker_pool_on_real_threads);
	CU_add_test(s, "test_worker_back_takes_the_next_item_on_real_threads",
		    test_worker_back_takes_the_next_item_on_real_threads);
	CU_add_test(s, "test_retry_cost_on_real_threads", test_retry_cost_on_real_threads);
	CU_add_test(s, "test_reorder_walk_cost_on_real_threads", test_reorder_walk_cost_on_real_threads);
	CU_add_test(s, "test_guest_phase_gaps_on_real_threads", test_guest_phase_gaps_on_real_threads);
	CU_add_test(s, "test_never_bound_devices_run_no_pm_callbacks",
		    test_never_bound_devices_run_no_pm_callbacks);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	{
		/* DLSIM_TEST_KEEP=1 keeps the runs' database for a look with sqlite3 */
		unsigned f = CU_get_number_of_failures() + (unsigned)tc_cleanup();

		CU_cleanup_registry();
		return f ? 1 : 0;
	}
}
