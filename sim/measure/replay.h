/*
 * replay.h - the replay check of import-log: run a scenario imported from a
 * log (one cycle's latencies) through the engine under the order the log
 * shows, and set each phase total the log printed beside the one predicted.
 * The engine is called through its public entry point (engine.h) only.
 */
#ifndef DL_REPLAY_H
#define DL_REPLAY_H

#include "sim/engine/engine.h"
#include "sim/measure/log_import.h"

#define DL_REPLAY_MAX_ROWS 32

struct dl_replay_row {
	char label[32];			/* the log's own name of the phase */
	uint8_t first, last;		/* lat keys it covers */
	uint32_t line, ncb;		/* total's line; callbacks logged in the phase */
	int64_t logged_ns;		/* the log's total */
	int64_t replay_ns;		/* predicted, the log's main-thread gap added to each callback */
	int64_t replay_default_ns;	/* predicted with the engine's default cost model */
	int64_t cb_sum_ns, cb_max_ns;	/* the logged callbacks of the phase */
};

struct dl_replay {
	uint32_t cycle;
	enum dl_order order;
	uint32_t workers;
	int64_t main_ns;		/* the median gap over all phases; -1: none measured */
	uint32_t nrow;
	struct dl_replay_row row[DL_REPLAY_MAX_ROWS];
};

/*
 * dl_log_replay() - replay cycle @cycle of @li (finished) under @order
 * (negative: sync when every callback ran on the main thread, else
 * kernel-async), on @workers CPUs (0: the log's, else the order's default).
 * Return 0, -ENODATA (the cycle printed no total), -EINVAL/-ENOMEM (@err).
 */
int dl_log_replay(const struct dl_logimport *li, uint32_t cycle, int order, uint32_t workers,
		  struct dl_replay *out, struct dl_error *err);

#endif
