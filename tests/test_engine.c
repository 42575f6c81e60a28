/*
 * test_engine.c - the discrete-event engine and the six orders, checked
 * against the ordering rules of LINK-CORE.md on generated graphs.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/core/dl_core.h"
#include "sim/engine/cost.h"
#include "sim/engine/engine.h"
#include "sim/engine/graph.h"
#include "sim/engine/oploop.h"
#include "sim/engine/phase.h"
#include "sim/engine/sched.h"
#include "sim/scenario/scenario.h"

#include "tests/tsc.h"
#include "tests/tcheck.h"

static void rec_emit(void *ctx, struct dl_event *e)
{
	rec_push(ctx, e);
}

/* A DES run, its events recorded in @rec (may be NULL). */
static int run(struct tsc *t, enum dl_order o, uint32_t workers, struct rec *rec,
	       struct dl_run_result *r)
{
	struct dl_engine_opts eo = { .order = o, .workers = workers, .seed = t->sc.seed };

	if (rec)
		eo.sink = (struct dl_sink){ .emit = rec_emit, .ctx = rec };
	return dl_engine_run(&t->sc, &eo, r);
}

/*
 * A DES run, recorded in @rec (may be NULL), logged and re-verified by
 * dl_check; *@violations: what the checker found (-1: it could not run).
 */
static int run_checked(struct tsc *t, enum dl_order o, uint32_t workers, struct rec *rec,
		       struct dl_run_result *r, int64_t *violations, bool quiet)
{
	struct tc_run x = { .order = o, .workers = workers, .backend = TC_DES, .rec = rec,
			    .quiet = quiet };
	int rc = tc_run(t, &x, r);

	*violations = x.violations;
	return rc;
}

static void check_orders_on(int shape, uint32_t n)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(shape, n, 7 + (uint64_t)shape, false);
		struct dl_run_result r;
		int64_t bad;
		int rc;

		if (o == DL_ORDER_NAIVE) {
			free(t);
			continue;
		}
		rc = run_checked(t, (enum dl_order)o, 4, NULL, &r, &bad, false);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_STRING_EQUAL(r.status, "ok");
		CU_ASSERT_EQUAL(bad, 0);
		for (uint32_t i = 0; i < r.nops; i++) {
			CU_ASSERT(r.op[i].lower_bound_ns <= r.op[i].makespan_ns);
			CU_ASSERT(r.op[i].lower_bound_ns > 0);
		}
		free(t);
	}
}

static void test_orders_respect_links_on_chain(void) { check_orders_on(0, 60); }
static void test_orders_respect_links_on_random_dag(void) { check_orders_on(1, 300); }
static void test_orders_respect_parents_on_tree(void) { check_orders_on(2, 300); }

static void test_naive_breaks_consumer_first_registration(void)
{
	struct tsc *t = make(1, 200, 3, false);
	struct dl_run_result r;
	int64_t bad;

	CU_ASSERT_EQUAL(run_checked(t, DL_ORDER_NAIVE, 1, NULL, &r, &bad, true), 0);
	CU_ASSERT(bad > 0);
	free(t);
}

/*
 * sync and kernel-async-v2 (7.3 probes as 6.12 does) probe in registration
 * order: a consumer registered before its supplier defers and is retried
 */
static void test_sync_probe_defers_on_consumer_first(void)
{
	const enum dl_order ord[] = { DL_ORDER_SYNC, DL_ORDER_KERNEL_ASYNC_V2 };
	struct tsc *t;
	struct dl_run_result r;

	for (size_t k = 0; k < sizeof(ord) / sizeof(ord[0]); k++) {
		t = make(0, 50, 3, false);
		CU_ASSERT_EQUAL(run(t, ord[k], 1, NULL, &r), 0);
		CU_ASSERT(r.op[0].probe_defers > 0);
		CU_ASSERT(r.op[0].probe_attempts >= 50 + r.op[0].probe_defers);
		free(t);
	}
	/* a link-aware order never defers */
	t = make(0, 50, 3, false);
	CU_ASSERT_EQUAL(run(t, DL_ORDER_CP_FIRST, 4, NULL, &r), 0);
	CU_ASSERT_EQUAL(r.op[0].probe_defers, 0);
	free(t);
}

static void test_lower_bound_equals_makespan_on_chain(void)
{
	struct tsc *t = make(0, 40, 5, true);
	struct dl_run_result r;

	CU_ASSERT_EQUAL(run(t, DL_ORDER_CP_FIRST, 4, NULL, &r), 0);
	for (uint32_t i = 0; i < r.nops; i++)
		CU_ASSERT_EQUAL(r.op[i].makespan_ns, r.op[i].lower_bound_ns);
	free(t);
}

static void test_runs_are_reproducible(void)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(1, 200, 11, false);
		struct dl_run_result a, b;

		CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 3, NULL, &a), 0);
		CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 3, NULL, &b), 0);
		CU_ASSERT(a.events > 0 && a.makespan_ns > 0);
		CU_ASSERT_EQUAL(a.makespan_ns, b.makespan_ns);
		CU_ASSERT_EQUAL(a.events, b.events);
		free(t);
	}
}

static void test_orders_see_identical_work(void)
{
	struct dl_run_result r[DL_ORDER_COUNT];

	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(1, 200, 13, false);

		t->prof[0].cpu_ppm = 500000;   /* work_ns: the callbacks' CPU halves */
		CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 4, NULL, &r[o]), 0);
		free(t);
	}
	CU_ASSERT_EQUAL(r[0].nops, 3);
	CU_ASSERT(r[0].op[1].work_ns > 0);
	for (int o = 1; o < DL_ORDER_COUNT; o++) {
		CU_ASSERT_EQUAL(r[o].nops, r[0].nops);
		for (uint32_t i = 1; i < r[0].nops; i++)   /* PM ops: same samples */
			CU_ASSERT_EQUAL(r[o].op[i].work_ns, r[0].op[i].work_ns);
	}
}

static void test_suspend_fault_rolls_back(void)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(1, 100, 17, false);
		struct rec rec;
		struct dl_run_result r;
		int susp[DL_PH_COUNT] = { 0 }, res[DL_PH_COUNT] = { 0 };
		int64_t bad;

		rec_init(&rec);

		t->fault[0] = (struct dl_sc_fault){ .dev = 50, .lat_key = DL_LAT_SUSPEND_LATE,
						    .err = 16 };
		t->sc.nfault = 1;
		CU_ASSERT_EQUAL(run_checked(t, (enum dl_order)o, 4, &rec, &r, &bad,
					    o == DL_ORDER_NAIVE), 1);
		CU_ASSERT(o == DL_ORDER_NAIVE ? bad > 0 : bad == 0);
		CU_ASSERT_STRING_EQUAL(r.status, "failed");
		CU_ASSERT_EQUAL(r.fail_dev, 50);
		CU_ASSERT_EQUAL(r.err, -16);
		for (size_t i = 0; i < rec.n; i++) {
			const struct dl_event *e = &rec.ev[i];

			if (e->kind == DL_EV_SUSPEND_END && !e->err)
				susp[e->phase]++;
			if (e->kind == DL_EV_RESUME_END)
				res[e->phase]++;
		}
		/* the failing phase never reaches noirq; everything suspended is resumed */
		CU_ASSERT_EQUAL(susp[DL_PH_SUSPEND_NOIRQ], 0);
		for (int p = DL_PH_PREPARE; p <= DL_PH_SUSPEND_NOIRQ; p++)
			CU_ASSERT_EQUAL(susp[p], res[DL_PH_COMPLETE - p]);
		CU_ASSERT(susp[DL_PH_PREPARE] == 100);
		/* the suspend op's own phases up to the failing one; its rollback in the sums only */
		CU_ASSERT_EQUAL(r.op[1].kind, DL_OP_SUSPEND);
		CU_ASSERT_EQUAL(r.op[1].ph_ran, 0x07);
		/* the aborted phase's bound counts only the callbacks that ran */
		for (uint32_t i = 0; i < r.nops; i++) {
			CU_ASSERT(r.op[i].lower_bound_ns <= r.op[i].makespan_ns);
			CU_ASSERT(r.op[i].order_bound_ns <= r.op[i].makespan_ns);
		}
		rec_fini(&rec);
		free(t);
	}
}

/*
 * Issue 18, items 4 and 5: dpm_prepare() walks dpm_list forward and
 * dpm_complete() the prepared list backward, on the main thread alone, for
 * every order (the kernel has no async prepare or complete), also when a
 * fault aborts the suspend; the checker agrees.
 */
static void test_prepare_and_complete_walk_the_list_on_main(void)
{
	tc_check_serial_walks(TC_DES, 200, 120);
}

/*
 * Issue 18, item 6: classic async resume queues every async device before
 * the sync walk (6.12), so none waits behind a slow sync device it does not
 * depend on; suspend phases still queue a device when the walk reaches it.
 */
static void test_classic_resume_queues_async_up_front(void)
{
	struct tsc *t = make_independent(20, 1000000);
	struct dl_run_result r;
	struct rec rec;
	int64_t bad;

	t->sc.cost.queue_ns = DL_COST_QUEUE_NS;   /* the bound below allows 100 us of overhead */
	rec_init(&rec);
	CU_ASSERT_EQUAL(run_checked(t, DL_ORDER_KERNEL_ASYNC, 32, &rec, &r, &bad, false), 0);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(rec_upfront_problems(&rec, 20), 0);
	/* resume: the four sync devices in a row, the async ones alongside */
	CU_ASSERT(r.op[2].makespan_ns < 3 * (4 * 1000000 + 100000));
	rec_fini(&rec);
	free(t);
}

/*
 * Issue 18, item 7: kernel-async-v2 is the 6.16 algorithm: roots/leaves up
 * front, hand-offs, the walk queues the rest, and items block on their waits
 * (make_v2_block(): 2 is queued by the walk while 1 resumes, 1 while 2
 * suspends, and each blocks).
 */
static void test_v2_walk_queues_and_items_block(void)
{
	struct tsc *t = make_v2_block(1000000);
	struct dl_run_result r;
	struct rec rec;
	int64_t bad;

	rec_init(&rec);
	CU_ASSERT_EQUAL(run_checked(t, DL_ORDER_KERNEL_ASYNC_V2, 4, &rec, &r, &bad, false), 0);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(rec_v2_block_missing(&rec), 0);
	CU_ASSERT(r.op[1].wakeups > 0 && r.op[2].wakeups > 0);
	rec_fini(&rec);
	free(t);
}

