/*
 * dl_run.c - one simulation run and its log (dl_run.h).
 */
#include <errno.h>
#include <string.h>

#include "sim/engine/threads.h"
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

/* A failed log's own code (-ENOSPC, -EBUSY, -EIO), else -EIO. */
static int log_error(const struct dl_log *log)
{
	return dl_log_failure(log) ? dl_log_failure(log) : -EIO;
}

int dl_run_log_begin(struct dl_log *log, struct dl_log_batch *b, atomic_int *stop,
		     const struct dl_scenario *sc, const struct dl_run_info *info,
		     int64_t *run_id, struct dl_sink *sink)
{
	if (dl_log_run_begin(log, info, run_id))
		return log_error(log);
	for (uint32_t i = 0; i < sc->ndev; i++)
		dl_log_device(log, i, dl_sc_name(sc, i), sc->dev[i].parent, sc->dev[i].async);
	*sink = dl_log_batch_sink(b, log, stop);
	return 0;
}

int dl_run_log_end(struct dl_log *log, struct dl_log_batch *b, const struct dl_run_result *r)
{
	dl_log_batch_flush(b);
	return dl_log_run_result(log, r) ? log_error(log) : 0;
}

int dl_run(const struct dl_run_req *q, struct dl_run_result *r, int64_t *run_id, int *log_err)
{
	const struct dl_scenario *sc = q->sc;
	struct dl_engine_opts eo = q->eo;
	char kernel[16];
	int rc;

	*run_id = q->run_id;
	*log_err = 0;
	memset(r, 0, sizeof(*r));
	if (q->log) {
		struct dl_run_info info = {
			.scenario = sc->name, .order = dl_order_name(eo.order),
			.mode = dl_backend_name(q->backend), .version = DLSIM_VERSION,
			.kernel = kernel, .seed = eo.seed, .devices = sc->ndev, .links = sc->nlink,
			.workers = dl_engine_workers(sc, eo.order, eo.workers), .run_id = q->run_id,
			.probe_context = eo.probe_module ? "module" : "boot",
		};

		/* the kernel whose rules the engine follows: --kernel, else the order's */
		dl_kver_format(dl_order_kernel(eo.order, eo.kernel), kernel, sizeof(kernel));
		*log_err = dl_run_log_begin(q->log, q->batch, q->log_stop, sc, &info, run_id,
					    &eo.sink);
		if (*log_err)
			return 0;
	}
	if (q->backend == DL_BACKEND_THREADS)
		rc = dl_threads_run(sc, &eo, q->time_scale, r);
	else
		rc = dl_engine_run(sc, &eo, r);
	if (!r->status)
		r->status = rc == -EINTR ? "interrupted" : "failed";
	if (q->log)
		*log_err = dl_run_log_end(q->log, q->batch, r);
	return rc;
}
