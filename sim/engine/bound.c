/* bound.c - the lower bound of one phase (see bound.h). */
#include "sim/core/dl_sat.h"
#include "sim/engine/bound.h"
#include "sim/engine/cost.h"

struct dl_bound dl_bound_phase(const struct dl_phase_graph *g, const struct dl_scenario *sc,
			       uint32_t k, bool serial, int64_t *est)
{
	struct dl_bound b = { 0, 0, 0 };

	if (k == 0)
		k = 1;
	for (uint32_t i = 0; i < g->ntopo; i++)
		est[g->topo[i]] = 0;
	/*
	 * longest chain of latencies: push each index's finish time to those it
	 * releases; sums saturate (a chain of second-long latencies can pass
	 * INT64_MAX ns; the run itself fails once its clock passes 2^62 ns)
	 */
	for (uint32_t i = 0; i < g->ntopo; i++) {
		uint32_t d = g->topo[i];
		int64_t lat = dl_phase_lat(g, d), ef = dl_sat_add_i64(est[d], lat);

		b.work_ns = dl_sat_add_i64(b.work_ns,
					   dl_cost_cpu_part(lat, sc->prof[g->prof[d]].cpu_ppm));
		if (serial) {
			b.critical_path_ns = dl_sat_add_i64(b.critical_path_ns, lat);
			continue;
		}
		if (ef > b.critical_path_ns)
			b.critical_path_ns = ef;
		for (uint32_t j = g->off[d]; j < g->off[d + 1]; j++)
			if (est[g->adj[j]] < ef)
				est[g->adj[j]] = ef;
	}
	b.lower_bound_ns = b.work_ns / k + (b.work_ns % k != 0);
	if (b.critical_path_ns > b.lower_bound_ns)
		b.lower_bound_ns = b.critical_path_ns;
	return b;
}