/* A supplier whose probe fails leaves its consumers unprobed: the bound stays below makespan. */
/*
 * Issue 31's dispatch costs (cost.h), each against the hardware profile,
 * which does not charge them: 64 independent async devices, every other
 * cost zero, one CPU (the guest's vCPU), so that what each item pays
 * before its callback adds up on the makespan.
 */
static struct dl_cost make_dispatch_costs(void)
{
	return (struct dl_cost){ .queue_ns = -1, .wake_ns = 0, .switch_ns = 0, .main_ns = 0,
				 .probe_check_ns = 0, .handoff_ns = 0, .reorder_ns = 0,
				 .reorder_visit_ns = 0, .rpm_ns = 0, .rpm_idle_ns = 0,
				 .register_ns = 0, .link_add_ns = 0, .sleep_end_ns = 0,
				 .resume_wake_ns = 0 };
}

static struct tsc *make_dispatch(void)
{
	struct tsc *t = make_independent(64, 10000000);

	for (uint32_t i = 0; i < 64; i++)
		t->dev[i].async = 1;
	fixed(&t->prof[0].lat[DL_LAT_PROBE], 10000000);
	t->sc.cost = make_dispatch_costs();
	return t;
}

static int run_profile(struct tsc *t, enum dl_order o, unsigned profile, struct dl_run_result *r)
{
	struct dl_engine_opts eo = { .order = o, .workers = 1, .seed = t->sc.seed,
				     .cost_profile = profile };

	return dl_engine_run(&t->sc, &eo, r);
}

/*
 * Main's step in prepare and complete (dl_cost_main()): ten independent
 * sync devices, every callback of no time, sync order, one CPU: consecutive
 * prepare and complete callbacks start serial_main_ns apart (the guest's
 * 2.4 us, measured on the campaign's kernel runs), suspend_late's main_ns;
 * the hardware profile has one price for both.
 */
static void test_serial_phases_main_step(void)
{
	struct tsc *t = make_independent(10, 0);
	struct dl_costs gu, hw;
	struct rec rec;
	struct dl_run_result r;
	struct dl_engine_opts eo = { .order = DL_ORDER_SYNC, .workers = 1, .seed = 31,
				     .cost_profile = DL_PROFILE_GUEST };
	static const unsigned ph[] = { DL_PH_PREPARE, DL_PH_SUSPEND_LATE, DL_PH_COMPLETE };

	for (uint32_t i = 0; i < 10; i++)
		t->dev[i].async = 0;
	dl_costs_resolve_profile(&t->sc, DL_PROFILE_GUEST, &gu);
	dl_costs_resolve_profile(&t->sc, DL_PROFILE_HARDWARE, &hw);
	CU_ASSERT(gu.serial_main_ns > 0 && gu.serial_main_ns < gu.main_ns);
	CU_ASSERT_EQUAL(hw.serial_main_ns, hw.main_ns);
	rec_init(&rec);
	eo.sink = (struct dl_sink){ .emit = rec_emit, .ctx = &rec };
	CU_ASSERT_EQUAL_FATAL(dl_engine_run(&t->sc, &eo, &r), 0);
	for (size_t k = 0; k < sizeof(ph) / sizeof(ph[0]); k++) {
		unsigned kind = ph[k] <= DL_PH_SUSPEND_NOIRQ ? DL_EV_SUSPEND_START : DL_EV_RESUME_START;
		int64_t a = rec_time(&rec, 3, kind, ph[k]), b = rec_time(&rec, 4, kind, ph[k]);
		int64_t want = ph[k] == DL_PH_SUSPEND_LATE ? gu.main_ns : gu.serial_main_ns;

		CU_ASSERT(a >= 0 && b >= 0);
		/* prepare walks dpm_list forward, suspend_late and complete backward */
		CU_ASSERT_EQUAL(ph[k] == DL_PH_PREPARE ? b - a : a - b, want);
	}
	rec_fini(&rec);
	free(t);
}

/*
 * The guest's own devices between our devices' phases (cost.c
 * phase_gap_ns): one sync device under the guest profile.  From its end
 * in one phase to its start in the next, main's step plus the gap before
 * that phase: 18, 732, 791 us before suspend, suspend_late,
 * suspend_noirq; 573, 647 us before resume_early, resume (the same step
 * in each pair compared; complete's, 15 us, has a step of its own).
 */
static void test_guest_phase_gaps(void)
{
	struct tsc *t = make_independent(1, 0);
	struct rec rec;
	struct dl_run_result r;
	struct dl_engine_opts eo = { .order = DL_ORDER_SYNC, .workers = 1, .seed = 31,
				     .cost_profile = DL_PROFILE_GUEST };
	int64_t d[DL_PH_COUNT];

	t->dev[0].async = 0;
	rec_init(&rec);
	eo.sink = (struct dl_sink){ .emit = rec_emit, .ctx = &rec };
	CU_ASSERT_EQUAL_FATAL(dl_engine_run(&t->sc, &eo, &r), 0);
	for (unsigned p = DL_PH_SUSPEND; p < DL_PH_COUNT; p++) {
		bool sus = p <= DL_PH_SUSPEND_NOIRQ, was = p - 1 <= DL_PH_SUSPEND_NOIRQ;

		d[p] = rec_time(&rec, 0, sus ? DL_EV_SUSPEND_START : DL_EV_RESUME_START, p) -
		       rec_time(&rec, 0, was ? DL_EV_SUSPEND_END : DL_EV_RESUME_END, p - 1);
	}
	CU_ASSERT_EQUAL(d[DL_PH_SUSPEND_LATE] - d[DL_PH_SUSPEND], 732000 - 18000);
	CU_ASSERT_EQUAL(d[DL_PH_SUSPEND_NOIRQ] - d[DL_PH_SUSPEND], 791000 - 18000);
	CU_ASSERT_EQUAL(d[DL_PH_RESUME] - d[DL_PH_RESUME_EARLY], 647000 - 573000);
	rec_fini(&rec);
	free(t);
}

/*
 * The async pool (dl_kpool_take()): the probe op's 64 items, all queued
 * before the one CPU runs any, each sleeping 10 ms, hold 64 kworkers at
 * once; the pool had the guest's pool_init and creates the rest and one
 * idle worker more, one worker_new_ns each (a scenario key here: the
 * guest profile charges none, cost.c); the hardware profile's pool is
 * max_active from the start.  Suspend and resume reuse them and pay
 * nothing.  Each async probe's queueing pays async_probe_ns, not
 * queue_ns; the PM dispatch queue_ns (and wake_ns, zero here) as before.
 */
static void test_kworker_pool_and_async_probe_start(void)
{
	struct dl_costs hw, gu;
	struct tsc *t = make_dispatch();
	struct dl_run_result a, b;
	int64_t queue_more;

	t->sc.cost.worker_new_ns = 150000;
	t->sc.cost.has = DL_COST_HAS_WORKER_NEW;
	dl_costs_resolve_profile(&t->sc, DL_PROFILE_HARDWARE, &hw);
	dl_costs_resolve_profile(&t->sc, DL_PROFILE_GUEST, &gu);
	CU_ASSERT(gu.worker_new_ns == 150000 && gu.pool_init < 64 && gu.async_probe_ns > gu.queue_ns);
	CU_ASSERT_EQUAL(hw.pool_init, hw.max_active);
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_HARDWARE, &a), 0);
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_GUEST, &b), 0);
	CU_ASSERT_EQUAL(b.op[0].makespan_ns - a.op[0].makespan_ns,
			64 * (gu.async_probe_ns - hw.async_probe_ns) +
			(64 - (int64_t)gu.pool_init + 1) * gu.worker_new_ns);
	/* classic suspend: main queues each item at queue_ns; three phases run items */
	queue_more = 64 * (gu.queue_ns - hw.queue_ns);
	CU_ASSERT_EQUAL(b.op[1].makespan_ns - a.op[1].makespan_ns, 3 * queue_more + 1541000);
	/* and the guest's own devices between phases (cost.c phase_gap_ns) */
	CU_ASSERT_EQUAL(b.op[2].makespan_ns - a.op[2].makespan_ns, 3 * queue_more + 1235000);
	free(t);
}

/*
 * The pool grows as the workqueue grows it (dl_kpool_take()), when the
 * last idle kworker leaves for work, not when an item is queued: 64
 * async devices whose callbacks take no time, one CPU, all 64 probe items
 * queued before any runs.  One kworker runs them all, each back from its
 * item in time for the next (worker_thread()), so the pool of two never
 * creates one: worker_new_ns (a scenario key, 70 us) changes nothing.
 */
static void test_kworker_pool_grows_when_none_is_idle(void)
{
	struct tsc *t = make_independent(64, 0);
	struct dl_run_result a, b;

	for (uint32_t i = 0; i < 64; i++)
		t->dev[i].async = 1;
	fixed(&t->prof[0].lat[DL_LAT_PROBE], 0);
	t->sc.cost = make_dispatch_costs();
	t->sc.cost.pool_init = 2;
	t->sc.cost.has = DL_COST_HAS_WORKER_NEW | DL_COST_HAS_POOL_INIT;
	t->sc.cost.worker_new_ns = 0;
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_GUEST, &a), 0);
	t->sc.cost.worker_new_ns = 70000;
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_GUEST, &b), 0);
	for (uint32_t i = 0; i < a.nops; i++)
		CU_ASSERT_EQUAL(b.op[i].makespan_ns, a.op[i].makespan_ns);
	free(t);
}

/*
 * A kworker back from its item takes the next one on the worklist itself
 * (worker_thread()'s process_one_work() loop): no wake, next_ns.  The same
 * 64 devices: in probe and in each of suspend's three phases that run
 * items, only the first item wakes a kworker, so a wake_ns 100 us dearer
 * makes each op 100 us longer per such phase, not 64 times that; each
 * chained start pays the guest's next_ns.
 */
