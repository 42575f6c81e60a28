/* graph.c - the phase graph (see graph.h). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/graph.h"

int dl_graph_init(struct dl_graph *g, uint32_t n)
{
	size_t k = (size_t)n + 1;   /* never 0 entries: every array is a real one */

	memset(g, 0, sizeof(*g));
	g->n = n;
	g->ord = calloc(k, sizeof(*g->ord));
	g->pos = calloc(k, sizeof(*g->pos));
	g->prof = calloc(k, sizeof(*g->prof));
	g->async = calloc(k, 1);
	g->bound = calloc(k, 1);
	g->depth = calloc(k, 1);
	if (!g->ord || !g->pos || !g->prof || !g->async || !g->bound || !g->depth)
		return -ENOMEM;
	return 0;
}

/* Free @c's rows; it is built again on next use (its off is allocated then). */
static void csr_drop(struct dl_csr *c)
{
	free(c->off);
	free(c->adj);
	memset(c, 0, sizeof(*c));
}

void dl_graph_fini(struct dl_graph *g)
{
	free(g->ord); free(g->pos); free(g->prof); free(g->async); free(g->bound); free(g->depth);
	for (int i = 0; i < DL_DEP_COUNT; i++)
		csr_drop(&g->rel[i]);
	memset(g, 0, sizeof(*g));
}

void dl_graph_flush(struct dl_graph *g, struct dl_core *c)
{
	if (!g->depth_dirty)
		return;
	for (uint32_t i = 0; i < g->m; i++)
		c->dev[g->ord[i]].pm_depth = g->depth[i];
	g->depth_dirty = false;
}

/*
 * A snapshot of a million devices and their links takes a second on a
 * loaded machine: Ctrl-C (the core's stop poll, dl_core_set_stop()) is
 * asked every DL_STOP_POLL_STEPS devices, and the snapshot is then left
 * unfinished (its gen not set: the next dl_graph_get() starts again).
 */
static bool snapshot_stop(struct dl_core *c, uint32_t i)
{
	return i % DL_STOP_POLL_STEPS == 0 && dl_core_poll_stop(c);
}

/* Position @i is device @d: what the phases read of it, in position order. */
static inline void take_one(struct dl_graph *g, const struct dl_core *c,
			    const struct dl_scenario *sc, dl_dev_t d, uint32_t i)
{
	const struct dl_device *x = &c->dev[d];

	g->ord[i] = d;
	g->prof[i] = sc->dev[d].profile;
	g->async[i] = x->async;
	g->bound[i] = x->state == DL_DEV_DRIVER_BOUND;
	g->depth[i] = x->pm_depth;
	g->pos[d] = i;
}

/*
 * Number the registered devices by their place in dpm_list, and copy the
 * device fields the phases read, so that they are read in position order.
 * The list is scattered over the records after a probe's moves, and each
 * step of a walk along it waits for the record before: the list is walked
 * from both ends at once (dpm_count long), so that two misses are in
 * flight instead of one.  0, or -EINTR when the run is to stop.
 */
static int take_order(struct dl_graph *g, struct dl_core *c, const struct dl_scenario *sc,
		      uint64_t gen)
{
	uint32_t m = c->dpm_count, lo = 0, hi = m;
	dl_dev_t f = c->dpm_head, b = c->dpm_tail;

	g->gen = 0;   /* none, until the snapshot is whole */
	dl_graph_flush(g, c);
	for (uint32_t d = 0; d < g->n; d++)
		g->pos[d] = DL_NONE;
	/* ord[0, lo) taken from the head, ord[hi, m) from the tail */
	while (lo < hi) {
		if (snapshot_stop(c, lo))
			return -EINTR;
		if (f == DL_NONE || b == DL_NONE)
			return -EIO;   /* shorter than dpm_count: the core is broken, say so */
		take_one(g, c, sc, f, lo++);
		f = c->dev[f].dpm_next;
		if (lo < hi) {
			take_one(g, c, sc, b, --hi);
			b = c->dev[b].dpm_prev;
		}
	}
	/* the two walks met: the list is dpm_count long */
	assert(f == (hi < m ? g->ord[hi] : DL_NONE));
	g->m = m;
	g->gen = gen;
	return 0;
}

/* Room for @need entries in c->adj; allocated even for none, so that a row's address is always one. */
static int csr_reserve(struct dl_csr *c, size_t need)
{
	if (need > c->cap || !c->adj) {
		size_t cap = c->cap ? c->cap : 1024;
		uint32_t *na;

		while (cap < need)
			cap *= 2;
		na = realloc(c->adj, cap * sizeof(*na));
		if (!na)
			return -ENOMEM;
		c->adj = na;
		c->cap = cap;
	}
	return 0;
}

/*
 * build_rel() reads each device's links, then the positions of their
 * other ends: two scattered misses per edge.  Start the links 2 * CSR_AHEAD
 * devices ahead and the positions CSR_AHEAD ahead.
 */
#define CSR_AHEAD 8

static void build_prefetch(const struct dl_graph *g, const struct dl_core *c, unsigned kind,
			   uint32_t d)
{
	const struct dl_device *x;

	if (d + 2 * CSR_AHEAD < g->n) {
		x = &c->dev[d + 2 * CSR_AHEAD];
		if (kind == DL_DEP_SUSPEND)
			for (uint32_t i = 0; i < x->suppliers.n; i++)
				dl_prefetch(&c->link[x->suppliers.v[i]]);
		else
			for (uint32_t i = 0; i < x->consumers.n; i++)
				dl_prefetch(&c->link[x->consumers.v[i]]);
	}
	if (d + CSR_AHEAD < g->n) {
		struct dl_dep_iter it;
		dl_dev_t y;

		dl_for_each_released(it, c, kind, d + CSR_AHEAD, y)
			dl_prefetch(&g->pos[y]);
	}
}

