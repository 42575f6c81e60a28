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

/* The figures logged per op kind too (figures.h's op_metric). */
#define OP_METRIC(type, name, avail, op_metric, heading, width) + (op_metric)
#define OP_METRICS (0 DL_FIGURES(OP_METRIC))
/* Every figure, and the run's own: events, wall_ns, links_refused. */
#define RUN_METRIC(type, name, avail, op_metric, heading, width) + 1
#define RUN_METRICS (3 DL_FIGURES(RUN_METRIC))
/* An op_metric figure's name, and its value in op (nothing for the others). */
#define OP_NAME(type, name, avail, op_metric, heading, width) OP_NAME_##op_metric(name)
#define OP_NAME_0(name)
#define OP_NAME_1(name) #name,
#define OP_VALUE(type, name, avail, op_metric, heading, width) OP_VALUE_##op_metric(name)
#define OP_VALUE_0(name)
#define OP_VALUE_1(name) (double)op->name,
#define PH_METRICS 3   /* per PM phase of an op kind, below */
#define PH_KINDS 3     /* the op kinds with phases: probe, suspend, resume */

/* The run's figures (figures.h), then its own; returns how many. */
static size_t run_metrics(const struct dl_run_result *r, struct dl_metric *m)
{
	size_t n = 0;

#define RUN_SET(type, name, avail, op_metric, heading, width) \
	m[n++] = (struct dl_metric){ #name, (double)r->name };
	DL_FIGURES(RUN_SET)
#undef RUN_SET
	m[n++] = (struct dl_metric){ "events", (double)r->events };
	m[n++] = (struct dl_metric){ "wall_ns", (double)r->wall_ns };
	m[n++] = (struct dl_metric){ "links_refused", (double)r->links_refused };
	return n;
}

int dl_log_run_result(struct dl_log *log, const struct dl_run_result *r)
{
	static const char *const what[OP_METRICS] = {
		DL_FIGURES(OP_NAME)
	};
	static const char *const ph_what[PH_METRICS] = { "lower_bound_ns", "critical_path_ns",
							 "work_ns" };
	struct dl_metric m[RUN_METRICS + OP_METRICS * DL_MAX_OPS + PH_KINDS * DL_OP_PHASES * PH_METRICS];
	char names[DL_MAX_OPS][OP_METRICS][40];
	char ph_names[PH_KINDS * DL_OP_PHASES][PH_METRICS][48];
	size_t n = run_metrics(r, m), nph = 0;

	for (uint32_t i = 0; i < r->nops; i++) {
		const struct dl_op_result *op = &r->op[i];
		const double v[OP_METRICS] = {
			DL_FIGURES(OP_VALUE)
		};
		bool first = true;

		for (uint32_t j = 0; j < i; j++)
			first &= r->op[j].kind != op->kind;
		if (!first)
			continue;   /* per-op metrics name the first op of each kind */
		for (int k = 0; k < OP_METRICS; k++) {
			snprintf(names[i][k], sizeof(names[i][k]), "%s.%s", dl_op_name(op->kind),
				 what[k]);
			m[n++] = (struct dl_metric){ names[i][k], v[k] };
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
