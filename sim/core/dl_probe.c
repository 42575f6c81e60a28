/*
 * dl_probe.c - probing, deferred probing, unbinding and sync_state()
 * (drivers/base/dd.c and the device_links_* helpers of drivers/base/core.c).
 *
 * The engines call these at the instant the kernel would run them; time
 * (the driver's probe or remove callback) passes between the calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/dl_internal.h"

/* A link that gates probe and whose supplier is not bound yet. */
static bool link_blocks_probe(const struct dl_link *k)
{
	return dl_link_gates_probe(k) && k->status != DL_STATE_AVAILABLE;
}

/* Take @d's entry out of @v from position @from on, keeping the others' order. */
static bool unlist_from(struct dl_idvec *v, uint32_t from, dl_dev_t d)
{
	for (uint32_t i = from; i < v->n; i++)
		if (v->v[i] == d) {
			memmove(v->v + i, v->v + i + 1, (v->n - i - 1) * sizeof(*v->v));
			v->n--;
			return true;
		}
	return false;
}

/*
 * driver_deferred_probe_add(): list_add_tail() onto the pending list.  A
 * device's entry stays where it is when it binds (dl_probe_check() deletes
 * it lazily: dl_deferred_next() skips it), so a device listed again after
 * an unbind would find that old entry alive at its old place, ahead of the
 * devices listed since: the stale entry goes first.  Rare (a bind, an
 * unbind and a rebind before the list drains), hence a plain scan.
 */
void dl_deferred_add(struct dl_core *c, dl_dev_t d)
{
	struct dl_device *x = &c->dev[d];

	if (x->deferred)
		return;
	if (c->can_match && d < c->can_match_n && !c->can_match[d])
		return;   /* if (!dev->can_match) return; */
	if (x->listed && !unlist_from(&c->deferred_active, c->deferred_active_head, d))
		unlist_from(&c->deferred_pending, 0, d);
	x->listed = 0;
	if (dl_idvec_push(&c->deferred_pending, d) == 0)
		x->deferred = x->listed = 1;
}

/* driver_deferred_probe_trigger(): a no-op until late_initcall. */
void dl_deferred_trigger(struct dl_core *c)
{
	struct dl_idvec *p = &c->deferred_pending, *a = &c->deferred_active;

	if (!c->deferred_enabled)
		return;
	c->deferred_triggers++;
	/*
	 * The active list is a queue (head advances in dl_deferred_next); drop
	 * the consumed front before appending, or a retry storm that never
	 * drains it grows it by every trigger.
	 */
	if (c->deferred_active_head && c->deferred_active_head * 2 >= a->n) {
		memmove(a->v, a->v + c->deferred_active_head,
			(a->n - c->deferred_active_head) * sizeof(*a->v));
		a->n -= c->deferred_active_head;
		c->deferred_active_head = 0;
	}
	for (uint32_t i = 0; i < p->n; i++)
		dl_idvec_push(a, p->v[i]);
	p->n = 0;
}

/**
 * dl_core_track_can_match - from now on, keep dev->can_match for the
 * devices that exist (none has it yet) and let dl_deferred_add() honour it.
 * Returns 0 or -ENOMEM.
 */
int dl_core_track_can_match(struct dl_core *c)
{
	if (c->can_match)
		return 0;
	c->can_match = calloc(c->ndev ? c->ndev : 1, 1);
	if (!c->can_match)
		return -ENOMEM;
	c->can_match_n = c->ndev;
	return 0;
}

/* deferred_probe_initcall(): enable retries and trigger once. */
void dl_deferred_enable(struct dl_core *c)
{
	c->deferred_enabled = true;
	dl_deferred_trigger(c);
}

/*
 * A retry storm walks the active list once per trigger, and each retry reads
 * a scattered device, its supplier vector and its supplier links: three
 * dependent cache misses.  Start them a few entries ahead, one level per
 * distance, so each is in cache by the time the next level needs it.
 */
#define DEFERRED_AHEAD 8

static inline void deferred_prefetch(const struct dl_core *c, uint32_t h)
{
	const struct dl_idvec *a = &c->deferred_active;
	const struct dl_device *x;

	if (h + 3 * DEFERRED_AHEAD < a->n)
		dl_prefetch(&c->dev[a->v[h + 3 * DEFERRED_AHEAD]]);
	if (h + 2 * DEFERRED_AHEAD < a->n) {
		x = &c->dev[a->v[h + 2 * DEFERRED_AHEAD]];
		if (x->suppliers.n)
			dl_prefetch(x->suppliers.v);
	}
	if (h + DEFERRED_AHEAD < a->n) {
		x = &c->dev[a->v[h + DEFERRED_AHEAD]];
		for (uint32_t i = 0; i < x->suppliers.n && i < 4; i++)
			dl_prefetch(&c->link[x->suppliers.v[i]]);
	}
}

