/*
 * dl_log_batch.h - a batching event sink in front of the log writer: an
 * engine's events are copied into a fixed batch and handed to
 * dl_log_events() a batch at a time, so the engine's hot path pays a copy,
 * not a lock.  What `dlsim run` and a sweep worker both log a run through.
 */
#ifndef DL_LOG_BATCH_H
#define DL_LOG_BATCH_H

#include <stdatomic.h>
#include <stddef.h>

#include "sim/core/dl_event.h"

#define DL_LOG_BATCH 8192

struct dl_log;

struct dl_log_batch {
	struct dl_log *log;
	/* set when the log fails mid-run (the rest of the run cannot be stored); may be NULL */
	atomic_int *stop;
	size_t n;
	struct dl_event ev[DL_LOG_BATCH];
};

/* dl_log_batch_sink - an empty batch into @log, as an engine's sink. */
struct dl_sink dl_log_batch_sink(struct dl_log_batch *b, struct dl_log *log, atomic_int *stop);
/* dl_log_batch_flush - the batch's last events into the log. */
void dl_log_batch_flush(struct dl_log_batch *b);

#endif
