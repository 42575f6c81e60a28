/*
 * threads.c - the real-thread engine.
 *
 * The script's ops run through the same link core as des.c, with a main PM
 * thread, a pool of worker threads and, for script ops marked "concurrent",
 * a racing thread.  Callbacks take latency * time_scale of real time.
 *
 * This file is the backend proper: how a phase's work runs on threads.
 * Its machinery has files of its own: the pool, the CPU permits and time
 * passing on a thread (thr_pool.h); completions, device locks, probe ends
 * and the halt flag (thr_sync.h); the per-thread event buffers
 * (thr_events.h); the sequential ops, the deferred-probe walk and the
 * racing thread (thr_seq.c); a phase's snapshot and figures, the op
 * loop's backend and the set-up (thr_phase.c); all over the state in
 * thr_backend.h.  Besides those, graph (a rwlock) is
 * device_links_write_lock: every call into the core holds it for write,
 * and never while time passes; readers snapshot the graph of a phase under
 * it.  Device locks are taken parent/supplier first (seqops.c).
 *
 * The DES cost model (cost.h) is mirrored: K CPUs are K permits (the main
 * thread first); a PM callback holds one for its CPU part, gives it back for
 * its sleep and takes one again to finish (des.c finishes without one); every
 * modelled overhead holds one (main_ns per device the main thread walks,
 * queue_ns to queue an item, wake_ns to start or wake an item in a PM phase,
 * the hand-off walk of kernel-async-v2, levels and cp-first, probe_check_ns
 * per deferring probe), taken as real time too, counting the real wake-up
 * latency already paid against them.  The orders with work items get a pool
 * of max_active workers (at most one per device, at least K), the async
 * workqueue's, so that sleeping and blocked items do not hold CPUs.  Probe
 * callbacks split the same way (dl_seq.sleep).
 *
 * Phases (probe, and every suspend or resume phase): the phase's dependency
 * graph is copied into CSR arrays first, so ops that race (link_del, add,
 * unbind) change the core, not the phase.  What the order does is written
 * once for both backends in sim/order (each order's file, and sched.h's
 * rules, which des.c asks too); here it is carried out on threads: a
 * device's unfinished waits are an atomic counter (pending[]) and the
 * device that completes the last one acts on it (release_dependents());
 * an item queued before its waits are done blocks on their completions
 * (kernel-async, run_blocking()) or parks without its pool thread until
 * the last one completes (kernel-async-v2, run_parking()); the thread that
 * finishes a level's last device releases the next (level_finished());
 * the main thread runs its devices in walk order once their waits are
 * done (main_walk()).  A probe that fails releases nobody: its consumers
 * stay deferred.  cp-first and levels probe on workers once the suppliers
 * are bound; the other orders probe in registration order with dd.c's
 * deferred-probe retry (thr_seq.c).
 * A failing suspend callback sets the halt flag: nothing new starts, blocked
 * waiters wake and skip, work in flight finishes; then every suspended
 * device is resumed as des.c does.  The stop flag (Ctrl-C) halts a phase
 * the same way and the run ends 'interrupted'.  Probes racing a suspend or
 * resume defer until it ends (device_block_probing()), as in the kernel.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "sim/engine/oploop.h"
#include "sim/engine/thr_backend.h"

/* ---- the queue (thr_pool.h), and what is left to the main thread ---- */

/*
 * The scheduler's hold of the pool's lock (ops->lock, ops->unlock: MAX_WORK's
 * count and the queueing that follows).  A queueing that failed under it
 * (push_locked()) aborts the run once it is released: set_abort() wakes
 * the main thread under the same lock.
 */
static void sched_lock(void *ctx)
{
	dl_pool_lock(&((struct thr *)ctx)->pool);
}

static void sched_unlock(void *ctx)
{
	struct thr *t = ctx;
	int err = t->qerr;
	uint32_t d = t->qerr_dev;

	t->qerr = 0;
	dl_pool_unlock(&t->pool);
	if (err)
		set_abort(t, err, d);
}

