/*
 * test_report.c - `dlsim report` (report/report.h): files written, SVG is
 * XML, every database string reaches index.html escaped and the data files
 * sanitised, bad databases are refused; trace.json is Chrome trace JSON
 * with flow events that bind to the right slices, and the interactive
 * timeline's data cannot break out of its <script>; the critical path of a
 * hand-built chain is the chain; utilization, probe, per-order and scaling
 * data hold the figures of hand-built runs.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <jansson.h>
#include <sqlite3.h>
#include <zlib.h>

#include "report/report.h"
#include "report/timeline.h"

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

/*
 * An SVG file: a well-formed XML document (xmllint, when installed: it is a
 * real parser) with an <svg> root.
 */
static int is_svg(const char *dir, const char *name)
{
	static int have_xmllint = -1;
	char path[PATH_LEN], cmd[PATH_LEN + 64], *s;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s = slurp(path);
	if (!s)
		return 0;
	ok = (!strncmp(s, "<?xml", 5) || !strncmp(s, "<svg", 4)) && strstr(s, "</svg>") != NULL;
	free(s);
	if (have_xmllint < 0) {
		have_xmllint = system("command -v xmllint >/dev/null 2>&1") == 0;
		if (!have_xmllint)
			fprintf(stderr, "note: no xmllint (libxml2-utils), SVG files only checked for their root\n");
	}
	/* tmpdir and the names are ours: no quote in PATH */
	snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet '%s'", path);
	if (ok && have_xmllint && system(cmd) != 0) {
		fprintf(stderr, "%s: not well-formed XML\n", path);
		ok = 0;
	}
	return ok;
}

/* The JSON inside <script type="application/json" id=ID>: '<'-free, parsed. */
static json_t *script_json(const char *html, const char *id)
{
	char open_tag[96], *text;
	const char *start, *end;
	json_error_t jerr;
	json_t *root;

	snprintf(open_tag, sizeof(open_tag), "<script type=\"application/json\" id=\"%s\">", id);
	start = strstr(html, open_tag);
	CU_ASSERT_PTR_NOT_NULL(start);
	if (!start)
		return NULL;
	start += strlen(open_tag);
	end = strstr(start, "</script");
	CU_ASSERT_PTR_NOT_NULL(end);
	if (!end)
		return NULL;
	text = strndup(start, (size_t)(end - start));
	if (!text)
		return NULL;
	/* No '<' at all: no "</script" and no "<!--" inside the JSON. */
	CU_ASSERT_PTR_NULL(strchr(text, '<'));
	root = json_loads(text, 0, &jerr);
	if (!root)
		fprintf(stderr, "%s: %s at %d:%d\n", id, jerr.text, jerr.line, jerr.column);
	free(text);
	return root;
}

/* The tl-data and tl-segs blocks: present, '<'-free JSON that holds EVIL_NAME unchanged. */
static void check_timeline_data(const char *html)
{
	json_t *root = script_json(html, "tl-data"), *names, *segs = script_json(html, "tl-segs");
	int found = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	names = json_object_get(root, "names");
	CU_ASSERT(json_is_array(names));
	CU_ASSERT(json_is_array(segs));
	CU_ASSERT_EQUAL(json_array_size(names), 3);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(root, "rows")), 3);
	CU_ASSERT_EQUAL(json_array_size(segs), 6);	/* 3 devices x (suspend, resume) */
	/* [row, op, phase, t0, t1, worker, waited-for name, its phase, its end, flags, instance]:
	 * a chain through the parent links, so every bar is on the critical path. */
	for (size_t i = 0; i < json_array_size(segs); i++) {
		json_t *q = json_array_get(segs, i);

		CU_ASSERT_EQUAL(json_array_size(q), 11);
		CU_ASSERT(json_integer_value(json_array_get(q, 9)) & 1);
	}
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(root, "crit"), "segments")), 6);
	for (size_t i = 0; i < json_array_size(names); i++)
		found += json_is_string(json_array_get(names, i)) &&
			 !strcmp(json_string_value(json_array_get(names, i)), EVIL_NAME);
	CU_ASSERT_EQUAL(found, 1);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(root, "limit")), 10000);
	json_decref(root);
	json_decref(segs);
	/* The script that draws it is inline (timeline.js), and marks the page when done. */
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "</script>\n<script>\n/*\n * timeline.js"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "'tl-ready'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "at most 10000 device rows"));
}

/* An X event of EVS on TID that holds TS (the slice a flow event binds to). */
static json_t *slice_at(json_t *evs, json_int_t tid, double ts)
{
	for (size_t i = 0; i < json_array_size(evs); i++) {
		json_t *e = json_array_get(evs, i);
		const char *ph = json_string_value(json_object_get(e, "ph"));
		double t0 = json_number_value(json_object_get(e, "ts"));
		double dur = json_number_value(json_object_get(e, "dur"));

		if (ph && !strcmp(ph, "X") && json_integer_value(json_object_get(e, "tid")) == tid &&
		    t0 <= ts && ts <= t0 + dur)
			return e;
	}
	return NULL;
}

