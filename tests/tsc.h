/*
 * tsc.h - a hand-built scenario for the engine tests (test_engine.c,
 * test_threads.c): a chain, a random DAG or a tree, registered consumer-first
 * so that probing defers and dpm_list must be reordered.  Header-only: each
 * test program includes it once.
 */
#ifndef DL_TESTS_TSC_H
#define DL_TESTS_TSC_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/dl_core.h"
#include "sim/scenario/scenario.h"

/* ---- a hand-built scenario ---- */

struct tsc {
	struct dl_scenario sc;
	struct dl_sc_device dev[512];
	struct dl_sc_link link[2048];
	struct dl_profile prof[1];
	struct dl_sc_op op[8];
	struct dl_sc_fault fault[2];
	char names[512 * 8];
};

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((rng_state >> 33) % n);
}

static void fixed(struct dl_latency *l, int64_t ns)
{
	memset(l, 0, sizeof(*l));
	l->dist = DL_DIST_FIXED;
	l->mean = ns;
	l->min = 0;
	l->max = INT64_MAX;
}

/*
 * @shape: 0 chain, 1 random DAG, 2 tree.  Devices are registered in reverse
 * topological order (consumer first) so that probing defers and dpm_list must
 * be reordered.
 */
static struct tsc *make(int shape, uint32_t n, uint64_t seed, bool zero_cost)
{
	struct tsc *t = calloc(1, sizeof(*t));
	uint32_t nl = 0;

	rng_state = seed;
	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		fixed(&t->prof[0].lat[k], 0);
	t->prof[0].lat[DL_LAT_PROBE] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 100000, 900000, 0, NULL };
	for (unsigned k = DL_LAT_PREPARE; k <= DL_LAT_COMPLETE; k++)
		t->prof[0].lat[k] = (struct dl_latency){ DL_DIST_UNIFORM, 0, 0, 10000, 500000, 0, NULL };
	for (uint32_t i = 0; i < n; i++) {
		/* topological index of device i is n-1-i: suppliers have higher i */
		t->dev[i].name_off = i * 8;
		snprintf(t->names + i * 8, 8, "d%u", i % 100000u);
		t->dev[i].parent = DL_SC_NONE;
		t->dev[i].async = (i % 5) != 0;
		if (shape == 2 && i > 0)
			t->dev[i].parent = rnd(i);   /* parents listed before children */
	}
	for (uint32_t i = 0; i + 1 < n; i++) {
		if (shape == 0) {
			t->link[nl++] = (struct dl_sc_link){ i, i + 1, 0 };
		} else if (shape == 1) {
			for (int k = 0; k < 2 && nl < 2048; k++) {
				uint32_t s = i + 1 + rnd(n - i - 1 < 20 ? n - i - 1 : 20);

				t->link[nl++] = (struct dl_sc_link){ i, s, k ? DL_FLAG_PM_RUNTIME : 0 };
			}
		}
	}
	t->sc.name = "test";
	t->sc.seed = seed;
	t->sc.names = t->names;
	t->sc.dev = t->dev;
	t->sc.ndev = n;
	t->sc.link = t->link;
	t->sc.nlink = nl;
	t->sc.prof = t->prof;
	t->sc.nprof = 1;
	t->sc.op = t->op;
	t->op[0].kind = DL_OP_PROBE;
	t->op[1].kind = DL_OP_SUSPEND;
	t->op[2].kind = DL_OP_RESUME;
	t->sc.nop = 3;
	t->sc.fault = t->fault;
	t->sc.cost = (struct dl_cost){ .queue_ns = -1, .wake_ns = -1, .switch_ns = -1,
				       .main_ns = -1, .probe_check_ns = -1, .handoff_ns = -1,
				       .resume_wake_ns = -1 };
	if (zero_cost)
		t->sc.cost = (struct dl_cost){ 0 };
	return t;
}

#endif
