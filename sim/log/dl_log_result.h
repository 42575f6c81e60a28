/*
 * dl_log_result.h - end a logged run with an engine's result: its status
 * and the metrics table rows of a run (shared/SPEC.md "metrics"), the same
 * for `dlsim run` and a sweep's workers.
 */
#ifndef DL_LOG_RESULT_H
#define DL_LOG_RESULT_H

struct dl_log;
struct dl_run_result;

/* dl_log_run_end() with @r's status, makespan and metrics: the run's
 * totals, then per op kind (the first op of each) OP.makespan_ns,
 * OP.lower_bound_ns, OP.critical_path_ns and OP.order_bound_ns. */
int dl_log_run_result(struct dl_log *log, const struct dl_run_result *r);

#endif
