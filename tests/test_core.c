/*
 * test_core.c - unit tests of the link core (sim/core) against
 * shared/LINK-CORE.md, one test per rule.  Kernel references:
 * drivers/base/core.c (device_link_add, device_link_init_status,
 * device_link_put_kref, device_links_driver_bound, __device_links_no_driver,
 * device_links_busy, device_links_driver_cleanup, device_links_purge),
 * drivers/base/dd.c, drivers/base/power/{main,runtime}.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "sim/core/dl_core.h"

/*
 * Allocation failures on demand, for the tests of what the core does when
 * memory runs out: this binary's own malloc, calloc and realloc (as
 * tests/tools/failmalloc.c, linked in rather than preloaded) let every
 * allocation through, except the one fail_after further allocations from
 * when it is set, which fails once.  Not under a sanitizer, which replaces
 * malloc itself: there FAIL_ALLOC is 0 and those tests only say so.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FAIL_ALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define FAIL_ALLOC 0
#endif
#endif
#ifndef FAIL_ALLOC
#define FAIL_ALLOC 1
#endif

static long fail_after = -1;   /* -1: no failure to come */
static unsigned alloc_failed;  /* allocations failed so far */

#if FAIL_ALLOC
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static int alloc_fails(void)
{
	if (fail_after < 0 || fail_after-- > 0)
		return 0;
	alloc_failed++;
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	return alloc_fails() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : __libc_realloc(p, n);
}
#endif

static struct dl_core C;
static struct dl_core *c = &C;

/* Event capture: every refusal must be logged with its reason (invariant 6). */
#define NEV 4096
static struct dl_event evs[NEV];
static unsigned nev;

static void sink_emit(void *ctx, struct dl_event *ev)
{
	(void)ctx;
	if (nev < NEV)
		evs[nev] = *ev;
	nev++;
}

static int setup(void)
{
	nev = 0;
	if (dl_core_init(c, 4, 4))
		return 1;
	dl_core_set_sink(c, (struct dl_sink){ .emit = sink_emit, .ctx = NULL });
	return 0;
}

static int teardown(void)
{
	dl_core_fini(c);
	return 0;
}

static void t_setup(void)
{
	if (setup())
		abort();
}
static void t_teardown(void) { teardown(); }

/* ---- helpers ---------------------------------------------------------- */

static dl_dev_t mk_unreg(dl_dev_t parent)
{
	dl_dev_t d = DL_NONE;

	CU_ASSERT_FATAL(dl_device_new(c, parent, false, &d) == 0);
	return d;
}

static dl_dev_t mk(dl_dev_t parent)
{
	dl_dev_t d = mk_unreg(parent);

	CU_ASSERT_FATAL(dl_device_register(c, d) == 0);
	return d;
}

static void bind(dl_dev_t d)
{
	CU_ASSERT_FATAL(dl_probe_begin(c, d, false) == 0);
	dl_probe_end(c, d, 0);
	CU_ASSERT_FATAL(c->dev[d].state == DL_DEV_DRIVER_BOUND);
}

static void probing(dl_dev_t d)
{
	CU_ASSERT_FATAL(dl_probe_begin(c, d, false) == 0);
	CU_ASSERT_FATAL(c->dev[d].state == DL_DEV_PROBING);
}

static dl_link_t add(dl_dev_t con, dl_dev_t sup, uint32_t flags)
{
	dl_link_t l = DL_NONE;

	CU_ASSERT_FATAL(dl_link_add(c, con, sup, flags, &l) == 0);
	CU_ASSERT_FATAL(l != DL_NONE);
	CU_ASSERT_FATAL(c->link[l].live);
	return l;
}

static unsigned count_kind(unsigned kind)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nev && i < NEV; i++)
		n += evs[i].kind == kind;
	return n;
}

/* Asserts dl_link_add refuses with @reason, creates nothing and logs the refusal. */
static void expect_refused(dl_dev_t con, dl_dev_t sup, uint32_t flags, unsigned reason)
{
	uint32_t live = c->nlink_live;
	unsigned before = nev;
	dl_link_t l = 12345;
	int r = dl_link_add(c, con, sup, flags, &l);

	CU_ASSERT_EQUAL(r, -(int)reason);
	CU_ASSERT_EQUAL(c->nlink_live, live);
	CU_ASSERT(nev > before);
	if (nev > before && nev <= NEV) {
		const struct dl_event *e = &evs[nev - 1];

		CU_ASSERT_EQUAL(e->kind, DL_EV_LINK_REFUSED);
		CU_ASSERT_EQUAL(e->phase, reason);
	}
}

/* Position of @d on dpm_list (walking it, settled), or -1. */
static int dpm_pos(dl_dev_t d)
{
	int i = 0;

	for (dl_dev_t x = dl_dpm_first(c); x != DL_NONE; x = c->dev[x].dpm_next, i++)
		if (x == d)
			return i;
	return -1;
}

static void idvec_expect(const struct dl_idvec *v, const dl_dev_t *want, uint32_t n)
{
	CU_ASSERT_EQUAL_FATAL(v->n, n);
	for (uint32_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(v->v[i], want[i]);
}

static int idvec_index(const struct dl_idvec *v, uint32_t x)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (v->v[i] == x)
			return (int)i;
	return -1;
}

/* ---- device_link_add refusals (rules 1..9) ------------------------------ */

static void test_add_refuses_missing_device(void)
{
	dl_dev_t a = mk(DL_NONE);

	expect_refused(DL_NONE, a, 0, DL_REFUSE_MISSING_DEVICE);
	expect_refused(a, DL_NONE, 0, DL_REFUSE_MISSING_DEVICE);
	expect_refused(a, 77, 0, DL_REFUSE_MISSING_DEVICE);
	expect_refused(77, a, DL_FLAG_STATELESS, DL_REFUSE_MISSING_DEVICE);
}

static void test_add_refuses_self_link(void)
{
	dl_dev_t a = mk(DL_NONE);

	expect_refused(a, a, 0, DL_REFUSE_SELF_LINK);
	expect_refused(a, a, DL_FLAG_STATELESS, DL_REFUSE_SELF_LINK);
}

static void test_add_refuses_invalid_flags(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE);

	expect_refused(b, a, DL_FLAG_MANAGED, DL_REFUSE_INVALID_FLAGS);
	expect_refused(b, a, 1u << 10, DL_REFUSE_INVALID_FLAGS);
	expect_refused(b, a, 1u << 31, DL_REFUSE_INVALID_FLAGS);
	expect_refused(b, a, DL_FLAG_STATELESS | (1u << 12), DL_REFUSE_INVALID_FLAGS);
	/* Each valid flag on its own is accepted (on fresh pairs). */
	add(b, a, DL_FLAG_PM_RUNTIME);
}

static void test_add_refuses_stateless_with_managed_flags(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE);
	const uint32_t bad[] = {
		DL_FLAG_AUTOREMOVE_CONSUMER, DL_FLAG_AUTOREMOVE_SUPPLIER,
		DL_FLAG_AUTOPROBE_CONSUMER, DL_FLAG_SYNC_STATE_ONLY, DL_FLAG_INFERRED,
		DL_FLAG_CYCLE,   /* in the kernel's DL_MANAGED_LINK_FLAGS */
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(b, a, DL_FLAG_STATELESS | bad[i], DL_REFUSE_STATELESS_MANAGED);
	/* STATELESS with the PM flags is fine. */
	dl_link_t l = add(b, a, DL_FLAG_STATELESS | DL_FLAG_PM_RUNTIME);

	CU_ASSERT_FALSE(c->link[l].flags & DL_FLAG_MANAGED);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_NONE);
}

static void test_add_refuses_autoprobe_with_autoremove(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE);

	expect_refused(b, a, DL_FLAG_AUTOPROBE_CONSUMER | DL_FLAG_AUTOREMOVE_CONSUMER,
		       DL_REFUSE_AUTOPROBE_AUTOREMOVE);
	expect_refused(b, a, DL_FLAG_AUTOPROBE_CONSUMER | DL_FLAG_AUTOREMOVE_SUPPLIER,
		       DL_REFUSE_AUTOPROBE_AUTOREMOVE);
	add(b, a, DL_FLAG_AUTOPROBE_CONSUMER);
}

static void test_add_refuses_sync_state_only_with_other_flags(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE);
	const uint32_t bad[] = {
		DL_FLAG_PM_RUNTIME, DL_FLAG_AUTOREMOVE_CONSUMER, DL_FLAG_AUTOREMOVE_SUPPLIER,
		DL_FLAG_AUTOPROBE_CONSUMER,
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(b, a, DL_FLAG_SYNC_STATE_ONLY | bad[i],
			       DL_REFUSE_SYNC_STATE_ONLY_FLAGS);
	/* SYNC_STATE_ONLY with INFERRED is allowed, and gets MANAGED. */
	dl_link_t l = add(b, a, DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED);

	CU_ASSERT_EQUAL(c->link[l].flags,
			DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED | DL_FLAG_MANAGED);
}

static void test_add_refuses_rpm_active_when_supplier_resume_fails(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);

	c->dev[s].rpm_fail = 1;
	expect_refused(k, s, DL_FLAG_PM_RUNTIME | DL_FLAG_RPM_ACTIVE,
		       DL_REFUSE_RPM_RESUME_FAILED);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 0);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_SUSPENDED);
	/* Without RPM_ACTIVE no resume is attempted at add time. */
	add(k, s, DL_FLAG_PM_RUNTIME);
}

/* Kernel: `if (PM_RUNTIME && RPM_ACTIVE && !link) pm_runtime_put(supplier)`. */
static void test_add_refused_rpm_active_releases_supplier_reference(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE);

	add(b, a, 0);
	expect_refused(a, b, DL_FLAG_PM_RUNTIME | DL_FLAG_RPM_ACTIVE,
		       DL_REFUSE_REVERSE_DEPENDENCY);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, b), 0);
}

/*
 * Kernel: the reference `pm_runtime_get_sync(supplier)` took for RPM_ACTIVE
 * is given back (`out:`) whenever no link is returned.  Each allocation
 * dl_link_add() makes is failed in turn: an add that fails with no link made
 * leaves the supplier's usage count as it was (it leaked when the supplier's
 * consumers list could not grow); one whose link was made before the failure
 * (a dpm_list move to record; here none is) leaves the reference to the link.
 */
static void test_add_out_of_memory_gives_back_rpm_reference(void)
{
	unsigned unwound = 0;
	long n;

	if (!FAIL_ALLOC)
		return;   /* a sanitizer's malloc: no failures to inject */
	for (n = 0; n < 64; n++) {
		dl_dev_t s, k;
		dl_link_t l = DL_NONE;
		unsigned failed = alloc_failed;
		int r;

		teardown();
		CU_ASSERT_FATAL(setup() == 0);
		s = mk(DL_NONE);
		k = mk(DL_NONE);
		fail_after = n;
		r = dl_link_add(c, k, s, DL_FLAG_PM_RUNTIME | DL_FLAG_RPM_ACTIVE, &l);
		fail_after = -1;
		if (alloc_failed == failed) {   /* n allocations were all it made */
			CU_ASSERT_EQUAL(r, 0);
			CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 1);
			break;
		}
		CU_ASSERT_EQUAL(r, -ENOMEM);
		l = dl_link_find(c, k, s);
		if (l == DL_NONE) {
			CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 0);
			CU_ASSERT_EQUAL(c->dev[k].suppliers.n, 0);
			CU_ASSERT_EQUAL(c->dev[s].consumers.n, 0);
			CU_ASSERT_EQUAL(c->nlink_live, 0);
			unwound += c->rpm_cnt != NULL;   /* failed past link_rpm_alloc() */
			/* the id the failed add used takes no reference it did not (link_add_new()) */
			CU_ASSERT_EQUAL_FATAL(dl_link_add(c, k, s, DL_FLAG_PM_RUNTIME, &l), 0);
			CU_ASSERT_EQUAL(dl_link_rpm_active(c, l), 0);
			CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 0);
		} else {
			CU_ASSERT_EQUAL(dl_link_rpm_active(c, l), 1);
			CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 1);
		}
	}
	CU_ASSERT(n < 64);
	/* the suppliers and the consumers list's first push each fail once */
	CU_ASSERT(unwound >= 2);
}

