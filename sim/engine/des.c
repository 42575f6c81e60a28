/*
 * des.c - the discrete-event engine (virtual time).
 *
 * Model.  K simulated CPUs are shared by the kernel's main PM thread and by
 * work items.  Every piece of work is a CPU burst: it waits in a run queue
 * until a CPU is free, and its end is an event; the machine that does this
 * (the clock, the CPUs, the run queue, the event set, the workqueue's
 * max_active) is vcpu.h's.  This file is the backend proper: what each
 * task does when it gets a CPU and when its burst or sleep ends.
 *
 * Within a phase a device waits for the devices the link core says it must
 * (dl_for_each_waited(): children and consumers when suspending, parent and
 * suppliers when resuming, suppliers whose links gate probe when probing),
 * counted down as they finish.  What the order does meanwhile (who runs on
 * the main thread, who is queued up front, when ready or by a finishing
 * device's hand-off walk, the levels' barrier) is written once for both
 * backends in sim/order: each order's file says what it models, sched.h
 * has the rules this file asks (dl_ready_action(), dl_walk_action(), ...).
 * Here, the mechanics: an item queued before its waits are done
 * (kernel-async, -v2) starts (wake_ns), finds them unfinished, blocks, and
 * is woken (wake_ns) when the last one finishes (a blocked v2 item gives
 * its worker back meanwhile); main queues an item in a burst (queue_ns);
 * a hand-off walk is a burst of its own (handoff_ns, des_handoff_len()).
 * prepare and complete run every callback on the main thread in list
 * order, waiting for nothing, under every order (ps.serial).
 *
 * Probing: sync, naive, kernel-async and kernel-async-v2 probe in
 * registration order with the kernel's deferred-probe retry (disabled until
 * late_initcall, then every bind re-triggers all deferred devices); cp-first
 * and levels probe a device when every supplier it needs is bound, so they
 * never defer.
 *
 * The files: des.c the work items (what each does when it gets a CPU and
 * when its burst or sleep ends), what a finishing or ready device sets off,
 * and the event loop; des_main.c the main PM thread; des_retry.c the
 * deferral's walkers and the deferred-probe kworker; des_phase.c a phase's
 * set-up and bounds and the op loop's backend; all over the state in
 * des_backend.h; vcpu.h the machine.
 *
 * Data layout.  The graph cannot change while a phase runs, so a phase works
 * on a snapshot (graph.h's struct dl_graph): the registered devices
 * numbered by their place in dpm_list ("positions"), and per kind of phase
 * the positions each one releases, in CSR form.  Every per-phase array here
 * is indexed by position, so the passes over the graph (waits, lower bound,
 * priorities, walks) read memory in order instead of chasing dpm_list and
 * link ids.  The snapshot is kept across PM ops and taken again after any
 * op that may change the graph (probe and the sequential ops: gen).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/des_backend.h"

/* ---- events ---- */

void des_sink_emit(void *ctx, struct dl_event *e)
{
	struct sim *s = ctx;

	e->t_ns = s->vc.now + s->stamp_ahead;
	e->worker = s->cur_worker;
	s->r->events++;
	if (e->kind == DL_EV_LINK_REFUSED)
		s->r->links_refused++;
	if (s->o->sink.emit)
		s->o->sink.emit(s->o->sink.ctx, e);
}

/* ---- queueing, and what happens when a device is ready or finishes ---- */

/*
 * Queue position @y's work item: it asks for a CPU unless max_active items
 * hold a worker.  @fresh: new work on the pool's worklist, for a kworker to
 * take (item_start()); not a parked item woken, which takes one back.
 */
static void item_admit(struct sim *s, uint32_t y, bool fresh)
{
	s->newwk[y] = fresh;
	if (dl_vcpu_admit(&s->vc, y)) {
		s->wl += fresh;
		burst_request(s, y, s->t[y].prio);
	}
}

void des_item_queue(struct sim *s, uint32_t y)
{
	item_admit(s, y, true);
}

/*
 * What item @y pays before its burst as it gets a CPU, alive counting it:
 * new work goes to a kworker back from its previous item if one is
 * (worker_thread()'s process_one_work() loop: no wake), else to an idle
 * one woken for it, which creates a kworker first if it was the last idle
 * one (dl_kpool_take(), dl_cost_start()); anything else pays its bk.
 */
