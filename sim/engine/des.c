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
 * counted down as they finish.  How the waiting
 * happens is the order's business (order.h):
 *  - sync / naive: the main thread walks the list and runs every callback;
 *    naive walks registration order and never waits.
 *  - kernel-async: the main thread queues every async device's work as it
 *    walks (cost queue_ns), in resume phases all of them before the first
 *    sync device (6.12's "upfront" loop, build_walk()); the item starts
 *    (wake_ns), finds its dependencies unfinished, blocks, and is woken
 *    (wake_ns) when the last one finishes.
 *    Sync devices run on the main thread, which waits for their dependencies.
 *  - kernel-async-v2 (6.16+): the async roots (resume: no parent, no
 *    supplier link) or leaves (suspend: no child, no consumer link) are
 *    queued before the walk; the walk skips a device queued already
 *    (work_in_progress), queues the other async ones and runs the sync
 *    ones; every device that finishes completes its waiters first, then
 *    walks its dependents (handoff_len()) and queues the async ones not
 *    queued yet (handoff_queue()).  Items block on their waits as classic
 *    ones do.  Sync devices as above.
 *  - levels / cp-first: every device is a work item queued when ready
 *    (levels: and when its level is released); the main thread only waits.
 * prepare and complete are none of these: dpm_prepare() walks dpm_list
 * forward and dpm_complete() the prepared list backward, every callback on
 * the main thread, waiting for nothing, under every order (ps.serial).
 *
 * Probing: sync, naive, kernel-async and kernel-async-v2 probe in
 * registration order with the kernel's deferred-probe retry (disabled until
 * late_initcall, then every bind re-triggers all deferred devices); cp-first
 * and levels probe a device when every supplier it needs is bound, so they
 * never defer.
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
#include <time.h>

#include "sim/core/dl_core.h"
#include "sim/core/dl_sat.h"
#include "sim/engine/bound.h"
#include "sim/engine/cost.h"
#include "sim/engine/engine.h"
#include "sim/engine/graph.h"
#include "sim/engine/oploop.h"
#include "sim/engine/phase.h"
#include "sim/engine/retry.h"
#include "sim/engine/run.h"
#include "sim/engine/seqops.h"
#include "sim/engine/vcpu.h"

/*
 * A work item's stages.  ST_SLEEP: its callback's CPU part is over and it
 * sleeps (no CPU, still its worker); ST_TAIL_Q / ST_TAIL: after the callback,
 * the hand-off walk that queues its dependents (handoff_ns, see cost.h)
 * waits for a CPU / runs.
 */
enum { ST_IDLE, ST_QUEUED_START, ST_QUEUED_CB, ST_START, ST_BLOCKED, ST_CB, ST_DONE,
       ST_SLEEP, ST_TAIL_Q, ST_TAIL };
/* The main thread; M_SLEEP: in a callback's sleep, holding no CPU. */
enum { M_IDLE, M_QUEUED, M_BURST, M_WAIT_DEV, M_WAIT_DRAIN, M_DONE, M_SLEEP };
/* What main's burst is: a callback, queueing an item, a callback's hand-off walk. */
enum { MK_CALLBACK, MK_QUEUE, MK_HANDOFF };
/* The deferred-probe kworker (module context): idle, waiting for a CPU, bursting, asleep in a probe. */
enum { R_IDLE, R_QUEUED, R_BURST, R_SLEEP };
enum { PK_SUSPEND = DL_PK_SUSPEND, PK_RESUME = DL_PK_RESUME, PK_PROBE_READY = DL_PK_PROBE,
       PK_PROBE_DEFER = DL_PK_PROBE_DEFER };
/* What a work item pays before its callback (or alone, at its start). */
enum { BK_NONE, BK_QUEUE, BK_WAKE, BK_DEFERRED };

struct sim {
	const struct dl_scenario *sc;
	const struct dl_engine_opts *o;
	const struct dl_order_policy *pol;
	struct dl_run_result *r;
	struct dl_core core;
	uint32_t n, K;
	uint64_t gen;            /* bumped by every op that may change the graph */
	struct dl_graph g;       /* the phase's snapshot (graph.h), kept while gen stands */
	int16_t cur_worker;
	/* the clock, the CPUs, the run queue, the events, the workqueue (vcpu.h) */
	struct dl_vcpu vc;
	bool carry_on;           /* the next item queued runs on the finishing item's kworker */

	/*
	 * Per position, for the phase being run: what the event loop touches
	 * for a device, in one 32-byte record, so that releasing a device costs
	 * one cache line and not one per array.
	 */
	struct task {
		int64_t lat;         /* callback latency; -1: skipped after an abort */
		int64_t prio;        /* cp-first: minus the longest path to the end */
		uint32_t wait;       /* devices still to finish before this one */
		uint32_t level;      /* levels: topological level */
		uint16_t cpu;        /* the CPU it holds */
		uint8_t part;        /* takes part in the phase */
		uint8_t stage;       /* ST_* */
		uint8_t on_main;     /* runs on the main thread */
		uint8_t bk;          /* BK_*: overhead of its next burst */
		uint8_t ran;         /* its callback started in this phase */
		uint8_t left;        /* MAX_WORK: left to main unqueued (main_fallback()) */
	} *t;
	struct dl_costs cost;
	struct dl_faults faults;
	uint32_t remaining, inflight, alive;
	uint32_t nparts;         /* positions taking part (part[]) */
	uint32_t nran;           /* positions whose callback started (mark_ran()) */
	uint32_t *stk;           /* probe_failed()'s stack, one slot per device */
	/*
	 * The phase as bound.h sees it, by position: the participating
	 * positions in topological order (topo, ntopo), the sampled latencies
	 * (lat, also in t[].lat, which an abort overwrites), and each
	 * position's earliest start (est, from the bound; dl_phase_main_bound() reads it).
	 */
	uint32_t *topo, ntopo;
	int64_t *lat, *est;
	int64_t *prio;           /* cp-first: dl_phase_priorities()'s, copied into t[].prio */
	struct dl_levels lv;     /* levels: the phase's levels (phase.h) */
	uint32_t cur_level;      /* levels: the level released last */
	bool main_cb_deferred;
	int64_t reorder_debt;    /* deferred-retry reorders not yet paid by a main burst */
	int64_t *blocked_since;

	/* the phase */
	int pk;
	unsigned phase;          /* enum dl_phase for PM */
	/*
	 * how the phase runs under the order (order.h): ps.serial, prepare or
	 * complete: dpm_prepare() walks dpm_list forward and dpm_complete() the
	 * prepared list backward, every callback on the main thread, nothing
	 * queued and nothing waited for, whatever the order; ps.blocking, a
	 * suspend or resume phase whose async items are queued before they may
	 * run and block until their waits are done (kernel-async, -v2)
	 */
	struct dl_phase_scheme ps;
	uint32_t op_index;
	bool aborted;
	int abort_err;
	uint32_t abort_dev;
	struct dl_op_result *opr;

	/* main thread */
	int mstate;
	struct dl_walk w;        /* main's walk (phase.h), w.v[widx] next */
	uint32_t widx;
	uint32_t *fb, fb_head, fb_n;   /* MAX_WORK: devices left to main, a FIFO ring of n + 1 */
	uint32_t mdev;           /* the position main is bursting on or waiting for */
	int mkind;               /* MK_* */
	struct dl_retry retry;   /* probe with deferral: main's walk after registration order */

