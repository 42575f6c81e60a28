/*
 * threads.c - the real-thread engine.
 *
 * The script's ops run through the link core with a main thread and a pool
 * of K POSIX worker threads; callbacks take latency * time_scale of real
 * time (nanosleep from 50us up, a clock_gettime spin below).
 *
 * Probe and the other non-PM ops run on the main thread, one callback at a
 * time, with the kernel's deferred-probe retry (like des.c's sequential ops).
 * System sleep phases run in parallel:
 *  - the link graph is guarded by a rwlock (read while collecting waits);
 *  - each device has a completion per phase: an atomic flag plus a striped
 *    mutex/condvar (dpm_wait / complete_all);
 *  - kernel-async queues every async device up front; its worker blocks on
 *    the completions of what it waits for;
 *  - kernel-async-v2 and cp-first queue a device when its atomic counter of
 *    unfinished dependencies drops to zero (cp-first: ready work by longest
 *    remaining path); levels queues a whole level at a time, with a barrier;
 *  - sync devices (and every device under sync and naive) run on the main
 *    thread in walk order after waiting for their dependencies (naive:
 *    registration order, no waits).
 * A failing suspend callback sets an abort flag: nothing new starts, blocked
 * waiters wake and skip, work in flight finishes; then every suspended
 * device is resumed as des.c does.
 *
 * Events go to per-thread buffers stamped with (time, global sequence) and
 * are merged into o->sink on the main thread at the end of every phase/op,
 * so the sink is only ever called from one thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/core/dl_core.h"
#include "sim/engine/threads.h"
#include "sim/engine/seqops.h"

#define NSTRIPE 64
#define SPIN_BELOW_NS 50000

enum { PK_SUSPEND, PK_RESUME, PK_SEQ };

struct tev {
	struct dl_event e;
	uint64_t seq;
};

struct tbuf {
	struct tev *v;
	size_t n, cap;
};

struct task {
	int64_t prio;
	uint64_t seq;
	uint32_t dev;
};

struct thr;

struct tw {
	struct thr *t;
	int id;                 /* 0 main, 1..K workers */
	struct dl_idvec scratch;
	int64_t blocked_ns;
	uint64_t wakeups;
	char pad[64];
};

struct thr {
	const struct dl_scenario *sc;
	const struct dl_engine_opts *o;
	const struct dl_order_policy *pol;
	struct dl_run_result *r;
	struct dl_op_result *opr;
	struct dl_core core;
	uint32_t n, K;
	double scale;
	int64_t t0;
	uint32_t op_index;

	pthread_rwlock_t graph;

	/* work queue and phase accounting, under mx */
	pthread_mutex_t mx;
	pthread_cond_t qcv, mcv;
	struct task *q;
	size_t qn, qcap;
	uint64_t qseq;
	bool shutdown;
	uint32_t outstanding, remaining, alive, peak;

	/* completions */
	pthread_mutex_t smx[NSTRIPE];
	pthread_cond_t scv[NSTRIPE];
	atomic_uchar *done;
	atomic_uint *pending;
	atomic_bool abort;

	/* faults */
	pthread_mutex_t fmx;
	uint32_t *fault_used;
	uint8_t *has_fault;
	bool abort_rec;
	int abort_err;
	uint32_t abort_dev;

	/* events */
	atomic_uint_fast64_t evseq;
	struct tbuf *buf;       /* K + 1 */

	/* the phase (written by main before any work is queued) */
	int pk;
	unsigned phase;
	uint8_t *part, *on_main, *depth_set, *newdepth;
	uint32_t *wcount, *level, *walk, nwalk;
	int64_t *lat, *prio;

	pthread_t *tid;
	uint32_t nthreads;
	struct tw *tw;          /* K + 1 */
};

/* ---- time ---- */

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t sim_now(const struct thr *t)
{
	return (int64_t)((double)(mono_ns() - t->t0) / t->scale);
}

