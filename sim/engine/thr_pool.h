/*
 * thr_pool.h - the real-thread backend's scheduler (threads.c): a pool of
 * worker threads taking queued items, the K CPU permits every thread holds
 * while it computes, and time passing on a thread.  It knows items by
 * device id and priority only; what an item does is the backend's run()
 * hook, what a device of a phase is the backend's count (remaining).
 *
 * The pool manages its workers as the kernel's concurrency-managed pools
 * do: a queued item wakes a sleeping worker only when no worker runs
 * (nr_running: holds an item and does not sleep), none spins for work and
 * none is already on its way; a worker that is about to wait
 * (dl_pool_blocks()) wakes one for what is still queued, so that an item
 * never waits for a worker while one sleeps and every other is waiting.
 * One idle worker spins for work a while before it sleeps (shorter than
 * the machine's wake-up latency).  What the pool costs is measured by
 * BM_threads_overhead.
 *
 * CPUs are K permits, taken and given back without a lock (the main thread
 * first, as des.c's run queue); only a thread that found none sleeps.
 *
 * Time: the run's clock maps real ns to simulated ones (t0, scale).  A
 * thread's back-to-back waits chain from the previous deadline, not from
 * when it woke, so that timer overshoot does not add up; any blocking on
 * another thread breaks the chain (dl_thr_unchain()), so that real wake-up
 * latencies count.
 */
#ifndef DL_THR_POOL_H
#define DL_THR_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/engine/cost.h"
#include "sim/engine/heap.h"

#define DL_THR_POLL_NS 2000000   /* real ns: blocked threads look at the stop flag */

/* Real ns past this are clamped: a huge latency or --time-scale cannot overflow int64. */
#define DL_REAL_MAX ((int64_t)1 << 60)

/* The run's clock: simulated ns are (CLOCK_MONOTONIC - t0) / scale. */
struct dl_rclock {
	int64_t t0;
	double scale;
};

static inline int64_t dl_rclock_now(const struct dl_rclock *c)
{
	double x = (double)(dl_mono_ns() - c->t0) / c->scale;

	return x < (double)DL_REAL_MAX ? (int64_t)x : DL_REAL_MAX;
}

/* The real ns that @sim_ns simulated ones take. */
static inline int64_t dl_rclock_real(const struct dl_rclock *c, int64_t sim_ns)
{
	double x = (double)sim_ns * c->scale;

	return sim_ns <= 0 ? 0 : x < (double)DL_REAL_MAX ? (int64_t)x : DL_REAL_MAX;
}

struct dl_pool;

/* One thread of the engine: 0 the main PM thread, 1..P the pool's workers, others (racing ops). */
struct dl_rthread {
	struct dl_pool *pool;
	int id;
	int64_t cursor;         /* real ns: where the thread's last wait was to end */
	bool chained;           /* no blocking since: the next wait starts at cursor */
	int64_t blocked_ns;     /* real ns waited for other threads (the backend's figure) */
	uint64_t wakeups;
};

/* A queued item: a device's work, by (prio, seq); seq is unique, so the order is deterministic. */
struct dl_pool_item {
	int64_t prio;
	uint64_t seq;
	uint32_t dev;
	int64_t pushed;         /* real ns it was queued at, or its idle worker woken if later */
	bool back;              /* taken by a worker back from its previous item, never idle since */
};

static inline bool dl_pool_item_less(const struct dl_pool_item *a, const struct dl_pool_item *b)
{
	return a->prio < b->prio || (a->prio == b->prio && a->seq < b->seq);
}

DL_DEFINE_HEAP(dl_pool_heap, struct dl_pool_item, dl_pool_item_less, 2)

struct dl_pool {
	struct dl_rclock clock;
	uint32_t P;             /* workers */
	/*
	 * The backend: run() runs item @k on worker @w, without mx; true: a
	 * device of the phase finished (remaining is counted off).
	 * stop_seen(): has thread @w to stop sleeping (Ctrl-C)?  Asked once
	 * per slice of a long sleep.
	 */
	bool (*run)(void *ctx, struct dl_rthread *w, const struct dl_pool_item *k);
	bool (*stop_seen)(void *ctx, const struct dl_rthread *w);
	void *ctx;

	/*
	 * The queue and what the main thread waits for, under mx: outstanding,
	 * items queued or running; remaining, the backend's devices of the
	 * phase not finished yet.  mcv is broadcast when either drops to 0.
	 */
	pthread_mutex_t mx;
	pthread_cond_t qcv, mcv;
	struct dl_pool_heap q;
	uint64_t qseq;
	uint32_t outstanding, remaining;
	bool shutdown;
	/*
	 * Waking workers: a push wakes a sleeping worker only if no worker is
	 * running (nr_running), none spins for work (q_spinners, at most one)
	 * and none was woken and has not run yet (q_waking: the kernel wakes
	 * the first idle worker, again and again until it runs).  qlen mirrors
	 * q.n for the spinner, which reads it without mx.
	 */
	uint32_t q_sleepers, q_spinners, q_waking;
	int64_t woke_at;        /* real ns of the last such wake */
	atomic_uint nr_running;
	atomic_size_t qlen;
	atomic_bool stopping;   /* shutdown, for the spinner */