	/*
	 * Probe in module context (dl_engine_opts.probe_module): the kworker
	 * that runs deferred_probe_work_func(), a walker of its own beside
	 * main (retry_kick()).  rkind: MK_CALLBACK, a sync driver's retry
	 * probed on the kworker; MK_QUEUE, an async driver's, queued.
	 */
	bool module_ctx;
	int rstate, rkind;       /* R_*, MK_* */
	uint32_t rdev;           /* the position it retries */
	bool r_cb_deferred;      /* its attempt deferred again */
	bool r_wake;             /* its next burst pays the kworker's wake */
	int64_t r_debt;          /* its reorders not yet paid by a burst */
};

_Static_assert(sizeof(struct task) == 32, "a task record is half a cache line");

/* The device id at position @i of the snapshot. */
static inline uint32_t dev_at(const struct sim *s, uint32_t i)
{
	return s->g.ord[i];
}

/* ---- events ---- */

static void sink_emit(void *ctx, struct dl_event *e)
{
	struct sim *s = ctx;

	e->t_ns = s->vc.now;
	e->worker = s->cur_worker;
	s->r->events++;
	if (e->kind == DL_EV_LINK_REFUSED)
		s->r->links_refused++;
	if (s->o->sink.emit)
		s->o->sink.emit(s->o->sink.ctx, e);
}

static void emit(struct sim *s, unsigned kind, uint32_t dev, unsigned phase, int err)
{
	struct dl_event e = { .dev = dev, .link = DL_NONE, .aux = DL_NONE,
			      .kind = (uint16_t)kind, .phase = (uint16_t)phase,
			      .err = (int16_t)err };

	sink_emit(s, &e);
}

static int64_t sample(struct sim *s, uint32_t d, unsigned key)
{
	return dl_cost_sample(s->sc, s->sc->dev[d].profile, s->o->seed, d, key, s->op_index);
}

static unsigned phase_lat_key(unsigned phase)
{
	return DL_LAT_PREPARE + phase;
}

/* ---- CPU bursts (vcpu.h) ---- */

/* The position whose callback or overhead burst @task runs, or DL_NONE (main, not a callback). */
static uint32_t burst_device(const struct sim *s, uint32_t task)
{
	if (task == DL_VCPU_RETRY)
		return s->rkind == MK_CALLBACK ? s->rdev : DL_NONE;
	if (task != DL_VCPU_MAIN)
		return task;
	return s->mkind == MK_CALLBACK ? s->mdev : DL_NONE;
}

/* Ask for a CPU for @task (dl_vcpu_request()). */
static int burst_request(struct sim *s, uint32_t task, int64_t prio)
{
	uint32_t who = burst_device(s, task);

	/*
	 * device_finished() reads the row of the burst's position in the phase's
	 * graph; rows are visited in no order, so start its offset's miss now
	 * and the row's in burst_start(), a few events before they are needed.
	 */
	if (who != DL_NONE)
		dl_prefetch(&s->g.cur->off[who]);
	return dl_vcpu_request(&s->vc, task, prio);
}

static int64_t overhead(const struct sim *s, unsigned bk)
{
	return bk == BK_QUEUE ? s->cost.queue_ns :
	       bk == BK_WAKE ? s->cost.wake_ns : 0;
}

/* @task, holding a CPU, bursts for @len (dl_vcpu_burst()). */
static int burst_start(struct sim *s, uint32_t task, int64_t len)
{
	const struct dl_csr *g = s->g.cur;
	uint32_t who = burst_device(s, task);

	if (who != DL_NONE)
		dl_prefetch(&g->adj[g->off[who]]);   /* see burst_request() */
	return dl_vcpu_burst(&s->vc, task, len);
}

/* The CPU part of latency @lat of position @i (its profile's cpu share). */
static int64_t cb_cpu(const struct sim *s, uint32_t i, int64_t lat)
{
	return dl_cost_cpu_part(lat, s->sc->prof[s->g.prof[i]].cpu_ppm);
}

/* The sleep of position @i's callback in a PM phase or a probe (its latency less its CPU part). */
static int64_t cb_sleep(const struct sim *s, uint32_t i)
{
	int64_t lat = s->t[i].lat;

	return lat > 0 ? lat - cb_cpu(s, i, lat) : 0;
}

/* ---- the phase's graph (graph.h) ---- */

/* The latency of position @i for @key in this op (dl_latency_sample: keyed by device id). */
static int64_t sample_at(struct sim *s, uint32_t i, unsigned key)
{
	return dl_cost_sample(s->sc, s->g.prof[i], s->o->seed, s->g.ord[i], key, s->op_index);
}

/* Position @i's latency in this phase: its record's, and lat[] for the bound. */
static void set_lat(struct sim *s, uint32_t i, int64_t lat)
{
	s->t[i].lat = lat;
	s->lat[i] = lat;
}

/*
 * Make g.cur the current graph of @kind (graph.h), taking a new snapshot
 * if an op may have changed the graph since the last one.
 */
static int graph_get(struct sim *s, unsigned kind)
{
	if (s->g.gen != s->gen)
		dl_dpm_settle(&s->core);   /* the snapshot reads dpm_list as the kernel has it */
	return dl_graph_get(&s->g, &s->core, s->sc, s->gen, kind);
}

static unsigned graph_kind(int pk)
{
	return pk == PK_SUSPEND ? DL_DEP_SUSPEND : pk == PK_RESUME ? DL_DEP_RESUME : DL_DEP_PROBE;
}

static void on_ready(struct sim *s, uint32_t y);

static void main_kick(struct sim *s);
static void retry_poke(struct sim *s);

/* Queue position @y's work item: it asks for a CPU unless max_active items hold a worker. */
static void item_queue(struct sim *s, uint32_t y)
{
	if (dl_vcpu_admit(&s->vc, y))
		burst_request(s, y, s->t[y].prio);
}

/* An item is done with its worker: the oldest inactive one takes it and asks for a CPU. */
static void item_retire(struct sim *s)
{
	uint32_t y;

	if (dl_vcpu_retire(&s->vc, &y))
		burst_request(s, y, s->t[y].prio);
}

/*
 * The hand-off walk of position @d, which just finished in a PM phase of an
 * order whose finishing devices queue their dependents
 * (dpm_async_resume_subordinate(), dpm_async_suspend_superior() since
 * 6.16): handoff_ns per dependent it walks (under dpm_list_mtx, then
 * async_wip_mtx per device) and queue_ns per item it queues: under
 * kernel-async-v2 every async dependent not queued yet (its waits are
 * counted down already, see v2 in main_callback_over()), under the other
 * orders those it makes ready.
 */
static int64_t handoff_len(const struct sim *s, uint32_t d)
{
	int64_t len = 0;

	DL_GRAPH_FOR_EACH_RELEASED(&s->g, d, y, {
		const struct task *z = &s->t[y];

		if (!z->part)
			continue;
		len += s->cost.handoff_ns;
		if (!z->on_main && z->stage == ST_IDLE && (s->ps.blocking || z->wait == 1))
			len += s->cost.queue_ns;
	});
	return len;
}

/* kernel-async-v2's suspend or resume phase (6.16+): its walk and hand-offs. */
static bool v2_phase(const struct sim *s)
{
	return s->ps.v2;
}

/* Position @d's callback is over: does a hand-off walk follow? */
static bool wants_handoff(const struct sim *s, uint32_t d)
{
	return s->ps.handoff && !s->aborted &&
	       s->g.cur->off[d] != s->g.cur->off[d + 1] && handoff_len(s, d) > 0;
}