/* MAX_WORK's count (ops->outstanding), under the pool's lock: the items queued or running. */
static uint32_t items_outstanding(const void *ctx)
{
	return ((const struct thr *)ctx)->pool.outstanding;
}

/* Queue @d's item (ops->push), under the pool's lock; a failure is noted for sched_unlock(). */
static void push_locked(void *ctx, uint32_t d)
{
	struct thr *t = ctx;

	if (dl_pool_push_locked(&t->pool, d, t->prio[d]) && !t->qerr) {
		t->qerr = -ENOMEM;
		t->qerr_dev = d;
	}
}

/* Queue @d's item, outside the scheduler's walks (a parked item's wake, main's walk). */
static void q_push(struct thr *t, uint32_t d)
{
	sched_lock(t);
	push_locked(t, d);
	sched_unlock(t);
}

/* Ready @d was left to main (ops->left_to_main), under the pool's lock: main_fallbacks() takes it. */
static void left_to_main(void *ctx, uint32_t d)
{
	(void)d;
	dl_pool_wake_main_locked(&((struct thr *)ctx)->pool);
}

/* The main thread runs an item MAX_WORK refused to queue (ops->sync_fallback), under the pool's lock. */
static void sync_fallback(void *ctx)
{
	((struct thr *)ctx)->fallbacks++;
}

static void finished(struct thr *t);

/*
 * The main thread takes the devices dl_sched_queue_ready() left to it: queues each
 * if MAX_WORK allows by now, else runs it (7.3's main walk: dpm_async_fn()
 * tries again).  Returns how many it took.
 */
static uint32_t main_fallbacks(struct thr *t)
{
	uint32_t n = 0;

	for (;;) {
		uint32_t d;

		if (!dl_sched_left_next(&thr_sched, &t->fb, t, &d))
			return n;
		if (!dl_halted(&t->sy))
			thr_main_visit(t, &t->tw[0], d, dl_sched_may_queue(&thr_sched, t->pol, t));
		else
			finished(t);
		n++;
	}
}

/* A device of the phase is finished (run or skipped). */
static void finished(struct thr *t)
{
	dl_pool_lock(&t->pool);
	dl_pool_finished_locked(&t->pool);
	dl_pool_unlock(&t->pool);
}

/* A parked v2 item's last wait is done: queue it again (it may have taken itself back). */
static void wake_parked(struct thr *t, uint32_t y)
{
	unsigned char one = 1;

	if (atomic_compare_exchange_strong(&t->parked[y], &one, 0)) {
		atomic_store(&t->queued[y], 3);
		q_push(t, y);
	}
}


/*
 * What the scheduler reads of device @y (sched.h).  A level is queued when
 * released, so a device that becomes ready is held; an item is idle until
 * then (its wake is the completion it blocks on, or, parked, queued[]);
 * the main thread sees its devices after their waits (main_ready: none).
 */
static bool dev_facts(const void *ctx, uint32_t y, struct dl_dev_facts *f)
{
	const struct thr *t = ctx;

	if (!t->part[y])
		return false;   /* main's walk lists every device; rel the phase's only */
	f->on_main = t->on_main[y];
	f->held = true;
	f->idle = true;
	f->blocked = dl_item_parks(&t->ps) && atomic_load(&t->parked[y]);
	/* set in a PM phase only by 6.16+'s claims (and read by no rule in the deferral walk) */
	f->queued = atomic_load(&t->queued[y]) != 0;
	f->waits = atomic_load(&t->pending[y]);
	return true;
}

/* @y's facts as the phase started: the snapshot's wait count, nothing queued or parked yet. */
static bool start_facts(const void *ctx, uint32_t y, struct dl_dev_facts *f)
{
	const struct thr *t = ctx;

	if (!t->part[y])
		return false;
	f->on_main = t->on_main[y];
	f->held = true;
	f->idle = true;
	f->waits = t->wcount[y];
	return true;
}