/*
 * Every flow start ("s") has one finish ("f", binding point "e") with the
 * same id, cat and name, and each lies inside a slice of its track: the
 * "s" in the awaited one, the "f" in the one whose waited_for names it.
 * Return: the number of flows.
 */
static int check_flows(json_t *evs)
{
	int flows = 0;

	for (size_t i = 0; i < json_array_size(evs); i++) {
		json_t *s = json_array_get(evs, i), *f = NULL, *from, *to;
		const char *ph = json_string_value(json_object_get(s, "ph"));
		json_int_t id;

		if (!ph || strcmp(ph, "s"))
			continue;
		flows++;
		id = json_integer_value(json_object_get(s, "id"));
		for (size_t k = 0; k < json_array_size(evs); k++) {
			json_t *e = json_array_get(evs, k);
			const char *p = json_string_value(json_object_get(e, "ph"));

			if (p && !strcmp(p, "f") && json_integer_value(json_object_get(e, "id")) == id) {
				CU_ASSERT_PTR_NULL(f);	/* ids are unique */
				f = e;
			}
		}
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(f, "bp")), "e");
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(f, "cat")),
				       json_string_value(json_object_get(s, "cat")));
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(f, "name")),
				       json_string_value(json_object_get(s, "name")));
		CU_ASSERT(json_number_value(json_object_get(s, "ts")) <= json_number_value(json_object_get(f, "ts")));
		from = slice_at(evs, json_integer_value(json_object_get(s, "tid")),
				json_number_value(json_object_get(s, "ts")));
		to = slice_at(evs, json_integer_value(json_object_get(f, "tid")),
			      json_number_value(json_object_get(f, "ts")));
		CU_ASSERT_PTR_NOT_NULL_FATAL(from);
		CU_ASSERT_PTR_NOT_NULL_FATAL(to);
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(to, "args"), "waited_for")),
				       json_string_value(json_object_get(from, "name")));
	}
	return flows;
}

/* A trace file, gzipped (the default) or not: gzread reads both. */
static size_t gz_read(void *buf, size_t len, void *ctx)
{
	int n = gzread(ctx, buf, (unsigned)len);

	return n < 0 ? (size_t)-1 : (size_t)n;
}

static json_t *load_gz_json(const char *path, json_error_t *jerr)
{
	gzFile gz = gzopen(path, "rb");
	json_t *j;

	if (!gz)
		return NULL;
	j = json_load_callback(gz_read, gz, 0, jerr);
	gzclose(gz);
	return j;
}

/*
 * trace.json: Chrome trace events; X events per device and phase, EVIL_NAME
 * unchanged, EXPECT_FLOWS flow arrows.
 */
static void check_trace(const char *dir, const char *name, int expect_x, int expect_flows)
{
	char path[PATH_LEN];
	json_error_t jerr;
	json_t *root, *evs;
	int nx = 0, evil = 0, threads = 0, nflow = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	root = load_gz_json(path, &jerr);
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
		if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
			nflow += !strcmp(ph, "s");
			CU_ASSERT(json_is_integer(json_object_get(e, "id")));
			CU_ASSERT(json_is_number(json_object_get(e, "ts")));
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
				/* it waited for its child cam0 */
				CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "waited_for")), "cam0");
			}
		}
	}
	CU_ASSERT_EQUAL(nx, expect_x);
	CU_ASSERT_EQUAL(evil, expect_x ? 2 : 0);
	CU_ASSERT(threads >= (expect_x ? 1 : 0));
	CU_ASSERT_EQUAL(nflow, expect_flows);
	CU_ASSERT_EQUAL(check_flows(evs), expect_flows);
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
	CU_ASSERT(is_svg(out, "makespan.svg"));
	CU_ASSERT(is_svg(out, "gantt.svg"));
	CU_ASSERT(is_svg(out, "util.svg"));
	CU_ASSERT(file_nonempty(out, "util.png"));
	/* one run per order and one size: no per-order or scaling plot, a note instead */
	CU_ASSERT(!file_nonempty(out, "orders.png"));
	CU_ASSERT(!file_nonempty(out, "scaling.png"));
	CU_ASSERT(file_nonempty(out, "trace.json.gz"));
	CU_ASSERT(file_nonempty(out, "trace-1.json.gz"));
	CU_ASSERT(file_nonempty(out, "trace-2.json.gz"));
	/* 4 waits for a parent or child, and soc's resume waited for the suspend
	 * phase's end (a barrier wait, drawn because it is on the critical path). */
	check_trace(out, "trace.json.gz", 6, 5);
	check_trace(out, "trace-2.json.gz", 6, 5);
	check_trace(out, "trace-1.json.gz", 0, 0);

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
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "Every scenario/order ran once"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "same number of devices"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "id=\"limits\""));
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