/*
 * kernel-async-v2: position @d finished and walked its dependents; queue
 * every async one not queued yet (dpm_async_with_cleanup(): skipped if
 * work_in_progress is set, i.e. stage is not ST_IDLE).  Each then waits for
 * the rest of its dependencies, blocking its worker if need be.  The
 * queueing was paid by the walk (handoff_len()); each item pays its
 * kworker's wake, but the first one a finishing work item queues, which
 * its own kworker runs next (see on_ready()).  When MAX_WORK items are
 * pending, dpm_async_with_cleanup() fails and leaves the device to the
 * main walk, whose dpm_async_fn() tries again.  Nothing after a suspend
 * failure (device_suspend*() returns before the hand-off).
 */
static void handoff_queue(struct sim *s, uint32_t d)
{
	bool carry = !s->t[d].on_main;

	if (s->aborted)
		return;
	DL_GRAPH_FOR_EACH_RELEASED(&s->g, d, y, {
		struct task *z = &s->t[y];

		if (!z->part || z->on_main || z->stage != ST_IDLE ||
		    !dl_async_may_queue(s->pol, s->inflight))
			continue;
		z->stage = ST_QUEUED_START;
		z->bk = carry ? BK_NONE : BK_WAKE;
		carry = false;
		s->inflight++;
		item_queue(s, y);
	});
}

/* Position @d is done with this phase: release the next level if it was the last of its. */
static void level_done(struct sim *s, uint32_t d)
{
	struct dl_levels *lv = &s->lv;

	if (s->ps.barrier && s->t[d].part && --lv->left[s->t[d].level] == 0) {
		while (s->cur_level + 1 < lv->nlevels && lv->left[s->cur_level] == 0) {
			s->cur_level++;
			for (uint32_t i = lv->off[s->cur_level]; i < lv->off[s->cur_level + 1]; i++) {
				uint32_t z = lv->order[i];

				if (s->t[z].wait == 0)
					on_ready(s, z);
			}
		}
	}
}

/*
 * A probe of position @d failed, so it releases nobody: the devices waiting
 * for it (and those waiting for them) cannot probe in this op.  They are
 * finished without a callback, so that the main thread's walk skips them and
 * the level barriers move on, as the other devices would in the kernel.
 */
static void probe_failed(struct sim *s, uint32_t d)
{
	uint32_t n = 0;

	s->stk[n++] = d;
	while (n) {
		uint32_t x = s->stk[--n];

		DL_GRAPH_FOR_EACH_RELEASED(&s->g, x, y, {
			if (s->t[y].part && s->t[y].stage == ST_IDLE && s->t[y].wait > 0) {
				s->t[y].stage = ST_DONE;
				s->remaining--;
				level_done(s, y);
				s->stk[n++] = y;        /* each position at most once */
				if (s->mstate == M_WAIT_DEV && s->mdev == y)
					main_kick(s);
			}
		});
	}
}

static void device_finished(struct sim *s, uint32_t d)
{
	s->t[d].stage = ST_DONE;
	s->remaining--;
	if (s->pk == PK_PROBE_DEFER || s->ps.serial)
		return;   /* serial: main walks to the next device, nobody waits */
	level_done(s, d);
	if (s->pk == PK_PROBE_READY && s->core.dev[dev_at(s, d)].state != DL_DEV_DRIVER_BOUND) {
		probe_failed(s, d);
		return;
	}
	/* the released devices are scattered: start every miss at once */
	DL_GRAPH_FOR_EACH_RELEASED(&s->g, d, y, { dl_prefetch(&s->t[y]); });
	s->carry_on = s->ps.handoff && !s->t[d].on_main;
	DL_GRAPH_FOR_EACH_RELEASED(&s->g, d, y, {
		if (s->t[y].part && s->t[y].stage != ST_DONE && s->t[y].wait > 0) {
			if (--s->t[y].wait == 0)
				on_ready(s, y);
		}
	});
	s->carry_on = false;
}

/*
 * MAX_WORK items are pending (dl_async_may_queue()): @y, ready, is not
 * queued but left to the main thread, which takes it once it is free,
 * before going on with its walk, and queues it then if it can or else runs
 * it (7.3: dpm_async_with_cleanup() fails and leaves it to the main walk,
 * whose dpm_async_fn() tries again, and runs it if that fails too).
 */
static void fb_push(struct sim *s, uint32_t y)
{
	/* a device is in the ring at most once: n + 1 slots never overflow */
	s->fb[(s->fb_head + s->fb_n++) % (s->n + 1)] = y;
}

static void main_fallback(struct sim *s, uint32_t y)
{
	s->t[y].on_main = 1;    /* main's until main_kick() queues it */
	s->t[y].left = 1;
	fb_push(s, y);
	if (s->mstate == M_DONE)
		s->mstate = M_IDLE;
	if (s->mstate == M_IDLE || s->mstate == M_WAIT_DEV)
		main_kick(s);
}