static void test_kworker_back_takes_the_next_item_without_a_wake(void)
{
	const int64_t dw = 100000;
	struct tsc *t = make_independent(64, 0);
	struct dl_run_result a, b;
	struct dl_costs gu;

	for (uint32_t i = 0; i < 64; i++)
		t->dev[i].async = 1;
	fixed(&t->prof[0].lat[DL_LAT_PROBE], 0);
	t->sc.cost = make_dispatch_costs();
	dl_costs_resolve_profile(&t->sc, DL_PROFILE_GUEST, &gu);
	CU_ASSERT(gu.next_ns > 0);
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_GUEST, &a), 0);
	t->sc.cost.wake_ns = dw;
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_GUEST, &b), 0);
	CU_ASSERT_EQUAL(b.op[0].makespan_ns - a.op[0].makespan_ns, dw);
	CU_ASSERT_EQUAL(b.op[1].makespan_ns - a.op[1].makespan_ns, 3 * dw);
	/* resume_wake_ns is 0 here: resume's wakes stay as they were */
	CU_ASSERT_EQUAL(b.op[2].makespan_ns, a.op[2].makespan_ns);
	/* the 63 chained starts of a phase cost next_ns each, the first its wake */
	CU_ASSERT(a.op[1].makespan_ns >= 3 * 63 * gu.next_ns);
	free(t);
}

/*
 * The deferred-probe retry path (cost.h retry_ns): a chain registered
 * consumer first defers all along; each retry the walk makes pays retry_ns
 * on top of its reorder, in boot context (main walks) and module context
 * (the deferred-probe kworker walks).  sync: no work items, no pool.
 */
static void test_deferred_retry_path_cost(void)
{
	for (int module = 0; module < 2; module++) {
		struct tsc *t = make(0, 40, 5, false);
		struct dl_costs gu;
		struct dl_run_result a, b;
		struct dl_engine_opts eo = { .order = DL_ORDER_SYNC, .workers = 1, .seed = 5,
					     .probe_module = module };

		t->sc.cost = make_dispatch_costs();
		dl_costs_resolve_profile(&t->sc, DL_PROFILE_GUEST, &gu);
		CU_ASSERT_FATAL(gu.retry_ns > 0);
		CU_ASSERT_EQUAL_FATAL(dl_engine_run(&t->sc, &eo, &a), 0);
		eo.cost_profile = DL_PROFILE_GUEST;
		CU_ASSERT_EQUAL_FATAL(dl_engine_run(&t->sc, &eo, &b), 0);
		CU_ASSERT(a.op[0].reorder_walks > 0);
		CU_ASSERT_EQUAL(a.op[0].reorder_walks, b.op[0].reorder_walks);
		CU_ASSERT_EQUAL(b.op[0].makespan_ns - a.op[0].makespan_ns,
				(int64_t)b.op[0].reorder_walks * gu.retry_ns);
		free(t);
	}
}

/*
 * The scenario's "cost" keys for the dispatch costs (worker_new_ns,
 * pool_init, async_probe_ns, retry_ns) override the profile: under the
 * hardware profile, which charges none of them, they add up on the
 * makespan as the guest profile's own do above.
 */
static void test_scenario_keys_price_the_dispatch_costs(void)
{
	struct dl_costs hw, sk;
	struct tsc *t = make_dispatch();
	struct dl_run_result a, b;

	dl_costs_resolve_profile(&t->sc, DL_PROFILE_HARDWARE, &hw);
	t->sc.cost.worker_new_ns = 70000;
	t->sc.cost.pool_init = 10;
	t->sc.cost.async_probe_ns = 9000;
	t->sc.cost.has = DL_COST_HAS_WORKER_NEW | DL_COST_HAS_POOL_INIT | DL_COST_HAS_ASYNC_PROBE;
	dl_costs_resolve(&t->sc, &sk);
	CU_ASSERT_EQUAL(sk.worker_new_ns, 70000);
	CU_ASSERT_EQUAL(sk.pool_init, 10);
	CU_ASSERT_EQUAL(sk.async_probe_ns, 9000);
	CU_ASSERT_EQUAL(sk.retry_ns, hw.retry_ns);
	t->sc.cost.has = 0;
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_HARDWARE, &a), 0);
	t->sc.cost.has = DL_COST_HAS_WORKER_NEW | DL_COST_HAS_POOL_INIT | DL_COST_HAS_ASYNC_PROBE;
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_HARDWARE, &b), 0);
	CU_ASSERT_EQUAL(b.op[0].makespan_ns - a.op[0].makespan_ns,
			64 * (9000 - hw.async_probe_ns) + (64 - 10 + 1) * 70000);
	free(t);

	for (int module = 0; module < 2; module++) {
		struct dl_engine_opts eo = { .order = DL_ORDER_SYNC, .workers = 1, .seed = 5,
					     .probe_module = module };

		t = make(0, 40, 5, false);
		t->sc.cost = make_dispatch_costs();
		CU_ASSERT_EQUAL_FATAL(dl_engine_run(&t->sc, &eo, &a), 0);
		t->sc.cost.retry_ns = 33000;
		t->sc.cost.has = DL_COST_HAS_RETRY;
		CU_ASSERT_EQUAL_FATAL(dl_engine_run(&t->sc, &eo, &b), 0);
		CU_ASSERT(a.op[0].reorder_walks > 0);
		CU_ASSERT_EQUAL(b.op[0].makespan_ns - a.op[0].makespan_ns,
				(int64_t)b.op[0].reorder_walks * 33000);
		free(t);
	}
}

/*
 * A scenario's "profile" (cost.h): a run under the default profile takes
 * the phone's PM dispatch (queue_ns 32 us, calibrated on the Pixel 6), one
 * that asks for another profile keeps it; each classic suspend phase of
 * 64 async devices then pays 64 queueings on the main thread.
 */
static void test_scenario_names_its_cost_profile(void)
{
	struct dl_costs hw, ph, gu;
	struct tsc *t = make_dispatch();
	struct dl_run_result a, b;

	dl_costs_resolve(&t->sc, &hw);
	snprintf(t->sc.cost.profile, sizeof(t->sc.cost.profile), "phone");
	dl_costs_resolve(&t->sc, &ph);
	dl_costs_resolve_profile(&t->sc, DL_PROFILE_GUEST, &gu);
	CU_ASSERT(ph.queue_ns > 10 * hw.queue_ns);
	CU_ASSERT_EQUAL(ph.async_probe_ns, hw.async_probe_ns);
	CU_ASSERT_EQUAL(gu.async_probe_ns, 9000);   /* --profile guest keeps its own */
	t->sc.cost.profile[0] = 0;
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_HARDWARE, &a), 0);
	snprintf(t->sc.cost.profile, sizeof(t->sc.cost.profile), "phone");
	CU_ASSERT_EQUAL_FATAL(run_profile(t, DL_ORDER_KERNEL_ASYNC, DL_PROFILE_HARDWARE, &b), 0);
	CU_ASSERT_EQUAL(b.op[1].makespan_ns - a.op[1].makespan_ns,
			3 * 64 * (ph.queue_ns - hw.queue_ns));
	free(t);
}

/* Never-bound devices run no PM callbacks (tcheck.h). */
static void test_never_bound_devices_run_no_pm_callbacks(void)
{
	tc_check_never_bound(TC_DES);
}

static void test_lower_bound_holds_when_a_probe_fails(void)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(0, 60, 19, false);
		struct dl_run_result r;

		/* chain: device i consumes i + 1, so the failing 30 blocks 0..29 */
		t->fault[0] = (struct dl_sc_fault){ .dev = 30, .lat_key = DL_LAT_PROBE, .err = 5 };
		t->sc.nfault = 1;
		/* a failed probe is not a failed op: the kernel leaves the device unbound */
		CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 4, NULL, &r), 0);
		CU_ASSERT_STRING_EQUAL(r.status, "ok");
		CU_ASSERT(r.op[0].probe_attempts > 0);
		for (uint32_t i = 0; i < r.nops; i++) {
			CU_ASSERT(r.op[i].lower_bound_ns <= r.op[i].makespan_ns);
			CU_ASSERT(r.op[i].order_bound_ns <= r.op[i].makespan_ns);
		}
		free(t);
	}
}

/*
 * The order-specific bound (engine.h): the main thread's serial share never
 * exceeds the makespan, and for sync, where main runs every callback, it is
 * at least the work (the spec's lower bound only claims work / K).
 */
static void test_main_bound_is_a_bound_for_every_order(void)
{
	for (int shape = 0; shape < 3; shape++) {
		for (int o = 0; o < DL_ORDER_COUNT; o++) {
			struct tsc *t = make(shape, 150, 23 + (uint64_t)shape, false);
			struct dl_run_result r;

			CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 4, NULL, &r), 0);
			for (uint32_t i = 0; i < r.nops; i++) {
				const struct dl_op_result *op = &r.op[i];

				CU_ASSERT(op->main_bound_ns <= op->makespan_ns);
				CU_ASSERT(op->order_bound_ns <= op->makespan_ns);
				CU_ASSERT(op->order_bound_ns >= op->lower_bound_ns);
				CU_ASSERT(op->order_bound_ns >= op->main_bound_ns);
				if (o == DL_ORDER_SYNC && op->kind != DL_OP_PROBE)
					CU_ASSERT(op->main_bound_ns >= op->work_ns);
				/* their main thread runs prepare and complete only (dpm_prepare()) */
				if (o == DL_ORDER_CP_FIRST || o == DL_ORDER_LEVELS)
					CU_ASSERT(op->kind == DL_OP_PROBE ? op->main_bound_ns == 0 :
						  op->main_bound_ns > 0);
			}
			CU_ASSERT(r.order_bound_ns <= r.makespan_ns);
			free(t);
		}
	}
}

/* PM-phase times of device @d after the first event of @after (or from the start). */
struct pm_times { int64_t st[DL_PH_COUNT], en[DL_PH_COUNT]; };

static void pm_times_after(const struct rec *rec, size_t from, uint32_t d, struct pm_times *pt)
{
	for (int p = 0; p < DL_PH_COUNT; p++)
		pt->st[p] = pt->en[p] = -1;
	for (size_t i = from; i < rec->n; i++) {
		const struct dl_event *e = &rec->ev[i];

		if (e->dev != d)
			continue;
		if ((e->kind == DL_EV_SUSPEND_START || e->kind == DL_EV_RESUME_START) &&
		    pt->st[e->phase] < 0)
			pt->st[e->phase] = e->t_ns;
		if ((e->kind == DL_EV_SUSPEND_END || e->kind == DL_EV_RESUME_END) &&
		    pt->en[e->phase] < 0)
			pt->en[e->phase] = e->t_ns;
	}
}

