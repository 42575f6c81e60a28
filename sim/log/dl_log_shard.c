/*
 * dl_log_shard.c - reading runs whose events stay in a sweep's shards
 * (dl_log_shard.h): the shards a reader needs are attached to its own
 * connection and TEMP views, which SQLite finds before main's tables of the
 * same name, put main's rows and the shards' together under OUT.db's run
 * ids.  Every reader (check, report, diff, explain, twin) then runs its
 * queries unchanged.  Schema names are built from integer shard ids; the
 * shard paths are bound, never spliced into SQL.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sim/log/dl_log.h"
#include "sim/log/dl_log_shard.h"

const char *const dl_log_shard_tables[] = { "events", "devices", "links", "refused", NULL };

const char dl_log_shard_schema[] =
	"CREATE TABLE IF NOT EXISTS shards(shard_id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,"
	" seen INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS run_shards(run_id INTEGER PRIMARY KEY, shard_id INTEGER NOT NULL,"
	" shard_run_id INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS run_shards_shard ON run_shards(shard_id, shard_run_id);";

#define SCHEMA_PREFIX "dl_shard"
#define COPY_PREFIX "dl_shard_rows_"   /* more shards than SQLite attaches: TEMP copies */
#define MAX_SHARDS 125          /* SQLite's hard upper bound of attached databases */
#define MAX_COLS 64

bool dl_log_shard_table(const char *name)
{
	for (const char *const *t = dl_log_shard_tables; *t; t++)
		if (!strcmp(*t, name))
			return true;
	return false;
}

static bool has_table(sqlite3 *db, const char *schema, const char *name)
{
	char *sql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_master WHERE type = 'table' AND"
				    " name = ?1", schema);
	sqlite3_stmt *st;
	bool has = false;

	if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		has = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	sqlite3_free(sql);
	return has;
}

void dl_log_shard_file(sqlite3 *db, const char *rel, char *buf, size_t len)
{
	const char *main = sqlite3_db_filename(db, "main");
	const char *slash = main ? strrchr(main, '/') : NULL;

	if (rel[0] == '/' || !slash)
		snprintf(buf, len, "%s", rel);
	else
		snprintf(buf, len, "%.*s/%s", (int)(slash - main), main, rel);
}

/* Undoes an earlier dl_log_attach_shards(): its views, its copies and its shards. */
static void detach_all(sqlite3 *db)
{
	char names[MAX_SHARDS][32];
	int n = 0;
	sqlite3_stmt *st;

	for (const char *const *t = dl_log_shard_tables; *t; t++) {
		char *sql = sqlite3_mprintf("DROP VIEW IF EXISTS temp.\"%w\"; DROP TABLE IF EXISTS"
					    " temp.\"" COPY_PREFIX "%w\"", *t, *t);

		if (sql)
			sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
	}
	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list WHERE name LIKE 'dl\\_shard%'"
			       " ESCAPE '\\'", -1, &st, NULL) != SQLITE_OK)
		return;
	while (n < MAX_SHARDS && sqlite3_step(st) == SQLITE_ROW)
		snprintf(names[n++], sizeof(names[0]), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	for (int i = 0; i < n; i++) {
		char *sql = sqlite3_mprintf("DETACH \"%w\"", names[i]);

		if (sql)
			sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_free(sql);
	}
}

struct shard {
	int64_t id, run;             /* run: one of OUT's runs in it (for the messages) */
	char *path;                  /* as stored: relative to OUT's folder */
};

/* Adds shard @id (once) to *@shp; false when out of memory. */
static bool add_shard(struct shard **shp, size_t *n, sqlite3_stmt *st)
{
	int64_t id = sqlite3_column_int64(st, 0);
	const unsigned char *p = sqlite3_column_text(st, 1);
	struct shard *sh = *shp;

	for (size_t i = 0; i < *n; i++)
		if (sh[i].id == id)
			return true;
	if (!*n || !(*n & (*n + 1))) {      /* at n = 0, 1, 3, 7, ...: to 2n + 2 > n */
		sh = realloc(sh, (2 * *n + 2) * sizeof(*sh));
		if (!sh)
			return false;
		*shp = sh;
	}
	sh[*n].id = id;
	sh[*n].run = sqlite3_column_int64(st, 2);
	sh[*n].path = p ? strdup((const char *)p) : NULL;
	(*n)++;
	return true;
}

