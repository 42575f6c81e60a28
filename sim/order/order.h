/*
 * order.h - the ordering algorithms: names, one-line descriptions, and the
 * policy knobs the engines read (who walks the list, who may run async, how
 * ready work is prioritised).  The engines implement the mechanics and ask
 * sched.h what an order does while a phase runs; each order is one file of
 * this folder and one line of order.c's registry.
 */
#ifndef DL_ORDER_H
#define DL_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/dl_core.h"

enum dl_order {
	DL_ORDER_SYNC,
	DL_ORDER_KERNEL_ASYNC,
	DL_ORDER_KERNEL_ASYNC_V2,
	DL_ORDER_LEVELS,
	DL_ORDER_CP_FIRST,
	DL_ORDER_NAIVE,
	DL_ORDER_COUNT
};

struct dl_order_policy {
	bool link_aware;       /* waits for dependencies at all (all but naive) */
	bool use_async_flag;   /* async devices go to workers, sync ones stay on main */
	bool all_async;        /* every device may run on a worker */
	bool queue_up_front;   /* classic async: queued at the walk, blocks on deps */
	/*
	 * 6.16+ async (kernel-async-v2), suspend and resume phases: async roots
	 * (resume) or leaves (suspend) are queued before the walk, a finishing
	 * device queues its async dependents not queued yet, the walk queues
	 * the rest; items block on their deps as classic ones do.
	 */
	bool v2_walk;
	bool level_barrier;    /* levels: a barrier between topological levels */
	bool critical_first;   /* cp-first: ready work by longest remaining path */
	bool probe_deferral;   /* probe through the kernel's deferred-probe retry */
	/*
	 * a scheme some kernel runs (sync, kernel-async, kernel-async-v2):
	 * kernel mode can boot it, and a kernel's log shows one of them
	 */
	bool kernel_native;
	uint32_t default_workers;
	/*
	 * The kernels (DL_KVER()) whose scheme this order is: --kernel outside
	 * kver_min..kver_max (0: DL_KVER_FIRST, DL_KVER_LAST) is refused; the
	 * version a run gets without --kernel is kver_default.
	 */
	uint32_t kver_min, kver_max, kver_default;
};

/* One ordering algorithm: a file of its own (sync.c, ...) and a line in order.c's registry. */
struct dl_order_def {
	const char *name, *doc;
	struct dl_order_policy policy;
	/*
	 * async_form: the order that runs as this one does when no device is
	 * async, but honours the async flags (sync: kernel-async), or NULL:
	 * this one.  successor: the scheme a later kernel replaced this one
	 * with (kernel-async: kernel-async-v2), or NULL.
	 */
	const struct dl_order_def *async_form, *successor;
};

extern const struct dl_order_def dl_order_sync, dl_order_kernel_async, dl_order_kernel_async_v2,
	dl_order_levels, dl_order_cp_first, dl_order_naive;

/*
 * dl_order_on_main - does the main PM thread run the callback of a device
 * (@async: its driver may run asynchronously) itself, rather than a work
 * item?  @deferral_probe: a probe in registration order with the
 * deferred-probe retry, where async drivers go to workers (the orders
 * whose probing is link-aware never walk on the main thread).  Both
 * backends ask this, so the rule is written once.
 */
static inline bool dl_order_on_main(const struct dl_order_policy *p, bool deferral_probe,
				    bool async)
{
	if (deferral_probe)
		return !(p->use_async_flag && async);
	if (p->all_async)
		return false;
	return p->use_async_flag ? !async : true;
}

/*
 * dl_order_uses_items - does an order under @p ever hand a callback to a
 * work item (async devices, or every device)?  The real-thread backend then
 * runs a pool as large as the async workqueue's max_active, not just K.
 */
static inline bool dl_order_uses_items(const struct dl_order_policy *p)
{
	return p->use_async_flag || p->all_async;
}

/*
 * dl_order_research - is an order under @p one no kernel runs but that
 * respects the links (levels, cp-first): what `advise --research` tries.
 */
static inline bool dl_order_research(const struct dl_order_policy *p)
{
	return p->link_aware && !p->kernel_native;
}

/* Kinds of phase. */
enum dl_phase_kind {
	DL_PK_SUSPEND,
	DL_PK_RESUME,
	DL_PK_PROBE,        /* probe a device once its suppliers are bound */
	DL_PK_PROBE_DEFER,  /* probe in registration order with the deferred-probe retry */
};