/* Let @sim_ns simulated nanoseconds pass in real time. */
static void take_time(const struct thr *t, int64_t sim_ns)
{
	int64_t real = (int64_t)((double)sim_ns * t->scale);

	if (real <= 0)
		return;
	if (real >= SPIN_BELOW_NS) {
		struct timespec ts = { real / 1000000000, real % 1000000000 };

		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	} else {
		int64_t end = mono_ns() + real;

		while (mono_ns() < end)
			;
	}
}

/* ---- events ---- */

static void tbuf_push(struct thr *t, int w, struct dl_event *e)
{
	struct tbuf *b = &t->buf[w];

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct tev *nv = realloc(b->v, cap * sizeof(*nv));

		if (!nv)
			return;   /* the event is lost; r->events tells */
		b->v = nv;
		b->cap = cap;
	}
	/* sequence first, then the clock: a causally later event gets both larger */
	b->v[b->n].seq = atomic_fetch_add(&t->evseq, 1);
	e->t_ns = sim_now(t);
	e->worker = (int16_t)w;
	b->v[b->n].e = *e;
	b->n++;
}

static void core_emit(void *ctx, struct dl_event *e)
{
	tbuf_push(ctx, 0, e);   /* the core is only called from the main thread */
}

static void emit(struct thr *t, int w, unsigned kind, uint32_t dev, unsigned phase, int err)
{
	struct dl_event e = { .dev = dev, .link = DL_NONE, .aux = DL_NONE,
			      .kind = (uint16_t)kind, .phase = (uint16_t)phase,
			      .err = (int16_t)err };

	tbuf_push(t, w, &e);
}