static void insert_event_w(sqlite3 *db, int run, int *seq, long long t_us, int dev, const char *kind,
			   const char *phase, int worker)
{
	sqlite3_stmt *st;

	CU_ASSERT_FATAL(sqlite3_prepare_v2(db, "INSERT INTO events VALUES(?1, ?2, ?3, ?4, NULL, ?5, ?6, ?7, 0)",
					   -1, &st, NULL) == SQLITE_OK);
	sqlite3_bind_int(st, 1, run);
	sqlite3_bind_int(st, 2, (*seq)++);
	sqlite3_bind_int64(st, 3, t_us * 1000);
	sqlite3_bind_int(st, 4, dev);
	sqlite3_bind_text(st, 5, kind, -1, SQLITE_STATIC);
	if (phase)
		sqlite3_bind_text(st, 6, phase, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 6);
	sqlite3_bind_int(st, 7, worker);
	CU_ASSERT(sqlite3_step(st) == SQLITE_DONE);
	sqlite3_finalize(st);
}

/*
 * A hand-built kernel-async run: the chain a <- b <- c (b consumes a, c
 * consumes b; no parents) and d, independent, on another worker.  d's
 * suspend ends after c's but before b starts, so "whatever ended last"
 * would pick d: the wait analysis must pick c, b's consumer.  Times in us:
 *   probe:   a 0-100, d 0-50, c defers at 50, b 100-200, c 200-300
 *   suspend: c 1000-2000, d 1000-2100, b 2200-3000, a 3100-4000
 *   resume:  a 4000-5000, d 4000-4200, b 5100-6000, c 6000-7000
 */
static void make_chain_db(const char *path)
{
	static const struct { int dev; const char *kind, *phase; long long t; int w; } ev[] = {
		{ 0, "probe_start", NULL, 0, 1 }, { 3, "probe_start", NULL, 0, 2 },
		{ 3, "probe_end", NULL, 50, 2 }, { 2, "probe_defer", NULL, 50, 2 },
		{ 0, "probe_end", NULL, 100, 1 }, { 1, "probe_start", NULL, 100, 1 },
		{ 1, "probe_end", NULL, 200, 1 }, { 2, "probe_start", NULL, 200, 1 },
		{ 2, "probe_end", NULL, 300, 1 },
		{ 2, "suspend_start", "suspend", 1000, 1 }, { 3, "suspend_start", "suspend", 1000, 2 },
		{ 2, "suspend_end", "suspend", 2000, 1 }, { 3, "suspend_end", "suspend", 2100, 2 },
		{ 1, "suspend_start", "suspend", 2200, 1 }, { 1, "suspend_end", "suspend", 3000, 1 },
		{ 0, "suspend_start", "suspend", 3100, 1 }, { 0, "suspend_end", "suspend", 4000, 1 },
		{ 0, "resume_start", "resume", 4000, 1 }, { 3, "resume_start", "resume", 4000, 2 },
		{ 3, "resume_end", "resume", 4200, 2 }, { 0, "resume_end", "resume", 5000, 1 },
		{ 1, "resume_start", "resume", 5100, 1 }, { 1, "resume_end", "resume", 6000, 1 },
		{ 2, "resume_start", "resume", 6000, 1 }, { 2, "resume_end", "resume", 7000, 1 },
	};
	sqlite3 *db;
	int seq = 0;

	unlink(path);
	CU_ASSERT_FATAL(sqlite3_open(path, &db) == SQLITE_OK);
	CU_ASSERT_FATAL(exec_ok(db, schema));
	CU_ASSERT(exec_ok(db, "INSERT INTO runs VALUES(1, 'chain', 'kernel-async', 'des', 1, 4, 4, 2, 'ok',"
			  " 7000000, '', '');"
			  "INSERT INTO links VALUES(1, 0, 1, 0, 'MANAGED'), (1, 1, 2, 1, 'MANAGED'),"
			  " (1, 2, 3, 2, 'SYNC_STATE_ONLY|INFERRED');"));
	insert_device(db, 1, 0, "a", -1);
	insert_device(db, 1, 1, "b", -1);
	insert_device(db, 1, 2, "c", -1);
	insert_device(db, 1, 3, "d", -1);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		insert_event_w(db, 1, &seq, ev[i].t, ev[i].dev, ev[i].kind, ev[i].phase, ev[i].w);
	sqlite3_close(db);
}

/* The largest value of column COL (1-based) over the data lines of a TSV file. */
static double tsv_max(const char *path, int col)
{
	char *s = slurp(path), *line, *save = NULL;
	double best = -1;

	if (!s)
		return -1;
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line;

		if (*p == '#')
			continue;
		for (int c = 1; c < col && p; c++) {
			p = strchr(p, '\t');
			if (p)
				p++;
		}
		if (p && atof(p) > best)
			best = atof(p);
	}
	free(s);
	return best;
}