/* The shards holding @runs (all: n == 0) into *@sh (to free); -ENOMEM, -EIO. */
static int needed(sqlite3 *db, const int64_t *runs, size_t n, struct shard **sh, size_t *nsh)
{
	sqlite3_stmt *st;
	int ret = 0;

	*nsh = 0;
	if (sqlite3_prepare_v2(db, n ? "SELECT m.shard_id, s.path, m.run_id FROM main.run_shards m"
			       " LEFT JOIN main.shards s USING (shard_id) WHERE m.run_id = ?1" :
			       "SELECT m.shard_id, s.path, min(m.run_id) FROM main.run_shards m"
			       " LEFT JOIN main.shards s USING (shard_id) GROUP BY m.shard_id", -1, &st, NULL)
	    != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < (n ? n : 1) && !ret; i++) {
		if (n)
			sqlite3_bind_int64(st, 1, runs[i]);
		while (!ret && sqlite3_step(st) == SQLITE_ROW)
			if (!add_shard(sh, nsh, st))
				ret = -ENOMEM;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return ret;
}

/* Is every run OUT says @sh holds there, as OUT logged it?  0, or -EINVAL with @err. */
static int verify(sqlite3 *db, const struct shard *sh, const char *file, char *err, size_t errlen)
{
	char *sql = sqlite3_mprintf(
		"SELECT m.run_id FROM main.run_shards m JOIN main.runs r ON r.run_id = m.run_id"
		" LEFT JOIN \"" SCHEMA_PREFIX "%lld\".runs s ON s.run_id = m.shard_run_id"
		" WHERE m.shard_id = %lld AND (s.run_id IS NULL OR s.scenario IS NOT r.scenario OR"
		" s.order_name IS NOT r.order_name OR s.seed IS NOT r.seed OR"
		" s.started_at IS NOT r.started_at) LIMIT 1", (long long)sh->id, (long long)sh->id);
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: not a shard of a sweep (it holds run %" PRId64 "'s events"
			 " by %s): %s", file, sh->run, sqlite3_db_filename(db, "main"),
			 sqlite3_errmsg(db));
		sqlite3_free(sql);
		return -EINVAL;
	}
	sqlite3_free(sql);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(err, errlen, "%s does not hold run %lld of %s as it was logged (a shard of"
			 " another sweep?)", file, (long long)sqlite3_column_int64(st, 0),
			 sqlite3_db_filename(db, "main"));
		ret = -EINVAL;
	} else if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s: cannot read: %s", file, sqlite3_errmsg(db));
		ret = -EINVAL;
	}
	sqlite3_finalize(st);
	return ret;
}

/*
 * A shard whose worker was killed keeps its last transactions in FILE-wal.
 * SQLite reads them through the -shm index: left by the worker, or created
 * by the reader; in a folder the reader cannot write, without one, it
 * cannot.  Then the shard is attached read-only through the unix-none VFS
 * in exclusive locking mode, set before its first read: the WAL's index is
 * kept in this process's memory, nothing is written beside or into it
 * (dl_log.c open_readonly_folder() reads a main database so).  The default
 * locking mode is exclusive only for the ATTACH: an attached WAL database
 * in heap memory keeps it, the others go back to normal.  The connection
 * must have been opened by URI (dl_log_open_existing(), _reader()).
 */
static int attach_wal_only(sqlite3 *db, const char *file, const char *schema)
{
	char uri[DL_LOG_URI_MAX], *sql;
	int rc;

	if (dl_log_file_uri(file, "mode=ro&vfs=unix-none", uri, sizeof(uri)))
		return SQLITE_CANTOPEN;
	sql = sqlite3_mprintf("PRAGMA locking_mode = EXCLUSIVE; ATTACH %Q AS \"%w\"", uri, schema);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	sqlite3_exec(db, "PRAGMA locking_mode = NORMAL", NULL, NULL, NULL);
	return rc;
}

