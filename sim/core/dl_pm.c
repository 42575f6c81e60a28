/*
 * dl_pm.c - system-sleep readiness and runtime PM through links
 * (drivers/base/power/main.c dpm_wait_for_subordinate/superior,
 * drivers/base/power/runtime.c rpm_get_suppliers/rpm_put_suppliers).
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/dl_internal.h"

/* The registered devices @d waits for in a suspend or resume phase, less those @done. */
static uint32_t count_waits(const struct dl_core *c, dl_dev_t d, bool suspend,
			    const uint8_t *done)
{
	struct dl_dep_iter it;
	uint32_t n = 0;
	dl_dev_t y;

	dl_for_each_waited(it, c, suspend ? DL_DEP_SUSPEND : DL_DEP_RESUME, d, y)
		n += c->dev[y].registered && !(done && done[y]);
	return n;
}

/**
 * dl_pm_ready - may @d start a phase now?  Suspend phases wait for children
 * and consumers, resume phases for the parent and suppliers; @done[i] is
 * nonzero once device i finished the phase.
 */
bool dl_pm_ready(const struct dl_core *c, dl_dev_t d, bool suspend, const uint8_t *done)
{
	return count_waits(c, d, suspend, done) == 0;
}

/* dl_pm_wait_count - how many devices @d waits for in a phase (none done yet). */
uint32_t dl_pm_wait_count(const struct dl_core *c, dl_dev_t d, bool suspend)
{
	return count_waits(c, d, suspend, NULL);
}

static int rpm_resume(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed);
static void rpm_put_suppliers(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended);

/*
 * dl_rpm_cnt_alloc - the runtime-PM counts (dl_core.rpm_cnt), all zero, for
 * every entry point that may make a device runtime-active.  0 or -ENOMEM.
 */
int dl_rpm_cnt_alloc(struct dl_core *c)
{
	if (!c->rpm_cnt && !(c->rpm_cnt = calloc(c->cap_dev, sizeof(*c->rpm_cnt))))
		return -ENOMEM;
	return 0;
}

/* pm_runtime_get_sync(): usage++ and resume. */
int dl_rpm_get_internal(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed)
{
	int err;

	assert(c->rpm_cnt);
	c->rpm_cnt[d].usage++;
	err = rpm_resume(c, d, resumed);
	if (err)
		c->rpm_cnt[d].usage--;
	return err;
}

void dl_rpm_put_noidle(struct dl_core *c, dl_dev_t d)
{
	if (dl_rpm_usage(c, d) > 0)
		c->rpm_cnt[d].usage--;
}

/*
 * rpm_resume(): parent first, then rpm_get_suppliers(), then the device.  A
 * device whose runtime PM is disabled (dl_rpm_enabled()) resumes nothing:
 * -EACCES unless it is active already; its parent is then left alone, and as
 * a supplier it is ignored (rpm_get_suppliers() keeps the reference).
 */
static int rpm_resume(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed)
{
	struct dl_device *x = &c->dev[d];

	if (x->rpm_status == DL_RPM_ACTIVE)
		return 0;
	if (!dl_rpm_enabled(c, d))
		return -EACCES;
	if (x->rpm_fail)
		return -EIO;
	if (x->parent != DL_NONE && dl_rpm_enabled(c, x->parent)) {
		int err = rpm_resume(c, x->parent, resumed);

		if (err)
			return err;
	}
	for (uint32_t i = 0; i < x->suppliers.n; i++) {
		dl_link_t l = x->suppliers.v[i];
		dl_dev_t sup = c->link[l].supplier;
		int err;

		if (!(c->link[l].flags & DL_FLAG_PM_RUNTIME))
			continue;
		err = dl_rpm_get_internal(c, sup, resumed);
		if (err == -EACCES) {
			c->rpm_cnt[sup].usage++;   /* "Ignore suppliers with disabled runtime PM." */
		} else if (err) {
			/* __rpm_callback(): give back what rpm_get_suppliers() took */
			rpm_put_suppliers(c, d, NULL);
			return -EIO;
		}
		c->link_rpm[l]++;   /* allocated when the PM_RUNTIME link was added */
	}
	x->rpm_status = DL_RPM_ACTIVE;
	if (x->parent != DL_NONE)
		c->rpm_cnt[x->parent].children++;
	if (resumed)
		dl_idvec_push(resumed, d);
	return 0;
}

