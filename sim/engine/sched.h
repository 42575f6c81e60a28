/*
 * sched.h (engine) - the phase scheduler's walks, written once for both
 * backends.  sim/order/sched.h says what an order does (the rules); this
 * file walks a finishing device's dependents and carries the rules out
 * over a backend's mechanism, which it reaches through a small table of
 * the backend's functions (struct dl_sched_ops, as Redis' ae.c runs over
 * aeApi*): read one device's facts (its records in des.c, its atomics in
 * threads.c), run on main, wake an item, queue one, claim one, finish a
 * device unattempted, complete one, queue what its hand-off walk names;
 * and, for MAX_WORK, its lock (threads' pool lock; none in the DES), its
 * count of items queued or running, and where a refused item goes.  The
 * functions are inline and each backend's table is a constant, so each
 * backend's copy is compiled with its own mechanism inlined (the DES's
 * hot path pays no indirect call).  The backends ask no rule of
 * MAX_WORK, the fallback ring, the early claims or the barrier
 * themselves: only this file does (and sim/order/).
 *
 * - the phase-start pass, from the facts as the phase started (dl_sched_start());
 * - the main thread's walk: the next device it takes (dl_sched_walk_next(),
 *   dl_sched_left_next() first), its claim of it (dl_sched_walk_claim())
 *   and MAX_WORK's choice for an item it would queue (dl_sched_main_choose());
 * - the release of a finishing device's dependents (dl_sched_release())
 *   and what becomes of one whose last wait is done (dl_sched_on_ready());
 * - the end of a callback in its order's sequence: complete, hand-off walk,
 *   queue, leave (dl_sched_callback_over(), dl_sched_walk_over());
 * - the hand-off walk of a finishing device: its cost (handoff_ns per
 *   dependent, queue_ns per item it queues) and the items it queues;
 * - the failed-probe cascade: a probe that did not bind releases nobody,
 *   so the devices waiting for it, and those waiting for them, finish
 *   unattempted;
 * - the levels' barrier: a finished device counted off its level
 *   (dl_sched_level_done()), a level's devices released when the barrier
 *   reaches it, as ready devices (the barrier's rule: sim/order/sched.h
 *   dl_barrier_done());
 * - MAX_WORK's tests (dl_sched_queue_ready(), dl_sched_claim(),
 *   dl_sched_may_queue()) and its fallback: ready devices the async
 *   machinery refused, left to the main thread in the order they were
 *   refused;
 * - what a work item does as it starts (dl_sched_item_waits());
 * - the deferral walk (probing in registration order with dd.c's
 *   deferred-probe retry): the next device (dl_sched_defer_next()) and
 *   what its walker does with it (dl_sched_defer_take()).
 */
#ifndef DL_ENGINE_SCHED_H
#define DL_ENGINE_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine/cost.h"
#include "sim/engine/graph.h"
#include "sim/engine/phase.h"
#include "sim/engine/retry.h"
#include "sim/order/sched.h"

/*
 * The backend's mechanism, as the scheduler's walks reach it.  @ctx is the
 * backend's state; each backend has one constant table of these.
 */
