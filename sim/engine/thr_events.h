/*
 * thr_events.h - the real-thread backend's event log (threads.c): every
 * thread pushes its events to a buffer of its own, stamped with (time,
 * global sequence), and the main thread merges them by time into the
 * run's sink when no other thread runs, so that the sink is only ever
 * called from one thread and in time order.
 */
#ifndef DL_THR_EVENTS_H
#define DL_THR_EVENTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/dl_event.h"
#include "sim/engine/thr_pool.h"

struct dl_tev {
	struct dl_event e;
	uint64_t seq;
};

struct dl_tevbuf {
	struct dl_tev *v;
	size_t n, cap;
};

struct dl_tevents {
	const struct dl_rclock *clock;
	struct dl_tevbuf *buf;  /* one per thread */
	uint32_t nthr;
	atomic_uint_fast64_t seq;
};

/* Buffers for @nthr threads stamped by @clock; 0 or -ENOMEM (dl_tevents_fini() either way). */
int dl_tevents_init(struct dl_tevents *ev, uint32_t nthr, const struct dl_rclock *clock);
void dl_tevents_fini(struct dl_tevents *ev);

/* Thread @w's event @e, stamped now (t_ns) and with its worker; lost if memory runs out. */
void dl_tevents_push(struct dl_tevents *ev, int w, struct dl_event *e);

/*
 * dl_tevents_flush - the main thread, no other thread running: every
 * buffered event, in (time, sequence) order, to @sink, counted in @events
 * (and the refused links in @links_refused); the buffers are emptied.
 */
void dl_tevents_flush(struct dl_tevents *ev, const struct dl_sink *sink, uint64_t *events,
		      uint32_t *links_refused);

#endif
