/*
 * thr_seq.c - the real-thread backend's sequential work: the adaptors that
 * run seqops.c's ops on a thread (its locks, its time, its samples and
 * faults), the registration-order probe with the deferred-probe retry,
 * device_block_probing() around suspend and resume, and the racing thread
 * that issues "concurrent" ops beside the op they follow.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "sim/engine/retry.h"
#include "sim/engine/run.h"
#include "sim/engine/thr_backend.h"

/* device_block_probing(), in dpm_prepare(): a racing probe defers until dpm_complete(). */
void thr_block_probing(struct thr *t)
{
	core_lock(&t->tw[0]);
	t->probes_blocked = true;
	core_unlock(&t->tw[0]);
}

/*
 * device_unblock_probing(), in dpm_complete(): the probes deferred meanwhile
 * are retried (driver_deferred_probe_trigger()) before the op ends.
 */
void thr_unblock_probing(struct thr *t)
{
	struct tw *m = &t->tw[0];
	struct dl_seq q;
	int64_t s0 = dl_mono_ns();

	core_lock(m);
	t->probes_blocked = false;
	dl_deferred_trigger(&t->core);
	core_unlock(m);
	thr_seq_bind(m, &q);
	dl_thr_unchain(&m->th);
	m->taken_sim = 0;
	dl_seq_deferred(&q);
	if (m->taken_sim) {
		t->opr->makespan_ns += (int64_t)((double)(dl_mono_ns() - s0) / t->pool.clock.scale);
		t->opr->lower_bound_ns += m->taken_sim;
		t->opr->critical_path_ns += m->taken_sim;
		t->opr->work_ns += m->taken_sim;
	}
}

/* ---- sequential ops (seqops.c), from any thread ---- */

static void seq_emit(void *ctx, unsigned kind, uint32_t dev, unsigned phase, int err)
{
	struct tw *w = ctx;

	emit(w->t, w->th.id, kind, dev, phase, err);
	if (kind == DL_EV_PROBE_START)
		atomic_store(&w->t->sy.started[dev], 1);
	if (kind == DL_EV_PROBE_END)
		dl_probe_ended(&w->t->sy);
}

static void seq_take_time(void *ctx, int64_t ns)
{
	struct tw *w = ctx;

	w->taken_sim += ns;
	dl_thr_take_time(&w->th, ns);
}

static int64_t seq_sample(void *ctx, uint32_t dev, unsigned key)
{
	struct tw *w = ctx;

	return sample(w->t, w->op_index, dev, key);
}

static int seq_fault(void *ctx, uint32_t dev, unsigned key)
{
	struct tw *w = ctx;

	return fault_for(w->t, dev, key);
}

static void seq_lock(void *ctx)
{
	core_lock(ctx);
}

static void seq_unlock(void *ctx)
{
	core_unlock(ctx);
}

static void seq_dev_lock(void *ctx, uint32_t d)
{
	struct tw *w = ctx;

	dl_dev_lock(&w->t->sy, &w->th, d);
}

static void seq_dev_unlock(void *ctx, uint32_t d)
{
	dl_dev_unlock(&((struct tw *)ctx)->t->sy, d);
}

static bool seq_probe_blocked(void *ctx)
{
	return ((struct tw *)ctx)->t->probes_blocked;
}

/* wait_for_device_probe(), called with graph held: drop it until a probe ends. */
static void seq_wait_probe(void *ctx)
{
	struct tw *w = ctx;
	unsigned gen = dl_probe_gen(&w->t->sy);

	core_unlock(w);
	dl_wait_probe(&w->t->sy, &w->th, gen);
	core_lock(w);
}

/* A probe callback's sleep (dl_seq.sleep): the thread holds a CPU, and frees it meanwhile. */
void thr_sleep_off_cpu(void *ctx, int64_t ns)
{
	struct tw *w = ctx;

	dl_cpu_put(&w->th);
	dl_thr_take_time(&w->th, ns);
	dl_cpu_get(&w->th);
}

void thr_seq_bind(struct tw *w, struct dl_seq *q)
{
	*q = (struct dl_seq){
		.core = &w->t->core, .sc = w->t->sc, .opr = w->opr,
		.ignore_links = !w->t->pol->link_aware, .defer_ns = w->t->cost.check_ns,
		.rpm_ns = w->t->cost.rpm_ns, .pmwq_wake_ns = w->t->cost.wake_ns,
		.ctx = w, .emit = seq_emit, .take_time = seq_take_time,
		.sample = seq_sample, .fault = seq_fault,
		.lock = seq_lock, .unlock = seq_unlock, .dev_lock = seq_dev_lock,
		.dev_unlock = seq_dev_unlock, .wait_probe = seq_wait_probe,
		.probe_blocked = seq_probe_blocked,
	};
}

