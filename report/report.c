/*
 * report.c - the report writer behind `dlsim report` (see report.h).
 *
 * Four steps: read the runs table and their metrics; read the chosen run's
 * probe, unbind and PM phases (timeline.c) and find from the log what each
 * one waited for and the critical path (waits.c); write one tab-separated
 * data file per plot and run its report/NAME.gp on it, once for PNG and
 * once for SVG (plots.c); write the Chrome trace files (here, timeline.c)
 * and index.html (page.c).  The database is opened read-only and every
 * value is bound as a parameter; names reach the data files sanitised and
 * the page escaped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "report/report_int.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_shard.h"
#include "sim/log/dl_testhook.h"

int rp_err(struct report *r, int code, const char *fmt, ...)
{
	va_list ap;

	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static char *dup_text(sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	return strdup(s ? (const char *)s : "");
}

static double column_num(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

/* ---- reading ---------------------------------------------------------- */

/* SQLite steps between two looks at the Ctrl-C flag while the report reads. */
#define RP_POLL_STEPS 10000

static int stop_reading(void *arg)
{
	return rp_stopped(arg);
}

/* As check and diff open it: a WAL log in a read-only folder is read too (issue 34). */
static int open_db(struct report *r, const char *path)
{
	char err[1024];
	int rc = dl_log_open_existing(path, &r->db, err, sizeof(err));

	if (rc)
		return rp_err(r, rc == -ENOENT ? -ENOENT : -EINVAL, "%s", err);
	/* Ctrl-C interrupts any statement (SQLITE_INTERRUPT), the read stops there */
	if (r->stop)
		sqlite3_progress_handler(r->db, RP_POLL_STEPS, stop_reading, r);
	/* a sweep's runs with their events in its shards: every shard at once */
	if (dl_log_attach_shards(r->db, NULL, 0, err, sizeof(err)))
		return rp_err(r, -EINVAL, "%s", err);
	return 0;
}

/* A dlsim database has at least the tables the report reads (SPEC.md). */
static int check_tables(struct report *r, const char *path)
{
	static const char *const need[] = { "runs", "devices", "events", "metrics" };
	sqlite3_stmt *st;
	int ret = 0;

	if (sqlite3_prepare_v2(r->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return rp_err(r, -EINVAL, "%s: not a dlsim database (%s)", path, sqlite3_errmsg(r->db));
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]) && !ret; i++) {
		sqlite3_bind_text(st, 1, need[i], -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_ROW)
			ret = rp_err(r, -EINVAL, "%s: not a dlsim database (no table '%s'; expected the "
				      "tables runs, devices, events, metrics)", path, need[i]);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return ret;
}

static struct run_row *find_run(struct report *r, int64_t id)
{
	size_t lo = 0, hi = r->nruns;

	/* runs is sorted by run_id (ORDER BY in read_runs). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->runs[mid].id == id)
			return &r->runs[mid];
		if (r->runs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* One pass over metrics, not one query per run: metrics may have no index. */
static int read_metrics(struct report *r)
{
	static const char *const names[] = { "makespan_ns", "lower_bound_ns", "probe.makespan_ns",
					     "suspend.makespan_ns", "resume.makespan_ns", "wall_ns" };
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "SELECT run_id, name, value FROM metrics WHERE name IN "
			       "('makespan_ns', 'lower_bound_ns', 'probe.makespan_ns', "
			       "'suspend.makespan_ns', 'resume.makespan_ns', 'wall_ns')", -1, &st, NULL) != SQLITE_OK)
		return rp_err(r, -EINVAL, "cannot read the metrics: %s", sqlite3_errmsg(r->db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct run_row *row = find_run(r, sqlite3_column_int64(st, 0));
		const char *name = (const char *)sqlite3_column_text(st, 1);
		double v = column_num(st, 2);
		double *slot[] = { NULL, NULL, NULL, NULL, NULL, NULL };

		if (!row || !name)
			continue;
		slot[0] = &row->metric_makespan;
		slot[1] = &row->lower_bound;
		slot[2] = &row->probe;
		slot[3] = &row->suspend;
		slot[4] = &row->resume;
		slot[5] = &row->wall;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(name, names[i]) && isnan(*slot[i]))
				*slot[i] = v;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rp_err(r, -EINVAL, "cannot read the metrics: %s", sqlite3_errmsg(r->db));
	/* runs.makespan_ns first; the metric when the runs row has none. */
	for (size_t i = 0; i < r->nruns; i++)
		if (isnan(r->runs[i].makespan))
			r->runs[i].makespan = r->runs[i].metric_makespan;
	return 0;
}