static int tev_cmp(const void *a, const void *b)
{
	const struct tev *x = a, *y = b;

	if (x->e.t_ns != y->e.t_ns)
		return x->e.t_ns < y->e.t_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Main thread, no worker active: merge the buffers by time into the sink. */
static void flush_events(struct thr *t)
{
	size_t total = 0, k = 0;
	struct tev *all;

	for (uint32_t w = 0; w <= t->K; w++)
		total += t->buf[w].n;
	if (!total)
		return;
	all = malloc(total * sizeof(*all));
	if (all) {
		for (uint32_t w = 0; w <= t->K; w++) {
			if (!t->buf[w].n)
				continue;   /* an empty buffer may have no array yet */
			memcpy(all + k, t->buf[w].v, t->buf[w].n * sizeof(*all));
			k += t->buf[w].n;
		}
		qsort(all, total, sizeof(*all), tev_cmp);
	}
	for (size_t i = 0; i < total; i++) {
		struct dl_event *e = all ? &all[i].e : NULL;

		if (!e)
			break;
		t->r->events++;
		if (e->kind == DL_EV_LINK_REFUSED)
			t->r->links_refused++;
		if (t->o->sink.emit)
			t->o->sink.emit(t->o->sink.ctx, e);
	}
	free(all);
	for (uint32_t w = 0; w <= t->K; w++)
		t->buf[w].n = 0;
}

/* ---- samples and faults ---- */

static int64_t sample(const struct thr *t, uint32_t d, unsigned key)
{
	const struct dl_profile *p = &t->sc->prof[t->sc->dev[d].profile];

	return dl_latency_sample(&p->lat[key], t->o->seed, d, key, t->op_index);
}

static int fault_for(struct thr *t, uint32_t d, unsigned key)
{
	int err = 0;

	if (!t->has_fault[d])
		return 0;
	pthread_mutex_lock(&t->fmx);
	for (uint32_t i = 0; i < t->sc->nfault; i++) {
		const struct dl_sc_fault *f = &t->sc->fault[i];

		if (f->dev != d || f->lat_key != key)
			continue;
		if (f->times && t->fault_used[i] >= f->times)
			continue;
		t->fault_used[i]++;
		err = -f->err;
		break;
	}
	pthread_mutex_unlock(&t->fmx);
	return err;
}

/* ---- the graph within a phase ---- */

/*
 * Collect into @v the participating neighbours of @d: @up = parent and
 * suppliers, else children and consumers (links that count for PM only).
 */
static void nbrs(struct thr *t, uint32_t d, bool up, struct dl_idvec *v)
{
	const struct dl_device *x = &t->core.dev[d];

	v->n = 0;
	pthread_rwlock_rdlock(&t->graph);
	if (up) {
		if (x->parent != DL_NONE && t->part[x->parent])
			dl_idvec_push(v, x->parent);
		for (uint32_t i = 0; i < x->suppliers.n; i++) {
			const struct dl_link *k = &t->core.link[x->suppliers.v[i]];

			if (dl_link_counts_for_pm(k) && t->part[k->supplier])
				dl_idvec_push(v, k->supplier);
		}
	} else {
		for (uint32_t i = 0; i < x->children.n; i++)
			if (t->part[x->children.v[i]])
				dl_idvec_push(v, x->children.v[i]);
		for (uint32_t i = 0; i < x->consumers.n; i++) {
			const struct dl_link *k = &t->core.link[x->consumers.v[i]];

			if (dl_link_counts_for_pm(k) && t->part[k->consumer])
				dl_idvec_push(v, k->consumer);
		}
	}
	pthread_rwlock_unlock(&t->graph);
}

/* What @d waits for in this phase. */
static void waits_of(struct thr *t, uint32_t d, struct dl_idvec *v)
{
	nbrs(t, d, t->pk == PK_RESUME, v);
}

/* Who waits for @d in this phase. */
static void dependents_of(struct thr *t, uint32_t d, struct dl_idvec *v)
{
	nbrs(t, d, t->pk == PK_SUSPEND, v);
}

/* ---- completions ---- */

static void wait_done(struct thr *t, struct tw *w, uint32_t y)
{
	pthread_mutex_t *m = &t->smx[y % NSTRIPE];
	int64_t b0;

	if (atomic_load_explicit(&t->done[y], memory_order_acquire) ||
	    atomic_load(&t->abort))
		return;
	b0 = mono_ns();
	pthread_mutex_lock(m);
	while (!atomic_load_explicit(&t->done[y], memory_order_acquire) &&
	       !atomic_load(&t->abort))
		pthread_cond_wait(&t->scv[y % NSTRIPE], m);
	pthread_mutex_unlock(m);
	w->blocked_ns += mono_ns() - b0;
	w->wakeups++;
}

static void complete_all(struct thr *t, uint32_t d)
{
	pthread_mutex_t *m = &t->smx[d % NSTRIPE];

	pthread_mutex_lock(m);
	atomic_store_explicit(&t->done[d], 1, memory_order_release);
	pthread_cond_broadcast(&t->scv[d % NSTRIPE]);
	pthread_mutex_unlock(m);
}

static void set_abort(struct thr *t, int err, uint32_t d)
{
	pthread_mutex_lock(&t->fmx);
	if (!t->abort_rec) {
		t->abort_rec = true;
		t->abort_err = err;
		t->abort_dev = d;
	}
	pthread_mutex_unlock(&t->fmx);
	atomic_store(&t->abort, true);
	for (int i = 0; i < NSTRIPE; i++) {
		pthread_mutex_lock(&t->smx[i]);
		pthread_cond_broadcast(&t->scv[i]);
		pthread_mutex_unlock(&t->smx[i]);
	}
	pthread_mutex_lock(&t->mx);
	pthread_cond_broadcast(&t->mcv);
	pthread_mutex_unlock(&t->mx);
}

/* ---- the queue (a heap by (prio, seq)), under mx ---- */

static bool task_less(const struct task *a, const struct task *b)
{
	return a->prio < b->prio || (a->prio == b->prio && a->seq < b->seq);
}

static int q_push_locked(struct thr *t, uint32_t d)
{
	struct task e = { .prio = t->prio[d], .seq = t->qseq++, .dev = d };
	size_t i;

	if (t->qn == t->qcap) {
		size_t cap = t->qcap ? t->qcap * 2 : 1024;
		struct task *nv = realloc(t->q, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		t->q = nv;
		t->qcap = cap;
	}
	i = t->qn++;
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!task_less(&e, &t->q[p]))
			break;
		t->q[i] = t->q[p];
		i = p;
	}
	t->q[i] = e;
	t->outstanding++;
	pthread_cond_signal(&t->qcv);
	return 0;
}

