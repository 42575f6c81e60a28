/*
 * sw_worker.c - one worker of a sweep: runs tasks (a scenario and a seed,
 * every pending order × kernel) into its own shard through the engines'
 * public entry points and the log writer, exactly as `dlsim run` logs a run,
 * re-checks each run from its log, and then writes the run's sweep row:
 * the mark the merge copies on.
 *
 * Direct (a worker on OUT.db's host): the shard is a scratch log that holds
 * one run; when the run is done the worker itself copies it into OUT.db in
 * one BEGIN IMMEDIATE transaction (SQLite's write lock: one writer at a
 * time, the others simulate meanwhile) and empties it.  Shards: the
 * coordinator copies closed segments (dl_sweep_worker_rotate).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sim/engine/engine.h"
#include "sim/log/dl_log_result.h"
#include "sim/engine/threads.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"
#include "sim/scenario/dtb_import.h"
#include "sim/sweep/sw_internal.h"
#include "sim/sweep/sweep.h"

#define EV_BATCH 8192

/* How long a direct worker waits for OUT.db's write lock before it gives up. */
#define LOCK_WAIT_MS 600000
#define LOCK_POLL_US 200

struct dl_sweep_worker {
	const struct dl_sweep_plan *p;
	const char *outpath;         /* direct: OUT.db (NULL: shards) */
	bool mem;                    /* direct: the scratch is in memory (else a file) */
	sqlite3 *out;                /* direct: OUT.db, the scratch attached as 's' */
	struct sw_merge *merge;
	int64_t lock_deadline;
	char base[4200];             /* the shard's name; segment k is BASE-sK.db */
	char path[4300];             /* the open segment */
	unsigned seg;
	uint32_t runs;               /* runs in the open segment */
	struct timespec opened;
	struct dl_log *log;
	sqlite3 *db;                 /* second connection: sweep rows, check */
	sqlite3_stmt *ins, *mark;
	struct dl_run_result r;
	struct dl_event ev[EV_BATCH];
	size_t nev;
};

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* OUT.db's write lock is taken by whole tasks: poll finely, the holder is quick. */
static int lock_busy(void *ctx, int n)
{
	struct dl_sweep_worker *w = ctx;
	struct timespec ts = { 0, LOCK_POLL_US * 1000 };

	if (n == 0)
		w->lock_deadline = now_ns() + LOCK_WAIT_MS * 1000000LL;
	else if (now_ns() > w->lock_deadline)
		return 0;
	nanosleep(&ts, NULL);
	return 1;
}

static void worker_shut(struct dl_sweep_worker *w)
{
	sw_merge_free(w->merge);
	w->merge = NULL;
	sqlite3_close(w->out);
	w->out = NULL;
	sqlite3_finalize(w->ins);
	sqlite3_finalize(w->mark);
	sqlite3_close(w->db);
	dl_log_close(w->log);
	w->ins = w->mark = NULL;
	w->db = NULL;
	w->log = NULL;
}

