/*
 * dl_log.c - SQLite event log: schema, run rows and the writer thread.
 *
 * Producers copy records into a bounded ring (mutex + condvars); one writer
 * thread drains it in transactions of up to DL_LOG_BATCH rows with prepared
 * statements.  All other statements run on the caller's thread while the
 * writer is idle (db_mu serializes use of the connection).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sim/core/dl_core.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_testhook.h"

#define DL_LOG_QCAP   (1u << 16)
#define DL_LOG_BATCH  (1u << 16)
#define DL_LOG_DEVICE 0xFFFFu   /* queue item kind: a devices row */
/*
 * The page size of a new log.  A run appends millions of rows: 64 KiB pages
 * cost a 200k-device run's writer 3.0 CPU-seconds against 4.6 at SQLite's
 * default 4 KiB (fewer pages to fill, balance and copy through the WAL).
 */
#define DL_LOG_PAGE_SIZE "65536"

struct qitem {
	struct dl_event ev;
	char *name;             /* device rows only */
};

/*
 * Events go in as multi-row INSERTs of DL_LOG_ROWS rows: one sqlite3_step()
 * per 32 rows instead of per row roughly halves the writer's cost per row
 * (measured on this schema: 0.77M -> 1.4M rows/s); the remainder of a batch
 * goes through the one-row statement.
 */
#define DL_LOG_ROWS   32
#define DL_LOG_COLS   12      /* columns of an events row */

enum { ST_EVENT, ST_DEVICE, ST_LINK, ST_REFUSED, ST_EVENTS_N, ST_COUNT };

struct dl_log {
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
	pthread_mutex_t db_mu;  /* use of db */
	pthread_mutex_t q_mu;
	pthread_cond_t q_nonempty, q_notfull, q_done;
	struct qitem *ring;
	size_t head, count;
	uint64_t pushed, written;
	int stop, flush;
	pthread_t writer;
	int writer_started;
	struct qitem *batch;
	uint32_t pend[DL_LOG_ROWS]; /* batch indices of events waiting for a multi-row insert */
	uint32_t npend;
	int64_t run_id;         /* current run, 0 when none */
	int run_open;
	int64_t seq;            /* rows of the run committed, then those of the batch being written */
	_Atomic int failed;     /* a write failed for good: the run cannot end 'ok' */
	int recorded;           /* the run's last transaction (status, events) was stored */
	int errcode;            /* its SQLite result code */
	uint64_t lost;          /* events and device rows not stored since then */
	char lasterr[256];      /* the failure of the current attempt, before any ROLLBACK */
	char errmsg[512];
	char *path;
	int busy_ms;            /* how long a contended transaction is retried */
	const atomic_int *ctrl_c; /* Ctrl-C (dl_log_set_stop()): abandon the index build */
	int64_t twin_of;          /* > 0: the run twins this one (dl_log_set_twin_of()) */
	/*
	 * The run's devices with a register event written (a bit each), so that
	 * the run's end can say how many never registered (metric
	 * devices_unregistered: hot-plugged devices never added), against which
	 * `check` holds the devices rows (rows added by hand are not).
	 */
	uint8_t *reg;
	uint32_t reg_n;
};

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS runs(run_id INTEGER PRIMARY KEY, scenario TEXT,"
	" order_name TEXT, mode TEXT, seed INTEGER, workers INTEGER, devices INTEGER,"
	" links INTEGER, status TEXT, makespan_ns INTEGER, started_at TEXT, version TEXT,"
	" finished_at TEXT, events INTEGER, log_error TEXT, kernel TEXT, probe_context TEXT);"
	"CREATE TABLE IF NOT EXISTS devices(run_id INTEGER, dev_id INTEGER, name TEXT,"
	" parent_id INTEGER, async INTEGER, driver TEXT);"
	"CREATE TABLE IF NOT EXISTS links(run_id INTEGER, link_id INTEGER, consumer_id INTEGER,"
	" supplier_id INTEGER, flags TEXT, PRIMARY KEY(run_id, link_id));"
	"CREATE TABLE IF NOT EXISTS events(run_id INTEGER, seq INTEGER, t_ns INTEGER,"
	" dev_id INTEGER, link_id INTEGER, kind TEXT, phase TEXT, worker INTEGER, err INTEGER,"
	" aux INTEGER, flags INTEGER, arg INTEGER);"
	"CREATE TABLE IF NOT EXISTS metrics(run_id INTEGER, name TEXT, value REAL);"
	"CREATE TABLE IF NOT EXISTS violations(run_id INTEGER, invariant INTEGER, dev_id INTEGER,"
	" link_id INTEGER, t_ns INTEGER, detail TEXT);"
	"CREATE TABLE IF NOT EXISTS refused(run_id INTEGER, seq INTEGER, consumer_id INTEGER,"
	" supplier_id INTEGER, flags TEXT, reason TEXT);";

static const char index_sql[] =
	"CREATE INDEX IF NOT EXISTS events_run_seq ON events(run_id, seq);"
	"CREATE INDEX IF NOT EXISTS devices_run ON devices(run_id, dev_id);"
	"CREATE INDEX IF NOT EXISTS metrics_run ON metrics(run_id);"
	"CREATE INDEX IF NOT EXISTS violations_run ON violations(run_id);"
	"CREATE INDEX IF NOT EXISTS refused_run ON refused(run_id);";

static const char *const stmt_sql[ST_COUNT] = {
	[ST_EVENT] = "INSERT INTO events(run_id, seq, t_ns, dev_id, link_id, kind, phase, worker,"
		     " err, aux, flags, arg) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_DEVICE] = "INSERT INTO devices(run_id, dev_id, name, parent_id, async, driver)"
		      " VALUES(?,?,?,?,?,?)",
	[ST_LINK] = "INSERT INTO links(run_id, link_id, consumer_id, supplier_id, flags)"
		    " VALUES(?,?,?,?,?) ON CONFLICT(run_id, link_id) DO UPDATE SET"
		    " consumer_id = excluded.consumer_id, supplier_id = excluded.supplier_id,"
		    " flags = excluded.flags",
	[ST_REFUSED] = "INSERT INTO refused(run_id, seq, consumer_id, supplier_id, flags, reason)"
		       " VALUES(?,?,?,?,?,?)",
};


static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The current attempt failed in WHAT: keep SQLite's own message before a ROLLBACK replaces it. */
static int attempt_fail(struct dl_log *l, const char *what, int rc)
{
	snprintf(l->lasterr, sizeof(l->lasterr), "%s: %s", what, sqlite3_errmsg(l->db));
	return rc ? rc : SQLITE_ERROR;
}

static int is_busy(int rc)
{
	return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

/* The write failed for good: the run cannot end 'ok'; the message names the path and says why. */
static void log_fail_rc(struct dl_log *l, int rc)
{
	if (l->failed)
		return;
	l->failed = 1;
	l->errcode = rc;
	if ((rc & 0xff) == SQLITE_FULL)
		snprintf(l->errmsg, sizeof(l->errmsg), "%s: disk full (%s)", l->path, l->lasterr);
	else if (is_busy(rc))
		snprintf(l->errmsg, sizeof(l->errmsg), "%s: locked by another writer for more than"
			 " %d ms (--busy-timeout MS): %s", l->path, l->busy_ms, l->lasterr);
	else
		snprintf(l->errmsg, sizeof(l->errmsg), "%s: %s", l->path, l->lasterr);
}

static void log_fail(struct dl_log *l, const char *what)
{
	int rc = sqlite3_extended_errcode(l->db);

	attempt_fail(l, what, rc);
	log_fail_rc(l, rc);
}

/* The columns shared/SPEC.md fixes: tables of these names without them are someone else's. */
static const char *const spec_cols[][14] = {
	{ "runs", "run_id", "scenario", "order_name", "mode", "seed", "workers", "devices", "links",
	  "status", "makespan_ns", "started_at", "version", NULL },
	{ "events", "run_id", "seq", "t_ns", "dev_id", "link_id", "kind", "phase", "worker", "err", NULL },
	{ "devices", "run_id", "dev_id", "name", "parent_id", "async", NULL },
	{ "links", "run_id", "link_id", "consumer_id", "supplier_id", "flags", NULL },
	{ "metrics", "run_id", "name", "value", NULL },
	{ "violations", "run_id", "invariant", "dev_id", "link_id", "t_ns", "detail", NULL },
};

/* 1 TABLE has every column of COLS, 0 it lacks one (or there is no TABLE), -2 unreadable. */
static int table_has(sqlite3 *db, const char *table, const char *const *cols, int *exists)
{
	sqlite3_stmt *st;
	int n = 0, found = 0, rc;

	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?)", -1, &st, NULL) != SQLITE_OK)
		return -2;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);

		n++;
		for (int i = 0; c && cols[i]; i++)
			found += !strcmp(c, cols[i]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -2;
	*exists = n > 0;
	for (n = 0; cols[n]; n++)
		;
	return found == n;
}

/*
 * What DB is: 1 a dlsim log (its tables have the columns of SPEC.md), 0 empty
 * (no tables and no foreign application_id), -1 something else, -2 SQLite
 * could not read it (the message is in the handle).  *APPID: the marker.
 */
static int schema_kind(sqlite3 *db, int *appid)
{
	sqlite3_stmt *st = NULL;
	int ntables = 0, rc;

	*appid = 0;
	if (sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL) != SQLITE_OK)
		return -2;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*appid = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (rc & 0xff) == SQLITE_NOTADB ? -1 : -2;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", -1,
			       &st, NULL) != SQLITE_OK)
		return (sqlite3_errcode(db) & 0xff) == SQLITE_NOTADB ? -1 : -2;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ntables = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return -2;
	if (*appid != 0 && *appid != DL_LOG_APPLICATION_ID)
		return -1;
	if (ntables == 0)
		return 0;
	for (size_t t = 0; t < sizeof(spec_cols) / sizeof(spec_cols[0]); t++) {
		int exists = 0, has = table_has(db, spec_cols[t][0], &spec_cols[t][1], &exists);

		if (has < 0)
			return has;
		/* runs and events must be there; the others, if there, must be ours */
		if (!has && (exists || t < 2))
			return -1;
	}
	return 1;
}

