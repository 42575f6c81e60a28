/*
 * wakeup.c - how long this machine takes to wake a sleeping thread: the
 * floor under every callback that threads mode times in real time (a
 * worker blocked on a completion, a timer that expires), and so what
 * decides the smallest --time-scale at which its figures mean anything.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "sim/engine/cost.h"
#include "sim/engine/wakeup.h"

#define WAKE_ROUNDS 41		/* odd: the median is one sample */
#define WAKE_GAP_NS 200000	/* the sleeper is surely asleep after this */

struct pingpong {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int round;		/* bumped by the signaller */
	int seen;		/* last round the sleeper woke for */
	int64_t t_signal, t_wake[WAKE_ROUNDS];
};

static void *sleeper(void *arg)
{
	struct pingpong *p = arg;

	pthread_mutex_lock(&p->mu);
	while (p->seen < WAKE_ROUNDS) {
		while (p->round == p->seen)
			pthread_cond_wait(&p->cv, &p->mu);
		p->t_wake[p->seen] = dl_mono_ns() - p->t_signal;
		p->seen++;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * One thread sleeps on a condition variable; the other waits until it is
 * surely asleep, notes the time and signals it; the sleeper notes when it
 * runs.  Timer wake-ups (clock_nanosleep) are measured the same way, and
 * the larger of the two medians is the machine's wake-up latency.
 */
int64_t dl_wakeup_latency_ns(void)
{
	struct pingpong p = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	int64_t timer[WAKE_ROUNDS], cond_med, timer_med;
	struct timespec gap = { 0, WAKE_GAP_NS };
	pthread_t th;
	int slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);

	/* as threads.c's workers: timers expire on time, not up to 50 us late */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	if (pthread_create(&th, NULL, sleeper, &p)) {
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0UL, 0UL, 0UL);
		return -EAGAIN;
	}
	for (int i = 0; i < WAKE_ROUNDS; i++) {
		nanosleep(&gap, NULL);
		pthread_mutex_lock(&p.mu);
		p.t_signal = dl_mono_ns();
		p.round++;
		pthread_cond_signal(&p.cv);
		while (p.seen < p.round)
			pthread_cond_wait(&p.cv, &p.mu);
		pthread_mutex_unlock(&p.mu);
	}
	pthread_join(th, NULL);
	for (int i = 0; i < WAKE_ROUNDS; i++) {
		int64_t t0 = dl_mono_ns(), want = t0 + WAKE_GAP_NS / 4;
		struct timespec dl = { (time_t)(want / 1000000000), (long)(want % 1000000000) };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, NULL);
		timer[i] = dl_mono_ns() - want;
	}
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0UL, 0UL, 0UL);
	qsort(p.t_wake, WAKE_ROUNDS, sizeof(int64_t), cmp_i64);
	qsort(timer, WAKE_ROUNDS, sizeof(int64_t), cmp_i64);
	cond_med = p.t_wake[WAKE_ROUNDS / 2];
	timer_med = timer[WAKE_ROUNDS / 2];
	return cond_med > timer_med ? cond_med : timer_med;
}

int64_t dl_shortest_callback_ns(const struct dl_scenario *sc)
{
	int64_t best = 0;
	uint8_t *used = calloc(sc->nprof ? sc->nprof : 1, 1);

	if (!used)
		return 0;
	for (uint32_t i = 0; i < sc->ndev; i++)
		used[sc->dev[i].profile] = 1;
	for (uint32_t p = 0; p < sc->nprof; p++) {
		if (!used[p])
			continue;
		for (int k = 0; k < DL_LAT_COUNT; k++) {
			const struct dl_latency *l = &sc->prof[p].lat[k];
			int64_t typical = l->dist == DL_DIST_UNIFORM ? l->min + (l->max - l->min) / 2 : l->mean;

			if (l->dist == DL_DIST_NONE || typical <= 0)
				continue;
			if (!best || typical < best)
				best = typical;
		}
	}
	free(used);
	return best;
}