static void test_report_critical_path_is_the_chain(void)
{
	/* the chain, in order: a, b, c probe; c, b, a suspend; a, b, c resume */
	static const char *const want[][2] = {
		{ "a", "probe" }, { "b", "probe" }, { "c", "probe" },
		{ "c", "suspend" }, { "b", "suspend" }, { "a", "suspend" },
		{ "a", "resume" }, { "b", "resume" }, { "c", "resume" },
	};
	char db[DIR_LEN], out[DIR_LEN], path[PATH_LEN], err[512];
	json_error_t jerr;
	json_t *root, *evs;
	size_t ncrit = 0;

	path_in(db, sizeof(db), "chain.db");
	path_in(out, sizeof(out), "chain-out");
	make_chain_db(db);
	CU_ASSERT_EQUAL_FATAL(dl_report_write(db, out, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/trace.json.gz", out);
	root = load_gz_json(path, &jerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	evs = json_object_get(root, "traceEvents");
	for (size_t i = 0; i < json_array_size(evs); i++) {
		json_t *e = json_array_get(evs, i), *args = json_object_get(e, "args");
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *nm = json_string_value(json_object_get(e, "name"));
		const char *phase = json_string_value(json_object_get(args, "phase"));
		int expected = 0;

		if (!ph || strcmp(ph, "X"))
			continue;
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			expected |= !strcmp(nm, want[k][0]) && !strcmp(phase, want[k][1]);
		CU_ASSERT_EQUAL(json_is_true(json_object_get(args, "critical_path")), expected);
		ncrit += json_is_true(json_object_get(args, "critical_path"));
		/* b suspended after its consumer c, not after d that ended later */
		if (!strcmp(nm, "b") && !strcmp(phase, "suspend"))
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "waited_for")), "c");
		/* c's suspend has no consumer: it waited for the probe phase's last end */
		if (!strcmp(nm, "c") && !strcmp(phase, "suspend")) {
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "wait")), "phase barrier");
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "waited_for")), "c");
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "waited_for_phase")), "probe");
		}
		/* the SYNC_STATE_ONLY link d -> c orders nothing: d waited for the barrier */
		if (!strcmp(nm, "d") && !strcmp(phase, "resume")) {
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "wait")), "phase barrier");
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(args, "waited_for")), "a");
		}
	}
	CU_ASSERT_EQUAL(ncrit, sizeof(want) / sizeof(want[0]));
	/* 6 dependency waits (b, c probe; b, a suspend; b, c resume) and the two
	 * barrier waits on the path (c's suspend, a's resume) */
	CU_ASSERT_EQUAL(check_flows(evs), 8);
	json_decref(root);

	/* Gantt: the suspend/resume part of the path, column 8 */
	snprintf(path, sizeof(path), "%s/gantt.tsv", out);
	{
		char *tsv = slurp(path);
		int crit = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(tsv);
		for (char *p = tsv; (p = strstr(p, "\t1\n")); p++)
			crit++;
		CU_ASSERT_EQUAL(crit, 6);
		/* times from the first suspend's start (1 ms into the run), not the run's */
		CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "\tsuspend\tsuspend\t0.000000\t1.000000\t"));
		free(tsv);
	}
	CU_ASSERT(is_svg(out, "gantt.svg"));
	/* kernel-async: a and b sleep from the phase's start until their dependency ends */
	snprintf(path, sizeof(path), "%s/util.tsv", out);
	CU_ASSERT_DOUBLE_EQUAL(tsv_max(path, 2), 2, 1e-9);	/* busy: two workers at most */
	CU_ASSERT_DOUBLE_EQUAL(tsv_max(path, 3), 2, 1e-9);	/* blocked */
	CU_ASSERT_DOUBLE_EQUAL(tsv_max(path, 5), 4, 1e-9);	/* K */
	CU_ASSERT(is_svg(out, "util.svg"));
	CU_ASSERT(file_nonempty(out, "util.png"));
	/* probe: c deferred once: 3 devices with 1 attempt, 1 with 2; 3 with 0 defers, 1 with 1 */
	snprintf(path, sizeof(path), "%s/probe.tsv", out);
	{
		char *tsv = slurp(path);

		CU_ASSERT_PTR_NOT_NULL_FATAL(tsv);
		CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "\n0\t0\t0\t3\n1\t1\t3\t1\n2\t2\t1\t0\n"));
		free(tsv);
	}
	CU_ASSERT(is_svg(out, "probe.svg"));
	snprintf(path, sizeof(path), "%s/index.html", out);
	{
		char *html = slurp(path);

		CU_ASSERT_PTR_NOT_NULL_FATAL(html);
		/* callbacks: 100 + 100 + 100 + 1000 + 800 + 900 + 1000 + 900 + 1000 us; gaps: 700 (c's
		 * suspend after the probe phase) + 200 + 100 + 0 (a's resume) + 100 + 0 */
		CU_ASSERT_PTR_NOT_NULL(strstr(html, "Critical path: 9 callbacks, ending at 7.000 ms: 5.900 ms in "
						    "callbacks, 1.100 ms between"));
		CU_ASSERT_PTR_NOT_NULL(strstr(html, "<img src=\"util.png\""));
		CU_ASSERT_PTR_NOT_NULL(strstr(html, "<img src=\"probe.png\""));
		CU_ASSERT_PTR_NOT_NULL(strstr(html, "Blocked is derived"));
		free(html);
	}
}

