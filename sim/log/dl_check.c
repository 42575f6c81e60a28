/*
 * dl_check.c - stream a run's events in seq order, verify the log and hand
 * each event to the rules (dl_check_rules.c), which re-verify the
 * invariants of LINK-CORE.md from the log alone (see dl_check.h); then the
 * verdict and the violations table.
 */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <sqlite3.h>

#include "sim/core/dl_core.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_check_rules.h"
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

static void *calloc_huge(size_t n, size_t size)
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
	k->dev = calloc_huge(ndev ? ndev : 1, sizeof(*k->dev));
	k->hot = calloc_huge(ndev ? ndev : 1, sizeof(*k->hot));
	k->link = calloc_huge(nlink ? nlink : 1, sizeof(*k->link));
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
static struct flags_memo flags_memo(struct checker *k, const char *s)
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

static int has_column(sqlite3 *db, const char *table, const char *col)
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
 * (calloc_huge()).  LINKS and CHILDREN are the links and children in the
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
	if (!(k->lists = calloc_huge(2 * (size_t)nl + nc ? 2 * (size_t)nl + nc : 1, sizeof(*k->lists))))
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
			       flags_memo(k, (const char *)sqlite3_column_text(st, 3)).flags) &&
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
 * The log is verified before the rules: a row the writer cannot have written
 * (a tampered or damaged database) makes the run "corrupt", never a violation
 * of an invariant and never "ok".  What is verified: the runs row (a known
 * status, counts that are integers in range, events = the rows when the run is
 * finished); devices (ids dense in 0..devices-1, once each, a name, a parent
 * in range and not itself); links (unique ids, consumer and supplier in range);
 * events (seq dense and increasing from 0, a known kind, a device in range on
 * every row, a link the links table knows on link events, a supplier in range,
 * a known phase on PM events and a known state on link_state, 0 <= t_ns <=
 * DL_CHECK_T_MAX, each device's times non-decreasing, each probe_end and
 * unbind_end after its start).  The arrays of the rules are then sized once
 * from these counts, so that no lookup ever grows them.
 */
#define CORRUPT_PRINT 10
#define CORRUPT_STOP 1000       /* problems after which the verification stops reading */

enum { OPEN_PROBE = 1, OPEN_UNBIND = 2 };

struct vdev {
	int64_t t;              /* the device's last event time */
	uint8_t open;           /* OPEN_PROBE / OPEN_UNBIND: a callback started, not ended */
	uint8_t seen;           /* a devices row */
	uint8_t registered;     /* a register event */
};

/*
 * What the runs row and the metrics promise about the events (verify_run_row(),
 * verify_metrics()): checked against them once the events are read
 * (verify_promises()).
 */
enum { FAM_PROBE, FAM_UNBIND, FAM_SUSPEND, FAM_RESUME, FAM_COUNT };

struct vrun {
	int writer;             /* runs.events exists: the log is dlsim's writer's */
	int finished;           /* ok, violations or failed, its log whole: it ran to its end */
	int virtual_time;       /* mode 'des': the makespan is the last event's time */
	int64_t makespan;       /* runs.makespan_ns, -1 NULL */
	uint64_t ops[FAM_COUNT];      /* ops of each family with a makespan above 0 (metrics) */
	uint64_t callbacks[FAM_COUNT];/* callback starts of each family (events) */
	int64_t t_last;         /* the latest event time */
	int64_t unregistered;   /* metric devices_unregistered (dl_log.c), -1 none */
};

