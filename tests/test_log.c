/* test_log.c - the SQLite event log: round trip, hostile names, refusals. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <sqlite3.h>

#include "sim/core/dl_core.h"
#include "sim/log/dl_log.h"

static char tmpdir[] = "/tmp/dlsim-test-log-XXXXXX";

static const char *const hostile[] = {
	"a'b\"c<script>",
	"line1\nline2\r\n\tend",
	"x'); DROP TABLE runs; --",
	"",
	"caf\xc3\xa9 %s %n \\",
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

static char *tpath(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static int64_t q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -12345;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -99999;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static char *q_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	char *v = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

static struct dl_event ev(int64_t t, unsigned kind, uint32_t dev, uint32_t link, uint32_t aux,
			  uint32_t flags, unsigned phase, int err)
{
	struct dl_event e = { .t_ns = t, .dev = dev, .link = link, .aux = aux, .flags = flags,
			      .kind = (uint16_t)kind, .phase = (uint16_t)phase, .worker = 1,
			      .err = (int16_t)err };
	return e;
}

#define NBULK 200000

static void test_round_trip(void)
{
	char err[512] = "";
	struct dl_log *l = NULL;
	int64_t run = 0, run2 = 0;
	const char *path = tpath("rt.db");
	struct dl_run_info ri = { .scenario = "scen'ario\"<x>\n", .order = "kernel-async",
				  .mode = "des", .version = "9.9", .seed = 42, .workers = 4,
				  .devices = NHOSTILE, .links = 1 };
	struct dl_metric m[] = { { "makespan_ns", 1234 }, { "wall_ns", 5.5 } };
	struct dl_event e[8];
	struct dl_event *bulk;
	sqlite3 *db;
	sqlite3_stmt *st;
	char *s;

	CU_ASSERT_EQUAL_FATAL(dl_log_open(path, &l, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dl_log_run_begin(l, &ri, &run), 0);
	CU_ASSERT(run > 0);
	for (uint32_t i = 0; i < NHOSTILE; i++)
		CU_ASSERT_EQUAL(dl_log_device(l, i, hostile[i], i ? 0 : UINT32_MAX, (int)(i & 1)), 0);
	e[0] = ev(10, DL_EV_REGISTER, 0, DL_NONE, DL_NONE, 0, 0, 0);
	e[1] = ev(20, DL_EV_LINK_ADD, 1, 7, 0, DL_FLAG_MANAGED | DL_FLAG_PM_RUNTIME,
		  DL_STATE_DORMANT, 0);
	e[2] = ev(30, DL_EV_LINK_STATE, 1, 7, 0, DL_FLAG_MANAGED | DL_FLAG_PM_RUNTIME,
		  DL_STATE_AVAILABLE, 0);
	e[3] = ev(40, DL_EV_LINK_REFUSED, 0, DL_NONE, 1, DL_FLAG_STATELESS,
		  DL_REFUSE_REVERSE_DEPENDENCY, 0);
	e[4] = ev(50, DL_EV_PROBE_START, 1, DL_NONE, DL_NONE, 0, 0, 0);
	e[5] = ev(60, DL_EV_PROBE_END, 1, DL_NONE, DL_NONE, 0, 0, -22);
	e[6] = ev(70, DL_EV_SUSPEND_START, 1, DL_NONE, DL_NONE, 0, DL_PH_SUSPEND_LATE, 0);
	e[7] = ev(80, DL_EV_RESUME_END, 1, DL_NONE, DL_NONE, 0, DL_PH_RESUME_EARLY, 0);
	dl_log_events(l, e, 8);
	bulk = calloc(NBULK, sizeof(*bulk));
	CU_ASSERT_PTR_NOT_NULL_FATAL(bulk);
	for (int i = 0; i < NBULK; i++)
		bulk[i] = ev(100 + i, DL_EV_RPM_RESUME, (uint32_t)(i % NHOSTILE), DL_NONE, DL_NONE,
			     0, 0, 0);
	for (int i = 0; i < NBULK; i += 1000)
		dl_log_events(l, bulk + i, 1000);
	free(bulk);
	CU_ASSERT_EQUAL(dl_log_run_end(l, "ok", 777, m, 2), 0);
	/* a second run appends */
	CU_ASSERT_EQUAL(dl_log_run_begin(l, &ri, &run2), 0);
	CU_ASSERT_EQUAL(run2, run + 1);
	dl_log_events(l, e, 1);
	CU_ASSERT_EQUAL(dl_log_run_end(l, "failed", 1, NULL, 0), 0);
	dl_log_close(l);

	CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM runs"), 2);
	s = q_text(db, "SELECT scenario FROM runs WHERE run_id = 1");
	CU_ASSERT_STRING_EQUAL(s ? s : "", ri.scenario);
	free(s);
	s = q_text(db, "SELECT order_name || '/' || mode || '/' || seed || '/' || workers || '/' ||"
		   " devices || '/' || links || '/' || status || '/' || makespan_ns || '/' || version"
		   " FROM runs WHERE run_id = 1");
	CU_ASSERT_STRING_EQUAL(s ? s : "", "kernel-async/des/42/4/5/1/ok/777/9.9");
	free(s);
	s = q_text(db, "SELECT started_at FROM runs WHERE run_id = 1");
	CU_ASSERT(s && strlen(s) == 20 && s[4] == '-' && s[10] == 'T' && s[19] == 'Z');
	free(s);
	s = q_text(db, "SELECT status FROM runs WHERE run_id = 2");
	CU_ASSERT_STRING_EQUAL(s ? s : "", "failed");
	free(s);

	/* device names: byte-exact */
	CU_ASSERT_EQUAL(sqlite3_prepare_v2(db, "SELECT dev_id, name, parent_id, async FROM devices"
					   " WHERE run_id = 1 ORDER BY dev_id", -1, &st, NULL), SQLITE_OK);
	for (uint32_t i = 0; i < NHOSTILE; i++) {
		CU_ASSERT_EQUAL_FATAL(sqlite3_step(st), SQLITE_ROW);
		CU_ASSERT_EQUAL(sqlite3_column_int(st, 0), (int)i);
		CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(st, 1), hostile[i]);
		if (i == 0) {
			CU_ASSERT_EQUAL(sqlite3_column_type(st, 2), SQLITE_NULL);
		} else {
			CU_ASSERT_EQUAL(sqlite3_column_int(st, 2), 0);
		}
		CU_ASSERT_EQUAL(sqlite3_column_int(st, 3), (int)(i & 1));
	}
	CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);

	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM events WHERE run_id = 1"), 8 + NBULK);
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(DISTINCT seq) FROM events WHERE run_id = 1"), 8 + NBULK);
	CU_ASSERT_EQUAL(q_int(db, "SELECT max(seq) - min(seq) FROM events WHERE run_id = 1"),
			8 + NBULK - 1);
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM events WHERE run_id = 2"), 1);
	/* seq order is emission order */
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM events a JOIN events b ON a.run_id = b.run_id"
			      " AND b.seq = a.seq + 1 WHERE a.run_id = 1 AND b.t_ns <= a.t_ns"), 0);
	s = q_text(db, "SELECT group_concat(kind || ':' || coalesce(phase, 'NULL') || ':' ||"
		   " coalesce(dev_id, 'NULL') || ':' || coalesce(link_id, 'NULL') || ':' || err || ':' ||"
		   " worker, ',') FROM (SELECT * FROM events WHERE run_id = 1 AND seq < 8 ORDER BY seq)");
	CU_ASSERT_STRING_EQUAL(s ? s : "",
		"register:NULL:0:NULL:0:1,link_add:NULL:1:7:0:1,link_state:AVAILABLE:1:7:0:1,"
		"link_refused:reverse-dependency:0:NULL:0:1,probe_start:NULL:1:NULL:0:1,"
		"probe_end:NULL:1:NULL:-22:1,suspend_start:suspend_late:1:NULL:0:1,"
		"resume_end:resume_early:1:NULL:0:1");
	free(s);
	s = q_text(db, "SELECT consumer_id || '>' || supplier_id || ':' || flags FROM links"
		   " WHERE run_id = 1 AND link_id = 7");
	CU_ASSERT_STRING_EQUAL(s ? s : "", "1>0:PM_RUNTIME|MANAGED");
	free(s);
	s = q_text(db, "SELECT consumer_id || '>' || supplier_id || ':' || flags || ':' || reason"
		   " FROM refused WHERE run_id = 1");
	CU_ASSERT_STRING_EQUAL(s ? s : "", "0>1:STATELESS:reverse-dependency");
	free(s);
	/* the two given, and the writer's count of devices never registered */
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM metrics WHERE run_id = 1"), 3);
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM metrics WHERE run_id = 1 AND"
			      " name = 'devices_unregistered' AND value >= 0"), 1);
	CU_ASSERT_EQUAL(q_int(db, "SELECT value * 10 FROM metrics WHERE run_id = 1 AND name = 'wall_ns'"),
			55);
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND"
			      " name = 'events_run_seq'"), 1);
	s = q_text(db, "PRAGMA journal_mode");
	CU_ASSERT_STRING_EQUAL(s ? s : "", "wal");
	free(s);
	CU_ASSERT_EQUAL(q_int(db, "SELECT count(*) FROM runs WHERE name IS NOT NULL"), -99999);
	sqlite3_close(db);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void test_refuse_not_dlsim(void)
{
	const char *txt = tpath("notes.txt"), *other = tpath("other.db");
	char err[512] = "";
	struct dl_log *l = (struct dl_log *)1;
	char *before, *after;
	size_t n1, n2;
	sqlite3 *db;
	FILE *f = fopen(txt, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int i = 0; i < 200; i++)
		fputs("this is not a database, just text\n", f);
	fclose(f);
	before = slurp(txt, &n1);
	CU_ASSERT(dl_log_open(txt, &l, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NULL(l);
	CU_ASSERT(strstr(err, "not a dlsim database") != NULL);
	after = slurp(txt, &n2);
	CU_ASSERT(before && after && n1 == n2 && !memcmp(before, after, n1));
	free(before);
	free(after);

	/* an SQLite database of something else */
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(other, &db), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_exec(db, "CREATE TABLE foo(x); INSERT INTO foo VALUES(1);", NULL, NULL,
				     NULL), SQLITE_OK);
	sqlite3_close(db);
	before = slurp(other, &n1);
	err[0] = '\0';
	CU_ASSERT(dl_log_open(other, &l, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "not a dlsim database") != NULL);
	after = slurp(other, &n2);
	CU_ASSERT(before && after && n1 == n2 && !memcmp(before, after, n1));
	CU_ASSERT(access(tpath("other.db-wal"), F_OK) != 0);
	free(before);
	free(after);

	/* dl_log_open_existing (used by check) refuses them too */
	CU_ASSERT(dl_log_open_existing(txt, &db, err, sizeof(err)) < 0);
	CU_ASSERT(dl_log_open_existing(other, &db, err, sizeof(err)) < 0);
	CU_ASSERT(dl_log_open_existing(tpath("missing.db"), &db, err, sizeof(err)) < 0);
	CU_ASSERT(access(tpath("missing.db"), F_OK) != 0);
	CU_ASSERT_EQUAL(dl_log_open_existing(tpath("rt.db"), &db, err, sizeof(err)), 0);
	sqlite3_close(db);
	/* a directory */
	CU_ASSERT(dl_log_open(tmpdir, &l, err, sizeof(err)) < 0);
}

static void test_refuse_unwritable(void)
{
	char err[512] = "";
	struct dl_log *l = NULL;
	const char *ro = tpath("ro.db");

	CU_ASSERT(dl_log_open("/nonexistent-dlsim-dir/sub/x.db", &l, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NULL(l);
	CU_ASSERT(err[0] != '\0');
	CU_ASSERT(access("/nonexistent-dlsim-dir", F_OK) != 0);

	if (geteuid() != 0) {
		CU_ASSERT_EQUAL_FATAL(dl_log_open(ro, &l, err, sizeof(err)), 0);
		dl_log_close(l);
		l = NULL;
		chmod(ro, 0444);
		CU_ASSERT(dl_log_open(ro, &l, err, sizeof(err)) < 0);
		CU_ASSERT_PTR_NULL(l);
		chmod(ro, 0644);
	}
}

static void test_reopen_empty_file(void)
{
	char err[512] = "";
	struct dl_log *l = NULL;
	const char *p = tpath("empty.db");
	FILE *f = fopen(p, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fclose(f);
	CU_ASSERT_EQUAL(dl_log_open(p, &l, err, sizeof(err)), 0);
	dl_log_close(l);
	/* and again: now it is a dlsim database */
	CU_ASSERT_EQUAL(dl_log_open(p, &l, err, sizeof(err)), 0);
	dl_log_close(l);
}

#define NTHREADS 4
#define PER_THREAD 50000

static void *producer(void *arg)
{
	struct dl_log *l = arg;
	struct dl_event e[100];

	for (int i = 0; i < PER_THREAD; i += 100) {
		for (int j = 0; j < 100; j++)
			e[j] = ev(i + j, DL_EV_RPM_SUSPEND, (uint32_t)j, DL_NONE, DL_NONE, 0, 0, 0);
		dl_log_events(l, e, 100);
	}
	return NULL;
}

static void test_many_producers(void)
{
	char err[512] = "";
	struct dl_log *l = NULL;
	struct dl_run_info ri = { .scenario = "mt", .order = "o", .mode = "threads" };
	pthread_t th[NTHREADS];
	int64_t run;
	sqlite3 *db;
	char sql[128];

	CU_ASSERT_EQUAL_FATAL(dl_log_open(tpath("mt.db"), &l, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dl_log_run_begin(l, &ri, &run), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, producer, l);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	CU_ASSERT_EQUAL(dl_log_event_count(l), (uint64_t)NTHREADS * PER_THREAD);
	CU_ASSERT_EQUAL(dl_log_run_end(l, "ok", 1, NULL, 0), 0);
	dl_log_close(l);
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(tpath("mt.db"), &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "SELECT count(DISTINCT seq) FROM events WHERE run_id = %lld",
		 (long long)run);
	CU_ASSERT_EQUAL(q_int(db, sql), (int64_t)NTHREADS * PER_THREAD);
	snprintf(sql, sizeof(sql), "SELECT events FROM runs WHERE run_id = %lld", (long long)run);
	CU_ASSERT_EQUAL(q_int(db, sql), (int64_t)NTHREADS * PER_THREAD);
	sqlite3_close(db);
}

static void test_close_marks_interrupted(void)
{
	char err[512] = "";
	struct dl_log *l = NULL;
	struct dl_run_info ri = { .scenario = "int", .order = "o", .mode = "des" };
	struct dl_event e = ev(5, DL_EV_REGISTER, 0, DL_NONE, DL_NONE, 0, 0, 0);
	int64_t run;
	sqlite3 *db;
	char *s;

	CU_ASSERT_EQUAL_FATAL(dl_log_open(tpath("int.db"), &l, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dl_log_run_begin(l, &ri, &run), 0);
	dl_log_events(l, &e, 1);
	dl_log_close(l);
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(tpath("int.db"), &db), SQLITE_OK);
	s = q_text(db, "SELECT status || ':' || events FROM runs");
	CU_ASSERT_STRING_EQUAL(s ? s : "", "interrupted:1");
	free(s);
	sqlite3_close(db);
}

int main(void)
{
	CU_pSuite s;
	unsigned nf;

	if (!mkdtemp(tmpdir))
		return 2;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("log", NULL, NULL);
	CU_add_test(s, "round trip with hostile names", test_round_trip);
	CU_add_test(s, "refuses a file that is not a dlsim database", test_refuse_not_dlsim);
	CU_add_test(s, "refuses an unwritable path", test_refuse_unwritable);
	CU_add_test(s, "an empty file becomes a database", test_reopen_empty_file);
	CU_add_test(s, "several producer threads", test_many_producers);
	CU_add_test(s, "close with a run open marks it interrupted", test_close_marks_interrupted);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	nf = CU_get_number_of_failures();
	CU_cleanup_registry();
	if (!nf) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return nf ? 1 : 0;
}
