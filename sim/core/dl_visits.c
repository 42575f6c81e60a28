/*
 * dl_visits.c - what device_reorder_to_tail() costs the kernel.
 *
 * dl_reorder_to_tail() settles the dpm_list order the kernel's walk leaves
 * (dl_core.c), in O(1) per call.  The kernel pays for the walk itself: it
 * calls itself for every child and every consumer (SYNC_STATE_ONLY links
 * excepted), with no visited set, so one call makes as many calls as there
 * are paths from the device down the graph, exponential on diamonds.  The
 * deferred-probe walk does one before every retry (device_pm_move_to_tail()
 * in deferred_probe_work_func()); with 500 devices of default.json that walk
 * took 13.2 of the probe's 16.1 s on 6.12 in QEMU, ~1.2 us per call.
 *
 * dl_reorder_visits() counts those calls without making them: the number of
 * paths, P(d) = 1 + sum over children and consumers of P, memoized per
 * device until the graph changes (dl_core.graph_gen), so a retry storm costs
 * each device once per graph.  Saturates at UINT64_MAX.
 */
#include <stdlib.h>

#include "sim/core/dl_internal.h"
#include "sim/core/dl_sat.h"

#define RV_MAX_GEN 0x7fffffffu
#define RV_BUSY 0x80000000u   /* rv_gen flag: on the walk's stack (reached again: a cycle) */

static int rv_reserve(struct dl_core *c)
{
	uint32_t n = c->ndev;

	if (c->rv_cap >= n)
		return 0;
	uint64_t *rv = realloc(c->rv, (size_t)n * sizeof(*rv));

	if (!rv)
		return -1;
	c->rv = rv;
	uint32_t *g = realloc(c->rv_gen, (size_t)n * sizeof(*g));

	if (!g)
		return -1;
	for (uint32_t i = c->rv_cap; i < n; i++)
		g[i] = 0;
	c->rv_gen = g;
	c->rv_cap = n;
	return 0;
}

/* The device @e-th edge of @x leads to (children, then consumers), or DL_NONE. */
static dl_dev_t edge(const struct dl_core *c, const struct dl_device *x, uint32_t e)
{
	const struct dl_link *k;

	if (e < x->children.n)
		return x->children.v[e];
	k = &c->link[x->consumers.v[e - x->children.n]];
	return dl_link_is_sync_state_only(k->flags) ? DL_NONE : k->consumer;
}

/**
 * dl_reorder_visits - the calls device_reorder_to_tail(@d) makes (itself
 * included).  UINT64_MAX when it saturates, on a cycle (the kernel would not
 * return) or on running out of memory.
 */
uint64_t dl_reorder_visits(struct dl_core *c, dl_dev_t d)
{
	struct dl_idvec *st = &c->rv_stack;
	uint32_t done, busy;

	if (d >= c->ndev || rv_reserve(c))
		return UINT64_MAX;
	if (c->graph_gen >= RV_MAX_GEN) {
		/* generations wrap: forget every memo */
		for (uint32_t i = 0; i < c->rv_cap; i++)
			c->rv_gen[i] = 0;
		c->graph_gen = 0;
	}
	done = c->graph_gen + 1;
	busy = done | RV_BUSY;
	if (c->rv_gen[d] == done)
		return c->rv[d];
	/* iterative postorder; while x is busy, rv[x] is its running sum */
	st->n = 0;
	c->rv_gen[d] = busy;
	c->rv[d] = 1;
	if (dl_idvec_push(st, d) || dl_idvec_push(st, 0))
		goto fail;
	while (st->n) {
		dl_dev_t x = st->v[st->n - 2];
		uint32_t e = st->v[st->n - 1];
		const struct dl_device *xd = &c->dev[x];

		if (e < xd->children.n + xd->consumers.n) {
			dl_dev_t y = edge(c, xd, e);

			st->v[st->n - 1] = e + 1;
			if (y == DL_NONE)
				continue;
			if (c->rv_gen[y] == done) {
				c->rv[x] = dl_sat_add_u64(c->rv[x], c->rv[y]);
				continue;
			}
			if (c->rv_gen[y] == busy) {
				c->rv[x] = UINT64_MAX;   /* a cycle: the kernel's walk never ends */
				continue;
			}
			c->rv_gen[y] = busy;
			c->rv[y] = 1;
			if (dl_idvec_push(st, y) || dl_idvec_push(st, 0))
				goto fail;
			continue;
		}
		/* x is done: its count goes to its caller's */
		c->rv_gen[x] = done;
		st->n -= 2;
		if (st->n)
			c->rv[st->v[st->n - 2]] = dl_sat_add_u64(c->rv[st->v[st->n - 2]], c->rv[x]);
	}
	return c->rv[d];
fail:
	c->graph_gen++;   /* the walk left busy marks behind: drop every memo */
	return UINT64_MAX;
}
