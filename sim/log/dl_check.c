/*
 * dl_check.c - stream a run's events in seq order (each row read as
 * dl_check_rows.c reads it), have each row verified
 * (dl_check_verify.c) and hand it to the rules (dl_check_rules.c), which
 * re-verify the invariants of LINK-CORE.md from the log alone (see
 * dl_check.h); then the verdict and the violations table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <sqlite3.h>

#include "sim/core/dl_core.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_check_rows.h"
#include "sim/log/dl_check_rules.h"
#include "sim/log/dl_check_verify.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_shard.h"

/*
 * The arrays indexed by device or link id are read at random, a row or a
 * link at a time: on 4 KiB pages most of those reads also miss the TLB
 * (200k devices are 17 MB of struct cdev).  Arrays of 2 MiB or more are
 * given transparent huge pages where the kernel offers them on request
 * (transparent_hugepage "madvise"); free() releases them as usual.
 */
#define HUGE_PAGE ((size_t)2 << 20)

void *dl_check_calloc_huge(size_t n, size_t size)
{
	size_t bytes = n * size;
	void *p;

	if (n && bytes / n != size)
		return NULL;
	if (bytes < HUGE_PAGE)
		return calloc(n ? n : 1, size);
	bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (posix_memalign(&p, HUGE_PAGE, bytes))
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);       /* advice only: its failure changes nothing */
#endif
	memset(p, 0, bytes);
	return p;
}

/*
 * The device and link arrays are sized once, from the verified runs row,
 * devices and links, before any event is replayed (alloc_arrays()); lookups
 * never grow them, so a pointer from one lookup stays valid across the next
 * (an id past the end, which the verification of its row rules out before
 * the rules see it, is NULL).
 */
static int alloc_arrays(struct checker *k, uint32_t ndev, uint32_t nlink)
{
	k->dev = dl_check_calloc_huge(ndev ? ndev : 1, sizeof(*k->dev));
	k->hot = dl_check_calloc_huge(ndev ? ndev : 1, sizeof(*k->hot));
	k->link = dl_check_calloc_huge(nlink ? nlink : 1, sizeof(*k->link));
	if (!k->dev || !k->hot || !k->link)
		return -ENOMEM;
	for (uint32_t i = 0; i < ndev; i++) {
		k->dev[i].parent = DL_NONE;
		k->hot[i].in_phase = -1;
	}
	k->ndev = ndev;
	k->nlink = nlink;
	return 0;
}

static uint32_t parse_flags(const char *s)
{
	uint32_t flags = 0;
	char buf[64];

	while (s && *s) {
		size_t n = strcspn(s, "|");
		uint32_t bit;

		if (n < sizeof(buf)) {
			memcpy(buf, s, n);
			buf[n] = '\0';
			if (dl_flag_parse(buf, &bit) == 0)
				flags |= bit;
		}
		s += n;
		if (*s == '|')
			s++;
	}
	return flags;
}

/* Every name of "A|B|C" is a DL_FLAG_* name ("" is no flag). */
static int flags_known(const char *s)
{
	char buf[64];
	uint32_t bit;

	while (s && *s) {
		size_t n = strcspn(s, "|");

		if (n == 0 || n >= sizeof(buf))
			return 0;
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (dl_flag_parse(buf, &bit))
			return 0;
		s += n;
		if (*s == '|' && !*++s)
			return 0;
	}
	return 1;
}

/* S's parse_flags() and flags_known(), from the memo when S was seen. */
struct flags_memo dl_check_flags_memo(struct checker *k, const char *s)
{
	size_t n = s ? strlen(s) + 1 : 0;
	struct flags_memo m;

	for (unsigned i = 0; n && n <= FLAGS_MEMO_LEN && i < FLAGS_MEMO_N; i++)
		if (k->memo[i].used && !memcmp(k->memo[i].s, s, n))
			return k->memo[i];
	m.flags = parse_flags(s);
	m.known = flags_known(s);
	m.used = 1;
	if (n && n <= FLAGS_MEMO_LEN) {
		memcpy(m.s, s, n);
		k->memo[k->memo_next++ % FLAGS_MEMO_N] = m;
	}
	return m;
}