/*
 * The engine keeps its snapshot of the graph across PM ops: a link added
 * and a device hot-plugged between two suspend/resume cycles must be obeyed
 * by the second cycle (consumer A of the new link suspends before its
 * supplier B and resumes after it; hot-plugged child H before its parent B).
 */
static void test_graph_changes_between_pm_ops_are_obeyed(void)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(1, 100, 29, false);
		uint32_t a = t->sc.ndev, b = a + 1, h = a + 2;
		struct rec rec;
		struct dl_run_result r;
		struct pm_times ta, tb, th;
		size_t from = 0;
		int64_t bad;

		if (o == DL_ORDER_NAIVE) {
			free(t);
			continue;
		}
		rec_init(&rec);
		for (uint32_t d = a; d <= h; d++) {
			t->dev[d].name_off = d * 8;
			snprintf(t->names + d * 8, 8, "x%u", d);
			t->dev[d].parent = d == h ? b : DL_SC_NONE;
			t->dev[d].async = 1;
		}
		t->dev[h].hotplug = 1;
		t->sc.ndev += 3;
		t->op[3] = (struct dl_sc_op){ .kind = DL_OP_LINK_ADD, .dev = a, .dev2 = b };
		t->op[4] = (struct dl_sc_op){ .kind = DL_OP_ADD, .dev = h, .dev2 = DL_SC_NONE };
		t->op[5] = (struct dl_sc_op){ .kind = DL_OP_SUSPEND, .dev = DL_SC_NONE,
					      .dev2 = DL_SC_NONE };
		t->op[6] = (struct dl_sc_op){ .kind = DL_OP_RESUME, .dev = DL_SC_NONE,
					      .dev2 = DL_SC_NONE };
		t->sc.nop = 7;
		CU_ASSERT_EQUAL(run_checked(t, (enum dl_order)o, 4, &rec, &r, &bad, false), 0);
		CU_ASSERT_EQUAL(bad, 0);
		for (size_t i = 0; i < rec.n; i++)
			if (rec.ev[i].kind == DL_EV_LINK_ADD && rec.ev[i].dev == a) {
				from = i;
				break;
			}
		CU_ASSERT(from > 0);
		pm_times_after(&rec, from, a, &ta);
		pm_times_after(&rec, from, b, &tb);
		pm_times_after(&rec, from, h, &th);
		/* prepare walks dpm_list forward (B first), complete backward (B last) */
		for (int p = DL_PH_PREPARE; p <= DL_PH_SUSPEND_NOIRQ; p++) {
			bool fwd = p == DL_PH_PREPARE;

			CU_ASSERT(ta.en[p] >= 0 && tb.st[p] >= 0 && th.en[p] >= 0);
			CU_ASSERT(fwd ? tb.en[p] <= ta.st[p] : ta.en[p] <= tb.st[p]);
			CU_ASSERT(fwd ? tb.en[p] <= th.st[p] : th.en[p] <= tb.st[p]);
		}
		for (int p = DL_PH_RESUME_NOIRQ; p <= DL_PH_COMPLETE; p++) {
			bool bwd = p == DL_PH_COMPLETE;

			CU_ASSERT(tb.en[p] >= 0 && ta.st[p] >= 0 && th.st[p] >= 0);
			CU_ASSERT(bwd ? ta.en[p] <= tb.st[p] : tb.en[p] <= ta.st[p]);
			CU_ASSERT(bwd ? th.en[p] <= tb.st[p] : tb.en[p] <= th.st[p]);
		}
		rec_fini(&rec);
		free(t);
	}
}

/*
 * 64 independent async devices whose suspend and resume callbacks take 10 ms
 * (K = 8 CPUs): @cpu_ppm of each is CPU time, the rest sleep; @max_active
 * workers (0: the kernel's).
 */
static struct tsc *independent64(uint32_t cpu_ppm, uint32_t max_active)
{
	struct tsc *t = make(3, 64, 5, false);   /* shape 3: no links, no parents */

	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		fixed(&t->prof[0].lat[k], 0);
	fixed(&t->prof[0].lat[DL_LAT_SUSPEND], 10000000);
	fixed(&t->prof[0].lat[DL_LAT_RESUME], 10000000);
	t->prof[0].cpu_ppm = cpu_ppm;
	for (uint32_t i = 0; i < 64; i++)
		t->dev[i].async = 1;
	t->sc.cost.cpus = 8;
	t->sc.cost.max_active = max_active;
	/* the overlap is the point: the dispatch at the boot-time queue cost, not the phone's */
	t->sc.cost.queue_ns = DL_COST_QUEUE_NS;
	return t;
}

/*
 * Callbacks sleep: with the default cost model (no CPU share) the 64
 * callbacks of a phase overlap on the async workqueue's workers, whatever K,
 * and a phase takes about 10 ms, as in the kernel (not 64 * 10 ms / 8).
 */
static void test_sleeping_callbacks_overlap_beyond_k(void)
{
	static const enum dl_order ord[] = { DL_ORDER_KERNEL_ASYNC, DL_ORDER_KERNEL_ASYNC_V2,
					     DL_ORDER_LEVELS, DL_ORDER_CP_FIRST };

	for (size_t o = 0; o < sizeof(ord) / sizeof(ord[0]); o++) {
		struct tsc *t = independent64(0, 0);
		struct dl_run_result r;

		CU_ASSERT_EQUAL(run(t, ord[o], 0, NULL, &r), 0);
		CU_ASSERT_EQUAL(r.nops, 3);
		for (uint32_t i = 1; i < 3; i++) {   /* suspend, resume: one 10 ms phase each */
			CU_ASSERT(r.op[i].makespan_ns >= 10000000);
			CU_ASSERT(r.op[i].makespan_ns <= 11000000);
			CU_ASSERT_EQUAL(r.op[i].lower_bound_ns, 10000000);
			CU_ASSERT_EQUAL(r.op[i].work_ns, 0);
			CU_ASSERT(r.op[i].peak_workers == 64);
		}
		free(t);
	}
}

/* The CPU share competes for the K CPUs; the lower bound is max(critical path, CPU work / K). */
static void test_cpu_share_competes_for_k(void)
{
	struct tsc *t = independent64(500000, 0);   /* 5 ms CPU, 5 ms sleep */
	struct dl_run_result r;

	CU_ASSERT_EQUAL(run(t, DL_ORDER_KERNEL_ASYNC_V2, 0, NULL, &r), 0);
	/* probe's one phase is the op (boot context: nothing before it) */
	CU_ASSERT_EQUAL(r.op[0].ph_ran, 1u << DL_OP_PROBE_PHASE);
	CU_ASSERT_EQUAL(r.op[0].ph[DL_OP_PROBE_PHASE].work_ns, r.op[0].work_ns);
	CU_ASSERT_EQUAL(r.op[0].ph[DL_OP_PROBE_PHASE].lower_bound_ns, r.op[0].lower_bound_ns);
	for (uint32_t i = 1; i < 3; i++) {
		struct dl_bound sum = { 0, 0, 0 };

		CU_ASSERT_EQUAL(r.op[i].work_ns, 64 * 5000000);
		CU_ASSERT_EQUAL(r.op[i].lower_bound_ns, 64 * 5000000 / 8);
		CU_ASSERT(r.op[i].makespan_ns >= r.op[i].lower_bound_ns);
		CU_ASSERT(r.op[i].makespan_ns <= 41000000 + 5000000);
		/* each of the op's four phases keeps its own figures; they sum to the op's */
		CU_ASSERT_EQUAL(r.op[i].ph_ran, i == 1 ? 0x0f : 0xf0);
		for (unsigned p = 0; p < DL_PH_COUNT; p++) {
			if (!(r.op[i].ph_ran & (1u << p)))
				continue;
			sum.work_ns += r.op[i].ph[p].work_ns;
			sum.critical_path_ns += r.op[i].ph[p].critical_path_ns;
			sum.lower_bound_ns += r.op[i].ph[p].lower_bound_ns;
		}
		CU_ASSERT_EQUAL(sum.work_ns, r.op[i].work_ns);
		CU_ASSERT_EQUAL(sum.critical_path_ns, r.op[i].critical_path_ns);
		CU_ASSERT_EQUAL(sum.lower_bound_ns, r.op[i].lower_bound_ns);
	}
	free(t);
}

/* At most max_active items hold a worker; the others wait for one (FIFO). */
static void test_worker_pool_is_max_active(void)
{
	struct tsc *t = independent64(0, 16);
	struct dl_run_result r;

	CU_ASSERT_EQUAL(run(t, DL_ORDER_KERNEL_ASYNC, 0, NULL, &r), 0);
	for (uint32_t i = 1; i < 3; i++) {
		CU_ASSERT(r.op[i].makespan_ns >= 40000000);   /* four rounds of 16 */
		CU_ASSERT(r.op[i].makespan_ns <= 41000000);
		CU_ASSERT_EQUAL(r.op[i].peak_workers, 16);
	}
	free(t);
}

/*
 * device_pm_move_to_tail() before each deferred retry costs the walk
 * reorder_ns + reorder_visit_ns per call device_reorder_to_tail() makes,
 * once per path: c, registered first, waits for s and has a diamond below
 * it (c <- x, c <- y, x <- z, y <- z), so its walk makes 1 + 2 + 2 = 5 calls
 * (z twice) and s's makes 6.  Under sync (one CPU, the walk on the main
 * thread) the probe takes exactly that much longer per ns of reorder_visit_ns.
 */
static const char *diamond_json =
	"{\"format\":\"dlsim-scenario/1\",\"name\":\"diamond\",\"seed\":1,"
	"\"defaults\":{\"probe\":\"1ms\",\"async\":false},"
	"\"cost\":{\"reorder_visit_ns\":%s},"
	"\"devices\":[{\"name\":\"c\"},{\"name\":\"x\"},{\"name\":\"y\"},"
	"{\"name\":\"z\"},{\"name\":\"s\"}],"
	"\"links\":[{\"consumer\":\"c\",\"supplier\":\"s\",\"flags\":[\"AUTOPROBE_CONSUMER\"]},"
	"{\"consumer\":\"x\",\"supplier\":\"c\",\"flags\":[\"AUTOPROBE_CONSUMER\"]},"
	"{\"consumer\":\"y\",\"supplier\":\"c\",\"flags\":[\"AUTOPROBE_CONSUMER\"]},"
	"{\"consumer\":\"z\",\"supplier\":\"x\",\"flags\":[\"AUTOPROBE_CONSUMER\"]},"
	"{\"consumer\":\"z\",\"supplier\":\"y\",\"flags\":[\"AUTOPROBE_CONSUMER\"]}],"
	"\"script\":[{\"op\":\"probe\"}]}";

