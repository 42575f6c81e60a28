/*
 * log_scenario.c - from parsed callbacks to a scenario: each cycle's main
 * PM thread and the async flags, the median gap between the main thread's
 * callbacks (its per-device cost in the logged system), the dpm order the
 * log shows, and the scenario JSON (Jansson) or an overlay on another one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/measure/log_import.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Samples by (cycle, key, start, line): the walk of each phase in time order. */
static const struct dl_lg_sample *sort_base;

static int cmp_walk(const void *a, const void *b)
{
	const struct dl_lg_sample *x = &sort_base[*(const uint32_t *)a];
	const struct dl_lg_sample *y = &sort_base[*(const uint32_t *)b];

	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/*
 * Cycle by cycle: the samples are sorted by cycle (the log's order already,
 * unless a later file's cycles were merged into earlier ones), each cycle's
 * range is kept in it, and the analysis holds one cycle's worth of arrays
 * at a time.  Boot probes (no cycle) stay where they are, inside ranges.
 */
static int sort_by_cycle(struct dl_logimport *li)
{
	uint32_t last = 0, *at;
	bool sorted = true;
	struct dl_lg_sample *q;

	for (uint32_t i = 0; i < li->nsmp && sorted; i++)
		if (li->smp[i].cycle < li->ncyc) {
			sorted = li->smp[i].cycle >= last;
			last = li->smp[i].cycle;
		}
	if (!sorted) {
		/* a stable counting sort; boot probes go last */
		at = calloc((size_t)li->ncyc + 2, sizeof(*at));
		q = malloc(((size_t)li->nsmp + 1) * sizeof(*q));
		if (!at || !q) {
			free(at);
			free(q);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < li->nsmp; i++)
			at[(li->smp[i].cycle < li->ncyc ? li->smp[i].cycle : li->ncyc) + 1]++;
		for (uint32_t c = 0; c <= li->ncyc; c++)
			at[c + 1] += at[c];
		for (uint32_t i = 0; i < li->nsmp; i++)
			q[at[li->smp[i].cycle < li->ncyc ? li->smp[i].cycle : li->ncyc]++] = li->smp[i];
		free(at);
		free(li->smp);
		li->smp = q;
		li->cap_smp = li->nsmp + 1;
	}
	free(li->probe_smp);
	li->nprobe_smp = 0;
	li->probe_smp = malloc(((size_t)li->probes + 1) * sizeof(*li->probe_smp));
	if (!li->probe_smp)
		return -ENOMEM;
	for (uint32_t i = 0; i < li->nsmp && li->nprobe_smp < li->probes; i++)
		if (li->smp[i].cycle >= li->ncyc)
			li->probe_smp[li->nprobe_smp++] = i;
	for (uint32_t c = 0; c < li->ncyc; c++)
		li->cyc[c].smp_first = li->cyc[c].smp_end = 0;
	for (uint32_t i = li->nsmp; i-- > 0;)
		if (li->smp[i].cycle < li->ncyc)
			li->cyc[li->smp[i].cycle].smp_first = i;
	for (uint32_t i = 0; i < li->nsmp; i++)
		if (li->smp[i].cycle < li->ncyc)
			li->cyc[li->smp[i].cycle].smp_end = i + 1;
	return 0;
}

/* The most samples one cycle's range holds. */
static uint32_t max_range(const struct dl_logimport *li)
{
	uint32_t m = 0;

	for (uint32_t c = 0; c < li->ncyc; c++)
		if (li->cyc[c].smp_end - li->cyc[c].smp_first > m)
			m = li->cyc[c].smp_end - li->cyc[c].smp_first;
	return m;
}

/* The main PM thread of cycle @c; @pids: room for its samples and all totals. */
static void find_main_thread(struct dl_logimport *li, uint32_t c, uint32_t *pids)
{
	uint32_t n = 0, best = DL_LG_NONE, best_n = 0;

	/* whoever printed the cycle's totals is the main thread */
	for (uint32_t t = 0; t < li->ntot; t++)
		if (li->tot[t].cycle == c && li->tot[t].pid != DL_LG_NONE)
			pids[n++] = li->tot[t].pid;
	if (!n)
		for (uint32_t i = li->cyc[c].smp_first; i < li->cyc[c].smp_end; i++)
			if (li->smp[i].cycle == c && li->smp[i].pid != DL_LG_NONE)
				pids[n++] = li->smp[i].pid;
	qsort(pids, n, sizeof(*pids), cmp_u32);
	for (uint32_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && pids[j] == pids[i]; j++)
			;
		if (j - i > best_n) {
			best_n = j - i;
			best = pids[i];
		}
	}
	li->cyc[c].main_pid = best;
}

static bool off_main(const struct dl_logimport *li, const struct dl_lg_sample *s)
{
	return s->cycle < li->ncyc && s->pid != DL_LG_NONE &&
	       li->cyc[s->cycle].main_pid != DL_LG_NONE && s->pid != li->cyc[s->cycle].main_pid;
}

/* The most callbacks of cycle @c running at once (starts +1, ends -1, swept in time). */
static void find_peak(struct dl_logimport *li, uint32_t c, int64_t *ev)
{
	uint32_t n = 0, run = 0;

	for (uint32_t i = li->cyc[c].smp_first; i < li->cyc[c].smp_end; i++) {
		const struct dl_lg_sample *s = &li->smp[i];

		if (s->cycle != c || s->start_ns < 0 || s->start_ns > INT64_MAX / 4)
			continue;
		/* time * 2, +1 for a start, so an end sorts before a start at the same time */
		ev[n++] = s->start_ns * 2 + 1;
		ev[n++] = (s->start_ns + s->lat_ns) * 2;
	}
	qsort(ev, n, sizeof(*ev), cmp_i64);
	for (uint32_t i = 0; i < n; i++) {
		if (ev[i] & 1)
			run++;
		else if (run)
			run--;
		if (run > li->cyc[c].peak)
			li->cyc[c].peak = run;
	}
}

