/*
 * des_main.c - the main PM thread of the virtual-time backend: its walk
 * as a state machine (the next device and what it does with it are the
 * scheduler's, sched.h dl_sched_walk_next() and dl_sched_main_choose(); the
 * deferral walk's retries), its bursts (a callback, queueing an item, a hand-off
 * walk) and what follows each, and the devices left to it when MAX_WORK
 * items are pending.  des.c runs the items and the event loop.
 */
#include "sim/engine/des_backend.h"

/* ---- what is left to the main thread ---- */

/*
 * Ready @y was left to the main thread (ops->left_to_main: MAX_WORK items
 * are pending, sched.h dl_sched_queue_ready() put it on the ring): main
 * takes it once it is free, before going on with its walk, and queues it
 * then if it can or else runs it.
 */
void des_main_fallback(void *ctx, uint32_t y)
{
	struct sim *s = ctx;

	s->t[y].on_main = 1;    /* main's until des_main_kick() queues it */
	s->t[y].left = 1;
	if (s->mstate == M_DONE)
		s->mstate = M_IDLE;
	if (s->mstate == M_IDLE || s->mstate == M_WAIT_DEV)
		des_main_kick(s);
}

/* ---- the deferral walk (sched.h), on main's hot path: inlined here ---- */

/*
 * Main's walk claims position @y's item as it queues it (dl_sched_walk_claim()):
 * ST_QUEUED_START at once, before its queueing burst, so that a hand-off
 * meanwhile does not queue it twice.  Never claimed already: the walk read
 * its stage just now.
 */
static bool main_claim(void *ctx, uint32_t y)
{
	des_stage_set(&((struct sim *)ctx)->t[y], ST_QUEUED_START);
	return true;
}

/* What main's walk and the deferral walk read of this backend. */
static const struct dl_sched_ops main_ops = {
	.facts = des_task_facts, .defer_busy = des_defer_busy, .walk_claim = main_claim,
	.outstanding = des_inflight, .sync_fallback = des_sync_fallback,
};

/*
 * A walker of the deferral (main, or the kworker) takes position @d
 * (dl_sched_defer_take()): -1 if it is busy (a no-op); else it takes part
 * now, and its probe runs on the walker (MK_CALLBACK) or is queued
 * (MK_QUEUE).
 */
static inline int defer_take(struct sim *s, uint32_t d)
{
	enum dl_defer_act a = dl_sched_defer_take(&main_ops, &s->ps, s->pol, s, d,
						  s->core.dev[dev_at(s, d)].async);

	if (a == DL_DEFER_SKIP)
		return -1;
	if (!s->t[d].part) {
		s->t[d].part = 1;
		s->remaining++;
		s->nparts++;
	}
	des_stage_set(&s->t[d], ST_IDLE);
	return a == DL_DEFER_QUEUE ? MK_QUEUE : MK_CALLBACK;
}

int des_defer_take(struct sim *s, uint32_t d)
{
	return defer_take(s, d);
}

/*
 * Main's deferral walk (not in module context): its next step
 * (dl_sched_defer_next()), past the devices it finds busy; at
 * DL_RETRY_DEVICE the position it takes into *@d and what it does
 * (*@kind, defer_take()).  DL_RETRY_END too when a retry walk heard
 * Ctrl-C (s->stopping: the event loop returns -EINTR).
 */
static inline enum dl_retry_step defer_step(struct sim *s, uint32_t *d, int *kind)
{
	for (;;) {
		bool listed;
		enum dl_retry_step st = dl_sched_defer_next(&main_ops, &s->ps, &s->w, &s->widx,
							    &s->retry, &s->core, s->inflight == 0,
							    s, d, &listed);

		if (st != DL_RETRY_DEVICE)
			return st;
		if (listed && (*d = des_retry_pos(s, *d, &s->reorder_debt)) == DL_NONE) {
			if (s->stopping)
				return DL_RETRY_END;
			continue;   /* registered after the snapshot: none is, while probing */
		}
		if ((*kind = defer_take(s, *d)) >= 0)
			return DL_RETRY_DEVICE;
	}
}

/* ---- the main thread ---- */

/* Main asks for its CPU, to do @kind (MK_*) with s->mdev. */
static inline void main_burst(struct sim *s, int kind)
{
	s->mkind = kind;
	s->mstate = M_QUEUED;
	burst_request(s, DL_VCPU_MAIN, 0);
}

/*
 * M_WAIT_DEV: main is to run s->mdev's callback once its suppliers are
 * done: true to go on with the walk (it was skipped, or a device left to
 * main goes first), false to stop here (it waits, or its burst is asked for).
 */
static inline bool main_wait_dev(struct sim *s)
{
	if (s->t[s->mdev].stage == ST_DONE) {
		s->mstate = M_IDLE;     /* a supplier's probe failed: skip it */
		return true;
	}
	if (s->t[s->mdev].wait > 0 && s->ps.link_aware && !s->aborted) {
		/* it may wait for a device left to main (MAX_WORK): that one first */
		if (!dl_sched_left_first(&main_ops, &s->fb, s, s->mdev))
			return false;
		s->mstate = M_IDLE;
		return true;
	}
	main_burst(s, MK_CALLBACK);
	return false;
}

