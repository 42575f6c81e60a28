/*
 * test_report.c - `dlsim report` (report/report.h): files written, SVG is
 * XML, every database string reaches index.html escaped and the data files
 * sanitised, bad databases are refused; trace.json is Chrome trace JSON
 * and the interactive timeline's data cannot break out of its <script>.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <jansson.h>
#include <sqlite3.h>

#include "report/report.h"

/* Directories here are short; a file path inside one always fits PATH_LEN. */
#define DIR_LEN 1024
#define PATH_LEN (DIR_LEN + 64)

#define EVIL_NAME "<script>alert(1)</script>\"'`\nx"

static char tmpdir[] = "/tmp/dlsim-test-report-XXXXXX";

static const char *const schema =
	"CREATE TABLE runs(run_id INTEGER PRIMARY KEY, scenario TEXT, order_name TEXT, mode TEXT,"
	" seed INTEGER, workers INTEGER, devices INTEGER, links INTEGER, status TEXT,"
	" makespan_ns INTEGER, started_at TEXT, version TEXT);"
	"CREATE TABLE devices(run_id, dev_id, name, parent_id, async);"
	"CREATE TABLE links(run_id, link_id, consumer_id, supplier_id, flags);"
	"CREATE TABLE events(run_id, seq, t_ns, dev_id, link_id, kind, phase, worker, err);"
	"CREATE TABLE metrics(run_id, name, value);"
	"CREATE TABLE violations(run_id, invariant, dev_id, link_id, t_ns, detail);";

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static int exec_ok(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
}

static void insert_device(sqlite3 *db, int run, int dev, const char *name, int parent)
{
	sqlite3_stmt *st;

	CU_ASSERT_FATAL(sqlite3_prepare_v2(db, "INSERT INTO devices VALUES(?1, ?2, ?3, ?4, 1)",
					   -1, &st, NULL) == SQLITE_OK);
	sqlite3_bind_int(st, 1, run);
	sqlite3_bind_int(st, 2, dev);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	if (parent < 0)
		sqlite3_bind_null(st, 4);
	else
		sqlite3_bind_int(st, 4, parent);
	CU_ASSERT(sqlite3_step(st) == SQLITE_DONE);
	sqlite3_finalize(st);
}

static void insert_event(sqlite3 *db, int run, int seq, long long t, int dev, const char *kind,
			 const char *phase)
{
	sqlite3_stmt *st;

	CU_ASSERT_FATAL(sqlite3_prepare_v2(db, "INSERT INTO events VALUES(?1, ?2, ?3, ?4, NULL, ?5, ?6, 0, 0)",
					   -1, &st, NULL) == SQLITE_OK);
	sqlite3_bind_int(st, 1, run);
	sqlite3_bind_int(st, 2, seq);
	sqlite3_bind_int64(st, 3, t);
	sqlite3_bind_int(st, 4, dev);
	sqlite3_bind_text(st, 5, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, phase, -1, SQLITE_STATIC);
	CU_ASSERT(sqlite3_step(st) == SQLITE_DONE);
	sqlite3_finalize(st);
}