/* A parked item's last wait is done (wake_parked()). */
static void item_wake(void *ctx, uint32_t y)
{
	struct thr *t = ctx;

	if (!dl_halted(&t->sy))
		wake_parked(t, y);
}

/* Ready @y: its item queued (MAX_WORK permitting), or finished unattempted (a supplier failed). */
static bool item_queue_ready(void *ctx, uint32_t y)
{
	struct thr *t = ctx;

	if (atomic_load(&t->failed_dep[y])) {
		dl_complete_all(&t->sy, y);
		finished(t);
		return true;
	}
	if (!dl_halted(&t->sy))
		dl_sched_queue_ready(&thr_sched, t->pol, &t->fb, t, y);
	return false;
}

/* A device @y waits for finished (dl_sched_release()): true if its last wait is done. */
static bool dev_count_down(void *ctx, uint32_t y)
{
	struct thr *t = ctx;

	return dl_counted_down(atomic_fetch_sub(&t->pending[y], 1)) == 0;
}

/* The cascade reaches @y (dl_sched_cascade()): counted down, it finishes when its waits are. */
static bool failed_skip(void *ctx, uint32_t y)
{
	struct thr *t = ctx;

	atomic_store(&t->failed_dep[y], 1);
	return dl_counted_down(atomic_fetch_sub(&t->pending[y], 1)) == 0 &&
	       dl_sched_on_ready(&thr_sched, &t->ps, t, y);
}

/* Room for the failed-probe cascade's stack (a device at most once); NULL: out of memory. */
static uint32_t *cascade_stack(struct thr *t, uint32_t **stk, uint32_t d)
{
	if (!*stk && !(*stk = malloc(((size_t)t->n + 1) * sizeof(**stk))))
		set_abort(t, -ENOMEM, d);
	return *stk;
}

/*
 * @d finished (@ok: bound, or its PM callback ran): count it off its
 * dependents and queue those that became ready.  A probe that did not bind
 * releases nobody: its dependents, and theirs, finish unattempted
 * (dl_sched_cascade(), from every dependent that did, then from @d).
 */
static void release_dependents(struct thr *t, uint32_t d, bool ok)
{
	uint32_t *stk = NULL, n = 0;

	if (!ok && cascade_stack(t, &stk, d))
		stk[n++] = d;
	for (uint32_t j = t->rel.off[d], y;
	     ok && dl_sched_release(&thr_sched, &t->ps, &t->rel, d, t, &j, &y);)
		if (cascade_stack(t, &stk, y))
			stk[n++] = y;
	if (n)
		dl_sched_cascade(&thr_sched, &t->rel, stk, n, t);
	free(stk);
}

/*
 * Levels: the barrier released @d's level, and it finished unattempted (a
 * supplier did not bind: item_queue_ready()): its dependents cascade, and
 * its level counts it off at once.  Called with lmx held.
 */
static void released_unattempted(void *ctx, uint32_t d)
{
	struct thr *t = ctx;

	release_dependents(t, d, false);
	dl_count_down(&t->lv.left[t->lv.level[d]]);
}

/* Levels: @d finished; the last of its level moves the barrier (dl_sched_level_done()). */
static void level_finished(struct thr *t, uint32_t d)
{
	pthread_mutex_lock(&t->lmx);
	dl_sched_level_done(&thr_sched, &t->ps, &t->lv, &t->cur_level, t->lv.level[d], t);
	pthread_mutex_unlock(&t->lmx);
}

/* ---- callbacks ---- */


/*
 * A hand-off claims @y (work_in_progress: queued[] 2) and queues it, under
 * the pool's lock (dl_sched_claim()); nothing if the walk claimed it first.
 */
static void handoff_claim(void *ctx, uint32_t y)
{
	struct thr *t = ctx;
	unsigned char idle = 0;

	if (atomic_compare_exchange_strong(&t->queued[y], &idle, 2))
		push_locked(t, y);
}

static bool thr_halted(void *ctx)
{
	return dl_halted(&((struct thr *)ctx)->sy);
}

