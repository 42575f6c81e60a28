/*
 * dl_check_verify.h - inside dl_check: the verification of a run's log
 * (dl_check_verify.c) and the events row that the reading side
 * (dl_check.c) hands it, one at a time.  Not an API: only dl_check*.c
 * include it.
 */
#ifndef DL_CHECK_VERIFY_H
#define DL_CHECK_VERIFY_H

#include <stdint.h>

#include <sqlite3.h>

#include "sim/log/dl_check_rules.h"

/*
 * The log is verified before the rules: a row the writer cannot have written
 * (a tampered or damaged database) makes the run "corrupt", never a violation
 * of an invariant and never "ok".  What is verified: the runs row (a known
 * status, counts that are integers in range, events = the rows when the run is
 * finished); devices (ids dense in 0..devices-1, once each, a name, a parent
 * in range and not itself); links (unique ids, consumer and supplier in range);
 * events (seq dense and increasing from 0, a known kind, a device in range on
 * every row, a link the links table knows on link events, a supplier in range,
 * a known phase on PM events and a known state on link_state, 0 <= t_ns <=
 * DL_CHECK_T_MAX, each device's times non-decreasing, each probe_end and
 * unbind_end after its start).  The arrays of the rules are then sized once
 * from these counts, so that no lookup ever grows them.
 */
#define CORRUPT_STOP 1000       /* problems after which the verification stops reading */

enum { OPEN_PROBE = 1, OPEN_UNBIND = 2 };

struct vdev {
	int64_t t;              /* the device's last event time */
	uint8_t open;           /* OPEN_PROBE / OPEN_UNBIND: a callback started, not ended */
	uint8_t seen;           /* a devices row */
	uint8_t registered;     /* a register event */
};

/*
 * What the runs row and the metrics promise about the events (verify_run_row(),
 * verify_metrics()): checked against them once the events are read
 * (verify_promises()).
 */
enum { FAM_PROBE, FAM_UNBIND, FAM_SUSPEND, FAM_RESUME, FAM_COUNT };

struct vrun {
	int writer;             /* runs.events exists: the log is dlsim's writer's */
	int finished;           /* ok, violations or failed, its log whole: it ran to its end */
	int virtual_time;       /* mode 'des': the makespan is the last event's time */
	int64_t makespan;       /* runs.makespan_ns, -1 NULL */
	uint64_t ops[FAM_COUNT];      /* ops of each family with a makespan above 0 (metrics) */
	uint64_t callbacks[FAM_COUNT];/* callback starts of each family (events) */
	uint64_t binds;         /* probe_end events without an error: devices that got a driver */
	int64_t t_last;         /* the latest event time */
	int64_t unregistered;   /* metric devices_unregistered (dl_log.c), -1 none */
};

/* The verification's state while the events stream by (dl_check_verify_begin() to _end()). */
struct verify {
	struct vrun vr;
	struct vdev *v;
	uint8_t *known;
	uint32_t nlink;
	int64_t ndev, nev;      /* devices; runs.events (-1: none) */
	int from_zero, have_ext;
	int64_t rows, prev;     /* events rows read; the last one's seq */
};

/*
 * One events row (events_stmt()'s columns), each column fetched once for the
 * verification and the rules alike: its type, and its integer value (0 if
 * NULL) or, for kind and phase, its text.  A value quoted in a message is
 * fetched again as text (sqlite3_column_text()).
 */
enum { EC_T, EC_DEV, EC_LINK, EC_KIND, EC_PHASE, EC_SEQ, EC_AUX, EC_WORKER, EC_ERR, EC_FLAGS,
       EC_ARG, EC_COUNT };

#define EROW_TEXT 40     /* kind and phase kept by keep_text(): longer than any name */

struct erow {
	int type[EC_COUNT];
	int64_t v[EC_COUNT];
	const char *kind, *phase;
	int kind_id;            /* kind parsed, -1 unknown (row_names()) */
	int name;               /* phase parsed (PM kinds) or state (link_state), -1 */
	char kbuf[EROW_TEXT], pbuf[EROW_TEXT];  /* their copies (keep_text()) */
};

/* col_in() of a row's column */
static inline int64_t row_in(const struct erow *r, int i, int64_t max)
{
	return r->type[i] == SQLITE_INTEGER && r->v[i] >= 0 && r->v[i] < max ? r->v[i] : -1;
}

/* col_id() of a row's column */
static inline uint32_t row_id(const struct erow *r, int i)
{
	return r->type[i] == SQLITE_NULL || r->v[i] < 0 || r->v[i] >= (int64_t)DL_NONE ? DL_NONE :
	       (uint32_t)r->v[i];
}

/* A column's text for a message: "NULL" for NULL (ST NULL: the row was read ahead, "?"). */
static inline const char *col_text(sqlite3_stmt *st, int i)
{
	const char *t = st ? (const char *)sqlite3_column_text(st, i) : "?";

	return t ? t : "NULL";
}

static inline int is_pm_kind(int kind)
{
	return kind == DL_EV_SUSPEND_START || kind == DL_EV_SUSPEND_END ||
	       kind == DL_EV_RESUME_START || kind == DL_EV_RESUME_END ||
	       kind == DL_EV_WORK_BLOCK || kind == DL_EV_WORK_WAKE;
}

/* What precedes the events: the runs row, the metrics, the devices and the links. */
int dl_check_verify_begin(struct checker *k, struct verify *V, int have_ext);
/* One events row R (ST NULL: read ahead, the statement is on a later row): its kind, or -1. */
int dl_check_verify_row(struct checker *k, struct verify *V, sqlite3_stmt *st, struct erow *r);
/* After the last row read; ALL: the statement ran to its end. */
void dl_check_verify_end(struct checker *k, struct verify *V, int all);
void dl_check_verify_free(struct verify *V);

/* From dl_check.c: calloc() on huge pages for big arrays; free() frees it. */
void *dl_check_calloc_huge(size_t n, size_t size);
/* Does TABLE have column COL? */
int dl_check_has_column(sqlite3 *db, const char *table, const char *col);
/* The parsed flags text S of a links row (memoized per checker). */
struct flags_memo dl_check_flags_memo(struct checker *k, const char *s);

#endif
