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
#include <stdint.h>

#include "sim/engine/engine.h"

struct dl_log;
struct dl_log_batch;
struct dl_run_info;

/* Where a run's callbacks run (--mode); the names are the log's runs.mode. */
enum dl_backend {
	DL_BACKEND_DES,      /* discrete events in virtual time (engine.h) */
	DL_BACKEND_THREADS,  /* real threads in scaled real time (threads.h) */
	DL_BACKEND_KERNEL,   /* a booted kernel's dump, converted (sim/kernel; not dl_run()) */
	DL_BACKEND_COUNT
};

const char *dl_backend_name(enum dl_backend b);
/* dl_backend_parse - "des", "threads" or "kernel" into *@out: 0, or -EINVAL. */
int dl_backend_parse(const char *name, enum dl_backend *out);

/* One run to make: what, on which backend, logged where. */
struct dl_run_req {
	const struct dl_scenario *sc;
	enum dl_backend backend;      /* DL_BACKEND_DES or DL_BACKEND_THREADS */
	/* order, workers, kernel, seed, probe_module, stop, progress; dl_run() sets the sink */
	struct dl_engine_opts eo;
	double time_scale;            /* threads: real time per simulated unit */
	struct dl_log *log;           /* NULL: not logged */
	struct dl_log_batch *batch;   /* the events' batch (with a log) */
	atomic_int *log_stop;         /* set when the log fails mid-run (may be NULL) */
	int64_t run_id;               /* > 0: this run id (a sweep's); 0: the next free one */
};

/**
 * dl_run - make the run @q asks for into @r and, with a log, log it as
 * run *@run_id.  Returns the backend's result (0, 1 when an injected fault
 * made an op fail, -EINTR, another negative errno); *@log_err is 0, or the
 * log's negative error code when a row of the run could not be written
 * (*@run_id is then 0 if not even the run's row was).
 */
int dl_run(const struct dl_run_req *q, struct dl_run_result *r, int64_t *run_id, int *log_err);

/*
 * dl_run_log_begin - the run's rows (@info, the devices of @sc) begun in
 * @log, and @b as the sink that sends the run's events there; 0, or the
 * log's negative error code.  dl_run_log_end - the batch's last events and
 * @r's status and figures into the log; 0 or the log's error code.  For a
 * run dl_run() does not make (a kernel's dump, converted).
 */
int dl_run_log_begin(struct dl_log *log, struct dl_log_batch *b, atomic_int *stop,
		     const struct dl_scenario *sc, const struct dl_run_info *info,
		     int64_t *run_id, struct dl_sink *sink);
int dl_run_log_end(struct dl_log *log, struct dl_log_batch *b, const struct dl_run_result *r);

#endif