/* @d's PM callback ran: complete it, and count it off its dependents (des_device_finished()). */
static void finish(void *ctx, uint32_t d)
{
	struct thr *t = ctx;

	atomic_store(&t->ok[d], 1);
	dl_complete_all(&t->sy, d);
	if (t->ps.link_aware && !dl_halted(&t->sy))
		release_dependents(t, d, true);
}

/*
 * kernel-async-v2: @d finished and walked its dependents; queue every async
 * one not queued yet (dpm_async_resume_subordinate(),
 * dpm_async_suspend_superior() of 6.16+; dl_sched_handoff()).
 */
static void handoff_queue(void *ctx, uint32_t d)
{
	struct thr *t = ctx;

	dl_sched_handoff(&thr_sched, &t->ps, t->pol, &t->rel, d, t);
}

/*
 * Main's walk claims @d's item (queued[] 1) before it queues or runs it
 * (dl_sched_walk_claim()); false if a hand-off claimed it first.  Main's
 * own devices no hand-off queues.
 */
static bool walk_claim(void *ctx, uint32_t d)
{
	struct thr *t = ctx;
	unsigned char idle = 0;

	return t->on_main[d] || atomic_compare_exchange_strong(&t->queued[d], &idle, 1);
}

/* The deferral walk took @d, already queued, probing or bound: bus_probe_device() is a no-op. */
static bool defer_busy(void *ctx, uint32_t d)
{
	struct thr *t = ctx;
	bool free;

	if (atomic_load(&t->queued[d]))
		return true;
	core_lock(&t->tw[0]);
	free = t->core.dev[d].registered && t->core.dev[d].state == DL_DEV_NO_DRIVER;
	core_unlock(&t->tw[0]);
	return !free;
}

const struct dl_sched_ops thr_sched = {
	.facts = dev_facts, .start = start_facts, .wake = item_wake, .queue = item_queue_ready,
	.claim = handoff_claim, .skip = failed_skip, .released_unattempted = released_unattempted,
	.halted = thr_halted, .finish = finish, .handoff_queue = handoff_queue,
	.defer_busy = defer_busy, .sync_fallback = sync_fallback, .count_down = dev_count_down,
	.lock = sched_lock, .unlock = sched_unlock, .outstanding = items_outstanding,
	.push = push_locked, .left_to_main = left_to_main, .walk_claim = walk_claim,
};

/*
 * Run @d's callback of this phase on thread @w (holding a CPU): its CPU
 * part on the CPU, its sleep without (des.c), then complete it.
 */
static void run_cb(struct thr *t, struct tw *w, uint32_t d)
{
	int err, depth;
	int64_t cpu;
	bool cb;

	if (t->pk == PK_PROBE) {
		struct dl_seq q;

		thr_seq_bind(w, &q);
		q.sleep = thr_sleep_off_cpu;
		t->attempted[d] = 1;
		dl_seq_probe_one(&q, d);
		core_lock(w);
		cb = t->core.dev[d].state == DL_DEV_DRIVER_BOUND;   /* bound */
		core_unlock(w);
		atomic_store(&t->ok[d], cb);
		dl_complete_all(&t->sy, d);
		release_dependents(t, d, cb);
		return;
	}
	atomic_store(&t->sy.started[d], 1);
	cb = t->part[d] != DL_PART_NO_DRIVER;   /* no driver, no callback (dl_pm_part()) */
	if (cb)
		emit(t, w->th.id, dl_pm_event((unsigned)t->pk, false), d, t->phase, 0);
	cpu = dl_cost_cpu_part(t->lat[d], t->sc->prof[t->sc->dev[d].profile].cpu_ppm);
	dl_thr_take_time(&w->th, cpu);
	if (t->lat[d] > cpu) {
		/* the sleep frees the CPU; finishing takes one again (the caller frees it) */
		dl_cpu_put(&w->th);
		dl_thr_take_time(&w->th, t->lat[d] - cpu);
		dl_cpu_get(&w->th);
	}
	err = 0;
	if (cb) {
		err = fault_for(t, d, dl_phase_lat_key((unsigned)t->pk, t->phase));
		emit(t, w->th.id, dl_pm_event((unsigned)t->pk, true), d, t->phase, err);
	}
	depth = dl_pm_depth_after((unsigned)t->pk, t->phase, err);
	if (depth < 0) {
		set_abort(t, err, d);
	} else {
		t->newdepth[d] = (uint8_t)depth;
		t->depth_set[d] = 1;
	}
	/* complete it and hand off in its order's sequence; a hand-off walk takes its time here */
	if (dl_sched_callback_over(&thr_sched, NULL, &t->ps, &t->cost, &t->rel, d, t, false)) {
		/* read racily: a cost, not a decision */
		dl_thr_take_time(&w->th, dl_sched_handoff_len(&thr_sched, &t->ps, &t->cost, &t->rel, d, t));
		dl_sched_walk_over(&thr_sched, NULL, &t->ps, d, t);
	}
}