/*
 * The next device of main's walk into *@d, with what the deferral walk
 * does with it in *@kind (-1: not said yet); false when the walk ends or
 * waits for a drain (s->mstate says which).
 */
static inline bool main_next(struct sim *s, uint32_t *d, int *kind)
{
	*kind = -1;
	if (dl_sched_left_next(&main_ops, &s->fb, s, d))
		return true;    /* what was left to main first (MAX_WORK) */
	if (s->pk == PK_PROBE_DEFER && !s->module_ctx) {
		/* registration order, then late_initcall and the active list */
		enum dl_retry_step st = defer_step(s, d, kind);

		if (st != DL_RETRY_DEVICE) {
			s->mstate = st == DL_RETRY_DRAIN ? M_WAIT_DRAIN : M_DONE;
			return false;
		}
		return true;
	}
	if (!des_walk_next(s, d)) {
		s->mstate = M_DONE;
		return false;
	}
	return true;
}

/*
 * Main takes @d of a PM walk: queues its item (false: its burst is asked
 * for), leaves it (MAX_WORK: true, the walk goes on), or is to run its
 * callback itself (M_WAIT_DEV, true).
 */
static inline bool main_take(struct sim *s, uint32_t d)
{
	s->mdev = d;
	if (!s->t[d].on_main || s->t[d].left) {
		/* classic async, or one left to main: queue its item, MAX_WORK permitting */
		s->t[d].left = 0;
		switch (dl_sched_main_choose(&main_ops, s->pol, &s->ps, s,
					     s->widx <= s->w.nupfront)) {
		case DL_MAIN_QUEUE:
			s->t[d].on_main = 0;
			(void)dl_sched_walk_claim(&main_ops, &s->ps, s, d);
			main_burst(s, MK_QUEUE);
			return false;
		case DL_MAIN_LEAVE:
			return true;
		case DL_MAIN_RUN:
			s->t[d].on_main = 1;
			s->opr->sync_fallbacks++;
			break;
		}
	}
	s->mstate = M_WAIT_DEV;
	return true;
}

/* Advance the main thread as far as it can go without a CPU burst ending. */
void des_main_kick(struct sim *s)
{
	uint32_t d;
	int kind;

	for (;;) {
		if (s->mstate == M_WAIT_DEV) {
			if (main_wait_dev(s))
				continue;
			return;
		}
		if (s->mstate == M_QUEUED || s->mstate == M_BURST || s->mstate == M_SLEEP)
			return;
		if (s->aborted) {
			s->mstate = M_DONE;
			return;
		}
		if (!main_next(s, &d, &kind))
			return;
		if (s->pk == PK_PROBE_DEFER) {
			if (kind < 0 && (kind = defer_take(s, d)) < 0)
				continue;   /* busy: a no-op */
			s->mdev = d;
			main_burst(s, kind);
			return;
		}
		if (!main_take(s, d))
			return;
	}
}

void des_main_got_cpu(struct sim *s)
{
	int64_t len = dl_cost_main(&s->cost, s->ps.serial);

	s->mstate = M_BURST;
	if (s->mkind != MK_HANDOFF) {
		len += s->reorder_debt;
		s->reorder_debt = 0;
	}
	if (s->mkind == MK_HANDOFF) {
		len = des_handoff_len(s, s->mdev);
	} else if (s->mkind == MK_QUEUE) {
		len += dl_cost_queue(&s->cost, s->pk == PK_PROBE_DEFER || s->pk == PK_PROBE_READY);
	} else {
		bool deferred;

		des_stage_set(&s->t[s->mdev], ST_CB);
		len += des_callback_begin(s, s->mdev, len, &deferred);
		s->main_cb_deferred = deferred;
	}
	burst_start(s, DL_VCPU_MAIN, len);
}

/* Main's hand-off walk asks for a CPU. */
static void main_handoff(struct sim *s)
{
	s->mkind = MK_HANDOFF;
	s->mstate = M_QUEUED;
	burst_request(s, DL_VCPU_MAIN, 0);
}

/* Main's callback on position mdev is over, sleep included: its hand-off walk, or the next device. */
void des_main_callback_over(struct sim *s)
{
	uint32_t d = s->mdev;

	des_callback_end(s, d, s->main_cb_deferred);
	if (des_main_cb_over(s, d, s->main_cb_deferred))
		main_handoff(s);
}

/* Main's burst ended (its CPU is free again). */
void des_main_burst_done(struct sim *s)
{
	uint32_t d = s->mdev;
	int64_t sl;

	s->mstate = M_IDLE;
	if (s->mkind == MK_QUEUE) {
		/* the queued item */
		des_stage_set(&s->t[d], s->pk == PK_PROBE_DEFER ? ST_QUEUED_CB : ST_QUEUED_START);
		s->t[d].bk = dl_item_pays(&s->ps);
		s->inflight++;
		des_item_queue(s, d);
	} else if (s->mkind == MK_HANDOFF) {
		des_main_walk_over(s, d);
		return;
	} else if ((sl = cb_sleep(s, d, s->main_cb_deferred)) > 0) {
		s->mstate = M_SLEEP;
		dl_vcpu_sleep(&s->vc, DL_VCPU_MAIN, sl);
		return;
	} else {
		des_main_callback_over(s);
		return;
	}
	des_main_kick(s);
}
