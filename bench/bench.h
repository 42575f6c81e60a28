/*
 * bench.h - the tiny C-visible face of Google Benchmark (see shim.cc).
 *
 * A benchmark is `void bm_xxx(struct bm_state *st)`:
 *
 *	setup ...;
 *	while (bm_keep_running(st)) { timed work }
 *	bm_set_items(st, items processed in all iterations);
 *
 * Families are registered with bm_register() from bm_register_all_*(),
 * called once by the shim before benchmark::Initialize().
 */
#ifndef DLSIM_BENCH_H
#define DLSIM_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bm_state;
typedef void (*bm_fn)(struct bm_state *st);

bool bm_keep_running(struct bm_state *st);
int64_t bm_iterations(struct bm_state *st);       /* iterations run so far */
int64_t bm_range(struct bm_state *st, int i);     /* the i-th argument */
void bm_set_items(struct bm_state *st, int64_t n);/* -> items_per_second */
void bm_counter(struct bm_state *st, const char *name, double value);      /* plain value */
void bm_counter_rate(struct bm_state *st, const char *name, double total); /* total / s */
void bm_skip(struct bm_state *st, const char *msg); /* SkipWithError */
void bm_pause(struct bm_state *st);
void bm_resume(struct bm_state *st);

/* Registers NAME (with args[0..nargs), appended as /a/b by Google Benchmark).
 * user: any number the benchmark reads back with bm_user() (e.g. an order).
 * unit: 'n', 'u', 'm' or 's' (time unit of the report). */
void bm_register(const char *name, bm_fn fn, int64_t user, const int64_t *args, int nargs,
		 char unit);
/* The same, timed by the wall clock instead of the calling thread's CPU
 * time (for work done by other threads: threads mode, the log writer).
 * Google Benchmark appends /real_time to the name. */
void bm_register_real_time(const char *name, bm_fn fn, int64_t user, const int64_t *args,
			   int nargs, char unit);
int64_t bm_user(struct bm_state *st);

/* Environment: DLSIM_BENCH_FULL=1 adds the 1M-device sizes. */
bool bm_full(void);

/* Per-file registration hooks. */
void bm_register_core(void);
void bm_register_engine(void);
void bm_register_log(void);
void bm_register_queue(void);
void bm_register_threads(void);
void bm_register_measure(void);

#ifdef __cplusplus
}
#endif

#endif