static bool always_stop(void *ctx)
{
	(void)ctx;
	return true;
}

/*
 * Ctrl-C during device_link_add()'s walk (dl_core_set_stop()): the walk
 * answers nothing, so no refusal is made up and logged; the link add returns
 * -EINTR and gives back the RPM_ACTIVE reference it took.
 */
static void test_add_stopped_walk_logs_no_refusal(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE);
	unsigned n0;

	add(b, a, 0);                           /* b consumes a: a -> b would be reversed */
	dl_core_set_stop(c, always_stop, NULL);
	c->stop_steps = DL_STOP_POLL_STEPS - 1; /* the walk's first step polls */
	n0 = nev;
	CU_ASSERT_EQUAL(dl_link_add(c, a, b, DL_FLAG_PM_RUNTIME | DL_FLAG_RPM_ACTIVE, NULL), -EINTR);
	for (unsigned i = n0; i < nev && i < NEV; i++)
		CU_ASSERT_NOT_EQUAL(evs[i].kind, DL_EV_LINK_REFUSED);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, b), 0);
	CU_ASSERT_EQUAL(dl_link_find(c, a, b), DL_NONE);
	CU_ASSERT_TRUE(dl_core_poll_stop(c));
	CU_ASSERT_TRUE(dl_dpm_is_topological(c));
}

/* Ctrl-C once dl_dpm_settle() has begun moving devices (a dpm_move seen). */
static unsigned nmoves;

static void count_moves(void *ctx, struct dl_event *ev)
{
	(void)ctx;
	nmoves += ev->kind == DL_EV_DPM_MOVE;
}

static bool stop_once_moving(void *ctx)
{
	(void)ctx;
	return nmoves > 0;
}

/*
 * Each move of a settle is a dpm_move event, and a million of them kept a
 * logged 1M-device run's writer busy for seconds after Ctrl-C: the moves
 * hear the stop within DL_STOP_POLL_STEPS of it.  (dpm_list is then left
 * mid-move; the run ends there.)
 */
static void test_settle_moves_hear_the_stop(void)
{
	enum { KIDS = 3 * DL_STOP_POLL_STEPS };
	dl_dev_t r = mk(DL_NONE), s;

	for (unsigned i = 0; i < KIDS; i++)
		mk(r);
	s = mk(DL_NONE);
	dl_core_set_sink(c, (struct dl_sink){ .emit = count_moves, .ctx = NULL });
	dl_core_set_stop(c, stop_once_moving, NULL);
	nmoves = 0;
	add(r, s, 0);           /* r consumes s: r and its children move behind s */
	dl_dpm_settle(c);
	CU_ASSERT_TRUE(c->stopped);
	CU_ASSERT(nmoves > 0);
	CU_ASSERT(nmoves <= DL_STOP_POLL_STEPS + 1);
}

static void test_add_refuses_unregistered_supplier(void)
{
	dl_dev_t a = mk(DL_NONE), u = mk_unreg(DL_NONE);

	expect_refused(a, u, 0, DL_REFUSE_SUPPLIER_UNREGISTERED);
	expect_refused(a, u, DL_FLAG_STATELESS, DL_REFUSE_SUPPLIER_UNREGISTERED);
	expect_refused(a, u, DL_FLAG_SYNC_STATE_ONLY, DL_REFUSE_SUPPLIER_UNREGISTERED);
}

/* The kernel only checks device_pm_initialized(supplier). */
static void test_add_allows_unregistered_consumer(void)
{
	dl_dev_t s = mk(DL_NONE), u = mk_unreg(DL_NONE);
	dl_link_t l = add(u, s, 0);

	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_DORMANT);
	CU_ASSERT_TRUE(dl_dpm_is_topological(c));
}

static void test_add_refuses_reverse_dependency_via_link(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE);

	add(b, a, 0);                           /* b consumes a */
	expect_refused(a, b, 0, DL_REFUSE_REVERSE_DEPENDENCY);
	expect_refused(a, b, DL_FLAG_STATELESS, DL_REFUSE_REVERSE_DEPENDENCY);
	CU_ASSERT_EQUAL(dl_link_find(c, a, b), DL_NONE);
}

static void test_add_refuses_reverse_dependency_via_parent(void)
{
	dl_dev_t p = mk(DL_NONE), k = mk(p), g = mk(k);

	/* A parent may not consume its child or grandchild. */
	expect_refused(p, k, 0, DL_REFUSE_REVERSE_DEPENDENCY);
	expect_refused(p, g, DL_FLAG_STATELESS, DL_REFUSE_REVERSE_DEPENDENCY);
	expect_refused(k, g, 0, DL_REFUSE_REVERSE_DEPENDENCY);
	/* The other way round is fine. */
	add(g, p, 0);
}

static void test_add_refuses_reverse_dependency_transitive(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE), p = mk(DL_NONE), k = mk(p), x = mk(DL_NONE);

	/* a <- b (b consumes a), b is consumed by p, p's child k is consumed by x */
	add(b, a, 0);
	add(p, b, 0);
	add(x, k, DL_FLAG_STATELESS);
	/* x depends on a through b, p (link), k (child), x (link) */
	CU_ASSERT_TRUE(dl_is_dependent(c, a, x));
	CU_ASSERT_TRUE(dl_kernel_is_dependent(c, a, x, NULL));
	expect_refused(a, x, 0, DL_REFUSE_REVERSE_DEPENDENCY);
	expect_refused(a, k, 0, DL_REFUSE_REVERSE_DEPENDENCY);
	expect_refused(b, x, DL_FLAG_PM_RUNTIME, DL_REFUSE_REVERSE_DEPENDENCY);
	expect_refused(p, x, 0, DL_REFUSE_REVERSE_DEPENDENCY);
	/* unrelated direction is fine */
	add(x, a, 0);
	CU_ASSERT_TRUE(dl_dpm_is_topological(c));
}

static void test_sync_state_only_may_close_cycle(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE), p = mk(DL_NONE), k = mk(p);
	dl_link_t l;

	add(b, a, 0);
	l = add(a, b, DL_FLAG_SYNC_STATE_ONLY);     /* closes a <-> b */
	CU_ASSERT_TRUE(dl_link_is_sync_state_only(c->link[l].flags));
	add(p, k, DL_FLAG_SYNC_STATE_ONLY);         /* parent consumes child */
	/* SSO links take no part in the dependency search ... */
	CU_ASSERT_FALSE(dl_is_dependent(c, b, a));
	CU_ASSERT_FALSE(dl_kernel_is_dependent(c, b, a, NULL));
	/* ... nor in dpm ordering */
	CU_ASSERT_TRUE(dl_dpm_is_topological(c));
	CU_ASSERT(dpm_pos(a) < dpm_pos(b));
}

static void test_add_refuses_sync_state_only_when_consumer_bound(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), q = mk(DL_NONE);

	bind(k);
	expect_refused(k, s, DL_FLAG_SYNC_STATE_ONLY, DL_REFUSE_CONSUMER_BOUND);
	expect_refused(k, s, DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED,
		       DL_REFUSE_CONSUMER_BOUND);
	/* PROBING (and NO_DRIVER) consumers may get one. */
	probing(q);
	add(q, s, DL_FLAG_SYNC_STATE_ONLY);
	/* A normal link to a bound consumer is fine. */
	add(k, s, 0);
}

/* ---- what a successful add produces ----------------------------------- */

static void test_add_sets_managed_unless_stateless(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), j = mk(DL_NONE);
	dl_link_t l1 = add(k, s, 0), l2 = add(j, s, DL_FLAG_STATELESS);

	CU_ASSERT_EQUAL(c->link[l1].flags, DL_FLAG_MANAGED);
	CU_ASSERT_EQUAL(c->link[l1].kref, 1);
	CU_ASSERT_EQUAL(c->link[l1].status, DL_STATE_DORMANT);
	CU_ASSERT_EQUAL(c->link[l2].flags, DL_FLAG_STATELESS);
	CU_ASSERT_EQUAL(c->link[l2].status, DL_STATE_NONE);
	CU_ASSERT_EQUAL(dl_link_find(c, k, s), l1);
	CU_ASSERT_EQUAL(dl_link_find(c, s, k), DL_NONE);
	CU_ASSERT_EQUAL(count_kind(DL_EV_LINK_ADD), 2);
}

static void test_add_autoremove_supplier_wins(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_AUTOREMOVE_CONSUMER | DL_FLAG_AUTOREMOVE_SUPPLIER);

	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_AUTOREMOVE_SUPPLIER);
	CU_ASSERT_FALSE(c->link[l].flags & DL_FLAG_AUTOREMOVE_CONSUMER);
}

/* ---- device_link_init_status: the 4x3 table ----------------------------- */

enum { S_NO, S_PROBING, S_BOUND, S_UNBINDING };

static void init_status_case(int sup_state, int con_state, unsigned want)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l;

	if (sup_state == S_PROBING)
		probing(s);
	else if (sup_state >= S_BOUND)
		bind(s);
	if (con_state == S_PROBING)
		probing(k);
	else if (con_state == S_BOUND)
		bind(k);
	if (sup_state == S_UNBINDING) {
		CU_ASSERT_FALSE(dl_links_busy(c, s));
		CU_ASSERT_EQUAL_FATAL(c->dev[s].state, DL_DEV_UNBINDING);
	}
	l = add(k, s, 0);
	CU_ASSERT_EQUAL(c->link[l].status, want);
	if (c->link[l].status != want)
		fprintf(stderr, "\n  init status %s want %s\n",
			dl_link_state_name(c->link[l].status), dl_link_state_name(want));
}

#define INIT_CASE(name, s, k, want) \
	static void test_init_status_##name(void) { init_status_case(s, k, want); }
INIT_CASE(sup_no_driver_con_no_driver, S_NO, S_NO, DL_STATE_DORMANT)
INIT_CASE(sup_no_driver_con_probing, S_NO, S_PROBING, DL_STATE_DORMANT)
INIT_CASE(sup_no_driver_con_bound, S_NO, S_BOUND, DL_STATE_DORMANT)
INIT_CASE(sup_probing_con_no_driver, S_PROBING, S_NO, DL_STATE_DORMANT)
INIT_CASE(sup_probing_con_probing, S_PROBING, S_PROBING, DL_STATE_CONSUMER_PROBE)
INIT_CASE(sup_probing_con_bound, S_PROBING, S_BOUND, DL_STATE_DORMANT)
INIT_CASE(sup_bound_con_no_driver, S_BOUND, S_NO, DL_STATE_AVAILABLE)
INIT_CASE(sup_bound_con_probing, S_BOUND, S_PROBING, DL_STATE_CONSUMER_PROBE)
INIT_CASE(sup_bound_con_bound, S_BOUND, S_BOUND, DL_STATE_ACTIVE)
INIT_CASE(sup_unbinding_con_no_driver, S_UNBINDING, S_NO, DL_STATE_SUPPLIER_UNBIND)
INIT_CASE(sup_unbinding_con_probing, S_UNBINDING, S_PROBING, DL_STATE_SUPPLIER_UNBIND)
INIT_CASE(sup_unbinding_con_bound, S_UNBINDING, S_BOUND, DL_STATE_SUPPLIER_UNBIND)