struct dl_sched_ops {
	/*
	 * facts: participating device @y's facts (sim/order/sched.h's struct
	 * dl_dev_facts, every field) into *@f; false if @y takes no part in the
	 * phase (the walks pass it by).
	 */
	bool (*facts)(const void *ctx, uint32_t y, struct dl_dev_facts *f);
	/* start: the same, as the phase started (dl_sched_start()) */
	bool (*start)(const void *ctx, uint32_t y, struct dl_dev_facts *f);
	/* main_ready: the main thread runs ready @y (wake it if it waits for @y), or NULL */
	void (*main_ready)(void *ctx, uint32_t y);
	/* wake: ready @y's item blocked or parked on its waits: wake it */
	void (*wake)(void *ctx, uint32_t y);
	/*
	 * queue: ready @y's item is to be queued (dl_sched_queue_ready(), with
	 * the backend's checks around it); true if @y finished unattempted
	 * instead (threads: a supplier did not bind)
	 */
	bool (*queue)(void *ctx, uint32_t y);
	/*
	 * claim: with the lock, a hand-off claims @y's item (work_in_progress)
	 * and queues it, unless it is claimed already (dl_sched_claim())
	 */
	void (*claim)(void *ctx, uint32_t y);
	/*
	 * skip: the failed-probe cascade reaches @y; true if @y finishes
	 * unattempted now (at once in the DES, once its last wait is done on
	 * threads), so that its dependents are reached in turn
	 */
	bool (*skip)(void *ctx, uint32_t y);
	/*
	 * released_unattempted: levels, @y's level was released and @y
	 * finished unattempted instead (ops->queue() true: threads, a
	 * supplier did not bind): its level counts it off, its dependents
	 * cascade; NULL if that cannot be (the DES finishes them at once)
	 */
	void (*released_unattempted)(void *ctx, uint32_t y);
	/* halted: a fault or a stop halted the phase: nothing new starts, nothing hands off */
	bool (*halted)(void *ctx);
	/*
	 * finish: @d completes (complete_all()): the devices waiting for it
	 * are counted down and acted on (dl_sched_on_ready()), the levels'
	 * barrier counts it off, a failed probe cascades
	 */
	void (*finish)(void *ctx, uint32_t d);
	/*
	 * handoff_queue: 6.16+, @d completed and walked its dependents: queue
	 * what its walk names (dl_sched_handoff(), with the backend's own
	 * bookkeeping around it)
	 */
	void (*handoff_queue)(void *ctx, uint32_t d);
	/*
	 * defer_busy: the deferral walk took @y, already queued, probing or
	 * bound (bus_probe_device() is a no-op for it)
	 */
	bool (*defer_busy)(void *ctx, uint32_t y);
	/*
	 * sync_fallback: with the lock, a walker is to run an item MAX_WORK
	 * refused to queue (dl_sched_may_queue()): the backend counts it
	 */
	void (*sync_fallback)(void *ctx);
	/*
	 * count_down: a device @y waits for finished: count its wait down;
	 * true if that was its last and it is to be acted on (not halted)
	 */
	bool (*count_down)(void *ctx, uint32_t y);
	/*
	 * lock, unlock: the backend's lock around MAX_WORK's count and the
	 * queueing or leaving to main that follows it (threads: the pool's,
	 * which guards the fallback ring too; the DES has none: NULL)
	 */
	void (*lock)(void *ctx);
	void (*unlock)(void *ctx);
	/*
	 * walk_claim: main's walk claims @y's item as it takes it (6.16+'s
	 * work_in_progress, dl_sched_walk_claim()); false if a hand-off
	 * claimed it first
	 */
	bool (*walk_claim)(void *ctx, uint32_t y);
	/* outstanding: how many items are queued or running (MAX_WORK's count), with the lock */
	uint32_t (*outstanding)(const void *ctx);
	/* push: queue ready @y's item now, with the lock */
	void (*push)(void *ctx, uint32_t y);
	/*
	 * left_to_main: ready @y was left to the main thread (on the fallback
	 * ring), with the lock: main is to take it once it is free
	 */
	void (*left_to_main)(void *ctx, uint32_t y);
};

/* The backend's lock around MAX_WORK's decisions (ops->lock), if it has one. */
static inline void dl_sched_lock(const struct dl_sched_ops *ops, void *ctx)
{
	if (ops->lock)
		ops->lock(ctx);
}

static inline void dl_sched_unlock(const struct dl_sched_ops *ops, void *ctx)
{
	if (ops->unlock)
		ops->unlock(ctx);
}

/*
 * The thread that ran a callback, as the scheduler ends it
 * (dl_sched_walk_over()); either may be NULL.
 */
