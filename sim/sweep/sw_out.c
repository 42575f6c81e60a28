/*
 * sw_out.c - the sweep's OUT.db: the sweep table (the resume key), what is
 * still to run, the record of finished runs from the workers' shards, and
 * --compact.
 *
 * A finished run's rows stay in its shard; OUT.db gets copies of its small
 * rows: every table of the shard that has a run_id column but the
 * per-item ones (dl_log_shard_tables: events, devices, links, refused),
 * column by column where both databases have the column, runs first (the
 * run keeps its id unless taken), then the run's rows of the other tables,
 * a run_shards row saying where the rest is, and its sweep row, in one
 * transaction per pass.  A run is recorded only when its sweep row exists
 * in the shard (written after the run ended) and its key is not yet in
 * OUT.db, so a pass can be repeated, interrupted or run on a shard left by a
 * killed sweep without losing or doubling a run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sim/log/dl_log.h"
#include "sim/log/dl_log_shard.h"
#include "sim/sweep/sweep.h"
#include "sim/sweep/sw_internal.h"

const char sw_sweep_schema[] =
	"CREATE TABLE IF NOT EXISTS sweep(run_id INTEGER, scenario_hash TEXT NOT NULL,"
	" source TEXT, order_name TEXT NOT NULL, seed INTEGER NOT NULL, kernel TEXT,"
	" mode TEXT NOT NULL, workers INTEGER NOT NULL, status TEXT NOT NULL, error TEXT,"
	" import_kernel TEXT);"
	"CREATE UNIQUE INDEX IF NOT EXISTS sweep_key ON sweep(scenario_hash, order_name, seed,"
	" ifnull(kernel, ''), mode, workers);"
	"CREATE INDEX IF NOT EXISTS sweep_run ON sweep(run_id);";

static const char log_indexes[] =
	"CREATE INDEX IF NOT EXISTS events_run_seq ON events(run_id, seq);"
	"CREATE INDEX IF NOT EXISTS devices_run ON devices(run_id, dev_id);"
	"CREATE INDEX IF NOT EXISTS metrics_run ON metrics(run_id);"
	"CREATE INDEX IF NOT EXISTS violations_run ON violations(run_id);"
	"CREATE INDEX IF NOT EXISTS refused_run ON refused(run_id);";

/*
 * sweep.import_kernel: the kernel whose driver table imported a DTB scenario
 * (NULL: a scenario file, no --kernel, or a row an older dlsim wrote, which
 * imported with the first kernel's).  Added to a sweep table that lacks it;
 * a concurrent sweep may add it first.
 */
int sw_sweep_schema_up(sqlite3 *db)
{
	sqlite3_stmt *st;
	bool has = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('sweep') WHERE name = 'import_kernel'",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	has = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (has || sqlite3_exec(db, "ALTER TABLE sweep ADD COLUMN import_kernel TEXT", NULL, NULL,
				NULL) == SQLITE_OK)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('sweep') WHERE name = 'import_kernel'",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	has = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return has ? 0 : -EIO;
}

static int step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

#define MAX_TABLES 32
#define MAX_COLS   64

/* The lock file of a sweep's shard directory (dl_sweep_lock()). */
#define SW_LOCK_NAME "sweep.lock"

/* Strips @tail from the end of @s[0..*n) if it is there. */
static bool strip_tail(const char *s, size_t *n, const char *tail)
{
	size_t k = strlen(tail);

	if (*n < k || strncmp(s + *n - k, tail, k))
		return false;
	*n -= k;
	return true;
}

/* Strips "<@mark><digits>" from the end of @s[0..*n) if it is there. */
static bool strip_number(const char *s, size_t *n, const char *mark)
{
	size_t i = *n, k = strlen(mark);

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i == *n || i < k || strncmp(s + i - k, mark, k))
		return false;
	*n = i - k;
	return true;
}

/*
 * Is @name one the sweep writes into its shard directory?  A shard is
 * HOST-PID[-rRANK] (dl_sweep_shard_path()), its segments BASE-sK.db and
 * BASE-sK.done.db, a direct worker's scratch BASE.scratch; each with SQLite's
 * -wal, -shm and -journal files beside it.
 */
static bool shard_name(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, SW_LOCK_NAME))
		return true;

	if (!strip_tail(name, &n, "-wal") && !strip_tail(name, &n, "-shm"))
		strip_tail(name, &n, "-journal");
	if (!strip_tail(name, &n, ".done.db") && !strip_tail(name, &n, ".db") &&
	    !strip_tail(name, &n, ".scratch"))
		return false;
	strip_number(name, &n, "-s");
	strip_number(name, &n, "-r");
	return strip_number(name, &n, "-") && n > 0;
}

/*
 * A walk over the entries of a sweep's shard directory, but . and ..:
 *
 *	if (!shard_walk_start(&w, outpath))
 *		return 0;
 *	while (shard_walk_next(&w))
 *		... w.name, w.path ...
 *	shard_walk_end(&w);
 */
struct shard_walk {
	DIR *d;
	char dir[4096];
	char path[4400];        /* dir/name */
	const char *name;
};

