/*
 * waits.c - what each logged phase waited for, and the critical path, from
 * the log alone (see tl_analyse() in timeline.h).
 *
 * The engine logs when a callback starts and ends, not why it started
 * then.  The link core's rules say what a device waits for in each phase
 * (LINK-CORE.md, "System sleep": dpm_wait_for_subordinate() when
 * suspending, dpm_wait_for_superior() when resuming; "Probe": the
 * suppliers; "Unbind": the consumers), so the dependency that ended last
 * before a segment started is the one it waited for.  Phases are separated
 * by barriers (dpm_suspend() finishes a phase before the next begins), so
 * a segment without such a dependency waited for the end of the previous
 * phase instance.  Walking those waits back from the last end gives the
 * chain of callbacks that set the makespan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/timeline.h"

static void set_sql_err(char *err, size_t errlen, sqlite3 *db)
{
	if (err && errlen)
		snprintf(err, errlen, "cannot read the links: %s", sqlite3_errmsg(db));
}

static uint32_t dev_index(const struct tl_run *t, int64_t dev_id)
{
	size_t lo = 0, hi = t->ndevs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->devs[mid].dev_id == dev_id)
			return (uint32_t)mid;
		if (t->devs[mid].dev_id < dev_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return TL_NONE;
}

struct edge { uint32_t from, to; };

/* CSR of EDGES keyed by .from (KEY_TO: by .to), values the other end. */
static int build_csr(size_t n, const struct edge *e, size_t ne, int key_to, uint32_t **off_out,
		     uint32_t **val_out)
{
	uint32_t *off = calloc(n + 1, sizeof(*off)), *val = malloc((ne ? ne : 1) * sizeof(*val));

	if (!off || !val) {
		free(off);
		free(val);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ne; i++)
		off[(key_to ? e[i].to : e[i].from) + 1]++;
	for (size_t i = 0; i < n; i++)
		off[i + 1] += off[i];
	for (size_t i = 0; i < ne; i++) {
		uint32_t k = key_to ? e[i].to : e[i].from;

		val[off[k]++] = key_to ? e[i].from : e[i].to;
	}
	/* off[k] now holds the end of k's range: shift back. */
	for (size_t i = n; i > 0; i--)
		off[i] = off[i - 1];
	off[0] = 0;
	*off_out = off;
	*val_out = val;
	return 0;
}

/* Links of the run that order probe and PM: SYNC_STATE_ONLY ones never do. */
static int read_links(sqlite3 *db, struct tl_run *t, char *err, size_t errlen)
{
	struct edge *e = NULL;
	size_t ne = 0, cap = 0;
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(db, "SELECT consumer_id, supplier_id, flags FROM links WHERE run_id = ?1",
			       -1, &st, NULL) != SQLITE_OK) {
		set_sql_err(err, errlen, db);
		return -EINVAL;
	}
	sqlite3_bind_int64(st, 1, t->run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *flags = (const char *)sqlite3_column_text(st, 2);
		uint32_t c = dev_index(t, sqlite3_column_int64(st, 0));
		uint32_t s = dev_index(t, sqlite3_column_int64(st, 1));

		if (c == TL_NONE || s == TL_NONE || c == s || (flags && strstr(flags, "SYNC_STATE_ONLY")))
			continue;
		if (ne == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			struct edge *n = realloc(e, ncap * sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			e = n;
			cap = ncap;
		}
		e[ne++] = (struct edge){ .from = c, .to = s };
	}
	if (!ret && rc != SQLITE_DONE) {
		set_sql_err(err, errlen, db);
		ret = -EINVAL;
	}
	sqlite3_finalize(st);
	/* consumer -> its suppliers; supplier -> its consumers */
	if (!ret)
		ret = build_csr(t->ndevs, e, ne, 0, &t->sup_off, &t->sup);
	if (!ret)
		ret = build_csr(t->ndevs, e, ne, 1, &t->con_off, &t->con);
	free(e);
	return ret;
}

static int build_children(struct tl_run *t, const atomic_int *stop)
{
	struct edge *e = malloc((t->ndevs ? t->ndevs : 1) * sizeof(*e));
	size_t ne = 0;
	int ret;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < t->ndevs; i++) {
		if (tl_stop_due(stop, i)) {
			free(e);
			return -EINTR;
		}
		t->devs[i].parent = t->devs[i].parent_id < 0 ? TL_NONE : dev_index(t, t->devs[i].parent_id);
		if (t->devs[i].parent != TL_NONE)
			e[ne++] = (struct edge){ .from = t->devs[i].parent, .to = (uint32_t)i };
	}
	ret = build_csr(t->ndevs, e, ne, 0, &t->kid_off, &t->kid);
	free(e);
	return ret;
}

/* Segments per device, in the order they were logged (so by instance). */
struct dev_segs { uint32_t *off, *seg; };

