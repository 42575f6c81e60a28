/*
 * seqops.h - the script ops that both engines run one at a time (unbind,
 * bind, remove, add, link_add, link_del, rpm_get, rpm_put), and a single
 * probe attempt.  Each engine supplies how time passes and how events are
 * stamped; the link-core steps are written once, here.  DES runs them on its
 * main thread; the threads engine from any thread (a racing op, a probe on a
 * worker), with the lock hooks below.
 */
#ifndef DL_SEQOPS_H
#define DL_SEQOPS_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/core/dl_core.h"
#include "sim/engine/engine.h"
#include "sim/scenario/scenario.h"

struct dl_seq {
	struct dl_core *core;
	const struct dl_scenario *sc;
	struct dl_op_result *opr;
	bool ignore_links;          /* the naive order */
	int64_t defer_ns;           /* time a deferring attempt takes */
	int64_t rpm_ns;             /* a runtime resume before an attempt (cost.h) */
	int64_t pmwq_wake_ns;       /* pm_wq's kworker suspends after an attempt (cost.h) */
	int64_t sleep_end_ns;       /* des: a sleep's end after its latency (cost.h) */
	void *ctx;
	void (*emit)(void *ctx, unsigned kind, uint32_t dev, unsigned phase, int err);
	void (*take_time)(void *ctx, int64_t ns);
	int64_t (*sample)(void *ctx, uint32_t dev, unsigned key);
	int (*fault)(void *ctx, uint32_t dev, unsigned key);
	/*
	 * Threads mode only (NULL in DES, where nothing else runs meanwhile):
	 * lock/unlock bracket every call into the core (device_links_write_lock;
	 * time never passes inside), dev_lock/dev_unlock a device's whole probe,
	 * unbind or removal (device_lock; recursive, taken parent/supplier
	 * first, never while the core is locked), and wait_probe, called with
	 * the core locked, drops it until some probe in flight has ended
	 * (wait_for_device_probe()); probe_blocked, called with the core
	 * locked, says that probing is blocked (device_block_probing() from
	 * dpm_prepare() to dpm_complete()): the attempt defers.
	 */
	void (*lock)(void *ctx);
	void (*unlock)(void *ctx);
	void (*dev_lock)(void *ctx, uint32_t dev);
	void (*dev_unlock)(void *ctx, uint32_t dev);
	void (*wait_probe)(void *ctx);
	bool (*probe_blocked)(void *ctx);
	/*
	 * Threads mode, where a probe attempt runs holding a CPU: the sleep
	 * part of the probe callback (the latency less its "cpu" share, cost.h),
	 * spent without the CPU.  NULL: the whole latency is take_time(), as in
	 * DES's sequential ops (des.c splits its own probes).
	 */
	void (*sleep)(void *ctx, int64_t ns);
};

void dl_seq_probe_one(struct dl_seq *q, uint32_t d);
void dl_seq_deferred(struct dl_seq *q);
int dl_seq_op(struct dl_seq *q, const struct dl_sc_op *op);

#endif
