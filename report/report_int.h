/*
 * report_int.h - what the files of `dlsim report` share (report.c: reading,
 * traces, the driver; plots.c: data files and gnuplot; page.c: index.html).
 * Internal to report/.
 */
#ifndef DL_REPORT_INT_H
#define DL_REPORT_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "report/report.h"
#include "report/timeline.h"

#define NS_PER_MS 1e6
/* Longest name written into a data file (bytes); plots stay readable. */
#define LABEL_MAX 48
/* Most-deferred devices listed under the probe histogram. */
#define TOP_DEFERRED 10
/* Bins of the probe histogram at most; wider bins past that many attempts. */
#define PROBE_BINS 40

enum plot_id { P_MAKESPAN, P_ORDERS, P_SCALING, P_UTIL, P_PROBE, P_GANTT, P_FIDELITY, P_COUNT };

struct run_row {
	int64_t id, devices, links, seed, workers;
	char *scenario, *order, *mode, *status;
	char *kernel;		/* runs.kernel ("6.12"), "" when the log has none */
	uint64_t content;	/* fingerprint of the devices and links (rp_read_content()) */
	/* NAN when the database has no value. */
	double makespan, metric_makespan, lower_bound, probe, suspend, resume, wall;
};

/* Mean and standard deviation of the values added (NAN ones skipped). */
struct stat_acc { double n, sum, sq; };

/* Runs of one scenario (name and content), order, mode, kernel and K: the seeds of a `compare`. */
struct group {
	const struct run_row *newest;
	struct stat_acc mk, lb, probe, suspend, resume;
};

struct deferred { int64_t dev_id; int64_t starts, defers; };

struct report {
	sqlite3 *db;
	/*
	 * Where the files are written: a folder of its own beside final (the
	 * folder asked for) until every file is there, then moved into place
	 * (report.c finish_outdir()), so that a killed report leaves the old
	 * folder as it was.
	 */
	char outdir[PATH_MAX];
	char final[PATH_MAX];
	int final_mode;          /* >= 0: the mode the staged folder takes as it replaces final */
	const atomic_int *stop;  /* dl_report_opts.stop */
	char *err;
	size_t errlen;
	struct run_row *runs;
	size_t nruns;
	const struct run_row *sel;	/* the run drawn in detail; NULL: no runs */
	struct tl_run tl;		/* sel's phases, every device */
	int have_tl;
	const struct run_row *other;	/* drawn beside sel on one axis (--beside, its twin); NULL: none */
	struct tl_run tl2;		/* other's phases */
	int other_is_twin;		/* other replays sel (+1) or sel replays other (-1); 0: neither */
	uint32_t *gantt_row;		/* per tl device: Gantt row or TL_NONE */
	size_t gantt_rows, gantt_segs;
	struct group *groups;		/* in order of their newest run, newest last */
	size_t ngroups, groups_multi;	/* groups_multi: groups of two runs or more */
	size_t scaling_sizes, scaling_orders;
	size_t util_points;
	double util_busy, util_blocked;	/* time-averaged over the run's phases */
	int util_blocked_derived;
	int util_blocked_logged;        /* from work_block / work_wake events */
	size_t probe_devs, probe_bins;
	int64_t probe_max_attempts;
	struct deferred top[TOP_DEFERRED];
	size_t ntop;
	size_t ntraced;
	int64_t traced[DL_REPORT_TRACE_RUNS + 1];
	size_t trace_devices;		/* cap per trace file */
	size_t trace_devs;		/* devices in the chosen run's trace */
	int trace_per_device, trace_plain;
	unsigned plotted;		/* 1 << enum plot_id */
	int plot_ret;
	char plot_err[512];
	int64_t verified_run;		/* dl_report_opts.verified_run */
	char corrupt[256];		/* why the last run verified is corrupt */
	int data_only;			/* dl_report_opts.data_only: no gnuplot */
	size_t fidelity_boards;		/* boards on fidelity.html (0: no such page) */
};

/* The file that marks a folder written by dlsim report (report.c). */
#define RP_MARKER ".dlsim-report"

/* report.c */
int rp_err(struct report *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * Creates PATH afresh for writing: whatever was there is unlinked first (a
 * symlink or hard link, never what it points to), then the file is opened
 * with O_CREAT | O_EXCL | O_NOFOLLOW.  Return: the descriptor, or -1 with errno.
 */
int rp_create_file(const char *path);
/* Opens OUTDIR/NAME for writing (its path in PATH); NULL with errno set. */
/* Whether Ctrl-C asked the report to stop (dl_report_opts.stop). */
static inline bool rp_stopped(const struct report *r)
{
	return r->stop && atomic_load(r->stop);
}
FILE *rp_open_out(struct report *r, const char *name, char *path, size_t pathlen);
/* Closes F; -EIO (message in r->err) when anything written to it failed. */
int rp_close_out(struct report *r, FILE *f, const char *path);
/* Whether ROW's order is the one its kernel runs (kernel-async before 6.16, kernel-async-v2 from it). */
bool rp_kernel_order(const struct run_row *row);
/* Whether A and B ran the same scenario: the same name and the same devices and links. */
bool rp_same_scenario(const struct run_row *a, const struct run_row *b);
void rp_acc_add(struct stat_acc *a, double v);
double rp_acc_mean(const struct stat_acc *a);
double rp_acc_sd(const struct stat_acc *a);
/* ".json.gz", or ".json" for plain trace files. */
const char *rp_trace_ext(const struct report *r);

/* plots.c: every data file, and its PNG and SVG when it has something to show. */
int rp_write_plots(struct report *r);
bool rp_plotted(const struct report *r, enum plot_id id);
/* Plots NAME.tsv with NAME.gp as PNG and SVG (a failure is kept for the page, not returned). */
void rp_plot(struct report *r, enum plot_id id, size_t nrows);
/* One data-file field: sanitised for gnuplot, cut to LABEL_MAX bytes. */
void rp_put_field(FILE *f, const char *s);

/* fidelity.c: fidelity.html when DB is a kernel sweep with twins (r->fidelity_boards). */
int rp_write_fidelity(struct report *r, const char *dbpath);

/* page.c */
int rp_write_index(struct report *r, const char *dbpath);

/* beside.c: the chosen run and r->other on one time axis per op (index.html's beside view). */
void rp_write_beside(const struct report *r, FILE *f);

#endif
