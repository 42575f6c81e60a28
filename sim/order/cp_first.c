/*
 * cp_first.c - the order "cp-first".
 *
 * List scheduling: every device is a work item queued when ready, the
 * ready ones by longest remaining path (critical path first).
 */
#include "sim/order/order.h"

const struct dl_order_def dl_order_cp_first = {
	.name = "cp-first",
	.doc = "list scheduling on K workers, ready devices ordered by longest remaining path (critical path first)",
	.policy = { .link_aware = true, .all_async = true, .critical_first = true, .default_workers = 8 },
};
