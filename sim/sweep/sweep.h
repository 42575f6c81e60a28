/*
 * sweep.h - many runs: scenarios (files or DTBs imported on the fly) ×
 * orders × seeds × kernels, each a normal logged run, resumable, in
 * parallel (a local pool of processes or MPI ranks).
 *
 * Events stay where they are written: every worker logs its runs into its
 * own shard (OUT.db.shards/HOST-PID[-rRANK]-s0.db, with the existing log
 * writer), which stays.  OUT.db gets each finished run's small rows (runs,
 * metrics, violations, its sweep row) and where the rest is (run_shards,
 * shards: sim/log/dl_log_shard.h), keyed so that nothing is copied twice: a
 * sweep row (scenario content hash, order, seed, kernel, mode, workers) is
 * written to the shard after its run is complete and is the run's commit
 * mark; OUT.db's sweep table has a UNIQUE index on the key.  A direct worker
 * copies them itself (some 60 rows under SQLite's write lock a run), else the
 * coordinator (the pool's parent, MPI rank 0) does, every second; a shard
 * left behind by a killed sweep is looked at by the next one.  The readers
 * attach the shards (dl_log_attach_shards); dl_sweep_compact() copies the
 * events into OUT.db and removes the shards.
 *
 * Run ids are fixed before the sweep (dl_sweep_assign_ids), so a worker logs
 * each run under its final id.
 */
#ifndef DL_SWEEP_H
#define DL_SWEEP_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/order/order.h"
#include "sim/scenario/dtb_import.h"
#include "sim/scenario/scenario.h"

struct sqlite3;

#define DL_SWEEP_MAX_ORDERS  16
#define DL_SWEEP_MAX_KERNELS 4      /* orders × kernels <= 64: one bit per run of a task */
#define DL_SWEEP_MAX_SET     64
#define DL_SWEEP_MAX_SEEDS   100000
#define DL_SWEEP_HASH_HEX    65
#define DL_SWEEP_MAX_BATCH   64      /* tasks in one worker's batch (kernel mode: one boot) */

struct dl_sweep_scenario {
	char *path;
	const char *label;           /* path relative to the directory it was found in, or its base name */
	bool dtb;                    /* imported with dl_dtb_import_file() */
	char hash[DL_SWEEP_HASH_HEX];  /* SHA-256 of the content and the --set overrides */
	uint64_t cost;               /* a guess for scheduling: the file's size */
};

struct dl_sweep_plan {
	struct dl_sweep_scenario *sc;
	uint32_t nsc, capsc;
	enum dl_order order[DL_SWEEP_MAX_ORDERS];
	uint32_t norders;
	const char *kernel[DL_SWEEP_MAX_KERNELS];   /* NULL: the order's own (no --kernel) */
	uint32_t nkernels;
	uint32_t kver;               /* --kernel as DL_KVER() for the engines; 0: the order's own */
	struct dl_dtb_opts dtb;      /* how DTBs are imported (--kernel, --async, --drivers) */
	bool probe_module;           /* --probe-context module (des) */
	uint64_t seed0;
	uint32_t nseeds;
	const char *mode;            /* "des" or "threads" */
	uint32_t workers;            /* 0: each order's default */
	double time_scale;           /* threads mode */
	uint32_t max_wall;           /* threads mode: real seconds a run may take, DES-timed (0: any) */
	struct dl_override set[DL_SWEEP_MAX_SET];
	size_t nset;
	bool check;                  /* re-verify every run from its log (dl_check) */
	/* mode kernel: each kernel run's DES twins (DL_SWEEP_TWIN_* bits), each logged
	 * as a run of its own with sweep.mode "twin-model" or "twin-replay" */
	unsigned twins;
	bool twin_boot;              /* kernel mode, --probe-context boot: model twins probe at boot
				      * (sweep.mode "twin-model-boot"); else as the module does */
	int64_t timeout_ms;          /* mode kernel: --kernel-timeout (0: scaled to the batch) */
	uint64_t skip;               /* runs of every task left out: an order the kernel did not run */
	uint32_t batch;              /* local pool: tasks handed out at once (kernel mode: per boot) */
	int64_t *run_base;           /* per task: the run id of its first pending run (NULL: none) */
};

