/*
 * explain.c - the account of one run (explain.h), built on the report's
 * reading of the log (tl_read) and its waits and critical path
 * (tl_analyse).  A phase's bound and verdict are the engine's, from the
 * cost model (bound.h): its critical path (the longest chain of callback
 * latencies) against its CPU work / K, where the work is the callbacks' CPU
 * parts only (most callbacks sleep), as the run logged them per phase
 * (metrics OP.PHASE.*).  Where the log has no such figures (a kernel-mode
 * run, an older log, an op the metrics do not name) the callbacks' CPU
 * share is unknown: the phase shows its longest chain of waits as realized
 * in the log and its callbacks' time, and no verdict.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/explain.h"
#include "report/timeline.h"
#include "sim/core/dl_sat.h"

#define EXPLAIN_CRIT_DEVS 5	/* critical devices named per phase */
#define EXPLAIN_REFUSED 10	/* refused links listed */
#define EXPLAIN_CASCADE 12	/* names listed per unbind cascade */

static const char *const op_names[TL_NOPS] = { "probe", "unbind", "suspend", "resume" };

struct inst {
	int op;
	uint16_t phase;
	int64_t t0, t1, start;
	int64_t cb, chain;	/* from the log: callbacks' time, longest chain of waits */
	uint32_t nseg;
	bool model;		/* the engine's figures below were logged for this phase */
	int64_t m_bound, m_chain, m_work;	/* its lower bound, critical path, CPU work */
};

static const char *dev_name(const struct tl_run *t, int64_t dev_id)
{
	size_t lo = 0, hi = t->ndevs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->devs[mid].dev_id == dev_id)
			return t->devs[mid].name ? t->devs[mid].name : "?";
		if (t->devs[mid].dev_id < dev_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return "?";
}

static void put_ms(FILE *f, int64_t ns)
{
	fprintf(f, "%.3f ms", (double)ns / 1e6);
}

/* Per instance: span, callbacks' time, longest chain (segments are in the order of their ends). */
static struct inst *instances(const struct tl_run *t)
{
	struct inst *in = calloc(t->ninst ? t->ninst : 1, sizeof(*in));
	int64_t *chain = malloc((t->nsegs ? t->nsegs : 1) * sizeof(*chain));

	if (!in || !chain) {
		free(in);
		free(chain);
		return NULL;
	}
	for (uint32_t i = 0; i < t->ninst; i++) {
		in[i].op = -1;
		in[i].t0 = INT64_MAX;
		in[i].t1 = -1;
	}
	for (size_t s = 0; s < t->nsegs; s++) {
		const struct tl_seg *g = &t->segs[s];
		struct inst *x = &in[g->inst];
		int64_t d = g->t1 - g->t0;

		chain[s] = d;
		if (g->wait != TL_NONE && !(g->flags & TL_SEG_BARRIER) && g->wait < s &&
		    t->segs[g->wait].inst == g->inst)
			chain[s] += chain[g->wait];
		x->op = g->op;
		x->phase = g->phase;
		if (g->t0 < x->t0)
			x->t0 = g->t0;
		if (g->t1 > x->t1)
			x->t1 = g->t1;
		x->cb += d;
		x->nseg++;
		if (chain[s] > x->chain)
			x->chain = chain[s];
	}
	for (uint32_t i = 0; i < t->ninst; i++) {
		in[i].start = in[i].t0;
		/* phases of one op follow each other across a barrier */
		if (i && in[i - 1].op == in[i].op && in[i].op != TL_PROBE && in[i].op != TL_UNBIND &&
		    in[i - 1].t1 <= in[i].t0)
			in[i].start = in[i - 1].t1;
	}
	free(chain);
	return in;
}

struct crit { size_t seg; int64_t dur; };

static int cmp_crit(const void *a, const void *b)
{
	const struct crit *x = a, *y = b;

	return (x->dur < y->dur) - (x->dur > y->dur);
}

