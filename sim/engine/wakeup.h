/*
 * wakeup.h - the machine's wake-up latency and the time scale that threads
 * mode needs for it to stay small beside the callbacks it times.
 */
#ifndef DL_WAKEUP_H
#define DL_WAKEUP_H

#include <stdint.h>

#include "sim/scenario/scenario.h"

/* A callback must take at least this many wake-up latencies of real time. */
#define DL_WAKEUP_FACTOR 20

/**
 * dl_wakeup_latency_ns() - measure, now, how long this machine takes to run
 * a thread that was asleep: the median over 41 rounds of a condition
 * variable signalled to a sleeping thread and of a timer expiry, the larger
 * of the two.  Takes about 15 ms.
 * Return: the latency in ns, or a negative errno if no thread could be made.
 */
int64_t dl_wakeup_latency_ns(void);

/**
 * dl_shortest_callback_ns() - the shortest typical callback latency of the
 * profiles @sc's devices use: a fixed latency, a distribution's mean, the
 * middle of a uniform range; phases without a latency are left out.
 * Return: ns, or 0 when no callback takes any time.
 */
int64_t dl_shortest_callback_ns(const struct dl_scenario *sc);

#endif