/* ---- probe ---- */

/*
 * Registration order, the deferred-probe retry (sched.h
 * dl_sched_defer_next(), dl_sched_defer_take()); async drivers on workers
 * (kernel-async).
 */
int thr_probe_deferral(struct thr *t)
{
	struct tw *m = &t->tw[0];
	struct dl_seq q;
	struct dl_retry r;
	uint32_t i = 0;

	thr_seq_bind(m, &q);
	dl_retry_start(&r);
	while (!dl_halted(&t->sy) && !dl_poll_stop(&t->sy)) {
		enum dl_retry_step st;
		bool idle = false, listed, async = false;
		int64_t walk = 0;
		uint32_t d;

		/* idle once the probes in flight are drained */
		for (;; idle = true) {
			core_lock(m);
			st = dl_sched_defer_next(&thr_sched, &t->ps, &t->w, &i, &r, &t->core, idle, t,
						 &d, &listed);
			/*
			 * under the lock: async shares its byte with deferred, which a
			 * worker's bind writes (dl_deferred_add()); a device taken off
			 * the active list pays device_pm_move_to_tail()'s walk and the
			 * retry path (run.h), read off the core here
			 */
			if (st == DL_RETRY_DEVICE) {
				async = t->core.dev[d].async;
				if (listed)
					walk = dl_op_retry_walk(t->opr, &t->cost, &t->core, d);
			}
			core_unlock(m);
			if (st != DL_RETRY_DRAIN)
				break;
			thr_wait_drain(t, false);
		}
		if (st == DL_RETRY_END)
			break;
		/*
		 * on main's CPU, as the DES charges it (des_retry_pos()): whether
		 * the device is then probed, queued or found busy
		 */
		thr_main_spend(m, walk);
		switch (dl_sched_defer_take(&thr_sched, &t->ps, t->pol, t, d, async)) {
		case DL_DEFER_SKIP:
			break;
		case DL_DEFER_QUEUE:
			atomic_store(&t->queued[d], 1);
			thr_main_visit(t, m, d, true);
			break;
		case DL_DEFER_RUN:
			dl_cpu_get(&m->th);
			dl_thr_take_time(&m->th, t->cost.main_ns);
			q.sleep = thr_sleep_off_cpu;
			dl_seq_probe_one(&q, d);
			q.sleep = NULL;
			dl_cpu_put(&m->th);
			break;
		}
	}
	return dl_poll_stop(&t->sy) ? -EINTR : 0;   /* thr_run_phase() drains the items */
}

/* ---- script ops ---- */

/* A sequential op on thread @w: its bound is the simulated time it took. */
int thr_op_seq(struct thr *t, struct tw *w, const struct dl_sc_op *op)
{
	struct dl_seq q;
	int64_t s0 = dl_mono_ns();
	int err;

	(void)t;
	dl_thr_unchain(&w->th);
	w->taken_sim = 0;
	thr_seq_bind(w, &q);
	err = dl_seq_op(&q, op);
	w->opr->makespan_ns = (int64_t)((double)(dl_mono_ns() - s0) / w->t->pool.clock.scale);
	w->opr->lower_bound_ns = w->taken_sim;
	w->opr->critical_path_ns = w->taken_sim;
	w->opr->work_ns = w->taken_sim;
	return err;
}

void *thr_racer_main(void *arg)
{
	struct racer *rc = arg;
	struct thr *t = rc->t;
	struct tw *w = &t->tw[t->nthr - 1];

	dl_thr_precise_timers();
	for (uint32_t i = rc->first; i < rc->end && atomic_load(&t->sy.halt) != DL_HALT_STOP; i++) {
		const struct dl_sc_op *op = &t->sc->op[i];
		int64_t at = rc->start_real + dl_rclock_real(&t->pool.clock, op->delay_ns);

		/* in slices, so that a stop is seen */
		while (dl_mono_ns() < at && atomic_load(&t->sy.halt) != DL_HALT_STOP)
			dl_thr_sleep_until(&w->th, dl_mono_ns() + DL_THR_POLL_NS < at ? dl_mono_ns() + DL_THR_POLL_NS : at);
		if (atomic_load(&t->sy.halt) == DL_HALT_STOP)
			break;
		dl_thr_unchain(&w->th);
		w->op_index = i;
		w->opr = &rc->opr[i - rc->first];
		w->opr->start_ns = dl_rclock_now(&t->pool.clock);
		thr_op_seq(t, w, op);
	}
	rc->end_real = dl_mono_ns();
	return NULL;
}