/* Whether TABLE has COLUMN (older logs lack the columns added since). */
static int has_column(struct report *r, const char *table, const char *column)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(r->db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

/* Folds columns 1.. of the row into H, each with its type so that NULL, 0 and "0" differ. */
static uint64_t fnv_row(uint64_t h, sqlite3_stmt *st)
{
	for (int c = 1; c < sqlite3_column_count(st); c++) {
		int type = sqlite3_column_type(st, c);

		h = fnv_bytes(h, &type, sizeof(type));
		if (type == SQLITE_INTEGER) {
			int64_t v = sqlite3_column_int64(st, c);

			h = fnv_bytes(h, &v, sizeof(v));
		} else if (type != SQLITE_NULL) {
			const unsigned char *t = sqlite3_column_text(st, c);

			h = fnv_bytes(h, t, (size_t)sqlite3_column_bytes(st, c));
		}
	}
	return h;
}

/*
 * Each run's content: a hash of its devices (name, parent, async) and links
 * (ends, flags), in one pass over each table in run_id order, so that two
 * scenarios of the same name (two imports of one board) are not averaged
 * together.  Latencies are not in the log: two imports with the same
 * devices and links but other times still share a fingerprint.
 */
static int read_content(struct report *r)
{
	static const char *const sql[] = {
		"SELECT run_id, dev_id, name, parent_id, async FROM devices ORDER BY run_id, dev_id",
		"SELECT run_id, link_id, consumer_id, supplier_id, flags FROM links ORDER BY run_id, link_id",
	};
	int have_links = has_column(r, "links", "link_id");

	for (size_t i = 0; i < r->nruns; i++)
		r->runs[i].content = FNV_OFFSET;
	for (size_t q = 0; q < (have_links ? 2u : 1u); q++) {
		struct run_row *row = NULL;
		sqlite3_stmt *st;
		int rc;

		if (sqlite3_prepare_v2(r->db, sql[q], -1, &st, NULL) != SQLITE_OK)
			return rp_err(r, -EINVAL, "cannot read the %s: %s", q ? "links" : "devices",
				      sqlite3_errmsg(r->db));
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);

			if (!row || row->id != id)
				row = find_run(r, id);
			if (row)
				row->content = fnv_row(row->content, st);
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return rp_err(r, -EINVAL, "cannot read the %s: %s", q ? "links" : "devices",
				      sqlite3_errmsg(r->db));
	}
	return 0;
}

bool rp_same_scenario(const struct run_row *a, const struct run_row *b)
{
	return a->content == b->content && !strcmp(a->scenario, b->scenario);
}

/* The first kernel of the async rework (kernel-async-v2): 6.16. */
#define V2_MAJOR 6
#define V2_MINOR 16

bool rp_kernel_order(const struct run_row *row)
{
	int major = 0, minor = 0, v2;

	if (sscanf(row->kernel, "%d.%d", &major, &minor) != 2)
		return false;
	v2 = major > V2_MAJOR || (major == V2_MAJOR && minor >= V2_MINOR);
	return !strcmp(row->order, v2 ? "kernel-async-v2" : "kernel-async");
}