/* Enqueue @y's work as a callback burst, or wake it / the main thread. */
static void on_ready(struct sim *s, uint32_t y)
{
	if (s->aborted)
		return;
	if (s->t[y].on_main) {
		if (s->mstate == M_WAIT_DEV && s->mdev == y)
			main_kick(s);
		return;
	}
	if (s->ps.barrier && s->t[y].level > s->cur_level)
		return;
	if (s->t[y].stage == ST_BLOCKED) {
		s->r->wakeups++;
		s->opr->wakeups++;
		s->opr->blocked_ns += s->vc.now - s->blocked_since[y];
		emit(s, DL_EV_WORK_WAKE, dev_at(s, y), s->phase, 0);
		s->t[y].stage = ST_QUEUED_CB;
		s->t[y].bk = BK_WAKE;
		if (v2_phase(s))
			item_queue(s, y);   /* it gave its worker back (item_burst_done()) */
		else
			burst_request(s, y, s->t[y].prio);
		s->alive--;   /* counted again when it gets a CPU */
		return;
	}
	if (s->t[y].stage != ST_IDLE || !s->ps.queue_when_ready)
		return;   /* classic and v2 items are queued by the walk (v2: or a hand-off) */
	if (!dl_async_may_queue(s->pol, s->inflight)) {
		main_fallback(s, y);
		return;
	}
	s->t[y].stage = ST_QUEUED_CB;
	/*
	 * In a PM phase the item's kworker wakes (wake_ns), as a classic
	 * item's does; a finishing device's hand-off walk paid queue_ns for
	 * the items it queues (the phase's first items are queued for free
	 * here: the up-front walk that queues them is not modelled yet).
	 * Except the first item a finishing work item queues: its own kworker
	 * runs it next, without a wake (worker_thread(): keep_working() holds
	 * while the worklist is not empty, unbound workers never count in
	 * nr_running); the idle worker kick_pool() woke finds nothing.  In
	 * probe the item pays the queueing itself.
	 */
	if (s->carry_on) {
		s->t[y].bk = BK_NONE;
		s->carry_on = false;
	} else {
		s->t[y].bk = s->ps.handoff ? BK_WAKE : BK_QUEUE;
	}
	s->inflight++;
	item_queue(s, y);
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
 * The callback of position @i starts now on the current CPU; returns the
 * length of its CPU part (a deferring probe: probe_check_ns, all CPU).  Its
 * sleep (cb_sleep()) follows, without the CPU.
 */
static int64_t callback_begin(struct sim *s, uint32_t i, bool *deferred)
{
	uint32_t d = dev_at(s, i);

	*deferred = false;
	if (s->pk == PK_SUSPEND || s->pk == PK_RESUME) {
		mark_ran(s, i);
		emit(s, dl_pm_event((unsigned)s->pk, false), d, s->phase, 0);
		return cb_cpu(s, i, s->t[i].lat);
	}
	/* probe */
	if (dl_probe_begin(&s->core, d, !s->ps.link_aware) != 0) {
		*deferred = true;
		s->opr->probe_attempts++;
		s->opr->probe_defers++;
		emit(s, DL_EV_PROBE_DEFER, d, 0, -DL_EPROBE_DEFER);
		return s->cost.check_ns;
	}
	s->opr->probe_attempts++;
	mark_ran(s, i);
	emit(s, DL_EV_PROBE_START, d, 0, 0);
	return cb_cpu(s, i, s->t[i].lat);
}

/* The callback of position @i ended (its sleep included); device_finished() follows. */
static void callback_end(struct sim *s, uint32_t i, bool deferred)
{
	uint32_t d = dev_at(s, i);
	int err;

	if (s->pk == PK_SUSPEND || s->pk == PK_RESUME) {
		int depth;

		err = dl_faults_take(&s->faults, d, phase_lat_key(s->phase));
		emit(s, dl_pm_event((unsigned)s->pk, true), d, s->phase, err);
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
	if (!deferred) {
		err = dl_faults_take(&s->faults, d, DL_LAT_PROBE);
		dl_probe_end(&s->core, d, err);
		emit(s, DL_EV_PROBE_END, d, 0, err);
		retry_poke(s);   /* a bind queues deferred_probe_work_func() */
	}
}

/* ---- the main thread ---- */

/* Charge (and count) device_pm_move_to_tail(@d) to the walker's next burst (its @debt). */
static void reorder_charge(struct sim *s, uint32_t d, int64_t *debt)
{
	uint64_t calls = dl_reorder_visits(&s->core, d);
	int64_t ns = dl_cost_reorder(&s->cost, calls);
	struct dl_op_result *o = s->opr;

	*debt += ns;
	o->reorder_walks++;
	o->reorder_calls = dl_sat_add_u64(o->reorder_calls, calls);
	o->reorder_ns = dl_sat_add_i64(o->reorder_ns, ns);
	o->reorder_capped += ns == DL_COST_REORDER_CAP_NS;
}

/*
 * The position of device @d, which the deferred-probe retry walk just took
 * off the active list (DL_NONE: none).  Prefetches, a few entries ahead,
 * the position and then the task that main_kick() reads (the core
 * prefetches its own device and link).
 */
static uint32_t retry_pos(struct sim *s, uint32_t d, int64_t *debt)
{
	uint32_t a;

	if (d == DL_NONE)
		return DL_NONE;
	/* device_pm_move_to_tail() before the retry: paid by the walk's next burst */
	reorder_charge(s, d, debt);
	if ((a = dl_deferred_peek(&s->core, 16)) != DL_NONE)
		dl_prefetch(&s->g.pos[a]);
	if ((a = dl_deferred_peek(&s->core, 8)) != DL_NONE && s->g.pos[a] != DL_NONE)
		dl_prefetch(&s->t[s->g.pos[a]]);
	return s->g.pos[d];
}

static bool main_next(struct sim *s, uint32_t *i)
{
	if (s->fb_n) {
		*i = s->fb[s->fb_head];
		s->fb_head = (s->fb_head + 1) % (s->n + 1);
		s->fb_n--;
		return true;
	}
	if (s->retry.late)
		return false;   /* past the walk: the active list (main_kick()) */
	while (s->widx < s->w.n) {
		uint32_t x = s->w.v[s->widx++];

		if (s->pk == PK_PROBE_READY && s->t[x].stage == ST_DONE)
			continue;       /* probe_failed() */
		if (s->ps.blocking && !s->t[x].on_main && s->t[x].stage != ST_IDLE)
			continue;       /* v2: queued already, dpm_async_fn() skips it */
		if (s->t[x].part && (s->t[x].on_main || s->ps.blocking ||
				   s->pk == PK_PROBE_DEFER)) {
			*i = x;
			return true;
		}
	}
	return false;
}

/* Advance the main thread as far as it can go without a CPU burst ending. */
static void main_kick(struct sim *s)
{
	uint32_t d;

	for (;;) {
		if (s->mstate == M_WAIT_DEV) {
			if (s->t[s->mdev].stage == ST_DONE) {
				s->mstate = M_IDLE;     /* a supplier's probe failed: skip it */
				continue;
			}
			if (s->t[s->mdev].wait > 0 && s->ps.link_aware && !s->aborted) {
				if (!s->fb_n)
					return;
				/* it may wait for a device left to main (MAX_WORK): that one first */
				fb_push(s, s->mdev);
				s->mstate = M_IDLE;
				continue;
			}
			s->mkind = MK_CALLBACK;
			s->mstate = M_QUEUED;
			burst_request(s, DL_VCPU_MAIN, 0);
			return;
		}
		if (s->mstate == M_QUEUED || s->mstate == M_BURST || s->mstate == M_SLEEP)
			return;
		if (s->aborted) {
			s->mstate = M_DONE;
			return;
		}
		if (!main_next(s, &d)) {
			if (s->pk == PK_PROBE_DEFER && !s->module_ctx) {
				/* late_initcall, then the active list (retry.h) */
				uint32_t dev;

				switch (dl_retry_next(&s->retry, &s->core, s->inflight == 0, &dev)) {
				case DL_RETRY_DRAIN:
					s->mstate = M_WAIT_DRAIN;
					return;
				case DL_RETRY_END:
					s->mstate = M_DONE;
					return;
				case DL_RETRY_DEVICE:
					break;
				}
				d = retry_pos(s, dev, &s->reorder_debt);
				if (d == DL_NONE)
					continue;   /* registered after the snapshot: none is, while probing */
			} else {
				s->mstate = M_DONE;
				return;
			}
		}
		if (s->pk == PK_PROBE_DEFER &&
		    (s->t[d].stage == ST_QUEUED_CB || s->t[d].stage == ST_CB ||
		     s->core.dev[dev_at(s, d)].state != DL_DEV_NO_DRIVER))
			continue;   /* already probing or bound: bus_probe_device() is a no-op */
		s->mdev = d;
		if (s->pk == PK_PROBE_DEFER) {
			if (!s->t[d].part) {
				s->t[d].part = 1;
				s->remaining++;
				s->nparts++;
			}
			s->t[d].stage = ST_IDLE;
			s->mkind = dl_order_on_main(s->pol, true, s->core.dev[dev_at(s, d)].async) ?
				   MK_CALLBACK : MK_QUEUE;
			if (s->mkind == MK_QUEUE && !dl_async_may_queue(s->pol, s->inflight)) {
				/* MAX_WORK: __device_attach() retries synchronously */
				s->mkind = MK_CALLBACK;
				s->opr->sync_fallbacks++;
			}
			s->mstate = M_QUEUED;
			burst_request(s, DL_VCPU_MAIN, 0);
			return;
		}
		if (!s->t[d].on_main || s->t[d].left) {
			/* classic async, or one left to main: queue its item if MAX_WORK allows */
			s->t[d].left = 0;
			if (dl_async_may_queue(s->pol, s->inflight)) {
				s->t[d].on_main = 0;
				/*
				 * marked at once, as dpm_async_fn() sets
				 * work_in_progress: a v2 hand-off meanwhile
				 * does not queue it twice
				 */
				if (s->ps.blocking)
					s->t[d].stage = ST_QUEUED_START;
				s->mkind = MK_QUEUE;
				s->mstate = M_QUEUED;
				burst_request(s, DL_VCPU_MAIN, 0);
				return;
			}
			if (v2_phase(s) && s->widx <= s->w.nupfront)
				continue;   /* v2 up front: dpm_async_with_cleanup() leaves it to the walk */
			/* MAX_WORK: dpm_async_fn() fails, the main thread runs the device */
			s->t[d].on_main = 1;
			s->opr->sync_fallbacks++;
		}
		s->mstate = M_WAIT_DEV;
	}
}

static void main_got_cpu(struct sim *s)
{
	int64_t len = s->cost.main_ns;

	s->mstate = M_BURST;
	if (s->mkind != MK_HANDOFF) {
		len += s->reorder_debt;
		s->reorder_debt = 0;
	}
	if (s->mkind == MK_HANDOFF) {
		len = handoff_len(s, s->mdev);
	} else if (s->mkind == MK_QUEUE) {
		len += s->cost.queue_ns;
	} else {
		bool deferred;

		s->t[s->mdev].stage = ST_CB;
		len += callback_begin(s, s->mdev, &deferred);
		s->main_cb_deferred = deferred;
	}
	burst_start(s, DL_VCPU_MAIN, len);
}

/* Main's callback on position mdev is over, sleep included: its hand-off walk, or the next device. */
static void main_callback_over(struct sim *s)
{
	uint32_t d = s->mdev;

	callback_end(s, d, s->main_cb_deferred);
	if (v2_phase(s)) {
		/*
		 * 6.16+: complete_all() first (blocked waiters wake), then the
		 * hand-off walk (dpm_async_resume_subordinate(),
		 * dpm_async_suspend_superior()) queues what is not queued yet
		 */
		device_finished(s, d);
		if (wants_handoff(s, d)) {
			s->mkind = MK_HANDOFF;
			s->mstate = M_QUEUED;
			burst_request(s, DL_VCPU_MAIN, 0);
			return;
		}
		handoff_queue(s, d);
		s->mstate = M_IDLE;
		main_kick(s);
		return;
	}
	if (!s->main_cb_deferred && wants_handoff(s, d)) {
		s->mkind = MK_HANDOFF;
		s->mstate = M_QUEUED;
		burst_request(s, DL_VCPU_MAIN, 0);
		return;
	}
	s->mstate = M_IDLE;
	device_finished(s, d);
	main_kick(s);
}

/* Main's burst ended (its CPU is free again). */
static void main_burst_done(struct sim *s)
{
	uint32_t d = s->mdev;
	int64_t sl;

	s->mstate = M_IDLE;
	if (s->mkind == MK_QUEUE) {
		/* the queued item */
		s->t[d].stage = s->pk == PK_PROBE_DEFER ? ST_QUEUED_CB : ST_QUEUED_START;
		s->t[d].bk = s->pk == PK_PROBE_DEFER ? BK_NONE : BK_WAKE;
		s->inflight++;
		item_queue(s, d);
	} else if (s->mkind == MK_HANDOFF) {
		if (v2_phase(s))
			handoff_queue(s, d);   /* finished before its walk */
		else
			device_finished(s, d);
	} else if (!s->main_cb_deferred && (sl = cb_sleep(s, d)) > 0) {
		s->mstate = M_SLEEP;
		dl_vcpu_sleep(&s->vc, DL_VCPU_MAIN, sl);
		return;
	} else {
		main_callback_over(s);
		return;
	}
	main_kick(s);
}

/* ---- work items ---- */

static void item_got_cpu(struct sim *s, uint32_t d)
{
	if (s->t[d].stage == ST_TAIL_Q) {
		s->t[d].stage = ST_TAIL;
		burst_start(s, d, handoff_len(s, d));
		return;
	}
	s->alive++;
	if (s->alive > s->opr->peak_workers)
		s->opr->peak_workers = s->alive;
	if (s->t[d].stage == ST_QUEUED_START) {
		s->t[d].stage = ST_START;
		burst_start(s, d, overhead(s, s->t[d].bk));
		return;
	}
	/* ST_QUEUED_CB: the overhead, then the callback */
	s->t[d].stage = ST_CB;
	if (s->aborted && s->pk != PK_PROBE_DEFER && s->pk != PK_PROBE_READY) {
		burst_start(s, d, overhead(s, s->t[d].bk));   /* skips the callback: async_error */
		s->t[d].lat = -1;
		return;
	}
	{
		bool deferred;
		int64_t len = overhead(s, s->t[d].bk) + callback_begin(s, d, &deferred);

		s->t[d].bk = deferred ? BK_DEFERRED : BK_NONE;
		burst_start(s, d, len);
	}
}

/* Item @d gives its worker back. */
static void item_leave(struct sim *s)
{
	s->alive--;
	s->inflight--;
	item_retire(s);
}

/* The main thread waits for the items in flight (probe): the last one is done. */
static void drain_check(struct sim *s)
{
	if (s->mstate == M_WAIT_DRAIN && s->inflight == 0) {
		s->mstate = M_IDLE;
		main_kick(s);
	}
}

/* Item @d is done: its worker is free. */
static void item_done(struct sim *s, uint32_t d)
{
	item_leave(s);
	if (s->t[d].lat == -1 && s->aborted) {
		s->t[d].stage = ST_DONE;
		s->remaining--;
	} else {
		device_finished(s, d);
	}
	drain_check(s);
}

/* v2: item @d finished (device_finished() done) and walked its dependents: queue them, leave. */
static void item_v2_done(struct sim *s, uint32_t d)
{
	s->t[d].stage = ST_DONE;
	item_leave(s);
	handoff_queue(s, d);
	drain_check(s);
}

/* Item @d's callback is over, sleep included: its hand-off walk, or done. */
static void item_callback_over(struct sim *s, uint32_t d)
{
	bool skipped = s->t[d].lat == -1 && s->aborted;

	if (!skipped)
		callback_end(s, d, s->t[d].bk == BK_DEFERRED);
	if (!skipped && v2_phase(s)) {
		/* complete_all() first, then the hand-off walk (main_callback_over()) */
		device_finished(s, d);
		if (wants_handoff(s, d)) {
			s->t[d].stage = ST_TAIL_Q;
			burst_request(s, d, s->t[d].prio);
			return;
		}
		item_v2_done(s, d);
		return;
	}
	if (!skipped && s->t[d].bk != BK_DEFERRED && wants_handoff(s, d)) {
		s->t[d].stage = ST_TAIL_Q;
		burst_request(s, d, s->t[d].prio);
		return;
	}
	item_done(s, d);
}

/* Item @d's burst ended, its CPU released (or kept: ST_START going on to the callback). */
static void item_burst_done(struct sim *s, uint32_t d)
{
	int64_t sl;

	if (s->t[d].stage == ST_TAIL) {
		if (v2_phase(s))
			item_v2_done(s, d);
		else
			item_done(s, d);
		return;
	}
	if (s->t[d].stage == ST_START) {
		if (s->aborted) {
			s->t[d].stage = ST_DONE;
			s->remaining--;
			s->inflight--;
			s->alive--;
			item_retire(s);
			return;
		}
		if (s->t[d].wait == 0) {
			bool deferred;

			s->t[d].stage = ST_CB;
			s->t[d].bk = BK_NONE;
			burst_start(s, d, callback_begin(s, d, &deferred));
			s->t[d].cpu = (uint16_t)s->cur_worker;   /* keeps its CPU */
			return;
		}
		s->t[d].stage = ST_BLOCKED;
		s->blocked_since[d] = s->vc.now;
		emit(s, DL_EV_WORK_BLOCK, dev_at(s, d), s->phase, 0);
		s->opr->blocked_ns += s->cost.switch_ns;
		/*
		 * kernel-async-v2: a blocked item gives its worker back and
		 * takes one again when woken (on_ready()).  The kernel's
		 * max_active counts a blocked kworker, but 6.16's hand-offs
		 * queue an item before what it waits for may be queued (the
		 * walk has not reached it), so that all max_active items can
		 * block on items still inactive: pixel6-shape.json's 3000
		 * devices hung that way (as threads.c's pool did, which parks
		 * a blocked v2 item too).  Classic items are queued in walk
		 * order, after what they wait for, and keep theirs.
		 */
		if (v2_phase(s))
			item_retire(s);
		return;
	}
	/* ST_CB: the callback's CPU part is over; its sleep follows */
	if (s->t[d].bk != BK_DEFERRED && !(s->t[d].lat == -1 && s->aborted) &&
	    (sl = cb_sleep(s, d)) > 0) {
		s->t[d].stage = ST_SLEEP;
		dl_vcpu_sleep(&s->vc, d, sl);
		return;
	}
	item_callback_over(s, d);
}

/* ---- the deferred-probe kworker (probe in module context) ---- */

/*
 * deferred_probe_work_func() on its kworker, beside the registration walk:
 * the next device of the active list (dl_deferred_next() moves it to the
 * tail of dpm_list first), retried by bus_probe_device_deferred(): a sync
 * driver's probe runs on the kworker itself, an async driver's is queued
 * (__device_attach(dev, true): async_schedule_dev_nocall()).  A device
 * bound or probing meanwhile is a no-op.  Idle once the list is empty,
 * until a bind queues the work again (retry_poke()).
 */
static void retry_kick(struct sim *s)
{
	uint32_t d;

	do {
		d = retry_pos(s, dl_deferred_next(&s->core), &s->r_debt);
		if (d == DL_NONE) {
			s->rstate = R_IDLE;
			return;
		}
	} while (s->t[d].stage == ST_QUEUED_CB || s->t[d].stage == ST_CB ||
		 s->core.dev[dev_at(s, d)].state != DL_DEV_NO_DRIVER);
	s->rdev = d;
	if (!s->t[d].part) {
		s->t[d].part = 1;
		s->remaining++;
		s->nparts++;
	}
	s->t[d].stage = ST_IDLE;
	s->rkind = dl_order_on_main(s->pol, true, s->core.dev[dev_at(s, d)].async) ?
		   MK_CALLBACK : MK_QUEUE;
	if (s->rkind == MK_QUEUE && !dl_async_may_queue(s->pol, s->inflight)) {
		s->rkind = MK_CALLBACK;   /* MAX_WORK: __device_attach() retries synchronously */
		s->opr->sync_fallbacks++;
	}
	s->rstate = R_QUEUED;
	burst_request(s, DL_VCPU_RETRY, 0);
}

/*
 * driver_deferred_probe_trigger() after a bind (or at the op's start):
 * queue_work() wakes the kworker if it is idle and the active list is not
 * empty; a busy one walks on to what was appended.
 */
static void retry_poke(struct sim *s)
{
	if (!s->module_ctx || s->rstate != R_IDLE || dl_deferred_peek(&s->core, 0) == DL_NONE)
		return;
	s->r_wake = true;
	retry_kick(s);
}

static void retry_got_cpu(struct sim *s)
{
	int64_t len = s->cost.main_ns + s->r_debt;

	s->r_debt = 0;
	if (s->r_wake) {
		len += s->cost.wake_ns;
		s->r_wake = false;
	}
	s->rstate = R_BURST;
	if (s->rkind == MK_QUEUE) {
		len += s->cost.queue_ns;
	} else {
		bool deferred;

		s->t[s->rdev].stage = ST_CB;
		len += callback_begin(s, s->rdev, &deferred);
		s->r_cb_deferred = deferred;
	}
	burst_start(s, DL_VCPU_RETRY, len);
}

/* The kworker's probe of rdev is over, sleep included: the next retry. */
static void retry_callback_over(struct sim *s)
{
	uint32_t d = s->rdev;

	s->rstate = R_BURST;    /* busy: its own bind does not poke it */
	callback_end(s, d, s->r_cb_deferred);
	device_finished(s, d);
	retry_kick(s);
}

static void retry_burst_done(struct sim *s)
{
	uint32_t d = s->rdev;
	int64_t sl;

	if (s->rkind == MK_QUEUE) {
		s->t[d].stage = ST_QUEUED_CB;
		s->t[d].bk = BK_NONE;
		s->inflight++;
		item_queue(s, d);
		retry_kick(s);
		return;
	}
	if (!s->r_cb_deferred && (sl = cb_sleep(s, d)) > 0) {
		s->rstate = R_SLEEP;
		dl_vcpu_sleep(&s->vc, DL_VCPU_RETRY, sl);
		return;
	}
	retry_callback_over(s);
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
			main_got_cpu(s);
		} else if (task == DL_VCPU_RETRY) {
			s->t[s->n + 1].cpu = cpu;
			retry_got_cpu(s);
		} else {
			s->t[task].cpu = cpu;
			item_got_cpu(s, task);
		}
	}
}

