/*
 * test_diff.c - `dlsim diff`: the counting kernel against brute force, and
 * the split of the agreement into the pairs a dependency orders and the rest.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <sqlite3.h>

#include "sim/log/dl_diff.h"

struct listed {
	uint32_t n, i[64], j[64];
};

static void collect(void *ctx, uint32_t i, uint32_t j)
{
	struct listed *l = ctx;

	if (l->n < 64) {
		l->i[l->n] = i;
		l->j[l->n] = j;
	}
	l->n++;
}

static int64_t gap(int64_t x, int64_t y)
{
	return x > y ? x - y : y - x;
}

static void brute(const int64_t *a, const int64_t *b, uint32_t n, int64_t tol, uint64_t *pairs,
		  uint64_t *agree)
{
	*pairs = *agree = 0;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (gap(a[i], a[j]) > tol && gap(b[i], b[j]) > tol) {
				(*pairs)++;
				*agree += (a[i] < a[j]) == (b[i] < b[j]);
			}
}

/* Random times with many ties and near-ties, several tolerances and sizes. */
static void test_counts_match_brute_force(void)
{
	uint64_t x = 12345;

	for (int round = 0; round < 200; round++) {
		uint32_t n = 1 + (uint32_t)(round * 7 % 180);
		int64_t a[180], b[180], tol = round % 4 == 0 ? 0 : (round % 5) * 3;
		uint64_t p, g, bp, bg;
		struct listed l = { 0 };

		for (uint32_t i = 0; i < n; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			a[i] = (int64_t)((x >> 33) % 50);
			b[i] = round % 3 ? a[i] + (int64_t)((x >> 13) % 21) - 10 : (int64_t)((x >> 17) % 50);
		}
		CU_ASSERT_EQUAL_FATAL(dl_diff_order_agreement(a, b, n, tol, &p, &g, 64, collect, &l), 0);
		brute(a, b, n, tol, &bp, &bg);
		CU_ASSERT_EQUAL(p, bp);
		CU_ASSERT_EQUAL(g, bg);
		/* every listed pair disagrees, first in A first */
		CU_ASSERT_EQUAL(l.n, (p - g) < 64 ? p - g : 64);
		for (uint32_t k = 0; k < l.n && k < 64; k++) {
			uint32_t i = l.i[k], j = l.j[k];

			CU_ASSERT(a[i] + tol < a[j]);
			CU_ASSERT(b[j] + tol < b[i]);
		}
	}
}

static void test_identical_runs_agree_fully(void)
{
	int64_t a[] = { 0, 5, 5, 10, 20 };
	uint64_t p, g;

	CU_ASSERT_EQUAL(dl_diff_order_agreement(a, a, 5, 0, &p, &g, 0, NULL, NULL), 0);
	CU_ASSERT_EQUAL(p, 9);        /* the tie 5,5 is not ordered */
	CU_ASSERT_EQUAL(g, 9);
	CU_ASSERT_EQUAL(dl_diff_order_agreement(a, a, 5, 5, &p, &g, 0, NULL, NULL), 0);
	CU_ASSERT_EQUAL(p, 5);        /* gaps > 5: 0-10, 0-20, 5-20 twice, 10-20 */
	CU_ASSERT_EQUAL(g, 5);
}

static void test_reversed_order_disagrees_fully(void)
{
	int64_t a[] = { 0, 10, 20, 30 }, b[] = { 30, 20, 10, 0 };
	uint64_t p, g;
	struct listed l = { 0 };

	CU_ASSERT_EQUAL(dl_diff_order_agreement(a, b, 4, 1, &p, &g, 2, collect, &l), 0);
	CU_ASSERT_EQUAL(p, 6);
	CU_ASSERT_EQUAL(g, 0);
	CU_ASSERT_EQUAL(l.n, 2);      /* the cap */
}

/*
 * Two runs of one scenario in a database of dlsim's log tables: s supplies c
 * (a managed link), p is the parent of q, x depends on nobody.  @cycle adds
 * the link c -> s as well.  Callback starts (ms) per op, devices s c p q x:
 * probe alike but for p and q (only a parent: no rule orders their probe);
 * suspend alike but for x; resume with p and q swapped in B (the parent
 * resumes after its child: a broken rule).
 */