static int attach_one(sqlite3 *db, const struct shard *sh, char *err, size_t errlen)
{
	char file[4096], *sql;
	sqlite3_stmt *st;
	int rc;

	if (!sh->path) {
		snprintf(err, errlen, "%s: run %" PRId64 " names shard %" PRId64 ", which the table"
			 " shards does not list", sqlite3_db_filename(db, "main"), sh->run, sh->id);
		return -EINVAL;
	}
	dl_log_shard_file(db, sh->path, file, sizeof(file));
	if (access(file, R_OK)) {
		snprintf(err, errlen, "%s: run %" PRId64 "'s events are in %s, which is missing (%s);"
			 " a sweep folder moves whole, with OUT.db.shards/ beside OUT.db",
			 sqlite3_db_filename(db, "main"), sh->run, file, strerror(errno));
		return -ENOENT;
	}
	sql = sqlite3_mprintf("ATTACH ?1 AS \"" SCHEMA_PREFIX "%lld\"", (long long)sh->id);
	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_free(sql);
		snprintf(err, errlen, "%s: cannot attach: %s", file, sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_free(sql);
	sqlite3_bind_text(st, 1, file, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && dl_log_wal_without_shm(file)) {
		char schema[64];

		snprintf(schema, sizeof(schema), SCHEMA_PREFIX "%lld", (long long)sh->id);
		if (attach_wal_only(db, file, schema) == SQLITE_OK)
			return verify(db, sh, file, err, errlen);
	}
	if (rc != SQLITE_DONE && dl_log_wal_without_shm(file)) {
		snprintf(err, errlen, "%s: cannot read it: the worker that wrote it was killed and left its"
			 " last runs in %s-wal, which SQLite reads only with a -shm file it creates"
			 " beside it, and that folder cannot be written (%s): run `dlsim sweep --compact"
			 " %s` once where it can (or copy the sweep's folder there)", file, file,
			 sqlite3_errmsg(db), sqlite3_db_filename(db, "main"));
		return -EACCES;
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s: cannot attach: %s", file, sqlite3_errmsg(db));
		return -EINVAL;
	}
	return verify(db, sh, file, err, errlen);
}

/* The columns of main's @table; their count, or -1. */
static int main_columns(sqlite3 *db, const char *table, char **cols)
{
	sqlite3_stmt *st;
	int nc = 0;

	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1, 'main')", -1, &st, NULL)
	    != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (nc < MAX_COLS && sqlite3_step(st) == SQLITE_ROW)
		if ((cols[nc] = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 0))))
			nc++;
	sqlite3_finalize(st);
	return nc;
}

static void free_columns(char **cols, int nc)
{
	for (int c = 0; c < nc; c++)
		sqlite3_free(cols[c]);
}

/* "a","b",... */
static char *column_list(char **cols, int nc)
{
	char *list = sqlite3_mprintf("");

	for (int c = 0; c < nc && list; c++) {
		char *l = sqlite3_mprintf("%s%s\"%w\"", list, c ? "," : "", cols[c]);

		sqlite3_free(list);
		list = l;
	}
	return list;
}

/*
 * The SELECT of the rows of @table that OUT's runs have in shard @id
 * (attached as SCHEMA_PREFIX<id>), under OUT's run ids, in main's columns
 * @cols (one the shard lacks, from an older writer, reads NULL).  NULL when
 * the shard has no such table.
 */
static char *shard_select(sqlite3 *db, const char *table, char **cols, int nc, int64_t id)
{
	char schema[32], *arm = sqlite3_mprintf(""), *sql;

	snprintf(schema, sizeof(schema), SCHEMA_PREFIX "%lld", (long long)id);
	if (!has_table(db, schema, table)) {
		sqlite3_free(arm);
		return NULL;
	}
	for (int c = 0; c < nc && arm; c++) {
		char *probe = sqlite3_mprintf("SELECT \"%w\" FROM \"%w\".\"%w\" LIMIT 0", cols[c], schema,
					      table);
		bool has = probe && sqlite3_exec(db, probe, NULL, NULL, NULL) == SQLITE_OK;
		char *a;

		sqlite3_free(probe);
		if (!strcmp(cols[c], "run_id"))
			a = sqlite3_mprintf("%s%sm.run_id", arm, c ? "," : "");
		else if (has)
			a = sqlite3_mprintf("%s%sx.\"%w\"", arm, c ? "," : "", cols[c]);
		else
			a = sqlite3_mprintf("%s%sNULL", arm, c ? "," : "");
		sqlite3_free(arm);
		arm = a;
	}
	if (!arm)
		return NULL;
	sql = sqlite3_mprintf("SELECT %s FROM main.run_shards m JOIN \"%w\".\"%w\" x ON x.run_id ="
			      " m.shard_run_id WHERE m.shard_id = %lld", arm, schema, table, (long long)id);
	sqlite3_free(arm);
	return sql;
}

