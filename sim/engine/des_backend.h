/*
 * des_backend.h - the virtual-time backend's state (struct sim), shared by
 * des.c (the work items and the event loop), des_main.c (the main PM
 * thread), des_retry.c (the deferral's walkers and the deferred-probe
 * kworker) and des_phase.c (setting a phase up, its bounds, and the op
 * loop's backend).  Private to those files.
 */
#ifndef DL_DES_BACKEND_H
#define DL_DES_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/core/dl_core.h"
#include "sim/engine/cost.h"
#include "sim/engine/engine.h"
#include "sim/engine/graph.h"
#include "sim/engine/oploop.h"
#include "sim/engine/phase.h"
#include "sim/engine/retry.h"
#include "sim/engine/sched.h"
#include "sim/engine/vcpu.h"
#include "sim/order/sched.h"

/*
 * A work item's stages.  ST_SLEEP: its callback's CPU part is over and it
 * sleeps (no CPU, still its worker); ST_TAIL_Q / ST_TAIL: after the callback,
 * the hand-off walk that queues its dependents (handoff_ns, see cost.h)
 * waits for a CPU / runs.
 */
enum { ST_IDLE, ST_QUEUED_START, ST_QUEUED_CB, ST_START, ST_BLOCKED, ST_CB, ST_DONE,
       ST_SLEEP, ST_TAIL_Q, ST_TAIL, ST_COUNT };
/* The main thread; M_SLEEP: in a callback's sleep, holding no CPU. */
enum { M_IDLE, M_QUEUED, M_BURST, M_WAIT_DEV, M_WAIT_DRAIN, M_DONE, M_SLEEP };
/* What main's burst is: a callback, queueing an item, a callback's hand-off walk. */
enum { MK_CALLBACK, MK_QUEUE, MK_HANDOFF };
/* The deferred-probe kworker (module context): idle, waiting for a CPU, bursting, asleep in a probe. */
enum { R_IDLE, R_QUEUED, R_BURST, R_SLEEP };
enum { PK_SUSPEND = DL_PK_SUSPEND, PK_RESUME = DL_PK_RESUME, PK_PROBE_READY = DL_PK_PROBE,
       PK_PROBE_DEFER = DL_PK_PROBE_DEFER };
/* What a work item pays before its callback (or alone, at its start). */
enum { BK_NONE = DL_PAYS_NONE, BK_QUEUE = DL_PAYS_QUEUE, BK_WAKE = DL_PAYS_WAKE,
       BK_WAKE_RESUME = DL_PAYS_WAKE_RESUME, BK_DEFERRED };

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
	int64_t stamp_ahead;     /* des_sink_emit(): the event happens this long after now */
	/* the clock, the CPUs, the run queue, the events, the workqueue (vcpu.h) */
	struct dl_vcpu vc;

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
	uint32_t kpool;          /* the async pool's kworkers (cost.h dl_kpool_take()) */
	uint8_t *newwk;          /* per position: its item is new work on the worklist (des.c) */
	uint32_t wl, back;       /* new work admitted, not started; kworkers back to take it */
	struct dl_faults faults;
	uint32_t remaining, inflight, alive;
	uint32_t nparts;         /* positions taking part (part[]) */
	uint32_t nran;           /* positions whose callback started (mark_ran()) */
	uint32_t *stk;           /* probe_failed()'s stack, one slot per device */
	/*
	 * The phase as bound.h sees it, by position: the participating
	 * positions in topological order (topo, ntopo), the sampled latencies
	 * (t[].lat: an abort overwrites a skipped one's after the bounds were
	 * taken, and ran_bound() reads only those that ran), and each
	 * position's earliest start (est, from the bound; dl_phase_main_bound() reads it).
	 */
	uint32_t *topo, ntopo;
	int64_t *est;
	int64_t *prio;           /* cp-first: dl_phase_priorities()'s, copied into t[].prio */
	struct dl_levels lv;     /* levels: the phase's levels (phase.h) */
	uint32_t cur_level;      /* levels: the level released last */
	bool main_cb_deferred;
	int64_t reorder_debt;    /* deferred-retry reorders not yet paid by a main burst */
	int64_t *blocked_since;
	/*
	 * Probe in module context: per position, the sleep of the runtime
	 * resumes its current attempt made first (dl_probe_rpm_get()), and the
	 * devices they resumed or the puts suspended (scratch).
	 */
	int64_t *rpm_sl;
	struct dl_idvec rpmv, rpm_susp;
	/* per position: the trigger count when its current probe attempt began (dl_probe_deferred()) */
	uint32_t *trig_at;
	/* the idle requests the puts queued for pm_wq, by due time (des_pmwq_run()) */
	struct pmwq_req { int64_t due; uint32_t dev; } *pmwq;
	uint32_t pmwq_head, pmwq_n, pmwq_cap;

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
	struct dl_fallback fb;   /* MAX_WORK: devices left to main (sched.h) */
	uint32_t mdev;           /* the position main is bursting on or waiting for */
	int mkind;               /* MK_* */
	struct dl_retry retry;   /* probe with deferral: main's walk after registration order */

	/*
	 * Probe in module context (dl_engine_opts.probe_module): the kworker
	 * that runs deferred_probe_work_func(), a walker of its own beside
	 * main (des_retry_kick()).  rkind: MK_CALLBACK, a sync driver's retry
	 * probed on the kworker; MK_QUEUE, an async driver's, queued.
	 */
	bool module_ctx;
	int rstate, rkind;       /* R_*, MK_* */
	uint32_t rdev;           /* the position it retries */
	bool r_cb_deferred;      /* its attempt deferred again */
	bool r_wake;             /* its next burst pays the kworker's wake */
	int64_t r_debt;          /* its reorders not yet paid by a burst */
	uint32_t retries;        /* des_retry_pos() calls: the stop flag is polled every 64 */
	uint64_t steps;          /* event-loop steps of the whole run: polled every 4096 */
	bool stopping;           /* a retry walk saw the stop flag: the op returns -EINTR */
};

