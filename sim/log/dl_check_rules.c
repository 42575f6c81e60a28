/*
 * dl_check_rules.c - the invariants of LINK-CORE.md replayed over a run's
 * events, one at a time (dl_check_on_event(): a handler per kind), with
 * the violations counted, printed and staged (violation()).  The events
 * come verified from dl_check.c, which reads the log.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sim/log/dl_check_rules.h"

#define PRINT_CAP 50
#define DFS_BUDGET 2000000u

/* A vec with cap 0 and items lives in checker.lists (build_lists()): it is copied out. */
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

static int set_parent(struct checker *k, uint32_t d, uint32_t p)
{
	if (!parent_learn(k, d, p))
		return 0;
	if (vec_push(&k->dev[p].children, d))
		k->oom = 1;
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
void dl_check_topo_init(struct checker *k)
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

/* Invariant 2: the consumer of a link counted for unbinding is still bound (or unbinding). */
static int consumer_bound(const struct checker *k, const struct clink *L)
{
	uint8_t cd = k->hot[L->c].drv;

	return unbind_counts(L) && (cd == DRV_BOUND || cd == DRV_UNBINDING);
}

/* Invariant 5: the consumer of a PM_RUNTIME link holds the supplier runtime-active. */
static int consumer_rpm_active(const struct checker *k, const struct clink *L)
{
	return rpm_counts(L) && L->rpm_ref && k->hot[L->c].rpm == RPM_ACTIVE_;
}

/*
 * The supplier @d lets go of something (it unbinds, it runtime-suspends)
 * that the consumer of a link still needs, when @needs says so: a violation
 * of invariant @inv, "@what (link N)", for each such link.  The mirror of
 * check_suppliers_bound().
 */
static void check_consumers_let_go(struct checker *k, uint32_t d, int64_t t, int inv,
				   int (*needs)(const struct checker *, const struct clink *),
				   const char *what)
{
	struct cdev *D = &k->dev[d];

	for (uint32_t i = 0; i < D->sup.n; i++) {
		uint32_t l = D->sup.v[i];
		struct clink *L = &k->link[l];

		if (needs(k, L))
			violation(k, inv, L->c, d, l, t, "%s (link %" PRIu32 ")", what, l);
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
void dl_check_dpm_order(struct checker *k, int64_t t)
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
	check_consumers_let_go(k, e->d, e->t, 2, consumer_bound,
			       "supplier's unbind_start before the consumer's unbind_end");
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
	dl_check_dpm_order(k, e->t);
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
	check_consumers_let_go(k, e->d, e->t, 5, consumer_rpm_active,
			       "supplier runtime-suspended while the consumer is runtime-active");
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

void dl_check_on_event(struct checker *k, const struct ev *e)
{
	if (e->kind >= 0 && e->kind < DL_EV_KIND_COUNT && on_kind[e->kind])
		on_kind[e->kind](k, e);
}


void dl_check_end_of_run(struct checker *k, int64_t t_last)
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