static void insert_run(sqlite3 *db, int id, const char *order, int seed, int devices, double mk_ms, double wall_ms)
{
	sqlite3_stmt *st;

	CU_ASSERT_FATAL(sqlite3_prepare_v2(db, "INSERT INTO runs VALUES(?1, 'scale', ?2, 'des', ?3, 8, ?4, 0, 'ok',"
					   " ?5, '', '')", -1, &st, NULL) == SQLITE_OK);
	sqlite3_bind_int(st, 1, id);
	sqlite3_bind_text(st, 2, order, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, seed);
	sqlite3_bind_int(st, 4, devices);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)(mk_ms * 1e6));
	CU_ASSERT(sqlite3_step(st) == SQLITE_DONE);
	sqlite3_finalize(st);
	CU_ASSERT_FATAL(sqlite3_prepare_v2(db, "INSERT INTO metrics VALUES(?1, 'wall_ns', ?2), (?1, 'lower_bound_ns', ?3)",
					   -1, &st, NULL) == SQLITE_OK);
	sqlite3_bind_int(st, 1, id);
	sqlite3_bind_double(st, 2, wall_ms * 1e6);
	sqlite3_bind_double(st, 3, mk_ms * 0.9e6);
	CU_ASSERT(sqlite3_step(st) == SQLITE_DONE);
	sqlite3_finalize(st);
}

#define EVIL_ORDER "cp\"first\t<b>`x`</b>\n"

/* compare --seeds 2 at two sizes: mean and sd per order, a scaling plot of two lines. */
static void test_report_seeds_and_sizes(void)
{
	char db[DIR_LEN], out[DIR_LEN], path[PATH_LEN], err[512], *tsv, *html;
	sqlite3 *h;

	path_in(db, sizeof(db), "scale.db");
	path_in(out, sizeof(out), "scale-out");
	unlink(db);
	CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
	CU_ASSERT_FATAL(exec_ok(h, schema));
	insert_run(h, 1, "kernel-async", 1, 100, 10, 1);
	insert_run(h, 2, "kernel-async", 2, 100, 12, 1);
	insert_run(h, 3, EVIL_ORDER, 1, 100, 8, 2);
	insert_run(h, 4, EVIL_ORDER, 2, 100, 8, 2);
	insert_run(h, 5, "kernel-async", 1, 1000, 100, 10);
	insert_run(h, 6, EVIL_ORDER, 1, 1000, 80, 20);
	sqlite3_close(h);
	CU_ASSERT_EQUAL_FATAL(dl_report_write(db, out, err, sizeof(err)), 0);
	CU_ASSERT(is_svg(out, "orders.svg"));
	CU_ASSERT(is_svg(out, "scaling.svg"));
	CU_ASSERT(file_nonempty(out, "orders.png"));
	CU_ASSERT(file_nonempty(out, "scaling.png"));
	snprintf(path, sizeof(path), "%s/orders.tsv", out);
	tsv = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tsv);
	/* 10 and 12 ms: mean 11, sample sd sqrt(2) */
	CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "\t2\t11.000000\t1.414214\t9.900000\t"));
	CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "\t2\t8.000000\t0.000000\t7.200000\t"));
	free(tsv);
	snprintf(path, sizeof(path), "%s/scaling.tsv", out);
	tsv = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tsv);
	/* two blocks, the hostile order name sanitised to one field of one line */
	CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "order\tkernel-async\t"));
	CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "\n\n\norder\tcp'first <b>`x`</b> \tmakespan_ms"));
	CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "100\t11.000000\t1.000000\t2\n1000\t100.000000\t10.000000\t1\n"));
	free(tsv);
	snprintf(path, sizeof(path), "%s/index.html", out);
	html = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(html);
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<img src=\"orders.png\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<img src=\"scaling.png\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "cp&quot;first\t&lt;b&gt;`x`&lt;/b&gt;\n"));
	CU_ASSERT_PTR_NULL(strstr(html, "<b>`x`"));
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "11.000 &plusmn; 1.414"));
	free(html);
}

/*
 * Two scenarios of one name (two imports of one board) with other devices
 * are two groups: their seeds are averaged apart, never together.
 */