/* "dev17 41%, dev9 22%": the longest callbacks on the critical path of instance I. */
static void put_crit(FILE *f, const struct tl_run *t, const struct inst *x, uint32_t i,
		     struct crit *buf)
{
	size_t n = 0;
	int64_t span = x->t1 - x->start;

	for (size_t s = 0; s < t->nsegs; s++)
		if (t->segs[s].inst == i && (t->segs[s].flags & TL_SEG_CRIT))
			buf[n++] = (struct crit){ s, t->segs[s].t1 - t->segs[s].t0 };
	if (!n) {
		fprintf(f, "none marked");
		return;
	}
	qsort(buf, n, sizeof(*buf), cmp_crit);
	for (size_t k = 0; k < n && k < EXPLAIN_CRIT_DEVS; k++)
		fprintf(f, "%s%s %.0f%%", k ? ", " : "", t->devs[t->segs[buf[k].seg].row].name,
			span > 0 ? 100.0 * (double)buf[k].dur / (double)span : 0.0);
	if (n > EXPLAIN_CRIT_DEVS)
		fprintf(f, " (+%zu more)", n - EXPLAIN_CRIT_DEVS);
}

/* CPU work / K rounded up, as the engine's bound takes it (bound.c). */
static int64_t work_per_cpu(int64_t work, uint32_t k)
{
	return work / k + (work % k != 0);
}

/*
 * ", bound B, chain-bound (chain C >= CPU work/K W)" from the engine's
 * figures (MODEL), or, without them, the log's chain of waits and the
 * callbacks' time, with no bound and no verdict: a callback's duration says
 * nothing of the CPU it held.
 */
static void put_bound(FILE *f, bool model, int64_t bound, int64_t chain, int64_t work, int64_t cb,
		      uint32_t k)
{
	int64_t wk = work_per_cpu(work, k);

	if (!model) {
		fprintf(f, ", chain ");
		put_ms(f, chain);
		fprintf(f, ", callbacks ");
		put_ms(f, cb);
		fprintf(f, " (CPU share unknown: no bound)");
		return;
	}
	fprintf(f, ", bound ");
	put_ms(f, bound);
	fprintf(f, ", %s (chain ", chain >= wk ? "chain-bound" : "CPU-bound");
	put_ms(f, chain);
	fprintf(f, " %s CPU work/K ", chain >= wk ? ">=" : "<");
	put_ms(f, wk);
	fprintf(f, ")");
}