/* ---- adding again ------------------------------------------------------ */

static void test_readd_updates_not_duplicates(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l1 = add(k, s, 0), l2 = add(k, s, 0);

	CU_ASSERT_EQUAL(l1, l2);
	CU_ASSERT_EQUAL(c->nlink_live, 1);
	CU_ASSERT_EQUAL(c->dev[k].suppliers.n, 1);
	CU_ASSERT_EQUAL(c->dev[s].consumers.n, 1);
	/* a managed re-add of a managed link takes no extra kref */
	CU_ASSERT_EQUAL(c->link[l1].kref, 1);
}

static void test_readd_stateless_takes_kref_and_sets_stateless(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), j = mk(DL_NONE);
	dl_link_t l = add(k, s, 0), m;

	CU_ASSERT_EQUAL(add(k, s, DL_FLAG_STATELESS), l);
	CU_ASSERT_EQUAL(c->link[l].kref, 2);
	CU_ASSERT_EQUAL(c->link[l].flags, DL_FLAG_MANAGED | DL_FLAG_STATELESS);
	/* a stateless link added twice */
	m = add(j, s, DL_FLAG_STATELESS);
	CU_ASSERT_EQUAL(add(j, s, DL_FLAG_STATELESS), m);
	CU_ASSERT_EQUAL(c->link[m].kref, 2);
	CU_ASSERT_EQUAL(c->link[m].flags, DL_FLAG_STATELESS);
}

static void test_readd_managed_on_stateless_sets_managed(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l;

	bind(s);
	l = add(k, s, DL_FLAG_STATELESS);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_NONE);
	CU_ASSERT_EQUAL(add(k, s, 0), l);
	CU_ASSERT_EQUAL(c->link[l].kref, 2);
	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_MANAGED);
	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_STATELESS);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_AVAILABLE);
	/* the link now tracks drivers: the consumer's probe moves it */
	bind(k);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_ACTIVE);
}

static void test_readd_autoremove_consumer_becomes_supplier(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), j = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_AUTOREMOVE_CONSUMER), m;

	CU_ASSERT_EQUAL(add(k, s, DL_FLAG_AUTOREMOVE_SUPPLIER), l);
	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_AUTOREMOVE_SUPPLIER);
	CU_ASSERT_FALSE(c->link[l].flags & DL_FLAG_AUTOREMOVE_CONSUMER);
	/* the lifetime only grows: AUTOREMOVE_CONSUMER does not shorten it again */
	CU_ASSERT_EQUAL(add(k, s, DL_FLAG_AUTOREMOVE_CONSUMER), l);
	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_AUTOREMOVE_SUPPLIER);
	CU_ASSERT_FALSE(c->link[l].flags & DL_FLAG_AUTOREMOVE_CONSUMER);
	/* and AUTOREMOVE_SUPPLIER does not appear on a link without autoremove */
	m = add(j, s, 0);
	CU_ASSERT_EQUAL(add(j, s, DL_FLAG_AUTOREMOVE_SUPPLIER), m);
	CU_ASSERT_FALSE(c->link[m].flags &
			(DL_FLAG_AUTOREMOVE_SUPPLIER | DL_FLAG_AUTOREMOVE_CONSUMER));
}

static void test_readd_without_autoremove_clears_both(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), j = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_AUTOREMOVE_CONSUMER);
	dl_link_t m = add(j, s, DL_FLAG_AUTOREMOVE_SUPPLIER);

	CU_ASSERT_EQUAL(add(k, s, 0), l);
	CU_ASSERT_EQUAL(add(j, s, DL_FLAG_PM_RUNTIME), m);
	CU_ASSERT_FALSE(c->link[l].flags &
			(DL_FLAG_AUTOREMOVE_SUPPLIER | DL_FLAG_AUTOREMOVE_CONSUMER));
	CU_ASSERT_FALSE(c->link[m].flags &
			(DL_FLAG_AUTOREMOVE_SUPPLIER | DL_FLAG_AUTOREMOVE_CONSUMER));
	CU_ASSERT_TRUE(c->link[m].flags & DL_FLAG_PM_RUNTIME);
}

static void test_readd_non_inferred_clears_inferred(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), j = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_INFERRED), m = add(j, s, 0);

	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_INFERRED);
	CU_ASSERT_EQUAL(add(k, s, DL_FLAG_INFERRED), l);
	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_INFERRED);
	CU_ASSERT_EQUAL(add(k, s, 0), l);
	CU_ASSERT_FALSE(c->link[l].flags & DL_FLAG_INFERRED);
	/* an inferred add does not make a driver-created link inferred */
	CU_ASSERT_EQUAL(add(j, s, DL_FLAG_INFERRED), m);
	CU_ASSERT_FALSE(c->link[m].flags & DL_FLAG_INFERRED);
}

static void test_readd_pm_runtime_and_rpm_active(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l = add(k, s, 0);

	CU_ASSERT_EQUAL(add(k, s, DL_FLAG_PM_RUNTIME | DL_FLAG_RPM_ACTIVE), l);
	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_PM_RUNTIME);
	CU_ASSERT_FALSE(c->link[l].flags & DL_FLAG_RPM_ACTIVE);
	CU_ASSERT_EQUAL(dl_link_rpm_active(c, l), 1);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 1);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_ACTIVE);
}

static void test_readd_sync_state_only_upgrade_loses_sso_and_reorders(void)
{
	dl_dev_t k = mk(DL_NONE), kc = mk(k), s = mk(DL_NONE);
	dl_link_t l;

	/* consumer k (with child kc) registered before its supplier s */
	l = add(k, s, DL_FLAG_SYNC_STATE_ONLY);
	CU_ASSERT(dpm_pos(k) < dpm_pos(s));          /* SSO: no reorder */
	CU_ASSERT_FALSE(dl_is_dependent(c, s, k));
	CU_ASSERT_EQUAL(add(k, s, 0), l);
	CU_ASSERT_FALSE(c->link[l].flags & DL_FLAG_SYNC_STATE_ONLY);
	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_MANAGED);
	CU_ASSERT_EQUAL(c->link[l].kref, 1);
	CU_ASSERT(dpm_pos(s) < dpm_pos(k));
	CU_ASSERT(dpm_pos(k) < dpm_pos(kc));
	CU_ASSERT_TRUE(dl_dpm_is_topological(c));
	/* from now on the link takes part in cycle checks */
	CU_ASSERT_TRUE(dl_is_dependent(c, s, k));
	CU_ASSERT_TRUE(dl_is_dependent(c, s, kc));
	expect_refused(s, kc, 0, DL_REFUSE_REVERSE_DEPENDENCY);
}

static void test_readd_stateless_on_sync_state_only_reorders(void)
{
	dl_dev_t k = mk(DL_NONE), s = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_SYNC_STATE_ONLY);

	/* kernel: SSO link gains STATELESS -> goto reorder */
	CU_ASSERT_EQUAL(add(k, s, DL_FLAG_STATELESS), l);
	CU_ASSERT_FALSE(dl_link_is_sync_state_only(c->link[l].flags));
	CU_ASSERT_EQUAL(c->link[l].kref, 2);
	CU_ASSERT(dpm_pos(s) < dpm_pos(k));
	CU_ASSERT_TRUE(dl_dpm_is_topological(c));
}

/* dpm_list, settled, is exactly @want. */
static void dpm_expect(const dl_dev_t *want, uint32_t n)
{
	uint32_t i = 0;

	for (dl_dev_t x = dl_dpm_first(c); x != DL_NONE; x = c->dev[x].dpm_next, i++)
		CU_ASSERT(i < n && x == want[i]);
	CU_ASSERT_EQUAL(i, n);
}

/*
 * device_link_add() reorders for every new link other than SYNC_STATE_ONLY,
 * even when the supplier already precedes the consumer: k and its child go
 * behind x, which was registered after them.
 */
static void test_add_reorders_even_when_supplier_precedes(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), kc = mk(k), x = mk(DL_NONE);

	add(k, s, 0);
	dpm_expect((dl_dev_t[]){ s, x, k, kc }, 4);
	add(x, s, DL_FLAG_SYNC_STATE_ONLY);          /* SSO: no reorder */
	dpm_expect((dl_dev_t[]){ s, x, k, kc }, 4);
	add(x, s, DL_FLAG_STATELESS);                /* SSO -> STATELESS: reorder */
	dpm_expect((dl_dev_t[]){ s, k, kc, x }, 4);
}

/*
 * device_reorder_to_tail() moves in pre-order: the device, its children in
 * order, then its consumers; a device reached twice moves twice, and the last
 * move sets its place.  r's children a and b keep their order, and z (a
 * consumer of both) ends behind b, where the walk through b leaves it.
 */
static void test_reorder_pre_order_last_move_wins(void)
{
	dl_dev_t r = mk(DL_NONE), a = mk(r), b = mk(r), z = mk(DL_NONE), s;

	add(z, a, 0);
	add(z, b, 0);
	s = mk(DL_NONE);
	add(r, s, 0);                                /* s after r: everything moves */
	dpm_expect((dl_dev_t[]){ s, r, a, b, z }, 5);
	/* and a consumer of a that b also feeds ends behind b's walk */
	dl_dev_t y = mk(DL_NONE);

	add(y, b, 0);
	add(y, a, 0);                                /* y: consumer of a (2nd) and of b (1st) */
	add(r, s, DL_FLAG_PM_RUNTIME);               /* re-add: no reorder */
	dpm_expect((dl_dev_t[]){ s, r, a, b, z, y }, 6);
	CU_ASSERT_EQUAL(dl_reorder_to_tail(c, r), 0);
	/* r, a, z, y (via a), b, z, y (via b): z before y, both after b */
	dpm_expect((dl_dev_t[]){ s, r, a, b, z, y }, 6);
	CU_ASSERT_EQUAL(dl_reorder_to_tail(c, a), 0);
	/* a, z, y */
	dpm_expect((dl_dev_t[]){ s, r, b, a, z, y }, 6);
}

/*
 * dl_core_trim() gives back the storage of settled moves and leaves moves
 * still pending, and every later move, as they would be without it.
 */
static void test_trim_keeps_pending_moves_frees_settled_storage(void)
{
	dl_dev_t r = mk(DL_NONE), a = mk(r), b = mk(r), z = mk(DL_NONE), s;

	add(z, a, 0);
	add(z, b, 0);
	s = mk(DL_NONE);
	add(r, s, 0);                                /* pending: r's walk */
	CU_ASSERT(c->dpm_pending.n > 0);
	dl_core_trim(c);
	dpm_expect((dl_dev_t[]){ s, r, a, b, z }, 5);
	CU_ASSERT(c->settle_post.cap > 0);
	dl_core_trim(c);
	CU_ASSERT_EQUAL(c->dpm_pending.cap, 0);
	CU_ASSERT_EQUAL(c->settle_post.cap, 0);
	CU_ASSERT_EQUAL(c->settle_stack.cap, 0);
	CU_ASSERT_PTR_NULL(c->dpm_stamp);
	CU_ASSERT_EQUAL(dl_reorder_to_tail(c, a), 0);
	dpm_expect((dl_dev_t[]){ s, r, b, a, z }, 5);
}

