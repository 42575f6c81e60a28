/*
 * sw_out.c - the sweep's OUT.db: the sweep table (the resume key), what is
 * still to run, and the merge of finished runs from the workers' shards.
 *
 * The merge copies every table of a shard that has a run_id column (the
 * log's tables and whatever later issues add), column by column where both
 * databases have the column, with the run renumbered: runs first (SQLite
 * gives the new run_id), then the run's rows of every other table, then its
 * sweep row, all in one transaction per shard pass.  A run is copied only
 * when its sweep row exists in the shard (written after the run ended) and
 * its key is not yet in OUT.db, so a pass can be repeated, interrupted or
 * run on a shard left by a killed sweep without losing or doubling a run.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sim/log/dl_log.h"
#include "sim/sweep/sweep.h"
#include "sim/sweep/sw_internal.h"

const char sw_sweep_schema[] =
	"CREATE TABLE IF NOT EXISTS sweep(run_id INTEGER, scenario_hash TEXT NOT NULL,"
	" source TEXT, order_name TEXT NOT NULL, seed INTEGER NOT NULL, kernel TEXT,"
	" mode TEXT NOT NULL, workers INTEGER NOT NULL, status TEXT NOT NULL, error TEXT);"
	"CREATE UNIQUE INDEX IF NOT EXISTS sweep_key ON sweep(scenario_hash, order_name, seed,"
	" ifnull(kernel, ''), mode, workers);"
	"CREATE INDEX IF NOT EXISTS sweep_run ON sweep(run_id);";

static const char log_indexes[] =
	"CREATE INDEX IF NOT EXISTS events_run_seq ON events(run_id, seq);"
	"CREATE INDEX IF NOT EXISTS devices_run ON devices(run_id, dev_id);"
	"CREATE INDEX IF NOT EXISTS metrics_run ON metrics(run_id);"
	"CREATE INDEX IF NOT EXISTS violations_run ON violations(run_id);"
	"CREATE INDEX IF NOT EXISTS refused_run ON refused(run_id);";

#define MAX_TABLES 32
#define MAX_COLS   64

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
 * The shards are merged and deleted by name: a file the sweep did not write
 * there (a database copied in by hand) would be deleted unmerged.  Before
 * anything is changed, refuse (-EEXIST) a shard directory holding one.
 */