static void q_push(struct thr *t, uint32_t d)
{
	pthread_mutex_lock(&t->mx);
	if (q_push_locked(t, d) != 0 && !atomic_load(&t->abort)) {
		pthread_mutex_unlock(&t->mx);
		set_abort(t, -ENOMEM, d);
		return;
	}
	pthread_mutex_unlock(&t->mx);
}

static struct task q_pop_locked(struct thr *t)
{
	struct task top = t->q[0], last = t->q[--t->qn];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, m;

		if (l >= t->qn)
			break;
		m = (l + 1 < t->qn && task_less(&t->q[l + 1], &t->q[l])) ? l + 1 : l;
		if (!task_less(&t->q[m], &last))
			break;
		t->q[i] = t->q[m];
		i = m;
	}
	if (t->qn)
		t->q[i] = last;
	return top;
}

/* ---- callbacks ---- */

static bool ready_queue_mode(const struct thr *t)
{
	return t->pol->link_aware && !t->pol->queue_up_front && !t->pol->level_barrier;
}

/* Run @d's callback of this phase on thread @w, then complete it. */
static void run_cb(struct thr *t, struct tw *w, uint32_t d)
{
	int err;

	emit(t, w->id, t->pk == PK_SUSPEND ? DL_EV_SUSPEND_START : DL_EV_RESUME_START, d,
	     t->phase, 0);
	take_time(t, t->lat[d]);
	err = fault_for(t, d, DL_LAT_PREPARE + t->phase);
	emit(t, w->id, t->pk == PK_SUSPEND ? DL_EV_SUSPEND_END : DL_EV_RESUME_END, d,
	     t->phase, err);
	if (t->pk == PK_SUSPEND) {
		if (err) {
			set_abort(t, err, d);
		} else {
			t->newdepth[d] = (uint8_t)(t->phase + 1);
			t->depth_set[d] = 1;
		}
	} else {
		t->newdepth[d] = (uint8_t)(DL_PH_COMPLETE - t->phase);
		t->depth_set[d] = 1;
	}
	complete_all(t, d);
	if (ready_queue_mode(t) && !atomic_load(&t->abort)) {
		dependents_of(t, d, &w->scratch);
		for (uint32_t i = 0; i < w->scratch.n; i++) {
			uint32_t y = w->scratch.v[i];

			if (atomic_fetch_sub(&t->pending[y], 1) == 1 && !t->on_main[y])
				q_push(t, y);
		}
	}
}

static void *worker_main(void *arg)
{
	struct tw *w = arg;
	struct thr *t = w->t;

	pthread_mutex_lock(&t->mx);
	for (;;) {
		struct task k;
		bool ran = false;

		while (!t->qn && !t->shutdown)
			pthread_cond_wait(&t->qcv, &t->mx);
		if (!t->qn)
			break;
		k = q_pop_locked(t);
		t->alive++;
		if (t->alive > t->peak)
			t->peak = t->alive;
		pthread_mutex_unlock(&t->mx);

		if (!atomic_load(&t->abort)) {
			if (t->pol->queue_up_front) {
				/* classic async: block on what this device waits for */
				waits_of(t, k.dev, &w->scratch);
				for (uint32_t i = 0; i < w->scratch.n; i++)
					wait_done(t, w, w->scratch.v[i]);
			}
			if (!atomic_load(&t->abort)) {
				run_cb(t, w, k.dev);
				ran = true;
			}
		}

		pthread_mutex_lock(&t->mx);
		t->alive--;
		t->outstanding--;
		if (ran)
			t->remaining--;
		pthread_cond_broadcast(&t->mcv);
	}
	pthread_mutex_unlock(&t->mx);
	return NULL;
}

/* ---- a PM phase ---- */

static void main_ran_one(struct thr *t)
{
	pthread_mutex_lock(&t->mx);
	t->remaining--;
	pthread_mutex_unlock(&t->mx);
}

/* Wait until every queued item finished (or, on abort, was skipped). */
static void wait_drain(struct thr *t, bool all)
{
	pthread_mutex_lock(&t->mx);
	while (t->outstanding > 0 || (all && t->remaining > 0 && !atomic_load(&t->abort)))
		pthread_cond_wait(&t->mcv, &t->mx);
	pthread_mutex_unlock(&t->mx);
}

