/*
 * levels.c - the order "levels".
 *
 * Topological levels: every device is a work item; a level is released
 * when the one before it is done (a barrier between levels).
 */
#include "sim/order/order.h"

const struct dl_order_def dl_order_levels = {
	.name = "levels",
	.doc = "topological levels: all devices of a level in parallel on K workers, a barrier between levels",
	.policy = { .link_aware = true, .all_async = true, .level_barrier = true, .default_workers = 8 },
};