static int index_segs(const struct tl_run *t, struct dev_segs *ds)
{
	ds->off = calloc(t->ndevs + 1, sizeof(*ds->off));
	ds->seg = malloc((t->nsegs ? t->nsegs : 1) * sizeof(*ds->seg));
	if (!ds->off || !ds->seg)
		return -ENOMEM;
	for (size_t i = 0; i < t->nsegs; i++)
		ds->off[t->segs[i].row + 1]++;
	for (size_t i = 0; i < t->ndevs; i++)
		ds->off[i + 1] += ds->off[i];
	{
		uint32_t *fill = malloc((t->ndevs ? t->ndevs : 1) * sizeof(*fill));

		if (!fill)
			return -ENOMEM;
		memcpy(fill, ds->off, t->ndevs * sizeof(*fill));
		for (size_t i = 0; i < t->nsegs; i++)
			ds->seg[fill[t->segs[i].row]++] = (uint32_t)i;
		free(fill);
	}
	return 0;
}

/* The segment of device D in instance INST, or TL_NONE (binary search). */
static uint32_t seg_of(const struct tl_run *t, const struct dev_segs *ds, uint32_t d, uint32_t inst)
{
	uint32_t lo = ds->off[d], hi = ds->off[d + 1];

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2, si = t->segs[ds->seg[mid]].inst;

		if (si == inst)
			return ds->seg[mid];
		if (si < inst)
			lo = mid + 1;
		else
			hi = mid;
	}
	return TL_NONE;
}

/* Consider the dependency C of segment S: keep the one that ended last before S started. */
static void consider(const struct tl_run *t, const struct dev_segs *ds, const struct tl_seg *s,
		     uint32_t c, uint32_t *best, int64_t *ready)
{
	uint32_t k = seg_of(t, ds, c, s->inst);
	const struct tl_seg *q;

	if (k == TL_NONE)
		return;
	q = &t->segs[k];
	if (q->t1 > s->t0)
		return;
	if (q->t1 > *ready)
		*ready = q->t1;
	if (*best == TL_NONE || q->t1 > t->segs[*best].t1 ||
	    (q->t1 == t->segs[*best].t1 && k > *best))
		*best = k;
}

static void find_wait(const struct tl_run *t, const struct dev_segs *ds, struct tl_seg *s,
		      const uint32_t *prev_last, const int64_t *inst_start)
{
	uint32_t d = s->row, best = TL_NONE;
	int64_t ready = INT64_MIN;

	switch (s->op) {
	case TL_SUSPEND:	/* dpm_wait_for_subordinate(): children and consumers */
		for (uint32_t j = t->kid_off[d]; j < t->kid_off[d + 1]; j++)
			consider(t, ds, s, t->kid[j], &best, &ready);
		for (uint32_t j = t->con_off[d]; j < t->con_off[d + 1]; j++)
			consider(t, ds, s, t->con[j], &best, &ready);
		break;
	case TL_RESUME:		/* dpm_wait_for_superior(): parent and suppliers */
		if (t->devs[d].parent != TL_NONE)
			consider(t, ds, s, t->devs[d].parent, &best, &ready);
		/* fall through */
	case TL_PROBE:		/* device_links_check_suppliers() */
		for (uint32_t j = t->sup_off[d]; j < t->sup_off[d + 1]; j++)
			consider(t, ds, s, t->sup[j], &best, &ready);
		break;
	case TL_UNBIND:		/* device_links_unbind_consumers() first */
		for (uint32_t j = t->con_off[d]; j < t->con_off[d + 1]; j++)
			consider(t, ds, s, t->con[j], &best, &ready);
		break;
	}
	s->ready = best != TL_NONE ? ready : inst_start[s->inst];
	s->wait = best;
	s->flags &= (uint8_t)~(TL_SEG_CRIT | TL_SEG_BARRIER);
	if (best == TL_NONE && s->inst > 0) {
		uint32_t k = prev_last[s->inst - 1];

		if (k != TL_NONE && t->segs[k].t1 <= s->t0) {
			s->wait = k;
			s->flags |= TL_SEG_BARRIER;
		}
	}
}

static void mark_critical(struct tl_run *t)
{
	uint32_t k = TL_NONE;

	t->ncrit = 0;
	t->crit_end = -1;
	for (size_t i = 0; i < t->nsegs; i++)
		if (k == TL_NONE || t->segs[i].t1 >= t->segs[k].t1)
			k = (uint32_t)i;
	if (k != TL_NONE)
		t->crit_end = t->segs[k].t1;
	/* Waits point to segments that ended no later, in an acyclic graph or
	 * an earlier instance; the CRIT mark still stops a malformed log. */
	while (k != TL_NONE && !(t->segs[k].flags & TL_SEG_CRIT)) {
		t->segs[k].flags |= TL_SEG_CRIT;
		t->ncrit++;
		k = t->segs[k].wait;
	}
}

