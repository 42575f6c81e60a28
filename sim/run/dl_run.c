/*
 * dl_run.c - one simulation run and its log (dl_run.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/core/dl_sat.h"
#include "sim/engine/threads.h"
#include "sim/engine/wakeup.h"
#include "sim/kernel/kmode.h"
#include "sim/log/dl_log.h"
#include "sim/log/dl_log_batch.h"
#include "sim/log/dl_log_result.h"
#include "sim/run/dl_run.h"

static const char *const backend_names[DL_BACKEND_COUNT] = {
	[DL_BACKEND_DES] = "des",
	[DL_BACKEND_THREADS] = "threads",
	[DL_BACKEND_KERNEL] = "kernel",
};

const char *dl_backend_name(enum dl_backend b)
{
	return b < DL_BACKEND_COUNT ? backend_names[b] : "?";
}

int dl_backend_parse(const char *name, enum dl_backend *out)
{
	for (int i = 0; i < DL_BACKEND_COUNT; i++)
		if (!strcmp(name, backend_names[i])) {
			*out = (enum dl_backend)i;
			return 0;
		}
	return -EINVAL;
}

/* The smallest 1, 2 or 5 x 10^k at or above X. */
static double nice_up(double x)
{
	double p = pow(10, floor(log10(x)));

	for (int i = 0; i < 4; i++, p *= 10)
		for (int m = 1; m <= 5; m += m == 1 ? 1 : 3)
			if (m * p >= x * (1 - 1e-9))
				return m * p;
	return 10 * p;
}

bool dl_run_time_scale(const struct dl_scenario *sc, int64_t wakeup_ns, double given,
		       double *pick)
{
	int64_t shortest = dl_shortest_callback_ns(sc);
	double need;

	*pick = 1;
	if (!shortest || !wakeup_ns)
		return true;
	need = (double)DL_WAKEUP_FACTOR * (double)wakeup_ns / (double)shortest;
	*pick = nice_up(need);
	return given * (1 + 1e-9) >= need;
}

/* A failed log's own code (-ENOSPC, -EBUSY, -EIO), else -EIO. */
static int log_error(const struct dl_log *log)
{
	return dl_log_failure(log) ? dl_log_failure(log) : -EIO;
}

/*
 * Device rows between two looks at the Ctrl-C flag, and between two waits
 * for the writer: the rows queued when Ctrl-C comes are written before
 * the run ends, and the writer is the slow side (~50k rows/s on a loaded
 * machine), so at most DEVICE_ROWS_AHEAD are queued, not the log's 64k.
 */
#define DEVICE_ROWS_STOP_EVERY 4096u
#define DEVICE_ROWS_AHEAD 16384u

int dl_run_log_begin(struct dl_log *log, struct dl_log_batch *b, atomic_int *stop,
		     const atomic_int *intr, const struct dl_scenario *sc,
		     const struct dl_run_info *info, int64_t *run_id, struct dl_sink *sink)
{
	int err = 0;

	if (dl_log_run_begin(log, info, run_id))
		return log_error(log);
	/*
	 * A million device rows take the writer seconds: Ctrl-C stops them
	 * (an incomplete run may hold only its first devices rows; check
	 * knows), and the run is then ended 'interrupted' before it began.
	 */
	for (uint32_t i = 0; i < sc->ndev; i++) {
		if (i % DEVICE_ROWS_STOP_EVERY == 0 && intr && atomic_load(intr)) {
			err = -EINTR;
			break;
		}
		if (i && i % DEVICE_ROWS_AHEAD == 0 && intr)
			dl_log_drain(log);
		dl_log_device_driver(log, i, dl_sc_name(sc, i), dl_sc_driver(sc, i), sc->dev[i].parent,
				     sc->dev[i].async);
	}
	*sink = dl_log_batch_sink(b, log, stop);
	return err;
}

int dl_run_log_end(struct dl_log *log, struct dl_log_batch *b, const struct dl_run_result *r)
{
	dl_log_batch_flush(b);
	return dl_log_run_result(log, r) ? log_error(log) : 0;
}

/* What the log says of the run @q asks for (@buf: room for its strings). */
static void run_info(const struct dl_run_req *q, struct dl_run_info *info, char *kernel,
		     size_t klen, char *version, size_t vlen)
{
	const struct dl_scenario *sc = q->sc;
	const struct dl_engine_opts *eo = &q->eo;

	*info = (struct dl_run_info){
		.scenario = sc->name, .order = dl_order_name(eo->order),
		.mode = dl_backend_name(q->backend), .version = DLSIM_VERSION, .kernel = kernel,
		.seed = eo->seed, .devices = sc->ndev, .links = sc->nlink,
		.workers = dl_engine_workers(sc, eo->order, eo->workers), .run_id = q->run_id,
		.probe_context = eo->probe_module ? "module" : "boot",
	};
	if (q->backend == DL_BACKEND_KERNEL) {
		char release[96];

		/* the guest's release if the dump says it, else the version booted */
		dl_kernel_release(q->dump ? q->dump : "", q->dump_len, release, sizeof(release));
		snprintf(version, vlen, "%s kernel %s", DLSIM_VERSION,
			 release[0] ? release : q->kernel);
		info->version = version;
		info->kernel = q->kernel;
		info->workers = 1;
		info->probe_context = "module";   /* a module loaded after boot, by construction */
		return;
	}
	/* the kernel whose rules the engine follows: --kernel, else the order's */
	dl_kver_format(dl_order_kernel(eo->order, eo->kernel), kernel, klen);
}