/*
 * How one phase of an order runs: what both backends branch on, so that
 * neither asks which order it runs.  Made by dl_order_scheme() from the
 * order's policy, the one place the policy's knobs are read for a phase.
 */
struct dl_phase_scheme {
	uint8_t kind;          /* enum dl_phase_kind */
	bool serial;           /* prepare, complete: main alone, in list order, nobody waits */
	bool link_aware;       /* devices wait for their dependencies (all orders but naive) */
	bool main_only;        /* main runs every callback in walk order (naive, serial) */
	/*
	 * suspend and resume phases of kernel-async (classic) and kernel-async-v2
	 * (v2): the walk (v2: and hand-offs) queues items before they are ready,
	 * and an item blocks on its waits
	 */
	bool blocking, classic, v2;
	bool queue_when_ready; /* an item is queued once its waits are done (not by a walk) */
	bool barrier;          /* levels: a barrier between topological levels */
	bool by_priority;      /* cp-first: ready items by longest remaining path */
	/*
	 * suspend and resume phases but prepare and complete: a finishing
	 * device's hand-off walk queues its dependents (6.16+, levels,
	 * cp-first).  dpm_prepare() and dpm_complete() run every device on
	 * the main thread and walk no dependents, in 6.16+ as before.
	 */
	bool handoff;
	bool main_waits_only;  /* main runs no callback, it only waits (levels, cp-first) */
};

/*
 * dl_phase_on_main - does the main PM thread run the callback of a device
 * (@async: its driver may run asynchronously) itself in a phase of scheme
 * @ps under policy @p?  prepare and complete: always; else as
 * dl_order_on_main() says for the phase's kind.
 */
static inline bool dl_phase_on_main(const struct dl_phase_scheme *ps,
				    const struct dl_order_policy *p, bool async)
{
	return ps->serial || dl_order_on_main(p, ps->kind == DL_PK_PROBE_DEFER, async);
}

/**
 * dl_order_scheme - the scheme of a phase of @kind (enum dl_phase_kind) and,
 * for suspend and resume, @phase (enum dl_phase) under @o.
 */
struct dl_phase_scheme dl_order_scheme(enum dl_order o, unsigned kind, unsigned phase);

/* dl_order_probe_kind - how @o probes: DL_PK_PROBE_DEFER or DL_PK_PROBE. */
unsigned dl_order_probe_kind(enum dl_order o);

uint32_t dl_order_default_kernel(enum dl_order o);
uint32_t dl_order_kernel(enum dl_order o, uint32_t requested);
int dl_order_check_kernel(enum dl_order o, uint32_t kver, char *why, size_t len);
void dl_order_kernels(enum dl_order o, char *buf, size_t len);

/*
 * MAX_WORK of kernel/async.c (the same in 6.12 and 7.3): when more than
 * MAX_WORK async entries are pending (entry_count: scheduled and not yet
 * finished), async_schedule_dev_nocall() gives up and
 * async_schedule_node_domain() runs the function in the caller.  The PM
 * core's dpm_async_fn() then returns false and the device runs on the main
 * PM thread (7.3: a hand-off by dpm_async_with_cleanup() leaves it to the
 * main walk), and __device_attach() retries the probe synchronously.
 */
#define DL_ASYNC_MAX_WORK 32768u

/*
 * dl_async_may_queue - may an order that uses the kernel's async machinery
 * (use_async_flag: kernel-async, kernel-async-v2) queue one more item while
 * @pending of its items are queued or running?  Both engines ask this
 * wherever they queue such an item, so the rule is written once; the other
 * orders are not the kernel's and queue without limit.
 */
static inline bool dl_async_may_queue(const struct dl_order_policy *p, uint32_t pending)
{
	return !p->use_async_flag || pending <= DL_ASYNC_MAX_WORK;
}

/* The order a run gets without --order. */
#define DL_ORDER_DEFAULT DL_ORDER_KERNEL_ASYNC

enum dl_order dl_order_async_form(enum dl_order o);
int dl_order_successor(enum dl_order o, enum dl_order *out);
enum dl_order dl_order_of_kernel(bool async, uint32_t kver);
uint32_t dl_order_link_aware(enum dl_order *out, uint32_t kver);
void dl_order_native_names(char *buf, size_t len);

const char *dl_order_name(enum dl_order o);
const char *dl_order_doc(enum dl_order o);
int dl_order_parse(const char *name, enum dl_order *out);
const struct dl_order_policy *dl_order_policy(enum dl_order o);

#endif
