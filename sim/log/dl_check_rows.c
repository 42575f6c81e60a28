/*
 * dl_check_rows.c - how the events rows reach the checker (see
 * dl_check_rows.h): each row's columns fetched once, kind, phase and state
 * looked up by name once, and in rowid order the rows streamed by a reader
 * thread while the checker works.  Measured on a 200k-device log (6.2M
 * rows): SQLite's side is about half of a check, the checker's the other
 * half, so on two CPUs the two halves overlap.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim/log/dl_check_rows.h"

/*
 * Kind, phase and state names come back as text on every row: look them up
 * in a small open-addressing table (built once) instead of a strcmp() loop,
 * which was the checker's largest cost after SQLite itself.
 */
#define NAME_SLOTS 64

struct name_table {
	pthread_once_t once;
	const char *(*name)(unsigned);
	unsigned count;
	const char *key[NAME_SLOTS];
	int8_t id[NAME_SLOTS];
};

static unsigned name_hash(const char *s, size_t n)
{
	return ((unsigned)n * 31u + (unsigned char)s[0] * 7u + (unsigned char)s[n - 1] * 3u +
		(unsigned char)s[n / 2]) % NAME_SLOTS;
}

static void name_table_fill(struct name_table *t)
{
	for (unsigned i = 0; i < t->count; i++) {
		const char *k = t->name(i);
		unsigned h = name_hash(k, strlen(k));

		while (t->key[h])
			h = (h + 1) % NAME_SLOTS;
		t->key[h] = k;
		t->id[h] = (int8_t)i;
	}
}

static struct name_table kinds = { PTHREAD_ONCE_INIT, dl_ev_kind_name, DL_EV_KIND_COUNT, {0}, {0} };
static struct name_table phases = { PTHREAD_ONCE_INIT, dl_phase_name, DL_PH_COUNT, {0}, {0} };
static struct name_table states = { PTHREAD_ONCE_INIT, dl_link_state_name, DL_STATE_COUNT, {0}, {0} };

static void fill_kinds(void) { name_table_fill(&kinds); }
static void fill_phases(void) { name_table_fill(&phases); }
static void fill_states(void) { name_table_fill(&states); }

static int name_lookup(struct name_table *t, void (*fill)(void), const char *s)
{
	size_t n;
	unsigned h;

	if (!s || !(n = strlen(s)))
		return -1;
	pthread_once(&t->once, fill);
	for (h = name_hash(s, n); t->key[h]; h = (h + 1) % NAME_SLOTS)
		if (!strcmp(t->key[h], s))
			return t->id[h];
	return -1;
}

/*
 * The kind and phase of a row looked up once, for the verification and the
 * rules alike; a name found is then given as the table's own string (the
 * same text), which outlives the row.
 */
static void row_names(struct erow *r)
{
	r->kind_id = name_lookup(&kinds, fill_kinds, r->kind);
	r->name = is_pm_kind(r->kind_id) ? name_lookup(&phases, fill_phases, r->phase) :
		  r->kind_id == DL_EV_LINK_STATE ? name_lookup(&states, fill_states, r->phase) : -1;
	if (r->kind_id >= 0)
		r->kind = dl_ev_kind_name((unsigned)r->kind_id);
	if (r->name >= 0)
		r->phase = is_pm_kind(r->kind_id) ? dl_phase_name((unsigned)r->name) :
			   dl_link_state_name((unsigned)r->name);
}

/* A row's types and integers from @v (sqlite3_column_value() or a function's arguments). */
static void row_ints(struct erow *r, sqlite3_value **v)
{
	for (int i = 0; i < EC_COUNT; i++) {
		r->type[i] = sqlite3_value_type(v[i]);
		r->v[i] = r->type[i] == SQLITE_NULL || i == EC_KIND || i == EC_PHASE ? 0 :
			  sqlite3_value_int64(v[i]);
	}
}

void dl_check_read_row(sqlite3_stmt *st, struct erow *r)
{
	/*
	 * One call a column: sqlite3_column_type() and _int64() would each look
	 * it up again.  The value is unprotected (not threadsafe): nothing else
	 * uses the statement while check reads it, and the texts, which may
	 * need converting, go through sqlite3_column_text().
	 */
	sqlite3_value *v[EC_COUNT];

	for (int i = 0; i < EC_COUNT; i++)
		v[i] = sqlite3_column_value(st, i);
	row_ints(r, v);
	r->kind = (const char *)sqlite3_column_text(st, EC_KIND);
	r->phase = (const char *)sqlite3_column_text(st, EC_PHASE);
	row_names(r);
}

/* Copy text *@t into @buf (the row's own), false if it is too long for it. */
static bool keep_text(const char **t, char *buf)
{
	size_t n;

	if (!*t)
		return true;
	n = strlen(*t);
	if (n >= EROW_TEXT)
		return false;
	memcpy(buf, *t, n + 1);
	*t = buf;
	return true;
}

/*
 * In rowid order each row's columns come as the arguments of one call of
 * DL_CHECK_ROW_FN, which reads them without sqlite3_column_*()'s per-call
 * overhead (a third of the cost of reading a row).  SQLite's texts stay
 * valid only until the next step: a name found is the table's, any other
 * text is copied into the row; one too long to copy is no name check
 * knows, and the pass is read again by seq (redo), as it is when a step
 * did not call the function exactly once.
 */