static int run_loop(struct sim *s)
{
	uint64_t steps = 0;
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
				main_callback_over(s);
			} else {
				dl_vcpu_release(&s->vc, cpu);
				main_burst_done(s);
			}
		} else if (e.task == DL_VCPU_RETRY) {
			cpu = s->t[s->n + 1].cpu;
			s->cur_worker = (int16_t)cpu;
			if (s->rstate == R_SLEEP) {
				retry_callback_over(s);
			} else {
				dl_vcpu_release(&s->vc, cpu);
				retry_burst_done(s);
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
		if ((++steps & 4095) == 0) {
			if (s->o->stop && *s->o->stop)
				return -EINTR;
			if (s->o->progress && (steps & 0x3ffff) == 0)
				s->o->progress(s->o->progress_ctx, s->op_index, s->sc->nop,
					       s->r->events);
		}
	}
	return 0;
}

/* ---- phases ---- */

#define SCAN_AHEAD 8           /* phase_scan()'s prefetch distance, in positions */

/*
 * One pass over the phase in topological order (dpm_list's, reversed for
 * suspend): the participating positions in that order (topo, for the
 * bound), who runs on main, and how many devices each one waits for.
 */
static void phase_scan(struct sim *s)
{
	uint32_t m = s->g.m;
	bool fwd = s->pk != PK_SUSPEND, count_waits = s->pk != PK_PROBE_DEFER && !s->ps.serial;

	s->ntopo = 0;
	for (uint32_t k = 0; k < m; k++) {
		uint32_t i = fwd ? k : m - 1 - k;
		struct task *x = &s->t[i];

		/* the rows are read in order, the records they update are scattered */
		if (count_waits && k + SCAN_AHEAD < m) {
			uint32_t a = fwd ? k + SCAN_AHEAD : m - 1 - k - SCAN_AHEAD;

			DL_GRAPH_FOR_EACH_RELEASED(&s->g, a, y, { dl_prefetch(&s->t[y]); });
		}
		if (!x->part)
			continue;
		s->remaining++;
		s->topo[s->ntopo++] = i;
		/* prepare, complete: one thread, one callback at a time, nobody waits */
		x->on_main = dl_phase_on_main(&s->ps, s->pol, s->g.async[i]);
		/* (a released device outside the phase counts waits nobody reads) */
		if (count_waits)
			DL_GRAPH_FOR_EACH_RELEASED(&s->g, i, y, { s->t[y].wait++; });
	}
}

