/*
 * des.c - the discrete-event engine (virtual time).
 *
 * Model.  K simulated CPUs are shared by the kernel's main PM thread and by
 * work items.  Every piece of work is a CPU burst: it waits in a run queue
 * (the main thread first, then by priority: FIFO, or longest remaining path
 * for cp-first) until a CPU is free, and its end is an event in a binary heap
 * ordered by (time, sequence), so that runs are deterministic.
 *
 * Within a PM phase a device waits for the devices the link core says it
 * must (dl_pm_wait_count: children and consumers when suspending, parent and
 * suppliers when resuming), counted down as they finish.  How the waiting
 * happens is the order's business (order.h):
 *  - sync / naive: the main thread walks the list and runs every callback;
 *    naive walks registration order and never waits.
 *  - kernel-async: the main thread queues every async device's work as it
 *    walks (cost queue_ns); the item starts (wake_ns), finds its dependencies
 *    unfinished, blocks, and is woken (wake_ns) when the last one finishes.
 *    Sync devices run on the main thread, which waits for their dependencies.
 *  - kernel-async-v2: an async device's work is queued when it becomes ready;
 *    no item ever blocks.  Sync devices as above.
 *  - levels / cp-first: every device is a work item queued when ready
 *    (levels: and when its level is released); the main thread only waits.
 *
 * Probing: sync, naive and kernel-async probe in registration order with the
 * kernel's deferred-probe retry (disabled until late_initcall, then every
 * bind re-triggers all deferred devices); the other orders probe a device
 * when every supplier it needs is bound, so they never defer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/core/dl_core.h"
#include "sim/engine/engine.h"
#include "sim/engine/heap.h"
#include "sim/engine/seqops.h"

#define MAIN_PRIO INT64_MIN

enum { ST_IDLE, ST_QUEUED_START, ST_QUEUED_CB, ST_START, ST_BLOCKED, ST_CB, ST_DONE };
enum { M_IDLE, M_QUEUED, M_BURST, M_WAIT_DEV, M_WAIT_DRAIN, M_DONE };
enum { PK_SUSPEND, PK_RESUME, PK_PROBE_READY, PK_PROBE_DEFER };

struct ev { int64_t t; uint64_t seq; uint32_t task; };
struct rq { int64_t prio; uint64_t seq; uint32_t task; };

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static bool rq_less(const struct rq *a, const struct rq *b)
{
	return a->prio < b->prio || (a->prio == b->prio && a->seq < b->seq);
}

/* The future-event set and the run queue (bench/: BM_event_queue). */
DL_DEFINE_HEAP(ev_heap, struct ev, ev_less, 2)
DL_DEFINE_HEAP(rq_heap, struct rq, rq_less, 2)

struct sim {
	const struct dl_scenario *sc;
	const struct dl_engine_opts *o;
	const struct dl_order_policy *pol;
	struct dl_run_result *r;
	struct dl_core core;
	uint32_t n, K, free_cpus;
	int64_t now;
	uint64_t seq;
	int16_t cur_worker;
	struct ev_heap ev;
	struct rq_heap rq;
	uint16_t *cpu_free_stack;
	uint32_t ncpu_free;

	/* per device, for the phase being run */
	int64_t *lat, *prio, *burst;
	uint32_t *wait, *level, *cpu;
	uint8_t *part, *stage, *on_main, *has_fault, *rel;
	uint32_t *fault_used;
	uint32_t remaining, inflight, alive;
	uint32_t *level_left, nlevels, cur_level, *lvl_off, *lvl_order;
	uint32_t *dep_off, *dep;
	size_t dep_cap;
	bool main_cb_deferred;
	int64_t *blocked_since;

	/* the phase */
	int pk;
	unsigned phase;          /* enum dl_phase for PM */
	uint32_t op_index;
	bool aborted;
	int abort_err;
	uint32_t abort_dev;
	struct dl_op_result *opr;

	/* main thread */
	int mstate;
	uint32_t *walk, nwalk, widx;
	uint32_t mdev;           /* the device main is bursting on or waiting for */
	int mkind;               /* 0 callback, 1 queue an item */
	bool deferral_walk;      /* walking the deferred-probe active list */
};


/* ---- events ---- */

