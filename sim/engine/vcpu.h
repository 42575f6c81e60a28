/*
 * vcpu.h - the virtual-time backend's simulated machine (des.c): the
 * clock, K simulated CPUs, the run queue that hands them out (the main
 * thread before every work item, then the items FIFO, or by priority for
 * cp-first), the future-event set (the ends of bursts and sleeps, by time
 * then sequence), and the async workqueue's max_active (the items beyond
 * it wait, FIFO, as the workqueue's inactive_works).
 *
 * It knows tasks by number only: a work item of the phase (its position,
 * below the phase's device count) or one of the two threads DL_VCPU_MAIN
 * and DL_VCPU_RETRY; what a task does when it gets a CPU or when its event
 * comes is des.c's.  Every request and event takes a sequence number, the
 * tie-breaker of the heaps, so that runs are deterministic.  The calls made
 * a few times per event are static inline.
 */
#ifndef DL_VCPU_H
#define DL_VCPU_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/core/dl_sat.h"
#include "sim/engine/heap.h"

#define DL_VCPU_MAIN UINT32_MAX          /* the main PM thread */
#define DL_VCPU_RETRY (UINT32_MAX - 1)   /* the deferred-probe kworker (probe in module context) */

/* The end of a burst or a sleep. */
struct dl_vcpu_ev { int64_t t; uint64_t seq; uint32_t task; };
/*
 * cp-first's run queue entry, 16 bytes: seq counts from the phase's first
 * sequence number (rq_seq0), and a phase takes a few per device.
 */
struct dl_vcpu_rq { int64_t prio; uint32_t seq; uint32_t task; };