/*
 * Row i lists the positions that position i releases.  The core is read by
 * device id, the order its arrays and vectors were allocated in; each row
 * is written where room for it was set aside (the device's bound,
 * dl_dep_most()), and the rows are then squeezed together in position
 * order: no second copy of the graph is held, even for a moment.
 */
static int build_rel(struct dl_graph *g, struct dl_core *c, unsigned kind)
{
	struct dl_csr *r = &g->rel[kind];
	bool up = kind == DL_DEP_SUSPEND;
	size_t total = 0;
	uint32_t *len;

	if (!r->off && !(r->off = calloc((size_t)g->n + 2, sizeof(*r->off))))
		return -ENOMEM;
	len = malloc(((size_t)g->m + 1) * sizeof(*len));
	if (!len)
		return -ENOMEM;
	for (uint32_t d = 0; d < g->n; d++)
		if (g->pos[d] != DL_NONE)
			len[g->pos[d]] = dl_dep_most(c, kind, d, up);
	for (uint32_t i = 0; i < g->m; i++) {
		r->off[i] = (uint32_t)total;
		total += len[i];
	}
	if (csr_reserve(r, total)) {
		free(len);
		return -ENOMEM;
	}
	for (uint32_t d = 0; d < g->n; d++) {
		uint32_t i = g->pos[d], k = 0, *row;
		struct dl_dep_iter it;
		dl_dev_t y;

		if (snapshot_stop(c, d)) {
			free(len);
			return -EINTR;
		}
		build_prefetch(g, c, kind, d);
		if (i == DL_NONE)
			continue;
		row = r->adj + r->off[i];
		dl_for_each_released(it, c, kind, d, y)
			if (g->pos[y] != DL_NONE)
				row[k++] = g->pos[y];
		len[i] = k;
	}
	/*
	 * Settled, dpm_list is topological (suspend rows go back, the others
	 * forward); not asserted: threads.c may snapshot a list a racing op
	 * left with moves pending.
	 */
	total = 0;
	for (uint32_t i = 0; i < g->m; i++) {
		uint32_t from = r->off[i];

		r->off[i] = (uint32_t)total;
		if (from != total)
			memmove(r->adj + total, r->adj + from, (size_t)len[i] * sizeof(*r->adj));
		total += len[i];
	}
	r->off[g->m] = (uint32_t)total;
	r->gen = g->gen;
	free(len);
	return 0;
}

/* Rows of a kind not asked for are kept up to this many entries (4 MiB). */
#define GRAPH_KEEP_MAX ((size_t)1 << 20)

int dl_graph_get(struct dl_graph *g, struct dl_core *c, const struct dl_scenario *sc,
		 uint64_t gen, unsigned kind)
{
	int err;

	if (c->stopped)
		return -EINTR;   /* e.g. heard while the caller settled dpm_list */
	if (g->gen != gen && (err = take_order(g, c, sc, gen)))
		return err;
	/*
	 * A run probes first, then suspends and resumes: the PM phases need
	 * not keep probe's rows, and on a large graph a PM kind does not keep
	 * the other's either: a suspend after a resume rebuilds them, one pass
	 * over the edges against the four phases that read them.
	 */
	for (unsigned k = 0; k < DL_DEP_COUNT; k++)
		if (k != kind && (k == DL_DEP_PROBE || g->rel[k].cap >= GRAPH_KEEP_MAX))
			csr_drop(&g->rel[k]);
	if (g->rel[kind].gen != g->gen && (err = build_rel(g, c, kind)))
		return err;
	g->cur = &g->rel[kind];
	return 0;
}

int dl_graph_by_id(const struct dl_graph *g, const uint8_t *part, bool none,
		   struct dl_csr *rel, struct dl_csr *waits)
{
	const struct dl_csr *c = g->cur;
	size_t total = 0;

	/* whom each participant releases: its position's row, the participants in it */
	for (uint32_t d = 0; d < g->n; d++) {
		uint32_t i = g->pos[d];

		rel->off[d] = (uint32_t)total;
		if (none || !part[d] || i == DL_NONE)
			continue;
		if (csr_reserve(rel, total + (c->off[i + 1] - c->off[i])))
			return -ENOMEM;
		for (uint32_t j = c->off[i]; j < c->off[i + 1]; j++)
			if (part[g->ord[c->adj[j]]])
				rel->adj[total++] = g->ord[c->adj[j]];
	}
	rel->off[g->n] = (uint32_t)total;
	if (csr_reserve(rel, total) || csr_reserve(waits, total))
		return -ENOMEM;

	/* whom each waits for: the same edges read backwards, counted, then placed */
	memset(waits->off, 0, ((size_t)g->n + 1) * sizeof(*waits->off));
	for (uint32_t e = 0; e < total; e++)
		waits->off[rel->adj[e] + 1]++;
	for (uint32_t d = 0; d < g->n; d++)
		waits->off[d + 1] += waits->off[d];
	for (uint32_t i = 0; i < g->m && !none; i++) {
		uint32_t d = g->ord[i];

		for (uint32_t j = rel->off[d]; j < rel->off[d + 1]; j++)
			waits->adj[waits->off[rel->adj[j]]++] = d;
	}
	/* each off[y] now ends row y: shift back */
	for (uint32_t d = g->n; d > 0; d--)
		waits->off[d] = waits->off[d - 1];
	waits->off[0] = 0;
	return 0;
}