	/*
	 * CPUs: free_cpus permits; only a thread that found none sleeps (on
	 * ccv or main_ccv, under cmx), and a put wakes one only when
	 * cpu_waiters says someone sleeps.
	 */
	pthread_mutex_t cmx;
	pthread_cond_t ccv, main_ccv;
	atomic_int free_cpus;
	atomic_uint cpu_waiters;
	atomic_bool main_wants_cpu;

	pthread_t *tid;
	uint32_t nthreads;      /* workers started */
};

/* Set up @p for @P workers sharing @K CPUs (no thread started); 0 or -ENOMEM. */
int dl_pool_init(struct dl_pool *p, uint32_t K, uint32_t P);
/* Start worker @w (w->id in 1..P, w->pool @p); 0 or -EAGAIN. */
int dl_pool_spawn_worker(struct dl_pool *p, struct dl_rthread *w);
/* Let the workers finish what is queued and join them. */
void dl_pool_stop(struct dl_pool *p);
void dl_pool_fini(struct dl_pool *p);

/* The queue's lock, which also guards what the backend counts with it (remaining). */
static inline void dl_pool_lock(struct dl_pool *p)
{
	pthread_mutex_lock(&p->mx);
}

static inline void dl_pool_unlock(struct dl_pool *p)
{
	pthread_mutex_unlock(&p->mx);
}

/* Under mx: queue device @dev at @prio and wake a worker if need be; 0 or -ENOMEM. */
int dl_pool_push_locked(struct dl_pool *p, uint32_t dev, int64_t prio);
/* Under mx: wake the main thread (outstanding or remaining dropped to 0, a halt). */
void dl_pool_wake_main_locked(struct dl_pool *p);
/* Under mx: the main thread waits for a wake, or DL_THR_POLL_NS at most. */
void dl_pool_wait_main(struct dl_pool *p);
/* Under mx: a device of the phase is finished (remaining). */
void dl_pool_finished_locked(struct dl_pool *p);

/*
 * Pool worker @w, holding an item, is about to wait (for a completion, a
 * device lock, a probe end, or time to pass); it runs again.  Not for a
 * CPU: a kworker waiting for one is runnable and keeps nr_running (the
 * kernel wakes no other for it).  Any other thread: nothing.
 */
void dl_pool_blocks(struct dl_rthread *w);
void dl_pool_runs(struct dl_rthread *w);
/* The calling thread woke sleepers of a completion: it does not spin for work next. */
void dl_pool_woke_sleepers(void);

/*
 * dl_cpu_get - take a CPU permit (the main thread, id 0, before every
 * worker); returns 0, or the real time it got one if it had to wait.
 * dl_cpu_put - give it back.
 */
int64_t dl_cpu_get(struct dl_rthread *w);
void dl_cpu_put(struct dl_rthread *w);

/*
 * dl_thr_sleep_until - sleep until the real time @deadline (a pool worker
 * blocks meanwhile), returning early if stop_seen() says so.
 * dl_thr_pass_until - the same, the next wait chaining from @deadline.
 * dl_thr_take_time - let @sim_ns simulated ns pass on @w.
 */
void dl_thr_sleep_until(struct dl_rthread *w, int64_t deadline);
void dl_thr_pass_until(struct dl_rthread *w, int64_t deadline);
void dl_thr_take_time(struct dl_rthread *w, int64_t sim_ns);

/* Where @w's next wait starts: its last deadline if chained, else now. */
static inline int64_t dl_thr_from_now(const struct dl_rthread *w)
{
	return w->chained ? w->cursor : dl_mono_ns();
}

/* @w blocked on another thread: its next wait starts when it woke. */
static inline void dl_thr_unchain(struct dl_rthread *w)
{
	w->chained = false;
}

/* pthread_cond_timedwait() for DL_THR_POLL_NS at most, so that a stop is seen. */
void dl_thr_timed_wait(pthread_cond_t *cv, pthread_mutex_t *m);
/* The calling thread's timer slack: 1 ns (sleeps end when asked). */
void dl_thr_precise_timers(void);
/*
 * dl_thr_spawn - pthread_create() with every signal blocked in the new
 * thread, so that Ctrl-C reaches the main thread, the only reader of the
 * stop flag.
 */
int dl_thr_spawn(pthread_t *tid, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

#endif