/* Opens OUTPATH's shard directory; false when there is none (nothing to walk). */
static bool shard_walk_start(struct shard_walk *w, const char *outpath)
{
	dl_sweep_shard_dir(outpath, w->dir, sizeof(w->dir));
	w->d = opendir(w->dir);
	return w->d != NULL;
}

/* The next entry (w->name, w->path); false at the end. */
static bool shard_walk_next(struct shard_walk *w)
{
	struct dirent *e;

	do {
		if (!(e = readdir(w->d)))
			return false;
	} while (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."));
	w->name = e->d_name;
	snprintf(w->path, sizeof(w->path), "%s/%s", w->dir, w->name);
	return true;
}

static void shard_walk_end(struct shard_walk *w)
{
	closedir(w->d);
}

/*
 * The shards are merged and deleted by name: a file the sweep did not write
 * there (a database copied in by hand) would be deleted unmerged.  Before
 * anything is changed, refuse (-EEXIST) a shard directory holding one.
 */
static int shards_foreign(const char *outpath, char *err, size_t errlen)
{
	struct shard_walk w;
	int ret = 0;

	if (!shard_walk_start(&w, outpath))
		return 0;
	while (!ret && shard_walk_next(&w)) {
		if (shard_name(w.name))
			continue;
		snprintf(err, errlen, "%s/%s is not a file this sweep writes (shards are merged into"
			 " %s and deleted): move it out of %s first", w.dir, w.name, outpath, w.dir);
		ret = -EEXIST;
	}
	shard_walk_end(&w);
	return ret;
}

int dl_sweep_out_open(const char *path, sqlite3 **db, char *err, size_t errlen)
{
	struct dl_log *log;
	char *emsg = NULL;
	int ret;

	ret = shards_foreign(path, err, errlen);
	if (ret)
		return ret;
	/* the log's own schema, exactly as a `dlsim run` creates it */
	ret = dl_log_open(path, &log, err, errlen);
	if (ret)
		return ret;
	dl_log_close(log);
	ret = dl_log_open_existing(path, db, err, errlen);
	if (ret)
		return ret;
	if (sqlite3_exec(*db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", NULL, NULL,
			 &emsg) != SQLITE_OK ||
	    sqlite3_exec(*db, sw_sweep_schema, NULL, NULL, &emsg) != SQLITE_OK ||
	    sw_sweep_schema_up(*db) ||
	    sqlite3_exec(*db, dl_log_shard_schema, NULL, NULL, &emsg) != SQLITE_OK ||
	    sqlite3_exec(*db, log_indexes, NULL, NULL, &emsg) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot create the sweep table: %s", path,
			 emsg ? emsg : sqlite3_errmsg(*db));
		sqlite3_free(emsg);
		sqlite3_close(*db);
		*db = NULL;
		return -EIO;
	}
	return 0;
}

