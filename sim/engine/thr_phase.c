/*
 * thr_phase.c - the real-thread backend's phases and ops: a phase's
 * snapshot (the walk, what waits for what, levels and priorities) and its
 * figures once it ran; the op loop's backend (oploop.h), with the racing
 * thread's start and join; setting up and tearing down the threads.
 * threads.c runs a phase on what is set up here.
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
void thr_flush_events(struct thr *t)
{
	if (!t->racing)
		dl_tevents_flush(&t->ev, &t->o->sink, &t->r->events, &t->r->links_refused);
}

/* ---- the phase's graph (graph.h) ---- */

/* Apply the dpm_list moves the core has pending (dl_dpm_settle()): thr_snapshot_phase() reads the list. */
static void settle_dpm(struct thr *t)
{
	core_lock(&t->tw[0]);
	dl_dpm_settle(&t->core);
	core_unlock(&t->tw[0]);
}

/* The phase as phase.h sees it: indices are device ids. */
static struct dl_phase_view phase_view(const struct thr *t)
{
	return (struct dl_phase_view){
		.g = { .topo = t->topo, .ntopo = t->ntopo, .off = t->rel.off, .adj = t->rel.adj,
		       .lat = t->lat, .lat_stride = sizeof(*t->lat), .prof = t->prof },
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
void thr_account_phase(struct thr *t, int64_t w0)
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

/* Levels and cp-first priorities from the snapshot (dl_phase_plan()). */
static void plan_phase(struct thr *t)
{
	struct dl_phase_view v = phase_view(t);

	dl_phase_plan(&v, &t->ps, t->n, &t->lv, t->prio);
	t->cur_level = 0;
}

/*
 * The phase's snapshot, once the core's pending dpm_list moves are applied:
 * the walk, what waits for what, then levels and priorities (phase.h).
 */
int thr_snapshot_phase(struct thr *t)
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

/*
 * A phase of kind @pk (suspend, resume: enum dl_phase @phase) under the
 * order: its scheme, who takes part (dl_takes_part(); PM: dl_pm_part(), a
 * device with no driver at no latency), their latencies.
 */
static void take_part(struct thr *t, unsigned pk, unsigned phase)
{
	t->pk = (int)pk;
	t->ps = dl_order_scheme(t->o->order, pk, phase);
	pthread_rwlock_rdlock(&t->graph);
	for (uint32_t d = 0; d < t->n; d++) {
		const struct dl_device *x = &t->core.dev[d];

		bool pm = pk == PK_SUSPEND || pk == PK_RESUME;

		if (!x->registered)
			t->part[d] = DL_PART_NONE;
		else if (pm)
			t->part[d] = dl_pm_part(pk, phase, x, x->pm_depth);
		else
			t->part[d] = dl_takes_part(pk, phase, x, x->pm_depth);
		t->lat[d] = t->part[d] && (!pm || t->part[d] == DL_PART_CALLBACK) ?
			    sample(t, t->cur_op, d, dl_phase_lat_key(pk, phase)) : 0;
	}
	pthread_rwlock_unlock(&t->graph);
}

/* Main spends @ns on its CPU before the phase, in the op's makespan and bounds (oploop.h). */
static void be_spend(void *be, int64_t ns)
{
	struct thr *t = be;

	thr_main_spend(&t->tw[0], ns);
	dl_op_add_serial(t->opr, ns);
}

/* One PM phase (oploop.h). */
static int be_pm_phase(void *be, unsigned pk, unsigned phase)
{
	struct thr *t = be;
	int64_t gap = dl_cost_phase_gap(&t->cost, pk, phase, t->opr->kind == DL_OP_SUSPEND);

	if (gap)
		be_spend(t, gap);
	t->abort_rec = false;
	t->phase = phase;
	take_part(t, pk, phase);
	return thr_run_phase(t);
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

	take_part(t, pk, 0);
	return thr_run_phase(t);
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
	thr_flush_events(t);
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
	.cpu_process = true,   /* the pool's threads do the work */
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
	t->pool.run = thr_pool_run;
	t->pool.stop_seen = thr_pool_stop_seen;
	t->pool.ctx = t;
	t->sy.main_waits = thr_sync_main_waits;
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
	    !t->wcount || !t->topo || !t->waits.off || !t->rel.off || !t->lat || !t->prio ||
	    dl_fallback_init(&t->fb, n) ||
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
	free(t->wcount); dl_fallback_fini(&t->fb); free(t->topo);
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
	dl_costs_resolve_profile(sc, (enum dl_cost_profile)t->o->cost_profile, &t->cost);
	atomic_store(&t->kpool, t->cost.pool_init);
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
		thr_flush_events(t);
	err = dl_run_finish(r, wall0, err, failed);
	thr_free(t);
	free(t);
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0UL, 0UL, 0UL);
	return err;
}
