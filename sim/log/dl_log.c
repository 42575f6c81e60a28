/*
 * dl_log.c - SQLite event log: schema, run rows and the writer thread.
 *
 * Producers copy records into a bounded ring (mutex + condvars); one writer
 * thread drains it in transactions of up to DL_LOG_BATCH rows with prepared
 * statements.  All other statements run on the caller's thread while the
 * writer is idle (db_mu serializes use of the connection).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sim/core/dl_core.h"
#include "sim/log/dl_log.h"

#define DL_LOG_QCAP   (1u << 16)
#define DL_LOG_BATCH  (1u << 16)
#define DL_LOG_DEVICE 0xFFFFu   /* queue item kind: a devices row */

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
	int64_t seq;
	int failed;
	char errmsg[256];
};

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS runs(run_id INTEGER PRIMARY KEY, scenario TEXT,"
	" order_name TEXT, mode TEXT, seed INTEGER, workers INTEGER, devices INTEGER,"
	" links INTEGER, status TEXT, makespan_ns INTEGER, started_at TEXT, version TEXT,"
	" finished_at TEXT, events INTEGER);"
	"CREATE TABLE IF NOT EXISTS devices(run_id INTEGER, dev_id INTEGER, name TEXT,"
	" parent_id INTEGER, async INTEGER);"
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
	[ST_DEVICE] = "INSERT INTO devices(run_id, dev_id, name, parent_id, async) VALUES(?,?,?,?,?)",
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

static void log_fail(struct dl_log *l, const char *what)
{
	if (!l->failed)
		snprintf(l->errmsg, sizeof(l->errmsg), "%s: %s", what, sqlite3_errmsg(l->db));
	l->failed = 1;
}

int dl_log_is_dlsim(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int appid = 0, ntables = 0, have_runs = 0, have_events = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		appid = sqlite3_column_int(st, 0);
	else {
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1,
			       &st, NULL) != SQLITE_OK)
		return -1;
	for (;;) {
		int rc = sqlite3_step(st);
		const char *name;

		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			sqlite3_finalize(st);
			return -1;
		}
		name = (const char *)sqlite3_column_text(st, 0);
		ntables++;
		if (name && !strcmp(name, "runs"))
			have_runs = 1;
		if (name && !strcmp(name, "events"))
			have_events = 1;
	}
	sqlite3_finalize(st);
	if (appid == DL_LOG_APPLICATION_ID)
		return 1;
	if (appid == 0 && ntables == 0)
		return 0;
	if (appid == 0 && have_runs && have_events)
		return 1;
	return -1;
}

int dl_log_open_existing(const char *path, sqlite3 **out, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	struct stat sb;
	int rc, kind;

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
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		db = NULL;
		rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	}
	if (rc != SQLITE_OK) {
		seterr(err, errlen, "%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -EIO;
	}
	sqlite3_busy_timeout(db, DL_LOG_BUSY_MS);
	kind = dl_log_is_dlsim(db);
	if (kind != 1) {
		seterr(err, errlen, "%s: not a dlsim database (expected the tables runs and events%s)",
		       path, kind < 0 ? "; it is not SQLite or holds other tables" : "; it has no tables");
		sqlite3_close(db);
		return -EINVAL;
	}
	*out = db;
	return 0;
}

static void *writer_main(void *arg);

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

int dl_log_open(const char *path, struct dl_log **out, char *err, size_t errlen)
{
	return dl_log_open_wait(path, DL_LOG_BUSY_MS, out, err, errlen);
}