/* SQLite cannot open a WAL database's -shm file in a folder it may not write. */
static const char *cantopen_hint(sqlite3 *db)
{
	int rc = sqlite3_extended_errcode(db) & 0xff;

	return rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY ?
	       " (SQLite keeps -wal and -shm files beside the database: is its folder writable?)" : "";
}

int dl_log_is_dlsim(sqlite3 *db)
{
	int appid, kind = schema_kind(db, &appid);

	return kind < -1 ? -1 : kind;
}

int dl_log_file_uri(const char *path, const char *query, char *uri, size_t len)
{
	size_t n = 0;
	int k;

	/* "file:" then the path, %, ? and # escaped (an absolute path after an
	 * empty authority, so that "//x" is not read as a host) */
	k = snprintf(uri, len, "file:%s", path[0] == '/' ? "//" : "");
	if (k < 0 || (size_t)k >= len)
		return -ENAMETOOLONG;
	n = (size_t)k;
	for (const char *c = path; *c; c++) {
		k = strchr("%?#", *c) ? snprintf(uri + n, len - n, "%%%02X", (unsigned char)*c) :
					snprintf(uri + n, len - n, "%c", *c);
		if (k < 0 || (size_t)k >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)k;
	}
	k = snprintf(uri + n, len - n, "%s%s", query && *query ? "?" : "", query ? query : "");
	return k < 0 || (size_t)k >= len - n ? -ENAMETOOLONG : 0;
}

bool dl_log_wal_without_shm(const char *path)
{
	char wal[4200], shm[4200];
	struct stat sb;

	if ((size_t)snprintf(wal, sizeof(wal), "%s-wal", path) >= sizeof(wal) ||
	    (size_t)snprintf(shm, sizeof(shm), "%s-shm", path) >= sizeof(shm))
		return false;
	return stat(wal, &sb) == 0 && sb.st_size > 0 && access(shm, F_OK) != 0;
}

/*
 * A WAL database in a folder this user cannot write: SQLite cannot create its
 * -shm file, so even reading fails ("attempt to write a readonly database").
 * With no -wal file beside it nothing can be half-written either: open it
 * immutable (read-only, no -shm).  With a -wal and no -shm (a killed writer's
 * file copied without it): read-only, with the WAL's index in this process's
 * memory instead of a -shm file (exclusive locking mode, set before the first
 * read, SQLite's "WAL without shared memory"), through the unix-none VFS,
 * whose locks are no-ops: the exclusive lock it would take needs a file
 * opened for writing.  Nothing is written either way: no -shm, no
 * checkpoint (the connection is read-only), the -wal and the database left
 * as they are.  No other process can be writing: it would need a -shm, or a
 * folder it may write.  Returns the handle, or NULL.
 */