static void sink_emit(void *ctx, struct dl_event *e)
{
	struct sim *s = ctx;

	e->t_ns = s->now;
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

static int64_t cost(int64_t v, int64_t def)
{
	return v >= 0 ? v : def;
}

static int64_t sample(struct sim *s, uint32_t d, unsigned key)
{
	const struct dl_profile *p = &s->sc->prof[s->sc->dev[d].profile];

	return dl_latency_sample(&p->lat[key], s->o->seed, d, key, s->op_index);
}

static int fault_for(struct sim *s, uint32_t d, unsigned key)
{
	if (!s->has_fault[d])
		return 0;
	for (uint32_t i = 0; i < s->sc->nfault; i++) {
		const struct dl_sc_fault *f = &s->sc->fault[i];

		if (f->dev != d || f->lat_key != key)
			continue;
		if (f->times && s->fault_used[i] >= f->times)
			continue;
		s->fault_used[i]++;
		return -f->err;
	}
	return 0;
}

static unsigned phase_lat_key(unsigned phase)
{
	return DL_LAT_PREPARE + phase;
}

/* ---- CPU bursts ---- */

static int burst_request(struct sim *s, uint32_t task, int64_t prio)
{
	struct rq e = { .prio = prio, .seq = s->seq++, .task = task };

	return rq_heap_push(&s->rq, e);
}

static int burst_start(struct sim *s, uint32_t task, int64_t len)
{
	struct ev e = { .t = s->now + (len > 0 ? len : 0), .seq = s->seq++, .task = task };

	return ev_heap_push(&s->ev, e);
}

/* ---- dependencies within a phase ---- */

/* Visit the devices that wait for @d in this phase, from the link core. */
#define FOR_EACH_DEPENDENT_RAW(s, d, y, body) do {                                      \
	const struct dl_device *x_ = &(s)->core.dev[d];                               \
	if ((s)->pk == PK_SUSPEND) {                                                  \
		if (x_->parent != DL_NONE) { uint32_t y = x_->parent; body; }          \
		for (uint32_t i_ = 0; i_ < x_->suppliers.n; i_++) {                   \
			const struct dl_link *k_ = &(s)->core.link[x_->suppliers.v[i_]];  \
			if (!dl_link_counts_for_pm(k_)) continue;                        \
			{ uint32_t y = k_->supplier; body; }                             \
		}                                                                     \
	} else if ((s)->pk == PK_RESUME) {                                            \
		for (uint32_t i_ = 0; i_ < x_->children.n; i_++) {                    \
			uint32_t y = x_->children.v[i_]; body;                           \
		}                                                                     \
		for (uint32_t i_ = 0; i_ < x_->consumers.n; i_++) {                   \
			const struct dl_link *k_ = &(s)->core.link[x_->consumers.v[i_]];  \
			if (!dl_link_counts_for_pm(k_)) continue;                        \
			{ uint32_t y = k_->consumer; body; }                             \
		}                                                                     \
	} else {                                                                      \
		for (uint32_t i_ = 0; i_ < x_->consumers.n; i_++) {                   \
			const struct dl_link *k_ = &(s)->core.link[x_->consumers.v[i_]];  \
			if (!probe_link(k_)) continue;                                   \
			{ uint32_t y = k_->consumer; body; }                             \
		}                                                                     \
	}                                                                             \
} while (0)

static bool probe_link(const struct dl_link *k)
{
	return k->live && (k->flags & DL_FLAG_MANAGED) &&
	       !(k->flags & (DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_CYCLE));
}

/*
 * The graph does not change within a phase, so each phase first copies the
 * edges between participating devices into CSR arrays: every later pass
 * (waits, lower bound, priorities, completions) then reads contiguous memory
 * instead of chasing link ids into the link array.
 */
#define FOR_EACH_DEPENDENT(s, d, y, body) do {                                      \
	for (uint32_t j_ = (s)->dep_off[d]; j_ < (s)->dep_off[(d) + 1]; j_++) {       \
		uint32_t y = (s)->dep[j_]; body;                                      \
	}                                                                             \
} while (0)