/**
 * dl_deferred_peek - the device @ahead entries past the next one of the
 * active list, or DL_NONE; for callers that prefetch their own per-device
 * data along the retry walk.
 */
dl_dev_t dl_deferred_peek(const struct dl_core *c, uint32_t ahead)
{
	uint32_t h = c->deferred_active_head + ahead;

	return h < c->deferred_active.n ? c->deferred_active.v[h] : DL_NONE;
}

/**
 * dl_deferred_next - the next device of the active list to retry
 * (deferred_probe_work_func), or DL_NONE when the list is empty.
 */
dl_dev_t dl_deferred_next(struct dl_core *c)
{
	struct dl_idvec *a = &c->deferred_active;

	while (c->deferred_active_head < a->n) {
		deferred_prefetch(c, c->deferred_active_head);
		dl_dev_t d = a->v[c->deferred_active_head++];

		c->dev[d].listed = 0;   /* its only entry (dl_deferred_add()) */
		if (!c->dev[d].deferred || !c->dev[d].registered)
			continue;
		c->dev[d].deferred = 0;
		/*
		 * "Force the device to the end of the dpm_list since the PM
		 * code assumes that the order we add things to the list is a
		 * good order for suspend but deferred probe makes that very
		 * unsafe": device_pm_move_to_tail(), before each retry.
		 */
		dl_reorder_to_tail(c, d);
		dl_core_emit(c, DL_EV_DEFERRED_RETRY, d, DL_NONE, DL_NONE, 0, 0);
		return d;
	}
	a->n = 0;
	c->deferred_active_head = 0;
	return DL_NONE;
}

/**
 * dl_probe_check - device_links_check_suppliers() before the driver's probe.
 * Returns 0 (supplier links now CONSUMER_PROBE, device PROBING),
 * -DL_EPROBE_DEFER, or -EBUSY if the device is not free to probe.
 * @ignore_links skips the check (the `naive` negative control).  A deferral
 * does not put the device on the deferred list: driver_probe_device() does
 * that only once __driver_probe_device() has returned (its runtime PM puts
 * included), so an engine in which the attempt takes time calls
 * dl_probe_deferred() when it ends.
 */
int dl_probe_check(struct dl_core *c, dl_dev_t d, bool ignore_links)
{
	struct dl_device *x = &c->dev[d];

	if (!x->registered || x->state != DL_DEV_NO_DRIVER)
		return -EBUSY;
	if (c->can_match && d < c->can_match_n)
		c->can_match[d] = 1;   /* __driver_probe_device(): dev->can_match = true */
	c->probe_attempts++;
	if (!ignore_links) {
		for (uint32_t i = 0; i < x->suppliers.n; i++) {
			if (link_blocks_probe(&c->link[x->suppliers.v[i]])) {
				c->probe_defers++;
				return -DL_EPROBE_DEFER;
			}
		}
		/*
		 * Every managed link that did not defer becomes CONSUMER_PROBE:
		 * the AVAILABLE ones, and the SYNC_STATE_ONLY ones whatever their
		 * status (device_links_no_driver() takes them back to DORMANT).
		 */
		for (uint32_t i = 0; i < x->suppliers.n; i++) {
			dl_link_t l = x->suppliers.v[i];
			const struct dl_link *k = &c->link[l];

			if ((k->flags & DL_FLAG_MANAGED) && k->status != DL_STATE_CONSUMER_PROBE &&
			    (k->status == DL_STATE_AVAILABLE || (k->flags & DL_FLAG_SYNC_STATE_ONLY)))
				dl_link_set_status(c, l, DL_STATE_CONSUMER_PROBE);
		}
	}
	x->deferred = 0;
	x->state = DL_DEV_PROBING;
	return 0;
}

/**
 * dl_probe_begin - dl_probe_check() for a caller in which no time passes
 * between the check and the attempt's return: a deferral puts the device on
 * the deferred list at once.  Returns what dl_probe_check() does.
 */
int dl_probe_begin(struct dl_core *c, dl_dev_t d, bool ignore_links)
{
	int r = dl_probe_check(c, d, ignore_links);

	if (r == -DL_EPROBE_DEFER)
		dl_deferred_add(c, d);
	return r;
}

/**
 * dl_probe_deferred - driver_probe_device() once an attempt that
 * dl_probe_check() deferred has returned: the device goes on the pending
 * list, and if the lists were triggered since the attempt began (@trig:
 * dl_deferred_trigger_count() then), they are triggered again ("Did a
 * trigger occur while probing? Need to re-trigger if yes").
 */
void dl_probe_deferred(struct dl_core *c, dl_dev_t d, uint32_t trig)
{
	dl_deferred_add(c, d);
	if (trig != dl_deferred_trigger_count(c))
		dl_deferred_trigger(c);
}

