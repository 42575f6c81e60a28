/*
 * dl_core.c - devices, links, dpm_list and the cycle check
 * (drivers/base/core.c: device_link_add, device_link_del,
 * device_is_dependent, device_reorder_to_tail, device_link_init_status).
 *
 * dpm_list ordering.  dpm_list is the kernel's, exactly: every new link
 * other than SYNC_STATE_ONLY (and the SSO -> normal and SSO -> STATELESS
 * upgrades) and every deferred-probe retry moves the consumer with all that
 * depends on it to the tail, the way device_reorder_to_tail() does: a
 * pre-order walk (the device, its children, its consumers, recursively) in
 * which a device reached twice moves twice and its last move sets its place.
 * The walk visits a device once per path, exponential on diamonds; the place
 * it leaves each device is the reverse postorder of one DFS with a visited
 * set that takes the edges in the opposite order (consumers last to first,
 * then children last to first): a device's last move in the pre-order is its
 * first finish in the mirrored walk (tests/test_core_props.c checks it
 * against dl_kernel_dfs.c on random graphs).
 *
 * Moves are recorded, not done (dl_reorder_to_tail(), and every link add),
 * and settled when the order is read (dl_dpm_settle()): the latest move
 * wins, so only each root's latest move counts, and the settle walks the
 * roots newest first, each device once: a device already placed by a newer
 * move is skipped with everything below it (all of that was below it then
 * too, since between two settles the graph only grows: a deletion settles
 * first).  A retry storm then costs O(1) per retry, and a registration of
 * n devices and m links one walk of O(n + m) when the list is next read,
 * instead of a walk of everything that depends on the consumer per link.
 *
 * The cycle check does not use the list.  The registered devices are also
 * on a second list, the topo list, kept a topological order of
 * parent->child and supplier->consumer (SYNC_STATE_ONLY links excluded) as
 * links come, with a 64-bit key per device that grows along it (an
 * order-maintenance structure).  A device registers at its tail; a link
 * whose consumer comes before its supplier moves the devices that depend on
 * the consumer and come before the supplier (the cycle check's own search)
 * past the supplier, in their order (topo_reorder(): where the keys leave
 * most room before the first device they lead to), and gives them keys
 * there, relabelling neighbours when the keys are too close
 * (topo_place_after()).  The cost is that of the search, not of everything
 * below the consumer.  The keys and list links sit in an array of their own
 * (dl_core.topo), 16 bytes a device, which the caches hold at a million
 * devices where the device records do not.  So:
 *
 *  - device_is_dependent(consumer, supplier) can only be true when the
 *    supplier's key is above the consumer's; and a search from the consumer
 *    only needs to visit devices whose key is below the supplier's, which
 *    are the ones the reorder moves.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/dl_internal.h"

/* dl_idvec_push() when the vector is full: grow it, then append. */
int dl_idvec_push_slow(struct dl_idvec *v, uint32_t x)
{
	uint32_t have = v->cap & ~DL_IDVEC_POOLED;

	if (v->n == have) {
		uint32_t cap = have ? have * 2 : 2;
		uint32_t *nv;

		if (v->cap & DL_IDVEC_POOLED) {
			/* outgrew its slice of the pool: move to an allocation of its own */
			nv = malloc((size_t)cap * sizeof(*nv));
			if (nv)
				memcpy(nv, v->v, (size_t)v->n * sizeof(*nv));
		} else {
			nv = realloc(v->v, (size_t)cap * sizeof(*nv));
		}
		if (!nv)
			return -ENOMEM;
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}

void dl_idvec_free(struct dl_idvec *v)
{
	if (!(v->cap & DL_IDVEC_POOLED))
		free(v->v);
	v->v = NULL;
	v->n = v->cap = 0;
}

void dl_core_emit(struct dl_core *c, unsigned kind, dl_dev_t dev, dl_link_t link,
		  uint32_t aux, uint32_t flags, unsigned phase)
{
	struct dl_event ev = {
		.dev = dev, .link = link, .aux = aux, .flags = flags,
		.kind = (uint16_t)kind, .phase = (uint16_t)phase,
	};

	if (c->sink.emit)
		c->sink.emit(c->sink.ctx, &ev);
}

/* Does link @k hold its supplier's sync_state() back? */
static bool holds_sync_state(const struct dl_link *k)
{
	return k->live && (k->flags & DL_FLAG_MANAGED) && k->status != DL_STATE_ACTIVE;
}

/*
 * Keep the supplier's sync_waiting count after a change to @k's liveness,
 * MANAGED flag or status; @held is holds_sync_state() from before it.
 */
static void sync_waiting_update(struct dl_core *c, const struct dl_link *k, bool held)
{
	bool now = holds_sync_state(k);

	if (now != held)
		c->dev[k->supplier].sync_waiting += now ? 1u : (uint32_t)-1;
}

/* Every link status change goes through here so that it is logged once. */
void dl_link_set_status(struct dl_core *c, dl_link_t l, unsigned status)
{
	struct dl_link *k = &c->link[l];
	bool held;

	if (k->status == status)
		return;
	held = holds_sync_state(k);
	k->status = (uint8_t)status;
	sync_waiting_update(c, k, held);
	dl_core_emit(c, DL_EV_LINK_STATE, k->consumer, l, k->supplier, k->flags, status);
}

int dl_core_init(struct dl_core *c, uint32_t ndev_hint, uint32_t nlink_hint)
{
	memset(c, 0, sizeof(*c));
	c->dpm_head = c->dpm_tail = DL_NONE;
	c->topo_head = c->topo_tail = DL_NONE;
	c->topo_gap = DL_TOPO_GAP;
	c->sync_state_paused = true;
	dl_core_set_kernel(c, DL_KVER_DEFAULT);
	c->cap_dev = ndev_hint ? ndev_hint : 16;
	c->cap_link = nlink_hint ? nlink_hint : 16;
	c->dev = malloc((size_t)c->cap_dev * sizeof(*c->dev));
	c->topo = malloc((size_t)c->cap_dev * sizeof(*c->topo));
	c->link = malloc((size_t)c->cap_link * sizeof(*c->link));
	if (!c->dev || !c->topo || !c->link) {
		dl_core_fini(c);
		return -ENOMEM;
	}
	return 0;
}

void dl_core_fini(struct dl_core *c)
{
	for (uint32_t i = 0; c->dev && i < c->ndev; i++) {
		dl_idvec_free(&c->dev[i].suppliers);
		dl_idvec_free(&c->dev[i].consumers);
		dl_idvec_free(&c->dev[i].children);
	}
	free(c->dev);
	free(c->topo);
	free(c->link);
	free(c->link_rpm);
	free(c->rpm_cnt);
	dl_idvec_free(&c->scratch);
	dl_idvec_free(&c->scratch2);
	dl_idvec_free(&c->dpm_pending);
	dl_idvec_free(&c->settle_stack);
	dl_idvec_free(&c->settle_post);
	free(c->topo_ent);
	free(c->dpm_stamp);
	free(c->can_match);
	free(c->rpm_user);
	free(c->rv);
	free(c->rv_gen);
	dl_idvec_free(&c->rv_stack);
	dl_idvec_free(&c->deferred_pending);
	dl_idvec_free(&c->deferred_active);
	free(c->pool);
	memset(c, 0, sizeof(*c));
}

/**
 * dl_core_trim - give back the working storage that registration and its
 * dpm_list moves grew: the pending moves once settled (two words a move;
 * 16 MB after registering a million devices of default.json) and their
 * stamps (a word a device), the settle's
 * and the searches' stacks, which every call starts empty, the topo sort's
 * entries, the deferred-probe lists once drained, and the reorder walk's
 * memo (dl_reorder_visits(), 12 bytes a device; only the retries of a
 * probe read it).  Nothing observable changes; what is used again grows
 * (or is worked out) again.  An engine calls it after a
 * probe phase, so that the PM phases' graphs reuse the memory.
 */
void dl_core_trim(struct dl_core *c)
{
	struct dl_idvec *stacks[] = { &c->settle_stack, &c->settle_post, &c->scratch,
				      &c->scratch2, &c->rv_stack };

	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
		dl_idvec_free(stacks[i]);
	if (c->dpm_pending.n == 0) {
		/* settled: every stamp is 0 again */
		dl_idvec_free(&c->dpm_pending);
		free(c->dpm_stamp);
		c->dpm_stamp = NULL;
	}
	free(c->topo_ent);
	c->topo_ent = NULL;
	c->topo_cap = 0;
	if (c->deferred_pending.n == 0)
		dl_idvec_free(&c->deferred_pending);
	if (c->deferred_active_head == c->deferred_active.n) {
		c->deferred_active_head = 0;
		dl_idvec_free(&c->deferred_active);
	}
	free(c->rv);
	free(c->rv_gen);
	c->rv = NULL;
	c->rv_gen = NULL;
	c->rv_cap = 0;
}

/**
 * dl_core_presize - give each device's supplier, consumer and child vectors
 * room for the given counts (arrays of ndev, NULL: none) in one allocation,
 * before any is used.  A million devices otherwise cost three million small
 * mallocs, their reallocs as the vectors grow, their frees, and about a
 * fifth of the core's memory in allocator headers.  A vector that outgrows
 * its slice moves to an allocation of its own (dl_idvec_push()).  Only for a
 * core whose devices have no vector storage yet: -EINVAL otherwise.
 */
int dl_core_presize(struct dl_core *c, const uint32_t *nsup, const uint32_t *ncon,
		    const uint32_t *nchild)
{
	const uint32_t *cnt[3] = { nsup, ncon, nchild };
	size_t total = 0, off = 0;

	if (c->pool)
		return -EINVAL;
	for (uint32_t d = 0; d < c->ndev; d++) {
		const struct dl_device *x = &c->dev[d];

		if (x->suppliers.cap || x->consumers.cap || x->children.cap)
			return -EINVAL;
		for (int k = 0; k < 3; k++)
			total += cnt[k] ? cnt[k][d] : 0;
	}
	if (total == 0)
		return 0;
	if (total >= DL_IDVEC_POOLED || !(c->pool = malloc(total * sizeof(*c->pool))))
		return -ENOMEM;
	for (uint32_t d = 0; d < c->ndev; d++) {
		struct dl_idvec *v[3] = { &c->dev[d].suppliers, &c->dev[d].consumers,
					  &c->dev[d].children };

		for (int k = 0; k < 3; k++) {
			uint32_t want = cnt[k] ? cnt[k][d] : 0;

			if (!want)
				continue;
			v[k]->v = c->pool + off;
			v[k]->cap = want | DL_IDVEC_POOLED;
			off += want;
		}
	}
	return 0;
}

/**
 * dl_core_set_stop - ask @poll(@ctx) during long walks whether to stop (the
 * engine's Ctrl-C flag); NULL: never.  A stopped call returns -EINTR and
 * leaves dpm_list a topological order, as running out of memory does; a
 * stop during dl_dpm_settle()'s moves leaves the list mid-move (the run
 * ends there).
 */
void dl_core_set_stop(struct dl_core *c, bool (*poll)(void *ctx), void *ctx)
{
	c->stop_poll = poll;
	c->stop_ctx = ctx;
	c->stop_steps = 0;
}

/** dl_core_poll_stop - is the run to stop?  Asks the poll now; sticky once true. */
bool dl_core_poll_stop(struct dl_core *c)
{
	if (!c->stopped && c->stop_poll && c->stop_poll(c->stop_ctx))
		c->stopped = true;
	return c->stopped;
}

/* One step of a walk: true when the walk is to give up (every DL_STOP_POLL_STEPS, a poll). */
static inline bool walk_stop(struct dl_core *c)
{
	if (++c->stop_steps < DL_STOP_POLL_STEPS)
		return c->stopped;
	c->stop_steps = 0;
	return dl_core_poll_stop(c);
}

void dl_core_set_sink(struct dl_core *c, struct dl_sink sink)
{
	c->sink = sink;
}

/**
 * dl_core_set_kernel - follow the rules of kernel @kver (DL_KVER()) where
 * they changed between 6.12 and 7.3; -ERANGE (nothing changed) outside
 * DL_KVER_FIRST..DL_KVER_LAST.  Set before the first PM phase.
 */
int dl_core_set_kernel(struct dl_core *c, uint32_t kver)
{
	if (kver < DL_KVER_FIRST || kver > DL_KVER_LAST)
		return -ERANGE;
	c->kver = kver;
	c->pm_skips_sso = kver >= DL_KVER_PM_SKIPS_SSO;
	return 0;
}

/**
 * dl_device_new - create a device that is not registered yet (device_initialize).
 * The parent, if any, must already exist.
 */
int dl_device_new(struct dl_core *c, dl_dev_t parent, bool async, dl_dev_t *out)
{
	struct dl_device *d;

	if (parent != DL_NONE && parent >= c->ndev)
		return -EINVAL;
	if (c->ndev == UINT32_MAX - 2)
		return -ENOSPC;
	if (c->ndev == c->cap_dev) {
		uint32_t cap = c->cap_dev * 2;
		struct dl_device *nd = realloc(c->dev, (size_t)cap * sizeof(*nd));
		struct dl_topo_node *nt;
		uint32_t *ns;

		if (!nd)
			return -ENOMEM;
		c->dev = nd;
		nt = realloc(c->topo, (size_t)cap * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		c->topo = nt;
		if (c->rpm_cnt) {
			struct dl_rpm_cnt *nr = realloc(c->rpm_cnt, (size_t)cap * sizeof(*nr));

			if (!nr)
				return -ENOMEM;
			memset(nr + c->cap_dev, 0, (size_t)(cap - c->cap_dev) * sizeof(*nr));
			c->rpm_cnt = nr;
		}
		if (c->dpm_stamp) {
			ns = realloc(c->dpm_stamp, (size_t)cap * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			c->dpm_stamp = ns;
		}
		c->cap_dev = cap;
	}
	d = &c->dev[c->ndev];
	memset(d, 0, sizeof(*d));
	d->parent = parent;
	d->async = async;
	d->dpm_prev = d->dpm_next = DL_NONE;
	/* off the topo list, with a key past every search's limit */
	c->topo[c->ndev] = (struct dl_topo_node){ UINT64_MAX, DL_NONE, DL_NONE };
	if (c->dpm_stamp)
		c->dpm_stamp[c->ndev] = 0;
	*out = c->ndev++;
	return 0;
}

static inline void dpm_unlink(struct dl_core *c, dl_dev_t d)
{
	dl_ilist_unlink(dl_dpm_ilist(c), d);
	c->dpm_count--;
}

static inline void dpm_append(struct dl_core *c, dl_dev_t d)
{
	dl_ilist_link_after(dl_dpm_ilist(c), c->dpm_tail, d);
	c->dpm_count++;
}

/* device_pm_move_last() */
static void dpm_move_last(struct dl_core *c, dl_dev_t d)
{
	if (!c->dev[d].registered)
		return;
	dpm_unlink(c, d);
	dpm_append(c, d);
	dl_core_emit(c, DL_EV_DPM_MOVE, d, DL_NONE, DL_NONE, 0, 0);
}

static bool dpm_settled(const struct dl_core *c);
static int dpm_note_move(struct dl_core *c, dl_dev_t d);
static void topo_append(struct dl_core *c, dl_dev_t d);
static void topo_unlink(struct dl_core *c, dl_dev_t d);

/**
 * dl_device_register - device_add(): append to dpm_list, become the parent's
 * child.  Returns -EINVAL if already registered or the parent is not.
 */
int dl_device_register(struct dl_core *c, dl_dev_t d)
{
	struct dl_device *x;
	int err;

	if (d >= c->ndev || c->dev[d].registered)
		return -EINVAL;
	x = &c->dev[d];
	if (x->parent != DL_NONE) {
		struct dl_device *p = &c->dev[x->parent];

		if (!p->registered)
			return -EINVAL;
		err = dl_idvec_push(&p->children, d);
		if (err)
			return err;
		c->graph_gen++;
	}
	x->registered = 1;
	x->state = DL_DEV_NO_DRIVER;
	x->state_synced = 0;
	x->pm_depth = 0;
	topo_append(c, d);
	dpm_append(c, d);
	dl_core_emit(c, DL_EV_REGISTER, d, DL_NONE, x->parent, 0, 0);
	/* device_pm_add() appends; behind moves still pending, it is one of them */
	return dpm_settled(c) ? 0 : dpm_note_move(c, d);
}

/*
 * Take @x out of @v keeping the others in order: the kernel's
 * links.suppliers/consumers and children are lists (list_del_rcu,
 * klist_del), and their order is the order device_reorder_to_tail() visits,
 * so it decides dpm_list.  The slot is found by a scan from the end, where
 * a purge removes; the shift after it costs as much.  A device's links are
 * few.
 */
static void idvec_remove(struct dl_idvec *v, uint32_t x)
{
	uint32_t pos = v->n;

	while (pos > 0 && v->v[pos - 1] != x)
		pos--;
	assert(pos > 0);
	memmove(&v->v[pos - 1], &v->v[pos], (size_t)(v->n - pos) * sizeof(*v->v));
	v->n--;
}

/* __device_link_del(): unhook from both devices and log. */
static void link_free(struct dl_core *c, dl_link_t l)
{
	struct dl_link *k = &c->link[l];

	assert(k->live);
	if (!dl_link_is_sync_state_only(k->flags))
		dl_dpm_settle(c);   /* the pending moves walked this link */
	if (holds_sync_state(k))
		c->dev[k->supplier].sync_waiting--;
	idvec_remove(&c->dev[k->consumer].suppliers, l);
	idvec_remove(&c->dev[k->supplier].consumers, l);
	c->graph_gen++;
	/* A consumer going away drops the runtime-PM references it held. */
	if (dl_link_rpm_active(c, l)) {
		c->rpm_cnt[k->supplier].usage -= (int32_t)c->link_rpm[l];
		c->link_rpm[l] = 0;
	}
	k->live = 0;
	c->nlink_live--;
	dl_core_emit(c, DL_EV_LINK_DEL, k->consumer, l, k->supplier, k->flags, 0);
}

static void link_kref_put(struct dl_core *c, dl_link_t l)
{
	struct dl_link *k = &c->link[l];

	assert(k->kref > 0);
	if (--k->kref == 0)
		link_free(c, l);
}

/* device_link_drop_managed() */
void dl_link_drop_managed(struct dl_core *c, dl_link_t l)
{
	struct dl_link *k = &c->link[l];
	bool held = holds_sync_state(k);

	k->flags &= ~DL_FLAG_MANAGED;
	sync_waiting_update(c, k, held);
	dl_link_set_status(c, l, DL_STATE_NONE);
	link_kref_put(c, l);
}

/**
 * dl_device_del - device_del(): the driver must have been released first;
 * every remaining link of the device is deleted (device_links_purge), and the
 * device leaves dpm_list and its parent's children.
 */
int dl_device_del(struct dl_core *c, dl_dev_t d)
{
	struct dl_device *x;

	if (d >= c->ndev || !c->dev[d].registered)
		return -EINVAL;
	x = &c->dev[d];
	if (x->state != DL_DEV_NO_DRIVER)
		return -EBUSY;
	if (x->children.n)
		return -EBUSY;   /* children go first, as in the kernel */
	dl_dpm_settle(c);   /* the pending moves may have walked through it */
	/* device_links_purge() */
	while (x->suppliers.n)
		link_free(c, x->suppliers.v[x->suppliers.n - 1]);
	while (x->consumers.n)
		link_free(c, x->consumers.v[x->consumers.n - 1]);
	if (x->parent != DL_NONE) {
		/* klist_del(): the other children keep their order */
		idvec_remove(&c->dev[x->parent].children, d);
		c->graph_gen++;
	}
	if (x->deferred) {
		/* driver_deferred_probe_del(): lazily skipped by dl_deferred_next() */
		x->deferred = 0;
	}
	dpm_unlink(c, d);
	topo_unlink(c, d);
	c->topo[d].key = UINT64_MAX;
	x->registered = 0;
	dl_core_emit(c, DL_EV_DEVICE_DEL, d, DL_NONE, DL_NONE, 0, 0);
	return 0;
}

/* device_link_init_status() */
static unsigned link_init_status(const struct dl_core *c, dl_dev_t con, dl_dev_t sup)
{
	unsigned cs = c->dev[con].state;

	switch (c->dev[sup].state) {
	case DL_DEV_PROBING:
		return cs == DL_DEV_PROBING ? DL_STATE_CONSUMER_PROBE : DL_STATE_DORMANT;
	case DL_DEV_DRIVER_BOUND:
		if (cs == DL_DEV_PROBING)
			return DL_STATE_CONSUMER_PROBE;
		if (cs == DL_DEV_DRIVER_BOUND)
			return DL_STATE_ACTIVE;
		return DL_STATE_AVAILABLE;
	case DL_DEV_UNBINDING:
		return DL_STATE_SUPPLIER_UNBIND;
	default:
		return DL_STATE_DORMANT;
	}
}

dl_link_t dl_link_find(const struct dl_core *c, dl_dev_t con, dl_dev_t sup)
{
	const struct dl_idvec *a = &c->dev[con].suppliers, *b = &c->dev[sup].consumers;

	/* Scan the shorter side: a supplier may have thousands of consumers. */
	if (a->n <= b->n) {
		for (uint32_t i = 0; i < a->n; i++)
			if (c->link[a->v[i]].supplier == sup)
				return a->v[i];
	} else {
		for (uint32_t i = 0; i < b->n; i++)
			if (c->link[b->v[i]].consumer == con)
				return b->v[i];
	}
	return DL_NONE;
}

static uint32_t next_epoch(struct dl_core *c)
{
	if (++c->epoch == 0) {
		for (uint32_t i = 0; i < c->ndev; i++)
			c->dev[i].mark = 0;
		c->epoch = 1;
	}
	return c->epoch;
}

/* device_is_ancestor(dev, target): is dev an ancestor of target? */
static bool is_ancestor(const struct dl_core *c, dl_dev_t dev, dl_dev_t target)
{
	for (dl_dev_t p = c->dev[target].parent; p != DL_NONE; p = c->dev[p].parent)
		if (p == dev)
			return true;
	return false;
}

/* How far ahead in its queue depends_search() starts loading a device's records. */
#define SEARCH_AHEAD 8

/*
 * Start loading what depends_search() reads of the device @q->v[@i] when it
 * gets there: its record's vectors, then (half as far ahead, once the
 * record is in) the vectors' first entries.
 */
static inline void search_prefetch(const struct dl_core *c, const struct dl_idvec *q, uint32_t i)
{
	if (i + SEARCH_AHEAD < q->n)
		dl_prefetch(&c->dev[q->v[i + SEARCH_AHEAD]].consumers);
	if (i + SEARCH_AHEAD / 2 < q->n) {
		const struct dl_device *y = &c->dev[q->v[i + SEARCH_AHEAD / 2]];

		if (y->consumers.n)
			dl_prefetch(&c->link[y->consumers.v[0]]);
		if (y->children.n)
			dl_prefetch(&c->topo[y->children.v[0]]);
	}
}

/* depends_search()'s state: the set visited (its queue) and what it looks for. */
struct dep_search {
	struct dl_idvec *q;
	dl_dev_t target;
	bool unreg;             /* the target is not registered */
	uint64_t limit;         /* the target's topo key: who has a key as high is not visited */
	uint32_t ep;
	uint64_t bkey;          /* the lowest key reached at or above the limit, */
	dl_dev_t bound;         /* and its device */
};

/*
 * depends_search() reaches @y (a child or a consumer of a device in the set).
 * True for a hit (@y is the target, or an ancestor of an unregistered one)
 * and when out of memory; else @y joins the set if its key is below the
 * limit, or may become the bound if not.
 */
static inline bool dep_search_reach(struct dl_core *c, struct dep_search *s, dl_dev_t y)
{
	if (y == s->target || (s->unreg && is_ancestor(c, y, s->target)))
		return true;
	/* an unregistered y (topo UINT64_MAX): nothing depends on it */
	if (c->topo[y].key >= s->limit) {
		if (c->topo[y].key < s->bkey) {   /* unregistered: UINT64_MAX */
			s->bkey = c->topo[y].key;
			s->bound = y;
		}
	} else if (c->dev[y].mark != s->ep) {
		c->dev[y].mark = s->ep;
		if (dl_idvec_push(s->q, y))
			return true;   /* out of memory: refuse rather than risk a cycle */
	}
	return false;
}

/*
 * Does @target depend on @dev (see dl_is_dependent())?  When @fwd is given
 * and the search runs, it appends to @fwd every device it visits: @dev and
 * the registered devices that depend on it with a topo key below @target's,
 * topo_reorder()'s forward set, and leaves in c->topo_fwd_bound the device
 * with the lowest key outside the set that one inside it leads to (DL_NONE:
 * none).  True too on running out of memory or when the run is to stop
 * (c->stopped).
 */
static bool depends_search(struct dl_core *c, dl_dev_t dev, dl_dev_t target,
			   struct dl_idvec *fwd)
{
	/* breadth first, the queue being the set visited, so that loads can be started ahead */
	struct dep_search s = { .q = fwd ? fwd : &c->scratch, .target = target,
				.bkey = UINT64_MAX, .bound = DL_NONE };
	uint32_t head = 0;

	s.q->n = 0;
	if (dev == target || is_ancestor(c, dev, target))
		return true;
	if (!c->dev[dev].registered)
		return false;   /* an unregistered device has no consumers or children yet */
	/*
	 * An unregistered target is off dpm_list and not in its parent's
	 * children yet: as in the kernel, reaching any of its ancestors (or a
	 * link to it) is a hit.
	 */
	s.unreg = !c->dev[target].registered;
	s.limit = s.unreg ? UINT64_MAX : c->topo[target].key;
	if (c->topo[dev].key > s.limit)
		return false;
	s.ep = next_epoch(c);
	c->dev[dev].mark = s.ep;
	if (dl_idvec_push(s.q, dev))
		return true;   /* out of memory: refuse rather than risk a cycle */
	while (head < s.q->n) {
		const struct dl_device *x;

		search_prefetch(c, s.q, head);
		x = &c->dev[s.q->v[head++]];

		if (walk_stop(c))
			return true;    /* stopped: the caller sees c->stopped */
		for (uint32_t i = 0; i < x->children.n; i++)
			if (dep_search_reach(c, &s, x->children.v[i]))
				return true;
		for (uint32_t i = 0; i < x->consumers.n; i++) {
			const struct dl_link *k = &c->link[x->consumers.v[i]];

			if (!dl_link_is_sync_state_only(k->flags) && dep_search_reach(c, &s, k->consumer))
				return true;
		}
	}
	c->topo_fwd_bound = s.bound;
	return false;
}

/**
 * dl_is_dependent - device_is_dependent(dev, target): does target depend on
 * dev, i.e. is it dev itself, a descendant, or reachable through consumer
 * links other than SYNC_STATE_ONLY ones?  O(V+E) with epoch marks, and
 * pruned by the topo keys (see the file header).
 */
bool dl_is_dependent(struct dl_core *c, dl_dev_t dev, dl_dev_t target)
{
	return depends_search(c, dev, target, NULL);
}

/* ---- the topo order (see the file header) ---- */

/* Keys stay below this, so that the sums below cannot wrap. */
#define TOPO_KEY_MAX ((uint64_t)1 << 63)

static struct dl_ilist topo_ilist(struct dl_core *c)
{
	return (struct dl_ilist){ (char *)c->topo, sizeof(*c->topo),
				  offsetof(struct dl_topo_node, prev),
				  offsetof(struct dl_topo_node, next), &c->topo_head, &c->topo_tail };
}

static void topo_unlink(struct dl_core *c, dl_dev_t d)
{
	dl_ilist_unlink(topo_ilist(c), d);
}

/* Link @d into the topo list after @at (DL_NONE: at the head); the key is the caller's. */
static void topo_link_after(struct dl_core *c, dl_dev_t at, dl_dev_t d)
{
	dl_ilist_link_after(topo_ilist(c), at, d);
}

/* Every key afresh along the list, topo_gap apart (closer if they would not fit).  O(n). */
static void topo_relabel_all(struct dl_core *c)
{
	uint64_t gap = c->topo_gap, key = 0;
	uint64_t n = (uint64_t)c->dpm_count + 2;

	if (gap > TOPO_KEY_MAX / n)
		c->topo_gap = gap = TOPO_KEY_MAX / n;   /* appends too, or they run out at once */
	for (dl_dev_t d = c->topo_head; d != DL_NONE; d = c->topo[d].next)
		c->topo[d].key = key += gap;
	c->topo_relabels++;
}

/* The keys of the devices after @x in the list, to the tail: topo_gap apart. */
static void topo_space_to_tail(struct dl_core *c, dl_dev_t x, uint64_t count)
{
	uint64_t key = x == DL_NONE ? 0 : c->topo[x].key;

	if ((TOPO_KEY_MAX - key) / c->topo_gap <= count) {
		topo_relabel_all(c);
		return;
	}
	for (dl_dev_t y = x == DL_NONE ? c->topo_head : c->topo[x].next; y != DL_NONE;
	     y = c->topo[y].next)
		c->topo[y].key = key += c->topo_gap;
}

/* device_add(): @d, with nothing depending on it yet, goes last. */
static void topo_append(struct dl_core *c, dl_dev_t d)
{
	dl_dev_t t = c->topo_tail;

	topo_link_after(c, t, d);
	topo_space_to_tail(c, t, 1);
}

/*
 * Link the @k devices of @e (unlinked, in order) in right after @x, with
 * keys between x's and its successor's.  Dietz and Sleator's relabelling
 * ("Two algorithms for maintaining order in a list", STOC 1987): walk the
 * successors s_1, s_2, ... of x to the first s_j whose key is more than
 * (j + k)^2 above x's; the j - 1 devices passed and the k new ones share
 * the keys between x's and s_j's evenly (at the tail, topo_gap apart).
 * Amortized O(log n) per device placed.
 */
static void topo_place_after(struct dl_core *c, dl_dev_t x, const struct dl_topo_ent *e,
			     uint32_t k)
{
	uint64_t base = c->topo[x].key, j = 1, key, step;
	dl_dev_t s = c->topo[x].next, at = x;

	for (; s != DL_NONE; s = c->topo[s].next, j++) {
		uint64_t w = j + k;

		if (w > UINT32_MAX || c->topo[s].key - base > w * w)
			break;
	}
	for (uint32_t i = 0; i < k; i++) {
		topo_link_after(c, at, e[i].dev);
		at = e[i].dev;
	}
	if (j > 1)
		c->topo_relabels++;
	if (s == DL_NONE) {
		topo_space_to_tail(c, x, j - 1 + k);
		return;
	}
	step = (c->topo[s].key - base) / (j + k);
	key = base;
	for (dl_dev_t y = c->topo[x].next; y != s; y = c->topo[y].next)
		c->topo[y].key = key += step;
}

/* Runs of up to this many are sorted by insertion, then merged: the sets moved are mostly a few dozen. */
#define TOPO_SORT_RUN 32

/* Insertion sort of @e[0..@k) by key. */
static void topo_sort_run(struct dl_topo_ent *e, uint32_t k)
{
	for (uint32_t i = 1; i < k; i++) {
		struct dl_topo_ent x = e[i];
		uint32_t j = i;

		for (; j > 0 && e[j - 1].key > x.key; j--)
			e[j] = e[j - 1];
		e[j] = x;
	}
}

/*
 * Sort @e[0..@k) by key, with @tmp (room for k) as the merges' other side:
 * a bottom-up merge sort, which neither allocates nor calls a comparison
 * through a pointer as qsort() does (6% of a million-device probe op).
 */
static void topo_sort(struct dl_topo_ent *e, struct dl_topo_ent *tmp, uint32_t k)
{
	struct dl_topo_ent *src = e, *dst = tmp, *t;

	for (uint32_t i = 0; i < k; i += TOPO_SORT_RUN)
		topo_sort_run(e + i, k - i < TOPO_SORT_RUN ? k - i : TOPO_SORT_RUN);
	for (uint32_t w = TOPO_SORT_RUN; w < k; w *= 2) {
		for (uint32_t lo = 0; lo < k; lo += 2 * w) {
			uint32_t mid = k - lo < w ? k : lo + w;
			uint32_t hi = k - lo < 2 * w ? k : lo + 2 * w;
			uint32_t a = lo, b = mid, o = lo;

			while (a < mid && b < hi)
				dst[o++] = src[b].key < src[a].key ? src[b++] : src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < hi)
				dst[o++] = src[b++];
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != e)
		memcpy(e, src, (size_t)k * sizeof(*e));
}

/*
 * The topo order after a new edge @sup -> @con, topo[con] < topo[sup]:
 * @fwd holds depends_search()'s forward set, the devices that depend on
 * @con with a key below topo[sup].  They move, in their order, to past @sup
 * (Marchetti-Spaccamela, Nanni and Rohnert's one-way search): every edge
 * into the set comes from before @sup (else its tail would be in the set),
 * every edge out of it leads past @sup (else its head would be), so every
 * edge still goes forward, and @con now comes after @sup.  Any place
 * between @sup and the first device an edge out of the set leads to
 * (@bound; DL_NONE: none) keeps that true: the set
 * goes where the keys leave the most room of three, right after @sup, right
 * before that device, or (no such device) at the tail, so that the sets
 * moved past one busy supplier do not all crowd into the keys after it.
 * O(k log k) for the k devices moved, besides topo_place_after().
 * 0 or -ENOMEM.
 */
static int topo_reorder(struct dl_core *c, dl_dev_t sup, const struct dl_idvec *fwd,
			dl_dev_t bound)
{
	struct dl_topo_ent *e;
	uint32_t k = fwd->n;
	dl_dev_t at = sup, nx;

	if (k > c->topo_cap) {
		uint32_t cap = k < 64 ? 64 : k + k / 2;

		/* and as many again for topo_sort()'s merges */
		e = realloc(c->topo_ent, 2 * (size_t)cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		c->topo_ent = e;
		c->topo_cap = cap;
	}
	e = c->topo_ent;
	for (uint32_t i = 0; i < k; i++) {
		e[i] = (struct dl_topo_ent){ c->topo[fwd->v[i]].key, fwd->v[i] };
		topo_unlink(c, fwd->v[i]);
	}
	topo_sort(e, e + c->topo_cap, k);
	nx = c->topo[sup].next;
	if (nx != DL_NONE) {
		if (bound == DL_NONE) {
			at = c->topo_tail;
		} else {
			dl_dev_t p = c->topo[bound].prev;   /* @sup or past it */

			if (c->topo[bound].key - c->topo[p].key > c->topo[nx].key - c->topo[sup].key)
				at = p;
		}
	}
	topo_place_after(c, at, e, k);
	return 0;
}

/*
 * Walk what device_reorder_to_tail(@d) moves: d, its children and its
 * consumers (recursively, SYNC_STATE_ONLY links excluded), each device once,
 * taking a device's edges in the mirrored order (consumers last to first,
 * then children last to first; see the file header), skipping devices
 * already marked @ep and marking those it visits.  Appends them to @post in
 * postorder: read backwards, @post is the order the kernel's walk leaves
 * them in.  Returns true if it reaches @target (then it stops; DL_NONE for
 * no target), on running out of memory, or when the run is to stop
 * (c->stopped; polled every DL_STOP_POLL_STEPS devices).
 */
/* How many of a device's edges reorder_walk() prefetches on reaching it. */
#define WALK_AHEAD 8

/*
 * Start loading the records reorder_walk() reads for the first WALK_AHEAD
 * edges it will take from @y (the last ones: it takes them backwards): the
 * links of its consumer edges, the children's own records.
 */
static inline void walk_prefetch(const struct dl_core *c, const struct dl_device *y)
{
	uint32_t k = 0;

	for (uint32_t i = y->consumers.n; i-- > 0 && k < WALK_AHEAD; k++)
		dl_prefetch(&c->link[y->consumers.v[i]]);
	for (uint32_t i = y->children.n; i-- > 0 && k < WALK_AHEAD; k++)
		dl_prefetch(&c->dev[y->children.v[i]].mark);
}

static bool reorder_walk(struct dl_core *c, dl_dev_t d, dl_dev_t target, uint32_t ep,
			 struct dl_idvec *st, struct dl_idvec *post)
{
	struct dl_device *r = &c->dev[d];

	walk_prefetch(c, r);
	st->n = 0;
	r->mark = ep;
	if (dl_idvec_push(st, d) || dl_idvec_push(st, r->children.n + r->consumers.n))
		return true;
	while (st->n) {
		dl_dev_t x = st->v[st->n - 2];
		uint32_t e = st->v[st->n - 1];

		if (walk_stop(c))
			return true;
		const struct dl_device *xd = &c->dev[x];
		uint32_t nch = xd->children.n;
		dl_dev_t y = DL_NONE;

		while (e > 0) {
			dl_dev_t cand;

			e--;
			if (e < nch) {
				cand = xd->children.v[e];
			} else {
				const struct dl_link *k = &c->link[xd->consumers.v[e - nch]];

				cand = dl_link_is_sync_state_only(k->flags) ? DL_NONE : k->consumer;
				/* the next edge's consumer, read when cand's subtree is done */
				if (e > nch)
					dl_prefetch(&c->dev[c->link[xd->consumers.v[e - nch - 1]].consumer].mark);
			}
			if (cand != DL_NONE && c->dev[cand].mark != ep) {
				y = cand;
				break;
			}
		}
		st->v[st->n - 1] = e;
		if (y == DL_NONE) {
			st->n -= 2;
			if (dl_idvec_push(post, x))
				return true;
			continue;
		}
		if (y == target)
			return true;
		c->dev[y].mark = ep;
		walk_prefetch(c, &c->dev[y]);
		if (dl_idvec_push(st, y) ||
		    dl_idvec_push(st, c->dev[y].children.n + c->dev[y].consumers.n))
			return true;
	}
	return false;
}

/*
 * Move the devices of @post (reorder_walk()'s, read backwards) to the tail,
 * unless they already form the tail in that order: the common case of a
 * settle after a probe in which every link pointed forward.  Gives up when
 * the run is to stop (c->stopped; polled every DL_STOP_POLL_STEPS moves).
 */
#define MOVE_AHEAD 8

static void dpm_move_set(struct dl_core *c, const struct dl_idvec *post)
{
	dl_dev_t at = c->dpm_tail;
	uint32_t i;

	for (i = 0; i < post->n; i++) {
		dl_dev_t x = post->v[i];

		if (!c->dev[x].registered)
			continue;
		if (x != at)
			break;
		at = c->dev[x].dpm_prev;
	}
	if (i == post->n)
		return;
	/*
	 * The set is scattered over the list: each move rewrites the links of
	 * the device's two neighbours.  Load the records MOVE_AHEAD moves
	 * ahead, and their neighbours' half as far ahead, so that the misses
	 * overlap instead of chaining.
	 */
	for (i = post->n; i-- > 0;) {
		/*
		 * Each move is a dpm_move event: a million of them keep a
		 * logged run's writer busy for seconds.  Stopped, the list is
		 * left mid-move; the run ends there, and check leaves out the
		 * end-of-run order of an interrupted run.
		 */
		if (walk_stop(c))
			return;
		if (i >= MOVE_AHEAD)
			dl_prefetch(&c->dev[post->v[i - MOVE_AHEAD]].dpm_prev);
		if (i >= MOVE_AHEAD / 2) {
			const struct dl_device *a = &c->dev[post->v[i - MOVE_AHEAD / 2]];

			if (a->dpm_prev != DL_NONE)
				dl_prefetch(&c->dev[a->dpm_prev].dpm_prev);
			if (a->dpm_next != DL_NONE)
				dl_prefetch(&c->dev[a->dpm_next].dpm_prev);
		}
		dpm_move_last(c, post->v[i]);
	}
}

/* No pending moves: the list is the kernel's as it stands. */
static bool dpm_settled(const struct dl_core *c)
{
	return c->dpm_pending.n == 0;
}

/* Forget pending moves whose root has a newer one, keeping their order. */
static void dpm_pending_compact(struct dl_core *c)
{
	struct dl_idvec *p = &c->dpm_pending;
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->n; i += 2) {
		if (c->dpm_stamp[p->v[i]] != p->v[i + 1])
			continue;
		p->v[n++] = p->v[i];
		p->v[n++] = p->v[i + 1];
	}
	p->n = n;
}

/*
 * Record device_reorder_to_tail(@d) for dl_dpm_settle().  When nothing is
 * pending and @d is the tail with nothing below it, the move is a no-op and
 * is not recorded: a link added as its consumer registers.
 */
static int dpm_note_move(struct dl_core *c, dl_dev_t d)
{
	struct dl_idvec *p = &c->dpm_pending;
	const struct dl_device *x = &c->dev[d];
	int err;

	if (dpm_settled(c) && (!x->registered || c->dpm_tail == d) && !x->children.n) {
		uint32_t i;

		for (i = 0; i < x->consumers.n; i++)
			if (!dl_link_is_sync_state_only(c->link[x->consumers.v[i]].flags))
				break;
		if (i == x->consumers.n)
			return 0;
	}
	if (!c->dpm_stamp && !(c->dpm_stamp = calloc(c->cap_dev, sizeof(*c->dpm_stamp))))
		return -ENOMEM;
	if (c->dpm_clock == UINT32_MAX - 1)
		dl_dpm_settle(c);   /* stamps are per batch: start a new one */
	/*
	 * Compacted at 1.5 moves a device: at most one a device is live, so
	 * each compaction pays for the half a device since the last (3 steps a
	 * move); a retry storm's list peaks at 12 bytes a device (it was 16).
	 */
	if (p->n / 2 > c->ndev + c->ndev / 2 + 512)
		dpm_pending_compact(c);
	c->dpm_stamp[d] = ++c->dpm_clock;
	err = dl_idvec_push(p, d);
	if (!err && (err = dl_idvec_push(p, c->dpm_clock)))
		p->n--;
	return err;
}

/*
 * After a retry storm nearly every device is a root of its own, and the
 * roots come in the order they were retried, scattered over the records:
 * each walk would start on a miss of the record, then of its two vectors,
 * then of what they name.  Root @i (its entry at p->v[i - 2]) starts the
 * loads of the roots ahead of it, each stage once the one before is in.
 */
#define SETTLE_AHEAD 8

static inline void settle_prefetch(const struct dl_core *c, const struct dl_idvec *p, uint32_t i)
{
	if (i >= 2 + 6 * SETTLE_AHEAD) {
		dl_dev_t d = p->v[i - 2 - 6 * SETTLE_AHEAD];

		dl_prefetch(&c->dpm_stamp[d]);
		dl_prefetch(&c->dev[d]);
		dl_prefetch(&c->dev[d].children);
	}
	if (i >= 2 + 4 * SETTLE_AHEAD) {
		const struct dl_device *x = &c->dev[p->v[i - 2 - 4 * SETTLE_AHEAD]];

		if (x->consumers.n)
			dl_prefetch(&x->consumers.v[x->consumers.n - 1]);
		if (x->children.n)
			dl_prefetch(&x->children.v[x->children.n - 1]);
	}
	if (i >= 2 + 2 * SETTLE_AHEAD)
		walk_prefetch(c, &c->dev[p->v[i - 2 - 2 * SETTLE_AHEAD]]);
}

/**
 * dl_dpm_settle - apply the dpm_list moves recorded since the last settle, so
 * that the list is the kernel's.  The newest root first: its walk places the
 * devices whose latest move it was; an older root's walk skips every device
 * already placed, and what lies below it.  O(devices and links placed).  On
 * running out of memory the list stays a topological order, not the kernel's;
 * when the run is to stop (c->stopped) the walks and the moves give up.
 */
void dl_dpm_settle(struct dl_core *c)
{
	struct dl_idvec *p = &c->dpm_pending, *post = &c->settle_post;
	uint32_t ep;

	if (dpm_settled(c))
		return;
	ep = next_epoch(c);
	post->n = 0;
	for (uint32_t i = p->n; i >= 2; i -= 2) {
		dl_dev_t d = p->v[i - 2];

		settle_prefetch(c, p, i);

		if (c->dpm_stamp[d] != p->v[i - 1])
			continue;   /* d moved again later */
		c->dpm_stamp[d] = 0;
		if (c->dev[d].mark == ep)
			continue;   /* placed by a newer move */
		if (reorder_walk(c, d, DL_NONE, ep, &c->settle_stack, post))
			break;
	}
	for (uint32_t i = 0; i < p->n; i += 2)
		c->dpm_stamp[p->v[i]] = 0;
	p->n = 0;
	c->dpm_clock = 0;
	dpm_move_set(c, post);
}

/** dl_dpm_first - the head of dpm_list, settled (DL_NONE: empty). */
dl_dev_t dl_dpm_first(struct dl_core *c)
{
	dl_dpm_settle(c);
	return c->dpm_head;
}

/** dl_dpm_last - the tail of dpm_list, settled (DL_NONE: empty). */
dl_dev_t dl_dpm_last(struct dl_core *c)
{
	dl_dpm_settle(c);
	return c->dpm_tail;
}

/**
 * dl_reorder_to_tail - device_reorder_to_tail(): move d, its children and its
 * consumers (recursively, SYNC_STATE_ONLY links excluded) to the tail of
 * dpm_list, where the kernel's walk leaves them.  Recorded; the list shows it
 * once settled (dl_dpm_first()).  0 or -ENOMEM.
 */
int dl_reorder_to_tail(struct dl_core *c, dl_dev_t d)
{
	return dpm_note_move(c, d);
}

/*
 * device_link_add()'s "reorder:" for a link @con -> @sup now in the graph:
 * the topo keys follow the new edge (topo_reorder(); c->scratch2 holds
 * depends_search()'s forward set from @con to @sup), and the kernel's move
 * of @con's set to the tail of dpm_list is recorded.
 */
static int link_reorder(struct dl_core *c, dl_dev_t con, dl_dev_t sup)
{
	if (c->dev[con].registered && c->topo[con].key < c->topo[sup].key &&
	    topo_reorder(c, sup, &c->scratch2, c->topo_fwd_bound))
		return -ENOMEM;
	return dpm_note_move(c, con);
}

static int refuse(struct dl_core *c, dl_dev_t con, dl_dev_t sup, uint32_t flags,
		  unsigned reason)
{
	dl_core_emit(c, DL_EV_LINK_REFUSED, con, DL_NONE, sup, flags, reason);
	return -(int)reason;
}

/*
 * device_link_add()'s checks of its arguments (rules 1-5), made on the
 * caller's flags before anything is taken: the refusal, or 0.  MANAGED is not
 * a valid add flag and device_link_flag_is_sync_state_only() ignores it, so
 * rule 5 reads the same before and after device_link_add() adds it.
 */
static unsigned link_add_check_args(const struct dl_core *c, dl_dev_t con, dl_dev_t sup,
				    uint32_t flags)
{
	if (con >= c->ndev || sup >= c->ndev)
		return DL_REFUSE_MISSING_DEVICE;
	if (con == sup)
		return DL_REFUSE_SELF_LINK;
	if (flags & ~DL_ADD_VALID_FLAGS)
		return DL_REFUSE_INVALID_FLAGS;
	if ((flags & DL_FLAG_STATELESS) && (flags & DL_MANAGED_LINK_FLAGS))
		return DL_REFUSE_STATELESS_MANAGED;
	if ((flags & DL_FLAG_AUTOPROBE_CONSUMER) &&
	    (flags & (DL_FLAG_AUTOREMOVE_CONSUMER | DL_FLAG_AUTOREMOVE_SUPPLIER)))
		return DL_REFUSE_AUTOPROBE_AUTOREMOVE;
	if ((flags & DL_FLAG_SYNC_STATE_ONLY) && !dl_link_is_sync_state_only(flags))
		return DL_REFUSE_SYNC_STATE_ONLY_FLAGS;
	return 0;
}

/* The runtime-PM counts a PM_RUNTIME link needs, allocated at its first add.  0 or -ENOMEM. */
static int link_rpm_alloc(struct dl_core *c)
{
	if (!c->link_rpm && !(c->link_rpm = calloc(c->cap_link, sizeof(*c->link_rpm))))
		return -ENOMEM;
	return dl_rpm_cnt_alloc(c);
}

/*
 * device_link_add()'s checks under the locks (rules 7-9): device_pm_initialized(),
 * device_is_dependent() and a SYNC_STATE_ONLY consumer that is bound.  0 with
 * *reason the refusal or 0; -EINTR when the walk was stopped (c->stopped): it
 * answers nothing, so no refusal is made up.  The devices the walk visits are
 * those the topo reorder moves (link_reorder()), left in c->scratch2 for it.
 */
static int link_add_may_link(struct dl_core *c, dl_dev_t con, dl_dev_t sup, uint32_t flags,
			     unsigned *reason)
{
	*reason = 0;
	if (!c->dev[sup].registered) {
		*reason = DL_REFUSE_SUPPLIER_UNREGISTERED;
	} else if (!(flags & DL_FLAG_SYNC_STATE_ONLY) &&
		   depends_search(c, con, sup, &c->scratch2)) {
		if (c->stopped)
			return -EINTR;
		*reason = DL_REFUSE_REVERSE_DEPENDENCY;
	} else if ((flags & DL_FLAG_SYNC_STATE_ONLY) && c->dev[con].state != DL_DEV_NO_DRIVER &&
		   c->dev[con].state != DL_DEV_PROBING) {
		*reason = DL_REFUSE_CONSUMER_BOUND;
	}
	return 0;
}

/*
 * device_link_add() on an existing link @l (the list_for_each_entry() body):
 * the new flags merge into it, and link_add is logged.  True when the kernel
 * goes on to "reorder:", the SSO -> STATELESS and SSO -> normal upgrades.
 */
static bool link_add_existing(struct dl_core *c, dl_link_t l, uint32_t flags)
{
	struct dl_link *k = &c->link[l];
	bool reorder = false;

	if ((k->flags & DL_FLAG_INFERRED) && !(flags & DL_FLAG_INFERRED))
		k->flags &= ~DL_FLAG_INFERRED;
	if (flags & DL_FLAG_PM_RUNTIME) {
		k->flags |= DL_FLAG_PM_RUNTIME;
		if (flags & DL_FLAG_RPM_ACTIVE)
			c->link_rpm[l]++;
	}
	if (flags & DL_FLAG_STATELESS) {
		k->kref++;
		reorder = (k->flags & DL_FLAG_SYNC_STATE_ONLY) && !(k->flags & DL_FLAG_STATELESS);
		k->flags |= DL_FLAG_STATELESS;
		dl_core_emit(c, DL_EV_LINK_ADD, k->consumer, l, k->supplier, k->flags, k->status);
		return reorder;
	}
	if (flags & DL_FLAG_AUTOREMOVE_SUPPLIER) {
		if (k->flags & DL_FLAG_AUTOREMOVE_CONSUMER) {
			k->flags &= ~DL_FLAG_AUTOREMOVE_CONSUMER;
			k->flags |= DL_FLAG_AUTOREMOVE_SUPPLIER;
		}
	} else if (!(flags & DL_FLAG_AUTOREMOVE_CONSUMER)) {
		k->flags &= ~(DL_FLAG_AUTOREMOVE_CONSUMER | DL_FLAG_AUTOREMOVE_SUPPLIER);
	}
	if (!(k->flags & DL_FLAG_MANAGED)) {
		bool held = holds_sync_state(k);

		k->kref++;
		k->flags |= DL_FLAG_MANAGED;
		sync_waiting_update(c, k, held);
		dl_link_set_status(c, l, link_init_status(c, k->consumer, k->supplier));
	}
	if ((k->flags & DL_FLAG_SYNC_STATE_ONLY) && !(flags & DL_FLAG_SYNC_STATE_ONLY)) {
		k->flags &= ~DL_FLAG_SYNC_STATE_ONLY;
		c->graph_gen++;
		reorder = true;
	}
	dl_core_emit(c, DL_EV_LINK_ADD, k->consumer, l, k->supplier, k->flags, k->status);
	return reorder;
}

/* Room for one more link: c->link and c->link_rpm doubled when full.  0 or -ENOMEM. */
static int link_grow(struct dl_core *c)
{
	uint32_t cap = c->cap_link * 2;
	struct dl_link *nl;

	if (c->nlink < c->cap_link)
		return 0;
	if (!(nl = realloc(c->link, (size_t)cap * sizeof(*nl))))
		return -ENOMEM;
	c->link = nl;
	if (c->link_rpm) {
		uint32_t *nr = realloc(c->link_rpm, (size_t)cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		memset(nr + c->cap_link, 0, (size_t)(cap - c->cap_link) * sizeof(*nr));
		c->link_rpm = nr;
	}
	c->cap_link = cap;
	return 0;
}

/*
 * device_link_add()'s new link: kzalloc() and the fields, rpm_active (one
 * more when @rpm_taken, the reference RPM_ACTIVE took), the initial status
 * and list_add_tail_rcu() on both devices' lists; link_add is logged.  0
 * with *out the link, or -ENOMEM with nothing changed that a reader sees.
 * (Each branch logs its own link_add: one emit after both costs BM_link_add
 * 1% more instructions.)
 */
static int link_add_new(struct dl_core *c, dl_dev_t con, dl_dev_t sup, uint32_t flags,
			bool rpm_taken, dl_link_t *out)
{
	dl_link_t l = c->nlink;
	struct dl_link *k;

	if (link_grow(c))
		return -ENOMEM;
	k = &c->link[l];
	memset(k, 0, sizeof(*k));
	k->consumer = con;
	k->supplier = sup;
	k->flags = flags & ~DL_FLAG_RPM_ACTIVE;
	k->kref = 1;
	k->live = 1;
	/*
	 * A new id's slot is 0 (calloc, link_grow()) unless a failed add left
	 * its 1; a link that takes nothing leaves the page of zeroes untouched
	 * (a million devices: 10 MB of RSS).
	 */
	if (c->link_rpm && (rpm_taken || c->link_rpm[l]))
		c->link_rpm[l] = rpm_taken ? 1 : 0;
	if (dl_idvec_push(&c->dev[con].suppliers, l))
		return -ENOMEM;
	if (dl_idvec_push(&c->dev[sup].consumers, l)) {
		c->dev[con].suppliers.n--;
		return -ENOMEM;
	}
	c->graph_gen++;
	c->nlink++;
	c->nlink_live++;
	k->status = (flags & DL_FLAG_STATELESS) ? DL_STATE_NONE
						: (uint8_t)link_init_status(c, con, sup);
	sync_waiting_update(c, k, false);
	dl_core_emit(c, DL_EV_LINK_ADD, con, l, sup, k->flags, k->status);
	*out = l;
	return 0;
}

/**
 * dl_link_add - device_link_add(), in its steps: the argument checks, the
 * runtime-PM reference RPM_ACTIVE takes on the supplier, the checks under the
 * locks, then an existing link updated or a new one made, and "reorder:".
 * Once the reference is taken every failure leaves by "out:", which gives it
 * back.  On success *out (if given) is the link, new or updated; on refusal
 * returns -enum dl_refusal and logs link_refused.
 */
int dl_link_add(struct dl_core *c, dl_dev_t con, dl_dev_t sup, uint32_t flags,
		dl_link_t *out)
{
	bool rpm_taken = false, reorder;
	unsigned reason;
	dl_link_t l;
	int err;

	reason = link_add_check_args(c, con, sup, flags);
	if (reason)
		return refuse(c, con, sup, flags, reason);
	if (!(flags & DL_FLAG_STATELESS))
		flags |= DL_FLAG_MANAGED;
	if ((flags & DL_FLAG_PM_RUNTIME) && link_rpm_alloc(c))
		return -ENOMEM;
	if ((flags & DL_FLAG_PM_RUNTIME) && (flags & DL_FLAG_RPM_ACTIVE)) {
		if (!c->dev[sup].registered || dl_rpm_get_internal(c, sup, NULL) < 0)
			return refuse(c, con, sup, flags, DL_REFUSE_RPM_RESUME_FAILED);
		rpm_taken = true;
	}

	err = link_add_may_link(c, con, sup, flags, &reason);
	if (err || reason)
		goto out;
	if (flags & DL_FLAG_AUTOREMOVE_SUPPLIER)
		flags &= ~DL_FLAG_AUTOREMOVE_CONSUMER;
	l = dl_link_find(c, con, sup);
	if (l != DL_NONE) {
		reorder = link_add_existing(c, l, flags);
	} else {
		err = link_add_new(c, con, sup, flags, rpm_taken, &l);
		if (err)
			goto out;
		reorder = !(flags & DL_FLAG_SYNC_STATE_ONLY);
	}
	if (out)
		*out = l;
	return reorder ? link_reorder(c, con, sup) : 0;

out:
	/* the reference RPM_ACTIVE took on the supplier: the link does not hold it */
	if (rpm_taken)
		dl_rpm_put_noidle(c, sup);
	return reason ? refuse(c, con, sup, flags, reason) : err;
}

/**
 * dl_link_del - device_link_del() / device_link_put_kref(): a STATELESS link
 * drops one kref; a managed link whose consumer is still registered cannot be
 * dropped by a caller (-EPERM, the kernel WARNs); otherwise it goes at once.
 */
int dl_link_del(struct dl_core *c, dl_link_t l)
{
	struct dl_link *k;

	if (l >= c->nlink || !c->link[l].live)
		return -ENOENT;
	k = &c->link[l];
	if (k->flags & DL_FLAG_STATELESS) {
		link_kref_put(c, l);
		return 0;
	}
	if (c->dev[k->consumer].registered)
		return -EPERM;
	link_free(c, l);
	return 0;
}

/* fw_devlink marks links on a dependency cycle; they no longer block probe. */
int dl_link_mark_cycle(struct dl_core *c, dl_link_t l)
{
	if (l >= c->nlink || !c->link[l].live)
		return -ENOENT;
	c->link[l].flags |= DL_FLAG_CYCLE;
	return 0;
}

/* Is parent -> @d and every supplier -> @d that counts marked @ep? */
static bool superiors_marked(const struct dl_core *c, dl_dev_t d, uint32_t ep)
{
	const struct dl_device *x = &c->dev[d];

	if (x->parent != DL_NONE && c->dev[x->parent].mark != ep)
		return false;
	for (uint32_t i = 0; i < x->suppliers.n; i++) {
		const struct dl_link *k = &c->link[x->suppliers.v[i]];

		if (!dl_link_is_sync_state_only(k->flags) && c->dev[k->supplier].mark != ep)
			return false;
	}
	return true;
}

/**
 * dl_dpm_is_topological - settle dpm_list (dl_dpm_settle()), then: is every
 * device after its parent and its suppliers (SYNC_STATE_ONLY links left
 * out)?  O(devices + links).
 */
bool dl_dpm_is_topological(struct dl_core *c)
{
	uint32_t ep;

	dl_dpm_settle(c);
	ep = next_epoch(c);
	for (dl_dev_t d = c->dpm_head; d != DL_NONE; d = c->dev[d].dpm_next) {
		if (!superiors_marked(c, d, ep))
			return false;
		c->dev[d].mark = ep;
	}
	return true;
}

/**
 * dl_topo_is_topological - is the topo list a consistent list of the
 * registered devices with keys growing along it, and do they grow from
 * parent to child and from supplier to consumer (SYNC_STATE_ONLY links left
 * out)?  O(devices + links).
 */
bool dl_topo_is_topological(const struct dl_core *c)
{
	dl_dev_t prev = DL_NONE;
	uint32_t n = 0;

	for (dl_dev_t d = c->topo_head; d != DL_NONE; prev = d, d = c->topo[d].next) {
		if (++n > c->dpm_count || !c->dev[d].registered || c->topo[d].prev != prev ||
		    (prev != DL_NONE && c->topo[prev].key >= c->topo[d].key))
			return false;
	}
	if (n != c->dpm_count || c->topo_tail != prev)
		return false;
	for (dl_dev_t d = 0; d < c->ndev; d++) {
		const struct dl_device *x = &c->dev[d];

		if (!x->registered)
			continue;
		if (x->parent != DL_NONE && c->topo[x->parent].key >= c->topo[d].key)
			return false;
		for (uint32_t i = 0; i < x->suppliers.n; i++) {
			const struct dl_link *k = &c->link[x->suppliers.v[i]];

			if (!dl_link_is_sync_state_only(k->flags) &&
			    c->topo[k->supplier].key >= c->topo[d].key)
				return false;
		}
	}
	return true;
}