static int run_diamond(const char *visit_ns, struct rec *rec, struct dl_run_result *r)
{
	char path[] = "/tmp/dlsim-reorder-XXXXXX", json[2048];
	struct dl_engine_opts eo = { .order = DL_ORDER_SYNC, .workers = 1, .seed = 1 };
	struct dl_scenario *sc = NULL;
	struct dl_error err;
	int fd = mkstemp(path), rc = -1;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	snprintf(json, sizeof(json), diamond_json, visit_ns);
	if (f && fputs(json, f) >= 0 && !fclose(f) &&
	    !dl_scenario_load(path, NULL, 0, NULL, &sc, &err)) {
		if (rec)
			eo.sink = (struct dl_sink){ .emit = rec_emit, .ctx = rec };
		rc = dl_engine_run(sc, &eo, r);
		dl_scenario_free(sc);
	}
	unlink(path);
	return rc;
}

/* Ctrl-C at the first progress report: the events counted then */
struct stop_at {
	atomic_int stop;
	uint64_t events;
	bool set;
};

static void stop_now(void *ctx, uint32_t op, uint32_t nops, uint64_t events)
{
	struct stop_at *sa = ctx;

	(void)op;
	(void)nops;
	if (!sa->set) {
		sa->set = true;
		sa->events = events;
		atomic_store(&sa->stop, 1);
	}
}

/*
 * A deferred-probe retry storm (module context, 30,000 devices) hears
 * Ctrl-C within 64 retries, not only at the event loop's next poll 4096
 * steps later: the retry walks between two steps poll it too (des_retry.c).
 */
static void test_retry_storm_hears_the_stop_flag(void)
{
	static const struct dl_override ov[] = { { "devices", "30000" } };
	char path[4096];
	struct stop_at sa = { .stop = 0 };
	struct dl_engine_opts eo = { .order = DL_ORDER_SYNC, .workers = 4, .seed = 1,
				     .probe_module = true, .stop = &sa.stop,
				     .progress = stop_now, .progress_ctx = &sa };
	struct dl_scenario *sc = NULL;
	struct dl_run_result r;
	struct dl_error err;
	int rc;

	snprintf(path, sizeof(path), "%s/scenarios/default.json", DLSIM_SOURCE_DIR);
	CU_ASSERT_EQUAL_FATAL(dl_scenario_load(path, ov, 1, NULL, &sc, &err), 0);
	rc = dl_engine_run(sc, &eo, &r);
	dl_scenario_free(sc);
	CU_ASSERT(sa.set);
	CU_ASSERT_EQUAL(rc, -EINTR);
	/* 1,512 events more with the poll in the retry walks; 19,927 without */
	CU_ASSERT(r.events - sa.events < 4096);
}

/*
 * A script of many short phases (63 ops over 1,500 devices, each phase
 * under 4,096 event-loop steps) hears Ctrl-C too: the loop counts its
 * steps across phases and ops, so the progress report comes and the stop
 * flag it sets ends the run.  Counted per phase, neither ever came and the
 * run finished "ok".
 */
static void test_short_phases_hear_the_stop_flag(void)
{
	char path[] = "/tmp/dlsim-shortstop-XXXXXX", json[4096];
	struct stop_at sa = { .stop = 0 };
	struct dl_engine_opts eo = { .order = DL_ORDER_KERNEL_ASYNC, .workers = 4, .seed = 1,
				     .stop = &sa.stop, .progress = stop_now, .progress_ctx = &sa };
	struct dl_scenario *sc = NULL;
	static struct dl_run_result r;
	struct dl_error err;
	int fd = mkstemp(path), n, rc = 0;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	n = snprintf(json, sizeof(json), "{\"format\":\"dlsim-scenario/1\",\"name\":\"short\","
		     "\"seed\":1,\"generate\":{\"topology\":\"random-dag\",\"devices\":1500},"
		     "\"script\":[{\"op\":\"probe\"}");
	for (int i = 0; i < 31; i++)
		n += snprintf(json + n, sizeof(json) - (size_t)n, ",{\"op\":\"suspend\"},{\"op\":\"resume\"}");
	snprintf(json + n, sizeof(json) - (size_t)n, "]}");
	CU_ASSERT_FATAL(f && fputs(json, f) >= 0 && !fclose(f));
	CU_ASSERT_EQUAL_FATAL(dl_scenario_load(path, NULL, 0, NULL, &sc, &err), 0);
	unlink(path);
	rc = dl_engine_run(sc, &eo, &r);
	dl_scenario_free(sc);
	CU_ASSERT(sa.set);
	CU_ASSERT_EQUAL(rc, -EINTR);
	CU_ASSERT_STRING_EQUAL(r.status, "interrupted");
}

/* The core's stop poll: yes once *ctx says so. */
static bool poll_flag(void *ctx)
{
	return *(const bool *)ctx;
}

/*
 * A phase's snapshot (graph.h) of a million devices took seconds on a
 * loaded machine without a look at Ctrl-C: dl_graph_get() asks the core's
 * stop poll and gives up with -EINTR, leaving no snapshot (the next call
 * takes a whole one).
 */
static void test_graph_snapshot_hears_the_stop_flag(void)
{
	char path[] = "/tmp/dlsim-graphstop-XXXXXX";
	static const char json[] = "{\"format\":\"dlsim-scenario/1\",\"name\":\"g\",\"seed\":1,"
		"\"generate\":{\"topology\":\"random-dag\",\"devices\":20000}}";
	struct dl_scenario *sc = NULL;
	struct dl_error err;
	struct dl_core core;
	struct dl_graph g;
	bool stop = true;
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	CU_ASSERT_FATAL(f && fputs(json, f) >= 0 && !fclose(f));
	CU_ASSERT_EQUAL_FATAL(dl_scenario_load(path, NULL, 0, NULL, &sc, &err), 0);
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(dl_core_init(&core, sc->ndev, sc->nlink), 0);
	for (uint32_t d = 0; d < sc->ndev; d++) {
		dl_dev_t id;

		CU_ASSERT_EQUAL_FATAL(dl_device_new(&core, DL_NONE, false, &id), 0);
		CU_ASSERT_EQUAL_FATAL(dl_device_register(&core, id), 0);
	}
	CU_ASSERT_EQUAL_FATAL(dl_graph_init(&g, sc->ndev), 0);
	dl_core_set_stop(&core, poll_flag, &stop);
	CU_ASSERT_EQUAL(dl_graph_get(&g, &core, sc, 1, DL_DEP_PROBE), -EINTR);
	CU_ASSERT_EQUAL(g.gen, 0);      /* no snapshot was taken */
	/* a core that was never stopped: the whole snapshot */
	stop = false;
	core.stopped = false;
	CU_ASSERT_EQUAL(dl_graph_get(&g, &core, sc, 2, DL_DEP_PROBE), 0);
	CU_ASSERT_EQUAL(g.m, sc->ndev);
	dl_graph_fini(&g);
	dl_core_fini(&core);
	dl_scenario_free(sc);
}

static void test_deferred_retry_pays_the_reorder_walk(void)
{
	static const uint64_t paths[] = { 5, 2, 2, 1, 6 };   /* c x y z s */
	struct dl_run_result r0, r1;
	struct rec rec;
	uint64_t calls = 0, retries = 0;

	rec_init(&rec);
	CU_ASSERT_EQUAL_FATAL(run_diamond("0", NULL, &r0), 0);
	CU_ASSERT_EQUAL_FATAL(run_diamond("\"1ms\"", &rec, &r1), 0);
	for (size_t i = 0; i < rec.n; i++)
		if (rec.ev[i].kind == DL_EV_DEFERRED_RETRY && rec.ev[i].dev < 5) {
			calls += paths[rec.ev[i].dev];
			retries++;
		}
	CU_ASSERT(r1.op[0].probe_defers > 0);
	CU_ASSERT(retries >= 4);
	CU_ASSERT_EQUAL(r1.op[0].probe_defers, r0.op[0].probe_defers);
	CU_ASSERT_EQUAL(r1.op[0].makespan_ns - r0.op[0].makespan_ns, (int64_t)calls * 1000000);
	rec_fini(&rec);
}

/*
 * The op accounts for what it charged: one walk per deferred retry, the
 * calls of each (paths), their price (reorder_ns is left at its default),
 * none capped; a walk whose calls cost more than DL_COST_REORDER_CAP_NS is
 * charged the cap and counted; the run sums its ops.
 */