/* __device_links_queue_sync_state() */
static void queue_sync_state(struct dl_core *c, dl_dev_t d)
{
	if (c->sync_state_paused || !dl_sync_state_ready(c, d))
		return;
	c->dev[d].state_synced = 1;
	dl_core_emit(c, DL_EV_SYNC_STATE, d, DL_NONE, DL_NONE, 0, 0);
}

/*
 * Every managed consumer link ACTIVE: dl_core.c counts the others in
 * sync_waiting as link statuses and flags change, so that a bind does not
 * rescan every consumer of each of its suppliers (O(degree^2) per supplier).
 */
bool dl_sync_state_ready(const struct dl_core *c, dl_dev_t d)
{
	const struct dl_device *x = &c->dev[d];

	return x->state == DL_DEV_DRIVER_BOUND && !x->state_synced && x->sync_waiting == 0;
}

/* device_links_supplier_sync_state_resume(), at late boot. */
void dl_sync_state_resume(struct dl_core *c)
{
	c->sync_state_paused = false;
	for (dl_dev_t d = dl_dpm_first(c); d != DL_NONE; d = c->dev[d].dpm_next)
		queue_sync_state(c, d);
}

/* device_links_driver_bound() + driver_bound() */
static void links_driver_bound(struct dl_core *c, dl_dev_t d)
{
	struct dl_device *x = &c->dev[d];

	/*
	 * Each consumer link leads to a scattered link and then a scattered
	 * consumer (dl_deferred_add reads it): take the misses in two rounds
	 * of parallel loads rather than one chain per link.
	 */
	for (uint32_t i = 0; i < x->consumers.n; i++)
		dl_prefetch(&c->link[x->consumers.v[i]]);
	for (uint32_t i = 0; i < x->consumers.n; i++)
		dl_prefetch(&c->dev[c->link[x->consumers.v[i]].consumer]);
	for (uint32_t i = 0; i < x->consumers.n; i++) {
		dl_link_t l = x->consumers.v[i];
		const struct dl_link *k = &c->link[l];

		if (!(k->flags & DL_FLAG_MANAGED))
			continue;
		/* Links created during the consumer's probe: skip. */
		if (k->status == DL_STATE_CONSUMER_PROBE || k->status == DL_STATE_ACTIVE)
			continue;
		dl_link_set_status(c, l, DL_STATE_AVAILABLE);
		if (k->flags & DL_FLAG_AUTOPROBE_CONSUMER)
			dl_deferred_add(c, k->consumer);
	}
	queue_sync_state(c, d);
	for (uint32_t i = x->suppliers.n; i-- > 0;) {
		dl_link_t l = x->suppliers.v[i];
		const struct dl_link *k = &c->link[l];
		dl_dev_t sup = k->supplier;

		if (!(k->flags & DL_FLAG_MANAGED))
			continue;
		if (k->flags & DL_FLAG_SYNC_STATE_ONLY)
			/* Only SYNC_STATE_ONLY is set: the link has served its purpose. */
			dl_link_drop_managed(c, l);
		else
			dl_link_set_status(c, l, DL_STATE_ACTIVE);
		queue_sync_state(c, sup);
	}
	x->state = DL_DEV_DRIVER_BOUND;
	queue_sync_state(c, d);
}

/* __device_links_no_driver() */
static void links_no_driver_suppliers(struct dl_core *c, dl_dev_t d)
{
	struct dl_device *x = &c->dev[d];

	for (uint32_t i = x->suppliers.n; i-- > 0;) {
		dl_link_t l = x->suppliers.v[i];
		const struct dl_link *k = &c->link[l];

		if (!(k->flags & DL_FLAG_MANAGED))
			continue;
		if (k->flags & DL_FLAG_AUTOREMOVE_CONSUMER) {
			dl_link_drop_managed(c, l);
			continue;
		}
		if (k->status != DL_STATE_CONSUMER_PROBE && k->status != DL_STATE_ACTIVE)
			continue;
		if (c->dev[k->supplier].state == DL_DEV_DRIVER_BOUND)
			dl_link_set_status(c, l, DL_STATE_AVAILABLE);
		else
			dl_link_set_status(c, l, DL_STATE_DORMANT);
	}
	x->state = DL_DEV_NO_DRIVER;
}

/**
 * dl_probe_end - the driver's probe returned @err.  0: driver_bound()
 * (links, sync_state, deferred-probe trigger); -DL_EPROBE_DEFER: back on the
 * deferred list; other errors: device_links_no_driver().
 */
