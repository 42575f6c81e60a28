/*
 * dl_log_shard.h - runs whose events live in another database: a sweep's
 * shards.
 *
 * A sweep's worker logs each run into its own shard (OUT.db.shards/...); the
 * run's per-item rows (events, devices, links, refused: dl_log_shard_tables)
 * stay there, and OUT.db gets the run's runs, metrics, violations and sweep
 * rows and where the rest lives (extensions of SPEC.md's schema):
 *
 *   shards(shard_id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, seen INTEGER)
 *       path: the shard file, relative to OUT.db's folder (absolute when it is
 *       not under it), so that a moved sweep folder still reads;
 *       seen: the shard's last sweep rowid whose run is in OUT.db
 *   run_shards(run_id INTEGER PRIMARY KEY, shard_id INTEGER NOT NULL,
 *              shard_run_id INTEGER NOT NULL)
 *       run run_id of OUT.db is run shard_run_id of the shard
 *
 * `dlsim sweep --compact OUT.db` copies the rows in and empties run_shards.
 */
#ifndef DL_LOG_SHARD_H
#define DL_LOG_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;

/* The tables whose rows of a run stay in its shard (NULL-terminated). */
extern const char *const dl_log_shard_tables[];
/* The two tables above (CREATE TABLE IF NOT EXISTS). */
extern const char dl_log_shard_schema[];

bool dl_log_shard_table(const char *name);

/**
 * dl_log_shard_file() - where shard @rel of database @db lives: @rel joined
 * to the folder of @db's main file (absolute @rel as it is) into @buf.
 */
void dl_log_shard_file(struct sqlite3 *db, const char *rel, char *buf, size_t len);

/**
 * dl_log_attach_shards() - make the shard-resident rows of runs @runs[0..n)
 * (n == 0: of every run) readable through @db as if they were in it: the
 * shards are attached and TEMP views named like dl_log_shard_tables (found
 * before main's tables) hold main's rows and the shards', under OUT.db's run
 * ids.  More shards than SQLite attaches at once (10) are read into TEMP
 * tables one by one instead.  A later call replaces what an earlier one
 * attached.  Nothing is done for a database without run_shards.
 * Return: 0; -ENOENT when a shard is missing, -EINVAL when a file does not
 * hold the runs OUT.db says it does (another sweep's shard), -EACCES when a
 * killed worker's shard has a -wal file but no -shm and its folder cannot be
 * written (SQLite cannot read it: @err says to --compact it where it can),
 * each with @err naming the file; -EIO, -ENOMEM.
 */
int dl_log_attach_shards(struct sqlite3 *db, const int64_t *runs, size_t n, char *err,
			 size_t errlen);

/**
 * dl_log_shard_compact() - copy the rows of the runs of @db that live in
 * shard @shard_id into @db's own tables, in one transaction, and forget
 * where they were (their run_shards rows).  The file itself is left alone.
 * *@runs, *@rows: what moved.  Return: 0, or as dl_log_attach_shards() with
 * nothing changed.
 */
int dl_log_shard_compact(struct sqlite3 *db, int64_t shard_id, uint32_t *runs, uint64_t *rows,
			 char *err, size_t errlen);

#endif
