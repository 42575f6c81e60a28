/* bound.c - the lower bound of one phase (see bound.h). */
#include "sim/engine/bound.h"
#include "sim/engine/cost.h"

struct dl_bound dl_bound_phase(const uint32_t *topo, uint32_t ntopo, const uint32_t *dep_off,
			       const uint32_t *dep, const int64_t *lat,
			       const struct dl_scenario *sc, uint32_t k, int64_t *best)
{
	struct dl_bound b = { 0, 0, 0 };

	if (k == 0)
		k = 1;
	for (uint32_t i = 0; i < ntopo; i++)
		best[topo[i]] = 0;
	/* longest chain of latencies: push each device's finish time to its waiters */
	for (uint32_t i = 0; i < ntopo; i++) {
		uint32_t d = topo[i];
		int64_t ef = best[d] + lat[d];

		b.work_ns += dl_cost_cpu_part(lat[d], sc->prof[sc->dev[d].profile].cpu_ppm);
		if (ef > b.critical_path_ns)
			b.critical_path_ns = ef;
		for (uint32_t j = dep_off[d]; j < dep_off[d + 1]; j++)
			if (best[dep[j]] < ef)
				best[dep[j]] = ef;
	}
	b.lower_bound_ns = (b.work_ns + k - 1) / k;
	if (b.critical_path_ns > b.lower_bound_ns)
		b.lower_bound_ns = b.critical_path_ns;
	return b;
}
