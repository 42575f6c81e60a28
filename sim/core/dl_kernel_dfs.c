/*
 * dl_kernel_dfs.c - small, deliberately faithful reimplementations of the
 * kernel's device_is_dependent() and device_reorder_to_tail().  They have no
 * visited set, exactly like drivers/base/core.c, so they visit a device once
 * per path and go exponential on diamond-rich graphs.  Used by the
 * benchmarks and by the property tests as the reference; never by the
 * engines.  @visits (if given) counts the calls.
 */
#include "sim/core/dl_internal.h"

static bool kernel_is_ancestor(const struct dl_core *c, dl_dev_t dev, dl_dev_t target)
{
	for (dl_dev_t p = c->dev[target].parent; p != DL_NONE; p = c->dev[p].parent)
		if (p == dev)
			return true;
	return false;
}

bool dl_kernel_is_dependent(const struct dl_core *c, dl_dev_t dev, dl_dev_t target,
			    uint64_t *visits)
{
	const struct dl_device *x = &c->dev[dev];

	if (visits)
		(*visits)++;
	if (dev == target || kernel_is_ancestor(c, dev, target))
		return true;
	for (uint32_t i = 0; i < x->children.n; i++)
		if (dl_kernel_is_dependent(c, x->children.v[i], target, visits))
			return true;
	for (uint32_t i = 0; i < x->consumers.n; i++) {
		const struct dl_link *k = &c->link[x->consumers.v[i]];

		if (dl_link_is_sync_state_only(k->flags))
			continue;
		if (k->consumer == target)
			return true;
		if (dl_kernel_is_dependent(c, k->consumer, target, visits))
			return true;
	}
	return false;
}

static void kernel_reorder(struct dl_core *c, dl_dev_t d, uint64_t *visits)
{
	struct dl_device *x = &c->dev[d];

	if (visits)
		(*visits)++;
	/* device_pm_move_last() */
	if (x->registered && c->dpm_tail != d) {
		struct dl_ilist l = dl_dpm_ilist(c);

		dl_ilist_unlink(l, d);
		dl_ilist_link_after(l, c->dpm_tail, d);
	}
	for (uint32_t i = 0; i < x->children.n; i++)
		kernel_reorder(c, x->children.v[i], visits);
	for (uint32_t i = 0; i < x->consumers.n; i++) {
		const struct dl_link *k = &c->link[x->consumers.v[i]];

		if (dl_link_is_sync_state_only(k->flags))
			continue;
		kernel_reorder(c, k->consumer, visits);
	}
}

/* Moves the list as it stands: the moves dl_core.c has pending are settled first. */
void dl_kernel_reorder_to_tail(struct dl_core *c, dl_dev_t d, uint64_t *visits)
{
	dl_dpm_settle(c);
	kernel_reorder(c, d, visits);
}