static void pool_grew(struct sim *s);
#define NEWWK_CREATED 2   /* s->newwk: new work a created kworker takes (pool_grew()) */

static int64_t item_start(struct sim *s, uint32_t y)
{
	bool probe = s->pk == PK_PROBE_READY || s->pk == PK_PROBE_DEFER;
	int64_t pre = 0;
	bool chained = false;

	if (!s->newwk[y])
		return overhead(s, s->t[y].bk);
	if (s->newwk[y] == NEWWK_CREATED) {
		/* the kworker created for it: it leaves idle as any woken one */
		uint32_t had = s->kpool;

		s->newwk[y] = 0;
		pre = dl_kpool_take(&s->kpool, s->alive + s->back, &s->cost);
		if (s->kpool != had)
			pool_grew(s);
		return pre + dl_cost_start(&s->cost, s->t[y].bk, probe, false);
	}
	s->newwk[y] = 0;
	dl_count_down(&s->wl);
	if (s->back) {
		s->back--;
		chained = true;
	} else {
		uint32_t had = s->kpool;

		pre = dl_kpool_take(&s->kpool, s->alive + s->back, &s->cost);
		if (s->kpool != had)
			pool_grew(s);
	}
	return pre + dl_cost_start(&s->cost, s->t[y].bk, probe, chained);
}

/* An item is done with its worker: the oldest inactive one takes it and asks for a CPU. */
static void item_retire(struct sim *s)
{
	uint32_t y;

	if (dl_vcpu_retire(&s->vc, &y)) {
		s->wl += s->newwk[y];
		burst_request(s, y, s->t[y].prio);
	}
}

/*
 * The pool created a kworker (item_start()): the oldest item waiting on
 * the worklist for one takes it and asks for a CPU, behind the creation
 * the creating item pays first.  Work beyond the pool's kworkers waits on
 * the worklist, as in worker_thread(): a kworker back from its item or a
 * new one takes it (issue 31: the DES gave every item a kworker at once,
 * 149 busy at the peak of d200-ka's suspend where the kernel had 25).
 */
static void pool_grew(struct sim *s)
{
	uint32_t y;

	if (dl_vcpu_widen(&s->vc, s->kpool, s->cost.max_active, &y)) {
		if (s->newwk[y])
			s->newwk[y] = NEWWK_CREATED;   /* not for a kworker back (s->back) */
		burst_request(s, y, s->t[y].prio);
	}
}

static const struct dl_sched_ops des_sched;   /* the scheduler's view of this backend, below */

/*
 * The hand-off walk of position @d, which just finished in a PM phase of an
 * order whose finishing devices queue their dependents
 * (dpm_async_resume_subordinate(), dpm_async_suspend_superior() since
 * 6.16): handoff_ns per dependent it walks (under dpm_list_mtx, then
 * async_wip_mtx per device) and queue_ns per item it queues
 * (dl_handoff_queues(); under kernel-async-v2 the waits are counted down
 * already, dl_handoff_after_done()).
 */
int64_t des_handoff_len(const struct sim *s, uint32_t d)
{
	return dl_sched_handoff_len(&des_sched, &s->ps, &s->cost, s->g.cur, d, s);
}

/* A hand-off claims position @y (ST_QUEUED_START) and queues it (dl_sched_claim()). */
static void handoff_claim(void *ctx, uint32_t y)
{
	struct sim *s = ctx;
	struct task *z = &s->t[y];

	des_stage_set(z, ST_QUEUED_START);
	z->bk = dl_item_pays(&s->ps);
	s->inflight++;
	des_item_queue(s, y);
}

/*
 * kernel-async-v2: position @d finished and walked its dependents; queue
 * every async one not queued yet (dpm_async_with_cleanup(): skipped if
 * work_in_progress is set, i.e. stage is not ST_IDLE).  Each then waits for
 * the rest of its dependencies, blocking its worker if need be.  The
 * queueing was paid by the walk (des_handoff_len()); each item pays its
 * kworker's start (item_start(): a finishing work item's kworker takes
 * the first of them itself, once its walk is over).  When MAX_WORK items are
 * pending, dpm_async_with_cleanup() fails and leaves the device to the
 * main walk, whose dpm_async_fn() tries again.  (Not after a fault:
 * dl_sched_walk_over().)
 */
