/*
 * dl_diff.c - compare two logged runs of one scenario (dl_diff.h): per op
 * and phase makespans from the events, and the order agreement of the
 * device callbacks.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sim/core/dl_event.h"
#include "sim/log/dl_diff.h"

#define NONE UINT32_MAX

/* Callback families; a maximal stretch of one family's events is one op. */
enum { FAM_PROBE, FAM_UNBIND, FAM_SUSPEND, FAM_RESUME, FAM_COUNT };
static const char *const fam_name[FAM_COUNT] = { "probe", "unbind", "suspend", "resume" };

/* Phase numbers: the eight PM phases (enum dl_phase), then these. */
enum { PH_PROBE = DL_PH_COUNT, PH_UNBIND, PH_OTHER, PH_COUNT };

/* Group: family (8 bits), occurrence (16 bits), phase (8 bits). */
#define GRP(fam, occ, ph) (((uint32_t)(fam) << 24) | ((uint32_t)(occ) << 8) | (uint32_t)(ph))
#define GRP_FAM(g) ((g) >> 24)
#define GRP_OCC(g) (((g) >> 8) & 0xFFFFu)
#define GRP_PH(g)  ((g) & 0xFFu)
#define GRP_OP(g)  ((g) >> 8)        /* family and occurrence */

struct rec {
	uint32_t grp, dev;
	int64_t start, end;
};