void sw_bind_text_or_null(sqlite3_stmt *st, int i, const char *text)
{
	if (text)
		sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

void sw_bind_run_key(sqlite3_stmt *st, int i, const struct dl_sweep_plan *p, enum dl_order o,
		     uint64_t seed, const char *kernel, const char *mode)
{
	sqlite3_bind_text(st, i, dl_order_name(o), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, i + 1, (int64_t)seed);
	sw_bind_text_or_null(st, i + 2, kernel);
	sqlite3_bind_text(st, i + 3, mode, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, i + 4, dl_sweep_workers(p, o));
}

/* sw_bind_run_key() of run @r of @task, as the plan lays it out; returns its kernel. */
static const char *bind_run_key(sqlite3_stmt *st, int i, const struct dl_sweep_plan *p,
				uint32_t task, uint32_t r)
{
	struct dl_sweep_slot sl;

	dl_sweep_slot(p, r, &sl);
	sw_bind_run_key(st, i, p, sl.order, p->seed0 + task % p->nseeds, sl.kernel, sl.mode);
	return sl.kernel;
}

/*
 * Whether the row of a run on @kernel of DTB scenario @s was imported with
 * another kernel's driver table (@imp, NULL: the first kernel's): an older
 * dlsim imported a DTB once, with the first kernel's, for every kernel of a list.
 */
static bool stale_import(const struct dl_sweep_plan *p, const struct dl_sweep_scenario *s,
			 const char *kernel, const char *imp)
{
	if (!s->dtb || !kernel)
		return false;
	if (!imp)
		imp = p->kernel[0];
	return !imp || strcmp(imp, kernel);
}

/*
 * Run @run_id of OUT, done again: its rows in every table of OUT that has a
 * run_id (runs, devices, events, metrics, run_shards, ...) but the sweep's,
 * so that the old run is not kept beside the new one (check --all, report).
 * Events left in a shard are no longer named by OUT (run_shards) and go at
 * the next --compact.
 */
static int drop_run(sqlite3 *out, int64_t run_id)
{
	sqlite3_stmt *t;
	int ret = 0;

	if (!run_id)
		return 0;
	if (sqlite3_prepare_v2(out, "SELECT m.name FROM main.sqlite_master m WHERE m.type = 'table'"
			       " AND m.name <> 'sweep' AND EXISTS (SELECT 1 FROM pragma_table_info(m.name)"
			       " p WHERE p.name = 'run_id')", -1, &t, NULL) != SQLITE_OK)
		return -EIO;
	while (!ret && sqlite3_step(t) == SQLITE_ROW) {
		char *sql = sqlite3_mprintf("DELETE FROM main.\"%w\" WHERE run_id = %lld",
					    (const char *)sqlite3_column_text(t, 0), (long long)run_id);

		if (!sql || sqlite3_exec(out, sql, NULL, NULL, NULL) != SQLITE_OK)
			ret = -EIO;
		sqlite3_free(sql);
	}
	sqlite3_finalize(t);
	return ret;
}

int dl_sweep_pending(sqlite3 *out, const struct dl_sweep_plan *p, uint64_t *pending,
		     uint32_t *stale)
{
	sqlite3_stmt *st, *del;
	uint32_t nrun = dl_sweep_task_runs(p);
	bool open = false;
	int ret = 0;

	*stale = 0;
	if (sqlite3_prepare_v2(out, "SELECT rowid, import_kernel, run_id FROM sweep WHERE scenario_hash = ?1"
			       " AND order_name = ?2 AND seed = ?3 AND ifnull(kernel, '') = ifnull(?4, '')"
			       " AND mode = ?5 AND workers = ?6", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_prepare_v2(out, "DELETE FROM sweep WHERE rowid = ?1", -1, &del, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return -EIO;
	}
	for (uint32_t t = 0; t < dl_sweep_ntasks(p) && !ret; t++) {
		const struct dl_sweep_scenario *s = &p->sc[t / p->nseeds];

		pending[t] = 0;
		for (uint32_t r = 0; r < nrun; r++) {
			const char *k;
			int rc;

			sqlite3_bind_text(st, 1, s->hash, -1, SQLITE_STATIC);
			k = bind_run_key(st, 2, p, t, r);
			rc = sqlite3_step(st);
			if (rc == SQLITE_ROW &&
			    stale_import(p, s, k, (const char *)sqlite3_column_text(st, 1))) {
				/* run again: its row and its run go, together (one savepoint) */
				int64_t old = sqlite3_column_int64(st, 2);

				sqlite3_bind_int64(del, 1, sqlite3_column_int64(st, 0));
				sqlite3_reset(st);
				if (!open && sqlite3_exec(out, "SAVEPOINT stale", NULL, NULL, NULL) != SQLITE_OK)
					ret = -EIO;
				open = true;
				if (ret || step_done(del) || drop_run(out, old))
					ret = -EIO;
				(*stale)++;
				rc = SQLITE_DONE;
			}
			if (rc == SQLITE_DONE)
				pending[t] |= (1ull << r) & ~p->skip;
			else if (rc != SQLITE_ROW)
				ret = -EIO;
			sqlite3_reset(st);
		}
	}
	sqlite3_finalize(st);
	sqlite3_finalize(del);
	if (open && sqlite3_exec(out, ret ? "ROLLBACK TO stale; RELEASE stale" : "RELEASE stale", NULL,
				 NULL, NULL) != SQLITE_OK)
		ret = -EIO;
	return ret;
}

/* ---- merge ---- */

struct table {
	char *name;
	char *copy_sql;        /* INSERT INTO main.T(cols) SELECT ... FROM s.T WHERE run_id = ?1 */
	sqlite3_stmt *st;
};

/*
 * Statements prepared once per attached shard and reused for every pass.
 * The run's events stay in the shard (dl_log_shard_tables are not copied):
 * OUT gets where they are (run_shards) and how far it has looked (shards.seen).
 */
struct sw_merge {
	sqlite3 *out;
	struct table t[MAX_TABLES];
	int nt;
	sqlite3_stmt *runs_copy, *sel, *exists, *sweep_ins, *id_taken;
	int64_t shard_id, seen;
	sqlite3_stmt *run_shard, *seen_upd;
};

static int column_names(sqlite3 *db, const char *schema, const char *table, char **cols, int max)
{
	char *sql = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q, %Q)", table, schema);
	sqlite3_stmt *st;
	int n = 0;

	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_free(sql);
		return -1;
	}
	sqlite3_free(sql);
	while (sqlite3_step(st) == SQLITE_ROW && n < max)
		cols[n++] = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return n;
}

static void free_cols(char **c, int n)
{
	for (int i = 0; i < n; i++)
		free(c[i]);
}

static bool has_col(char **c, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (c[i] && !strcmp(c[i], name))
			return true;
	return false;
}

/*
 * The copy statement of one table: the columns both databases have; run_id
 * becomes ?2 (runs: left out, so that OUT assigns it).  Names come from the
 * shard's schema (our own tables) and are quoted all the same.
 */
static char *copy_sql(sqlite3 *out, const char *table)
{
	char *sc[MAX_COLS], *mc[MAX_COLS], *ins = sqlite3_mprintf(""), *sel = sqlite3_mprintf("");
	char *sql = NULL;
	int ns = column_names(out, "s", table, sc, MAX_COLS);
	int nm = column_names(out, "main", table, mc, MAX_COLS);
	bool first = true;

	if (ns <= 0 || nm <= 0 || !ins || !sel)
		goto out;
	for (int i = 0; i < ns; i++) {
		char *ni, *nsl;

		if (!sc[i] || !has_col(mc, nm, sc[i]))
			continue;
		if (!strcmp(sc[i], "run_id")) {
			ni = sqlite3_mprintf("%s%s\"run_id\"", ins, first ? "" : ",");
			nsl = sqlite3_mprintf("%s%s?2", sel, first ? "" : ",");
		} else {
			ni = sqlite3_mprintf("%s%s\"%w\"", ins, first ? "" : ",", sc[i]);
			nsl = sqlite3_mprintf("%s%s\"%w\"", sel, first ? "" : ",", sc[i]);
		}
		sqlite3_free(ins);
		sqlite3_free(sel);
		ins = ni;
		sel = nsl;
		first = false;
		if (!ins || !sel)
			goto out;
	}
	sql = sqlite3_mprintf("INSERT INTO main.\"%w\"(%s) SELECT %s FROM s.\"%w\" WHERE run_id = ?1",
			      table, ins, sel, table);
out:
	if (ns > 0)
		free_cols(sc, ns);
	if (nm > 0)
		free_cols(mc, nm);
	sqlite3_free(ins);
	sqlite3_free(sel);
	return sql;
}

static void table_fini(struct table *t)
{
	sqlite3_finalize(t->st);
	sqlite3_free(t->copy_sql);
	free(t->name);
}

void sw_merge_free(struct sw_merge *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nt; i++)
		table_fini(&m->t[i]);
	sqlite3_finalize(m->runs_copy);
	sqlite3_finalize(m->sel);
	sqlite3_finalize(m->exists);
	sqlite3_finalize(m->sweep_ins);
	sqlite3_finalize(m->id_taken);
	sqlite3_finalize(m->run_shard);
	sqlite3_finalize(m->seen_upd);
	free(m);
}

