/*
 * kernel_async.c - the order "kernel-async".
 *
 * The classic async scheme (up to 6.15, Debian's 6.12): the main thread queues
 * every async device's item as its walk reaches it; the item blocks on its
 * dependencies (dpm_wait_for_*()); sync devices run on the main thread.
 * Probing: registration order, async drivers on workers, deferred retry.
 */
#include "sim/order/order.h"

const struct dl_order_def dl_order_kernel_async = {
	.name = "kernel-async",
	.doc = "classic async suspend/resume: every async device's work is queued up front and blocks its worker until its children/consumers (resume: parent/suppliers) are done",
	.policy = { .link_aware = true, .use_async_flag = true, .queue_up_front = true,
		    .probe_deferral = true, .kernel_native = true, .default_workers = 8,
		    /* gone in the 6.16 rework (kernel_async_v2.c) */
		    .kver_max = DL_KVER_ASYNC_V2 - 1, .kver_default = DL_KVER(6, 12) },
	.successor = &dl_order_kernel_async_v2,
};