static void handoff_queue(void *ctx, uint32_t d)
{
	struct sim *s = ctx;

	dl_sched_handoff(&des_sched, &s->ps, s->pol, s->g.cur, d, s);
}

/* Position @d is done with this phase: the levels' barrier counts it off (dl_sched_level_done()). */
static void level_done(struct sim *s, uint32_t d)
{
	if (s->ps.barrier && s->t[d].part)
		dl_sched_level_done(&des_sched, &s->ps, &s->lv, &s->cur_level, s->t[d].level, s);
}

/* The cascade reaches position @y (dl_sched_cascade()): a waiting device finishes at once. */
static bool failed_skip(void *ctx, uint32_t y)
{
	struct sim *s = ctx;

	if (!s->t[y].part || s->t[y].stage != ST_IDLE || s->t[y].wait == 0)
		return false;
	des_stage_set(&s->t[y], ST_DONE);   /* each position at most once */
	s->remaining--;
	level_done(s, y);
	if (s->mstate == M_WAIT_DEV && s->mdev == y)
		des_main_kick(s);
	return true;
}

/*
 * A probe of position @d failed, so it releases nobody: the devices waiting
 * for it (and those waiting for them) cannot probe in this op.  They are
 * finished without a callback, so that the main thread's walk skips them and
 * the level barriers move on, as the other devices would in the kernel.
 */
static void probe_failed(struct sim *s, uint32_t d)
{
	s->stk[0] = d;
	dl_sched_cascade(&des_sched, s->g.cur, s->stk, 1, s);
}

/* Position @d is done with this phase (ops->finish): its dependents are released. */
void des_device_finished(void *ctx, uint32_t d)
{
	struct sim *s = ctx;

	des_stage_set(&s->t[d], ST_DONE);
	s->remaining--;
	if (s->pk == PK_PROBE_DEFER) {
		if (s->module_ctx)
			des_retry_poke(s);   /* a deferral's re-trigger (des_callback_end()) */
		return;
	}
	if (s->ps.serial)
		return;   /* serial: main walks to the next device, nobody waits */
	level_done(s, d);
	if (s->pk == PK_PROBE_READY && s->core.dev[dev_at(s, d)].state != DL_DEV_DRIVER_BOUND) {
		probe_failed(s, d);
		return;
	}
	/* the released devices are scattered: start every miss at once */
	DL_GRAPH_FOR_EACH_RELEASED(&s->g, d, y, { dl_prefetch(&s->t[y]); });
	{
		uint32_t j = s->g.cur->off[d], y;

		dl_sched_release(&des_sched, &s->ps, s->g.cur, d, s, &j, &y);   /* none unattempted */
	}
}

/* A blocked item's last wait is done: it is woken (wake_ns) and asks for a CPU again. */
static void item_wake(void *ctx, uint32_t y)
{
	struct sim *s = ctx;

	s->r->wakeups++;
		s->opr->wakeups++;
		s->opr->blocked_ns += s->vc.now - s->blocked_since[y];
	emit(s, DL_EV_WORK_WAKE, dev_at(s, y), s->phase, 0);
	des_stage_set(&s->t[y], ST_QUEUED_CB);
	s->t[y].bk = dl_item_wake(&s->ps);
	if (dl_item_parks(&s->ps))
		item_admit(s, y, false);   /* it gave its worker back (item_burst_done()) */
	else
		burst_request(s, y, s->t[y].prio);
	dl_count_down(&s->alive);   /* counted again when it gets a CPU */
}

/* Ready @y's item is queued now, or left to main if MAX_WORK items are pending. */
static bool item_queue_ready(void *ctx, uint32_t y)
{
	struct sim *s = ctx;

	dl_sched_queue_ready(&des_sched, s->pol, &s->fb, s, y);
	return false;
}

