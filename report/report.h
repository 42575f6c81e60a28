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

#include <stddef.h>

/* Newest runs drawn in the makespan plot (the table lists every run). */
#define DL_REPORT_PLOT_RUNS 40
/* Devices of the newest run drawn in the suspend/resume timeline. */
#define DL_REPORT_GANTT_DEVICES 200

/**
 * dl_report_default_outdir() - the output directory used when none is given:
 * "report" in the directory of DB.
 * Return: 0, or -ENAMETOOLONG if it does not fit in LEN bytes.
 */
int dl_report_default_outdir(const char *db, char *buf, size_t len);

/**
 * dl_report_write() - write plots and index.html for the database DB.
 * @db:      path of an existing dlsim database (opened read-only)
 * @outdir:  directory to write into (created with its parents if missing);
 *           NULL: "report" beside DB
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

#endif