/*
 * deferred_probe_work_func() moves each device it retries, with all that
 * depends on it, to the tail of dpm_list (device_pm_move_to_tail()) before
 * bus_probe_device(), and says so in the log.
 */
static void test_deferred_retry_moves_device_to_tail(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), kc = mk(k), x = mk(DL_NONE), y;

	add(x, s, DL_FLAG_SYNC_STATE_ONLY);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), 0);
	dl_probe_end(c, k, -DL_EPROBE_DEFER);
	y = mk(DL_NONE);
	dpm_expect((dl_dev_t[]){ s, k, kc, x, y }, 5);
	dl_deferred_enable(c);
	nev = 0;
	CU_ASSERT_EQUAL(dl_deferred_next(c), k);
	CU_ASSERT_EQUAL(count_kind(DL_EV_DEFERRED_RETRY), 1);
	CU_ASSERT_EQUAL(evs[0].kind, DL_EV_DEFERRED_RETRY);
	CU_ASSERT_EQUAL(evs[0].dev, k);
	dpm_expect((dl_dev_t[]){ s, x, y, k, kc }, 5);
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
}

/* ---- device_link_del ---------------------------------------------------- */

static void test_del_drops_one_kref(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_STATELESS);

	CU_ASSERT_EQUAL(add(k, s, DL_FLAG_STATELESS), l);
	CU_ASSERT_EQUAL(dl_link_del(c, l), 0);
	CU_ASSERT_TRUE(c->link[l].live);
	CU_ASSERT_EQUAL(c->link[l].kref, 1);
	CU_ASSERT_EQUAL(dl_link_find(c, k, s), l);
	CU_ASSERT_EQUAL(dl_link_del(c, l), 0);
	CU_ASSERT_FALSE(c->link[l].live);
	CU_ASSERT_EQUAL(dl_link_find(c, k, s), DL_NONE);
	CU_ASSERT_EQUAL(c->nlink_live, 0);
	CU_ASSERT_EQUAL(count_kind(DL_EV_LINK_DEL), 1);
	CU_ASSERT_NOT_EQUAL(dl_link_del(c, l), 0);   /* already gone */
}

/* device_link_put_kref(): managed link, consumer registered -> WARN, kept. */
static void test_del_refuses_managed_link_of_registered_consumer(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), j = mk(DL_NONE);
	dl_link_t l = add(k, s, 0), m = add(j, s, 0);

	CU_ASSERT_NOT_EQUAL(dl_link_del(c, l), 0);
	CU_ASSERT_TRUE(c->link[l].live);
	CU_ASSERT_EQUAL(c->link[l].kref, 1);
	/* stateless + managed: the STATELESS reference can be dropped */
	CU_ASSERT_EQUAL(add(j, s, DL_FLAG_STATELESS), m);
	CU_ASSERT_EQUAL(dl_link_del(c, m), 0);
	CU_ASSERT_TRUE(c->link[m].live);
	CU_ASSERT_EQUAL(c->link[m].kref, 1);
}

static void test_del_managed_link_of_unregistered_consumer(void)
{
	dl_dev_t s = mk(DL_NONE), u = mk_unreg(DL_NONE);
	dl_link_t l = add(u, s, 0);

	CU_ASSERT_EQUAL(dl_link_del(c, l), 0);
	CU_ASSERT_FALSE(c->link[l].live);
	CU_ASSERT_EQUAL(c->dev[s].consumers.n, 0);
}

/* ---- probe -------------------------------------------------------------- */

static void test_probe_defers_when_supplier_not_available(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l = add(k, s, 0);

	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), -DL_EPROBE_DEFER);
	CU_ASSERT_EQUAL(c->dev[k].state, DL_DEV_NO_DRIVER);
	CU_ASSERT_TRUE(c->dev[k].deferred);
	CU_ASSERT_EQUAL(c->probe_defers, 1);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_DORMANT);
	/* supplier probing: still not AVAILABLE */
	probing(s);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), -DL_EPROBE_DEFER);
	CU_ASSERT_EQUAL(c->probe_defers, 2);
	dl_probe_end(c, s, 0);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_AVAILABLE);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), 0);
}

/*
 * A retry storm: every retried device defers again and a bind triggers
 * before the active list drains.  The list must keep only what is queued,
 * not every entry ever appended.
 */
static void test_deferred_active_list_does_not_grow_in_a_storm(void)
{
	dl_dev_t d[100];
	uint32_t seen = 0;

	for (int i = 0; i < 100; i++) {
		d[i] = mk(DL_NONE);
		dl_deferred_add(c, d[i]);
	}
	dl_deferred_enable(c);
	for (int round = 0; round < 10000; round++) {
		dl_dev_t x = dl_deferred_next(c);

		CU_ASSERT_NOT_EQUAL_FATAL(x, DL_NONE);
		seen += x == d[0];
		dl_deferred_add(c, x);  /* deferred again */
		dl_deferred_trigger(c); /* some other device bound */
		CU_ASSERT_FATAL(c->deferred_active.n - c->deferred_active_head == 100);
		CU_ASSERT_FATAL(c->deferred_active.n <= 201);
	}
	/* round robin: each device retried once per 100 rounds */
	CU_ASSERT_EQUAL(seen, 100);
}

/*
 * A bind takes a device off the deferred lists (driver_deferred_probe_del()),
 * and listing it again puts it at the tail (list_add_tail()): after the
 * devices listed meanwhile, not back at its old place.
 */
static void test_deferred_relisted_device_goes_to_the_tail(void)
{
	dl_dev_t a = mk(DL_NONE), b = mk(DL_NONE);

	dl_deferred_add(c, a);
	bind(a);
	dl_deferred_add(c, b);
	dl_deferred_add(c, a);      /* listed again, as a supplier's rebind does after an unbind */
	dl_deferred_enable(c);
	CU_ASSERT_EQUAL(dl_deferred_next(c), b);
	CU_ASSERT_EQUAL(dl_deferred_next(c), a);
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
	/* the same once the old entry has moved to the active list */
	CU_ASSERT_EQUAL_FATAL(dl_release_driver(c, a, NULL), 0);
	dl_deferred_add(c, a);
	dl_deferred_trigger(c);
	bind(a);
	CU_ASSERT_EQUAL_FATAL(dl_release_driver(c, a, NULL), 0);
	dl_deferred_add(c, b);
	dl_deferred_add(c, a);
	dl_deferred_trigger(c);
	CU_ASSERT_EQUAL(dl_deferred_next(c), b);
	CU_ASSERT_EQUAL(dl_deferred_next(c), a);
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
}

static void test_probe_ignores_sync_state_only_and_stateless_suppliers(void)
{
	dl_dev_t s1 = mk(DL_NONE), s2 = mk(DL_NONE), k = mk(DL_NONE);

	add(k, s1, DL_FLAG_SYNC_STATE_ONLY);
	add(k, s2, DL_FLAG_STATELESS);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), 0);
	CU_ASSERT_EQUAL(c->probe_defers, 0);
}

static void test_probe_begin_moves_links_to_consumer_probe(void)
{
	dl_dev_t s1 = mk(DL_NONE), s2 = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l1, l2;

	bind(s1);
	bind(s2);
	l1 = add(k, s1, 0);
	l2 = add(k, s2, DL_FLAG_AUTOREMOVE_CONSUMER);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), 0);
	CU_ASSERT_EQUAL(c->dev[k].state, DL_DEV_PROBING);
	CU_ASSERT_EQUAL(c->link[l1].status, DL_STATE_CONSUMER_PROBE);
	CU_ASSERT_EQUAL(c->link[l2].status, DL_STATE_CONSUMER_PROBE);
}

static void test_probe_success_links_and_state(void)
{
	dl_dev_t s = mk(DL_NONE), m = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t ls, lk;

	bind(s);
	ls = add(m, s, 0);          /* m consumes s */
	lk = add(k, m, 0);          /* k consumes m */
	CU_ASSERT_EQUAL(c->link[lk].status, DL_STATE_DORMANT);
	CU_ASSERT_EQUAL(dl_probe_begin(c, m, false), 0);
	dl_probe_end(c, m, 0);
	CU_ASSERT_EQUAL(c->dev[m].state, DL_DEV_DRIVER_BOUND);
	CU_ASSERT_EQUAL(c->link[ls].status, DL_STATE_ACTIVE);
	CU_ASSERT_EQUAL(c->link[lk].status, DL_STATE_AVAILABLE);
	bind(k);
	CU_ASSERT_EQUAL(c->link[lk].status, DL_STATE_ACTIVE);
}

static void test_probe_success_retriggers_deferred(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), x = mk(DL_NONE);

	add(k, s, 0);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), -DL_EPROBE_DEFER);
	/* before late_initcall a bind does not retrigger */
	bind(x);
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
	dl_deferred_enable(c);
	CU_ASSERT_EQUAL(dl_deferred_next(c), k);
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
	/* retried too early: deferred again */
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), -DL_EPROBE_DEFER);
	CU_ASSERT_EQUAL(c->probe_defers, 2);
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
	/* the supplier binds: k comes back */
	bind(s);
	CU_ASSERT_EQUAL(dl_deferred_next(c), k);
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), 0);
	dl_probe_end(c, k, 0);
	CU_ASSERT_EQUAL(c->dev[k].state, DL_DEV_DRIVER_BOUND);
}

/* dl_deferred_peek() names the devices dl_deferred_next() will return, in order. */
static void test_deferred_peek_follows_the_walk(void)
{
	enum { N = 40 };        /* past the retry walk's deepest prefetch (24 ahead) */
	dl_dev_t s = mk(DL_NONE), k[N];

	for (int i = 0; i < N; i++) {
		k[i] = mk(DL_NONE);
		add(k[i], s, 0);
		CU_ASSERT_EQUAL(dl_probe_begin(c, k[i], false), -DL_EPROBE_DEFER);
	}
	CU_ASSERT_EQUAL(dl_deferred_peek(c, 0), DL_NONE);   /* not triggered yet */
	dl_deferred_enable(c);
	CU_ASSERT_EQUAL(dl_deferred_peek(c, 0), k[0]);
	CU_ASSERT_EQUAL(dl_deferred_peek(c, N - 1), k[N - 1]);
	CU_ASSERT_EQUAL(dl_deferred_peek(c, N), DL_NONE);
	for (int i = 0; i < N; i++) {
		CU_ASSERT_EQUAL(dl_deferred_next(c), k[i]);
		CU_ASSERT_EQUAL(dl_deferred_peek(c, 0), i + 1 < N ? k[i + 1] : DL_NONE);
		CU_ASSERT_EQUAL(dl_deferred_peek(c, 7), i + 8 < N ? k[i + 8] : DL_NONE);
	}
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
}

static void test_probe_success_autoprobe_queues_consumer(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), j = mk(DL_NONE);

	dl_deferred_enable(c);
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
	add(k, s, DL_FLAG_AUTOPROBE_CONSUMER);
	add(j, s, 0);
	bind(s);
	CU_ASSERT_EQUAL(dl_deferred_next(c), k);     /* j was never deferred */
	CU_ASSERT_EQUAL(dl_deferred_next(c), DL_NONE);
}