/*
 * The shard attached as 's' in OUT's table shards: its path relative to
 * OUT's folder (both as SQLite resolved them), its id and how far OUT has
 * looked into it; and the statements that say where a run's events are.
 */
static int register_shard(struct sw_merge *m)
{
	const char *main = sqlite3_db_filename(m->out, "main"), *file = sqlite3_db_filename(m->out, "s");
	const char *slash = main ? strrchr(main, '/') : NULL, *rel = file;
	sqlite3_stmt *find, *add;
	int ret = -EIO, rc;

	if (!file || !*file)
		return -EIO;
	if (slash && !strncmp(file, main, (size_t)(slash - main) + 1))
		rel = file + (slash - main) + 1;
	if (sqlite3_prepare_v2(m->out, "SELECT shard_id, seen FROM main.shards WHERE path = ?1", -1,
			       &find, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_prepare_v2(m->out, "INSERT INTO main.shards(path) VALUES(?1)", -1, &add, NULL)
	    != SQLITE_OK) {
		sqlite3_finalize(find);
		return -EIO;
	}
	sqlite3_bind_text(find, 1, rel, -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 1, rel, -1, SQLITE_STATIC);
	/* looked up first: a pass with nothing new then takes no write lock on OUT */
	rc = sqlite3_step(find);
	if (rc == SQLITE_DONE && !step_done(add)) {
		sqlite3_reset(find);
		rc = sqlite3_step(find);
	}
	if (rc == SQLITE_ROW) {
		m->shard_id = sqlite3_column_int64(find, 0);
		m->seen = sqlite3_column_int64(find, 1);
		ret = 0;
	}
	sqlite3_finalize(find);
	sqlite3_finalize(add);
	if (ret || sqlite3_prepare_v2(m->out, "INSERT OR REPLACE INTO main.run_shards(run_id, shard_id,"
				      " shard_run_id) VALUES(?1, ?2, ?3)", -1, &m->run_shard, NULL)
	    != SQLITE_OK ||
	    sqlite3_prepare_v2(m->out, "UPDATE main.shards SET seen = max(seen, ?1) WHERE"
			       " shard_id = ?2", -1, &m->seen_upd, NULL) != SQLITE_OK)
		return -EIO;
	return 0;
}

/* Tables of the shard missing in OUT are created there first (schema from the shard). */
static int merge_prepare(struct sw_merge *m)
{
	sqlite3_stmt *st;
	char *runs_sql, *sel_sql;
	bool imp;
	int rc;

	if (sqlite3_prepare_v2(m->out, "SELECT name, sql FROM s.sqlite_master WHERE type = 'table'"
			       " AND name NOT LIKE 'sqlite_%' AND name <> 'sweep'", -1, &st, NULL)
	    != SQLITE_OK)
		return -EIO;
	while (sqlite3_step(st) == SQLITE_ROW && m->nt < MAX_TABLES) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *create = (const char *)sqlite3_column_text(st, 1);
		char *cols[MAX_COLS];
		int n;
		bool has_run;

		if (!name || !create)
			continue;
		n = column_names(m->out, "main", name, cols, MAX_COLS);
		if (n == 0 && sqlite3_exec(m->out, create, NULL, NULL, NULL) != SQLITE_OK) {
			sqlite3_finalize(st);
			return -EIO;
		}
		if (n > 0)
			free_cols(cols, n);
		n = column_names(m->out, "s", name, cols, MAX_COLS);
		has_run = n > 0 && has_col(cols, n, "run_id");
		if (n > 0)
			free_cols(cols, n);
		if (!has_run || !strcmp(name, "runs") || dl_log_shard_table(name))
			continue;
		m->t[m->nt].name = strdup(name);
		m->t[m->nt].copy_sql = copy_sql(m->out, name);
		if (!m->t[m->nt].name || !m->t[m->nt].copy_sql ||
		    sqlite3_prepare_v2(m->out, m->t[m->nt].copy_sql, -1, &m->t[m->nt].st, NULL)
		    != SQLITE_OK) {
			m->nt++;
			sqlite3_finalize(st);
			return -EIO;
		}
		m->nt++;
	}
	sqlite3_finalize(st);
	/* the run keeps the id its worker was given (dl_sweep_assign_ids) unless it is taken */
	runs_sql = copy_sql(m->out, "runs");
	if (!runs_sql || sqlite3_prepare_v2(m->out, runs_sql, -1, &m->runs_copy, NULL) != SQLITE_OK) {
		sqlite3_free(runs_sql);
		return -EIO;
	}
	sqlite3_free(runs_sql);
	/* complete runs only: the sweep row is written after the run ended */
	{
		char *cols[MAX_COLS];
		int n = column_names(m->out, "s", "sweep", cols, MAX_COLS);

		/* a shard an older dlsim left has no import_kernel: NULL, the first kernel's */
		imp = n > 0 && has_col(cols, n, "import_kernel");
		if (n > 0)
			free_cols(cols, n);
	}
	sel_sql = sqlite3_mprintf("SELECT w.rowid, w.run_id, w.scenario_hash, w.order_name,"
			       " w.seed, w.kernel, w.mode, w.workers, w.source, w.status, w.error, %s"
			       " FROM s.sweep w LEFT JOIN s.runs r ON r.run_id = w.run_id"
			       " WHERE w.rowid > ?1 AND (w.run_id IS NULL OR r.status NOT IN"
			       " ('running', 'interrupted')) ORDER BY w.rowid",
			       imp ? "w.import_kernel" : "NULL");
	rc = sel_sql ? sqlite3_prepare_v2(m->out, sel_sql, -1, &m->sel, NULL) : SQLITE_NOMEM;
	sqlite3_free(sel_sql);
	if (rc != SQLITE_OK ||
	    sqlite3_prepare_v2(m->out, "SELECT 1 FROM main.sweep WHERE scenario_hash = ?1 AND"
			       " order_name = ?2 AND seed = ?3 AND ifnull(kernel, '') = ifnull(?4, '')"
			       " AND mode = ?5 AND workers = ?6", -1, &m->exists, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->out, "INSERT INTO main.sweep(run_id, scenario_hash, order_name,"
			       " seed, kernel, mode, workers, source, status, error, import_kernel)"
			       " VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1, &m->sweep_ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->out, "SELECT 1 FROM main.runs WHERE run_id = ?1", -1, &m->id_taken,
			       NULL) != SQLITE_OK)
		return -EIO;
	return register_shard(m);
}