/* Two runs; the newest has three devices (one named EVIL_NAME) that suspend and resume. */
static void make_db(const char *path, int with_events)
{
	sqlite3 *db;
	sqlite3_stmt *st;

	unlink(path);
	CU_ASSERT_FATAL(sqlite3_open(path, &db) == SQLITE_OK);
	CU_ASSERT_FATAL(exec_ok(db, schema));
	CU_ASSERT_FATAL(sqlite3_prepare_v2(db, "INSERT INTO runs VALUES(?1, ?2, ?3, 'des', 42, 4, 3, 2,"
					   " 'ok', ?4, '2026-01-01T00:00:00Z', '0.1.0')", -1, &st, NULL) == SQLITE_OK);
	for (int run = 1; run <= 2; run++) {
		sqlite3_bind_int(st, 1, run);
		sqlite3_bind_text(st, 2, run == 1 ? "camera" : EVIL_NAME, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, run == 1 ? "sync" : "cp-first", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, run == 1 ? 9000000 : 5000000);
		CU_ASSERT(sqlite3_step(st) == SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	CU_ASSERT(exec_ok(db, "INSERT INTO metrics VALUES"
			  "(1, 'makespan_ns', 9000000), (1, 'lower_bound_ns', 4000000),"
			  "(1, 'probe.makespan_ns', 3000000), (1, 'suspend.makespan_ns', 3000000),"
			  "(1, 'resume.makespan_ns', 3000000),"
			  "(2, 'makespan_ns', 5000000), (2, 'lower_bound_ns', 4000000),"
			  "(2, 'suspend.makespan_ns', 2500000.5)"));
	for (int run = 1; run <= 2; run++) {
		insert_device(db, run, 0, "soc", -1);
		insert_device(db, run, 1, run == 2 ? EVIL_NAME : "i2c0", 0);
		insert_device(db, run, 2, "cam0", 1);
	}
	if (with_events) {
		int seq = 0;

		/* suspend: children first; resume: parents first. */
		insert_event(db, 2, seq++, 0, 2, "suspend_start", "suspend");
		insert_event(db, 2, seq++, 1000000, 2, "suspend_end", "suspend");
		insert_event(db, 2, seq++, 1000000, 1, "suspend_start", "suspend");
		insert_event(db, 2, seq++, 1500000, 1, "suspend_end", "suspend");
		insert_event(db, 2, seq++, 1500000, 0, "suspend_start", "suspend");
		insert_event(db, 2, seq++, 2500000, 0, "suspend_end", "suspend");
		insert_event(db, 2, seq++, 2500000, 0, "resume_start", "resume");
		insert_event(db, 2, seq++, 3000000, 0, "resume_end", "resume");
		insert_event(db, 2, seq++, 3000000, 1, "resume_start", "resume");
		insert_event(db, 2, seq++, 4000000, 1, "resume_end", "resume");
		insert_event(db, 2, seq++, 4000000, 2, "resume_start", "resume");
		insert_event(db, 2, seq++, 5000000, 2, "resume_end", "resume");
	}
	sqlite3_close(db);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

static int file_nonempty(const char *dir, const char *name)
{
	char path[PATH_LEN];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

static int starts_like_svg(const char *dir, const char *name)
{
	char path[PATH_LEN], *s;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s = slurp(path);
	if (!s)
		return 0;
	ok = !strncmp(s, "<?xml", 5) || !strncmp(s, "<svg", 4);
	ok = ok && strstr(s, "</svg>") != NULL;
	free(s);
	return ok;
}

/* The tl-data block: present, '<'-free JSON that holds EVIL_NAME unchanged. */
static void check_timeline_data(const char *html)
{
	static const char open_tag[] = "<script type=\"application/json\" id=\"tl-data\">";
	const char *start = strstr(html, open_tag), *end;
	json_t *root, *names, *segs;
	json_error_t jerr;
	int found = 0;
	char *text;

	CU_ASSERT_PTR_NOT_NULL_FATAL(start);
	start += strlen(open_tag);
	end = strstr(start, "</script");
	CU_ASSERT_PTR_NOT_NULL_FATAL(end);
	text = strndup(start, (size_t)(end - start));
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	/* No '<' at all: no "</script" and no "<!--" inside the JSON. */
	CU_ASSERT_PTR_NULL(strchr(text, '<'));
	root = json_loads(text, 0, &jerr);
	if (!root)
		fprintf(stderr, "tl-data: %s at %d:%d\n", jerr.text, jerr.line, jerr.column);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	names = json_object_get(root, "names");
	segs = json_object_get(root, "segs");
	CU_ASSERT(json_is_array(names));
	CU_ASSERT(json_is_array(segs));
	CU_ASSERT_EQUAL(json_array_size(names), 3);
	CU_ASSERT_EQUAL(json_array_size(segs), 6);	/* 3 devices x (suspend, resume) */
	for (size_t i = 0; i < json_array_size(names); i++)
		found += json_is_string(json_array_get(names, i)) &&
			 !strcmp(json_string_value(json_array_get(names, i)), EVIL_NAME);
	CU_ASSERT_EQUAL(found, 1);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(root, "limit")), 2000);
	json_decref(root);
	free(text);
	/* The script that draws it is inline, and marks the page when done. */
	CU_ASSERT_PTR_NOT_NULL(strstr(end, "</script>\n<script>\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "'tl-ready'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "first 2000 devices"));
}

/* trace.json: Chrome trace events; X events per device and phase, EVIL_NAME unchanged. */
static void check_trace(const char *dir, const char *name, int expect_x)
{
	char path[PATH_LEN];
	json_error_t jerr;
	json_t *root, *evs;
	int nx = 0, evil = 0, threads = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	root = json_load_file(path, 0, &jerr);
	if (!root)
		fprintf(stderr, "%s: %s at %d:%d\n", path, jerr.text, jerr.line, jerr.column);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "displayTimeUnit")), "ns");
	evs = json_object_get(root, "traceEvents");
	CU_ASSERT_FATAL(json_is_array(evs));
	for (size_t i = 0; i < json_array_size(evs); i++) {
		json_t *e = json_array_get(evs, i), *args = json_object_get(e, "args");
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *nm = json_string_value(json_object_get(e, "name"));

		CU_ASSERT_PTR_NOT_NULL(ph);
		CU_ASSERT_PTR_NOT_NULL(nm);
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(e, "pid")), 1);
		CU_ASSERT(json_is_integer(json_object_get(e, "tid")));
		if (!ph || !nm)
			continue;
		if (!strcmp(ph, "M")) {
			threads += !strcmp(nm, "thread_name");
			continue;
		}
		CU_ASSERT_STRING_EQUAL(ph, "X");
		nx++;
		CU_ASSERT(json_is_number(json_object_get(e, "ts")));
		CU_ASSERT(json_is_number(json_object_get(e, "dur")));
		CU_ASSERT(json_is_string(json_object_get(args, "phase")));
		CU_ASSERT(json_is_integer(json_object_get(args, "dev_id")));
		if (!strcmp(nm, EVIL_NAME)) {
			evil++;
			CU_ASSERT_EQUAL(json_integer_value(json_object_get(args, "dev_id")), 1);
			/* dev 1 suspends from 1 ms to 1.5 ms: microseconds. */
			if (!strcmp(json_string_value(json_object_get(args, "phase")), "suspend")) {
				CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e, "ts")), 1000.0, 1e-9);
				CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e, "dur")), 500.0, 1e-9);
			}
		}
	}
	CU_ASSERT_EQUAL(nx, expect_x);
	CU_ASSERT_EQUAL(evil, expect_x ? 2 : 0);
	CU_ASSERT(threads >= (expect_x ? 1 : 0));
	json_decref(root);
}