/* Kernel mode's twins of a kernel run (dl_sweep_plan.twins). */
#define DL_SWEEP_TWIN_MODEL  1u   /* the same scenario in the DES, guest cost profile */
#define DL_SWEEP_TWIN_REPLAY 2u   /* sim/twin: the DES with the kernel run's callback times */

/* A task is one scenario and one seed; its runs are orders × kernels (× the run and its twins). */
static inline uint32_t dl_sweep_ntasks(const struct dl_sweep_plan *p)
{
	return p->nsc * p->nseeds;
}

/* The run itself and each of its twins. */
static inline uint32_t dl_sweep_variants(const struct dl_sweep_plan *p)
{
	return 1 + (uint32_t)__builtin_popcount(p->twins);
}

static inline uint32_t dl_sweep_task_runs(const struct dl_sweep_plan *p)
{
	return p->norders * p->nkernels * dl_sweep_variants(p);
}

/* What run @r of a task is: bit r = (order * nkernels + kernel) * variants + variant. */
struct dl_sweep_slot {
	enum dl_order order;
	const char *kernel;          /* NULL: the order's own */
	unsigned twin;               /* 0: the run itself; else one DL_SWEEP_TWIN_* */
	const char *mode;            /* sweep.mode: the plan's, "twin-model[-boot]" or "twin-replay" */
	uint32_t of;                 /* the bit of the run it twins (itself when twin is 0) */
};

void dl_sweep_slot(const struct dl_sweep_plan *p, uint32_t r, struct dl_sweep_slot *s);

/*
 * Run ids are chosen before the sweep starts, the same in every process: the
 * pending runs in task order get FIRST, FIRST + 1, ...  A worker logs each run
 * under its final id, so that the coordinator can copy a shard's tables whole
 * (SQLite's transfer of raw records) instead of row by row.  0: -ENOMEM.
 */
int dl_sweep_assign_ids(struct dl_sweep_plan *p, const uint64_t *pending, int64_t first);

/* The id of run @r of @task (0: let the shard choose). */
static inline int64_t dl_sweep_run_id(const struct dl_sweep_plan *p, uint32_t task,
				      uint64_t pending, uint32_t r)
{
	if (!p->run_base)
		return 0;
	return p->run_base[task] + __builtin_popcountll(pending & ((1ull << r) - 1));
}

/* The workers recorded for a run of @order: --workers or the order's default. */
uint32_t dl_sweep_workers(const struct dl_sweep_plan *p, enum dl_order order);

/**
 * dl_sweep_add_scenarios() - add PATH (a scenario file, a directory of
 * *.json, or a glob), or with @dtb a DTB file or a directory searched
 * recursively for *.dtb.  Sorted by path within one argument.
 * Return: 0, or -ENOENT / -EINVAL / -ENOMEM with @err filled.
 */
int dl_sweep_add_scenarios(struct dl_sweep_plan *p, const char *arg, bool dtb, char *err,
			   size_t errlen);
/* Drop repeated paths (first kept).  Hash every scenario's content; -EIO and @err on a read error. */
int dl_sweep_hash_all(struct dl_sweep_plan *p, char *err, size_t errlen);
void dl_sweep_plan_free(struct dl_sweep_plan *p);
/* Task indices, the costliest first (for a queue and for a static split). */
uint32_t *dl_sweep_task_order(const struct dl_sweep_plan *p);

/* ---- OUT.db (coordinator) ---- */

/* Create or open OUT.db with the log's schema and the sweep table; -EEXIST (nothing
 * changed) when OUT.db.shards/ holds a file the sweep does not write. */
