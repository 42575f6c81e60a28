/*
 * advise.h - what change pays most: re-simulate a scenario once per
 * candidate change and rank the changes by the makespan they save.  By
 * default only changes a kernel engineer can make: a device, a sync pair
 * (a device and its parent), a chain (a device and its sync ancestors) or a
 * subtree made async (device_enable_async_suspend()), every device async,
 * a device's callbacks twice as fast, a link dropped (unsafe), the kernel
 * upgraded from the classic async scheme to 6.16's.  Research changes that
 * no kernel offers (another order, twice the CPUs) only on request.  The
 * baseline is the scenario as it is: its order, its async flags, its K.
 * The engine is called through dl_run() only; the scenario is
 * copied, never modified.  The re-simulations may run on several threads,
 * with the same advice.  Nothing here prints.
 */
#ifndef DL_ADVISE_H
#define DL_ADVISE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine/engine.h"

#define DL_ADVISE_MAX_JOBS 256	/* dl_advise_opts.jobs */

enum dl_advice_kind {
	DL_ADV_ASYNC,		/* dev async (async=true) */
	DL_ADV_HALVE,		/* halve every latency of dev */
	DL_ADV_ORDER,		/* research: run under order */
	DL_ADV_CPUS,		/* research: run on cpus CPUs */
	DL_ADV_DROP_LINK,	/* drop link (dev consumer, dev2 supplier): unsafe */
	DL_ADV_ASYNC_PAIR,	/* dev and its sync parent dev2 async */
	DL_ADV_ASYNC_CHAIN,	/* dev and its sync ancestors async: n devices up to dev2 */
	DL_ADV_ASYNC_SUBTREE,	/* dev and its n - 1 sync descendants async */
	DL_ADV_ASYNC_ALL,	/* every device async */
	DL_ADV_UPGRADE,		/* the kernel upgraded: kernel-async -> kernel-async-v2 */
	DL_ADV_KIND_COUNT
};

struct dl_advice {
	uint8_t kind;
	bool unsafe;		/* removes an ordering guarantee */
	bool research;		/* no kernel offers it (another order, more CPUs) */
	uint32_t dev, dev2, link, cpus;
	uint32_t n;		/* devices made async (pair, chain, subtree, all) */
	enum dl_order order;
	const char *status;	/* the run's status: "ok", or "failed" */
	bool overflowed;	/* failed: its run passed 2^62 ns, no makespan (saved_ns 0) */
	int64_t saved_ns[DL_MAX_OPS];	/* per op of the script: baseline minus this run */
	int64_t total_saved_ns;	/* summed over the ops */
};

struct dl_advise_opts {
	enum dl_order order;	/* the baseline's; sync: kernel-async with every device sync */
	bool all_sync;		/* every device sync in the baseline (a log that ran so) */
	uint32_t workers;	/* 0: the scenario's cost.cpus, else the order's default */
	uint32_t max_candidates;	/* 0: no limit; else the first N of each kind */
	bool research;		/* also orders no kernel has and more CPUs */
	unsigned cost_profile;	/* the cost model's defaults (cost.h): 0 hardware, guest */
	bool probe_module;	/* probe as a module loaded after boot (kernel mode's way) */
	/*
	 * threads that run the changes, each on a working copy of its own
	 * (0 or 1: this one alone); at most DL_ADVISE_MAX_JOBS and one per
	 * planned run.  The advice is the same on any number.
	 */
	uint32_t jobs;
	atomic_int *stop;	/* set to stop early (Ctrl-C); may be NULL */
	/*
	 * progress (may be NULL): after each engine run, the runs so far and
	 * those planned (the baseline and every change; the pairs and chains
	 * tried where no single change helps are not known ahead).  Called
	 * from the thread whose run ended, one call at a time.
	 */
	void (*progress)(void *ctx, uint64_t done, uint64_t planned);
	void *progress_ctx;
};

struct dl_advise_result {
	struct dl_run_result base;	/* the scenario as it is */
	enum dl_order order;		/* the order every change ran under */
	uint32_t workers;		/* K of the baseline */
	struct dl_advice *adv;		/* every change simulated, best first */
	uint32_t nadv;
	uint64_t resims;		/* engine runs, the baseline included */
	int64_t wall_ns;
	bool interrupted;		/* stopped early: the changes simulated until then */
};

/**
 * dl_advise() - simulate the baseline and every candidate change (on
 * @o->jobs threads); sort the changes by total makespan saved (ties: kind,
 * device, second device, link, order, CPUs: a total order).  A stop
 * (@o->stop) ends the re-simulations under way within their next event
 * batch; the changes done are kept and @res->interrupted set.
 * Return: 0; a negative errno from the engine (baseline refused) or -ENOMEM.
 * Free @res->adv with free().
 */
int dl_advise(const struct dl_scenario *sc, const struct dl_advise_opts *o,
	      struct dl_advise_result *res);

/*
 * dl_latency_halved - @l twice as fast (mean, sd, bounds halved); an
 * empirical latency's samples halved into @buf (room for l.nsamp).
 */
struct dl_latency dl_latency_halved(struct dl_latency l, int64_t *buf);

/*
 * dl_advice_cmp - dl_advise()'s ranking, for qsort(): most saved first, then
 * a total order (kind, devices, link, order, CPUs), so that no two changes tie.
 */
int dl_advice_cmp(const void *x, const void *y);

/* "make 'cam0' async (device_enable_async_suspend())", ... into @buf, names whole. */
void dl_advice_describe(const struct dl_scenario *sc, const struct dl_advice *a, char *buf,
			size_t len);

#endif