static int read_runs(struct report *r)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, ret = 0;
	const char *sql = has_column(r, "runs", "kernel") ?
		"SELECT run_id, scenario, order_name, mode, devices, links, status, "
		"makespan_ns, seed, workers, kernel FROM runs ORDER BY run_id" :
		"SELECT run_id, scenario, order_name, mode, devices, links, status, "
		"makespan_ns, seed, workers, '' FROM runs ORDER BY run_id";

	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return rp_err(r, -EINVAL, "cannot read the runs: %s", sqlite3_errmsg(r->db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct run_row *row;

		if (r->nruns == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct run_row *n = realloc(r->runs, ncap * sizeof(*n));

			if (!n) {
				ret = rp_err(r, -ENOMEM, "out of memory");
				goto out;
			}
			r->runs = n;
			cap = ncap;
		}
		row = &r->runs[r->nruns++];
		row->id = sqlite3_column_int64(st, 0);
		row->scenario = dup_text(st, 1);
		row->order = dup_text(st, 2);
		row->mode = dup_text(st, 3);
		row->devices = sqlite3_column_int64(st, 4);
		row->links = sqlite3_column_int64(st, 5);
		row->status = dup_text(st, 6);
		row->makespan = column_num(st, 7);
		row->seed = sqlite3_column_int64(st, 8);
		row->workers = sqlite3_column_int64(st, 9);
		row->kernel = dup_text(st, 10);
		row->metric_makespan = row->lower_bound = NAN;
		row->probe = row->suspend = row->resume = row->wall = NAN;
		if (!row->scenario || !row->order || !row->mode || !row->status || !row->kernel) {
			ret = rp_err(r, -ENOMEM, "out of memory");
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		ret = rp_err(r, -EINVAL, "cannot read the runs: %s", sqlite3_errmsg(r->db));
out:
	sqlite3_finalize(st);
	if (!ret)
		ret = read_metrics(r);
	return ret ? ret : read_content(r);
}

static int select_run(struct report *r, const char *path, int64_t run)
{
	if (run < 0) {
		r->sel = r->nruns ? &r->runs[r->nruns - 1] : NULL;
		return 0;
	}
	r->sel = find_run(r, run);
	if (!r->sel)
		return rp_err(r, -EINVAL, "%s: no run %lld (the database holds %zu run%s%s)", path,
			       (long long)run, r->nruns, r->nruns == 1 ? "" : "s",
			       r->nruns ? "; see its runs table" : "");
	return 0;
}

/*
 * Events are only drawn from a run whose log dlsim check's verification
 * accepts (times in 0..2^62, ids in range, ...): a tampered or damaged log
 * is refused (the chosen run) or left out (the other traced runs), so that
 * no corrupt value reaches the arithmetic of the plots.
 */
static int run_sound(struct report *r, int64_t id)
{
	struct dl_check_result res;
	int rc = dl_check_verify(r->db, id, &res);

	snprintf(r->corrupt, sizeof(r->corrupt), "%s", rc == DL_CHECK_CORRUPT ? res.corrupt_first :
		 rc < 0 ? "cannot be read" : "");
	return rc == DL_CHECK_DONE;
}

/* The chosen run's phases, what each waited for and the critical path. */
static int read_timeline(struct report *r)
{
	int ret;

	if (!r->sel)
		return 0;
	if (r->sel->id != r->verified_run && !run_sound(r, r->sel->id))
		return rp_err(r, -EBADMSG, "run %lld: corrupt log (%s); not drawn ('dlsim check"
			      " --run %lld' lists the problems)", (long long)r->sel->id, r->corrupt,
			      (long long)r->sel->id);
	ret = tl_read(r->db, r->sel->id, 0, &r->tl, r->err, r->errlen);
	if (!ret)
		ret = tl_analyse(r->db, &r->tl, r->stop, r->err, r->errlen);
	if (ret)
		return ret;
	r->have_tl = 1;
	return 0;
}

/* The newest twin of run ID (runs.twin_of = ID), or the run ID is a twin of; 0: none. */
static int64_t twin_of(struct report *r, int64_t id, int *dir)
{
	static const char *const sql[] = {
		"SELECT run_id FROM runs WHERE twin_of = ?1 ORDER BY run_id DESC LIMIT 1",
		"SELECT twin_of FROM runs WHERE run_id = ?1 AND twin_of IS NOT NULL",
	};
	int64_t got = 0;

	if (!has_column(r, "runs", "twin_of"))
		return 0;
	for (int q = 0; q < 2 && !got; q++) {
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(r->db, sql[q], -1, &st, NULL) != SQLITE_OK)
			return 0;
		sqlite3_bind_int64(st, 1, id);
		if (sqlite3_step(st) == SQLITE_ROW) {
			got = sqlite3_column_int64(st, 0);
			*dir = q ? -1 : 1;
		}
		sqlite3_finalize(st);
	}
	return got;
}

/*
 * The run drawn beside the chosen one: BESIDE (a run of the same scenario
 * content, else an error), or with 0 its twin when it has one of the same
 * content and a sound log (else none, silently); -1: none.
 */
static int read_beside(struct report *r, int64_t beside)
{
	const struct run_row *o = NULL;
	int dir = 0, ret;

	if (!r->sel || !r->have_tl || beside < 0)
		return 0;
	if (beside > 0) {
		o = find_run(r, beside);
		if (!o)
			return rp_err(r, -EINVAL, "--beside %lld: no such run", (long long)beside);
		if (o == r->sel)
			return rp_err(r, -EINVAL, "--beside %lld: that is the run drawn (--run); name "
				      "another run of its scenario", (long long)beside);
		if (!rp_same_scenario(r->sel, o))
			return rp_err(r, -EINVAL, "--beside %lld: it ran another scenario than run %lld "
				      "(other name or other devices and links); only runs of the same "
				      "scenario content share an axis", (long long)beside,
				      (long long)r->sel->id);
		if (!run_sound(r, o->id))
			return rp_err(r, -EBADMSG, "--beside %lld: corrupt log (%s)", (long long)o->id,
				      r->corrupt);
		r->other_is_twin = twin_of(r, r->sel->id, &dir) == o->id ? dir : 0;
	} else {
		int64_t id = twin_of(r, r->sel->id, &dir);

		o = id ? find_run(r, id) : NULL;
		if (!o || o == r->sel || !rp_same_scenario(r->sel, o) || !run_sound(r, o->id))
			return 0;
		r->other_is_twin = dir;
	}
	ret = tl_read(r->db, o->id, 0, &r->tl2, r->err, r->errlen);
	if (ret)
		return ret;
	r->other = o;
	return 0;
}

/* ---- statistics ------------------------------------------------------- */

void rp_acc_add(struct stat_acc *a, double v)
{
	if (isnan(v))
		return;
	a->n++;
	a->sum += v;
	a->sq += v * v;
}

double rp_acc_mean(const struct stat_acc *a)
{
	return a->n ? a->sum / a->n : NAN;
}

/* Sample standard deviation; 0 for a single value. */
double rp_acc_sd(const struct stat_acc *a)
{
	double m, var;

	if (!a->n)
		return NAN;
	if (a->n < 2)
		return 0;
	m = a->sum / a->n;
	var = (a->sq - a->n * m * m) / (a->n - 1);
	return var > 0 ? sqrt(var) : 0;
}

int rp_create_file(const char *path)
{
	if (unlink(path) != 0 && errno != ENOENT)
		return -1;
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

FILE *rp_open_out(struct report *r, const char *name, char *path, size_t pathlen)
{
	FILE *f;
	int fd;

	if ((size_t)snprintf(path, pathlen, "%s/%s", r->outdir, name) >= pathlen) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = rp_create_file(path);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

int rp_close_out(struct report *r, FILE *f, const char *path)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return rp_err(r, -EIO, "%s: write failed: %s", path, strerror(errno));
	return 0;
}

/* ---- Chrome trace files ----------------------------------------------- */

static int write_trace_file(struct report *r, const struct tl_run *t, const char *scenario, const char *name)
{
	struct tl_trace_opts o = { .max_devices = r->trace_devices, .per_device = r->trace_per_device,
				   .gzip = !r->trace_plain, .stop = r->stop };
	int ret;
	char path[PATH_MAX];
	size_t n = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", r->outdir, name) >= sizeof(path))
		return rp_err(r, -EIO, "%s/%s: path too long", r->outdir, name);
	errno = 0;
	ret = tl_write_trace(t, scenario, &o, path, &n);
	if (ret == -EINTR)
		return rp_err(r, -EINTR, "interrupted");
	if (ret)
		return rp_err(r, -EIO, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
	if (t == &r->tl)
		r->trace_devs = n;
	return 0;
}

/* trace.json(.gz) as a hard link to NAME (the same bytes, written once); -1 when links fail. */
static int link_trace(struct report *r, const char *name)
{
	char from[PATH_MAX], to[PATH_MAX];

	if ((size_t)snprintf(from, sizeof(from), "%s/%s", r->outdir, name) >= sizeof(from) ||
	    (size_t)snprintf(to, sizeof(to), "%s/trace%s", r->outdir, rp_trace_ext(r)) >= sizeof(to))
		return -1;
	if (unlink(to) != 0 && errno != ENOENT)
		return -1;
	return link(from, to) == 0 ? 0 : -1;
}

const char *rp_trace_ext(const struct report *r)
{
	return r->trace_plain ? ".json" : ".json.gz";
}

static int write_run_trace(struct report *r, const struct run_row *row)
{
	struct tl_run t, *tp = row == r->sel ? &r->tl : &t;
	char name[64], main[64];
	int ret = 0;

	if (tp != &r->tl) {
		if (!run_sound(r, row->id))
			return 0;       /* no trace file for a corrupt run */
		ret = tl_read(r->db, row->id, 0, tp, r->err, r->errlen);
		if (!ret)
			ret = tl_analyse(r->db, tp, r->stop, r->err, r->errlen);
	}
	snprintf(name, sizeof(name), "trace-%lld%s", (long long)row->id, rp_trace_ext(r));
	snprintf(main, sizeof(main), "trace%s", rp_trace_ext(r));
	if (!ret)
		ret = write_trace_file(r, tp, row->scenario, name);
	if (!ret && row == r->sel && link_trace(r, name))
		ret = write_trace_file(r, tp, row->scenario, main);
	if (tp != &r->tl)
		tl_free(tp);
	if (!ret)
		r->traced[r->ntraced++] = row->id;
	return ret;
}

/* trace.json(.gz) for the chosen run; trace-<run_id> for it and the newest DL_REPORT_TRACE_RUNS runs. */
static int write_traces(struct report *r)
{
	size_t first = r->nruns > DL_REPORT_TRACE_RUNS ? r->nruns - DL_REPORT_TRACE_RUNS : 0;
	int ret = 0;

	if (r->sel && (size_t)(r->sel - r->runs) < first)
		ret = write_run_trace(r, r->sel);
	for (size_t i = r->nruns; !ret && !rp_stopped(r) && i-- > first;)
		ret = write_run_trace(r, &r->runs[i]);
	return ret;
}

/* ---- driver ----------------------------------------------------------- */

/* mkdir -p @path. */
static int make_dirs(struct report *r, const char *path)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; ; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = '\0';
			if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
				return rp_err(r, -EIO, "%s: cannot create: %s", tmp, strerror(errno));
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

int dl_report_default_outdir(const char *db, char *buf, size_t len)
{
	const char *slash = strrchr(db, '/'), *base = slash ? slash + 1 : db;
	const char *dot = strrchr(base, '.');
	int stem = (int)(dot && dot != base ? (size_t)(dot - base) : strlen(base)), n;

	if (slash)
		n = snprintf(buf, len, "%.*s%.*s-report", (int)(base - db), db, stem, base);
	else
		n = snprintf(buf, len, "%.*s-report", stem, base);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The first file of DIR that says it is a source folder (C, CMake), into WHICH; 0 if none. */
static int source_folder(const char *dir, char *which, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		found = !strcmp(e->d_name, "CMakeLists.txt") ||
			(n > 2 && e->d_name[n - 2] == '.' && (e->d_name[n - 1] == 'c' || e->d_name[n - 1] == 'h'));
		if (found)
			snprintf(which, len, "%s", e->d_name);
	}
	closedir(d);
	return found;
}

/*
 * Whether DIR was written by dlsim report: it holds RP_MARKER, or (a report
 * from before the marker) an index.html that begins as ours does.
 */
static int report_folder(const char *dir)
{
	static const char head[] = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
				   "<title>dlsim report</title>";
	char path[PATH_MAX], buf[sizeof(head)];
	struct stat sb;
	FILE *f;
	int ours;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, RP_MARKER) >= sizeof(path))
		return 0;
	if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		return 1;
	if ((size_t)snprintf(path, sizeof(path), "%s/index.html", dir) >= sizeof(path) ||
	    lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || !(f = fopen(path, "r")))
		return 0;
	ours = fread(buf, 1, sizeof(head) - 1, f) == sizeof(head) - 1 && !memcmp(buf, head, sizeof(head) - 1);
	fclose(f);
	return ours;
}

/* The first entry of DIR other than "." and "..", into WHICH; 0 if DIR is empty or missing. */
static int folder_entry(const char *dir, char *which, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(which, len, "%s", e->d_name);
			found = 1;
		}
	closedir(d);
	return found;
}