static void test_probe_failure_autoremove_consumer_deleted_others_available(void)
{
	dl_dev_t s1 = mk(DL_NONE), s2 = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l1, l2;

	bind(s1);
	bind(s2);
	l1 = add(k, s1, DL_FLAG_AUTOREMOVE_CONSUMER);
	l2 = add(k, s2, 0);
	CU_ASSERT_EQUAL_FATAL(dl_probe_begin(c, k, false), 0);
	dl_probe_end(c, k, -EIO);
	CU_ASSERT_EQUAL(c->dev[k].state, DL_DEV_NO_DRIVER);
	CU_ASSERT_FALSE(c->link[l1].live);
	CU_ASSERT_EQUAL(dl_link_find(c, k, s1), DL_NONE);
	CU_ASSERT_TRUE(c->link[l2].live);
	CU_ASSERT_EQUAL(c->link[l2].status, DL_STATE_AVAILABLE);
	/* it can probe again */
	bind(k);
	CU_ASSERT_EQUAL(c->link[l2].status, DL_STATE_ACTIVE);
}

static void test_probe_success_drops_sync_state_only_links(void)
{
	dl_dev_t s = mk(DL_NONE), t = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l1 = add(k, s, DL_FLAG_SYNC_STATE_ONLY);
	dl_link_t l2 = add(k, t, DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED);

	bind(t);
	bind(k);
	CU_ASSERT_FALSE(c->link[l1].live);
	CU_ASSERT_FALSE(c->link[l2].live);
	CU_ASSERT_EQUAL(c->dev[k].suppliers.n, 0);
	CU_ASSERT_EQUAL(c->dev[s].consumers.n, 0);
}

/* ---- unbind ------------------------------------------------------------- */

static void test_unbind_supplier_unbinds_consumers_first(void)
{
	dl_dev_t s = mk(DL_NONE), c1 = mk(DL_NONE), c2 = mk(DL_NONE);
	struct dl_idvec order = { 0 };
	const dl_dev_t want[] = { c2, c1, s };

	add(c1, s, 0);
	add(c2, c1, 0);
	bind(s);
	bind(c1);
	bind(c2);
	CU_ASSERT_EQUAL(dl_release_driver(c, s, &order), 0);
	idvec_expect(&order, want, 3);
	CU_ASSERT_EQUAL(c->dev[s].state, DL_DEV_NO_DRIVER);
	CU_ASSERT_EQUAL(c->dev[c1].state, DL_DEV_NO_DRIVER);
	CU_ASSERT_EQUAL(c->dev[c2].state, DL_DEV_NO_DRIVER);
	dl_idvec_free(&order);
}

static void test_unbind_supplier_diamond_each_once(void)
{
	dl_dev_t s = mk(DL_NONE), a = mk(DL_NONE), b = mk(DL_NONE), d = mk(DL_NONE),
		 x = mk(DL_NONE);
	struct dl_idvec order = { 0 };

	add(a, s, 0);
	add(b, s, 0);
	add(d, a, 0);
	add(d, b, 0);
	bind(s);
	bind(a);
	bind(b);
	bind(d);
	bind(x);
	CU_ASSERT_EQUAL(dl_release_driver(c, s, &order), 0);
	CU_ASSERT_EQUAL_FATAL(order.n, 4);
	CU_ASSERT(idvec_index(&order, d) < idvec_index(&order, a));
	CU_ASSERT(idvec_index(&order, d) < idvec_index(&order, b));
	CU_ASSERT_EQUAL(idvec_index(&order, s), 3);
	CU_ASSERT(idvec_index(&order, a) >= 0 && idvec_index(&order, b) >= 0);
	CU_ASSERT_EQUAL(c->dev[x].state, DL_DEV_DRIVER_BOUND);  /* unrelated */
	dl_idvec_free(&order);
}

static void test_unbind_supplier_autoremove_supplier_deleted_others_dormant(void)
{
	dl_dev_t s = mk(DL_NONE), c1 = mk(DL_NONE), c2 = mk(DL_NONE), c3 = mk(DL_NONE);
	struct dl_idvec order = { 0 };
	dl_link_t l1 = add(c1, s, DL_FLAG_AUTOREMOVE_SUPPLIER);
	dl_link_t l2 = add(c2, s, 0);
	dl_link_t l3 = add(c3, s, 0);     /* consumer never bound: link AVAILABLE */

	bind(s);
	bind(c1);
	bind(c2);
	CU_ASSERT_EQUAL(c->link[l3].status, DL_STATE_AVAILABLE);
	CU_ASSERT_EQUAL(dl_release_driver(c, s, &order), 0);
	CU_ASSERT_EQUAL(order.n, 3);
	CU_ASSERT_EQUAL(idvec_index(&order, s), 2);
	CU_ASSERT_FALSE(c->link[l1].live);
	CU_ASSERT_TRUE(c->link[l2].live);
	CU_ASSERT_EQUAL(c->link[l2].status, DL_STATE_DORMANT);
	CU_ASSERT_EQUAL(c->link[l3].status, DL_STATE_DORMANT);
	CU_ASSERT_EQUAL(c->dev[c1].state, DL_DEV_NO_DRIVER);
	CU_ASSERT_EQUAL(c->dev[c2].state, DL_DEV_NO_DRIVER);
	/* consumers cannot re-probe until the supplier is back */
	CU_ASSERT_EQUAL(dl_probe_begin(c, c2, false), -DL_EPROBE_DEFER);
	bind(s);
	CU_ASSERT_EQUAL(c->link[l2].status, DL_STATE_AVAILABLE);
	bind(c2);
	dl_idvec_free(&order);
}

static void test_unbind_consumer_autoremove_consumer_deleted_others_available(void)
{
	dl_dev_t s1 = mk(DL_NONE), s2 = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec order = { 0 };
	const dl_dev_t want[] = { k };
	dl_link_t l1, l2;

	bind(s1);
	bind(s2);
	l1 = add(k, s1, DL_FLAG_AUTOREMOVE_CONSUMER);
	l2 = add(k, s2, 0);
	bind(k);
	CU_ASSERT_EQUAL(c->link[l1].status, DL_STATE_ACTIVE);
	CU_ASSERT_EQUAL(dl_release_driver(c, k, &order), 0);
	idvec_expect(&order, want, 1);
	CU_ASSERT_FALSE(c->link[l1].live);
	CU_ASSERT_EQUAL(c->link[l2].status, DL_STATE_AVAILABLE);
	CU_ASSERT_EQUAL(c->dev[k].state, DL_DEV_NO_DRIVER);
	CU_ASSERT_EQUAL(c->dev[s1].state, DL_DEV_DRIVER_BOUND);
	CU_ASSERT_EQUAL(c->dev[s2].state, DL_DEV_DRIVER_BOUND);
	dl_idvec_free(&order);
}

static void test_unbind_stateless_links_do_not_cascade(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec order = { 0 };
	const dl_dev_t want[] = { s };
	dl_link_t l = add(k, s, DL_FLAG_STATELESS);

	bind(s);
	bind(k);
	CU_ASSERT_EQUAL(dl_release_driver(c, s, &order), 0);
	idvec_expect(&order, want, 1);
	CU_ASSERT_EQUAL(c->dev[k].state, DL_DEV_DRIVER_BOUND);
	CU_ASSERT_TRUE(c->link[l].live);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_NONE);
	dl_idvec_free(&order);
}

static void test_unbind_busy_while_consumer_bound(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), j = mk(DL_NONE);
	dl_link_t lk = add(k, s, 0), lj = add(j, s, 0);

	bind(s);
	bind(k);
	/* device_links_busy(): an ACTIVE link makes it busy */
	CU_ASSERT_TRUE(dl_links_busy(c, s));
	CU_ASSERT_EQUAL(c->dev[s].state, DL_DEV_UNBINDING);
	/* unbind_consumers marks the link SUPPLIER_UNBIND and hands out k */
	dl_dev_t x = dl_links_unbind_next(c, s);
	CU_ASSERT_EQUAL(x, k);
	CU_ASSERT_EQUAL(c->link[lk].status, DL_STATE_SUPPLIER_UNBIND);
	(void)lj;
}

static void test_unbind_waits_for_consumer_probe(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l = add(k, s, 0);

	bind(s);
	probing(k);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_CONSUMER_PROBE);
	/* in one go: refused while the consumer probes, nothing changed */
	CU_ASSERT_EQUAL(dl_release_driver(c, s, NULL), -EBUSY);
	CU_ASSERT_EQUAL(c->dev[s].state, DL_DEV_DRIVER_BOUND);
	/* step by step, as an engine does it */
	CU_ASSERT_TRUE(dl_links_busy(c, s));       /* CONSUMER_PROBE is busy */
	CU_ASSERT_EQUAL(c->dev[s].state, DL_DEV_UNBINDING);
	CU_ASSERT_EQUAL(dl_links_unbind_next(c, s), DL_UNBIND_WAIT_PROBE);
	dl_probe_end(c, k, 0);                     /* the probe in flight finishes */
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_ACTIVE);
	CU_ASSERT_EQUAL(dl_links_unbind_next(c, s), k);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_SUPPLIER_UNBIND);
	CU_ASSERT_EQUAL(dl_release_driver(c, k, NULL), 0);
	CU_ASSERT_EQUAL(dl_links_unbind_next(c, s), DL_NONE);
	CU_ASSERT_FALSE(dl_links_busy(c, s));
	dl_driver_cleanup(c, s);
	CU_ASSERT_EQUAL(c->dev[s].state, DL_DEV_NO_DRIVER);
	CU_ASSERT_EQUAL(c->dev[k].state, DL_DEV_NO_DRIVER);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_DORMANT);
}

/* ---- CYCLE and sync_state() --------------------------------------------- */

/* Item 8 of issue 18: CYCLE is in DL_MANAGED_LINK_FLAGS, so device_link_add() takes it. */
static void test_add_accepts_cycle_flag(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), k2 = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_CYCLE);

	CU_ASSERT_EQUAL(c->link[l].flags, DL_FLAG_CYCLE | DL_FLAG_MANAGED);
	/* fw_devlink's cycle link: SYNC_STATE_ONLY with the INFERRED and CYCLE markers */
	l = add(k2, s, DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED | DL_FLAG_CYCLE);
	CU_ASSERT_TRUE(dl_link_is_sync_state_only(c->link[l].flags));
	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_CYCLE);
}

/*
 * Item 9: device_links_check_suppliers() skips only links with the
 * SYNC_STATE_ONLY bit.  A cycle link (SSO|INFERRED|CYCLE) gates nothing;
 * once a driver's plain add clears SSO it gates like any other, CYCLE or not.
 */
static void test_cycle_does_not_exempt_probe(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE), k2 = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED | DL_FLAG_CYCLE);

	CU_ASSERT_FALSE(dl_link_gates_probe(&c->link[l]));
	CU_ASSERT_EQUAL(add(k, s, 0), l);
	CU_ASSERT_FALSE(c->link[l].flags & DL_FLAG_SYNC_STATE_ONLY);
	CU_ASSERT_TRUE(c->link[l].flags & DL_FLAG_CYCLE);
	CU_ASSERT_TRUE(dl_link_gates_probe(&c->link[l]));
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), -DL_EPROBE_DEFER);
	/* a link marked afterwards (dl_link_mark_cycle) gates as well */
	l = add(k2, s, DL_FLAG_INFERRED);
	CU_ASSERT_EQUAL(dl_link_mark_cycle(c, l), 0);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k2, false), -DL_EPROBE_DEFER);
	bind(s);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), 0);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k2, false), 0);
}