/* What an earlier tl_analyse() of @t built (one stopped part-way included). */
static void drop_analysis(struct tl_run *t)
{
	uint32_t **built[] = { &t->sup_off, &t->sup, &t->con_off, &t->con, &t->kid_off, &t->kid };

	for (size_t i = 0; i < sizeof(built) / sizeof(built[0]); i++) {
		free(*built[i]);
		*built[i] = NULL;
	}
}

int tl_analyse(sqlite3 *db, struct tl_run *t, const atomic_int *stop, char *err, size_t errlen)
{
	struct dev_segs ds = { 0 };
	uint32_t *last = NULL;
	int64_t *start = NULL;
	int ret;

	drop_analysis(t);   /* analysed again (after a stop): nothing of the last one leaks */
	ret = build_children(t, stop);
	if (!ret)
		ret = read_links(db, t, err, errlen);
	if (!ret)
		ret = index_segs(t, &ds);
	if (ret)
		goto out;
	/* Per instance: its first start and its last-ending segment, then the
	 * last-ending segment of all instances up to each one. */
	last = malloc((t->ninst ? t->ninst : 1) * sizeof(*last));
	start = malloc((t->ninst ? t->ninst : 1) * sizeof(*start));
	if (!last || !start) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < t->ninst; i++) {
		last[i] = TL_NONE;
		start[i] = INT64_MAX;
	}
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tl_seg *s = &t->segs[i];

		if (s->t0 < start[s->inst])
			start[s->inst] = s->t0;
		if (last[s->inst] == TL_NONE || s->t1 >= t->segs[last[s->inst]].t1)
			last[s->inst] = (uint32_t)i;
	}
	for (uint32_t i = 1; i < t->ninst; i++)
		if (last[i] == TL_NONE ||
		    (last[i - 1] != TL_NONE && t->segs[last[i - 1]].t1 > t->segs[last[i]].t1))
			last[i] = last[i - 1];
	for (size_t i = 0; i < t->nsegs; i++) {
		if (tl_stop_due(stop, i)) {
			ret = -EINTR;
			goto out;
		}
		find_wait(t, &ds, &t->segs[i], last, start);
	}
	mark_critical(t);
out:
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory");
	if (ret == -EINTR && err && errlen)
		snprintf(err, errlen, "interrupted");
	free(ds.off);
	free(ds.seg);
	free(last);
	free(start);
	return ret;
}

/*
 * Marks in ROW_OF (0) the TL_PINNED devices with the most callback time in
 * OP, the ones the page names first, at most ROOM new ones; SUM is scratch
 * of ndevs.  Returns how many were not marked before.
 */
static size_t pick_slowest(const struct tl_run *t, enum tl_op op, int64_t *sum, size_t room, uint32_t *row_of)
{
	size_t picked = 0;

	for (size_t i = 0; i < t->ndevs; i++)
		sum[i] = 0;
	for (size_t i = 0; i < t->nsegs; i++)
		if (t->segs[i].op == op)
			sum[t->segs[i].row] += t->segs[i].t1 - t->segs[i].t0;
	for (int k = 0; k < TL_PINNED && picked < room; k++) {
		size_t best = t->ndevs;

		for (size_t i = 0; i < t->ndevs; i++)
			if (sum[i] > 0 && (best == t->ndevs || sum[i] > sum[best]))
				best = i;
		if (best == t->ndevs)
			break;
		sum[best] = 0;
		if (row_of[best] == TL_NONE) {
			row_of[best] = 0;
			picked++;
		}
	}
	return picked;
}

size_t tl_select_rows(const struct tl_run *t, size_t max_rows, unsigned op_mask, uint32_t *row_of)
{
	size_t picked = 0, row = 0;
	int64_t *sum;

	for (size_t i = 0; i < t->ndevs; i++)
		row_of[i] = TL_NONE;
	for (size_t i = 0; i < t->nsegs && picked < max_rows; i++) {
		const struct tl_seg *s = &t->segs[i];

		if ((s->flags & TL_SEG_CRIT) && (op_mask & (1u << s->op)) && row_of[s->row] == TL_NONE) {
			row_of[s->row] = 0;
			picked++;
		}
	}
	/* the slowest devices of each op next (none when out of memory: the rows stay valid) */
	sum = picked < max_rows ? malloc((t->ndevs ? t->ndevs : 1) * sizeof(*sum)) : NULL;
	for (int op = 0; sum && op < TL_NOPS; op++)
		if (op_mask & (1u << op))
			picked += pick_slowest(t, (enum tl_op)op, sum, max_rows - picked, row_of);
	free(sum);
	for (size_t i = 0; i < t->ndevs && picked < max_rows; i++) {
		if (row_of[i] == TL_NONE) {
			row_of[i] = 0;
			picked++;
		}
	}
	for (size_t i = 0; i < t->ndevs; i++)
		if (row_of[i] != TL_NONE)
			row_of[i] = (uint32_t)row++;
	return row;
}
