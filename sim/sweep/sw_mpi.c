/*
 * sw_mpi.c - the sweep on MPI ranks (built into dlsim-mpi when CMake finds
 * MPI).  Every rank is a worker.  A rank on rank 0's node (the node that
 * holds OUT.db: MPI_COMM_TYPE_SHARED) commits each finished task into OUT.db
 * itself, under SQLite's write lock (direct); a rank on another node, or
 * every rank with --write shards, writes its own shard, and rank 0 merges
 * the shards every second between its own runs, and once more when every
 * rank is done.  SQLite's locks (and WAL's shared memory) hold only among
 * processes of one host, hence the split by node.
 *
 * Tasks are handed out by a shared counter in an MPI window on rank 0
 * (MPI_Fetch_and_op: no rank serves requests, so rank 0's own runs delay
 * nobody), in the costliest-first order; or, with --distribute static,
 * rank r runs tasks r, r+N, r+2N, ... of that order.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include <sqlite3.h>

#include "sim/sweep/sw_internal.h"
#include "sim/sweep/sweep.h"

#define MERGE_EVERY_NS 1000000000LL
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Merge the segments the ranks closed; with @final, every shard file (all ranks are done). */
static int merge_dir(struct dl_sweep_coord *co, bool final)
{
	char dir[4096];
	uint32_t k = 0;
	int ret;

	ret = dl_sweep_merge_dir(co->out, co->outpath, NULL, &k, co->err, sizeof(co->err));
	co->merged += k;
	if (final && !ret) {
		dl_sweep_shard_dir(co->outpath, dir, sizeof(dir));
		rmdir(dir);
	}
	return ret;
}

/* A rank's counts, summed on rank 0 at the end (MPI_Reduce of FIGURES). */
enum { F_DONE, F_FAILED, F_VIOLATIONS, F_LOCK_WAIT, F_LOCK_HOLD, F_LOCK_HOLD_CPU, FIGURES };

/*
 * This rank's shard (in SHARD) and worker: a rank on rank 0's node writes
 * OUT.db directly (co->direct); with --node-shards, ranks but 0 write into
 * their node's own folder.  0, or -1 with ERR set.
 */
static int open_worker(const struct dl_sweep_coord *co, const struct dl_sweep_plan *p, int rank,
		       char *shard, size_t len, struct dl_sweep_worker **w, char *err, size_t errlen)
{
	char dir[4096];
	int lowest = 0;
	bool direct, local;
	MPI_Comm node;

	/* on rank 0's node: the lowest rank of my node is 0 */
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, node);
	MPI_Comm_free(&node);
	local = co->node_shards && rank != 0;
	direct = co->direct && lowest == 0 && !local;
	dl_sweep_shard_dir(co->outpath, dir, sizeof(dir));
	if (rank == 0)
		mkdir(dir, 0777);
	MPI_Barrier(MPI_COMM_WORLD);
	mkdir(dir, 0777);               /* a node of its own (a shared file system) */
	dl_sweep_shard_path(co->outpath, (long)getpid(), rank, shard, len);
	if (local) {
		/* node-local: the same shard name, in the node's own folder; its runs reach
		 * OUT.db when the folder is gathered into OUT.db.shards/ (dl_sweep_recover) */
		const char *base = strrchr(shard, '/');
		char name[4200];

		snprintf(name, sizeof(name), "%s", base ? base + 1 : shard);
		mkdir(co->node_shards, 0777);
		snprintf(shard, len, "%.2000s/%.2000s", co->node_shards, name);
	}
	return dl_sweep_worker_open(shard, direct ? co->outpath : NULL, p, w, err, errlen) ? -1 : 0;
}

/* Tasks a rank takes at a time (kernel mode: plan.batch a boot), but no more than
 * leaves every one of SIZE ranks a share of the pending tasks. */
static int64_t batch_len(const struct dl_sweep_plan *p, const uint64_t *pending, uint32_t ntask,
			 int size)
{
	uint32_t np = 0;
	int64_t nb;

	for (uint32_t t = 0; t < ntask; t++)
		np += pending[t] != 0;
	np = (np + (uint32_t)size - 1) / (uint32_t)size;
	nb = p->batch > 1 ? (p->batch < DL_SWEEP_MAX_BATCH ? p->batch : DL_SWEEP_MAX_BATCH) : 1;
	if (nb > (int64_t)np)
		nb = np ? np : 1;
	return nb;
}

/* The pending ones of tasks K .. K + NB - 1 of ORDER, into BT (their runs in BP): how many. */
static uint32_t take_batch(const uint32_t *order, const uint64_t *pending, uint32_t ntask,
			   int64_t k, int64_t nb, uint32_t *bt, uint64_t *bp)
{
	uint32_t n = 0;

	for (int64_t i = k; i < k + nb && i < (int64_t)ntask; i++)
		if (pending[order[i]]) {
			bt[n] = order[i];
			bp[n++] = pending[order[i]];
		}
	return n;
}