static void test_report_writes_plots_and_index(void)
{
	char db[DIR_LEN], out[DIR_LEN], path[PATH_LEN], err[512];
	char *html, *tsv;

	path_in(db, sizeof(db), "full.db");
	path_in(out, sizeof(out), "full-out");
	make_db(db, 1);
	CU_ASSERT_EQUAL_FATAL(dl_report_write(db, out, err, sizeof(err)), 0);
	CU_ASSERT(file_nonempty(out, "index.html"));
	CU_ASSERT(file_nonempty(out, "makespan.png"));
	CU_ASSERT(file_nonempty(out, "makespan.svg"));
	CU_ASSERT(file_nonempty(out, "gantt.png"));
	CU_ASSERT(file_nonempty(out, "gantt.svg"));
	CU_ASSERT(starts_like_svg(out, "makespan.svg"));
	CU_ASSERT(starts_like_svg(out, "gantt.svg"));
	CU_ASSERT(file_nonempty(out, "trace.json"));
	CU_ASSERT(file_nonempty(out, "trace-1.json"));
	CU_ASSERT(file_nonempty(out, "trace-2.json"));
	check_trace(out, "trace.json", 6);
	check_trace(out, "trace-2.json", 6);
	check_trace(out, "trace-1.json", 0);

	snprintf(path, sizeof(path), "%s/index.html", out);
	html = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(html);
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;`"));
	CU_ASSERT_PTR_NULL(strstr(html, "<script>alert"));
	CU_ASSERT_PTR_NULL(strstr(html, "</script>\""));
	check_timeline_data(html);
	CU_ASSERT_PTR_NULL(strstr(html, "http://"));
	CU_ASSERT_PTR_NULL(strstr(html, "https://"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<img src=\"makespan.png\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<img src=\"gantt.png\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "cp-first"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "camera"));
	free(html);

	/* The device name's newline and quote must not break the data file's lines. */
	snprintf(path, sizeof(path), "%s/gantt.tsv", out);
	tsv = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tsv);
	CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "<script>alert(1)</script>''` x"));
	{
		int lines = 0;

		for (const char *p = tsv; *p; p++)
			lines += *p == '\n';
		CU_ASSERT_EQUAL(lines, 1 + 6);	/* header + 3 devices x (suspend, resume) */
	}
	free(tsv);
}