static void build_walk(struct thr *t)
{
	bool reverse = t->pk == PK_SUSPEND;

	t->nwalk = 0;
	if (!t->pol->link_aware) {
		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t d = reverse ? t->n - 1 - i : i;

			if (t->core.dev[d].registered)
				t->walk[t->nwalk++] = d;
		}
	} else {
		dl_dev_t d = reverse ? t->core.dpm_tail : t->core.dpm_head;

		while (d != DL_NONE) {
			t->walk[t->nwalk++] = d;
			d = reverse ? t->core.dev[d].dpm_prev : t->core.dev[d].dpm_next;
		}
	}
}

/* Run one phase over the devices marked in part[] (lat[] sampled). */
static void run_phase(struct thr *t)
{
	struct tw *m = &t->tw[0];
	int64_t w0 = mono_ns();
	uint32_t remaining = 0, maxlevel = 0;

	atomic_store(&t->abort, false);
	t->peak = 0;
	for (uint32_t d = 0; d < t->n; d++) {
		t->depth_set[d] = 0;
		t->wcount[d] = 0;
		t->prio[d] = 0;
		t->level[d] = 0;
		atomic_store_explicit(&t->done[d], (unsigned char)!t->part[d], memory_order_relaxed);
		if (!t->part[d])
			continue;
		remaining++;
		t->opr->work_ns += t->lat[d];
		if (t->pol->all_async)
			t->on_main[d] = 0;
		else if (t->pol->use_async_flag)
			t->on_main[d] = !t->core.dev[d].async;
		else
			t->on_main[d] = 1;
	}
	build_walk(t);
	if (t->pol->link_aware) {
		/* the walk lists every device after what it waits for */
		for (uint32_t i = 0; i < t->nwalk; i++) {
			uint32_t d = t->walk[i];

			if (!t->part[d])
				continue;
			waits_of(t, d, &m->scratch);
			t->wcount[d] = m->scratch.n;
			for (uint32_t j = 0; j < m->scratch.n; j++)
				if (t->level[m->scratch.v[j]] + 1 > t->level[d])
					t->level[d] = t->level[m->scratch.v[j]] + 1;
			if (t->level[d] > maxlevel)
				maxlevel = t->level[d];
		}
		if (t->pol->critical_first) {
			for (uint32_t i = t->nwalk; i-- > 0;) {
				uint32_t d = t->walk[i];
				int64_t best = 0;

				if (!t->part[d])
					continue;
				dependents_of(t, d, &m->scratch);
				for (uint32_t j = 0; j < m->scratch.n; j++)
					if (-t->prio[m->scratch.v[j]] > best)
						best = -t->prio[m->scratch.v[j]];
				t->prio[d] = -(best + t->lat[d]);
			}
		}
	}
	for (uint32_t d = 0; d < t->n; d++)
		atomic_store_explicit(&t->pending[d], t->wcount[d], memory_order_relaxed);
	pthread_mutex_lock(&t->mx);
	t->remaining = remaining;
	t->outstanding = 0;
	pthread_mutex_unlock(&t->mx);

	if (!t->pol->link_aware) {
		/* naive: the main thread, registration order, no waits */
		for (uint32_t i = 0; i < t->nwalk && !atomic_load(&t->abort); i++)
			if (t->part[t->walk[i]]) {
				run_cb(t, m, t->walk[i]);
				main_ran_one(t);
			}
	} else if (t->pol->level_barrier) {
		for (uint32_t l = 0; l <= maxlevel && !atomic_load(&t->abort); l++) {
			for (uint32_t i = 0; i < t->nwalk; i++) {
				uint32_t d = t->walk[i];

				if (t->part[d] && t->level[d] == l)
					q_push(t, d);
			}
			wait_drain(t, false);
		}
	} else {
		if (!t->pol->queue_up_front)
			for (uint32_t i = 0; i < t->nwalk; i++) {
				uint32_t d = t->walk[i];

				if (t->part[d] && !t->on_main[d] && t->wcount[d] == 0)
					q_push(t, d);
			}
		for (uint32_t i = 0; i < t->nwalk && !atomic_load(&t->abort); i++) {
			uint32_t d = t->walk[i];

			if (!t->part[d])
				continue;
			if (t->on_main[d]) {
				waits_of(t, d, &m->scratch);
				for (uint32_t j = 0; j < m->scratch.n; j++)
					wait_done(t, m, m->scratch.v[j]);
				if (atomic_load(&t->abort))
					break;
				run_cb(t, m, d);
				main_ran_one(t);
			} else if (t->pol->queue_up_front) {
				q_push(t, d);
			}
		}
	}
	wait_drain(t, true);

	for (uint32_t d = 0; d < t->n; d++)
		if (t->depth_set[d])
			t->core.dev[d].pm_depth = t->newdepth[d];
	t->opr->makespan_ns += (int64_t)((double)(mono_ns() - w0) / t->scale);
	if (t->peak > t->opr->peak_workers)
		t->opr->peak_workers = t->peak;
	for (uint32_t w = 0; w <= t->K; w++) {
		t->opr->blocked_ns += (int64_t)((double)t->tw[w].blocked_ns / t->scale);
		t->opr->wakeups += t->tw[w].wakeups;
		t->r->wakeups += t->tw[w].wakeups;
		t->tw[w].blocked_ns = 0;
		t->tw[w].wakeups = 0;
	}
	flush_events(t);
}