static void test_reorder_walks_are_accounted(void)
{
	static const uint64_t paths[] = { 5, 2, 2, 1, 6 };   /* c x y z s */
	struct dl_run_result r0, r1, rc;
	struct rec rec;
	uint64_t calls = 0, retries = 0;

	rec_init(&rec);
	CU_ASSERT_EQUAL_FATAL(run_diamond("0", NULL, &r0), 0);
	CU_ASSERT_EQUAL_FATAL(run_diamond("\"1ms\"", &rec, &r1), 0);
	CU_ASSERT_EQUAL_FATAL(run_diamond("\"300s\"", NULL, &rc), 0);
	for (size_t i = 0; i < rec.n; i++)
		if (rec.ev[i].kind == DL_EV_DEFERRED_RETRY && rec.ev[i].dev < 5) {
			calls += paths[rec.ev[i].dev];
			retries++;
		}
	CU_ASSERT(retries >= 4);
	CU_ASSERT_EQUAL(r1.op[0].reorder_walks, retries);
	CU_ASSERT_EQUAL(r1.op[0].reorder_calls, calls);
	CU_ASSERT_EQUAL(r1.op[0].reorder_ns,
			(int64_t)calls * 1000000 + (int64_t)retries * DL_COST_REORDER_NS);
	CU_ASSERT_EQUAL(r1.op[0].reorder_capped, 0);
	/* the walks' price is the whole difference the visits made */
	CU_ASSERT_EQUAL(r1.op[0].reorder_ns - r0.op[0].reorder_ns,
			r1.op[0].makespan_ns - r0.op[0].makespan_ns);
	CU_ASSERT_EQUAL(r0.op[0].reorder_walks, retries);
	CU_ASSERT_EQUAL(r0.op[0].reorder_calls, calls);
	CU_ASSERT_EQUAL(r0.op[0].reorder_ns, (int64_t)retries * DL_COST_REORDER_NS);
	/* 300 s a call: every walk of 4 calls or more hits the 1000 s cap */
	CU_ASSERT_EQUAL(rc.op[0].reorder_walks, retries);
	CU_ASSERT(rc.op[0].reorder_capped > 0 && rc.op[0].reorder_capped < retries);
	CU_ASSERT(rc.op[0].reorder_ns <= (int64_t)retries * DL_COST_REORDER_CAP_NS);
	CU_ASSERT(rc.op[0].reorder_ns >= (int64_t)rc.op[0].reorder_capped * DL_COST_REORDER_CAP_NS);
	CU_ASSERT(rc.op[0].reorder_ns <= rc.op[0].makespan_ns);
	CU_ASSERT_EQUAL(rc.reorder_walks, rc.op[0].reorder_walks);
	CU_ASSERT_EQUAL(rc.reorder_calls, rc.op[0].reorder_calls);
	CU_ASSERT_EQUAL(rc.reorder_ns, rc.op[0].reorder_ns);
	CU_ASSERT_EQUAL(rc.reorder_capped, rc.op[0].reorder_capped);
	rec_fini(&rec);
}

/*
 * kernel-async-v2 (6.16+): a finishing device completes its waiters first
 * (complete_all()), then walks its dependents (handoff_ns each) and queues
 * the async ones not queued yet (queue_ns each); the first a work item
 * queues runs next on its own kworker, without a wake (worker_thread()'s
 * keep_working()).  On a chain of async devices the walk has queued every
 * consumer before its supplier ends, and each blocked on it: each resume
 * ends wake_ns + its latency after its supplier's.  A hand-off queues a
 * device only when the walk has not reached it yet: below, async 0 is a
 * root, sync 1 and async 2 its consumers; main waits for 0, then runs 1, so
 * 0's worker queues 2 after walking its two dependents.
 */
/*
 * phase.c's plan, on a phase small enough to work out by hand: positions
 * 0..3 hold devices 3, 2, 1, 0; 0 and 1 release 2, 2 releases 3.
 */
static const uint32_t pp_topo[] = { 0, 1, 2, 3 }, pp_off[] = { 0, 1, 2, 3, 3 },
		      pp_adj[] = { 2, 2, 3 }, pp_prof[4] = { 0 }, pp_id[] = { 3, 2, 1, 0 },
		      pp_index_of[] = { 3, 2, 1, 0 };
static const int64_t pp_lat[] = { 10, 30, 5, 7 };

static struct dl_phase_view pp_view(const uint8_t *part, const uint8_t *on_main)
{
	return (struct dl_phase_view){
		.g = { .topo = pp_topo, .ntopo = 4, .off = pp_off, .adj = pp_adj, .lat = pp_lat,
		       .lat_stride = sizeof(pp_lat[0]), .prof = pp_prof },
		.list = NULL, .nlist = 4, .id = pp_id, .index_of = pp_index_of, .nid = 4,
		.part = { part, 1 }, .on_main = { on_main, 1 },
	};
}

static void test_phase_plan_by_hand(void)
{
	static const uint8_t part[4] = { 1, 1, 1, 1 }, on_main[4] = { 1, 0, 1, 0 };
	struct dl_phase_view v = pp_view(part, on_main);
	struct dl_profile prof = { .cpu_ppm = 1000000 };
	struct dl_scenario sc = { .prof = &prof, .nprof = 1 };
	struct dl_phase_scheme ps = { .kind = DL_PK_RESUME, .link_aware = true, .classic = true };
	struct dl_walk_how how = { .ps = &ps, .phase = DL_PH_RESUME };
	struct dl_levels lv;
	struct dl_walk w;
	struct dl_bound b;
	int64_t prio[4], est[4];

	/* the bound: chain 30 + 5 + 7; work 52 all CPU */
	b = dl_bound_phase(&v.g, &sc, 1, false, est);
	CU_ASSERT_EQUAL(b.critical_path_ns, 42);
	CU_ASSERT_EQUAL(b.work_ns, 52);
	CU_ASSERT_EQUAL(b.lower_bound_ns, 52);
	CU_ASSERT_EQUAL(est[3], 35);
	b = dl_bound_phase(&v.g, &sc, 2, false, est);
	CU_ASSERT_EQUAL(b.lower_bound_ns, 42);
	b = dl_bound_phase(&v.g, &sc, 2, true, est);   /* serial: the sum */
	CU_ASSERT_EQUAL(b.lower_bound_ns, 52);
	/* cp-first: minus the longest path to the end */
	dl_phase_priorities(&v.g, 4, prio);
	CU_ASSERT_EQUAL(prio[0], -22);
	CU_ASSERT_EQUAL(prio[1], -42);
	CU_ASSERT_EQUAL(prio[2], -12);
	CU_ASSERT_EQUAL(prio[3], -7);
	/* levels: 0 and 1, then 2, then 3; level 0 in device-id order: position 1 (id 2) first */
	CU_ASSERT_FATAL(dl_levels_init(&lv, 4, 4) == 0);
	dl_phase_levels(&v, &lv);
	CU_ASSERT_EQUAL(lv.nlevels, 3);
	CU_ASSERT(lv.order[0] == 1 && lv.order[1] == 0 && lv.order[2] == 2 && lv.order[3] == 3);
	CU_ASSERT(lv.left[0] == 2 && lv.left[1] == 1 && lv.left[2] == 1);
	dl_levels_fini(&lv);
	/* classic resume: async devices (1, 3) before the sync ones */
	CU_ASSERT_FATAL(dl_walk_init(&w, 4, 4) == 0);
	dl_phase_walk(&v, &how, &w);
	CU_ASSERT(w.n == 4 && w.v[0] == 1 && w.v[1] == 3 && w.v[2] == 0 && w.v[3] == 2);
	/* complete walks what prepare ran (ids 1 then 3) backward, then the rest backward */
	ps = (struct dl_phase_scheme){ .kind = DL_PK_RESUME, .link_aware = true, .serial = true };
	how.phase = DL_PH_COMPLETE;
	w.prepared[0] = 1;
	w.prepared[1] = 3;
	w.nprepared = 2;
	dl_phase_walk(&v, &how, &w);
	CU_ASSERT(w.n == 4 && w.v[0] == 0 && w.v[1] == 2 && w.v[2] == 3 && w.v[3] == 1);
	/* prepare records the ids it walks */
	ps.kind = DL_PK_SUSPEND;
	how.phase = DL_PH_PREPARE;
	dl_phase_walk(&v, &how, &w);
	CU_ASSERT(w.nprepared == 4 && w.prepared[0] == 3 && w.prepared[3] == 0);
	dl_walk_fini(&w);
}

static void test_v2_handoff_costs(void)
{
	struct dl_costs hw;
	struct tsc *t = make(0, 4, 9, false);
	struct rec rec;
	struct dl_run_result r;
	struct pm_times pt[4];

	for (uint32_t i = 0; i < 4; i++)
		t->dev[i].async = 1;
	fixed(&t->prof[0].lat[DL_LAT_RESUME], 1000000);
	rec_init(&rec);
	CU_ASSERT_EQUAL(run(t, DL_ORDER_KERNEL_ASYNC_V2, 8, &rec, &r), 0);
	for (uint32_t i = 0; i < 4; i++)
		pm_times_after(&rec, 0, i, &pt[i]);
	/* resume: supplier i + 1 before consumer i (the start event is stamped
	 * when the item gets its CPU, before any overhead) */
	for (uint32_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(pt[i].en[DL_PH_RESUME] - pt[i + 1].en[DL_PH_RESUME],
				DL_COST_WAKE_NS + 1000000);
	rec_fini(&rec);
	free(t);

	t = make_independent(3, 1000000);
	t->dev[0].async = 1;
	t->dev[1].async = 0;
	t->link[0] = (struct dl_sc_link){ 1, 0, 0 };
	t->link[1] = (struct dl_sc_link){ 2, 0, 0 };
	t->sc.nlink = 2;
	dl_costs_resolve(&t->sc, &hw);
	rec_init(&rec);
	CU_ASSERT_EQUAL(run(t, DL_ORDER_KERNEL_ASYNC_V2, 8, &rec, &r), 0);
	for (unsigned p = DL_PH_RESUME_NOIRQ; p <= DL_PH_RESUME; p++)
		CU_ASSERT_EQUAL(rec_time(&rec, 2, DL_EV_RESUME_START, p) -
				rec_time(&rec, 0, DL_EV_RESUME_END, p),
				2 * DL_COST_HANDOFF_NS + hw.queue_ns + hw.resume_wake_ns);
	rec_fini(&rec);
	free(t);
}

/*
 * resume_wake_ns is the wake an item pays in resume_noirq, resume_early and
 * resume (sched.h dl_item_wake()), wake_ns everywhere else.  On a chain of
 * four async devices each item of a resume phase is woken once its supplier
 * ends (classic: queued up front and blocked; v2: the root queued up front,
 * the others by the walk, blocked), so consecutive ends are resume_wake_ns
 * plus the 1 ms latency apart, and each resume phase's makespan grows by
 * the four wakes on its chain: 12 x the difference for the op.  Suspend,
 * where items pay wake_ns, is not touched: the same events at the same times.
 */
static void test_resume_wake_cost(void)
{
	static const enum dl_order orders[] = { DL_ORDER_KERNEL_ASYNC, DL_ORDER_KERNEL_ASYNC_V2 };
	const int64_t rw = DL_COST_WAKE_NS + 200000;

	for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
		struct dl_run_result r0, r1;
		struct rec rec0, rec1;
		struct tsc *t = make(0, 4, 9, false);
		size_t s0 = 0, s1 = 0;

		for (uint32_t i = 0; i < 4; i++)
			t->dev[i].async = 1;
		fixed(&t->prof[0].lat[DL_LAT_RESUME], 1000000);
		rec_init(&rec0);
		rec_init(&rec1);
		CU_ASSERT_EQUAL_FATAL(run(t, orders[o], 8, &rec0, &r0), 0);
		t->sc.cost.resume_wake_ns = rw;
		CU_ASSERT_EQUAL_FATAL(run(t, orders[o], 8, &rec1, &r1), 0);
		/* suspend: the very same events at the same times */
		CU_ASSERT_EQUAL(r1.op[1].makespan_ns, r0.op[1].makespan_ns);
		while (s0 < rec0.n && rec0.ev[s0].kind != DL_EV_RESUME_START)
			s0++;
		while (s1 < rec1.n && rec1.ev[s1].kind != DL_EV_RESUME_START)
			s1++;
		CU_ASSERT_EQUAL(s0, s1);
		for (size_t i = 0; i < s0 && i < s1; i++)
			CU_ASSERT(rec0.ev[i].kind == rec1.ev[i].kind && rec0.ev[i].t_ns == rec1.ev[i].t_ns);
		/* resume: each wake on the chain costs resume_wake_ns */
		for (uint32_t i = 0; i < 3; i++) {
			struct pm_times a, b;

			pm_times_after(&rec1, 0, i, &a);
			pm_times_after(&rec1, 0, i + 1, &b);
			CU_ASSERT_EQUAL(a.en[DL_PH_RESUME] - b.en[DL_PH_RESUME], rw + 1000000);
		}
		CU_ASSERT_EQUAL(r1.op[2].makespan_ns - r0.op[2].makespan_ns,
				3 * 4 * (rw - DL_COST_WAKE_NS));
		rec_fini(&rec0);
		rec_fini(&rec1);
		free(t);
	}
}

