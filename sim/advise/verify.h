/*
 * verify.h - advice the kernel has checked: the baseline and each of the
 * top changes of dl_advise() played in `--mode kernel` (sim/kernel), the
 * kernel's saving beside the DES's prediction.  Each change becomes a
 * scenario edit the guest can run (async flags, halved latencies, a link
 * dropped, the next kernel's order); what the guest cannot run (orders no
 * kernel has, more CPUs) is said per row.  Every run of one kernel is
 * batched into one boot: a warm-up, the baseline, then each change followed
 * by the baseline again; a change's saving is measured against the two
 * baselines either side of it, and the baselines give the kernel's own
 * spread.  Runs are converted through dl_run(); nothing is logged, nothing
 * printed.
 */
#ifndef DL_ADVISE_VERIFY_H
#define DL_ADVISE_VERIFY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/advise/advise.h"

#define DL_VERIFY_TOLERANCE_PCT 10	/* a prediction off by more than this (or the spread) */

struct dl_verify_opts {
	const char *kernel;	/* the baseline's kernel; NULL: the first of 6.12, 7.3 that has its order */
	const char *cache;	/* NULL: $DLSIM_KERNEL_CACHE or the default */
	int64_t timeout_ms;	/* per boot; 0: scaled to the batch */
	uint32_t boots;		/* rounds of boots (0: 1); savings are the means over them */
	atomic_int *stop;
};

/* The kernel's word on one change (one row of the ranking). */
struct dl_verify_row {
	bool ran;			/* played on the kernel (else why says why not) */
	char why[256];			/* not ran: the change kernel mode cannot express, or the failure */
	char kernel[8];			/* the kernel it ran on */
	int64_t saved_ns[DL_MAX_OPS];	/* the baselines either side minus this run, per op (mean) */
	int64_t total_saved_ns;
	int64_t off_ns;			/* kernel's total saving minus the prediction */
	int64_t tolerance_ns;		/* max(10% of the prediction, the baseline's spread) */
	bool flagged;			/* |off_ns| > tolerance_ns */
};

struct dl_verify_result {
	char kernel[8];			/* the baseline's kernel */
	char release[96];		/* its guest's release, from the dump */
	struct dl_run_result *base;	/* every baseline run that completed, boot after boot */
	uint32_t nbase;
	int64_t base_ns[DL_MAX_OPS];	/* their mean, per op */
	int64_t boot_min_ns, boot_max_ns;	/* the lowest and highest boot's baseline mean, total */
	int64_t spread_ns;		/* largest total difference of two baselines in a row, or
					 * of two boots' means */
	uint32_t boots, runs;
	int64_t boot_wall_ns;		/* all boots */
	struct dl_verify_row *row;	/* one per change verified, in the ranking's order */
	uint32_t nrow;
	char msg[512];			/* when dl_advise_verify() fails: why */
};

/**
 * dl_advise_verify() - play the baseline of @res (before and after each
 * change) and the first @n changes of @adv (the ranking as printed) on the
 * kernel, one boot per kernel and round (@vo->boots).  @o is what dl_advise() was given (the baseline's async flags).
 * Return: 0 (rows that did not run say why); -EINTR (*@vo->stop);
 * -EINVAL (the baseline cannot be played, the kernel is missing or its
 * guest failed: @vr->msg says why); -ENOMEM.  Free with dl_verify_free().
 */
int dl_advise_verify(const struct dl_scenario *sc, const struct dl_advise_opts *o,
		     const struct dl_advise_result *res, const struct dl_advice *adv, uint32_t n,
		     const struct dl_verify_opts *vo, struct dl_verify_result *vr);

void dl_verify_free(struct dl_verify_result *vr);

#endif
