/*
 * dl_advice_log.c - the advice table (dl_advice_log.h): one transaction per
 * ranking, on its own connection (advise runs no engine log).
 */
#include <errno.h>
#include <stdio.h>

#include <sqlite3.h>

#include "sim/log/dl_advice_log.h"
#include "sim/log/dl_log.h"

/* SQLite's reason, "disk full" first when it is that. */
static int fail(sqlite3 *db, const char *path, const char *what, char *err, size_t errlen)
{
	int ec = db ? sqlite3_extended_errcode(db) & 0xff : SQLITE_NOMEM;

	snprintf(err, errlen, "%s: %s%s: %s", path, ec == SQLITE_FULL ? "disk full: " : "", what,
		 ec == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db));
	return ec == SQLITE_NOMEM ? -ENOMEM : ec == SQLITE_FULL ? -ENOSPC : -EIO;
}

int dl_log_advice(const char *path, const char *scenario, const char *order, uint32_t workers,
		  uint64_t resims, uint32_t nops, const char *const *op,
		  const struct dl_advice_row *rows, uint32_t n, int busy_ms, char *err,
		  size_t errlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL, *id = NULL;
	int64_t advice_id = 1;
	int ret;

	/* the writers' one way in: a new database gets the log's schema, so
	 * runs can join it later; one that is not dlsim's is left untouched */
	ret = dl_log_open_db(path, busy_ms, &db, err, errlen);
	if (ret)
		return ret;
	if (sqlite3_exec(db, "BEGIN IMMEDIATE;"
			 "CREATE TABLE IF NOT EXISTS advice(advice_id INTEGER, scenario TEXT, "
			 "order_name TEXT, workers INTEGER, resims INTEGER, created_at TEXT, "
			 "rank INTEGER, kind TEXT, change TEXT, unsafe INTEGER, status TEXT, op TEXT, "
			 "saved_ns INTEGER);", NULL, NULL, NULL) != SQLITE_OK) {
		ret = fail(db, path, "cannot create the advice table", err, errlen);
		goto out;
	}
	if (sqlite3_prepare_v2(db, "SELECT coalesce(max(advice_id), 0) + 1 FROM advice", -1, &id,
			       NULL) != SQLITE_OK || sqlite3_step(id) != SQLITE_ROW) {
		ret = fail(db, path, "cannot number the ranking", err, errlen);
		goto out;
	}
	advice_id = sqlite3_column_int64(id, 0);
	if (sqlite3_prepare_v2(db, "INSERT INTO advice VALUES(?1, ?2, ?3, ?4, ?5, "
			       "strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
			       -1, &st, NULL) != SQLITE_OK) {
		ret = fail(db, path, "cannot insert", err, errlen);
		goto out;
	}
	for (uint32_t i = 0; i < n && !ret; i++) {
		for (uint32_t k = 0; k <= nops && !ret; k++) {
			sqlite3_bind_int64(st, 1, advice_id);
			sqlite3_bind_text(st, 2, scenario, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 3, order, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 4, workers);
			sqlite3_bind_int64(st, 5, (int64_t)resims);
			sqlite3_bind_int64(st, 6, rows[i].rank);
			sqlite3_bind_text(st, 7, rows[i].kind, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 8, rows[i].change, -1, SQLITE_STATIC);
			sqlite3_bind_int(st, 9, rows[i].unsafe);
			sqlite3_bind_text(st, 10, rows[i].status, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 11, k < nops ? op[k] : "total", -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 12, k < nops ? rows[i].saved_ns[k] : rows[i].total_ns);
			if (sqlite3_step(st) != SQLITE_DONE)
				ret = fail(db, path, "cannot insert", err, errlen);
			sqlite3_reset(st);
		}
	}
	if (!ret && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		ret = fail(db, path, "cannot commit", err, errlen);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(id);
	if (ret && db)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	return ret;
}
