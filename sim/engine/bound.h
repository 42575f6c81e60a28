/*
 * bound.h - the lower bound of one phase, as des.c computes it:
 * max(critical path, ceil(CPU work / K)): the critical path runs over the
 * phase's sampled latencies (CPU and sleep), the work is their CPU parts
 * (cost.h), the only part that competes for the K CPUs.  Shared by the
 * threads engine (des.c keeps its own inline copy).
 */
#ifndef DL_BOUND_H
#define DL_BOUND_H

#include <stdint.h>

#include "sim/scenario/scenario.h"

struct dl_bound {
	int64_t critical_path_ns, work_ns, lower_bound_ns;
};

/**
 * dl_bound_phase - the lower bound of a phase.  @topo lists the @ntopo
 * participating devices so that every device comes before the devices that
 * wait for it; @dep_off/@dep (CSR, indexed by device id) list those waiting
 * devices; @lat is each device's latency, of which its profile in @sc
 * says the CPU part; @best is scratch of one int64_t per device id
 * (overwritten).  @k: CPUs (0 is taken as 1).
 */
struct dl_bound dl_bound_phase(const uint32_t *topo, uint32_t ntopo, const uint32_t *dep_off,
			       const uint32_t *dep, const int64_t *lat,
			       const struct dl_scenario *sc, uint32_t k, int64_t *best);

#endif
