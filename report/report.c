/*
 * report.c - the report writer behind `dlsim report` (see report.h).
 *
 * Three steps: read the runs table, their makespan metrics and the newest
 * run's suspend/resume events into memory; write makespan.tsv and
 * gantt.tsv and run report/makespan.gp and report/gantt.gp on them, once
 * for PNG and once for SVG; write trace.json (Chrome trace events, newest
 * run) and trace-<run_id>.json for the newest DL_REPORT_TRACE_RUNS runs
 * (timeline.c); write index.html with the interactive timeline.  The database is opened
 * read-only and every value is bound as a parameter.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "report/report.h"
#include "report/timeline.h"

#ifndef DLSIM_SOURCE_DIR
#define DLSIM_SOURCE_DIR "."
#endif

#define NS_PER_MS 1e6
/* Longest name written into a data file (bytes); plots stay readable. */
#define LABEL_MAX 48

enum pm_op { PM_SUSPEND = 1, PM_RESUME = 2 };

struct run_row {
	int64_t id, devices, links;
	char *scenario, *order, *mode, *status;
	/* NAN when the database has no value. */
	double makespan, metric_makespan, lower_bound, probe, suspend, resume;
};

struct gantt_dev {
	int64_t dev_id;
	char *name;
	int64_t open_t[3];	/* start time of the open suspend/resume, or -1 */
	int64_t total[3];	/* summed phase durations per op */
};

struct gantt_seg {
	size_t row;
	enum pm_op op;
	char *phase;
	int64_t t0, t1;
};

struct report {
	sqlite3 *db;
	char outdir[PATH_MAX];
	char *err;
	size_t errlen;
	struct run_row *runs;
	size_t nruns;
	int64_t gantt_run;	/* newest run, -1 if none */
	struct gantt_dev *devs;
	size_t ndevs;
	struct gantt_seg *segs;
	size_t nsegs, segcap;
	int makespan_plotted, gantt_plotted;
	struct tl_run tl;	/* newest run, every device, for trace.json and index.html */
	int have_tl;
	size_t ntraces;	/* trace-<id>.json written for runs[nruns - ntraces .. nruns - 1] */
};

static int set_err(struct report *r, int code, const char *fmt, ...)
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