int dl_sweep_out_open(const char *path, struct sqlite3 **db, char *err, size_t errlen);
/*
 * For each task the bits of the runs not yet in OUT.db (bit o * nkernels + k).
 * A run on a kernel of a list whose DTB an older dlsim imported with the first
 * kernel's driver table is not done: its sweep row is removed (*@stale counts them).
 */
int dl_sweep_pending(struct sqlite3 *out, const struct dl_sweep_plan *p, uint64_t *pending,
		     uint32_t *stale);
/**
 * dl_sweep_merge() - record in OUT the complete runs of SHARD that OUT lacks
 * (by key): their small rows and where their events are, in one
 * transaction, from where OUT last looked (shards.seen).  *@merged: runs
 * (and recorded failures) recorded.  Return 0, or -EIO / -EEXIST (not a
 * shard) with @err.
 */
int dl_sweep_merge(struct sqlite3 *out, const char *shard, uint32_t *merged, char *err,
		   size_t errlen);
/**
 * dl_sweep_merge_dir() - merge the runs of the shard files of OUTPATH's shard
 * directory whose name starts with @prefix (NULL: all) that OUT lacks; the
 * files stay.  *@merged: runs copied.
 */
int dl_sweep_merge_dir(struct sqlite3 *out, const char *outpath, const char *prefix,
		       uint32_t *merged, char *err, size_t errlen);
/**
 * dl_sweep_compact() - copy the events (dl_log_shard_tables) of every run of
 * OUT (at OUTPATH) that has them in a shard into OUT, then remove the files
 * of OUTPATH.shards/ that the sweep wrote.  *@runs: runs whose events moved.
 * Return: 0; -ENOENT (a shard is missing) or -EINVAL (a file is not the
 * shard OUT says) with nothing changed for that shard and @err naming it.
 */
int dl_sweep_compact(struct sqlite3 *out, const char *outpath, uint32_t *runs, char *err,
		     size_t errlen);
/**
 * dl_sweep_lock() - mark OUTPATH as being written by a sweep (shared: several
 * sweeps may) or, with @compact, by --compact (exclusive): a lock on
 * OUTPATH.shards/sweep.lock (created with its folder), held while *@fd is
 * open in this process or the workers it forks, and gone with them however
 * they end.  Return: 0; -EBUSY when the other kind holds it (@err says who
 * and what to do); another -errno with @err.
 */
int dl_sweep_lock(const char *outpath, bool compact, int *fd, char *err, size_t errlen);
/* Lets go of dl_sweep_lock()'s @fd (-1: nothing); @remove: the lock file and, if then empty, its folder. */
void dl_sweep_unlock(const char *outpath, int fd, bool remove);
/* The next free run id of OUT (max + 1). */
int64_t dl_sweep_out_next_id(struct sqlite3 *out);
int dl_sweep_out_finish(struct sqlite3 *out, char *err, size_t errlen);
/* The shard directory of OUT (OUT.shards) into @buf. */
void dl_sweep_shard_dir(const char *out, char *buf, size_t len);
/* Merge the runs OUT lacks from every shard in the directory (a sweep that was killed). */
int dl_sweep_recover(struct sqlite3 *out, const char *outpath, uint32_t *merged, char *err,
		     size_t errlen);

/* Records the @pending runs of @task as failed with @why (INSERT OR IGNORE); *@failed counts them. */
int dl_sweep_out_fail(struct sqlite3 *out, const struct dl_sweep_plan *p, uint32_t task,
		      uint64_t pending, const char *why, uint32_t *failed);
/* The shard of process @pid (and MPI rank @rank, or -1) of the sweep into OUT. */
void dl_sweep_shard_path(const char *out, long pid, int rank, char *buf, size_t len);

/* ---- the coordinator: the single writer of OUT.db ---- */