static void rpm_try_suspend(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended);

/* rpm_put_suppliers(): drop every reference this consumer holds. */
static void rpm_put_suppliers(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended)
{
	struct dl_device *x = &c->dev[d];

	for (uint32_t i = 0; i < x->suppliers.n; i++) {
		dl_link_t l = x->suppliers.v[i];
		struct dl_link *k = &c->link[l];

		if (!(k->flags & DL_FLAG_PM_RUNTIME))
			continue;
		while (c->link_rpm[l]) {
			c->link_rpm[l]--;
			dl_rpm_put_noidle(c, k->supplier);
			rpm_try_suspend(c, k->supplier, suspended);
		}
	}
}

/* rpm_idle() -> rpm_suspend(): only with no users and no active children. */
static void rpm_try_suspend(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended)
{
	struct dl_device *x = &c->dev[d];

	if (x->rpm_status != DL_RPM_ACTIVE || dl_rpm_usage(c, d) > 0 || dl_rpm_children(c, d) > 0 ||
	    !dl_rpm_enabled(c, d))
		return;
	x->rpm_status = DL_RPM_SUSPENDED;
	if (suspended)
		dl_idvec_push(suspended, d);
	rpm_put_suppliers(c, d, suspended);
	if (x->parent != DL_NONE) {
		c->rpm_cnt[x->parent].children--;
		rpm_try_suspend(c, x->parent, suspended);
	}
}

/**
 * dl_rpm_get - pm_runtime_get_sync(d): @resumed lists the devices resumed, in
 * the order they became active (parents and suppliers first).
 */
int dl_rpm_get(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed)
{
	if (d >= c->ndev || !c->dev[d].registered)
		return -EINVAL;
	if (dl_rpm_cnt_alloc(c))
		return -ENOMEM;
	return dl_rpm_get_internal(c, d, resumed);
}

/**
 * dl_rpm_put - pm_runtime_put(d): at usage zero the device suspends and drops
 * its supplier references; @suspended lists the devices suspended, in order
 * (consumers before their suppliers).  -EINVAL if the count is already zero.
 */
int dl_rpm_put(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended)
{
	if (d >= c->ndev || !c->dev[d].registered || dl_rpm_usage(c, d) <= 0)
		return -EINVAL;
	c->rpm_cnt[d].usage--;
	rpm_try_suspend(c, d, suspended);
	return 0;
}

/**
 * dl_core_set_rpm_users - which devices' drivers enable runtime PM in probe
 * (@users[i] nonzero, for device ids below @n; later ids: none).  From then
 * on a device's runtime PM is enabled only while it is bound, and a probe
 * attempt takes its suppliers and parent (dl_probe_rpm_get()).
 */
int dl_core_set_rpm_users(struct dl_core *c, const uint8_t *users, uint32_t n)
{
	uint8_t *u = malloc(n ? n : 1);

	if (!u || dl_rpm_cnt_alloc(c)) {
		free(u);
		return -ENOMEM;
	}
	if (n)
		memcpy(u, users, n);
	free(c->rpm_user);
	c->rpm_user = u;
	c->rpm_user_n = n;
	return 0;
}

/*
 * dl_rpm_enabled - is @d's runtime PM enabled (disable_depth == 0)?  Always,
 * in the legacy model; else while bound (or unbinding: the driver disables
 * it in its remove()) if its driver enables it.
 */
