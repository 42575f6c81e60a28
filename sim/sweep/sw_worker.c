/*
 * sw_worker.c - one worker of a sweep: runs tasks (a scenario and a seed,
 * every pending order × kernel) into its own shard through dl_run(), the
 * entry point `dlsim run` logs a run through,
 * re-checks each run from its log, and then writes the run's sweep row:
 * the mark the merge copies on.
 *
 * The shard stays with the run's events.  Direct (a worker on OUT.db's
 * host): when the run is done the worker itself copies its small rows and
 * where its events are into OUT.db in one BEGIN IMMEDIATE transaction
 * (SQLite's write lock, held for some 60 rows: one writer at a time, the
 * others simulate meanwhile).  Otherwise the coordinator copies them.
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
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_batch.h"
#include "sim/engine/cost.h"
#include "sim/kernel/kmode.h"
#include "sim/run/dl_run.h"
#include "sim/scenario/dtb_import.h"
#include "sim/sweep/sw_internal.h"
#include "sim/sweep/sweep.h"
#include "sim/log/dl_log_shard.h"
#include "sim/log/dl_testhook.h"
#include "sim/twin/twin.h"

/* How long a direct worker waits for OUT.db's write lock before it gives up. */
#define LOCK_WAIT_MS 600000
#define LOCK_POLL_US 200

struct dl_sweep_worker {
	const struct dl_sweep_plan *p;
	const char *outpath;         /* direct: OUT.db (NULL: shards) */
	sqlite3 *out;                /* direct: OUT.db, the scratch attached as 's' */
	struct sw_merge *merge;
	int64_t lock_deadline;
	char base[4200];             /* the shard's name; segment k is BASE-sK.db */
	char path[4300];             /* the open segment */
	uint32_t runs;               /* runs in the open segment */
	struct dl_log *log;
	sqlite3 *db;                 /* second connection: sweep rows, check */
	sqlite3_stmt *ins, *mark;
	enum dl_backend backend;     /* p->mode */
	struct dl_run_result r;
	struct dl_log_batch batch;
	char err[600];               /* the first failure, said when it happened (worker_err()) */
};

/*
 * Keep why the worker failed when it fails: a ROLLBACK after it replaces
 * SQLite's message ("cannot rollback - no transaction is active", "not an
 * error"), and a full disk is to be said as such.  Returns -EIO.
 */
static int worker_err(struct dl_sweep_worker *w, const char *what, sqlite3 *db)
{
	int rc = db ? sqlite3_extended_errcode(db) & 0xff : SQLITE_NOMEM;

	if (!w->err[0])
		snprintf(w->err, sizeof(w->err), "%s%s: %s", rc == SQLITE_FULL ? "disk full: " : "",
			 what, db ? sqlite3_errmsg(db) : "out of memory");
	return rc == SQLITE_FULL ? -ENOSPC : -EIO;
}

/* The same for a failure of the log writer, which keeps its own message. */
static int worker_log_err(struct dl_sweep_worker *w, const char *what)
{
	const char *m = dl_log_error(w->log);
	int rc = dl_log_failure(w->log);

	if (!w->err[0])
		snprintf(w->err, sizeof(w->err), "%s%s: %s",
			 rc == -ENOSPC && (!m || !strstr(m, "disk full")) ? "disk full: " : "", what,
			 m ? m : "the log could not be written");
	return rc ? rc : -EIO;
}

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