/* The phase's graph for bound.h: the positions in @topo, their latencies and profiles. */
static struct dl_phase_graph phase_graph(const struct sim *s, const uint32_t *topo, uint32_t n)
{
	return dl_graph_phase(&s->g, topo, n, s->lat);
}

/* The phase's lower bound (bound.h) over every participating position; est for the main bound. */
static struct dl_bound phase_bound(struct sim *s)
{
	struct dl_phase_graph g = phase_graph(s, s->topo, s->ntopo);

	return dl_bound_phase(&g, s->sc, s->K, s->ps.serial, s->est);
}

/*
 * The bound of a phase in which some callbacks never ran: a fault aborted
 * it (nothing new starts after the failure), or a failed probe left its
 * consumers unprobed.  The bound of the whole phase may then exceed what
 * was run; the callbacks that did run kept every wait among themselves, so
 * the phase took at least max(their critical path, their work / K).
 */
static struct dl_bound ran_bound(struct sim *s)
{
	uint32_t m = s->g.m, n = 0;
	bool fwd = s->pk != PK_SUSPEND;
	struct dl_phase_graph g;

	/* the phase is over: topo is free (and the deferred-probe walk may have added parts) */
	for (uint32_t k = 0; k < m; k++) {
		uint32_t i = fwd ? k : m - 1 - k;

		if (s->t[i].part && s->t[i].ran)
			s->topo[n++] = i;
	}
	g = phase_graph(s, s->topo, n);
	return dl_bound_phase(&g, s->sc, s->K, s->ps.serial, s->est);
}

