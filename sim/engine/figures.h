/*
 * figures.h - the figures a run and each of its ops both have, listed once:
 * struct dl_run_result and struct dl_op_result (engine.h) declare them from
 * this list, the log's metrics (dl_log_result.c), `dlsim run --json` and the
 * run's table (cmd_run.c) are generated from it.  A figure added here is in
 * all of them.
 *
 * X(type, name, avail, op_metric, heading, width):
 *   avail      which backends compute it: DL_FIG_ALL; DL_FIG_DES, des only
 *              (null in JSON elsewhere); DL_FIG_ENGINES, des and threads
 *              mode (kernel mode does not record it)
 *   op_metric  also logged per op kind ("suspend.makespan_ns")
 *   heading    its column in the run's table (NULL: none), of width columns;
 *              a figure in ns prints as ms
 *
 * What they mean:
 *   makespan_ns .. work_ns: the op's time, the spec's lower bound (per
 *     phase max(critical path, CPU work / K), summed; it ignores who runs
 *     what, so it holds for every order), its critical path and CPU work.
 *   blocked_ns: worker time spent blocked on dependencies.
 *   peak_workers: work items alive at once (running or blocked).
 *   sync_fallbacks: async devices run on the main thread because MAX_WORK
 *     items were pending (order.h).
 *   main_bound_ns: per PM phase, the main thread's serial share under the
 *     order that was run: walking the list in order, main runs each of its
 *     devices (async=false, or all of them for sync and naive) for main_ns
 *     plus its latency, no earlier than the longest chain of latencies
 *     before it (link-aware orders), and pays main_ns + queue_ns for each
 *     item it queues up front (kernel-async); 0 for levels and cp-first,
 *     for probe, and for a phase a fault aborted.  order_bound_ns: per
 *     phase the larger of the two, summed; never above the makespan of the
 *     order run (tested for every order), not comparable across orders.
 *     Both are computed by the DES engine only (0 in threads mode).
 *   reorder_*: device_pm_move_to_tail(), which deferred_probe_work_func()
 *     does before every deferred retry (cost.h, reorder_ns and
 *     reorder_visit_ns): reorder_walks, the retries that paid it;
 *     reorder_calls, the device_reorder_to_tail() calls of those walks, one
 *     per path below the retried device (dl_reorder_visits(); saturating at
 *     UINT64_MAX); reorder_ns, the CPU time charged for them, on the main
 *     thread, serially, before each retry (in the makespan; not in work_ns
 *     nor the lower bound, which count callbacks); reorder_capped, the walks
 *     charged DL_COST_REORDER_CAP_NS instead of their calls' cost.  Charged
 *     by both engines (run.h dl_op_retry_walk(); threads mode spends it on
 *     main's CPU).  Kernel mode measures reorder_walks and reorder_ns
 *     (dlsim_kmod's "reorder" records: the guest's time in
 *     device_pm_move_to_tail()); the calls are not recorded there (0).
 *   A run's figures are its ops' sums (reorder_* saturating), but
 *   peak_workers, the largest.
 */
#ifndef DL_FIGURES_H
#define DL_FIGURES_H

#define DL_FIG_ALL 0      /* every backend */
#define DL_FIG_DES 1      /* the DES engine only */
#define DL_FIG_ENGINES 2  /* both engines, not kernel mode */

#define DL_FIGURES(X)                                                            \
	X(int64_t, makespan_ns, DL_FIG_ALL, 1, "makespan ms", 12)                \
	X(int64_t, lower_bound_ns, DL_FIG_ALL, 1, "lower bd ms", 12)             \
	X(int64_t, critical_path_ns, DL_FIG_ALL, 1, NULL, 0)                     \
	X(int64_t, work_ns, DL_FIG_ALL, 1, NULL, 0)                              \
	X(uint64_t, probe_attempts, DL_FIG_ALL, 0, "attempts", 9)                \
	X(uint64_t, probe_defers, DL_FIG_ALL, 0, "defers", 8)                    \
	X(uint32_t, peak_workers, DL_FIG_ALL, 0, "peak items", 10)               \
	X(int64_t, blocked_ns, DL_FIG_ALL, 0, "blocked wkr-ms", 15)              \
	X(uint64_t, wakeups, DL_FIG_ALL, 0, NULL, 0)                             \
	X(uint64_t, sync_fallbacks, DL_FIG_ALL, 0, NULL, 0)                      \
	X(int64_t, main_bound_ns, DL_FIG_DES, 0, NULL, 0)                        \
	X(int64_t, order_bound_ns, DL_FIG_DES, 1, NULL, 0)                       \
	X(uint64_t, reorder_walks, DL_FIG_ALL, 0, NULL, 0)                       \
	X(uint64_t, reorder_calls, DL_FIG_ENGINES, 0, NULL, 0)                   \
	X(int64_t, reorder_ns, DL_FIG_ALL, 0, NULL, 0)                           \
	X(uint64_t, reorder_capped, DL_FIG_ENGINES, 0, NULL, 0)

/* Declares the figures as members of a struct. */
#define DL_FIG_MEMBER(type, name, avail, op_metric, heading, width) type name;

#endif