static void test_report_defaults_out_beside_db(void)
{
	char db[DIR_LEN], out[DIR_LEN], err[512];

	path_in(db, sizeof(db), "default.db");
	path_in(out, sizeof(out), "report");
	make_db(db, 1);
	CU_ASSERT_EQUAL(dl_report_write(db, NULL, err, sizeof(err)), 0);
	CU_ASSERT(file_nonempty(out, "index.html"));
	CU_ASSERT(file_nonempty(out, "gantt.svg"));
}

static void test_report_without_events_writes_table(void)
{
	char db[DIR_LEN], out[DIR_LEN], path[PATH_LEN], err[512], *html;

	path_in(db, sizeof(db), "noevents.db");
	path_in(out, sizeof(out), "noevents-out");
	make_db(db, 0);
	CU_ASSERT_EQUAL_FATAL(dl_report_write(db, out, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/index.html", out);
	html = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(html);
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<td>cp-first</td>"));
	CU_ASSERT_PTR_NULL(strstr(html, "gantt.png"));
	free(html);
	CU_ASSERT(file_nonempty(out, "makespan.png"));
}

static void test_report_refuses_missing_db(void)
{
	char db[DIR_LEN], out[DIR_LEN], err[512];

	path_in(db, sizeof(db), "does-not-exist.db");
	path_in(out, sizeof(out), "missing-out");
	CU_ASSERT_EQUAL(dl_report_write(db, out, err, sizeof(err)), -ENOENT);
	CU_ASSERT(strstr(err, "does-not-exist.db") != NULL);
	CU_ASSERT(access(out, F_OK) != 0);
}

static void test_report_refuses_foreign_db(void)
{
	char db[DIR_LEN], txt[DIR_LEN], out[DIR_LEN], err[512];
	sqlite3 *h;
	FILE *f;

	path_in(db, sizeof(db), "foreign.db");
	path_in(out, sizeof(out), "foreign-out");
	unlink(db);
	CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
	CU_ASSERT(exec_ok(h, "CREATE TABLE runs(x); CREATE TABLE other(y)"));
	sqlite3_close(h);
	CU_ASSERT_EQUAL(dl_report_write(db, out, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "not a dlsim database") != NULL);

	path_in(txt, sizeof(txt), "text.db");
	f = fopen(txt, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("this is not sqlite at all, just some text that is long enough\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(dl_report_write(txt, out, err, sizeof(err)), -EINVAL);
	CU_ASSERT(access(out, F_OK) != 0);
}

int main(void)
{
	CU_pSuite s;
	int failures;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("report", NULL, NULL);
	CU_add_test(s, "test_report_writes_plots_and_index", test_report_writes_plots_and_index);
	CU_add_test(s, "test_report_defaults_out_beside_db", test_report_defaults_out_beside_db);
	CU_add_test(s, "test_report_without_events_writes_table", test_report_without_events_writes_table);
	CU_add_test(s, "test_report_refuses_missing_db", test_report_refuses_missing_db);
	CU_add_test(s, "test_report_refuses_foreign_db", test_report_refuses_foreign_db);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = (int)CU_get_number_of_failures();
	CU_cleanup_registry();
	if (!failures) {
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	} else {
		fprintf(stderr, "outputs kept in %s\n", tmpdir);
	}
	return failures ? 1 : 0;
}