/* The phase as phase.h sees it: indices are positions. */
static struct dl_phase_view phase_view(const struct sim *s)
{
	return (struct dl_phase_view){
		.g = phase_graph(s, s->topo, s->ntopo), .list = NULL, .nlist = s->g.m,
		.id = s->g.ord, .index_of = s->g.pos, .nid = s->n,
		.part = { &s->t[0].part, sizeof(s->t[0]) },
		.on_main = { &s->t[0].on_main, sizeof(s->t[0]) },
	};
}

/* cp-first: the priorities of the phase (phase.h), into the records. */
static void priorities(struct sim *s)
{
	struct dl_phase_graph g = phase_graph(s, s->topo, s->ntopo);

	dl_phase_priorities(&g, s->g.m, s->prio);
	for (uint32_t k = 0; k < s->ntopo; k++)
		s->t[s->topo[k]].prio = s->prio[s->topo[k]];
}

/* levels: the levels of the phase (phase.h); each record keeps its own. */
static void levels(struct sim *s)
{
	struct dl_phase_view v = phase_view(s);

	dl_phase_levels(&v, &s->lv);
	for (uint32_t k = 0; k < s->ntopo; k++)
		s->t[s->topo[k]].level = s->lv.level[s->topo[k]];
	s->cur_level = 0;
}

/* The main thread's walk (phase.h). */
static void build_walk(struct sim *s)
{
	struct dl_phase_view v = phase_view(s);
	struct dl_walk_how h = { .ps = &s->ps, .core = &s->core, .phase = s->phase };

	dl_phase_walk(&v, &h, &s->w);
	s->widx = 0;
}

/*
 * Probe in module context: the module registers its sync driver, whose
 * bus walk (driver_attach(), registration order) probes its devices in
 * turn on the main thread, then its async driver, whose walk queues the
 * others (__driver_attach(): async_schedule_dev()).  So main's walk takes
 * the sync driver's devices first, each part in registration order.
 */
static void walk_module(struct sim *s)
{
	uint32_t n = 0, na = 0;

	for (uint32_t k = 0; k < s->w.n; k++) {
		uint32_t x = s->w.v[k];

		if (s->t[x].on_main)
			s->w.v[n++] = x;
		else
			s->stk[na++] = x;
	}
	memcpy(s->w.v + n, s->stk, na * sizeof(*s->stk));
}

/* Start a phase of kind @pk on the snapshot of its graph; part[] is cleared. */
static int phase_reset(struct sim *s, int pk)
{
	int err;

	s->pk = pk;
	s->remaining = s->inflight = s->alive = s->nran = 0;
	s->fb_head = s->fb_n = 0;
	s->mstate = M_IDLE;
	dl_retry_start(&s->retry);
	err = graph_get(s, graph_kind(pk));
	if (err)
		return err;
	for (uint32_t i = 0; i < s->g.m; i++) {
		struct task *x = &s->t[i];

		x->part = x->on_main = x->ran = x->left = 0;
		x->stage = ST_IDLE;
		x->wait = 0;
		x->prio = 0;
	}
	return 0;
}

/* Run one phase over the positions marked in part[]; its figures go to the op's. */
static int run_phase(struct sim *s)
{
	int64_t t0 = s->vc.now, mainb;
	struct dl_bound b;
	int err;

	s->ps = dl_order_scheme(s->o->order, (unsigned)s->pk, s->phase);
	dl_vcpu_reset(&s->vc, s->ps.by_priority);
	phase_scan(s);
	b = phase_bound(s);
	s->nparts = s->remaining;
	build_walk(s);
	if (s->module_ctx)
		walk_module(s);
	{
		struct dl_phase_view v = phase_view(s);

		mainb = dl_phase_main_bound(&v, &s->w, &s->ps, s->est, s->cost.main_ns,
					    s->cost.queue_ns);
	}
	if (s->ps.by_priority)
		priorities(s);
	if (s->ps.barrier)
		levels(s);
	main_kick(s);
	retry_poke(s);   /* module context: what an earlier op left deferred */
	if (s->ps.queue_when_ready && s->pk != PK_PROBE_DEFER) {
		for (uint32_t k = 0; k < s->w.n; k++) {
			uint32_t i = s->w.v[k];

			if (s->t[i].part && !s->t[i].on_main && s->t[i].wait == 0)
				on_ready(s, i);
		}
	}
	err = run_loop(s);
	if (s->aborted)
		mainb = 0;   /* main stopped early: no claim */
	if (!err && s->nran < s->nparts)
		b = ran_bound(s);
	dl_op_add_phase(s->opr, s->vc.now - t0, &b, mainb);
	return err;
}

/*
 * Start a phase of kind @pk (for suspend and resume: enum dl_phase @phase)
 * on the snapshot of its graph: who takes part (probe: the devices without a
 * driver; PM: dl_pm_takes_part()), their latencies sampled.
 */
static int phase_start(struct sim *s, unsigned pk, unsigned phase)
{
	bool pm = pk == PK_SUSPEND || pk == PK_RESUME;
	int err = phase_reset(s, (int)pk);

	if (err)
		return err;
	if (pm) {
		s->phase = phase;
		s->aborted = false;
	}
	for (uint32_t i = 0; i < s->g.m; i++) {
		struct task *x = &s->t[i];

		x->part = pm ? dl_pm_takes_part(pk, phase, s->g.depth[i]) :
			  s->core.dev[dev_at(s, i)].state == DL_DEV_NO_DRIVER;
		set_lat(s, i, !x->part && pm ? 0 :
			      sample_at(s, i, pm ? phase_lat_key(phase) : DL_LAT_PROBE));
	}
	return 0;
}

/* ---- the backend of the op loop (oploop.h) ---- */