struct dl_sched_runner {
	/* leave: the thread is done with @d: an item gives its worker back, main is free */
	void (*leave)(void *ctx, uint32_t d);
	/* next: then the thread goes on: main with its walk, an item's end is seen by the drain */
	void (*next)(void *ctx, uint32_t d);
};

/*
 * dl_sched_act - participating device @y, of facts @f, is ready: do what
 * its order says (dl_ready_action()) with the backend's mechanism.
 * Returns what ops->queue() returned (true: @y finished unattempted), else
 * false.
 */
static inline bool dl_sched_act(const struct dl_sched_ops *ops, const struct dl_phase_scheme *ps,
				void *ctx, uint32_t y, const struct dl_dev_facts *f)
{
	switch (dl_ready_action(ps, f)) {
	case DL_READY_MAIN:
		if (ops->main_ready)
			ops->main_ready(ctx, y);
		break;
	case DL_READY_WAKE:
		ops->wake(ctx, y);
		break;
	case DL_READY_QUEUE:
		return ops->queue(ctx, y);
	case DL_READY_NONE:
		break;
	}
	return false;
}

/* dl_sched_on_ready - the last wait of participating device @y is done (dl_sched_act()). */
static inline bool dl_sched_on_ready(const struct dl_sched_ops *ops,
				     const struct dl_phase_scheme *ps, void *ctx, uint32_t y)
{
	struct dl_dev_facts f = { 0 };

	ops->facts(ctx, y, &f);
	return dl_sched_act(ops, ps, ctx, y, &f);
}

/*
 * dl_sched_release - finishing device @d releases the devices waiting for
 * it (its row of @rel), from *@j on: each one's wait is counted down
 * (ops->count_down()), and one whose last wait that was is acted on
 * (dl_sched_on_ready()).  Returns true, with *@y and *@j where to go on,
 * at one that finished unattempted instead (threads: a supplier did not
 * bind), for the caller's failed-probe cascade; false once @d's row is
 * done.
 */
static inline bool dl_sched_release(const struct dl_sched_ops *ops,
				    const struct dl_phase_scheme *ps, const struct dl_csr *rel,
				    uint32_t d, void *ctx, uint32_t *j, uint32_t *y)
{
	while (*j < rel->off[d + 1]) {
		uint32_t x = rel->adj[(*j)++];

		if (ops->count_down(ctx, x) && dl_sched_on_ready(ops, ps, ctx, x)) {
			*y = x;
			return true;
		}
	}
	return false;
}

/*
 * dl_sched_start - the phase-start pass: the devices of main's walk @w
 * that are ready as the phase starts (dl_ready_at_start()) are acted on
 * as when their last wait is done, in walk order.  It decides from the
 * facts as the phase started (ops->start: the snapshot's wait counts),
 * not from live ones: on threads, workers finish devices while the pass
 * still runs, and a device a worker made ready meanwhile is that
 * worker's to queue (a live count would queue it twice or not at all).
 */
static inline void dl_sched_start(const struct dl_sched_ops *ops,
				  const struct dl_phase_scheme *ps, const struct dl_walk *w,
				  void *ctx)
{
	for (uint32_t k = 0; k < w->n; k++) {
		uint32_t y = w->v[k];
		struct dl_dev_facts f = { 0 };

		if (ops->start(ctx, y, &f) && dl_ready_at_start(ps, &f) && !ops->halted(ctx))
			dl_sched_act(ops, ps, ctx, y, &f);
	}
}

/*
 * dl_sched_handoff_len - how long the hand-off walk of finishing device @d
 * (its row of @rel: the devices it releases) takes in a phase of scheme
 * @ps: handoff_ns per participating dependent it walks (under
 * dpm_list_mtx, then async_wip_mtx per device), queue_ns per item it
 * queues (dl_handoff_queues()).  In the threads backend the facts are read
 * racily: a cost, not a decision.
 */
