/*
 * sw_fidelity.c - a kernel-mode sweep's kernel runs against their DES twins
 * (fidelity.h), through dl_diff_runs() (the code `dlsim diff` and `make
 * fidelity` use).  Read by the sweep's summary and by `dlsim report`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sim/log/dl_diff.h"
#include "sim/log/dl_log_shard.h"
#include "sim/sweep/fidelity.h"
#include "sim/sweep/sweep.h"

const char *const dl_fid_phases[] = { "probe", "prepare", "suspend", "suspend_late",
				      "suspend_noirq", "resume_noirq", "resume_early",
				      "resume", "complete" };
const unsigned dl_fid_nphases = sizeof(dl_fid_phases) / sizeof(dl_fid_phases[0]);

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* What one twin kind adds up to over a board's kernel runs. */
struct fid_kind {
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
	    dl_diff_runs(db, tid, kid, DL_FID_TOL_NS, DL_FID_PAIRS, &d, &which))
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

/* Per phase, the median ratio over the board's kernel runs. */
static json_t *medians(json_t *ratios)
{
	json_t *med = json_object(), *arr;
	const char *key;

	json_object_foreach(ratios, key, arr) {
		size_t n = json_array_size(arr);
		double *v = malloc(n * sizeof(*v));

		if (!v)
			continue;
		for (size_t i = 0; i < n; i++)
			v[i] = json_real_value(json_array_get(arr, i));
		qsort(v, n, sizeof(*v), cmp_double);
		json_object_set_new(med, key, json_real(n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2));
		free(v);
	}
	return med;
}

json_t *dl_sweep_fidelity(sqlite3 *db, const struct dl_fid_board *b)
{
	static const char sql[] =
		"SELECT k.run_id, t.run_id, t.mode, k.order_name, k.kernel FROM sweep t"
		" JOIN metrics m ON m.run_id = t.run_id AND m.name = 'twin_of'"
		" JOIN sweep k ON k.run_id = CAST(m.value AS INTEGER)"
		" WHERE t.scenario_hash = ?1 AND t.mode = ?2 AND t.seed BETWEEN ?3 AND ?4"
		" AND t.status <> 'failed' AND k.mode = 'kernel' AND k.status <> 'failed'"
		" ORDER BY k.run_id";
	const char *const modes[] = { b->twin_boot ? "twin-model-boot" : "twin-model", "twin-replay",
				      "twin-model-boot" };
	const char *const keys[] = { "model", "replay", "model-boot" };
	json_t *out = json_object(), *pairs = json_array(), *pr;
	sqlite3_stmt *q;
	size_t i;

	if (!out || !pairs || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
		json_decref(pairs);
		return out;
	}
	for (unsigned m = 0; m < 3; m++) {
		struct fid_kind fk = { .dep_known = true };

		if (!(b->twins & (1u << m)))
			continue;
		sqlite3_bind_text(q, 1, b->hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, modes[m], -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 3, b->seed_lo);
		sqlite3_bind_int64(q, 4, b->seed_hi);
		/* the pairs first: attaching a pair's shards needs no statement running */
		while (sqlite3_step(q) == SQLITE_ROW)
			json_array_append_new(pairs, json_pack("[I, I, s?, s?]",
				(json_int_t)sqlite3_column_int64(q, 0),
				(json_int_t)sqlite3_column_int64(q, 1),
				(const char *)sqlite3_column_text(q, 3),
				(const char *)sqlite3_column_text(q, 4)));
		sqlite3_reset(q);
		fk.list = json_array();
		fk.ratios = json_object();
		json_array_foreach(pairs, i, pr)
			add_pair(&fk, db, json_integer_value(json_array_get(pr, 0)),
				 json_integer_value(json_array_get(pr, 1)),
				 json_string_value(json_array_get(pr, 2)),
				 json_string_value(json_array_get(pr, 3)));
		json_array_clear(pairs);
		json_object_set_new(out, keys[m], json_pack(
			"{s:i, s:b, s:I, s:I, s:I, s:I, s:b, s:o, s:o}", "runs", (int)fk.runs,
			"dependencies_known", fk.dep_known,
			"dependency_pairs", (json_int_t)fk.dep_pairs,
			"dependency_agree", (json_int_t)fk.dep_agree,
			"timing_pairs", (json_int_t)(fk.pairs - fk.dep_pairs),
			"timing_agree", (json_int_t)(fk.agree - fk.dep_agree),
			"every_dependency_agrees", fk.runs && fk.dep_known && fk.dep_pairs == fk.dep_agree,
			"phase_ratio_median", medians(fk.ratios), "runs_compared", fk.list));
		json_decref(fk.ratios);
	}
	sqlite3_finalize(q);
	json_decref(pairs);
	return out;
}

