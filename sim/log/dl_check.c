/*
 * dl_check.c - stream a run's events in seq order and re-verify the
 * invariants of LINK-CORE.md from the log alone (see dl_check.h).
 */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sim/core/dl_core.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_shard.h"

#define PRINT_CAP 50
#define DFS_BUDGET 2000000u

struct vec { uint32_t *v; uint32_t n, cap; };
struct erow;

/*
 * The links table's flags texts, parsed (flags_memo()): a run has a few
 * combinations for hundreds of thousands of links.
 */
#define FLAGS_MEMO_N 8
#define FLAGS_MEMO_LEN 160      /* longer texts are parsed every time */

struct flags_memo {
	char s[FLAGS_MEMO_LEN];
	uint32_t flags;
	int known;              /* flags_known() */
	int used;
};

enum { DRV_NONE, DRV_PROBING, DRV_BOUND, DRV_UNBINDING };

/*
 * What the rules read of a device's neighbours (present(), runs_pm(), its
 * PM and runtime-PM state), apart from the rest (struct cdev): the walks
 * over a device's links touch 6 bytes a neighbour, which for 200k devices
 * stay in the cache where the whole record (96 bytes) did not.
 */
struct chot {
	uint8_t drv;
	uint8_t registered, deleted;
	uint8_t rpm;            /* RPM_UNKNOWN until the first rpm_resume/rpm_suspend */
	int8_t in_phase;        /* enum dl_phase of the callback running, -1 none */
	uint8_t susp;           /* bit p: suspended in suspend phase p, not yet resumed */
};

struct cdev {
	size_t name_at;         /* its name at checker.names[name_at - 1]; 0 none */
	uint32_t parent;
	uint32_t stamp;         /* DFS visitation */
	uint32_t ord;           /* topological position of invariant 6's graph (topo_*()) */
	uint32_t nd_seen;       /* suspended_in()/resumed_in(): seen in query nd_epoch */
	uint64_t dpm_pos;       /* position in the replayed dpm_list, 0: not on it */
	uint64_t prep_seq;      /* when its last prepare started (checker.prep_clock) */
	struct vec cons;        /* links where this device is the consumer */
	struct vec sup;         /* links where this device is the supplier */
	struct vec children;
};

struct clink {
	uint32_t c, s, flags;
	uint8_t state, live, known;
	uint8_t rpm_ref;        /* the consumer holds a runtime-PM reference on the supplier */
};

enum { RPM_UNKNOWN, RPM_ACTIVE_, RPM_SUSPENDED_ };

struct checker {
	sqlite3 *db;
	int64_t run;
	int verbose;
	FILE *out;
	FILE *vout;             /* violations shown once the log is verified (show_deferred()) */
	struct dl_check_result *res;
	/*
	 * The devices rows may be only the first ones: an incomplete run, or
	 * one interrupted before its first event (Ctrl-C while its devices
	 * rows were written, dl_run_log_begin()).
	 */
	int rows_prefix;
	struct cdev *dev;
	struct chot *hot;       /* [ndev] */
	char *names;            /* the devices' names, each NUL-ended (put_name()) */
	size_t names_len, names_cap;
	uint32_t *lists;        /* the devices' link and child lists once loaded (pool_lists()) */
	uint32_t ndev;
	struct clink *link;
	uint32_t nlink;
	int have_register;
	int have_probe;         /* the log shows probing: who has a driver is known */
	int store;              /* violations are staged (violations_stage()) and stored */
	int had_violations;     /* the log held violations of the run before this check */
	sqlite3_stmt *ins;
	uint32_t stamp;
	uint32_t nd_epoch;      /* the current suspended_in()/resumed_in() query */
	struct vec stack;
	/*
	 * Invariant 6's graph in a topological order (dev[].ord), kept across
	 * link adds (topo_insert()) so that a cycle search looks only between
	 * the two ends' positions; topo_ok 0: the order is lost (a cycle in a
	 * bad log, a search over budget), searches are whole from then on.
	 */
	int topo_ok;
	struct vec fwd, bwd;    /* the last topo_forward()'s and topo_backward()'s devices */
	uint32_t fwd_from, fwd_to;      /* the search fwd holds (fwd_from DL_NONE: none) */
	uint64_t *keys;         /* topo_reorder()'s scratch */
	uint32_t nkeys;
	uint64_t dpm_clock;     /* last dpm_list position handed out */
	int dpm_dirty;          /* the list or the links changed since the last check */
	int oom;
	int pm_skips_sso;       /* the run's kernel is 6.18 or later (read_kernel()) */
	/*
	 * prepare and complete (invariant 3): a run of prepare callbacks is one
	 * walk of dpm_list, forward; a run of complete callbacks walks the
	 * prepared devices backward; each run on one thread, one at a time.
	 */
	int serial_phase;       /* DL_PH_PREPARE or DL_PH_COMPLETE: the walk under way; -1 */
	uint64_t serial_last;   /* prepare: dpm_pos of the last; complete: its prep_seq */
	uint32_t serial_dev;    /* the device it was */
	uint32_t serial_open;   /* the device whose callback runs, DL_NONE */
	int64_t serial_worker;  /* the walk's thread, -1 not known yet */
	uint64_t prep_clock;
	/*
	 * Membership (invariant 4): the PM direction under way (PM_NONE,
	 * PM_SUSPENDING, PM_RESUMING) and whether a suspend callback of this
	 * cycle failed (then the suspend stopped short and rolled back).
	 */
	int pm_dir;
	int pm_failed;
	/*
	 * The events read in rowid order (events_stmt()): a log whose rows are
	 * in seq order, as the writer stores them, streams without the index.
	 * Any problem found that way (redo) makes the pass start again in seq
	 * order, so a log stored out of order is verified exactly as before.
	 */
	int by_rowid;
	int redo;
	int64_t range_rows;     /* the run's rows, which a rowid range must all hold; -1 no range */
	/*
	 * In rowid order the row is handed over by the SQL function
	 * dl_check_row() (row_fn()) as the statement steps, into SINK:
	 * SINK_CALLS counts its calls, one a row.
	 */
	struct erow *sink;
	unsigned sink_calls;
	int fn_registered;
	struct flags_memo memo[FLAGS_MEMO_N];
	unsigned memo_next;
};

enum { PM_NONE, PM_SUSPENDING, PM_RESUMING };

/* A vec with cap 0 and items lives in checker.lists (pool_lists()): it is copied out. */
static int vec_push(struct vec *v, uint32_t x)
{
	if (v->n >= v->cap) {
		uint32_t nc = v->n ? v->n * 2 : 4;
		uint32_t *nv = v->cap ? realloc(v->v, nc * sizeof(*nv)) : malloc(nc * sizeof(*nv));

		if (!nv)
			return -1;
		if (!v->cap && v->n)
			memcpy(nv, v->v, v->n * sizeof(*nv));
		v->v = nv;
		v->cap = nc;
	}
	v->v[v->n++] = x;
	return 0;
}

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

