/*
 * thr_pool.c - the real-thread backend's scheduler: the worker pool and
 * its concurrency management, the K CPU permits, time passing on a thread
 * (thr_pool.h says what each does and why).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "sim/engine/thr_pool.h"

#define SPIN_NS 3000             /* real ns: the end of every wait is spun, not slept */
#define IDLE_SPIN_NS 25000       /* real ns: a worker left without work looks for more before it sleeps */
#define STOP_SLICE_NS 50000000   /* real ns: a long sleep looks for a stop this often */
#define STACK_BYTES (512 * 1024)

/* This thread woke sleepers of a completion since it took its item: it does not spin for work. */
static _Thread_local bool woke_waiters;

void dl_pool_woke_sleepers(void)
{
	woke_waiters = true;
}

/* ---- time ---- */

/*
 * Sleep until the real time @deadline: an absolute clock_nanosleep (no drift
 * from a late wake-up) to just before it, then a spin (the timer's wake-up
 * latency is tens of us; the threads' timer slack is 1 ns).  A long sleep is
 * cut into STOP_SLICE_NS slices, and no slice starts after a stop, so that
 * SIGINT and SIGTERM are honoured within 100 ms whatever the latency and time
 * scale (and the sleeps still to come after a stop are not slept).
 */
void dl_thr_sleep_until(struct dl_rthread *w, int64_t deadline)
{
	struct dl_pool *p = w->pool;
	int64_t now = dl_mono_ns();
	bool slept = deadline - now > SPIN_NS;

	if (slept)
		dl_pool_blocks(w);
	while (deadline - now > SPIN_NS) {
		int64_t to = deadline - SPIN_NS < now + STOP_SLICE_NS ? deadline - SPIN_NS :
			     now + STOP_SLICE_NS;
		struct timespec ts = { to / 1000000000, to % 1000000000 };

		if (p->stop_seen(p->ctx, w)) {
			if (slept)
				dl_pool_runs(w);
			return;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		now = dl_mono_ns();
	}
	if (slept)
		dl_pool_runs(w);
	while (dl_mono_ns() < deadline)
		;
}

void dl_thr_pass_until(struct dl_rthread *w, int64_t deadline)
{
	dl_thr_sleep_until(w, deadline);
	w->cursor = deadline;
	w->chained = true;
}

void dl_thr_take_time(struct dl_rthread *w, int64_t sim_ns)
{
	if (sim_ns > 0)
		dl_thr_pass_until(w, dl_thr_from_now(w) + dl_rclock_real(&w->pool->clock, sim_ns));
}

void dl_thr_timed_wait(pthread_cond_t *cv, pthread_mutex_t *m)
{
	int64_t to = dl_mono_ns() + DL_THR_POLL_NS;
	struct timespec ts = { to / 1000000000, to % 1000000000 };

	pthread_cond_timedwait(cv, m, &ts);
}

void dl_thr_precise_timers(void)
{
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

int dl_thr_spawn(pthread_t *tid, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(tid, a, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* ---- the pool's concurrency management (nr_running) ---- */

/* Under mx, work queued: wake a sleeping worker unless one runs, spins or is on its way. */
static void wake_worker_locked(struct dl_pool *p)
{
	if (p->q_sleepers && !p->q_spinners && !p->q_waking && !atomic_load(&p->nr_running)) {
		p->q_waking++;
		p->woke_at = dl_mono_ns();
		pthread_cond_signal(&p->qcv);
	}
}

static bool pool_worker(const struct dl_rthread *w)
{
	return w->id >= 1 && (uint32_t)w->id <= w->pool->P;
}

/*
 * If @w was the last worker running, an item still queued gets a sleeping
 * worker now rather than when @w comes back (wq_worker_sleeping()).  The
 * decrement comes before mx is taken and q.n read; dl_pool_push_locked()
 * writes q.n under mx and then reads nr_running: one of the two sees the
 * other.
 */
void dl_pool_blocks(struct dl_rthread *w)
{
	struct dl_pool *p = w->pool;

	if (!pool_worker(w) || atomic_fetch_sub(&p->nr_running, 1) != 1)
		return;
	if (!atomic_load(&p->qlen))
		return;
	pthread_mutex_lock(&p->mx);
	if (p->q.n)
		wake_worker_locked(p);
	pthread_mutex_unlock(&p->mx);
}

void dl_pool_runs(struct dl_rthread *w)
{
	if (pool_worker(w))
		atomic_fetch_add(&w->pool->nr_running, 1);
}

/* ---- CPUs: K permits, the main thread first (des.c's run queue) ---- */

/*
 * One permit if there is one for this thread: workers leave it to a main
 * thread that waits for one.
 */
static bool cpu_try(struct dl_pool *p, bool main)
{
	int f = atomic_load(&p->free_cpus);

	while (f > 0 && (main || !atomic_load(&p->main_wants_cpu)))
		if (atomic_compare_exchange_weak(&p->free_cpus, &f, f - 1))
			return true;
	return false;
}

/*
 * The fast path is one compare-and-swap; a thread that finds no permit
 * counts itself in cpu_waiters (then looks again: dl_cpu_put() adds the
 * permit first and reads cpu_waiters after, both seq_cst, so that one of
 * them sees the other) and sleeps.
 */
int64_t dl_cpu_get(struct dl_rthread *w)
{
	struct dl_pool *p = w->pool;
	bool main = w->id == 0;

	bool waited = false;

	if (cpu_try(p, main))
		return 0;
	pthread_mutex_lock(&p->cmx);
	atomic_fetch_add(&p->cpu_waiters, 1);
	if (main)
		atomic_store(&p->main_wants_cpu, true);
	while (!cpu_try(p, main)) {
		dl_thr_unchain(w);
		waited = true;
		pthread_cond_wait(main ? &p->main_ccv : &p->ccv, &p->cmx);
	}
	if (main)
		atomic_store(&p->main_wants_cpu, false);
	atomic_fetch_sub(&p->cpu_waiters, 1);
	/* permits left: a worker held back for main, or one more woken by a put */
	if (atomic_load(&p->free_cpus) > 0 && atomic_load(&p->cpu_waiters))
		pthread_cond_signal(&p->ccv);
	pthread_mutex_unlock(&p->cmx);
	return waited ? dl_mono_ns() : 0;
}

void dl_cpu_put(struct dl_rthread *w)
{
	struct dl_pool *p = w->pool;

	atomic_fetch_add(&p->free_cpus, 1);
	if (!atomic_load(&p->cpu_waiters))
		return;
	/*
	 * Main first.  A worker woken may find the permit taken by a thread
	 * that did not sleep (the first to run takes it, as before); it sleeps
	 * again, and the next put wakes it.
	 */
	pthread_mutex_lock(&p->cmx);
	if (atomic_load(&p->main_wants_cpu))
		pthread_cond_signal(&p->main_ccv);
	else
		pthread_cond_signal(&p->ccv);
	pthread_mutex_unlock(&p->cmx);
}

/* ---- the queue (a heap by (prio, seq)), under mx ---- */

int dl_pool_push_locked(struct dl_pool *p, uint32_t dev, int64_t prio)
{
	struct dl_pool_item e = { .prio = prio, .seq = p->qseq++, .dev = dev,
				  .pushed = dl_mono_ns() };
	int err = dl_pool_heap_push(&p->q, e);

	if (err)
		return err;
	p->outstanding++;
	atomic_store(&p->qlen, p->q.n);
	wake_worker_locked(p);
	return 0;
}

void dl_pool_wake_main_locked(struct dl_pool *p)
{
	pthread_cond_broadcast(&p->mcv);
}

void dl_pool_wait_main(struct dl_pool *p)
{
	dl_thr_timed_wait(&p->mcv, &p->mx);
}

void dl_pool_finished_locked(struct dl_pool *p)
{
	if (--p->remaining == 0)
		pthread_cond_broadcast(&p->mcv);
}

static void *worker_main(void *arg)
{
	struct dl_rthread *w = arg;
	struct dl_pool *p = w->pool;
	bool back = false;   /* back from an item, and work was queued: it takes it (item.back) */
	int64_t woken = 0;   /* real ns this worker was last woken at */

	dl_thr_precise_timers();
	pthread_mutex_lock(&p->mx);
	for (;;) {
		struct dl_pool_item k;
		bool fin;

		if (!p->q.n && !p->shutdown && !p->q_spinners && !woke_waiters) {
			/*
			 * One idle worker looks for work a while: a push then wakes
			 * nobody.  Not one that just woke waiters: on 2 CPUs its spin
			 * would keep them off the CPU they were woken to run on.
			 */
			int64_t end = dl_mono_ns() + IDLE_SPIN_NS;

			back = false;
			p->q_spinners++;
			pthread_mutex_unlock(&p->mx);
			while (!atomic_load_explicit(&p->qlen, memory_order_relaxed) &&
			       !atomic_load_explicit(&p->stopping, memory_order_relaxed) &&
			       dl_mono_ns() < end)
				;
			pthread_mutex_lock(&p->mx);
			p->q_spinners--;
		}
		while (!p->q.n && !p->shutdown) {
			back = false;
			dl_thr_unchain(w);
			p->q_sleepers++;
			pthread_cond_wait(&p->qcv, &p->mx);
			p->q_sleepers--;
			woken = p->woke_at;
			if (p->q_waking)
				p->q_waking--;   /* this one, or one woken for nothing: at worst a wake more */
		}
		if (!p->q.n)
			break;
		k = dl_pool_heap_pop(&p->q);
		k.back = back;
		/*
		 * Its start (wake_ns) runs from when this worker was woken: an
		 * item queued while another worker ran waits for that one to
		 * block (wq_worker_sleeping()), not for the start of its own.
		 */
		if (!back && woken > k.pushed)
			k.pushed = woken;
		atomic_store(&p->qlen, p->q.n);
		woke_waiters = false;
		atomic_fetch_add(&p->nr_running, 1);   /* the rest of the queue waits for it to block */
		pthread_mutex_unlock(&p->mx);

		fin = p->run(p->ctx, w, &k);
		back = true;

		pthread_mutex_lock(&p->mx);
		atomic_fetch_sub(&p->nr_running, 1);
		p->outstanding--;
		if (fin)
			dl_pool_finished_locked(p);
		if (p->outstanding == 0)
			pthread_cond_broadcast(&p->mcv);
	}
	pthread_mutex_unlock(&p->mx);
	return NULL;
}

/* ---- setup ---- */

int dl_pool_init(struct dl_pool *p, uint32_t K, uint32_t P)
{
	p->P = P;
	pthread_mutex_init(&p->mx, NULL);
	pthread_mutex_init(&p->cmx, NULL);
	pthread_cond_init(&p->qcv, NULL);
	pthread_cond_init(&p->mcv, NULL);
	pthread_cond_init(&p->ccv, NULL);
	pthread_cond_init(&p->main_ccv, NULL);
	atomic_init(&p->free_cpus, (int)K);
	atomic_init(&p->nr_running, 0);
	atomic_init(&p->qlen, 0);
	atomic_init(&p->stopping, false);
	atomic_init(&p->cpu_waiters, 0);
	atomic_init(&p->main_wants_cpu, false);
	p->tid = calloc(P ? P : 1, sizeof(*p->tid));
	return p->tid ? 0 : -ENOMEM;
}

int dl_pool_spawn_worker(struct dl_pool *p, struct dl_rthread *w)
{
	pthread_attr_t a;
	int err;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, STACK_BYTES);
	err = dl_thr_spawn(&p->tid[p->nthreads], &a, worker_main, w);
	pthread_attr_destroy(&a);
	if (err)
		return -EAGAIN;
	p->nthreads++;
	return 0;
}

void dl_pool_stop(struct dl_pool *p)
{
	pthread_mutex_lock(&p->mx);
	p->shutdown = true;
	atomic_store(&p->stopping, true);
	pthread_cond_broadcast(&p->qcv);
	pthread_mutex_unlock(&p->mx);
	for (uint32_t w = 0; w < p->nthreads; w++)
		pthread_join(p->tid[w], NULL);
	p->nthreads = 0;
}

void dl_pool_fini(struct dl_pool *p)
{
	free(p->tid);
	p->tid = NULL;
	dl_pool_heap_free(&p->q);
	pthread_cond_destroy(&p->qcv);
	pthread_cond_destroy(&p->mcv);
	pthread_cond_destroy(&p->ccv);
	pthread_cond_destroy(&p->main_ccv);
	pthread_mutex_destroy(&p->mx);
	pthread_mutex_destroy(&p->cmx);
}