static void setup_phase(struct thr *t, int pk, unsigned phase, int min_depth, int eq_depth)
{
	t->pk = pk;
	t->phase = phase;
	for (uint32_t d = 0; d < t->n; d++) {
		const struct dl_device *x = &t->core.dev[d];

		t->part[d] = x->registered &&
			     (eq_depth >= 0 ? x->pm_depth == eq_depth : x->pm_depth >= min_depth);
		t->lat[d] = t->part[d] ? sample(t, d, DL_LAT_PREPARE + phase) : 0;
	}
}

/* Resume every device that completed suspend phases >= q + 1, q = top..0. */
static void resume_phases(struct thr *t, int top)
{
	for (int q = top; q >= 0; q--) {
		setup_phase(t, PK_RESUME, DL_PH_COMPLETE - (unsigned)q, q + 1, -1);
		run_phase(t);
	}
}

static int op_suspend(struct thr *t)
{
	for (unsigned ph = DL_PH_PREPARE; ph <= DL_PH_SUSPEND_NOIRQ; ph++) {
		t->abort_rec = false;
		setup_phase(t, PK_SUSPEND, ph, 0, (int)ph);
		run_phase(t);
		if (atomic_load(&t->abort)) {
			t->opr->err = t->abort_err;
			t->opr->fail_dev = t->abort_dev;
			resume_phases(t, (int)ph);
			return 1;   /* the op failed, as the kernel reports it */
		}
	}
	return 0;
}

/* ---- sequential ops on the main thread (graph write-locked; seqops.c) ---- */

static void seq_emit(void *ctx, unsigned kind, uint32_t dev, unsigned phase, int err)
{
	emit(ctx, 0, kind, dev, phase, err);
}

static void seq_take_time(void *ctx, int64_t ns)
{
	take_time(ctx, ns);
}

static int64_t seq_sample(void *ctx, uint32_t dev, unsigned key)
{
	return sample(ctx, dev, key);
}

static int seq_fault(void *ctx, uint32_t dev, unsigned key)
{
	return fault_for(ctx, dev, key);
}

static struct dl_seq seq_of(struct thr *t)
{
	return (struct dl_seq){
		.core = &t->core, .sc = t->sc, .opr = t->opr,
		.ignore_links = !t->pol->link_aware, .defer_ns = 0,
		.ctx = t, .emit = seq_emit, .take_time = seq_take_time,
		.sample = seq_sample, .fault = seq_fault,
	};
}

static void add_listed_links(struct thr *t, uint32_t only)
{
	dl_engine_add_listed_links(&t->core, t->sc, only);
}