/*
 * device_links_check_suppliers() makes every managed link that did not
 * defer CONSUMER_PROBE, a SYNC_STATE_ONLY one whatever its status; a failed
 * probe takes it back to DORMANT while its supplier has no driver
 * (__device_links_no_driver(), which WARNs unless the link is SSO).
 */
static void test_probe_marks_sync_state_only_links_consumer_probe(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED);

	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_DORMANT);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), 0);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_CONSUMER_PROBE);
	dl_probe_end(c, k, -EIO);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_DORMANT);
}

static void test_sync_state_waits_for_late_boot(void)
{
	dl_dev_t s = mk(DL_NONE);

	bind(s);
	CU_ASSERT_FALSE(c->dev[s].state_synced);
	CU_ASSERT_EQUAL(count_kind(DL_EV_SYNC_STATE), 0);
	dl_sync_state_resume(c);
	CU_ASSERT_TRUE(c->dev[s].state_synced);
	CU_ASSERT_EQUAL(count_kind(DL_EV_SYNC_STATE), 1);
}

static void test_sync_state_waits_for_all_managed_consumers(void)
{
	dl_dev_t s = mk(DL_NONE), k1 = mk(DL_NONE), k2 = mk(DL_NONE), k3 = mk(DL_NONE);

	add(k1, s, 0);
	add(k2, s, DL_FLAG_SYNC_STATE_ONLY);     /* SSO consumers count here */
	add(k3, s, DL_FLAG_STATELESS);           /* stateless ones do not */
	bind(s);
	dl_sync_state_resume(c);
	CU_ASSERT_FALSE(c->dev[s].state_synced);
	bind(k1);
	CU_ASSERT_FALSE(c->dev[s].state_synced);
	bind(k2);
	CU_ASSERT_TRUE(c->dev[s].state_synced);
	CU_ASSERT_EQUAL(count_kind(DL_EV_SYNC_STATE), 3);   /* k1, k2 have none; s once */
	bind(k3);
	CU_ASSERT_EQUAL(count_kind(DL_EV_SYNC_STATE), 4);
}

/* ---- device_del --------------------------------------------------------- */

static void test_device_del_purges_links(void)
{
	dl_dev_t s = mk(DL_NONE), d = mk(DL_NONE), k = mk(DL_NONE), t = mk(DL_NONE);
	uint32_t count;
	dl_link_t l1 = add(d, s, 0);
	dl_link_t l2 = add(d, t, DL_FLAG_STATELESS);
	dl_link_t l3 = add(k, d, 0);
	dl_link_t l4 = add(k, d, DL_FLAG_STATELESS);   /* same link, kref 2 */

	CU_ASSERT_EQUAL(l3, l4);
	bind(s);
	bind(d);
	bind(k);
	CU_ASSERT_EQUAL(dl_release_driver(c, d, NULL), 0);
	count = c->dpm_count;
	CU_ASSERT_EQUAL(dl_device_del(c, d), 0);
	CU_ASSERT_FALSE(c->link[l1].live);
	CU_ASSERT_FALSE(c->link[l2].live);
	CU_ASSERT_FALSE(c->link[l3].live);
	CU_ASSERT_EQUAL(c->nlink_live, 0);
	CU_ASSERT_EQUAL(c->dev[s].consumers.n, 0);
	CU_ASSERT_EQUAL(c->dev[t].consumers.n, 0);
	CU_ASSERT_EQUAL(c->dev[k].suppliers.n, 0);
	CU_ASSERT_FALSE(c->dev[d].registered);
	CU_ASSERT_EQUAL(dpm_pos(d), -1);
	CU_ASSERT_EQUAL(c->dpm_count, count - 1);
	CU_ASSERT_TRUE(dl_dpm_is_topological(c));
	/* links to a removed device are refused */
	expect_refused(k, d, 0, DL_REFUSE_SUPPLIER_UNREGISTERED);
}

/* ---- system sleep readiness --------------------------------------------- */

/* dl_core_presize(): vectors start in the pool, outgrow it intact, and are freed once. */
static void test_presize_vectors_outgrow_the_pool(void)
{
	dl_dev_t a = mk_unreg(DL_NONE), b = mk_unreg(DL_NONE), d[4];
	uint32_t nsup[6] = { 0 }, ncon[6] = { 0 }, nchild[6] = { 0 };

	for (int i = 0; i < 4; i++)
		d[i] = mk_unreg(a);
	nchild[a] = 1;          /* room for one child of the four */
	ncon[b] = 2;            /* and two of b's four consumer links */
	CU_ASSERT_EQUAL_FATAL(dl_core_presize(c, nsup, ncon, nchild), 0);
	CU_ASSERT_TRUE(c->dev[a].children.cap & DL_IDVEC_POOLED);
	CU_ASSERT_EQUAL(c->dev[b].consumers.cap, 2u | DL_IDVEC_POOLED);
	CU_ASSERT_EQUAL(dl_core_presize(c, nsup, ncon, nchild), -EINVAL);
	CU_ASSERT_FATAL(dl_device_register(c, a) == 0 && dl_device_register(c, b) == 0);
	for (int i = 0; i < 4; i++) {
		CU_ASSERT_FATAL(dl_device_register(c, d[i]) == 0);
		CU_ASSERT_EQUAL_FATAL(dl_link_add(c, d[i], b, 0, NULL), 0);
	}
	CU_ASSERT_FALSE(c->dev[a].children.cap & DL_IDVEC_POOLED);
	CU_ASSERT_FALSE(c->dev[b].consumers.cap & DL_IDVEC_POOLED);
	CU_ASSERT_EQUAL(c->dev[a].children.n, 4);
	CU_ASSERT_EQUAL(c->dev[b].consumers.n, 4);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(c->dev[a].children.v[i], d[i]);
		CU_ASSERT_EQUAL(c->link[c->dev[b].consumers.v[i]].consumer, d[i]);
	}
	/* and the probe order still follows the links */
	CU_ASSERT_EQUAL(dl_probe_begin(c, d[0], false), -DL_EPROBE_DEFER);
	bind(a);
	bind(b);
	bind(d[3]);
}

static void test_pm_suspend_waits_for_children_and_consumers(void)
{
	dl_dev_t x = mk(DL_NONE), kid = mk(x), k = mk(DL_NONE);
	uint8_t done[8] = { 0 };

	add(k, x, 0);
	bind(x);                                     /* link AVAILABLE: counts */
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, x, true), 2);
	CU_ASSERT_FALSE(dl_pm_ready(c, x, true, done));
	done[kid] = 1;
	CU_ASSERT_FALSE(dl_pm_ready(c, x, true, done));
	done[kid] = 0;
	done[k] = 1;
	CU_ASSERT_FALSE(dl_pm_ready(c, x, true, done));
	done[kid] = 1;
	CU_ASSERT_TRUE(dl_pm_ready(c, x, true, done));
	/* leaves wait for nothing in suspend */
	memset(done, 0, sizeof(done));
	CU_ASSERT_TRUE(dl_pm_ready(c, kid, true, done));
	CU_ASSERT_TRUE(dl_pm_ready(c, k, true, done));
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, k, true), 0);
	/* x waits for nothing in resume */
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, x, false), 0);
	CU_ASSERT_TRUE(dl_pm_ready(c, x, false, done));
}

static void test_pm_resume_waits_for_parent_and_suppliers(void)
{
	dl_dev_t p = mk(DL_NONE), s = mk(DL_NONE), k = mk(p);
	uint8_t done[8] = { 0 };

	bind(s);
	add(k, s, DL_FLAG_AUTOREMOVE_SUPPLIER);
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, k, false), 2);
	CU_ASSERT_FALSE(dl_pm_ready(c, k, false, done));
	done[p] = 1;
	CU_ASSERT_FALSE(dl_pm_ready(c, k, false, done));
	done[s] = 1;
	CU_ASSERT_TRUE(dl_pm_ready(c, k, false, done));
	done[p] = 0;
	CU_ASSERT_FALSE(dl_pm_ready(c, k, false, done));
	/* and k waits for nobody when suspending */
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, k, true), 0);
}

static void test_pm_dormant_link_does_not_count(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	uint8_t done[4] = { 0 };
	dl_link_t l = add(k, s, 0);

	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_DORMANT);
	CU_ASSERT_FALSE(dl_link_counts_for_pm(c, &c->link[l]));
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, s, true), 0);
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, k, false), 0);
	CU_ASSERT_TRUE(dl_pm_ready(c, s, true, done));
	CU_ASSERT_TRUE(dl_pm_ready(c, k, false, done));
}

/*
 * Item 10 of issue 18: dpm_wait_for_suppliers()/consumers() skip only
 * DORMANT links in 6.12 (and 6.16), so an AVAILABLE SYNC_STATE_ONLY link
 * orders suspend and resume; from 6.18 ("PM: sleep: Do not wait on
 * SYNC_STATE_ONLY device links", 7.3's main.c) it never does.
 */
static void test_pm_sync_state_only_link_counts_until_6_18(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	uint8_t done[4] = { 0 };
	dl_link_t l;

	CU_ASSERT_EQUAL(c->kver, DL_KVER(6, 12));
	bind(s);
	l = add(k, s, DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED);
	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_AVAILABLE);
	CU_ASSERT_TRUE(dl_link_counts_for_pm(c, &c->link[l]));
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, s, true), 1);
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, k, false), 1);
	CU_ASSERT_FALSE(dl_pm_ready(c, s, true, done));
	CU_ASSERT_EQUAL(dl_core_set_kernel(c, DL_KVER(6, 17)), 0);
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, s, true), 1);
	CU_ASSERT_EQUAL(dl_core_set_kernel(c, DL_KVER(6, 18)), 0);
	CU_ASSERT_FALSE(dl_link_counts_for_pm(c, &c->link[l]));
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, s, true), 0);
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, k, false), 0);
	CU_ASSERT_EQUAL(dl_core_set_kernel(c, DL_KVER(7, 3)), 0);
	CU_ASSERT_TRUE(dl_pm_ready(c, s, true, done));
	CU_ASSERT_TRUE(dl_pm_ready(c, k, false, done));
	/* a SYNC_STATE_ONLY link a STATELESS add upgraded is no longer one: it counts */
	CU_ASSERT_EQUAL(add(k, s, DL_FLAG_STATELESS), l);
	CU_ASSERT_TRUE(dl_link_counts_for_pm(c, &c->link[l]));
}

/* A DORMANT SYNC_STATE_ONLY link counts in no version. */
static void test_pm_dormant_sync_state_only_link_never_counts(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l = add(k, s, DL_FLAG_SYNC_STATE_ONLY);

	CU_ASSERT_EQUAL(c->link[l].status, DL_STATE_DORMANT);
	CU_ASSERT_FALSE(dl_link_counts_for_pm(c, &c->link[l]));
	CU_ASSERT_EQUAL(dl_core_set_kernel(c, DL_KVER(7, 3)), 0);
	CU_ASSERT_FALSE(dl_link_counts_for_pm(c, &c->link[l]));
}

