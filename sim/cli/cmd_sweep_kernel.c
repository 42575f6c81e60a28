/*
 * cmd_sweep_kernel.c - the summary of a kernel-mode sweep with twins: per
 * board, each kernel run against its DES twins, computed by
 * sim/sweep/fidelity.h (as `dlsim report`'s fidelity page is), printed here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sim/cli/sweep_cli.h"
#include "sim/sweep/fidelity.h"

void sweep_set_twin_of(sqlite3 *db)
{
	sqlite3_stmt *st;
	bool have = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('runs') WHERE name = 'twin_of'",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	have = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	/* an additive column, as dlsim twin adds it; the twins carry it as the metric twin_of */
	if (!have && sqlite3_exec(db, "ALTER TABLE runs ADD COLUMN twin_of INTEGER", NULL, NULL,
				  NULL) != SQLITE_OK)
		return;
	sqlite3_exec(db, "UPDATE runs SET twin_of = (SELECT CAST(m.value AS INTEGER) FROM metrics m"
		     " WHERE m.run_id = runs.run_id AND m.name = 'twin_of') WHERE twin_of IS NULL"
		     " AND run_id IN (SELECT run_id FROM metrics WHERE name = 'twin_of')",
		     NULL, NULL, NULL);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

json_t *sweep_kernel_fidelity(sqlite3 *db, const struct dl_sweep_plan *p, uint32_t s)
{
	struct dl_fid_board b = {
		.hash = p->sc[s].hash, .seed_lo = (int64_t)p->seed0,
		.seed_hi = (int64_t)(p->seed0 + p->nseeds - 1), .twins = p->twins,
		.twin_boot = p->twin_boot,
	};

	return dl_sweep_fidelity(db, &b);
}

/* Min, median and max of the per-phase medians, for a line of text. */
static void ratio_span(const json_t *med, char *buf, size_t len)
{
	size_t n = json_object_size(med), i = 0;
	double *v = malloc((n ? n : 1) * sizeof(*v));
	const char *key;
	json_t *x;

	snprintf(buf, len, "-");
	if (!v || !n) {
		free(v);
		return;
	}
	json_object_foreach((json_t *)med, key, x)
		v[i++] = json_real_value(x);
	qsort(v, n, sizeof(*v), cmp_double);
	snprintf(buf, len, "%.2f %.2f %.2f", v[0], v[n / 2], v[n - 1]);
	free(v);
}

void sweep_kernel_print(const json_t *o)
{
	static const char *const kinds[] = { "model", "replay" };
	uint32_t boards[2] = { 0 };
	json_t *g;
	size_t i;
	bool any = false;

	json_array_foreach(json_object_get(o, "groups"), i, g) {
		json_t *f = json_object_get(g, "kernel_fidelity");

		for (unsigned m = 0; f && m < 2; m++) {
			json_t *k = json_object_get(f, kinds[m]);
			char span[64], dep[48];
			json_int_t tp, ta;

			if (!k || !json_integer_value(json_object_get(k, "runs")))
				continue;
			if (!any)
				printf("\nkernel runs against their DES twins (pairs ordered with gaps > 1 ms;"
				       " phase ratio twin/kernel: min median max over phases):\n"
				       "%-40s %-6s %4s %17s %16s  %s\n", "scenario", "twin", "runs",
				       "dependency pairs", "timing pairs", "phase ratio");
			any = true;
			boards[m]++;
			tp = json_integer_value(json_object_get(k, "timing_pairs"));
			ta = json_integer_value(json_object_get(k, "timing_agree"));
			if (json_is_true(json_object_get(k, "dependencies_known")))
				snprintf(dep, sizeof(dep), "%lld/%lld",
					 (long long)json_integer_value(json_object_get(k, "dependency_agree")),
					 (long long)json_integer_value(json_object_get(k, "dependency_pairs")));
			else
				snprintf(dep, sizeof(dep), "unknown");
			ratio_span(json_object_get(k, "phase_ratio_median"), span, sizeof(span));
			printf("%-40.40s %-6s %4lld %17s %15.1f%%  %s\n",
			       json_string_value(json_object_get(g, "label")), kinds[m],
			       (long long)json_integer_value(json_object_get(k, "runs")), dep,
			       tp ? 100.0 * (double)ta / (double)tp : 100.0, span);
		}
	}
	for (unsigned m = 0; m < 2; m++) {
		json_t *sum, *x;
		const char *ph;

		if (!boards[m] || !(sum = dl_sweep_fidelity_phases(json_object_get(o, "groups"), kinds[m])))
			continue;
		printf("%s twins: %u of %u scenarios agree on every dependency-ordered pair; per"
		       " phase, twin/kernel over the scenarios (p10 median p90):\n", kinds[m],
		       (unsigned)json_integer_value(json_object_get(sum, "agree")),
		       (unsigned)json_integer_value(json_object_get(sum, "boards")));
		json_object_foreach(json_object_get(sum, "phases"), ph, x)
			printf("  %-14s %6.2f %6.2f %6.2f\n", ph, json_real_value(json_array_get(x, 0)),
			       json_real_value(json_array_get(x, 1)), json_real_value(json_array_get(x, 2)));
		json_decref(sum);
	}
}