_Static_assert(sizeof(struct task) == 32, "a task record is half a cache line");

/*
 * des_stage_set - work item @x goes to stage @st: one line where des*.c
 * used to assign x->stage; with DLSIM_ASSERTS the transition is checked
 * against the stage machine below (dl_stage_check(), sim/order/sched.h).
 */
static inline void des_stage_set(struct task *x, uint8_t st)
{
#define B(st) (1u << (st))
	static const uint16_t next[ST_COUNT] = {
		/* IDLE again: a deferred probe taken again (des_defer_take());
		 * CB: main or the retry kworker runs it; DONE: a supplier's probe failed */
		[ST_IDLE] = B(ST_IDLE) | B(ST_QUEUED_START) | B(ST_QUEUED_CB) | B(ST_CB) | B(ST_DONE),
		/* main marks it queued when it decides, then again when it has queued it */
		[ST_QUEUED_START] = B(ST_QUEUED_START) | B(ST_START),
		[ST_QUEUED_CB] = B(ST_CB),
		/* DONE: the phase aborted before its callback */
		[ST_START] = B(ST_BLOCKED) | B(ST_CB) | B(ST_DONE),
		[ST_BLOCKED] = B(ST_QUEUED_CB),
		[ST_CB] = B(ST_DONE) | B(ST_SLEEP) | B(ST_TAIL_Q),
		/* v2 completes its waiters first, then walks (TAIL_Q) and is done again;
		 * a deferred probe is taken again (IDLE) */
		[ST_DONE] = B(ST_IDLE) | B(ST_DONE) | B(ST_TAIL_Q),
		[ST_SLEEP] = B(ST_DONE) | B(ST_TAIL_Q),
		[ST_TAIL_Q] = B(ST_TAIL),
		[ST_TAIL] = B(ST_DONE),
	};
#undef B
	dl_stage_check(next, ST_COUNT, x->stage, st);
	x->stage = st;
}

/* The device id at position @i of the snapshot. */
static inline uint32_t dev_at(const struct sim *s, uint32_t i)
{
	return s->g.ord[i];
}

void des_sink_emit(void *ctx, struct dl_event *e);

static inline void emit(struct sim *s, unsigned kind, uint32_t dev, unsigned phase, int err)
{
	struct dl_event e = { .dev = dev, .link = DL_NONE, .aux = DL_NONE,
			      .kind = (uint16_t)kind, .phase = (uint16_t)phase,
			      .err = (int16_t)err };

	des_sink_emit(s, &e);
}

/* ---- CPU bursts (vcpu.h) ---- */

/* The position whose callback or overhead burst @task runs, or DL_NONE (main, not a callback). */
static inline uint32_t burst_device(const struct sim *s, uint32_t task)
{
	if (task == DL_VCPU_RETRY)
		return s->rkind == MK_CALLBACK ? s->rdev : DL_NONE;
	if (task != DL_VCPU_MAIN)
		return task;
	return s->mkind == MK_CALLBACK ? s->mdev : DL_NONE;
}

/* Ask for a CPU for @task (dl_vcpu_request()). */
static inline int burst_request(struct sim *s, uint32_t task, int64_t prio)
{
	uint32_t who = burst_device(s, task);

	/*
	 * des_device_finished() reads the row of the burst's position in the phase's
	 * graph; rows are visited in no order, so start its offset's miss now
	 * and the row's in burst_start(), a few events before they are needed.
	 */
	if (who != DL_NONE) {
		dl_prefetch(&s->g.cur->off[who]);
		/* and what des_callback_begin() reads first: the position's device id and profile */
		dl_prefetch(&s->g.ord[who]);
		dl_prefetch(&s->g.prof[who]);
	}
	return dl_vcpu_request(&s->vc, task, prio);
}