/* --kernel VERSION: MAJOR.MINOR from 6.12 to 7.3. */
static void test_kernel_version_parse(void)
{
	uint32_t v = 0;
	char buf[16];

	CU_ASSERT_EQUAL(dl_kver_parse("6.12", &v), 0);
	CU_ASSERT_EQUAL(v, DL_KVER(6, 12));
	CU_ASSERT_EQUAL(dl_kver_parse("7.3", &v), 0);
	CU_ASSERT_EQUAL(v, DL_KVER(7, 3));
	CU_ASSERT_EQUAL(dl_kver_parse("6.18", &v), 0);
	CU_ASSERT(DL_KVER(6, 9) < DL_KVER(6, 12) && DL_KVER(6, 255) < DL_KVER(7, 0));
	dl_kver_format(v, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "6.18");
	CU_ASSERT_EQUAL(dl_kver_parse("6.1", &v), -ERANGE);
	CU_ASSERT_EQUAL(dl_kver_parse("7.4", &v), -ERANGE);
	CU_ASSERT_EQUAL(dl_kver_parse("6.12.1", &v), -EINVAL);
	CU_ASSERT_EQUAL(dl_kver_parse("6", &v), -EINVAL);
	CU_ASSERT_EQUAL(dl_kver_parse("6.", &v), -EINVAL);
	CU_ASSERT_EQUAL(dl_kver_parse("x.12", &v), -EINVAL);
	CU_ASSERT_EQUAL(dl_kver_parse("6.-1", &v), -EINVAL);
	CU_ASSERT_EQUAL(dl_kver_parse("", &v), -EINVAL);
	CU_ASSERT_EQUAL(dl_core_set_kernel(c, DL_KVER(6, 11)), -ERANGE);
	CU_ASSERT_EQUAL(c->kver, DL_KVER(6, 12));
}

static void test_pm_stateless_link_counts(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	uint8_t done[4] = { 0 };
	dl_link_t l = add(k, s, DL_FLAG_STATELESS);

	CU_ASSERT_TRUE(dl_link_counts_for_pm(c, &c->link[l]));
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, s, true), 1);
	CU_ASSERT_EQUAL(dl_pm_wait_count(c, k, false), 1);
	CU_ASSERT_FALSE(dl_pm_ready(c, s, true, done));
	CU_ASSERT_FALSE(dl_pm_ready(c, k, false, done));
	done[k] = 1;
	CU_ASSERT_TRUE(dl_pm_ready(c, s, true, done));
	done[s] = 1;
	CU_ASSERT_TRUE(dl_pm_ready(c, k, false, done));
}

/* ---- runtime PM ------------------------------------------------------- */

static void test_rpm_get_resumes_supplier_first(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec res = { 0 };
	const dl_dev_t want[] = { s, k };
	dl_link_t l = add(k, s, DL_FLAG_PM_RUNTIME);

	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_SUSPENDED);
	CU_ASSERT_EQUAL(dl_rpm_get(c, k, &res), 0);
	idvec_expect(&res, want, 2);
	CU_ASSERT_EQUAL(dl_link_rpm_active(c, l), 1);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_ACTIVE);
	CU_ASSERT_EQUAL(c->dev[k].rpm_status, DL_RPM_ACTIVE);
	dl_idvec_free(&res);
}

static void test_rpm_without_pm_runtime_flag_does_not_resume_supplier(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec res = { 0 };
	const dl_dev_t want[] = { k };

	add(k, s, 0);
	CU_ASSERT_EQUAL(dl_rpm_get(c, k, &res), 0);
	idvec_expect(&res, want, 1);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_SUSPENDED);
	dl_idvec_free(&res);
}

static void test_rpm_supplier_stays_active_while_consumer_holds_reference(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec v = { 0 };

	add(k, s, DL_FLAG_PM_RUNTIME);
	CU_ASSERT_EQUAL(dl_rpm_get(c, k, NULL), 0);
	CU_ASSERT_EQUAL(dl_rpm_get(c, s, NULL), 0);
	CU_ASSERT_EQUAL(dl_rpm_put(c, s, &v), 0);
	CU_ASSERT_EQUAL(v.n, 0);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_ACTIVE);
	dl_idvec_free(&v);
}

static void test_rpm_put_consumer_suspends_supplier(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec v = { 0 };
	const dl_dev_t want[] = { k, s };
	dl_link_t l = add(k, s, DL_FLAG_PM_RUNTIME);

	CU_ASSERT_EQUAL(dl_rpm_get(c, k, NULL), 0);
	CU_ASSERT_EQUAL(dl_rpm_put(c, k, &v), 0);
	idvec_expect(&v, want, 2);
	CU_ASSERT_EQUAL(dl_link_rpm_active(c, l), 0);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_SUSPENDED);
	CU_ASSERT_EQUAL(c->dev[k].rpm_status, DL_RPM_SUSPENDED);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 0);
	dl_idvec_free(&v);
}

/* ---- runtime PM around a probe attempt (module context, dd.c __driver_probe_device) ---- */

/* Every device so far enables runtime PM in its probe. */
static void rpm_users_all(void)
{
	uint8_t u[16];

	memset(u, 1, sizeof(u));
	CU_ASSERT_FATAL(c->ndev <= sizeof(u));
	CU_ASSERT_FATAL(dl_core_set_rpm_users(c, u, c->ndev) == 0);
}

static void test_probe_rpm_resumes_suppliers_chain_first(void)
{
	dl_dev_t t = mk(DL_NONE), s = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec v = { 0 }, idle = { 0 };
	const dl_dev_t want[] = { t, s }, want_susp[] = { s, t };

	add(s, t, DL_FLAG_PM_RUNTIME);
	add(k, s, DL_FLAG_PM_RUNTIME);
	rpm_users_all();
	bind(t);
	bind(s);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_SUSPENDED);   /* enabled, never resumed */
	CU_ASSERT_EQUAL(dl_probe_rpm_get(c, k, &v), 1);
	idvec_expect(&v, want, 2);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 1);
	bind(k);
	/* the put only drops the count: pm_wq suspends later (dl_rpm_idle) */
	dl_probe_rpm_put(c, k, &idle);
	CU_ASSERT_EQUAL(idle.n, 1);
	CU_ASSERT_EQUAL(idle.n ? idle.v[0] : DL_NONE, s);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_ACTIVE);
	v.n = 0;
	dl_rpm_idle(c, s, &v);
	idvec_expect(&v, want_susp, 2);
	CU_ASSERT_EQUAL(c->dev[t].rpm_status, DL_RPM_SUSPENDED);
	dl_idvec_free(&v);
	dl_idvec_free(&idle);
}

static void test_probe_rpm_attempt_that_defers_still_resumes(void)
{
	dl_dev_t s1 = mk(DL_NONE), s2 = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec v = { 0 }, idle = { 0 };
	dl_link_t l2;

	add(k, s1, DL_FLAG_PM_RUNTIME);
	l2 = add(k, s2, DL_FLAG_PM_RUNTIME);
	rpm_users_all();
	bind(s1);
	/* s2 is not bound: the attempt will defer, but s1 is resumed first */
	CU_ASSERT_EQUAL(dl_probe_rpm_get(c, k, &v), 1);
	CU_ASSERT_EQUAL(v.n, 1);
	CU_ASSERT_EQUAL(v.n ? v.v[0] : DL_NONE, s1);
	/* s2's runtime PM is disabled: -EACCES, ignored, its count kept */
	CU_ASSERT_EQUAL(c->dev[s2].rpm_status, DL_RPM_SUSPENDED);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s2), 1);
	CU_ASSERT_TRUE(c->link[l2].preactivated);
	CU_ASSERT_EQUAL(dl_probe_begin(c, k, false), -DL_EPROBE_DEFER);
	dl_probe_rpm_put(c, k, &idle);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s2), 0);
	CU_ASSERT_FALSE(c->link[l2].preactivated);
	CU_ASSERT_EQUAL(idle.n, 1);   /* s1 only: s2 was never active */
	dl_idvec_free(&v);
	dl_idvec_free(&idle);
}

static void test_probe_rpm_resumes_parent_and_skips_non_users(void)
{
	dl_dev_t p = mk(DL_NONE), s = mk(DL_NONE), k = mk(p);
	struct dl_idvec v = { 0 };
	uint8_t u[3] = { 0 };

	add(k, s, DL_FLAG_PM_RUNTIME);
	u[p] = 1;   /* s's driver never enables runtime PM */
	CU_ASSERT_FATAL(dl_core_set_rpm_users(c, u, 3) == 0);
	bind(p);
	bind(s);
	CU_ASSERT_EQUAL(dl_probe_rpm_get(c, k, &v), 1);
	CU_ASSERT_EQUAL(v.n, 1);
	CU_ASSERT_EQUAL(v.n ? v.v[0] : DL_NONE, p);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_SUSPENDED);
	dl_idvec_free(&v);
}

static void test_probe_rpm_nothing_without_users_or_when_bound(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec v = { 0 };

	add(k, s, DL_FLAG_PM_RUNTIME);
	bind(s);
	CU_ASSERT_EQUAL(dl_probe_rpm_get(c, k, &v), 0);   /* the legacy model */
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 0);
	rpm_users_all();
	bind(k);
	CU_ASSERT_EQUAL(dl_probe_rpm_get(c, k, &v), 0);   /* not free to probe */
	CU_ASSERT_EQUAL(v.n, 0);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 0);
	dl_idvec_free(&v);
}

static void test_rpm_supplier_suspends_when_last_consumer_suspends(void)
{
	dl_dev_t s = mk(DL_NONE), k1 = mk(DL_NONE), k2 = mk(DL_NONE);
	struct dl_idvec v = { 0 };

	add(k1, s, DL_FLAG_PM_RUNTIME);
	add(k2, s, DL_FLAG_PM_RUNTIME);
	CU_ASSERT_EQUAL(dl_rpm_get(c, k1, NULL), 0);
	CU_ASSERT_EQUAL(dl_rpm_get(c, k2, NULL), 0);
	CU_ASSERT_EQUAL(dl_rpm_put(c, k1, &v), 0);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_ACTIVE);
	CU_ASSERT_EQUAL(idvec_index(&v, s), -1);
	CU_ASSERT_EQUAL(dl_rpm_put(c, k2, &v), 0);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_SUSPENDED);
	CU_ASSERT(idvec_index(&v, k2) >= 0 && idvec_index(&v, k2) < idvec_index(&v, s));
	dl_idvec_free(&v);
}

static void test_rpm_active_at_add_counts_as_one_reference(void)
{
	dl_dev_t s = mk(DL_NONE), k = mk(DL_NONE);
	struct dl_idvec v = { 0 };
	dl_link_t l = add(k, s, DL_FLAG_PM_RUNTIME | DL_FLAG_RPM_ACTIVE);

	CU_ASSERT_EQUAL(dl_link_rpm_active(c, l), 1);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 1);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_ACTIVE);
	/* the supplier's own get/put does not let it suspend */
	CU_ASSERT_EQUAL(dl_rpm_get(c, s, NULL), 0);
	CU_ASSERT_EQUAL(dl_rpm_put(c, s, &v), 0);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_ACTIVE);
	/* the consumer's suspend drops every reference (rpm_put_suppliers) */
	CU_ASSERT_EQUAL(dl_rpm_get(c, k, NULL), 0);
	CU_ASSERT_EQUAL(dl_link_rpm_active(c, l), 2);
	CU_ASSERT_EQUAL(dl_rpm_put(c, k, &v), 0);
	CU_ASSERT_EQUAL(dl_link_rpm_active(c, l), 0);
	CU_ASSERT_EQUAL(c->dev[s].rpm_status, DL_RPM_SUSPENDED);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s), 0);
	dl_idvec_free(&v);
}

