/*
 * dl_log_result.c - a run's metrics rows from its dl_run_result
 * (dl_log_result.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sim/engine/engine.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_result.h"
#include "sim/scenario/scenario.h"

#define OP_METRICS 5   /* per op kind, below */
#define PH_METRICS 3   /* per PM phase of an op kind, below */
#define PH_KINDS 3     /* the op kinds with phases: probe, suspend, resume */

int dl_log_run_result(struct dl_log *log, const struct dl_run_result *r)
{
	static const char *const what[OP_METRICS] = { "makespan_ns", "lower_bound_ns",
						      "critical_path_ns", "order_bound_ns",
						      "work_ns" };
	static const char *const ph_what[PH_METRICS] = { "lower_bound_ns", "critical_path_ns",
							 "work_ns" };
	struct dl_metric m[20 + OP_METRICS * DL_MAX_OPS + PH_KINDS * DL_OP_PHASES * PH_METRICS];
	char names[DL_MAX_OPS][OP_METRICS][40];
	char ph_names[PH_KINDS * DL_OP_PHASES][PH_METRICS][48];
	size_t n = 0, nph = 0;

	m[n++] = (struct dl_metric){ "makespan_ns", (double)r->makespan_ns };
	m[n++] = (struct dl_metric){ "lower_bound_ns", (double)r->lower_bound_ns };
	m[n++] = (struct dl_metric){ "critical_path_ns", (double)r->critical_path_ns };
	m[n++] = (struct dl_metric){ "work_ns", (double)r->work_ns };
	m[n++] = (struct dl_metric){ "events", (double)r->events };
	m[n++] = (struct dl_metric){ "wall_ns", (double)r->wall_ns };
	m[n++] = (struct dl_metric){ "probe_attempts", (double)r->probe_attempts };
	m[n++] = (struct dl_metric){ "probe_defers", (double)r->probe_defers };
	m[n++] = (struct dl_metric){ "peak_workers", (double)r->peak_workers };
	m[n++] = (struct dl_metric){ "blocked_ns", (double)r->blocked_ns };
	m[n++] = (struct dl_metric){ "wakeups", (double)r->wakeups };
	m[n++] = (struct dl_metric){ "links_refused", (double)r->links_refused };
	/* async devices run on the main thread: MAX_WORK items were pending (order.h) */
	m[n++] = (struct dl_metric){ "sync_fallbacks", (double)r->sync_fallbacks };
	/* DES only (0 in threads mode): bounds for the order run, see engine.h */
	m[n++] = (struct dl_metric){ "main_bound_ns", (double)r->main_bound_ns };
	m[n++] = (struct dl_metric){ "order_bound_ns", (double)r->order_bound_ns };
	/* DES only: device_pm_move_to_tail() before deferred retries (engine.h) */
	m[n++] = (struct dl_metric){ "reorder_walks", (double)r->reorder_walks };
	m[n++] = (struct dl_metric){ "reorder_calls", (double)r->reorder_calls };
	m[n++] = (struct dl_metric){ "reorder_ns", (double)r->reorder_ns };
	m[n++] = (struct dl_metric){ "reorder_capped", (double)r->reorder_capped };
	for (uint32_t i = 0; i < r->nops; i++) {
		const struct dl_op_result *op = &r->op[i];
		const int64_t v[OP_METRICS] = { op->makespan_ns, op->lower_bound_ns,
						op->critical_path_ns, op->order_bound_ns,
						op->work_ns };
		bool first = true;

		for (uint32_t j = 0; j < i; j++)
			first &= r->op[j].kind != op->kind;
		if (!first)
			continue;   /* per-op metrics name the first op of each kind */
		for (int k = 0; k < OP_METRICS; k++) {
			snprintf(names[i][k], sizeof(names[i][k]), "%s.%s", dl_op_name(op->kind),
				 what[k]);
			m[n++] = (struct dl_metric){ names[i][k], (double)v[k] };
		}
		/*
		 * "suspend.suspend_noirq.work_ns", "probe.probe.work_ns": each
		 * phase's bound, its critical path and its CPU work (what
		 * explain's verdict needs)
		 */
		for (unsigned p = 0; p < DL_OP_PHASES && nph < PH_KINDS * DL_OP_PHASES; p++) {
			const struct dl_bound *b = &op->ph[p];
			const int64_t pv[PH_METRICS] = { b->lower_bound_ns, b->critical_path_ns,
							 b->work_ns };

			if (!(op->ph_ran & (1u << p)))
				continue;
			for (int k = 0; k < PH_METRICS; k++) {
				snprintf(ph_names[nph][k], sizeof(ph_names[nph][k]), "%s.%s.%s",
					 dl_op_name(op->kind),
					 p == DL_OP_PROBE_PHASE ? "probe" : dl_phase_name(p), ph_what[k]);
				m[n++] = (struct dl_metric){ ph_names[nph][k], (double)pv[k] };
			}
			nph++;
		}
	}
	/*
	 * A run that failed with -EOVERFLOW carries figures saturated at
	 * INT64_MAX: the log holds at most DL_T_MAX ("later than 2^62 ns"),
	 * the latest time `check` accepts, so that no reader does arithmetic
	 * on a figure near the edge of int64.
	 */
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(m[i].name);

		if (len > 3 && !strcmp(m[i].name + len - 3, "_ns") && m[i].value > (double)DL_T_MAX)
			m[i].value = (double)DL_T_MAX;
	}
	return dl_log_run_end(log, r->status, r->makespan_ns > DL_T_MAX ? DL_T_MAX : r->makespan_ns,
			      m, n);
}
