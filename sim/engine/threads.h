/*
 * threads.h - the real-thread engine: runs a scenario's script with POSIX
 * threads and wall-clock timing (callbacks sleep latency * time_scale).
 */
#ifndef DL_THREADS_H
#define DL_THREADS_H

#include "sim/engine/engine.h"

/**
 * dl_threads_run - run @sc's script under @o with a main thread and a pool of
 * K workers (o->workers, or the order's default).  Event times are
 * (CLOCK_MONOTONIC - run start) / @time_scale, i.e. simulated units.
 * Returns 0, 1 when an injected fault made an op fail (status "failed"),
 * -EINTR when interrupted, another negative errno on error.  Lower bounds
 * are not computed (0).
 */
int dl_threads_run(const struct dl_scenario *sc, const struct dl_engine_opts *o,
		   double time_scale, struct dl_run_result *r);

#endif
