/*
 * dl_advice_log.h - `dlsim advise --db DB` keeps its ranking in the table
 * advice of the log, so that `dlsim report` can show it beside the runs of
 * the same scenario:
 *
 *   advice(advice_id, scenario, order_name, workers, resims, created_at,
 *          rank, kind, change, unsafe, status, op, saved_ns)
 *
 * one row per change and op of the script, plus op 'total'; advice_id
 * numbers one invocation.  Every value is bound, never spliced.
 */
#ifndef DL_ADVICE_LOG_H
#define DL_ADVICE_LOG_H

#include <stddef.h>
#include <stdint.h>

struct dl_advice_row {
	uint32_t rank;
	const char *kind, *change, *status;
	int unsafe;
	const int64_t *saved_ns;	/* per op, nops of them */
	int64_t total_ns;
};

/**
 * dl_log_advice() - append one ranking to the database at @path (created if
 * absent, opened as every writer opens a log: dl_log_open_db()).  @op: the
 * ops' names.  Return 0, or negative (-ENOSPC disk full, -ENOMEM, -EIO, or
 * dl_log_open_db()'s refusal) with @err filled, the path first.
 */
int dl_log_advice(const char *path, const char *scenario, const char *order, uint32_t workers,
		  uint64_t resims, uint32_t nops, const char *const *op,
		  const struct dl_advice_row *rows, uint32_t n, int busy_ms, char *err,
		  size_t errlen);

#endif