static void row_fn(sqlite3_context *cx, int argc, sqlite3_value **a)
{
	struct dl_check_feed *f = sqlite3_user_data(cx);
	struct erow *r = f->sink;

	if (++f->sink_calls != 1 || !r || argc != EC_COUNT)
		return;
	row_ints(r, a);
	r->kind = (const char *)sqlite3_value_text(a[EC_KIND]);
	r->phase = (const char *)sqlite3_value_text(a[EC_PHASE]);
	row_names(r);
	if ((r->kind_id < 0 && !keep_text(&r->kind, r->kbuf)) ||
	    (r->name < 0 && !keep_text(&r->phase, r->pbuf)))
		f->sink_calls++;   /* as good as a second call: redo */
}

/* Direct calls only: a view or trigger of the database cannot call it. */
int dl_check_feed_register(struct dl_check_feed *f, sqlite3 *db)
{
	f->db = db;
	f->fn_registered = sqlite3_create_function_v2(db, DL_CHECK_ROW_FN, EC_COUNT,
						      SQLITE_UTF8 | SQLITE_DIRECTONLY, f, row_fn,
						      NULL, NULL, NULL) == SQLITE_OK;
	return f->fn_registered ? 0 : -EIO;
}

/*
 * Step up to f->rows rows into half @h and publish it; false if that was
 * the last (the statement's end, an error, or a row to redo).
 */
static bool fill(struct dl_check_feed *f, unsigned h)
{
	unsigned n = 0;
	bool redo = false, last;
	int rc = SQLITE_ROW;

	pthread_mutex_lock(f->db_lock);
	while (n < f->rows) {
		f->sink = &f->half[h][n];
		f->sink_calls = 0;
		if ((rc = sqlite3_step(f->st)) != SQLITE_ROW)
			break;
		if (f->sink_calls != 1) {
			redo = true;
			break;
		}
		if (!f->threaded && f->ahead)
			f->ahead(f->ahead_ctx, &f->half[h][n]);
		n++;
	}
	f->sink = NULL;
	pthread_mutex_unlock(f->db_lock);

	pthread_mutex_lock(&f->mx);
	f->n[h] = n;
	f->full[h] = true;
	f->rc = rc;
	f->redo = redo;
	f->end = last = redo || rc != SQLITE_ROW;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mx);
	return !last;
}

/* The reader: fills the halves in turn, each once the checker is done with it. */
static void *reader_main(void *arg)
{
	struct dl_check_feed *f = arg;
	unsigned h = 0;

	for (;;) {
		bool quit;

		pthread_mutex_lock(&f->mx);
		while (f->full[h] && !f->quit)
			pthread_cond_wait(&f->cv, &f->mx);
		quit = f->quit;
		pthread_mutex_unlock(&f->mx);
		if (quit || !fill(f, h))
			return NULL;
		h ^= 1;
	}
}

int dl_check_feed_start(struct dl_check_feed *f, sqlite3_stmt *st, pthread_mutex_t *db_lock,
			bool thread)
{
	f->st = st;
	f->db_lock = db_lock;
	f->rows = thread ? FEED_ROWS : FEED_ROWS_INLINE;
	f->half[0] = malloc(2 * f->rows * sizeof(struct erow));
	if (!f->half[0])
		return -ENOMEM;
	f->half[1] = f->half[0] + f->rows;
	f->rc = SQLITE_ROW;
	pthread_mutex_init(&f->mx, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->threaded = thread;   /* before the reader reads it */
	if (thread && pthread_create(&f->tid, NULL, reader_main, f) != 0)
		f->threaded = false;
	return 0;
}

struct erow *dl_check_feed_next(struct dl_check_feed *f)
{
	bool ok;

	if (f->holding && f->at < f->len)
		return &f->half[f->cur][f->at++];
	if (f->holding) {
		/* the batch is read: the reader may fill it again */
		pthread_mutex_lock(&f->mx);
		f->full[f->cur] = false;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mx);
		f->holding = false;
		f->cur ^= 1;
	}
	if (!f->threaded && !f->end)
		fill(f, f->cur);
	pthread_mutex_lock(&f->mx);
	while (!f->full[f->cur] && !f->end)
		pthread_cond_wait(&f->cv, &f->mx);
	ok = f->full[f->cur] && !f->redo;
	f->len = f->n[f->cur];
	pthread_mutex_unlock(&f->mx);
	if (!ok)
		return NULL;
	f->holding = true;
	f->at = 0;
	return f->len ? &f->half[f->cur][f->at++] : NULL;
}

int dl_check_feed_stop(struct dl_check_feed *f, bool *redo)
{
	if (f->threaded) {
		pthread_mutex_lock(&f->mx);
		f->quit = true;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mx);
		pthread_join(f->tid, NULL);
		f->threaded = false;
	}
	*redo = f->redo;
	return f->rc;
}

void dl_check_feed_free(struct dl_check_feed *f)
{
	if (f->half[0]) {
		pthread_mutex_destroy(&f->mx);
		pthread_cond_destroy(&f->cv);
		free(f->half[0]);
	}
	if (f->fn_registered)
		sqlite3_create_function_v2(f->db, DL_CHECK_ROW_FN, EC_COUNT,
					   SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, NULL, NULL, NULL, NULL);
	memset(f, 0, sizeof(*f));
}
