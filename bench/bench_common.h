/* bench_common.h - scenarios and event captures shared by the benchmarks. */
#ifndef DLSIM_BENCH_COMMON_H
#define DLSIM_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "sim/core/dl_event.h"
#include "sim/engine/vcpu.h"
#include "sim/scenario/scenario.h"

/* scenarios/default.json with generate.devices = N; cached, never freed. */
const struct dl_scenario *bench_default_scenario(uint32_t n);
/* A pure generator scenario: topology, N devices, register_order; cached. */
const struct dl_scenario *bench_gen_scenario(const char *topology, uint32_t n,
					     const char *register_order);
/* The same with further "generate" overrides (at most 4), e.g. fanout=0. */
const struct dl_scenario *bench_gen_scenario_ex(const char *topology, uint32_t n,
						const char *register_order,
						const struct dl_override *extra, size_t nextra);

struct bench_events {
	struct dl_event *ev;
	size_t n, cap;
};
/* The events of one engine run (order kernel-async) of the default scenario
 * at N devices; cached. */
const struct bench_events *bench_capture(uint32_t n);

/*
 * A plain topological pass (Kahn) over a scenario's graph, parent and
 * supplier edges in CSR form, built outside the timing: BM_topo_pass, and
 * what BM_phase_vs_topo sets the engine's phases against.
 */
struct bench_csr {
	uint32_t n, m;
	uint32_t *off, *adj, *indeg0, *indeg, *queue;
	struct dl_vcpu_ev *ev;   /* bench_event_pass()'s heap, room for n */
};
struct bench_csr *bench_csr_build(const struct dl_scenario *sc);
void bench_csr_free(struct bench_csr *g);
/* One pass; returns the vertices sorted (g->n unless there is a cycle). */
uint32_t bench_kahn(struct bench_csr *g);
/*
 * One event-driven pass over @g, the least work any discrete-event
 * simulation of a phase does: every vertex ends a pseudo-random delay
 * (0 to 2 ms) after the last of its predecessors ends (no CPUs to share,
 * no rules), and the ends are taken in time order from a binary heap of the
 * engine's own events (sim/engine/vcpu.h), each releasing its successors.
 * Returns the vertices finished (g->n unless there is a cycle).
 */
uint32_t bench_event_pass(struct bench_csr *g);

#endif