/* Direct: OUT.db with the shard attached as 's', and the merge's statements. */
static int out_open(struct dl_sweep_worker *w, char *err, size_t errlen)
{
	sqlite3_stmt *att = NULL;
	char uri[DL_LOG_URI_MAX], shard[DL_LOG_URI_MAX];
	int ret = 0;

	/* by URI, as every dlsim connection: a path that begins with "file:" is a file */
	if (dl_log_file_uri(w->outpath, NULL, uri, sizeof(uri)) ||
	    dl_log_file_uri(w->path, NULL, shard, sizeof(shard)))
		ret = -ENAMETOOLONG;
	else if (sqlite3_open_v2(uri, &w->out,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
				 NULL) != SQLITE_OK)
		ret = -EIO;
	if (w->out)
		sqlite3_busy_handler(w->out, lock_busy, w);
	/* as `dlsim run` writes a log: WAL, no sync per commit (the checkpoints sync) */
	if (!ret && sqlite3_exec(w->out, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK)
		ret = -EIO;
	if (!ret && sqlite3_prepare_v2(w->out, "ATTACH ?1 AS s", -1, &att, NULL) != SQLITE_OK)
		ret = -EIO;
	else if (!ret)
		sqlite3_bind_text(att, 1, shard, -1, SQLITE_STATIC);
	if (!ret && sqlite3_step(att) != SQLITE_DONE)
		ret = -EIO;
	sqlite3_finalize(att);
	if (!ret && sw_merge_prepare(w->out, &w->merge))
		ret = -EIO;
	if (ret)
		snprintf(err, errlen, "%s: cannot attach its shard %s: %s", w->outpath, w->path,
			 w->out ? sqlite3_errmsg(w->out) : "out of memory");
	return ret;
}

/*
 * Direct: the finished run (or a recorded failure) of the shard into OUT.db
 * in one transaction: its small rows and where its events are.  A run
 * without its sweep row (interrupted) is not copied.  The time spent waiting for the
 * write lock and holding it is added to @res.
 */
static int commit_runs(struct dl_sweep_worker *w, struct dl_sweep_task_result *res)
{
	int64_t t0 = now_ns(), t1, c1;
	uint32_t merged = 0;
	int ret = 0;

	if (!w->runs)
		return 0;               /* an interrupted run, if any, stays unreferenced */
	if (sqlite3_exec(w->out, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return worker_err(w, w->outpath, w->out);
	t1 = now_ns();
	c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	res->lock_wait_ns += (uint64_t)(t1 - t0);
	ret = sw_merge_step(w->merge, &merged);
	if (ret)
		ret = worker_err(w, w->outpath, w->out);
	if (sqlite3_exec(w->out, ret ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !ret) {
		ret = worker_err(w, w->outpath, w->out);
		sqlite3_exec(w->out, "ROLLBACK", NULL, NULL, NULL);
	}
	res->lock_hold_ns += (uint64_t)(now_ns() - t1);
	res->lock_hold_cpu_ns += (uint64_t)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - c1);
	w->runs = 0;
	return ret;
}

const char *dl_sweep_worker_error(const struct dl_sweep_worker *w)
{
	if (w->err[0])
		return w->err;
	return w->out ? sqlite3_errmsg(w->out) : w->db ? sqlite3_errmsg(w->db) : "out of memory";
}

/* Opens the shard: the log writer and a second connection (sweep rows, check). */
static int segment_open(struct dl_sweep_worker *w, char *err, size_t errlen)
{
	size_t n = strlen(w->base);
	char *emsg = NULL;
	int ret;

	if (n > 3 && !strcmp(w->base + n - 3, ".db"))
		n -= 3;
	snprintf(w->path, sizeof(w->path), "%.*s-s0.db", (int)n, w->base);
	w->runs = 0;
	ret = dl_log_open(w->path, &w->log, err, errlen);
	if (!ret)
		ret = dl_log_open_existing(w->path, &w->db, err, errlen);
	if (!ret && (sqlite3_exec(w->db, sw_sweep_schema, NULL, NULL, &emsg) != SQLITE_OK ||
		     sw_sweep_schema_up(w->db) ||
		     sqlite3_prepare_v2(w->db, "INSERT INTO sweep(run_id, scenario_hash, source,"
					" order_name, seed, kernel, mode, workers, status, error,"
					" import_kernel) VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1, &w->ins,
					NULL) != SQLITE_OK ||
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
	if (dl_backend_parse(p->mode, &w->backend)) {
		snprintf(err, errlen, "mode '%s': expected des, threads or kernel", p->mode);
		free(w);
		return -EINVAL;
	}
	w->outpath = outpath;
	snprintf(w->base, sizeof(w->base), "%s", shard);
	ret = segment_open(w, err, errlen);
	if (ret) {
		dl_sweep_worker_close(w);
		return ret;
	}
	*out = w;
	return 0;
}

/*
 * The shard, done with, leaves WAL for a rollback journal: one file that
 * readers open in a folder they cannot write (a WAL database needs its -shm
 * there).  Refused (and left as it is) while another connection reads it.
 */
static void shard_settle(const char *path)
{
	sqlite3 *db = NULL;
	char uri[DL_LOG_URI_MAX];

	if (dl_log_file_uri(path, NULL, uri, sizeof(uri)))
		return;
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
			    NULL) == SQLITE_OK)
		sqlite3_exec(db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
	sqlite3_close(db);
}

void dl_sweep_worker_close(struct dl_sweep_worker *w)
{
	if (!w)
		return;
	worker_shut(w);
	if (w->path[0])
		shard_settle(w->path);
	free(w);
}

static int record_mode(struct dl_sweep_worker *w, int64_t run_id, const struct dl_sweep_scenario *s,
		       enum dl_order o, uint64_t seed, const char *kernel, const char *mode,
		       const char *status, const char *error)
{
	sqlite3_stmt *st = w->ins;

	if (run_id)
		sqlite3_bind_int64(st, 1, run_id);
	else
		sqlite3_bind_null(st, 1);
	w->runs++;
	sqlite3_bind_text(st, 2, s->hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, s->path, -1, SQLITE_STATIC);
	sw_bind_run_key(st, 4, w->p, o, seed, kernel, mode);
	sqlite3_bind_text(st, 9, status, -1, SQLITE_STATIC);
	if (error)
		sqlite3_bind_text(st, 10, error, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 10);
	/* a DTB is imported with the run's kernel's driver table (load()) */
	sw_bind_text_or_null(st, 11, s->dtb ? kernel : NULL);
	return sqlite3_step(st) == SQLITE_DONE ? (sqlite3_reset(st), 0) : (sqlite3_reset(st), -EIO);
}

/* Why a kernel run failed: where the guest stopped (its last op and phase) and what was said. */
static void kernel_why(const struct dl_scenario *sc, const struct dl_kernel_info *ki,
		       const char *warn, char *why, size_t len)
{
	const char *op = ki->last_op >= 0 && (uint32_t)ki->last_op < sc->nop ?
			 dl_op_name(sc->op[ki->last_op].kind) : "boot";

	snprintf(why, len, "the guest stopped in %s (last phase begun: %s)%s%.120s%s%.200s", op,
		 ki->last_phase >= 0 ? dl_phase_name((unsigned)ki->last_phase) : "none",
		 ki->msg[0] ? ": " : "", ki->msg, warn[0] ? "; " : "", warn);
}

/*
 * One logged run @q, as `dlsim run` logs it; then the check and the sweep
 * row (under @mode: the plan's, or a twin's).  @kwarn: a kernel run's
 * guest warning ("" or why it was cut short), said with where the guest
 * stopped if the run failed (NULL: not a kernel run); *@out_id: the run's id (may be
 * NULL); @twin_of > 0: the run this one twins (runs.twin_of, the metric twin_of).
 */
static int run_req(struct dl_sweep_worker *w, struct dl_run_req *q,
		   const struct dl_sweep_scenario *s, const char *kernel, const char *mode,
		   const char *kwarn, int64_t twin_of, int64_t *out_id,
		   struct dl_sweep_task_result *res)
{
	const struct dl_sweep_plan *p = w->p;
	const struct dl_scenario *sc = q->sc;
	enum dl_order o = q->eo.order;
	uint64_t seed = q->eo.seed;
	int64_t run_id = q->run_id;
	struct dl_check_result cr;
	const char *status;
	char why[640] = "";
	int rc, log_err;

	q->log = w->log;
	q->batch = &w->batch;
	if (out_id)
		*out_id = 0;
	/* a twin's mark (runs.twin_of, the metric twin_of) in its run's last
	 * transaction, as `dlsim twin` writes it: never a twin that names no run */
	dl_log_set_twin_of(w->log, twin_of);
	rc = dl_run(q, &w->r, &run_id, &log_err);
	dl_log_set_twin_of(w->log, 0);
	if (log_err)
		return worker_log_err(w, "logging a run");
	if (twin_of > 0)
		dl_test_hook("sweep-twin-recorded");   /* tests: killed once the twin is committed */
	res->runs++;
	if (rc == -EINTR || !strcmp(w->r.status, "interrupted")) {
		res->interrupted++;
		return 0;               /* no sweep row: the next sweep runs it again */
	}
	status = w->r.status;
	if (out_id)
		*out_id = run_id;
	if (rc < 0 && kwarn && q->ki)
		kernel_why(sc, q->ki, kwarn, why, sizeof(why));
	else if (rc < 0)
		snprintf(why, sizeof(why), "the engine failed: %s", dl_run_strerror(rc));
	else if (w->r.fail_dev != DL_SC_NONE && w->r.fail_dev < sc->ndev)
		snprintf(why, sizeof(why), "device '%.100s' returned %d", dl_sc_name(sc, w->r.fail_dev),
			 w->r.err);
	if (p->check && rc >= 0) {
		if (dl_check_run_ex(w->db, run_id, 0, NULL, &cr) < 0)
			return worker_err(w, "checking the run", w->db);
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
	return record_mode(w, run_id, s, o, seed, kernel, mode, status, why[0] ? why : NULL) ?
	       worker_err(w, "the sweep row", w->db) : 0;
}

/* One run of the plan's backend (des, threads), logged. */
static int run_one(struct dl_sweep_worker *w, const struct dl_scenario *sc,
		   const struct dl_sweep_scenario *s, enum dl_order o, uint64_t seed,
		   const char *kernel, int64_t run_id, atomic_int *stop,
		   struct dl_sweep_task_result *res)
{
	const struct dl_sweep_plan *p = w->p;
	struct dl_run_req q = {
		.sc = sc, .backend = w->backend, .time_scale = p->time_scale,
		.eo = { .order = o, .workers = p->workers, .seed = seed, .stop = stop,
			.kernel = p->kver, .probe_module = p->probe_module },
		.run_id = run_id,
	};

	char why[512];
	int rc;

	/* a list of kernels: each run follows its own */
	if (kernel)
		dl_kver_parse(kernel, &q.eo.kernel);
	if (w->backend == DL_BACKEND_THREADS) {
		/* one that would not end in real time is recorded, not run (dl_run_wall_over()) */
		rc = dl_run_wall_over(sc, &q.eo, p->time_scale, p->max_wall, &w->r, why, sizeof(why));
		if (rc == -EINTR) {
			res->interrupted++;
			return 0;
		}
		if (rc) {
			res->runs++;
			res->failed++;
			return record_mode(w, 0, s, o, seed, kernel, p->mode, "failed", why) ?
			       worker_err(w, "the sweep row", w->db) : 0;
		}
	}
	return run_req(w, &q, s, kernel, p->mode, NULL, 0, NULL, res);
}

/*
 * Scenario @s for runs on @kernel (NULL: the plan's own): a DTB is imported
 * with that kernel's property parsers and driver table, so that in a list
 * (--kernel 6.12,7.3) each kernel's runs have the devices that bind there.
 */
static int load(const struct dl_sweep_plan *p, const struct dl_sweep_scenario *s, uint64_t seed,
		const char *kernel, struct dl_scenario **sc, struct dl_error *err)
{
	struct dl_dtb_opts opt = p->dtb;
	json_t *root;
	int ret;

	if (!s->dtb)
		return dl_scenario_load(s->path, p->set, p->nset, &seed, sc, err);
	if (kernel && dl_dtb_parse_kernel(kernel, &opt.kernel)) {
		snprintf(err->msg, sizeof(err->msg), "%s: kernel %s has no driver table", s->path, kernel);
		return -EINVAL;
	}
	ret = dl_dtb_import_file_opts(s->path, &opt, &root, NULL, err);
	if (ret)
		return ret;
	ret = dl_scenario_load_json(s->path, root, p->set, p->nset, &seed, sc, err);
	json_decref(root);
	return ret;
}

/* ---- kernel mode: one boot per kernel for a task's orders, then each run's twins ---- */

/* A kernel run done by an earlier sweep (ok, or with violations: it ran): its id in OUT.db
 * (direct), else 0. */
static int64_t done_run(struct dl_sweep_worker *w, const struct dl_sweep_scenario *s,
			enum dl_order o, uint64_t seed, const char *kernel)
{
	sqlite3_stmt *q;
	int64_t id = 0;

	if (!w->out || sqlite3_prepare_v2(w->out, "SELECT run_id FROM main.sweep WHERE"
					  " scenario_hash = ?1 AND order_name = ?2 AND seed = ?3 AND"
					  " ifnull(kernel, '') = ifnull(?4, '') AND mode = ?5 AND"
					  " status IN ('ok', 'violations') AND run_id IS NOT NULL",
					  -1, &q, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(q, 1, s->hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, dl_order_name(o), -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 3, (int64_t)seed);
	sw_bind_text_or_null(q, 4, kernel);
	sqlite3_bind_text(q, 5, w->p->mode, -1, SQLITE_STATIC);
	if (sqlite3_step(q) == SQLITE_ROW)
		id = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return id;
}

/*
 * Kernel run @of as a replay twin needs it: from the worker's shard, or from
 * OUT.db (@db == w->out), where the run's events live in a shard, read through
 * a connection of its own with the run's shard attached (dl_log_attach_shards()).
 */
static int read_kernel_run(struct dl_sweep_worker *w, sqlite3 *db, int64_t of,
			   struct dl_twin *tw, struct dl_error *err)
{
	char msg[512];
	sqlite3 *ro = NULL;
	int ret;

	if (db != w->out || !w->outpath)
		return dl_twin_read(db, of, tw, err);
	if (dl_log_open_reader(w->outpath, &ro, msg, sizeof(msg))) {
		snprintf(err->msg, sizeof(err->msg), "%s", msg);
		return -EIO;
	}
	if (dl_log_attach_shards(ro, &of, 1, msg, sizeof(msg))) {
		snprintf(err->msg, sizeof(err->msg), "%s", msg);
		sqlite3_close(ro);
		return -EIO;
	}
	ret = dl_twin_read(ro, of, tw, err);
	sqlite3_close(ro);
	return ret;
}

/* A twin that could not run: counted and recorded as failed, @why saying so. */
static int twin_failed(struct dl_sweep_worker *w, const struct dl_sweep_scenario *s,
		       enum dl_order o, uint64_t seed, const char *kernel, const char *mode,
		       const char *why, struct dl_sweep_task_result *res)
{
	res->runs++;
	res->failed++;
	return record_mode(w, 0, s, o, seed, kernel, mode, "failed", why) ?
	       worker_err(w, "the sweep row", w->db) : 0;
}

/*
 * The twin @kind of kernel run @of (0: it failed or is not at hand) of @sc
 * under @o on kernel @ver: model, the DES of the same scenario (one CPU, the
 * module's probe context unless plan.twin_boot, the guest's cost profile); replay, sim/twin's DES
 * with the kernel run's own callback times, read back from the log that
 * holds it (@db).
 */
static int twin_run(struct dl_sweep_worker *w, const struct dl_scenario *sc,
		    const struct dl_sweep_scenario *s, const char *kernel, const char *ver,
		    enum dl_order o, uint64_t seed, unsigned kind, const char *mode, int64_t of,
		    sqlite3 *db, int64_t run_id, atomic_int *stop, struct dl_sweep_task_result *res)
{
	struct dl_run_req q = { .sc = sc, .backend = DL_BACKEND_DES, .run_id = run_id,
				.eo = { .order = o, .workers = 1, .seed = seed, .stop = stop,
					.probe_module = !w->p->twin_boot,
					.cost_profile = DL_PROFILE_GUEST } };
	struct dl_scenario *tsc = NULL;
	struct dl_twin tw;
	struct dl_error err;
	int ret;

	if (!of) {
		return twin_failed(w, s, o, seed, kernel, mode,
				   "no twin: its kernel run failed or is not in this database", res);
	}
	dl_kver_parse(ver, &q.eo.kernel);
	if (kind == DL_SWEEP_TWIN_MODEL)
		return run_req(w, &q, s, kernel, mode, NULL, of, NULL, res);
	if (read_kernel_run(w, db, of, &tw, &err))
		return twin_failed(w, s, o, seed, kernel, mode, err.msg, res);
	if (dl_scenario_load_json(sc->name, tw.scenario, NULL, 0, NULL, &tsc, &err)) {
		dl_twin_free(&tw);
		return twin_failed(w, s, o, seed, kernel, mode, err.msg, res);
	}
	q.sc = tsc;
	q.eo = (struct dl_engine_opts){ .order = tw.order, .workers = tw.workers, .seed = tw.seed,
					.kernel = tw.kernel, .probe_module = tw.probe_module,
					.replay = &tw.lat, .stop = stop,
					.cost_profile = DL_PROFILE_GUEST };
	ret = run_req(w, &q, s, kernel, mode, NULL, of, NULL, res);
	dl_scenario_free(tsc);
	dl_twin_free(&tw);
	return ret;
}

/* The runs of a task on kernel @k (the run itself and its twins, every order). */
static uint64_t kernel_runs(const struct dl_sweep_plan *p, uint32_t k)
{
	uint32_t nv = dl_sweep_variants(p);
	uint64_t m = 0;

	for (uint32_t o = 0; o < p->norders; o++)
		m |= ((1ull << nv) - 1) << ((o * p->nkernels + k) * nv);
	return m;
}

/*
 * A scenario that does not load (a malformed DTB): each of its pending runs
 * failed with @why, committed at once when direct.
 */
static int load_failed(struct dl_sweep_worker *w, uint32_t task, uint64_t pending,
		       const char *why, struct dl_sweep_task_result *res)
{
	int ret;

	res->failed += (uint32_t)__builtin_popcountll(pending);
	ret = dl_sweep_worker_fail(w, task, pending, why);
	if (!ret && w->outpath)
		ret = commit_runs(w, res);
	return ret;
}

/* A scenario of a batch, loaded once for every kernel. */
struct kb_task {
	const struct dl_sweep_scenario *s;
	struct dl_scenario *sc;      /* NULL: it did not load (its runs are recorded failed) */
	uint64_t seed;
	int32_t job[DL_SWEEP_MAX_ORDERS];   /* per order: its job in the boot, -1: none */
	int64_t of[DL_SWEEP_MAX_ORDERS];    /* per order: its ok kernel run (0: none) */
	sqlite3 *db[DL_SWEEP_MAX_ORDERS];   /* and the log that holds it */
};

/* One kernel_boot_batch(): its tasks on kernel @k, the guest's jobs and how its boot went. */
struct kb_batch {
	struct dl_sweep_worker *w;
	struct kb_task *t;
	uint32_t n, k, nv;
	const uint32_t *task;
	const uint64_t *pending;
	atomic_int *stop;
	struct dl_sweep_task_result *res;
	const char *ver;		/* the kernel's version */
	struct dl_kjob *jobs;		/* one per pending (task, order) the kernel can play */
	uint32_t nj;
	int brc;			/* dl_kernel_boot()'s, 0 before (or without) a boot */
	int64_t wall;			/* the boot's wall time */
	char msg[512], kept[512], warn[1100];
};

/*
 * A job per pending kernel run of the batch (t[i].job[o]); a run the kernel
 * cannot play is recorded failed, saying why.  0, or the worker's error.
 */
static int kb_jobs(struct kb_batch *kb)
{
	const struct dl_sweep_plan *p = kb->w->p;
	struct kb_task *t = kb->t;
	int ret = 0;

	for (uint32_t i = 0; i < kb->n && !ret; i++)
		for (uint32_t o = 0; o < p->norders && !ret; o++) {
			uint32_t base = (o * p->nkernels + kb->k) * kb->nv;
			char why[300];

			t[i].job[o] = -1;
			if (!t[i].sc || !(kb->pending[i] & (1ull << base)))
				continue;
			if (dl_kernel_refuse(t[i].sc, p->order[o], kb->ver, why, sizeof(why))) {
				kb->res[i].runs++;
				kb->res[i].failed++;
				ret = record_mode(kb->w, 0, t[i].s, p->order[o], t[i].seed,
						  p->kernel[kb->k], p->mode, "failed", why) ?
				      worker_err(kb->w, "the sweep row", kb->w->db) : 0;
				continue;
			}
			t[i].job[o] = (int32_t)kb->nj;
			kb->jobs[kb->nj++] = (struct dl_kjob){ .sc = t[i].sc, .order = p->order[o],
							       .seed = t[i].seed };
		}
	return ret;
}

/*
 * One guest boots every job: kb->brc 0, -ETIMEDOUT (it hung or died: kb->warn
 * says where; the runs it finished are converted) or another error (no run).
 * false when Ctrl-C interrupted the boot (every pending run counted so).
 */
static bool kb_boot(struct kb_batch *kb)
{
	const struct dl_sweep_plan *p = kb->w->p;
	struct dl_kernel_stats stats = { -1, -1, -1 };
	struct dl_kernel_opts ko = { .version = kb->ver, .timeout_ms = p->timeout_ms,
				     .stop = kb->stop, .stats = &stats };
	int64_t t0 = dl_mono_ns();

	kb->brc = dl_kernel_boot(kb->jobs, kb->nj, &ko, kb->msg, sizeof(kb->msg), kb->kept,
				 sizeof(kb->kept));
	kb->wall = dl_mono_ns() - t0;
	if (kb->brc == -EINTR) {
		for (uint32_t i = 0; i < kb->n; i++)
			kb->res[i].interrupted += (uint32_t)__builtin_popcountll(kb->pending[i]);
		return false;
	}
	/* the guest hung or died (the stub's exit status comes back as is): the runs it
	 * finished are converted, the others fail saying where it stopped */
	if (kb->brc > 0)
		kb->brc = -ETIMEDOUT;
	if (kb->brc == -ETIMEDOUT)
		snprintf(kb->warn, sizeof(kb->warn), "%s%s%s", kb->msg, kb->kept[0] ? "; kept: " : "",
			 kb->kept);
	return true;
}

/*
 * Kernel run (@i, @o), logged from its section of the dump (t[i].of[o]: its
 * id when ok), or failed when the guest did not run.  0, or the worker's error.
 */
static int kb_log_run(struct kb_batch *kb, uint32_t i, uint32_t o, uint32_t base)
{
	const struct dl_sweep_plan *p = kb->w->p;
	struct kb_task *t = &kb->t[i];
	const struct dl_kjob *j = &kb->jobs[t->job[o]];
	struct dl_kernel_info ki;
	struct dl_run_req q = {
		.sc = t->sc, .backend = DL_BACKEND_KERNEL,
		.eo = { .order = j->order, .seed = j->seed, .stop = kb->stop },
		.dump = j->dump, .dump_len = j->len, .kernel = kb->ver,
		.wall_ns = kb->wall / (int64_t)kb->nj, .ki = &ki,
		.run_id = dl_sweep_run_id(p, kb->task[i], kb->pending[i], base) };
	int ret;

	if (kb->brc && kb->brc != -ETIMEDOUT) {
		char why[640];

		snprintf(why, sizeof(why), "the guest did not run: %s", kb->msg);
		kb->res[i].runs++;
		kb->res[i].failed++;
		return record_mode(kb->w, 0, t->s, p->order[o], t->seed, p->kernel[kb->k], p->mode,
				   "failed", why) ? worker_err(kb->w, "the sweep row", kb->w->db) : 0;
	}
	memset(&ki, 0, sizeof(ki));
	ki.last_op = ki.last_phase = -1;
	ret = run_req(kb->w, &q, t->s, p->kernel[kb->k], p->mode, kb->warn, 0, &t->of[o],
		      &kb->res[i]);
	if (!kb->w->r.status || strcmp(kb->w->r.status, "ok"))
		t->of[o] = 0;
	return ret;
}

/*
 * First every kernel run, committed as it is logged: a twin that crashes the
 * worker then costs only twins (the next sweep makes them from OUT.db).
 */
static int kb_log_runs(struct kb_batch *kb)
{
	const struct dl_sweep_plan *p = kb->w->p;
	struct dl_sweep_worker *w = kb->w;
	struct kb_task *t = kb->t;
	int ret = 0;

	for (uint32_t i = 0; i < kb->n && !ret && !*kb->stop; i++)
		for (uint32_t o = 0; o < p->norders && !ret && !*kb->stop; o++) {
			uint32_t base = (o * p->nkernels + kb->k) * kb->nv;

			t[i].of[o] = 0;
			t[i].db[o] = w->db;
			if (!t[i].sc || !(kb->pending[i] & (1ull << base)) || t[i].job[o] < 0)
				continue;
			ret = kb_log_run(kb, i, o, base);
			if (!ret && w->outpath) {
				ret = commit_runs(w, &kb->res[i]);
				t[i].db[o] = w->out;
			}
		}
	return ret;
}

/* Then the twins of each kernel run, this sweep's or an earlier one's. */
static int kb_twins(struct kb_batch *kb)
{
	const struct dl_sweep_plan *p = kb->w->p;
	struct dl_sweep_worker *w = kb->w;
	struct kb_task *t = kb->t;
	uint32_t nv = kb->nv;
	int ret = 0;

	for (uint32_t i = 0; i < kb->n && !ret && !*kb->stop; i++)
		for (uint32_t o = 0; o < p->norders && !ret && !*kb->stop; o++) {
			uint32_t base = (o * p->nkernels + kb->k) * nv;
			uint64_t pending = kb->pending[i];

			if (!t[i].sc || !(pending & ((((1ull << nv) - 2)) << base)))
				continue;
			if (!(pending & (1ull << base))) {
				/* the kernel run is from an earlier sweep */
				t[i].of[o] = done_run(w, t[i].s, p->order[o], t[i].seed, p->kernel[kb->k]);
				t[i].db[o] = w->out;
			}
			for (uint32_t v = 1; v < nv && !ret && !*kb->stop; v++) {
				struct dl_sweep_slot sl;

				if (!(pending & (1ull << (base + v))))
					continue;
				dl_sweep_slot(p, base + v, &sl);
				ret = twin_run(w, t[i].sc, t[i].s, p->kernel[kb->k], kb->ver, sl.order,
					       t[i].seed, sl.twin, sl.mode, t[i].of[o], t[i].db[o],
					       dl_sweep_run_id(p, kb->task[i], pending, base + v),
					       kb->stop, &kb->res[i]);
				if (!ret && w->outpath)
					ret = commit_runs(w, &kb->res[i]);
			}
		}
	return ret;
}

/*
 * The kernel runs of @n tasks on one kernel (index @k): one guest boots every
 * pending order of every scenario (the batch `dlsim run --mode kernel` boots
 * for one scenario, here across scenarios), then each run is logged from its
 * section of the dump and followed by its twins.  A run the kernel cannot
 * play, a guest that does not start, hangs or dies: failed runs that say
 * why (where the guest stopped); the other runs go on.
 */
static int kernel_boot_batch(struct dl_sweep_worker *w, struct kb_task *t, uint32_t n,
			     const uint32_t *task, const uint64_t *pending, uint32_t k,
			     atomic_int *stop, struct dl_sweep_task_result *res)
{
	const struct dl_sweep_plan *p = w->p;
	struct kb_batch kb = {
		.w = w, .t = t, .n = n, .k = k, .nv = dl_sweep_variants(p), .task = task,
		.pending = pending, .stop = stop, .res = res,
		.ver = p->kernel[k] ? p->kernel[k] : DL_KERNEL_DEFAULT,
		.jobs = calloc((size_t)n * p->norders + 1, sizeof(*kb.jobs)),
	};
	int ret;

	if (!kb.jobs)
		return worker_err(w, "a kernel batch", NULL);
	ret = kb_jobs(&kb);
	if (kb.nj && !ret && !kb_boot(&kb))
		goto out;	/* interrupted: nothing logged */
	if (!ret)
		ret = kb_log_runs(&kb);
	if (!ret)
		ret = kb_twins(&kb);
out:
	dl_kernel_jobs_free(kb.jobs, kb.nj);
	free(kb.jobs);
	return ret;
}

int dl_sweep_worker_run_batch(struct dl_sweep_worker *w, const uint32_t *task,
			      const uint64_t *pending, uint32_t n, atomic_int *stop,
			      struct dl_sweep_task_result *res)
{
	const struct dl_sweep_plan *p = w->p;
	struct kb_task *t;
	int ret = 0;

	if (w->backend != DL_BACKEND_KERNEL) {
		for (uint32_t i = 0; i < n && !ret; i++)
			ret = dl_sweep_worker_run(w, task[i], pending[i], stop, &res[i]);
		return ret;
	}
	memset(res, 0, n * sizeof(*res));
	if (!(t = calloc(n, sizeof(*t))))
		return worker_err(w, "a kernel batch", NULL);
	for (uint32_t i = 0; i < n && !ret; i++) {
		struct dl_error err;

		t[i].s = &p->sc[task[i] / p->nseeds];
		t[i].seed = p->seed0 + task[i] % p->nseeds;
		if (!pending[i])
			continue;
		if (load(p, t[i].s, t[i].seed, p->kernel[0], &t[i].sc, &err)) {
			t[i].sc = NULL;
			ret = load_failed(w, task[i], pending[i], err.msg, &res[i]);
			continue;
		}
	}
	for (uint32_t k = 0; k < p->nkernels && !ret && !*stop; k++) {
		/* a DTB again with this kernel's driver table (loaded with the first above) */
		for (uint32_t i = 0; k && i < n && !ret; i++) {
			struct dl_error err;

			if (!t[i].sc || !t[i].s->dtb)
				continue;
			dl_scenario_free(t[i].sc);
			if (load(p, t[i].s, t[i].seed, p->kernel[k], &t[i].sc, &err)) {
				t[i].sc = NULL;
				ret = load_failed(w, task[i], pending[i] & kernel_runs(p, k), err.msg, &res[i]);
			}
		}
		if (!ret)
			ret = kernel_boot_batch(w, t, n, task, pending, k, stop, res);
	}
	for (uint32_t i = 0; i < n; i++)
		dl_scenario_free(t[i].sc);
	free(t);
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
	if (w->backend == DL_BACKEND_KERNEL)
		return dl_sweep_worker_run_batch(w, &task, &pending, 1, stop, res);
	/* kernel by kernel: a DTB is imported with each one's driver table */
	for (uint32_t k = 0; k < p->nkernels && !ret && !*stop; k++) {
		uint64_t mine = pending & kernel_runs(p, k);

		if (mine && (!sc || s->dtb)) {
			dl_scenario_free(sc);
			sc = NULL;
			if (load(p, s, seed, p->kernel[k], &sc, &err)) {
				ret = load_failed(w, task, mine, err.msg, res);
				continue;
			}
		}
		for (uint32_t r = 0; r < dl_sweep_task_runs(p) && !ret && !*stop; r++) {
			if (!(mine & (1ull << r)))
				continue;
			ret = run_one(w, sc, s, p->order[r / p->nkernels], seed, p->kernel[k],
				      dl_sweep_run_id(p, task, pending, r), stop, res);
			/* direct: each run committed as it ends, so a scratch holds one run */
			if (!ret && w->outpath)
				ret = commit_runs(w, res);
		}
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
		struct dl_sweep_slot sl;

		if (!(pending & (1ull << r)))
			continue;
		dl_sweep_slot(p, r, &sl);
		if (record_mode(w, 0, s, sl.order, seed, sl.kernel, sl.mode, "failed", why))
			return worker_err(w, "the sweep row", w->db);
	}
	return 0;
}