bool dl_rpm_enabled(const struct dl_core *c, dl_dev_t d)
{
	unsigned st;

	if (!c->rpm_user)
		return true;
	st = c->dev[d].state;
	return d < c->rpm_user_n && c->rpm_user[d] &&
	       (st == DL_DEV_DRIVER_BOUND || st == DL_DEV_UNBINDING);
}

/**
 * dl_probe_rpm_get - what __driver_probe_device() does before really_probe()
 * (drivers/base/dd.c, 6.12 and 7.3): pm_runtime_get_suppliers(), a
 * pm_runtime_get_sync() of every DL_FLAG_PM_RUNTIME supplier (marked
 * supplier_preactivated, whatever the link's status), then of the parent.
 * Even an attempt that device_links_check_suppliers() will defer resumes
 * them.  @resumed lists the devices resumed, in the order they became active.
 * Returns 1 when it took references (dl_probe_rpm_put() gives them back
 * after the attempt), 0 when it did nothing: dl_core_set_rpm_users() was not
 * called, or @d is not free to probe (__driver_probe_device() returns before).
 */
int dl_probe_rpm_get(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed)
{
	struct dl_device *x;

	if (!c->rpm_user || d >= c->ndev)
		return 0;
	x = &c->dev[d];
	if (!x->registered || x->state != DL_DEV_NO_DRIVER)
		return 0;
	for (uint32_t i = 0; i < x->suppliers.n; i++) {
		struct dl_link *k = &c->link[x->suppliers.v[i]];

		if (!(k->flags & DL_FLAG_PM_RUNTIME))
			continue;
		k->preactivated = 1;
		/* pm_runtime_get_sync(): the count is taken whatever the resume returns */
		c->rpm_cnt[k->supplier].usage++;
		(void)rpm_resume(c, k->supplier, resumed);
	}
	if (x->parent != DL_NONE) {
		c->rpm_cnt[x->parent].usage++;
		(void)rpm_resume(c, x->parent, resumed);
	}
	return 1;
}

/* A put of dl_probe_rpm_put(): the count drops; @idle gets @d if it reached zero. */
static void probe_put(struct dl_core *c, dl_dev_t d, struct dl_idvec *idle)
{
	dl_rpm_put_noidle(c, d);
	if (dl_rpm_usage(c, d) == 0 && c->dev[d].rpm_status == DL_RPM_ACTIVE)
		dl_idvec_push(idle, d);
}

/**
 * dl_probe_rpm_put - and after it: pm_runtime_put() of the parent, then
 * pm_runtime_put_suppliers() (every supplier_preactivated link).  The kernel's
 * puts are asynchronous: each queues an idle request that pm_wq's worker
 * runs later (rpm_idle(), then rpm_suspend(), whose puts of the device's own
 * suppliers and parent queue more).  So the counts drop here, and @idle lists
 * the devices whose count reached zero: the caller asks dl_rpm_idle() about
 * each when pm_wq would run it, by which time a new reference may have come.
 */
void dl_probe_rpm_put(struct dl_core *c, dl_dev_t d, struct dl_idvec *idle)
{
	struct dl_device *x;

	if (!c->rpm_user || d >= c->ndev)
		return;
	x = &c->dev[d];
	if (x->parent != DL_NONE)
		probe_put(c, x->parent, idle);
	for (uint32_t i = 0; i < x->suppliers.n; i++) {
		struct dl_link *k = &c->link[x->suppliers.v[i]];

		if (!k->preactivated)
			continue;
		k->preactivated = 0;
		probe_put(c, k->supplier, idle);
	}
}

/**
 * dl_rpm_idle - pm_wq runs @d's idle request: rpm_idle(), and if nobody holds
 * it, no child is active and its runtime PM is enabled, rpm_suspend(), with
 * the suspends that follows (its suppliers and parent, here at once).
 * @suspended lists them, consumers before their suppliers.
 */
void dl_rpm_idle(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended)
{
	if (d < c->ndev)
		rpm_try_suspend(c, d, suspended);
}
