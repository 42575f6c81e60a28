/*
 * timeline.h - per-device PM/probe phases of one run, for `dlsim report`:
 * a Chrome trace event file (trace.json, loads in Perfetto and
 * chrome://tracing) and the data + script of index.html's interactive
 * timeline.  Internal to report/.
 */
#ifndef DL_REPORT_TIMELINE_H
#define DL_REPORT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* Devices (first by dev_id) drawn in index.html's interactive timeline. */
#define DL_REPORT_TIMELINE_DEVICES 2000
/* Newest runs that get a trace-<run_id>.json (trace.json: the newest). */
#define DL_REPORT_TRACE_RUNS 10

enum tl_op { TL_PROBE, TL_UNBIND, TL_SUSPEND, TL_RESUME, TL_NOPS };

struct tl_dev {
	int64_t dev_id;
	char *name;
	int64_t open_t[TL_NOPS];	/* start of the open phase per op, or -1 */
	int open_w[TL_NOPS];		/* worker of that start */
};

struct tl_seg {
	uint32_t row;		/* index into devs */
	uint8_t op;		/* enum tl_op */
	uint16_t phase;		/* index into phases */
	int32_t worker;
	int64_t t0, t1;		/* ns from the run's start */
};

struct tl_run {
	int64_t run_id;
	struct tl_dev *devs;	/* sorted by dev_id */
	size_t ndevs, total_devs;
	char **phases;
	size_t nphases;
	struct tl_seg *segs;
	size_t nsegs, segcap;
};

/*
 * tl_read() - read the devices of RUN (the first MAX_DEVS by dev_id; 0: all)
 * and pair their X_start/X_end events (X: probe, unbind, suspend, resume).
 * Return: 0, -EINVAL (SQL error, message in ERR), -ENOMEM.
 */
int tl_read(sqlite3 *db, int64_t run, size_t max_devs, struct tl_run *t, char *err, size_t errlen);
void tl_free(struct tl_run *t);

/* Writes T as a Chrome trace event JSON file.  Return: 0 or -EIO (errno set). */
int tl_write_trace(const struct tl_run *t, const char *scenario, const char *path);

/*
 * Writes index.html's timeline: a <div id="tl">, the data as
 * <script type="application/json" id="tl-data"> (no '<' in it) and the
 * inline script that draws it.  Only the first MAX_ROWS devices are drawn.
 */
void tl_write_html(const struct tl_run *t, size_t max_rows, FILE *f);

#endif