/* Ready @y's item is queued (ops->push). */
static void item_push(void *ctx, uint32_t y)
{
	struct sim *s = ctx;

	des_stage_set(&s->t[y], ST_QUEUED_CB);
	/*
	 * In a PM phase the item's kworker starts it (item_start(): a wake,
	 * or none if a kworker back from its previous item takes it), as a
	 * classic item's does; a finishing device's hand-off walk paid
	 * queue_ns for the items it queues (the phase's first items are
	 * queued for free here: the up-front walk that queues them is not
	 * modelled yet).  In probe the item pays the queueing itself
	 * (dl_item_pays()).
	 */
	s->t[y].bk = dl_item_pays(&s->ps);
	s->inflight++;
	des_item_queue(s, y);
}

/* Main's device @y is ready: main goes on if it waits for it. */
static void main_ready(void *ctx, uint32_t y)
{
	struct sim *s = ctx;

	if (s->mstate == M_WAIT_DEV && s->mdev == y)
		des_main_kick(s);
}

/* A device position @y waits for finished (dl_sched_release()): true if its last wait is done. */
static bool task_count_down(void *ctx, uint32_t y)
{
	struct sim *s = ctx;
	struct task *z = &s->t[y];

	return z->part && z->stage != ST_DONE && z->wait > 0 && dl_count_down(&z->wait) == 0 &&
	       !s->aborted;
}

static bool sim_halted(void *ctx)
{
	return ((struct sim *)ctx)->aborted;
}

static const struct dl_sched_ops des_sched = {
	.facts = des_task_facts, .start = des_task_facts, .main_ready = main_ready, .wake = item_wake,
	.queue = item_queue_ready, .claim = handoff_claim, .skip = failed_skip,
	.halted = sim_halted, .finish = des_device_finished,
	.handoff_queue = handoff_queue, .defer_busy = des_defer_busy,
	.count_down = task_count_down, .outstanding = des_inflight, .push = item_push,
	.left_to_main = des_main_fallback,
};

/* Main's walk: the next position it takes (dl_sched_walk_next()); false at its end. */
bool des_walk_next(struct sim *s, uint32_t *i)
{
	enum dl_walk_act act;

	return dl_sched_walk_next(&des_sched, &s->ps, &s->w, &s->widx, s, i, &act);
}

/* The phase-start pass (dl_sched_start()): nothing ran yet, the records are the snapshot. */
void des_start(struct sim *s)
{
	dl_sched_start(&des_sched, &s->ps, &s->w, s);
}

/*
 * Position @d's callback is over, its sleep included, on the thread @run
 * (main's, or an item's): it completes and hands off (dl_sched_callback_over());
 * true if a hand-off walk follows, for which the thread asks a CPU.  @run
 * is a constant, so that its calls are inlined.
 */
static inline bool callback_over(struct sim *s, uint32_t d, bool deferred,
				 const struct dl_sched_runner *run)
{
	return dl_sched_callback_over(&des_sched, run, &s->ps, &s->cost, s->g.cur, d, s, deferred);
}

/* Main is done with its device (dl_sched_walk_over()): it is free, and goes on with its walk. */
static void main_over(void *ctx, uint32_t d)
{
	(void)d;
	((struct sim *)ctx)->mstate = M_IDLE;
}

static void main_goes_on(void *ctx, uint32_t d)
{
	(void)d;
	des_main_kick(ctx);
}

static const struct dl_sched_runner main_run = { .leave = main_over, .next = main_goes_on };

/* Main's callback on position @d is over (callback_over()): true if its hand-off walk follows. */
bool des_main_cb_over(struct sim *s, uint32_t d, bool deferred)
{
	return callback_over(s, d, deferred, &main_run);
}

/* Main's hand-off walk of position @d is over (dl_sched_walk_over()). */
void des_main_walk_over(struct sim *s, uint32_t d)
{
	dl_sched_walk_over(&des_sched, &main_run, &s->ps, d, s);
}

/* Position @i's callback (not a deferring probe attempt) started in this phase. */
static void mark_ran(struct sim *s, uint32_t i)
{
	if (!s->t[i].ran) {
		s->t[i].ran = 1;
		s->nran++;
	}
}

/*
 * The runtime resumes a probe attempt of position @i starts with (module
 * context, dl_probe_rpm_get()): each resumed device's rpm_resume event, and
 * its cost, rpm_ns of CPU and its rpm_resume latency (CPU part, then sleep
 * into rpm_sl[i]).  Returns the CPU time; *@took: references were taken,
 * for rpm_puts() to give back.
 */