int dl_check_has_column(sqlite3 *db, const char *table, const char *col)
{
	sqlite3_stmt *st;
	char sql[128];
	int found = 0;

	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *n = (const char *)sqlite3_column_text(st, 1);

		if (n && !strcmp(n, col))
			found = 1;
	}
	sqlite3_finalize(st);
	return found;
}

static uint32_t col_id(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return DL_NONE;
	sqlite3_int64 v = sqlite3_column_int64(st, i);
	return v < 0 || v >= (sqlite3_int64)DL_NONE ? DL_NONE : (uint32_t)v;
}

int64_t dl_check_newest_run(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t id = 0;

	if (sqlite3_prepare_v2(db, "SELECT max(run_id) FROM runs", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

/* D's name, kept in k->names (a name that does not fit is left out: printed as #ID). */
static void keep_name(struct checker *k, struct cdev *D, const char *name)
{
	size_t n = strlen(name) + 1;

	if (k->names_cap - k->names_len < n) {
		size_t nc = k->names_cap ? k->names_cap * 2 : 4096;
		char *nn;

		while (nc - k->names_len < n)
			nc *= 2;
		if (!(nn = realloc(k->names, nc)))
			return;
		k->names = nn;
		k->names_cap = nc;
	}
	memcpy(k->names + k->names_len, name, n);
	k->names_len += n;
	D->name_at = k->names_len - n + 1;
}

/*
 * The lists of each device (its links as consumer and as supplier, its
 * children), as loaded, in one array in device order, each device's three
 * side by side: one allocation instead of three a device, on huge pages
 * (dl_check_calloc_huge()).  LINKS and CHILDREN are the links and children in the
 * order the tables gave them, which each list keeps.  A list that grows
 * later leaves the pool (vec_push()).
 */
static int build_lists(struct checker *k, const uint32_t *links, uint32_t nl,
		       const uint32_t *children, uint32_t nc)
{
	size_t at = 0;

	for (uint32_t i = 0; i < nl; i++) {
		k->dev[k->link[links[i]].c].cons.n++;
		k->dev[k->link[links[i]].s].sup.n++;
	}
	for (uint32_t i = 0; i < nc; i++)
		k->dev[k->dev[children[i]].parent].children.n++;
	if (!(k->lists = dl_check_calloc_huge(2 * (size_t)nl + nc ? 2 * (size_t)nl + nc : 1, sizeof(*k->lists))))
		return -ENOMEM;
	for (uint32_t d = 0; d < k->ndev; d++) {
		struct vec *list[] = { &k->dev[d].cons, &k->dev[d].sup, &k->dev[d].children };

		for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
			list[i]->v = list[i]->n ? k->lists + at : NULL;
			at += list[i]->n;
			list[i]->n = 0;
			list[i]->cap = 0;       /* not its own: vec_push() copies it out */
		}
	}
	for (uint32_t i = 0; i < nl; i++) {
		const struct clink *L = &k->link[links[i]];
		struct vec *cons = &k->dev[L->c].cons, *sup = &k->dev[L->s].sup;

		cons->v[cons->n++] = links[i];
		sup->v[sup->n++] = links[i];
	}
	for (uint32_t i = 0; i < nc; i++) {
		struct vec *v = &k->dev[k->dev[children[i]].parent].children;

		v->v[v->n++] = children[i];
	}
	return 0;
}

/*
 * The devices' names and parents and the links of the tables, then
 * whether the log shows registration and probing.
 */
static int load_tables(struct checker *k, uint32_t *links, uint32_t *nl, uint32_t *children,
		       uint32_t *nc)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(k->db, "SELECT dev_id, name, parent_id FROM devices WHERE run_id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t id = col_id(st, 0);
		struct cdev *D = get_dev(k, id);
		const char *name = (const char *)sqlite3_column_text(st, 1);

		if (!D)
			continue;
		if (name && !D->name_at)
			keep_name(k, D, name);
		if (parent_learn(k, id, col_id(st, 2)) && *nc < k->ndev)
			children[(*nc)++] = id;
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(k->db, "SELECT link_id, consumer_id, supplier_id, flags FROM links"
			       " WHERE run_id = ?", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t l = col_id(st, 0);

		if (link_learn(k, l, col_id(st, 1), col_id(st, 2),
			       dl_check_flags_memo(k, (const char *)sqlite3_column_text(st, 3)).flags) &&
		    *nl < k->nlink)
			links[(*nl)++] = l;
	}
	sqlite3_finalize(st);
	return 0;
}

static int load(struct checker *k)
{
	uint32_t *links = malloc((k->nlink ? k->nlink : 1) * sizeof(*links));
	uint32_t *children = malloc((k->ndev ? k->ndev : 1) * sizeof(*children));
	uint32_t nl = 0, nc = 0;
	sqlite3_stmt *st;
	int rc = links && children ? load_tables(k, links, &nl, children, &nc) : -ENOMEM;

	if (!rc)
		rc = build_lists(k, links, nl, children, nc);
	free(links);
	free(children);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(k->db, "SELECT 1 FROM events WHERE run_id = ? AND kind = 'register'"
			       " LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	k->have_register = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(k->db, "SELECT 1 FROM events WHERE run_id = ? AND kind = 'probe_end'"
			       " LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	k->have_probe = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return k->oom ? -ENOMEM : 0;
}

/*
 * The rowid range of k->run's events in main.events when its rows can be
 * streamed in rowid order: events is main's table (not the view of a sweep's
 * shards) and the index finds the run's first and last seq and counts its
 * rows (k->range_rows: a row outside the range, say a duplicate added later,
 * makes the count differ), or there is no index (an interrupted run's log:
 * ordering by seq would sort every row, the whole table is scanned instead).
 * 1 with LO..HI (HI < LO: no index), 0 to read by seq.
 */
static int rowid_range(struct checker *k, int64_t *lo, int64_t *hi)
{
	static const char *const sql[] = {
		"SELECT EXISTS (SELECT 1 FROM temp.sqlite_master WHERE name = 'events'),"
		" EXISTS (SELECT 1 FROM main.sqlite_master WHERE type = 'index'"
		" AND name = 'events_run_seq')",
		"SELECT rowid FROM main.events WHERE run_id = ? ORDER BY seq LIMIT 1",
		"SELECT rowid FROM main.events WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
		"SELECT count(*) FROM main.events WHERE run_id = ?",
	};
	int64_t v[4] = { 0 };
	int ok = 1;

	k->range_rows = -1;
	for (int i = 0; i < 4 && ok; i++) {
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(k->db, sql[i], -1, &st, NULL) != SQLITE_OK)
			return 0;
		if (i)
			sqlite3_bind_int64(st, 1, k->run);
		ok = sqlite3_step(st) == SQLITE_ROW;
		if (ok && i == 0) {
			ok = !sqlite3_column_int(st, 0);        /* a TEMP view: by seq */
			if (ok && !sqlite3_column_int(st, 1)) { /* no index: the whole table */
				sqlite3_finalize(st);
				*lo = 1;
				*hi = 0;
				return 1;
			}
		}
		v[i] = ok ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_finalize(st);
	}
	*lo = v[1];
	*hi = v[2];
	k->range_rows = v[3];
	return ok && *lo <= *hi;
}

/*
 * The events are read once, in seq order, for the verification and the rules
 * together (dl_check_run_ex()): columns 0..10 are t_ns, dev_id, link_id, kind,
 * phase, seq, aux, worker, err, flags, arg (NULL where an older log lacks one).
 * BY_ROWID: in rowid order if rowid_range() allows it (k->by_rowid says so).
 */
static int events_stmt(struct checker *k, int have_ext, int by_rowid, sqlite3_stmt **st)
{
	int have_worker = dl_check_has_column(k->db, "events", "worker");
	int64_t lo = 0, hi = -1;
	char sql[384];

	k->by_rowid = by_rowid && rowid_range(k, &lo, &hi) && dl_check_row_fn_register(k) == 0;
	snprintf(sql, sizeof(sql), "SELECT %st_ns, dev_id, link_id, kind, phase, seq, %s, %s, err, %s, %s%s"
		 " FROM %s WHERE run_id = ?1%s ORDER BY %s", k->by_rowid ? DL_CHECK_ROW_FN "(" : "",
		 have_ext ? "aux" : "NULL",
		 have_worker ? "worker" : "NULL", have_ext ? "flags" : "NULL", have_ext ? "arg" : "NULL",
		 k->by_rowid ? ")" : "", k->by_rowid ? "main.events NOT INDEXED" : "events",
		 k->by_rowid && lo <= hi ? " AND rowid BETWEEN ?2 AND ?3" : "",
		 k->by_rowid ? "rowid" : "seq");
	if (sqlite3_prepare_v2(k->db, sql, -1, st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(*st, 1, k->run);
	if (k->by_rowid && lo <= hi) {
		sqlite3_bind_int64(*st, 2, lo);
		sqlite3_bind_int64(*st, 3, hi);
	}
	return 0;
}

/* One events row, read into R: its kind, or -1 if unknown. */
static int verify_row(struct checker *k, struct verify *V, sqlite3_stmt *st, struct erow *r)
{
	dl_check_read_row(st, r);
	return dl_check_verify_row(k, V, st, r);
}

/*
 * Rows read ahead (rowid order only, k->by_rowid): a ring of EROW_AHEAD
 * rows, each row's device, link and supplier fetched into the cache while
 * the rows before it are checked (those lookups, spread over the whole
 * graph, missed the cache on nearly every row).  Each row comes from
 * dl_check_row() (dl_check_rows.c), which copies the texts that are no known name:
 * SQLite's stay valid only until the next step.  A text too long to copy
 * is no name check knows: the pass is read again by seq (k->redo), as it
 * is when a step did not call dl_check_row() exactly once.
 */
#define EROW_AHEAD 16

static void read_ahead(struct checker *k, const struct verify *V, struct erow *r)
{
	uint32_t d, l, aux;

	if (k->sink_calls != 1) {
		k->redo = 1;    /* not one call a row: read by seq */
		return;
	}
	d = row_id(r, EC_DEV);
	l = row_id(r, EC_LINK);
	aux = row_id(r, EC_AUX);
	if (d < (uint64_t)V->ndev)
		__builtin_prefetch(&V->v[d]);
	if (d < k->ndev) {
		__builtin_prefetch(&k->dev[d]);
		__builtin_prefetch(&k->hot[d]);
	}
	if (aux < k->ndev)
		__builtin_prefetch(&k->dev[aux]);
	if (l < k->nlink)
		__builtin_prefetch(&k->link[l]);
}

/* Verifies the log of k->run, events and all.  0, or negative on a database error. */
static int verify_log(struct checker *k, int have_ext)
{
	struct verify V;
	sqlite3_stmt *st = NULL;
	int rc = dl_check_verify_begin(k, &V, have_ext);

	if (!rc)
		rc = events_stmt(k, have_ext, 0, &st);
	if (!rc) {
		struct erow r;

		while ((rc = sqlite3_step(st)) == SQLITE_ROW && k->res->corrupt < CORRUPT_STOP)
			verify_row(k, &V, st, &r);
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
			dl_check_verify_end(k, &V, rc == SQLITE_DONE);
			rc = 0;
		} else {
			rc = -EIO;
		}
	}
	dl_check_verify_free(&V);
	return rc;
}

/* runs.status and runs.log_error of RUN_ID into RES; -ENOENT if there is no such run. */
static int read_status(sqlite3 *db, int64_t run_id, struct dl_check_result *res)
{
	sqlite3_stmt *st;
	const char *status;
	int has_le = dl_check_has_column(db, "runs", "log_error");

	if (sqlite3_prepare_v2(db, has_le ? "SELECT status, log_error FROM runs WHERE run_id = ?" :
			       "SELECT status, NULL FROM runs WHERE run_id = ?", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return -ENOENT;
	}
	status = (const char *)sqlite3_column_text(st, 0);
	snprintf(res->status, sizeof(res->status), "%s", status ? status : "");
	res->incomplete = !strcmp(res->status, "running");
	if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
		snprintf(res->log_error, sizeof(res->log_error), "%s",
			 (const char *)sqlite3_column_text(st, 1));
		res->incomplete = 1;
	}
	sqlite3_finalize(st);
	return 0;
}

/*
 * The SYNC_STATE_ONLY rule of the kernel RUN_ID followed (runs.kernel,
 * "MAJOR.MINOR", a release's patch level ignored): 6.12 and 6.16 wait on an
 * SSO link that is not DORMANT;
 * 6.18 ("PM: sleep: Do not wait on SYNC_STATE_ONLY device links") and 7.3
 * do not.  A run without runs.kernel was logged before dlsim recorded it,
 * by engines that never waited on SSO links: the later rule.
 */
static int read_kernel(sqlite3 *db, int64_t run_id, int *skips_sso)
{
	sqlite3_stmt *st;
	unsigned major, minor;

	*skips_sso = 1;
	if (!dl_check_has_column(db, "runs", "kernel"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT kernel FROM runs WHERE run_id = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_TEXT &&
	    sscanf((const char *)sqlite3_column_text(st, 0), "%u.%u", &major, &minor) == 2)
		*skips_sso = DL_KVER(major > 255 ? 255 : major, minor > 255 ? 255 : minor) >=
			     DL_KVER_PM_SKIPS_SSO;
	sqlite3_finalize(st);
	return 0;
}

static void checker_free(struct checker *k)
{
	for (uint32_t i = 0; i < k->ndev; i++) {
		struct vec *list[] = { &k->dev[i].cons, &k->dev[i].sup, &k->dev[i].children };

		for (size_t j = 0; j < sizeof(list) / sizeof(list[0]); j++)
			if (list[j]->cap)
				free(list[j]->v);
	}
	free(k->lists);
	free(k->names);
	free(k->dev);
	free(k->hot);
	free(k->link);
	free(k->stack.v);
	free(k->fwd.v);
	free(k->bwd.v);
	free(k->keys);
}

/*
 * Violations are staged in a TEMP table while the run is read (the temp
 * database is the connection's own, so no lock on the log is taken) and
 * copied into the log in one short write transaction at the end
 * (violations_store()); a run with no violation then and none before is not
 * written at all.
 */
static int violations_stage(struct checker *k)
{
	sqlite3_stmt *st;

	if (sqlite3_exec(k->db, "CREATE TEMP TABLE IF NOT EXISTS check_violations(run_id INTEGER,"
			 " invariant INTEGER, dev_id INTEGER, link_id INTEGER, t_ns INTEGER, detail TEXT);"
			 " DELETE FROM temp.check_violations", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(k->db, "INSERT INTO temp.check_violations(run_id, invariant, dev_id,"
			       " link_id, t_ns, detail) VALUES(?,?,?,?,?,?)", -1, &k->ins, NULL)
	    != SQLITE_OK)
		return -EIO;
	if (sqlite3_prepare_v2(k->db, "SELECT EXISTS (SELECT 1 FROM main.violations WHERE run_id = ?)",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	k->had_violations = sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/*
 * The run's violations replace its old rows, and an 'ok' run that breaks an
 * invariant becomes 'violations' (the verdict is the log's too).  In its own
 * write transaction when OWN_TXN (the caller has none open).
 */
static void violations_store(struct checker *k, int own_txn)
{
	static const char *const sql[] = {
		"DELETE FROM main.violations WHERE run_id = ?1",
		("INSERT INTO main.violations(run_id, invariant, dev_id, link_id, t_ns, detail)"
		 " SELECT run_id, invariant, dev_id, link_id, t_ns, detail FROM temp.check_violations"
		 " WHERE run_id = ?1"),
		("UPDATE main.runs SET status = 'violations' WHERE run_id = ?1 AND status = 'ok'"
		 " AND EXISTS (SELECT 1 FROM temp.check_violations WHERE run_id = ?1)"),
	};
	int ok = !own_txn || sqlite3_exec(k->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;

	for (size_t i = 0; ok && i < sizeof(sql) / sizeof(sql[0]); i++) {
		sqlite3_stmt *st;

		ok = sqlite3_prepare_v2(k->db, sql[i], -1, &st, NULL) == SQLITE_OK;
		if (ok) {
			sqlite3_bind_int64(st, 1, k->run);
			ok = sqlite3_step(st) == SQLITE_DONE;
			sqlite3_finalize(st);
		}
	}
	if (own_txn && (!ok || sqlite3_exec(k->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)) {
		sqlite3_exec(k->db, "ROLLBACK", NULL, NULL, NULL);
		ok = 0;
	}
	if (ok && k->res->total && !strcmp(k->res->status, "ok"))
		snprintf(k->res->status, sizeof(k->res->status), "violations");
	sqlite3_exec(k->db, "DELETE FROM temp.check_violations", NULL, NULL, NULL);
}

/*
 * Violations found before a later row proves the log corrupt are not
 * shown: those printed go to a temporary file first (k->vout), shown here
 * once the events are all verified.
 */
static void show_deferred(struct checker *k)
{
	char buf[4096];
	size_t n;

	if (!k->vout)
		return;
	rewind(k->vout);
	while ((n = fread(buf, 1, sizeof(buf), k->vout)) > 0)
		fwrite(buf, 1, n, k->out);
	fclose(k->vout);
	k->vout = NULL;
}

/* A row proved the log corrupt after the rules ran on the rows before: nothing of them counts. */
static void drop_violations(struct checker *k)
{
	uint64_t corrupt = k->res->corrupt;
	char first[sizeof(k->res->corrupt_first)];

	memcpy(first, k->res->corrupt_first, sizeof(first));
	k->res->total = 0;
	k->res->events = 0;
	memset(k->res->by_inv, 0, sizeof(k->res->by_inv));
	k->res->corrupt = corrupt;
	memcpy(k->res->corrupt_first, first, sizeof(first));
	if (k->vout)
		fclose(k->vout);
	k->vout = NULL;
	if (k->store)
		sqlite3_exec(k->db, "DELETE FROM temp.check_violations", NULL, NULL, NULL);
	k->store = 0;
}

#define CHECK_REDO 100      /* check_pass(): read the run again, by seq */

/* One pass over a run's log (check_pass()). */
struct pass {
	struct checker k;
	struct verify V;
	sqlite3_stmt *st;       /* the events (events_stmt()) */
	int rc;                 /* the last sqlite3_step()'s result */
	int have_ext, own_txn;
	int rules;              /* the rules run on each row (until one is corrupt) */
	int64_t t_last;         /* the last event the rules saw */
	/* rowid order: EROW_AHEAD rows read ahead (read_ahead()), HEAD the next */
	struct erow one, ahead[EROW_AHEAD];
	unsigned head, nahead;
	int done;               /* the statement has no more rows */
};

/*
 * What precedes the events: the verification of the runs row, metrics,
 * devices and links; the rules' state when they hold (the arrays sized from
 * them, the links and parents loaded, the first topological order, the
 * violations' staging); then the events statement.
 */
static int pass_prepare(struct pass *P, int by_rowid)
{
	struct checker *k = &P->k;
	int rc = dl_check_verify_begin(k, &P->V, P->have_ext);

	/*
	 * The rules run on each row once it is verified, while the events are
	 * read for the verification (one pass); they stop at the first corrupt
	 * row, and what they found is then dropped.
	 */
	P->rules = !rc && !k->res->corrupt;
	if (P->rules) {
		rc = alloc_arrays(k, (uint32_t)P->V.ndev, P->V.nlink);
		if (!rc)
			rc = load(k);
		if (!rc) {
			dl_check_topo_init(k);
			k->store = !sqlite3_db_readonly(k->db, "main") && violations_stage(k) == 0;
			k->vout = k->verbose ? tmpfile() : NULL;
		}
	}
	if (rc)
		return rc;
	return events_stmt(k, P->have_ext, by_rowid && !k->res->corrupt && (!k->verbose || k->vout),
			   &P->st);
}

/* The next events row, verified, with its kind (-1: unknown) in *KIND; NULL: no more. */
static struct erow *pass_next(struct pass *P, int *kind)
{
	struct checker *k = &P->k;
	struct erow *r;

	if (!k->by_rowid) {
		if ((P->rc = sqlite3_step(P->st)) != SQLITE_ROW || k->res->corrupt >= CORRUPT_STOP)
			return NULL;
		*kind = verify_row(k, &P->V, P->st, &P->one);
		return &P->one;
	}
	while (!P->done && P->nahead < EROW_AHEAD) {
		k->sink = &P->ahead[(P->head + P->nahead) % EROW_AHEAD];
		k->sink_calls = 0;
		if ((P->rc = sqlite3_step(P->st)) != SQLITE_ROW) {
			P->done = 1;
			break;
		}
		read_ahead(k, &P->V, k->sink);
		P->nahead++;
	}
	if (!P->nahead || k->redo)
		return NULL;
	r = &P->ahead[P->head];
	P->head = (P->head + 1) % EROW_AHEAD;
	P->nahead--;
	*kind = dl_check_verify_row(k, &P->V, NULL, r);
	return r;
}

/* A verified row of kind KIND, as the rules see it. */
static void rules_on_row(struct checker *k, const struct erow *r, int kind)
{
	uint32_t aux = row_id(r, EC_AUX), l = row_id(r, EC_LINK);
	struct ev ev;

	if (aux == DL_NONE && l != DL_NONE && l < k->nlink && k->link[l].known)
		aux = k->link[l].s;      /* old logs without events.aux */
	ev = (struct ev){
		.kind = kind, .d = row_id(r, EC_DEV), .l = l, .aux = aux,
		.have_flags = r->type[EC_FLAGS] != SQLITE_NULL, .flags = (uint32_t)r->v[EC_FLAGS],
		.arg = r->type[EC_ARG] == SQLITE_NULL ? -1 : (int)r->v[EC_ARG],
		.name = r->name, .text = r->phase, .err = (int)r->v[EC_ERR], .t = r->v[EC_T],
		.worker = r->type[EC_WORKER] == SQLITE_INTEGER && r->v[EC_WORKER] >= 0 ?
			  r->v[EC_WORKER] : -1,
	};
	k->res->events++;
	dl_check_on_event(k, &ev);
}

/* The events: each verified, then replayed by the rules while the log holds. */
static void pass_read(struct pass *P)
{
	struct checker *k = &P->k;
	struct erow *r;
	int kind;

	while ((r = pass_next(P, &kind)) && !k->redo) {
		if (!P->rules || k->res->corrupt) {
			P->rules = 0;
			continue;
		}
		P->t_last = r->v[EC_T];
		rules_on_row(k, r, kind);
		if (k->oom)
			break;
	}
	sqlite3_finalize(P->st);
	P->st = NULL;
	if (k->by_rowid && k->range_rows >= 0 && P->rc == SQLITE_DONE && P->V.rows != k->range_rows)
		k->redo = 1;     /* rows of the run outside its rowid range */
}

/*
 * After the events: the verdict.  0 with *RET (DL_CHECK_*, CHECK_REDO), or
 * negative (out of memory, a database error).
 */
static int pass_verdict(struct pass *P, int *ret)
{
	struct checker *k = &P->k;
	struct dl_check_result *res = k->res;

	if (k->oom)
		return -ENOMEM;
	if (P->rc != SQLITE_DONE && P->rc != SQLITE_ROW)
		return -EIO;
	if (!k->redo)
		dl_check_verify_end(k, &P->V, P->rc == SQLITE_DONE);
	if (k->redo || res->corrupt) {
		drop_violations(k);
		*ret = k->redo ? CHECK_REDO : DL_CHECK_CORRUPT;
		return 0;
	}
	show_deferred(k);
	if (res->incomplete) {
		*ret = DL_CHECK_INCOMPLETE;
		if (k->verbose && res->log_error[0])
			fprintf(k->out, "run %" PRId64 ": incomplete (its log could not be written: %s):"
				" %" PRIu64 " events checked, end-of-run checks skipped\n", k->run,
				res->log_error, res->events);
		else if (k->verbose)
			fprintf(k->out, "run %" PRId64 ": incomplete (status 'running'): %" PRIu64
				" events checked, end-of-run checks skipped\n", k->run, res->events);
	} else if (strcmp(res->status, "interrupted") != 0) {
		/* an interrupted run may stop in the middle of a callback */
		dl_check_end_of_run(k, P->t_last);
		dl_check_dpm_order(k, P->t_last);
	}
	return 0;
}

/* The read ends; then, unless RC, the violations are stored (violations_store()). */
static void pass_close(struct pass *P, int rc)
{
	struct checker *k = &P->k;

	dl_check_verify_free(&P->V);
	if (rc)
		drop_violations(k);
	if (P->st)
		sqlite3_finalize(P->st);
	dl_check_row_fn_unregister(k);
	if (k->ins)
		sqlite3_finalize(k->ins);
	if (P->own_txn)
		sqlite3_exec(k->db, "COMMIT", NULL, NULL, NULL);      /* ends the read */
	if (!rc && k->store && (k->res->total || k->had_violations))
		violations_store(k, P->own_txn);
	checker_free(k);
}

/* One pass over the run's log (dl_check_run_ex()); BY_ROWID: stream it in rowid order if it can. */
static int check_pass(sqlite3 *db, int64_t run_id, int verbose, FILE *out,
		      struct dl_check_result *res, int by_rowid)
{
	struct pass P = { .k = { .db = db, .run = run_id, .verbose = verbose, .res = res,
				 .out = out ? out : stdout, .serial_phase = -1,
				 .serial_open = DL_NONE, .serial_worker = -1 } };
	int rc, ret = DL_CHECK_DONE;

	memset(res, 0, sizeof(*res));
	rc = read_status(db, run_id, res);
	if (!rc)
		rc = read_kernel(db, run_id, &P.k.pm_skips_sso);
	if (rc)
		return rc;
	P.have_ext = dl_check_has_column(db, "events", "arg") && dl_check_has_column(db, "events", "flags") &&
		     dl_check_has_column(db, "events", "aux");
	/* one snapshot for the whole pass, a read transaction: a run being written is not blocked */
	P.own_txn = sqlite3_get_autocommit(db);
	if (P.own_txn && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	rc = pass_prepare(&P, by_rowid);
	if (!rc) {
		pass_read(&P);
		rc = pass_verdict(&P, &ret);
	}
	pass_close(&P, rc);
	return rc ? rc : ret;
}

int dl_check_run_ex(sqlite3 *db, int64_t run_id, int verbose, FILE *out,
		    struct dl_check_result *res)
{
	int rc = check_pass(db, run_id, verbose, out, res, 1);

	return rc == CHECK_REDO ? check_pass(db, run_id, verbose, out, res, 0) : rc;
}

int dl_check_verify(sqlite3 *db, int64_t run_id, struct dl_check_result *res)
{
	struct checker k = { .db = db, .run = run_id, .res = res, .out = stdout };
	int rc;

	memset(res, 0, sizeof(*res));
	rc = read_status(db, run_id, res);
	if (!rc)
		rc = verify_log(&k, dl_check_has_column(db, "events", "arg") && dl_check_has_column(db, "events", "flags") &&
				    dl_check_has_column(db, "events", "aux"));
	checker_free(&k);
	return rc ? rc : res->corrupt ? DL_CHECK_CORRUPT : DL_CHECK_DONE;
}

int dl_check_run(sqlite3 *db, int64_t run_id, int verbose, uint64_t *nviolations)
{
	struct dl_check_result res;
	int rc = dl_check_run_ex(db, run_id, verbose, NULL, &res);

	if (nviolations)
		*nviolations = rc >= 0 ? res.total : 0;
	return rc;
}

int dl_check_path(const char *path, int64_t run_id, int verbose, uint64_t *nviolations)
{
	sqlite3 *db;
	char err[512];
	int rc = dl_log_open_existing(path, &db, err, sizeof(err));

	if (rc) {
		if (verbose)
			fprintf(stderr, "%s\n", err);
		return rc;
	}
	if (run_id <= 0)
		run_id = dl_check_newest_run(db);
	if (run_id > 0 && (rc = dl_log_attach_shards(db, &run_id, 1, err, sizeof(err)))) {
		if (verbose)
			fprintf(stderr, "%s\n", err);
		sqlite3_close(db);
		return rc;
	}
	rc = run_id > 0 ? dl_check_run(db, run_id, verbose, nviolations) :
	     run_id == 0 ? -ENOENT : (int)run_id;
	sqlite3_close(db);
	return rc;
}