static int open_db(struct report *r, const char *path)
{
	struct stat sb;

	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return set_err(r, -ENOENT, "%s: no such database file", path);
	if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return set_err(r, -EINVAL, "%s: cannot open: %s", path, sqlite3_errmsg(r->db));
	sqlite3_busy_timeout(r->db, 5000);
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
		return set_err(r, -EINVAL, "%s: not a dlsim database (%s)", path, sqlite3_errmsg(r->db));
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]) && !ret; i++) {
		sqlite3_bind_text(st, 1, need[i], -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_ROW)
			ret = set_err(r, -EINVAL, "%s: not a dlsim database (no table '%s'; expected the "
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
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "SELECT run_id, name, value FROM metrics WHERE name IN "
			       "('makespan_ns', 'lower_bound_ns', 'probe.makespan_ns', "
			       "'suspend.makespan_ns', 'resume.makespan_ns')", -1, &st, NULL) != SQLITE_OK)
		return set_err(r, -EINVAL, "cannot read the metrics: %s", sqlite3_errmsg(r->db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct run_row *row = find_run(r, sqlite3_column_int64(st, 0));
		const char *name = (const char *)sqlite3_column_text(st, 1);
		double v = column_num(st, 2);
		double *slot;

		if (!row || !name)
			continue;
		if (!strcmp(name, "makespan_ns"))
			slot = &row->metric_makespan;
		else if (!strcmp(name, "lower_bound_ns"))
			slot = &row->lower_bound;
		else if (!strcmp(name, "probe.makespan_ns"))
			slot = &row->probe;
		else if (!strcmp(name, "suspend.makespan_ns"))
			slot = &row->suspend;
		else
			slot = &row->resume;
		if (isnan(*slot))
			*slot = v;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return set_err(r, -EINVAL, "cannot read the metrics: %s", sqlite3_errmsg(r->db));
	/* runs.makespan_ns first; the metric when the runs row has none. */
	for (size_t i = 0; i < r->nruns; i++)
		if (isnan(r->runs[i].makespan))
			r->runs[i].makespan = r->runs[i].metric_makespan;
	return 0;
}

static int read_runs(struct report *r)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(r->db, "SELECT run_id, scenario, order_name, mode, devices, links, status, "
			       "makespan_ns FROM runs ORDER BY run_id", -1, &st, NULL) != SQLITE_OK)
		return set_err(r, -EINVAL, "cannot read the runs: %s", sqlite3_errmsg(r->db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct run_row *row;

		if (r->nruns == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct run_row *n = realloc(r->runs, ncap * sizeof(*n));

			if (!n) {
				ret = set_err(r, -ENOMEM, "out of memory");
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
		row->metric_makespan = row->lower_bound = NAN;
		row->probe = row->suspend = row->resume = NAN;
		if (!row->scenario || !row->order || !row->mode || !row->status) {
			ret = set_err(r, -ENOMEM, "out of memory");
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		ret = set_err(r, -EINVAL, "cannot read the runs: %s", sqlite3_errmsg(r->db));
out:
	sqlite3_finalize(st);
	return ret ? ret : read_metrics(r);
}

static struct gantt_dev *find_dev(struct report *r, int64_t dev_id)
{
	size_t lo = 0, hi = r->ndevs;

	/* devs is sorted by dev_id (ORDER BY in read_gantt_devices). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->devs[mid].dev_id == dev_id)
			return &r->devs[mid];
		if (r->devs[mid].dev_id < dev_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int add_seg(struct report *r, size_t row, enum pm_op op, const char *phase, int64_t t0, int64_t t1)
{
	struct gantt_seg *s;

	if (r->nsegs == r->segcap) {
		size_t ncap = r->segcap ? 2 * r->segcap : 64;
		struct gantt_seg *n = realloc(r->segs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->segs = n;
		r->segcap = ncap;
	}
	s = &r->segs[r->nsegs];
	s->phase = strdup(phase);
	if (!s->phase)
		return -ENOMEM;
	s->row = row;
	s->op = op;
	s->t0 = t0;
	s->t1 = t1;
	r->nsegs++;
	return 0;
}

/* The first DL_REPORT_GANTT_DEVICES devices of the newest run, by dev_id. */
static int read_gantt_devices(struct report *r)
{
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(r->db, "SELECT dev_id, name FROM devices WHERE run_id = ?1 "
			       "ORDER BY dev_id LIMIT ?2", -1, &st, NULL) != SQLITE_OK)
		return set_err(r, -EINVAL, "cannot read the devices: %s", sqlite3_errmsg(r->db));
	r->devs = calloc(DL_REPORT_GANTT_DEVICES, sizeof(*r->devs));
	if (!r->devs) {
		sqlite3_finalize(st);
		return set_err(r, -ENOMEM, "out of memory");
	}
	sqlite3_bind_int64(st, 1, r->gantt_run);
	sqlite3_bind_int(st, 2, DL_REPORT_GANTT_DEVICES);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && r->ndevs < DL_REPORT_GANTT_DEVICES) {
		struct gantt_dev *d = &r->devs[r->ndevs];

		d->dev_id = sqlite3_column_int64(st, 0);
		d->name = dup_text(st, 1);
		if (!d->name) {
			ret = set_err(r, -ENOMEM, "out of memory");
			break;
		}
		d->open_t[PM_SUSPEND] = d->open_t[PM_RESUME] = -1;
		r->ndevs++;
	}
	if (!ret && rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = set_err(r, -EINVAL, "cannot read the devices: %s", sqlite3_errmsg(r->db));
	sqlite3_finalize(st);
	return ret;
}

/*
 * Pairs each device's X_start with its next X_end (X: suspend or resume).
 * A device runs its PM phases one after another, so one open start per op
 * suffices; an end without a start is ignored.
 */
static int read_gantt(struct report *r)
{
	sqlite3_stmt *st;
	int rc, ret;

	r->gantt_run = r->nruns ? r->runs[r->nruns - 1].id : -1;
	if (r->gantt_run < 0)
		return 0;
	ret = read_gantt_devices(r);
	if (ret || !r->ndevs)
		return ret;
	if (sqlite3_prepare_v2(r->db, "SELECT dev_id, kind, phase, t_ns FROM events WHERE run_id = ?1 "
			       "AND kind IN ('suspend_start', 'suspend_end', 'resume_start', 'resume_end') "
			       "AND dev_id <= ?2 ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
		return set_err(r, -EINVAL, "cannot read the events: %s", sqlite3_errmsg(r->db));
	sqlite3_bind_int64(st, 1, r->gantt_run);
	sqlite3_bind_int64(st, 2, r->devs[r->ndevs - 1].dev_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct gantt_dev *d = find_dev(r, sqlite3_column_int64(st, 0));
		const char *kind = (const char *)sqlite3_column_text(st, 1);
		const unsigned char *phase = sqlite3_column_text(st, 2);
		int64_t t = sqlite3_column_int64(st, 3);
		enum pm_op op;
		int start;

		if (!d || !kind)
			continue;
		op = !strncmp(kind, "suspend", 7) ? PM_SUSPEND : PM_RESUME;
		start = strstr(kind, "_start") != NULL;
		if (start) {
			d->open_t[op] = t;
		} else if (d->open_t[op] >= 0) {
			if (add_seg(r, (size_t)(d - r->devs), op, phase ? (const char *)phase : "",
				    d->open_t[op], t)) {
				ret = set_err(r, -ENOMEM, "out of memory");
				break;
			}
			d->total[op] += t - d->open_t[op];
			d->open_t[op] = -1;
		}
	}
	if (!ret && rc != SQLITE_DONE)
		ret = set_err(r, -EINVAL, "cannot read the events: %s", sqlite3_errmsg(r->db));
	sqlite3_finalize(st);
	return ret;
}

/* ---- data files ------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at S, 0 if S does not start one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2)
		n = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3;
	else if ((s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/*
 * Writes S as one data-file field: control characters (tab, newline, ...)
 * become spaces, '"' becomes '\'' (gnuplot would start a quoted field),
 * invalid UTF-8 becomes '?', and it is cut to LABEL_MAX bytes on a
 * character boundary.  An empty field would shift the columns: "-".
 */
static void put_field(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0;

	if (!*p) {
		fputc('-', f);
		return;
	}
	while (*p) {
		size_t n = utf8_len(p);

		if (used + (n ? n : 1) > LABEL_MAX) {
			fputs("...", f);
			return;
		}
		if (!n) {
			fputc('?', f);
			n = 1;
		} else if (n == 1 && (*p < 0x20 || *p == 0x7f)) {
			fputc(' ', f);
		} else if (*p == '"') {
			fputc('\'', f);
		} else {
			fwrite(p, 1, n, f);
		}
		used += n;
		p += n;
	}
}

static void put_ms(FILE *f, double ns)
{
	if (isnan(ns))
		fputs("\t-", f);
	else
		fprintf(f, "\t%.6f", ns / NS_PER_MS);
}

static FILE *open_out(struct report *r, const char *name, char *path, size_t pathlen)
{
	FILE *f;

	if ((size_t)snprintf(path, pathlen, "%s/%s", r->outdir, name) >= pathlen) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	f = fopen(path, "w");
	return f;
}

static int close_out(struct report *r, FILE *f, const char *path)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return set_err(r, -EIO, "%s: write failed: %s", path, strerror(errno));
	return 0;
}

/* makespan.tsv: newest DL_REPORT_PLOT_RUNS runs.  *rows: rows with data. */
static int write_makespan_data(struct report *r, size_t *rows)
{
	char path[PATH_MAX];
	size_t first = r->nruns > DL_REPORT_PLOT_RUNS ? r->nruns - DL_REPORT_PLOT_RUNS : 0;
	FILE *f = open_out(r, "makespan.tsv", path, sizeof(path));

	*rows = 0;
	if (!f)
		return set_err(r, -EIO, "%s/makespan.tsv: %s", r->outdir, strerror(errno));
	fputs("# run_id\tlabel\tmakespan_ms\tlower_bound_ms\tprobe_ms\tsuspend_ms\tresume_ms\n", f);
	for (size_t i = first; i < r->nruns; i++) {
		const struct run_row *row = &r->runs[i];

		fprintf(f, "%lld\t#%lld ", (long long)row->id, (long long)row->id);
		put_field(f, row->order);
		put_ms(f, row->makespan);
		put_ms(f, row->lower_bound);
		put_ms(f, row->probe);
		put_ms(f, row->suspend);
		put_ms(f, row->resume);
		fputc('\n', f);
		if (!isnan(row->makespan) || !isnan(row->lower_bound) || !isnan(row->probe) ||
		    !isnan(row->suspend) || !isnan(row->resume))
			(*rows)++;
	}
	return close_out(r, f, path);
}

/* gantt.tsv: one line per suspend or resume phase of a device. */
static int write_gantt_data(struct report *r)
{
	static const char *const op_name[] = { "", "suspend", "resume" };
	char path[PATH_MAX];
	FILE *f = open_out(r, "gantt.tsv", path, sizeof(path));

	if (!f)
		return set_err(r, -EIO, "%s/gantt.tsv: %s", r->outdir, strerror(errno));
	fputs("# row\tdevice\top\top_name\tphase\tstart_ms\tend_ms\n", f);
	for (size_t i = 0; i < r->nsegs; i++) {
		const struct gantt_seg *s = &r->segs[i];

		fprintf(f, "%zu\t", s->row);
		put_field(f, r->devs[s->row].name);
		fprintf(f, "\t%d\t%s\t", (int)s->op, op_name[s->op]);
		put_field(f, s->phase);
		put_ms(f, (double)s->t0);
		put_ms(f, (double)s->t1);
		fputc('\n', f);
	}
	return close_out(r, f, path);
}

/* ---- gnuplot ---------------------------------------------------------- */

static const char *template_dir(void)
{
	const char *d = getenv("DLSIM_REPORT_DIR");

	return d && *d ? d : DLSIM_SOURCE_DIR "/report";
}

/*
 * Runs `gnuplot -e "datafile='NAME.tsv'; outfile='NAME.FMT'; fmt='FMT';
 * nrows=N" TEMPLATE` inside outdir, output appended to gnuplot.log.  Every
 * word of the -e string is ours: no quoting problem whatever the paths are.
 */
static int run_gnuplot(struct report *r, const char *name, const char *fmt, size_t nrows)
{
	char tmpl[PATH_MAX], expr[256], log[PATH_MAX];
	pid_t pid;
	int status, fd;

	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/%s.gp", template_dir(), name) >= sizeof(tmpl) ||
	    (size_t)snprintf(log, sizeof(log), "%s/gnuplot.log", r->outdir) >= sizeof(log))
		return set_err(r, -EIO, "%s: path too long", r->outdir);
	if (access(tmpl, R_OK) != 0)
		return set_err(r, -ECHILD, "%s: gnuplot template missing", tmpl);
	snprintf(expr, sizeof(expr), "datafile='%s.tsv'; outfile='%s.%s'; fmt='%s'; nrows=%zu",
		 name, name, fmt, fmt, nrows);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return set_err(r, -EIO, "%s: %s", log, strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fd);
		return set_err(r, -ECHILD, "cannot start gnuplot: %s", strerror(errno));
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (chdir(r->outdir) == 0)
			execlp("gnuplot", "gnuplot", "-e", expr, tmpl, (char *)NULL);
		_exit(127);
	}
	close(fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return set_err(r, -ECHILD, "gnuplot: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return set_err(r, -ECHILD, "gnuplot failed on %s (%s %d); see %s", tmpl,
			       WIFEXITED(status) ? "exit" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), log);
	return 0;
}

static int plot(struct report *r, const char *name, size_t nrows)
{
	int ret = run_gnuplot(r, name, "png", nrows);

	return ret ? ret : run_gnuplot(r, name, "svg", nrows);
}

/* ---- Chrome trace files ----------------------------------------------- */

static int write_trace_file(struct report *r, const struct tl_run *t, const char *scenario, const char *name)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", r->outdir, name) >= sizeof(path))
		return set_err(r, -EIO, "%s/%s: path too long", r->outdir, name);
	errno = 0;
	if (tl_write_trace(t, scenario, path))
		return set_err(r, -EIO, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
	return 0;
}

/*
 * trace.json for the newest run, trace-<run_id>.json for the newest
 * DL_REPORT_TRACE_RUNS runs.  The newest run's data stays in r->tl for
 * index.html.
 */
static int write_traces(struct report *r)
{
	size_t first = r->nruns > DL_REPORT_TRACE_RUNS ? r->nruns - DL_REPORT_TRACE_RUNS : 0;
	int ret;

	for (size_t i = r->nruns; i-- > first;) {
		const struct run_row *row = &r->runs[i];
		struct tl_run t, *tp = i == r->nruns - 1 ? &r->tl : &t;
		char name[64];

		ret = tl_read(r->db, row->id, 0, tp, r->err, r->errlen);
		if (ret)
			return ret;
		if (tp == &r->tl) {
			r->have_tl = 1;
			ret = write_trace_file(r, tp, row->scenario, "trace.json");
		}
		snprintf(name, sizeof(name), "trace-%lld.json", (long long)row->id);
		if (!ret)
			ret = write_trace_file(r, tp, row->scenario, name);
		if (tp != &r->tl)
			tl_free(tp);
		if (ret)
			return ret;
		r->ntraces++;
	}
	return 0;
}

/* ---- index.html ------------------------------------------------------- */

/* HTML-escapes S (& < > " '); text is otherwise passed through. */
static void put_html(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void put_html_ms(FILE *f, double ns)
{
	if (isnan(ns))
		fputs("<td class=\"n\">&ndash;</td>", f);
	else
		fprintf(f, "<td class=\"n\">%.3f</td>", ns / NS_PER_MS);
}

static void put_figure(FILE *f, const char *name, const char *caption)
{
	fprintf(f, "<figure><img src=\"%s.png\" alt=\"%s\"><figcaption>%s "
		   "(<a href=\"%s.svg\">SVG</a>, <a href=\"%s.tsv\">data</a>)</figcaption></figure>\n",
		name, caption, caption, name, name);
}

static void write_runs_table(struct report *r, FILE *f)
{
	fputs("<h2>Runs</h2>\n<table>\n<tr><th>run_id</th><th>scenario</th><th>order</th><th>mode</th>"
	      "<th>devices</th><th>links</th><th>status</th><th>makespan (ms)</th>"
	      "<th>lower bound (ms)</th><th>ratio</th></tr>\n", f);
	for (size_t i = 0; i < r->nruns; i++) {
		const struct run_row *row = &r->runs[i];

		fprintf(f, "<tr><td class=\"n\">%lld</td><td>", (long long)row->id);
		put_html(f, row->scenario);
		fputs("</td><td>", f);
		put_html(f, row->order);
		fputs("</td><td>", f);
		put_html(f, row->mode);
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td>",
			(long long)row->devices, (long long)row->links);
		put_html(f, row->status);
		fputs("</td>", f);
		put_html_ms(f, row->makespan);
		put_html_ms(f, row->lower_bound);
		if (!isnan(row->makespan) && !isnan(row->lower_bound) && row->lower_bound > 0)
			fprintf(f, "<td class=\"n\">%.3f</td>", row->makespan / row->lower_bound);
		else
			fputs("<td class=\"n\">&ndash;</td>", f);
		fputs("</tr>\n", f);
	}
	if (!r->nruns)
		fputs("<tr><td colspan=\"10\">no runs in this database</td></tr>\n", f);
	fputs("</table>\n", f);
}

static void write_devices_table(struct report *r, FILE *f)
{
	fprintf(f, "<h2>Suspend/resume of run %lld</h2>\n", (long long)r->gantt_run);
	if (r->gantt_plotted)
		put_figure(f, "gantt", "Per-device suspend and resume phases");
	if (!r->nsegs) {
		fputs("<p>No suspend/resume events logged for this run.</p>\n", f);
		return;
	}
	fprintf(f, "<table>\n<tr><th>row</th><th>dev_id</th><th>device</th><th>suspend (ms)</th>"
		   "<th>resume (ms)</th></tr>\n");
	for (size_t i = 0; i < r->ndevs; i++) {
		const struct gantt_dev *d = &r->devs[i];

		fprintf(f, "<tr><td class=\"n\">%zu</td><td class=\"n\">%lld</td><td>", i,
			(long long)d->dev_id);
		put_html(f, d->name);
		fputs("</td>", f);
		put_html_ms(f, (double)d->total[PM_SUSPEND]);
		put_html_ms(f, (double)d->total[PM_RESUME]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The interactive timeline of the newest run and the links to the trace files. */
static void write_timeline(struct report *r, FILE *f)
{
	size_t shown = r->tl.ndevs < DL_REPORT_TIMELINE_DEVICES ? r->tl.ndevs : DL_REPORT_TIMELINE_DEVICES;

	fprintf(f, "<h2>Timeline of run %lld</h2>\n", (long long)r->gantt_run);
	if (!r->have_tl || !r->tl.nsegs) {
		fputs("<p>No probe, unbind, suspend or resume events logged for this run.</p>\n", f);
		return;
	}
	fprintf(f, "<p>One row per device (the first %d devices by dev_id are drawn: %zu of this run's %zu), "
		   "one bar per probe, unbind and PM phase, coloured by phase; hover a bar for its device, "
		   "phase, start and duration.</p>\n", DL_REPORT_TIMELINE_DEVICES, shown, r->tl.total_devs);
	tl_write_html(&r->tl, DL_REPORT_TIMELINE_DEVICES, f);
	fputs("<p>Every device of the run as Chrome trace events, one track per worker: "
	      "<a href=\"trace.json\">trace.json</a> (open it in the Perfetto UI, ui.perfetto.dev, "
	      "or chrome://tracing).", f);
	if (r->ntraces) {
		fprintf(f, " Per run (newest %d runs):", DL_REPORT_TRACE_RUNS);
		for (size_t i = r->nruns; i-- > r->nruns - r->ntraces;)
			fprintf(f, " <a href=\"trace-%lld.json\">%lld</a>", (long long)r->runs[i].id,
				(long long)r->runs[i].id);
	}
	fputs("</p>\n", f);
}

static int write_index(struct report *r, const char *dbpath, const char *plot_err)
{
	char path[PATH_MAX];
	FILE *f = open_out(r, "index.html", path, sizeof(path));

	if (!f)
		return set_err(r, -EIO, "%s/index.html: %s", r->outdir, strerror(errno));
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>dlsim report</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
	      "table{border-collapse:collapse;margin:.5em 0 1.5em}\n"
	      "th,td{border:1px solid #bbb;padding:.2em .6em;text-align:left;white-space:pre-wrap}\n"
	      "th{background:#eee}\ntd.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	      "img{max-width:100%;border:1px solid #ddd}\nfigure{margin:1em 0}\n"
	      ".err{color:#a00}\n</style>\n</head>\n<body>\n<h1>dlsim report</h1>\n<p>Database: <code>", f);
	put_html(f, dbpath);
	fputs("</code></p>\n", f);
	if (plot_err) {
		fputs("<p class=\"err\">Plots incomplete: ", f);
		put_html(f, plot_err);
		fputs("</p>\n", f);
	}
	write_runs_table(r, f);
	fputs("<h2>Makespan</h2>\n", f);
	if (r->makespan_plotted)
		put_figure(f, "makespan", "Makespan per run and operation, with the lower bound");
	else
		fputs("<p>No makespan data.</p>\n", f);
	if (r->gantt_run >= 0)
		write_timeline(r, f);
	if (r->gantt_run >= 0)
		write_devices_table(r, f);
	fputs("</body>\n</html>\n", f);
	return close_out(r, f, path);
}

/* ---- driver ----------------------------------------------------------- */

static int make_dirs(struct report *r)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", r->outdir);
	for (char *p = tmp + 1; ; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = '\0';
			if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
				return set_err(r, -EIO, "%s: cannot create: %s", tmp, strerror(errno));
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

int dl_report_default_outdir(const char *db, char *buf, size_t len)
{
	const char *slash = strrchr(db, '/');
	int n;

	if (slash == db)
		n = snprintf(buf, len, "/report");
	else if (slash)
		n = snprintf(buf, len, "%.*s/report", (int)(slash - db), db);
	else
		n = snprintf(buf, len, "report");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int set_outdir(struct report *r, const char *db, const char *outdir)
{
	int n = 0;

	if (outdir) {
		n = snprintf(r->outdir, sizeof(r->outdir), "%s", outdir);
		if (n < 0 || (size_t)n >= sizeof(r->outdir))
			n = -1;
	} else if (dl_report_default_outdir(db, r->outdir, sizeof(r->outdir))) {
		n = -1;
	}
	if (n < 0 || !r->outdir[0])
		return set_err(r, -EINVAL, "output directory name too long or empty");
	return 0;
}

static void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nruns; i++) {
		free(r->runs[i].scenario);
		free(r->runs[i].order);
		free(r->runs[i].mode);
		free(r->runs[i].status);
	}
	free(r->runs);
	for (size_t i = 0; i < r->ndevs; i++)
		free(r->devs[i].name);
	free(r->devs);
	for (size_t i = 0; i < r->nsegs; i++)
		free(r->segs[i].phase);
	free(r->segs);
	tl_free(&r->tl);
	sqlite3_close(r->db);
}

int dl_report_write(const char *db, const char *outdir, char *err, size_t errlen)
{
	char own_err[512], plot_msg[512] = "";
	struct report r = { .err = err, .errlen = errlen, .gantt_run = -1 };
	int ret, plot_ret = 0;
	size_t rows;

	if (!err || !errlen) {
		r.err = own_err;
		r.errlen = sizeof(own_err);
	}
	r.err[0] = '\0';
	ret = open_db(&r, db);
	if (!ret)
		ret = check_tables(&r, db);
	if (!ret)
		ret = read_runs(&r);
	if (!ret)
		ret = read_gantt(&r);
	if (!ret)
		ret = set_outdir(&r, db, outdir);
	if (!ret)
		ret = make_dirs(&r);
	if (!ret)
		ret = write_traces(&r);
	if (!ret)
		ret = write_makespan_data(&r, &rows);
	if (!ret && rows) {
		plot_ret = plot(&r, "makespan", rows);
		r.makespan_plotted = !plot_ret;
	}
	if (!ret && !plot_ret)
		ret = write_gantt_data(&r);
	if (!ret && !plot_ret && r.nsegs) {
		plot_ret = plot(&r, "gantt", r.ndevs);
		r.gantt_plotted = !plot_ret;
	}
	if (plot_ret)
		snprintf(plot_msg, sizeof(plot_msg), "%s", r.err);
	if (!ret)
		ret = write_index(&r, db, plot_ret ? plot_msg : NULL);
	if (!ret && plot_ret) {
		ret = plot_ret;
		snprintf(r.err, r.errlen, "%s", plot_msg);
	}
	report_free(&r);
	return ret;
}