static inline int64_t dl_sched_handoff_len(const struct dl_sched_ops *ops,
					   const struct dl_phase_scheme *ps,
					   const struct dl_costs *c, const struct dl_csr *rel,
					   uint32_t d, const void *ctx)
{
	int64_t len = 0;

	for (uint32_t j = rel->off[d]; j < rel->off[d + 1]; j++) {
		struct dl_dev_facts f = { 0 };

		if (!ops->facts(ctx, rel->adj[j], &f))
			continue;
		len += c->handoff_ns;
		if (dl_handoff_queues(ps, &f))
			len += c->queue_ns;
	}
	return len;
}

/*
 * dl_sched_wants_walk - does a hand-off walk (a burst of CPU of its own,
 * dl_sched_handoff_len()) follow the callback of device @d?  Only in a
 * phase whose finishing devices hand off, not halted, and if @d has
 * participating dependents to walk.
 */
static inline bool dl_sched_wants_walk(const struct dl_sched_ops *ops,
				       const struct dl_phase_scheme *ps, const struct dl_costs *c,
				       const struct dl_csr *rel, uint32_t d, void *ctx)
{
	return ps->handoff && !ops->halted(ctx) && rel->off[d] != rel->off[d + 1] &&
	       dl_sched_handoff_len(ops, ps, c, rel, d, ctx) > 0;
}

/*
 * dl_sched_claim - a hand-off queues @y's item (dpm_async_with_cleanup()):
 * ops->claim() claims and queues it unless MAX_WORK items are pending
 * (dl_async_may_queue() over ops->outstanding): then
 * dpm_async_with_cleanup() fails and leaves it to the main walk, whose
 * dpm_async_fn() tries again.  Under one hold of the backend's lock.
 */
static inline void dl_sched_claim(const struct dl_sched_ops *ops,
				  const struct dl_order_policy *pol, void *ctx, uint32_t y)
{
	dl_sched_lock(ops, ctx);
	if (dl_async_may_queue(pol, ops->outstanding(ctx)))
		ops->claim(ctx, y);
	dl_sched_unlock(ops, ctx);
}

/*
 * dl_sched_handoff - the items the hand-off walk of finishing device @d
 * queues (dpm_async_resume_subordinate(), dpm_async_suspend_superior() of
 * 6.16+): each participating dependent dl_handoff_queues() names is
 * claimed (dl_sched_claim()).
 */
static inline void dl_sched_handoff(const struct dl_sched_ops *ops,
				    const struct dl_phase_scheme *ps,
				    const struct dl_order_policy *pol, const struct dl_csr *rel,
				    uint32_t d, void *ctx)
{
	for (uint32_t j = rel->off[d]; j < rel->off[d + 1]; j++) {
		uint32_t y = rel->adj[j];
		struct dl_dev_facts f = { 0 };

		if (ops->facts(ctx, y, &f) && dl_handoff_queues(ps, &f))
			dl_sched_claim(ops, pol, ctx, y);
	}
}

/*
 * dl_sched_walk_over - device @d's hand-off walk is over (or it had none):
 * the thread that ran it leaves it, then 6.16+ queues what the walk names
 * (it completed before its walk; not once the phase halted: a failing
 * device_suspend*() returns before its hand-off), the others complete it
 * now, and the thread goes on (@run's leave and next, either NULL).
 */
static inline void dl_sched_walk_over(const struct dl_sched_ops *ops,
				      const struct dl_sched_runner *run,
				      const struct dl_phase_scheme *ps, uint32_t d, void *ctx)
{
	if (run && run->leave)
		run->leave(ctx, d);
	if (!dl_handoff_after_done(ps))
		ops->finish(ctx, d);
	else if (!ops->halted(ctx))
		ops->handoff_queue(ctx, d);   /* nothing after a fault or a stop */
	if (run && run->next)
		run->next(ctx, d);
}

/*
 * dl_sched_item_waits - does a work item of a phase of scheme @ps wait for
 * what is left of its waits as it starts (blocking its worker, or parked
 * without it: dl_item_parks())?  In the phases whose items the walk or a
 * hand-off queues before their waits are done (ps->blocking); the others'
 * are queued ready.  (The DES tells them apart by the stage it queues an
 * item in, ST_QUEUED_START or ST_QUEUED_CB.)
 */