/*
 * A report's folder being written: ".BASE" RP_STAGE "PID-XXXXXX" beside
 * BASE (or RP_STAGE "PID-XXXXXX" inside it, stage_outdir()).
 */
#define RP_STAGE ".dlsim-report-"

static void remove_stale_stages(const char *parent, const char *prefix);

/*
 * A report writes twenty-odd files of fixed names: never into "/", and into
 * an existing folder only when it is empty, was written by dlsim report, or
 * FORCE says so.
 */
static int check_outdir(struct report *r, int force)
{
	char real[PATH_MAX], which[256];
	struct stat sb;

	if (stat(r->outdir, &sb) != 0)
		return errno == ENOENT ? 0 : rp_err(r, -EINVAL, "%s: %s", r->outdir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return rp_err(r, -EINVAL, "%s exists and is not a directory; choose another with --out",
			      r->outdir);
	if (realpath(r->outdir, real) && !strcmp(real, "/"))
		return rp_err(r, -EINVAL, "%s is the root directory: a report is never written there; "
			      "choose a folder of its own with --out", r->outdir);
	remove_stale_stages(r->outdir, RP_STAGE);   /* a killed report's, staged inside */
	if (force || report_folder(r->outdir) || !folder_entry(r->outdir, which, sizeof(which)))
		return 0;
	return rp_err(r, -EEXIST, "%s is not empty (%s) and was not written by dlsim report: choose a new "
		      "or empty folder with --out, or add --force to write into it", r->outdir, which);
}

static int set_outdir(struct report *r, const char *db, const char *outdir, int force)
{
	char which[256];
	int n = 0;

	if (outdir) {
		n = snprintf(r->outdir, sizeof(r->outdir), "%s", outdir);
		if (n < 0 || (size_t)n >= sizeof(r->outdir))
			n = -1;
	} else if (dl_report_default_outdir(db, r->outdir, sizeof(r->outdir))) {
		n = -1;
	}
	if (n < 0 || !r->outdir[0])
		return rp_err(r, -EINVAL, "output directory name too long or empty");
	if (source_folder(r->outdir, which, sizeof(which)))
		return rp_err(r, -EINVAL, "%s holds source files (%s): a report is never written into a "
			      "source folder; choose another with --out", r->outdir, which);
	return check_outdir(r, force);
}

/* ---- the output folder: written beside it, then moved into place ----- */


/* Remove folder @dir and the files in it (a report writes files only); -1 if anything stays. */
static int remove_stage(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    unlinkat(dirfd(d), e->d_name, 0) != 0)
			ret = -1;
	closedir(d);
	return rmdir(dir) == 0 ? ret : -1;
}

