/*
 * report.h - `dlsim report`: plots (gnuplot, PNG and SVG) and an index.html
 * built from a dlsim SQLite log (shared/SPEC.md, "SQLite log").
 *
 * The writer only reads the database.  Everything that comes from it (names,
 * statuses, ...) goes into tab-separated data files, sanitised, or into the
 * HTML, escaped; never into a gnuplot command or SQL text.  gnuplot runs in
 * the output directory on fixed relative file names, so the command line it
 * gets does not depend on the database or on the output path either.
 */
#ifndef DL_REPORT_H
#define DL_REPORT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Newest runs drawn in the makespan plot (the table lists every run). */
#define DL_REPORT_PLOT_RUNS 40
/*
 * Device rows drawn in index.html's interactive timeline: the devices on the
 * critical path first, then each op's slowest, then the lowest dev_ids
 * (about 5.6 MB of page at 10k devices; the trace files hold up to
 * DL_REPORT_TRACE_DEVICES).
 */
#define DL_REPORT_TIMELINE_DEVICES 10000
/*
 * Devices in a trace file by default, chosen the same way: about 4 KB of
 * JSON per device (100 MB at 25k, 400 KB gzipped per 1k devices), past
 * which Perfetto's and chrome://tracing's JSON importers run out of room.
 */
#define DL_REPORT_TRACE_DEVICES 25000
/* Device rows of the chosen run's suspend/resume Gantt (critical path first). */
#define DL_REPORT_GANTT_DEVICES 200
/* Scenario/order groups drawn in the makespan-per-order plot (newest first). */
#define DL_REPORT_PLOT_GROUPS 24
/* Points of the utilization plot; beyond, the step function is averaged into buckets. */
#define DL_REPORT_UTIL_POINTS 4000
/*
 * Devices of each run in index.html's beside view (a run over its twin or
 * another run of the same scenario on one time axis): those drawn are the
 * union of each run's tl_select_rows() at this cap.
 */
#define DL_REPORT_BESIDE_DEVICES 2000
/* Critical-path callbacks listed in index.html's table. */
#define DL_REPORT_CRIT_ROWS 300

/**
 * dl_report_default_outdir() - the output directory used when none is given:
 * beside DB, named after it: "runs/dlsim.db" gives "runs/dlsim-report".
 * Return: 0, or -ENAMETOOLONG if it does not fit in LEN bytes.
 */
int dl_report_default_outdir(const char *db, char *buf, size_t len);

/**
 * dl_report_write() - write plots and index.html for the database DB.
 * @db:      path of an existing dlsim database (opened read-only)
 * @outdir:  directory to write into (created with its parents if missing);
 *           NULL: "NAME-report" beside DB (dl_report_default_outdir()).
 *           A directory holding source files (CMakeLists.txt, *.c, *.h) is
 *           refused with -EINVAL: a report never lands in a source folder;
 *           "/" is refused too, and an existing non-empty folder that
 *           holds no ".dlsim-report" file (dlsim report's mark) with
 *           -EEXIST unless dl_report_opts.force.  Every file is created
 *           afresh (a symlink in the folder is replaced, never followed).
 * @err:     receives a one-line message when the result is not 0
 * @errlen:  size of @err
 *
 * The gnuplot templates are read from $DLSIM_REPORT_DIR if set, else from
 * the source tree's report/ (DLSIM_SOURCE_DIR).  index.html is written even
 * when a plot fails; a plot without data (no runs, no PM events) is left out.
 *
 * Return: 0; -ENOENT the database does not exist; -EINVAL it is not a dlsim
 * database (tables runs, devices, events, metrics missing) or not SQLite;
 * -EIO an output file could not be written; -ECHILD gnuplot failed (see
 * gnuplot.log in @outdir); -ENOMEM.
 */
int dl_report_write(const char *db, const char *outdir, char *err, size_t errlen);

/**
 * dl_report_write_run() - dl_report_write() with the run drawn in the
 * timeline, Gantt, utilization and probe plots chosen: RUN (a run_id), or
 * -1 for the newest run.
 * Return: as dl_report_write(); -EINVAL also when RUN is not in the database.
 */
int dl_report_write_run(const char *db, const char *outdir, int64_t run, char *err, size_t errlen);

/* Everything `dlsim report` can choose. */
struct dl_report_opts {
	const char *outdir;	/* NULL: dl_report_default_outdir() */
	int64_t run;		/* the run drawn in detail, -1: the newest */
	size_t trace_devices;	/* devices per trace file, 0: DL_REPORT_TRACE_DEVICES */
	int trace_per_device;	/* trace tracks per device instead of per worker */
	int trace_plain;	/* trace.json instead of gzipped trace.json.gz */
	int force;		/* write into an existing non-empty folder that
				 * dlsim report did not write ("/" never) */
	int data_only;		/* data files, traces and index.html, no gnuplot (no
				 * PNG/SVG; the in-process fuzzer uses it) */
	int64_t beside;		/* the run drawn beside the chosen one on one axis (same
				 * scenario content, else -EINVAL); 0: its twin (runs.twin_of)
				 * if it has one; -1: none */
	int64_t verified_run;	/* the caller has verified this run of DB as dlsim check
				 * does (cli_log_validate()): if it is the chosen run it is
				 * not verified again; 0: none (every drawn run is) */
	const atomic_int *stop;	/* Ctrl-C (may be NULL): once set, the report stops
				 * between two files, two gnuplots or SQLite steps,
				 * removes what it wrote and returns -EINTR; the folder
				 * asked for is left as it was */
};

/**
 * dl_report_write_opts() - dl_report_write_run() with every choice: trace
 * files are trace-ID.json.gz (gzip, which Perfetto, chrome://tracing and
 * DevTools open as is) or, with trace_plain, trace-ID.json; trace.json(.gz)
 * is the chosen run's.
 * Return: as dl_report_write_run().
 */
int dl_report_write_opts(const char *db, const struct dl_report_opts *o, char *err, size_t errlen);

#endif