static void corrupt(struct checker *k, const char *fmt, ...)
{
	char what[224];
	va_list ap;

	if (k->by_rowid) {
		k->redo = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	/* the text quoted from a damaged row is data: no control byte reaches a terminal */
	for (char *c = what; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	if (!k->res->corrupt)
		snprintf(k->res->corrupt_first, sizeof(k->res->corrupt_first), "%s", what);
	k->res->corrupt++;
	if (k->verbose && (k->verbose > 1 || k->res->corrupt <= CORRUPT_PRINT))
		fprintf(k->out, "run %" PRId64 ": corrupt log: %s\n", k->run, what);
}

/* An integer column in [0, max): its value, or -1 (NULL, not an integer, out of range). */
static int64_t col_in(sqlite3_stmt *st, int i, int64_t max)
{
	int64_t v;

	if (sqlite3_column_type(st, i) != SQLITE_INTEGER)
		return -1;
	v = sqlite3_column_int64(st, i);
	return v >= 0 && v < max ? v : -1;
}

static int known_status(const char *s)
{
	static const char *const ok[] = { "running", "ok", "violations", "failed", "interrupted" };

	for (size_t i = 0; s && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(s, ok[i]))
			return 1;
	return 0;
}

static int finished_status(const char *s)
{
	return !strcmp(s, "ok") || !strcmp(s, "violations") || !strcmp(s, "failed");
}

static int is_pm_kind(int kind)
{
	return kind == DL_EV_SUSPEND_START || kind == DL_EV_SUSPEND_END ||
	       kind == DL_EV_RESUME_START || kind == DL_EV_RESUME_END ||
	       kind == DL_EV_WORK_BLOCK || kind == DL_EV_WORK_WAKE;
}

static int is_link_kind(int kind)
{
	return kind == DL_EV_LINK_ADD || kind == DL_EV_LINK_DEL || kind == DL_EV_LINK_STATE;
}

/* A figure of the runs row: NULL, or an integer in [lo, hi]; "" when it is, else why not. */
static const char *figure_bad(sqlite3_stmt *st, int i, int64_t lo, int64_t hi)
{
	int64_t v;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return "";
	if (sqlite3_column_type(st, i) != SQLITE_INTEGER)
		return "not an integer";
	v = sqlite3_column_int64(st, i);
	return v < lo ? "below its range" : v > hi ? "above its range" : "";
}

/* The runs row: *ndev from runs.devices (or the devices rows of a hand-made log). */
static int verify_run_row(struct checker *k, struct vrun *vr, int64_t *ndev, int64_t *nev,
			  int *from_zero)
{
	sqlite3_stmt *st;
	int has_ev = has_column(k->db, "runs", "events"), have_events;
	const char *why;
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT devices, %s, (SELECT count(*) FROM devices WHERE run_id = ?1),"
		 " EXISTS (SELECT 1 FROM events WHERE run_id = ?1), makespan_ns, workers, links,"
		 " mode = 'des' FROM runs WHERE run_id = ?1", has_ev ? "events" : "NULL");
	if (sqlite3_prepare_v2(k->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return -EIO;
	}
	if (!known_status(k->res->status))
		corrupt(k, "runs.status '%.40s' is none of running, ok, violations, failed,"
			" interrupted", k->res->status);
	*ndev = sqlite3_column_int64(st, 2);
	k->rows_prefix = k->res->incomplete ||
			 (!strcmp(k->res->status, "interrupted") && !sqlite3_column_int(st, 3));
	/* a run without devices rows and events holds no detail (a summary-only log) */
	if (sqlite3_column_type(st, 0) != SQLITE_NULL && (*ndev || sqlite3_column_int(st, 3))) {
		int64_t d = col_in(st, 0, (int64_t)DL_CHECK_MAX_IDS + 1);

		if (d < 0)
			corrupt(k, "runs.devices is not a count of devices (0..%u)", DL_CHECK_MAX_IDS);
		else if (d < *ndev || (d > *ndev && !k->rows_prefix))
			corrupt(k, "runs.devices is %" PRId64 " but the run has %" PRId64 " devices rows",
				d, *ndev);
		else
			*ndev = d;      /* k->rows_prefix: only the first rows may be stored */
	}
	if (*ndev > DL_CHECK_MAX_IDS) {
		corrupt(k, "%" PRId64 " devices rows (at most %u)", *ndev, DL_CHECK_MAX_IDS);
		*ndev = 0;
	}
	/* dlsim's writer numbers from 0 and counts; hand-made logs may do neither */
	*from_zero = has_ev;
	have_events = sqlite3_column_type(st, 1) != SQLITE_NULL;
	*nev = have_events ? col_in(st, 1, INT64_MAX) : -1;
	if (have_events && *nev < 0)
		corrupt(k, "runs.events is not a count");
	else if (has_ev && !have_events && strcmp(k->res->status, "running") != 0)
		corrupt(k, "runs.events is NULL in a run that is not 'running'");
	if (*(why = figure_bad(st, 4, 0, DL_CHECK_T_MAX)))
		corrupt(k, "runs.makespan_ns %.40s is %s (0..%" PRId64 " ns)",
			(const char *)sqlite3_column_text(st, 4), why, (int64_t)DL_CHECK_T_MAX);
	if (*(why = figure_bad(st, 5, 0, INT16_MAX)))
		corrupt(k, "runs.workers %.40s is %s (0..%d)", (const char *)sqlite3_column_text(st, 5),
			why, INT16_MAX);
	if (*(why = figure_bad(st, 6, 0, DL_CHECK_MAX_IDS)))
		corrupt(k, "runs.links %.40s is %s (0..%u)", (const char *)sqlite3_column_text(st, 6),
			why, DL_CHECK_MAX_IDS);
	vr->writer = has_ev;
	/* a run whose log failed (runs.log_error) stored only part of its events */
	vr->finished = finished_status(k->res->status) && !k->res->incomplete;
	vr->virtual_time = sqlite3_column_int(st, 7);
	vr->makespan = sqlite3_column_type(st, 4) == SQLITE_INTEGER ? sqlite3_column_int64(st, 4) : -1;
	sqlite3_finalize(st);
	return 0;
}

/* The op family of a metrics key "probe.makespan_ns", "suspend2.makespan_ns": FAM_*, or -1. */
static int metric_family(const char *name)
{
	static const char *const fam[FAM_COUNT] = { "probe", "unbind", "suspend", "resume" };
	size_t n = strcspn(name, ".");

	if (strcmp(name + n, ".makespan_ns") != 0)
		return -1;
	while (n && name[n - 1] >= '0' && name[n - 1] <= '9')
		n--;
	for (int f = 0; f < FAM_COUNT; f++)
		if (strlen(fam[f]) == n && !strncmp(name, fam[f], n))
			return f;
	return -1;
}

/*
 * The metrics: every value a finite number, every time ("..._ns") in
 * 0..DL_CHECK_T_MAX, makespan_ns and events equal to the runs row's (events:
 * unless the log failed, runs.events then counts what was stored); the ops
 * with a makespan are counted per family for verify_promises().
 */
static int verify_metrics(struct checker *k, struct vrun *vr, int64_t nev)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(k->db, "SELECT name, value FROM metrics WHERE run_id = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;       /* a hand-made log without metrics */
	sqlite3_bind_int64(st, 1, k->run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int type = sqlite3_column_type(st, 1);
		double v = sqlite3_column_double(st, 1);
		size_t n = name ? strlen(name) : 0;
		int f;

		if (!name) {
			corrupt(k, "a metrics row has no name");
			continue;
		}
		if ((type != SQLITE_FLOAT && type != SQLITE_INTEGER) || !isfinite(v)) {
			corrupt(k, "metric '%.60s' is %.40s, not a number", name,
				type == SQLITE_NULL ? "NULL" : (const char *)sqlite3_column_text(st, 1));
			continue;
		}
		if (n > 3 && !strcmp(name + n - 3, "_ns") && (v < 0 || v > (double)DL_CHECK_T_MAX))
			corrupt(k, "metric '%.60s' is %g, not a time in 0..%" PRId64 " ns", name, v,
				(int64_t)DL_CHECK_T_MAX);
		else if (!strcmp(name, "makespan_ns") && vr->makespan >= 0 && v != (double)vr->makespan)
			corrupt(k, "metric makespan_ns is %.0f but runs.makespan_ns is %" PRId64, v,
				vr->makespan);
		else if (!strcmp(name, "events") && nev >= 0 && !k->res->incomplete &&
			 v != (double)nev)
			corrupt(k, "metric events is %.0f but runs.events is %" PRId64, v, nev);
		if ((f = metric_family(name)) >= 0 && v > 0)
			vr->ops[f]++;
		if (!strcmp(name, "devices_unregistered") && v >= 0 && v <= DL_CHECK_MAX_IDS)
			vr->unregistered = (int64_t)v;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/*
 * What a run that ran to its end promises about its events, for a log of
 * dlsim's writer: its devices registered but those the writer saw never
 * register, the callbacks of every suspend and
 * resume op that took time, and (virtual time) no event after the makespan.
 */
static void verify_promises(struct checker *k, const struct vrun *vr, const struct vdev *v,
			    int64_t ndev)
{
	static const char *const fam[FAM_COUNT] = { "probe", "unbind", "suspend", "resume" };
	int64_t never = 0, first = -1;

	if (!vr->writer || !vr->finished)
		return;
	/*
	 * A device may never register (hot-plugged, never added): the writer
	 * counts those (metric devices_unregistered); rows beyond that count
	 * were added or had their events deleted.  Older logs without the
	 * metric: at least one device registered.
	 */
	for (int64_t d = 0; d < ndev; d++) {
		if (!v[d].seen || v[d].registered)
			continue;
		if (!never++)
			first = d;
	}
	if (vr->unregistered >= 0 && never != vr->unregistered)
		corrupt(k, "%" PRId64 " devices never registered (the first: device %" PRId64 ") but the"
			" writer saw %" PRId64 " (metric devices_unregistered)", never, first,
			vr->unregistered);
	else if (vr->unregistered < 0 && ndev > 0 && never == ndev)
		corrupt(k, "none of the run's %" PRId64 " devices registered in a run that ended '%s'",
			ndev, k->res->status);
	/*
	 * Only PM ops: a suspend or resume that took time ran callbacks.  A
	 * probe or unbind op can take time without one (a racing op's delay,
	 * a device without a driver to unbind).
	 */
	for (int f = FAM_SUSPEND; f <= FAM_RESUME; f++)
		if (vr->ops[f] && !vr->callbacks[f])
			corrupt(k, "the metrics hold %" PRIu64 " %s op%s that took time but the events"
				" no %s callback", vr->ops[f], fam[f], vr->ops[f] == 1 ? "" : "s",
				fam[f]);
	/* threads and kernel runs time their makespan apart from the events */
	if (vr->virtual_time && vr->makespan >= 0 && vr->t_last > vr->makespan)
		corrupt(k, "an event at t=%" PRId64 " after runs.makespan_ns %" PRId64, vr->t_last,
			vr->makespan);
}

static int verify_devices(struct checker *k, struct vdev *v, int64_t ndev)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(k->db, "SELECT dev_id, name, parent_id FROM devices WHERE run_id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = col_in(st, 0, ndev), p = col_in(st, 2, ndev);

		if (id < 0) {
			corrupt(k, "a devices row has dev_id %s, not in 0..%" PRId64,
				sqlite3_column_type(st, 0) == SQLITE_NULL ? "NULL" :
				(const char *)sqlite3_column_text(st, 0), ndev - 1);
			continue;
		}
		if (v[id].seen)
			corrupt(k, "device %" PRId64 " has two devices rows", id);
		v[id].seen = 1;
		if (sqlite3_column_type(st, 1) != SQLITE_TEXT)
			corrupt(k, "device %" PRId64 " has no name", id);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL && (p < 0 || p == id))
			corrupt(k, "device %" PRId64 " has parent_id %s, not a device in 0..%" PRId64
				" other than itself", id, (const char *)sqlite3_column_text(st, 2), ndev - 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The links table: *nlink one past the largest link id; KNOWN[l] set for each. */
static int verify_links(struct checker *k, int64_t ndev, uint8_t **known, uint32_t *nlink)
{
	sqlite3_stmt *st;
	int rc;

	*known = NULL;
	*nlink = 0;
	if (sqlite3_prepare_v2(k->db, "SELECT max(link_id), count(*) FROM links WHERE run_id = ?", -1,
			       &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 1) > 0) {
		int64_t m = col_in(st, 0, (int64_t)DL_CHECK_MAX_IDS);

		if (m < 0)
			corrupt(k, "a link_id is not an id in 0..%u", DL_CHECK_MAX_IDS - 1);
		else
			*nlink = (uint32_t)m + 1;
	}
	sqlite3_finalize(st);
	*known = calloc(*nlink ? *nlink : 1, 1);
	if (!*known)
		return -ENOMEM;
	if (sqlite3_prepare_v2(k->db, "SELECT link_id, consumer_id, supplier_id, flags FROM links"
			       " WHERE run_id = ?", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t l = col_in(st, 0, *nlink);

		if (l < 0) {
			if (*nlink)
				corrupt(k, "a links row has link_id %s",
					sqlite3_column_type(st, 0) == SQLITE_NULL ? "NULL" :
					(const char *)sqlite3_column_text(st, 0));
			continue;
		}
		if ((*known)[l])
			corrupt(k, "link %" PRId64 " has two links rows", l);
		(*known)[l] = 1;
		if (col_in(st, 1, ndev) < 0 || col_in(st, 2, ndev) < 0)
			corrupt(k, "link %" PRId64 " joins devices not in 0..%" PRId64, l, ndev - 1);
		if (sqlite3_column_type(st, 3) != SQLITE_NULL &&
		    !flags_memo(k, (const char *)sqlite3_column_text(st, 3)).known)
			corrupt(k, "link %" PRId64 " has flags '%.60s', not DL_FLAG_* names joined by '|'",
				l, (const char *)sqlite3_column_text(st, 3));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The family of a callback's first event, FAM_* (probe_start, ...), or -1. */
static int callback_family(int kind)
{
	switch (kind) {
	case DL_EV_PROBE_START: return FAM_PROBE;
	case DL_EV_UNBIND_START: return FAM_UNBIND;
	case DL_EV_SUSPEND_START: return FAM_SUSPEND;
	case DL_EV_RESUME_START: return FAM_RESUME;
	default: return -1;
	}
}

/*
 * One events row (events_stmt()'s columns), each column fetched once for the
 * verification and the rules alike: its type, and its integer value (0 if
 * NULL) or, for kind and phase, its text.  A value quoted in a message is
 * fetched again as text (sqlite3_column_text()).
 */
enum { EC_T, EC_DEV, EC_LINK, EC_KIND, EC_PHASE, EC_SEQ, EC_AUX, EC_WORKER, EC_ERR, EC_FLAGS,
       EC_ARG, EC_COUNT };

#define EROW_TEXT 40     /* kind and phase kept by keep_text(): longer than any name */

struct erow {
	int type[EC_COUNT];
	int64_t v[EC_COUNT];
	const char *kind, *phase;
	int kind_id;            /* kind parsed, -1 unknown (row_names()) */
	int name;               /* phase parsed (PM kinds) or state (link_state), -1 */
	char kbuf[EROW_TEXT], pbuf[EROW_TEXT];  /* their copies (keep_text()) */
};

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

static void read_row(sqlite3_stmt *st, struct erow *r)
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
 * read_row() of the row in the arguments of dl_check_row(): in rowid order
 * each row's columns come as the arguments of one call (row_fn()), which
 * reads them without sqlite3_column_*()'s per-call overhead (a third of
 * the cost of reading a row).  The texts are what sqlite3_column_text()
 * would give; keep_text() copies those that are no name the rules know.
 */
#define ROW_FN "dl_check_row"

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
static int row_fn_register(struct checker *k)
{
	k->fn_registered = sqlite3_create_function_v2(k->db, ROW_FN, EC_COUNT,
						      SQLITE_UTF8 | SQLITE_DIRECTONLY, k, row_fn,
						      NULL, NULL, NULL) == SQLITE_OK;
	return k->fn_registered ? 0 : -EIO;
}

/* Once no statement uses it: the connection keeps no pointer to the checker. */
static void row_fn_unregister(struct checker *k)
{
	if (k->fn_registered)
		sqlite3_create_function_v2(k->db, ROW_FN, EC_COUNT, SQLITE_UTF8 | SQLITE_DIRECTONLY,
					   NULL, NULL, NULL, NULL, NULL);
	k->fn_registered = 0;
	k->sink = NULL;
}

/* col_in() of a row's column */
static int64_t row_in(const struct erow *r, int i, int64_t max)
{
	return r->type[i] == SQLITE_INTEGER && r->v[i] >= 0 && r->v[i] < max ? r->v[i] : -1;
}

/* col_id() of a row's column */
static uint32_t row_id(const struct erow *r, int i)
{
	return r->type[i] == SQLITE_NULL || r->v[i] < 0 || r->v[i] >= (int64_t)DL_NONE ? DL_NONE :
	       (uint32_t)r->v[i];
}

/* A column's text for a message: "NULL" for NULL (ST NULL: the row was read ahead, "?"). */
static const char *col_text(sqlite3_stmt *st, int i)
{
	const char *t = st ? (const char *)sqlite3_column_text(st, i) : "?";

	return t ? t : "NULL";
}

/* worker, err and flags of an event (columns 7, 8, 9): in the ranges dl_event gives them. */
static void verify_event_fields(struct checker *k, sqlite3_stmt *st, const struct erow *r,
				int have_ext, int64_t seq, const char *ks)
{
	static const char *const col[] = { "worker", "err", "flags" };
	const int64_t lo[] = { -1, INT16_MIN, 0 };
	const int64_t hi[] = { INT16_MAX, INT16_MAX, ((int64_t)1 << DL_FLAG_COUNT) - 1 };

	for (int i = 0; i < (have_ext ? 3 : 2); i++) {
		int c = EC_WORKER + i;
		const char *why = r->type[c] == SQLITE_NULL ? "" : r->type[c] != SQLITE_INTEGER ?
				  "not an integer" : r->v[c] < lo[i] ? "below its range" :
				  r->v[c] > hi[i] ? "above its range" : "";

		if (*why)
			corrupt(k, "seq %" PRId64 ": %s with %s %.40s, %s (%" PRId64 "..%" PRId64 ")", seq,
				ks, col[i], col_text(st, 7 + i), why, lo[i],
				hi[i]);
	}
}

static int verify_event(struct checker *k, sqlite3_stmt *st, struct erow *r, int have_ext,
			struct vdev *v, int64_t ndev, const uint8_t *known, uint32_t nlink, int64_t seq,
			struct vrun *vr)
{
	const char *ks = r->kind;
	int kind = r->kind_id;
	int64_t d = row_in(r, EC_DEV, ndev), t = r->v[EC_T];

	if (r->type[EC_T] != SQLITE_INTEGER || t < 0 || t > DL_CHECK_T_MAX) {
		corrupt(k, "seq %" PRId64 ": t_ns %s is not a time in 0..%" PRId64 " ns", seq,
			col_text(st, EC_T), (int64_t)DL_CHECK_T_MAX);
		t = -1;
	}
	if (kind < 0) {
		corrupt(k, "seq %" PRId64 ": unknown kind '%.40s'", seq, ks ? ks : "NULL");
		return -1;
	}
	verify_event_fields(k, st, r, have_ext, seq, ks);
	if (t > vr->t_last)
		vr->t_last = t;
	if (callback_family(kind) >= 0)
		vr->callbacks[callback_family(kind)]++;
	if (d < 0) {
		corrupt(k, "seq %" PRId64 ": %s of dev_id %s, not a device in 0..%" PRId64, seq, ks,
			col_text(st, EC_DEV), ndev - 1);
		return kind;
	}
	if (is_link_kind(kind)) {
		int64_t l = row_in(r, EC_LINK, nlink);

		if (l < 0 || !known[l])
			corrupt(k, "seq %" PRId64 ": %s of link %s, which the links table does not hold",
				seq, ks, col_text(st, EC_LINK));
	}
	if (have_ext && (is_link_kind(kind) || kind == DL_EV_LINK_REFUSED ||
			 (kind == DL_EV_REGISTER && r->type[EC_AUX] != SQLITE_NULL)) &&
	    row_in(r, EC_AUX, ndev) < 0)
		corrupt(k, "seq %" PRId64 ": %s with aux %s, not a device in 0..%" PRId64, seq, ks,
			col_text(st, EC_AUX), ndev - 1);
	if (is_pm_kind(kind) && r->name < 0)
		corrupt(k, "seq %" PRId64 ": %s in unknown phase '%.40s'", seq, ks,
			r->phase ? r->phase : "NULL");
	if (kind == DL_EV_LINK_STATE && r->name < 0)
		corrupt(k, "seq %" PRId64 ": link_state to unknown state '%.40s'", seq,
			r->phase ? r->phase : "NULL");
	if (kind == DL_EV_REGISTER)
		v[d].registered = 1;
	if (t >= 0) {
		if (t < v[d].t)
			corrupt(k, "seq %" PRId64 ": %s of device %" PRId64 " at t=%" PRId64 ", before its"
				" previous event (t=%" PRId64 ")", seq, ks, d, t, v[d].t);
		else
			v[d].t = t;
	}
	switch (kind) {
	case DL_EV_PROBE_START:
	case DL_EV_UNBIND_START:
		if (v[d].open)
			corrupt(k, "seq %" PRId64 ": %s of device %" PRId64 " while its %s has not ended",
				seq, ks, d, v[d].open == OPEN_PROBE ? "probe" : "unbind");
		v[d].open = kind == DL_EV_PROBE_START ? OPEN_PROBE : OPEN_UNBIND;
		break;
	case DL_EV_PROBE_END:
	case DL_EV_UNBIND_END:
		if (v[d].open != (kind == DL_EV_PROBE_END ? OPEN_PROBE : OPEN_UNBIND))
			corrupt(k, "seq %" PRId64 ": %s of device %" PRId64 " without its %s", seq, ks, d,
				kind == DL_EV_PROBE_END ? "probe_start" : "unbind_start");
		v[d].open = 0;
		break;
	default:
		break;
	}
	return kind;
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
	int have_worker = has_column(k->db, "events", "worker");
	int64_t lo = 0, hi = -1;
	char sql[384];

	k->by_rowid = by_rowid && rowid_range(k, &lo, &hi) && row_fn_register(k) == 0;
	snprintf(sql, sizeof(sql), "SELECT %st_ns, dev_id, link_id, kind, phase, seq, %s, %s, err, %s, %s%s"
		 " FROM %s WHERE run_id = ?1%s ORDER BY %s", k->by_rowid ? ROW_FN "(" : "",
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

/* The verification's state while the events stream by (verify_begin() to verify_end()). */
struct verify {
	struct vrun vr;
	struct vdev *v;
	uint8_t *known;
	uint32_t nlink;
	int64_t ndev, nev;      /* devices; runs.events (-1: none) */
	int from_zero, have_ext;
	int64_t rows, prev;     /* events rows read; the last one's seq */
};

static void verify_free(struct verify *V)
{
	free(V->v);
	free(V->known);
}

/* What precedes the events: the runs row, the metrics, the devices and the links. */
static int verify_begin(struct checker *k, struct verify *V, int have_ext)
{
	int rc;

	memset(V, 0, sizeof(*V));
	V->vr.t_last = -1;
	V->vr.unregistered = -1;
	V->nev = -1;
	V->have_ext = have_ext;
	rc = verify_run_row(k, &V->vr, &V->ndev, &V->nev, &V->from_zero);
	if (!rc)
		rc = verify_metrics(k, &V->vr, V->nev);
	if (rc)
		return rc;
	V->v = calloc_huge((size_t)(V->ndev ? V->ndev : 1), sizeof(*V->v));
	if (!V->v)
		return -ENOMEM;
	rc = verify_devices(k, V->v, V->ndev);
	if (!rc)
		rc = verify_links(k, V->ndev, &V->known, &V->nlink);
	for (int64_t d = 0; !rc && d < V->ndev && k->res->corrupt < CORRUPT_STOP; d++)
		if (!V->v[d].seen && !(k->rows_prefix && (d == V->ndev - 1 || !V->v[d + 1].seen)))
			corrupt(k, "device %" PRId64 " has no devices row (ids are 0..%" PRId64 ")", d,
				V->ndev - 1);
	return rc;
}

/*
 * One events row R, read by read_row() from ST (NULL: read ahead, the
 * statement is on a later row): its kind, or -1 if unknown.
 */
static int verify_read_row(struct checker *k, struct verify *V, sqlite3_stmt *st,
			   struct erow *r)
{
	int64_t seq = r->v[EC_SEQ];

	if (r->type[EC_SEQ] != SQLITE_INTEGER)
		corrupt(k, "an event has seq %s", col_text(st, EC_SEQ));
	else if (V->rows == 0 ? (V->from_zero && seq != 0) : seq != V->prev + 1)
		corrupt(k, "seq %" PRId64 " follows %s%" PRId64 " (seq is dense: 0, 1, 2, ...)", seq,
			V->rows ? "seq " : "the start, expected ", V->rows ? V->prev : 0);
	V->prev = seq;
	V->rows++;
	return verify_event(k, st, r, V->have_ext, V->v, V->ndev, V->known, V->nlink, seq, &V->vr);
}

/* One events row, read into R: its kind, or -1 if unknown. */
static int verify_row(struct checker *k, struct verify *V, sqlite3_stmt *st, struct erow *r)
{
	read_row(st, r);
	return verify_read_row(k, V, st, r);
}

/*
 * Rows read ahead (rowid order only, k->by_rowid): a ring of EROW_AHEAD
 * rows, each row's device, link and supplier fetched into the cache while
 * the rows before it are checked (those lookups, spread over the whole
 * graph, missed the cache on nearly every row).  Each row comes from
 * dl_check_row() (row_fn()), which copies the texts that are no known name:
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

/* After the last row read; ALL: the statement ran to its end. */
static void verify_end(struct checker *k, struct verify *V, int all)
{
	if (V->nev >= 0 && all && V->rows != V->nev)
		corrupt(k, "runs.events is %" PRId64 " but the run has %" PRId64 " events rows", V->nev,
			V->rows);
	if (k->res->corrupt < CORRUPT_STOP)
		verify_promises(k, &V->vr, V->v, V->ndev);
}

/* Verifies the log of k->run, events and all.  0, or negative on a database error. */
static int verify_log(struct checker *k, int have_ext)
{
	struct verify V;
	sqlite3_stmt *st = NULL;
	int rc = verify_begin(k, &V, have_ext);

	if (!rc)
		rc = events_stmt(k, have_ext, 0, &st);
	if (!rc) {
		struct erow r;

		while ((rc = sqlite3_step(st)) == SQLITE_ROW && k->res->corrupt < CORRUPT_STOP)
			verify_row(k, &V, st, &r);
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
			verify_end(k, &V, rc == SQLITE_DONE);
			rc = 0;
		} else {
			rc = -EIO;
		}
	}
	verify_free(&V);
	return rc;
}

/* runs.status and runs.log_error of RUN_ID into RES; -ENOENT if there is no such run. */
static int read_status(sqlite3 *db, int64_t run_id, struct dl_check_result *res)
{
	sqlite3_stmt *st;
	const char *status;
	int has_le = has_column(db, "runs", "log_error");

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
	if (!has_column(db, "runs", "kernel"))
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
	int rc = verify_begin(k, &P->V, P->have_ext);

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
	*kind = verify_read_row(k, &P->V, NULL, r);
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
		verify_end(k, &P->V, P->rc == SQLITE_DONE);
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

	verify_free(&P->V);
	if (rc)
		drop_violations(k);
	if (P->st)
		sqlite3_finalize(P->st);
	row_fn_unregister(k);
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
	P.have_ext = has_column(db, "events", "arg") && has_column(db, "events", "flags") &&
		     has_column(db, "events", "aux");
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
		rc = verify_log(&k, has_column(db, "events", "arg") && has_column(db, "events", "flags") &&
				    has_column(db, "events", "aux"));
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
