/*
 * dl_sat.h - saturating arithmetic for counts and times that may not wrap:
 * path counts of the kernel's reorder walk, the time charged for them, and
 * sums of times read from a log that may have been tampered with.
 */
#ifndef DL_SAT_H
#define DL_SAT_H

#include <stdint.h>

/* a + b, at most UINT64_MAX */
static inline uint64_t dl_sat_add_u64(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* a + b, clamped to [INT64_MIN, INT64_MAX] */
static inline int64_t dl_sat_add_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* a - b, clamped to [INT64_MIN, INT64_MAX] */
static inline int64_t dl_sat_sub_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

#endif