int dl_log_open_wait(const char *path, int busy_ms, struct dl_log **out, char *err, size_t errlen)
{
	struct dl_log *l;
	struct stat sb;
	int existed, rc;
	sqlite3 *db = NULL;
	char *emsg = NULL;

	*out = NULL;
	existed = stat(path, &sb) == 0;
	if (existed && !S_ISREG(sb.st_mode)) {
		seterr(err, errlen, "%s: not a regular file (expected a dlsim SQLite database)", path);
		return -EINVAL;
	}
	if (existed && access(path, W_OK) != 0) {
		seterr(err, errlen, "%s: not writable: %s", path, strerror(errno));
		return -EACCES;
	}
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
			     (existed ? 0 : SQLITE_OPEN_CREATE),
			     NULL);
	if (rc != SQLITE_OK) {
		seterr(err, errlen, "%s: cannot open for writing: %s", path,
		       db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -EACCES;
	}
	if (sqlite3_db_readonly(db, "main") == 1) {
		seterr(err, errlen, "%s: not writable", path);
		sqlite3_close(db);
		return -EACCES;
	}
	if (busy_ms < 0)
		busy_ms = 0;
	sqlite3_busy_timeout(db, busy_ms);
	if (existed && sb.st_size > 0) {
		int kind = dl_log_is_dlsim(db);

		if (kind < 0) {
			seterr(err, errlen, "%s: not a dlsim database (it is not SQLite, or holds"
			       " other tables; expected the tables runs and events); left untouched",
			       path);
			sqlite3_close(db);
			return -EINVAL;
		}
	}
	rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", NULL, NULL,
			  &emsg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, schema_sql, NULL, NULL, &emsg);
	if (rc == SQLITE_OK) {
		char sql[64];

		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", DL_LOG_APPLICATION_ID);
		rc = sqlite3_exec(db, sql, NULL, NULL, &emsg);
	}
	if (rc == SQLITE_BUSY || sqlite3_errcode(db) == SQLITE_BUSY) {
		seterr(err, errlen, "%s: locked by another writer; gave up after waiting %d ms"
		       " (--busy-timeout MS)", path, busy_ms);
	} else if (rc != SQLITE_OK) {
		seterr(err, errlen, "%s: cannot create the schema: %s", path,
		       emsg ? emsg : sqlite3_errmsg(db));
	}
	if (rc != SQLITE_OK) {
		sqlite3_free(emsg);
		sqlite3_close(db);
		if (!existed)
			unlink(path);
		return -EIO;
	}
	l = calloc(1, sizeof(*l));
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
	if (prepare_all(l) != 0) {
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

static void bind_id(sqlite3_stmt *st, int i, uint32_t v)
{
	if (v == DL_NONE)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

/* CLEAR: forget the bindings (statements that leave some unbound). */
static int step_reset_ex(struct dl_log *l, sqlite3_stmt *st, const char *what, int clear)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (clear)
		sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		log_fail(l, what);
		return -1;
	}
	return 0;
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
static void flush_rows(struct dl_log *l, const struct qitem *batch)
{
	sqlite3_stmt *st;

	if (l->npend == DL_LOG_ROWS) {
		st = l->st[ST_EVENTS_N];
		for (uint32_t i = 0; i < l->npend; i++)
			bind_event(l, st, (int)i * DL_LOG_COLS, &batch[l->pend[i]].ev);
		step_reset_ex(l, st, "insert into events", 0);     /* every column is bound */
	} else {
		st = l->st[ST_EVENT];
		for (uint32_t i = 0; i < l->npend; i++) {
			bind_event(l, st, 0, &batch[l->pend[i]].ev);
			step_reset_ex(l, st, "insert into events", 0);
		}
	}
	l->npend = 0;
}

static void write_item(struct dl_log *l, struct qitem *batch, uint32_t idx)
{
	struct qitem *q = &batch[idx];
	const struct dl_event *ev = &q->ev;
	sqlite3_stmt *st;
	char flags[256];
	int64_t seq;

	if (ev->kind == DL_LOG_DEVICE) {
		st = l->st[ST_DEVICE];
		sqlite3_bind_int64(st, 1, l->run_id);
		sqlite3_bind_int64(st, 2, ev->dev);
		if (q->name)
			sqlite3_bind_text(st, 3, q->name, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 3);
		bind_id(st, 4, ev->aux);
		sqlite3_bind_int(st, 5, ev->flags ? 1 : 0);
		step_reset(l, st, "insert into devices");
		free(q->name);
		q->name = NULL;
		return;
	}
	seq = l->seq + l->npend;        /* the row's seq once the pending rows are in */
	l->pend[l->npend++] = idx;
	if (l->npend == DL_LOG_ROWS)
		flush_rows(l, batch);

	if (ev->kind == DL_EV_LINK_ADD && ev->link != DL_NONE) {
		st = l->st[ST_LINK];
		dl_flags_format(ev->flags, flags, sizeof(flags));
		sqlite3_bind_int64(st, 1, l->run_id);
		sqlite3_bind_int64(st, 2, ev->link);
		bind_id(st, 3, ev->dev);
		bind_id(st, 4, ev->aux);
		sqlite3_bind_text(st, 5, flags, -1, SQLITE_TRANSIENT);
		step_reset(l, st, "insert into links");
	} else if (ev->kind == DL_EV_LINK_REFUSED) {
		st = l->st[ST_REFUSED];
		dl_flags_format(ev->flags, flags, sizeof(flags));
		sqlite3_bind_int64(st, 1, l->run_id);
		sqlite3_bind_int64(st, 2, seq);
		bind_id(st, 3, ev->dev);
		bind_id(st, 4, ev->aux);
		sqlite3_bind_text(st, 5, flags, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 6, dl_refusal_name(ev->phase), -1, SQLITE_STATIC);
		step_reset(l, st, "insert into refused");
	}
}

static void write_batch(struct dl_log *l, struct qitem *b, size_t n)
{
	pthread_mutex_lock(&l->db_mu);
	if (sqlite3_exec(l->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		log_fail(l, "begin");
	for (size_t i = 0; i < n; i++)
		write_item(l, b, (uint32_t)i);
	flush_rows(l, b);
	if (sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		log_fail(l, "commit");
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
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
	struct qitem q;

	if (!l)
		return 0;
	memset(&q, 0, sizeof(q));
	q.ev.kind = DL_LOG_DEVICE;
	q.ev.dev = dev_id;
	q.ev.aux = parent_id;
	q.ev.flags = async ? 1 : 0;
	q.name = name ? strdup(name) : NULL;
	if (name && !q.name)
		return -ENOMEM;
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
		" makespan_ns, started_at, version) VALUES(?,?,?,?,?,?,?,'running',NULL,?,?)",
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
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		log_fail(l, "insert into runs");
		pthread_mutex_unlock(&l->db_mu);
		return -EIO;
	}
	l->run_id = sqlite3_last_insert_rowid(l->db);
	l->run_open = 1;
	l->seq = 0;
	l->failed = 0;
	pthread_mutex_unlock(&l->db_mu);
	if (run_id)
		*run_id = l->run_id;
	return 0;
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

static int finish_run(struct dl_log *l, const char *status, int64_t makespan_ns,
		      const struct dl_metric *m, size_t nm)
{
	sqlite3_stmt *st = NULL;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int ok = 1;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	pthread_mutex_lock(&l->db_mu);
	sqlite3_exec(l->db, "BEGIN", NULL, NULL, NULL);
	if (nm && sqlite3_prepare_v2(l->db, "INSERT INTO metrics(run_id, name, value) VALUES(?,?,?)",
				     -1, &st, NULL) == SQLITE_OK) {
		for (size_t i = 0; i < nm; i++) {
			sqlite3_bind_int64(st, 1, l->run_id);
			sqlite3_bind_text(st, 2, m[i].name, -1, SQLITE_TRANSIENT);
			sqlite3_bind_double(st, 3, m[i].value);
			if (step_reset(l, st, "insert into metrics"))
				ok = 0;
		}
	} else if (nm) {
		log_fail(l, "prepare metrics");
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(l->db, "UPDATE runs SET status = ?, makespan_ns = ?, finished_at = ?,"
			       " events = ? WHERE run_id = ?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, status ? status : "ok", -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, makespan_ns);
		sqlite3_bind_text(st, 3, when, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, l->seq);
		sqlite3_bind_int64(st, 5, l->run_id);
		if (step_reset(l, st, "update runs"))
			ok = 0;
	} else {
		log_fail(l, "prepare update runs");
	}
	sqlite3_finalize(st);
	if (sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		log_fail(l, "commit run end");
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	}
	if (sqlite3_exec(l->db, index_sql, NULL, NULL, NULL) != SQLITE_OK)
		log_fail(l, "create indexes");
	l->run_open = 0;
	ok = ok && !l->failed;
	pthread_mutex_unlock(&l->db_mu);
	return ok ? 0 : -EIO;
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
	free(l->ring);
	free(l->batch);
	free(l);
}
