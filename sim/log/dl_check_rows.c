/*
 * dl_check_rows.c - how the events rows reach the checker (dl_check.c):
 * each row's columns fetched once, kind, phase and state looked up by name
 * once; in rowid order a row arrives as the arguments of one call of the
 * SQL function DL_CHECK_ROW_FN.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <sqlite3.h>

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

static int parse_kind(const char *s) { return name_lookup(&kinds, fill_kinds, s); }
static int parse_phase(const char *s) { return name_lookup(&phases, fill_phases, s); }
static int parse_state(const char *s) { return name_lookup(&states, fill_states, s); }

/*
 * The kind and phase of a row looked up once, for the verification and the
 * rules alike; a name found is then given as the table's own string (the
 * same text), which outlives the row.
 */
static void row_names(struct erow *r)
{
	r->kind_id = parse_kind(r->kind);
	r->name = is_pm_kind(r->kind_id) ? parse_phase(r->phase) :
		  r->kind_id == DL_EV_LINK_STATE ? parse_state(r->phase) : -1;
	if (r->kind_id >= 0)
		r->kind = dl_ev_kind_name((unsigned)r->kind_id);
	if (r->name >= 0)
		r->phase = is_pm_kind(r->kind_id) ? dl_phase_name((unsigned)r->name) :
			   dl_link_state_name((unsigned)r->name);
}

void dl_check_read_row(sqlite3_stmt *st, struct erow *r)
{
	/*
	 * One call a column: sqlite3_column_type() and _int64() would each look
	 * it up again.  The value is unprotected (not threadsafe): nothing else
	 * uses the connection while check reads it, and the texts, which may
	 * need converting, go through sqlite3_column_text().
	 */
	for (int i = 0; i < EC_COUNT; i++) {
		sqlite3_value *v = sqlite3_column_value(st, i);

		r->type[i] = sqlite3_value_type(v);
		r->v[i] = r->type[i] == SQLITE_NULL || i == EC_KIND || i == EC_PHASE ? 0 :
			  sqlite3_value_int64(v);
	}
	r->kind = (const char *)sqlite3_column_text(st, EC_KIND);
	r->phase = (const char *)sqlite3_column_text(st, EC_PHASE);
	row_names(r);
}

static void keep_text(struct checker *k, const char **t, char *buf)
{
	size_t n;

	if (!*t)
		return;
	n = strlen(*t);
	if (n >= EROW_TEXT) {
		k->redo = 1;
		return;
	}
	memcpy(buf, *t, n + 1);
	*t = buf;
}

/*
 * dl_check_read_row() of the row in the arguments of dl_check_row(): in rowid order
 * each row's columns come as the arguments of one call (row_fn()), which
 * reads them without sqlite3_column_*()'s per-call overhead (a third of
 * the cost of reading a row).  The texts are what sqlite3_column_text()
 * would give; keep_text() copies those that are no name the rules know.
 */
static void row_fn(sqlite3_context *cx, int argc, sqlite3_value **a)
{
	struct checker *k = sqlite3_user_data(cx);
	struct erow *r = k->sink;

	k->sink_calls++;
	if (!r || argc != EC_COUNT || k->sink_calls != 1)
		return;
	for (int i = 0; i < EC_COUNT; i++) {
		r->type[i] = sqlite3_value_type(a[i]);
		r->v[i] = r->type[i] == SQLITE_NULL || i == EC_KIND || i == EC_PHASE ? 0 :
			  sqlite3_value_int64(a[i]);
	}
	r->kind = (const char *)sqlite3_value_text(a[EC_KIND]);
	r->phase = (const char *)sqlite3_value_text(a[EC_PHASE]);
	row_names(r);
	/* SQLite's texts stay valid only until the next step: names found are the table's */
	if (r->kind_id < 0)
		keep_text(k, &r->kind, r->kbuf);
	if (r->name < 0)
		keep_text(k, &r->phase, r->pbuf);
}

/* Direct calls only: a view or trigger of the database cannot call it. */
int dl_check_row_fn_register(struct checker *k)
{
	k->fn_registered = sqlite3_create_function_v2(k->db, DL_CHECK_ROW_FN, EC_COUNT,
						      SQLITE_UTF8 | SQLITE_DIRECTONLY, k, row_fn,
						      NULL, NULL, NULL) == SQLITE_OK;
	return k->fn_registered ? 0 : -EIO;
}

/* Once no statement uses it: the connection keeps no pointer to the checker. */
void dl_check_row_fn_unregister(struct checker *k)
{
	if (k->fn_registered)
		sqlite3_create_function_v2(k->db, DL_CHECK_ROW_FN, EC_COUNT, SQLITE_UTF8 | SQLITE_DIRECTONLY,
					   NULL, NULL, NULL, NULL, NULL);
	k->fn_registered = 0;
	k->sink = NULL;
}
