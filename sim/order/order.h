/*
 * order.h - the ordering algorithms: names, one-line descriptions, and the
 * policy knobs the engines read (who walks the list, who may run async, how
 * ready work is prioritised).  The engines implement the mechanics.
 */
#ifndef DL_ORDER_H
#define DL_ORDER_H

#include <stdbool.h>
#include <stdint.h>

enum dl_order {
	DL_ORDER_SYNC,
	DL_ORDER_KERNEL_ASYNC,
	DL_ORDER_KERNEL_ASYNC_V2,
	DL_ORDER_LEVELS,
	DL_ORDER_CP_FIRST,
	DL_ORDER_NAIVE,
	DL_ORDER_COUNT
};

struct dl_order_policy {
	bool link_aware;       /* waits for dependencies at all (all but naive) */
	bool use_async_flag;   /* async devices go to workers, sync ones stay on main */
	bool all_async;        /* every device may run on a worker */
	bool queue_up_front;   /* classic async: queued at the walk, blocks on deps */
	bool level_barrier;    /* levels: a barrier between topological levels */
	bool critical_first;   /* cp-first: ready work by longest remaining path */
	bool probe_deferral;   /* probe through the kernel's deferred-probe retry */
	uint32_t default_workers;
};

const char *dl_order_name(enum dl_order o);
const char *dl_order_doc(enum dl_order o);
int dl_order_parse(const char *name, enum dl_order *out);
const struct dl_order_policy *dl_order_policy(enum dl_order o);

#endif
