/*
 * des_retry.c - the deferred-probe kworker of the virtual-time backend:
 * in module context (dl_engine_opts.probe_module) deferred_probe_work_func()
 * walks the active list on a kworker of its own beside the main thread,
 * and both walkers pay device_pm_move_to_tail() for every retry.
 */
#include "sim/core/dl_sat.h"
#include "sim/engine/des_backend.h"
#include "sim/engine/run.h"

/* ---- the walkers' retries (main, and the kworker in module context) ---- */

/*
 * A retry walk skips the devices bound or probing meanwhile without an event
 * between them (des_main_kick(), des_retry_kick()), each with its reorder
 * walk: in module context one such storm ran 1.5 s between the event loop's
 * polls.  So the walk polls the stop flag too, every 64 retries, and ends
 * (s->stopping; the event loop then returns -EINTR).
 */
#define RETRY_STOP_EVERY 64u

static bool retry_stop_due(struct sim *s)
{
	if (!s->stopping && ++s->retries % RETRY_STOP_EVERY == 0 && s->o->stop && *s->o->stop)
		s->stopping = true;
	return s->stopping;
}

/*
 * The position of device @d, which the deferred-probe retry walk just took
 * off the active list (DL_NONE: none, or the run is to stop: s->stopping).
 * Prefetches, a few entries ahead, the position and then the task that
 * des_main_kick() reads (the core prefetches its own device and link).
 */
uint32_t des_retry_pos(struct sim *s, uint32_t d, int64_t *debt)
{
	uint32_t a;

	if (d == DL_NONE || retry_stop_due(s))
		return DL_NONE;
	/*
	 * device_pm_move_to_tail() before the retry, and the retry path around
	 * it (cost.h retry_ns): paid by the walk's next burst
	 */
	*debt = dl_sat_add_i64(*debt, dl_op_retry_walk(s->opr, &s->cost, &s->core, d));
	if ((a = dl_deferred_peek(&s->core, 16)) != DL_NONE)
		dl_prefetch(&s->g.pos[a]);
	if ((a = dl_deferred_peek(&s->core, 8)) != DL_NONE && s->g.pos[a] != DL_NONE)
		dl_prefetch(&s->t[s->g.pos[a]]);
	return s->g.pos[d];
}

/* ---- the deferred-probe kworker (probe in module context) ---- */

/*
 * deferred_probe_work_func() on its kworker, beside the registration walk:
 * the next device of the active list (dl_deferred_next() moves it to the
 * tail of dpm_list first), retried by bus_probe_device_deferred(): a sync
 * driver's probe runs on the kworker itself, an async driver's is queued
 * (__device_attach(dev, true): async_schedule_dev_nocall()).  A device
 * bound or probing meanwhile is a no-op.  Idle once the list is empty,
 * until a bind queues the work again (des_retry_poke()).
 */
void des_retry_kick(struct sim *s)
{
	uint32_t d;
	int kind;

	do {
		d = des_retry_pos(s, dl_deferred_next(&s->core), &s->r_debt);
		if (d == DL_NONE) {
			s->rstate = R_IDLE;
			return;
		}
	} while ((kind = des_defer_take(s, d)) < 0);
	s->rdev = d;
	s->rkind = kind;
	s->rstate = R_QUEUED;
	burst_request(s, DL_VCPU_RETRY, 0);
}

/*
 * driver_deferred_probe_trigger() after a bind (or at the op's start):
 * queue_work() wakes the kworker if it is idle and the active list is not
 * empty; a busy one walks on to what was appended.
 */
void des_retry_poke(struct sim *s)
{
	if (!s->module_ctx || s->rstate != R_IDLE || dl_deferred_peek(&s->core, 0) == DL_NONE)
		return;
	s->r_wake = true;
	des_retry_kick(s);
}

void des_retry_got_cpu(struct sim *s)
{
	int64_t len = s->cost.main_ns + s->r_debt;

	s->r_debt = 0;
	if (s->r_wake) {
		len += s->cost.wake_ns;
		s->r_wake = false;
	}
	s->rstate = R_BURST;
	if (s->rkind == MK_QUEUE) {
		len += dl_cost_queue(&s->cost, true);   /* an async probe */
	} else {
		bool deferred;

		des_stage_set(&s->t[s->rdev], ST_CB);
		len += des_callback_begin(s, s->rdev, len, &deferred);
		s->r_cb_deferred = deferred;
	}
	burst_start(s, DL_VCPU_RETRY, len);
}

/* The kworker's probe of rdev is over, sleep included: the next retry. */
void des_retry_callback_over(struct sim *s)
{
	uint32_t d = s->rdev;

	s->rstate = R_BURST;    /* busy: its own bind does not poke it */
	des_callback_end(s, d, s->r_cb_deferred);
	des_device_finished(s, d);
	des_retry_kick(s);
}

void des_retry_burst_done(struct sim *s)
{
	uint32_t d = s->rdev;
	int64_t sl;

	if (s->rkind == MK_QUEUE) {
		des_stage_set(&s->t[d], ST_QUEUED_CB);
		s->t[d].bk = BK_NONE;
		s->inflight++;
		des_item_queue(s, d);
		des_retry_kick(s);
		return;
	}
	if ((sl = cb_sleep(s, d, s->r_cb_deferred)) > 0) {
		s->rstate = R_SLEEP;
		dl_vcpu_sleep(&s->vc, DL_VCPU_RETRY, sl);
		return;
	}
	des_retry_callback_over(s);
}