static int64_t rpm_resumes(struct sim *s, uint32_t i, bool *took)
{
	int64_t cpu = 0;

	/* pm_wq's kworker ran first and suspended something: its wake, the switch back (cost.h) */
	if (des_pmwq_run(s, false))
		cpu += s->cost.wake_ns;
	s->rpmv.n = 0;
	*took = dl_probe_rpm_get(&s->core, dev_at(s, i), &s->rpmv) == 1;
	if (!*took)
		return 0;
	for (uint32_t k = 0; k < s->rpmv.n; k++) {
		uint32_t y = s->rpmv.v[k];
		uint32_t prof = s->sc->dev[y].profile;
		int64_t lat = dl_cost_sample(s->o->replay, s->sc, prof, s->o->seed, y, DL_LAT_RPM_RESUME, s->op_index);
		int64_t c = dl_cost_cpu_part(lat, s->sc->prof[prof].cpu_ppm);

		emit(s, DL_EV_RPM_RESUME, y, 0, 0);
		cpu += s->cost.rpm_ns + c;
		s->rpm_sl[i] += lat - c;
	}
	return cpu;
}

/* pm_wq runs @dev's idle request now: the suspends it makes, logged; returns how many. */
static uint32_t pmwq_idle(struct sim *s, uint32_t dev)
{
	s->rpm_susp.n = 0;
	dl_rpm_idle(&s->core, dev, &s->rpm_susp);
	for (uint32_t k = 0; k < s->rpm_susp.n; k++)
		emit(s, DL_EV_RPM_SUSPEND, s->rpm_susp.v[k], 0, 0);
	return s->rpm_susp.n;
}

/*
 * pm_wq: run the idle requests due by now (all with @flush, at the end of a
 * probe op, by when pm_wq has run them), logging the suspends; returns how
 * many devices suspended.  Lazily: a request is looked at when the next
 * attempt starts, which is the first time anything reads the device's
 * runtime PM status.
 */
uint32_t des_pmwq_run(struct sim *s, bool flush)
{
	uint32_t n = 0;

	while (s->pmwq_head < s->pmwq_n &&
	       (flush || s->pmwq[s->pmwq_head].due <= s->vc.now))
		n += pmwq_idle(s, s->pmwq[s->pmwq_head++].dev);
	if (s->pmwq_head == s->pmwq_n)
		s->pmwq_head = s->pmwq_n = 0;
	return n;
}

/* Queue an idle request for @dev, due rpm_idle_ns from now (out of memory: run it now). */
static void pmwq_push(struct sim *s, uint32_t dev)
{
	if (s->pmwq_n == s->pmwq_cap && s->pmwq_head > 0) {
		memmove(s->pmwq, s->pmwq + s->pmwq_head, (s->pmwq_n - s->pmwq_head) * sizeof(*s->pmwq));
		s->pmwq_n -= s->pmwq_head;
		s->pmwq_head = 0;
	}
	if (s->pmwq_n == s->pmwq_cap) {
		uint32_t cap = s->pmwq_cap ? 2 * s->pmwq_cap : 64;
		struct pmwq_req *q = realloc(s->pmwq, cap * sizeof(*q));

		if (!q) {
			pmwq_idle(s, dev);
			return;
		}
		s->pmwq = q;
		s->pmwq_cap = cap;
	}
	s->pmwq[s->pmwq_n++] = (struct pmwq_req){
		.due = dl_sat_add_i64(s->vc.now, s->cost.rpm_idle_ns), .dev = dev };
}

/*
 * The attempt's puts (dl_probe_rpm_put()): pm_runtime_put() is asynchronous;
 * the suspends it leads to run on pm_wq rpm_idle_ns later, costing the
 * prober nothing.
 */
static void rpm_puts(struct sim *s, uint32_t d)
{
	s->rpmv.n = 0;
	dl_probe_rpm_put(&s->core, d, &s->rpmv);
	for (uint32_t k = 0; k < s->rpmv.n; k++)
		pmwq_push(s, s->rpmv.v[k]);
}

/*
 * The callback of position @i starts @pre from now on the current CPU, the
 * overhead its burst pays first (main's step, a kworker's wake); returns
 * the length of its CPU part (a deferring probe: probe_check_ns, all CPU),
 * after the runtime resumes a probe attempt makes first.  Its sleep
 * (cb_sleep()) follows, without the CPU.  Its start event is stamped when
 * the callback itself starts, as the kernel mode's module logs it from
 * inside the driver's callback, so that a logged callback lasts its
 * latency and nothing else (what a replay twin reads back, sim/twin/).
 */
