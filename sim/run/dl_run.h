/*
 * dl_run.h - one simulation run and its log, the one entry point `dlsim
 * run`, `compare` and a sweep worker run a scenario through: the backend
 * named by an enum, the log's rows (the run, its devices, its events through
 * a dl_log_batch, its metrics) written the same way by each caller.
 *
 * A layer of its own above engine and log: neither of those may call it.
 */
#ifndef DL_RUN_ENTRY_H
#define DL_RUN_ENTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine/engine.h"

struct dl_log;
struct dl_log_batch;
struct dl_run_info;

/* Where a run's callbacks run (--mode); the names are the log's runs.mode. */
enum dl_backend {
	DL_BACKEND_DES,      /* discrete events in virtual time (engine.h) */
	DL_BACKEND_THREADS,  /* real threads in scaled real time (threads.h) */
	DL_BACKEND_KERNEL,   /* a booted kernel's dump, converted (sim/kernel) */
	DL_BACKEND_COUNT
};

const char *dl_backend_name(enum dl_backend b);
/* dl_backend_parse - "des", "threads" or "kernel" into *@out: 0, or -EINVAL. */
int dl_backend_parse(const char *name, enum dl_backend *out);

struct dl_kernel_info;

/* One run to make: what, on which backend, logged where. */
struct dl_run_req {
	const struct dl_scenario *sc;
	enum dl_backend backend;
	/* order, workers, kernel, seed, probe_module, stop, progress; dl_run() sets the sink */
	struct dl_engine_opts eo;
	double time_scale;            /* threads: real time per simulated unit */
	struct dl_log *log;           /* NULL: not logged */
	struct dl_log_batch *batch;   /* the events' batch (with a log) */
	atomic_int *log_stop;         /* set when the log fails mid-run (may be NULL) */
	int64_t run_id;               /* > 0: this run id (a sweep's); 0: the next free one */
	/* kernel: the run's dump (sim/kernel, booted or read before), converted */
	const char *dump;
	size_t dump_len;
	const char *kernel;           /* kernel: the version booted (--kernel) */
	int64_t wall_ns;              /* kernel: the run's share of the boot's wall time */
	struct dl_kernel_info *ki;    /* kernel: what the conversion found (out; may be NULL) */
};

/**
 * dl_run - make the run @q asks for into @r and, with a log, log it as
 * run *@run_id.  Returns the backend's result (0, 1 when an injected fault
 * made an op fail, -EINTR, kernel: -EPIPE when the dump stops early, another
 * negative errno); *@log_err is 0, or the
 * log's negative error code when a row of the run could not be written
 * (*@run_id is then 0 if not even the run's row was).
 */
int dl_run(const struct dl_run_req *q, struct dl_run_result *r, int64_t *run_id, int *log_err);

/**
 * dl_run_strerror - what a negative result of dl_run() means, for a
 * message: strerror(), but -EOVERFLOW is the run's virtual time past 2^62
 * ns (not "Value too large for defined data type") and -ENOMEM "out of
 * memory".  `dlsim run` says more (which cost did it: cmd_run.c).
 */
const char *dl_run_strerror(int rc);

/**
 * dl_run_overflowed_in_walk - a run that failed with -EOVERFLOW: did the
 * walk before each deferred retry (device_pm_move_to_tail(), @r's
 * reorder_ns) take it past 2^62 ns, or a latency too large for the
 * scenario?  What can be done differs: an order that does not defer, or
 * a smaller latency.
 */
bool dl_run_overflowed_in_walk(const struct dl_run_result *r);

/* What leaves that walk out, said wherever a run passed 2^62 ns in it (run, advise). */
#define DL_RUN_WALK_OUT "An order that does not defer (--order cp-first, levels), or --set" \
	" cost.reorder_ns=0 --set cost.reorder_visit_ns=0, leaves the walk out"

/**
 * dl_run_time_scale - the threads backend's time-scale policy: real time
 * per simulated unit at which the shortest callback of @sc lasts
 * DL_WAKEUP_FACTOR times this machine's wake-up latency @wakeup_ns, or
 * more, so that the run measures the order and not the wake-ups.  *@pick is
 * the smallest 1, 2 or 5 x 10^k at or above that (1 when nothing
 * constrains it: no callback or no latency).  Returns whether a scale
 * @given (> 0) is enough.
 */
bool dl_run_time_scale(const struct dl_scenario *sc, int64_t wakeup_ns, double given,
		       double *pick);

/**
 * dl_run_wall_over - would a threads run of @sc under @eo take more than
 * @max_wall seconds of real time at @time_scale?  Threads mode sleeps each
 * simulated ns for time_scale real ns, and a run the DES puts at days of
 * simulated time (a retry storm's reorder walks) would not end, so the DES
 * times it first (no log; @r gets its figures).  Returns 0 (it fits, or
 * @max_wall is 0), 1 (over: @why, of @len bytes, says by how much and
 * what to do, without "dlsim CMD: " or a newline) or -EINTR.
 */
int dl_run_wall_over(const struct dl_scenario *sc, const struct dl_engine_opts *eo,
		     double time_scale, uint32_t max_wall, struct dl_run_result *r, char *why,
		     size_t len);

/*
 * dl_run_log_begin - the run's rows (@info, the devices of @sc) begun in
 * @log, and @b as the sink that sends the run's events there; 0, the log's
 * negative error code, or -EINTR when @intr (the Ctrl-C flag; may be NULL)
 * was set while the devices rows were written (the run's row is begun and
 * the sink set: end it with dl_run_log_end()).  dl_run_log_end - the
 * batch's last events and @r's status and figures into the log; 0 or the
 * log's error code.
 */
int dl_run_log_begin(struct dl_log *log, struct dl_log_batch *b, atomic_int *stop,
		     const atomic_int *intr, const struct dl_scenario *sc,
		     const struct dl_run_info *info, int64_t *run_id, struct dl_sink *sink);
int dl_run_log_end(struct dl_log *log, struct dl_log_batch *b, const struct dl_run_result *r);

#endif
