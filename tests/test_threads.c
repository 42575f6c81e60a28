/*
 * test_threads.c - the real-thread engine (threads.c) and the six orders, checked
 * against the ordering rules of LINK-CORE.md, under real concurrency.
 */
#include <CUnit/Basic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/dl_core.h"
#include "sim/engine/threads.h"
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

static int run(struct tsc *t, enum dl_order o, uint32_t workers, struct rec *rec,
	       struct dl_run_result *r)
{
	struct dl_engine_opts eo = { .order = o, .workers = workers, .seed = t->sc.seed };

	if (rec)
		eo.sink = (struct dl_sink){ .emit = rec_emit, .ctx = rec };
	return dl_threads_run(&t->sc, &eo, 0.001, r);
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

static void test_probe_defers_on_consumer_first(void)
{
	struct tsc *t = make(0, 50, 3, false);
	struct dl_run_result r;

	CU_ASSERT_EQUAL(run(t, DL_ORDER_CP_FIRST, 4, NULL, &r), 0);
	CU_ASSERT(r.op[0].probe_defers > 0);
	CU_ASSERT(r.op[0].probe_attempts >= 50 + r.op[0].probe_defers);
	free(t);
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
				t->prof[0].lat[k] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 0, 2000 };
			t->prof[0].lat[DL_LAT_PROBE] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 0, 2000 };
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
	CU_add_test(s, "test_probe_defers_on_consumer_first", test_probe_defers_on_consumer_first);
	CU_add_test(s, "test_suspend_fault_rolls_back", test_suspend_fault_rolls_back);
	CU_add_test(s, "test_stress_seeds", test_stress_seeds);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	{
		unsigned f = CU_get_number_of_failures();

		CU_cleanup_registry();
		return f ? 1 : 0;
	}
}