static inline bool dl_sched_item_waits(const struct dl_phase_scheme *ps)
{
	return ps->blocking;
}

/*
 * dl_sched_callback_over - device @d's callback is over, its sleep
 * included (@deferred: a probe attempt that deferred, which hands nothing
 * off).  What follows, in its order's sequence: 6.16+
 * (dl_handoff_after_done()) completes it first, then walks its dependents;
 * the others walk first and complete it after.  Returns true if a hand-off
 * walk follows: the runner spends dl_sched_handoff_len() of CPU (at once,
 * or as a burst of its own), then calls dl_sched_walk_over(); false: @d is
 * done (dl_sched_walk_over() ran).
 */
static inline bool dl_sched_callback_over(const struct dl_sched_ops *ops,
					  const struct dl_sched_runner *run,
					  const struct dl_phase_scheme *ps, const struct dl_costs *c,
					  const struct dl_csr *rel, uint32_t d, void *ctx,
					  bool deferred)
{
	if (dl_handoff_after_done(ps)) {
		ops->finish(ctx, d);
		if (dl_sched_wants_walk(ops, ps, c, rel, d, ctx))
			return true;
	} else if (!deferred && dl_sched_wants_walk(ops, ps, c, rel, d, ctx)) {
		return true;
	}
	dl_sched_walk_over(ops, run, ps, d, ctx);
	return false;
}

/*
 * dl_sched_cascade - the failed-probe cascade.  @stk holds @n devices that
 * finished without binding (room for every device of the phase: each is
 * pushed at most once); each releases nobody, so each of its dependents is
 * offered to ops->skip(), and the dependents of one that finishes
 * unattempted are offered in turn.  Depth first, the last pushed first.
 */
static inline void dl_sched_cascade(const struct dl_sched_ops *ops, const struct dl_csr *rel,
				    uint32_t *stk, uint32_t n, void *ctx)
{
	while (n) {
		uint32_t x = stk[--n];

		for (uint32_t j = rel->off[x]; j < rel->off[x + 1]; j++)
			if (ops->skip(ctx, rel->adj[j]))
				stk[n++] = rel->adj[j];
	}
}

/*
 * dl_sched_release_level - levels (ps->barrier): the barrier reached level
 * @l of @lv (dl_barrier_advance()): each of its devices, in device order,
 * whose waits are done is ready as when its last wait is done
 * (dl_sched_act(), its level no longer held); one that finished
 * unattempted instead goes to ops->released_unattempted().
 */
static inline void dl_sched_release_level(const struct dl_sched_ops *ops,
					  const struct dl_phase_scheme *ps,
					  const struct dl_levels *lv, uint32_t l, void *ctx)
{
	for (uint32_t i = lv->off[l]; i < lv->off[l + 1]; i++) {
		uint32_t y = lv->order[i];
		struct dl_dev_facts f = { 0 };

		if (!ops->facts(ctx, y, &f) || f.waits || ops->halted(ctx))
			continue;
		f.held = false;   /* released now */
		if (dl_sched_act(ops, ps, ctx, y, &f) && ops->released_unattempted)
			ops->released_unattempted(ctx, y);
	}
}

/* The levels' barrier as the scheduler moves it (dl_sched_level_reached()). */
struct dl_sched_barrier {
	const struct dl_sched_ops *ops;
	const struct dl_phase_scheme *ps;
	const struct dl_levels *lv;
	void *ctx;
};

/* dl_sched_level_reached - the barrier reached level @l (a dl_release_fn): released, unless halted. */
static inline void dl_sched_level_reached(void *arg, uint32_t l)
{
	const struct dl_sched_barrier *b = arg;

	if (!b->ops->halted(b->ctx))
		dl_sched_release_level(b->ops, b->ps, b->lv, l, b->ctx);
}

