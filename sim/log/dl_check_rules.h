/*
 * dl_check_rules.h - inside dl_check: the checker's state and the rules
 * (dl_check_rules.c) that the reading side (dl_check.c) feeds one event
 * at a time.  Not an API: only dl_check*.c include it.
 */
#ifndef DL_CHECK_RULES_H
#define DL_CHECK_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/core/dl_core.h"
#include "sim/log/dl_check.h"

struct sqlite3_stmt;

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
	struct sqlite3 *db;
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
	uint32_t *lists;        /* the devices' link and child lists once loaded (build_lists()) */
	uint32_t ndev;
	struct clink *link;
	uint32_t nlink;
	int have_register;
	int have_probe;         /* the log shows probing: who has a driver is known */
	int store;              /* violations are staged (violations_stage()) and stored */
	int had_violations;     /* the log held violations of the run before this check */
	struct sqlite3_stmt *ins;
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

/*
 * One event as the rules see it (dl_check_on_event()): its row's columns, the
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

static inline struct cdev *get_dev(struct checker *k, uint32_t id)
{
	return id < k->ndev ? &k->dev[id] : NULL;
}

static inline struct chot *get_hot(struct checker *k, uint32_t id)
{
	return id < k->ndev ? &k->hot[id] : NULL;
}

static inline struct clink *get_link(struct checker *k, uint32_t id)
{
	return id < k->nlink ? &k->link[id] : NULL;
}

/* 1: D's parent is now P (it had none). */
static inline int parent_learn(struct checker *k, uint32_t d, uint32_t p)
{
	struct cdev *dd = get_dev(k, d);

	if (!dd || !get_dev(k, p) || dd->parent != DL_NONE || d == p)
		return 0;
	dd->parent = p;
	return 1;
}

/* Link L's flags; its ends if it is new: then 1 (it joins their lists). */
static inline int link_learn(struct checker *k, uint32_t l, uint32_t c, uint32_t s, uint32_t flags)
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

/* The rules of the event's kind (LINK-CORE.md's invariants 1-7). */
void dl_check_on_event(struct checker *k, const struct ev *e);
/* What must hold when the run has ended (invariant 4), at T_LAST. */
void dl_check_end_of_run(struct checker *k, int64_t t_last);
/* Invariant 7 at T, if the list or the links changed since the last time. */
void dl_check_dpm_order(struct checker *k, int64_t t);
/* Invariant 6's first topological order, once the links and parents are loaded. */
void dl_check_topo_init(struct checker *k);

#endif