static struct cdev *get_dev(struct checker *k, uint32_t id)
{
	return id < k->ndev ? &k->dev[id] : NULL;
}

static struct chot *get_hot(struct checker *k, uint32_t id)
{
	return id < k->ndev ? &k->hot[id] : NULL;
}

static struct clink *get_link(struct checker *k, uint32_t id)
{
	return id < k->nlink ? &k->link[id] : NULL;
}

/* 1: D's parent is now P (it had none). */
static int parent_learn(struct checker *k, uint32_t d, uint32_t p)
{
	struct cdev *dd = get_dev(k, d);

	if (!dd || !get_dev(k, p) || dd->parent != DL_NONE || d == p)
		return 0;
	dd->parent = p;
	return 1;
}

static int set_parent(struct checker *k, uint32_t d, uint32_t p)
{
	if (!parent_learn(k, d, p))
		return 0;
	if (vec_push(&k->dev[p].children, d))
		k->oom = 1;
	return 1;
}

/* Link L's flags; its ends if it is new: then 1 (it joins their lists). */
static int link_learn(struct checker *k, uint32_t l, uint32_t c, uint32_t s, uint32_t flags)
{
	struct clink *L = get_link(k, l);

	if (!L || !get_dev(k, c) || !get_dev(k, s))
		return 0;
	L->flags = flags;
	if (L->known)
		return 0;
	L->known = 1;
	L->c = c;
	L->s = s;
	return 1;
}

static void know_link(struct checker *k, uint32_t l, uint32_t c, uint32_t s, uint32_t flags)
{
	if (link_learn(k, l, c, s, flags) &&
	    (vec_push(&k->dev[c].cons, l) || vec_push(&k->dev[s].sup, l)))
		k->oom = 1;
}

/* Names are data: each is printed as a JSON string (Jansson escapes quotes,
 * backslashes and controls); a name that is not UTF-8, or none, as #ID. */
static void put_name(struct checker *k, FILE *f, uint32_t id)
{
	const char *s = id < k->ndev && k->dev[id].name_at ? k->names + k->dev[id].name_at - 1 :
			NULL;
	json_t *j = s ? json_string(s) : NULL;

	if (!j || json_dumpf(j, f, JSON_ENCODE_ANY) != 0)
		fprintf(f, "#%" PRIu32, id);
	json_decref(j);
}

