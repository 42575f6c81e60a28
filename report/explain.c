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
 * in the log and its callbacks' time, and no verdict.  What set each
 * phase's time is found by walking back from its last callback
 * (attribute()): the parts add up to the phase's time.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/explain.h"
#include "report/timeline.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_shard.h"
#include "sim/core/dl_sat.h"

#define EXPLAIN_CRIT_DEVS 5	/* critical devices named per phase */
#define EXPLAIN_REFUSED 10	/* refused links listed */
#define EXPLAIN_CASCADE 12	/* names listed per unbind cascade */

static const char *const op_names[TL_NOPS] = { "probe", "unbind", "suspend", "resume" };

/*
 * What set a phase's makespan, from the backward walk of attribute(): the
 * parts add up to the span from the phase's start to its last callback's end.
 */
struct shares {
	int64_t main;		/* callbacks on the main PM thread, one after another */
	int64_t chain;		/* callbacks on workers, each waiting for the one before */
	int64_t contention;	/* ready, but every CPU busy (CPU work in the model only) */
	int64_t dispatch;	/* ready, not started: queueing, wake-ups, the walk */
	int64_t wait;		/* ready, not started, CPU share unknown: either of the two above */
	uint32_t nmain, nchain;	/* callbacks on the path per kind */
};

struct inst {
	int op;
	uint16_t phase;
	int64_t t0, t1, start;
	int64_t cb, chain;	/* from the log: callbacks' time, longest chain of waits */
	uint32_t nseg;
	bool model;		/* the engine's figures below were logged for this phase */
	int64_t m_bound, m_chain, m_work;	/* its lower bound, critical path, CPU work */
	struct shares sh;	/* what set its makespan (attribute()) */
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

/*
 * The phase instances' segments grouped by instance, each group in end
 * order (the log's), and the same for the main PM thread's alone; the
 * walked paths (attribute()) in PATH, an instance's within its group's room.
 */
struct groups {
	uint32_t *off, *seg;	/* seg[off[i]..off[i + 1]): instance i */
	uint32_t *moff, *mseg;	/* the same, main-thread segments only */
	uint32_t *path, *npath;	/* path[off[i]..off[i] + npath[i]): its walk, last first */
};

static void groups_free(struct groups *g)
{
	free(g->off);
	free(g->seg);
	free(g->moff);
	free(g->mseg);
	free(g->path);
	free(g->npath);
}

/* Worker 0 is the main PM thread in the orders that have one (des and the guest log alike). */
static bool on_main(const struct tl_seg *s, bool has_main)
{
	return has_main && s->worker == 0;
}

static int groups_build(const struct tl_run *t, bool has_main, struct groups *g)
{
	size_t n = t->ninst + 1;
	uint32_t *fill;

	memset(g, 0, sizeof(*g));
	g->off = calloc(n + 1, sizeof(*g->off));
	g->moff = calloc(n + 1, sizeof(*g->moff));
	g->seg = malloc((t->nsegs + 1) * sizeof(*g->seg));
	g->mseg = malloc((t->nsegs + 1) * sizeof(*g->mseg));
	g->path = malloc((t->nsegs + 1) * sizeof(*g->path));
	g->npath = calloc(n, sizeof(*g->npath));
	fill = calloc(n, sizeof(*fill));
	if (!g->off || !g->moff || !g->seg || !g->mseg || !g->path || !g->npath || !fill) {
		free(fill);
		groups_free(g);
		return -ENOMEM;
	}
	for (size_t s = 0; s < t->nsegs; s++) {
		g->off[t->segs[s].inst + 1]++;
		g->moff[t->segs[s].inst + 1] += on_main(&t->segs[s], has_main);
	}
	for (uint32_t i = 0; i < t->ninst; i++) {
		g->off[i + 1] += g->off[i];
		g->moff[i + 1] += g->moff[i];
	}
	for (size_t s = 0; s < t->nsegs; s++)
		g->seg[g->off[t->segs[s].inst] + fill[t->segs[s].inst]++] = (uint32_t)s;
	memset(fill, 0, n * sizeof(*fill));
	for (size_t s = 0; s < t->nsegs; s++)
		if (on_main(&t->segs[s], has_main))
			g->mseg[g->moff[t->segs[s].inst] + fill[t->segs[s].inst]++] = (uint32_t)s;
	free(fill);
	return 0;
}

/* The main thread's last segment of instance I to end by T and before segment S, or TL_NONE. */
static uint32_t main_before(const struct tl_run *t, const struct groups *g, uint32_t i, int64_t at,
			    uint32_t s)
{
	uint32_t lo = g->moff[i], hi = g->moff[i + 1];

	while (lo < hi) {	/* the first that ends after AT */
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->segs[g->mseg[mid]].t1 <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > g->moff[i] && g->mseg[lo - 1] >= s)
		lo--;
	return lo > g->moff[i] ? g->mseg[lo - 1] : TL_NONE;
}

/*
 * The times of instance I during which at least K of its callbacks ran at
 * once (every CPU busy): sorted disjoint intervals in *IV (pairs), *NIV of them.
 */
struct edge { int64_t t; int d; };

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->d - y->d;	/* ends before starts at one instant */
}

