/*
 * test_order.c - the rules of sim/order/sched.h, which both backends ask
 * while a phase runs, checked per order on the schemes dl_order_scheme()
 * makes: what becomes of a ready device, what the main walk does with a
 * device, who is queued as a phase starts, what an item pays, what a
 * hand-off queues, and how the levels' barrier moves.
 */
#include <CUnit/Basic.h>
#include <stdint.h>

#include "sim/order/order.h"
#include "sim/order/sched.h"

/* the facts a backend gives the rules about one device; unnamed ones are false */
#define FACTS(...) (&(struct dl_dev_facts){ __VA_ARGS__ })

static struct dl_phase_scheme pm(enum dl_order o, unsigned phase)
{
	return dl_order_scheme(o, DL_PK_SUSPEND, phase);
}

static struct dl_phase_scheme probe(enum dl_order o)
{
	return dl_order_scheme(o, dl_order_probe_kind(o), 0);
}

static void test_ready_action(void)
{
	struct dl_phase_scheme ka = pm(DL_ORDER_KERNEL_ASYNC, DL_PH_SUSPEND);
	struct dl_phase_scheme v2 = pm(DL_ORDER_KERNEL_ASYNC_V2, DL_PH_SUSPEND);
	struct dl_phase_scheme cp = pm(DL_ORDER_CP_FIRST, DL_PH_SUSPEND);
	struct dl_phase_scheme lv = pm(DL_ORDER_LEVELS, DL_PH_SUSPEND);

	/* the main thread's devices are main's under every order */
	CU_ASSERT_EQUAL(dl_ready_action(&ka, FACTS(.on_main = true, .idle = true)), DL_READY_MAIN);
	CU_ASSERT_EQUAL(dl_ready_action(&cp, FACTS(.on_main = true, .idle = true)), DL_READY_MAIN);
	/* classic and v2: queued by the walk (or a hand-off); a blocked item is woken */
	CU_ASSERT_EQUAL(dl_ready_action(&ka, FACTS(.idle = true)), DL_READY_NONE);
	CU_ASSERT_EQUAL(dl_ready_action(&ka, FACTS(.blocked = true)), DL_READY_WAKE);
	CU_ASSERT_EQUAL(dl_ready_action(&v2, FACTS(.idle = true)), DL_READY_NONE);
	CU_ASSERT_EQUAL(dl_ready_action(&v2, FACTS(.blocked = true)), DL_READY_WAKE);
	/* cp-first queues a ready item once; levels holds it until its level is released */
	CU_ASSERT_EQUAL(dl_ready_action(&cp, FACTS(.idle = true)), DL_READY_QUEUE);
	CU_ASSERT_EQUAL(dl_ready_action(&cp, FACTS(.on_main = false)), DL_READY_NONE);
	CU_ASSERT_EQUAL(dl_ready_action(&lv, FACTS(.held = true, .idle = true)), DL_READY_NONE);
	CU_ASSERT_EQUAL(dl_ready_action(&lv, FACTS(.idle = true)), DL_READY_QUEUE);
	/* "held" means nothing without a barrier */
	CU_ASSERT_EQUAL(dl_ready_action(&cp, FACTS(.held = true, .idle = true)), DL_READY_QUEUE);
}

static void test_walk_action(void)
{
	struct dl_phase_scheme ka = pm(DL_ORDER_KERNEL_ASYNC, DL_PH_RESUME);
	struct dl_phase_scheme v2 = pm(DL_ORDER_KERNEL_ASYNC_V2, DL_PH_RESUME);
	struct dl_phase_scheme cp = pm(DL_ORDER_CP_FIRST, DL_PH_RESUME);
	struct dl_phase_scheme sy = pm(DL_ORDER_SYNC, DL_PH_RESUME);

	CU_ASSERT_EQUAL(dl_walk_action(&sy, FACTS(.on_main = true)), DL_WALK_RUN);
	CU_ASSERT_EQUAL(dl_walk_action(&ka, FACTS(.on_main = true)), DL_WALK_RUN);
	CU_ASSERT_EQUAL(dl_walk_action(&ka, FACTS(.on_main = false)), DL_WALK_QUEUE);
	CU_ASSERT_EQUAL(dl_walk_action(&v2, FACTS(.on_main = false)), DL_WALK_QUEUE);
	CU_ASSERT_EQUAL(dl_walk_action(&v2, FACTS(.queued = true)), DL_WALK_SKIP);   /* work_in_progress */
	CU_ASSERT_EQUAL(dl_walk_action(&cp, FACTS(.on_main = false)), DL_WALK_SKIP);  /* queued when ready */
}