static void op_probe(struct thr *t)
{
	struct dl_seq q = seq_of(t);

	for (uint32_t d = 0; d < t->n; d++)
		if (!t->sc->dev[d].hotplug && !t->core.dev[d].registered &&
		    (t->sc->dev[d].parent == DL_NONE ||
		     t->core.dev[t->sc->dev[d].parent].registered))
			dl_device_register(&t->core, d);
	add_listed_links(t, DL_NONE);
	for (uint32_t d = 0; d < t->n; d++)
		dl_seq_probe_one(&q, d);   /* registration order */
	dl_deferred_enable(&t->core);   /* late_initcall */
	dl_sync_state_resume(&t->core);
	dl_seq_deferred(&q);
}

static int op_seq(struct thr *t, const struct dl_sc_op *op)
{
	struct dl_seq q = seq_of(t);

	if (op->kind == DL_OP_PROBE) {
		op_probe(t);
		return 0;
	}
	return dl_seq_op(&q, op);
}

/* ---- setup ---- */

static int thr_alloc(struct thr *t)
{
	uint32_t n = t->n + 1;

	t->done = calloc(n, sizeof(*t->done));
	t->pending = calloc(n, sizeof(*t->pending));
	t->part = calloc(n, 1);
	t->on_main = calloc(n, 1);
	t->depth_set = calloc(n, 1);
	t->newdepth = calloc(n, 1);
	t->has_fault = calloc(n, 1);
	t->wcount = calloc(n, sizeof(*t->wcount));
	t->level = calloc(n, sizeof(*t->level));
	t->walk = calloc(n, sizeof(*t->walk));
	t->lat = calloc(n, sizeof(*t->lat));
	t->prio = calloc(n, sizeof(*t->prio));
	t->fault_used = calloc(t->sc->nfault + 1, sizeof(*t->fault_used));
	t->buf = calloc(t->K + 1, sizeof(*t->buf));
	t->tw = calloc(t->K + 1, sizeof(*t->tw));
	t->tid = calloc(t->K, sizeof(*t->tid));
	if (!t->done || !t->pending || !t->part || !t->on_main || !t->depth_set ||
	    !t->newdepth || !t->has_fault || !t->wcount || !t->level || !t->walk ||
	    !t->lat || !t->prio || !t->fault_used || !t->buf || !t->tw || !t->tid)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->sc->nfault; i++)
		if (t->sc->fault[i].dev < t->n)
			t->has_fault[t->sc->fault[i].dev] = 1;
	for (uint32_t w = 0; w <= t->K; w++) {
		t->tw[w].t = t;
		t->tw[w].id = (int)w;
	}
	return 0;
}

static void thr_free(struct thr *t)
{
	if (t->tw)
		for (uint32_t w = 0; w <= t->K; w++)
			dl_idvec_free(&t->tw[w].scratch);
	if (t->buf)
		for (uint32_t w = 0; w <= t->K; w++)
			free(t->buf[w].v);
	free(t->done); free(t->pending); free(t->part); free(t->on_main);
	free(t->depth_set); free(t->newdepth); free(t->has_fault); free(t->wcount);
	free(t->level); free(t->walk); free(t->lat); free(t->prio); free(t->fault_used);
	free(t->buf); free(t->tw); free(t->tid); free(t->q);
	dl_core_fini(&t->core);
}