static sqlite3 *open_readonly_folder(const char *path)
{
	char wal[4200], uri[DL_LOG_URI_MAX];
	struct stat sb;
	sqlite3 *db = NULL;
	bool wal_only = dl_log_wal_without_shm(path);

	if ((size_t)snprintf(wal, sizeof(wal), "%s-wal", path) >= sizeof(wal) ||
	    (!wal_only && stat(wal, &sb) == 0 && sb.st_size > 0))
		return NULL;
	if (dl_log_file_uri(path, wal_only ? "vfs=unix-none" : "immutable=1", uri, sizeof(uri)))
		return NULL;
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK ||
	    (wal_only && (sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL) != SQLITE_OK ||
			  sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK))) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

/* dl_log_open_existing(); @writable: try read-write first, else read-only only. */
static int open_existing(const char *path, int writable, sqlite3 **out, char *err, size_t errlen)
{
	char uri[DL_LOG_URI_MAX];
	sqlite3 *db = NULL;
	struct stat sb;
	int rc = SQLITE_CANTOPEN, kind, appid;

	*out = NULL;
	if (stat(path, &sb) != 0) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -ENOENT;
	}
	if (!S_ISREG(sb.st_mode)) {
		seterr(err, errlen, "%s: not a regular file (expected a dlsim SQLite database)", path);
		return -EINVAL;
	}
	if (sb.st_size == 0) {
		seterr(err, errlen, "%s: empty file, not a dlsim database", path);
		return -EINVAL;
	}
	/* by URI (the path escaped), so that shards attach by URI too (dl_log_shard.c) */
	if (dl_log_file_uri(path, NULL, uri, sizeof(uri))) {
		seterr(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	if (writable)
		rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
				     NULL);
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		db = NULL;
		rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
				     NULL);
	}
	if (rc != SQLITE_OK) {
		seterr(err, errlen, "%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -EIO;
	}
	sqlite3_busy_timeout(db, DL_LOG_BUSY_MS);
	kind = schema_kind(db, &appid);
	if (kind == -2 && ((sqlite3_extended_errcode(db) & 0xff) == SQLITE_READONLY ||
			   (sqlite3_extended_errcode(db) & 0xff) == SQLITE_CANTOPEN)) {
		sqlite3 *ro = open_readonly_folder(path);

		if (ro) {
			sqlite3_close(db);
			db = ro;
			kind = schema_kind(db, &appid);
		}
	}
	if (kind == -2) {
		seterr(err, errlen, "%s: cannot read: %s%s", path, sqlite3_errmsg(db), cantopen_hint(db));
		sqlite3_close(db);
		return -EIO;
	}
	if (kind != 1) {
		seterr(err, errlen, "%s: not a dlsim database (expected the tables runs and events%s)",
		       path, kind < 0 ? "; it is not SQLite or holds other tables" : "; it has no tables");
		sqlite3_close(db);
		return -EINVAL;
	}
	*out = db;
	return 0;
}

int dl_log_open_existing(const char *path, sqlite3 **out, char *err, size_t errlen)
{
	return open_existing(path, 1, out, err, errlen);
}

int dl_log_open_reader(const char *path, sqlite3 **out, char *err, size_t errlen)
{
	return open_existing(path, 0, out, err, errlen);
}

static void *writer_main(void *arg);

/* Does runs have column @name (one the schema added later)? */
static int runs_has(sqlite3 *db, const char *name)
{
	const char *const col[] = { name, NULL };
	int exists;

	return table_has(db, "runs", col, &exists) == 1;
}

static int devices_has(sqlite3 *db, const char *name)
{
	const char *const col[] = { name, NULL };
	int exists;

	return table_has(db, "devices", col, &exists) == 1;
}

static int prepare_all(struct dl_log *l)
{
	static const char row[] = ",(?,?,?,?,?,?,?,?,?,?,?,?)";   /* DL_LOG_COLS */
	const char *one = stmt_sql[ST_EVENT];
	size_t n1 = strlen(one), nrow = sizeof(row) - 1;
	char *multi = malloc(n1 + (DL_LOG_ROWS - 1) * nrow + 1);
	int rc = 0;

	if (!multi)
		return -1;
	/* the one-row statement, then DL_LOG_ROWS - 1 more value tuples */
	memcpy(multi, one, n1);
	for (int r = 1; r < DL_LOG_ROWS; r++)
		memcpy(multi + n1 + (size_t)(r - 1) * nrow, row, nrow);
	multi[n1 + (DL_LOG_ROWS - 1) * nrow] = '\0';
	for (int i = 0; i < ST_COUNT && !rc; i++) {
		if (sqlite3_prepare_v3(l->db, i == ST_EVENTS_N ? multi : stmt_sql[i], -1,
				       SQLITE_PREPARE_PERSISTENT, &l->st[i], NULL) != SQLITE_OK)
			rc = -1;
	}
	free(multi);
	return rc;
}

/*
 * PRAGMA journal_mode = WAL needs the database to itself; while a second
 * writer opens it SQLite may answer SQLITE_BUSY without calling the busy
 * handler, so retry here for up to @busy_ms.
 */
static int set_wal(sqlite3 *db, int busy_ms, char **emsg)
{
	int64_t waited = 0;
	int rc;

	for (;;) {
		rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", NULL,
				  NULL, emsg);
		if ((rc & 0xff) != SQLITE_BUSY || waited >= busy_ms)
			return rc;
		sqlite3_free(*emsg);
		*emsg = NULL;
		sqlite3_sleep(10);
		waited += 10;
	}
}

int dl_log_open(const char *path, struct dl_log **out, char *err, size_t errlen)
{
	return dl_log_open_wait(path, DL_LOG_BUSY_MS, out, err, errlen);
}

static int log_open(const char *path, int busy_ms, struct dl_log **out, char *err,
		    size_t errlen);

int dl_log_open_wait(const char *path, int busy_ms, struct dl_log **out, char *err, size_t errlen)
{
	return log_open(path, busy_ms, out, err, errlen);
}

/*
 * Stats @path into @sb, creating the file first if it is missing.  Returns
 * 1 if it exists, 0 if not, or -EACCES; *created is set when this call made it.
 */
static int create_file(const char *path, struct stat *sb, int *created, char *err, size_t errlen)
{
	int fd;

	if (stat(path, sb) == 0)
		return 1;
	/*
	 * Create it ourselves, exclusively: of two writers starting on a new
	 * database, one creates the file and the other finds it, and only
	 * the one that created it may remove it again on failure.
	 */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd >= 0) {
		*created = 1;
		close(fd);
	} else if (errno != EEXIST) {
		seterr(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		return -EACCES;
	}
	return stat(path, sb) == 0;
}

/*
 * Opens the database file at @path for writing, creating it if missing.
 * *created: this call created the file (remove it again on failure);
 * *has_data: it held data before (check that it is dlsim's).
 */
