/*
 * advise.h - what single change pays most: re-simulate a scenario once per
 * candidate change (make device X async; halve X's latencies; another
 * order; twice the CPUs; drop link X->Y) and rank the changes by the
 * makespan they save.  The engine is called through dl_engine_run() only;
 * the scenario is copied, never modified.  Nothing here prints.
 */
#ifndef DL_ADVISE_H
#define DL_ADVISE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine/engine.h"

enum dl_advice_kind {
	DL_ADV_ASYNC,		/* make dev async (async=true) */
	DL_ADV_HALVE,		/* halve every latency of dev */
	DL_ADV_ORDER,		/* run under order */
	DL_ADV_CPUS,		/* run on cpus CPUs */
	DL_ADV_DROP_LINK,	/* drop link (dev consumer, dev2 supplier): unsafe */
	DL_ADV_KIND_COUNT
};

struct dl_advice {
	uint8_t kind;
	bool unsafe;		/* removes an ordering guarantee */
	uint32_t dev, dev2, link, cpus;
	enum dl_order order;
	const char *status;	/* the run's status: "ok", or "failed" */
	int64_t saved_ns[DL_MAX_OPS];	/* per op of the script: baseline minus this run */
	int64_t total_saved_ns;	/* summed over the ops */
};

struct dl_advise_opts {
	enum dl_order order;
	uint32_t workers;	/* 0: the scenario's cost.cpus, else the order's default */
	uint32_t max_candidates;	/* 0: no limit; else the first N of each kind */
	atomic_int *stop;	/* set to stop early (Ctrl-C); may be NULL */
};

struct dl_advise_result {
	struct dl_run_result base;	/* the scenario as it is */
	uint32_t workers;		/* K of the baseline */
	struct dl_advice *adv;		/* every change simulated, best first */
	uint32_t nadv;
	uint64_t resims;		/* engine runs, the baseline included */
	int64_t wall_ns;
};

/**
 * dl_advise() - simulate the baseline and every single change; sort the
 * changes by total makespan saved (ties: kind, then device).
 * Return: 0; a negative errno from the engine (baseline refused) or -ENOMEM.
 * Free @res->adv with free().
 */
int dl_advise(const struct dl_scenario *sc, const struct dl_advise_opts *o,
	      struct dl_advise_result *res);

/* "make 'cam0' async", "halve 'i2c1' latencies", ... into @buf. */
void dl_advice_describe(const struct dl_scenario *sc, const struct dl_advice *a, char *buf,
			size_t len);

#endif
