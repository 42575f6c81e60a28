/*
 * bound.h - the lower bound of one phase, the one copy both backends use:
 * max(critical path, ceil(CPU work / K)).  The critical path runs over the
 * phase's sampled latencies (CPU and sleep) along what waits for what; the
 * work is their CPU parts (cost.h), the only part that competes for the K
 * CPUs.  prepare and complete run one callback at a time, so there the
 * critical path is the chain of all their latencies.
 */
#ifndef DL_BOUND_H
#define DL_BOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/scenario/scenario.h"

/*
 * A phase's graph as a backend indexes it (des.c: by position in dpm_list,
 * threads.c: by device id): @topo lists the @ntopo participating indices so
 * that each comes before the indices it releases (the ones that wait for
 * it); @off/@adj (CSR by index) list those released indices (they may name
 * indices outside the phase, which are not read); @lat is each index's
 * sampled latency, @lat_stride bytes apart (des.c keeps it in a device's
 * record, threads.c in an array: dl_phase_lat()), and @prof its latency
 * profile (whose cpu_ppm says the CPU part).
 */
struct dl_phase_graph {
	const uint32_t *topo;
	uint32_t ntopo;
	const uint32_t *off, *adj;
	const int64_t *lat;
	size_t lat_stride;
	const uint32_t *prof;
};

static inline int64_t dl_phase_lat(const struct dl_phase_graph *g, uint32_t i)
{
	return *(const int64_t *)(const void *)((const char *)g->lat + (size_t)i * g->lat_stride);
}

struct dl_bound {
	int64_t critical_path_ns, work_ns, lower_bound_ns;
};

/**
 * dl_bound_phase - the lower bound of the phase @g on @k CPUs (0 is taken
 * as 1), with the profiles of @sc.  @serial: one callback at a time (the
 * critical path is the sum of the latencies).  @est, one int64_t per index
 * (the participating ones are overwritten, the others may be): on return,
 * each participating index's earliest start, the longest chain of
 * latencies it waits for (0 when @serial).
 */
struct dl_bound dl_bound_phase(const struct dl_phase_graph *g, const struct dl_scenario *sc,
			       uint32_t k, bool serial, int64_t *est);

#endif
