/*
 * kernel_async_v2.c - the order "kernel-async-v2".
 *
 * The 6.16 rework: an async device's item is queued once everything it
 * waits for is done, so no worker blocks; sync devices on the main thread.
 */
#include "sim/order/order.h"

const struct dl_order_def dl_order_kernel_async_v2 = {
	.name = "kernel-async-v2",
	.doc = "the 6.16 scheme: an async device's work is queued only once everything it waits for is done, so no worker blocks",
	.policy = { .link_aware = true, .use_async_flag = true, .default_workers = 8,
		    .kver_min = DL_KVER_ASYNC_V2, .kver_default = DL_KVER(7, 3) },
};