/*
 * The folders of reports of @base killed while writing (kill -9 leaves
 * them): their process is gone.  A report still writing is left alone.
 */
static void remove_stale_stages(const char *parent, const char *prefix)
{
	char path[PATH_MAX];
	DIR *d = opendir(parent);
	struct dirent *e;
	size_t n = strlen(prefix);

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, prefix, n) != 0)
			continue;
		pid = strtol(e->d_name + n, &end, 10);
		if (pid <= 0 || *end != '-' || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", parent, e->d_name) < sizeof(path))
			remove_stage(path);
	}
	closedir(d);
}

/* Whether folder @path has a POSIX ACL, which a folder made anew would not carry over. */
static bool has_acl(const char *path)
{
	return getxattr(path, "system.posix_acl_access", NULL, 0) >= 0 ||
	       getxattr(path, "system.posix_acl_default", NULL, 0) >= 0;
}

/*
 * Make r->outdir a new folder beside r->final, the folder asked for (its
 * parents created), into which every file is written; finish_outdir()
 * moves it into place.  Stale folders of killed reports are removed first.
 */
static int stage_outdir(struct report *r)
{
	char path[PATH_MAX], parent[PATH_MAX], prefix[NAME_MAX + 32], *slash;
	struct stat fs, ps;
	const char *base;
	bool inside, exists;
	mode_t um;
	size_t n;

	snprintf(r->final, sizeof(r->final), "%s", r->outdir);
	r->final_mode = -1;
	/* an existing folder by its real path: ".", "..", trailing slashes, symlinks */
	if (!realpath(r->final, path))
		snprintf(path, sizeof(path), "%s", r->final);
	for (n = strlen(path); n > 1 && path[n - 1] == '/';)
		path[--n] = '\0';
	slash = strrchr(path, '/');
	if (!slash) {
		snprintf(parent, sizeof(parent), ".");
		base = path;
	} else {
		snprintf(parent, sizeof(parent), "%.*s", slash == path ? 1 : (int)(slash - path), path);
		base = slash + 1;
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return rp_err(r, -EINVAL, "%s: not a folder name a report can be written to", r->final);
	if (make_dirs(r, parent))
		return -EIO;
	/* a prefix cut short would match other folders' stages: too long is an error */
	n = (size_t)snprintf(prefix, sizeof(prefix), ".%s" RP_STAGE, base);
	if (n >= sizeof(prefix))
		return rp_err(r, -EINVAL, "%s: folder name too long", r->final);
	remove_stale_stages(parent, prefix);
	/*
	 * Beside DIR, on its file system; inside an existing DIR that is a
	 * mount point, whose parent cannot be written or that has an ACL
	 * (finish_outdir() then moves the files in one at a time).
	 */
	exists = stat(path, &fs) == 0 && S_ISDIR(fs.st_mode);
	inside = exists && (stat(parent, &ps) != 0 || ps.st_dev != fs.st_dev || access(parent, W_OK) != 0 ||
			    has_acl(path));
again:
	if (inside)
		n = (size_t)snprintf(r->outdir, sizeof(r->outdir), "%s/" RP_STAGE "%ld-XXXXXX", path,
				     (long)getpid());
	else
		n = (size_t)snprintf(r->outdir, sizeof(r->outdir), "%s/%s%ld-XXXXXX", parent, prefix,
				     (long)getpid());
	if (n >= sizeof(r->outdir) || !mkdtemp(r->outdir)) {
		snprintf(r->outdir, sizeof(r->outdir), "%s", r->final);
		return rp_err(r, -EIO, "%s: cannot create a folder beside it to write the report in: %s",
			      r->final, strerror(errno ? errno : ENAMETOOLONG));
	}
	if (inside)
		return 0;
	/*
	 * The staged folder replaces an existing one: it takes that folder's
	 * owner, group and mode (--force into a 0700 folder, a folder shared
	 * with a group), so that the folder stays what it was.  Where they
	 * cannot be given (another owner, not root), the files are moved in
	 * one at a time instead, into the folder itself.
	 */
	if (exists && ((fs.st_uid != geteuid() || fs.st_gid != getegid()) &&
		       chown(r->outdir, fs.st_uid, fs.st_gid) != 0)) {
		rmdir(r->outdir);
		inside = true;
		goto again;
	}
	um = umask(0);
	umask(um);
	/* as mkdir(0755) would have made it; or, once written, as the folder it replaces is */
	chmod(r->outdir, 0755 & ~um);
	r->final_mode = exists ? (int)(fs.st_mode & 07777) : -1;
	return 0;
}

/* Every entry of @from that @to lacks, moved into @to. */
static void carry_over(const char *from, const char *to)
{
	DIR *d = opendir(from);
	int tfd = open(to, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	struct stat sb;

	while (d && tfd >= 0 && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    fstatat(tfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
			renameat(dirfd(d), e->d_name, tfd, e->d_name);
	if (d)
		closedir(d);
	if (tfd >= 0)
		close(tfd);
}

/*
 * The staged folder into place as r->final.  A new or empty folder is
 * replaced by it in one rename; a folder with files (a report's, or any
 * with --force) is swapped with it in one exchange, and its files that the
 * new report did not write are carried over (so --force keeps them, as it
 * always did); the old copies of the files written anew are removed.
 * Where the file system cannot exchange (or r->final is the working
 * directory), the files are moved in one at a time.
 */
static int finish_outdir(struct report *r)
{
	struct stat a, b;
	int ret = 0;

	if (r->final_mode >= 0)
		chmod(r->outdir, (mode_t)r->final_mode);
	if (rename(r->outdir, r->final) == 0)
		goto done;
	/* EXDEV: staged inside a mount point, whose name is on the file system above */
	if (errno != EEXIST && errno != ENOTEMPTY && errno != EBUSY && errno != EINVAL && errno != EXDEV)
		return rp_err(r, -EIO, "%s: cannot move the report into place: %s", r->final,
			      strerror(errno));
	if (!(stat(r->final, &a) == 0 && stat(".", &b) == 0 && a.st_dev == b.st_dev &&
	      a.st_ino == b.st_ino) &&
	    renameat2(AT_FDCWD, r->outdir, AT_FDCWD, r->final, RENAME_EXCHANGE) == 0) {
		carry_over(r->outdir, r->final);
	} else {
		DIR *d = opendir(r->outdir);
		int tfd = open(r->final, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct dirent *e;

		while (!ret && d && tfd >= 0 && (e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			    renameat(dirfd(d), e->d_name, tfd, e->d_name) != 0)
				ret = rp_err(r, -EIO, "%s/%s: cannot move into place: %s", r->final,
					     e->d_name, strerror(errno));
		if (!d || tfd < 0)
			ret = rp_err(r, -EIO, "%s: %s", r->final, strerror(errno));
		if (d)
			closedir(d);
		if (tfd >= 0)
			close(tfd);
	}
	if (!ret && remove_stage(r->outdir))
		fprintf(stderr, "dlsim report: %s: could not remove the old report's files\n", r->outdir);
done:
	if (!ret)
		snprintf(r->outdir, sizeof(r->outdir), "%s", r->final);
	return ret;
}

/* RP_MARKER, which lets a later report write into this folder again. */
static int mark_outdir(struct report *r)
{
	char path[PATH_MAX];
	FILE *f = rp_open_out(r, RP_MARKER, path, sizeof(path));

	if (!f)
		return rp_err(r, -EIO, "%s/%s: %s", r->outdir, RP_MARKER, strerror(errno));
	fputs("This folder was written by dlsim report, which may write into it again.\n", f);
	return rp_close_out(r, f, path);
}

static void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nruns; i++) {
		free(r->runs[i].scenario);
		free(r->runs[i].order);
		free(r->runs[i].mode);
		free(r->runs[i].status);
		free(r->runs[i].kernel);
	}
	free(r->runs);
	free(r->groups);
	free(r->gantt_row);
	tl_free(&r->tl);
	tl_free(&r->tl2);
	sqlite3_close(r->db);
}

int dl_report_write_opts(const char *db, const struct dl_report_opts *o, char *err, size_t errlen)
{
	char own_err[512];
	struct report r = { .err = err, .errlen = errlen, .data_only = o->data_only };
	int ret;

	if (!err || !errlen) {
		r.err = own_err;
		r.errlen = sizeof(own_err);
	}
	r.err[0] = '\0';
	r.trace_devices = o->trace_devices ? o->trace_devices : DL_REPORT_TRACE_DEVICES;
	r.trace_per_device = o->trace_per_device;
	r.trace_plain = o->trace_plain;
	r.verified_run = o->verified_run > 0 ? o->verified_run : -1;
	r.stop = o->stop;
	ret = open_db(&r, db);
	if (!ret)
		ret = check_tables(&r, db);
	if (!ret)
		ret = read_runs(&r);
	if (!ret)
		ret = select_run(&r, db, o->run);
	if (!ret)
		ret = read_timeline(&r);
	if (!ret)
		ret = read_beside(&r, o->beside);
	if (!ret)
		ret = set_outdir(&r, db, o->outdir, o->force);
	if (!ret && !(ret = stage_outdir(&r))) {
		ret = mark_outdir(&r);
		if (!ret)
			ret = write_traces(&r);
		dl_test_hook("report-files");   /* tests: killed with some files written */
		if (!ret && !rp_stopped(&r))
			ret = rp_write_plots(&r);
		if (!ret && !rp_stopped(&r))
			ret = rp_write_index(&r, db);
		/* Ctrl-C before the folder is moved into place: nothing of this report stays */
		if (!ret && rp_stopped(&r))
			ret = -EINTR;
		if (!ret)
			ret = finish_outdir(&r);
		if (ret && strcmp(r.outdir, r.final) != 0)
			remove_stage(r.outdir);  /* nothing new is left, the old folder as it was */
	}
	if (ret && rp_stopped(&r)) {
		ret = -EINTR;
		snprintf(r.err, r.errlen, "interrupted: nothing of this report was kept%s%s%s",
			 r.final[0] ? " (" : "", r.final, r.final[0] ? " as it was)" : "");
	}
	if (!ret && r.plot_ret) {
		ret = r.plot_ret;
		snprintf(r.err, r.errlen, "%s", r.plot_err);
	}
	report_free(&r);
	return ret;
}

int dl_report_write_run(const char *db, const char *outdir, int64_t run, char *err, size_t errlen)
{
	struct dl_report_opts o = { .outdir = outdir, .run = run };

	return dl_report_write_opts(db, &o, err, errlen);
}

int dl_report_write(const char *db, const char *outdir, char *err, size_t errlen)
{
	return dl_report_write_run(db, outdir, -1, err, errlen);
}