const char *dl_run_strerror(int rc)
{
	if (rc == -EOVERFLOW)
		return "virtual time passed 2^62 ns (most often in the walk before each deferred-probe"
		       " retry, device_pm_move_to_tail(), on a graph with more paths than a real device"
		       " tree; 'dlsim run' of it says where)";
	return rc == -ENOMEM ? "out of memory" : strerror(-rc);
}

bool dl_run_overflowed_in_walk(const struct dl_run_result *r)
{
	int64_t ns = 0;

	for (uint32_t i = 0; i < r->nops && i < DL_MAX_OPS; i++)
		ns = dl_sat_add_i64(ns, r->op[i].reorder_ns);
	return ns >= DL_T_MAX / 2;
}

int dl_run_wall_over(const struct dl_scenario *sc, const struct dl_engine_opts *eo,
		     double time_scale, uint32_t max_wall, struct dl_run_result *r, char *why,
		     size_t len)
{
	struct dl_engine_opts des = *eo;   /* the same run, with nobody told of its events */
	double wall;
	int rc, n;

	if (!max_wall)
		return 0;
	des.sink = (struct dl_sink){ 0 };
	des.progress = NULL;
	rc = dl_engine_run(sc, &des, r);
	if (rc == -EINTR)
		return -EINTR;
	wall = (double)r->makespan_ns * time_scale / 1e9;
	if (rc != -EOVERFLOW && wall <= max_wall)
		return 0;
	if (rc == -EOVERFLOW) {
		snprintf(why, len, "--mode threads, order %s: the DES's virtual time passes 2^62 ns"
			 " (146 years) on this scenario, so no real-time run of it ends",
			 dl_order_name(eo->order));
		return 1;
	}
	n = snprintf(why, len, "--mode threads, order %s: the DES puts this run at %.6g s of"
		     " simulated time, %.3g %s of real time at --time-scale %g, over --max-wall"
		     " %" PRIu32 " s", dl_order_name(eo->order), (double)r->makespan_ns / 1e9,
		     wall >= 86400 ? wall / 86400 : wall, wall >= 86400 ? "days" : "s", time_scale,
		     max_wall);
	if (n < 0 || (size_t)n >= len)
		return 1;
	if (r->reorder_ns > 0 && r->reorder_ns >= r->makespan_ns / 2)
		snprintf(why + n, len - (size_t)n, "; %.1f%% of it is device_pm_move_to_tail()"
			 " before the deferred retries: --set cost.reorder_ns=0 --set"
			 " cost.reorder_visit_ns=0 leaves that walk out, or run it with --mode des",
			 100.0 * (double)r->reorder_ns / (double)r->makespan_ns);
	else
		snprintf(why + n, len - (size_t)n, ".  Run it with --mode des, a smaller"
			 " --time-scale, or a larger --max-wall");
	return 1;
}

int dl_run(const struct dl_run_req *q, struct dl_run_result *r, int64_t *run_id, int *log_err)
{
	const struct dl_scenario *sc = q->sc;
	struct dl_engine_opts eo = q->eo;
	struct dl_kernel_info ki;
	char kernel[16], version[160];
	int rc;

	*run_id = q->run_id;
	*log_err = 0;
	memset(r, 0, sizeof(*r));
	if (q->log) {
		struct dl_run_info info;

		run_info(q, &info, kernel, sizeof(kernel), version, sizeof(version));
		*log_err = dl_run_log_begin(q->log, q->batch, q->log_stop, q->eo.stop, sc, &info,
					    run_id, &eo.sink);
		if (*log_err == -EINTR) {
			r->status = "interrupted";   /* Ctrl-C while its devices were written */
			*log_err = dl_run_log_end(q->log, q->batch, r);
			return -EINTR;
		}
		if (*log_err)
			return 0;
	}
	switch (q->backend) {
	case DL_BACKEND_THREADS:
		rc = dl_threads_run(sc, &eo, q->time_scale, r);
		break;
	case DL_BACKEND_KERNEL:
		rc = dl_kernel_convert(sc, q->dump ? q->dump : "", q->dump_len, &eo, r,
				       q->ki ? q->ki : &ki);
		r->wall_ns = q->wall_ns;
		break;
	default:
		rc = dl_engine_run(sc, &eo, r);
		break;
	}
	if (!r->status)
		r->status = rc == -EINTR ? "interrupted" : "failed";
	if (q->log)
		*log_err = dl_run_log_end(q->log, q->batch, r);
	return rc;
}