/* What an item pays before its next burst (BK_*, dl_cost_item()). */
static inline int64_t overhead(const struct sim *s, unsigned bk)
{
	return dl_cost_item(&s->cost, bk, s->pk == PK_PROBE_READY || s->pk == PK_PROBE_DEFER);
}

/* @task, holding a CPU, bursts for @len (dl_vcpu_burst()). */
static inline int burst_start(struct sim *s, uint32_t task, int64_t len)
{
	const struct dl_csr *g = s->g.cur;
	uint32_t who = burst_device(s, task);

	if (who != DL_NONE)
		dl_prefetch(&g->adj[g->off[who]]);   /* see burst_request() */
	return dl_vcpu_burst(&s->vc, task, len);
}

/* The CPU part of latency @lat of position @i (its profile's cpu share). */
static inline int64_t cb_cpu(const struct sim *s, uint32_t i, int64_t lat)
{
	return dl_cost_cpu_part(lat, s->sc->prof[s->g.prof[i]].cpu_ppm);
}

/*
 * The sleep of position @i's callback in a PM phase or a probe (its latency
 * less its CPU part), after the sleeps of the runtime resumes its probe
 * attempt made first; a @deferred attempt has only those.
 */
static inline int64_t cb_sleep(const struct sim *s, uint32_t i, bool deferred)
{
	int64_t lat = s->t[i].lat;
	int64_t sl = !deferred && lat > 0 ? lat - cb_cpu(s, i, lat) : 0;

	if (s->core.rpm_user && (s->pk == PK_PROBE_READY || s->pk == PK_PROBE_DEFER))
		sl += s->rpm_sl[i];   /* written by des_callback_begin() in this attempt */

	return sl > 0 ? dl_sat_add_i64(sl, s->cost.sleep_end_ns) : 0;
}

/*
 * What the scheduler reads of this backend (sched.h ops), inline here so
 * that des.c's table and des_main.c's deferral walk both inline them.
 */

/* What the scheduler reads of position @y: false if it takes no part. */
static inline bool des_task_facts(const void *ctx, uint32_t y, struct dl_dev_facts *f)
{
	const struct sim *s = ctx;
	const struct task *z = &s->t[y];

	if (!z->part)
		return false;
	f->on_main = z->on_main;
	f->held = z->level > s->cur_level;
	f->blocked = z->stage == ST_BLOCKED;
	f->idle = z->stage == ST_IDLE;
	f->queued = z->stage != ST_IDLE;
	f->done = z->stage == ST_DONE;
	f->waits = z->wait;
	return true;
}

/*
 * Position @d is queued, in an attempt (its CPU part or its sleep) or bound
 * already: bus_probe_device() is a no-op for it (the kernel's walker would
 * wait for device_lock(); the attempt, if it defers, puts the device back
 * on the list when it returns: des_callback_end()).
 */
static inline bool des_defer_busy(void *ctx, uint32_t d)
{
	const struct sim *s = ctx;
	uint8_t st = s->t[d].stage;

	return st == ST_QUEUED_CB || st == ST_CB || st == ST_SLEEP ||
	       s->core.dev[dev_at(s, d)].state != DL_DEV_NO_DRIVER;
}

/* MAX_WORK's count (ops->outstanding): the items queued or running. */
static inline uint32_t des_inflight(const void *ctx)
{
	return ((const struct sim *)ctx)->inflight;
}

/* A walker runs an item MAX_WORK refused to queue (ops->sync_fallback). */
static inline void des_sync_fallback(void *ctx)
{
	((struct sim *)ctx)->opr->sync_fallbacks++;
}

/* des.c: the tasks */
void des_item_queue(struct sim *s, uint32_t y);
void des_start(struct sim *s);
bool des_walk_next(struct sim *s, uint32_t *i);
void des_device_finished(void *ctx, uint32_t d);
int64_t des_callback_begin(struct sim *s, uint32_t i, int64_t pre, bool *deferred);
uint32_t des_pmwq_run(struct sim *s, bool flush);
void des_callback_end(struct sim *s, uint32_t i, bool deferred);
int64_t des_handoff_len(const struct sim *s, uint32_t d);
bool des_main_cb_over(struct sim *s, uint32_t d, bool deferred);
void des_main_walk_over(struct sim *s, uint32_t d);
int des_run_loop(struct sim *s);

/* des_main.c: the main PM thread, and the deferral's walkers' take */
int des_defer_take(struct sim *s, uint32_t d);
void des_main_kick(struct sim *s);
void des_main_fallback(void *ctx, uint32_t y);
void des_main_got_cpu(struct sim *s);
void des_main_callback_over(struct sim *s);
void des_main_burst_done(struct sim *s);

/* des_retry.c: the walkers of the deferral, and the kworker (probe in module context) */
uint32_t des_retry_pos(struct sim *s, uint32_t d, int64_t *debt);
void des_retry_kick(struct sim *s);
void des_retry_poke(struct sim *s);
void des_retry_got_cpu(struct sim *s);
void des_retry_callback_over(struct sim *s);
void des_retry_burst_done(struct sim *s);

#endif