/* Cycle @c's main-thread walk in walk[] (sorted: phase, then time); its length. */
static uint32_t cycle_walk(const struct dl_logimport *li, uint32_t c, uint32_t *walk)
{
	uint32_t n = 0;

	for (uint32_t i = li->cyc[c].smp_first; i < li->cyc[c].smp_end; i++) {
		const struct dl_lg_sample *s = &li->smp[i];

		if (s->cycle == c && s->start_ns >= 0 && !off_main(li, s))
			walk[n++] = i;
	}
	sort_base = li->smp;
	qsort(walk, n, sizeof(*walk), cmp_walk);
	return n;
}

/* Binary min-heap of device ids by rank, then id. */
struct heap {
	uint32_t *a, n;
	const double *rank;
};

static bool before(const struct heap *h, uint32_t x, uint32_t y)
{
	return h->rank[x] < h->rank[y] || (h->rank[x] == h->rank[y] && x < y);
}

static void heap_push(struct heap *h, uint32_t v)
{
	uint32_t i = h->n++;

	while (i && before(h, v, h->a[(i - 1) / 2])) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = v;
}

static uint32_t heap_pop(struct heap *h)
{
	uint32_t top = h->a[0], v = h->a[--h->n], i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(h, h->a[c + 1], h->a[c]))
			c++;
		if (!before(h, h->a[c], v))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = v;
	return top;
}

/* A set of 64-bit keys (0: empty slot), each kept once however often added. */
struct set64 {
	uint64_t *a;
	uint32_t n, mask;
};