int dl_threads_run(const struct dl_scenario *sc, const struct dl_engine_opts *o,
		   double time_scale, struct dl_run_result *r)
{
	struct thr *t = calloc(1, sizeof(*t));
	int64_t wall0 = mono_ns();
	int err = 0, failed = 0;

	memset(r, 0, sizeof(*r));
	r->fail_dev = DL_NONE;
	if (!t) {
		r->status = "error";
		return -ENOMEM;
	}
	t->sc = sc;
	t->o = o;
	t->pol = dl_order_policy(o->order);
	t->r = r;
	t->n = sc->ndev;
	t->scale = time_scale > 0 ? time_scale : 1.0;
	t->K = o->workers ? o->workers : t->pol->default_workers;
	if (t->K == 0)
		t->K = 1;
	t->t0 = wall0;
	atomic_init(&t->evseq, 0);
	atomic_init(&t->abort, false);
	r->workers = t->K;
	r->devices = sc->ndev;
	r->links = sc->nlink;
	pthread_rwlock_init(&t->graph, NULL);
	pthread_mutex_init(&t->mx, NULL);
	pthread_mutex_init(&t->fmx, NULL);
	pthread_cond_init(&t->qcv, NULL);
	pthread_cond_init(&t->mcv, NULL);
	for (int i = 0; i < NSTRIPE; i++) {
		pthread_mutex_init(&t->smx[i], NULL);
		pthread_cond_init(&t->scv[i], NULL);
	}
	err = dl_core_init(&t->core, sc->ndev + 1, sc->nlink + 1);
	if (!err)
		err = thr_alloc(t);
	if (err)
		goto out;
	dl_core_set_sink(&t->core, (struct dl_sink){ .emit = core_emit, .ctx = t });
	for (uint32_t i = 0; i < sc->ndev && !err; i++) {
		dl_dev_t id;

		err = dl_device_new(&t->core, sc->dev[i].parent, sc->dev[i].async, &id);
	}
	if (err)
		goto out;
	for (uint32_t w = 1; w <= t->K; w++) {
		if (pthread_create(&t->tid[w - 1], NULL, worker_main, &t->tw[w]) != 0) {
			err = -EAGAIN;
			goto out;
		}
		t->nthreads++;
	}

	for (uint32_t i = 0; i < sc->nop && i < DL_MAX_OPS && !err; i++) {
		const struct dl_sc_op *op = &sc->op[i];
		int64_t s0 = mono_ns();

		if (o->stop && *o->stop) {
			err = -EINTR;
			break;
		}
		t->op_index = i;
		t->opr = &r->op[r->nops++];
		t->opr->kind = op->kind;
		t->opr->start_ns = sim_now(t);
		t->opr->fail_dev = DL_NONE;
		switch (op->kind) {
		case DL_OP_SUSPEND:
			err = op_suspend(t);
			break;
		case DL_OP_RESUME:
			resume_phases(t, DL_PH_SUSPEND_NOIRQ);
			break;
		default:
			pthread_rwlock_wrlock(&t->graph);
			err = op_seq(t, op);
			pthread_rwlock_unlock(&t->graph);
			t->opr->makespan_ns = (int64_t)((double)(mono_ns() - s0) / t->scale);
			flush_events(t);
			break;
		}
		if (err == 1) {
			failed = 1;
			err = 0;
			if (r->fail_dev == DL_NONE) {
				r->err = t->opr->err;
				r->fail_dev = t->opr->fail_dev;
			}
		}
		r->makespan_ns += t->opr->makespan_ns;
		r->blocked_ns += t->opr->blocked_ns;
		r->work_ns += t->opr->work_ns;
		r->probe_attempts += t->opr->probe_attempts;
		r->probe_defers += t->opr->probe_defers;
		if (t->opr->peak_workers > r->peak_workers)
			r->peak_workers = t->opr->peak_workers;
		if (o->progress)
			o->progress(o->progress_ctx, i, sc->nop, r->events);
	}
out:
	if (t->tid) {
		pthread_mutex_lock(&t->mx);
		t->shutdown = true;
		pthread_cond_broadcast(&t->qcv);
		pthread_mutex_unlock(&t->mx);
		for (uint32_t w = 0; w < t->nthreads; w++)
			pthread_join(t->tid[w], NULL);
	}
	if (t->buf)
		flush_events(t);
	r->wall_ns = mono_ns() - wall0;
	if (err == -EINTR)
		r->status = "interrupted";
	else if (err)
		r->status = "error";
	else
		r->status = failed ? "failed" : "ok";
	thr_free(t);
	for (int i = 0; i < NSTRIPE; i++) {
		pthread_mutex_destroy(&t->smx[i]);
		pthread_cond_destroy(&t->scv[i]);
	}
	pthread_cond_destroy(&t->qcv);
	pthread_cond_destroy(&t->mcv);
	pthread_mutex_destroy(&t->mx);
	pthread_mutex_destroy(&t->fmx);
	pthread_rwlock_destroy(&t->graph);
	free(t);
	if (err)
		return err;
	return failed;
}
