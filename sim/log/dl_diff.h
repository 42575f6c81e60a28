/*
 * dl_diff.h - two logged runs of one scenario side by side (`dlsim diff`):
 * per op and phase both makespans, and the order agreement of the device
 * callbacks, read from the events alone so that any two modes compare
 * (des, threads, kernel).
 *
 * Ops are found in the event stream: a maximal stretch of callback events of
 * one family (probe, unbind, suspend, resume) is one op; the k-th stretch of a
 * family in run A is matched with the k-th in run B.  Devices are matched by
 * name.  A device's time in a phase is the start of its callback that ended
 * (for probe: the attempt that ended in probe_end, not the deferred ones).
 *
 * Order agreement of a phase: of the pairs of devices that both runs order
 * with a gap above the tolerance (|start_i - start_j| > tol in A and in B),
 * the share ordered the same way.  Counted in O(n log n) per phase (a sweep
 * over A's order with a Fenwick tree over B's ranks), so a million devices
 * diff in seconds; the disagreeing pairs are listed up to a cap and the rest
 * counted.
 *
 * The agreement is also split by what orders a pair: a dependency (a rule of
 * the link core or the PM core fixes which comes first, so any difference is
 * a broken rule in one of the runs) or nothing but timing (which of two
 * independent devices a thread reaches first).  That split tells a model
 * whose rules differ from the kernel's apart from one whose clocks do.
 */
#ifndef DL_DIFF_H
#define DL_DIFF_H

#include <stdbool.h>
#include <stdint.h>

struct sqlite3;

#define DL_DIFF_NAME 64
/* The most devices whose dependency closure a diff computes (two bitsets of n^2 bits). */
#define DL_DIFF_DEP_MAX 16384

/* One row: an op (phase "") or one phase of it. */
struct dl_diff_row {
	char op[DL_DIFF_NAME];       /* "probe", "suspend", "suspend#2", ... */
	char phase[DL_DIFF_NAME];    /* "" for the op as a whole */
	int64_t a_ns, b_ns;          /* makespan in A and B; -1 when the run has no such op/phase */
	uint64_t a_devices, b_devices, matched;   /* callbacks in A, in B, devices in both */
	uint64_t pairs, agree;       /* pairs ordered in both with gaps > tol; of them the same way */
	uint64_t dep_pairs, dep_agree;   /* of those, the pairs a dependency orders (dl_diff.dep_known) */
};

/* A pair of devices ordered differently: dev1 first in A, dev2 first in B. */
struct dl_diff_pair {
	uint32_t row;                /* index into rows */
	char *dev1, *dev2;
	int64_t a1_ns, a2_ns, b1_ns, b2_ns;   /* callback starts, from each run's start */
};

struct dl_diff {
	int64_t run_a, run_b;
	char *scenario_a, *scenario_b, *mode_a, *mode_b, *order_a, *order_b;
	int64_t seed_a, seed_b;
	uint64_t devices_a, devices_b, devices_common;
	int64_t tol_ns;
	struct dl_diff_row *rows;
	uint32_t nrows;
	uint64_t pairs, agree;           /* over every phase */
	/*
	 * The pairs a dependency orders: a path of links (neither
	 * SYNC_STATE_ONLY nor, for probe and unbind, unmanaged) and, in PM
	 * phases, of parents between the two devices, in A's devices and
	 * links.  The ordering rules fix their order; the others' order is
	 * timing.  dep_known: computed (A has at most DL_DIFF_DEP_MAX devices
	 * and its dependencies no cycle).
	 */
	bool dep_known;
	uint64_t dep_pairs, dep_agree;
	struct dl_diff_pair *pair;       /* the first max_pairs disagreeing pairs */
	uint32_t npair;
	uint64_t disagree_unlisted;      /* disagreeing pairs beyond the cap */
};

/**
 * dl_diff_runs() - compare runs @a and @b of @db.
 * @tol_ns: gaps at or below this are "not ordered" (both runs must order a pair).
 * @max_pairs: how many disagreeing pairs to list (the others are counted).
 * Return: 0 and *@out (free with dl_diff_free()); -ENOENT (a run is not in
 * the database; @which set to its id), -ENOMEM or -EIO (a database error).
 */
int dl_diff_runs(struct sqlite3 *db, int64_t a, int64_t b, int64_t tol_ns, uint32_t max_pairs,
		 struct dl_diff **out, int64_t *which);
void dl_diff_free(struct dl_diff *d);

/**
 * dl_diff_order_agreement() - the counting kernel, exposed for tests: of the
 * pairs (i, j) with |a[i]-a[j]| > tol and |b[i]-b[j]| > tol, *@pairs counts
 * them and *@agree those with the same sign.  When @list is given, it is
 * called for the first @max_list disagreeing pairs (i first in A).
 * Return: 0 or -ENOMEM.
 */
int dl_diff_order_agreement(const int64_t *a, const int64_t *b, uint32_t n, int64_t tol,
			    uint64_t *pairs, uint64_t *agree, uint32_t max_list,
			    void (*list)(void *ctx, uint32_t i, uint32_t j), void *ctx);

#endif
