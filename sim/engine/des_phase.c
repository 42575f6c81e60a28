/*
 * des_phase.c - the virtual-time backend's phases and ops: a phase set up
 * on its snapshot (who takes part, latencies, waits, the walk, levels and
 * priorities), its bounds once it ran, and the op loop's backend
 * (oploop.h) around them.  des.c runs what is set up here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/bound.h"
#include "sim/engine/des_backend.h"
#include "sim/engine/run.h"
#include "sim/engine/seqops.h"

static int64_t sample(struct sim *s, uint32_t d, unsigned key)
{
	return dl_cost_sample(s->o->replay, s->sc, s->sc->dev[d].profile, s->o->seed, d, key, s->op_index);
}

/* ---- the phase's graph (graph.h) ---- */

/* The latency of position @i for @key in this op (dl_latency_sample: keyed by device id). */
static int64_t sample_at(struct sim *s, uint32_t i, unsigned key)
{
	return dl_cost_sample(s->o->replay, s->sc, s->g.prof[i], s->o->seed, s->g.ord[i], key, s->op_index);
}

/* Position @i's latency in this phase, in its record (the bound reads it there). */
static void set_lat(struct sim *s, uint32_t i, int64_t lat)
{
	s->t[i].lat = lat;
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

/* ---- phases ---- */

#define SCAN_AHEAD 8           /* phase_scan()'s prefetch distance, in positions */
#define START_AHEAD 16         /* phase_start()'s, for the device records */

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
	return dl_graph_phase(&s->g, topo, n, &s->t[0].lat, sizeof(s->t[0]));
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

/* cp-first's priorities and the levels (dl_phase_plan()); each record keeps its own. */
static void plan(struct sim *s)
{
	struct dl_phase_view v = phase_view(s);

	dl_phase_plan(&v, &s->ps, s->g.m, &s->lv, s->prio);
	for (uint32_t k = 0; k < s->ntopo && s->ps.by_priority; k++)
		s->t[s->topo[k]].prio = s->prio[s->topo[k]];
	for (uint32_t k = 0; k < s->ntopo && s->ps.barrier; k++)
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

/* Start a phase of kind @pk on the snapshot of its graph (phase_start() clears the records). */
static int phase_reset(struct sim *s, int pk)
{
	s->pk = pk;
	s->remaining = s->inflight = s->alive = s->nran = 0;
	s->wl = s->back = 0;
	memset(s->newwk, 0, s->n + 1);
	dl_fallback_clear(&s->fb);
	s->mstate = M_IDLE;
	dl_retry_start(&s->retry);
	return graph_get(s, graph_kind(pk));   /* the records: phase_start()'s one pass */
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

		mainb = dl_phase_main_bound(&v, &s->w, &s->ps, s->est,
					    dl_cost_main(&s->cost, s->ps.serial),
					    s->cost.queue_ns);
	}
	plan(s);
	des_main_kick(s);
	des_retry_poke(s);   /* module context: what an earlier op left deferred */
	des_start(s);
	err = des_run_loop(s);
	if (s->aborted)
		mainb = 0;   /* main stopped early: no claim */
	if (!err && s->nran < s->nparts)
		b = ran_bound(s);
	dl_op_add_phase(s->opr, s->vc.now - t0, &b, mainb);
	return err;
}

/*
 * Start a phase of kind @pk (for suspend and resume: enum dl_phase @phase)
 * on the snapshot of its graph: who takes part (dl_takes_part(); PM:
 * dl_pm_part(), a device with no driver at no latency), their latencies sampled (probe: every position's, the deferred-probe walk may
 * add some).
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

		x->on_main = x->ran = x->left = 0;
		x->stage = ST_IDLE;
		x->wait = 0;
		x->prio = 0;
		if (pm) {
			/* the snapshot's bound[] (graph.h), not the scattered device records */
			x->part = dl_pm_part_of(pk, phase, s->g.bound[i], s->g.depth[i]);
		} else {
			/* positions are read in order, the device records they name are scattered */
			if (i + START_AHEAD < s->g.m)
				dl_prefetch(&s->core.dev[dev_at(s, i + START_AHEAD)]);
			x->part = dl_takes_part(pk, phase, &s->core.dev[dev_at(s, i)], s->g.depth[i]);
		}
		set_lat(s, i, pm && x->part != DL_PART_CALLBACK ? 0 :
			      sample_at(s, i, dl_phase_lat_key(pk, phase)));
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
	des_pmwq_run(s, true);
	if (pk == PK_PROBE_READY) {
		/*
		 * devices never attempted (a supplier failed: the cascade
		 * finished them unattempted): they stay unbound, deferred as the
		 * kernel would leave them, in registration order (threads.c
		 * likewise)
		 */
		for (uint32_t d = 0; d < s->n; d++) {
			uint32_t i = s->g.pos[d];

			if (i != DL_NONE && s->t[i].part && !s->t[i].ran)
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

static void be_spend(void *be, int64_t ns);

static int be_pm_phase(void *be, unsigned pk, unsigned phase)
{
	struct sim *s = be;
	int64_t gap = dl_cost_phase_gap(&s->cost, pk, phase, s->opr->kind == DL_OP_SUSPEND);
	int err;

	if (gap)
		be_spend(s, gap);
	err = phase_start(s, pk, phase);
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

/* Sequential work (seqops.c) on the main thread, in virtual time. */
static struct dl_seq seq_of(struct sim *s)
{
	s->cur_worker = 0;
	return (struct dl_seq){
		.core = &s->core, .sc = s->sc, .opr = s->opr,
		.ignore_links = !s->pol->link_aware,
		.defer_ns = s->cost.check_ns, .rpm_ns = s->cost.rpm_ns,
		.pmwq_wake_ns = s->cost.wake_ns,
		.sleep_end_ns = s->cost.sleep_end_ns,
		.ctx = s, .emit = seq_emit, .take_time = seq_take_time,
		.sample = seq_sample, .fault = seq_fault,
	};
}

/* A sequential op: its bounds are the time it took (one thread, nothing to overlap). */
static int be_seq(void *be, const struct dl_sc_op *op)
{
	struct sim *s = be;
	struct dl_seq q = seq_of(s);
	int64_t t0 = s->vc.now;
	int err;

	err = dl_seq_op(&q, op);
	s->opr->makespan_ns = s->vc.now - t0;
	s->opr->lower_bound_ns = s->vc.now - t0;
	s->opr->critical_path_ns = s->vc.now - t0;
	s->opr->work_ns = s->vc.now - t0;
	s->opr->main_bound_ns = s->vc.now - t0;
	s->opr->order_bound_ns = s->vc.now - t0;
	return err;
}

/*
 * device_block_probing() and device_unblock_probing() around a PM op.  Ops
 * run in turn here, so nothing probes while probing is blocked; but
 * dpm_complete()'s unblock triggers the deferred-probe work, which retries
 * every device still deferred (the consumers of a supplier that never
 * bound), as in threads mode and in the kernel: a 6.12 guest retries them
 * 0.5 ms after dpm_complete(), inside kernel mode's resume op.  The retries
 * are the op's serial time.
 */
static void be_probing(void *be, bool block)
{
	struct sim *s = be;
	struct dl_seq q;
	int64_t t0 = s->vc.now;

	if (block)
		return;
	dl_deferred_trigger(&s->core);
	q = seq_of(s);
	dl_seq_deferred(&q);
	if (s->vc.now > t0)
		dl_op_add_serial(s->opr, s->vc.now - t0);
}

static int64_t be_now(void *be)
{
	return ((struct sim *)be)->vc.now;
}

/* Ctrl-C, heard between ops too (the event loop polls it every 4096 steps). */
static bool be_stopped(void *be)
{
	const struct sim *s = be;

	return s->o->stop && *s->o->stop;
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

/* Module context: the main thread's serial time before the probe phase (the queue is empty). */
static void be_spend(void *be, int64_t ns)
{
	struct sim *s = be;

	s->vc.now = dl_sat_add_i64(s->vc.now, ns);
	dl_op_add_serial(s->opr, ns);
}

static const struct dl_backend_ops des_ops = {
	.races = false,   /* "concurrent" ops run in turn */
	.now = be_now, .stopped = be_stopped, .op_begin = be_op_begin, .op_end = be_op_end,
	.lock = be_lock, .unlock = be_unlock,
	.probe = be_probe, .pm_phase = be_pm_phase, .aborted = be_aborted,
	.probing = be_probing, .seq = be_seq, .module_probe = be_module_probe, .spend = be_spend,
};

static int sim_alloc(struct sim *s)
{
	uint32_t n = s->n + 1;

	s->t = calloc(n + 1, sizeof(*s->t));   /* main's CPU in t[n - 1], the retry kworker's in t[n] */
	s->blocked_since = calloc(n, sizeof(*s->blocked_since));
	s->rpm_sl = calloc(n + 1, sizeof(*s->rpm_sl));
	s->trig_at = calloc(n + 1, sizeof(*s->trig_at));
	s->stk = malloc((n ? n : 1) * sizeof(*s->stk));
	s->topo = calloc(n, sizeof(*s->topo));
	s->est = calloc(n, sizeof(*s->est));
	s->prio = calloc(n, sizeof(*s->prio));
	s->newwk = calloc(n, 1);
	if (!s->t || !s->blocked_since || !s->rpm_sl || !s->trig_at || !s->stk || !s->prio || !s->newwk ||
	    dl_fallback_init(&s->fb, s->n) ||
	    !s->topo || !s->est || dl_graph_init(&s->g, s->n))
		return -ENOMEM;
	dl_costs_resolve_profile(s->sc, (enum dl_cost_profile)s->o->cost_profile, &s->cost);
	s->kpool = s->cost.pool_init;
	/* work items hold one of the pool's kworkers (des.c pool_grew()) */
	if (dl_vcpu_init(&s->vc, n, s->K, !s->kpool ? 1 : s->kpool < s->cost.max_active ?
			 s->kpool : s->cost.max_active) ||
	    dl_walk_init(&s->w, n, s->n) || dl_levels_init(&s->lv, n, s->n))
		return -ENOMEM;
	return dl_faults_init(&s->faults, s->sc);
}

static void sim_free(struct sim *s)
{
	free(s->t); free(s->blocked_since); free(s->rpm_sl); free(s->prio); free(s->stk);
	free(s->trig_at);
	free(s->newwk);
	dl_fallback_fini(&s->fb);
	dl_idvec_free(&s->rpmv);
	dl_idvec_free(&s->rpm_susp);
	free(s->pmwq);
	free(s->topo); free(s->est);
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
	dl_core_set_sink(&s.core, (struct dl_sink){ .emit = des_sink_emit, .ctx = &s });
	err = dl_run_devices(&s.core, sc);
	if (err)
		goto out;

	err = dl_oploop_run(&des_ops, &s, &s.core, sc, o->order, r, &failed);
out:
	err = dl_run_finish(r, wall0, err, failed);
	sim_free(&s);
	return err;
}