/* Kernel __rpm_callback(): rpm_get_suppliers() fails -> rpm_put_suppliers(). */
static void test_rpm_get_failure_drops_supplier_references(void)
{
	dl_dev_t s1 = mk(DL_NONE), s2 = mk(DL_NONE), k = mk(DL_NONE);
	dl_link_t l1 = add(k, s1, DL_FLAG_PM_RUNTIME);
	dl_link_t l2 = add(k, s2, DL_FLAG_PM_RUNTIME);

	c->dev[s2].rpm_fail = 1;
	CU_ASSERT(dl_rpm_get(c, k, NULL) < 0);
	CU_ASSERT_EQUAL(c->dev[k].rpm_status, DL_RPM_SUSPENDED);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, k), 0);
	CU_ASSERT_EQUAL(dl_link_rpm_active(c, l2), 0);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s2), 0);
	/* the reference taken on s1 before s2 failed is given back */
	CU_ASSERT_EQUAL(dl_link_rpm_active(c, l1), 0);
	CU_ASSERT_EQUAL(dl_rpm_usage(c, s1), 0);
}

/* ---- dpm_list ---------------------------------------------------------- */

static void test_dpm_consumer_registered_before_supplier_moves_after(void)
{
	dl_dev_t k = mk(DL_NONE), kc = mk(k), d = mk(DL_NONE), s = mk(DL_NONE);

	add(d, k, 0);                      /* d consumes k: already in order */
	CU_ASSERT(dpm_pos(k) < dpm_pos(s));
	add(k, s, 0);
	CU_ASSERT(dpm_pos(s) < dpm_pos(k));
	CU_ASSERT(dpm_pos(k) < dpm_pos(kc));
	CU_ASSERT(dpm_pos(k) < dpm_pos(d));
	CU_ASSERT_TRUE(dl_dpm_is_topological(c));
	CU_ASSERT_EQUAL(c->dpm_count, 4);
}

/*
 * A link whose consumer precedes its supplier moves nothing on dpm_list
 * until the list is read: the kernel's moves are applied (and logged) once,
 * when settled.  The cycle check's own order follows the link at once: the
 * reverse link is refused before any settle.
 */
static void test_dpm_backward_link_moves_when_list_is_read(void)
{
	dl_dev_t k = mk(DL_NONE), kc = mk(k), s = mk(DL_NONE), t = mk(DL_NONE);
	unsigned moves;

	dl_dpm_settle(c);
	moves = count_kind(DL_EV_DPM_MOVE);
	add(k, s, 0);                      /* k (and its child kc) must follow s */
	add(kc, t, 0);
	CU_ASSERT_EQUAL(count_kind(DL_EV_DPM_MOVE), moves);
	CU_ASSERT_TRUE(dl_topo_is_topological(c));
	expect_refused(s, kc, 0, DL_REFUSE_REVERSE_DEPENDENCY);
	expect_refused(t, kc, 0, DL_REFUSE_REVERSE_DEPENDENCY);
	CU_ASSERT_EQUAL(count_kind(DL_EV_DPM_MOVE), moves);
	/* read: the kernel's order, s t k kc, each of k and kc moved once */
	CU_ASSERT(dpm_pos(s) < dpm_pos(t));
	CU_ASSERT(dpm_pos(t) < dpm_pos(k));
	CU_ASSERT(dpm_pos(k) < dpm_pos(kc));
	CU_ASSERT_EQUAL(count_kind(DL_EV_DPM_MOVE), moves + 2);
	CU_ASSERT_TRUE(dl_dpm_is_topological(c));
}

static void test_dpm_topological_after_adds(void)
{
	enum { N = 24 };
	dl_dev_t d[N];
	unsigned seed = 12345;

	for (int i = 0; i < N; i++)
		d[i] = mk(i >= 4 && i % 3 == 0 ? d[i / 2] : DL_NONE);
	for (int n = 0; n < 200; n++) {
		seed = seed * 1103515245u + 12345u;
		dl_dev_t a = d[(seed >> 8) % N];
		seed = seed * 1103515245u + 12345u;
		dl_dev_t b = d[(seed >> 8) % N];
		uint32_t fl = (seed >> 20) % 4 == 0 ? DL_FLAG_STATELESS :
			      (seed >> 20) % 4 == 1 ? DL_FLAG_SYNC_STATE_ONLY : 0;
		bool dep = a != b && dl_kernel_is_dependent(c, a, b, NULL);
		int r = dl_link_add(c, a, b, fl, NULL);

		int want = a == b ? -DL_REFUSE_SELF_LINK :
			   dep && fl != DL_FLAG_SYNC_STATE_ONLY ? -DL_REFUSE_REVERSE_DEPENDENCY : 0;

		CU_ASSERT_EQUAL(r, want);
		/* fatal: the kernel DFS below would recurse forever on a cycle */
		CU_ASSERT_TRUE_FATAL(dl_dpm_is_topological(c));
	}
}

static void test_is_dependent_agrees_with_kernel_for_unregistered_consumer(void)
{
	dl_dev_t s = mk(DL_NONE), u = mk_unreg(DL_NONE);

	add(u, s, 0);
	/* the kernel's device_is_dependent(s, u) finds u among s's consumers */
	CU_ASSERT_EQUAL(dl_is_dependent(c, s, u), dl_kernel_is_dependent(c, s, u, NULL));
}

/* ---- main ------------------------------------------------------------- */

#define T(f) { #f, f }
static const struct { const char *name; CU_TestFunc fn; } tests[] = {
	T(test_add_refuses_missing_device),
	T(test_add_refuses_self_link),
	T(test_add_refuses_invalid_flags),
	T(test_add_refuses_stateless_with_managed_flags),
	T(test_add_refuses_autoprobe_with_autoremove),
	T(test_add_refuses_sync_state_only_with_other_flags),
	T(test_add_refuses_rpm_active_when_supplier_resume_fails),
	T(test_add_refused_rpm_active_releases_supplier_reference),
	T(test_add_stopped_walk_logs_no_refusal),
	T(test_add_out_of_memory_gives_back_rpm_reference),
	T(test_settle_moves_hear_the_stop),
	T(test_add_refuses_unregistered_supplier),
	T(test_add_allows_unregistered_consumer),
	T(test_add_refuses_reverse_dependency_via_link),
	T(test_add_refuses_reverse_dependency_via_parent),
	T(test_add_refuses_reverse_dependency_transitive),
	T(test_sync_state_only_may_close_cycle),
	T(test_add_refuses_sync_state_only_when_consumer_bound),
	T(test_add_sets_managed_unless_stateless),
	T(test_add_autoremove_supplier_wins),
	T(test_init_status_sup_no_driver_con_no_driver),
	T(test_init_status_sup_no_driver_con_probing),
	T(test_init_status_sup_no_driver_con_bound),
	T(test_init_status_sup_probing_con_no_driver),
	T(test_init_status_sup_probing_con_probing),
	T(test_init_status_sup_probing_con_bound),
	T(test_init_status_sup_bound_con_no_driver),
	T(test_init_status_sup_bound_con_probing),
	T(test_init_status_sup_bound_con_bound),
	T(test_init_status_sup_unbinding_con_no_driver),
	T(test_init_status_sup_unbinding_con_probing),
	T(test_init_status_sup_unbinding_con_bound),
	T(test_readd_updates_not_duplicates),
	T(test_readd_stateless_takes_kref_and_sets_stateless),
	T(test_readd_managed_on_stateless_sets_managed),
	T(test_readd_autoremove_consumer_becomes_supplier),
	T(test_readd_without_autoremove_clears_both),
	T(test_readd_non_inferred_clears_inferred),
	T(test_readd_pm_runtime_and_rpm_active),
	T(test_readd_sync_state_only_upgrade_loses_sso_and_reorders),
	T(test_readd_stateless_on_sync_state_only_reorders),
	T(test_del_drops_one_kref),
	T(test_del_refuses_managed_link_of_registered_consumer),
	T(test_del_managed_link_of_unregistered_consumer),
	T(test_probe_defers_when_supplier_not_available),
	T(test_deferred_active_list_does_not_grow_in_a_storm),
	T(test_deferred_relisted_device_goes_to_the_tail),
	T(test_deferred_peek_follows_the_walk),
	T(test_probe_ignores_sync_state_only_and_stateless_suppliers),
	T(test_probe_begin_moves_links_to_consumer_probe),
	T(test_probe_success_links_and_state),
	T(test_probe_success_retriggers_deferred),
	T(test_probe_success_autoprobe_queues_consumer),
	T(test_probe_failure_autoremove_consumer_deleted_others_available),
	T(test_probe_success_drops_sync_state_only_links),
	T(test_unbind_supplier_unbinds_consumers_first),
	T(test_unbind_supplier_diamond_each_once),
	T(test_unbind_supplier_autoremove_supplier_deleted_others_dormant),
	T(test_unbind_consumer_autoremove_consumer_deleted_others_available),
	T(test_unbind_stateless_links_do_not_cascade),
	T(test_unbind_busy_while_consumer_bound),
	T(test_unbind_waits_for_consumer_probe),
	T(test_add_accepts_cycle_flag),
	T(test_cycle_does_not_exempt_probe),
	T(test_probe_marks_sync_state_only_links_consumer_probe),
	T(test_sync_state_waits_for_late_boot),
	T(test_sync_state_waits_for_all_managed_consumers),
	T(test_device_del_purges_links),
	T(test_presize_vectors_outgrow_the_pool),
	T(test_pm_suspend_waits_for_children_and_consumers),
	T(test_pm_resume_waits_for_parent_and_suppliers),
	T(test_pm_dormant_link_does_not_count),
	T(test_pm_sync_state_only_link_counts_until_6_18),
	T(test_pm_dormant_sync_state_only_link_never_counts),
	T(test_kernel_version_parse),
	T(test_pm_stateless_link_counts),
	T(test_rpm_get_resumes_supplier_first),
	T(test_rpm_without_pm_runtime_flag_does_not_resume_supplier),
	T(test_rpm_supplier_stays_active_while_consumer_holds_reference),
	T(test_rpm_put_consumer_suspends_supplier),
	T(test_probe_rpm_resumes_suppliers_chain_first),
	T(test_probe_rpm_attempt_that_defers_still_resumes),
	T(test_probe_rpm_resumes_parent_and_skips_non_users),
	T(test_probe_rpm_nothing_without_users_or_when_bound),
	T(test_rpm_supplier_suspends_when_last_consumer_suspends),
	T(test_rpm_active_at_add_counts_as_one_reference),
	T(test_rpm_get_failure_drops_supplier_references),
	T(test_dpm_consumer_registered_before_supplier_moves_after),
	T(test_dpm_backward_link_moves_when_list_is_read),
	T(test_dpm_topological_after_adds),
	T(test_add_reorders_even_when_supplier_precedes),
	T(test_reorder_pre_order_last_move_wins),
	T(test_trim_keeps_pending_moves_frees_settled_storage),
	T(test_deferred_retry_moves_device_to_tail),
	T(test_is_dependent_agrees_with_kernel_for_unregistered_consumer),
};

int main(void)
{
	CU_pSuite s;
	unsigned nfail;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite_with_setup_and_teardown("link-core", NULL, NULL, t_setup, t_teardown);
	if (!s)
		goto err;
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			goto err;
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	nfail = CU_get_number_of_failures();
	CU_cleanup_registry();
	return nfail ? 1 : 0;
err:
	CU_cleanup_registry();
	return 2;
}
