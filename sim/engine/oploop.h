/*
 * oploop.h - the op loop, written once, and the narrow interface of the two
 * backends that run it: virtual time (des.c: an event set, simulated CPUs)
 * and real threads (threads.c: a pool, CPU permits, completions, device
 * locks).  As Redis's ae.c runs over ae_epoll.c or ae_kqueue.c, the loop
 * (oploop.c) walks the script, makes each op's result, registers devices
 * and links at probe, sequences suspend -> rollback -> resume and accounts
 * every op; a backend runs one phase, or one sequential op, at a time, and
 * says whether a phase aborted.  Neither side asks which order runs: a
 * phase's scheme (dl_order_scheme()) says how it runs.
 */
#ifndef DL_OPLOOP_H
#define DL_OPLOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/core/dl_event.h"
#include "sim/engine/engine.h"
#include "sim/order/order.h"

struct dl_core;

struct dl_backend_ops {
	/* "concurrent" ops race the op before them on a thread of their own */
	bool races;
	/*
	 * an op's and a phase's CPU time (dl_op_result.cpu_ns) is the
	 * process's: the backend works on threads of its own; false: the
	 * calling thread's
	 */
	bool cpu_process;
	/* the run's clock, simulated ns (an op's start_ns) */
	int64_t (*now)(void *be);
	/* Ctrl-C: is the run to stop before the next op?  (NULL: the backend sees it inside phases) */
	bool (*stopped)(void *be);
	/*
	 * op @i starts, its result @opr made; ops (@i, @end) race it (races
	 * only), their results following @opr.  A negative errno ends the run
	 * before the op (op_end is not called).
	 */
	int (*op_begin)(void *be, uint32_t i, uint32_t end, struct dl_op_result *opr);
	/* op @i and those racing it are over (not yet accounted) */
	void (*op_end)(void *be, uint32_t i, uint32_t end);
	/* calls into the core from the op loop itself (registration at probe) */
	void (*lock)(void *be);
	void (*unlock)(void *be);
	/*
	 * The probe phase of kind @pk (DL_PK_PROBE or DL_PK_PROBE_DEFER), the
	 * devices registered: every registered device without a driver takes part.
	 */
	int (*probe)(void *be, unsigned pk);
	/*
	 * One PM phase of kind @pk (DL_PK_SUSPEND or DL_PK_RESUME), enum
	 * dl_phase @phase: the registered devices dl_pm_takes_part() names take part.
	 */
	int (*pm_phase)(void *be, unsigned pk, unsigned phase);
	/* did the last PM phase abort on a failing callback?  Its error and device */
	bool (*aborted)(void *be, int *err, uint32_t *dev);
	/* device_block_probing() / device_unblock_probing() around a PM op (NULL: not modelled) */
	void (*probing)(void *be, bool block);
	/* a sequential op (seqops.c) on the main thread */
	int (*seq)(void *be, const struct dl_sc_op *op);
	/*
	 * does the probe op run in module context (dl_engine_opts.probe_module)?
	 * Then the op loop registers as the kernel mode's module does
	 * (dl_engine_register_module()) and enables deferred probing first.
	 * NULL: boot context.
	 */
	bool (*module_probe)(void *be);
	/*
	 * module context: the module's init spends @ns on the main thread
	 * (a device_add(), a device_link_add()), before the probe phase and
	 * in the op's makespan and bounds alike.  NULL: no time passes.
	 */
	void (*spend)(void *be, int64_t ns);
};

/*
 * dl_pm_takes_part - does a registered device that has completed @depth
 * suspend phases (dl_device.pm_depth) take part in phase @phase (enum
 * dl_phase) of kind @pk?  Suspend phase p runs the devices at depth p;
 * resume phase p those that went at least as deep as its suspend mirror.
 */
static inline bool dl_pm_takes_part(unsigned pk, unsigned phase, unsigned depth)
{
	return pk == DL_PK_SUSPEND ? depth == phase : depth >= DL_PH_COMPLETE - phase + 1;
}

/*
 * dl_takes_part - does registered device @x, @depth suspend phases deep
 * (its pm_depth as the backend keeps it), take part in a phase of kind @pk
 * (suspend and resume: @phase)?  A probe phase probes the devices without
 * a driver.  Both backends ask this, so the rule is written once.
 */
