/*
 * test_run.c - sim/run's one entry point (dl_run.h): a run made through
 * dl_run() is logged whole, on either simulating backend (the runs row, one
 * events row per event, every figure of figures.h as a metric with the
 * run's value); the backends' names; the threads backend's time scale.
 */
#include <CUnit/Basic.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/log/dl_log.h"
#include "sim/log/dl_log_batch.h"
#include "sim/run/dl_run.h"
#include "sim/scenario/scenario.h"

static char tmpdir[] = "/tmp/dlsim-test-run-XXXXXX";

static struct dl_scenario *camera(void)
{
	struct dl_scenario *sc = NULL;
	struct dl_error err;

	CU_ASSERT_EQUAL_FATAL(dl_scenario_load(DLSIM_SOURCE_DIR "/scenarios/camera.json", NULL, 0,
					       NULL, &sc, &err), 0);
	return sc;
}

static void test_backend_names(void)
{
	enum dl_backend b;

	for (int i = 0; i < DL_BACKEND_COUNT; i++) {
		CU_ASSERT_EQUAL(dl_backend_parse(dl_backend_name((enum dl_backend)i), &b), 0);
		CU_ASSERT_EQUAL(b, (enum dl_backend)i);
	}
	CU_ASSERT_STRING_EQUAL(dl_backend_name(DL_BACKEND_THREADS), "threads");
	CU_ASSERT(dl_backend_parse("qemu", &b) < 0);
}

/* camera's shortest callback is 20 us: 20 wake-ups of 50 us need a scale of 50 */
static void test_time_scale(void)
{
	struct dl_scenario *sc = camera();
	double pick;

	CU_ASSERT_FALSE(dl_run_time_scale(sc, 50000, 49, &pick));
	CU_ASSERT_DOUBLE_EQUAL(pick, 50, 1e-9);
	CU_ASSERT_TRUE(dl_run_time_scale(sc, 50000, 50, &pick));
	CU_ASSERT_FALSE(dl_run_time_scale(sc, 60000, 50, &pick));
	CU_ASSERT_DOUBLE_EQUAL(pick, 100, 1e-9);
	CU_ASSERT_TRUE(dl_run_time_scale(sc, 0, 1e-3, &pick));   /* nothing to measure */
	CU_ASSERT_DOUBLE_EQUAL(pick, 1, 1e-9);
	dl_scenario_free(sc);
}

static double metric(sqlite3 *db, int64_t run, const char *name, int *found)
{
	sqlite3_stmt *st;
	double v = 0;

	*found = 0;
	sqlite3_prepare_v2(db, "SELECT value FROM metrics WHERE run_id = ?1 AND name = ?2", -1, &st,
			   NULL);
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		v = sqlite3_column_double(st, 0);
		*found = 1;
	}
	sqlite3_finalize(st);
	return v;
}

static int64_t count(sqlite3 *db, const char *sql, int64_t run)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_bind_int64(st, 1, run);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void check_logged(const char *path, int64_t run, const struct dl_run_result *r,
			 const char *mode)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int found;

	CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(count(db, "SELECT count(*) FROM events WHERE run_id = ?1", run),
			(int64_t)r->events);
	CU_ASSERT_EQUAL(count(db, "SELECT count(*) FROM devices WHERE run_id = ?1", run),
			(int64_t)r->devices);
	sqlite3_prepare_v2(db, "SELECT mode, status FROM runs WHERE run_id = ?1", -1, &st, NULL);
	sqlite3_bind_int64(st, 1, run);
	CU_ASSERT_EQUAL_FATAL(sqlite3_step(st), SQLITE_ROW);
	CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(st, 0), mode);
	CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(st, 1), r->status);
	sqlite3_finalize(st);
#define CHECK_FIGURE(type, name, avail, op_metric, heading, width)                  \
	CU_ASSERT_DOUBLE_EQUAL(metric(db, run, #name, &found), (double)r->name, 0.5); \
	CU_ASSERT(found);
	DL_FIGURES(CHECK_FIGURE)
	/* the per-op metrics of figures.h's op_metric figures */
	CU_ASSERT_DOUBLE_EQUAL(metric(db, run, "suspend.makespan_ns", &found),
			       (double)r->op[1].makespan_ns, 0.5);
	CU_ASSERT(found);
	CU_ASSERT_DOUBLE_EQUAL(metric(db, run, "suspend.order_bound_ns", &found),
			       (double)r->op[1].order_bound_ns, 0.5);
	CU_ASSERT(found);
	metric(db, run, "suspend.blocked_ns", &found);
	CU_ASSERT(!found);
	sqlite3_close(db);
}

/* Both simulating backends, through the one entry point, into one log. */
static void test_run_is_logged_whole(void)
{
	struct dl_scenario *sc = camera();
	struct dl_run_result *r = malloc(sizeof(*r));
	struct dl_log_batch *b = malloc(sizeof(*b));
	struct dl_log *log;
	char path[128], err[256];
	static const enum dl_backend be[] = { DL_BACKEND_DES, DL_BACKEND_THREADS };

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	snprintf(path, sizeof(path), "%s/run.db", tmpdir);
	CU_ASSERT_EQUAL_FATAL(dl_log_open(path, &log, err, sizeof(err)), 0);
	for (unsigned i = 0; i < sizeof(be) / sizeof(be[0]); i++) {
		struct dl_run_req q = {
			.sc = sc, .backend = be[i], .time_scale = 1,
			.eo = { .order = DL_ORDER_DEFAULT, .seed = 3 },
			.log = log, .batch = b,
		};
		int64_t run = 0;
		int log_err = -1;

		CU_ASSERT_EQUAL(dl_run(&q, r, &run, &log_err), 0);
		CU_ASSERT_EQUAL(log_err, 0);
		CU_ASSERT(run > 0);
		CU_ASSERT(r->events > 0);
		CU_ASSERT_STRING_EQUAL(r->status, "ok");
		dl_log_close(log);   /* the writer's last rows are in */
		check_logged(path, run, r, dl_backend_name(be[i]));
		CU_ASSERT_EQUAL_FATAL(dl_log_open(path, &log, err, sizeof(err)), 0);
	}
	dl_log_close(log);
	unlink(path);
	free(b);
	free(r);
	dl_scenario_free(sc);
}

int main(void)
{
	CU_pSuite s;
	unsigned fails;

	if (!mkdtemp(tmpdir))
		return 2;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("run", NULL, NULL);
	CU_add_test(s, "test_backend_names", test_backend_names);
	CU_add_test(s, "test_time_scale", test_time_scale);
	CU_add_test(s, "test_run_is_logged_whole", test_run_is_logged_whole);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	rmdir(tmpdir);
	return fails ? 1 : 0;
}