static void violation(struct checker *k, int inv, uint32_t c, uint32_t s, uint32_t link,
		      int64_t t, const char *fmt, ...)
{
	char what[256];
	char *detail = NULL;
	size_t dlen = 0;
	FILE *mf;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	k->res->total++;
	k->res->by_inv[inv]++;

	mf = open_memstream(&detail, &dlen);
	if (mf) {
		fprintf(mf, "run %" PRId64 ": invariant %d: %s, ", k->run, inv, what);
		if (s != DL_NONE) {
			fputs("devices ", mf);
			put_name(k, mf, c);
			fputs(" and ", mf);
			put_name(k, mf, s);
		} else {
			fputs("device ", mf);
			put_name(k, mf, c);
		}
		fprintf(mf, ", t=%" PRId64, t);
		fclose(mf);
	}
	if (detail && k->verbose &&
	    (k->verbose > 1 || k->res->by_inv[inv] <= PRINT_CAP)) {
		fprintf(k->vout ? k->vout : k->out, "%s\n", detail);
		if (k->verbose == 1 && k->res->by_inv[inv] == PRINT_CAP)
			fprintf(k->vout ? k->vout : k->out, "run %" PRId64 ": invariant %d: further violations not printed"
				" (see the violations table)\n", k->run, inv);
	}
	if (k->store && k->ins) {
		sqlite3_bind_int64(k->ins, 1, k->run);
		sqlite3_bind_int(k->ins, 2, inv);
		if (c == DL_NONE)
			sqlite3_bind_null(k->ins, 3);
		else
			sqlite3_bind_int64(k->ins, 3, c);
		if (link == DL_NONE)
			sqlite3_bind_null(k->ins, 4);
		else
			sqlite3_bind_int64(k->ins, 4, link);
		sqlite3_bind_int64(k->ins, 5, t);
		if (detail)
			sqlite3_bind_text(k->ins, 6, detail, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_text(k->ins, 6, what, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(k->ins) != SQLITE_DONE)
			k->store = 0;
		sqlite3_reset(k->ins);
	}
	free(detail);
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

static int present(const struct checker *k, uint32_t d)
{
	return !k->hot[d].deleted && (k->hot[d].registered || !k->have_register);
}

/*
 * Does the device run PM callbacks?  Only with a driver bound: the kernel
 * takes the driver's dev_pm_ops only "if (dev->driver && dev->driver->pm)"
 * and the platform bus's own return 0 without a driver (6.12 and 7.3
 * drivers/base/power/main.c, platform.c; sim/engine/oploop.h dl_pm_part()).
 * A device without one has no callback to order against.
 */
static int runs_pm(const struct checker *k, uint32_t d)
{
	return !k->have_probe || k->hot[d].drv == DRV_BOUND;
}

#define NO_DRIVER_DEPTH 64      /* how deep suspended_in()/resumed_in() look through such devices */
static int pm_counts(const struct checker *k, const struct clink *L);

/*
 * One query of suspended_in()/resumed_in() (@depth 0 starts it) visits a
 * device without a driver once: a device seen again either answered 1
 * already (a 0 ends the query) or is on the path (a cycle in a damaged log),
 * so it adds nothing.  Without this the walk is exponential in the depth on
 * diamonds and cycles.
 */
static int nd_first_visit(struct checker *k, struct cdev *D, int depth)
{
	if (depth == 0 && ++k->nd_epoch == 0) {
		for (uint32_t i = 0; i < k->ndev; i++)
			k->dev[i].nd_seen = 0;
		k->nd_epoch = 1;
	}
	if (D->nd_seen == k->nd_epoch)
		return 0;
	D->nd_seen = k->nd_epoch;
	return 1;
}

/*
 * Is @D done with suspend phase @p as far as the log shows?  A device with
 * no driver logs no callback, but the PM core still suspends it after its
 * children and consumers (dpm_wait_for_subordinate()): it is done once they
 * are, so a chain through it still orders its ends.
 */
static int suspended_in(struct checker *k, uint32_t d, int p, int depth)
{
	struct cdev *D = &k->dev[d];

	if (runs_pm(k, d))
		return (k->hot[d].susp >> p) & 1;
	if (!nd_first_visit(k, D, depth))
		return 1;
	for (uint32_t i = 0; depth < NO_DRIVER_DEPTH && i < D->children.n; i++) {
		uint32_t c = D->children.v[i];

		if (present(k, c) && !suspended_in(k, c, p, depth + 1))
			return 0;
	}
	for (uint32_t i = 0; depth < NO_DRIVER_DEPTH && i < D->sup.n; i++) {
		const struct clink *L = &k->link[D->sup.v[i]];

		if (pm_counts(k, L) && present(k, L->c) && !suspended_in(k, L->c, p, depth + 1))
			return 0;
	}
	return 1;
}

/* Is @D resumed from suspend phase @m (its mirror)?  Without a driver: once its parent and suppliers are. */
static int resumed_in(struct checker *k, uint32_t d, int m, int depth)
{
	struct cdev *D = &k->dev[d];

	if (runs_pm(k, d))
		return !((k->hot[d].susp >> m) & 1);
	if (!nd_first_visit(k, D, depth))
		return 1;
	if (depth < NO_DRIVER_DEPTH && D->parent != DL_NONE && D->parent < k->ndev &&
	    present(k, D->parent) && !resumed_in(k, D->parent, m, depth + 1))
		return 0;
	for (uint32_t i = 0; depth < NO_DRIVER_DEPTH && i < D->cons.n; i++) {
		const struct clink *L = &k->link[D->cons.v[i]];

		if (pm_counts(k, L) && present(k, L->s) && !resumed_in(k, L->s, m, depth + 1))
			return 0;
	}
	return 1;
}

/*
 * Links that order PM callbacks (dpm_wait_for_suppliers()/consumers()):
 * every link that is not DORMANT (STATELESS ones count); from 6.18 not
 * those whose flags are SYNC_STATE_ONLY and markers only
 * (device_link_flag_is_sync_state_only() in 7.3's power/main.c).
 */
static int pm_counts(const struct checker *k, const struct clink *L)
{
	const uint32_t markers = DL_FLAG_INFERRED | DL_FLAG_CYCLE | DL_FLAG_MANAGED;

	if (k->pm_skips_sso && (L->flags & ~markers) == DL_FLAG_SYNC_STATE_ONLY)
		return 0;
	return L->live && L->state != DL_STATE_DORMANT;
}

/*
 * Links that gate probing: managed, without the SYNC_STATE_ONLY bit
 * (device_links_check_suppliers()).  CYCLE exempts nothing by itself.
 */
static int probe_counts(const struct clink *L)
{
	return L->live && (L->flags & DL_FLAG_MANAGED) && !(L->flags & DL_FLAG_SYNC_STATE_ONLY);
}

static int unbind_counts(const struct clink *L)
{
	return L->live && (L->flags & DL_FLAG_MANAGED) && !(L->flags & DL_FLAG_SYNC_STATE_ONLY);
}

/* Links of invariant 5: PM_RUNTIME, not SYNC_STATE_ONLY. */
static int rpm_counts(const struct clink *L)
{
	return L->live && (L->flags & DL_FLAG_PM_RUNTIME) && !(L->flags & DL_FLAG_SYNC_STATE_ONLY);
}

/* A new DFS visitation mark (dev[].stamp); all cleared when it wraps. */
static void new_stamp(struct checker *k)
{
	if (++k->stamp == 0) {
		for (uint32_t i = 0; i < k->ndev; i++)
			k->dev[i].stamp = 0;
		k->stamp = 1;
	}
}

/*
 * Edges of invariant 6: parent -> child, supplier -> consumer (not SSO).  A
 * CYCLE link is an edge like any other: device_is_dependent() skips only
 * SYNC_STATE_ONLY links, so a link that is CYCLE and not SSO cannot close a
 * cycle either.  1: FROM reaches TO; 0: it does not; -1: gave up (budget).
 */
static int reaches(struct checker *k, uint32_t from, uint32_t to)
{
	uint32_t budget = DFS_BUDGET;

	new_stamp(k);
	k->stack.n = 0;
	if (vec_push(&k->stack, from))
		return 0;
	k->dev[from].stamp = k->stamp;
	while (k->stack.n) {
		uint32_t d = k->stack.v[--k->stack.n];
		struct cdev *D = &k->dev[d];

		if (d == to)
			return 1;
		if (!budget--)
			return -1;
		for (uint32_t i = 0; i < D->children.n; i++) {
			uint32_t x = D->children.v[i];

			if (k->dev[x].stamp != k->stamp && !k->hot[x].deleted) {
				k->dev[x].stamp = k->stamp;
				if (vec_push(&k->stack, x))
					return 0;
			}
		}
		for (uint32_t i = 0; i < D->sup.n; i++) {
			struct clink *L = &k->link[D->sup.v[i]];

			if (!L->live || (L->flags & DL_FLAG_SYNC_STATE_ONLY))
				continue;
			if (k->dev[L->c].stamp != k->stamp) {
				k->dev[L->c].stamp = k->stamp;
				if (vec_push(&k->stack, L->c))
					return 0;
			}
		}
	}
	return 0;
}

/*
 * Invariant 6 without a whole search at every link add: dynamic topological
 * order after Pearce and Kelly ("A dynamic topological sort algorithm for
 * directed acyclic graphs", JEA 2006).  The edges reaches() walks (parent ->
 * child, supplier -> consumer over live links that are not SYNC_STATE_ONLY;
 * a deleted child's edge is kept, a superset) are kept in a topological
 * order, dev[].ord.  Every edge goes from a lower to a higher position, so
 * TO can be reached from FROM only through devices placed between the two:
 * the search looks there alone, and a link whose supplier already stands
 * before its consumer needs none.  A new edge S -> C with C before S moves
 * the devices that reach S (down to C's position) before those C reaches
 * (up to S's), each set in its old order, into the positions they held:
 * only the region between the two ends changes.
 */
static int topo_edge(const struct clink *L)
{
	return L->live && !(L->flags & DL_FLAG_SYNC_STATE_ONLY);
}

/* An edge of the first order: a link of the links table that is not SYNC_STATE_ONLY there. */
static int topo_table_edge(const struct clink *L)
{
	return L->known && L->c != L->s && !(L->flags & DL_FLAG_SYNC_STATE_ONLY);
}

/*
 * A topological order of the parents and, WITH_LINKS, of every link of the
 * links table (Kahn): 1, or 0 if there is a cycle.
 */
static int topo_kahn(struct checker *k, int with_links, uint32_t *queue, uint32_t *indeg)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t d = 0; d < k->ndev; d++)
		indeg[d] = k->dev[d].parent != DL_NONE;
	for (uint32_t l = 0; with_links && l < k->nlink; l++)
		if (topo_table_edge(&k->link[l]))
			indeg[k->link[l].c]++;
	for (uint32_t d = 0; d < k->ndev; d++)
		if (!indeg[d])
			queue[tail++] = d;
	while (head < tail) {
		const struct cdev *D = &k->dev[queue[head]];

		k->dev[queue[head]].ord = head;
		head++;
		for (uint32_t i = 0; i < D->children.n; i++)
			if (!--indeg[D->children.v[i]])
				queue[tail++] = D->children.v[i];
		for (uint32_t i = 0; with_links && i < D->sup.n; i++) {
			const struct clink *L = &k->link[D->sup.v[i]];

			if (topo_table_edge(L) && !--indeg[L->c])
				queue[tail++] = L->c;
		}
	}
	return tail == k->ndev;
}