static int be_probe(void *be, unsigned pk)
{
	struct sim *s = be;
	int err = phase_start(s, pk, 0);

	if (err)
		return err;
	/*
	 * module context (the op loop registered as the module does, and
	 * enabled deferred probing and sync_state()): retries on the kworker
	 */
	s->module_ctx = pk == PK_PROBE_DEFER && s->o->probe_module;
	s->rstate = R_IDLE;
	s->r_debt = 0;
	s->r_wake = false;
	if (s->module_ctx && (err = dl_core_track_can_match(&s->core)))
		return err;
	err = run_phase(s);
	s->module_ctx = false;
	if (pk == PK_PROBE_READY) {
		/* devices never released (a supplier failed): they stay unbound,
		 * deferred as the kernel would leave them, in registration order */
		for (uint32_t d = 0; d < s->n; d++) {
			uint32_t i = s->g.pos[d];

			if (i != DL_NONE && s->t[i].part && s->t[i].stage != ST_DONE)
				dl_deferred_add(&s->core, d);
		}
	}
	/*
	 * the probe's deferred retries moved devices to the tail of dpm_list
	 * (device_pm_move_to_tail()): the next phase's snapshot must see them
	 */
	s->gen++;
	return err;
}

static int be_pm_phase(void *be, unsigned pk, unsigned phase)
{
	struct sim *s = be;
	int err = phase_start(s, pk, phase);

	return err ? err : run_phase(s);
}

static bool be_aborted(void *be, int *err, uint32_t *dev)
{
	struct sim *s = be;

	if (s->aborted) {
		*err = s->abort_err;
		*dev = s->abort_dev;
	}
	return s->aborted;
}

/* ---- sequential ops on the main thread (sim/engine/seqops.c) ---- */

static void seq_emit(void *ctx, unsigned kind, uint32_t dev, unsigned phase, int err)
{
	emit(ctx, kind, dev, phase, err);
}

static void seq_take_time(void *ctx, int64_t ns)
{
	((struct sim *)ctx)->vc.now += ns;
}

static int64_t seq_sample(void *ctx, uint32_t dev, unsigned key)
{
	return sample(ctx, dev, key);
}

static int seq_fault(void *ctx, uint32_t dev, unsigned key)
{
	return dl_faults_take(&((struct sim *)ctx)->faults, dev, key);
}

/* A sequential op: its bounds are the time it took (one thread, nothing to overlap). */
static int be_seq(void *be, const struct dl_sc_op *op)
{
	struct sim *s = be;
	struct dl_seq q = {
		.core = &s->core, .sc = s->sc, .opr = s->opr,
		.ignore_links = !s->pol->link_aware,
		.defer_ns = s->cost.check_ns,
		.ctx = s, .emit = seq_emit, .take_time = seq_take_time,
		.sample = seq_sample, .fault = seq_fault,
	};
	int64_t t0 = s->vc.now;
	int err;

	s->cur_worker = 0;
	err = dl_seq_op(&q, op);
	s->opr->makespan_ns = s->vc.now - t0;
	s->opr->lower_bound_ns = s->vc.now - t0;
	s->opr->critical_path_ns = s->vc.now - t0;
	s->opr->work_ns = s->vc.now - t0;
	s->opr->main_bound_ns = s->vc.now - t0;
	s->opr->order_bound_ns = s->vc.now - t0;
	return err;
}

static int64_t be_now(void *be)
{
	return ((struct sim *)be)->vc.now;
}

static int be_op_begin(void *be, uint32_t i, uint32_t end, struct dl_op_result *opr)
{
	struct sim *s = be;
	unsigned kind = s->sc->op[i].kind;

	(void)end;
	s->op_index = i;
	s->opr = opr;
	if (kind != DL_OP_SUSPEND && kind != DL_OP_RESUME) {
		/* the op may change the graph: a new snapshot next phase */
		dl_graph_flush(&s->g, &s->core);
		s->gen++;
	}
	return 0;
}

static void be_op_end(void *be, uint32_t i, uint32_t end)
{
	(void)be; (void)i; (void)end;
}

/* The op loop's own calls into the core (registration) run on the main thread. */
static void be_lock(void *be)
{
	((struct sim *)be)->cur_worker = 0;
}

static void be_unlock(void *be)
{
	(void)be;
}

static bool be_module_probe(void *be)
{
	return ((struct sim *)be)->o->probe_module;
}

static const struct dl_backend_ops des_ops = {
	.races = false,   /* "concurrent" ops run in turn */
	.now = be_now, .op_begin = be_op_begin, .op_end = be_op_end,
	.lock = be_lock, .unlock = be_unlock,
	.probe = be_probe, .pm_phase = be_pm_phase, .aborted = be_aborted, .seq = be_seq,
	.module_probe = be_module_probe,
};

static int sim_alloc(struct sim *s)
{
	uint32_t n = s->n + 1;

	s->t = calloc(n + 1, sizeof(*s->t));   /* main's CPU in t[n - 1], the retry kworker's in t[n] */
	s->blocked_since = calloc(n, sizeof(*s->blocked_since));
	s->stk = malloc((n ? n : 1) * sizeof(*s->stk));
	s->topo = calloc(n, sizeof(*s->topo));
	s->lat = calloc(n, sizeof(*s->lat));
	s->est = calloc(n, sizeof(*s->est));
	s->prio = calloc(n, sizeof(*s->prio));
	s->fb = calloc(n, sizeof(*s->fb));
	if (!s->t || !s->blocked_since || !s->stk || !s->prio || !s->fb ||
	    !s->topo || !s->lat || !s->est || dl_graph_init(&s->g, s->n))
		return -ENOMEM;
	dl_costs_resolve(s->sc, &s->cost);
	if (dl_vcpu_init(&s->vc, n, s->K, s->cost.max_active) ||
	    dl_walk_init(&s->w, n, s->n) || dl_levels_init(&s->lv, n, s->n))
		return -ENOMEM;
	return dl_faults_init(&s->faults, s->sc);
}

static void sim_free(struct sim *s)
{
	free(s->t); free(s->blocked_since); free(s->prio); free(s->fb); free(s->stk);
	free(s->topo); free(s->lat); free(s->est);
	dl_walk_fini(&s->w);
	dl_levels_fini(&s->lv);
	dl_faults_fini(&s->faults);
	dl_vcpu_fini(&s->vc);
	dl_graph_fini(&s->g);
	dl_core_fini(&s->core);
}

/**
 * dl_engine_run - simulate @sc's script under @o; fills @r.  Returns 0 when
 * every op completed, 1 when an injected fault made an op fail (r->status
 * "failed"), -EINTR when interrupted, another negative errno on error.
 */
int dl_engine_run(const struct dl_scenario *sc, const struct dl_engine_opts *o,
		  struct dl_run_result *r)
{
	struct sim s = { 0 };
	int64_t wall0 = dl_mono_ns();
	int err = 0;
	bool failed = false;

	s.sc = sc;
	s.o = o;
	s.pol = dl_order_policy(o->order);
	s.r = r;
	s.n = sc->ndev;
	s.gen = 1;   /* no snapshot taken yet (dl_graph.gen 0) */
	err = dl_run_start(r, &s.core, sc, o);
	s.K = r->workers;
	if (!err)
		err = sim_alloc(&s);
	if (err)
		goto out;
	dl_core_set_sink(&s.core, (struct dl_sink){ .emit = sink_emit, .ctx = &s });
	err = dl_run_devices(&s.core, sc);
	if (err)
		goto out;

	err = dl_oploop_run(&des_ops, &s, &s.core, sc, o->order, r, &failed);
out:
	err = dl_run_finish(r, wall0, err, failed);
	sim_free(&s);
	return err;
}
