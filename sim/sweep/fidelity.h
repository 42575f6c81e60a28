/*
 * fidelity.h - a kernel-mode sweep's kernel runs against their DES twins,
 * per board (one scenario content hash): the pairs of devices a dependency
 * orders and how many the twin orders the same way, the pairs only timing
 * orders, and per phase the ratio twin / kernel of the makespans; and over
 * the boards, per phase, p10 / median / p90 of each board's median ratio.
 * The sweep's summary (sim/cli) and `dlsim report`'s fidelity page
 * (report/fidelity.c) both compute it here, from OUT.db alone.
 */
#ifndef DL_SWEEP_FIDELITY_H
#define DL_SWEEP_FIDELITY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct sqlite3;

/* Gaps up to this do not order a pair (as dlsim diff). */
#define DL_FID_TOL_NS 1000000
/* Disagreeing pairs listed per kernel run and twin. */
#define DL_FID_PAIRS 3

/* The phases of the per-phase tables, in the order a cycle runs them. */
extern const char *const dl_fid_phases[];
extern const unsigned dl_fid_nphases;

/* struct dl_fid_board.twins: besides DL_SWEEP_TWIN_*, the "twin-model-boot" twins as "model-boot" */
#define DL_FID_TWIN_MODEL_BOOT 4u

/* Which runs of a board to compare. */
struct dl_fid_board {
	const char *hash;            /* sweep.scenario_hash */
	int64_t seed_lo, seed_hi;    /* sweep.seed range */
	unsigned twins;              /* DL_SWEEP_TWIN_* bits: "model", "replay"; DL_FID_TWIN_MODEL_BOOT */
	bool twin_boot;              /* "model" is of sweep.mode "twin-model-boot" (a sweep's own) */
};

/**
 * dl_sweep_fidelity() - the board's kernel runs (sweep.mode "kernel", not
 * failed) against each kind of twin asked for: per kind an object
 * {"runs", "dependencies_known", "dependency_pairs", "dependency_agree",
 * "timing_pairs", "timing_agree", "every_dependency_agrees",
 * "phase_ratio_median": {phase: median over the runs}, "runs_compared": [...]}
 * under "model", "replay" and (DL_FID_TWIN_MODEL_BOOT) "model-boot".  The runs' events are read wherever the sweep
 * left them (dl_log_attach_shards()).  A pair that cannot be read is left out.
 * Return: a new object (empty when nothing could be read), or NULL (out of memory).
 */
json_t *dl_sweep_fidelity(struct sqlite3 *db, const struct dl_fid_board *b);

/**
 * dl_sweep_fidelity_boards() - every board of OUT.db that has a kernel run
 * with a twin: [{"hash", "label" (sweep.source), "scenario" (runs.scenario),
 * "kernel_fidelity": dl_sweep_fidelity() of every seed: "model" of the
 * "twin-model" twins, "model-boot" of the "twin-model-boot" ones (a board may
 * have both: sweeps with and without --probe-context boot), "replay"}], by label.  Return: a new array, or NULL with @err (not a sweep database).
 */
json_t *dl_sweep_fidelity_boards(struct sqlite3 *db, char *err, size_t errlen);

/**
 * dl_sweep_fidelity_phases() - over @groups (objects holding "kernel_fidelity",
 * as the two functions above give) and one twin @kind ("model", "replay"):
 * {"boards": N, "agree": boards agreeing on every dependency-ordered pair,
 * "phases": {phase: [p10, median, p90, n]}} of the boards' per-phase median
 * ratios (phases without a value left out).  Return: a new object or NULL.
 */
json_t *dl_sweep_fidelity_phases(const json_t *groups, const char *kind);

#endif