/*
 * The first order: one that every link of the links table already keeps, so
 * that a log without a cycle never reorders; else (a cycle among them) the
 * parents' alone; else (a parent cycle: a bad log) none.
 */
static void topo_init(struct checker *k)
{
	uint32_t *queue = malloc((k->ndev ? k->ndev : 1) * sizeof(*queue));
	uint32_t *indeg = malloc((k->ndev ? k->ndev : 1) * sizeof(*indeg));

	k->fwd_from = DL_NONE;
	k->topo_ok = queue && indeg && (topo_kahn(k, 1, queue, indeg) || topo_kahn(k, 0, queue, indeg));
	free(queue);
	free(indeg);
}

static int topo_visit(struct checker *k, uint32_t x, int ok)
{
	if (!ok || k->dev[x].stamp == k->stamp)
		return 0;
	k->dev[x].stamp = k->stamp;
	return vec_push(&k->stack, x);
}

/*
 * The devices FROM reaches without passing TO's position, into k->fwd: 1 TO
 * is among them, 0 it is not, -1 over budget or out of memory.
 */
static int topo_forward(struct checker *k, uint32_t from, uint32_t to)
{
	uint32_t ub = k->dev[to].ord, budget = DFS_BUDGET;

	k->fwd.n = 0;
	k->fwd_from = DL_NONE;
	k->stack.n = 0;
	new_stamp(k);
	if (k->dev[from].ord <= ub && topo_visit(k, from, 1))
		return -1;
	while (k->stack.n) {
		uint32_t d = k->stack.v[--k->stack.n];
		const struct cdev *D = &k->dev[d];

		if (d == to)
			return 1;
		if (!budget-- || vec_push(&k->fwd, d))
			return -1;
		for (uint32_t i = 0; i < D->children.n; i++) {
			uint32_t x = D->children.v[i];

			if (topo_visit(k, x, k->dev[x].ord <= ub))
				return -1;
		}
		for (uint32_t i = 0; i < D->sup.n; i++) {
			const struct clink *L = &k->link[D->sup.v[i]];

			if (topo_visit(k, L->c, topo_edge(L) && k->dev[L->c].ord <= ub))
				return -1;
		}
	}
	k->fwd_from = from;
	k->fwd_to = to;
	return 0;
}

