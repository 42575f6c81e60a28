/*
 * dl_log_batch.c - the batching event sink (dl_log_batch.h).
 */
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_batch.h"

static void batch_emit(void *ctx, struct dl_event *e)
{
	struct dl_log_batch *b = ctx;

	b->ev[b->n++] = *e;
	if (b->n == DL_LOG_BATCH) {
		dl_log_events(b->log, b->ev, b->n);
		b->n = 0;
		/* the log cannot store the rest of this run: stop simulating it */
		if (b->stop && dl_log_failure(b->log))
			*b->stop = 1;
	}
}

struct dl_sink dl_log_batch_sink(struct dl_log_batch *b, struct dl_log *log, atomic_int *stop)
{
	b->log = log;
	b->stop = stop;
	b->n = 0;
	return (struct dl_sink){ .emit = batch_emit, .ctx = b };
}

void dl_log_batch_flush(struct dl_log_batch *b)
{
	if (b->n)
		dl_log_events(b->log, b->ev, b->n);
	b->n = 0;
}
