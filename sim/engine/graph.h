/*
 * graph.h - the phase graph, the one copy both backends run on.
 *
 * A phase works on a snapshot of the link core (struct dl_graph): the
 * registered devices numbered by their place in dpm_list ("positions"),
 * and, per kind of phase (enum dl_dep_kind), the positions each position
 * releases when it finishes, in CSR form.  Who waits for whom is the
 * core's rule (dl_for_each_released()); this module only turns it into
 * arrays, so that the passes over a phase (counting waits, releasing,
 * the lower bound, priorities, levels, walks) read memory in order
 * instead of chasing dpm_list and link ids.  dpm_list is topological, so
 * a suspend row names earlier positions and the other kinds later ones.
 *
 * The snapshot is kept across phases while its generation (the backend's
 * count of ops that may change the graph) stands, and each kind's CSR is
 * built on first use; the rows of another kind are dropped when they are
 * probe's or large (graph.c).  des.c indexes everything by position; threads.c
 * indexes by device id and takes part of the devices, so it asks for a
 * relabelled copy of the current graph over its participants, with the
 * reverse relation (whom each device waits for) as well (dl_graph_by_id()).
 */
#ifndef DL_GRAPH_H
#define DL_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/dl_core.h"
#include "sim/engine/bound.h"
#include "sim/scenario/scenario.h"

/* Rows over some indices: row i is adj[off[i]..off[i+1]). */
struct dl_csr {
	uint32_t *off, *adj;
	size_t cap;              /* entries adj has room for */
	uint64_t gen;            /* dl_graph.gen it was built for; 0: never */
};

struct dl_graph {
	uint64_t gen;            /* the generation ord/pos were taken at; 0: never */
	uint32_t n;              /* device ids */
	uint32_t m;              /* registered devices: positions 0..m-1 */
	uint32_t *ord;           /* position -> device id (dpm_list order) */
	uint32_t *pos;           /* device id -> position, DL_NONE if unregistered */
	uint32_t *prof;          /* position -> latency profile */
	uint8_t *async;          /* position -> may run async */
	/*
	 * position -> a driver bound (dl_device.state, DL_DEV_DRIVER_BOUND) when
	 * the snapshot was taken: what a PM phase reads (dl_pm_part()), in
	 * position order.  Only probes and non-PM ops bind or unbind, and
	 * each is followed by a new snapshot (the backends' gen).
	 */
	uint8_t *bound;
	/*
	 * position -> suspend phases completed (dl_device.pm_depth): a backend
	 * may keep it here while the snapshot lives (setting depth_dirty) and
	 * dl_graph_flush() writes it back before anything else reads the core.
	 */
	uint8_t *depth;
	bool depth_dirty;
	struct dl_csr rel[DL_DEP_COUNT];   /* who each position releases, per kind */
	const struct dl_csr *cur;          /* the current phase's */
};

int dl_graph_init(struct dl_graph *g, uint32_t n);
void dl_graph_fini(struct dl_graph *g);

/** dl_graph_flush - give the core back the pm_depth of every position (depth_dirty). */
void dl_graph_flush(struct dl_graph *g, struct dl_core *c);

/**
 * dl_graph_get - make g->cur the graph of phase kind @kind (enum
 * dl_dep_kind) of @c at generation @gen: a new snapshot of dpm_list if
 * @gen differs from the last one's (the caller settles dpm_list first,
 * dl_dpm_settle(); the core is only read, but for dl_graph_flush()), and
 * the kind's CSR if not built at this generation.  0, -ENOMEM, or -EINTR
 * when the run is to stop (the core's stop poll, dl_core_set_stop(), asked
 * every DL_STOP_POLL_STEPS devices).
 */
int dl_graph_get(struct dl_graph *g, struct dl_core *c, const struct dl_scenario *sc,
		 uint64_t gen, unsigned kind);

/* The positions that position @i releases in the current phase, @y each in turn. */
#define DL_GRAPH_FOR_EACH_RELEASED(g, i, y, body) do {                               \
	const struct dl_csr *g_ = (g)->cur;                                           \
	for (uint32_t j_ = g_->off[i]; j_ < g_->off[(i) + 1]; j_++) {                 \
		uint32_t y = g_->adj[j_]; body;                                       \
	}                                                                             \
} while (0)

/*
 * The current phase as bound.h (and phase.h) read it, by position: the
 * participating positions @topo (@n of them, topological order) and each
 * position's latency, @lat_stride bytes apart from @lat.
 */
static inline struct dl_phase_graph dl_graph_phase(const struct dl_graph *g, const uint32_t *topo,
						   uint32_t n, const int64_t *lat, size_t lat_stride)
{
	return (struct dl_phase_graph){ .topo = topo, .ntopo = n, .off = g->cur->off,
					.adj = g->cur->adj, .lat = lat, .lat_stride = lat_stride,
					.prof = g->prof };
}

/**
 * dl_graph_by_id - the current graph relabelled by device id, among the
 * devices with @part[id] set (all registered): @rel, whom each one
 * releases, in the core's order; @waits, whom each one waits for (a row's
 * length is its wait count), in position order.  With @none, every row is
 * empty (a phase in which nobody waits).  Each off has n + 1 entries; adj
 * grows as needed.  0 or -ENOMEM.
 */
int dl_graph_by_id(const struct dl_graph *g, const uint8_t *part, bool none,
		   struct dl_csr *rel, struct dl_csr *waits);

#endif
