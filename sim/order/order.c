/* order.c - the six ordering algorithms of shared/SPEC.md as policies. */
#include <errno.h>
#include <string.h>

#include "sim/order/order.h"

struct order_def {
	const char *name, *doc;
	struct dl_order_policy p;
};

static const struct order_def defs[DL_ORDER_COUNT] = {
	[DL_ORDER_SYNC] = { "sync",
		"the kernel's synchronous path: one thread walks dpm_list (in reverse for suspend)",
		{ .link_aware = true, .probe_deferral = true, .default_workers = 1 } },
	[DL_ORDER_KERNEL_ASYNC] = { "kernel-async",
		"classic async suspend/resume: every async device's work is queued up front and blocks its worker until its children/consumers (resume: parent/suppliers) are done",
		{ .link_aware = true, .use_async_flag = true, .queue_up_front = true,
		  .probe_deferral = true, .default_workers = 8 } },
	[DL_ORDER_KERNEL_ASYNC_V2] = { "kernel-async-v2",
		"the 6.16 scheme: an async device's work is queued only once everything it waits for is done, so no worker blocks",
		{ .link_aware = true, .use_async_flag = true, .default_workers = 8 } },
	[DL_ORDER_LEVELS] = { "levels",
		"topological levels: all devices of a level in parallel on K workers, a barrier between levels",
		{ .link_aware = true, .all_async = true, .level_barrier = true, .default_workers = 8 } },
	[DL_ORDER_CP_FIRST] = { "cp-first",
		"list scheduling on K workers, ready devices ordered by longest remaining path (critical path first)",
		{ .link_aware = true, .all_async = true, .critical_first = true, .default_workers = 8 } },
	[DL_ORDER_NAIVE] = { "naive",
		"registration order with links ignored: the negative control that `dlsim check` must catch",
		{ .probe_deferral = true, .default_workers = 1 } },
};

const char *dl_order_name(enum dl_order o) { return o < DL_ORDER_COUNT ? defs[o].name : "?"; }
const char *dl_order_doc(enum dl_order o) { return o < DL_ORDER_COUNT ? defs[o].doc : "?"; }
const struct dl_order_policy *dl_order_policy(enum dl_order o) { return &defs[o].p; }

int dl_order_parse(const char *name, enum dl_order *out)
{
	for (int i = 0; i < DL_ORDER_COUNT; i++) {
		if (strcmp(name, defs[i].name) == 0) {
			*out = (enum dl_order)i;
			return 0;
		}
	}
	return -EINVAL;
}