/*
 * A classic kernel-async item: started (wake_ns), it waits for its
 * dependencies without a CPU, and is woken (wake_ns after the last one).
 * Returns true if the callback ran.
 */
static bool run_blocking(struct thr *t, struct tw *w, uint32_t d)
{
	int64_t last = 0;
	bool blocked = false;

	for (uint32_t j = t->waits.off[d]; j < t->waits.off[d + 1] && !dl_halted(&t->sy); j++) {
		uint32_t y = t->waits.adj[j];
		int64_t at;

		if (atomic_load_explicit(&t->sy.done[y], memory_order_acquire))
			continue;
		if (!blocked) {
			emit(t, w->th.id, DL_EV_WORK_BLOCK, d, t->phase, 0);
			dl_cpu_put(&w->th);
			blocked = true;
		}
		at = dl_wait_done(&t->sy, &w->th, y);
		if (at > last)
			last = at;
	}
	if (blocked) {
		int64_t got;

		if (!dl_halted(&t->sy))
			emit(t, w->th.id, DL_EV_WORK_WAKE, d, t->phase, 0);
		got = dl_cpu_get(&w->th);

		/* woken at the last completion; a wait for a CPU does not count as the wake */
		if (got > last)
			last = got;
		dl_thr_pass_until(&w->th, (last ? last : dl_mono_ns()) +
				  dl_rclock_real(&t->pool.clock, dl_cost_item(&t->cost, dl_item_wake(&t->ps), false)));
	}
	if (dl_halted(&t->sy))
		return false;
	run_cb(t, w, d);
	return true;
}

/*
 * A kernel-async-v2 item (6.16+): its waits done, it runs; else it blocks
 * (work_block), parked without its pool thread, until release_dependents()
 * queues it again when its last wait is done (queued[] 3: a wake, wake_ns
 * paid by run_task()).  A parked item whose last wait completed meanwhile
 * takes itself back.  Returns true if the callback ran.
 */
static bool run_parking(struct thr *t, struct tw *w, uint32_t d)
{
	if (atomic_load(&t->queued[d]) == 3) {
		emit(t, w->th.id, DL_EV_WORK_WAKE, d, t->phase, 0);
		w->th.blocked_ns += dl_mono_ns() - t->parked_at[d];
		w->th.wakeups++;
	} else if (atomic_load(&t->pending[d]) != 0) {
		unsigned char one = 1;

		emit(t, w->th.id, DL_EV_WORK_BLOCK, d, t->phase, 0);
		t->parked_at[d] = dl_mono_ns();
		atomic_store(&t->parked[d], 1);
		if (atomic_load(&t->pending[d]) != 0 ||
		    !atomic_compare_exchange_strong(&t->parked[d], &one, 0))
			return false;   /* parked, or already queued again */
		emit(t, w->th.id, DL_EV_WORK_WAKE, d, t->phase, 0);
		w->th.wakeups++;
	}
	if (dl_halted(&t->sy))
		return false;
	run_cb(t, w, d);
	return true;
}