struct dl_sweep_task_result {
	uint32_t runs, failed, violations, interrupted;
	uint64_t lock_wait_ns, lock_hold_ns;   /* direct: OUT.db's write lock (wall time) */
	uint64_t lock_hold_cpu_ns;             /* the CPU time spent holding it: the serial part */
};

struct dl_sweep_coord {
	const char *outpath;
	struct sqlite3 *out;
	atomic_int *stop;
	uint32_t total;              /* runs to do in this sweep */
	uint32_t done, failed, violations;   /* runs finished (ok or not), of them failed, violating */
	uint32_t merged;             /* rows of the sweep table written to OUT */
	bool direct;                 /* workers commit into OUT themselves (else: shards) */
	const char *node_shards;     /* MPI: ranks but 0 write their shards here and leave
				      * their runs there (gathered by hand at the end); NULL: no */
	uint64_t lock_wait_ns, lock_hold_ns;   /* direct: all workers' time waiting for / holding the lock */
	uint64_t lock_hold_cpu_ns;             /* and the CPU time they spent holding it */
	void (*progress)(struct dl_sweep_coord *co);   /* called now and then */
	/* called when a worker reports a task done (NULL: not called) */
	void (*task_done)(struct dl_sweep_coord *co, uint32_t task,
			  const struct dl_sweep_task_result *res);
	void *ctx;
	char err[512];
};

/**
 * dl_sweep_pool() - run every pending run with @jobs worker processes and
 * merge them into co->out.  Stops handing out tasks when *co->stop is set
 * (runs in flight end as 'interrupted' and are not merged).
 * Return: 0, or negative with co->err.
 */
int dl_sweep_pool(struct dl_sweep_coord *co, const struct dl_sweep_plan *p,
		  const uint64_t *pending, uint32_t jobs);

/**
 * dl_sweep_mpi_run() - (dlsim-mpi only; between MPI_Init and MPI_Finalize)
 * every rank runs its share of @pending into its own shard: tasks from a
 * shared counter on rank 0 (@queue) or every N-th task.  Rank 0 (co->out
 * set) merges all shards every second and at the end; co's counts are the
 * whole sweep's there.  Return: 0, or negative with co->err.
 */
int dl_sweep_mpi_run(struct dl_sweep_coord *co, const struct dl_sweep_plan *p,
		     const uint64_t *pending, bool queue);

/* ---- a worker ---- */

struct dl_sweep_worker;


/*
 * A worker that logs into shard SHARD (the file SHARD-s0.db, which stays);
 * with @outpath (direct) dl_sweep_worker_run() commits each run's small rows
 * into OUT.db itself as soon as the run ends.
 */
int dl_sweep_worker_open(const char *shard, const char *outpath, const struct dl_sweep_plan *p,
			 struct dl_sweep_worker **out, char *err, size_t errlen);
/* SQLite's message after a failed dl_sweep_worker_run(). */
const char *dl_sweep_worker_error(const struct dl_sweep_worker *w);
/* Runs the @pending runs of @task into the shard; stops early when *stop is set. */
int dl_sweep_worker_run(struct dl_sweep_worker *w, uint32_t task, uint64_t pending,
			atomic_int *stop, struct dl_sweep_task_result *res);
/*
 * @n tasks at once (@res: one result each): in kernel mode one guest per
 * kernel boots every pending run of the @n scenarios; otherwise one after
 * another, as dl_sweep_worker_run().
 */
int dl_sweep_worker_run_batch(struct dl_sweep_worker *w, const uint32_t *task,
			      const uint64_t *pending, uint32_t n, atomic_int *stop,
			      struct dl_sweep_task_result *res);
/* Records the pending runs of @task as failed with @why (a worker that died on it). */
int dl_sweep_worker_fail(struct dl_sweep_worker *w, uint32_t task, uint64_t pending,
			 const char *why);
void dl_sweep_worker_close(struct dl_sweep_worker *w);

#endif