int sw_merge_prepare(sqlite3 *out, struct sw_merge **mp)
{
	struct sw_merge *m = calloc(1, sizeof(*m));
	int ret;

	*mp = NULL;
	if (!m)
		return -ENOMEM;
	m->out = out;
	ret = merge_prepare(m);
	if (ret) {
		sw_merge_free(m);
		return ret;
	}
	*mp = m;
	return 0;
}

/* Copies one complete run (or a recorded failure) unless its key is in OUT. */
static int merge_row(struct sw_merge *m, sqlite3_stmt *sel, uint32_t *merged)
{
	int64_t old = sqlite3_column_int64(sel, 1), nid = 0;
	bool has_run = sqlite3_column_type(sel, 1) != SQLITE_NULL;
	int rc;

	for (int c = 2; c <= 7; c++)
		sqlite3_bind_value(m->exists, c - 1, sqlite3_column_value(sel, c));
	rc = sqlite3_step(m->exists);
	sqlite3_reset(m->exists);
	if (rc == SQLITE_ROW)
		return 0;               /* already in OUT: a repeated pass */
	if (rc != SQLITE_DONE)
		return -EIO;
	if (has_run) {
		sqlite3_bind_int64(m->id_taken, 1, old);
		rc = sqlite3_step(m->id_taken);
		sqlite3_reset(m->id_taken);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return -EIO;
		sqlite3_bind_int64(m->runs_copy, 1, old);
		if (rc == SQLITE_ROW || old <= 0)
			sqlite3_bind_null(m->runs_copy, 2);
		else
			sqlite3_bind_int64(m->runs_copy, 2, old);
		if (step_done(m->runs_copy))
			return -EIO;
		nid = sqlite3_last_insert_rowid(m->out);
		for (int i = 0; i < m->nt; i++) {
			sqlite3_bind_int64(m->t[i].st, 1, old);
			sqlite3_bind_int64(m->t[i].st, 2, nid);
			if (step_done(m->t[i].st))
				return -EIO;
		}
		sqlite3_bind_int64(m->run_shard, 1, nid);
		sqlite3_bind_int64(m->run_shard, 2, m->shard_id);
		sqlite3_bind_int64(m->run_shard, 3, old);
		if (step_done(m->run_shard))
			return -EIO;
		sqlite3_bind_int64(m->sweep_ins, 1, nid);
	} else {
		sqlite3_bind_null(m->sweep_ins, 1);
	}
	for (int c = 2; c <= 11; c++)
		sqlite3_bind_value(m->sweep_ins, c, sqlite3_column_value(sel, c));
	if (step_done(m->sweep_ins))
		return -EIO;
	(*merged)++;
	return 0;
}