void dl_probe_end(struct dl_core *c, dl_dev_t d, int err)
{
	struct dl_device *x = &c->dev[d];

	if (x->state != DL_DEV_PROBING)
		return;
	if (err == 0) {
		links_driver_bound(c, d);
		dl_deferred_trigger(c);
		return;
	}
	/* device_links_no_driver(): consumer links added during our probe. */
	for (uint32_t i = 0; i < x->consumers.n; i++) {
		dl_link_t l = x->consumers.v[i];
		const struct dl_link *k = &c->link[l];

		if ((k->flags & DL_FLAG_MANAGED) &&
		    (k->status == DL_STATE_CONSUMER_PROBE || k->status == DL_STATE_ACTIVE))
			dl_link_set_status(c, l, DL_STATE_DORMANT);
	}
	links_no_driver_suppliers(c, d);
	if (err == -DL_EPROBE_DEFER) {
		c->probe_defers++;
		dl_deferred_add(c, d);
	}
}

/**
 * dl_links_busy - device_links_busy(): the device starts unbinding; returns
 * true while a managed consumer link is CONSUMER_PROBE or ACTIVE.  Links that
 * are not busy become SUPPLIER_UNBIND.
 */
bool dl_links_busy(struct dl_core *c, dl_dev_t d)
{
	struct dl_device *x = &c->dev[d];
	bool busy = false;

	for (uint32_t i = 0; i < x->consumers.n; i++) {
		dl_link_t l = x->consumers.v[i];
		const struct dl_link *k = &c->link[l];

		if (!(k->flags & DL_FLAG_MANAGED))
			continue;
		if (k->status == DL_STATE_CONSUMER_PROBE || k->status == DL_STATE_ACTIVE) {
			busy = true;
			break;
		}
		dl_link_set_status(c, l, DL_STATE_SUPPLIER_UNBIND);
	}
	x->state = DL_DEV_UNBINDING;
	return busy;
}

/**
 * dl_links_unbind_next - one step of device_links_unbind_consumers(): returns
 * the next consumer whose driver must be released first (its link is now
 * SUPPLIER_UNBIND), DL_UNBIND_WAIT_PROBE if a consumer is still probing, or
 * DL_NONE when no consumer is bound any more.
 */
dl_dev_t dl_links_unbind_next(struct dl_core *c, dl_dev_t d)
{
	struct dl_device *x = &c->dev[d];

	for (uint32_t i = 0; i < x->consumers.n; i++) {
		dl_link_t l = x->consumers.v[i];
		const struct dl_link *k = &c->link[l];
		unsigned status = k->status;

		if (!(k->flags & DL_FLAG_MANAGED) || (k->flags & DL_FLAG_SYNC_STATE_ONLY))
			continue;
		if (status == DL_STATE_CONSUMER_PROBE)
			return DL_UNBIND_WAIT_PROBE;
		dl_link_set_status(c, l, DL_STATE_SUPPLIER_UNBIND);
		if (status == DL_STATE_ACTIVE)
			return k->consumer;
	}
	return DL_NONE;
}

/**
 * dl_driver_cleanup - device_links_driver_cleanup() after the driver's remove:
 * AUTOREMOVE_SUPPLIER consumer links go, the rest become DORMANT, and the
 * device's own supplier links are handled as on probe failure.
 */
void dl_driver_cleanup(struct dl_core *c, dl_dev_t d)
{
	struct dl_device *x = &c->dev[d];

	for (uint32_t i = x->consumers.n; i-- > 0;) {
		dl_link_t l = x->consumers.v[i];
		const struct dl_link *k = &c->link[l];

		if (!(k->flags & DL_FLAG_MANAGED))
			continue;
		if (k->status == DL_STATE_SUPPLIER_UNBIND &&
		    (k->flags & DL_FLAG_AUTOREMOVE_SUPPLIER)) {
			dl_link_drop_managed(c, l);
			continue;
		}
		dl_link_set_status(c, l, DL_STATE_DORMANT);
	}
	links_no_driver_suppliers(c, d);
}

/**
 * dl_release_driver - __device_release_driver() in one go, for callers that
 * do not model time: consumers are unbound first, recursively; @order (if
 * given) receives the devices unbound, in order.  Returns -EBUSY if a
 * consumer is still probing (the kernel would wait for it).
 */
int dl_release_driver(struct dl_core *c, dl_dev_t d, struct dl_idvec *order)
{
	if (d >= c->ndev || c->dev[d].state != DL_DEV_DRIVER_BOUND)
		return 0;
	while (dl_links_busy(c, d)) {
		dl_dev_t x;

		while ((x = dl_links_unbind_next(c, d)) != DL_NONE) {
			int err;

			if (x == DL_UNBIND_WAIT_PROBE) {
				c->dev[d].state = DL_DEV_DRIVER_BOUND;
				return -EBUSY;
			}
			err = dl_release_driver(c, x, order);
			if (err)
				return err;
		}
	}
	dl_driver_cleanup(c, d);
	if (order)
		dl_idvec_push(order, d);
	return 0;
}
