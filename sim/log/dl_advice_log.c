/*
 * dl_advice_log.c - the advice table (dl_advice_log.h): one transaction per
 * ranking, on its own connection (advise runs no engine log).
 */
#include <errno.h>
#include <stdio.h>

#include <sqlite3.h>

#include "sim/log/dl_advice_log.h"
#include "sim/log/dl_log.h"

static int fail(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
	return -EIO;
}

int dl_log_advice(const char *path, const char *scenario, const char *order, uint32_t workers,
		  uint64_t resims, uint32_t nops, const char *const *op,
		  const struct dl_advice_row *rows, uint32_t n, int busy_ms, char *err,
		  size_t errlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL, *id = NULL;
	int64_t advice_id = 1;
	int ret = 0;

	/* a new database gets the log's schema first, so runs can join it later */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		ret = fail(db, "cannot open", err, errlen);
		goto out;
	}
	sqlite3_busy_timeout(db, busy_ms);
	if (dl_log_is_dlsim(db) == 0) {
		struct dl_log *log;

		sqlite3_close(db);
		db = NULL;
		if (dl_log_open_wait(path, busy_ms, &log, err, errlen))
			return -EIO;
		dl_log_close(log);
		if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
			ret = fail(db, "cannot open", err, errlen);
			goto out;
		}
		sqlite3_busy_timeout(db, busy_ms);
	}
	if (dl_log_is_dlsim(db) != 1) {
		snprintf(err, errlen, "not a dlsim database (expected one written by dlsim run, or a "
			 "new file); left untouched");
		sqlite3_close(db);
		return -EIO;
	}
	if (sqlite3_exec(db, "BEGIN IMMEDIATE;"
			 "CREATE TABLE IF NOT EXISTS advice(advice_id INTEGER, scenario TEXT, "
			 "order_name TEXT, workers INTEGER, resims INTEGER, created_at TEXT, "
			 "rank INTEGER, kind TEXT, change TEXT, unsafe INTEGER, status TEXT, op TEXT, "
			 "saved_ns INTEGER);", NULL, NULL, NULL) != SQLITE_OK) {
		ret = fail(db, "cannot create the advice table", err, errlen);
		goto out;
	}
	if (sqlite3_prepare_v2(db, "SELECT coalesce(max(advice_id), 0) + 1 FROM advice", -1, &id,
			       NULL) != SQLITE_OK || sqlite3_step(id) != SQLITE_ROW) {
		ret = fail(db, "cannot number the ranking", err, errlen);
		goto out;
	}
	advice_id = sqlite3_column_int64(id, 0);
	if (sqlite3_prepare_v2(db, "INSERT INTO advice VALUES(?1, ?2, ?3, ?4, ?5, "
			       "strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
			       -1, &st, NULL) != SQLITE_OK) {
		ret = fail(db, "cannot insert", err, errlen);
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
				ret = fail(db, "cannot insert", err, errlen);
			sqlite3_reset(st);
		}
	}
	if (!ret && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		ret = fail(db, "cannot commit", err, errlen);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(id);
	if (ret && db)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	return ret;
}
