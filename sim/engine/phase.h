/*
 * phase.h - the plan of one suspend, resume or probe phase, made once for
 * both backends: the main PM thread's walk (and the devices kernel-async-v2
 * queues before it), cp-first's priorities, the topological levels and
 * the order their barriers release devices in; bound.h has the phase's
 * lower bound.  A backend numbers a phase's devices its own way (des.c: by
 * position in dpm_list, threads.c: by device id) and hands this module a
 * view in those indices (struct dl_phase_view); the plan comes back in the
 * same indices.  Counting waits down as devices finish stays in the
 * backends (virtual time, or atomics across real threads).
 */
#ifndef DL_PHASE_H
#define DL_PHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/dl_core.h"
#include "sim/engine/bound.h"
#include "sim/order/order.h"

/*
 * One byte per index inside a backend's records (p[i * stride]): des.c
 * keeps a device's phase state in one record, threads.c in arrays.
 */
struct dl_bytes {
	const uint8_t *p;
	size_t stride;
};

static inline uint8_t dl_byte(struct dl_bytes b, uint32_t i)
{
	return b.p[(size_t)i * b.stride];
}

/*
 * A phase as a backend indexes it.  @g: bound.h's graph (the participating
 * indices in topological order, what each releases, latencies, profiles).
 * @list: the registered indices in dpm_list order (@nlist of them; NULL:
 * 0..nlist-1, the indices are positions).  @id: index -> device id (NULL:
 * the same); @index_of: device id -> index, DL_NONE when unregistered (@nid
 * ids).  @part: takes part in the phase; @on_main: the main thread runs its
 * callback itself (read for the participating indices).
 */
struct dl_phase_view {
	struct dl_phase_graph g;
	const uint32_t *list;
	uint32_t nlist;
	const uint32_t *id;
	const uint32_t *index_of;
	uint32_t nid;
	struct dl_bytes part, on_main;
};

/* What kind of phase a walk is for. */
struct dl_walk_how {
	const struct dl_phase_scheme *ps;  /* the phase under its order (order.h) */
	const struct dl_core *core;        /* kernel-async-v2's roots and leaves */
	unsigned phase;                    /* enum dl_phase */
};

/*
 * The main thread's walk, kept by a backend across phases (the complete
 * phase walks what the last prepare ran, backward).  v: the indices in
 * walk order (room for 2 * nindex: kernel-async-v2 lists its up-front
 * devices twice); nupfront: v2, the first entries, queued before the walk;
 * prepared: the device ids the last prepare walked; seen: scratch by index,
 * kept zero.
 */
struct dl_walk {
	uint32_t *v, n, nupfront;
	uint32_t *prepared, nprepared;
	uint8_t *seen;
};

int dl_walk_init(struct dl_walk *w, uint32_t nindex, uint32_t nid);
void dl_walk_fini(struct dl_walk *w);

/**
 * dl_phase_walk - the walk of the main PM thread through phase @v of @h
 * into @w: dpm_list (reversed when suspending and for complete), or
 * registration order (naive, and probing with the deferred retry);
 * complete walks what prepare ran, backward; classic async resume lists
 * every async device before the sync ones (6.12's "upfront" loop);
 * kernel-async-v2 lists its roots (resume) or leaves (suspend) first.  A
 * prepare records what it walks, for the complete.  The walk may list
 * indices outside the phase (the walker skips them).
 */
void dl_phase_walk(const struct dl_phase_view *v, const struct dl_walk_how *h, struct dl_walk *w);

/**
 * dl_phase_priorities - cp-first: each participating index's priority,
 * minus the longest chain of latencies from its start to the end of the
 * phase, into @prio (one per index; every index of @nindex is written, 0
 * outside the phase).
 */
void dl_phase_priorities(const struct dl_phase_graph *g, uint32_t nindex, int64_t *prio);

/*
 * levels: the topological level of each participating index (level, by
 * index), and the indices by level (order, level l at off[l]..off[l+1]),
 * each level in device-id order, the order its barrier releases them in;
 * left[l]: the devices of level l still to finish (the backend counts it
 * down).  mark: scratch by device id, kept zero.
 */
struct dl_levels {
	uint32_t *level, *off, *order, *left, nlevels;
	uint8_t *mark;
};

int dl_levels_init(struct dl_levels *lv, uint32_t nindex, uint32_t nid);
void dl_levels_fini(struct dl_levels *lv);

/** dl_phase_levels - the levels of phase @v into @lv (at least one level). */
void dl_phase_levels(const struct dl_phase_view *v, struct dl_levels *lv);

/**
 * dl_phase_plan - what scheme @ps needs planned before phase @v runs: its
 * levels (ps->barrier) into @lv, its priorities (ps->by_priority) into
 * @prio (all @nindex of them written).  Both backends plan through this,
 * so neither asks which order wants what.
 */
void dl_phase_plan(const struct dl_phase_view *v, const struct dl_phase_scheme *ps, uint32_t nindex,
		   struct dl_levels *lv, int64_t *prio);

/**
 * dl_phase_main_bound - the main thread's serial share of suspend or
 * resume phase @v of scheme @ps, walked as @w says: it handles its devices
 * one at a time in walk order, each no earlier than the devices it waits
 * for could be done (@est, by index: dl_bound_phase()'s earliest starts),
 * paying @main_ns per device it walks and @queue_ns per item it queues up
 * front.  Whatever the workers do, the phase cannot end before main has, so
 * this is a bound for the order being run (0 for probe, and for the orders
 * whose main thread only waits).
 */
int64_t dl_phase_main_bound(const struct dl_phase_view *v, const struct dl_walk *w,
			    const struct dl_phase_scheme *ps, const int64_t *est, int64_t main_ns,
			    int64_t queue_ns);

#endif