/*
 * The TEMP view of @table: main's rows, then one UNION ALL arm per attached
 * shard that has it (@copied: the TEMP copy of every shard's rows instead).
 */
static int create_view(sqlite3 *db, const char *table, const struct shard *sh, size_t nsh,
		       bool copied)
{
	char *cols[MAX_COLS], *list, *sql = NULL;
	int nc = main_columns(db, table, cols), ret = -ENOMEM;

	if (nc <= 0)
		return -EIO;
	list = column_list(cols, nc);
	if (list && copied)
		sql = sqlite3_mprintf("CREATE TEMP VIEW \"%w\"(%s) AS SELECT %s FROM main.\"%w\" UNION ALL"
				      " SELECT %s FROM temp.\"" COPY_PREFIX "%w\"", table, list, list,
				      table, list, table);
	else if (list)
		sql = sqlite3_mprintf("CREATE TEMP VIEW \"%w\"(%s) AS SELECT %s FROM main.\"%w\"", table,
				      list, list, table);
	for (size_t i = 0; i < nsh && sql && !copied; i++) {
		char *arm = shard_select(db, table, cols, nc, sh[i].id), *s;

		if (!arm)
			continue;
		s = sqlite3_mprintf("%s UNION ALL %s", sql, arm);
		sqlite3_free(arm);
		sqlite3_free(sql);
		sql = s;
	}
	if (sql)
		ret = sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
	sqlite3_free(sql);
	sqlite3_free(list);
	free_columns(cols, nc);
	return ret;
}

/* Copies shard @id's rows of @table into main's (@to_temp: its TEMP copy); -EIO on a failure. */
static int copy_table(sqlite3 *db, const char *table, int64_t id, bool to_temp, uint64_t *rows)
{
	char *cols[MAX_COLS], *list, *arm, *sql = NULL;
	int nc = main_columns(db, table, cols), ret = -EIO;

	if (nc <= 0)
		return -EIO;
	list = column_list(cols, nc);
	arm = shard_select(db, table, cols, nc, id);
	if (list && arm)
		sql = to_temp ?
		      sqlite3_mprintf("INSERT INTO temp.\"" COPY_PREFIX "%w\"(%s) %s", table, list, arm) :
		      sqlite3_mprintf("INSERT INTO main.\"%w\"(%s) %s", table, list, arm);
	if (!arm)
		ret = 0;        /* the shard has no such table */
	else if (sql && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK) {
		*rows += (uint64_t)sqlite3_changes(db);
		ret = 0;
	}
	sqlite3_free(sql);
	sqlite3_free(arm);
	sqlite3_free(list);
	free_columns(cols, nc);
	return ret;
}

static int detach_one(sqlite3 *db, int64_t id)
{
	char *sql = sqlite3_mprintf("DETACH \"" SCHEMA_PREFIX "%lld\"", (long long)id);
	int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;

	sqlite3_free(sql);
	return rc == SQLITE_OK ? 0 : -EIO;
}

/*
 * More shards than SQLite attaches at once: each in turn is attached and its
 * rows of the runs OUT has there copied into a TEMP table per table (indexed
 * by run), then detached.  Costs what reading them all costs.
 */
static int copy_shards(sqlite3 *db, const struct shard *sh, size_t nsh, char *err, size_t errlen)
{
	int ret = 0;

	for (const char *const *t = dl_log_shard_tables; *t && !ret; t++) {
		char *sql;

		if (!has_table(db, "main", *t))
			continue;
		sql = sqlite3_mprintf("CREATE TEMP TABLE \"" COPY_PREFIX "%w\" AS SELECT * FROM main.\"%w\""
				      " WHERE 0; CREATE INDEX temp.\"" COPY_PREFIX "%w_run\" ON \""
				      COPY_PREFIX "%w\"(run_id)", *t, *t, *t, *t);
		if (!sql || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
			snprintf(err, errlen, "%s: %s", sqlite3_db_filename(db, "main"), sqlite3_errmsg(db));
			ret = -EIO;
		}
		sqlite3_free(sql);
	}
	for (size_t i = 0; i < nsh && !ret; i++) {
		uint64_t rows = 0;

		ret = attach_one(db, &sh[i], err, errlen);
		for (const char *const *t = dl_log_shard_tables; *t && !ret; t++)
			if (has_table(db, "main", *t) && copy_table(db, *t, sh[i].id, true, &rows)) {
				snprintf(err, errlen, "%s: reading the shard's %s: %s",
					 sqlite3_db_filename(db, "main"), *t, sqlite3_errmsg(db));
				ret = -EIO;
			}
		detach_one(db, sh[i].id);
	}
	return ret;
}