static int saturated(const struct tl_run *t, const struct groups *g, uint32_t i, uint32_t k,
		     int64_t **iv, size_t *niv)
{
	size_t n = g->off[i + 1] - g->off[i], m = 0;
	struct edge *e = malloc((2 * n + 1) * sizeof(*e));
	int64_t *out = malloc((2 * n + 2) * sizeof(*out));
	uint32_t busy = 0;

	if (!e || !out) {
		free(e);
		free(out);
		return -ENOMEM;
	}
	for (size_t j = 0; j < n; j++) {
		const struct tl_seg *s = &t->segs[g->seg[g->off[i] + j]];

		e[2 * j] = (struct edge){ s->t0, 1 };
		e[2 * j + 1] = (struct edge){ s->t1, -1 };
	}
	qsort(e, 2 * n, sizeof(*e), cmp_edge);
	for (size_t j = 0; j < 2 * n; j++) {
		uint32_t was = busy;

		busy = (uint32_t)((int)busy + e[j].d);
		if (was < k && busy >= k)
			out[m++] = e[j].t;
		else if (was >= k && busy < k)
			out[m++] = e[j].t;
	}
	free(e);
	*iv = out;
	*niv = m / 2;
	return 0;
}

/* How much of [A, B) lies in the intervals IV. */
static int64_t overlap(const int64_t *iv, size_t niv, int64_t a, int64_t b)
{
	size_t lo = 0, hi = niv;
	int64_t sum = 0;

	while (lo < hi) {	/* the first interval that ends after A */
		size_t mid = lo + (hi - lo) / 2;

		if (iv[2 * mid + 1] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j < niv && iv[2 * j] < b; j++) {
		int64_t lo = iv[2 * j] > a ? iv[2 * j] : a, hi = iv[2 * j + 1] < b ? iv[2 * j + 1] : b;

		if (hi > lo)
			sum += hi - lo;
	}
	return sum;
}

/*
 * attribute() - what set instance I's makespan: walk back from its last
 * callback to its start, each callback's predecessor being what it waited
 * for last: the dependency it waited for (its child, consumer, parent or
 * supplier: tl_analyse()) or, on the main thread or where the walk queues it,
 * the main thread's callback before it.  The callbacks walked are the main
 * thread's serial work (on it) or a dependency chain (on workers); the gaps
 * between them are time a callback was ready but not running: CPU
 * contention where every one of the K CPUs was busy, if the model knows the
 * callbacks' CPU work (CPU), dispatch overhead otherwise (queueing,
 * wake-ups, the walk), or, with the CPU share unknown (!MODEL), either.
 */
static int attribute(const struct tl_run *t, struct groups *g, struct inst *x, uint32_t i,
		     uint32_t k, bool has_main)
{
	bool cpu = x->model && x->m_work > 0;
	int64_t *iv = NULL;
	size_t niv = 0;
	uint32_t cur = TL_NONE, n = 0;

	memset(&x->sh, 0, sizeof(x->sh));
	if (g->off[i] == g->off[i + 1])
		return 0;
	cur = g->seg[g->off[i + 1] - 1];	/* ends last (end order) */
	if (cpu && saturated(t, g, i, k, &iv, &niv))
		return -ENOMEM;
	while (cur != TL_NONE && n < g->off[i + 1] - g->off[i]) {
		const struct tl_seg *s = &t->segs[cur];
		uint32_t dep = s->wait, pm, pred;
		int64_t from, gap;

		g->path[g->off[i] + n++] = cur;
		if (on_main(s, has_main)) {
			x->sh.main += s->t1 - s->t0;
			x->sh.nmain++;
		} else {
			x->sh.chain += s->t1 - s->t0;
			x->sh.nchain++;
		}
		if (dep != TL_NONE && ((s->flags & TL_SEG_BARRIER) || dep >= cur ||
				       t->segs[dep].inst != i || t->segs[dep].t1 > s->t0))
			dep = TL_NONE;
		pm = has_main ? main_before(t, g, i, s->t0, cur) : TL_NONE;
		if (dep == TL_NONE)
			pred = pm;
		else if (pm == TL_NONE)
			pred = dep;
		else if (t->segs[pm].t1 != t->segs[dep].t1)
			pred = t->segs[pm].t1 > t->segs[dep].t1 ? pm : dep;
		else
			pred = on_main(s, has_main) ? pm : dep;
		from = pred != TL_NONE ? t->segs[pred].t1 : x->start;
		gap = s->t0 > from ? s->t0 - from : 0;
		if (!x->model) {
			x->sh.wait += gap;
		} else if (on_main(s, has_main) || !cpu) {
			x->sh.dispatch += gap;
		} else {
			int64_t c = overlap(iv, niv, from, s->t0);

			x->sh.contention += c;
			x->sh.dispatch += gap - c;
		}
		cur = pred;
	}
	g->npath[i] = n;
	free(iv);
	return 0;
}

static void shares_add(struct shares *a, const struct shares *b)
{
	a->main = dl_sat_add_i64(a->main, b->main);
	a->chain = dl_sat_add_i64(a->chain, b->chain);
	a->contention = dl_sat_add_i64(a->contention, b->contention);
	a->dispatch = dl_sat_add_i64(a->dispatch, b->dispatch);
	a->wait = dl_sat_add_i64(a->wait, b->wait);
	a->nmain += b->nmain;
	a->nchain += b->nchain;
}

static const char *const share_names[5] = {
	"main thread", "chain", "CPU contention", "dispatch", "waiting to start",
};

static void share_vals(const struct shares *sh, int64_t v[5])
{
	v[0] = sh->main;
	v[1] = sh->chain;
	v[2] = sh->contention;
	v[3] = sh->dispatch;
	v[4] = sh->wait;
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "; set by: chain 97%, main thread 2%, dispatch 1%": the shares, largest first. */
static void put_set_by(FILE *f, const struct shares *sh, int64_t span)
{
	int64_t v[5];
	bool done[5] = { false };
	int printed = 0;

	share_vals(sh, v);
	for (int r = 0; r < 5; r++) {
		int best = -1;

		for (int j = 0; j < 5; j++)
			if (!done[j] && v[j] > 0 && (best < 0 || v[j] > v[best]))
				best = j;
		if (best < 0 || pct(v[best], span) < 0.5)
			break;
		done[best] = true;
		fprintf(f, "%s%s %.0f%%", printed++ ? ", " : "; set by: ", share_names[best],
			pct(v[best], span));
	}
}

static int cmp_seg_dur(const void *a, const void *b, void *ctx)
{
	const struct tl_run *t = ctx;
	const struct tl_seg *x = &t->segs[*(const uint32_t *)a], *y = &t->segs[*(const uint32_t *)b];
	int64_t dx = x->t1 - x->t0, dy = y->t1 - y->t0;

	return (dx < dy) - (dx > dy);
}

/*
 * The share lines of instance I: each part with its time and share of the
 * span, the main thread's top callbacks, the chain's devices in order (the
 * longest EXPLAIN_CRIT_DEVS, the rest counted).
 */
static void put_shares(FILE *f, const struct tl_run *t, const struct groups *g,
		       const struct inst *x, uint32_t i, bool has_main, uint32_t *buf)
{
	int64_t span = x->t1 - x->start, v[5];
	const uint32_t *path = g->path + g->off[i];
	uint32_t np = g->npath[i], n = 0;

	share_vals(&x->sh, v);
	for (int j = 0; j < 5; j++) {
		if (v[j] <= 0)
			continue;
		fprintf(f, "    %-16s ", share_names[j]);
		put_ms(f, v[j]);
		fprintf(f, " %3.0f%%", pct(v[j], span));
		n = 0;
		if (j == 0) {	/* the main thread's callbacks, longest first */
			for (uint32_t p = 0; p < np; p++)
				if (on_main(&t->segs[path[p]], has_main))
					buf[n++] = path[p];
			qsort_r(buf, n, sizeof(*buf), cmp_seg_dur, (void *)t);
			if (n == 1)
				fprintf(f, "  1 callback on the main thread:");
			else
				fprintf(f, "  %u callbacks one after another on the main thread, in "
					"dpm_list order; longest:", n);
			for (uint32_t p = 0; p < n && p < EXPLAIN_CRIT_DEVS; p++) {
				fprintf(f, "%s %s ", p ? "," : "", t->devs[t->segs[buf[p]].row].name);
				put_ms(f, t->segs[buf[p]].t1 - t->segs[buf[p]].t0);
			}
		} else if (j == 1) {	/* the chain in time order, its longest links named */
			int64_t cut = 0;
			uint32_t shown = 0, hidden = 0;

			for (uint32_t p = 0; p < np; p++)
				if (!on_main(&t->segs[path[p]], has_main))
					buf[n++] = path[p];
			if (n > EXPLAIN_CRIT_DEVS) {
				uint32_t *tmp = buf + n;

				memcpy(tmp, buf, n * sizeof(*buf));
				qsort_r(tmp, n, sizeof(*tmp), cmp_seg_dur, (void *)t);
				cut = t->segs[tmp[EXPLAIN_CRIT_DEVS - 1]].t1 -
				      t->segs[tmp[EXPLAIN_CRIT_DEVS - 1]].t0;
			}
			if (n == 1)
				fprintf(f, "  1 callback on a worker:");
			else
				fprintf(f, "  %u callbacks on workers, each waiting for the one before:",
					n);
			for (uint32_t p = n; p-- > 0;) {
				const struct tl_seg *s = &t->segs[buf[p]];

				if (s->t1 - s->t0 < cut || shown == EXPLAIN_CRIT_DEVS) {
					hidden++;
					continue;
				}
				fprintf(f, "%s%s ", shown++ ? " -> " : " ", t->devs[s->row].name);
				put_ms(f, s->t1 - s->t0);
			}
			if (hidden)
				fprintf(f, " (+%u shorter)", hidden);
		} else if (j == 2) {
			fprintf(f, "  ready, waiting for a CPU: all K busy");
		} else if (j == 3) {
			fprintf(f, "  ready, not yet running: queueing, wake-ups, %s",
				has_main ? "the dpm_list walk" :
					   "the order's scheduling (levels: the barrier)");
		} else {
			fprintf(f, "  ready, not yet running: CPU contention or dispatch (CPU share "
				"unknown)");
		}
		fprintf(f, "\n");
	}
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
 * nothing of the CPU it held.  Where no callback of the run had a CPU share
 * (!CPU_GIVEN: they sleep, the default) the bound is the chain, and no
 * verdict is built on the CPU work/K of 0 that follows.
 */
static void put_bound(FILE *f, bool model, bool cpu_given, int64_t bound, int64_t chain,
		      int64_t work, int64_t cb, uint32_t k)
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
	if (!cpu_given) {	/* every callback sleeps in the model: no CPU share was given */
		fprintf(f, ", bound ");
		put_ms(f, bound);
		fprintf(f, " (the chain; CPU share not given: no CPU verdict)");
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

/* Does the run's order have a main PM thread (worker 0) walking dpm_list? */
static bool run_has_main(sqlite3 *db, int64_t run)
{
	return !run_has(db, run, "SELECT 1 FROM runs WHERE run_id = ?1 AND order_name IN "
			"('levels', 'cp-first')");
}

static int explain_tl(sqlite3 *db, const struct tl_run *t, enum dl_explain_detail detail,
		      FILE *f)
{
	int64_t total = 0;
	bool model, has_main = run_has_main(db, t->run_id);
	/* a callback with a CPU share anywhere in the run: its phases' CPU work is known */
	bool cpu_given = run_metric(db, t->run_id, "work_ns") > 0;
	struct groups g;
	int ret = -ENOMEM;

	struct inst *in = instances(t);
	uint32_t *buf = malloc((2 * t->nsegs + 1) * sizeof(*buf));
	uint32_t k = run_workers(db, t->run_id);

	if (!in || !buf || groups_build(t, has_main, &g)) {
		free(in);
		free(buf);
		return -ENOMEM;
	}
	model = mark_model(db, t, in);
	for (uint32_t i = 0; i < t->ninst; i++)
		if (attribute(t, &g, &in[i], i, k, has_main))
			goto out;
	fprintf(f, "why run %lld took what it took (K = %u CPUs; %s):\n", (long long)t->run_id, k,
		model ? "bound = max(chain, CPU work/K) per phase, as the engine computed it" :
			"the callbacks' CPU share is not in the log, so no bound: chains of waits and callback times");
	if (detail == DL_EXPLAIN_FULL)
		fprintf(f, "  per phase, what set it (the parts add up to its time): the main "
			   "thread's serial work, a chain of\n  callbacks on workers, time ready "
			   "but not running (CPU contention, dispatch)\n");
	for (uint32_t i = 0; i < t->ninst;) {
		uint32_t j = group_end(t, in, i);
		int64_t span = 0, bound = 0, chain = 0, work = 0, cb = 0, lchain = 0;
		bool op_model = true;
		struct shares sh = { 0 };

		for (uint32_t p = i; p < j; p++) {
			span = dl_sat_add_i64(span, dl_sat_sub_i64(in[p].t1, in[p].start));
			bound = dl_sat_add_i64(bound, in[p].m_bound);
			chain = dl_sat_add_i64(chain, in[p].m_chain);
			work = dl_sat_add_i64(work, in[p].m_work);
			cb = dl_sat_add_i64(cb, in[p].cb);
			lchain = dl_sat_add_i64(lchain, in[p].chain);
			op_model &= in[p].model;
			shares_add(&sh, &in[p].sh);
		}
		total = dl_sat_add_i64(total, span);
		fprintf(f, "%s: ", in[i].op >= 0 ? op_names[in[i].op] : "?");
		put_ms(f, span);
		put_bound(f, op_model, cpu_given, bound, op_model ? chain : lchain, work, cb, k);
		put_set_by(f, &sh, span);
		fprintf(f, "\n");
		if (in[i].op == TL_PROBE && op_model && detail == DL_EXPLAIN_FULL)
			registration(db, t->run_id, bound, f);
		if (detail == DL_EXPLAIN_FULL) {
			for (uint32_t p = i; p < j; p++) {
				const struct inst *x = &in[p];

				fprintf(f, "  %-14s ", t->phases[x->phase]);
				put_ms(f, dl_sat_sub_i64(x->t1, x->start));
				put_bound(f, x->model, cpu_given, x->m_bound,
					  x->model ? x->m_chain : x->chain,
					  x->m_work, x->cb, k);
				fprintf(f, "\n");
				put_shares(f, t, &g, x, p, has_main, buf);
			}
		}
		i = j;
	}
	if (detail == DL_EXPLAIN_FULL) {
		reorder_walks(db, t, total, model, f);
		refused_links(db, t, f);
		cascades(t, in, f);
	}
	ret = 0;
out:
	groups_free(&g);
	free(in);
	free(buf);
	return ret;
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

static int explain_run(sqlite3 *db, int64_t run, enum dl_explain_detail detail, FILE *out,
		       const atomic_int *stop, char *err, size_t errlen)
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
		ret = tl_analyse(db, &t, stop, err, errlen);
	if (!ret)
		ret = explain_tl(db, &t, detail, out);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	tl_free(&t);
	return ret;
}

int dl_explain_run(sqlite3 *db, int64_t run, enum dl_explain_detail detail, FILE *out, char *err,
		   size_t errlen)
{
	return explain_run(db, run, detail, out, NULL, err, errlen);
}

/* SQLite steps between two looks at the stop flag (dl_explain_path_stop()). */
#define EXPLAIN_POLL_STEPS 10000

static int explain_stop(void *arg)
{
	return atomic_load((const atomic_int *)arg) != 0;
}

int dl_explain_path_stop(const char *path, int64_t run, enum dl_explain_detail detail, FILE *out,
			 const atomic_int *stop, char *err, size_t errlen)
{
	sqlite3 *db;
	int ret;

	/* as check and diff open it: a WAL log in a read-only folder is read too */
	if (dl_log_open_existing(path, &db, err, errlen))
		return -EINVAL;
	if (stop)
		sqlite3_progress_handler(db, EXPLAIN_POLL_STEPS, explain_stop, (void *)stop);
	if (dl_log_attach_shards(db, &run, 1, err, errlen)) {
		sqlite3_close(db);
		return stop && atomic_load(stop) ? -EINTR : -EINVAL;
	}
	ret = explain_run(db, run, detail, out, stop, err, errlen);
	sqlite3_close(db);
	if (stop && atomic_load(stop)) {
		snprintf(err, errlen, "interrupted");
		return -EINTR;
	}
	return ret;
}

int dl_explain_path(const char *path, int64_t run, enum dl_explain_detail detail, FILE *out,
		    char *err, size_t errlen)
{
	return dl_explain_path_stop(path, run, detail, out, NULL, err, errlen);
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
