/*
 * thr_sync.c - completions, device locks, probe ends and the halt flag of
 * the real-thread backend (thr_sync.h says what each is and why).
 */
#include <errno.h>
#include <stdlib.h>

#include "sim/engine/thr_sync.h"

#define WAIT_SPIN_NS 20000       /* real ns: a wait for a completion spins this long before it sleeps */

int dl_rsync_init(struct dl_rsync *s, struct dl_pool *pool, uint32_t n, atomic_int *stop)
{
	s->pool = pool;
	s->stop = stop;
	atomic_init(&s->halt, DL_HALT_NONE);
	atomic_init(&s->probe_gen, 0);
	atomic_init(&s->probe_waiters, 0);
	pthread_mutex_init(&s->dmx, NULL);
	pthread_mutex_init(&s->pmx, NULL);
	pthread_cond_init(&s->dcv, NULL);
	pthread_cond_init(&s->pcv, NULL);
	for (int i = 0; i < DL_NSTRIPE; i++) {
		pthread_mutex_init(&s->smx[i], NULL);
		pthread_cond_init(&s->scv[i], NULL);
		atomic_init(&s->swaiters[i], 0);
	}
	s->done = calloc(n + 1, sizeof(*s->done));
	s->started = calloc(n + 1, sizeof(*s->started));
	s->done_at = calloc(n + 1, sizeof(*s->done_at));
	s->dev_owner = calloc(n + 1, sizeof(*s->dev_owner));
	s->dev_depth = calloc(n + 1, sizeof(*s->dev_depth));
	if (!s->done || !s->started || !s->done_at || !s->dev_owner || !s->dev_depth)
		return -ENOMEM;
	return 0;
}

void dl_rsync_fini(struct dl_rsync *s)
{
	free(s->done);
	free(s->started);
	free(s->done_at);
	free(s->dev_owner);
	free(s->dev_depth);
	for (int i = 0; i < DL_NSTRIPE; i++) {
		pthread_mutex_destroy(&s->smx[i]);
		pthread_cond_destroy(&s->scv[i]);
	}
	pthread_cond_destroy(&s->dcv);
	pthread_cond_destroy(&s->pcv);
	pthread_mutex_destroy(&s->dmx);
	pthread_mutex_destroy(&s->pmx);
}

/* ---- the halt flag ---- */

/* Wake every thread that waits for something, so that it sees the halt flag. */
static void wake_all(struct dl_rsync *s)
{
	for (int i = 0; i < DL_NSTRIPE; i++) {
		pthread_mutex_lock(&s->smx[i]);
		pthread_cond_broadcast(&s->scv[i]);
		pthread_mutex_unlock(&s->smx[i]);
	}
	dl_pool_lock(s->pool);
	dl_pool_wake_main_locked(s->pool);
	dl_pool_unlock(s->pool);
	pthread_mutex_lock(&s->pmx);
	pthread_cond_broadcast(&s->pcv);
	pthread_mutex_unlock(&s->pmx);
}

void dl_halt(struct dl_rsync *s, int how)
{
	if (how == DL_HALT_ABORT) {
		int none = DL_HALT_NONE;

		atomic_compare_exchange_strong(&s->halt, &none, DL_HALT_ABORT);
	} else {
		atomic_store(&s->halt, how);
	}
	wake_all(s);
}

bool dl_poll_stop(struct dl_rsync *s)
{
	if (s->stop && *s->stop && atomic_load(&s->halt) != DL_HALT_STOP)
		dl_halt(s, DL_HALT_STOP);
	return atomic_load(&s->halt) == DL_HALT_STOP;
}

bool dl_stop_seen(struct dl_rsync *s, const struct dl_rthread *w)
{
	return w->id == 0 ? dl_poll_stop(s) : atomic_load(&s->halt) == DL_HALT_STOP;
}

/* ---- completions ---- */