static int shards_foreign(const char *outpath, char *err, size_t errlen)
{
	char dir[4096];
	DIR *d;
	struct dirent *e;
	int ret = 0;

	dl_sweep_shard_dir(outpath, dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		return 0;
	while (!ret && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || shard_name(e->d_name))
			continue;
		snprintf(err, errlen, "%s/%s is not a file this sweep writes (shards are merged into"
			 " %s and deleted): move it out of %s first", dir, e->d_name, outpath, dir);
		ret = -EEXIST;
	}
	closedir(d);
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

int dl_sweep_pending(sqlite3 *out, const struct dl_sweep_plan *p, uint64_t *pending)
{
	sqlite3_stmt *st;
	uint32_t nrun = dl_sweep_task_runs(p);
	int ret = 0;

	if (sqlite3_prepare_v2(out, "SELECT 1 FROM sweep WHERE scenario_hash = ?1 AND order_name = ?2"
			       " AND seed = ?3 AND ifnull(kernel, '') = ifnull(?4, '') AND mode = ?5"
			       " AND workers = ?6", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (uint32_t t = 0; t < dl_sweep_ntasks(p) && !ret; t++) {
		const struct dl_sweep_scenario *s = &p->sc[t / p->nseeds];

		pending[t] = 0;
		for (uint32_t r = 0; r < nrun; r++) {
			struct dl_sweep_slot sl;
			enum dl_order o;
			const char *k;
			int rc;

			dl_sweep_slot(p, r, &sl);
			o = sl.order;
			k = sl.kernel;

			sqlite3_bind_text(st, 1, s->hash, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 2, dl_order_name(o), -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 3, (int64_t)(p->seed0 + t % p->nseeds));
			if (k)
				sqlite3_bind_text(st, 4, k, -1, SQLITE_STATIC);
			else
				sqlite3_bind_null(st, 4);
			sqlite3_bind_text(st, 5, sl.mode, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 6, dl_sweep_workers(p, o));
			rc = sqlite3_step(st);
			if (rc == SQLITE_DONE)
				pending[t] |= (1ull << r) & ~p->skip;
			else if (rc != SQLITE_ROW)
				ret = -EIO;
			sqlite3_reset(st);
		}
	}
	sqlite3_finalize(st);
	return ret;
}

/* ---- merge ---- */

struct table {
	char *name;
	char *copy_sql;        /* INSERT INTO main.T(cols) SELECT ... FROM s.T WHERE run_id = ?1 */
	sqlite3_stmt *st;
	sqlite3_stmt *bulk;    /* every row of s.T into main.T */
	sqlite3_stmt *clear;   /* DELETE FROM s.T (sw_merge_clear) */
};

#define NAPPLIES 4

/* Statements prepared once per attached shard and reused for every pass. */
struct sw_merge {
	sqlite3 *out;
	struct table t[MAX_TABLES];
	int nt;
	struct table runs, sweep;    /* runs: bulk, clear; sweep: bulk, clear */
	sqlite3_stmt *runs_copy, *sel, *exists, *sweep_ins, *id_taken, *last;
	sqlite3_stmt *applies[NAPPLIES];
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
	sqlite3_finalize(t->bulk);
	sqlite3_finalize(t->clear);
	sqlite3_free(t->copy_sql);
	free(t->name);
}

void sw_merge_free(struct sw_merge *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nt; i++)
		table_fini(&m->t[i]);
	table_fini(&m->runs);
	table_fini(&m->sweep);
	sqlite3_finalize(m->runs_copy);
	sqlite3_finalize(m->sel);
	sqlite3_finalize(m->exists);
	sqlite3_finalize(m->sweep_ins);
	sqlite3_finalize(m->id_taken);
	sqlite3_finalize(m->last);
	for (int i = 0; i < NAPPLIES; i++)
		sqlite3_finalize(m->applies[i]);
	free(m);
}

/* The statement that copies every row of one table: `SELECT *` when both have
 * the same columns in the same order (SQLite then moves raw records, the
 * transfer optimisation, into a table without indexes), else the columns both
 * have, by name. */
static int bulk_prepare(sqlite3 *out, struct table *t)
{
	char *sc[MAX_COLS], *mc[MAX_COLS], *cols = sqlite3_mprintf(""), *sql = NULL;
	int ns = column_names(out, "s", t->name, sc, MAX_COLS);
	int nm = column_names(out, "main", t->name, mc, MAX_COLS);
	bool same = ns == nm && ns > 0, first = true;
	int ret = -EIO;

	if (ns <= 0 || nm <= 0 || !cols)
		goto out;
	for (int i = 0; i < ns && same; i++)
		same = sc[i] && mc[i] && !strcmp(sc[i], mc[i]);
	for (int i = 0; i < ns && !same; i++) {
		char *n;

		if (!sc[i] || !has_col(mc, nm, sc[i]))
			continue;
		n = sqlite3_mprintf("%s%s\"%w\"", cols, first ? "" : ",", sc[i]);
		sqlite3_free(cols);
		cols = n;
		first = false;
		if (!cols)
			goto out;
	}
	if (same)
		sql = sqlite3_mprintf("INSERT INTO main.\"%w\" SELECT * FROM s.\"%w\"", t->name, t->name);
	else
		sql = sqlite3_mprintf("INSERT INTO main.\"%w\"(%s) SELECT %s FROM s.\"%w\"", t->name, cols,
				      cols, t->name);
	if (sql && sqlite3_prepare_v2(out, sql, -1, &t->bulk, NULL) == SQLITE_OK)
		ret = 0;
out:
	if (ns > 0)
		free_cols(sc, ns);
	if (nm > 0)
		free_cols(mc, nm);
	sqlite3_free(cols);
	sqlite3_free(sql);
	return ret;
}

/*
 * The bulk copy applies when the shard holds complete runs only, none of
 * whose keys or run ids OUT has: then every row of the shard is copied as
 * it is.  Anything else (a shard left by a killed sweep, a run id taken)
 * goes run by run.
 */
static const char *const applies_sql[NAPPLIES] = {
	"SELECT EXISTS(SELECT 1 FROM s.runs r LEFT JOIN s.sweep w ON w.run_id = r.run_id"
	" WHERE w.rowid IS NULL OR r.status IS NULL OR r.status IN ('running', 'interrupted'))",
	"SELECT EXISTS(SELECT 1 FROM s.sweep w WHERE w.run_id IS NOT NULL AND NOT EXISTS"
	" (SELECT 1 FROM s.runs r WHERE r.run_id = w.run_id))",
	"SELECT EXISTS(SELECT 1 FROM s.runs r JOIN main.runs m ON m.run_id = r.run_id)",
	"SELECT EXISTS(SELECT 1 FROM s.sweep w JOIN main.sweep m ON m.scenario_hash ="
	" w.scenario_hash AND m.order_name = w.order_name AND m.seed = w.seed AND"
	" ifnull(m.kernel, '') = ifnull(w.kernel, '') AND m.mode = w.mode AND"
	" m.workers = w.workers)",
};

/* Tables of the shard missing in OUT are created there first (schema from the shard). */
static int merge_prepare(struct sw_merge *m)
{
	sqlite3_stmt *st;
	char *runs_sql;

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
		if (!has_run || !strcmp(name, "runs"))
			continue;
		m->t[m->nt].name = strdup(name);
		m->t[m->nt].copy_sql = copy_sql(m->out, name);
		if (!m->t[m->nt].name || !m->t[m->nt].copy_sql ||
		    sqlite3_prepare_v2(m->out, m->t[m->nt].copy_sql, -1, &m->t[m->nt].st, NULL)
		    != SQLITE_OK || bulk_prepare(m->out, &m->t[m->nt])) {
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
	m->runs.name = strdup("runs");
	m->sweep.name = strdup("sweep");
	if (!m->runs.name || !m->sweep.name || bulk_prepare(m->out, &m->runs))
		return -EIO;
	/* complete runs only: the sweep row is written after the run ended */
	if (sqlite3_prepare_v2(m->out, "SELECT w.rowid, w.run_id, w.scenario_hash, w.order_name,"
			       " w.seed, w.kernel, w.mode, w.workers, w.source, w.status, w.error"
			       " FROM s.sweep w LEFT JOIN s.runs r ON r.run_id = w.run_id"
			       " WHERE w.rowid > ?1 AND (w.run_id IS NULL OR r.status NOT IN"
			       " ('running', 'interrupted')) ORDER BY w.rowid", -1, &m->sel, NULL)
	    != SQLITE_OK ||
	    sqlite3_prepare_v2(m->out, "SELECT 1 FROM main.sweep WHERE scenario_hash = ?1 AND"
			       " order_name = ?2 AND seed = ?3 AND ifnull(kernel, '') = ifnull(?4, '')"
			       " AND mode = ?5 AND workers = ?6", -1, &m->exists, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->out, "INSERT INTO main.sweep(run_id, scenario_hash, order_name,"
			       " seed, kernel, mode, workers, source, status, error)"
			       " VALUES(?,?,?,?,?,?,?,?,?,?)", -1, &m->sweep_ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->out, "SELECT 1 FROM main.runs WHERE run_id = ?1", -1, &m->id_taken,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->out, "INSERT INTO main.sweep(run_id, scenario_hash, source,"
			       " order_name, seed, kernel, mode, workers, status, error)"
			       " SELECT run_id, scenario_hash, source, order_name, seed, kernel, mode,"
			       " workers, status, error FROM s.sweep ORDER BY rowid", -1, &m->sweep.bulk,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->out, "SELECT ifnull(max(rowid), 0) FROM s.sweep", -1, &m->last, NULL)
	    != SQLITE_OK)
		return -EIO;
	for (int i = 0; i < NAPPLIES; i++)
		if (sqlite3_prepare_v2(m->out, applies_sql[i], -1, &m->applies[i], NULL) != SQLITE_OK)
			return -EIO;
	return 0;
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

static int step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
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
		sqlite3_bind_int64(m->sweep_ins, 1, nid);
	} else {
		sqlite3_bind_null(m->sweep_ins, 1);
	}
	for (int c = 2; c <= 10; c++)
		sqlite3_bind_value(m->sweep_ins, c, sqlite3_column_value(sel, c));
	if (step_done(m->sweep_ins))
		return -EIO;
	(*merged)++;
	return 0;
}

/* 1 when a query's single integer is non-zero, 0 when zero, -EIO on an error. */
static int query_true(sqlite3_stmt *st)
{
	int ret = -EIO;

	if (sqlite3_step(st) == SQLITE_ROW)
		ret = sqlite3_column_int64(st, 0) != 0;
	sqlite3_reset(st);
	return ret;
}

static int bulk_applies(struct sw_merge *m)
{
	for (int i = 0; i < NAPPLIES; i++) {
		int r = query_true(m->applies[i]);

		if (r)
			return r < 0 ? r : 0;
	}
	return 1;
}

static int merge_bulk(struct sw_merge *m, int64_t *hwm, uint32_t *merged)
{
	int ret = step_done(m->runs.bulk);

	for (int i = 0; i < m->nt && !ret; i++)
		ret = step_done(m->t[i].bulk);
	if (ret || sqlite3_step(m->sweep.bulk) != SQLITE_DONE) {
		sqlite3_reset(m->sweep.bulk);
		return -EIO;
	}
	sqlite3_reset(m->sweep.bulk);
	*merged += (uint32_t)sqlite3_changes(m->out);
	if (sqlite3_step(m->last) == SQLITE_ROW)
		*hwm = sqlite3_column_int64(m->last, 0);
	else
		ret = -EIO;
	sqlite3_reset(m->last);
	return ret;
}

int sw_merge_step(struct sw_merge *m, bool whole, int64_t *hwm, uint32_t *merged)
{
	int64_t last = *hwm;
	int ret = 0, rc;

	if (whole && *hwm == 0 && (ret = bulk_applies(m)) == 1)
		return merge_bulk(m, hwm, merged);
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(m->sel, 1, *hwm);
	while (!ret && (rc = sqlite3_step(m->sel)) == SQLITE_ROW) {
		last = sqlite3_column_int64(m->sel, 0);
		ret = merge_row(m, m->sel, merged);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = -EIO;
	sqlite3_reset(m->sel);
	if (!ret)
		*hwm = last;
	return ret;
}

int sw_merge_clear(struct sw_merge *m)
{
	struct table *all[MAX_TABLES + 2];
	int n = 0;

	all[n++] = &m->runs;
	all[n++] = &m->sweep;
	for (int i = 0; i < m->nt; i++)
		all[n++] = &m->t[i];
	for (int i = 0; i < n; i++) {
		if (!all[i]->clear) {
			char *sql = sqlite3_mprintf("DELETE FROM s.\"%w\"", all[i]->name);
			int rc = sql ? sqlite3_prepare_v2(m->out, sql, -1, &all[i]->clear, NULL) : SQLITE_NOMEM;

			sqlite3_free(sql);
			if (rc != SQLITE_OK)
				return -EIO;
		}
		if (step_done(all[i]->clear))
			return -EIO;
	}
	return 0;
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

static int merge_impl(sqlite3 *out, const char *shard, int64_t *hwm, bool whole, uint32_t *merged,
		      char *err, size_t errlen)
{
	struct sw_merge *m = NULL;
	sqlite3_stmt *att;
	int ret = 0, rc;

	*merged = 0;
	if (sqlite3_prepare_v2(out, "ATTACH ?1 AS s", -1, &att, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "attach: %s", sqlite3_errmsg(out));
		return -EIO;
	}
	sqlite3_bind_text(att, 1, shard, -1, SQLITE_STATIC);
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
	/* deferred: IMMEDIATE would write-lock the attached shard too, stalling its worker */
	if (sqlite3_exec(out, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		merge_err(out, shard, "begin", err, errlen);
		ret = -EIO;
		goto detach;
	}
	ret = sw_merge_prepare(out, &m);
	if (!ret)
		ret = sw_merge_step(m, whole, hwm, merged);
	if (ret)
		merge_err(out, shard, "merge", err, errlen);
	sw_merge_free(m);
	if (sqlite3_exec(out, ret ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !ret) {
		merge_err(out, shard, "commit", err, errlen);
		sqlite3_exec(out, "ROLLBACK", NULL, NULL, NULL);
		ret = -EIO;
	}
	if (ret)
		*merged = 0;
detach:
	sqlite3_exec(out, "DETACH s", NULL, NULL, NULL);
	return ret;
}

int dl_sweep_merge(sqlite3 *out, const char *shard, int64_t *hwm, uint32_t *merged, char *err,
		   size_t errlen)
{
	return merge_impl(out, shard, hwm, false, merged, err, errlen);
}

int dl_sweep_merge_file(sqlite3 *out, const char *shard, uint32_t *merged, char *err,
			size_t errlen)
{
	int64_t hwm = 0;

	return merge_impl(out, shard, &hwm, true, merged, err, errlen);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

/*
 * Merges and removes the shards of OUTPATH's shard directory named PREFIX*
 * (NULL: any), only the closed segments with @closed_only; @recover: the
 * leftovers of a killed sweep, where a direct worker's scratch file holds
 * only runs it had not committed (deleted) and the directory goes at the end.
 */
static int merge_shards(sqlite3 *out, const char *outpath, const char *prefix, bool closed_only,
			bool recover, uint32_t *merged, char *err, size_t errlen)
{
	char dir[4096];
	DIR *d;
	struct dirent *e;
	int ret = 0;

	*merged = 0;
	dl_sweep_shard_dir(outpath, dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		return 0;
	while (!ret && (e = readdir(d))) {
		char path[4400];
		uint32_t k = 0;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (recover && ends_with(e->d_name, ".scratch")) {
			unlink(path);
			continue;
		}
		if (!ends_with(e->d_name, ".db") || (closed_only && !ends_with(e->d_name, ".done.db")) ||
		    (prefix && strncmp(e->d_name, prefix, strlen(prefix))))
			continue;
		ret = dl_sweep_merge_file(out, path, &k, err, errlen);
		if (!ret) {
			sw_shard_remove(path);
			*merged += k;
		}
	}
	closedir(d);
	if (recover)
		rmdir(dir);
	return ret;
}

int dl_sweep_merge_dir(sqlite3 *out, const char *outpath, const char *prefix, bool closed_only,
		       uint32_t *merged, char *err, size_t errlen)
{
	return merge_shards(out, outpath, prefix, closed_only, false, merged, err, errlen);
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

int dl_sweep_out_bulk(sqlite3 *out, uint32_t runs_to_do, bool direct)
{
	sqlite3_stmt *st;
	int64_t have = 0;

	if (sqlite3_prepare_v2(out, "SELECT count(*) FROM runs", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		have = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	/*
	 * A rollback journal instead of the WAL while the sweep merges: the copied
	 * pages are appended to the file once, not written to the WAL and then
	 * again by its checkpoint.  synchronous = FULL: each merge's commit is
	 * durable (a few syncs a second); a process killed mid-merge leaves a hot
	 * journal that the next open rolls back.  Refused while another
	 * connection reads OUT in WAL mode: then it stays WAL (slower, as safe).
	 * Direct: WAL stays, workers commit a task at a time (no sync per commit,
	 * and a reader never blocks them).
	 */
	if (!direct)
		sqlite3_exec(out, "PRAGMA journal_mode = TRUNCATE; PRAGMA synchronous = FULL;", NULL,
			     NULL, NULL);
	/* rebuilding costs what OUT already holds: only when the sweep adds as much */
	if (have > (int64_t)runs_to_do)
		return 0;
	return sqlite3_exec(out, "DROP INDEX IF EXISTS events_run_seq; DROP INDEX IF EXISTS devices_run;"
			    " DROP INDEX IF EXISTS metrics_run; DROP INDEX IF EXISTS violations_run;"
			    " DROP INDEX IF EXISTS refused_run;", NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
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
			       " order_name, seed, kernel, mode, workers, status, error)"
			       " VALUES(NULL,?,?,?,?,?,?,?,'failed',?)", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (uint32_t r = 0; r < dl_sweep_task_runs(p) && !ret; r++) {
		struct dl_sweep_slot sl;
		enum dl_order o;
		const char *k;

		if (!(pending & (1ull << r)))
			continue;
		dl_sweep_slot(p, r, &sl);
		o = sl.order;
		k = sl.kernel;
		sqlite3_bind_text(st, 1, s->hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, s->path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, dl_order_name(o), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, (int64_t)(p->seed0 + task % p->nseeds));
		if (k)
			sqlite3_bind_text(st, 5, k, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 5);
		sqlite3_bind_text(st, 6, sl.mode, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 7, dl_sweep_workers(p, o));
		sqlite3_bind_text(st, 8, why, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			ret = -EIO;
		else if (sqlite3_changes(out))
			(*failed)++;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return ret;
}

/* Removes a shard and its WAL and shared-memory files. */
void sw_shard_remove(const char *path)
{
	char aux[4500];

	unlink(path);
	snprintf(aux, sizeof(aux), "%s-wal", path);
	unlink(aux);
	snprintf(aux, sizeof(aux), "%s-shm", path);
	unlink(aux);
}

int dl_sweep_recover(sqlite3 *out, const char *outpath, uint32_t *merged, char *err, size_t errlen)
{
	return merge_shards(out, outpath, NULL, false, true, merged, err, errlen);
}