static void test_report_groups_runs_by_scenario_content(void)
{
	char db[DIR_LEN], out[DIR_LEN], path[PATH_LEN], err[512], *tsv;
	sqlite3 *h;

	path_in(db, sizeof(db), "content.db");
	path_in(out, sizeof(out), "content-out");
	unlink(db);
	CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
	CU_ASSERT_FATAL(exec_ok(h, schema));
	insert_run(h, 1, "kernel-async", 1, 1, 10, 1);
	insert_run(h, 2, "kernel-async", 2, 1, 12, 1);
	insert_run(h, 3, "kernel-async", 1, 1, 20, 1);
	insert_run(h, 4, "kernel-async", 2, 1, 22, 1);
	CU_ASSERT_FATAL(exec_ok(h, "INSERT INTO devices VALUES(1, 0, 'disk', NULL, 1), (2, 0, 'disk', NULL, 1),"
				   " (3, 0, 'usb', NULL, 1), (4, 0, 'usb', NULL, 1)"));
	sqlite3_close(h);
	CU_ASSERT_EQUAL_FATAL(dl_report_write(db, out, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/orders.tsv", out);
	tsv = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tsv);
	CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "\t2\t11.000000\t1.414214\t"));
	CU_ASSERT_PTR_NOT_NULL(strstr(tsv, "\t2\t21.000000\t1.414214\t"));
	CU_ASSERT_PTR_NULL(strstr(tsv, "\t4\t16.000000\t"));
	free(tsv);
}

/*
 * When not every device fits, the slowest devices of an op are drawn (and
 * traced) even off the critical path and past the lowest dev_ids: the
 * headline names them and the timeline pins them on top.
 */
static void test_report_rows_keep_the_slowest_devices(void)
{
	struct tl_dev devs[5] = { { .dev_id = 0 }, { .dev_id = 1 }, { .dev_id = 2 }, { .dev_id = 3 }, { .dev_id = 4 } };
	struct tl_seg segs[5];
	struct tl_run t = { .devs = devs, .ndevs = 5, .total_devs = 5, .segs = segs, .nsegs = 5 };
	uint32_t row_of[5];

	for (uint32_t i = 0; i < 5; i++)	/* 1 ms each, dev 4's 40 ms */
		segs[i] = (struct tl_seg){ .row = i, .op = TL_SUSPEND, .wait = TL_NONE, .t0 = 0,
					   .t1 = i == 4 ? 40000000 : 1000000 };
	CU_ASSERT_EQUAL(tl_select_rows(&t, 2, 1u << TL_SUSPEND, row_of), 2);
	CU_ASSERT_NOT_EQUAL(row_of[4], TL_NONE);
	CU_ASSERT_EQUAL(row_of[0], 0);	/* ties: the lowest dev_id */
	CU_ASSERT_EQUAL(row_of[4], 1);	/* drawn in dev_id order */
	/* an op outside the mask does not count */
	CU_ASSERT_EQUAL(tl_select_rows(&t, 2, 1u << TL_RESUME, row_of), 2);
	CU_ASSERT_EQUAL(row_of[4], TL_NONE);
}

/*
 * A run and its twin (runs.twin_of) on one axis: the same device is the
 * same slot in both runs' segments, each run keeps its own times; a run of
 * another scenario is refused beside it, and --no-beside leaves the view out.
 */
