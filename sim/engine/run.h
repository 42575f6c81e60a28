/*
 * run.h - what both backends do around the ops of a run, once: start the
 * run (oploop.c), add an op's figures to the run's, and close the run (wall
 * time and status).
 */
#ifndef DL_RUN_H
#define DL_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine/engine.h"

struct dl_core;

/* oploop.c: the core and the figures known up front; the devices (see there). */
int dl_run_start(struct dl_run_result *r, struct dl_core *c, const struct dl_scenario *sc,
		 const struct dl_engine_opts *o);
int dl_run_devices(struct dl_core *c, const struct dl_scenario *sc);

struct dl_bound;

/*
 * dl_op_add_phase - add a phase to @opr: its @makespan, its lower bound,
 * critical path and work (@b, bound.h), and, when the backend computes it
 * (@main_bound >= 0; des.c), the main thread's serial share and the order's
 * bound, max(lower bound, main bound).
 */
void dl_op_add_phase(struct dl_op_result *opr, int64_t makespan, const struct dl_bound *b,
		     int64_t main_bound);
/* Serial time of an op outside its phases (module context's registration): makespan and bounds. */
void dl_op_add_serial(struct dl_op_result *opr, int64_t ns);

struct dl_costs;

/*
 * dl_op_retry_walk - what a walker of the deferral (main, or the
 * deferred-probe kworker) pays for device @d, which it just took off the
 * active list, in both backends: device_pm_move_to_tail()'s walk
 * (dl_reorder_visits(), dl_cost_reorder(), counted in @opr's reorder
 * figures) and the retry path (dl_cost_retry()).  It reads the core (and
 * keeps its memo): on real threads, under the core lock.
 */
int64_t dl_op_retry_walk(struct dl_op_result *opr, const struct dl_costs *c, struct dl_core *core,
			 uint32_t d);

/*
 * dl_run_account_op - add @op to @r: every figure, except the makespan of an
 * op that @overlaps another (a racing op, threads mode); the first op that
 * failed on a device names the run's failure.
 */
void dl_run_account_op(struct dl_run_result *r, const struct dl_op_result *op, bool overlaps);

/*
 * dl_run_finish - the run's wall time from @wall0 (dl_mono_ns()) and its
 * status from @err (the run's error, negative errno) and @failed (an op
 * failed on an injected fault); returns what dl_engine_run() returns.
 */
int dl_run_finish(struct dl_run_result *r, int64_t wall0, int err, bool failed);

#endif
