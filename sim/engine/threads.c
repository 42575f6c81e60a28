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
 * racing thread (thr_seq.c, over the state in thr_backend.h).  Besides those, graph (a rwlock) is
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
 * Phases (probe, and every suspend or resume phase):
 *  - the phase's dependency graph is copied into CSR arrays first, so ops
 *    that race (link_del, add, unbind) change the core, not the phase;
 *  - cp-first and levels probe a device on a worker once its suppliers are
 *    bound (a failed supplier releases nobody: its consumers stay
 *    deferred); sync, naive, kernel-async and kernel-async-v2 probe in
 *    registration order on the main thread (the async ones hand async
 *    devices to workers) with the deferred-probe retry of dd.c;
 *  - kernel-async queues an async device as the walk reaches it (suspend)
 *    or every one before the walk's first sync device (resume, 6.12's
 *    "upfront" loop); its item blocks on the completions of what it waits for;
 *  - kernel-async-v2 (6.16+) queues the async roots (resume) or leaves
 *    (suspend) first; the walk queues every async device not queued yet
 *    (queued[]) and runs the sync ones; a finishing device completes its
 *    waiters, then queues its async dependents not queued yet (handoff());
 *    an item whose waits are not done parks (run_v2()) until the last one
 *    completes;
 *  - cp-first (and kernel-async-v2 when probing) queue a device when its
 *    atomic counter of unfinished dependencies drops to zero (cp-first:
 *    ready work by longest remaining path); levels queues a level at a time: the thread finishing
 *    a level's last device releases the next (des.c's barrier);
 *  - sync devices (and every device under sync and naive) run on the main
 *    thread in walk order after waiting for their dependencies (naive:
 *    registration order, no waits).
 *  - prepare and complete run on the main thread alone under every order,
 *    dpm_list forward and backward, waiting for nothing (des.c's).
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
#include <string.h>
#include <sys/prctl.h>

#include "sim/engine/bound.h"
#include "sim/engine/oploop.h"
#include "sim/engine/run.h"
#include "sim/engine/thr_backend.h"
#include "sim/engine/threads.h"

/* ---- events (thr_events.h) ---- */

/* The core's sink: the core only runs under graph, written by core_owner. */
static void core_emit(void *ctx, struct dl_event *e)
{
	struct thr *t = ctx;

	dl_tevents_push(&t->ev, t->core_owner, e);
}

/* Main thread, no other thread active: the buffered events to the sink. */
static void flush_events(struct thr *t)
{
	if (!t->racing)
		dl_tevents_flush(&t->ev, &t->o->sink, &t->r->events, &t->r->links_refused);
}

/* ---- the queue (thr_pool.h), and what is left to the main thread ---- */

static void q_push(struct thr *t, uint32_t d)
{
	int err;

	dl_pool_lock(&t->pool);
	err = dl_pool_push_locked(&t->pool, d, t->prio[d]);
	dl_pool_unlock(&t->pool);
	if (err)
		set_abort(t, -ENOMEM, d);
}

/*
 * Queue ready async device @d (kernel-async-v2's hand-off) unless MAX_WORK
 * items are pending: then the main thread runs it (main_fallbacks()), as
 * des.c's main_fallback() does.
 */
static void q_push_ready(struct thr *t, uint32_t d)
{
	int err = 0;

	dl_pool_lock(&t->pool);
	if (dl_async_may_queue(t->pol, t->pool.outstanding)) {
		err = dl_pool_push_locked(&t->pool, d, t->prio[d]);
	} else {
		t->fb[t->fb_n++] = d;   /* at most once a phase */
		dl_pool_wake_main_locked(&t->pool);
	}
	dl_pool_unlock(&t->pool);
	if (err)
		set_abort(t, -ENOMEM, d);
}

/* May the main thread queue one more item (classic walk, probe hand-off)?  MAX_WORK. */
bool thr_may_queue(struct thr *t)
{
	bool ok;

	dl_pool_lock(&t->pool);
	ok = dl_async_may_queue(t->pol, t->pool.outstanding);
	if (!ok)
		t->fallbacks++;
	dl_pool_unlock(&t->pool);
	return ok;
}

static void finished(struct thr *t);

/*
 * The main thread takes the devices q_push_ready() left to it: queues each
 * if MAX_WORK allows by now, else runs it (7.3's main walk: dpm_async_fn()
 * tries again).  Returns how many it took.
 */
static uint32_t main_fallbacks(struct thr *t)
{
	uint32_t n = 0;

	for (;;) {
		uint32_t d;

		dl_pool_lock(&t->pool);
		if (t->fb_head == t->fb_n) {
			dl_pool_unlock(&t->pool);
			return n;
		}
		d = t->fb[t->fb_head++];
		dl_pool_unlock(&t->pool);
		if (!dl_halted(&t->sy))
			thr_main_visit(t, &t->tw[0], d, thr_may_queue(t));
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

/* ---- the phase's graph (graph.h) ---- */

/* Apply the dpm_list moves the core has pending (dl_dpm_settle()): snapshot_phase() reads the list. */
static void settle_dpm(struct thr *t)
{
	core_lock(&t->tw[0]);
	dl_dpm_settle(&t->core);
	core_unlock(&t->tw[0]);
}

/* A kernel-async-v2 suspend or resume phase (6.16+): des.c's v2_phase(). */
static bool v2_phase(const struct thr *t)
{
	return t->ps.v2;
}

/* The phase as phase.h sees it: indices are device ids. */
static struct dl_phase_view phase_view(const struct thr *t)
{
	return (struct dl_phase_view){
		.g = { .topo = t->topo, .ntopo = t->ntopo, .off = t->rel.off, .adj = t->rel.adj,
		       .lat = t->lat, .prof = t->prof },
		.list = t->g.ord, .nlist = t->g.m, .id = NULL, .index_of = t->index_of,
		.nid = t->n, .part = { t->part, 1 }, .on_main = { t->on_main, 1 },
	};
}

/* Under graph (read): the walk, and what waits for what in this phase. */
static int snapshot_locked(struct thr *t)
{
	bool reverse = t->ps.serial ? t->phase == DL_PH_COMPLETE : t->pk == PK_SUSPEND;
	struct dl_walk_how h = { .ps = &t->ps, .core = &t->core, .phase = t->phase };
	unsigned kind = t->pk == PK_SUSPEND ? DL_DEP_SUSPEND :
			t->pk == PK_RESUME ? DL_DEP_RESUME : DL_DEP_PROBE;
	struct dl_phase_view v;
	uint32_t m;
	int err;

	err = dl_graph_get(&t->g, &t->core, t->sc, ++t->gen, kind);
	if (err)
		return err;
	m = t->g.m;
	for (uint32_t d = 0; d < t->n; d++)
		t->index_of[d] = t->g.pos[d] == DL_NONE ? DL_NONE : d;
	/* dpm_list (reversed for suspend) lists every device after what it waits for */
	t->ntopo = 0;
	for (uint32_t k = 0; k < m; k++) {
		uint32_t d = t->g.ord[reverse ? m - 1 - k : k];

		if (t->part[d])
			t->topo[t->ntopo++] = d;
	}
	v = phase_view(t);
	dl_phase_walk(&v, &h, &t->w);
	/* dpm_prepare(), dpm_complete(): nobody waits */
	return dl_graph_by_id(&t->g, t->part, t->ps.serial, &t->rel, &t->waits);
}

/*
 * The phase, which ran from the real time @w0, added to the op: its
 * makespan and its lower bound, over every participating device, or, as
 * des.c does, only over those whose callback started when some never did
 * (a fault aborted the phase, a failed probe left consumers unprobed, a
 * stop), so that the bound stays below the makespan.
 */
static void account_phase(struct thr *t, int64_t w0)
{
	int64_t mk = (int64_t)((double)(dl_mono_ns() - w0) / t->pool.clock.scale);
	uint32_t n = 0;
	struct dl_phase_graph g;
	struct dl_bound b;

	for (uint32_t i = 0; i < t->ntopo; i++)
		if (atomic_load(&t->sy.started[t->topo[i]]))
			t->topo[n++] = t->topo[i];   /* the phase is over: topo may shrink */
	t->ntopo = n;
	g = phase_view(t).g;
	b = dl_bound_phase(&g, t->sc, t->K, t->ps.serial, t->best);
	dl_op_add_phase(t->opr, mk, &b, -1);   /* no main bound in threads mode */
}

/* Levels and cp-first priorities from the snapshot (phase.h). */
static void plan_phase(struct thr *t)
{
	struct dl_phase_view v = phase_view(t);

	if (t->ps.barrier) {
		dl_phase_levels(&v, &t->lv);
		t->maxlevel = t->lv.nlevels - 1;
		t->cur_level = 0;
	}
	if (t->ps.by_priority)
		dl_phase_priorities(&v.g, t->n, t->prio);
}

/*
 * The phase's snapshot, once the core's pending dpm_list moves are applied:
 * the walk, what waits for what, then levels and priorities (phase.h).
 */
static int snapshot_phase(struct thr *t)
{
	int err;

	settle_dpm(t);
	pthread_rwlock_rdlock(&t->graph);
	err = snapshot_locked(t);
	pthread_rwlock_unlock(&t->graph);
	if (!err)
		plan_phase(t);
	return err;
}

static bool ready_queue_mode(const struct thr *t)
{
	return t->ps.link_aware && t->ps.queue_when_ready && !t->ps.barrier;
}

/*
 * @d finished (@ok: bound, or its PM callback ran): count it off its
 * dependents and queue those that became ready.  A probe that did not bind
 * releases nobody: its dependents, and theirs, finish unattempted (a stack,
 * not recursion: a chain may be long).
 */
static void release_dependents(struct thr *t, uint32_t d, bool ok)
{
	struct dl_idvec skip = { 0 };

	for (;;) {
		for (uint32_t j = t->rel.off[d]; j < t->rel.off[d + 1]; j++) {
			uint32_t y = t->rel.adj[j];

			if (!ok)
				atomic_store(&t->failed_dep[y], 1);
			if (atomic_fetch_sub(&t->pending[y], 1) != 1 || t->ps.barrier)
				continue;   /* levels: skipped when the level is released */
			if (atomic_load(&t->failed_dep[y])) {
				if (t->on_main[y])
					continue;   /* the main thread sees it after its waits */
				dl_complete_all(&t->sy, y);
				finished(t);
				if (dl_idvec_push(&skip, y))
					set_abort(t, -ENOMEM, y);
			} else if (ready_queue_mode(t) && !t->on_main[y] && !dl_halted(&t->sy)) {
				q_push_ready(t, y);
			} else if (v2_phase(t) && !dl_halted(&t->sy)) {
				unsigned char one = 1;

				/* its last wait is done: wake a parked v2 item */
				if (atomic_compare_exchange_strong(&t->parked[y], &one, 0)) {
					atomic_store(&t->queued[y], 3);
					q_push(t, y);
				}
			}
		}
		if (!skip.n)
			break;
		d = skip.v[--skip.n];
		ok = false;
	}
	dl_idvec_free(&skip);
}

/*
 * Levels: queue the devices of level cur_level (des.c's barrier release),
 * and the next one at once if none of them is left to run.  A device whose
 * supplier did not bind finishes unattempted.  Called with lmx held.
 */
static void release_level_locked(struct thr *t)
{
	while (t->cur_level <= t->maxlevel && !dl_halted(&t->sy)) {
		uint32_t l = t->cur_level;

		for (uint32_t i = t->lv.off[l]; i < t->lv.off[l + 1]; i++) {
			uint32_t d = t->lv.order[i];

			if (!atomic_load(&t->failed_dep[d])) {
				q_push(t, d);
				continue;
			}
			dl_complete_all(&t->sy, d);
			finished(t);
			release_dependents(t, d, false);
			t->lv.left[l]--;
		}
		if (t->lv.left[l])
			return;
		t->cur_level++;
	}
}

/* Levels: @d of the current level finished; the last one releases the next level. */
static void level_finished(struct thr *t, uint32_t d)
{
	pthread_mutex_lock(&t->lmx);
	if (--t->lv.left[t->lv.level[d]] == 0 && t->lv.level[d] == t->cur_level) {
		t->cur_level++;
		release_level_locked(t);
	}
	pthread_mutex_unlock(&t->lmx);
}

/* ---- callbacks ---- */


/*
 * des.c's hand-off walk after @d's callback (cost.h): handoff_ns per
 * dependent, queue_ns per item it will queue (read racily: a cost, not a
 * decision): under kernel-async-v2 every async dependent not queued yet,
 * under the other orders those it makes ready.
 */
static int64_t handoff_len(const struct thr *t, uint32_t d)
{
	int64_t len = 0;

	for (uint32_t j = t->rel.off[d]; j < t->rel.off[d + 1]; j++) {
		uint32_t y = t->rel.adj[j];

		len += t->cost.handoff_ns;
		if (!t->on_main[y] && (v2_phase(t) ? atomic_load(&t->queued[y]) == 0 :
				       atomic_load(&t->pending[y]) == 1))
			len += t->cost.queue_ns;
	}
	return len;
}

/*
 * kernel-async-v2: @d finished and walked its dependents; queue every async
 * one not queued yet (dpm_async_resume_subordinate(),
 * dpm_async_suspend_superior() of 6.16+; des.c's handoff_queue()).  When
 * MAX_WORK items are pending, dpm_async_with_cleanup() leaves it to the
 * main walk.
 */
static void handoff(struct thr *t, uint32_t d)
{
	for (uint32_t j = t->rel.off[d]; j < t->rel.off[d + 1]; j++) {
		uint32_t y = t->rel.adj[j];
		unsigned char idle = 0;
		bool ok;

		if (t->on_main[y] || atomic_load(&t->queued[y]) != 0)
			continue;
		dl_pool_lock(&t->pool);
		ok = dl_async_may_queue(t->pol, t->pool.outstanding) &&
		     atomic_compare_exchange_strong(&t->queued[y], &idle, 2);
		dl_pool_unlock(&t->pool);
		if (ok)
			q_push(t, y);
	}
}

/*
 * Run @d's callback of this phase on thread @w (holding a CPU): its CPU
 * part on the CPU, its sleep without (des.c), then complete it.
 */
static void run_cb(struct thr *t, struct tw *w, uint32_t d)
{
	int err, depth;
	int64_t cpu;
	bool ok = true;

	if (t->pk == PK_PROBE) {
		struct dl_seq q;

		thr_seq_bind(w, &q);
		q.sleep = thr_sleep_off_cpu;
		t->attempted[d] = 1;
		dl_seq_probe_one(&q, d);
		core_lock(w);
		ok = t->core.dev[d].state == DL_DEV_DRIVER_BOUND;
		core_unlock(w);
		atomic_store(&t->ok[d], ok);
		dl_complete_all(&t->sy, d);
		release_dependents(t, d, ok);
		return;
	}
	atomic_store(&t->sy.started[d], 1);
	emit(t, w->th.id, dl_pm_event((unsigned)t->pk, false), d, t->phase, 0);
	cpu = dl_cost_cpu_part(t->lat[d], t->sc->prof[t->sc->dev[d].profile].cpu_ppm);
	dl_thr_take_time(&w->th, cpu);
	if (t->lat[d] > cpu) {
		/* the sleep frees the CPU; finishing takes one again (the caller frees it) */
		dl_cpu_put(&w->th);
		dl_thr_take_time(&w->th, t->lat[d] - cpu);
		dl_cpu_get(&w->th);
	}
	err = fault_for(t, d, DL_LAT_PREPARE + t->phase);
	emit(t, w->th.id, dl_pm_event((unsigned)t->pk, true), d, t->phase, err);
	depth = dl_pm_depth_after((unsigned)t->pk, t->phase, err);
	if (depth < 0) {
		set_abort(t, err, d);
	} else {
		t->newdepth[d] = (uint8_t)depth;
		t->depth_set[d] = 1;
	}
	if (t->ps.handoff && !v2_phase(t) && !dl_halted(&t->sy))
		dl_thr_take_time(&w->th, handoff_len(t, d));   /* PM phases only: probe returned above */
	atomic_store(&t->ok[d], 1);
	dl_complete_all(&t->sy, d);
	if (t->ps.link_aware && !dl_halted(&t->sy))
		release_dependents(t, d, ok);
	if (v2_phase(t) && !dl_halted(&t->sy)) {
		/* 6.16+: complete_all() first, then the hand-off walk queues the rest */
		dl_thr_take_time(&w->th, handoff_len(t, d));
		handoff(t, d);
	}
}

/*
 * A classic kernel-async item: started (wake_ns), it waits for its
 * dependencies without a CPU, and is woken (wake_ns after the last one).
 * Returns true if the callback ran.
 */
static bool run_classic(struct thr *t, struct tw *w, uint32_t d)
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
		dl_thr_pass_until(&w->th, (last ? last : dl_mono_ns()) + dl_rclock_real(&t->pool.clock, t->cost.wake_ns));
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
static bool run_v2(struct thr *t, struct tw *w, uint32_t d)
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
	bool pm = t->pk == PK_SUSPEND || t->pk == PK_RESUME;
	int64_t overhead = t->pk == PK_PROBE_DEFER ? 0 :
			   t->ps.classic || pm ? t->cost.wake_ns : t->cost.queue_ns;
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
	for (unsigned a = atomic_fetch_add(&t->alive, 1) + 1, p = atomic_load(&t->peak);
	     a > p && !atomic_compare_exchange_weak(&t->peak, &p, a);)
		;
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
		if (v2_phase(t)) {
			ran = run_v2(t, w, k->dev);
		} else if (t->ps.classic) {
			ran = run_classic(t, w, k->dev);
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
static bool pool_run(void *ctx, struct dl_rthread *th, const struct dl_pool_item *k)
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
static bool pool_stop_seen(void *ctx, const struct dl_rthread *th)
{
	return dl_stop_seen(&((struct thr *)ctx)->sy, th);
}

static uint32_t main_fallbacks(struct thr *t);

/* The main thread waits for a completion (thr_sync.h): it takes what was left to it meanwhile. */
static void sync_main_waits(void *ctx)
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

/* The main thread walks to device @d: main_ns on a CPU, then the callback or the queueing. */
void thr_main_visit(struct thr *t, struct tw *m, uint32_t d, bool queue)
{
	dl_cpu_get(&m->th);
	dl_thr_take_time(&m->th, t->cost.main_ns + (queue ? t->cost.queue_ns : 0));
	if (queue) {
		dl_cpu_put(&m->th);
		q_push(t, d);
		return;
	}
	run_cb(t, m, d);
	dl_cpu_put(&m->th);
	finished(t);
}

/* Run one phase over the devices marked in part[] (lat[] sampled). */
static int run_phase(struct thr *t)
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
	err = snapshot_phase(t);
	if (err)
		return err;
	for (uint32_t d = 0; d < t->n; d++) {
		t->wcount[d] = t->waits.off[d + 1] - t->waits.off[d];
		atomic_store_explicit(&t->pending[d], t->wcount[d], memory_order_relaxed);
	}
	dl_pool_lock(&t->pool);
	t->pool.remaining = remaining;
	t->pool.outstanding = 0;
	t->fb_head = t->fb_n = 0;
	dl_pool_unlock(&t->pool);

	w0 = dl_mono_ns();
	if (t->ps.main_only) {
		/* naive, prepare and complete: the main thread, in walk order, no waits */
		for (uint32_t i = 0; i < t->w.n && !dl_halted(&t->sy) && !dl_poll_stop(&t->sy); i++)
			if (t->part[t->w.v[i]])
				thr_main_visit(t, m, t->w.v[i], false);
	} else if (t->ps.barrier) {
		/* the last device of a level releases the next, on its own thread */
		pthread_mutex_lock(&t->lmx);
		release_level_locked(t);
		pthread_mutex_unlock(&t->lmx);
	} else {
		/* v2: the async roots (resume) or leaves (suspend) first */
		for (uint32_t i = 0; i < t->w.nupfront && !dl_halted(&t->sy); i++) {
			uint32_t d = t->w.v[i];
			unsigned char idle = 0;
			bool room;

			/* MAX_WORK: dpm_async_with_cleanup() fails, left to the walk */
			dl_pool_lock(&t->pool);
			room = dl_async_may_queue(t->pol, t->pool.outstanding);
			dl_pool_unlock(&t->pool);
			if (room && atomic_compare_exchange_strong(&t->queued[d], &idle, 1))
				thr_main_visit(t, m, d, true);
		}
		if (t->ps.queue_when_ready)
			for (uint32_t i = 0; i < t->w.n; i++) {
				uint32_t d = t->w.v[i];

				if (t->part[d] && !t->on_main[d] && t->wcount[d] == 0)
					q_push_ready(t, d);
			}
		for (uint32_t i = t->w.nupfront; i < t->w.n && !dl_halted(&t->sy) && !dl_poll_stop(&t->sy); i++) {
			uint32_t d = t->w.v[i];

			bool sync;

			if (!t->part[d])
				continue;
			main_fallbacks(t);
			if (v2_phase(t) && !t->on_main[d]) {
				unsigned char idle = 0;

				/* dpm_async_fn(): skips a device queued already (work_in_progress) */
				if (!atomic_compare_exchange_strong(&t->queued[d], &idle, 1))
					continue;
			}
			/* classic, v2: MAX_WORK items pending, dpm_async_fn() fails: main runs it */
			sync = t->on_main[d] || (t->ps.blocking && !thr_may_queue(t));
			if (sync) {
				bool deps_ok = true;

				for (uint32_t j = t->waits.off[d]; j < t->waits.off[d + 1]; j++) {
					dl_wait_done(&t->sy, &m->th, t->waits.adj[j]);
					deps_ok = deps_ok && atomic_load(&t->ok[t->waits.adj[j]]);
				}
				if (dl_halted(&t->sy))
					break;
				if (!deps_ok) {
					/* a supplier did not bind: finish unattempted */
					dl_complete_all(&t->sy, d);
					finished(t);
					release_dependents(t, d, false);
					continue;
				}
				thr_main_visit(t, m, d, false);
			} else if (t->ps.blocking) {
				thr_main_visit(t, m, d, true);
			}
		}
	}
	thr_wait_drain(t, true);
	t->opr->sync_fallbacks += t->fallbacks;
	t->fallbacks = 0;
	account_phase(t, w0);

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
	flush_events(t);
	return atomic_load(&t->sy.halt) == DL_HALT_STOP ? -EINTR : 0;
}

/* One PM phase (oploop.h): the devices dl_pm_takes_part() names, their latencies sampled. */
static int be_pm_phase(void *be, unsigned pk, unsigned phase)
{
	struct thr *t = be;

	t->abort_rec = false;
	t->pk = (int)pk;
	t->phase = phase;
	t->ps = dl_order_scheme(t->o->order, pk, phase);
	pthread_rwlock_rdlock(&t->graph);
	for (uint32_t d = 0; d < t->n; d++) {
		const struct dl_device *x = &t->core.dev[d];

		t->part[d] = x->registered && dl_pm_takes_part(pk, phase, x->pm_depth);
		t->lat[d] = t->part[d] ? sample(t, t->cur_op, d, DL_LAT_PREPARE + phase) : 0;
	}
	pthread_rwlock_unlock(&t->graph);
	return run_phase(t);
}

static bool be_aborted(void *be, int *err, uint32_t *dev)
{
	struct thr *t = be;

	if (atomic_load(&t->sy.halt) != DL_HALT_ABORT)
		return false;
	*err = t->abort_err;
	*dev = t->abort_dev;
	return true;
}


/* ---- probe ---- */

static int be_probe(void *be, unsigned pk)
{
	struct thr *t = be;
	int err;

	t->pk = (int)pk;
	t->ps = dl_order_scheme(t->o->order, pk, 0);
	pthread_rwlock_rdlock(&t->graph);
	for (uint32_t d = 0; d < t->n; d++) {
		t->part[d] = t->core.dev[d].registered && t->core.dev[d].state == DL_DEV_NO_DRIVER;
		t->lat[d] = t->part[d] ? sample(t, t->cur_op, d, DL_LAT_PROBE) : 0;
	}
	pthread_rwlock_unlock(&t->graph);
	if (t->pk == PK_PROBE)
		return run_phase(t);

	/* the deferral orders: a snapshot for the walk and the bound, then the retry loop */
	{
		int64_t w0;

		atomic_store(&t->sy.halt, DL_HALT_NONE);
		atomic_store(&t->peak, 0);
		err = snapshot_phase(t);
		if (err)
			return err;
		for (uint32_t d = 0; d < t->n; d++) {
			atomic_store(&t->queued[d], 0);
			atomic_store(&t->sy.started[d], 0);
		}
		dl_pool_lock(&t->pool);
		t->pool.remaining = 0;
		t->pool.outstanding = 0;
		dl_pool_unlock(&t->pool);
		w0 = dl_mono_ns();
		err = thr_probe_deferral(t);
		account_phase(t, w0);
		if (atomic_load(&t->peak) > t->opr->peak_workers)
			t->opr->peak_workers = atomic_load(&t->peak);
		flush_events(t);
	}
	return err;
}

static void be_probing(void *be, bool block)
{
	if (block)
		thr_block_probing(be);
	else
		thr_unblock_probing(be);
}

/* ---- the backend of the op loop (oploop.h) ---- */

static int64_t be_now(void *be)
{
	return dl_rclock_now(&((struct thr *)be)->pool.clock);
}

static bool be_stopped(void *be)
{
	return dl_poll_stop(&((struct thr *)be)->sy);
}

/* Op @i on the main thread; a racing thread runs ops (i, end) beside it. */
static int be_op_begin(void *be, uint32_t i, uint32_t end, struct dl_op_result *opr)
{
	struct thr *t = be;
	struct tw *m = &t->tw[0];
	struct racer *rc = &t->rc;

	t->cur_op = i;
	m->op_index = i;
	t->opr = m->opr = opr;
	*rc = (struct racer){ .t = t, .first = i + 1, .end = end };
	t->racer_on = false;
	if (end > i + 1) {
		rc->opr = opr + 1;
		rc->start_real = dl_mono_ns();
		t->racing = true;
		t->racer_on = dl_thr_spawn(&t->racer_tid, NULL, thr_racer_main, rc) == 0;
		if (!t->racer_on) {
			t->racing = false;
			return -EAGAIN;
		}
	}
	return 0;
}

static void be_op_end(void *be, uint32_t i, uint32_t end)
{
	struct thr *t = be;

	(void)i;
	if (t->racer_on) {
		int64_t end_main = dl_mono_ns();

		pthread_join(t->racer_tid, NULL);
		t->racing = false;
		t->racer_on = false;
		if (t->rc.end_real > end_main)
			t->r->makespan_ns += (int64_t)((double)(t->rc.end_real - end_main) / t->pool.clock.scale);
	}
	flush_events(t);
	if (t->o->progress)
		t->o->progress(t->o->progress_ctx, end - 1, t->sc->nop, t->r->events);
}

static void be_lock(void *be)
{
	core_lock(&((struct thr *)be)->tw[0]);
}

static void be_unlock(void *be)
{
	core_unlock(&((struct thr *)be)->tw[0]);
}

static int be_seq(void *be, const struct dl_sc_op *op)
{
	struct thr *t = be;

	return thr_op_seq(t, &t->tw[0], op);
}

static const struct dl_backend_ops threads_ops = {
	.races = true,
	.now = be_now, .stopped = be_stopped, .op_begin = be_op_begin, .op_end = be_op_end,
	.lock = be_lock, .unlock = be_unlock,
	.probe = be_probe, .pm_phase = be_pm_phase, .aborted = be_aborted,
	.probing = be_probing, .seq = be_seq,
};

/* ---- setup ---- */

static int thr_alloc(struct thr *t)
{
	uint32_t n = t->n + 1;
	int err = dl_pool_init(&t->pool, t->K, t->P), e_sy, e_ev;

	/* initialised whatever fails, so that thr_free() may undo them */
	e_sy = dl_rsync_init(&t->sy, &t->pool, t->n, t->o->stop);
	e_ev = dl_tevents_init(&t->ev, t->nthr, &t->pool.clock);
	pthread_rwlock_init(&t->graph, NULL);
	pthread_mutex_init(&t->fmx, NULL);
	pthread_mutex_init(&t->lmx, NULL);
	t->pool.run = pool_run;
	t->pool.stop_seen = pool_stop_seen;
	t->pool.ctx = t;
	t->sy.main_waits = sync_main_waits;
	t->sy.ctx = t;
	t->pending = calloc(n, sizeof(*t->pending));
	t->failed_dep = calloc(n, sizeof(*t->failed_dep));
	t->ok = calloc(n, sizeof(*t->ok));
	t->queued = calloc(n, sizeof(*t->queued));
	t->parked = calloc(n, sizeof(*t->parked));
	t->parked_at = calloc(n, sizeof(*t->parked_at));
	t->part = calloc(n, 1);
	t->on_main = calloc(n, 1);
	t->depth_set = calloc(n, 1);
	t->newdepth = calloc(n, 1);
	t->attempted = calloc(n, 1);
	t->wcount = calloc(n, sizeof(*t->wcount));
	t->index_of = calloc(n, sizeof(*t->index_of));
	t->fb = calloc(n, sizeof(*t->fb));
	t->topo = calloc(n, sizeof(*t->topo));
	t->waits.off = calloc(n + 1, sizeof(*t->waits.off));
	t->rel.off = calloc(n + 1, sizeof(*t->rel.off));
	err = err ? err : dl_graph_init(&t->g, t->n);
	t->lat = calloc(n, sizeof(*t->lat));
	t->prio = calloc(n, sizeof(*t->prio));
	t->best = calloc(n, sizeof(*t->best));
	t->prof = calloc(n, sizeof(*t->prof));
	t->tw = calloc(t->nthr, sizeof(*t->tw));
	if (err || e_sy || e_ev || !t->pending || !t->failed_dep || !t->ok || !t->queued ||
	    !t->parked || !t->parked_at || !t->index_of ||
	    !t->part || !t->on_main || !t->depth_set || !t->newdepth || !t->attempted ||
	    !t->wcount || !t->fb || !t->topo || !t->waits.off || !t->rel.off || !t->lat || !t->prio ||
	    !t->best || !t->prof || !t->tw)
		return -ENOMEM;
	for (uint32_t d = 0; d < t->sc->ndev; d++)
		t->prof[d] = t->sc->dev[d].profile;
	for (uint32_t w = 0; w < t->nthr; w++) {
		t->tw[w].t = t;
		t->tw[w].th.pool = &t->pool;
		t->tw[w].th.id = (int)w;
	}
	if (dl_walk_init(&t->w, n, n) || dl_levels_init(&t->lv, n, n))
		return -ENOMEM;
	return dl_faults_init(&t->faults, t->sc);
}

static void thr_free(struct thr *t)
{
	free(t->pending); free(t->failed_dep); free(t->ok); free(t->queued);
	free(t->parked); free(t->parked_at); free(t->index_of);
	dl_walk_fini(&t->w);
	dl_levels_fini(&t->lv);
	free(t->part); free(t->on_main); free(t->depth_set);
	free(t->newdepth); free(t->attempted);
	free(t->wcount); free(t->fb); free(t->topo);
	free(t->waits.off); free(t->rel.off); free(t->waits.adj); free(t->rel.adj); free(t->lat);
	dl_graph_fini(&t->g);
	free(t->prio); free(t->best); free(t->prof); free(t->tw);
	dl_faults_fini(&t->faults);
	dl_core_fini(&t->core);
	dl_tevents_fini(&t->ev);
	dl_rsync_fini(&t->sy);
	dl_pool_fini(&t->pool);
	pthread_mutex_destroy(&t->fmx);
	pthread_mutex_destroy(&t->lmx);
	pthread_rwlock_destroy(&t->graph);
}

int dl_threads_run(const struct dl_scenario *sc, const struct dl_engine_opts *o,
		   double time_scale, struct dl_run_result *r)
{
	struct thr *t = calloc(1, sizeof(*t));
	int64_t wall0 = dl_mono_ns();
	int slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	int err = 0, e_alloc;
	bool failed = false;

	memset(r, 0, sizeof(*r));
	r->fail_dev = DL_NONE;
	if (o->probe_module) {
		/* the module probe context is des.c's only (the CLI refuses it) */
		free(t);
		r->status = "failed";   /* SPEC.md: a run that stopped on an engine error failed */
		return -EINVAL;
	}
	if (!t) {
		r->status = "failed";   /* SPEC.md: a run that stopped on an engine error failed */
		return -ENOMEM;
	}
	dl_thr_precise_timers();
	t->sc = sc;
	t->o = o;
	t->pol = dl_order_policy(o->order);
	t->r = r;
	t->n = sc->ndev;
	t->pool.clock = (struct dl_rclock){ .t0 = wall0, .scale = time_scale > 0 ? time_scale : 1.0 };
	err = dl_run_start(r, &t->core, sc, o);
	t->K = r->workers;
	dl_costs_resolve(sc, &t->cost);
	/*
	 * The async workqueue's workers (cost.h): max_active of them, no more
	 * than there are devices, and at least K, so that sleeping and
	 * blocked items free their CPUs as in des.c.
	 */
	t->P = t->K;
	if (dl_order_uses_items(t->pol)) {
		uint32_t p = t->cost.max_active < sc->ndev ? t->cost.max_active : sc->ndev;

		if (p > t->P)
			t->P = p;
	}
	t->nthr = t->P + 2;
	atomic_init(&t->alive, 0);
	atomic_init(&t->peak, 0);
	e_alloc = thr_alloc(t);
	if (!err)
		err = e_alloc;
	if (err)
		goto out;
	dl_core_set_sink(&t->core, (struct dl_sink){ .emit = core_emit, .ctx = t });
	err = dl_run_devices(&t->core, sc);
	for (uint32_t w = 1; !err && w <= t->P; w++)
		err = dl_pool_spawn_worker(&t->pool, &t->tw[w].th);
	if (err)
		goto out;

	err = dl_oploop_run(&threads_ops, t, &t->core, sc, o->order, r, &failed);
out:
	dl_pool_stop(&t->pool);
	if (t->ev.buf)
		flush_events(t);
	err = dl_run_finish(r, wall0, err, failed);
	thr_free(t);
	free(t);
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0UL, 0UL, 0UL);
	return err;
}
