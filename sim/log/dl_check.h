/*
 * dl_check.h - re-verify the invariants of LINK-CORE.md ("Invariants that
 * dlsim check verifies from the log alone") from a dlsim SQLite log.
 *
 * Events are streamed in seq order; only per-device and per-link state is
 * kept in memory.  Checked: 1 (probe/bind only while managed suppliers are
 * bound), 2 (supplier unbinds after its consumers), 3 (suspend/resume order
 * over counted links and parent/child; prepare in dpm_list order, complete in
 * the reverse of it, each walk on one thread, one callback at a time), 4 (resume only what was
 * suspended, one phase at a time, every prepared device runs every suspend phase, a resume
 * leaves nothing suspended, a 'failed' run ends fully resumed), 5 (a PM_RUNTIME
 * consumer never runtime-active while its supplier is runtime-suspended),
 * 6 (link graph plus
 * parent tree acyclic at every link_add; refusals carry a known reason),
 * 7 (the dpm_list replayed from register/dpm_move/device_del events is a
 * topological order at every PM walk and at the end of the run).
 * The run is read in one read transaction (a concurrent writer is not
 * blocked); then every violation is inserted into the violations table (the
 * run's old rows are replaced) and a run with violations whose status was
 * 'ok' becomes 'violations', in one short write transaction, unless the
 * database is read-only or the log is corrupt (then nothing is written).  Before the rules, the log
 * itself is verified (dl_check.c, "verified before the rules"): a corrupt log
 * is DL_CHECK_CORRUPT, never a violation and never ok.
 */
#ifndef DL_CHECK_H
#define DL_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "sim/core/dl_event.h"

struct sqlite3;

#define DL_CHECK_NINV 8          /* invariants 1..7, index 0 unused */

enum {
	DL_CHECK_DONE = 0,       /* run checked completely */
	DL_CHECK_INCOMPLETE = 1, /* run still 'running' or its log failed (runs.log_error):
				  * events checked, end-of-run checks skipped */
	DL_CHECK_CORRUPT = 2,    /* the log is not what dlsim writes: rules not checked */
};

/* Ids above this are not ours (a corrupt log): the checker's arrays stay bounded. */
#define DL_CHECK_MAX_IDS (1u << 28)
/* Times above this (about 146 years) are corrupt: differences of two never overflow. */
#define DL_CHECK_T_MAX DL_T_MAX

struct dl_check_result {
	uint64_t total;                  /* violations found */
	uint64_t by_inv[DL_CHECK_NINV];  /* per invariant number */
	uint64_t events;                 /* events read */
	int incomplete;
	char status[16];                 /* runs.status */
	char log_error[256];             /* runs.log_error, "" when none */
	uint64_t corrupt;                /* problems found verifying the log (counted up to 1000) */
	char corrupt_first[256];         /* the first of them */
};

/* Newest run_id in DB, 0 if none, negative on error. */
int64_t dl_check_newest_run(struct sqlite3 *db);

/* Checks one run.  verbose 0: silent; 1: print violations to OUT (stdout if
 * NULL), at most 50 per invariant; 2: print them all.  Returns DL_CHECK_DONE,
 * DL_CHECK_INCOMPLETE, DL_CHECK_CORRUPT (res->corrupt, res->corrupt_first;
 * the problems are printed like violations), -ENOENT (no such run) or -EIO
 * (database error). */
int dl_check_run_ex(struct sqlite3 *db, int64_t run_id, int verbose, FILE *out,
		    struct dl_check_result *res);
/* Only verifies the log of RUN_ID (no rules, nothing written): DL_CHECK_DONE,
 * DL_CHECK_CORRUPT (res->corrupt_first says why), -ENOENT or -EIO. */
int dl_check_verify(struct sqlite3 *db, int64_t run_id, struct dl_check_result *res);
int dl_check_run(struct sqlite3 *db, int64_t run_id, int verbose, uint64_t *nviolations);
/* Opens PATH (must be a dlsim database) and checks RUN_ID (0: newest). */
int dl_check_path(const char *path, int64_t run_id, int verbose, uint64_t *nviolations);

#endif