static void refused_links(sqlite3 *db, const struct tl_run *t, FILE *f)
{
	sqlite3_stmt *st;
	int64_t n = 0;

	if (sqlite3_prepare_v2(db, "SELECT consumer_id, supplier_id, reason FROM refused "
			       "WHERE run_id = ?1 ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
		return;		/* an older log without the table */
	sqlite3_bind_int64(st, 1, t->run_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n < EXPLAIN_REFUSED) {
			const char *reason = (const char *)sqlite3_column_text(st, 2);

			fprintf(f, "%s  %s -> %s: %s\n", n ? "" : "refused links:\n",
				dev_name(t, sqlite3_column_int64(st, 1)),
				dev_name(t, sqlite3_column_int64(st, 0)), reason ? reason : "?");
		}
		n++;
	}
	sqlite3_finalize(st);
	if (n > EXPLAIN_REFUSED)
		fprintf(f, "  ... %lld refused in all\n", (long long)n);
	else if (!n)
		fprintf(f, "refused links: none\n");
}

/* An unbind instance: consumers end before their supplier, so the target ends last. */
static void cascades(const struct tl_run *t, const struct inst *in, FILE *f)
{
	int any = 0;

	for (uint32_t i = 0; i < t->ninst; i++) {
		size_t last = SIZE_MAX, n = 0;

		if (in[i].op != TL_UNBIND)
			continue;
		for (size_t s = 0; s < t->nsegs; s++)
			if (t->segs[s].inst == i)
				last = s;
		if (last == SIZE_MAX)
			continue;
		fprintf(f, "%s  unbind %s (", any++ ? "" : "unbind cascades:\n",
			t->devs[t->segs[last].row].name);
		put_ms(f, in[i].t1 - in[i].start);
		fprintf(f, "): ");
		for (size_t s = 0; s < t->nsegs; s++) {
			if (t->segs[s].inst != i || s == last)
				continue;
			if (n < EXPLAIN_CASCADE)
				fprintf(f, "%s%s", n ? ", " : "its consumers first: ",
					t->devs[t->segs[s].row].name);
			n++;
		}
		if (n > EXPLAIN_CASCADE)
			fprintf(f, " (+%zu more)", n - EXPLAIN_CASCADE);
		fprintf(f, "%s\n", n ? "" : "no consumer bound");
	}
}

static uint32_t run_workers(sqlite3 *db, int64_t run)
{
	sqlite3_stmt *st;
	uint32_t k = 1;

	if (sqlite3_prepare_v2(db, "SELECT workers FROM runs WHERE run_id = ?1", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0)
			k = (uint32_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return k;
}

/* Has the run its metric NAME (dl_log_result.c)?  Then its value in *V. */
static bool metric_get(sqlite3 *db, int64_t run, const char *name, double *v)
{
	sqlite3_stmt *st;
	bool found = false;

	if (sqlite3_prepare_v2(db, "SELECT value FROM metrics WHERE run_id = ?1 AND name = ?2", -1,
			       &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*v = sqlite3_column_double(st, 0);
		found = true;
	}
	sqlite3_finalize(st);
	return found;
}

/* The run's metric NAME, or 0: none, or an older log. */
static double run_metric(sqlite3 *db, int64_t run, const char *name)
{
	double v = 0;

	return metric_get(db, run, name, &v) ? v : 0;
}

/* Does the query Q about the run (?1) find a row?  (false on an SQL error: an older log) */
static bool run_has(sqlite3 *db, int64_t run, const char *q)
{
	sqlite3_stmt *st;
	bool found;

	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_int64(st, 1, run);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/*
 * The engine's figures of instance X, the first of its op kind in the log,
 * when the run logged them: metrics OP.PHASE.* (probe's one phase:
 * probe.probe.*, without module context's registration, which the op's
 * probe.* count and the log's probe segments do not; dl_log_result.c names
 * the first op of each kind).  Absent in kernel mode, where the CPU share
 * is not measured.
 */
static void model_figures(sqlite3 *db, const struct tl_run *t, struct inst *x)
{
	static const char *const what[3] = { "lower_bound_ns", "critical_path_ns", "work_ns" };
	double v[3];
	char name[96];

	for (int k = 0; k < 3; k++) {
		snprintf(name, sizeof(name), "%s.%s.%s", op_names[x->op], t->phases[x->phase],
			 what[k]);
		if (!metric_get(db, t->run_id, name, &v[k]))
			return;
	}
	x->model = true;
	x->m_bound = (int64_t)v[0];
	x->m_chain = (int64_t)v[1];
	x->m_work = (int64_t)v[2];
}

/* One op: the run of instances from I with its op (a probe or unbind: one instance); its end. */
static uint32_t group_end(const struct tl_run *t, const struct inst *in, uint32_t i)
{
	uint32_t j = i + 1;

	while (j < t->ninst && in[j].op == in[i].op && in[i].op != TL_PROBE &&
	       in[i].op != TL_UNBIND && in[j].start == in[j - 1].t1)
		j++;
	return j;
}

/*
 * Mark the instances whose phase has the engine's figures: in a simulated
 * run, the first op of each kind (probe, suspend, resume; unbind has none),
 * except resume after a suspend callback failed: the rollback's resume
 * phases come first in the log, but the metrics are the resume op's.
 */
static bool mark_model(sqlite3 *db, const struct tl_run *t, struct inst *in)
{
	bool seen[TL_NOPS] = { false }, any = false;
	bool rollback = run_has(db, t->run_id, "SELECT 1 FROM events WHERE run_id = ?1 AND "
				"kind = 'suspend_end' AND err != 0 LIMIT 1");

	if (run_has(db, t->run_id, "SELECT 1 FROM runs WHERE run_id = ?1 AND mode = 'kernel'"))
		return false;
	for (uint32_t i = 0; i < t->ninst;) {
		uint32_t j = group_end(t, in, i);
		int op = in[i].op;

		if (op >= 0 && !seen[op] && !(op == TL_RESUME && rollback))
			for (uint32_t p = i; p < j; p++) {
				model_figures(db, t, &in[p]);
				any |= in[p].model;
			}
		if (op >= 0)
			seen[op] = true;
		i = j;
	}
	return any;
}

/*
 * The share of the run's time des.c charged for device_pm_move_to_tail()
 * before deferred retries (metrics reorder_*), when it is at least a tenth
 * of SPAN.  The walk runs on the main thread before each retry: its time
 * lies inside the retried device's probe segment where main probes it
 * (sync devices), so the callbacks' time includes it there, and outside any
 * segment where main queues the retry (async devices under kernel-async);
 * the engine's bound (MODEL) never counts it.
 */
static void reorder_walks(sqlite3 *db, const struct tl_run *t, int64_t span, bool model, FILE *f)
{
	double ns = run_metric(db, t->run_id, "reorder_ns"), capped;
	double calls = run_metric(db, t->run_id, "reorder_calls");

	if (!(ns > 0) || ns < (double)span / 10)
		return;
	fprintf(f, "deferred probe: %.3f ms of the run's ", ns / 1e6);
	put_ms(f, span);
	fprintf(f, " is device_pm_move_to_tail() before %.0f deferred retries",
		run_metric(db, t->run_id, "reorder_walks"));
	if (!(calls > 0)) {
		/* kernel mode: measured in the guest, the calls not recorded */
		fprintf(f, " (measured in the guest)\n");
		return;
	}
	fprintf(f, " (%.3g device_reorder_to_tail() calls, one per path below the retried device",
		calls);
	if ((capped = run_metric(db, t->run_id, "reorder_capped")) > 0)
		fprintf(f, "; %.0f walks capped at 1000 s", capped);
	fprintf(f, "), on the main thread between retries (%s); priced by cost.reorder_ns and"
		" cost.reorder_visit_ns\n", model ? "not in the bound, which counts callbacks" :
		"in the callbacks' time above where the retried device probes there, not where it"
		" is queued");
}

/*
 * Module context: the main thread's device_add()s and device_link_add()s
 * before the probe phase (cost.h, register_ns and link_add_ns), in the probe
 * op's makespan and bound (probe.*) but before the log's first probe
 * segment, so not in the phase above: its time is the op's bound less the
 * phase's (PHASE_BOUND), the serial time dl_op_add_serial() added to it.
 */
static void registration(sqlite3 *db, int64_t run, int64_t phase_bound, FILE *f)
{
	double op_bound;
	int64_t ns;

	if (!metric_get(db, run, "probe.lower_bound_ns", &op_bound) ||
	    (ns = (int64_t)op_bound - phase_bound) <= 0)
		return;
	fprintf(f, "  before it: ");
	put_ms(f, ns);
	fprintf(f, " of the module's device_add()s and device_link_add()s on the main thread"
		" (in the op's makespan and bound, not the phase's)\n");
}

static int explain_tl(sqlite3 *db, const struct tl_run *t, enum dl_explain_detail detail,
		      FILE *f)
{
	int64_t total = 0;
	bool model;

	struct inst *in = instances(t);
	struct crit *buf = malloc((t->nsegs ? t->nsegs : 1) * sizeof(*buf));
	uint32_t k = run_workers(db, t->run_id);

	if (!in || !buf) {
		free(in);
		free(buf);
		return -ENOMEM;
	}
	model = mark_model(db, t, in);
	fprintf(f, "why run %lld took what it took (K = %u CPUs; %s):\n", (long long)t->run_id, k,
		model ? "bound = max(chain, CPU work/K) per phase, as the engine computed it" :
			"the callbacks' CPU share is not in the log, so no bound: chains of waits and callback times");
	for (uint32_t i = 0; i < t->ninst;) {
		uint32_t j = group_end(t, in, i);
		int64_t span = 0, bound = 0, chain = 0, work = 0, cb = 0, lchain = 0;
		bool op_model = true;

		for (uint32_t p = i; p < j; p++) {
			span = dl_sat_add_i64(span, dl_sat_sub_i64(in[p].t1, in[p].start));
			bound = dl_sat_add_i64(bound, in[p].m_bound);
			chain = dl_sat_add_i64(chain, in[p].m_chain);
			work = dl_sat_add_i64(work, in[p].m_work);
			cb = dl_sat_add_i64(cb, in[p].cb);
			lchain = dl_sat_add_i64(lchain, in[p].chain);
			op_model &= in[p].model;
		}
		total = dl_sat_add_i64(total, span);
		fprintf(f, "%s: ", in[i].op >= 0 ? op_names[in[i].op] : "?");
		put_ms(f, span);
		put_bound(f, op_model, bound, op_model ? chain : lchain, work, cb, k);
		fprintf(f, "\n");
		if (in[i].op == TL_PROBE && op_model && detail == DL_EXPLAIN_FULL)
			registration(db, t->run_id, bound, f);
		if (detail == DL_EXPLAIN_FULL) {
			for (uint32_t p = i; p < j; p++) {
				const struct inst *x = &in[p];

				fprintf(f, "  %-14s ", t->phases[x->phase]);
				put_ms(f, dl_sat_sub_i64(x->t1, x->start));
				put_bound(f, x->model, x->m_bound, x->model ? x->m_chain : x->chain,
					  x->m_work, x->cb, k);
				fprintf(f, "\n    critical path: ");
				put_crit(f, t, x, p, buf);
				fprintf(f, "\n");
			}
		}
		i = j;
	}
	if (detail == DL_EXPLAIN_FULL) {
		reorder_walks(db, t, total, model, f);
		refused_links(db, t, f);
		cascades(t, in, f);
	}
	free(in);
	free(buf);
	return 0;
}

static int64_t newest_run(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t id = -1;

	if (sqlite3_prepare_v2(db, "SELECT max(run_id) FROM runs", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

static int run_exists(sqlite3 *db, int64_t run)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM runs WHERE run_id = ?1", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, run);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int dl_explain_run(sqlite3 *db, int64_t run, enum dl_explain_detail detail, FILE *out, char *err,
		   size_t errlen)
{
	struct tl_run t;
	int ret, ex;

	if (run <= 0 && (run = newest_run(db)) < 0) {
		snprintf(err, errlen, "no run in the database");
		return -ENOENT;
	}
	ex = run_exists(db, run);
	if (ex < 0) {
		snprintf(err, errlen, "not a dlsim log: %s", sqlite3_errmsg(db));
		return -EINVAL;
	}
	if (!ex) {
		snprintf(err, errlen, "no run %lld in the database", (long long)run);
		return -ENOENT;
	}
	ret = tl_read(db, run, 0, &t, err, errlen);
	if (!ret)
		ret = tl_analyse(db, &t, err, errlen);
	if (!ret)
		ret = explain_tl(db, &t, detail, out);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	tl_free(&t);
	return ret;
}

int dl_explain_path(const char *path, int64_t run, enum dl_explain_detail detail, FILE *out,
		    char *err, size_t errlen)
{
	sqlite3 *db;
	int ret;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "?");
		sqlite3_close(db);
		return -EINVAL;
	}
	sqlite3_busy_timeout(db, 5000);
	ret = dl_explain_run(db, run, detail, out, err, errlen);
	sqlite3_close(db);
	return ret;
}

void dl_html_put(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

void dl_explain_html(sqlite3 *db, const struct tl_run *t, FILE *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return;
	if (explain_tl(db, t, DL_EXPLAIN_FULL, m)) {
		fclose(m);
		free(text);
		return;
	}
	fclose(m);
	fprintf(f, "<h2 id=\"explain\">Why run %lld took what it took</h2>\n<pre class=\"explain\">",
		(long long)t->run_id);
	dl_html_put(f, text);
	fprintf(f, "</pre>\n");
	free(text);
}