/* A queued item on worker @w: its overhead, then its work.  Returns true if a callback ran. */
static bool run_task(struct thr *t, struct tw *w, const struct dl_pool_item *k)
{
	/* a worker back from its previous item starts this one without a wake (cost.h) */
	int64_t overhead = dl_cost_start(&t->cost, dl_item_pays(&t->ps),
					 t->pk == PK_PROBE || t->pk == PK_PROBE_DEFER, k->back);
	/*
	 * The overhead runs from when the item was queued if the worker was
	 * idle (so the real wake-up latency counts against it), else from
	 * when the worker's previous work ended.
	 */
	int64_t from = w->th.chained && w->th.cursor > k->pushed ? w->th.cursor : k->pushed, got;
	bool ran = false;

	got = dl_cpu_get(&w->th);
	if (got > from)
		from = got;   /* the overhead is paid on a CPU */
	{
		unsigned a = atomic_fetch_add(&t->alive, 1) + 1, p = atomic_load(&t->peak);
		uint32_t w0 = atomic_load(&t->kpool), w1 = w0;

		while (a > p && !atomic_compare_exchange_weak(&t->peak, &p, a))
			;
		/*
		 * An idle kworker woken for it: if it was the last idle one, the
		 * pool creates one first (dl_kpool_take(), once per new one).
		 */
		if (!k->back && dl_kpool_take(&w1, a, &t->cost) &&
		    atomic_compare_exchange_strong(&t->kpool, &w0, w1))
			overhead += t->cost.worker_new_ns;
	}
	dl_thr_pass_until(&w->th, from + dl_rclock_real(&t->pool.clock, overhead));
	if (t->pk == PK_PROBE_DEFER) {
		struct dl_seq q;

		/*
		 * Cleared before the attempt: once it defers, a bind may put the
		 * device back on the active list, and the main thread must not
		 * skip it there as "already queued" (it would be lost).
		 */
		atomic_store(&t->queued[k->dev], 0);
		thr_seq_bind(w, &q);
		q.sleep = thr_sleep_off_cpu;
		dl_seq_probe_one(&q, k->dev);
	} else if (!dl_halted(&t->sy)) {
		if (dl_sched_item_waits(&t->ps)) {
			/* queued before its waits are done: it parks or blocks on them */
			ran = dl_item_parks(&t->ps) ? run_parking(t, w, k->dev) :
						      run_blocking(t, w, k->dev);
		} else {
			run_cb(t, w, k->dev);
			ran = true;
		}
	}
	atomic_fetch_sub(&t->alive, 1);
	dl_cpu_put(&w->th);
	if (ran && t->ps.barrier)
		level_finished(t, k->dev);
	return ran;
}

/* The pool's run() (thr_pool.h): item @k on worker @th; true if a device of the phase finished. */
bool thr_pool_run(void *ctx, struct dl_rthread *th, const struct dl_pool_item *k)
{
	struct thr *t = ctx;
	struct tw *w = tw_of(th);
	bool ran = false;

	w->op_index = t->cur_op;
	w->opr = t->opr;
	if (!dl_halted(&t->sy))
		ran = run_task(t, w, k);
	else if (t->pk == PK_PROBE_DEFER)
		atomic_store(&t->queued[k->dev], 0);
	return ran && t->pk != PK_PROBE_DEFER;
}

/* The pool's stop_seen(): Ctrl-C, for a thread that sleeps. */
bool thr_pool_stop_seen(void *ctx, const struct dl_rthread *th)
{
	return dl_stop_seen(&((struct thr *)ctx)->sy, th);
}

static uint32_t main_fallbacks(struct thr *t);

/* The main thread waits for a completion (thr_sync.h): it takes what was left to it meanwhile. */
void thr_sync_main_waits(void *ctx)
{
	main_fallbacks(ctx);
}

/* ---- phases ---- */