int sw_merge_step(struct sw_merge *m, uint32_t *merged)
{
	int64_t last = m->seen;
	int ret = 0, rc;

	/*
	 * The shard stays: go on from where OUT last looked, and say how far.
	 * sel is reset before it runs, and after it only on success: resetting
	 * it after a failed write would set the connection's error back to
	 * SQLITE_OK, and the caller could no longer tell a SQLITE_BUSY (try the
	 * merge again) nor say why ("not an error").
	 */
	sqlite3_reset(m->sel);
	sqlite3_bind_int64(m->sel, 1, m->seen);
	while (!ret && (rc = sqlite3_step(m->sel)) == SQLITE_ROW) {
		last = sqlite3_column_int64(m->sel, 0);
		ret = merge_row(m, m->sel, merged);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = -EIO;
	if (ret)
		return ret;
	sqlite3_reset(m->sel);
	if (!ret && last > m->seen) {
		sqlite3_bind_int64(m->seen_upd, 1, last);
		sqlite3_bind_int64(m->seen_upd, 2, m->shard_id);
		ret = step_done(m->seen_upd);
		if (!ret)
			m->seen = last;
	}
	return ret;
}

/* Does the database attached as 's' hold a run? */
static bool attached_has_runs(sqlite3 *out)
{
	sqlite3_stmt *st;
	bool has = false;

	if (sqlite3_prepare_v2(out, "SELECT EXISTS (SELECT 1 FROM s.runs)", -1, &st, NULL) != SQLITE_OK)
		return false;   /* no runs table: an empty shard */
	has = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return has;
}

/* Why a merge failed, SQLite's message kept before the ROLLBACK; a full disk said as such. */
static void merge_err(sqlite3 *out, const char *shard, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s%s: %s: %s", (sqlite3_extended_errcode(out) & 0xff) == SQLITE_FULL ?
		 "disk full: " : "", shard, what, sqlite3_errmsg(out));
}

/* How long a merge is tried again while other writers commit, and how often. */
#define MERGE_BUSY_MS 600000
#define MERGE_RETRY_US 2000

