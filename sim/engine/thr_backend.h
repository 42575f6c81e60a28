/*
 * thr_backend.h - the real-thread backend's state (struct thr), shared by
 * threads.c (phases on the pool) and thr_seq.c (sequential ops, the
 * deferred-probe walk, the racing thread).  Private to those two files.
 */
#ifndef DL_THR_BACKEND_H
#define DL_THR_BACKEND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/core/dl_core.h"
#include "sim/engine/cost.h"
#include "sim/engine/engine.h"
#include "sim/engine/graph.h"
#include "sim/engine/phase.h"
#include "sim/engine/sched.h"
#include "sim/engine/seqops.h"
#include "sim/engine/thr_events.h"
#include "sim/engine/thr_pool.h"
#include "sim/engine/thr_sync.h"
#include "sim/order/sched.h"

enum { PK_SUSPEND = DL_PK_SUSPEND, PK_RESUME = DL_PK_RESUME, PK_PROBE = DL_PK_PROBE,
       PK_PROBE_DEFER = DL_PK_PROBE_DEFER };

struct thr;

/* The racing thread: a run of "concurrent" ops, each issued delay after the op they race. */
struct racer {
	struct thr *t;
	uint32_t first, end;    /* ops [first, end) */
	int64_t start_real;     /* when the raced op started */
	struct dl_op_result *opr;
	int64_t end_real;
};

/* One thread: 0 main, 1..P workers, P + 1 the racing ops; th first (tw_of()). */
struct tw {
	struct dl_rthread th;
	struct thr *t;
	uint32_t op_index;      /* samples: the op this thread works for */
	struct dl_op_result *opr;
	int64_t taken_sim;      /* simulated ns taken by sequential ops (their bound) */
	char pad[64];
};

static inline struct tw *tw_of(struct dl_rthread *th)
{
	return (struct tw *)th;
}

struct thr {
	const struct dl_scenario *sc;
	const struct dl_engine_opts *o;
	const struct dl_order_policy *pol;
	struct dl_run_result *r;
	struct dl_op_result *opr;
	struct dl_core core;
	uint32_t n, K, P, nthr; /* devices, CPUs, workers, thread slots */
	uint32_t cur_op;
	struct dl_costs cost;

	pthread_rwlock_t graph;
	int core_owner;         /* the thread holding graph for write */
	bool probes_blocked;    /* under graph: from dpm_prepare() to dpm_complete() */

	/*
	 * The workers, the CPUs and the clock (thr_pool.h); pool.remaining
	 * counts the phase's devices not finished yet, and the fallback ring
	 * below is under its lock too.  What threads wait on: sy (thr_sync.h).
	 */
	struct dl_pool pool;
	struct dl_rsync sy;
	/* MAX_WORK (dl_async_may_queue()): ready async devices left to main (sched.h), and their count */
	struct dl_fallback fb;
	uint64_t fallbacks;
	/* a queueing that failed under the pool's lock, for the scheduler's unlock to abort on */
	int qerr;
	uint32_t qerr_dev;
	atomic_uint kpool;        /* the async pool's kworkers (cost.h dl_kpool_take()) */
	atomic_uint alive, peak;  /* items holding a CPU or blocked on a dependency (des.c's) */

	atomic_uint *pending;     /* waits not done yet (sy.done[] is each device's completion) */
	/*
	 * queued: in probe, queued by the deferral walk; in a kernel-async-v2
	 * suspend or resume phase, work_in_progress: 1 queued by main, 2 by a
	 * hand-off, 3 queued again to wake a parked item.  parked: a v2 item
	 * whose waits were not done gave its pool thread back (des.c's blocked
	 * v2 items give their worker back too) until the device that completes
	 * its last wait queues it again.
	 */
	atomic_uchar *failed_dep, *queued, *parked;
	int64_t *parked_at;
	atomic_uchar *ok;       /* the device's callback ran (probe: and bound); before done */
	/* sy.started[d]: its callback started (not a deferring probe attempt) */

	/* faults */
	pthread_mutex_t fmx;
	struct dl_faults faults;
	bool abort_rec;
	int abort_err;
	uint32_t abort_dev;

	struct dl_tevents ev;   /* per-thread buffers (thr_events.h) */
	bool racing;            /* a racing thread runs: flush only when it is joined */