int64_t des_callback_begin(struct sim *s, uint32_t i, int64_t pre, bool *deferred)
{
	uint32_t d = dev_at(s, i);
	bool took = false;
	int64_t rpm;

	*deferred = false;
	if (s->pk == PK_SUSPEND || s->pk == PK_RESUME) {
		mark_ran(s, i);
		if (s->t[i].part == DL_PART_NO_DRIVER)
			return 0;   /* no driver, no callback (dl_pm_part()) */
		s->stamp_ahead = pre;
		emit(s, dl_pm_event((unsigned)s->pk, false), d, s->phase, 0);
		s->stamp_ahead = 0;
		return cb_cpu(s, i, s->t[i].lat);
	}
	/* probe: __driver_probe_device() */
	rpm = 0;
	if (s->core.rpm_user) {
		s->rpm_sl[i] = 0;
		rpm = rpm_resumes(s, i, &took);
	}
	s->trig_at[i] = dl_deferred_trigger_count(&s->core);
	if (dl_probe_check(&s->core, d, !s->ps.link_aware) != 0) {
		*deferred = true;
		s->opr->probe_attempts++;
		s->opr->probe_defers++;
		emit(s, DL_EV_PROBE_DEFER, d, 0, -DL_EPROBE_DEFER);
		if (took)
			rpm_puts(s, d);
		return rpm + s->cost.check_ns;
	}
	s->opr->probe_attempts++;
	mark_ran(s, i);
	s->stamp_ahead = pre + rpm;
	emit(s, DL_EV_PROBE_START, d, 0, 0);
	s->stamp_ahead = 0;
	return rpm + cb_cpu(s, i, s->t[i].lat);
}

/* The callback of position @i ended (its sleep included); des_device_finished() follows. */
void des_callback_end(struct sim *s, uint32_t i, bool deferred)
{
	uint32_t d = dev_at(s, i);
	int err;

	if (s->pk == PK_SUSPEND || s->pk == PK_RESUME) {
		int depth;

		err = 0;
		if (s->t[i].part != DL_PART_NO_DRIVER) {
			err = dl_faults_take(&s->faults, d, dl_phase_lat_key((unsigned)s->pk, s->phase));
			emit(s, dl_pm_event((unsigned)s->pk, true), d, s->phase, err);
		}
		depth = dl_pm_depth_after((unsigned)s->pk, s->phase, err);
		if (depth >= 0) {
			s->g.depth[i] = (uint8_t)depth;
		} else if (!s->aborted) {
			s->aborted = true;
			s->abort_err = err;
			s->abort_dev = d;
		}
		s->g.depth_dirty = true;
		return;
	}
	if (deferred) {
		/*
		 * driver_probe_device(): on the deferred list only now, triggered
		 * again if a bind triggered the lists during the attempt (the
		 * kworker is poked once the attempt is over: des_device_finished())
		 */
		dl_probe_deferred(&s->core, d, s->trig_at[i]);
		return;
	}
	err = dl_faults_take(&s->faults, d, DL_LAT_PROBE);
	dl_probe_end(&s->core, d, err);
	emit(s, DL_EV_PROBE_END, d, 0, err);
	if (s->core.rpm_user)
		rpm_puts(s, d);
	if (s->module_ctx)
		des_retry_poke(s);   /* a bind queues deferred_probe_work_func() */
}

/* ---- work items ---- */

static void item_got_cpu(struct sim *s, uint32_t d)
{
	if (s->t[d].stage == ST_TAIL_Q) {
		des_stage_set(&s->t[d], ST_TAIL);
		burst_start(s, d, des_handoff_len(s, d));
		return;
	}
	s->alive++;
	if (s->alive > s->opr->peak_workers)
		s->opr->peak_workers = s->alive;
	if (s->t[d].stage == ST_QUEUED_START) {
		des_stage_set(&s->t[d], ST_START);
		burst_start(s, d, item_start(s, d));
		return;
	}
	/* ST_QUEUED_CB: the overhead, then the callback */
	des_stage_set(&s->t[d], ST_CB);
	if (s->aborted && s->pk != PK_PROBE_DEFER && s->pk != PK_PROBE_READY) {
		/* skips the callback: async_error */
		burst_start(s, d, item_start(s, d));
		s->t[d].lat = -1;
		return;
	}
	{
		bool deferred;
		int64_t pre = item_start(s, d);
		int64_t len = pre + des_callback_begin(s, d, pre, &deferred);

		s->t[d].bk = deferred ? BK_DEFERRED : BK_NONE;
		burst_start(s, d, len);
	}
}

