/*
 * thr_sync.h - what the real-thread backend's threads (threads.c) wait on
 * besides CPUs, as the kernel's: per device a completion per phase
 * (dpm_wait() / complete_all()), a recursive device lock (device_lock(),
 * held across a probe, unbind and removal), the probe ends that
 * wait_for_device_probe() waits for, and the halt flag that wakes them all
 * (a failing callback, Ctrl-C).  A thread that waits here blocks its pool
 * worker (dl_pool_blocks()) and breaks its time chain (dl_thr_unchain()).
 *
 * A completion is an atomic flag plus one of DL_NSTRIPE striped
 * mutex/condvar pairs, so that a broadcast wakes few waiters; complete_all()
 * takes the stripe's mutex only when someone sleeps on it.  Lock order:
 * device locks, then the backend's graph lock, then the small mutexes
 * (stripes, probe ends); nobody waits for a CPU while holding any lock.
 */
#ifndef DL_THR_SYNC_H
#define DL_THR_SYNC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/engine/thr_pool.h"

#define DL_NSTRIPE 1024          /* completion mutex/condvar pairs: few waiters per broadcast */

enum { DL_HALT_NONE, DL_HALT_ABORT, DL_HALT_STOP };

struct dl_rsync {
	struct dl_pool *pool;   /* its main condvar is woken on a halt */
	atomic_int *stop;       /* set asynchronously (Ctrl-C; dl_engine_opts.stop), or NULL */
	atomic_int halt;        /* DL_HALT_*: nothing new starts, waiters wake */
	/*
	 * The main thread, waiting for a completion, does this now and then
	 * (the backend's: queue what was left to it); may be NULL.
	 */
	void (*main_waits)(void *ctx);
	void *ctx;

	/* completions, per device: done, when (real ns), and whether its callback started */
	atomic_uchar *done, *started;
	atomic_int_fast64_t *done_at;
	pthread_mutex_t smx[DL_NSTRIPE];
	pthread_cond_t scv[DL_NSTRIPE];
	atomic_uint swaiters[DL_NSTRIPE];  /* threads sleeping on scv[i]: complete_all() skips the rest */

	/* device locks */
	pthread_mutex_t dmx;
	pthread_cond_t dcv;
	int16_t *dev_owner;
	uint16_t *dev_depth;
	uint32_t dev_waiters;

	/* probe ends, for wait_for_device_probe() */
	pthread_mutex_t pmx;
	pthread_cond_t pcv;
	atomic_uint probe_gen, probe_waiters;
};

/* Set up @s for @n devices over pool @pool; 0 or -ENOMEM (dl_rsync_fini() either way). */
int dl_rsync_init(struct dl_rsync *s, struct dl_pool *pool, uint32_t n, atomic_int *stop);
void dl_rsync_fini(struct dl_rsync *s);

static inline bool dl_halted(struct dl_rsync *s)
{
	return atomic_load(&s->halt) != DL_HALT_NONE;
}

/* Set the halt flag to @how (DL_HALT_ABORT: unless already set) and wake every waiter. */
void dl_halt(struct dl_rsync *s, int how);
/* Main thread only: the stop flag (Ctrl-C) becomes DL_HALT_STOP; is it set? */
bool dl_poll_stop(struct dl_rsync *s);
/* Has thread @w to stop (the main thread polls the stop flag, the others see the halt)? */
bool dl_stop_seen(struct dl_rsync *s, const struct dl_rthread *w);

/* dpm_wait(): thread @w waits for @y's completion; the real time it completed (0: it had, or halt). */
int64_t dl_wait_done(struct dl_rsync *s, struct dl_rthread *w, uint32_t y);
/* complete_all(): @d's completion, now. */
void dl_complete_all(struct dl_rsync *s, uint32_t d);

/* device_lock(@d) by thread @w: recursive, so that an unbind may remove() the same device. */
void dl_dev_lock(struct dl_rsync *s, struct dl_rthread *w, uint32_t d);
void dl_dev_unlock(struct dl_rsync *s, uint32_t d);

/* A probe ended: wake wait_for_device_probe(). */
void dl_probe_ended(struct dl_rsync *s);
/*
 * wait_for_device_probe() on thread @w: until a probe ends after the
 * generation @gen, read (dl_probe_gen()) before the caller let go of the
 * lock the probe needs (the graph).
 */
static inline unsigned dl_probe_gen(struct dl_rsync *s)
{
	return atomic_load(&s->probe_gen);
}

void dl_wait_probe(struct dl_rsync *s, struct dl_rthread *w, unsigned gen);

#endif