/* Direct: OUT.db with the scratch attached as 's', and the merge's statements. */
static int out_open(struct dl_sweep_worker *w, char *err, size_t errlen)
{
	sqlite3_stmt *att = NULL;
	/* URIs for ATTACH of the scratch in memory; OUT.db itself is a plain path (the
	 * coordinator opened and checked it) unless it looks like a URI: then the
	 * scratch is a file (scratch_open) */
	int rc = sqlite3_open_v2(w->outpath, &w->out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
				 (w->mem ? SQLITE_OPEN_URI : 0), NULL);
	int ret = 0;

	if (rc != SQLITE_OK)
		ret = -EIO;
	sqlite3_busy_handler(w->out, lock_busy, w);
	/* as `dlsim run` writes a log: WAL, no sync per commit (the checkpoints sync) */
	if (!ret && sqlite3_exec(w->out, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK)
		ret = -EIO;
	if (!ret && sqlite3_prepare_v2(w->out, "ATTACH ?1 AS s", -1, &att, NULL) != SQLITE_OK)
		ret = -EIO;
	else if (!ret)
		sqlite3_bind_text(att, 1, w->path, -1, SQLITE_STATIC);
	if (!ret && sqlite3_step(att) != SQLITE_DONE)
		ret = -EIO;
	sqlite3_finalize(att);
	if (!ret && (sqlite3_exec(w->out, "PRAGMA s.journal_mode = MEMORY; PRAGMA s.synchronous = OFF;"
				  " PRAGMA s.secure_delete = OFF;", NULL, NULL, NULL) != SQLITE_OK ||
		     sw_merge_prepare(w->out, &w->merge)))
		ret = -EIO;
	if (ret)
		snprintf(err, errlen, "%s: cannot attach its scratch %s: %s", w->outpath, w->path,
			 w->out ? sqlite3_errmsg(w->out) : "out of memory");
	return ret;
}

/*
 * Direct: the finished run (or a recorded failure) in the scratch into
 * OUT.db in one transaction, then the scratch emptied.  A run without its
 * sweep row (interrupted) is not copied.  The time spent waiting for the
 * write lock and holding it is added to @res.
 */
static int commit_runs(struct dl_sweep_worker *w, struct dl_sweep_task_result *res)
{
	int64_t t0 = now_ns(), t1, c1, hwm = 0;
	uint32_t merged = 0;
	int ret = 0;

	if (!w->runs)
		return sw_merge_clear(w->merge);    /* an interrupted run, if any */
	if (sqlite3_exec(w->out, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	t1 = now_ns();
	c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	res->lock_wait_ns += (uint64_t)(t1 - t0);
	ret = sw_merge_step(w->merge, true, &hwm, &merged);
	if (sqlite3_exec(w->out, ret ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !ret) {
		sqlite3_exec(w->out, "ROLLBACK", NULL, NULL, NULL);
		ret = -EIO;
	}
	res->lock_hold_ns += (uint64_t)(now_ns() - t1);
	res->lock_hold_cpu_ns += (uint64_t)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - c1);
	if (!ret)
		ret = sw_merge_clear(w->merge);
	w->runs = 0;
	return ret;
}

const char *dl_sweep_worker_error(const struct dl_sweep_worker *w)
{
	return w->out ? sqlite3_errmsg(w->out) : w->db ? sqlite3_errmsg(w->db) : "out of memory";
}

/* The worker's second connection to its shard or scratch. */
static int scratch_conn(struct dl_sweep_worker *w, char *err, size_t errlen)
{
	char *emsg = NULL;

	if (!w->outpath)
		return dl_log_open_existing(w->path, &w->db, err, errlen);
	if (sqlite3_open_v2(w->path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
			    (w->mem ? SQLITE_OPEN_URI : 0), NULL) != SQLITE_OK ||
	    sqlite3_exec(w->db, DL_LOG_SCRATCH_PRAGMAS, NULL, NULL, &emsg) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", w->path, emsg ? emsg :
			 w->db ? sqlite3_errmsg(w->db) : "out of memory");
		sqlite3_free(emsg);
		return -EIO;
	}
	sqlite3_busy_timeout(w->db, DL_LOG_BUSY_MS);
	return 0;
}

/* Opens segment w->seg of the shard (direct: the scratch): the log writer and a second connection. */
static int segment_open(struct dl_sweep_worker *w, char *err, size_t errlen)
{
	size_t n = strlen(w->base);
	char *emsg = NULL;
	int ret;

	if (n > 3 && !strcmp(w->base + n - 3, ".db"))
		n -= 3;
	if (!w->outpath)
		snprintf(w->path, sizeof(w->path), "%.*s-s%u.db", (int)n, w->base, w->seg);
	else if (w->mem)
		snprintf(w->path, sizeof(w->path), "file:/dlsim-sweep-%ld?vfs=memdb", (long)getpid());
	else
		snprintf(w->path, sizeof(w->path), "%.*s.scratch", (int)n, w->base);
	w->runs = 0;
	clock_gettime(CLOCK_MONOTONIC, &w->opened);
	ret = w->outpath ? dl_log_open_scratch(w->path, &w->log, err, errlen) :
	      dl_log_open(w->path, &w->log, err, errlen);
	if (!ret)
		ret = scratch_conn(w, err, errlen);
	if (!ret && (sqlite3_exec(w->db, sw_sweep_schema, NULL, NULL, &emsg) != SQLITE_OK ||
		     sqlite3_prepare_v2(w->db, "INSERT INTO sweep(run_id, scenario_hash, source,"
					" order_name, seed, kernel, mode, workers, status, error)"
					" VALUES(?,?,?,?,?,?,?,?,?,?)", -1, &w->ins, NULL) != SQLITE_OK ||
		     sqlite3_prepare_v2(w->db, "UPDATE runs SET status = 'violations' WHERE run_id = ?",
					-1, &w->mark, NULL) != SQLITE_OK)) {
		snprintf(err, errlen, "%s: %s", w->path, emsg ? emsg : sqlite3_errmsg(w->db));
		sqlite3_free(emsg);
		ret = -EIO;
	}
	if (!ret && w->outpath)
		ret = out_open(w, err, errlen);
	return ret;
}

/*
 * Direct: a scratch in memory holds a run of up to DL_SWEEP_MEM_ITEMS devices
 * and links (some 2 kB of log each); a bigger run is logged to a file
 * instead (OUT.db.shards/NAME.scratch), so that a million devices need disk,
 * not memory.  Switches between the two when a task needs the other.
 */
static int scratch_fit(struct dl_sweep_worker *w, const struct dl_scenario *sc)
{
	bool mem = (uint64_t)sc->ndev + sc->nlink <= DL_SWEEP_MEM_ITEMS && strncmp(w->outpath, "file:", 5);
	char err[512];
	int ret;

	if (mem == w->mem)
		return 0;
	worker_shut(w);
	if (!w->mem)
		unlink(w->path);
	w->mem = mem;
	ret = segment_open(w, err, sizeof(err));
	if (ret)
		fprintf(stderr, "dlsim sweep: worker: %s\n", err);
	return ret;
}

int dl_sweep_worker_open(const char *shard, const char *outpath, const struct dl_sweep_plan *p,
			 struct dl_sweep_worker **out, char *err, size_t errlen)
{
	struct dl_sweep_worker *w = calloc(1, sizeof(*w));
	int ret;

	*out = NULL;
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->p = p;
	w->outpath = outpath;
	w->mem = outpath && strncmp(outpath, "file:", 5);
	snprintf(w->base, sizeof(w->base), "%s", shard);
	ret = segment_open(w, err, errlen);
	if (ret) {
		dl_sweep_worker_close(w);
		return ret;
	}
	*out = w;
	return 0;
}

void dl_sweep_worker_close(struct dl_sweep_worker *w)
{
	if (!w)
		return;
	worker_shut(w);
	if (w->outpath && !w->mem)
		unlink(w->path);
	free(w);
}

int dl_sweep_worker_rotate(struct dl_sweep_worker *w, int64_t min_age_ns, char *err, size_t errlen)
{
	struct timespec now;
	char done[4400], wal[4400];
	size_t n = strlen(w->path);

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (w->outpath || !w->runs || (int64_t)(now.tv_sec - w->opened.tv_sec) * 1000000000LL +
	    (now.tv_nsec - w->opened.tv_nsec) < min_age_ns)
		return 0;
	worker_shut(w);
	/* closed cleanly, the segment is one file (its WAL checkpointed and removed):
	 * only then is it renamed for the coordinator; otherwise it waits for the end */
	snprintf(wal, sizeof(wal), "%s-wal", w->path);
	snprintf(done, sizeof(done), "%.*s.done.db", (int)(n - 3), w->path);
	if (access(wal, F_OK) != 0 && rename(w->path, done) != 0) {
		snprintf(err, errlen, "%s: cannot rename: %s", w->path, strerror(errno));
		return -EIO;
	}
	w->seg++;
	return segment_open(w, err, errlen);
}

static void batch_emit(void *ctx, struct dl_event *e)
{
	struct dl_sweep_worker *w = ctx;

	w->ev[w->nev++] = *e;
	if (w->nev == EV_BATCH) {
		dl_log_events(w->log, w->ev, w->nev);
		w->nev = 0;
	}
}

static int record(struct dl_sweep_worker *w, int64_t run_id, const struct dl_sweep_scenario *s,
		  enum dl_order o, uint64_t seed, const char *kernel, const char *status,
		  const char *error)
{
	sqlite3_stmt *st = w->ins;

	if (run_id)
		sqlite3_bind_int64(st, 1, run_id);
	else
		sqlite3_bind_null(st, 1);
	w->runs++;
	sqlite3_bind_text(st, 2, s->hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, s->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, dl_order_name(o), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (int64_t)seed);
	if (kernel)
		sqlite3_bind_text(st, 6, kernel, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 6);
	sqlite3_bind_text(st, 7, w->p->mode, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, dl_sweep_workers(w->p, o));
	sqlite3_bind_text(st, 9, status, -1, SQLITE_STATIC);
	if (error)
		sqlite3_bind_text(st, 10, error, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 10);
	return sqlite3_step(st) == SQLITE_DONE ? (sqlite3_reset(st), 0) : (sqlite3_reset(st), -EIO);
}

/* One logged run, as `dlsim run` logs it; then the check and the sweep row. */
static int run_one(struct dl_sweep_worker *w, const struct dl_scenario *sc,
		   const struct dl_sweep_scenario *s, enum dl_order o, uint64_t seed,
		   const char *kernel, int64_t run_id, atomic_int *stop,
		   struct dl_sweep_task_result *res)
{
	const struct dl_sweep_plan *p = w->p;
	struct dl_engine_opts eo = { .order = o, .workers = p->workers, .seed = seed, .stop = stop,
				     .kernel = p->kver, .probe_module = p->probe_module,
				     .sink = { .emit = batch_emit, .ctx = w } };
	char kv[16];
	struct dl_run_info info = {
		.scenario = sc->name, .order = dl_order_name(o), .mode = p->mode,
		.version = DLSIM_VERSION, .kernel = kv, .seed = seed, .devices = sc->ndev,
		.links = sc->nlink, .workers = dl_sweep_workers(p, o), .run_id = run_id,
		.probe_context = p->probe_module ? "module" : "boot",
	};
	struct dl_check_result cr;
	const char *status;
	char why[160] = "";
	int rc;

	/* the kernel whose rules the engine follows: --kernel, else the order's */
	dl_kver_format(dl_order_kernel(o, p->kver), kv, sizeof(kv));
	if (dl_log_run_begin(w->log, &info, &run_id))
		return -EIO;
	for (uint32_t i = 0; i < sc->ndev; i++)
		dl_log_device(w->log, i, dl_sc_name(sc, i), sc->dev[i].parent, sc->dev[i].async);
	w->nev = 0;
	memset(&w->r, 0, sizeof(w->r));
	if (!strcmp(p->mode, "threads"))
		rc = dl_threads_run(sc, &eo, p->time_scale, &w->r);
	else
		rc = dl_engine_run(sc, &eo, &w->r);
	if (w->nev)
		dl_log_events(w->log, w->ev, w->nev);
	w->nev = 0;
	if (!w->r.status)
		w->r.status = rc == -EINTR ? "interrupted" : "failed";
	if (dl_log_run_result(w->log, &w->r))
		return -EIO;
	res->runs++;
	if (rc == -EINTR || !strcmp(w->r.status, "interrupted")) {
		res->interrupted++;
		return 0;               /* no sweep row: the next sweep runs it again */
	}
	status = w->r.status;
	if (rc < 0)
		snprintf(why, sizeof(why), "the engine failed: %s", strerror(-rc));
	else if (w->r.fail_dev != DL_SC_NONE && w->r.fail_dev < sc->ndev)
		snprintf(why, sizeof(why), "device '%.100s' returned %d", dl_sc_name(sc, w->r.fail_dev),
			 w->r.err);
	if (p->check && rc >= 0) {
		if (dl_check_run_ex(w->db, run_id, 0, NULL, &cr) < 0)
			return -EIO;
		if (cr.total) {
			status = "violations";
			snprintf(why, sizeof(why), "%llu violation%s (dlsim check --run ID lists them)",
				 (unsigned long long)cr.total, cr.total == 1 ? "" : "s");
			sqlite3_bind_int64(w->mark, 1, run_id);
			sqlite3_step(w->mark);
			sqlite3_reset(w->mark);
		}
	}
	if (!strcmp(status, "failed"))
		res->failed++;
	else if (!strcmp(status, "violations"))
		res->violations++;
	return record(w, run_id, s, o, seed, kernel, status, why[0] ? why : NULL);
}

static int load(const struct dl_sweep_plan *p, const struct dl_sweep_scenario *s, uint64_t seed,
		struct dl_scenario **sc, struct dl_error *err)
{
	json_t *root;
	int ret;

	if (!s->dtb)
		return dl_scenario_load(s->path, p->set, p->nset, &seed, sc, err);
	ret = dl_dtb_import_file_opts(s->path, &p->dtb, &root, NULL, err);
	if (ret)
		return ret;
	ret = dl_scenario_load_json(s->path, root, p->set, p->nset, &seed, sc, err);
	json_decref(root);
	return ret;
}

int dl_sweep_worker_run(struct dl_sweep_worker *w, uint32_t task, uint64_t pending,
			atomic_int *stop, struct dl_sweep_task_result *res)
{
	const struct dl_sweep_plan *p = w->p;
	const struct dl_sweep_scenario *s = &p->sc[task / p->nseeds];
	uint64_t seed = p->seed0 + task % p->nseeds;
	struct dl_scenario *sc = NULL;
	struct dl_error err;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	if (!pending)
		return 0;
	if (load(p, s, seed, &sc, &err)) {
		/* a scenario that does not load (a malformed DTB): each of its runs failed */
		res->failed = (uint32_t)__builtin_popcountll(pending);
		ret = dl_sweep_worker_fail(w, task, pending, err.msg);
		if (!ret && w->outpath)
			ret = commit_runs(w, res);
		return ret;
	}
	if (w->outpath)
		ret = scratch_fit(w, sc);
	for (uint32_t r = 0; r < dl_sweep_task_runs(p) && !ret && !*stop; r++) {
		if (!(pending & (1ull << r)))
			continue;
		ret = run_one(w, sc, s, p->order[r / p->nkernels], seed, p->kernel[r % p->nkernels],
			      dl_sweep_run_id(p, task, pending, r), stop, res);
		/* direct: each run committed as it ends, so a scratch holds one run */
		if (!ret && w->outpath)
			ret = commit_runs(w, res);
	}
	dl_scenario_free(sc);
	return ret;
}

int dl_sweep_worker_fail(struct dl_sweep_worker *w, uint32_t task, uint64_t pending,
			 const char *why)
{
	const struct dl_sweep_plan *p = w->p;
	const struct dl_sweep_scenario *s = &p->sc[task / p->nseeds];
	uint64_t seed = p->seed0 + task % p->nseeds;

	for (uint32_t r = 0; r < dl_sweep_task_runs(p); r++) {
		if (!(pending & (1ull << r)))
			continue;
		if (record(w, 0, s, p->order[r / p->nkernels], seed, p->kernel[r % p->nkernels],
			   "failed", why))
			return -EIO;
	}
	return 0;
}