/*
 * An item gives its worker back: the worker takes the next new work on the
 * worklist itself, if some waits that no other worker back is to take
 * (item_start()), after the oldest inactive item is activated; else it
 * goes idle.
 */
static void item_leave(struct sim *s)
{
	dl_count_down(&s->alive);
	dl_count_down(&s->inflight);
	item_retire(s);
	if (s->wl > s->back)
		s->back++;
}

/* The main thread waits for the items in flight (probe): the last one is done. */
static void drain_check(struct sim *s)
{
	if (s->mstate == M_WAIT_DRAIN && s->inflight == 0) {
		s->mstate = M_IDLE;
		des_main_kick(s);
	}
}

/* The item of @d is done with it (dl_sched_walk_over()): 6.16+, it completed before its walk. */
static void item_over(void *ctx, uint32_t d)
{
	struct sim *s = ctx;

	if (dl_handoff_after_done(&s->ps))
		des_stage_set(&s->t[d], ST_DONE);
	item_leave(s);
}

static void item_next(void *ctx, uint32_t d)
{
	(void)d;
	drain_check(ctx);
}

static const struct dl_sched_runner item_run = { .leave = item_over, .next = item_next };

/* Item @d's hand-off walk asks for a CPU (ST_TAIL_Q). */
static void item_handoff(struct sim *s, uint32_t d)
{
	des_stage_set(&s->t[d], ST_TAIL_Q);
	burst_request(s, d, s->t[d].prio);
}

/* Item @d's callback is over, sleep included: its hand-off walk, or done. */
static void item_callback_over(struct sim *s, uint32_t d)
{
	bool deferred = s->t[d].bk == BK_DEFERRED;

	if (s->t[d].lat == -1 && s->aborted) {
		/* skipped its callback (async_error): done, its worker free */
		item_leave(s);
		des_stage_set(&s->t[d], ST_DONE);
		s->remaining--;
		drain_check(s);
		return;
	}
	des_callback_end(s, d, deferred);
	if (callback_over(s, d, deferred, &item_run))
		item_handoff(s, d);
}

/* Item @d's burst ended, its CPU released (or kept: ST_START going on to the callback). */
static void item_burst_done(struct sim *s, uint32_t d)
{
	int64_t sl;

	if (s->t[d].stage == ST_TAIL) {
		dl_sched_walk_over(&des_sched, &item_run, &s->ps, d, s);
		return;
	}
	if (s->t[d].stage == ST_START) {
		if (s->aborted) {
			des_stage_set(&s->t[d], ST_DONE);
			s->remaining--;
			item_leave(s);
			return;
		}
		if (s->t[d].wait == 0) {
			bool deferred;

			des_stage_set(&s->t[d], ST_CB);
			s->t[d].bk = BK_NONE;
			burst_start(s, d, des_callback_begin(s, d, 0, &deferred));
			s->t[d].cpu = (uint16_t)s->cur_worker;   /* keeps its CPU */
			return;
		}
		des_stage_set(&s->t[d], ST_BLOCKED);
		s->blocked_since[d] = s->vc.now;
		emit(s, DL_EV_WORK_BLOCK, dev_at(s, d), s->phase, 0);
		s->opr->blocked_ns += s->cost.switch_ns;
		/*
		 * kernel-async-v2: a blocked item gives its worker back and
		 * takes one again when woken (item_wake()).  The kernel's
		 * max_active counts a blocked kworker, but 6.16's hand-offs
		 * queue an item before what it waits for may be queued (the
		 * walk has not reached it), so that all max_active items can
		 * block on items still inactive: pixel6-shape.json's 3000
		 * devices hung that way (as threads.c's pool did, which parks
		 * a blocked v2 item too).  Classic items are queued in walk
		 * order, after what they wait for, and keep theirs.
		 */
		if (dl_item_parks(&s->ps))
			item_retire(s);
		return;
	}
	/* ST_CB: the callback's CPU part is over; its sleep follows */
	if (!(s->t[d].lat == -1 && s->aborted) &&
	    (sl = cb_sleep(s, d, s->t[d].bk == BK_DEFERRED)) > 0) {
		des_stage_set(&s->t[d], ST_SLEEP);
		dl_vcpu_sleep(&s->vc, d, sl);
		return;
	}
	item_callback_over(s, d);
}