static void test_report_beside_pairs_devices_by_dev_id(void)
{
	struct dl_report_opts o = { .run = 2 };
	char db[DIR_LEN], out[DIR_LEN], path[PATH_LEN], err[512], *html;
	json_t *a, *b, *d, *sa, *sb;
	size_t i, j, matched = 0;
	sqlite3 *h;

	path_in(db, sizeof(db), "beside.db");
	path_in(out, sizeof(out), "beside-out");
	make_db(db, 1);
	CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
	/* run 3: run 2's twin, every callback twice as long */
	CU_ASSERT_FATAL(exec_ok(h, "ALTER TABLE runs ADD COLUMN twin_of INTEGER;"
				   "INSERT INTO runs SELECT 3, scenario, order_name, mode, seed, workers, devices,"
				   " links, status, 2 * makespan_ns, started_at, version, 2 FROM runs WHERE run_id = 2;"
				   "INSERT INTO devices SELECT 3, dev_id, name, parent_id, async FROM devices"
				   " WHERE run_id = 2;"
				   "INSERT INTO events SELECT 3, seq, 2 * t_ns, dev_id, link_id, kind, phase, worker, err"
				   " FROM events WHERE run_id = 2;"));
	sqlite3_close(h);
	o.outdir = out;
	CU_ASSERT_EQUAL_FATAL(dl_report_write_opts(db, &o, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/index.html", out);
	html = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(html);
	CU_ASSERT_PTR_NOT_NULL(strstr(html, "<h2 id=\"beside\">Run 2 beside run 3</h2>"));
	d = script_json(html, "bs-data");
	a = script_json(html, "bs-segs-a");
	b = script_json(html, "bs-segs-b");
	free(html);
	CU_ASSERT_FATAL(d && a && b);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(d, "ids")), 3);
	CU_ASSERT_EQUAL(json_array_size(a), 6);
	CU_ASSERT_EQUAL(json_array_size(b), 6);
	/* [slot, op, phase, t0, t1, worker, instance]: the twin's same callback at twice the time */
	json_array_foreach(a, i, sa)
		json_array_foreach(b, j, sb)
			if (json_integer_value(json_array_get(sa, 0)) == json_integer_value(json_array_get(sb, 0)) &&
			    json_integer_value(json_array_get(sa, 2)) == json_integer_value(json_array_get(sb, 2))) {
				CU_ASSERT_EQUAL(2 * json_integer_value(json_array_get(sa, 4)),
						json_integer_value(json_array_get(sb, 4)));
				matched++;
			}
	CU_ASSERT_EQUAL(matched, 6);
	json_decref(a);
	json_decref(b);
	json_decref(d);
	/* run 1 ran another scenario: not beside run 2, and nothing is written */
	o.beside = 1;
	path_in(out, sizeof(out), "beside-out1");
	o.outdir = out;
	CU_ASSERT_EQUAL(dl_report_write_opts(db, &o, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "another scenario"));
	CU_ASSERT(access(out, F_OK) != 0);
	o.beside = -1;
	CU_ASSERT_EQUAL_FATAL(dl_report_write_opts(db, &o, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/index.html", out);
	html = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(html);
	CU_ASSERT_PTR_NULL(strstr(html, "id=\"bs-data\""));
	free(html);
}

static void test_report_run_choice(void)
{
	char db[DIR_LEN], out[DIR_LEN], err[512];

	path_in(db, sizeof(db), "choice.db");
	path_in(out, sizeof(out), "choice-out");
	make_db(db, 1);
	CU_ASSERT_EQUAL(dl_report_write_run(db, out, 7, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no run 7"));
	CU_ASSERT(access(out, F_OK) != 0);
	CU_ASSERT_EQUAL_FATAL(dl_report_write_run(db, out, 1, err, sizeof(err)), 0);
	/* run 1 has no events: no timeline plots, trace.json is run 1's */
	CU_ASSERT(!file_nonempty(out, "gantt.png"));
	check_trace(out, "trace.json.gz", 0, 0);
}

/*
 * The run chosen is verified once: `dlsim report` verifies it (the common
 * step cli_log_validate()) and says so in verified_run; the library skips only
 * that run, and verifies it itself otherwise.  A tampered status shows which.
 */
static void test_report_verifies_the_chosen_run_once(void)
{
	struct dl_report_opts o = { .run = 2, .beside = -1, .data_only = 1 };
	char db[DIR_LEN], out[DIR_LEN], err[512];
	sqlite3 *h;

	path_in(db, sizeof(db), "verified.db");
	make_db(db, 1);
	CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
	CU_ASSERT(exec_ok(h, "UPDATE runs SET status = 'tampered' WHERE run_id = 2"));
	sqlite3_close(h);
	path_in(out, sizeof(out), "verified-none");
	o.outdir = out;
	CU_ASSERT_EQUAL(dl_report_write_opts(db, &o, err, sizeof(err)), -EBADMSG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "corrupt"));
	CU_ASSERT(access(out, F_OK) != 0);
	o.verified_run = 1;             /* another run: the chosen one is still verified */
	CU_ASSERT_EQUAL(dl_report_write_opts(db, &o, err, sizeof(err)), -EBADMSG);
	CU_ASSERT(access(out, F_OK) != 0);
	o.verified_run = 2;             /* the caller's word: not verified again */
	CU_ASSERT_EQUAL(dl_report_write_opts(db, &o, err, sizeof(err)), 0);
	CU_ASSERT(file_nonempty(out, "index.html"));
}

static void test_report_defaults_out_beside_db(void)
{
	char db[DIR_LEN], out[DIR_LEN], err[512];

	path_in(db, sizeof(db), "default.db");
	path_in(out, sizeof(out), "default-report");
	make_db(db, 1);
	CU_ASSERT_EQUAL(dl_report_write(db, NULL, err, sizeof(err)), 0);
	CU_ASSERT(file_nonempty(out, "index.html"));
	CU_ASSERT(file_nonempty(out, "gantt.svg"));
	CU_ASSERT_EQUAL(dl_report_default_outdir("dlsim.db", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "dlsim-report");
	CU_ASSERT_EQUAL(dl_report_default_outdir("/a.b/runs", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/a.b/runs-report");
}

/* Run from the repository root, `dlsim report dlsim.db` once wrote into report/, beside page.c. */
static void test_report_never_writes_into_a_source_folder(void)
{
	char db[DIR_LEN], src[PATH_LEN], err[512];

	path_in(db, sizeof(db), "src.db");
	make_db(db, 1);
	snprintf(src, sizeof(src), "%s/report", DLSIM_SOURCE_DIR);
	CU_ASSERT_EQUAL(dl_report_write(db, src, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "source"));
	snprintf(src, sizeof(src), "%s/report/index.html", DLSIM_SOURCE_DIR);
	CU_ASSERT(access(src, F_OK) != 0);
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

/*
 * Ctrl-C while a trace file is written: tl_write_trace() polls the flag
 * between its events and gives up (-EINTR).  It wrote every event first:
 * 17 s after SIGINT for a 200k-device run's report.
 */
static void test_trace_hears_the_stop_flag(void)
{
	char db[DIR_LEN], path[DIR_LEN], err[512];
	atomic_int stop = 1;
	struct tl_trace_opts o = { .stop = &stop };
	struct tl_run t;
	sqlite3 *h;

	path_in(db, sizeof(db), "stop.db");
	path_in(path, sizeof(path), "stop-trace.json");
	make_db(db, 1);
	CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
	CU_ASSERT_FATAL(tl_read(h, 2, 0, &t, err, sizeof(err)) == 0);
	CU_ASSERT_FATAL(tl_analyse(h, &t, NULL, err, sizeof(err)) == 0);
	CU_ASSERT_FATAL(t.nsegs > 0);
	CU_ASSERT_EQUAL(tl_write_trace(&t, "stop", &o, path, NULL), -EINTR);
	stop = 0;
	CU_ASSERT_EQUAL(tl_write_trace(&t, "stop", &o, path, NULL), 0);
	tl_free(&t);
	sqlite3_close(h);
}

/*
 * The waits of a million devices take seconds (report's read_timeline(),
 * run's account through explain): tl_analyse() hears Ctrl-C.  It used to
 * finish first: 1.2-3.7 s from SIGINT to exit in a report of a 1M-device log.
 */
static void test_analysis_hears_the_stop_flag(void)
{
	char db[DIR_LEN], err[512];
	atomic_int stop = 1;
	struct tl_run t;
	sqlite3 *h;

	path_in(db, sizeof(db), "stop-analyse.db");
	make_db(db, 1);
	CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
	CU_ASSERT_FATAL(tl_read(h, 2, 0, &t, err, sizeof(err)) == 0);
	CU_ASSERT_FATAL(t.nsegs > 0);
	CU_ASSERT_EQUAL(tl_analyse(h, &t, &stop, err, sizeof(err)), -EINTR);
	CU_ASSERT_STRING_EQUAL(err, "interrupted");
	stop = 0;
	CU_ASSERT_EQUAL(tl_analyse(h, &t, &stop, err, sizeof(err)), 0);
	CU_ASSERT(t.ncrit > 0);
	/* analysed again, whole: what the first built is given back (LeakSanitizer) */
	CU_ASSERT_EQUAL(tl_analyse(h, &t, &stop, err, sizeof(err)), 0);
	CU_ASSERT(t.ncrit > 0);
	tl_free(&t);
	sqlite3_close(h);
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
	CU_add_test(s, "never writes into a source folder", test_report_never_writes_into_a_source_folder);
	CU_add_test(s, "test_report_writes_plots_and_index", test_report_writes_plots_and_index);
	CU_add_test(s, "test_report_critical_path_is_the_chain", test_report_critical_path_is_the_chain);
	CU_add_test(s, "test_report_seeds_and_sizes", test_report_seeds_and_sizes);
	CU_add_test(s, "test_report_groups_runs_by_scenario_content", test_report_groups_runs_by_scenario_content);
	CU_add_test(s, "test_report_rows_keep_the_slowest_devices", test_report_rows_keep_the_slowest_devices);
	CU_add_test(s, "test_report_run_choice", test_report_run_choice);
	CU_add_test(s, "test_report_beside_pairs_devices_by_dev_id", test_report_beside_pairs_devices_by_dev_id);
	CU_add_test(s, "test_report_defaults_out_beside_db", test_report_defaults_out_beside_db);
	CU_add_test(s, "test_report_verifies_the_chosen_run_once", test_report_verifies_the_chosen_run_once);
	CU_add_test(s, "test_report_without_events_writes_table", test_report_without_events_writes_table);
	CU_add_test(s, "test_report_refuses_missing_db", test_report_refuses_missing_db);
	CU_add_test(s, "test_report_refuses_foreign_db", test_report_refuses_foreign_db);
	CU_add_test(s, "test_trace_hears_the_stop_flag", test_trace_hears_the_stop_flag);
	CU_add_test(s, "test_analysis_hears_the_stop_flag", test_analysis_hears_the_stop_flag);
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
