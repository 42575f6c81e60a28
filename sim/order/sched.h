/*
 * sched.h - what an order does while a phase runs, written once for both
 * backends: what happens to a device that becomes ready, what a work item
 * pays before its callback, what a finishing device's hand-off walk
 * queues, and how the levels' barrier moves.  Each rule is a function of
 * the phase's scheme (order.h's struct dl_phase_scheme) and of a few facts
 * about one device that the backend reads from its own state (records
 * indexed by position in des.c, atomics by device id in threads.c); the
 * backend carries out the answer with its own mechanics (virtual CPUs and
 * events, or a pool of threads).  So a backend never asks which order it
 * runs, and an order's rule cannot drift between the two.
 */
#ifndef DL_ORDER_SCHED_H
#define DL_ORDER_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/order/order.h"

/*
 * DL_SCHED_ASSERT - an invariant of the phase scheduler (a stage
 * transition, a wait counter).  Checked when DLSIM_ASSERTS is defined
 * (CMake option DLSIM_ASSERTS: on in the test builds, off in Release,
 * where the speed figures are taken); independent of NDEBUG, so that a
 * RelWithDebInfo test build checks them too.
 */
#ifdef DLSIM_ASSERTS
__attribute__((noreturn, cold)) static inline void dl_sched_assert_fail(const char *what,
									 const char *file,
									 int line)
{
	fprintf(stderr, "%s:%d: scheduler invariant failed: %s\n", file, line, what);
	abort();
}
#define DL_SCHED_ASSERT(x) \
	((x) ? (void)0 : dl_sched_assert_fail(#x, __FILE__, __LINE__))
#else
#define DL_SCHED_ASSERT(x) ((void)0)
#endif

/*
 * dl_stage_check - may a backend's work item go from stage @from to stage
 * @to?  @allowed[from] has bit @to set for each transition the backend's
 * state machine has (des_backend.h: des_stage_set()).  Checked only with
 * DLSIM_ASSERTS.
 */
static inline void dl_stage_check(const uint16_t *allowed, unsigned nstages, unsigned from,
				  unsigned to)
{
#ifdef DLSIM_ASSERTS
	if (from >= nstages || to >= nstages || !(allowed[from] & (1u << to))) {
		fprintf(stderr, "scheduler invariant failed: a work item went from stage %u to"
			" stage %u, not a transition of its backend\n", from, to);
		abort();
	}
#else
	(void)allowed; (void)nstages; (void)from; (void)to;
#endif
}

/*
 * dl_count_down - one of a device's waits is done, or one of a phase's
 * devices or items in flight: count it down and return what is left.
 * Below zero would be a device released twice by one supplier, or an item
 * retired twice.
 */
static inline uint32_t dl_count_down(uint32_t *n)
{
	DL_SCHED_ASSERT(*n > 0);
	return --*n;
}

/*
 * dl_counted_down - the same for a counter an atomic fetch-and-subtract
 * counted down (threads): @before, its value before; returns what is left.
 */
static inline uint32_t dl_counted_down(uint32_t before)
{
	DL_SCHED_ASSERT(before > 0);
	return before - 1;
}

/*
 * What a backend tells the rules about one participating device, read
 * from its own state (des.c: the task record; threads.c: atomics).  Each
 * rule reads the facts it names and ignores the others.
 */
struct dl_dev_facts {
	bool on_main;    /* the main thread runs its callback */
	bool held;       /* levels: its level is not released yet */
	bool blocked;    /* its item was queued and blocks on its waits (kernel-async, -v2) */
	bool idle;       /* its item is not queued yet */
	bool queued;     /* its item is queued already (v2: work_in_progress) */
	bool done;       /* finished already (a failed probe's cascade finished it unattempted) */
	uint32_t waits;  /* the waits it has left */
};

/* What becomes of a device whose last wait is done (dl_ready_action()). */
enum dl_ready_act {
	DL_READY_NONE,   /* nothing now: queued by the walk or a hand-off, or by its level's release */
	DL_READY_MAIN,   /* the main thread runs it: wake main if it waits for this one */
	DL_READY_WAKE,   /* an item blocked on its waits: wake it */
	DL_READY_QUEUE,  /* queue its item now (MAX_WORK permitting: dl_async_may_queue()) */
};

/*
 * dl_ready_action - the last wait of participating device @f is done, in a
 * phase of scheme @ps (facts: on_main, held, blocked, idle).
 */
static inline enum dl_ready_act dl_ready_action(const struct dl_phase_scheme *ps,
						const struct dl_dev_facts *f)
{
	if (f->on_main)
		return DL_READY_MAIN;
	if (ps->barrier && f->held)
		return DL_READY_NONE;
	if (f->blocked)
		return DL_READY_WAKE;
	if (!f->idle || !ps->queue_when_ready)
		return DL_READY_NONE;   /* classic and v2 items are queued by the walk (v2: or a hand-off) */
	return DL_READY_QUEUE;
}

/*
 * dl_ready_at_start - is participating device @f queued as a phase of
 * scheme @ps starts, before the main thread walks (facts: on_main, waits)?  The orders that queue an item when it
 * is ready queue those that wait for nothing (levels: those of the first
 * level, dl_ready_action()); the deferred-probe walk queues its own.
 */
static inline bool dl_ready_at_start(const struct dl_phase_scheme *ps,
				     const struct dl_dev_facts *f)
{
	return ps->queue_when_ready && ps->kind != DL_PK_PROBE_DEFER && !f->on_main && f->waits == 0;
}

/* What the main PM thread does with a device its walk reaches (dl_walk_action()). */
enum dl_walk_act {
	DL_WALK_SKIP,    /* not main's: queued when ready, or queued already */
	DL_WALK_RUN,     /* main runs its callback once its waits are done */
	DL_WALK_QUEUE,   /* main queues its item (MAX_WORK: dpm_async_fn() fails, main runs it) */
};

/*
 * dl_walk_action - the main thread's walk through a suspend or resume
 * phase of scheme @ps reaches participating device @f (facts: on_main;
 * queued, by kernel-async-v2's up-front pass or a hand-off:
 * dpm_async_fn() sees work_in_progress).
 * kernel-async and -v2 queue the other async devices as the walk reaches
 * them; under the orders that queue when ready the walk only runs main's.
 */
static inline enum dl_walk_act dl_walk_action(const struct dl_phase_scheme *ps,
					      const struct dl_dev_facts *f)
{
	if (f->on_main)
		return DL_WALK_RUN;
	if (!ps->blocking || f->queued)
		return DL_WALK_SKIP;
	return DL_WALK_QUEUE;
}

/*
 * What a work item pays on its worker before its callback (cost.h), in a
 * phase of scheme @ps: in a suspend or resume phase its kworker's wake
 * (the PM core queued it, it starts or is woken: dl_item_wake()); when
 * probing a device once its suppliers are bound, the queueing (queue_ns:
 * nobody else paid it); with the deferred-probe retry nothing (the walker
 * that queued it paid).  The backends may waive it (des.c: the first item
 * a finishing item queues runs on the same kworker).
 */
enum dl_item_pays { DL_PAYS_NONE, DL_PAYS_QUEUE, DL_PAYS_WAKE, DL_PAYS_WAKE_RESUME };

/*
 * dl_item_wake - which wake a kworker pays in a phase of scheme @ps, when
 * its item starts and again when a blocked item is woken: in the
 * resume-direction phases that run items (resume_noirq, resume_early,
 * resume) DL_PAYS_WAKE_RESUME (resume_wake_ns), elsewhere DL_PAYS_WAKE
 * (wake_ns).  complete is serial: the main thread runs it, nothing wakes.
 */
static inline enum dl_item_pays dl_item_wake(const struct dl_phase_scheme *ps)
{
	return ps->kind == DL_PK_RESUME && !ps->serial ? DL_PAYS_WAKE_RESUME : DL_PAYS_WAKE;
}

static inline enum dl_item_pays dl_item_pays(const struct dl_phase_scheme *ps)
{
	if (ps->kind == DL_PK_PROBE_DEFER)
		return DL_PAYS_NONE;
	return ps->kind == DL_PK_PROBE ? DL_PAYS_QUEUE : dl_item_wake(ps);
}

/*
 * dl_handoff_queues - does the hand-off walk of a device that finished in a
 * phase of scheme @ps (ps->handoff) queue the item of participating
 * dependent @f (and pay queue_ns for it)?  Facts: on_main; queued
 * (kernel-async-v2's work_in_progress); waits, the finishing device's
 * included.  kernel-async-v2 queues every async dependent not
 * queued yet (it then blocks on the rest of its waits); levels and
 * cp-first queue those this device makes ready.
 */
static inline bool dl_handoff_queues(const struct dl_phase_scheme *ps,
				     const struct dl_dev_facts *f)
{
	return !f->on_main && !f->queued && (ps->v2 || f->waits == 1);
}

/*
 * dl_handoff_after_done - does a finishing device of scheme @ps complete
 * its waiters before its hand-off walk?  6.16+ (kernel-async-v2):
 * complete_all() first, then dpm_async_resume_subordinate() or
 * dpm_async_suspend_superior() queues what is not queued yet; levels and
 * cp-first model the walk that makes dependents ready before they are
 * counted down.
 */
static inline bool dl_handoff_after_done(const struct dl_phase_scheme *ps)
{
	return ps->v2;
}

/*
 * What an order's items and walk do, asked by the backends and phase.c in
 * place of the order's identity (the scheme's classic and v2 are read here
 * only).
 *
 * dl_item_parks - does an item of a phase of scheme @ps that finds its
 * waits undone give its worker back, to be queued again when its last
 * wait is done (6.16+: kernel-async-v2), rather than block on its worker
 * (kernel-async)?
 */
static inline bool dl_item_parks(const struct dl_phase_scheme *ps)
{
	return ps->v2;
}

/*
 * dl_items_claimed_early - may an item be claimed (work_in_progress) before
 * the main walk reaches it, by the walk's up-front pass or a hand-off
 * (6.16+)?  The walk then skips it, and one the up-front pass could not
 * queue (MAX_WORK) is left to the walk.
 */
static inline bool dl_items_claimed_early(const struct dl_phase_scheme *ps)
{
	return ps->v2;
}

/*
 * dl_walk_upfront_free - does the walk of a phase of scheme @ps first queue
 * the async devices that wait for nothing (6.16+: roots when resuming,
 * leaves when suspending), then walk the whole list?
 */
static inline bool dl_walk_upfront_free(const struct dl_phase_scheme *ps)
{
	return ps->v2;
}

/*
 * dl_walk_queues_each - does the walk of a phase of scheme @ps queue every
 * async item itself, as it reaches it (kernel-async: nothing else queues
 * one)?
 */
static inline bool dl_walk_queues_each(const struct dl_phase_scheme *ps)
{
	return ps->classic && !ps->serial;
}

/*
 * dl_walk_async_first - does the walk of a phase of scheme @ps queue every
 * async item before it runs the sync ones (6.12's resume phases: "Trigger
 * the resume of 'async' devices upfront")?
 */
static inline bool dl_walk_async_first(const struct dl_phase_scheme *ps)
{
	return ps->kind == DL_PK_RESUME && dl_walk_queues_each(ps);
}

/*
 * The levels' barrier (ps->barrier): left[l] devices of level l still to
 * finish, *cur the level released last, release(ctx, l) releases level l
 * (queues its devices; one that cannot run is finished at once and counted
 * off left[l] by the backend).  dl_barrier_advance() moves the barrier
 * past every finished level, releasing each level it reaches; the backend
 * holds whatever lock guards @left and @cur.
 */
typedef void dl_release_fn(void *ctx, uint32_t level);

static inline void dl_barrier_advance(uint32_t *left, uint32_t nlevels, uint32_t *cur,
				      dl_release_fn *release, void *ctx)
{
	DL_SCHED_ASSERT(*cur < nlevels || nlevels == 0);
	while (*cur + 1 < nlevels && left[*cur] == 0) {
		++*cur;
		release(ctx, *cur);
	}
}

/* dl_barrier_done - a device of level @l finished: count it off, and move the barrier if it was the last. */
static inline void dl_barrier_done(uint32_t *left, uint32_t nlevels, uint32_t *cur, uint32_t l,
				   dl_release_fn *release, void *ctx)
{
	/* a level is counted off once per device, so never below zero (a level
	 * past the barrier is counted off early when a failed probe finishes
	 * its devices unattempted) */
	DL_SCHED_ASSERT(l < nlevels);
	DL_SCHED_ASSERT(left[l] > 0);
	if (--left[l] == 0)
		dl_barrier_advance(left, nlevels, cur, release, ctx);
}

#endif