static uint32_t set64_slot(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

/* Add @key (nonzero); its slot, or UINT32_MAX without memory. */
static uint32_t set64_add(struct set64 *st, uint64_t key)
{
	uint32_t i;

	if (!st->a || (st->n + 1) * 2 > st->mask + 1) {
		uint32_t size = st->a ? 2 * (st->mask + 1) : 4096;
		uint64_t *a = calloc(size, sizeof(*a)), *old = st->a;

		if (!a)
			return UINT32_MAX;
		for (uint32_t k = 0; old && k <= st->mask; k++)
			if (old[k]) {
				for (i = set64_slot(old[k], size - 1); a[i]; i = (i + 1) & (size - 1))
					;
				a[i] = old[k];
			}
		st->a = a;
		st->mask = size - 1;
		free(old);
	}
	for (i = set64_slot(key, st->mask); st->a[i]; i = (i + 1) & st->mask)
		if (st->a[i] == key)
			return i;
	st->a[i] = key;
	st->n++;
	return i;
}

/*
 * The main thread's gaps, counted by (phase, length) rather than listed:
 * gaps are whole microseconds in most logs, so a few thousand distinct
 * ones stand for millions, and the medians come out exact.
 */
struct gap_slot {
	uint64_t key;		/* phase << GAP_KEY_SHIFT | (gap + 1); 0: empty */
	uint32_t n;
};

struct gap_count {
	struct gap_slot *a;
	uint32_t used, mask;
};

#define GAP_KEY_SHIFT 56
#define GAP_MAX ((INT64_C(1) << GAP_KEY_SHIFT) - 2)

static struct gap_slot *gap_find(struct gap_slot *a, uint32_t mask, uint64_t key)
{
	uint32_t i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;

	while (a[i].key && a[i].key != key)
		i = (i + 1) & mask;
	return &a[i];
}

static int gap_add(struct gap_count *gc, unsigned phase, int64_t gap)
{
	uint64_t key = (uint64_t)phase << GAP_KEY_SHIFT | (uint64_t)((gap < GAP_MAX ? gap : GAP_MAX) + 1);
	struct gap_slot *sl;

	if (!gc->a || (gc->used + 1) * 2 > gc->mask + 1) {
		uint32_t size = gc->a ? 2 * (gc->mask + 1) : 1024;
		struct gap_slot *a = calloc(size, sizeof(*a));

		if (!a)
			return -ENOMEM;
		for (uint32_t k = 0; gc->a && k <= gc->mask; k++)
			if (gc->a[k].key)
				*gap_find(a, size - 1, gc->a[k].key) = gc->a[k];
		free(gc->a);
		gc->a = a;
		gc->mask = size - 1;
	}
	sl = gap_find(gc->a, gc->mask, key);
	if (!sl->key) {
		sl->key = key;
		gc->used++;
	}
	sl->n++;
	return 0;
}

struct gap_run {
	int64_t gap;
	uint32_t n;
};

static int cmp_gap_run(const void *a, const void *b)
{
	const struct gap_run *x = a, *y = b;

	return (x->gap > y->gap) - (x->gap < y->gap);
}

/* The median of runs[0..n) (sorted): the element at half the total count, as sorted[n / 2]. */
static int64_t run_median(const struct gap_run *runs, uint32_t n)
{
	uint64_t total = 0, at = 0;

	for (uint32_t i = 0; i < n; i++)
		total += runs[i].n;
	for (uint32_t i = 0; i < n; i++) {
		at += runs[i].n;
		if (at > total / 2)
			return runs[i].gap;
	}
	return -1;
}

/* li->gap_ns[] and li->main_gap_ns from the counts. */
static int gap_medians(struct dl_logimport *li, const struct gap_count *gc)
{
	struct gap_run *runs = malloc(((size_t)gc->used + 1) * sizeof(*runs));
	uint32_t n;

	if (!runs)
		return -ENOMEM;
	for (unsigned k = 0; k <= DL_LAT_COUNT; k++) {
		n = 0;
		for (uint32_t s = 0; gc->a && s <= gc->mask; s++) {
			uint64_t key = gc->a[s].key;

			if (key && (k == DL_LAT_COUNT || key >> GAP_KEY_SHIFT == k))
				runs[n++] = (struct gap_run){
					(int64_t)(key & (((uint64_t)1 << GAP_KEY_SHIFT) - 1)) - 1,
					gc->a[s].n };
		}
		if (!n)
			continue;
		qsort(runs, n, sizeof(*runs), cmp_gap_run);
		if (k == DL_LAT_COUNT)
			li->main_gap_ns = run_median(runs, n);
		else
			li->gap_ns[k] = run_median(runs, n);
	}
	free(runs);
	return 0;
}

/*
 * A device whose callbacks all ran async is in no walk: it ranks just after
 * the main-thread device whose callback started before its own (the main
 * thread starts async callbacks as it walks the list).
 */
static int rank_async(const struct dl_logimport *li, uint32_t *all, double *rank)
{
	uint32_t n = li->ndev;
	double *arank = malloc(((size_t)n + 1) * sizeof(*arank));

	if (!arank)
		return -ENOMEM;
	for (uint32_t d = 0; d < n; d++)
		arank[d] = 1e18;
	for (uint32_t c = 0; c < li->ncyc; c++) {
		uint32_t na = 0;

		for (uint32_t i = li->cyc[c].smp_first; i < li->cyc[c].smp_end; i++)
			if (li->smp[i].cycle == c && li->smp[i].start_ns >= 0)
				all[na++] = i;
		sort_base = li->smp;
		qsort(all, na, sizeof(*all), cmp_walk);
		for (uint32_t i = 0, j; i < na; i = j) {
			const struct dl_lg_sample *s0 = &li->smp[all[i]];
			bool back = s0->key <= DL_LAT_SUSPEND_NOIRQ || s0->key == DL_LAT_COMPLETE;
			double last = -1;

			for (j = i; j < na && li->smp[all[j]].key == s0->key; j++)
				;
			for (uint32_t k = 0; k < j - i; k++) {
				uint32_t d = li->smp[all[back ? j - 1 - k : i + k]].dev;

				if (rank[d] < 1e18)
					last = rank[d];
				else if (last + 0.5 < arank[d])
					arank[d] = last + 0.5;
			}
		}
	}
	for (uint32_t d = 0; d < n; d++)
		if (rank[d] >= 1e18)
			rank[d] = arank[d];
	free(arank);
	return 0;
}

/*
 * One cycle's walks: each phase's, in the forward direction (suspend-side
 * phases walk dpm_list backwards), ranks devices by first appearance
 * (*next counts on over the cycles) and orders each after the one before
 * it (@edges: u << 32 | v); gaps between its callbacks are counted.
 */
static int walk_cycle(struct dl_logimport *li, const uint32_t *walk, uint32_t nwalk, double *rank,
		      double *next, struct set64 *edges, struct gap_count *gc)
{
	for (uint32_t i = 0, j; i < nwalk; i = j) {
		const struct dl_lg_sample *s0 = &li->smp[walk[i]];
		bool back = s0->key <= DL_LAT_SUSPEND_NOIRQ || s0->key == DL_LAT_COMPLETE;
		uint32_t prev = DL_LG_NONE;

		for (j = i; j < nwalk && li->smp[walk[j]].key == s0->key; j++)
			;
		for (uint32_t k = 0; k < j - i; k++) {
			uint32_t d = li->smp[walk[back ? j - 1 - k : i + k]].dev;

			if (rank[d] > *next)
				rank[d] = *next;
			*next += 1;
			if (prev != DL_LG_NONE && prev != d &&
			    set64_add(edges, (uint64_t)prev << 32 | d) == UINT32_MAX)
				return -ENOMEM;
			prev = d;
		}
		for (uint32_t k = i; k + 1 < j; k++) {
			const struct dl_lg_sample *a = &li->smp[walk[k]], *b = &li->smp[walk[k + 1]];
			int64_t g = b->start_ns - (a->start_ns + a->lat_ns);

			if (a->file == b->file && g >= 0 && gap_add(gc, a->key, g))
				return -ENOMEM;
		}
	}
	return 0;
}

/* A device only seen as a parent ranks just before its first child. */
static void rank_parents(const struct dl_logimport *li, double *rank)
{
	uint32_t n = li->ndev;

	for (uint32_t d = 0; d < n; d++)
		for (uint32_t a = li->dev[d].parent, k = 0; a != DL_LG_NONE && k < n;
		     a = li->dev[a].parent, k++)
			if (rank[a] > rank[d] - 0.5)
				rank[a] = rank[d] - 0.5;
}

/*
 * EDGES (consumed: freed once read) as CSR: the successors of device d are
 * COL[ROW[d] .. ROW[d + 1]) (ROW: N + 2 zeroed entries, *COL allocated
 * here), and INDEG counts each device's predecessors.  0, or -ENOMEM.
 */
static int edges_csr(struct set64 *edges, uint32_t n, uint32_t *row, uint32_t **col,
		     uint32_t *indeg)
{
	uint32_t ne = 0, *fill = NULL;
	uint32_t *eu = malloc(((size_t)edges->n + 1) * sizeof(*eu));
	uint32_t *ev = malloc(((size_t)edges->n + 1) * sizeof(*ev));
	int ret = -ENOMEM;

	if (!eu || !ev)
		goto out;
	for (uint32_t k = 0; edges->a && k <= edges->mask; k++)
		if (edges->a[k]) {
			eu[ne] = (uint32_t)(edges->a[k] >> 32);
			ev[ne++] = (uint32_t)edges->a[k];
		}
	free(edges->a);
	edges->a = NULL;
	for (uint32_t e = 0; e < ne; e++)
		row[eu[e] + 1]++;
	for (uint32_t d = 0; d < n; d++)
		row[d + 1] += row[d];
	*col = malloc(((size_t)ne + 1) * sizeof(**col));
	if (!*col || !(fill = calloc((size_t)n + 1, sizeof(*fill))))
		goto out;
	for (uint32_t e = 0; e < ne; e++) {
		(*col)[row[eu[e]] + fill[eu[e]]++] = ev[e];
		indeg[ev[e]]++;
	}
	ret = 0;
out:
	free(eu);
	free(ev);
	free(fill);
	return ret;
}

/* The walks contradict each other: the best-ranked device not placed (or its highest
 * ancestor not placed) goes next, and the conflict is counted. */
static void break_conflict(struct dl_logimport *li, struct heap *h, const uint8_t *done,
			   uint32_t *indeg)
{
	uint32_t best = DL_LG_NONE;

	for (uint32_t x = 0; x < li->ndev; x++)
		if (!done[x] && (best == DL_LG_NONE || before(h, x, best)))
			best = x;
	while (li->dev[best].parent != DL_LG_NONE && !done[li->dev[best].parent])
		best = li->dev[best].parent;
	indeg[best] = 0;
	heap_push(h, best);
	li->order_conflicts++;
}

/* Kahn's merge over ROW, COL, INDEG, the heap H ordered by rank: li->order, each rank. */
static void merge_walks(struct dl_logimport *li, const uint32_t *row, const uint32_t *col,
			uint32_t *indeg, uint8_t *done, struct heap *h)
{
	uint32_t n = li->ndev, placed = 0;

	for (uint32_t d = 0; d < n; d++)
		if (!indeg[d])
			heap_push(h, d);
	while (placed < n) {
		uint32_t d;

		if (!h->n)
			break_conflict(li, h, done, indeg);
		d = heap_pop(h);
		if (done[d])
			continue;
		done[d] = 1;
		li->dev[d].rank = placed;
		li->order[placed++] = d;
		for (uint32_t e = row[d]; e < row[d + 1]; e++)
			if (!done[col[e]] && indeg[col[e]] && !--indeg[col[e]])
				heap_push(h, col[e]);
	}
}

/*
 * The registration order: a topological merge of every phase's walk and of
 * parent before child (@edges, consumed), ties broken by first appearance
 * (@rank).  Async cycles contribute only their main thread's walk.  Where
 * the walks disagree, the merge breaks a constraint and counts it.
 */
static int find_order(struct dl_logimport *li, struct set64 *edges, double *rank)
{
	uint32_t n = li->ndev, *indeg = NULL, *row = NULL, *col = NULL;
	uint8_t *done = NULL;
	struct heap h = { .rank = rank };
	int ret = -ENOMEM;

	indeg = calloc((size_t)n + 1, sizeof(*indeg));
	row = calloc((size_t)n + 2, sizeof(*row));
	done = calloc((size_t)n + 1, 1);
	h.a = malloc(((size_t)n + 1) * sizeof(*h.a));
	li->order = malloc(((size_t)n + 1) * sizeof(*li->order));
	if (!indeg || !row || !done || !h.a || !li->order)
		goto out;
	rank_parents(li, rank);
	for (uint32_t d = 0; d < n; d++)
		if (li->dev[d].parent != DL_LG_NONE &&
		    set64_add(edges, (uint64_t)li->dev[d].parent << 32 | d) == UINT32_MAX)
			goto out;
	if (edges_csr(edges, n, row, &col, indeg))
		goto out;
	merge_walks(li, row, col, indeg, done, &h);
	ret = 0;
out:
	free(indeg);
	free(row);
	free(col);
	free(done);
	free(h.a);
	return ret;
}

/* When a callback's end shows in the log: its return line, else start + duration. */
static int64_t end_of(const struct dl_lg_sample *s)
{
	return s->end_ns >= s->start_ns ? s->end_ns : s->start_ns + s->lat_ns;
}

static int cmp_end(const void *a, const void *b)
{
	const struct dl_lg_sample *x = &sort_base[*(const uint32_t *)a];
	const struct dl_lg_sample *y = &sort_base[*(const uint32_t *)b];
	int64_t ex = end_of(x), ey = end_of(y);

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (ex > ey) - (ex < ey);
}

static bool is_ancestor(const struct dl_logimport *li, uint32_t a, uint32_t d)
{
	for (uint32_t k = 0; d != DL_LG_NONE && k <= li->ndev; d = li->dev[d].parent, k++)
		if (d == a)
			return true;
	return false;
}

static int cmp_wait(const void *a, const void *b)
{
	const struct dl_lg_wait *x = a, *y = b;

	if (x->consumer != y->consumer)
		return x->consumer < y->consumer ? -1 : 1;
	if (x->supplier != y->supplier)
		return x->supplier < y->supplier ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/*
 * Waits the log implies, in cycle @c (async callbacks in it).  Where the
 * main thread sat idle (over 1 ms and 20 gaps) before a callback and an
 * async callback ended right before it (within 4 gaps, at least 50 us), the
 * main thread waited for that one.  Unless a parent explains it, a link did
 * (resume side: the waiting device, or its topmost ancestor without
 * callbacks of its own, consumes the one that ended; suspend side: the
 * other way round).  Logs show no links; this is where they show through.
 * @off: room for the cycle's samples.
 */
static int find_waits(struct dl_logimport *li, uint32_t c, const uint32_t *walk, uint32_t nwalk,
		      uint32_t *off)
{
	uint32_t n = 0;

	for (uint32_t i = li->cyc[c].smp_first; i < li->cyc[c].smp_end; i++)
		if (li->smp[i].cycle == c && off_main(li, &li->smp[i]) && li->smp[i].start_ns >= 0)
			off[n++] = i;
	sort_base = li->smp;
	qsort(off, n, sizeof(*off), cmp_end);
	for (uint32_t i = 0; n && i + 1 < nwalk; i++) {
		const struct dl_lg_sample *a = &li->smp[walk[i]], *b = &li->smp[walk[i + 1]];
		int64_t gap = li->gap_ns[b->key] > 0 ? li->gap_ns[b->key] : 0;
		int64_t idle = b->start_ns - end_of(a);
		int64_t tol = 4 * gap > 50000 ? 4 * gap : 50000;
		uint32_t lo = 0, hi = n, con, sup;
		const struct dl_lg_sample *s;

		if (a->key != b->key || idle < 1000000 || idle < 20 * gap)
			continue;
		/* the last async callback of this phase to end at or before b's start */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			const struct dl_lg_sample *m = &li->smp[off[mid]];

			if (m->key < b->key || (m->key == b->key && end_of(m) <= b->start_ns))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			continue;
		s = &li->smp[off[lo - 1]];
		if (s->key != b->key || end_of(s) < b->start_ns - tol)
			continue;
		if (s->key >= DL_LAT_RESUME_NOIRQ && s->key <= DL_LAT_RESUME) {
			con = b->dev;
			while (li->dev[con].parent != DL_LG_NONE && !li->dev[li->dev[con].parent].nsamples)
				con = li->dev[con].parent;
			sup = s->dev;
		} else {
			con = s->dev;
			sup = b->dev;
		}
		/* a parent explains it, or the link would close a loop with the parents */
		if (con == sup || is_ancestor(li, sup, con) || is_ancestor(li, con, sup))
			continue;
		if (li->nwait == li->cap_wait) {
			uint32_t cap = li->cap_wait ? 2 * li->cap_wait : 16;
			struct dl_lg_wait *q = realloc(li->wait, cap * sizeof(*q));

			if (!q)
				return -ENOMEM;
			li->wait = q;
			li->cap_wait = cap;
		}
		li->wait[li->nwait++] = (struct dl_lg_wait){ con, sup, b->file, b->line, b->key, idle };
	}
	return 0;
}

/* One wait per (consumer, supplier): the first. */
static void dedup_waits(struct dl_logimport *li)
{
	uint32_t u = 0;

	if (li->nwait)	/* qsort() must not see a NULL array */
		qsort(li->wait, li->nwait, sizeof(*li->wait), cmp_wait);
	for (uint32_t i = 0; i < li->nwait; i++)
		if (!u || li->wait[u - 1].consumer != li->wait[i].consumer ||
		    li->wait[u - 1].supplier != li->wait[i].supplier)
			li->wait[u++] = li->wait[i];
	li->nwait = u;
}

int dl_log_finish(struct dl_logimport *li)
{
	struct set64 edges = { 0 };
	struct gap_count gc = { 0 };
	uint32_t max, *walk = NULL, *buf = NULL, *pids = NULL;
	int64_t *ev = NULL;
	double *rank = NULL, next = 0;
	int ret;

	if ((ret = dl_lg_make_labels(li)) || (ret = sort_by_cycle(li)))
		return ret;
	ret = -ENOMEM;
	max = max_range(li);
	walk = malloc(((size_t)max + 1) * sizeof(*walk));
	buf = malloc(((size_t)max + 1) * sizeof(*buf));
	pids = malloc(((size_t)max + li->ntot + 1) * sizeof(*pids));
	ev = malloc(((size_t)max * 2 + 1) * sizeof(*ev));
	rank = malloc(((size_t)li->ndev + 1) * sizeof(*rank));
	if (!walk || !buf || !pids || !ev || !rank)
		goto out;
	for (uint32_t d = 0; d < li->ndev; d++)
		rank[d] = 1e18;
	for (uint32_t c = 0; c < li->ncyc; c++) {
		const struct dl_lg_cycle *cy = &li->cyc[c];
		uint32_t nwalk;

		find_main_thread(li, c, pids);
		find_peak(li, c, ev);
		for (uint32_t i = cy->smp_first; i < cy->smp_end; i++)
			if (li->smp[i].cycle == c && off_main(li, &li->smp[i])) {
				li->cyc[c].nasync++;
				li->dev[li->smp[i].dev].async = 1;
			}
		for (uint32_t i = cy->smp_first; i < cy->smp_end; i++)
			if (li->smp[i].cycle == c && cy->nasync && !off_main(li, &li->smp[i]))
				li->dev[li->smp[i].dev].sync_seen = 1;
		nwalk = cycle_walk(li, c, walk);
		if (walk_cycle(li, walk, nwalk, rank, &next, &edges, &gc))
			goto out;
	}
	if (gap_medians(li, &gc) || rank_async(li, buf, rank) || find_order(li, &edges, rank))
		goto out;
	for (uint32_t c = 0; c < li->ncyc; c++)
		if (li->cyc[c].nasync &&
		    find_waits(li, c, walk, cycle_walk(li, c, walk), buf))
			goto out;
	dedup_waits(li);
	ret = 0;
out:
	free(edges.a);
	free(gc.a);
	free(walk);
	free(buf);
	free(pids);
	free(ev);
	free(rank);
	return ret;
}

/* ---- JSON ---- */

/* "123us" when whole microseconds, else a number of ns. */
static json_t *ns_json(int64_t ns)
{
	char buf[32];

	if (ns % 1000)
		return json_integer(ns);
	snprintf(buf, sizeof(buf), "%lldus", (long long)(ns / 1000));
	return json_string(buf);
}

static int cmp_dev_key(const void *a, const void *b)
{
	const struct dl_lg_sample *x = &sort_base[*(const uint32_t *)a];
	const struct dl_lg_sample *y = &sort_base[*(const uint32_t *)b];

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

static int cmp_lat(const void *a, const void *b)
{
	const struct dl_lg_lat *x = a, *y = b;

	if (x->dk != y->dk)
		return x->dk < y->dk ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

int dl_log_fold(struct dl_logimport *li)
{
	char *base = (char *)li->smp;
	struct dl_lg_sample *fail;
	struct dl_lg_lat *lat;
	uint32_t n = 0, nf = 0;

	if (li->fold || li->ndev >= UINT32_MAX >> DL_LG_KEY_BITS)
		return li->fold ? 0 : -E2BIG;
	for (uint32_t i = 0; i < li->nsmp; i++)
		nf += li->smp[i].ret != 0;
	fail = malloc(((size_t)nf + 1) * sizeof(*fail));
	if (!fail)
		return -ENOMEM;
	nf = 0;
	for (uint32_t i = 0; i < li->nsmp; i++)
		if (li->smp[i].ret)
			fail[nf++] = li->smp[i];
	/*
	 * In place: record n goes over bytes a sample already read (n <= i), so
	 * the fold needs no second array; memcpy, as the bytes change type.
	 */
	for (uint32_t i = 0; i < li->nsmp; i++) {
		struct dl_lg_sample s;
		struct dl_lg_lat r;

		memcpy(&s, base + (size_t)i * sizeof(s), sizeof(s));
		if (s.key >= DL_LAT_COUNT)
			continue;
		r = (struct dl_lg_lat){ s.lat_ns, s.dev << DL_LG_KEY_BITS | s.key, i };
		memcpy(base + (size_t)n++ * sizeof(r), &r, sizeof(r));
	}
	lat = realloc(base, ((size_t)n + 1) * sizeof(*lat));
	li->fold = lat ? lat : (struct dl_lg_lat *)(void *)base;
	li->nfold = n;
	li->smp = NULL;
	li->nsmp = li->cap_smp = 0;
	li->fail = fail;
	li->nfail = nf;
	for (uint32_t c = 0; c < li->ncyc; c++)
		li->cyc[c].smp_first = li->cyc[c].smp_end = 0;
	li->nprobe_smp = 0;
	/* by device and phase, in log order within */
	qsort(li->fold, n, sizeof(*li->fold), cmp_lat);
	return 0;
}

/* Latency k of a device group: idx[k] of the samples, or record k of the fold (idx NULL). */
static unsigned at_key(const struct dl_logimport *li, const uint32_t *idx, uint32_t k)
{
	return idx ? li->smp[idx[k]].key : li->fold[k].dk & ((1u << DL_LG_KEY_BITS) - 1);
}

static int64_t at_lat(const struct dl_logimport *li, const uint32_t *idx, uint32_t k)
{
	return idx ? li->smp[idx[k]].lat_ns : li->fold[k].lat_ns;
}

/* The folded latencies grouped by device: li->fold[grp[d]..grp[d+1]), sorted by key. */
static int group_folded(const struct dl_logimport *li, uint32_t **grp_out)
{
	uint32_t *grp = calloc((size_t)li->ndev + 2, sizeof(*grp));

	if (!grp)
		return -ENOMEM;
	for (uint32_t k = 0; k < li->nfold; k++)
		grp[(li->fold[k].dk >> DL_LG_KEY_BITS) + 1]++;
	for (uint32_t d = 0; d < li->ndev; d++)
		grp[d + 1] += grp[d];
	*grp_out = grp;
	return 0;
}

/*
 * The samples of @li grouped by device: idx[grp[d]..grp[d+1]) sorted by key;
 * folded (dl_log_fold()): *idx_out NULL, the ranges index li->fold.
 */
static int group_by_device(const struct dl_logimport *li, uint32_t cycle, uint32_t **idx_out,
			   uint32_t **grp_out)
{
	/* one cycle: its range and the boot probes, not the whole log */
	bool one = cycle != DL_LG_NONE && cycle < li->ncyc;
	uint32_t from = one ? li->cyc[cycle].smp_first : 0, to = one ? li->cyc[cycle].smp_end : li->nsmp;
	uint32_t *idx, *grp, n = 0;

	if (li->fold) {
		*idx_out = NULL;
		/* one cycle's samples were folded away */
		return cycle != DL_LG_NONE ? -EINVAL : group_folded(li, grp_out);
	}
	idx = malloc(((size_t)(to - from) + li->nprobe_smp + 1) * sizeof(*idx));
	grp = calloc((size_t)li->ndev + 2, sizeof(*grp));
	if (!idx || !grp) {
		free(idx);
		free(grp);
		return -ENOMEM;
	}
	for (uint32_t k = from; k < to + (one ? li->nprobe_smp : 0); k++) {
		uint32_t i = k < to ? k : li->probe_smp[k - to];
		const struct dl_lg_sample *s = &li->smp[i];

		if (s->key >= DL_LAT_COUNT || (k < to && one && s->cycle != cycle))
			continue;
		if (cycle != DL_LG_NONE && s->cycle != cycle && s->key != DL_LAT_PROBE)
			continue;
		idx[n++] = i;
		grp[s->dev + 1]++;
	}
	for (uint32_t d = 0; d < li->ndev; d++)
		grp[d + 1] += grp[d];
	sort_base = li->smp;
	qsort(idx, n, sizeof(*idx), cmp_dev_key);
	*idx_out = idx;
	*grp_out = grp;
	return 0;
}

/* A latency as written: with the phase's main-thread gap added when @with_gap. */
static int64_t sample_ns(const struct dl_logimport *li, unsigned key, int64_t lat_ns,
			 bool with_gap)
{
	int64_t g = li->gap_ns[key] >= 0 ? li->gap_ns[key] : li->main_gap_ns;

	return lat_ns + (with_gap && key != DL_LAT_PROBE && g > 0 ? g : 0);
}

/* Set the latency keys of a device on @obj from its group [from, to) (group_by_device()). */
static int put_latencies(const struct dl_logimport *li, json_t *obj, const uint32_t *idx,
			 uint32_t from, uint32_t to, bool with_gap)
{
	for (uint32_t i = from, j; i < to; i = j) {
		unsigned key = at_key(li, idx, i);
		int64_t lat = at_lat(li, idx, i);
		bool same = true;
		json_t *v;

		for (j = i; j < to && at_key(li, idx, j) == key; j++)
			same = same && at_lat(li, idx, j) == lat;
		if (same) {
			v = ns_json(sample_ns(li, key, lat, with_gap));
		} else {
			json_t *arr = json_array();

			v = json_object();
			if (!v || !arr || json_object_set_new(v, "dist", json_string("empirical")) ||
			    json_object_set_new(v, "samples", arr)) {
				json_decref(v);
				return -ENOMEM;
			}
			for (uint32_t k = i; k < j; k++)
				if (json_array_append_new(arr, ns_json(sample_ns(li, key,
						at_lat(li, idx, k), with_gap))))
					return -ENOMEM;
		}
		if (!v || json_object_set_new(obj, dl_lat_key_name(key), v))
			return -ENOMEM;
	}
	return 0;
}

/* What the reading counted: lines, probes, the main thread's gaps, order conflicts. */
static void xlog_counts(const struct dl_logimport *li, json_t *x, bool with_gap)
{
	json_t *g = json_object();

	json_object_set_new(x, "lines", json_integer((json_int_t)li->lines));
	json_object_set_new(x, "lines_skipped", json_integer((json_int_t)li->skipped));
	json_object_set_new(x, "lines_untimed", json_integer((json_int_t)li->untimed));
	json_object_set_new(x, "boot_probes", json_integer(li->probes));
	json_object_set_new(x, "main_gap_ns", json_integer(li->main_gap_ns));
	json_object_set_new(x, "gaps_added", json_boolean(with_gap));
	json_object_set_new(x, "main_gap_ns_by_phase", g);
	for (unsigned k = 0; g && k < DL_LAT_COUNT; k++)
		if (li->gap_ns[k] >= 0)
			json_object_set_new(g, dl_lat_key_name(k), json_integer(li->gap_ns[k]));
	json_object_set_new(x, "order_conflicts", json_integer(li->order_conflicts));
}

/* The phase totals the log printed for cycle C, appended to TOTS: 0, or -ENOMEM. */
static int xlog_totals(const struct dl_logimport *li, uint32_t c, json_t *tots)
{
	for (uint32_t t = 0; t < li->ntot; t++) {
		const struct dl_lg_total *tt = &li->tot[t];
		json_t *to;

		if (tt->cycle != c)
			continue;
		to = json_object();
		if (!to || json_array_append_new(tots, to))
			return -ENOMEM;
		json_object_set_new(to, "phase", json_string(tt->label));
		json_object_set_new(to, "from", json_string(dl_lat_key_name(tt->first)));
		json_object_set_new(to, "to", json_string(dl_lat_key_name(tt->last)));
		json_object_set_new(to, "ns", json_integer(tt->ns));
		json_object_set_new(to, "line", json_integer(tt->line));
	}
	return 0;
}

/* Cycle C appended to CYCLES (ONLY: the one replayed, or DL_LG_NONE): 0, or -ENOMEM. */
static int xlog_cycle(const struct dl_logimport *li, uint32_t c, uint32_t only, json_t *cycles)
{
	json_t *o = json_object(), *tots = json_array();

	if (!o || !tots || json_array_append_new(cycles, o)) {
		json_decref(tots);
		return -ENOMEM;
	}
	json_object_set_new(o, "cycle", json_integer(c));
	json_object_set_new(o, "file", json_string(li->files[li->cyc[c].file]));
	json_object_set_new(o, "line", json_integer(li->cyc[c].line));
	if (li->cyc[c].main_pid != DL_LG_NONE)
		json_object_set_new(o, "main_pid", json_integer(li->cyc[c].main_pid));
	json_object_set_new(o, "callbacks", json_integer(li->cyc[c].ncb));
	json_object_set_new(o, "async_callbacks", json_integer(li->cyc[c].nasync));
	json_object_set_new(o, "lines_lost", json_boolean(li->cyc[c].gap));
	json_object_set_new(o, "truncated", json_boolean(li->cyc[c].truncated));
	json_object_set_new(o, "totals", tots);
	if (only != DL_LG_NONE)
		json_object_set_new(o, "replayed", json_boolean(c == only));
	return xlog_totals(li, c, tots);
}

/*
 * The failed callbacks appended to FAILS: the samples' (one cycle: its range;
 * folded: those kept), then the orphan returns'.  0, or -ENOMEM.
 */
static int xlog_failures(const struct dl_logimport *li, uint32_t only, json_t *fails)
{
	for (uint32_t i = only < li->ncyc ? li->cyc[only].smp_first : 0,
		      to = li->fold ? li->nfail : only < li->ncyc ? li->cyc[only].smp_end : li->nsmp;
	     i < to + li->nofail; i++) {
		const struct dl_lg_sample *s = i >= to ? &li->ofail[i - to]
					       : li->fold ? &li->fail[i] : &li->smp[i];
		json_t *o;

		if (!s->ret || (only != DL_LG_NONE && s->cycle != only))
			continue;
		o = json_object();
		if (!o || json_array_append_new(fails, o))
			return -ENOMEM;
		json_object_set_new(o, "device", json_string(dl_lg_label(li, s->dev)));
		json_object_set_new(o, "phase", json_string(dl_lat_key_name(s->key)));
		json_object_set_new(o, "error", json_integer(s->ret));
		json_object_set_new(o, "file", json_string(li->files[s->file]));
		json_object_set_new(o, "line", json_integer(s->line));
	}
	return 0;
}

/* "unreturned_calls": the calls the log never saw return (of cycle ONLY): 0, or -ENOMEM. */
static int xlog_hangs(const struct dl_logimport *li, uint32_t only, json_t *x)
{
	json_t *hangs = json_array();

	if (!hangs || json_object_set_new(x, "unreturned_calls", hangs))
		return -ENOMEM;
	for (uint32_t i = 0; i < li->nhang; i++) {
		const struct dl_lg_hang *h = &li->hang[i];

		if (only != DL_LG_NONE && h->cycle != only)
			continue;
		if (json_array_append_new(hangs, json_pack("{s:s, s:s, s:s, s:i, s:i}",
			"device", dl_lg_label(li, h->dev), "phase", dl_lat_key_name(h->key),
			"file", li->files[h->file], "line", (json_int_t)h->line,
			"cycle", (json_int_t)h->cycle)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The scenario's "x-log": what was read (files, counts), the cycles (ONLY:
 * just that one, or DL_LG_NONE), failed callbacks, unreturned calls and the
 * contradictions noted.  NULL when out of memory.
 */
static json_t *xlog_json(const struct dl_logimport *li, uint32_t only, bool with_gap)
{
	json_t *x = json_object(), *files = json_array(), *cycles = json_array();
	json_t *fails = json_array(), *notes = json_array();

	if (!x || !files || !cycles || !fails || !notes)
		goto nomem;
	json_object_set_new(x, "files", files);
	json_object_set_new(x, "cycles", cycles);
	json_object_set_new(x, "failed_callbacks", fails);
	json_object_set_new(x, "contradictions", notes);
	for (uint32_t f = 0; f < li->nfiles; f++)
		json_array_append_new(files, json_string(li->files[f]));
	xlog_counts(li, x, with_gap);
	for (uint32_t c = only != DL_LG_NONE ? only : 0;
	     c < li->ncyc && (only == DL_LG_NONE || c == only); c++)
		if (xlog_cycle(li, c, only, cycles))
			goto nomem;
	if (xlog_failures(li, only, fails))
		goto nomem;
	json_object_set_new(x, "orphan_returns", json_integer(li->orphans));
	if (xlog_hangs(li, only, x))
		goto nomem;
	for (uint32_t i = 0; i < li->nnote; i++) {
		char buf[300];

		snprintf(buf, sizeof(buf), "%s:%u: %s", li->files[li->note[i].file],
			 li->note[i].line, li->note[i].msg);
		json_array_append_new(notes, json_string(buf));
	}
	return x;
nomem:
	json_decref(x);
	return NULL;
}

/* The implied links, STATELESS (they order PM only, as the waits did), with why. */
static int put_waits(const struct dl_logimport *li, json_t *sc)
{
	json_t *arr = json_array();

	if (!arr || json_object_set_new(sc, "links", arr))
		return -ENOMEM;
	for (uint32_t i = 0; i < li->nwait; i++) {
		const struct dl_lg_wait *w = &li->wait[i];
		json_t *o = json_object();
		char why[400];

		if (!o || json_array_append_new(arr, o))
			return -ENOMEM;
		snprintf(why, sizeof(why), "%s:%u: the main thread sat idle %.3f ms in %s until "
			 "'%s' ended, and no parent explains it", li->files[w->file], w->line,
			 (double)w->idle_ns / 1e6, dl_lat_key_name(w->key), dl_lg_label(li, w->supplier));
		json_object_set_new(o, "consumer", json_string(dl_lg_label(li, w->consumer)));
		json_object_set_new(o, "supplier", json_string(dl_lg_label(li, w->supplier)));
		json_object_set_new(o, "flags", json_pack("[s]", "STATELESS"));
		json_object_set_new(o, "x-implied-by", json_string(why));
	}
	return 0;
}

json_t *dl_log_scenario(const struct dl_logimport *li, uint32_t cycle, bool with_gap,
			const char *name)
{
	json_t *sc = json_object(), *devs = json_array(), *script = json_array(), *cost, *x;
	uint32_t *idx = NULL, *grp = NULL;
	bool pm = false;

	if (!sc || !devs || !script || group_by_device(li, cycle, &idx, &grp))
		goto nomem;
	json_object_set_new(sc, "format", json_string(DL_SC_FORMAT));
	json_object_set_new(sc, "name", json_string(name));
	json_object_set_new(sc, "seed", json_integer(1));
	json_object_set_new(sc, "x-doc", json_string(
		"Written by dlsim import-log from real logs (x-log.files).  Devices are listed in "
		"the dpm order the log shows (the main thread's walks merged, parents first); "
		"latencies are the logged callback times (several cycles: the empirical "
		"distribution); async is true for a device whose callback ran off the main PM "
		"thread, false for one that ran on it while others ran async, absent without "
		"evidence; x-log.main_gap_ns is the median gap between the main thread's callbacks "
		"in the log (console printing of initcall_debug), added to every callback when "
		"x-log.gaps_added (import-log --with-printing); failed callbacks are listed in "
		"x-log.failed_callbacks, not injected as faults.  Logs show no links: the only ones "
		"here are STATELESS links a wait implies (x-implied-by: the main thread sat idle "
		"until an async callback ended and no parent explains it)."));
	x = xlog_json(li, cycle, with_gap);
	if (!x || json_object_set_new(sc, "x-log", x))
		goto nomem;
	json_object_set_new(sc, "devices", devs);
	for (uint32_t r = 0; r < li->ndev; r++) {
		uint32_t d = li->order[r];
		json_t *o = json_object();

		if (!o || json_array_append_new(devs, o))
			goto nomem;
		json_object_set_new(o, "name", json_string(dl_lg_label(li, d)));
		if (li->dev[d].parent != DL_LG_NONE)
			json_object_set_new(o, "parent",
					    json_string(dl_lg_label(li, li->dev[d].parent)));
		/* the driver the log names, for the report's bars (a string not UTF-8: left out) */
		if (*dl_lg_driver(li, d))
			json_object_set_new(o, "x-driver", json_string(dl_lg_driver(li, d)));
		if (li->dev[d].async)
			json_object_set_new(o, "async", json_true());
		else if (li->dev[d].sync_seen)
			json_object_set_new(o, "async", json_false());
		if (put_latencies(li, o, idx, grp[d], grp[d + 1], with_gap))
			goto nomem;
		for (uint32_t i = grp[d]; i < grp[d + 1]; i++)
			pm = pm || at_key(li, idx, i) != DL_LAT_PROBE;
	}
	if (li->nwait && put_waits(li, sc))
		goto nomem;
	cost = json_object();
	if (!cost || json_object_set_new(sc, "cost", cost))
		goto nomem;
	if (li->cpus)
		json_object_set_new(cost, "cpus", json_integer(li->cpus));
	json_array_append_new(script, json_pack("{s:s}", "op", "probe"));
	if (pm) {
		json_array_append_new(script, json_pack("{s:s}", "op", "suspend"));
		json_array_append_new(script, json_pack("{s:s}", "op", "resume"));
	}
	json_object_set_new(sc, "script", script);
	script = NULL;
	free(idx);
	free(grp);
	return sc;
nomem:
	json_decref(sc);
	json_decref(script);
	free(idx);
	free(grp);
	return NULL;
}

/*
 * A device-tree path ("/soc@0/bus@30000000/spdif@30090000", as import-dtb
 * names devices) as the kernel names its platform device: "UNIT.NAME"
 * (of_device_make_bus_id(): the address, then the node name without it).
 */
static uint32_t find_dt_path(const struct dl_logimport *li, const char *path)
{
	const char *leaf = strrchr(path, '/'), *at;
	char buf[DL_SC_MAX_NAME + 2];
	int n;

	if (path[0] != '/' || !leaf || !(at = strchr(leaf, '@')) || !at[1] || at == leaf + 1)
		return DL_LG_NONE;
	n = snprintf(buf, sizeof(buf), "%s.%.*s", at + 1, (int)(at - leaf - 1), leaf + 1);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return DL_LG_NONE;
	return dl_lg_find(li, buf);
}

int dl_log_overlay(const struct dl_logimport *li, json_t *sc, json_t *unmatched_log,
		   json_t *unmatched_sc)
{
	json_t *devs = json_object_get(sc, "devices"), *d;
	uint32_t *idx, *grp, *hit;
	size_t i;
	int ret = -ENOMEM;

	if (!json_is_array(devs))
		return -EINVAL;
	if (group_by_device(li, DL_LG_NONE, &idx, &grp))
		return -ENOMEM;
	hit = calloc((size_t)li->ndev + 1, sizeof(*hit));
	if (!hit)
		goto out;
	json_array_foreach(devs, i, d) {
		const char *nm = json_string_value(json_object_get(d, "name"));
		uint32_t x = nm ? dl_lg_find(li, nm) : DL_LG_NONE;

		if (x == DL_LG_NONE && nm)
			x = find_dt_path(li, nm);

		if (x == DL_LG_NONE || grp[x] == grp[x + 1]) {
			if (nm && json_array_append_new(unmatched_sc, json_string(nm)))
				goto out;
			continue;
		}
		hit[x] = 1;
		if (put_latencies(li, d, idx, grp[x], grp[x + 1], false))
			goto out;
		if (li->dev[x].async)
			json_object_set_new(d, "async", json_true());
		else if (li->dev[x].sync_seen)
			json_object_set_new(d, "async", json_false());
	}
	for (uint32_t r = 0; r < li->ndev; r++) {
		uint32_t x = li->order[r];

		if (!hit[x] && grp[x] != grp[x + 1] &&
		    json_array_append_new(unmatched_log, json_string(dl_lg_label(li, x))))
			goto out;
	}
	ret = 0;
out:
	free(hit);
	free(idx);
	free(grp);
	return ret;
}
