/*
 * timeline.h - per-device PM/probe phases of one run, for `dlsim report`:
 * a Chrome trace event file (trace.json, loads in Perfetto and
 * chrome://tracing) and the data + script of index.html's interactive
 * timeline.  Internal to report/.
 */
#ifndef DL_REPORT_TIMELINE_H
#define DL_REPORT_TIMELINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "report/report.h"

/* Slowest devices pinned on top of each pane of the interactive timeline (timeline.js: PIN). */
#define TL_PINNED 3

/* Newest runs that get a trace-<run_id>.json (trace.json: the newest). */
#define DL_REPORT_TRACE_RUNS 10

enum tl_op { TL_PROBE, TL_UNBIND, TL_SUSPEND, TL_RESUME, TL_NOPS };

#define TL_NONE UINT32_MAX

struct tl_dev {
	int64_t dev_id;
	char *name;
	char *driver;			/* devices.driver, NULL: unknown (or a log without the column) */
	int64_t parent_id;		/* dev_id of the parent, -1 for a root */
	uint32_t parent;		/* index into devs, or TL_NONE */
	uint8_t async;
	int64_t open_t[TL_NOPS];	/* start of the open phase per op, or -1 */
	int open_w[TL_NOPS];		/* worker of that start */
	uint32_t open_inst[TL_NOPS];	/* phase instance of that start */
};

/* Segment flags. */
#define TL_SEG_CRIT 1		/* on the critical path (tl_analyse) */
#define TL_SEG_BARRIER 2	/* waited for the end of the previous phase, not a dependency */

struct tl_seg {
	uint32_t row;		/* index into devs */
	uint8_t op;		/* enum tl_op */
	uint8_t flags;		/* TL_SEG_* */
	uint16_t phase;		/* index into phases */
	int32_t worker;
	uint32_t inst;		/* phase instance: one run of one phase over the devices */
	uint32_t wait;		/* the segment it waited for (tl_analyse), or TL_NONE */
	int64_t t0, t1;		/* ns from the run's start */
	int64_t ready;		/* when its last dependency ended (tl_analyse) */
};

struct tl_run {
	int64_t run_id;
	struct tl_dev *devs;	/* sorted by dev_id */
	size_t ndevs, total_devs;
	char **phases;
	size_t nphases;
	struct tl_seg *segs;	/* in the order of their end events */
	size_t nsegs, segcap;
	uint32_t ninst;		/* phase instances seen */
	/* Dependencies, CSR over devs (tl_analyse): suppliers and consumers of
	 * the links that order probe and PM (SYNC_STATE_ONLY left out), children. */
	uint32_t *sup_off, *sup, *con_off, *con, *kid_off, *kid;
	size_t ncrit;		/* segments on the critical path */
	int64_t crit_end;	/* end of the critical path (the run's last end), -1 if none */
};

/*
 * tl_read() - read the devices of RUN (the first MAX_DEVS by dev_id; 0: all)
 * and pair their X_start/X_end events (X: probe, unbind, suspend, resume).
 * Return: 0, -EINVAL (SQL error, message in ERR), -ENOMEM.
 */
int tl_read(sqlite3 *db, int64_t run, size_t max_devs, struct tl_run *t, char *err, size_t errlen);
void tl_free(struct tl_run *t);

/*
 * tl_analyse() - from the log alone: read the run's parent tree and links,
 * and for each segment find what it waited for, i.e. the dependency of the
 * same phase instance (suspend: children and consumers; resume: parent and
 * suppliers; probe: suppliers; unbind: consumers) that ended last before it
 * started, or, with none, the last segment of an earlier phase instance
 * (TL_SEG_BARRIER).  Then walk those waits back from the segment that ends
 * last and mark the critical path (TL_SEG_CRIT).  STOP (Ctrl-C, may be
 * NULL) is polled every TL_STOP_EVERY devices and segments: a million
 * devices' waits take seconds.
 * Return: 0, -EINVAL (SQL error, message in ERR), -ENOMEM, -EINTR (STOP).
 */
int tl_analyse(sqlite3 *db, struct tl_run *t, const atomic_int *stop, char *err, size_t errlen);

/* Segments or events between two looks at the Ctrl-C flag (tl_analyse(), tl_write_trace()). */
#define TL_STOP_EVERY 4096u

/* The @i-th step of a long loop: is it time to look, and has Ctrl-C set @stop (may be NULL)? */
static inline bool tl_stop_due(const atomic_int *stop, size_t i)
{
	return i % TL_STOP_EVERY == 0 && stop && atomic_load(stop);
}

/*
 * tl_select_rows() - the devices to draw when at most MAX_ROWS fit: every
 * device with a segment of an op in OP_MASK (1 << enum tl_op) on the
 * critical path first, then per op in OP_MASK its TL_PINNED devices with
 * the most callback time (the headline's slowest), then the lowest
 * dev_ids; drawn in dev_id order.
 * ROW_OF[i] receives the row of devs[i] or TL_NONE.  Return: rows used.
 */
size_t tl_select_rows(const struct tl_run *t, size_t max_rows, unsigned op_mask, uint32_t *row_of);

/* How a trace file is written. */
struct tl_trace_opts {
	size_t max_devices;	/* 0: every device; else tl_select_rows() picks them */
	int per_device;		/* a track per device (tid: its row + 1), not per worker */
	int gzip;		/* gzip-compressed (.json.gz), which the viewers open as is */
	const atomic_int *stop;	/* Ctrl-C (may be NULL): polled every TL_STOP_EVERY events */
};

/*
 * Writes T as a Chrome trace event JSON file (Jansson): one complete event
 * ("X") per segment on the track of its worker (tid 0: "main PM thread")
 * or of its device, and one flow ("s" at the awaited segment's end, "f" at
 * the waiting segment's start, same id) per wait for a dependency, and per
 * barrier wait on the critical path, between devices that are in the file.
 * *DEVICES (may be NULL) receives the number of devices written.  -EINTR
 * once o->stop is set (the file is closed, incomplete).
 * Return: 0, -ENOMEM or -EIO (errno set).
 */
int tl_write_trace(const struct tl_run *t, const char *scenario, const struct tl_trace_opts *o,
		   const char *path, size_t *devices);

/*
 * Writes index.html's timeline: a <div id="tl">, the data as
 * <script type="application/json" id="tl-data"> and id="tl-segs" (no '<'
 * in them) and the script that draws it (timeline.js, embedded).  At most MAX_ROWS devices are drawn
 * (tl_select_rows); the critical path is outlined and the hover names what
 * a bar waited for.
 */
void tl_write_html(const struct tl_run *t, size_t max_rows, FILE *f);

#endif