/*
 * dl_sched_level_done - levels (ps->barrier): a device of level @l of @lv
 * finished: the barrier counts it off, and the last of its level moves it
 * on (dl_barrier_done()), releasing each level it reaches
 * (dl_sched_level_reached()).  The caller holds whatever lock guards
 * @lv's counts and *@cur.
 */
static inline void dl_sched_level_done(const struct dl_sched_ops *ops,
				       const struct dl_phase_scheme *ps, struct dl_levels *lv,
				       uint32_t *cur, uint32_t l, void *ctx)
{
	struct dl_sched_barrier b = { ops, ps, lv, ctx };

	dl_barrier_done(lv->left, lv->nlevels, cur, l, dl_sched_level_reached, &b);
}

/*
 * dl_sched_levels_start - levels, a phase that releases its first level
 * itself (threads; the DES's start pass queues it, dl_sched_start()): the
 * barrier's level *@cur is released, then the barrier moves past every
 * level finished already (dl_barrier_advance()).  With the same lock.
 */
static inline void dl_sched_levels_start(const struct dl_sched_ops *ops,
					 const struct dl_phase_scheme *ps, struct dl_levels *lv,
					 uint32_t *cur, void *ctx)
{
	struct dl_sched_barrier b = { ops, ps, lv, ctx };

	dl_sched_level_reached(&b, *cur);
	dl_barrier_advance(lv->left, lv->nlevels, cur, dl_sched_level_reached, &b);
}

/*
 * dl_sched_walk_next - the main thread's walk @w goes on from *@widx to
 * the next device it takes, into *@y: a participating one (ops->facts)
 * that dl_walk_action() does not skip; in the deferred-probe walk every
 * one (dd.c probes each in turn); when probing, none the failed-probe
 * cascade finished.  *@act: what main does with it (DL_WALK_RUN,
 * DL_WALK_QUEUE: dl_sched_main_choose() next).  false at the walk's end.
 */
static inline bool dl_sched_walk_next(const struct dl_sched_ops *ops,
				      const struct dl_phase_scheme *ps, const struct dl_walk *w,
				      uint32_t *widx, void *ctx, uint32_t *y, enum dl_walk_act *act)
{
	while (*widx < w->n) {
		uint32_t x = w->v[(*widx)++];
		struct dl_dev_facts f = { 0 };

		if (!ops->facts(ctx, x, &f) || (ps->kind == DL_PK_PROBE && f.done))
			continue;
		*act = ps->kind == DL_PK_PROBE_DEFER ? DL_WALK_RUN : dl_walk_action(ps, &f);
		if (*act != DL_WALK_SKIP) {
			*y = x;
			return true;
		}
	}
	return false;
}

/*
 * dl_sched_walk_claim - main's walk takes @y, to queue its item or run it:
 * 6.16+ (dl_items_claimed_early()) claims it first (work_in_progress,
 * ops->walk_claim) as dpm_async_fn() does, so that a hand-off does not
 * queue it too; false if a hand-off claimed it first (main passes it by).
 */
static inline bool dl_sched_walk_claim(const struct dl_sched_ops *ops,
				       const struct dl_phase_scheme *ps, void *ctx, uint32_t y)
{
	return !dl_items_claimed_early(ps) || ops->walk_claim(ctx, y);
}

/* What the main thread does with an item its walk would queue (dl_sched_main_choice()). */
enum dl_main_choice {
	DL_MAIN_QUEUE,   /* queue it */
	DL_MAIN_LEAVE,   /* 6.16+ up-front pass: dpm_async_with_cleanup() fails, left to the walk */
	DL_MAIN_RUN,     /* dpm_async_fn() fails: main runs it itself (a sync fallback) */
};

/*
 * dl_sched_may_queue - may a walker (main, or the DES's deferred-probe
 * kworker) queue one more item now?  MAX_WORK (dl_async_may_queue()) over
 * the backend's count (ops->outstanding), under its lock; a refusal is a
 * sync fallback (ops->sync_fallback).
 */