static int build_csr(struct sim *s)
{
	uint32_t *off = s->dep_off;
	size_t total = 0;

	for (uint32_t d = 0; d <= s->n; d++)
		off[d] = 0;
	for (uint32_t d = 0; d < s->n; d++) {
		uint32_t k = 0;

		if (s->part[d])
			FOR_EACH_DEPENDENT_RAW(s, d, y, { k += s->part[y]; });
		off[d] = (uint32_t)total;
		total += k;
	}
	off[s->n] = (uint32_t)total;
	if (total > s->dep_cap) {
		uint32_t *nd = realloc(s->dep, total * sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		s->dep = nd;
		s->dep_cap = total;
	}
	for (uint32_t d = 0; d < s->n; d++) {
		uint32_t pos = off[d];

		if (s->part[d])
			FOR_EACH_DEPENDENT_RAW(s, d, y, { if (s->part[y]) s->dep[pos++] = y; });
	}
	return 0;
}

static void on_ready(struct sim *s, uint32_t y);

static void main_kick(struct sim *s);

static void device_finished(struct sim *s, uint32_t d)
{
	s->stage[d] = ST_DONE;
	s->remaining--;
	if (s->pk == PK_PROBE_DEFER)
		return;
	if (s->pol->level_barrier && s->part[d] && --s->level_left[s->level[d]] == 0) {
		while (s->cur_level + 1 < s->nlevels && s->level_left[s->cur_level] == 0) {
			s->cur_level++;
			for (uint32_t i = s->lvl_off[s->cur_level]; i < s->lvl_off[s->cur_level + 1]; i++) {
				uint32_t z = s->lvl_order[i];

				if (s->wait[z] == 0)
					on_ready(s, z);
			}
		}
	}
	if (s->pk == PK_PROBE_READY && s->core.dev[d].state != DL_DEV_DRIVER_BOUND)
		return;   /* a failed probe releases nobody */
	FOR_EACH_DEPENDENT(s, d, y, {
		if (s->part[y] && s->stage[y] != ST_DONE && s->wait[y] > 0) {
			if (--s->wait[y] == 0)
				on_ready(s, y);
		}
	});
}

/* Enqueue @y's work as a callback burst, or wake it / the main thread. */
static void on_ready(struct sim *s, uint32_t y)
{
	if (s->aborted)
		return;
	if (s->on_main[y]) {
		if (s->mstate == M_WAIT_DEV && s->mdev == y)
			main_kick(s);
		return;
	}
	if (s->pol->level_barrier && s->level[y] > s->cur_level)
		return;
	if (s->stage[y] == ST_BLOCKED) {
		s->r->wakeups++;
		s->opr->wakeups++;
		s->opr->blocked_ns += s->now - s->blocked_since[y];
		s->stage[y] = ST_QUEUED_CB;
		s->burst[y] = cost(s->sc->cost.wake_ns, DL_COST_WAKE_NS);
		burst_request(s, y, s->prio[y]);
		s->alive--;   /* counted again when it gets a CPU */
		return;
	}
	if (s->stage[y] != ST_IDLE || s->pol->queue_up_front)
		return;   /* classic items are queued by the walk */
	s->stage[y] = ST_QUEUED_CB;
	s->burst[y] = cost(s->sc->cost.queue_ns, DL_COST_QUEUE_NS);
	s->inflight++;
	burst_request(s, y, s->prio[y]);
}

/* The callback of @d starts now on the current CPU; returns its length. */
static int64_t callback_begin(struct sim *s, uint32_t d, bool *deferred)
{
	*deferred = false;
	if (s->pk == PK_SUSPEND || s->pk == PK_RESUME) {
		emit(s, s->pk == PK_SUSPEND ? DL_EV_SUSPEND_START : DL_EV_RESUME_START, d,
		     s->phase, 0);
		return s->lat[d];
	}
	/* probe */
	if (dl_probe_begin(&s->core, d, !s->pol->link_aware) != 0) {
		*deferred = true;
		s->opr->probe_attempts++;
		s->opr->probe_defers++;
		emit(s, DL_EV_PROBE_DEFER, d, 0, -DL_EPROBE_DEFER);
		return cost(s->sc->cost.probe_check_ns, DL_COST_PROBE_CHECK_NS);
	}
	s->opr->probe_attempts++;
	emit(s, DL_EV_PROBE_START, d, 0, 0);
	return s->lat[d];
}

static void callback_end(struct sim *s, uint32_t d, bool deferred)
{
	int err;

	if (s->pk == PK_SUSPEND || s->pk == PK_RESUME) {
		err = fault_for(s, d, phase_lat_key(s->phase));
		emit(s, s->pk == PK_SUSPEND ? DL_EV_SUSPEND_END : DL_EV_RESUME_END, d,
		     s->phase, err);
		if (s->pk == PK_SUSPEND) {
			if (err) {
				if (!s->aborted) {
					s->aborted = true;
					s->abort_err = err;
					s->abort_dev = d;
				}
			} else {
				s->core.dev[d].pm_depth = (uint8_t)(s->phase + 1);
			}
		} else {
			s->core.dev[d].pm_depth = (uint8_t)(DL_PH_COMPLETE - s->phase);
		}
		device_finished(s, d);
		return;
	}
	if (!deferred) {
		err = fault_for(s, d, DL_LAT_PROBE);
		dl_probe_end(&s->core, d, err);
		emit(s, DL_EV_PROBE_END, d, 0, err);
	}
	device_finished(s, d);
}

/* ---- the main thread ---- */

static bool main_next(struct sim *s, uint32_t *d)
{
	if (s->deferral_walk) {
		*d = dl_deferred_next(&s->core);
		return *d != DL_NONE;
	}
	while (s->widx < s->nwalk) {
		uint32_t x = s->walk[s->widx++];

		if (s->part[x] && (s->on_main[x] || s->pol->queue_up_front ||
				   s->pk == PK_PROBE_DEFER)) {
			*d = x;
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
			if (s->wait[s->mdev] > 0 && s->pol->link_aware && !s->aborted)
				return;
			s->mkind = 0;
			s->mstate = M_QUEUED;
			burst_request(s, UINT32_MAX, MAIN_PRIO);
			return;
		}
		if (s->mstate == M_QUEUED || s->mstate == M_BURST)
			return;
		if (s->aborted) {
			s->mstate = M_DONE;
			return;
		}
		if (!main_next(s, &d)) {
			if (s->pk == PK_PROBE_DEFER) {
				/* late_initcall: wait for probes in flight, then retry. */
				if (s->inflight) {
					s->mstate = M_WAIT_DRAIN;
					return;
				}
				if (!s->deferral_walk) {
					s->deferral_walk = true;
					dl_deferred_enable(&s->core);
					dl_sync_state_resume(&s->core);
					continue;
				}
				d = dl_deferred_next(&s->core);
				if (d == DL_NONE) {
					s->mstate = M_DONE;
					return;
				}
			} else {
				s->mstate = M_DONE;
				return;
			}
		}
		if (s->pk == PK_PROBE_DEFER &&
		    (s->stage[d] == ST_QUEUED_CB || s->stage[d] == ST_CB ||
		     s->core.dev[d].state != DL_DEV_NO_DRIVER))
			continue;   /* already probing or bound: bus_probe_device() is a no-op */
		s->mdev = d;
		if (s->pk == PK_PROBE_DEFER) {
			if (!s->part[d]) {
				s->part[d] = 1;
				s->remaining++;
			}
			s->stage[d] = ST_IDLE;
			if (s->pol->use_async_flag && s->core.dev[d].async) {
				s->mkind = 1;
				s->mstate = M_QUEUED;
				burst_request(s, UINT32_MAX, MAIN_PRIO);
				return;
			}
			s->mkind = 0;
			s->mstate = M_QUEUED;
			burst_request(s, UINT32_MAX, MAIN_PRIO);
			return;
		}
		if (!s->on_main[d]) {
			/* classic async: queue the item up front */
			s->mkind = 1;
			s->mstate = M_QUEUED;
			burst_request(s, UINT32_MAX, MAIN_PRIO);
			return;
		}
		s->mstate = M_WAIT_DEV;
	}
}

static void main_got_cpu(struct sim *s)
{
	int64_t len = cost(s->sc->cost.main_ns, DL_COST_MAIN_NS);

	s->mstate = M_BURST;
	if (s->mkind == 1) {
		len += cost(s->sc->cost.queue_ns, DL_COST_QUEUE_NS);
	} else {
		bool deferred;

		s->stage[s->mdev] = ST_CB;
		len += callback_begin(s, s->mdev, &deferred);
		s->main_cb_deferred = deferred;
	}
	burst_start(s, UINT32_MAX, len);
}

static void main_burst_done(struct sim *s)
{
	uint32_t d = s->mdev;

	s->mstate = M_IDLE;
	if (s->mkind == 1) {
		/* the queued item */
		s->stage[d] = s->pk == PK_PROBE_DEFER ? ST_QUEUED_CB : ST_QUEUED_START;
		s->burst[d] = s->pk == PK_PROBE_DEFER ? 0 : cost(s->sc->cost.wake_ns, DL_COST_WAKE_NS);
		s->inflight++;
		burst_request(s, d, s->prio[d]);
	} else {
		callback_end(s, d, s->main_cb_deferred);
	}
	main_kick(s);
}

/* ---- work items ---- */

static void item_got_cpu(struct sim *s, uint32_t d)
{
	s->alive++;
	if (s->alive > s->opr->peak_workers)
		s->opr->peak_workers = s->alive;
	if (s->stage[d] == ST_QUEUED_START) {
		s->stage[d] = ST_START;
		burst_start(s, d, s->burst[d]);
		return;
	}
	/* ST_QUEUED_CB: the overhead, then the callback */
	s->stage[d] = ST_CB;
	if (s->aborted && s->pk != PK_PROBE_DEFER && s->pk != PK_PROBE_READY) {
		burst_start(s, d, s->burst[d]);   /* skips the callback: async_error */
		s->lat[d] = -1;
		return;
	}
	{
		bool deferred;
		int64_t len = s->burst[d] + callback_begin(s, d, &deferred);

		s->burst[d] = deferred ? -2 : 0;
		burst_start(s, d, len);
	}
}

static void cpu_release(struct sim *s, uint32_t cpu)
{
	s->cpu_free_stack[s->ncpu_free++] = (uint16_t)cpu;
}

static void item_burst_done(struct sim *s, uint32_t d)
{
	if (s->stage[d] == ST_START) {
		if (s->aborted) {
			s->stage[d] = ST_DONE;
			s->remaining--;
			s->inflight--;
			s->alive--;
			return;
		}
		if (s->wait[d] == 0) {
			bool deferred;

			s->stage[d] = ST_CB;
			s->burst[d] = 0;
			burst_start(s, d, callback_begin(s, d, &deferred));
			s->cpu[d] = s->cur_worker;   /* keeps its CPU */
			return;
		}
		s->stage[d] = ST_BLOCKED;
		s->blocked_since[d] = s->now;
		s->opr->blocked_ns += cost(s->sc->cost.switch_ns, DL_COST_SWITCH_NS);
		return;
	}
	s->alive--;
	s->inflight--;
	if (s->lat[d] == -1 && s->aborted) {
		s->stage[d] = ST_DONE;
		s->remaining--;
	} else {
		callback_end(s, d, s->burst[d] == -2);
	}
	if (s->mstate == M_WAIT_DRAIN && s->inflight == 0) {
		s->mstate = M_IDLE;
		main_kick(s);
	}
}

/* Hand free CPUs to queued bursts. */
static void dispatch(struct sim *s)
{
	while (s->ncpu_free && s->rq.n) {
		struct rq e = rq_heap_pop(&s->rq);
		uint32_t cpu = s->cpu_free_stack[--s->ncpu_free];

		s->cur_worker = (int16_t)cpu;
		if (e.task == UINT32_MAX) {
			s->cur_worker = 0;
			s->cpu[s->n] = cpu;
			main_got_cpu(s);
		} else {
			s->cpu[e.task] = cpu;
			item_got_cpu(s, e.task);
		}
	}
}

static int run_loop(struct sim *s)
{
	uint64_t steps = 0;

	dispatch(s);
	while (s->ev.n) {
		struct ev e = ev_heap_pop(&s->ev);
		uint32_t cpu;

		s->now = e.t;
		if (e.task == UINT32_MAX) {
			cpu = s->cpu[s->n];
			s->cur_worker = 0;
			cpu_release(s, cpu);
			main_burst_done(s);
		} else {
			cpu = s->cpu[e.task];
			s->cur_worker = (int16_t)cpu;
			if (s->stage[e.task] == ST_START && !s->aborted && s->wait[e.task] == 0) {
				item_burst_done(s, e.task);   /* continues on the same CPU */
			} else {
				cpu_release(s, cpu);
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

static void lower_bound(struct sim *s, int64_t *cp_out, int64_t *work_out)
{
	/*
	 * Longest chain of latencies: visit devices before the ones that wait
	 * for them (dpm_list is a topological order) and push finish times.
	 */
	int64_t cp = 0, work = 0;
	int64_t *best = s->burst;
	bool fwd = s->pk != PK_SUSPEND;
	dl_dev_t d = fwd ? s->core.dpm_head : s->core.dpm_tail;

	for (uint32_t i = 0; i <= s->n; i++)
		best[i] = 0;
	while (d != DL_NONE) {
		if (s->part[d]) {
			int64_t ef = best[d] + s->lat[d];

			work += s->lat[d];
			if (ef > cp)
				cp = ef;
			FOR_EACH_DEPENDENT(s, d, y, {
				if (best[y] < ef)
					best[y] = ef;
			});
		}
		d = fwd ? s->core.dev[d].dpm_next : s->core.dev[d].dpm_prev;
	}
	*cp_out = cp;
	*work_out = work;
}

/* cp-first priority (longest path to the end) and levels. */
static void priorities(struct sim *s)
{
	bool fwd = s->pk == PK_SUSPEND;   /* dependents come first in this direction */
	dl_dev_t d = fwd ? s->core.dpm_head : s->core.dpm_tail;
	uint32_t maxlevel = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		s->prio[i] = 0;
		s->level[i] = 0;
	}
	while (d != DL_NONE) {
		if (s->part[d]) {
			int64_t best = 0;

			FOR_EACH_DEPENDENT(s, d, y, {
				if (s->part[y] && -s->prio[y] > best)
					best = -s->prio[y];
			});
			s->prio[d] = -(best + s->lat[d]);
		}
		d = fwd ? s->core.dev[d].dpm_next : s->core.dev[d].dpm_prev;
	}
	/* levels: along the waits, i.e. the opposite direction */
	d = fwd ? s->core.dpm_tail : s->core.dpm_head;
	while (d != DL_NONE) {
		if (s->part[d]) {
			FOR_EACH_DEPENDENT(s, d, y, {
				if (s->part[y] && s->level[y] < s->level[d] + 1)
					s->level[y] = s->level[d] + 1;
			});
			if (s->level[d] > maxlevel)
				maxlevel = s->level[d];
		}
		d = fwd ? s->core.dev[d].dpm_prev : s->core.dev[d].dpm_next;
	}
	if (!s->pol->critical_first)
		for (uint32_t i = 0; i < s->n; i++)
			s->prio[i] = 0;
	s->nlevels = maxlevel + 1;
	free(s->level_left);
	free(s->lvl_off);
	s->level_left = calloc(s->nlevels, sizeof(*s->level_left));
	s->lvl_off = calloc(s->nlevels + 1, sizeof(*s->lvl_off));
	if (!s->level_left || !s->lvl_off) {
		s->nlevels = 0;
		return;
	}
	for (uint32_t i = 0; i < s->n; i++)
		if (s->part[i])
			s->level_left[s->level[i]]++;
	/* counting sort of the devices by level, for the barrier releases */
	for (uint32_t l = 0; l < s->nlevels; l++)
		s->lvl_off[l + 1] = s->lvl_off[l] + s->level_left[l];
	{
		uint32_t *fill = malloc((size_t)s->nlevels * sizeof(*fill));

		if (!fill) {
			s->nlevels = 0;
			return;
		}
		for (uint32_t l = 0; l < s->nlevels; l++)
			fill[l] = s->lvl_off[l];
		for (uint32_t i = 0; i < s->n; i++)
			if (s->part[i])
				s->lvl_order[fill[s->level[i]]++] = i;
		free(fill);
	}
	s->cur_level = 0;
}

/* Build the walk order: dpm_list (reverse for suspend), or registration order for naive. */
static void build_walk(struct sim *s, bool reverse)
{
	s->nwalk = 0;
	/* probing follows registration (device_add) order; naive PM does too */
	if (!s->pol->link_aware || s->pk == PK_PROBE_DEFER) {
		for (uint32_t i = 0; i < s->n; i++) {
			uint32_t d = reverse ? s->n - 1 - i : i;

			if (s->core.dev[d].registered)
				s->walk[s->nwalk++] = d;
		}
	} else {
		dl_dev_t d = reverse ? s->core.dpm_tail : s->core.dpm_head;

		while (d != DL_NONE) {
			s->walk[s->nwalk++] = d;
			d = reverse ? s->core.dev[d].dpm_prev : s->core.dev[d].dpm_next;
		}
	}
	s->widx = 0;
}

static void phase_reset(struct sim *s, int pk)
{
	s->pk = pk;
	s->remaining = s->inflight = s->alive = 0;
	s->mstate = M_IDLE;
	s->deferral_walk = false;
	s->ev.n = s->rq.n = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		s->part[i] = 0;
		s->stage[i] = ST_IDLE;
		s->wait[i] = 0;
		s->on_main[i] = 0;
	}
}

/* Run one phase over the devices marked in part[]; returns its makespan. */
static int run_phase(struct sim *s, int64_t *makespan, int64_t *lb, int64_t *cp_out,
		     int64_t *work_out)
{
	int64_t t0 = s->now, cp, work;
	bool reverse = s->pk == PK_SUSPEND;
	int err;

	for (uint32_t d = 0; d < s->n; d++) {
		if (!s->part[d])
			continue;
		s->remaining++;
		if (s->pk == PK_PROBE_DEFER) {
			s->on_main[d] = !(s->pol->use_async_flag && s->core.dev[d].async);
			continue;
		}
		if (s->pol->all_async)
			s->on_main[d] = 0;
		else if (s->pol->use_async_flag)
			s->on_main[d] = !s->core.dev[d].async;
		else
			s->on_main[d] = 1;
	}
	err = build_csr(s);
	if (err)
		return err;
	/* waits */
	for (uint32_t d = 0; d < s->n; d++) {
		if (!s->part[d] || s->pk == PK_PROBE_DEFER)
			continue;
		FOR_EACH_DEPENDENT(s, d, y, {
			if (s->part[y])
				s->wait[y]++;
		});
	}
	lower_bound(s, &cp, &work);
	priorities(s);
	build_walk(s, reverse);
	*cp_out = cp;
	*work_out = work;
	*lb = cp > (work + s->K - 1) / s->K ? cp : (work + s->K - 1) / s->K;

	main_kick(s);
	if (!s->pol->queue_up_front && s->pk != PK_PROBE_DEFER) {
		for (uint32_t i = 0; i < s->nwalk; i++) {
			uint32_t d = s->walk[i];

			if (s->part[d] && !s->on_main[d] && s->wait[d] == 0)
				on_ready(s, d);
		}
	}
	err = run_loop(s);
	*makespan = s->now - t0;
	return err;
}

static void op_account(struct sim *s, int64_t mk, int64_t lb, int64_t cp, int64_t work)
{
	s->opr->makespan_ns += mk;
	s->opr->lower_bound_ns += lb;
	s->opr->critical_path_ns += cp;
	s->opr->work_ns += work;
}

static int op_probe(struct sim *s)
{
	int64_t mk, lb, cp, work;
	int pk = s->pol->probe_deferral ? PK_PROBE_DEFER : PK_PROBE_READY;
	int err;

	phase_reset(s, pk);
	for (uint32_t d = 0; d < s->n; d++) {
		s->lat[d] = sample(s, d, DL_LAT_PROBE);
		s->part[d] = s->core.dev[d].registered && s->core.dev[d].state == DL_DEV_NO_DRIVER;
	}
	if (pk == PK_PROBE_READY) {
		dl_deferred_enable(&s->core);
		dl_sync_state_resume(&s->core);
		/* a supplier that cannot bind in this op blocks its consumers for good */
	}
	err = run_phase(s, &mk, &lb, &cp, &work);
	if (pk == PK_PROBE_READY) {
		/* devices never released (a supplier failed): they stay unbound,
		 * deferred as the kernel would leave them */
		for (uint32_t d = 0; d < s->n; d++)
			if (s->part[d] && s->stage[d] != ST_DONE)
				dl_deferred_add(&s->core, d);
	}
	op_account(s, mk, lb, cp, work);
	return err;
}

/* Run resume phases for devices that completed suspend phases > @from_phase. */
static int resume_phases(struct sim *s, int top)
{
	int err = 0;

	for (int q = top; q >= 0 && !err; q--) {
		int64_t mk, lb, cp, work;

		phase_reset(s, PK_RESUME);
		s->phase = DL_PH_COMPLETE - (unsigned)q;
		s->aborted = false;
		for (uint32_t d = 0; d < s->n; d++) {
			s->part[d] = s->core.dev[d].registered && s->core.dev[d].pm_depth >= q + 1;
			s->lat[d] = s->part[d] ? sample(s, d, phase_lat_key(s->phase)) : 0;
		}
		err = run_phase(s, &mk, &lb, &cp, &work);
		op_account(s, mk, lb, cp, work);
	}
	return err;
}

static int op_suspend(struct sim *s)
{
	int err = 0;

	for (unsigned ph = DL_PH_PREPARE; ph <= DL_PH_SUSPEND_NOIRQ && !err; ph++) {
		int64_t mk, lb, cp, work;

		phase_reset(s, PK_SUSPEND);
		s->phase = ph;
		s->aborted = false;
		for (uint32_t d = 0; d < s->n; d++) {
			s->part[d] = s->core.dev[d].registered && s->core.dev[d].pm_depth == ph;
			s->lat[d] = s->part[d] ? sample(s, d, phase_lat_key(ph)) : 0;
		}
		err = run_phase(s, &mk, &lb, &cp, &work);
		op_account(s, mk, lb, cp, work);
		if (!err && s->aborted) {
			/* dpm_suspend*() failed: resume everything suspended, in order */
			s->opr->err = s->abort_err;
			s->opr->fail_dev = s->abort_dev;
			err = resume_phases(s, (int)ph);
			if (!err)
				err = 1;   /* the op failed, as the kernel reports it */
		}
	}
	return err;
}

static int op_resume(struct sim *s)
{
	return resume_phases(s, DL_PH_SUSPEND_NOIRQ);
}

/**
 * dl_engine_add_listed_links - add the scenario's links (all, or those of
 * device @only whose other end is registered), as fw_devlink would.
 */
void dl_engine_add_listed_links(struct dl_core *c, const struct dl_scenario *sc, uint32_t only)
{
	for (uint32_t i = 0; i < sc->nlink; i++) {
		const struct dl_sc_link *l = &sc->link[i];

		if (only != DL_NONE && l->consumer != only && l->supplier != only)
			continue;
		if (only != DL_NONE && (!c->dev[l->consumer].registered ||
					!c->dev[l->supplier].registered))
			continue;
		if (l->flags & DL_FLAG_CYCLE) {
			/*
			 * fw_devlink_get_flags(): a link found on a cycle is created
			 * INFERRED|SYNC_STATE_ONLY|CYCLE, so it neither closes a
			 * cycle nor blocks probe or PM ordering.
			 */
			dl_link_t id;

			if (dl_link_add(c, l->consumer, l->supplier,
					DL_FLAG_INFERRED | DL_FLAG_SYNC_STATE_ONLY, &id) == 0)
				dl_link_mark_cycle(c, id);
			continue;
		}
		dl_link_add(c, l->consumer, l->supplier, l->flags, NULL);
	}
}

static void add_listed_links(struct sim *s, uint32_t only)
{
	dl_engine_add_listed_links(&s->core, s->sc, only);
}

/* ---- sequential ops on the main thread (sim/engine/seqops.c) ---- */

static void seq_emit(void *ctx, unsigned kind, uint32_t dev, unsigned phase, int err)
{
	emit(ctx, kind, dev, phase, err);
}

static void seq_take_time(void *ctx, int64_t ns)
{
	((struct sim *)ctx)->now += ns;
}

static int64_t seq_sample(void *ctx, uint32_t dev, unsigned key)
{
	return sample(ctx, dev, key);
}

static int seq_fault(void *ctx, uint32_t dev, unsigned key)
{
	return fault_for(ctx, dev, key);
}

static int op_seq(struct sim *s, const struct dl_sc_op *op)
{
	struct dl_seq q = {
		.core = &s->core, .sc = s->sc, .opr = s->opr,
		.ignore_links = !s->pol->link_aware,
		.defer_ns = cost(s->sc->cost.probe_check_ns, DL_COST_PROBE_CHECK_NS),
		.ctx = s, .emit = seq_emit, .take_time = seq_take_time,
		.sample = seq_sample, .fault = seq_fault,
	};

	s->cur_worker = 0;
	return dl_seq_op(&q, op);
}

static int sim_alloc(struct sim *s)
{
	uint32_t n = s->n + 1;

	s->lat = calloc(n, sizeof(*s->lat));
	s->prio = calloc(n, sizeof(*s->prio));
	s->burst = calloc(n, sizeof(*s->burst));
	s->blocked_since = calloc(n, sizeof(*s->blocked_since));
	s->wait = calloc(n, sizeof(*s->wait));
	s->level = calloc(n, sizeof(*s->level));
	s->cpu = calloc(n, sizeof(*s->cpu));
	s->walk = calloc(n, sizeof(*s->walk));
	s->lvl_order = calloc(n, sizeof(*s->lvl_order));
	s->dep_off = calloc(n + 1, sizeof(*s->dep_off));
	s->part = calloc(n, 1);
	s->stage = calloc(n, 1);
	s->on_main = calloc(n, 1);
	s->has_fault = calloc(n, 1);
	s->fault_used = calloc(s->sc->nfault + 1, sizeof(*s->fault_used));
	s->cpu_free_stack = calloc(s->K + 1, sizeof(*s->cpu_free_stack));
	if (!s->lat || !s->prio || !s->burst || !s->blocked_since || !s->wait || !s->level ||
	    !s->cpu || !s->walk || !s->lvl_order || !s->dep_off || !s->part || !s->stage || !s->on_main || !s->has_fault ||
	    !s->fault_used || !s->cpu_free_stack)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->K; i++)
		s->cpu_free_stack[s->ncpu_free++] = (uint16_t)(s->K - i);
	for (uint32_t i = 0; i < s->sc->nfault; i++)
		if (s->sc->fault[i].dev < s->n)
			s->has_fault[s->sc->fault[i].dev] = 1;
	return 0;
}

static void sim_free(struct sim *s)
{
	free(s->lat); free(s->prio); free(s->burst); free(s->blocked_since);
	free(s->wait); free(s->level); free(s->cpu); free(s->walk); free(s->part);
	free(s->stage); free(s->on_main); free(s->has_fault); free(s->fault_used);
	free(s->cpu_free_stack); free(s->level_left); free(s->lvl_off); free(s->lvl_order);
	free(s->dep_off); free(s->dep);
	ev_heap_free(&s->ev); rq_heap_free(&s->rq);
	dl_core_fini(&s->core);
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
	int64_t wall0 = mono_ns();
	int err = 0, failed = 0;

	memset(r, 0, sizeof(*r));
	s.sc = sc;
	s.o = o;
	s.pol = dl_order_policy(o->order);
	s.r = r;
	s.n = sc->ndev;
	s.K = o->workers ? o->workers : (sc->cost.cpus ? sc->cost.cpus : s.pol->default_workers);
	if (s.K == 0)
		s.K = 1;
	r->workers = s.K;
	r->devices = sc->ndev;
	r->links = sc->nlink;
	r->fail_dev = DL_NONE;
	err = dl_core_init(&s.core, sc->ndev + 1, sc->nlink + 1);
	if (!err)
		err = sim_alloc(&s);
	if (err)
		goto out;
	dl_core_set_sink(&s.core, (struct dl_sink){ .emit = sink_emit, .ctx = &s });
	for (uint32_t i = 0; i < sc->ndev && !err; i++) {
		dl_dev_t id;

		err = dl_device_new(&s.core, sc->dev[i].parent, sc->dev[i].async, &id);
	}
	if (err)
		goto out;

	for (uint32_t i = 0; i < sc->nop && i < DL_MAX_OPS && !err; i++) {
		const struct dl_sc_op *op = &sc->op[i];

		s.op_index = i;
		s.opr = &r->op[r->nops++];
		s.opr->kind = op->kind;
		s.opr->start_ns = s.now;
		s.opr->fail_dev = DL_NONE;
		switch (op->kind) {
		case DL_OP_PROBE:
			s.cur_worker = 0;
			for (uint32_t d = 0; d < s.n; d++)
				if (!sc->dev[d].hotplug && !s.core.dev[d].registered &&
				    (sc->dev[d].parent == DL_NONE ||
				     s.core.dev[sc->dev[d].parent].registered))
					dl_device_register(&s.core, d);
			add_listed_links(&s, DL_NONE);
			err = op_probe(&s);
			break;
		case DL_OP_SUSPEND:
			err = op_suspend(&s);
			break;
		case DL_OP_RESUME:
			err = op_resume(&s);
			break;
		default: {
			int64_t t0 = s.now;

			err = op_seq(&s, op);
			s.opr->makespan_ns = s.now - t0;
			s.opr->lower_bound_ns = s.now - t0;
			s.opr->critical_path_ns = s.now - t0;
			s.opr->work_ns = s.now - t0;
			break;
		}
		}
		if (err == 1) {
			failed = 1;
			err = 0;
			if (r->fail_dev == DL_NONE) {
				r->err = s.opr->err;
				r->fail_dev = s.opr->fail_dev;
			}
		}
		s.opr->probe_defers += 0;
		r->makespan_ns += s.opr->makespan_ns;
		r->lower_bound_ns += s.opr->lower_bound_ns;
		r->critical_path_ns += s.opr->critical_path_ns;
		r->work_ns += s.opr->work_ns;
		r->blocked_ns += s.opr->blocked_ns;
		r->probe_attempts += s.opr->probe_attempts;
		r->probe_defers += s.opr->probe_defers;
		if (s.opr->peak_workers > r->peak_workers)
			r->peak_workers = s.opr->peak_workers;
	}
out:
	r->wall_ns = mono_ns() - wall0;
	if (err == -EINTR)
		r->status = "interrupted";
	else if (err)
		r->status = "error";
	else
		r->status = failed ? "failed" : "ok";
	sim_free(&s);
	if (err)
		return err;
	return failed;
}
