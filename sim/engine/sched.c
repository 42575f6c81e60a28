/*
 * sched.c - the phase scheduler's state both backends keep (sched.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "sim/engine/sched.h"

int dl_fallback_init(struct dl_fallback *q, uint32_t ndev)
{
	q->head = q->n = 0;
	q->cap = ndev + 1;
	q->v = calloc(q->cap, sizeof(*q->v));
	return q->v ? 0 : -ENOMEM;
}

void dl_fallback_fini(struct dl_fallback *q)
{
	free(q->v);
	q->v = NULL;
	q->cap = 0;
}