static inline bool dl_sched_may_queue(const struct dl_sched_ops *ops,
				      const struct dl_order_policy *pol, void *ctx)
{
	bool ok;

	dl_sched_lock(ops, ctx);
	ok = dl_async_may_queue(pol, ops->outstanding(ctx));
	if (!ok)
		ops->sync_fallback(ctx);
	dl_sched_unlock(ops, ctx);
	return ok;
}

/*
 * dl_sched_main_choice - the main thread's walk reaches an item to queue
 * (dl_walk_action() DL_WALK_QUEUE, one left to it, or, @upfront, one of
 * 6.16+'s up-front pass) while @inflight items are queued or running:
 * MAX_WORK (dl_async_may_queue()) decides.  Read under the backend's
 * lock, if it has one, with the queueing that follows.
 */
static inline enum dl_main_choice dl_sched_main_choice(const struct dl_order_policy *pol,
						       const struct dl_phase_scheme *ps,
						       uint32_t inflight, bool upfront)
{
	if (dl_async_may_queue(pol, inflight))
		return DL_MAIN_QUEUE;
	if (upfront && dl_items_claimed_early(ps))
		return DL_MAIN_LEAVE;
	return DL_MAIN_RUN;
}

/*
 * dl_sched_main_choose - dl_sched_main_choice() over the backend's count
 * (ops->outstanding), under its lock.  The caller counts a DL_MAIN_RUN as
 * a sync fallback once main does run the item.
 */
static inline enum dl_main_choice dl_sched_main_choose(const struct dl_sched_ops *ops,
						       const struct dl_order_policy *pol,
						       const struct dl_phase_scheme *ps,
						       void *ctx, bool upfront)
{
	enum dl_main_choice c;

	dl_sched_lock(ops, ctx);
	c = dl_sched_main_choice(pol, ps, ops->outstanding(ctx), upfront);
	dl_sched_unlock(ops, ctx);
	return c;
}

/*
 * dl_sched_defer_next - the deferral walk's next step: the main walk @w's
 * next participating device from *@widx (registration order), then
 * late_initcall and the active list (dl_retry_next() over @r and @c;
 * @idle: no probe in flight).  DL_RETRY_DEVICE sets *@y and *@listed: it
 * came off the active list (a device id, whose retry and
 * device_pm_move_to_tail() the walker pays), else it is an index of @w.
 * Call it with the core locked, as dl_retry_next().
 */
static inline enum dl_retry_step dl_sched_defer_next(const struct dl_sched_ops *ops,
						     const struct dl_phase_scheme *ps,
						     const struct dl_walk *w, uint32_t *widx,
						     struct dl_retry *r, struct dl_core *c, bool idle,
						     void *ctx, uint32_t *y, bool *listed)
{
	enum dl_walk_act act;

	*listed = false;
	if (!r->late && dl_sched_walk_next(ops, ps, w, widx, ctx, y, &act))
		return DL_RETRY_DEVICE;
	*listed = true;
	return dl_retry_next(r, c, idle, y);
}

/* What a walker of the deferral does with the device it took (dl_sched_defer_take()). */
enum dl_defer_act {
	DL_DEFER_SKIP,    /* queued, probing or bound already: a no-op */
	DL_DEFER_RUN,     /* the walker probes it itself */
	DL_DEFER_QUEUE,   /* its probe is queued (async_schedule_dev()) */
};

/*
 * dl_sched_defer_take - a walker of the deferral (main, or the DES's
 * deferred-probe kworker) takes device @y (@async: its driver probes
 * asynchronously): nothing if it is busy (ops->defer_busy); a sync
 * driver's probe runs on the walker (dl_phase_on_main()), an async
 * driver's is queued unless MAX_WORK items are pending (dl_sched_may_queue()):
 * then __device_attach() retries it synchronously.
 */