int dl_sweep_merge(sqlite3 *out, const char *shard, uint32_t *merged, char *err, size_t errlen)
{
	struct sw_merge *m = NULL;
	sqlite3_stmt *att;
	char uri[DL_LOG_URI_MAX];
	int ret = 0, rc;

	*merged = 0;
	if (dl_log_file_uri(shard, NULL, uri, sizeof(uri))) {
		snprintf(err, errlen, "%s: cannot attach: path too long", shard);
		return -ENAMETOOLONG;
	}
	if (sqlite3_prepare_v2(out, "ATTACH ?1 AS s", -1, &att, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "attach: %s", sqlite3_errmsg(out));
		return -EIO;
	}
	sqlite3_bind_text(att, 1, uri, -1, SQLITE_STATIC);
	rc = sqlite3_step(att);
	sqlite3_finalize(att);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s: cannot attach: %s", shard, sqlite3_errmsg(out));
		return -EIO;
	}
	/*
	 * A shard that has not written its first run yet has no sweep table
	 * (it is deleted); one that holds runs without it is not a shard.
	 */
	if (sqlite3_exec(out, "SELECT 1 FROM s.sweep LIMIT 0", NULL, NULL, NULL) != SQLITE_OK) {
		if (attached_has_runs(out)) {
			snprintf(err, errlen, "%s holds runs but no sweep table: not a shard of a"
				 " sweep (nothing merged, nothing deleted)", shard);
			ret = -EEXIST;
		}
		goto detach;
	}
	/*
	 * Deferred: IMMEDIATE would write-lock the attached shard too, stalling its
	 * worker.  A deferred transaction that reads before it writes gets
	 * SQLITE_BUSY without the busy handler when another writer (a direct
	 * worker) committed meanwhile: then it is tried again.
	 */
	for (int64_t waited_us = 0;; waited_us += MERGE_RETRY_US) {
		bool busy;

		if (sqlite3_exec(out, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
			merge_err(out, shard, "begin", err, errlen);
			ret = -EIO;
			goto detach;
		}
		*merged = 0;
		ret = sw_merge_prepare(out, &m);
		if (!ret)
			ret = sw_merge_step(m, merged);
		if (ret)
			merge_err(out, shard, "merge", err, errlen);
		/* read before sw_merge_free(), whose finalize resets the error */
		busy = ret && (sqlite3_extended_errcode(out) & 0xff) == SQLITE_BUSY;
		sw_merge_free(m);
		m = NULL;
		if (!ret && sqlite3_exec(out, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
			merge_err(out, shard, "commit", err, errlen);
			ret = -EIO;
			busy = (sqlite3_extended_errcode(out) & 0xff) == SQLITE_BUSY;
		}
		if (ret)
			sqlite3_exec(out, "ROLLBACK", NULL, NULL, NULL);
		if (!busy || waited_us >= MERGE_BUSY_MS * 1000LL)
			break;
		usleep(MERGE_RETRY_US);
	}
	if (ret)
		*merged = 0;
detach:
	sqlite3_exec(out, "DETACH s", NULL, NULL, NULL);
	return ret;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

/*
 * Merges the complete runs of the shards of OUTPATH's shard directory named
 * PREFIX* (NULL: any) not yet in OUT: their small rows, and where their
 * events are; the shards stay.  @recover: the leftovers of a killed sweep,
 * where an older direct worker's scratch file holds only runs it had not
 * committed (deleted).
 */
static int merge_shards(sqlite3 *out, const char *outpath, const char *prefix, bool recover,
			uint32_t *merged, char *err, size_t errlen)
{
	struct shard_walk w;
	int ret = 0;

	*merged = 0;
	if (!shard_walk_start(&w, outpath))
		return 0;
	while (!ret && shard_walk_next(&w)) {
		uint32_t k = 0;

		if (recover && ends_with(w.name, ".scratch")) {
			unlink(w.path);
			continue;
		}
		if (!ends_with(w.name, ".db") || (prefix && strncmp(w.name, prefix, strlen(prefix))))
			continue;
		ret = dl_sweep_merge(out, w.path, &k, err, errlen);
		*merged += k;
	}
	shard_walk_end(&w);
	return ret;
}

int dl_sweep_merge_dir(sqlite3 *out, const char *outpath, const char *prefix, uint32_t *merged,
		       char *err, size_t errlen)
{
	return merge_shards(out, outpath, prefix, false, merged, err, errlen);
}

int64_t dl_sweep_out_next_id(sqlite3 *out)
{
	sqlite3_stmt *st;
	int64_t id = 1;

	if (sqlite3_prepare_v2(out, "SELECT ifnull(max(run_id), 0) + 1 FROM runs", -1, &st, NULL)
	    != SQLITE_OK)
		return 1;
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

int dl_sweep_out_finish(sqlite3 *out, char *err, size_t errlen)
{
	if (sqlite3_exec(out, log_indexes, NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "building the indexes: %s", sqlite3_errmsg(out));
		return -EIO;
	}
	/* a log as `dlsim run` leaves it (readers do not block the next writer) */
	sqlite3_exec(out, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", NULL, NULL, NULL);
	return 0;
}

void dl_sweep_shard_dir(const char *out, char *buf, size_t len)
{
	snprintf(buf, len, "%s.shards", out);
}

void dl_sweep_shard_path(const char *out, long pid, int rank, char *buf, size_t len)
{
	char dir[4096], host[64] = "host";

	dl_sweep_shard_dir(out, dir, sizeof(dir));
	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	for (char *c = host; *c; c++)
		if (*c == '/')
			*c = '_';
	if (rank >= 0)
		snprintf(buf, len, "%s/%s-%ld-r%d.db", dir, host, pid, rank);
	else
		snprintf(buf, len, "%s/%s-%ld.db", dir, host, pid);
}

int dl_sweep_out_fail(sqlite3 *out, const struct dl_sweep_plan *p, uint32_t task,
		      uint64_t pending, const char *why, uint32_t *failed)
{
	const struct dl_sweep_scenario *s = &p->sc[task / p->nseeds];
	sqlite3_stmt *st;
	int ret = 0;

	if (sqlite3_prepare_v2(out, "INSERT OR IGNORE INTO sweep(run_id, scenario_hash, source,"
			       " order_name, seed, kernel, mode, workers, status, error, import_kernel)"
			       " VALUES(NULL,?,?,?,?,?,?,?,'failed',?,?)", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (uint32_t r = 0; r < dl_sweep_task_runs(p) && !ret; r++) {
		const char *k;

		if (!(pending & (1ull << r)))
			continue;
		sqlite3_bind_text(st, 1, s->hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, s->path, -1, SQLITE_STATIC);
		k = bind_run_key(st, 3, p, task, r);
		sqlite3_bind_text(st, 8, why, -1, SQLITE_STATIC);
		sw_bind_text_or_null(st, 9, s->dtb ? k : NULL);
		if (sqlite3_step(st) != SQLITE_DONE)
			ret = -EIO;
		else if (sqlite3_changes(out))
			(*failed)++;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return ret;
}

int dl_sweep_recover(sqlite3 *out, const char *outpath, uint32_t *merged, char *err, size_t errlen)
{
	return merge_shards(out, outpath, NULL, true, merged, err, errlen);
}

/* Removes the files the sweep wrote in OUTPATH's shard folder (and the folder, if then empty). */
static uint32_t remove_shards(const char *outpath)
{
	struct shard_walk w;
	uint32_t n = 0;

	if (!shard_walk_start(&w, outpath))
		return 0;
	while (shard_walk_next(&w)) {
		/* the lock stays until --compact lets it go (dl_sweep_unlock()) */
		if (!shard_name(w.name) || !strcmp(w.name, SW_LOCK_NAME))
			continue;
		n += unlink(w.path) == 0;
	}
	shard_walk_end(&w);
	rmdir(w.dir);
	return n;
}

int dl_sweep_compact(sqlite3 *out, const char *outpath, uint32_t *runs, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;

	*runs = 0;
	if (sqlite3_prepare_v2(out, "SELECT DISTINCT shard_id FROM run_shards ORDER BY 1", -1, &st, NULL)
	    != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot read run_shards: %s", outpath, sqlite3_errmsg(out));
		return -EIO;
	}
	while (!ret && sqlite3_step(st) == SQLITE_ROW) {
		if (n == cap) {
			int64_t *ni = realloc(ids, (cap = cap ? 2 * cap : 16) * sizeof(*ni));

			if (!ni) {
				snprintf(err, errlen, "out of memory");
				ret = -ENOMEM;
				break;
			}
			ids = ni;
		}
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < n && !ret; i++) {
		uint32_t k = 0;
		uint64_t rows = 0;

		ret = dl_log_shard_compact(out, ids[i], &k, &rows, err, errlen);
		*runs += k;
	}
	free(ids);
	if (ret)
		return ret;
	/* every run's events are in OUT now: what the sweep wrote in its folder can go */
	if (sqlite3_exec(out, "DELETE FROM shards WHERE shard_id NOT IN (SELECT shard_id FROM run_shards)",
			 NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", outpath, sqlite3_errmsg(out));
		return -EIO;
	}
	remove_shards(outpath);
	return 0;
}

/*
 * An open file description lock (F_OFD_SETLK) rather than a classic POSIX
 * one: it belongs to the descriptor, not the process, so SQLite's own locks
 * on other files are untouched; it is inherited by the forked workers (a
 * coordinator killed while its workers still write keeps it held until they
 * end) and released by the kernel when the last of them ends, however: a
 * kill -9 leaves no stale lock.  O_CLOEXEC: a guest or gnuplot does not hold it.
 */
int dl_sweep_lock(const char *outpath, bool compact, int *fd, char *err, size_t errlen)
{
	char dir[4096], path[4200];
	struct flock fl = { .l_type = compact ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET };
	int ret;

	*fd = -1;
	dl_sweep_shard_dir(outpath, dir, sizeof(dir));
	if (mkdir(dir, 0777) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
		return ret;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, SW_LOCK_NAME);
	for (;;) {
		struct stat held, now;

		*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
		if (*fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return ret;
		}
		if (fcntl(*fd, F_OFD_SETLK, &fl))
			break;
		/* the file locked must still be the one of that name: dl_sweep_unlock()
		 * removes it, and a lock on the removed file would guard nothing */
		if (!fstat(*fd, &held) && !stat(path, &now) && held.st_ino == now.st_ino &&
		    held.st_dev == now.st_dev)
			return 0;
		close(*fd);
	}
	ret = errno == EAGAIN || errno == EACCES ? -EBUSY : -errno;
	if (ret == -EBUSY && compact)
		snprintf(err, errlen, "a dlsim sweep is writing %s (it holds %s): run --compact when it"
			 " has ended (a sweep that was killed holds nothing)", outpath, path);
	else if (ret == -EBUSY)
		snprintf(err, errlen, "dlsim sweep --compact is moving the events of %s into it (it holds"
			 " %s): run the sweep again when it has ended", outpath, path);
	else
		snprintf(err, errlen, "%s: cannot lock: %s", path, strerror(-ret));
	close(*fd);
	*fd = -1;
	return ret;
}

void dl_sweep_unlock(const char *outpath, int fd, bool remove)
{
	char dir[4096], path[4200];

	if (fd < 0)
		return;
	dl_sweep_shard_dir(outpath, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, SW_LOCK_NAME);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	/* only when no other sweep holds it too (else a third would lock a new file beside
	 * theirs); unlinked while still held, so one that opened it already finds it taken */
	if (remove && !fcntl(fd, F_OFD_SETLK, &fl) && !unlink(path))
		rmdir(dir);
	close(fd);
}
