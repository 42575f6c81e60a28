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
 * Lower bounds are des.c's, from the same samples (bound.h).  Ops marked
 * "concurrent" run on a racing thread beside the op they follow.  The stop
 * flag is honoured inside phases: no new work starts, work in flight ends.
 * Returns 0, 1 when an injected fault made an op fail (status "failed"),
 * -EINTR when interrupted, another negative errno on error.
 */
int dl_threads_run(const struct dl_scenario *sc, const struct dl_engine_opts *o,
		   double time_scale, struct dl_run_result *r);

#endif