static sqlite3 *two_runs(bool cycle)
{
	static const int64_t start[2][3][5] = {
		{ { 0, 10, 30, 40, 20 }, { 0, 10, 20, 30, 40 }, { 20, 30, 0, 10, 40 } },
		{ { 0, 10, 40, 30, 20 }, { 0, 10, 20, 30, 5 }, { 20, 30, 10, 0, 40 } },
	};
	static const char *const name[5] = { "s", "c", "p", "q", "x" };
	static const char *const kind[3][2] = {
		{ "probe_start", "probe_end" }, { "suspend_start", "suspend_end" },
		{ "resume_start", "resume_end" } };
	static const char *const phase[3] = { NULL, "suspend", "resume" };
	sqlite3 *db;
	sqlite3_stmt *st;
	char sql[256];
	int seq = 0;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return NULL;
	sqlite3_exec(db, "CREATE TABLE runs(run_id, scenario, mode, order_name, seed);"
		     "CREATE TABLE devices(run_id, dev_id, name, parent_id, async);"
		     "CREATE TABLE links(run_id, link_id, consumer_id, supplier_id, flags);"
		     "CREATE TABLE events(run_id, seq, t_ns, dev_id, kind, phase);", NULL, NULL, NULL);
	for (int r = 1; r <= 2; r++) {
		snprintf(sql, sizeof(sql), "INSERT INTO runs VALUES(%d, 'x', 'des', 'sync', 1);"
			 "INSERT INTO links VALUES(%d, 0, 1, 0, 'AUTOPROBE_CONSUMER|MANAGED');", r, r);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		if (cycle) {
			snprintf(sql, sizeof(sql), "INSERT INTO links VALUES(%d, 1, 0, 1, 'MANAGED');", r);
			sqlite3_exec(db, sql, NULL, NULL, NULL);
		}
		for (int d = 0; d < 5; d++) {
			snprintf(sql, sizeof(sql), "INSERT INTO devices VALUES(%d, %d, '%s', %s, 0);", r, d,
				 name[d], d == 3 ? "2" : "NULL");
			sqlite3_exec(db, sql, NULL, NULL, NULL);
		}
		sqlite3_prepare_v2(db, "INSERT INTO events VALUES(?, ?, ?, ?, ?, ?)", -1, &st, NULL);
		for (int op = 0; op < 3; op++) {
			for (int d = 0; d < 5; d++) {
				for (int e = 0; e < 2; e++) {
					sqlite3_bind_int(st, 1, r);
					sqlite3_bind_int(st, 2, seq++);
					sqlite3_bind_int64(st, 3, (start[r - 1][op][d] + e) * 1000000);
					sqlite3_bind_int(st, 4, d);
					sqlite3_bind_text(st, 5, kind[op][e], -1, SQLITE_STATIC);
					if (phase[op])
						sqlite3_bind_text(st, 6, phase[op], -1, SQLITE_STATIC);
					else
						sqlite3_bind_null(st, 6);
					sqlite3_step(st);
					sqlite3_reset(st);
				}
			}
		}
		sqlite3_finalize(st);
	}
	return db;
}

static const struct dl_diff_row *row_of(const struct dl_diff *d, const char *op, const char *ph)
{
	for (uint32_t i = 0; i < d->nrows; i++)
		if (!strcmp(d->rows[i].op, op) && !strcmp(d->rows[i].phase, ph))
			return &d->rows[i];
	return NULL;
}

static void test_split_by_dependency(void)
{
	sqlite3 *db = two_runs(false);
	struct dl_diff *d = NULL;
	const struct dl_diff_row *w;
	int64_t which;

	CU_ASSERT_PTR_NOT_NULL_FATAL(db);
	CU_ASSERT_EQUAL_FATAL(dl_diff_runs(db, 1, 2, 1000000, 16, &d, &which), 0);
	CU_ASSERT_TRUE(d->dep_known);
	/* probe: s-c is ordered by the link and agrees; p-q, a parent only, swaps freely */
	w = row_of(d, "probe", "probe");
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(w->dep_pairs, 1);
	CU_ASSERT_EQUAL(w->dep_agree, 1);
	CU_ASSERT_EQUAL(w->pairs - w->agree, 1);
	/* suspend: s-c and p-q agree; x moves before s, c, p and q: all timing */
	w = row_of(d, "suspend", "suspend");
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(w->dep_pairs, 2);
	CU_ASSERT_EQUAL(w->dep_agree, 2);
	CU_ASSERT_EQUAL(w->pairs - w->agree, 3);
	/* resume: the parent p after its child q in B: a dependent pair disagrees */
	w = row_of(d, "resume", "resume");
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	CU_ASSERT_EQUAL(w->dep_pairs, 2);
	CU_ASSERT_EQUAL(w->dep_agree, 1);
	CU_ASSERT_EQUAL(d->dep_pairs, 5);
	CU_ASSERT_EQUAL(d->dep_agree, 4);
	dl_diff_free(d);
	sqlite3_close(db);
}

static void test_cycle_leaves_split_unknown(void)
{
	sqlite3 *db = two_runs(true);
	struct dl_diff *d = NULL;
	int64_t which;

	CU_ASSERT_PTR_NOT_NULL_FATAL(db);
	CU_ASSERT_EQUAL_FATAL(dl_diff_runs(db, 1, 2, 1000000, 16, &d, &which), 0);
	CU_ASSERT_FALSE(d->dep_known);
	CU_ASSERT_EQUAL(d->dep_pairs, 0);
	CU_ASSERT_TRUE(d->pairs > 0);
	dl_diff_free(d);
	sqlite3_close(db);
}

int main(void)
{
	CU_pSuite s;
	unsigned nf;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("diff", NULL, NULL);
	CU_add_test(s, "pair counts equal brute force", test_counts_match_brute_force);
	CU_add_test(s, "identical runs agree on every ordered pair", test_identical_runs_agree_fully);
	CU_add_test(s, "a reversed order disagrees on every pair", test_reversed_order_disagrees_fully);
	CU_add_test(s, "agreement split by what orders a pair", test_split_by_dependency);
	CU_add_test(s, "a dependency cycle leaves the split unknown", test_cycle_leaves_split_unknown);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	nf = CU_get_number_of_failures();
	CU_cleanup_registry();
	return nf ? 1 : 0;
}