static int open_file(const char *path, sqlite3 **out, int *created, int *has_data, char *err,
		     size_t errlen)
{
	struct stat sb = { 0 };
	char uri[DL_LOG_URI_MAX];
	sqlite3 *db = NULL;
	int existed = create_file(path, &sb, created, err, errlen);
	int rc;

	if (existed < 0)
		return existed;
	if (existed && !S_ISREG(sb.st_mode)) {
		seterr(err, errlen, "%s: not a regular file (expected a dlsim SQLite database)", path);
		return -EINVAL;
	}
	if (existed && access(path, W_OK) != 0) {
		seterr(err, errlen, "%s: not writable: %s", path, strerror(errno));
		rc = -EACCES;
		goto fail;
	}
	/* by URI, the path escaped: an SQLite built with URIs on (Debian's) would
	 * read a file named "file:x.db?mode=ro" as a URI and its options */
	if (dl_log_file_uri(path, NULL, uri, sizeof(uri))) {
		seterr(err, errlen, "%s: path too long", path);
		rc = -ENAMETOOLONG;
		goto fail;
	}
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI |
			     (existed ? 0 : SQLITE_OPEN_CREATE), NULL);
	if (rc != SQLITE_OK) {
		seterr(err, errlen, "%s: cannot open for writing: %s", path,
		       db ? sqlite3_errmsg(db) : "out of memory");
		rc = -EACCES;
		goto fail;
	}
	if (sqlite3_db_readonly(db, "main") == 1) {
		seterr(err, errlen, "%s: not writable", path);
		rc = -EACCES;
		goto fail;
	}
	*has_data = !*created && sb.st_size > 0;
	*out = db;
	return 0;
fail:
	sqlite3_close(db);
	if (*created)
		unlink(path);
	return rc;
}

/*
 * Refuses a database that is not dlsim's before anything is written to it:
 * SPEC.md promises foreign files stay as they are.  Returns 0, -EIO or -EINVAL.
 */
static int check_dlsim(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	int appid, kind;

	/* one read transaction: the application_id and the tables of one
	 * snapshot, never the id before and the tables after another
	 * writer's schema transaction committed */
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	kind = schema_kind(db, &appid);
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);

	if (kind == -2) {
		seterr(err, errlen, "%s: cannot read: %s%s; left untouched", path,
		       sqlite3_errmsg(db), cantopen_hint(db));
		return -EIO;
	}
	if (kind >= 0 && !(kind == 1 && appid != DL_LOG_APPLICATION_ID))
		return 0;
	seterr(err, errlen, "%s: not a dlsim database (%s); left untouched", path,
	       kind < 0 && appid && appid != DL_LOG_APPLICATION_ID ?
	       "its application_id marks it as another program's" :
	       kind < 0 ? "it is not SQLite, or holds tables other than dlsim's with the"
	       " columns of its schema" :
	       "its tables look like dlsim's but it lacks dlsim's application_id;"
	       " dlsim appends only to databases it created");
	return -EINVAL;
}

/*
 * Sets the journal mode and creates or extends the schema; returns an
 * SQLite result code, *emsg its message (sqlite3_free() it).
 */
static int write_schema(sqlite3 *db, int busy_ms, char **emsg)
{
	char sql[64];
	int rc, fresh = 0;

	/*
	 * A new database: pages of DL_LOG_PAGE_SIZE (a no-op on one that has
	 * pages already), and the indexes made with the tables, so that they
	 * grow as the rows go in.  A run's rows are appended in (run_id, seq)
	 * and (run_id, dev_id) order: keeping the indexes as they come costs
	 * less than building them at the run's end, which sorts every row
	 * (2.7 of a 200k-device run's 10 CPU-seconds), and a run cut short
	 * keeps them too.  An older database gets them at a run's end
	 * (finish_run()), as before.
	 */
	rc = sqlite3_exec(db, "PRAGMA page_size = " DL_LOG_PAGE_SIZE, NULL, NULL, emsg);
	if (rc == SQLITE_OK)
		rc = set_wal(db, busy_ms, emsg);
	/*
	 * The schema in one write transaction: a second writer starting at the
	 * same time waits (busy timeout), then sees all of it or none of it,
	 * never tables without the application_id that says they are dlsim's.
	 */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, emsg);
	if (rc == SQLITE_OK) {
		int exists = 0;

		fresh = table_has(db, "events", spec_cols[1] + 1, &exists) >= 0 && !exists;
		rc = sqlite3_exec(db, schema_sql, NULL, NULL, emsg);
	}
	if (rc == SQLITE_OK && fresh)
		rc = sqlite3_exec(db, index_sql, NULL, NULL, emsg);
	/* additive, for databases written before these columns (a new one has
	 * them from CREATE TABLE)
	 * runs.log_error: why a run's log is incomplete (NULL: it is not) */
	if (rc == SQLITE_OK && !runs_has(db, "log_error"))
		rc = sqlite3_exec(db, "ALTER TABLE runs ADD COLUMN log_error TEXT", NULL, NULL, emsg);
	/* additive: runs.kernel, the kernel whose rules the run followed ("6.12", "7.3") */
	if (rc == SQLITE_OK && !runs_has(db, "kernel"))
		rc = sqlite3_exec(db, "ALTER TABLE runs ADD COLUMN kernel TEXT", NULL, NULL, emsg);
	/* additive: runs.probe_context, how the probe op ran ("boot", "module"; NULL: not said) */
	if (rc == SQLITE_OK && !runs_has(db, "probe_context"))
		rc = sqlite3_exec(db, "ALTER TABLE runs ADD COLUMN probe_context TEXT", NULL, NULL,
				  emsg);
	/* additive: devices.driver, the device's driver as its scenario names it (NULL: unknown) */
	if (rc == SQLITE_OK && !devices_has(db, "driver"))
		rc = sqlite3_exec(db, "ALTER TABLE devices ADD COLUMN driver TEXT", NULL, NULL, emsg);
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", DL_LOG_APPLICATION_ID);
		rc = sqlite3_exec(db, sql, NULL, NULL, emsg);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, emsg);
	return rc;
}

/*
 * Reports write_schema()'s failure @rc and closes @db, which rolls back an
 * open transaction.  Returns -EIO.
 */
