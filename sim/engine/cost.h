/*
 * cost.h - the engines' cost model, once: the modelled overheads with their
 * defaults resolved, the latency samples, the injected faults and the clock.
 * Both backends (des.c in virtual time, threads.c in real time) read these;
 * neither keeps a copy.
 */
#ifndef DL_COST_H
#define DL_COST_H

#include <stdint.h>

#include "sim/scenario/scenario.h"

/* The overheads of engine.h's DL_COST_*, the scenario's "cost" object applied. */
struct dl_costs {
	int64_t main_ns;         /* the main thread walks to a device */
	int64_t queue_ns;        /* queue a work item */
	int64_t wake_ns;         /* wake a blocked worker and switch to it */
	int64_t switch_ns;       /* a worker blocks: context switch away */
	int64_t check_ns;        /* a probe attempt that defers */
};

void dl_costs_resolve(const struct dl_scenario *sc, struct dl_costs *c);

/*
 * dl_cost_sample - the latency of @key for device @d (of latency profile
 * @profile) in op @op: a pure function of the run's seed, so that every
 * order and both backends see the same samples.
 */
static inline int64_t dl_cost_sample(const struct dl_scenario *sc, uint32_t profile,
				     uint64_t seed, uint32_t d, unsigned key, uint32_t op)
{
	return dl_latency_sample(&sc->prof[profile].lat[key], seed, d, key, op);
}

/* The scenario's injected faults and how often each has fired in this run. */
struct dl_faults {
	const struct dl_scenario *sc;
	uint8_t *has;            /* per device: some fault names it */
	uint32_t *used;          /* per fault */
};

int dl_faults_init(struct dl_faults *f, const struct dl_scenario *sc);
void dl_faults_fini(struct dl_faults *f);
/* The error (negative errno) callback @key of @d fails with now, or 0; counts it. */
int dl_faults_take(struct dl_faults *f, uint32_t d, unsigned key);
/* Cheap test before taking a lock around dl_faults_take(). */
static inline int dl_faults_any(const struct dl_faults *f, uint32_t d)
{
	return f->has[d];
}

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t dl_mono_ns(void);

#endif