int64_t dl_wait_done(struct dl_rsync *s, struct dl_rthread *w, uint32_t y)
{
	pthread_mutex_t *m = &s->smx[y % DL_NSTRIPE];
	int64_t b0;

	if (atomic_load_explicit(&s->done[y], memory_order_acquire) || dl_halted(s))
		return 0;
	b0 = dl_mono_ns();
	dl_thr_unchain(w);
	/*
	 * If what we wait for is running (its callback started), it may well
	 * end within a wake-up latency: spin that long before sleeping (a
	 * device not started yet is not spun for: its spinners would only
	 * take CPUs from those it waits for).  A wait ended by the spin counts
	 * as one all the same (blocked_ns, wakeups).
	 */
	while (atomic_load(&s->started[y]) && !atomic_load(&s->done[y]) && !dl_halted(s) &&
	       dl_mono_ns() - b0 < WAIT_SPIN_NS)
		;
	if (atomic_load(&s->done[y]) || dl_halted(s))
		goto out;
	dl_pool_blocks(w);
	pthread_mutex_lock(m);
	/* counted before done[] is read again: dl_complete_all() stores done[] first, then reads this */
	atomic_fetch_add(&s->swaiters[y % DL_NSTRIPE], 1);
	while (!atomic_load(&s->done[y]) && !dl_halted(s)) {
		if (w->id == 0) {
			pthread_mutex_unlock(m);
			dl_poll_stop(s);
			if (s->main_waits)
				s->main_waits(s->ctx);   /* @y may be one of them */
			pthread_mutex_lock(m);
			if (dl_halted(s))
				break;
			dl_thr_timed_wait(&s->scv[y % DL_NSTRIPE], m);
		} else {
			pthread_cond_wait(&s->scv[y % DL_NSTRIPE], m);
		}
	}
	atomic_fetch_sub(&s->swaiters[y % DL_NSTRIPE], 1);
	pthread_mutex_unlock(m);
	dl_pool_runs(w);
out:
	w->blocked_ns += dl_mono_ns() - b0;
	w->wakeups++;
	return atomic_load(&s->done_at[y]);
}

void dl_complete_all(struct dl_rsync *s, uint32_t d)
{
	pthread_mutex_t *m = &s->smx[d % DL_NSTRIPE];

	atomic_store(&s->done_at[d], dl_mono_ns());
	atomic_store(&s->done[d], 1);
	if (!atomic_load(&s->swaiters[d % DL_NSTRIPE]))
		return;   /* nobody sleeps on the stripe; a waiter counted later sees done[] */
	pthread_mutex_lock(m);
	pthread_cond_broadcast(&s->scv[d % DL_NSTRIPE]);
	pthread_mutex_unlock(m);
	dl_pool_woke_sleepers();
}

/* ---- device locks ---- */

void dl_dev_lock(struct dl_rsync *s, struct dl_rthread *w, uint32_t d)
{
	pthread_mutex_lock(&s->dmx);
	while (s->dev_depth[d] && s->dev_owner[d] != w->id) {
		s->dev_waiters++;
		dl_thr_unchain(w);
		dl_pool_blocks(w);
		pthread_cond_wait(&s->dcv, &s->dmx);
		dl_pool_runs(w);
		s->dev_waiters--;
	}
	s->dev_owner[d] = (int16_t)w->id;
	s->dev_depth[d]++;
	pthread_mutex_unlock(&s->dmx);
}

void dl_dev_unlock(struct dl_rsync *s, uint32_t d)
{
	pthread_mutex_lock(&s->dmx);
	if (--s->dev_depth[d] == 0 && s->dev_waiters)
		pthread_cond_broadcast(&s->dcv);
	pthread_mutex_unlock(&s->dmx);
}

/* ---- probe ends ---- */

/* Dekker on two seq_cst counters: probe_gen, probe_waiters. */
void dl_probe_ended(struct dl_rsync *s)
{
	atomic_fetch_add(&s->probe_gen, 1);
	if (atomic_load(&s->probe_waiters)) {
		pthread_mutex_lock(&s->pmx);
		pthread_cond_broadcast(&s->pcv);
		pthread_mutex_unlock(&s->pmx);
	}
}

void dl_wait_probe(struct dl_rsync *s, struct dl_rthread *w, unsigned gen)
{
	dl_thr_unchain(w);
	dl_pool_blocks(w);
	pthread_mutex_lock(&s->pmx);
	atomic_fetch_add(&s->probe_waiters, 1);
	while (atomic_load(&s->probe_gen) == gen)
		dl_thr_timed_wait(&s->pcv, &s->pmx);
	atomic_fetch_sub(&s->probe_waiters, 1);
	pthread_mutex_unlock(&s->pmx);
	dl_pool_runs(w);
}
