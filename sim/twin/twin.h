/*
 * twin.h - replay twins (issue 31): a logged run (des, threads, a kernel
 * run, anything `dlsim run` logs) read back from its database as what a
 * DES run of it needs: the scenario it ran (its devices, parents, async
 * flags, listed links, the failures it logged and a script rebuilt from
 * its events), its order, K, kernel rules, probe context and seed, and the
 * time every callback took (cost.h struct dl_lat_table), so that the DES
 * twin's callbacks last exactly as long: the difference between a run and
 * its twin is then the engine's scheduling model alone.
 */
#ifndef DL_TWIN_H
#define DL_TWIN_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sim/engine/cost.h"
#include "sim/order/order.h"
#include "sim/scenario/scenario.h"

struct dl_twin {
	json_t *scenario;        /* dlsim-scenario/1, every latency 0 (the table has them) */
	struct dl_lat_table lat; /* [op][dev][key], -1 where the run logged no callback */
	enum dl_order order;
	uint32_t workers;        /* K as the run had it */
	uint32_t kernel;         /* DL_KVER() of runs.kernel; 0: the order's default */
	uint64_t seed;
	bool probe_module;       /* runs.probe_context "module" (kernel runs: always) */
	char name[128], mode[16];
	uint32_t ncallbacks;     /* callbacks whose time the table holds */
};

/**
 * dl_twin_read - read run @run of @db into @tw (free with dl_twin_free()).
 * The run must be one the twin can rebuild: devices registered in id
 * order, a script of probe, suspend, resume, unbind and bind ops (add,
 * remove, link_add, link_del, rpm_get and rpm_put are not rebuilt from a
 * log: the run's metrics name the op kinds it ran).  Returns 0; -ENOENT (no such run), -EINVAL (a run the twin cannot
 * rebuild, or a log that is not dlsim's), -EIO, -ENOMEM, with @err filled.
 */
int dl_twin_read(sqlite3 *db, int64_t run, struct dl_twin *tw, struct dl_error *err);
void dl_twin_free(struct dl_twin *tw);

#endif
