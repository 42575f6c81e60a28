/*
 * order.c - the registry of ordering algorithms: one file per order
 * (sync.c, kernel_async.c, ...), one line here.  The engines read an order
 * only through its policy (order.h), so an order added here runs in both
 * backends.
 */
#include <errno.h>
#include <string.h>

#include "sim/order/order.h"

static const struct dl_order_def *const registry[DL_ORDER_COUNT] = {
	[DL_ORDER_SYNC] = &dl_order_sync,
	[DL_ORDER_KERNEL_ASYNC] = &dl_order_kernel_async,
	[DL_ORDER_KERNEL_ASYNC_V2] = &dl_order_kernel_async_v2,
	[DL_ORDER_LEVELS] = &dl_order_levels,
	[DL_ORDER_CP_FIRST] = &dl_order_cp_first,
	[DL_ORDER_NAIVE] = &dl_order_naive,
};

const char *dl_order_name(enum dl_order o) { return o < DL_ORDER_COUNT ? registry[o]->name : "?"; }
const char *dl_order_doc(enum dl_order o) { return o < DL_ORDER_COUNT ? registry[o]->doc : "?"; }
const struct dl_order_policy *dl_order_policy(enum dl_order o) { return &registry[o]->policy; }

int dl_order_parse(const char *name, enum dl_order *out)
{
	for (int i = 0; i < DL_ORDER_COUNT; i++) {
		if (strcmp(name, registry[i]->name) == 0) {
			*out = (enum dl_order)i;
			return 0;
		}
	}
	return -EINVAL;
}