static void test_ready_at_start(void)
{
	struct dl_phase_scheme cp = pm(DL_ORDER_CP_FIRST, DL_PH_SUSPEND);
	struct dl_phase_scheme ka = pm(DL_ORDER_KERNEL_ASYNC, DL_PH_SUSPEND);
	struct dl_phase_scheme sp = probe(DL_ORDER_SYNC);

	CU_ASSERT_TRUE(dl_ready_at_start(&cp, FACTS(.waits = 0)));
	CU_ASSERT_FALSE(dl_ready_at_start(&cp, FACTS(.waits = 1)));
	CU_ASSERT_FALSE(dl_ready_at_start(&cp, FACTS(.on_main = true, .waits = 0)));
	CU_ASSERT_FALSE(dl_ready_at_start(&ka, FACTS(.waits = 0)));   /* the walk queues it */
	CU_ASSERT_FALSE(dl_ready_at_start(&sp, FACTS(.waits = 0)));   /* the deferral walk does */
}

static void test_item_pays(void)
{
	struct dl_phase_scheme s;

	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		s = pm((enum dl_order)o, DL_PH_SUSPEND);
		CU_ASSERT_EQUAL(dl_item_pays(&s), DL_PAYS_WAKE);
		CU_ASSERT_EQUAL(dl_item_wake(&s), DL_PAYS_WAKE);
		/* the resume-direction phases that run items pay resume_wake_ns */
		for (unsigned p = DL_PH_RESUME_NOIRQ; p <= DL_PH_RESUME; p++) {
			s = dl_order_scheme((enum dl_order)o, DL_PK_RESUME, p);
			CU_ASSERT_EQUAL(dl_item_pays(&s), DL_PAYS_WAKE_RESUME);
			CU_ASSERT_EQUAL(dl_item_wake(&s), DL_PAYS_WAKE_RESUME);
		}
		/* complete is serial: its wake, if one were paid, is not resume's */
		s = dl_order_scheme((enum dl_order)o, DL_PK_RESUME, DL_PH_COMPLETE);
		CU_ASSERT_EQUAL(dl_item_wake(&s), DL_PAYS_WAKE);
	}
	s = probe(DL_ORDER_CP_FIRST);
	CU_ASSERT_EQUAL(dl_item_pays(&s), DL_PAYS_QUEUE);
	s = probe(DL_ORDER_LEVELS);
	CU_ASSERT_EQUAL(dl_item_pays(&s), DL_PAYS_QUEUE);
	s = probe(DL_ORDER_KERNEL_ASYNC);
	CU_ASSERT_EQUAL(dl_item_pays(&s), DL_PAYS_NONE);
}

static void test_handoff(void)
{
	struct dl_phase_scheme v2 = pm(DL_ORDER_KERNEL_ASYNC_V2, DL_PH_SUSPEND);
	struct dl_phase_scheme cp = pm(DL_ORDER_CP_FIRST, DL_PH_SUSPEND);
	struct dl_phase_scheme ka = pm(DL_ORDER_KERNEL_ASYNC, DL_PH_SUSPEND);
	struct dl_phase_scheme prep = pm(DL_ORDER_KERNEL_ASYNC_V2, DL_PH_PREPARE);

	CU_ASSERT_TRUE(v2.handoff && cp.handoff);
	CU_ASSERT_FALSE(ka.handoff);     /* classic: no hand-off walk */
	CU_ASSERT_FALSE(prep.handoff);   /* dpm_prepare() walks no dependents */
	/* v2 queues every async dependent not queued yet, whatever it still waits for */
	CU_ASSERT_TRUE(dl_handoff_queues(&v2, FACTS(.waits = 3)));
	CU_ASSERT_FALSE(dl_handoff_queues(&v2, FACTS(.queued = true, .waits = 1)));
	CU_ASSERT_FALSE(dl_handoff_queues(&v2, FACTS(.on_main = true, .waits = 1)));
	/* cp-first: those this device makes ready */
	CU_ASSERT_TRUE(dl_handoff_queues(&cp, FACTS(.waits = 1)));
	CU_ASSERT_FALSE(dl_handoff_queues(&cp, FACTS(.waits = 2)));
	CU_ASSERT_TRUE(dl_handoff_after_done(&v2));
	CU_ASSERT_FALSE(dl_handoff_after_done(&cp));
}

/* The barrier's releases, recorded; level 1 loses a device when released (its supplier failed). */
struct barrier_log {
	uint32_t *left;
	uint32_t released[8], n;
};

static void log_release(void *ctx, uint32_t l)
{
	struct barrier_log *b = ctx;

	b->released[b->n++] = l;
	if (l == 1)
		b->left[1]--;
}