static inline enum dl_defer_act dl_sched_defer_take(const struct dl_sched_ops *ops,
						    const struct dl_phase_scheme *ps,
						    const struct dl_order_policy *pol, void *ctx,
						    uint32_t y, bool async)
{
	if (ops->defer_busy(ctx, y))
		return DL_DEFER_SKIP;
	if (dl_phase_on_main(ps, pol, async) || !dl_sched_may_queue(ops, pol, ctx))
		return DL_DEFER_RUN;
	return DL_DEFER_QUEUE;
}

/*
 * MAX_WORK (dl_async_may_queue()): the ready devices the async machinery
 * refused, left to the main thread, which takes them first-in first-out
 * before going on with its walk and queues each then if it can, else runs
 * it.  A ring of one slot per device and one more: a device is in it at
 * most once (the DES's main thread may put back the device it waits for).
 * The threads backend guards it with its pool's lock.
 */
struct dl_fallback {
	uint32_t *v, head, n, cap;
};

int dl_fallback_init(struct dl_fallback *q, uint32_t ndev);
void dl_fallback_fini(struct dl_fallback *q);

static inline void dl_fallback_clear(struct dl_fallback *q)
{
	q->head = q->n = 0;
}

static inline void dl_fallback_push(struct dl_fallback *q, uint32_t y)
{
	DL_SCHED_ASSERT(q->n < q->cap);
	q->v[(q->head + q->n++) % q->cap] = y;
}

/* The device refused first, into *@y; false if none is left. */
static inline bool dl_fallback_pop(struct dl_fallback *q, uint32_t *y)
{
	if (!q->n)
		return false;
	*y = q->v[q->head];
	q->head = (q->head + 1) % q->cap;
	q->n--;
	return true;
}

/*
 * dl_sched_left_next - the main thread takes the device left to it first
 * (dl_sched_queue_ready()) off @fb into *@y, before it goes on with its
 * walk; false if none is left.  Under the backend's lock.
 */
static inline bool dl_sched_left_next(const struct dl_sched_ops *ops, struct dl_fallback *fb,
				      void *ctx, uint32_t *y)
{
	bool got;

	dl_sched_lock(ops, ctx);
	got = dl_fallback_pop(fb, y);
	dl_sched_unlock(ops, ctx);
	return got;
}

/*
 * dl_sched_left_first - the main thread is to run @y once its waits are
 * done, but devices were left to it meanwhile (on @fb): one of them may be
 * what @y waits for, so @y goes back on the ring behind them and main
 * takes those first (true); false if none was left (main waits for @y).
 * For a main thread that does not take them while it waits (the DES's;
 * threads' takes them in its wait, thr_sync_main_waits()).
 */
static inline bool dl_sched_left_first(const struct dl_sched_ops *ops, struct dl_fallback *fb,
				       void *ctx, uint32_t y)
{
	bool any;

	dl_sched_lock(ops, ctx);
	any = fb->n != 0;
	if (any)
		dl_fallback_push(fb, y);
	dl_sched_unlock(ops, ctx);
	return any;
}

/*
 * dl_sched_queue_ready - ready @y's item is queued now (ops->push) unless
 * MAX_WORK items are pending (dl_async_may_queue() over ops->outstanding):
 * then it is left to the main thread on @fb (ops->left_to_main), which
 * queues it or runs it once it is free (7.3: dpm_async_with_cleanup()
 * fails and leaves it to the main walk, whose dpm_async_fn() tries again).
 * The count and what follows from it under one hold of the backend's lock.
 */
static inline void dl_sched_queue_ready(const struct dl_sched_ops *ops,
					const struct dl_order_policy *pol, struct dl_fallback *fb,
					void *ctx, uint32_t y)
{
	dl_sched_lock(ops, ctx);
	if (dl_async_may_queue(pol, ops->outstanding(ctx))) {
		ops->push(ctx, y);
	} else {
		dl_fallback_push(fb, y);   /* at most once a phase */
		ops->left_to_main(ctx, y);
	}
	dl_sched_unlock(ops, ctx);
}

#endif