/* Wait until every queued item finished and, with @all, every device did (or halt). */
void thr_wait_drain(struct thr *t, bool all)
{
	dl_thr_unchain(&t->tw[0].th);
	dl_pool_lock(&t->pool);
	while (t->pool.outstanding > 0 || (all && t->pool.remaining > 0 && !dl_halted(&t->sy))) {
		dl_pool_unlock(&t->pool);
		dl_poll_stop(&t->sy);
		main_fallbacks(t);
		dl_pool_lock(&t->pool);
		if (t->pool.outstanding == 0 && (!all || t->pool.remaining == 0 || dl_halted(&t->sy)))
			break;
		dl_pool_wait_main(&t->pool);
	}
	dl_pool_unlock(&t->pool);
}

/* Main (or the thread @m) spends @ns on a CPU, nothing else running meanwhile; none if @ns <= 0. */
void thr_main_spend(struct tw *m, int64_t ns)
{
	if (ns <= 0)
		return;
	dl_cpu_get(&m->th);
	dl_thr_take_time(&m->th, ns);
	dl_cpu_put(&m->th);
}

/* The main thread walks to device @d: main_ns on a CPU, then the callback or the queueing. */
void thr_main_visit(struct thr *t, struct tw *m, uint32_t d, bool queue)
{
	dl_cpu_get(&m->th);
	dl_thr_take_time(&m->th, dl_cost_main(&t->cost, t->ps.serial) +
			 (queue ? dl_cost_queue(&t->cost, t->pk == PK_PROBE || t->pk == PK_PROBE_DEFER) : 0));
	if (queue) {
		dl_cpu_put(&m->th);
		q_push(t, d);
		return;
	}
	run_cb(t, m, d);
	dl_cpu_put(&m->th);
	finished(t);
}

/*
 * The main thread runs @d once what it waits for is done; false if the
 * phase halted meanwhile.  A supplier that did not bind: @d finishes
 * unattempted.
 */
static bool main_run(struct thr *t, struct tw *m, uint32_t d)
{
	bool deps_ok = true;

	for (uint32_t j = t->waits.off[d]; j < t->waits.off[d + 1]; j++) {
		dl_wait_done(&t->sy, &m->th, t->waits.adj[j]);
		deps_ok = deps_ok && atomic_load(&t->ok[t->waits.adj[j]]);
	}
	if (dl_halted(&t->sy))
		return false;
	if (!deps_ok) {
		dl_complete_all(&t->sy, d);
		finished(t);
		release_dependents(t, d, false);
		return true;
	}
	thr_main_visit(t, m, d, false);
	return true;
}

/*
 * The main thread's walk through a phase whose devices wait for others
 * (not main_only, no barrier): the items ready at once (dl_sched_start()),
 * then each device dl_sched_walk_next() names (v2: its up-front items
 * first), taking in turn what was left to it (MAX_WORK).  Returns early
 * if the phase halts.
 */
static void main_walk(struct thr *t, struct tw *m)
{
	uint32_t i = 0, d;
	enum dl_walk_act act;

	dl_sched_start(&thr_sched, &t->ps, &t->w, t);
	while (!dl_halted(&t->sy) && !dl_poll_stop(&t->sy)) {
		enum dl_main_choice c = DL_MAIN_RUN;

		if (i >= t->w.nupfront)
			main_fallbacks(t);
		if (!dl_sched_walk_next(&thr_sched, &t->ps, &t->w, &i, t, &d, &act))
			return;
		if (act == DL_WALK_QUEUE)
			c = dl_sched_main_choose(&thr_sched, t->pol, &t->ps, t, i <= t->w.nupfront);
		if (c == DL_MAIN_LEAVE || !dl_sched_walk_claim(&thr_sched, &t->ps, t, d))
			continue;
		if (c == DL_MAIN_QUEUE) {
			thr_main_visit(t, m, d, true);
			continue;
		}
		if (act == DL_WALK_QUEUE)
			t->fallbacks++;   /* MAX_WORK: dpm_async_fn() fails, main runs it */
		if (!main_run(t, m, d))
			return;
	}
}

/*
 * Run one phase over the devices marked in part[] (lat[] sampled): probe
 * with the deferral orders too (thr_probe_deferral()).
 */