/* The N results of a batch, added to this rank's counts; the runs finished. */
static int64_t count_batch(const struct dl_sweep_task_result *rb, uint32_t n,
			   unsigned long long *mine)
{
	int64_t fin = 0;

	for (uint32_t i = 0; i < n; i++) {
		fin += rb[i].runs - rb[i].interrupted;
		mine[F_FAILED] += rb[i].failed;
		mine[F_VIOLATIONS] += rb[i].violations;
		mine[F_LOCK_WAIT] += rb[i].lock_wait_ns;
		mine[F_LOCK_HOLD] += rb[i].lock_hold_ns;
		mine[F_LOCK_HOLD_CPU] += rb[i].lock_hold_cpu_ns;
	}
	mine[F_DONE] += (unsigned long long)fin;
	return fin;
}

/* Rank 0, every second: merge the closed segments, show the runs every rank finished. */
static int merge_and_show(struct dl_sweep_coord *co, MPI_Win win)
{
	int64_t none = 0, done = 0;
	int ret = merge_dir(co, false) ? -EIO : 0;

	if (co->progress) {
		MPI_Fetch_and_op(&none, &done, MPI_INT64_T, 0, 1, MPI_NO_OP, win);
		MPI_Win_flush(0, win);
		co->done = (uint32_t)done;
		co->progress(co);
	}
	return ret;
}

/* Rank 0, every rank done: the rest of the shards merged, the sums of the ranks' counts. */
static int finish(struct dl_sweep_coord *co, const unsigned long long *all)
{
	int ret = merge_dir(co, true) ? -EIO : 0;

	co->done = (uint32_t)all[F_DONE];
	co->failed = (uint32_t)all[F_FAILED];
	co->violations = (uint32_t)all[F_VIOLATIONS];
	co->lock_wait_ns = all[F_LOCK_WAIT];
	co->lock_hold_ns = all[F_LOCK_HOLD];
	co->lock_hold_cpu_ns = all[F_LOCK_HOLD_CPU];
	return ret;
}

int dl_sweep_mpi_run(struct dl_sweep_coord *co, const struct dl_sweep_plan *p,
		     const uint64_t *pending, bool queue)
{
	uint32_t ntask = dl_sweep_ntasks(p), *order = dl_sweep_task_order(p);
	struct dl_sweep_worker *w = NULL;
	int64_t last_merge = now_ns(), *counter = NULL, nb;
	unsigned long long mine[FIGURES] = { 0 }, all[FIGURES] = { 0 };
	char shard[4200], err[512] = "";
	int rank, size, bad = 0, anybad = 0, ret = 0;
	MPI_Win win;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (open_worker(co, p, rank, shard, sizeof(shard), &w, err, sizeof(err)) || !order)
		bad = 1;
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (anybad) {
		snprintf(co->err, sizeof(co->err), "rank %d: %.480s", rank, err[0] ? err : "cannot start");
		dl_sweep_worker_close(w);
		free(order);
		return -EIO;
	}
	/* on rank 0: [0] the next task, [1] the runs every rank has finished (progress) */
	MPI_Win_allocate(rank == 0 ? (MPI_Aint)(2 * sizeof(int64_t)) : 0, sizeof(int64_t),
			 MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win);
	if (rank == 0)
		counter[0] = counter[1] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
	nb = batch_len(p, pending, ntask, size);
	for (uint32_t j = 0; !ret && !*co->stop; j++) {
		int64_t k = ((int64_t)j * size + rank) * nb, fin;
		struct dl_sweep_task_result rb[DL_SWEEP_MAX_BATCH];
		uint32_t bt[DL_SWEEP_MAX_BATCH], n;
		uint64_t bp[DL_SWEEP_MAX_BATCH];

		if (queue) {
			MPI_Fetch_and_op(&nb, &k, MPI_INT64_T, 0, 0, MPI_SUM, win);
			MPI_Win_flush(0, win);
		}
		if (k >= (int64_t)ntask)
			break;
		/* tasks k .. k + nb - 1 (kernel mode: one boot for all of them) */
		n = take_batch(order, pending, ntask, k, nb, bt, bp);
		if (!n)
			continue;
		ret = dl_sweep_worker_run_batch(w, bt, bp, n, co->stop, rb);
		if (ret)
			snprintf(co->err, sizeof(co->err), "rank %d: %s", rank, dl_sweep_worker_error(w));
		fin = count_batch(rb, n, mine);
		MPI_Accumulate(&fin, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, MPI_SUM, win);
		MPI_Win_flush(0, win);
		if (rank == 0 && now_ns() - last_merge >= MERGE_EVERY_NS) {
			if (merge_and_show(co, win) && !ret)
				ret = -EIO;
			last_merge = now_ns();
		}
	}
	if (ret && !co->err[0])
		snprintf(co->err, sizeof(co->err), "rank %d: writing its shard %.400s failed", rank, shard);
	MPI_Win_unlock_all(win);
	MPI_Win_free(&win);
	dl_sweep_worker_close(w);
	MPI_Reduce(mine, all, FIGURES, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	/* every shard is closed now: rank 0 takes the rest */
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0 && finish(co, all) && !ret)
		ret = -EIO;
	free(order);
	return ret;
}