static inline bool dl_takes_part(unsigned pk, unsigned phase, const struct dl_device *x,
				 unsigned depth)
{
	if (pk == DL_PK_SUSPEND || pk == DL_PK_RESUME)
		return dl_pm_takes_part(pk, phase, depth);
	return x->state == DL_DEV_NO_DRIVER;
}

/*
 * What a device's byte in a phase's part[] says: it takes part or not, and
 * in a PM phase, whether it runs a callback of its own.  DL_PART_NO_DRIVER
 * is still true wherever part[] is read as a flag.
 */
enum { DL_PART_NONE, DL_PART_CALLBACK, DL_PART_NO_DRIVER };

/*
 * dl_pm_part - the part[] byte of registered device @x, @depth suspend
 * phases deep, in PM phase @phase of kind @pk.  A device's PM latencies in
 * a scenario are its driver's callbacks (the kernel mode's module puts them
 * in its drivers' dev_pm_ops, sim/kernel/dlsim_kmod.c), so a device with no
 * driver bound runs none: 6.12's and 7.3's device_prepare(),
 * device_suspend(), device_suspend_late(), device_suspend_noirq() and
 * their resume mirrors take the driver's callback only "if (dev->driver &&
 * dev->driver->pm)" (drivers/base/power/main.c, e.g. 6.12 lines 1694,
 * 1880), and the platform bus's own, platform_pm_suspend() and
 * platform_pm_resume() (drivers/base/platform.c), return 0 at once when
 * !dev->driver.  Such a device still takes part (DL_PART_NO_DRIVER): the
 * PM core walks it, queues it when it is async, it waits for its children
 * and consumers and they for it (dpm_wait_for_subordinate() and friends
 * ask no driver), with no latency, no fault and no callback events.
 * dl_pm_part_of() is the same rule for a caller that knows @bound (a driver
 * bound) without reading the device record.
 */
static inline uint8_t dl_pm_part_of(unsigned pk, unsigned phase, bool bound, unsigned depth)
{
	if (!dl_pm_takes_part(pk, phase, depth))
		return DL_PART_NONE;
	return bound ? DL_PART_CALLBACK : DL_PART_NO_DRIVER;
}

static inline uint8_t dl_pm_part(unsigned pk, unsigned phase, const struct dl_device *x,
				 unsigned depth)
{
	return dl_pm_part_of(pk, phase, x->state == DL_DEV_DRIVER_BOUND, depth);
}

/* dl_phase_lat_key - the latency key (enum dl_lat_key) of a callback in a phase of kind @pk (and @phase). */
static inline unsigned dl_phase_lat_key(unsigned pk, unsigned phase)
{
	return pk == DL_PK_SUSPEND || pk == DL_PK_RESUME ? DL_LAT_PREPARE + phase : DL_LAT_PROBE;
}

/*
 * dl_pm_depth_after - a device's pm_depth once its callback of @phase (kind
 * @pk) returned @err: suspend phase p leaves it at p + 1, resume phase p at
 * the depth of its suspend mirror; -1: a suspend callback failed (the phase
 * aborts, the depth stays).
 */
static inline int dl_pm_depth_after(unsigned pk, unsigned phase, int err)
{
	if (pk == DL_PK_SUSPEND)
		return err ? -1 : (int)phase + 1;
	return (int)(DL_PH_COMPLETE - phase);
}

/* dl_pm_event - the event a PM callback of phase kind @pk starts (or, @end, ends) with. */
static inline unsigned dl_pm_event(unsigned pk, bool end)
{
	if (pk == DL_PK_SUSPEND)
		return end ? DL_EV_SUSPEND_END : DL_EV_SUSPEND_START;
	return end ? DL_EV_RESUME_END : DL_EV_RESUME_START;
}

/*
 * dl_oploop_run - run @sc's script on backend @ops (@be its state) over core
 * @core under order @order; the ops' results go to @r, accounted.  *@failed:
 * an op failed on an injected fault.  Returns 0 or the error that ended the
 * run (negative errno, -EINTR when interrupted).
 */
int dl_oploop_run(const struct dl_backend_ops *ops, void *be, struct dl_core *core,
		  const struct dl_scenario *sc, enum dl_order order, struct dl_run_result *r,
		  bool *failed);

#endif
