/* sweep_cli.h - what cmd_sweep.c shares with its MPI front (cmd_sweep_mpi.c). */
#ifndef DL_SWEEP_CLI_H
#define DL_SWEEP_CLI_H

#include <stdbool.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include <jansson.h>

#include "sim/sweep/sweep.h"

struct sqlite3;

struct sweep_opts {
	struct dl_sweep_plan plan;
	const char *db, *distribute;
	const char *node_shards;     /* --node-shards DIR (MPI ranks but 0), or NULL */
	bool shards;                 /* --write shards: every worker writes a shard */
	uint32_t jobs;
	bool json, verbose;
	int64_t first_id;            /* the first run id of this sweep (dl_sweep_assign_ids) */
	int lock_fd;                 /* dl_sweep_lock() on OUT.db (-1: none yet) */
	bool have_input, have_orders, pc_given;   /* parse_args: --scenarios/--dtbs, --orders
						   * and --probe-context were given */
};

/* What the progress line and the summary need. */
struct sweep_run {
	struct timespec t0;
	const char *db;
	const struct dl_sweep_plan *plan;
	uint32_t planned, workers;
	bool tty, shown;
	double last_shown;
};

/* One sweep, as cmd_sweep() and the MPI front (sweep_mpi_main()) run it. */
struct sweep {
	struct sweep_opts o;
	struct sweep_run sr;
	struct dl_sweep_coord co;
	uint64_t *pending;           /* per task, the runs left to run (bits of its runs) */
	struct sqlite3 *db;          /* OUT.db (under MPI: rank 0's only) */
};

/* Parse, validate the JSON scenarios, hash; 0, -1 (--help printed) or an exit status. */
int sweep_prepare(int argc, char **argv, struct sweep_opts *o);
/* Open OUT.db, merge leftover shards, compute the pending runs; 0 or an exit status. */
int sweep_open_out(struct sweep *sw);
/* The end of a sweep, whatever happened: PENDING freed, DB closed, OUT.db's lock given
 * back, the plan freed. */
void sweep_release(struct sweep *sw);
/* The indexes the sweep dropped, built again (say so on failure); 0 or an exit status. */
int sweep_close_out(struct sqlite3 *db);
/* Print the summary (text or JSON); returns the exit status. */
int sweep_finish(struct sweep *sw);
void sweep_progress(struct dl_sweep_coord *co);
/* Set up @sw's coordinator and progress for a sweep by @workers (local jobs or ranks). */
void sweep_start(struct sweep *sw, uint32_t workers, bool tty);
void sweep_task_line(struct dl_sweep_coord *co, uint32_t task,
		     const struct dl_sweep_task_result *res);

/* Kernel mode with twins (cmd_sweep_kernel.c): runs.twin_of from the twins' metric; per
 * scenario the kernel runs against their twins (JSON); the text table of them. */
void sweep_set_twin_of(struct sqlite3 *db);
json_t *sweep_kernel_fidelity(struct sqlite3 *db, const struct dl_sweep_plan *p, uint32_t s);
void sweep_kernel_print(const json_t *o);

/* Under mpirun (the launcher's environment is set)? */
bool sweep_under_mpi(void);
/* The MPI sweep: every rank runs this. */
int sweep_mpi_main(int argc, char **argv);

#endif
