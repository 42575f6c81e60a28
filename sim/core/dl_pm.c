/*
 * dl_pm.c - system-sleep readiness and runtime PM through links
 * (drivers/base/power/main.c dpm_wait_for_subordinate/superior,
 * drivers/base/power/runtime.c rpm_get_suppliers/rpm_put_suppliers).
 */
#include <errno.h>

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

/* pm_runtime_get_sync(): usage++ and resume. */
int dl_rpm_get_internal(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed)
{
	int err;

	c->dev[d].rpm_usage++;
	err = rpm_resume(c, d, resumed);
	if (err)
		c->dev[d].rpm_usage--;
	return err;
}

void dl_rpm_put_noidle(struct dl_core *c, dl_dev_t d)
{
	if (c->dev[d].rpm_usage > 0)
		c->dev[d].rpm_usage--;
}

/* rpm_resume(): parent first, then rpm_get_suppliers(), then the device. */
static int rpm_resume(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed)
{
	struct dl_device *x = &c->dev[d];

	if (x->rpm_status == DL_RPM_ACTIVE)
		return 0;
	if (x->rpm_fail)
		return -EIO;
	if (x->parent != DL_NONE) {
		int err = rpm_resume(c, x->parent, resumed);

		if (err)
			return err;
	}
	for (uint32_t i = 0; i < x->suppliers.n; i++) {
		dl_link_t l = x->suppliers.v[i];

		if (!(c->link[l].flags & DL_FLAG_PM_RUNTIME))
			continue;
		if (dl_rpm_get_internal(c, c->link[l].supplier, resumed)) {
			/* __rpm_callback(): give back what rpm_get_suppliers() took */
			rpm_put_suppliers(c, d, NULL);
			return -EIO;
		}
		c->link[l].rpm_active++;
	}
	x->rpm_status = DL_RPM_ACTIVE;
	if (x->parent != DL_NONE)
		c->dev[x->parent].rpm_children++;
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
		struct dl_link *k = &c->link[x->suppliers.v[i]];

		if (!(k->flags & DL_FLAG_PM_RUNTIME))
			continue;
		while (k->rpm_active) {
			k->rpm_active--;
			dl_rpm_put_noidle(c, k->supplier);
			rpm_try_suspend(c, k->supplier, suspended);
		}
	}
}

/* rpm_idle() -> rpm_suspend(): only with no users and no active children. */
static void rpm_try_suspend(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended)
{
	struct dl_device *x = &c->dev[d];

	if (x->rpm_status != DL_RPM_ACTIVE || x->rpm_usage > 0 || x->rpm_children > 0)
		return;
	x->rpm_status = DL_RPM_SUSPENDED;
	if (suspended)
		dl_idvec_push(suspended, d);
	rpm_put_suppliers(c, d, suspended);
	if (x->parent != DL_NONE) {
		c->dev[x->parent].rpm_children--;
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
	return dl_rpm_get_internal(c, d, resumed);
}

/**
 * dl_rpm_put - pm_runtime_put(d): at usage zero the device suspends and drops
 * its supplier references; @suspended lists the devices suspended, in order
 * (consumers before their suppliers).  -EINVAL if the count is already zero.
 */
int dl_rpm_put(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended)
{
	if (d >= c->ndev || !c->dev[d].registered || c->dev[d].rpm_usage <= 0)
		return -EINVAL;
	c->dev[d].rpm_usage--;
	rpm_try_suspend(c, d, suspended);
	return 0;
}
