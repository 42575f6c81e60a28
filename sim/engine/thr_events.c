/*
 * thr_events.c - per-thread event buffers and their merge (thr_events.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/thr_events.h"

int dl_tevents_init(struct dl_tevents *ev, uint32_t nthr, const struct dl_rclock *clock)
{
	ev->clock = clock;
	ev->nthr = nthr;
	atomic_init(&ev->seq, 0);
	ev->buf = calloc(nthr, sizeof(*ev->buf));
	return ev->buf ? 0 : -ENOMEM;
}

void dl_tevents_fini(struct dl_tevents *ev)
{
	if (ev->buf)
		for (uint32_t w = 0; w < ev->nthr; w++)
			free(ev->buf[w].v);
	free(ev->buf);
	ev->buf = NULL;
}

void dl_tevents_push(struct dl_tevents *ev, int w, struct dl_event *e)
{
	struct dl_tevbuf *b = &ev->buf[w];

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct dl_tev *nv = realloc(b->v, cap * sizeof(*nv));

		if (!nv)
			return;   /* the event is lost; r->events tells */
		b->v = nv;
		b->cap = cap;
	}
	/* sequence first, then the clock: a causally later event gets both larger */
	b->v[b->n].seq = atomic_fetch_add(&ev->seq, 1);
	e->t_ns = dl_rclock_now(ev->clock);
	e->worker = (int16_t)w;
	b->v[b->n].e = *e;
	b->n++;
}

static int tev_cmp(const void *a, const void *b)
{
	const struct dl_tev *x = a, *y = b;

	if (x->e.t_ns != y->e.t_ns)
		return x->e.t_ns < y->e.t_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void dl_tevents_flush(struct dl_tevents *ev, const struct dl_sink *sink, uint64_t *events,
		      uint32_t *links_refused)
{
	size_t total = 0, k = 0;
	struct dl_tev *all;

	for (uint32_t w = 0; w < ev->nthr; w++)
		total += ev->buf[w].n;
	if (!total)
		return;
	all = malloc(total * sizeof(*all));
	if (all) {
		for (uint32_t w = 0; w < ev->nthr; w++) {
			if (!ev->buf[w].n)
				continue;   /* an empty buffer may have no array yet */
			memcpy(all + k, ev->buf[w].v, ev->buf[w].n * sizeof(*all));
			k += ev->buf[w].n;
		}
		qsort(all, total, sizeof(*all), tev_cmp);
		for (size_t i = 0; i < total; i++) {
			struct dl_event *e = &all[i].e;

			(*events)++;
			if (e->kind == DL_EV_LINK_REFUSED)
				(*links_refused)++;
			if (sink->emit)
				sink->emit(sink->ctx, e);
		}
	}
	free(all);
	for (uint32_t w = 0; w < ev->nthr; w++)
		ev->buf[w].n = 0;
}