static int schema_failed(sqlite3 *db, const char *path, int rc, char *emsg, int busy_ms,
			 int created, char *err, size_t errlen)
{
	int ec = sqlite3_errcode(db);
	int busy = rc == SQLITE_BUSY || (ec & 0xff) == SQLITE_BUSY || (ec & 0xff) == SQLITE_LOCKED;

	if (rc == SQLITE_BUSY || ec == SQLITE_BUSY)
		seterr(err, errlen, "%s: locked by another writer; gave up after waiting %d ms"
		       " (--busy-timeout MS)", path, busy_ms);
	else
		seterr(err, errlen, "%s: %scannot create the schema: %s", path,
		       (ec & 0xff) == SQLITE_FULL || rc == SQLITE_FULL ? "disk full: " : "",
		       emsg ? emsg : sqlite3_errmsg(db));
	sqlite3_free(emsg);
	sqlite3_close(db);
	/* a file another writer holds is that writer's, even if we created it:
	 * unlinking it would lose its whole run (two `dlsim run` on a new
	 * database at once did) */
	if (created && !busy)
		unlink(path);
	return -EIO;
}

/* Wraps the open @db in a log: its ring, statements and writer thread. */
static int log_start(sqlite3 *db, const char *path, int busy_ms, struct dl_log **out, char *err,
		     size_t errlen)
{
	struct dl_log *l = calloc(1, sizeof(*l));

	if (!l || !(l->ring = malloc(DL_LOG_QCAP * sizeof(*l->ring))) ||
	    !(l->batch = malloc(DL_LOG_BATCH * sizeof(*l->batch)))) {
		if (l) {
			free(l->ring);
			free(l);
		}
		sqlite3_close(db);
		seterr(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	l->db = db;
	l->path = strdup(path);
	l->busy_ms = busy_ms;
	if (!l->path || prepare_all(l) != 0) {
		seterr(err, errlen, "%s: cannot prepare statements: %s", path, sqlite3_errmsg(db));
		dl_log_close(l);
		return -EIO;
	}
	pthread_mutex_init(&l->db_mu, NULL);
	pthread_mutex_init(&l->q_mu, NULL);
	pthread_cond_init(&l->q_nonempty, NULL);
	pthread_cond_init(&l->q_notfull, NULL);
	pthread_cond_init(&l->q_done, NULL);
	if (pthread_create(&l->writer, NULL, writer_main, l) != 0) {
		seterr(err, errlen, "cannot start the log writer thread");
		dl_log_close(l);
		return -EAGAIN;
	}
	l->writer_started = 1;
	*out = l;
	return 0;
}

/*
 * Opens (or creates) the database at @path for writing: the file, the check
 * that it is dlsim's, the busy timeout, the journal and the schema.  Every
 * writer goes through here (the event log, the advice table, a twin's mark).
 * 0 with *@out open, or negative with @err.
 */
static int db_open_checked(const char *path, int busy_ms, sqlite3 **out, char *err,
			   size_t errlen)
{
	sqlite3 *db = NULL;
	char *emsg = NULL;
	int created = 0, has_data = 0, rc;

	*out = NULL;
	rc = open_file(path, &db, &created, &has_data, err, errlen);
	if (rc)
		return rc;
	if (busy_ms < 0)
		busy_ms = 0;
	sqlite3_busy_timeout(db, busy_ms);
	if (has_data && (rc = check_dlsim(db, path, err, errlen)) != 0) {
		sqlite3_close(db);
		return rc;
	}
	rc = write_schema(db, busy_ms, &emsg);
	if (rc != SQLITE_OK)
		return schema_failed(db, path, rc, emsg, busy_ms, created, err, errlen);
	*out = db;
	return 0;
}

/* Opens (or creates) the log at @path, then starts its writer. */
static int log_open(const char *path, int busy_ms, struct dl_log **out, char *err,
		    size_t errlen)
{
	sqlite3 *db;
	int rc;

	*out = NULL;
	if (busy_ms < 0)
		busy_ms = 0;
	rc = db_open_checked(path, busy_ms, &db, err, errlen);
	if (rc)
		return rc;
	return log_start(db, path, busy_ms, out, err, errlen);
}

int dl_log_open_db(const char *path, int busy_ms, sqlite3 **db, char *err, size_t errlen)
{
	return db_open_checked(path, busy_ms, db, err, errlen);
}

static void bind_id(sqlite3_stmt *st, int i, uint32_t v)
{
	if (v == DL_NONE)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

/* CLEAR: forget the bindings (statements that leave some unbound).  SQLITE_OK or the failure. */
static int step_reset_ex(struct dl_log *l, sqlite3_stmt *st, const char *what, int clear)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE)
		attempt_fail(l, what, sqlite3_extended_errcode(l->db));
	sqlite3_reset(st);
	if (clear)
		sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? SQLITE_OK : (rc == SQLITE_ROW ? SQLITE_ERROR : rc);
}

static int step_reset(struct dl_log *l, sqlite3_stmt *st, const char *what)
{
	return step_reset_ex(l, st, what, 1);
}

static const char *event_phase(const struct dl_event *ev)
{
	switch (ev->kind) {
	case DL_EV_SUSPEND_START: case DL_EV_SUSPEND_END:
	case DL_EV_RESUME_START: case DL_EV_RESUME_END:
	case DL_EV_WORK_BLOCK: case DL_EV_WORK_WAKE:
		return dl_phase_name(ev->phase);
	case DL_EV_LINK_STATE:
		return dl_link_state_name(ev->phase);
	case DL_EV_LINK_REFUSED:
		return dl_refusal_name(ev->phase);
	default:
		return NULL;
	}
}

/* Binds one events row at parameter offset BASE (0 for the first row). */
static void bind_event(struct dl_log *l, sqlite3_stmt *st, int base, const struct dl_event *ev)
{
	const char *ph = event_phase(ev);

	sqlite3_bind_int64(st, base + 1, l->run_id);
	sqlite3_bind_int64(st, base + 2, l->seq++);
	sqlite3_bind_int64(st, base + 3, ev->t_ns);
	bind_id(st, base + 4, ev->dev);
	bind_id(st, base + 5, ev->link);
	sqlite3_bind_text(st, base + 6, dl_ev_kind_name(ev->kind), -1, SQLITE_STATIC);
	if (ph)
		sqlite3_bind_text(st, base + 7, ph, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, base + 7);
	sqlite3_bind_int(st, base + 8, ev->worker);
	sqlite3_bind_int(st, base + 9, ev->err);
	bind_id(st, base + 10, ev->aux);
	sqlite3_bind_int64(st, base + 11, ev->flags);
	sqlite3_bind_int(st, base + 12, ev->phase);
}

/* Inserts the pending events: all DL_LOG_ROWS at once, or one by one. */
static int flush_rows(struct dl_log *l, const struct qitem *batch)
{
	sqlite3_stmt *st;
	int rc = SQLITE_OK;

	if (l->npend == DL_LOG_ROWS) {
		st = l->st[ST_EVENTS_N];
		for (uint32_t i = 0; i < l->npend; i++)
			bind_event(l, st, (int)i * DL_LOG_COLS, &batch[l->pend[i]].ev);
		rc = step_reset_ex(l, st, "insert into events", 0);     /* every column is bound */
	} else {
		st = l->st[ST_EVENT];
		for (uint32_t i = 0; i < l->npend && rc == SQLITE_OK; i++) {
			bind_event(l, st, 0, &batch[l->pend[i]].ev);
			rc = step_reset_ex(l, st, "insert into events", 0);
		}
	}
	l->npend = 0;
	return rc;
}

static int write_item(struct dl_log *l, struct qitem *batch, uint32_t idx)
{
	struct qitem *q = &batch[idx];
	const struct dl_event *ev = &q->ev;
	sqlite3_stmt *st;
	char flags[256];
	int64_t seq;
	int rc = SQLITE_OK;

	if (ev->kind == DL_LOG_DEVICE) {
		st = l->st[ST_DEVICE];
		sqlite3_bind_int64(st, 1, l->run_id);
		sqlite3_bind_int64(st, 2, ev->dev);
		if (q->name)
			sqlite3_bind_text(st, 3, q->name, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 3);
		bind_id(st, 4, ev->aux);
		sqlite3_bind_int(st, 5, ev->flags & 1 ? 1 : 0);
		/* flag 2: the name is followed by its driver's, after its NUL */
		if (q->name && ev->flags & 2)
			sqlite3_bind_text(st, 6, q->name + strlen(q->name) + 1, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 6);
		return step_reset(l, st, "insert into devices");
	}
	if (ev->kind == DL_EV_REGISTER && l->reg && ev->dev < l->reg_n)
		l->reg[ev->dev / 8] |= (uint8_t)(1u << (ev->dev % 8));
	seq = l->seq + l->npend;        /* the row's seq once the pending rows are in */
	l->pend[l->npend++] = idx;
	if (l->npend == DL_LOG_ROWS)
		rc = flush_rows(l, batch);
	if (rc != SQLITE_OK)
		return rc;

	if (ev->kind == DL_EV_LINK_ADD && ev->link != DL_NONE) {
		st = l->st[ST_LINK];
		dl_flags_format(ev->flags, flags, sizeof(flags));
		sqlite3_bind_int64(st, 1, l->run_id);
		sqlite3_bind_int64(st, 2, ev->link);
		bind_id(st, 3, ev->dev);
		bind_id(st, 4, ev->aux);
		sqlite3_bind_text(st, 5, flags, -1, SQLITE_TRANSIENT);
		rc = step_reset(l, st, "insert into links");
	} else if (ev->kind == DL_EV_LINK_REFUSED) {
		st = l->st[ST_REFUSED];
		dl_flags_format(ev->flags, flags, sizeof(flags));
		sqlite3_bind_int64(st, 1, l->run_id);
		sqlite3_bind_int64(st, 2, seq);
		bind_id(st, 3, ev->dev);
		bind_id(st, 4, ev->aux);
		sqlite3_bind_text(st, 5, flags, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 6, dl_refusal_name(ev->phase), -1, SQLITE_STATIC);
		rc = step_reset(l, st, "insert into refused");
	}
	return rc;
}

/* One attempt at a batch in one transaction: SQLITE_OK once it is committed,
 * else the first failure (the transaction is rolled back). */
static int write_batch_once(struct dl_log *l, struct qitem *b, size_t n)
{
	int rc = sqlite3_exec(l->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return attempt_fail(l, "begin", sqlite3_extended_errcode(l->db));
	for (size_t i = 0; i < n && rc == SQLITE_OK; i++)
		rc = write_item(l, b, (uint32_t)i);
	if (rc == SQLITE_OK)
		rc = flush_rows(l, b);
	if (rc == SQLITE_OK && sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = attempt_fail(l, "commit", sqlite3_extended_errcode(l->db));
	if (rc != SQLITE_OK && !sqlite3_get_autocommit(l->db))
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	l->npend = 0;
	return rc;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * A batch is committed whole or not at all.  A contended transaction (another
 * writer holds the lock) is retried until the busy timeout has passed; any
 * other failure, or the timeout, fails the run: later batches are dropped
 * (and counted in lost) so that nothing after a hole is stored.
 */
static void write_batch(struct dl_log *l, struct qitem *b, size_t n)
{
	int64_t seq0, deadline = mono_ms() + l->busy_ms;
	int stored = 0;

	pthread_mutex_lock(&l->db_mu);
	seq0 = l->seq;
	while (!l->failed) {
		int rc = write_batch_once(l, b, n);

		if (rc == SQLITE_OK) {
			stored = 1;
			break;
		}
		l->seq = seq0;          /* nothing of the batch is in */
		if (is_busy(rc) && mono_ms() < deadline) {
			struct timespec ts = { 0, 5 * 1000 * 1000 };

			nanosleep(&ts, NULL);
			continue;
		}
		log_fail_rc(l, rc);
	}
	if (!stored)
		l->lost += n;
	for (size_t i = 0; i < n; i++) {
		free(b[i].name);
		b[i].name = NULL;
	}
	pthread_mutex_unlock(&l->db_mu);
}

static void *writer_main(void *arg)
{
	struct dl_log *l = arg;

	pthread_mutex_lock(&l->q_mu);
	for (;;) {
		size_t n;

		while (l->count == 0 && !l->stop)
			pthread_cond_wait(&l->q_nonempty, &l->q_mu);
		if (l->count == 0 && l->stop)
			break;
		if (l->count < DL_LOG_QCAP / 8 && !l->stop && !l->flush) {
			/* let a batch build up, briefly */
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 20 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&l->q_nonempty, &l->q_mu, &ts);
		}
		n = l->count < DL_LOG_BATCH ? l->count : DL_LOG_BATCH;
		for (size_t i = 0; i < n; i++)
			l->batch[i] = l->ring[(l->head + i) % DL_LOG_QCAP];
		l->head = (l->head + n) % DL_LOG_QCAP;
		l->count -= n;
		pthread_cond_broadcast(&l->q_notfull);
		pthread_mutex_unlock(&l->q_mu);
		write_batch(l, l->batch, n);
		pthread_mutex_lock(&l->q_mu);
		l->written += n;
		pthread_cond_broadcast(&l->q_done);
	}
	pthread_mutex_unlock(&l->q_mu);
	return NULL;
}

static void push(struct dl_log *l, const struct qitem *items, size_t n)
{
	pthread_mutex_lock(&l->q_mu);
	for (size_t i = 0; i < n; i++) {
		while (l->count == DL_LOG_QCAP) {
			pthread_cond_signal(&l->q_nonempty);
			pthread_cond_wait(&l->q_notfull, &l->q_mu);
		}
		l->ring[(l->head + l->count) % DL_LOG_QCAP] = items[i];
		l->count++;
		l->pushed++;
	}
	if (l->count >= DL_LOG_QCAP / 8)
		pthread_cond_signal(&l->q_nonempty);
	else if (n)
		pthread_cond_signal(&l->q_nonempty);
	pthread_mutex_unlock(&l->q_mu);
}

static void flush(struct dl_log *l)
{
	pthread_mutex_lock(&l->q_mu);
	uint64_t target = l->pushed;

	l->flush++;
	pthread_cond_signal(&l->q_nonempty);
	while (l->written < target)
		pthread_cond_wait(&l->q_done, &l->q_mu);
	l->flush--;
	pthread_mutex_unlock(&l->q_mu);
}

void dl_log_events(struct dl_log *l, const struct dl_event *ev, size_t n)
{
	struct qitem tmp[256];

	if (!l)
		return;
	while (n) {
		size_t k = n < 256 ? n : 256;

		for (size_t i = 0; i < k; i++) {
			tmp[i].ev = ev[i];
			tmp[i].name = NULL;
		}
		push(l, tmp, k);
		ev += k;
		n -= k;
	}
}

int dl_log_device(struct dl_log *l, uint32_t dev_id, const char *name, uint32_t parent_id, int async)
{
	return dl_log_device_driver(l, dev_id, name, NULL, parent_id, async);
}

int dl_log_device_driver(struct dl_log *l, uint32_t dev_id, const char *name, const char *driver,
			 uint32_t parent_id, int async)
{
	struct qitem q;
	size_t n, nd;

	if (!l)
		return 0;
	memset(&q, 0, sizeof(q));
	q.ev.kind = DL_LOG_DEVICE;
	q.ev.dev = dev_id;
	q.ev.aux = parent_id;
	q.ev.flags = async ? 1 : 0;
	if (name) {
		/* one allocation: "name\0driver\0", flag 2 says the driver is there */
		n = strlen(name);
		nd = driver && *driver ? strlen(driver) : 0;
		q.name = malloc(n + 1 + (nd ? nd + 1 : 0));
		if (!q.name)
			return -ENOMEM;
		memcpy(q.name, name, n + 1);
		if (nd) {
			memcpy(q.name + n + 1, driver, nd + 1);
			q.ev.flags |= 2;
		}
	}
	push(l, &q, 1);
	return 0;
}

int dl_log_run_begin(struct dl_log *l, const struct dl_run_info *ri, int64_t *run_id)
{
	sqlite3_stmt *st = NULL;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	flush(l);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	pthread_mutex_lock(&l->db_mu);
	rc = sqlite3_prepare_v2(l->db,
		"INSERT INTO runs(scenario, order_name, mode, seed, workers, devices, links, status,"
		" makespan_ns, started_at, version, kernel, run_id, probe_context)"
		" VALUES(?,?,?,?,?,?,?,'running',NULL,?,?,?,?,?)",
		-1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, ri->scenario, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, ri->order, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, ri->mode, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, (int64_t)ri->seed);
		sqlite3_bind_int64(st, 5, ri->workers);
		sqlite3_bind_int64(st, 6, ri->devices);
		sqlite3_bind_int64(st, 7, ri->links);
		sqlite3_bind_text(st, 8, when, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 9, ri->version ? ri->version : DLSIM_VERSION, -1, SQLITE_TRANSIENT);
		if (ri->kernel)
			sqlite3_bind_text(st, 10, ri->kernel, -1, SQLITE_TRANSIENT);
		if (ri->run_id > 0)
			sqlite3_bind_int64(st, 11, ri->run_id);
		if (ri->probe_context)
			sqlite3_bind_text(st, 12, ri->probe_context, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	}
	l->failed = 0;
	if (rc != SQLITE_OK)
		log_fail(l, "insert into runs");
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		pthread_mutex_unlock(&l->db_mu);
		return dl_log_failure(l);
	}
	l->run_id = sqlite3_last_insert_rowid(l->db);
	l->run_open = 1;
	free(l->reg);
	l->reg_n = ri->devices;
	l->reg = calloc((size_t)ri->devices / 8 + 1, 1);        /* NULL: no such metric */
	l->seq = 0;
	l->lost = 0;
	l->recorded = 0;
	pthread_mutex_unlock(&l->db_mu);
	if (run_id)
		*run_id = l->run_id;
	return 0;
}

int dl_log_failure(const struct dl_log *l)
{
	if (!l || !l->failed)
		return 0;
	return (l->errcode & 0xff) == SQLITE_FULL ? -ENOSPC : is_busy(l->errcode) ? -EBUSY : -EIO;
}

const char *dl_log_error(const struct dl_log *l)
{
	return l && l->failed ? l->errmsg : NULL;
}

int dl_log_run_recorded(const struct dl_log *l)
{
	return l && l->recorded;
}

uint64_t dl_log_lost(const struct dl_log *l)
{
	return l ? l->lost : 0;
}

void dl_log_drain(struct dl_log *l)
{
	if (l)
		flush(l);
}

uint64_t dl_log_event_count(struct dl_log *l)
{
	uint64_t n;

	flush(l);
	pthread_mutex_lock(&l->db_mu);
	n = (uint64_t)l->seq;
	pthread_mutex_unlock(&l->db_mu);
	return n;
}

/* SQLite VM steps between two looks at the stop flag while indexes are built. */
#define INDEX_POLL_STEPS 100000

/*
 * Progress handler of the index build: nonzero (abandon it, rolled back)
 * once Ctrl-C set the stop flag.  The run is recorded by then; the next run
 * that finishes builds the indexes.
 */
static int index_stop(void *arg)
{
	const struct dl_log *l = arg;

	dl_test_hook("index-build");   /* tests: Ctrl-C inside the build, at once */
	return atomic_load(l->ctrl_c) != 0;
}

void dl_log_set_stop(struct dl_log *l, const atomic_int *stop)
{
	l->ctrl_c = stop;
}

void dl_log_set_twin_of(struct dl_log *l, int64_t of)
{
	l->twin_of = of;
}

/*
 * Inside the run's last transaction: runs.twin_of (an additive column,
 * added if missing) and the metric twin_of of a twin's run.  SQLITE_OK or
 * the failing code.
 */
static int mark_twin(struct dl_log *l)
{
	sqlite3_stmt *st;
	bool have;
	int rc;

	if (l->twin_of <= 0)
		return SQLITE_OK;
	rc = sqlite3_prepare_v2(l->db, "SELECT 1 FROM pragma_table_info('runs') WHERE name = 'twin_of'",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return attempt_fail(l, "prepare twin_of", sqlite3_extended_errcode(l->db));
	have = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (!have && sqlite3_exec(l->db, "ALTER TABLE runs ADD COLUMN twin_of INTEGER", NULL, NULL,
				  NULL) != SQLITE_OK)
		return attempt_fail(l, "add runs.twin_of", sqlite3_extended_errcode(l->db));
	if (sqlite3_prepare_v2(l->db, "UPDATE runs SET twin_of = ?1 WHERE run_id = ?2", -1, &st,
			       NULL) != SQLITE_OK)
		return attempt_fail(l, "prepare update twin_of", sqlite3_extended_errcode(l->db));
	sqlite3_bind_int64(st, 1, l->twin_of);
	sqlite3_bind_int64(st, 2, l->run_id);
	rc = step_reset(l, st, "update runs.twin_of");
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return rc;
	if (sqlite3_prepare_v2(l->db, "INSERT INTO metrics(run_id, name, value) VALUES(?1, 'twin_of', ?2)",
			       -1, &st, NULL) != SQLITE_OK)
		return attempt_fail(l, "prepare metric twin_of", sqlite3_extended_errcode(l->db));
	sqlite3_bind_int64(st, 1, l->run_id);
	sqlite3_bind_int64(st, 2, l->twin_of);
	rc = step_reset(l, st, "insert metric twin_of");
	sqlite3_finalize(st);
	return rc;
}

/* One attempt at the run's last transaction: metrics and the runs row. */
static int finish_once(struct dl_log *l, const char *status, int64_t makespan_ns,
		       const struct dl_metric *m, size_t nm, const char *when)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_exec(l->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return attempt_fail(l, "begin run end", sqlite3_extended_errcode(l->db));
	if (nm && sqlite3_prepare_v2(l->db, "INSERT INTO metrics(run_id, name, value) VALUES(?,?,?)",
				     -1, &st, NULL) != SQLITE_OK)
		rc = attempt_fail(l, "prepare metrics", sqlite3_extended_errcode(l->db));
	for (size_t i = 0; st && i < nm && rc == SQLITE_OK; i++) {
		sqlite3_bind_int64(st, 1, l->run_id);
		sqlite3_bind_text(st, 2, m[i].name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(st, 3, m[i].value);
		rc = step_reset(l, st, "insert into metrics");
	}
	if (st && rc == SQLITE_OK && l->reg) {
		uint64_t never = 0;

		for (uint32_t d = 0; d < l->reg_n; d++)
			never += !(l->reg[d / 8] & (1u << (d % 8)));
		sqlite3_bind_int64(st, 1, l->run_id);
		sqlite3_bind_text(st, 2, "devices_unregistered", -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 3, (double)never);
		rc = step_reset(l, st, "insert into metrics");
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc == SQLITE_OK &&
	    sqlite3_prepare_v2(l->db, "UPDATE runs SET status = ?, makespan_ns = ?, finished_at = ?,"
			       " events = ?, log_error = ? WHERE run_id = ?", -1, &st, NULL) != SQLITE_OK)
		rc = attempt_fail(l, "prepare update runs", sqlite3_extended_errcode(l->db));
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, status, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, makespan_ns);
		sqlite3_bind_text(st, 3, when, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, l->seq);      /* committed rows only */
		if (l->failed)
			sqlite3_bind_text(st, 5, l->errmsg, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 5);
		sqlite3_bind_int64(st, 6, l->run_id);
		rc = step_reset(l, st, "update runs");
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = mark_twin(l);
	if (rc == SQLITE_OK && sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = attempt_fail(l, "commit run end", sqlite3_extended_errcode(l->db));
	if (rc != SQLITE_OK && !sqlite3_get_autocommit(l->db))
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/*
 * Metrics and the runs row in one transaction, retried while contended.  A
 * run whose events were not all stored ends 'failed' (with the count of those
 * that were); if even that cannot be stored the row stays 'running', which
 * check reports as incomplete.
 */
static int finish_run(struct dl_log *l, const char *status, int64_t makespan_ns,
		      const struct dl_metric *m, size_t nm)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int64_t deadline = mono_ms() + l->busy_ms;
	int rc;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	pthread_mutex_lock(&l->db_mu);
	if (l->failed)
		status = "failed";
	while ((rc = finish_once(l, status ? status : "ok", makespan_ns, m, nm, when)) != SQLITE_OK &&
	       is_busy(rc) && mono_ms() < deadline) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (rc != SQLITE_OK)
		log_fail_rc(l, rc);
	l->recorded = rc == SQLITE_OK;
	/*
	 * Indexes only speed up reading; a failure here loses nothing.  Not
	 * after Ctrl-C: on a new database of a large run they take minutes,
	 * and the next run that finishes builds them.
	 */
	if (l->ctrl_c)
		sqlite3_progress_handler(l->db, INDEX_POLL_STEPS, index_stop, l);
	if (rc == SQLITE_OK && strcmp(status ? status : "ok", "interrupted") != 0 &&
	    !(l->ctrl_c && atomic_load(l->ctrl_c)) &&
	    sqlite3_exec(l->db, index_sql, NULL, NULL, NULL) != SQLITE_OK &&
	    !sqlite3_get_autocommit(l->db))
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_progress_handler(l->db, 0, NULL, NULL);
	l->run_open = 0;
	rc = l->failed;
	pthread_mutex_unlock(&l->db_mu);
	return rc ? dl_log_failure(l) : 0;
}

int dl_log_run_end(struct dl_log *l, const char *status, int64_t makespan_ns,
		   const struct dl_metric *m, size_t nm)
{
	if (!l || !l->run_open)
		return -EINVAL;
	flush(l);
	return finish_run(l, status, makespan_ns, m, nm);
}

void dl_log_close(struct dl_log *l)
{
	if (!l)
		return;
	if (l->writer_started) {
		if (l->run_open) {
			flush(l);
			finish_run(l, "interrupted", 0, NULL, 0);
		}
		pthread_mutex_lock(&l->q_mu);
		l->stop = 1;
		pthread_cond_signal(&l->q_nonempty);
		pthread_mutex_unlock(&l->q_mu);
		pthread_join(l->writer, NULL);
		pthread_mutex_destroy(&l->db_mu);
		pthread_mutex_destroy(&l->q_mu);
		pthread_cond_destroy(&l->q_nonempty);
		pthread_cond_destroy(&l->q_notfull);
		pthread_cond_destroy(&l->q_done);
	}
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(l->st[i]);
	sqlite3_close(l->db);
	free(l->path);
	free(l->reg);
	free(l->ring);
	free(l->batch);
	free(l);
}
