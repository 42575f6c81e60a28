/*
 * engine.h - the discrete-event engine: runs a scenario's script through
 * the link core in virtual time, under one ordering algorithm.
 */
#ifndef DL_ENGINE_H
#define DL_ENGINE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "sim/core/dl_event.h"
#include "sim/engine/bound.h"
#include "sim/engine/figures.h"
#include "sim/order/order.h"
#include "sim/scenario/scenario.h"

/*
 * Cost-model defaults (overridable by the scenario's "cost" object); what
 * each stands for in the kernel is in cost.h.
 */
#define DL_COST_QUEUE_NS        2000   /* queue a work item (async_schedule) */
#define DL_COST_WAKE_NS         5000   /* wake a blocked worker and switch to it */
#define DL_COST_SWITCH_NS       3000   /* a worker blocks: context switch away */
#define DL_COST_MAIN_NS          500   /* main thread's per-device list walk */
#define DL_COST_PROBE_CHECK_NS  1000   /* a probe attempt that defers */
#define DL_COST_HANDOFF_NS       250   /* the hand-off walk, per dependent (6.16+) */
#define DL_COST_REORDER_NS      1400   /* device_pm_move_to_tail() before a deferred retry */
#define DL_COST_REORDER_VISIT_NS 1175  /* and per call of its walk (6.12 guest) */
#define DL_COST_RPM_NS          3000   /* a runtime resume around a probe attempt */
#define DL_COST_RPM_IDLE_NS    20000   /* a pm_runtime_put() until pm_wq suspends */
#define DL_COST_REGISTER_NS   220000   /* module context: a device_add() (6.12 guest) */
#define DL_COST_LINK_ADD_NS   185000   /* module context: a device_link_add() (6.12 guest) */
#define DL_COST_CPUS               8
#define DL_COST_MAX_ACTIVE       256   /* async_wq's max_active: WQ_DFL_ACTIVE */

struct dl_lat_table;

struct dl_engine_opts {
	enum dl_order order;
	uint32_t workers;        /* 0: the order's default */
	uint32_t kernel;         /* DL_KVER() whose rules to follow; 0: the order's default */
	uint64_t seed;
	/*
	 * The probe op's context, for the orders that probe with the
	 * deferred-probe retry (sync, kernel-async, kernel-async-v2).  false,
	 * boot: devices and drivers meet during the initcalls, retries are held
	 * until late_initcall (after the whole registration walk), and the main
	 * thread walks the retries.  true, module: what `--mode kernel` does, a
	 * module registers devices and drivers after boot: deferred probing is
	 * enabled from the start, every bind queues deferred_probe_work_func()
	 * on a kworker of its own that retries (device_pm_move_to_tail() first)
	 * while the registration walk goes on, and the walk is the drivers'
	 * registrations: the sync driver's devices (probed in turn by the main
	 * thread), then the async driver's (queued).  The devices are
	 * registered first, all of them, then the listed links are added
	 * (dl_engine_register_module()), as the module does.
	 */
	bool probe_module;
	/*
	 * A replay twin's latencies (cost.h, sim/twin/): each callback lasts
	 * what it lasted in the logged run; NULL: the scenario's samples.
	 */
	const struct dl_lat_table *replay;
	/* the cost model's defaults (cost.h enum dl_cost_profile): 0, hardware; guest */
	unsigned cost_profile;
	struct dl_sink sink;     /* gets every event, time-stamped; may be empty */
	atomic_int *stop;  /* set asynchronously to interrupt */
	/* called now and then during long ops (op index, op count, events so far) */
	void (*progress)(void *ctx, uint32_t op, uint32_t nops, uint64_t events);
	void *progress_ctx;
};

#define DL_MAX_OPS 64
#define DL_OP_PROBE_PHASE DL_PH_COUNT   /* dl_op_result.ph[] of the probe phase */
#define DL_OP_PHASES (DL_PH_COUNT + 1)

struct dl_op_result {
	uint8_t kind;            /* enum dl_op_kind */
	int64_t start_ns;
	DL_FIGURES(DL_FIG_MEMBER)   /* figures.h: makespan_ns, lower_bound_ns, ... */
	/*
	 * ph[p]: the figures above of one phase alone, for each phase of the
	 * op's own kind that ran (bit p of ph_ran; oploop.c), so that the log,
	 * and explain, can say per phase what bounded it: p is a PM phase (enum
	 * dl_phase), or DL_OP_PROBE_PHASE for the probe op's one phase (without
	 * module context's registration before it, which the op's figures
	 * count).  A failed suspend's rollback (resume phases) is in the sums
	 * only.  Not set in kernel mode.
	 */
	struct dl_bound ph[DL_OP_PHASES];
	uint16_t ph_ran;
	/*
	 * The simulator's own CPU time (not simulated time): cpu_ns, the op's,
	 * from op_begin to op_end; ph_cpu_ns[p], phase p's alone, set with
	 * ph[p] (bit p of ph_ran).  The DES engine reads its thread's CPU
	 * clock, threads mode the process's (the pool works on other
	 * threads; so does the log's writer, counted too), at op and phase
	 * boundaries only.  Racing ops (threads mode) are in the first one's.
	 * 0 in kernel mode.  Not logged: it differs from run to run (`run
	 * --json` prints it).
	 */
	int64_t cpu_ns;
	int64_t ph_cpu_ns[DL_OP_PHASES];
	int err;                 /* negative errno of a failing callback, 0 */
	uint32_t fail_dev;       /* the device whose callback failed */
};

struct dl_run_result {
	const char *status;      /* "ok", "failed", "interrupted" */
	uint32_t workers, devices, links, links_refused;
	uint32_t kernel;         /* DL_KVER() whose rules the run followed */
	DL_FIGURES(DL_FIG_MEMBER)   /* figures.h: the ops' sums (peak_workers: the largest) */
	uint64_t events;
	int64_t wall_ns;
	int64_t cpu_ns;          /* the ops' cpu_ns, summed */
	uint32_t nops;
	struct dl_op_result op[DL_MAX_OPS];
	int err;
	uint32_t fail_dev;
};

/**
 * dl_engine_workers - K, the CPUs (simulated in DES, real in threads) a run
 * of @sc under @order gets: @requested (--workers) if nonzero, else the
 * scenario's "cost.cpus", else the order's default.  The one place K is
 * chosen: the engines use it and the CLI logs it.
 */
uint32_t dl_engine_workers(const struct dl_scenario *sc, enum dl_order order, uint32_t requested);

struct dl_core;
void dl_engine_add_listed_links(struct dl_core *c, const struct dl_scenario *sc, uint32_t only);
int dl_engine_register_listed(struct dl_core *c, const struct dl_scenario *sc);
int dl_engine_register_module(struct dl_core *c, const struct dl_scenario *sc,
			      void (*spend)(void *ctx, int64_t ns), void *ctx);
int dl_engine_presize(struct dl_core *c, const struct dl_scenario *sc);
int dl_engine_run(const struct dl_scenario *sc, const struct dl_engine_opts *o,
		  struct dl_run_result *r);

#endif