struct run {
	int64_t id;
	char **name;            /* by dev_id */
	uint32_t nname;
	uint64_t ndev;
	struct rec *rec;
	size_t nrec;
	uint32_t *ops;          /* GRP_OP of each op, in order of appearance */
	uint32_t nops;
	/*
	 * A's dependency closures (read_deps()), a row of @words per device id:
	 * bit j of row i, j is upstream of i.  dep[0]: links that gate probe;
	 * dep[1]: links and parents, for PM phases.  NULL: not computed.
	 */
	uint64_t *dep[2];
	uint32_t words;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	void *np;
	size_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 1024;
	while (nc < need)
		nc *= 2;
	np = realloc(*p, nc * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

/* ---- the counting kernel ---- */

static const int64_t *sort_key;

static int cmp_by_key(const void *x, const void *y)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;

	if (sort_key[i] != sort_key[j])
		return sort_key[i] < sort_key[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

static void fen_add(uint32_t *f, uint32_t n, uint32_t r)
{
	for (r++; r <= n; r += r & -r)
		f[r - 1]++;
}

/* How many inserted ranks are < r. */
static uint64_t fen_prefix(const uint32_t *f, uint32_t r)
{
	uint64_t s = 0;

	for (; r; r -= r & -r)
		s += f[r - 1];
	return s;
}

/* The rank of the k-th (1-based) inserted element. */
static uint32_t fen_kth(const uint32_t *f, uint32_t n, uint64_t k)
{
	uint32_t pos = 0, step = 1;

	while (step * 2 <= n)
		step *= 2;
	for (; step; step /= 2) {
		if (pos + step <= n && f[pos + step - 1] < k) {
			pos += step;
			k -= f[pos - 1];
		}
	}
	return pos;
}

/* First position in sorted @v (n values) with v >= x (lower) or v > x (upper). */
static uint32_t bound(const int64_t *v, uint32_t n, int64_t x, bool upper)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x || (upper && v[mid] == x))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int dl_diff_order_agreement(const int64_t *a, const int64_t *b, uint32_t n, int64_t tol,
			    uint64_t *pairs, uint64_t *agree, uint32_t max_list,
			    void (*list)(void *ctx, uint32_t i, uint32_t j), void *ctx)
{
	uint32_t *by_a = malloc((size_t)n * sizeof(*by_a) + 1);
	uint32_t *by_b = malloc((size_t)n * sizeof(*by_b) + 1);
	uint32_t *rank = malloc((size_t)n * sizeof(*rank) + 1);
	uint32_t *fen = calloc((size_t)n + 1, sizeof(*fen));
	int64_t *bs = malloc((size_t)n * sizeof(*bs) + 1);
	uint64_t conc = 0, disc = 0, listed = 0;
	uint32_t p = 0;

	*pairs = *agree = 0;
	if (!by_a || !by_b || !rank || !fen || !bs) {
		free(by_a);
		free(by_b);
		free(rank);
		free(fen);
		free(bs);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		by_a[i] = by_b[i] = i;
	sort_key = a;
	qsort(by_a, n, sizeof(*by_a), cmp_by_key);
	sort_key = b;
	qsort(by_b, n, sizeof(*by_b), cmp_by_key);
	for (uint32_t r = 0; r < n; r++) {
		rank[by_b[r]] = r;
		bs[r] = b[by_b[r]];
	}
	/*
	 * Walk A's order; the Fenwick tree holds the B-ranks of every j with
	 * a[j] < a[i] - tol.  Of those, b[j] < b[i] - tol agree (j first in
	 * both), b[j] > b[i] + tol disagree.
	 */
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = by_a[k], lo, hi;
		uint64_t below, above;

		while (p < n && a[by_a[p]] < a[i] - tol)
			fen_add(fen, n, rank[by_a[p++]]);
		lo = bound(bs, n, b[i] - tol, false);
		hi = bound(bs, n, b[i] + tol, true);
		below = fen_prefix(fen, lo);
		above = p - fen_prefix(fen, hi);
		conc += below;
		disc += above;
		if (list && above && listed < max_list) {
			uint64_t first = p - above;   /* inserted elements ranked below hi */

			for (uint64_t t = 1; t <= above && listed < max_list; t++, listed++)
				list(ctx, by_b[fen_kth(fen, n, first + t)], i);
		}
	}
	*pairs = conc + disc;
	*agree = conc;
	free(by_a);
	free(by_b);
	free(rank);
	free(fen);
	free(bs);
	return 0;
}

/* ---- reading a run ---- */

static int ev_family(const char *kind, bool *start, bool *end)
{
	static const struct { const char *k; int fam; bool start, end; } map[] = {
		{ "probe_start", FAM_PROBE, true, false }, { "probe_end", FAM_PROBE, false, true },
		{ "probe_defer", FAM_PROBE, false, false },
		{ "unbind_start", FAM_UNBIND, true, false }, { "unbind_end", FAM_UNBIND, false, true },
		{ "suspend_start", FAM_SUSPEND, true, false }, { "suspend_end", FAM_SUSPEND, false, true },
		{ "resume_start", FAM_RESUME, true, false }, { "resume_end", FAM_RESUME, false, true },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (!strcmp(kind, map[i].k)) {
			*start = map[i].start;
			*end = map[i].end;
			return map[i].fam;
		}
	}
	return -1;
}

static unsigned phase_index(int fam, const char *phase)
{
	if (fam == FAM_PROBE)
		return PH_PROBE;
	if (fam == FAM_UNBIND)
		return PH_UNBIND;
	for (unsigned p = 0; phase && p < DL_PH_COUNT; p++)
		if (!strcmp(phase, dl_phase_name(p)))
			return p;
	return PH_OTHER;
}

static const char *phase_label(unsigned ph)
{
	if (ph < DL_PH_COUNT)
		return dl_phase_name(ph);
	return ph == PH_PROBE ? "probe" : ph == PH_UNBIND ? "unbind" : "other";
}

static int read_names(sqlite3 *db, struct run *r)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT dev_id, name FROM devices WHERE run_id = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, r->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *nm = (const char *)sqlite3_column_text(st, 1);

		if (id < 0 || id >= (int64_t)UINT32_MAX || !nm)
			continue;
		if ((uint32_t)id >= r->nname) {
			uint32_t nn = r->nname ? r->nname : 1024;
			char **p;

			while (nn <= (uint32_t)id)
				nn *= 2;
			p = realloc(r->name, nn * sizeof(*p));
			if (!p)
				goto nomem;
			memset(p + r->nname, 0, (nn - r->nname) * sizeof(*p));
			r->name = p;
			r->nname = nn;
		}
		if (r->name[id])
			continue;       /* a device listed twice: keep the first */
		if (!(r->name[id] = strdup(nm)))
			goto nomem;
		r->ndev++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
nomem:
	sqlite3_finalize(st);
	return -ENOMEM;
}

static int read_events(sqlite3 *db, struct run *r)
{
	sqlite3_stmt *st;
	size_t cap = 0, opcap = 0;
	uint32_t occ[FAM_COUNT] = { 0 }, seg = 0, *last_seg = NULL;
	int64_t *last_start = NULL;
	int cur = -1, rc, ret = 0;

	if (sqlite3_prepare_v2(db, "SELECT t_ns, dev_id, kind, phase FROM events WHERE run_id = ?"
			       " AND kind IN ('probe_start','probe_end','probe_defer','unbind_start',"
			       "'unbind_end','suspend_start','suspend_end','resume_start','resume_end')"
			       " ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	last_start = malloc(((size_t)r->nname + 1) * sizeof(*last_start));
	last_seg = calloc((size_t)r->nname + 1, sizeof(*last_seg));
	if (!last_start || !last_seg) {
		ret = -ENOMEM;
		goto out;
	}
	sqlite3_bind_int64(st, 1, r->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(st, 0), dev = sqlite3_column_int64(st, 1);
		const char *kind = (const char *)sqlite3_column_text(st, 2);
		const char *phase = (const char *)sqlite3_column_text(st, 3);
		bool is_start, is_end;
		int fam = kind ? ev_family(kind, &is_start, &is_end) : -1;

		if (fam < 0 || sqlite3_column_type(st, 1) == SQLITE_NULL || dev < 0 ||
		    dev >= (int64_t)r->nname)
			continue;
		if (fam != cur) {          /* a new op */
			cur = fam;
			seg++;
			if (grow((void **)&r->ops, &opcap, r->nops + 1, sizeof(*r->ops))) {
				ret = -ENOMEM;
				goto out;
			}
			r->ops[r->nops++] = GRP_OP(GRP(fam, occ[fam], 0));
			if (occ[fam] < 0xFFFF)
				occ[fam]++;
		}
		if (is_start) {
			last_start[dev] = t;
			last_seg[dev] = seg;
		} else if (last_seg[dev] == seg) {   /* an end, or a deferral, of a started callback */
			last_seg[dev] = 0;
			if (!is_end)
				continue;
			if (grow((void **)&r->rec, &cap, r->nrec + 1, sizeof(*r->rec))) {
				ret = -ENOMEM;
				goto out;
			}
			r->rec[r->nrec++] = (struct rec){ GRP(fam, occ[fam] - 1, phase_index(fam, phase)),
							  (uint32_t)dev, last_start[dev], t };
		}
	}
	if (rc != SQLITE_DONE)
		ret = -EIO;
out:
	sqlite3_finalize(st);
	free(last_start);
	free(last_seg);
	return ret;
}

static int read_run_row(sqlite3 *db, int64_t id, char **scenario, char **mode, char **order,
			int64_t *seed)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT scenario, mode, order_name, seed FROM runs WHERE run_id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *s[3];

		for (int i = 0; i < 3; i++)
			s[i] = (const char *)sqlite3_column_text(st, i);
		*scenario = strdup(s[0] ? s[0] : "");
		*mode = strdup(s[1] ? s[1] : "");
		*order = strdup(s[2] ? s[2] : "");
		*seed = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return -EIO;
	return (*scenario && *mode && *order) ? 0 : -ENOMEM;
}

/* ---- what orders a pair: the dependency closures of A ---- */

struct edges {
	uint32_t *from, *to;    /* downstream, upstream */
	size_t n, cap;
};

static int edge_add(struct edges *e, int64_t from, int64_t to, uint32_t nname)
{
	if (from < 0 || to < 0 || from >= nname || to >= nname || from == to)
		return 0;
	if (e->n == e->cap) {
		size_t nc = e->cap ? 2 * e->cap : 1024;
		uint32_t *f = realloc(e->from, nc * sizeof(*f)), *t;

		if (!f)
			return -ENOMEM;
		e->from = f;
		if (!(t = realloc(e->to, nc * sizeof(*t))))
			return -ENOMEM;
		e->to = t;
		e->cap = nc;
	}
	e->from[e->n] = (uint32_t)from;
	e->to[e->n++] = (uint32_t)to;
	return 0;
}

/* Is FLAG a token of the '|'-separated FLAGS? */
static bool has_flag(const char *flags, const char *flag)
{
	size_t n = strlen(flag);

	for (const char *p = flags; p && *p; p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL)
		if (!strncmp(p, flag, n) && (p[n] == '|' || p[n] == '\0'))
			return true;
	return false;
}

/*
 * Closes @e over @n ids into @bits (rows of @words, zeroed): in Kahn's
 * order, each id's row is the union of its upstream ids and their rows.
 * Returns -ELOOP when the edges have a cycle (a CYCLE link), -ENOMEM.
 */
static int close_deps(const struct edges *e, uint32_t n, uint32_t words, uint64_t *bits)
{
	uint32_t *start = calloc((size_t)n + 2, sizeof(*start)), *down = NULL, *ups = NULL;
	uint32_t *queue = NULL, head = 0, tail = 0;
	int ret = -ENOMEM;

	if (!start || !(down = malloc((e->n + 1) * sizeof(*down))) ||
	    !(ups = calloc((size_t)n + 1, sizeof(*ups))) || !(queue = malloc(((size_t)n + 1) * sizeof(*queue))))
		goto out;
	for (size_t k = 0; k < e->n; k++) {
		start[e->to[k] + 2]++;
		ups[e->from[k]]++;
	}
	for (uint32_t i = 0; i < n; i++)
		start[i + 2] += start[i + 1];
	for (size_t k = 0; k < e->n; k++)
		down[start[e->to[k] + 1]++] = e->from[k];
	for (uint32_t i = 0; i < n; i++)
		if (!ups[i])
			queue[tail++] = i;
	while (head < tail) {
		uint32_t u = queue[head++];
		const uint64_t *ru = bits + (size_t)u * words;

		for (uint32_t k = start[u]; k < start[u + 1]; k++) {
			uint32_t v = down[k];
			uint64_t *rv = bits + (size_t)v * words;

			for (uint32_t w = 0; w < words; w++)
				rv[w] |= ru[w];
			rv[u / 64] |= 1ull << (u % 64);
			if (--ups[v] == 0)
				queue[tail++] = v;
		}
	}
	ret = tail == n ? 0 : -ELOOP;
out:
	free(start);
	free(down);
	free(ups);
	free(queue);
	return ret;
}

/*
 * A's dependency closures (struct run, dep[]); left NULL (and 0 returned)
 * when A is too large or its dependencies have a cycle.
 */
static int read_deps(sqlite3 *db, struct run *r)
{
	struct edges e[2] = { { 0 } };
	sqlite3_stmt *st = NULL;
	size_t size;
	int rc, ret = -EIO;

	if (!r->nname || r->nname > DL_DIFF_DEP_MAX)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT consumer_id, supplier_id, flags FROM links WHERE run_id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, r->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t c = sqlite3_column_int64(st, 0), s = sqlite3_column_int64(st, 1);
		const char *f = (const char *)sqlite3_column_text(st, 2);

		if (!f || has_flag(f, "SYNC_STATE_ONLY"))
			continue;
		if ((has_flag(f, "MANAGED") && edge_add(&e[0], c, s, r->nname)) ||
		    edge_add(&e[1], c, s, r->nname)) {
			ret = -ENOMEM;
			goto out;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE ||
	    sqlite3_prepare_v2(db, "SELECT dev_id, parent_id FROM devices WHERE run_id = ?"
			       " AND parent_id IS NOT NULL", -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, r->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (edge_add(&e[1], sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), r->nname)) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		goto out;
	r->words = (r->nname + 63) / 64;
	size = (size_t)r->nname * r->words;
	ret = -ENOMEM;
	for (int k = 0; k < 2; k++) {
		if (!(r->dep[k] = calloc(size, sizeof(uint64_t))))
			goto out;
		rc = close_deps(&e[k], r->nname, r->words, r->dep[k]);
		if (rc == -ELOOP) {
			free(r->dep[0]);
			free(r->dep[1]);
			r->dep[0] = r->dep[1] = NULL;
			break;
		}
		if (rc)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	for (int k = 0; k < 2; k++) {
		free(e[k].from);
		free(e[k].to);
	}
	return ret;
}

static void run_free(struct run *r)
{
	for (uint32_t i = 0; i < r->nname; i++)
		free(r->name[i]);
	free(r->name);
	free(r->rec);
	free(r->ops);
	free(r->dep[0]);
	free(r->dep[1]);
}

/* ---- matching ---- */

struct name_id {
	const char *name;
	uint32_t id;
};

static int cmp_name(const void *x, const void *y)
{
	return strcmp(((const struct name_id *)x)->name, ((const struct name_id *)y)->name);
}

/* Rewrites B's device ids to A's (NONE when A has no device of that name). */
static int map_devices(struct run *a, struct run *b, uint64_t *common)
{
	struct name_id *tab = malloc((a->ndev + 1) * sizeof(*tab));
	uint32_t *map = malloc(((size_t)b->nname + 1) * sizeof(*map));
	size_t n = 0;

	*common = 0;
	if (!tab || !map) {
		free(tab);
		free(map);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < a->nname; i++)
		if (a->name[i])
			tab[n++] = (struct name_id){ a->name[i], i };
	qsort(tab, n, sizeof(*tab), cmp_name);
	for (uint32_t i = 0; i < b->nname; i++) {
		struct name_id key = { b->name[i], 0 }, *hit;

		map[i] = NONE;
		if (!b->name[i])
			continue;
		hit = bsearch(&key, tab, n, sizeof(*tab), cmp_name);
		if (hit) {
			map[i] = hit->id;
			(*common)++;
		}
	}
	for (size_t k = 0; k < b->nrec; k++)
		b->rec[k].dev = map[b->rec[k].dev];
	free(tab);
	free(map);
	return 0;
}

static int cmp_rec(const void *x, const void *y)
{
	const struct rec *p = x, *q = y;

	if (p->grp != q->grp)
		return p->grp < q->grp ? -1 : 1;
	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	return (p->start > q->start) - (p->start < q->start);
}

/* ---- the diff ---- */

struct list_ctx {
	struct dl_diff *d;
	const struct run *a;
	const uint32_t *dev;
	const int64_t *ta, *tb;
	uint32_t row;
	int err;
};

static void list_pair(void *ctx, uint32_t i, uint32_t j)
{
	struct list_ctx *c = ctx;
	struct dl_diff_pair *p = &c->d->pair[c->d->npair];

	p->row = c->row;
	p->dev1 = strdup(c->a->name[c->dev[i]]);
	p->dev2 = strdup(c->a->name[c->dev[j]]);
	p->a1_ns = c->ta[i];
	p->a2_ns = c->ta[j];
	p->b1_ns = c->tb[i];
	p->b2_ns = c->tb[j];
	if (!p->dev1 || !p->dev2) {
		free(p->dev1);
		free(p->dev2);
		c->err = -ENOMEM;
		return;
	}
	c->d->npair++;
}

/* Span (min start, max end) and callbacks of group @g in sorted @r; *k advances. */
static void span(const struct rec *r, size_t n, size_t *k, uint32_t g, int64_t *lo, int64_t *hi,
		 uint64_t *count)
{
	for (; *k < n && r[*k].grp == g; (*k)++) {
		if (r[*k].start < *lo)
			*lo = r[*k].start;
		if (r[*k].end > *hi)
			*hi = r[*k].end;
		(*count)++;
	}
}

static int add_row(struct dl_diff *d, size_t *cap, uint32_t g, bool whole)
{
	struct dl_diff_row *row;
	unsigned occ = GRP_OCC(g);

	if (grow((void **)&d->rows, cap, d->nrows + 1, sizeof(*d->rows)))
		return -ENOMEM;
	row = &d->rows[d->nrows++];
	memset(row, 0, sizeof(*row));
	if (occ)
		snprintf(row->op, sizeof(row->op), "%s#%u", fam_name[GRP_FAM(g)], occ + 1);
	else
		snprintf(row->op, sizeof(row->op), "%s", fam_name[GRP_FAM(g)]);
	if (!whole)
		snprintf(row->phase, sizeof(row->phase), "%s", phase_label(GRP_PH(g)));
	row->a_ns = row->b_ns = -1;
	return 0;
}

/* Every op of A in order, then B's extra ones. */
static int op_order(const struct run *a, const struct run *b, uint32_t **ops, uint32_t *nops)
{
	uint32_t n = 0;

	*ops = malloc(((size_t)a->nops + b->nops + 1) * sizeof(**ops));
	if (!*ops)
		return -ENOMEM;
	for (uint32_t i = 0; i < a->nops; i++)
		(*ops)[n++] = a->ops[i];
	for (uint32_t i = 0; i < b->nops; i++) {
		bool seen = false;

		for (uint32_t k = 0; k < a->nops && !seen; k++)
			seen = a->ops[k] == b->ops[i];
		if (!seen)
			(*ops)[n++] = b->ops[i];
	}
	*nops = n;
	return 0;
}

/* Lower and upper index of op @op's records in sorted @r. */
static void op_range(const struct rec *r, size_t n, uint32_t op, size_t *lo, size_t *hi)
{
	size_t l = 0, h = n;

	while (l < h) {
		size_t m = l + (h - l) / 2;

		if (GRP_OP(r[m].grp) < op)
			l = m + 1;
		else
			h = m;
	}
	*lo = l;
	for (h = l; h < n && GRP_OP(r[h].grp) == op; h++)
		;
	*hi = h;
}

/*
 * Of the @m devices of a phase of family @fam (A's ids @dev, starts @ta in
 * A and @tb in B), the pairs a dependency orders, each once (from the
 * downstream device's closure row), into @row.  @pos: NONE for every id,
 * as it is left.
 */
static void count_dependent(const struct run *a, unsigned fam, const uint32_t *dev,
			    const int64_t *ta, const int64_t *tb, uint32_t m, int64_t tol,
			    uint32_t *pos, struct dl_diff_row *row)
{
	const uint64_t *dep = a->dep[fam == FAM_SUSPEND || fam == FAM_RESUME];

	for (uint32_t i = 0; i < m; i++)
		pos[dev[i]] = i;
	for (uint32_t i = 0; i < m; i++) {
		const uint64_t *r = dep + (size_t)dev[i] * a->words;

		for (uint32_t w = 0; w < a->words; w++) {
			for (uint64_t bits = r[w]; bits; bits &= bits - 1) {
				uint32_t x = pos[w * 64 + (uint32_t)__builtin_ctzll(bits)];
				int64_t ga, gb;

				if (x == NONE)
					continue;
				ga = ta[i] - ta[x];
				gb = tb[i] - tb[x];
				if ((ga > tol || ga < -tol) && (gb > tol || gb < -tol)) {
					row->dep_pairs++;
					row->dep_agree += (ga > 0) == (gb > 0);
				}
			}
		}
	}
	for (uint32_t i = 0; i < m; i++)
		pos[dev[i]] = NONE;
}

static int diff_phase(struct dl_diff *d, const struct run *a, const struct run *b, uint32_t g,
		      size_t ka, size_t ea, size_t kb, size_t eb, uint32_t max_pairs,
		      int64_t **buf, size_t *bufcap, uint32_t *pos)
{
	struct dl_diff_row *row = &d->rows[d->nrows - 1];
	size_t m = 0, need = (ea - ka) < (eb - kb) ? ea - ka : eb - kb;
	int64_t *ta, *tb;
	uint32_t *dev;
	struct list_ctx lc;
	uint64_t pairs, agree;
	int ret;

	if (grow((void **)buf, bufcap, 3 * need + 3, sizeof(int64_t)))
		return -ENOMEM;
	ta = *buf;
	tb = ta + need + 1;
	dev = (uint32_t *)(tb + need + 1);
	/* merge-join on device; a device twice in one phase counts once (its first) */
	while (ka < ea && kb < eb) {
		uint32_t da = a->rec[ka].dev, db = b->rec[kb].dev;

		if (db == NONE || db < da) {
			kb++;
		} else if (da < db) {
			ka++;
		} else {
			ta[m] = a->rec[ka].start;
			tb[m] = b->rec[kb].start;
			dev[m++] = da;
			for (ka++; ka < ea && a->rec[ka].dev == da; ka++)
				;
			for (kb++; kb < eb && b->rec[kb].dev == db; kb++)
				;
		}
	}
	row->matched = m;
	lc = (struct list_ctx){ d, a, dev, ta, tb, d->nrows - 1, 0 };
	ret = dl_diff_order_agreement(ta, tb, (uint32_t)m, d->tol_ns, &pairs, &agree,
				      max_pairs - d->npair, list_pair, &lc);
	if (ret)
		return ret;
	if (lc.err)
		return lc.err;
	row->pairs = pairs;
	row->agree = agree;
	d->pairs += pairs;
	d->agree += agree;
	d->disagree_unlisted += pairs - agree;
	if (d->dep_known)
		count_dependent(a, GRP_FAM(g), dev, ta, tb, (uint32_t)m, d->tol_ns, pos, row);
	d->dep_pairs += row->dep_pairs;
	d->dep_agree += row->dep_agree;
	return 0;
}

/* One build's state: the rows' capacity, diff_phase()'s scratch, A's device positions. */
struct build {
	struct dl_diff *d;
	const struct run *a, *b;
	uint32_t max_pairs;
	size_t cap, bufcap;
	int64_t *buf;
	uint32_t *pos;		/* NONE for every id between phases; NULL: no dependencies */
};

/* A row per phase of one op, whose records are A's [ka, ha) and B's [kb, hb). */
static int diff_op_phases(struct build *bd, size_t ka, size_t ha, size_t kb, size_t hb)
{
	struct dl_diff *d = bd->d;
	const struct run *a = bd->a, *b = bd->b;
	int ret;

	while (ka < ha || kb < hb) {
		uint32_t g = ka < ha ? a->rec[ka].grp : UINT32_MAX;
		size_t sa = ka, sb = kb;
		int64_t alo = INT64_MAX, ahi = INT64_MIN, blo = INT64_MAX, bhi = INT64_MIN;
		struct dl_diff_row *row;
		uint32_t listed0;

		if (kb < hb && b->rec[kb].grp < g)
			g = b->rec[kb].grp;
		if ((ret = add_row(d, &bd->cap, g, false)))
			return ret;
		row = &d->rows[d->nrows - 1];
		span(a->rec, ha, &ka, g, &alo, &ahi, &row->a_devices);
		span(b->rec, hb, &kb, g, &blo, &bhi, &row->b_devices);
		row->a_ns = row->a_devices ? ahi - alo : -1;
		row->b_ns = row->b_devices ? bhi - blo : -1;
		listed0 = d->npair;
		if ((ret = diff_phase(d, a, b, g, sa, ka, sb, kb, bd->max_pairs, &bd->buf, &bd->bufcap,
				      bd->pos)))
			return ret;
		d->disagree_unlisted -= d->npair - listed0;
	}
	return 0;
}

/* First start to last end of records [lo, hi) of @r, or -1 when there are none. */
static int64_t op_span(const struct rec *r, size_t lo, size_t hi)
{
	int64_t first = INT64_MAX, last = INT64_MIN;

	for (size_t k = lo; k < hi; k++) {
		first = r[k].start < first ? r[k].start : first;
		last = r[k].end > last ? r[k].end : last;
	}
	return hi > lo ? last - first : -1;
}

/* Row @wi, an op as a whole, gets the sums of its phases' rows (the rows after it). */
static void sum_phases(struct dl_diff *d, uint32_t wi)
{
	struct dl_diff_row *whole = &d->rows[wi];

	for (uint32_t r = wi + 1; r < d->nrows; r++) {
		whole->pairs += d->rows[r].pairs;
		whole->agree += d->rows[r].agree;
		whole->dep_pairs += d->rows[r].dep_pairs;
		whole->dep_agree += d->rows[r].dep_agree;
		if (d->rows[r].matched > whole->matched)
			whole->matched = d->rows[r].matched;
		whole->a_devices += d->rows[r].a_devices;
		whole->b_devices += d->rows[r].b_devices;
	}
}

/* Op @op: its row as a whole, then a row per phase. */
static int diff_op(struct build *bd, uint32_t op)
{
	struct dl_diff *d = bd->d;
	size_t la, ha, lb, hb;
	uint32_t wi;
	int ret;

	op_range(bd->a->rec, bd->a->nrec, op, &la, &ha);
	op_range(bd->b->rec, bd->b->nrec, op, &lb, &hb);
	if ((ret = add_row(d, &bd->cap, op << 8, true)))
		return ret;
	wi = d->nrows - 1;
	if ((ret = diff_op_phases(bd, la, ha, lb, hb)))
		return ret;
	/* the op as a whole: first start to last end over its phases */
	d->rows[wi].a_ns = op_span(bd->a->rec, la, ha);
	d->rows[wi].b_ns = op_span(bd->b->rec, lb, hb);
	sum_phases(d, wi);
	return 0;
}

static int build(struct dl_diff *d, struct run *a, struct run *b, uint32_t max_pairs)
{
	struct build bd = { .d = d, .a = a, .b = b, .max_pairs = max_pairs };
	uint32_t *ops, nops;
	int ret = 0;

	/* a run without callbacks has no array at all: qsort() must not see its NULL */
	if (a->nrec)
		qsort(a->rec, a->nrec, sizeof(*a->rec), cmp_rec);
	if (b->nrec)
		qsort(b->rec, b->nrec, sizeof(*b->rec), cmp_rec);
	d->dep_known = a->dep[0] != NULL;
	if (d->dep_known) {
		if (!(bd.pos = malloc((size_t)a->nname * sizeof(*bd.pos))))
			return -ENOMEM;
		memset(bd.pos, 0xff, (size_t)a->nname * sizeof(*bd.pos));   /* NONE */
	}
	d->pair = calloc((size_t)max_pairs + 1, sizeof(*d->pair));
	if (!d->pair || op_order(a, b, &ops, &nops)) {
		free(bd.pos);
		return -ENOMEM;
	}
	for (uint32_t o = 0; o < nops && !ret; o++)
		ret = diff_op(&bd, ops[o]);
	free(ops);
	free(bd.buf);
	free(bd.pos);
	return ret;
}

int dl_diff_runs(sqlite3 *db, int64_t a, int64_t b, int64_t tol_ns, uint32_t max_pairs,
		 struct dl_diff **out, int64_t *which)
{
	struct dl_diff *d = calloc(1, sizeof(*d));
	struct run ra = { .id = a }, rb = { .id = b };
	int ret;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->run_a = a;
	d->run_b = b;
	d->tol_ns = tol_ns;
	*which = a;
	ret = read_run_row(db, a, &d->scenario_a, &d->mode_a, &d->order_a, &d->seed_a);
	if (!ret) {
		*which = b;
		ret = read_run_row(db, b, &d->scenario_b, &d->mode_b, &d->order_b, &d->seed_b);
	}
	if (!ret && !(ret = read_names(db, &ra)) && !(ret = read_names(db, &rb)) &&
	    !(ret = read_events(db, &ra)) && !(ret = read_events(db, &rb)) &&
	    !(ret = read_deps(db, &ra)) &&
	    !(ret = map_devices(&ra, &rb, &d->devices_common))) {
		d->devices_a = ra.ndev;
		d->devices_b = rb.ndev;
		ret = build(d, &ra, &rb, max_pairs);
	}
	run_free(&ra);
	run_free(&rb);
	if (ret) {
		dl_diff_free(d);
		return ret;
	}
	*out = d;
	return 0;
}

void dl_diff_free(struct dl_diff *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; i < d->npair; i++) {
		free(d->pair[i].dev1);
		free(d->pair[i].dev2);
	}
	free(d->pair);
	free(d->rows);
	free(d->scenario_a);
	free(d->scenario_b);
	free(d->mode_a);
	free(d->mode_b);
	free(d->order_a);
	free(d->order_b);
	free(d);
}