int thr_run_phase(struct thr *t)
{
	struct tw *m = &t->tw[0];
	uint32_t remaining = 0;
	int64_t w0;
	int err;

	atomic_store(&t->sy.halt, dl_poll_stop(&t->sy) ? DL_HALT_STOP : DL_HALT_NONE);
	atomic_store(&t->peak, 0);
	for (uint32_t d = 0; d < t->n; d++) {
		t->depth_set[d] = 0;
		t->prio[d] = 0;
		t->attempted[d] = 0;
		atomic_store_explicit(&t->sy.done[d], (unsigned char)!t->part[d], memory_order_relaxed);
		atomic_store_explicit(&t->failed_dep[d], 0, memory_order_relaxed);
		atomic_store_explicit(&t->ok[d], 0, memory_order_relaxed);
		atomic_store_explicit(&t->sy.started[d], 0, memory_order_relaxed);
		atomic_store_explicit(&t->queued[d], 0, memory_order_relaxed);
		atomic_store_explicit(&t->parked[d], 0, memory_order_relaxed);
		if (!t->part[d])
			continue;
		remaining++;
		t->on_main[d] = dl_phase_on_main(&t->ps, t->pol, t->core.dev[d].async);
	}
	err = thr_snapshot_phase(t);
	if (err)
		return err;
	for (uint32_t d = 0; d < t->n; d++) {
		t->wcount[d] = t->waits.off[d + 1] - t->waits.off[d];
		atomic_store_explicit(&t->pending[d], t->wcount[d], memory_order_relaxed);
	}
	dl_pool_lock(&t->pool);
	t->pool.remaining = remaining;
	t->pool.outstanding = 0;
	dl_fallback_clear(&t->fb);
	dl_pool_unlock(&t->pool);

	w0 = dl_mono_ns();
	if (t->pk == PK_PROBE_DEFER) {
		/* registration order, then the deferred-probe retry (thr_seq.c) */
		err = thr_probe_deferral(t);
	} else if (t->ps.main_only) {
		/* naive, prepare and complete: the main thread, in walk order, no waits */
		for (uint32_t i = 0; i < t->w.n && !dl_halted(&t->sy) && !dl_poll_stop(&t->sy); i++)
			if (t->part[t->w.v[i]])
				thr_main_visit(t, m, t->w.v[i], false);
	} else if (t->ps.barrier) {
		/* the last device of a level releases the next, on its own thread */
		pthread_mutex_lock(&t->lmx);
		dl_sched_levels_start(&thr_sched, &t->ps, &t->lv, &t->cur_level, t);
		pthread_mutex_unlock(&t->lmx);
	} else {
		main_walk(t, m);
	}
	thr_wait_drain(t, t->pk != PK_PROBE_DEFER);   /* a deferral's devices are not counted off */
	t->opr->sync_fallbacks += t->fallbacks;
	t->fallbacks = 0;
	thr_account_phase(t, w0);

	core_lock(m);
	for (uint32_t d = 0; d < t->n; d++) {
		if (t->depth_set[d])
			t->core.dev[d].pm_depth = t->newdepth[d];
		if (t->pk == PK_PROBE && t->part[d] && !t->attempted[d])
			dl_deferred_add(&t->core, d);   /* as des.c: left deferred */
	}
	core_unlock(m);
	if (atomic_load(&t->peak) > t->opr->peak_workers)
		t->opr->peak_workers = atomic_load(&t->peak);
	for (uint32_t w = 0; w < t->nthr; w++) {
		t->opr->blocked_ns += (int64_t)((double)t->tw[w].th.blocked_ns / t->pool.clock.scale);
		t->opr->wakeups += t->tw[w].th.wakeups;
		t->r->wakeups += t->tw[w].th.wakeups;
		t->tw[w].th.blocked_ns = 0;
		t->tw[w].th.wakeups = 0;
	}
	thr_flush_events(t);
	return err ? err : atomic_load(&t->sy.halt) == DL_HALT_STOP ? -EINTR : 0;
}
