/* test_diff.c - `dlsim diff`'s counting kernel against brute force. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

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
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	nf = CU_get_number_of_failures();
	CU_cleanup_registry();
	return nf ? 1 : 0;
}