static inline bool dl_vcpu_ev_less(const struct dl_vcpu_ev *a, const struct dl_vcpu_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static inline bool dl_vcpu_rq_less(const struct dl_vcpu_rq *a, const struct dl_vcpu_rq *b)
{
	return a->prio < b->prio || (a->prio == b->prio && a->seq < b->seq);
}

/* The future-event set (at most K + 1 bursts, plus the sleeps) and cp-first's run queue. */
DL_DEFINE_HEAP(dl_vcpu_evq, struct dl_vcpu_ev, dl_vcpu_ev_less, 2)
DL_DEFINE_HEAP(dl_vcpu_rqh, struct dl_vcpu_rq, dl_vcpu_rq_less, 4)

struct dl_vcpu {
	int64_t now;             /* simulated ns */
	uint64_t seq;
	struct dl_vcpu_evq ev;
	/* run queue: main first, then cp-first's heap (by_priority) or a FIFO ring */
	bool main_req;
	bool by_priority;
	struct dl_vcpu_rqh rq;
	uint64_t rq_seq0;
	uint32_t *fifo, fifo_head, fifo_n, cap;
	/*
	 * The async workqueue: at most max_active items hold a worker (queued
	 * for a CPU, running, sleeping or blocked); the others wait in the
	 * inactive ring (cap slots, as the FIFO: a task is in one at a time).
	 */
	uint32_t active, max_active;
	uint32_t *inact, inact_head, inact_n;
	/* the free CPUs, 1..K, a stack */
	uint16_t *free;
	uint32_t nfree;
};

/* @K CPUs for at most @ntasks work items at once, @max_active of them holding a worker; 0 or -ENOMEM. */
int dl_vcpu_init(struct dl_vcpu *v, uint32_t ntasks, uint32_t K, uint32_t max_active);
void dl_vcpu_fini(struct dl_vcpu *v);
/* A phase starts: no request, no event, no item holds a worker; @by_priority: cp-first's queue. */
void dl_vcpu_reset(struct dl_vcpu *v, bool by_priority);

/*
 * Ask for a CPU for @task.  The main thread's request goes before every
 * work item (at most one is pending); items are served FIFO, or by @prio
 * (smallest first).  0 or -ENOMEM.
 */
static inline int dl_vcpu_request(struct dl_vcpu *v, uint32_t task, int64_t prio)
{
	uint64_t seq = v->seq++;

	if (task == DL_VCPU_MAIN) {
		v->main_req = true;
		return 0;
	}
	if (v->by_priority) {
		struct dl_vcpu_rq e = { .prio = prio, .seq = (uint32_t)(seq - v->rq_seq0), .task = task };

		assert(seq - v->rq_seq0 <= UINT32_MAX);
		return dl_vcpu_rqh_push(&v->rq, e);
	}
	/* a task is queued at most once at a time, so the ring never overflows */
	v->fifo[(v->fifo_head + v->fifo_n++) % v->cap] = task;
	return 0;
}

/* A free CPU (*@cpu, 1..K) for the next task that asked for one (*@task); false: none. */
static inline bool dl_vcpu_grant(struct dl_vcpu *v, uint32_t *task, uint16_t *cpu)
{
	if (!v->nfree || (!v->main_req && v->rq.n == 0 && v->fifo_n == 0))
		return false;
	if (v->main_req) {
		v->main_req = false;
		*task = DL_VCPU_MAIN;
	} else if (v->by_priority) {
		*task = dl_vcpu_rqh_pop(&v->rq).task;
	} else {
		*task = v->fifo[v->fifo_head];
		v->fifo_head = v->fifo_head + 1 == v->cap ? 0 : v->fifo_head + 1;
		v->fifo_n--;
	}
	*cpu = v->free[--v->nfree];
	return true;
}

static inline void dl_vcpu_release(struct dl_vcpu *v, uint16_t cpu)
{
	v->free[v->nfree++] = cpu;
}

/*
 * @task, holding a CPU, bursts for @len (negative: 0): its end is an event.
 * Event times saturate: deferred-retry walks can charge ~1e19 ns (des.c's
 * reorder_charge()); the backend fails a run whose clock passes DL_T_MAX.
 */
static inline int dl_vcpu_burst(struct dl_vcpu *v, uint32_t task, int64_t len)
{
	struct dl_vcpu_ev e = { .t = dl_sat_add_i64(v->now, len > 0 ? len : 0), .seq = v->seq++,
				.task = task };

	return dl_vcpu_evq_push(&v->ev, e);
}

/* @task sleeps for @len (> 0) from now, holding no CPU: its wake-up is an event. */
static inline int dl_vcpu_sleep(struct dl_vcpu *v, uint32_t task, int64_t len)
{
	struct dl_vcpu_ev e = { .t = dl_sat_add_i64(v->now, len), .seq = v->seq++, .task = task };

	return dl_vcpu_evq_push(&v->ev, e);
}

/* The next event: time moves to it; false when none is left (the phase is over). */
static inline bool dl_vcpu_next(struct dl_vcpu *v, struct dl_vcpu_ev *e)
{
	if (!v->ev.n)
		return false;
	*e = dl_vcpu_evq_pop(&v->ev);
	v->now = e->t;
	return true;
}

/* The task of the event after that, if any (for prefetching). */
static inline bool dl_vcpu_peek(const struct dl_vcpu *v, uint32_t *task)
{
	if (!v->ev.n)
		return false;
	*task = v->ev.v[0].task;
	return true;
}

/*
 * Queue a work item (insert_work()/pwq_tryinc_nr_active()): true if it
 * holds a worker now, fewer than max_active doing so (the caller asks for
 * a CPU), else it waits in the inactive ring.
 */
static inline bool dl_vcpu_admit(struct dl_vcpu *v, uint32_t task)
{
	if (v->active < v->max_active) {
		v->active++;
		return true;
	}
	v->inact[(v->inact_head + v->inact_n++) % v->cap] = task;
	return false;
}

/*
 * An item is done with its worker: the oldest inactive one takes it
 * (pwq_activate_first_inactive()); true and its task in *@task (the caller
 * asks for a CPU), false if none waits.
 */
static inline bool dl_vcpu_retire(struct dl_vcpu *v, uint32_t *task)
{
	v->active--;
	if (!v->inact_n)
		return false;
	*task = v->inact[v->inact_head];
	v->inact_head = v->inact_head + 1 == v->cap ? 0 : v->inact_head + 1;
	v->inact_n--;
	v->active++;
	return true;
}

/*
 * The pool behind the workqueue grew to @workers kworkers (create_worker()):
 * at most that many items hold one (never more than the workqueue's
 * @max_active); true and the oldest inactive item in *@task if it takes the
 * new kworker (the caller asks for a CPU), else false.
 */
static inline bool dl_vcpu_widen(struct dl_vcpu *v, uint32_t workers, uint32_t max_active,
				 uint32_t *task)
{
	v->max_active = workers < max_active ? workers : max_active;
	if (v->active >= v->max_active || !v->inact_n)
		return false;
	*task = v->inact[v->inact_head];
	v->inact_head = v->inact_head + 1 == v->cap ? 0 : v->inact_head + 1;
	v->inact_n--;
	v->active++;
	return true;
}

#endif