static void test_barrier(void)
{
	uint32_t left[4] = { 2, 1, 2, 1 }, cur = 0;
	struct barrier_log b = { .left = left };

	dl_barrier_done(left, 4, &cur, 0, log_release, &b);
	CU_ASSERT_EQUAL(b.n, 0);
	CU_ASSERT_EQUAL(cur, 0);
	/* level 0 done: level 1 is released, finishes at once, and level 2 follows */
	dl_barrier_done(left, 4, &cur, 0, log_release, &b);
	CU_ASSERT_EQUAL(b.n, 2);
	CU_ASSERT_EQUAL(b.released[0], 1);
	CU_ASSERT_EQUAL(b.released[1], 2);
	CU_ASSERT_EQUAL(cur, 2);
	dl_barrier_done(left, 4, &cur, 2, log_release, &b);
	dl_barrier_done(left, 4, &cur, 2, log_release, &b);
	CU_ASSERT_EQUAL(b.n, 3);
	CU_ASSERT_EQUAL(cur, 3);
	/* the last level done: nothing is left to release */
	dl_barrier_done(left, 4, &cur, 3, log_release, &b);
	CU_ASSERT_EQUAL(b.n, 3);
	CU_ASSERT_EQUAL(cur, 3);
}

/*
 * The properties code outside sim/order asks instead of naming an order:
 * each is what the tests it replaced meant (issue 37).
 */
static void test_properties(void)
{
	enum dl_order all[DL_ORDER_COUNT], next;
	uint32_t n, lo = 0;
	char names[256];

	/* "all" orders: every one but the negative control; --kernel 7.3 leaves kernel-async out */
	n = dl_order_link_aware(all, 0);
	CU_ASSERT_EQUAL(n, DL_ORDER_COUNT - 1);
	for (uint32_t i = 0; i < n; i++)
		CU_ASSERT_NOT_EQUAL(all[i], DL_ORDER_NAIVE);
	n = dl_order_link_aware(all, DL_KVER(7, 3));
	CU_ASSERT_EQUAL(n, DL_ORDER_COUNT - 2);
	for (uint32_t i = 0; i < n; i++)
		CU_ASSERT_NOT_EQUAL(all[i], DL_ORDER_KERNEL_ASYNC);
	/* work items: sync and naive run every callback on main */
	for (int o = 0; o < DL_ORDER_COUNT; o++)
		CU_ASSERT_EQUAL(dl_order_uses_items(dl_order_policy((enum dl_order)o)),
				o != DL_ORDER_SYNC && o != DL_ORDER_NAIVE);
	/* the kernel's own schemes, which kernel mode boots */
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		const struct dl_order_policy *p = dl_order_policy((enum dl_order)o);
		bool kernel = o == DL_ORDER_SYNC || o == DL_ORDER_KERNEL_ASYNC ||
			      o == DL_ORDER_KERNEL_ASYNC_V2;

		CU_ASSERT_EQUAL(p->kernel_native, kernel);
		CU_ASSERT_EQUAL(dl_order_research(p),
				o == DL_ORDER_LEVELS || o == DL_ORDER_CP_FIRST);
	}
	dl_order_native_names(names, sizeof(names));
	CU_ASSERT_STRING_EQUAL(names, "sync (6.12-7.3), kernel-async (6.12-6.15), "
			       "kernel-async-v2 (6.16-7.3)");
	/* advise: sync is tried as kernel-async, which 6.16 replaced with v2 */
	CU_ASSERT_EQUAL(dl_order_async_form(DL_ORDER_SYNC), DL_ORDER_KERNEL_ASYNC);
	for (int o = 1; o < DL_ORDER_COUNT; o++)
		CU_ASSERT_EQUAL(dl_order_async_form((enum dl_order)o), (enum dl_order)o);
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		if (dl_order_successor((enum dl_order)o, &next))
			continue;
		lo++;
		CU_ASSERT_EQUAL(o, DL_ORDER_KERNEL_ASYNC);
		CU_ASSERT_EQUAL(next, DL_ORDER_KERNEL_ASYNC_V2);
	}
	CU_ASSERT_EQUAL(lo, 1);
	/* the order a kernel's log is replayed under */
	CU_ASSERT_EQUAL(dl_order_of_kernel(false, 0), DL_ORDER_SYNC);
	CU_ASSERT_EQUAL(dl_order_of_kernel(true, 0), DL_ORDER_KERNEL_ASYNC);
	CU_ASSERT_EQUAL(dl_order_of_kernel(true, DL_KVER(6, 15)), DL_ORDER_KERNEL_ASYNC);
	CU_ASSERT_EQUAL(dl_order_of_kernel(true, DL_KVER(6, 16)), DL_ORDER_KERNEL_ASYNC_V2);
	CU_ASSERT_EQUAL(dl_order_of_kernel(false, DL_KVER(7, 3)), DL_ORDER_SYNC);
}

int main(void)
{
	CU_pSuite s;
	unsigned fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("order", NULL, NULL);
	CU_add_test(s, "test_ready_action", test_ready_action);
	CU_add_test(s, "test_walk_action", test_walk_action);
	CU_add_test(s, "test_ready_at_start", test_ready_at_start);
	CU_add_test(s, "test_item_pays", test_item_pays);
	CU_add_test(s, "test_handoff", test_handoff);
	CU_add_test(s, "test_barrier", test_barrier);
	CU_add_test(s, "test_properties", test_properties);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