/* Hand free CPUs to queued bursts. */
static void dispatch(struct sim *s)
{
	uint32_t task;
	uint16_t cpu;

	while (dl_vcpu_grant(&s->vc, &task, &cpu)) {
		s->cur_worker = (int16_t)cpu;
		if (task == DL_VCPU_MAIN) {
			s->cur_worker = 0;
			s->t[s->n].cpu = cpu;
			des_main_got_cpu(s);
		} else if (task == DL_VCPU_RETRY) {
			s->t[s->n + 1].cpu = cpu;
			des_retry_got_cpu(s);
		} else {
			s->t[task].cpu = cpu;
			item_got_cpu(s, task);
		}
	}
}

/*
 * Run the phase's events to the end.  The stop flag (Ctrl-C) is polled
 * every 4096 steps of the run, counted across phases and ops (s->steps), so
 * that a script of many short phases hears it too, not only one phase
 * longer than 4096 steps.
 */
int des_run_loop(struct sim *s)
{
	struct dl_vcpu_ev e;

	dispatch(s);
	while (dl_vcpu_next(&s->vc, &e)) {
		uint16_t cpu;
		uint32_t nx;

		if (e.t > DL_T_MAX)
			return -EOVERFLOW;   /* 146 years; dl_vcpu_burst()/dl_vcpu_sleep() saturate */
		if (dl_vcpu_peek(&s->vc, &nx) && (nx = burst_device(s, nx)) != DL_NONE) {
			/*
			 * The next burst to end: its record, and the records of the
			 * tasks it may release (its row is in cache by now, see
			 * burst_request()), while this one runs.
			 */
			const struct dl_csr *g = s->g.cur;

			dl_prefetch(&s->t[nx]);
			for (uint32_t j = g->off[nx], k = 0; j < g->off[nx + 1] && k < 8; j++, k++)
				dl_prefetch(&s->t[g->adj[j]]);
		}
		if (e.task == DL_VCPU_MAIN) {
			cpu = s->t[s->n].cpu;
			s->cur_worker = 0;
			if (s->mstate == M_SLEEP) {
				des_main_callback_over(s);
			} else {
				dl_vcpu_release(&s->vc, cpu);
				des_main_burst_done(s);
			}
		} else if (e.task == DL_VCPU_RETRY) {
			cpu = s->t[s->n + 1].cpu;
			s->cur_worker = (int16_t)cpu;
			if (s->rstate == R_SLEEP) {
				des_retry_callback_over(s);
			} else {
				dl_vcpu_release(&s->vc, cpu);
				des_retry_burst_done(s);
			}
		} else {
			cpu = s->t[e.task].cpu;
			s->cur_worker = (int16_t)cpu;
			if (s->t[e.task].stage == ST_SLEEP) {
				item_callback_over(s, e.task);
			} else if (s->t[e.task].stage == ST_START && !s->aborted &&
				   s->t[e.task].wait == 0) {
				item_burst_done(s, e.task);   /* continues on the same CPU */
			} else {
				dl_vcpu_release(&s->vc, cpu);
				item_burst_done(s, e.task);
			}
		}
		dispatch(s);
		if (s->stopping)
			return -EINTR;  /* a retry walk heard Ctrl-C (des_retry.c) */
		if ((++s->steps & 4095) == 0) {
			if (s->o->stop && *s->o->stop)
				return -EINTR;
			if (s->o->progress && (s->steps & 0x3ffff) == 0)
				s->o->progress(s->o->progress_ctx, s->op_index, s->sc->nop,
					       s->r->events);
		}
	}
	return s->stopping ? -EINTR : 0;
}