/* Same scenario and seed: the very same event sequence, for every order. */
/*
 * Work items that sleep on their dependencies are logged: under
 * kernel-async and kernel-async-v2 every wakeup is a work_wake after a
 * work_block of the same device and phase, and the item's callback starts only after its wake;
 * orders that queue work when it is ready never block.
 */
static void test_blocked_work_items_are_logged(void)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(1, 300, 11, false);
		struct rec rec;
		struct dl_run_result r;
		uint32_t n = t->sc.ndev;
		int8_t (*asleep)[DL_PH_COUNT] = calloc(n, sizeof(*asleep));
		uint64_t blocks = 0, wakes = 0, bad = 0;

		rec_init(&rec);

		CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 4, &rec, &r), 0);
		for (size_t i = 0; i < rec.n; i++) {
			const struct dl_event *e = &rec.ev[i];

			if (e->kind == DL_EV_WORK_BLOCK) {
				blocks++;
				bad += asleep[e->dev][e->phase]++ != 0;
			} else if (e->kind == DL_EV_WORK_WAKE) {
				wakes++;
				bad += asleep[e->dev][e->phase]-- != 1;
			} else if (e->kind == DL_EV_SUSPEND_START || e->kind == DL_EV_RESUME_START) {
				bad += asleep[e->dev][e->phase] != 0;
			}
		}
		CU_ASSERT_EQUAL(bad, 0);
		CU_ASSERT_EQUAL(blocks, wakes);
		CU_ASSERT_EQUAL(wakes, r.wakeups);
		/* kernel-async-v2 (6.16+) still blocks (issue 18, item 7) */
		CU_ASSERT(o == DL_ORDER_KERNEL_ASYNC || o == DL_ORDER_KERNEL_ASYNC_V2 ? blocks > 0 :
			  blocks == 0);
		free(asleep);
		rec_fini(&rec);
		free(t);
	}
}

static void test_event_sequences_are_reproducible(void)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t = make(1, 200, 31, false);
		struct rec x, y;
		struct dl_run_result a, b;

		t->op[3] = (struct dl_sc_op){ .kind = DL_OP_SUSPEND, .dev = DL_SC_NONE,
					      .dev2 = DL_SC_NONE };
		t->op[4] = (struct dl_sc_op){ .kind = DL_OP_RESUME, .dev = DL_SC_NONE,
					      .dev2 = DL_SC_NONE };
		t->sc.nop = 5;
		rec_init(&x);
		rec_init(&y);
		CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 3, &x, &a), 0);
		CU_ASSERT_EQUAL(run(t, (enum dl_order)o, 3, &y, &b), 0);
		CU_ASSERT(x.n > 0);
		CU_ASSERT_EQUAL(x.n, y.n);
		CU_ASSERT(x.n == y.n && memcmp(x.ev, y.ev, x.n * sizeof(*x.ev)) == 0);
		CU_ASSERT_EQUAL(a.makespan_ns, b.makespan_ns);
		rec_fini(&x);
		rec_fini(&y);
		free(t);
	}
}

/*
 * The op loop (oploop.c) over a stub backend that records what it is asked
 * to do: suspend -> rollback -> resume, probing blocked across PM ops, racing
 * ops, each op's result and the run's accounting, with no engine behind it.
 */
struct stub {
	bool races;
	unsigned abort_pk, abort_phase;   /* the PM phase that aborts */
	char log[512];
	struct dl_op_result *opr;
	int races_seen;
};

static void stub_log(struct stub *b, const char *fmt, ...)
{
	size_t n = strlen(b->log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->log + n, sizeof(b->log) - n, fmt, ap);
	va_end(ap);
}

static int64_t stub_now(void *be)
{
	(void)be;
	return 5;
}

static int stub_op_begin(void *be, uint32_t i, uint32_t end, struct dl_op_result *opr)
{
	struct stub *b = be;

	b->opr = opr;
	stub_log(b, "op%u-%u ", i, end);
	for (uint32_t j = i + 1; j < end; j++) {
		opr[j - i].makespan_ns = 1000;   /* a racing op, run by the backend */
		opr[j - i].lower_bound_ns = 1;
		b->races_seen++;
	}
	return 0;
}

static void stub_op_end(void *be, uint32_t i, uint32_t end)
{
	(void)end;
	stub_log(be, "end%u", i);
}

static void stub_nop(void *be)
{
	(void)be;
}

static int stub_probe(void *be, unsigned pk)
{
	stub_log(be, "probe%u ", pk);
	return 0;
}

static int stub_pm_phase(void *be, unsigned pk, unsigned phase)
{
	struct stub *b = be;

	stub_log(b, "%c%u ", pk == DL_PK_SUSPEND ? 'S' : 'R', phase);
	b->opr->makespan_ns += 10;
	b->opr->lower_bound_ns += 1;
	return 0;
}

static bool stub_aborted(void *be, int *err, uint32_t *dev)
{
	struct stub *b = be;
	/* the phase just run is the last one logged */
	const char *last = strrchr(b->log, ' ');
	char want[16];

	snprintf(want, sizeof(want), "%c%u", b->abort_pk == DL_PK_SUSPEND ? 'S' : 'R', b->abort_phase);
	while (last > b->log && last[-1] != ' ')
		last--;
	if (strncmp(last, want, strlen(want)) != 0)
		return false;
	*err = -EBUSY;
	*dev = 7;
	return true;
}

static void stub_probing(void *be, bool block)
{
	stub_log(be, "%c ", block ? 'B' : 'U');
}

static int stub_seq(void *be, const struct dl_sc_op *op)
{
	struct stub *b = be;

	stub_log(b, "seq%u ", (unsigned)op->kind);
	b->opr->makespan_ns = 3;
	return 0;
}

static void test_oploop_over_a_stub_backend(void)
{
	struct dl_sc_op ops[3] = {
		{ .kind = DL_OP_SUSPEND }, { .kind = DL_OP_RESUME },
		{ .kind = DL_OP_UNBIND, .concurrent = 1 },
	};
	struct dl_scenario sc = { .op = ops, .nop = 3 };

	for (int races = 0; races < 2; races++) {
		struct stub b = { .races = races, .abort_pk = DL_PK_SUSPEND,
				  .abort_phase = DL_PH_SUSPEND_LATE };
		struct dl_backend_ops ops_tab = {
			.races = races, .now = stub_now, .op_begin = stub_op_begin,
			.op_end = stub_op_end, .lock = stub_nop, .unlock = stub_nop,
			.probe = stub_probe, .pm_phase = stub_pm_phase, .aborted = stub_aborted,
			.probing = stub_probing, .seq = stub_seq,
		};
		struct dl_run_result *r = calloc(1, sizeof(*r));
		bool failed = false;
		char want[512], tail[32] = "";
		int err;

		r->fail_dev = DL_NONE;
		if (!races)
			snprintf(tail, sizeof(tail), "op2-3 seq%u end2", (unsigned)DL_OP_UNBIND);
		err = dl_oploop_run(&ops_tab, &b, NULL, &sc, DL_ORDER_SYNC, r, &failed);
		CU_ASSERT_EQUAL(err, 0);
		/* suspend: prepare, suspend, suspend_late fails; rollback resumes from its mirror */
		snprintf(want, sizeof(want),
			 "op0-1 B S%u S%u S%u R%u R%u R%u U end0op1-%u R%u R%u R%u R%u U end1%s",
			 DL_PH_PREPARE, DL_PH_SUSPEND, DL_PH_SUSPEND_LATE, DL_PH_RESUME_EARLY,
			 DL_PH_RESUME, DL_PH_COMPLETE, races ? 3 : 2, DL_PH_RESUME_NOIRQ,
			 DL_PH_RESUME_EARLY, DL_PH_RESUME, DL_PH_COMPLETE, tail);
		if (strcmp(b.log, want) != 0)
			printf("\n got  %s\n want %s\n", b.log, want);
		CU_ASSERT_STRING_EQUAL(b.log, want);
		CU_ASSERT(failed);
		CU_ASSERT_EQUAL(r->nops, 3);
		CU_ASSERT_EQUAL(r->op[0].kind, DL_OP_SUSPEND);
		CU_ASSERT_EQUAL(r->op[0].err, -EBUSY);
		CU_ASSERT_EQUAL(r->op[0].fail_dev, 7);
		CU_ASSERT_EQUAL(r->op[0].start_ns, 5);
		CU_ASSERT_EQUAL(r->op[0].makespan_ns, 60);
		CU_ASSERT_EQUAL(r->op[1].makespan_ns, 40);
		CU_ASSERT_EQUAL(r->op[2].kind, DL_OP_UNBIND);
		CU_ASSERT_EQUAL(r->op[2].fail_dev, DL_NONE);
		CU_ASSERT_EQUAL(r->fail_dev, 7);
		/* a racing op's makespan overlaps the op it races: not added */
		CU_ASSERT_EQUAL(r->makespan_ns, races ? 100 : 103);
		CU_ASSERT_EQUAL(r->lower_bound_ns, 10 + races);
		CU_ASSERT_EQUAL(b.races_seen, races);
		free(r);
	}
}

