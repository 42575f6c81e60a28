/*
 * dl_run_kernel.h - kernel mode's batch: every run of a command (orders x
 * seeds) booted at once in one guest (or read from a saved dump) before the
 * database is opened, so that a missing kernel, a module that does not
 * build or a scenario the kernel cannot play leaves it untouched; each run
 * is then dl_run() of its dump (dl_run_kernel_next()).
 */
#ifndef DL_RUN_KERNEL_H
#define DL_RUN_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "sim/kernel/kmode.h"
#include "sim/run/dl_run.h"

struct dl_run_kernel {
	struct dl_kjob *jobs;
	size_t njobs, next;
	int64_t boot_wall_ns;           /* booting (or reading the dump), all runs */
	struct dl_kernel_stats stats;   /* where the boot's wall time went; -1: read from a dump */
};

/**
 * dl_run_kernel_boot - boot @sc's runs under each of @norders @orders for
 * @seeds seeds from sc->seed (compare's order: seeds outside, orders inside)
 * on kernel @ko->version, or, with @dump_path, read them from that dump.
 * Returns 0, -EINTR, or -EINVAL or -ENOMEM with what to tell the user in
 * @msg (the scenario refused, the kernel missing, a dump of another kernel
 * or scenario).  @warn: "" or, when some runs are missing from the guest's
 * output (a timeout), which (the others run), told before @msg.  @k is
 * freed by dl_run_kernel_free() whatever the result.
 */
int dl_run_kernel_boot(struct dl_run_kernel *k, const struct dl_scenario *sc,
		       const enum dl_order *orders, uint32_t norders, uint32_t seeds,
		       const struct dl_kernel_opts *ko, const char *dump_path, char *msg,
		       size_t len, char *warn, size_t wlen);

/* dl_run_kernel_next - @q made the next run's request (its dump, order, seed); the job. */
const struct dl_kjob *dl_run_kernel_next(struct dl_run_kernel *k, struct dl_run_req *q,
					 const char *version, struct dl_kernel_info *ki);

void dl_run_kernel_free(struct dl_run_kernel *k);

#endif
