/*
 * cmd_sweep_kernel.c - the summary of a kernel-mode sweep with twins: per
 * board, each kernel run against its DES twins through dl_diff_runs() (the
 * code `dlsim diff` and `make fidelity` use): the pairs of devices a
 * dependency orders and how many the twin orders the same way, the pairs
 * only timing orders, and per phase the ratio twin / kernel of the makespans.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sim/cli/sweep_cli.h"
#include "sim/log/dl_log_shard.h"
#include "sim/log/dl_diff.h"

#define FID_TOL_NS 1000000      /* as dlsim diff: gaps up to 1 ms do not order a pair */
#define FID_PAIRS 3             /* disagreeing pairs listed per kernel run and twin */

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

/* What one twin kind adds up to over a board's kernel runs. */
struct fid_kind {
	const char *mode;
	uint32_t runs;
	bool dep_known;
	uint64_t dep_pairs, dep_agree, pairs, agree;
	json_t *list, *ratios;       /* per run; per phase an array of ratios */
};

static json_t *phase_ratios(const struct dl_diff *d, struct fid_kind *fk)
{
	json_t *ph = json_object();

	for (uint32_t i = 0; i < d->nrows; i++) {
		const struct dl_diff_row *r = &d->rows[i];
		char key[2 * DL_DIFF_NAME + 2];
		json_t *arr;

		if (!r->phase[0] || r->a_ns < 0 || r->b_ns <= 0)
			continue;
		/* an op's later occurrences (suspend#2) under their own key */
		snprintf(key, sizeof(key), "%s%s%s", r->phase, strchr(r->op, '#') ? "@" : "",
			 strchr(r->op, '#') ? r->op : "");
		json_object_set_new(ph, key, json_real((double)r->a_ns / (double)r->b_ns));
		arr = json_object_get(fk->ratios, key);
		if (!arr) {
			arr = json_array();
			json_object_set_new(fk->ratios, key, arr);
		}
		json_array_append_new(arr, json_real((double)r->a_ns / (double)r->b_ns));
	}
	return ph;
}

static void add_pair(struct fid_kind *fk, sqlite3 *db, int64_t kid, int64_t tid,
		     const char *order, const char *kernel)
{
	struct dl_diff *d = NULL;
	int64_t which;
	json_t *r, *dis;

	int64_t both[2] = { tid, kid };
	char err[512];

	/* the two runs' events, wherever the sweep left them (its shards) */
	if (dl_log_attach_shards(db, both, 2, err, sizeof(err)) ||
	    dl_diff_runs(db, tid, kid, FID_TOL_NS, FID_PAIRS, &d, &which))
		return;
	fk->runs++;
	fk->dep_known = fk->dep_known && d->dep_known;
	fk->pairs += d->pairs;
	fk->agree += d->agree;
	fk->dep_pairs += d->dep_pairs;
	fk->dep_agree += d->dep_agree;
	dis = json_array();
	for (uint32_t i = 0; i < d->npair; i++)
		json_array_append_new(dis, json_pack("{s:s, s:s, s:s, s:s}",
			"op", d->rows[d->pair[i].row].op, "phase", d->rows[d->pair[i].row].phase,
			"first_in_twin", d->pair[i].dev1, "first_in_kernel", d->pair[i].dev2));
	r = json_pack("{s:I, s:I, s:s, s:s?, s:b, s:I, s:I, s:I, s:I, s:o, s:o}",
		      "kernel_run", (json_int_t)kid, "twin_run", (json_int_t)tid, "order", order,
		      "kernel", kernel, "dependencies_known", d->dep_known,
		      "dependency_pairs", (json_int_t)d->dep_pairs,
		      "dependency_agree", (json_int_t)d->dep_agree,
		      "timing_pairs", (json_int_t)(d->pairs - d->dep_pairs),
		      "timing_agree", (json_int_t)(d->agree - d->dep_agree),
		      "phase_ratio", phase_ratios(d, fk), "disagreeing", dis);
	json_array_append_new(fk->list, r);
	dl_diff_free(d);
}

