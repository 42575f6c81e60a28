/*
 * dl_log.h - the SQLite event log of shared/SPEC.md ("SQLite log").
 *
 * One database holds many runs.  dl_log_events() only copies records into a
 * bounded queue; a writer thread inserts them in large transactions with
 * prepared statements.  Every string (scenario, device names, ...) is bound
 * as a parameter, never spliced into SQL.
 *
 * Extensions beyond SPEC.md: events.aux (link events: supplier; register:
 * parent), events.flags (link events: DL_FLAG_* bits), events.arg (the raw
 * dl_event.phase number); links has PRIMARY KEY(run_id, link_id) and its
 * flags follow later link_add events for the same link; table
 * refused(run_id, seq, consumer_id, supplier_id, flags, reason) holds every
 * link_refused event; PRAGMA application_id marks a dlsim database;
 * runs.log_error: NULL, or why the run's log is incomplete (SQLite's message
 * and the path; the run is then 'failed' and runs.events counts what was stored).
 * Extra event kinds: sync_state (a supplier's sync_state() ran), device_del
 * (device_del() finished; the device leaves dpm_list) and dpm_move (the core
 * moved the device to the tail of dpm_list in device_reorder_to_tail()):
 * with register they let `dlsim check` replay dpm_list (invariant 7);
 * work_block / work_wake (phase set): a work item of dev sleeps on its
 * dependencies and is woken (kernel-async), for the report's blocked workers.
 * Metric devices_unregistered, added by the writer to every run that ends
 * with metrics: how many of runs.devices had no register event written
 * (hot-plugged devices never added); `check` holds the devices rows to it.
 */
#ifndef DL_LOG_H
#define DL_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/dl_event.h"

#define DL_LOG_APPLICATION_ID 0x646c7369   /* "dlsi" */

struct dl_log;
struct sqlite3;

struct dl_run_info {
	const char *scenario, *order, *mode, *version;
	const char *kernel;     /* runs.kernel: whose rules ("6.12"), NULL if none */
	/* runs.probe_context: "boot" or "module" (dl_engine_opts.probe_module), NULL if not said */
	const char *probe_context;
	uint64_t seed;
	uint32_t workers, devices, links;
	int64_t run_id;         /* > 0: this run id (a sweep assigns them); 0: the next free one */
};

struct dl_metric {
	const char *name;
	double value;
};

/* How long an open waits for another writer's lock by default. */
#define DL_LOG_BUSY_MS 5000

/* Opens or creates PATH.  Refuses (negative return, message in err) a file
 * that is not a dlsim database or an unwritable path, without modifying it.
 * WAL journal; waits up to DL_LOG_BUSY_MS for another writer's lock. */
int dl_log_open(const char *path, struct dl_log **out, char *err, size_t errlen);
/* dl_log_open() waiting up to BUSY_MS (>= 0) for another writer's lock. */
int dl_log_open_wait(const char *path, int busy_ms, struct dl_log **out, char *err, size_t errlen);
/* Inserts a runs row with status 'running'; started_at is ISO-8601 UTC. */
int dl_log_run_begin(struct dl_log *, const struct dl_run_info *, int64_t *run_id);
/* parent_id UINT32_MAX: NULL (a root).  Queued like events. */
int dl_log_device(struct dl_log *, uint32_t dev_id, const char *name, uint32_t parent_id, int async);
/* The same with the device's driver (devices.driver; NULL or "": unknown, stored as NULL). */
int dl_log_device_driver(struct dl_log *, uint32_t dev_id, const char *name, const char *driver,
			 uint32_t parent_id, int async);
/* Copies N events into the queue (blocks while it is full); thread-safe. */
void dl_log_events(struct dl_log *, const struct dl_event *ev, size_t n);
/* Flushes the queue, writes metrics, finalizes the runs row, creates the
 * secondary indexes if missing.  0, or dl_log_failure() if any write of the
 * run failed: STATUS is then replaced by 'failed' and runs.events counts the
 * events that were stored (or, if even that failed, the row stays 'running'). */
int dl_log_run_end(struct dl_log *, const char *status, int64_t makespan_ns,
		   const struct dl_metric *m, size_t nm);
/* 0 while every write of the current run has been committed; after a write
 * failed for good (the run then ends 'failed'): -ENOSPC disk full, -EBUSY
 * another writer held the lock past the busy timeout, -EIO anything else.
 * dl_log_error() is then SQLite's message with the path, else NULL;
 * dl_log_lost() counts the rows (events, devices) that were not stored.
 * Safe to call from any thread (a producer may stop early). */
int dl_log_failure(const struct dl_log *);
const char *dl_log_error(const struct dl_log *);
uint64_t dl_log_lost(const struct dl_log *);
/* Ctrl-C's flag: once set, dl_log_run_end() abandons (or skips) building the
 * secondary indexes, which take minutes on a large new database; the run is
 * recorded first, and the next run that finishes builds them. */
void dl_log_set_stop(struct dl_log *, const atomic_int *stop);
/* The run being logged is the twin of run @of (dlsim twin): its end writes
 * runs.twin_of (the column added if missing) and the metric twin_of in the
 * same transaction as its status, so that no twin is ever left unmarked. */
void dl_log_set_twin_of(struct dl_log *, int64_t of);
/* 1 once dl_log_run_end() stored the run's status and event count. */
int dl_log_run_recorded(const struct dl_log *);
/* Number of events written so far in the current run. */
uint64_t dl_log_event_count(struct dl_log *);
/* Wait until the writer has stored (or dropped, on failure) every row queued so far. */
void dl_log_drain(struct dl_log *);
void dl_log_close(struct dl_log *);

/* Shared with the checker: opens an existing dlsim database (read-write if
 * possible, else read-only) without creating or modifying it; 0 or negative
 * with a message. */
int dl_log_open_existing(const char *path, struct sqlite3 **db, char *err, size_t errlen);
/* The same, read-only: a source that is read and never written (a twin's run). */
int dl_log_open_reader(const char *path, struct sqlite3 **db, char *err, size_t errlen);
/*
 * dl_log_file_uri - @path as an SQLite "file:" URI (%, ? and # escaped) with
 * @query (NULL or "" for none) into @uri; 0 or -ENAMETOOLONG.  The readers'
 * connections are opened by URI, so that ATTACH takes one too.
 */
int dl_log_file_uri(const char *path, const char *query, char *uri, size_t len);
/* Room for dl_log_file_uri(): a 4096-byte path with ~2,000 of its bytes escaped, a short query. */
#define DL_LOG_URI_MAX 8300
/* Whether @path has a -wal file with content and no -shm beside it. */
bool dl_log_wal_without_shm(const char *path);
/*
 * For a writer of its own tables (the advice table, a twin's mark): opens or
 * creates PATH as dl_log_open_wait() does (the same file checks, refusal of a
 * database that is not dlsim's, WAL journal, schema and busy timeout), and
 * returns the bare connection instead of starting an event writer.  0, or
 * negative with the reason (path included) in err.
 */
int dl_log_open_db(const char *path, int busy_ms, struct sqlite3 **db, char *err, size_t errlen);
/* 1 if DB looks like a dlsim database (application_id or the runs/events
 * tables), 0 if it is empty (no tables), -1 if it is something else. */
int dl_log_is_dlsim(struct sqlite3 *db);

#endif