	/* the phase (written by main before any work is queued) */
	int pk;
	unsigned phase;
	struct dl_phase_scheme ps;  /* how the phase runs under the order (order.h) */
	struct dl_walk w;       /* the main thread's walk (phase.h); v2: w.nupfront queued first */
	/*
	 * The phase's graph (graph.h), snapshot at gen (a new one every phase:
	 * racing ops change the core), and the same relabelled by device id
	 * over the phase's devices: whom each releases (rel), whom it waits for
	 * (waits).  dpm_list of the snapshot is g.ord; index_of: device id ->
	 * itself, DL_NONE if unregistered.
	 */
	struct dl_graph g;
	uint64_t gen;
	struct dl_csr rel, waits;
	uint32_t *index_of;
	uint8_t *part, *on_main, *depth_set, *newdepth, *attempted;
	uint32_t *wcount, *topo, ntopo;
	/* levels: the devices of each level in device order, released in turn, under lmx */
	pthread_mutex_t lmx;
	struct dl_levels lv;    /* phase.h's, lv.left counted down under lmx */
	uint32_t cur_level;
	int64_t *lat, *prio, *best;
	uint32_t *prof;         /* each device's latency profile (the scenario's) */

	struct tw *tw;          /* nthr */

	/* the racing thread of the op running, if racer_on */
	struct racer rc;
	pthread_t racer_tid;
	bool racer_on;
};

static inline void emit(struct thr *t, int w, unsigned kind, uint32_t dev, unsigned phase, int err)
{
	struct dl_event e = { .dev = dev, .link = DL_NONE, .aux = DL_NONE,
			      .kind = (uint16_t)kind, .phase = (uint16_t)phase,
			      .err = (int16_t)err };

	dl_tevents_push(&t->ev, w, &e);
}

/* ---- samples and faults ---- */

static inline int64_t sample(const struct thr *t, uint32_t op, uint32_t d, unsigned key)
{
	return dl_cost_sample(t->o->replay, t->sc, t->sc->dev[d].profile, t->o->seed, d, key, op);
}

/* dl_faults_take() under fmx: callbacks fail from any thread. */
static inline int fault_for(struct thr *t, uint32_t d, unsigned key)
{
	int err;

	if (!dl_faults_any(&t->faults, d))
		return 0;
	pthread_mutex_lock(&t->fmx);
	err = dl_faults_take(&t->faults, d, key);
	pthread_mutex_unlock(&t->fmx);
	return err;
}

/* ---- locks ---- */

static inline void core_lock(struct tw *w)
{
	pthread_rwlock_wrlock(&w->t->graph);
	w->t->core_owner = w->th.id;
}

static inline void core_unlock(struct tw *w)
{
	pthread_rwlock_unlock(&w->t->graph);
}

/* A callback failed (or memory ran out): the phase halts, the first failure is its error. */
static inline void set_abort(struct thr *t, int err, uint32_t d)
{
	pthread_mutex_lock(&t->fmx);
	if (!t->abort_rec) {
		t->abort_rec = true;
		t->abort_err = err;
		t->abort_dev = d;
	}
	pthread_mutex_unlock(&t->fmx);
	dl_halt(&t->sy, DL_HALT_ABORT);
}

/* threads.c: a phase on the threads */
int thr_run_phase(struct thr *t);
bool thr_pool_run(void *ctx, struct dl_rthread *th, const struct dl_pool_item *k);
bool thr_pool_stop_seen(void *ctx, const struct dl_rthread *th);
void thr_sync_main_waits(void *ctx);
void thr_wait_drain(struct thr *t, bool all);
void thr_main_visit(struct thr *t, struct tw *m, uint32_t d, bool queue);
void thr_main_spend(struct tw *m, int64_t ns);
extern const struct dl_sched_ops thr_sched;   /* the scheduler's view of this backend */

/* thr_phase.c: a phase's snapshot and figures */
int thr_snapshot_phase(struct thr *t);
void thr_account_phase(struct thr *t, int64_t w0);
void thr_flush_events(struct thr *t);

/* thr_seq.c: sequential work */
void thr_seq_bind(struct tw *w, struct dl_seq *q);
void thr_sleep_off_cpu(void *ctx, int64_t ns);
int thr_probe_deferral(struct thr *t);
void thr_block_probing(struct thr *t);
void thr_unblock_probing(struct thr *t);
int thr_op_seq(struct thr *t, struct tw *w, const struct dl_sc_op *op);
void *thr_racer_main(void *arg);

#endif
