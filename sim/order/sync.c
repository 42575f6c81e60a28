/*
 * sync.c - the order "sync".
 *
 * dpm_suspend()/dpm_resume() without async_suspend: the main PM thread walks
 * dpm_list and runs every callback itself, waiting for nothing but the
 * list order; probing in registration order with the deferred-probe retry.
 */
#include "sim/order/order.h"

const struct dl_order_def dl_order_sync = {
	.name = "sync",
	.doc = "the kernel's synchronous path: one thread walks dpm_list (in reverse for suspend)",
	.policy = { .link_aware = true, .probe_deferral = true, .kernel_native = true,
		    .default_workers = 1 },
	/* kernel-async with no device async runs as sync does */
	.async_form = &dl_order_kernel_async,
};