/* ---- the scheduler's walks (sim/engine/sched.h) over a fake backend ---- */

/* A backend of four devices as the walks see it: its counters and what was asked of it. */
struct fake_be {
	bool busy[4], may, unattempted[4];
	uint32_t waits[4], queued[4], nqueued, may_calls, fallbacks;
};

static bool fake_facts(const void *ctx, uint32_t y, struct dl_dev_facts *f)
{
	const struct fake_be *b = ctx;

	f->idle = true;
	f->waits = b->waits[y];
	return true;
}

static bool fake_queue(void *ctx, uint32_t y)
{
	struct fake_be *b = ctx;

	b->queued[b->nqueued++] = y;
	return b->unattempted[y];
}

static bool fake_busy(void *ctx, uint32_t y)
{
	return ((struct fake_be *)ctx)->busy[y];
}

/* MAX_WORK's count: none outstanding, or one more than MAX_WORK (b->may); counts the asks */
static uint32_t fake_outstanding(const void *ctx)
{
	struct fake_be *b = (struct fake_be *)ctx;

	b->may_calls++;
	return b->may ? 0 : DL_ASYNC_MAX_WORK + 1;
}

static void fake_sync_fallback(void *ctx)
{
	((struct fake_be *)ctx)->fallbacks++;
}

static bool fake_count_down(void *ctx, uint32_t y)
{
	return --((struct fake_be *)ctx)->waits[y] == 0;
}

static const struct dl_sched_ops fake_ops = {
	.facts = fake_facts, .queue = fake_queue, .defer_busy = fake_busy,
	.outstanding = fake_outstanding, .sync_fallback = fake_sync_fallback,
	.count_down = fake_count_down,
};

/*
 * dl_sched_defer_take(): a busy device is a no-op; a sync driver's probe
 * runs on the walker without asking MAX_WORK; an async one's is queued if
 * MAX_WORK permits, else run on the walker (one refusal asked, counted as
 * a sync fallback); under sync every probe runs on the walker.
 */
static void test_sched_defer_take(void)
{
	struct dl_phase_scheme ka = dl_order_scheme(DL_ORDER_KERNEL_ASYNC, DL_PK_PROBE_DEFER, 0);
	struct dl_phase_scheme sy = dl_order_scheme(DL_ORDER_SYNC, DL_PK_PROBE_DEFER, 0);
	const struct dl_order_policy *pka = dl_order_policy(DL_ORDER_KERNEL_ASYNC);
	const struct dl_order_policy *psy = dl_order_policy(DL_ORDER_SYNC);
	struct fake_be b = { .busy = { true }, .may = true };

	CU_ASSERT_EQUAL(dl_sched_defer_take(&fake_ops, &ka, pka, &b, 0, true), DL_DEFER_SKIP);
	CU_ASSERT_EQUAL(dl_sched_defer_take(&fake_ops, &ka, pka, &b, 1, false), DL_DEFER_RUN);
	CU_ASSERT_EQUAL(b.may_calls, 0);
	CU_ASSERT_EQUAL(dl_sched_defer_take(&fake_ops, &ka, pka, &b, 1, true), DL_DEFER_QUEUE);
	b.may = false;
	CU_ASSERT_EQUAL(dl_sched_defer_take(&fake_ops, &ka, pka, &b, 1, true), DL_DEFER_RUN);
	CU_ASSERT_EQUAL(b.may_calls, 2);
	CU_ASSERT_EQUAL(b.fallbacks, 1);
	CU_ASSERT_EQUAL(dl_sched_defer_take(&fake_ops, &sy, psy, &b, 1, true), DL_DEFER_RUN);
	CU_ASSERT_EQUAL(b.may_calls, 2);
}

/*
 * dl_sched_release(): device 0 releases 1, 2 and 3 (cp-first, where a
 * ready item is queued); 2 still waits for another device; 3 finishes
 * unattempted and is handed back, and the release goes on from there.
 */
static void test_sched_release(void)
{
	struct dl_phase_scheme cp = dl_order_scheme(DL_ORDER_CP_FIRST, DL_PK_SUSPEND, DL_PH_SUSPEND);
	uint32_t off[5] = { 0, 3, 3, 3, 3 }, adj[3] = { 1, 3, 2 }, j = 0, y = DL_NONE;
	struct dl_csr rel = { .off = off, .adj = adj };
	struct fake_be b = { .waits = { 0, 1, 2, 1 }, .unattempted = { [3] = true } };

	CU_ASSERT_TRUE(dl_sched_release(&fake_ops, &cp, &rel, 0, &b, &j, &y));
	CU_ASSERT_EQUAL(y, 3);
	CU_ASSERT_EQUAL(j, 2);
	CU_ASSERT_FALSE(dl_sched_release(&fake_ops, &cp, &rel, 0, &b, &j, &y));
	CU_ASSERT_EQUAL(b.nqueued, 2);
	CU_ASSERT_EQUAL(b.queued[0], 1);
	CU_ASSERT_EQUAL(b.queued[1], 3);
	CU_ASSERT_EQUAL(b.waits[2], 1);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("engine", NULL, NULL);
	CU_add_test(s, "test_orders_respect_links_on_chain", test_orders_respect_links_on_chain);
	CU_add_test(s, "test_sched_defer_take", test_sched_defer_take);
	CU_add_test(s, "test_sched_release", test_sched_release);
	CU_add_test(s, "test_orders_respect_links_on_random_dag", test_orders_respect_links_on_random_dag);
	CU_add_test(s, "test_orders_respect_parents_on_tree", test_orders_respect_parents_on_tree);
	CU_add_test(s, "test_naive_breaks_consumer_first_registration", test_naive_breaks_consumer_first_registration);
	CU_add_test(s, "test_sync_probe_defers_on_consumer_first", test_sync_probe_defers_on_consumer_first);
	CU_add_test(s, "test_lower_bound_equals_makespan_on_chain", test_lower_bound_equals_makespan_on_chain);
	CU_add_test(s, "test_runs_are_reproducible", test_runs_are_reproducible);
	CU_add_test(s, "test_orders_see_identical_work", test_orders_see_identical_work);
	CU_add_test(s, "test_suspend_fault_rolls_back", test_suspend_fault_rolls_back);
	CU_add_test(s, "test_v2_walk_queues_and_items_block", test_v2_walk_queues_and_items_block);
	CU_add_test(s, "test_classic_resume_queues_async_up_front",
		    test_classic_resume_queues_async_up_front);
	CU_add_test(s, "test_prepare_and_complete_walk_the_list_on_main",
		    test_prepare_and_complete_walk_the_list_on_main);
	CU_add_test(s, "test_lower_bound_holds_when_a_probe_fails",
		    test_lower_bound_holds_when_a_probe_fails);
	CU_add_test(s, "test_main_bound_is_a_bound_for_every_order",
		    test_main_bound_is_a_bound_for_every_order);
	CU_add_test(s, "test_graph_changes_between_pm_ops_are_obeyed",
		    test_graph_changes_between_pm_ops_are_obeyed);
	CU_add_test(s, "test_event_sequences_are_reproducible", test_event_sequences_are_reproducible);
	CU_add_test(s, "test_blocked_work_items_are_logged", test_blocked_work_items_are_logged);
	CU_add_test(s, "test_sleeping_callbacks_overlap_beyond_k",
		    test_sleeping_callbacks_overlap_beyond_k);
	CU_add_test(s, "test_cpu_share_competes_for_k", test_cpu_share_competes_for_k);
	CU_add_test(s, "test_worker_pool_is_max_active", test_worker_pool_is_max_active);
	CU_add_test(s, "test_deferred_retry_pays_the_reorder_walk",
		    test_deferred_retry_pays_the_reorder_walk);
	CU_add_test(s, "test_reorder_walks_are_accounted", test_reorder_walks_are_accounted);
	CU_add_test(s, "test_v2_handoff_costs", test_v2_handoff_costs);
	CU_add_test(s, "test_resume_wake_cost", test_resume_wake_cost);
	CU_add_test(s, "test_phase_plan_by_hand", test_phase_plan_by_hand);
	CU_add_test(s, "test_oploop_over_a_stub_backend", test_oploop_over_a_stub_backend);
	CU_add_test(s, "test_serial_phases_main_step", test_serial_phases_main_step);
	CU_add_test(s, "test_kworker_pool_and_async_probe_start",
		    test_kworker_pool_and_async_probe_start);
	CU_add_test(s, "test_guest_phase_gaps", test_guest_phase_gaps);
	CU_add_test(s, "test_kworker_pool_grows_when_none_is_idle",
		    test_kworker_pool_grows_when_none_is_idle);
	CU_add_test(s, "test_kworker_back_takes_the_next_item_without_a_wake",
		    test_kworker_back_takes_the_next_item_without_a_wake);
	CU_add_test(s, "test_deferred_retry_path_cost", test_deferred_retry_path_cost);
	CU_add_test(s, "test_scenario_keys_price_the_dispatch_costs",
		    test_scenario_keys_price_the_dispatch_costs);
	CU_add_test(s, "test_scenario_names_its_cost_profile", test_scenario_names_its_cost_profile);
	CU_add_test(s, "test_retry_storm_hears_the_stop_flag", test_retry_storm_hears_the_stop_flag);
	CU_add_test(s, "test_short_phases_hear_the_stop_flag", test_short_phases_hear_the_stop_flag);
	CU_add_test(s, "test_graph_snapshot_hears_the_stop_flag", test_graph_snapshot_hears_the_stop_flag);
	CU_add_test(s, "test_never_bound_devices_run_no_pm_callbacks",
		    test_never_bound_devices_run_no_pm_callbacks);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	if (tc_cleanup())
		return 1;
	{
		unsigned f = CU_get_number_of_failures();

		CU_cleanup_registry();
		return f ? 1 : 0;
	}
}