int dl_log_attach_shards(sqlite3 *db, const int64_t *runs, size_t n, char *err, size_t errlen)
{
	struct shard *sh = NULL;
	size_t nsh = 0;
	int avail, ret;

	if (!has_table(db, "main", "run_shards") || !has_table(db, "main", "shards"))
		return 0;
	detach_all(db);
	avail = sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1);
	ret = needed(db, runs, n, &sh, &nsh);
	if (ret == -EIO)
		snprintf(err, errlen, "%s: cannot read run_shards: %s", sqlite3_db_filename(db, "main"),
			 sqlite3_errmsg(db));
	else if (ret)
		snprintf(err, errlen, "out of memory");
	if (!ret && nsh > (size_t)avail)
		ret = copy_shards(db, sh, nsh, err, errlen);
	else
		for (size_t i = 0; i < nsh && !ret; i++)
			ret = attach_one(db, &sh[i], err, errlen);
	for (const char *const *t = dl_log_shard_tables; *t && !ret && nsh; t++)
		if (has_table(db, "main", *t) && create_view(db, *t, sh, nsh, nsh > (size_t)avail)) {
			snprintf(err, errlen, "%s: cannot read the shards' %s: %s",
				 sqlite3_db_filename(db, "main"), *t, sqlite3_errmsg(db));
			ret = -EIO;
		}
	if (ret)
		detach_all(db);
	for (size_t i = 0; i < nsh; i++)
		free(sh[i].path);
	free(sh);
	return ret;
}

int dl_log_shard_compact(sqlite3 *db, int64_t shard_id, uint32_t *runs, uint64_t *rows, char *err,
			 size_t errlen)
{
	struct shard sh = { .id = shard_id };
	sqlite3_stmt *st;
	int ret = 0;

	*runs = 0;
	*rows = 0;
	detach_all(db);
	if (sqlite3_prepare_v2(db, "SELECT s.path, min(m.run_id), count(*) FROM main.run_shards m"
			       " LEFT JOIN main.shards s USING (shard_id) WHERE m.shard_id = ?1", -1, &st,
			       NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot read run_shards: %s", sqlite3_db_filename(db, "main"),
			 sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, shard_id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 2) > 0) {
		const unsigned char *p = sqlite3_column_text(st, 0);

		sh.path = p ? strdup((const char *)p) : NULL;
		sh.run = sqlite3_column_int64(st, 1);
		*runs = (uint32_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (!*runs)
		return 0;
	ret = attach_one(db, &sh, err, errlen);
	free(sh.path);
	if (ret) {
		*runs = 0;
		detach_all(db);
		return ret;
	}
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		ret = -EIO;
	for (const char *const *t = dl_log_shard_tables; *t && !ret; t++)
		if (has_table(db, "main", *t))
			ret = copy_table(db, *t, shard_id, false, rows);
	if (!ret) {
		char *sql = sqlite3_mprintf("DELETE FROM main.run_shards WHERE shard_id = %lld",
					    (long long)shard_id);

		if (!sql || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			ret = -EIO;
		sqlite3_free(sql);
	}
	if (ret)
		snprintf(err, errlen, "%s: copying the events of shard %lld: %s%s",
			 sqlite3_db_filename(db, "main"), (long long)shard_id,
			 (sqlite3_extended_errcode(db) & 0xff) == SQLITE_FULL ? "disk full: " : "",
			 sqlite3_errmsg(db));
	if (sqlite3_exec(db, ret ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !ret) {
		snprintf(err, errlen, "%s: commit: %s", sqlite3_db_filename(db, "main"), sqlite3_errmsg(db));
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		ret = -EIO;
	}
	if (ret)
		*runs = 0;
	detach_all(db);
	return ret;
}