/* The devices that reach FROM from positions after LB, into k->bwd: 0, or -1. */
static int topo_backward(struct checker *k, uint32_t from, uint32_t lb)
{
	uint32_t budget = DFS_BUDGET;

	k->bwd.n = 0;
	k->stack.n = 0;
	new_stamp(k);
	if (topo_visit(k, from, 1))
		return -1;
	while (k->stack.n) {
		uint32_t d = k->stack.v[--k->stack.n];
		const struct cdev *D = &k->dev[d];

		if (!budget-- || vec_push(&k->bwd, d))
			return -1;
		if (D->parent != DL_NONE && topo_visit(k, D->parent, k->dev[D->parent].ord > lb))
			return -1;
		for (uint32_t i = 0; i < D->cons.n; i++) {
			const struct clink *L = &k->link[D->cons.v[i]];

			if (topo_visit(k, L->s, topo_edge(L) && k->dev[L->s].ord > lb))
				return -1;
		}
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* k->bwd, then k->fwd, each in its old order, into the positions they held together. */
static int topo_reorder(struct checker *k)
{
	uint32_t nb = k->bwd.n, n = nb + k->fwd.n;
	uint64_t *key, *pos;

	if (2 * n > k->nkeys) {
		uint64_t *nk = realloc(k->keys, 2 * (size_t)n * sizeof(*nk));

		if (!nk)
			return -1;
		k->keys = nk;
		k->nkeys = 2 * n;
	}
	key = k->keys;
	pos = k->keys + n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t d = i < nb ? k->bwd.v[i] : k->fwd.v[i - nb];

		key[i] = (uint64_t)k->dev[d].ord << 32 | d;
		pos[i] = k->dev[d].ord;
	}
	qsort(key, nb, sizeof(*key), cmp_u64);
	qsort(key + nb, n - nb, sizeof(*key), cmp_u64);
	qsort(pos, n, sizeof(*pos), cmp_u64);
	for (uint32_t i = 0; i < n; i++)
		k->dev[(uint32_t)key[i]].ord = (uint32_t)pos[i];
	return 0;
}

/*
 * The edge S -> C joins the graph: the order is mended.  HAVE_FWD: k->fwd
 * may hold the search from C for S made just before (reaches_fast()).
 */
static void topo_insert(struct checker *k, uint32_t s, uint32_t c, int have_fwd)
{
	if (!k->topo_ok || k->dev[s].ord < k->dev[c].ord)
		return;
	if (!(have_fwd && k->fwd_from == c && k->fwd_to == s) && topo_forward(k, c, s) != 0)
		k->topo_ok = 0;         /* a cycle (or no budget): searches are whole from now on */
	else if (topo_backward(k, s, k->dev[c].ord) || topo_reorder(k))
		k->topo_ok = 0;
	k->fwd_from = DL_NONE;
}

/* reaches() (no link skipped) through the order while it holds. */
static int reaches_fast(struct checker *k, uint32_t from, uint32_t to)
{
	if (k->topo_ok && from != to && topo_forward(k, from, to) == 0)
		return 0;
	return reaches(k, from, to);
}

/*
 * A prepare or complete callback of @d starts on thread @worker (-1 if the
 * log does not say): dpm_prepare() walks dpm_list forward and
 * dpm_complete() the prepared list backward (it holds the prepared devices
 * in the order they were prepared), both on the PM thread alone, one
 * callback at a time (kernel 6.12 and 7.3, drivers/base/power/main.c).  A
 * prepare after a complete, or the reverse, starts a new walk.
 */
static void serial_start(struct checker *k, uint32_t d, int p, int64_t worker, int64_t t)
{
	struct cdev *D = &k->dev[d];
	const char *ph = dl_phase_name((unsigned)p);

	if (k->serial_phase != p) {
		k->serial_phase = p;
		k->serial_last = p == DL_PH_PREPARE ? 0 : UINT64_MAX;
		k->serial_dev = DL_NONE;
		k->serial_worker = -1;
	}
	if (k->serial_open != DL_NONE && k->serial_open != d)
		violation(k, 3, d, k->serial_open, DL_NONE, t, "%s starts while another device's"
			  " %s runs (one callback at a time)", ph, ph);
	if (worker >= 0 && k->serial_worker >= 0 && worker != k->serial_worker)
		violation(k, 3, d, DL_NONE, DL_NONE, t, "%s on worker %" PRId64 ", the walk's"
			  " earlier ones on worker %" PRId64 " (one thread)", ph, worker,
			  k->serial_worker);
	if (worker >= 0 && k->serial_worker < 0)
		k->serial_worker = worker;
	if (p == DL_PH_PREPARE) {
		if (D->dpm_pos && k->serial_dev != DL_NONE && D->dpm_pos <= k->serial_last)
			violation(k, 3, d, k->serial_dev, DL_NONE, t, "prepare not in dpm_list order:"
				  " after a device that follows it in dpm_list");
		if (D->dpm_pos) {
			k->serial_last = D->dpm_pos;
			k->serial_dev = d;
		}
		D->prep_seq = ++k->prep_clock;
	} else {
		if (D->prep_seq && k->serial_dev != DL_NONE && D->prep_seq >= k->serial_last)
			violation(k, 3, d, k->serial_dev, DL_NONE, t, "complete not in the reverse"
				  " of the prepare order: after a device prepared after it");
		if (D->prep_seq) {
			k->serial_last = D->prep_seq;
			k->serial_dev = d;
		}
	}
	k->serial_open = d;
}

static void on_suspend_start(struct checker *k, uint32_t d, int p, int64_t t)
{
	struct cdev *D = &k->dev[d];
	struct chot *H = &k->hot[d];

	if (H->in_phase >= 0)
		violation(k, 4, d, DL_NONE, DL_NONE, t, "suspend_start in %s while still in %s",
			  dl_phase_name((unsigned)p), dl_phase_name((unsigned)H->in_phase));
	if (H->susp & (1u << p))
		violation(k, 4, d, DL_NONE, DL_NONE, t, "suspended twice in %s without resume",
			  dl_phase_name((unsigned)p));
	/*
	 * dpm_prepare() walks dpm_list forward on the main thread and waits for
	 * no one: parents and suppliers are prepared first (kernel/6.12
	 * drivers/base/power/main.c), so prepare has no dependency rule.
	 */
	for (uint32_t i = 0; p != DL_PH_PREPARE && i < D->sup.n; i++) {
		uint32_t l = D->sup.v[i];
		struct clink *L = &k->link[l];

		if (pm_counts(k, L) && present(k, L->c) && !suspended_in(k, L->c, p, 0))
			violation(k, 3, L->c, d, l, t, "%s: supplier's suspend_start before the"
				  " consumer's suspend_end (link %" PRIu32 ")",
				  dl_phase_name((unsigned)p), l);
	}
	for (uint32_t i = 0; p != DL_PH_PREPARE && i < D->children.n; i++) {
		uint32_t c = D->children.v[i];

		if (present(k, c) && !suspended_in(k, c, p, 0))
			violation(k, 3, c, d, DL_NONE, t, "%s: parent's suspend_start before the"
				  " child's suspend_end", dl_phase_name((unsigned)p));
	}
	H->in_phase = (int8_t)p;
}

static void on_resume_start(struct checker *k, uint32_t d, int q, int64_t t)
{
	struct cdev *D = &k->dev[d];
	struct chot *H = &k->hot[d];
	int m = DL_PH_COMPLETE - q;     /* the suspend phase this one undoes */

	if (H->in_phase >= 0)
		violation(k, 4, d, DL_NONE, DL_NONE, t, "resume_start in %s while still in %s",
			  dl_phase_name((unsigned)q), dl_phase_name((unsigned)H->in_phase));
	if (!(H->susp & (1u << m)))
		violation(k, 4, d, DL_NONE, DL_NONE, t, "%s of a device not suspended in %s",
			  dl_phase_name((unsigned)q), dl_phase_name((unsigned)m));
	/* dpm_complete() walks the list backward and waits for no one either */
	for (uint32_t i = 0; q != DL_PH_COMPLETE && i < D->cons.n; i++) {
		uint32_t l = D->cons.v[i];
		struct clink *L = &k->link[l];

		if (pm_counts(k, L) && present(k, L->s) && !resumed_in(k, L->s, m, 0))
			violation(k, 3, d, L->s, l, t, "%s: consumer's resume_start before the"
				  " supplier's resume_end (link %" PRIu32 ")",
				  dl_phase_name((unsigned)q), l);
	}
	if (q != DL_PH_COMPLETE && D->parent != DL_NONE && D->parent < k->ndev) {
		if (present(k, D->parent) && !resumed_in(k, D->parent, m, 0))
			violation(k, 3, d, D->parent, DL_NONE, t, "%s: child's resume_start before"
				  " the parent's resume_end", dl_phase_name((unsigned)q));
	}
	H->in_phase = (int8_t)q;
}

/*
 * Invariant 4, membership: dpm_suspend*() runs every phase for every device
 * on the list it walks (dpm_prepare() moves each prepared device to
 * dpm_prepared_list, each later phase takes them all from the list before),
 * so a device that was prepared and is still present when the suspend ends
 * has run suspend, suspend_late and suspend_noirq; and dpm_resume*() walks
 * the same lists back, so when a resume ends nothing present is still
 * suspended in any phase.  Called when the direction changes and at the end
 * of the run; a cycle whose suspend failed is left to the rollback rules.
 */
static void check_membership(struct checker *k, int64_t t)
{
	const uint8_t all = (1u << DL_PH_SUSPEND) | (1u << DL_PH_SUSPEND_LATE) |
			    (1u << DL_PH_SUSPEND_NOIRQ);

	if (k->pm_failed)
		return;
	for (uint32_t d = 0; d < k->ndev; d++) {
		struct chot *H = &k->hot[d];
		int p = 0;

		if (!H->susp || !present(k, d))
			continue;
		if (k->pm_dir == PM_SUSPENDING) {
			if (!(H->susp & (1u << DL_PH_PREPARE)) || (H->susp & all) == all)
				continue;
			while (H->susp & (1u << p))
				p++;
			violation(k, 4, d, DL_NONE, DL_NONE, t, "suspend ended without the"
				  " device's %s callback", dl_phase_name((unsigned)p));
		} else if (k->pm_dir == PM_RESUMING) {
			while (!(H->susp & (1u << p)))
				p++;
			violation(k, 4, d, DL_NONE, DL_NONE, t, "resume ended with the device"
				  " still suspended in %s", dl_phase_name((unsigned)p));
		}
	}
}

/* A PM callback of direction DIR starts: the other direction, if any, has ended. */
static void pm_direction(struct checker *k, int dir, int64_t t)
{
	if (k->pm_dir == dir)
		return;
	check_membership(k, t);
	if (dir == PM_SUSPENDING)
		k->pm_failed = 0;
	k->pm_dir = dir;
}

static void check_suppliers_bound(struct checker *k, uint32_t d, int64_t t, const char *what)
{
	struct cdev *D = &k->dev[d];

	for (uint32_t i = 0; i < D->cons.n; i++) {
		uint32_t l = D->cons.v[i];
		struct clink *L = &k->link[l];

		if (probe_counts(L) && k->hot[L->s].drv != DRV_BOUND)
			violation(k, 1, d, L->s, l, t, "consumer's %s while the supplier is not bound"
				  " (link %" PRIu32 ", %s)", what, l, dl_link_state_name(L->state));
	}
}

/* Invariant 6, second half: the logged reason holds, as far as the log shows it. */
static void check_refusal(struct checker *k, uint32_t c, uint32_t s, int have_flags,
			  uint32_t flags, const char *why, int64_t t)
{
	int r = 0, ok = 1;

	for (unsigned i = 1; why && i < DL_REFUSE_COUNT; i++)
		if (!strcmp(why, dl_refusal_name(i)))
			r = (int)i;
	if (!r) {
		violation(k, 6, c, s, DL_NONE, t, "link refused without a known reason ('%s')",
			  why ? why : "NULL");
		return;
	}
	if (c == DL_NONE || s == DL_NONE || c >= k->ndev || s >= k->ndev)
		return;
	switch (r) {
	case DL_REFUSE_SELF_LINK:
		ok = c == s;
		break;
	case DL_REFUSE_INVALID_FLAGS:
		ok = !have_flags || (flags & ~DL_ADD_VALID_FLAGS);
		break;
	case DL_REFUSE_STATELESS_MANAGED:
		ok = !have_flags || ((flags & DL_FLAG_STATELESS) && (flags & DL_MANAGED_LINK_FLAGS));
		break;
	case DL_REFUSE_AUTOPROBE_AUTOREMOVE:
		ok = !have_flags || ((flags & DL_FLAG_AUTOPROBE_CONSUMER) &&
				     (flags & (DL_FLAG_AUTOREMOVE_CONSUMER | DL_FLAG_AUTOREMOVE_SUPPLIER)));
		break;
	case DL_REFUSE_SYNC_STATE_ONLY_FLAGS:
		ok = !have_flags || (flags & DL_FLAG_SYNC_STATE_ONLY);
		break;
	case DL_REFUSE_RPM_RESUME_FAILED:
		ok = !have_flags || ((flags & DL_FLAG_PM_RUNTIME) && (flags & DL_FLAG_RPM_ACTIVE));
		break;
	case DL_REFUSE_SUPPLIER_UNREGISTERED:
		ok = !k->have_register || !k->hot[s].registered || k->hot[s].deleted;
		break;
	case DL_REFUSE_REVERSE_DEPENDENCY:
		ok = c == s || reaches_fast(k, c, s) != 0;
		break;
	case DL_REFUSE_CONSUMER_BOUND:
		ok = k->hot[c].drv == DRV_BOUND || k->hot[c].drv == DRV_UNBINDING;
		break;
	default:
		break;
	}
	if (!ok)
		violation(k, 6, c, s, DL_NONE, t, "link refused as '%s', which the log does not"
			  " bear out", why);
}

/*
 * Invariant 7: the replayed dpm_list (register appends, dpm_move moves to
 * the tail, device_del removes) is a topological order of parent -> child and
 * supplier -> consumer over the live links that take part in it (all but
 * SYNC_STATE_ONLY, as device_reorder_to_tail() skips those).  The core
 * reorders right after logging a link_add, so the order is checked when the
 * PM core would walk it, at the first callback after any change, and at the
 * end of the run.  Logs without register events carry no list: skipped.
 */
static void check_dpm_order(struct checker *k, int64_t t)
{
	if (!k->dpm_dirty || !k->have_register)
		return;
	k->dpm_dirty = 0;
	for (uint32_t d = 0; d < k->ndev; d++) {
		const struct cdev *D = &k->dev[d];

		if (!D->dpm_pos)
			continue;
		if (D->parent != DL_NONE && D->parent < k->ndev && k->dev[D->parent].dpm_pos &&
		    k->dev[D->parent].dpm_pos >= D->dpm_pos)
			violation(k, 7, d, D->parent, DL_NONE, t, "dpm_list has the child before"
				  " its parent");
		for (uint32_t i = 0; i < D->cons.n; i++) {
			uint32_t l = D->cons.v[i];
			const struct clink *L = &k->link[l];

			if (!L->live || L->c != d || (L->flags & DL_FLAG_SYNC_STATE_ONLY) ||
			    !k->dev[L->s].dpm_pos)
				continue;
			if (k->dev[L->s].dpm_pos >= D->dpm_pos)
				violation(k, 7, d, L->s, l, t, "dpm_list has the consumer before its"
					  " supplier (link %" PRIu32 ")", l);
		}
	}
}

/*
 * One event as the rules see it (on_event()): its row's columns, the
 * phase column parsed once by the verification (NAME: the phase of a PM
 * event, the state of a link_state, -1) and kept as text (TEXT: a
 * link_refused's reason).
 */
struct ev {
	int kind;
	uint32_t d, l, aux;
	int have_flags;
	uint32_t flags;
	int arg;                /* -1: NULL */
	int name;
	const char *text;
	int err;
	int64_t t;
	int64_t worker;         /* -1: not known */
};

/* device_add(): registered, put at the tail of dpm_list, under its parent. */
static void on_register(struct checker *k, const struct ev *e)
{
	struct cdev *D = get_dev(k, e->d);

	if (!D)
		return;
	k->hot[e->d].registered = 1;
	k->hot[e->d].deleted = 0;
	if (e->aux != DL_NONE && set_parent(k, e->d, e->aux))
		topo_insert(k, e->aux, e->d, 0);
	D->dpm_pos = ++k->dpm_clock;
	k->dpm_dirty = 1;
}

static void on_device_del(struct checker *k, const struct ev *e)
{
	struct cdev *D = get_dev(k, e->d);

	if (D) {
		k->hot[e->d].deleted = 1;
		D->dpm_pos = 0;
	}
}

/* device_pm_move_last(): to the tail of dpm_list. */
static void on_dpm_move(struct checker *k, const struct ev *e)
{
	struct cdev *D = get_dev(k, e->d);

	if (D && D->dpm_pos) {
		D->dpm_pos = ++k->dpm_clock;
		k->dpm_dirty = 1;
	}
}

/* The state a link_add without one (an older log) gives its link. */
static uint8_t link_add_state(const struct checker *k, const struct clink *L, uint32_t s)
{
	if (!(L->flags & DL_FLAG_MANAGED))
		return DL_STATE_NONE;
	return k->hot[s].drv == DRV_BOUND ? DL_STATE_AVAILABLE : DL_STATE_DORMANT;
}

/* Invariant 6: a new link must not close a cycle of links and parents. */
static void on_link_add(struct checker *k, const struct ev *e)
{
	struct clink *L = get_link(k, e->l);
	int was_edge, searched = 0;

	if (!L || !get_dev(k, e->d) || !get_dev(k, e->aux))
		return;
	was_edge = topo_edge(L);
	know_link(k, e->l, e->d, e->aux, e->have_flags ? e->flags : L->flags);
	if (e->arg >= 0 && e->arg < DL_STATE_COUNT)
		L->state = (uint8_t)e->arg;
	else if (!L->live)
		L->state = link_add_state(k, L, e->aux);
	/* (the link is not live yet: the search cannot take it) */
	if (!L->live && !(L->flags & DL_FLAG_SYNC_STATE_ONLY) &&
	    (searched = 1, reaches_fast(k, e->d, e->aux) == 1))
		violation(k, 6, e->d, e->aux, e->l, e->t, "link %" PRIu32 " closes a cycle of links"
			  " and parents", e->l);
	if (!L->live)
		L->rpm_ref = (L->flags & DL_FLAG_RPM_ACTIVE) ? 1 : 0;
	L->live = 1;
	if (!was_edge && topo_edge(L))
		topo_insert(k, L->s, L->c, searched);
	k->dpm_dirty = 1;
}

static void on_link_del(struct checker *k, const struct ev *e)
{
	struct clink *L = get_link(k, e->l);

	if (L)
		L->live = 0;
}

static void on_link_state(struct checker *k, const struct ev *e)
{
	struct clink *L = get_link(k, e->l);
	int st = e->name >= 0 ? e->name : e->arg, was_edge;

	if (!L)
		return;
	if (st >= 0 && st < DL_STATE_COUNT)
		L->state = (uint8_t)st;
	was_edge = topo_edge(L);
	if (e->have_flags && L->known)
		L->flags = e->flags;
	if (!was_edge && topo_edge(L))         /* its SYNC_STATE_ONLY bit cleared */
		topo_insert(k, L->s, L->c, 0);
}

static void on_link_refused(struct checker *k, const struct ev *e)
{
	check_refusal(k, e->d, e->aux, e->have_flags, e->flags, e->text, e->t);
}

/* Invariant 1: probing starts only while its managed suppliers are bound. */
static void on_probe_start(struct checker *k, const struct ev *e)
{
	struct chot *D = get_hot(k, e->d);

	if (!D)
		return;
	check_suppliers_bound(k, e->d, e->t, "probe_start");
	D->drv = DRV_PROBING;
}

static void on_probe_end(struct checker *k, const struct ev *e)
{
	struct chot *D = get_hot(k, e->d);

	if (!D)
		return;
	if (e->err == 0) {
		check_suppliers_bound(k, e->d, e->t, "probe_end (bound)");
		D->drv = DRV_BOUND;
	} else {
		D->drv = DRV_NONE;
	}
}

static void on_probe_defer(struct checker *k, const struct ev *e)
{
	struct chot *D = get_hot(k, e->d);

	if (D && D->drv == DRV_PROBING)
		D->drv = DRV_NONE;
}

/* Invariant 2: a supplier unbinds after its consumers. */
static void on_unbind_start(struct checker *k, const struct ev *e)
{
	struct chot *D = get_hot(k, e->d);

	if (!D)
		return;
	for (uint32_t i = 0; i < k->dev[e->d].sup.n; i++) {
		uint32_t x = k->dev[e->d].sup.v[i];
		struct clink *X = &k->link[x];
		uint8_t cd = k->hot[X->c].drv;

		if (unbind_counts(X) && (cd == DRV_BOUND || cd == DRV_UNBINDING))
			violation(k, 2, X->c, e->d, x, e->t, "supplier's unbind_start before the"
				  " consumer's unbind_end (link %" PRIu32 ")", x);
	}
	D->drv = DRV_UNBINDING;
}

static void on_unbind_end(struct checker *k, const struct ev *e)
{
	struct chot *D = get_hot(k, e->d);

	if (D)
		D->drv = DRV_NONE;
}

static int is_suspend_kind(int kind)
{
	return kind == DL_EV_SUSPEND_START || kind == DL_EV_SUSPEND_END;
}

/* A PM event's phase, or -1: none, or one of the other direction (invariant 4). */
static int pm_phase(struct checker *k, const struct ev *e)
{
	int p = e->name >= 0 ? e->name : e->arg;

	if (p < 0 || p >= DL_PH_COUNT)
		return -1;
	if (is_suspend_kind(e->kind) && p > DL_PH_SUSPEND_NOIRQ) {
		violation(k, 4, e->d, DL_NONE, DL_NONE, e->t, "%s in resume phase %s",
			  dl_ev_kind_name((unsigned)e->kind), dl_phase_name((unsigned)p));
		return -1;
	}
	if (!is_suspend_kind(e->kind) && p < DL_PH_RESUME_NOIRQ) {
		violation(k, 4, e->d, DL_NONE, DL_NONE, e->t, "%s in suspend phase %s",
			  dl_ev_kind_name((unsigned)e->kind), dl_phase_name((unsigned)p));
		return -1;
	}
	return p;
}

/* Invariants 3, 4 and 7 at a PM callback's start (suspend_start, resume_start). */
static void on_pm_start(struct checker *k, const struct ev *e)
{
	struct chot *D = get_hot(k, e->d);
	int p;

	if (!D || (p = pm_phase(k, e)) < 0)
		return;
	check_dpm_order(k, e->t);
	if (!runs_pm(k, e->d))
		violation(k, 4, e->d, DL_NONE, DL_NONE, e->t, "%s in %s of a device with no driver"
			  " bound (no driver, no PM callback)", dl_ev_kind_name((unsigned)e->kind),
			  dl_phase_name((unsigned)p));
	if ((e->kind == DL_EV_SUSPEND_START && p == DL_PH_PREPARE) ||
	    (e->kind == DL_EV_RESUME_START && p == DL_PH_COMPLETE))
		serial_start(k, e->d, p, e->worker, e->t);
	else if (k->serial_open == e->d && (p == DL_PH_PREPARE || p == DL_PH_COMPLETE))
		k->serial_open = DL_NONE;
	if (e->kind == DL_EV_SUSPEND_START) {
		pm_direction(k, PM_SUSPENDING, e->t);
		on_suspend_start(k, e->d, p, e->t);
	} else {
		pm_direction(k, PM_RESUMING, e->t);
		on_resume_start(k, e->d, p, e->t);
	}
}

/* Invariant 4 at a PM callback's end (suspend_end, resume_end). */
static void on_pm_end(struct checker *k, const struct ev *e)
{
	struct chot *D = get_hot(k, e->d);
	int p;

	if (!D || (p = pm_phase(k, e)) < 0)
		return;
	if (k->serial_open == e->d && (p == DL_PH_PREPARE || p == DL_PH_COMPLETE))
		k->serial_open = DL_NONE;
	if (D->in_phase != p)
		violation(k, 4, e->d, DL_NONE, DL_NONE, e->t, "%s in %s without its start",
			  dl_ev_kind_name((unsigned)e->kind), dl_phase_name((unsigned)p));
	D->in_phase = -1;
	/* a failed suspend callback leaves the device not suspended in p */
	if (e->kind == DL_EV_SUSPEND_END && e->err != 0)
		k->pm_failed = 1;
	if (e->kind == DL_EV_SUSPEND_END && e->err == 0)
		D->susp |= (uint8_t)(1u << p);
	else
		D->susp &= (uint8_t)~(1u << (DL_PH_COMPLETE - p));
}

/* Invariant 5: a consumer resumes only while its suppliers are active. */
static void on_rpm_resume(struct checker *k, const struct ev *e)
{
	struct chot *D = get_hot(k, e->d);

	if (!D)
		return;
	for (uint32_t i = 0; i < k->dev[e->d].cons.n; i++) {
		uint32_t x = k->dev[e->d].cons.v[i];
		struct clink *X = &k->link[x];

		if (!rpm_counts(X))
			continue;
		if (k->hot[X->s].rpm == RPM_SUSPENDED_)
			violation(k, 5, e->d, X->s, x, e->t, "consumer runtime-resumed while the"
				  " supplier is runtime-suspended (link %" PRIu32 ")", x);
		X->rpm_ref = 1;
	}
	D->rpm = RPM_ACTIVE_;
}

static void on_rpm_suspend(struct checker *k, const struct ev *e)
{
	struct chot *D = get_hot(k, e->d);

	if (!D)
		return;
	for (uint32_t i = 0; i < k->dev[e->d].sup.n; i++) {
		uint32_t x = k->dev[e->d].sup.v[i];
		struct clink *X = &k->link[x];

		if (rpm_counts(X) && X->rpm_ref && k->hot[X->c].rpm == RPM_ACTIVE_)
			violation(k, 5, X->c, e->d, x, e->t, "supplier runtime-suspended while the"
				  " consumer is runtime-active (link %" PRIu32 ")", x);
	}
	for (uint32_t i = 0; i < k->dev[e->d].cons.n; i++)
		k->link[k->dev[e->d].cons.v[i]].rpm_ref = 0;
	D->rpm = RPM_SUSPENDED_;
}

/* The rules of each kind; a kind without an entry changes nothing they track. */
static void (*const on_kind[DL_EV_KIND_COUNT])(struct checker *, const struct ev *) = {
	[DL_EV_REGISTER] = on_register,
	[DL_EV_DEVICE_DEL] = on_device_del,
	[DL_EV_DPM_MOVE] = on_dpm_move,
	[DL_EV_LINK_ADD] = on_link_add,
	[DL_EV_LINK_DEL] = on_link_del,
	[DL_EV_LINK_STATE] = on_link_state,
	[DL_EV_LINK_REFUSED] = on_link_refused,
	[DL_EV_PROBE_START] = on_probe_start,
	[DL_EV_PROBE_END] = on_probe_end,
	[DL_EV_PROBE_DEFER] = on_probe_defer,
	[DL_EV_UNBIND_START] = on_unbind_start,
	[DL_EV_UNBIND_END] = on_unbind_end,
	[DL_EV_SUSPEND_START] = on_pm_start,
	[DL_EV_RESUME_START] = on_pm_start,
	[DL_EV_SUSPEND_END] = on_pm_end,
	[DL_EV_RESUME_END] = on_pm_end,
	[DL_EV_RPM_RESUME] = on_rpm_resume,
	[DL_EV_RPM_SUSPEND] = on_rpm_suspend,
};

static void on_event(struct checker *k, const struct ev *e)
{
	if (e->kind >= 0 && e->kind < DL_EV_KIND_COUNT && on_kind[e->kind])
		on_kind[e->kind](k, e);
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

#define EROW_TEXT 40     /* kind and phase kept by keep_texts(): longer than any name */

struct erow {
	int type[EC_COUNT];
	int64_t v[EC_COUNT];
	const char *kind, *phase;
	int kind_id;            /* kind parsed, -1 unknown (row_names()) */
	int name;               /* phase parsed (PM kinds) or state (link_state), -1 */
	char kbuf[EROW_TEXT], pbuf[EROW_TEXT];  /* their copies (keep_texts()) */
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
 * graph, missed the cache on nearly every row).  A row's texts are copied:
 * SQLite's stay valid only until the next step.  A text too long to copy
 * is no name check knows: the pass is read again by seq (k->redo).
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

static void end_of_run(struct checker *k, int64_t t_last)
{
	int failed = !strcmp(k->res->status, "failed");

	for (uint32_t d = 0; d < k->ndev; d++) {
		struct chot *H = &k->hot[d];

		if (H->in_phase >= 0)
			violation(k, 4, d, DL_NONE, DL_NONE, t_last, "still in %s at the end of the run",
				  dl_phase_name((unsigned)H->in_phase));
		if (failed && H->susp && present(k, d)) {
			int p = 0;

			while (!(H->susp & (1u << p)))
				p++;
			violation(k, 4, d, DL_NONE, DL_NONE, t_last, "failed run ends with the device"
				  " still suspended (%s)", dl_phase_name((unsigned)p));
		}
	}
	if (!failed)
		check_membership(k, t_last);
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
			topo_init(k);
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
	on_event(k, &ev);
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
		end_of_run(k, P->t_last);
		check_dpm_order(k, P->t_last);
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