json_t *dl_sweep_fidelity_boards(sqlite3 *db, char *err, size_t errlen)
{
	/* the boards with a twin of a kernel run */
	static const char sql[] =
		"SELECT k.scenario_hash, min(k.source), min(r.scenario)"
		" FROM sweep t JOIN metrics m ON m.run_id = t.run_id AND m.name = 'twin_of'"
		" JOIN sweep k ON k.run_id = CAST(m.value AS INTEGER) AND k.mode = 'kernel'"
		" LEFT JOIN runs r ON r.run_id = k.run_id"
		" GROUP BY k.scenario_hash ORDER BY 2, 1";
	json_t *boards = json_array(), *g;
	sqlite3_stmt *q;
	size_t i;
	int rc;

	if (!boards)
		return NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "not a sweep's database (%s)", sqlite3_errmsg(db));
		json_decref(boards);
		return NULL;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		json_array_append_new(boards, json_pack("{s:s?, s:s?, s:s?}",
			"hash", (const char *)sqlite3_column_text(q, 0),
			"label", (const char *)sqlite3_column_text(q, 1),
			"scenario", (const char *)sqlite3_column_text(q, 2)));
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot read the sweep table: %s", sqlite3_errmsg(db));
		json_decref(boards);
		return NULL;
	}
	json_array_foreach(boards, i, g) {
		struct dl_fid_board b = {
			.hash = json_string_value(json_object_get(g, "hash")),
			.seed_lo = INT64_MIN, .seed_hi = INT64_MAX,
			.twins = DL_SWEEP_TWIN_MODEL | DL_SWEEP_TWIN_REPLAY | DL_FID_TWIN_MODEL_BOOT,
		};

		if (b.hash)
			json_object_set_new(g, "kernel_fidelity", dl_sweep_fidelity(db, &b));
	}
	return boards;
}

json_t *dl_sweep_fidelity_phases(const json_t *groups, const char *kind)
{
	size_t n = json_array_size(groups), i;
	double *v = malloc((n ? n : 1) * sizeof(*v));
	json_t *out = json_object(), *phases = json_object(), *g;
	int boards = 0, agree = 0;

	if (!v || !out || !phases) {
		free(v);
		json_decref(out);
		json_decref(phases);
		return NULL;
	}
	json_array_foreach(groups, i, g) {
		json_t *k = json_object_get(json_object_get(g, "kernel_fidelity"), kind);

		if (!k || !json_integer_value(json_object_get(k, "runs")))
			continue;
		boards++;
		agree += json_is_true(json_object_get(k, "every_dependency_agrees"));
	}
	for (unsigned ph = 0; ph < dl_fid_nphases; ph++) {
		size_t m = 0;

		json_array_foreach(groups, i, g) {
			json_t *x = json_object_get(json_object_get(json_object_get(json_object_get(
				g, "kernel_fidelity"), kind), "phase_ratio_median"), dl_fid_phases[ph]);

			if (json_is_real(x))
				v[m++] = json_real_value(x);
		}
		if (!m)
			continue;
		qsort(v, m, sizeof(*v), cmp_double);
		json_object_set_new(phases, dl_fid_phases[ph], json_pack("[f, f, f, I]",
			v[m / 10], v[m / 2], v[(m * 9) / 10 < m ? (m * 9) / 10 : m - 1], (json_int_t)m));
	}
	free(v);
	json_object_set_new(out, "boards", json_integer(boards));
	json_object_set_new(out, "agree", json_integer(agree));
	json_object_set_new(out, "phases", phases);
	return out;
}
