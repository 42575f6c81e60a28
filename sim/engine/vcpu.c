/*
 * vcpu.c - the simulated machine of the virtual-time backend: setting up
 * and resetting what vcpu.h's inline calls run on.
 */
#include <errno.h>
#include <stdlib.h>

#include "sim/engine/vcpu.h"

int dl_vcpu_init(struct dl_vcpu *v, uint32_t ntasks, uint32_t K, uint32_t max_active)
{
	v->cap = ntasks ? ntasks : 1;
	v->max_active = max_active;
	v->fifo = calloc(v->cap, sizeof(*v->fifo));
	v->inact = calloc(v->cap, sizeof(*v->inact));
	v->free = calloc(K + 1, sizeof(*v->free));
	if (!v->fifo || !v->inact || !v->free)
		return -ENOMEM;
	/* CPU 1 on top: the first burst of a run gets it */
	for (uint32_t i = 0; i < K; i++)
		v->free[v->nfree++] = (uint16_t)(K - i);
	return 0;
}

void dl_vcpu_fini(struct dl_vcpu *v)
{
	free(v->fifo);
	free(v->inact);
	free(v->free);
	dl_vcpu_evq_free(&v->ev);
	dl_vcpu_rqh_free(&v->rq);
}

void dl_vcpu_reset(struct dl_vcpu *v, bool by_priority)
{
	v->ev.n = v->rq.n = 0;
	v->main_req = false;
	v->by_priority = by_priority;
	v->fifo_head = v->fifo_n = 0;
	v->active = v->inact_head = v->inact_n = 0;
	v->rq_seq0 = v->seq;
}