json_t *sweep_kernel_fidelity(sqlite3 *db, const struct dl_sweep_plan *p, uint32_t s)
{
	static const char sql[] =
		"SELECT k.run_id, t.run_id, t.mode, k.order_name, k.kernel FROM sweep t"
		" JOIN metrics m ON m.run_id = t.run_id AND m.name = 'twin_of'"
		" JOIN sweep k ON k.run_id = CAST(m.value AS INTEGER)"
		" WHERE t.scenario_hash = ?1 AND t.mode = ?2 AND t.seed BETWEEN ?3 AND ?4"
		" AND t.status <> 'failed' AND k.mode = ?5 AND k.status <> 'failed'"
		" ORDER BY k.run_id";
	const char *const modes[] = { p->twin_boot ? "twin-model-boot" : "twin-model", "twin-replay" };
	json_t *out = json_object(), *pairs = json_array(), *pr;
	sqlite3_stmt *q;
	size_t i;

	if (!out || !pairs || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
		json_decref(pairs);
		return out;
	}
	for (unsigned m = 0; m < 2; m++) {
		struct fid_kind fk = { .mode = modes[m], .dep_known = true, .list = json_array(),
				       .ratios = json_object() };
		json_t *med = json_object(), *arr;
		const char *key;

		if (!(p->twins & (1u << m))) {
			json_decref(fk.list);
			json_decref(fk.ratios);
			json_decref(med);
			continue;
		}
		sqlite3_bind_text(q, 1, p->sc[s].hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, modes[m], -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 3, (int64_t)p->seed0);
		sqlite3_bind_int64(q, 4, (int64_t)(p->seed0 + p->nseeds - 1));
		sqlite3_bind_text(q, 5, p->mode, -1, SQLITE_STATIC);
		/* the pairs first: attaching a pair's shards needs no statement running */
		while (sqlite3_step(q) == SQLITE_ROW)
			json_array_append_new(pairs, json_pack("[I, I, s?, s?]",
				(json_int_t)sqlite3_column_int64(q, 0),
				(json_int_t)sqlite3_column_int64(q, 1),
				(const char *)sqlite3_column_text(q, 3),
				(const char *)sqlite3_column_text(q, 4)));
		sqlite3_reset(q);
		json_array_foreach(pairs, i, pr)
			add_pair(&fk, db, json_integer_value(json_array_get(pr, 0)),
				 json_integer_value(json_array_get(pr, 1)),
				 json_string_value(json_array_get(pr, 2)),
				 json_string_value(json_array_get(pr, 3)));
		json_array_clear(pairs);
		/* per phase, the median ratio over the board's kernel runs */
		json_object_foreach(fk.ratios, key, arr) {
			size_t n = json_array_size(arr);
			double *v = malloc(n * sizeof(*v));

			if (!v)
				continue;
			for (size_t i = 0; i < n; i++)
				v[i] = json_real_value(json_array_get(arr, i));
			qsort(v, n, sizeof(*v), cmp_double);
			json_object_set_new(med, key, json_real(n % 2 ? v[n / 2] :
								(v[n / 2 - 1] + v[n / 2]) / 2));
			free(v);
		}
		json_decref(fk.ratios);
		json_object_set_new(out, m ? "replay" : "model", json_pack(
			"{s:i, s:b, s:I, s:I, s:I, s:I, s:b, s:o, s:o}", "runs", (int)fk.runs,
			"dependencies_known", fk.dep_known,
			"dependency_pairs", (json_int_t)fk.dep_pairs,
			"dependency_agree", (json_int_t)fk.dep_agree,
			"timing_pairs", (json_int_t)(fk.pairs - fk.dep_pairs),
			"timing_agree", (json_int_t)(fk.agree - fk.dep_agree),
			"every_dependency_agrees", fk.runs && fk.dep_known && fk.dep_pairs == fk.dep_agree,
			"phase_ratio_median", med, "runs_compared", fk.list));
	}
	sqlite3_finalize(q);
	json_decref(pairs);
	return out;
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
	uint32_t boards[2] = { 0 }, agree[2] = { 0 };
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
			agree[m] += json_is_true(json_object_get(k, "every_dependency_agrees"));
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
		static const char *const phases[] = { "probe", "prepare", "suspend", "suspend_late",
						      "suspend_noirq", "resume_noirq", "resume_early",
						      "resume", "complete" };

		if (!boards[m])
			continue;
		printf("%s twins: %u of %u scenarios agree on every dependency-ordered pair; per"
		       " phase, twin/kernel over the scenarios (p10 median p90):\n", kinds[m],
		       agree[m], boards[m]);
		for (size_t ph = 0; ph < sizeof(phases) / sizeof(phases[0]); ph++) {
			double *v = malloc(json_array_size(json_object_get(o, "groups")) * sizeof(*v) + 1);
			size_t n = 0;

			json_array_foreach(json_object_get(o, "groups"), i, g) {
				json_t *x = json_object_get(json_object_get(json_object_get(json_object_get(
					g, "kernel_fidelity"), kinds[m]), "phase_ratio_median"), phases[ph]);

				if (v && json_is_real(x))
					v[n++] = json_real_value(x);
			}
			if (n) {
				qsort(v, n, sizeof(*v), cmp_double);
				printf("  %-14s %6.2f %6.2f %6.2f\n", phases[ph], v[n / 10], v[n / 2],
				       v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1]);
			}
			free(v);
		}
	}
}
