/*
 * dl_run_kernel.c - kernel mode's batch (dl_run_kernel.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/dl_core.h"
#include "sim/engine/cost.h"
#include "sim/run/dl_run_kernel.h"

/* A dump read from a file is the kernel's word only for the runs and kernel asked for. */
static int check_dump(const struct dl_run_kernel *k, const char *path, const char *version,
		      char *msg, size_t len)
{
	size_t vl = strlen(version);

	for (size_t j = 0; j < k->njobs; j++) {
		char rel[96];

		if (!k->jobs[j].dump) {
			snprintf(msg, len, "%s: no run %03zu in the dump (it holds the runs of one"
				 " command: orders x seeds)", path, j);
			return -EINVAL;
		}
		if (!dl_kernel_release(k->jobs[j].dump, k->jobs[j].len, rel, sizeof(rel)) &&
		    (strncmp(rel, version, vl) || rel[vl] != '.')) {
			snprintf(msg, len, "%s: run %03zu was recorded on kernel %s, not %s"
				 " (--kernel)", path, j, rel, version);
			return -EINVAL;
		}
	}
	return 0;
}

/* A dump that is not of this scenario is refused before the database opens. */
static int check_converts(const struct dl_run_kernel *k, const struct dl_scenario *sc,
			  const char *path, char *msg, size_t len)
{
	struct dl_run_result *r = malloc(sizeof(*r));
	int rc = 0;

	if (!r) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	for (size_t j = 0; j < k->njobs && !rc; j++) {
		struct dl_engine_opts eo = { .order = k->jobs[j].order, .seed = k->jobs[j].seed };
		struct dl_kernel_info ki;
		const char *d = k->jobs[j].dump ? k->jobs[j].dump : "";

		rc = dl_kernel_convert(sc, d, k->jobs[j].len, &eo, r, &ki);
		if (rc == -EINVAL || rc == -ENOMEM)
			snprintf(msg, len, "%s: %s", path ? path : "the guest's dump", ki.msg);
		else
			rc = 0;
	}
	free(r);
	return rc;
}

int dl_run_kernel_boot(struct dl_run_kernel *k, const struct dl_scenario *sc,
		       const enum dl_order *orders, uint32_t norders, uint32_t seeds,
		       const struct dl_kernel_opts *ko, const char *dump_path, char *msg,
		       size_t len, char *warn, size_t wlen)
{
	struct dl_kernel_opts o = *ko;
	char why[512], kept[512] = "";
	int64_t t0 = dl_mono_ns();
	int rc;

	warn[0] = '\0';
	memset(k, 0, sizeof(*k));
	for (uint32_t i = 0; i < norders; i++)
		if (dl_kernel_refuse(sc, orders[i], ko->version, why, sizeof(why))) {
			snprintf(msg, len, "%s: %s", sc->path, why);
			return -EINVAL;
		}
	k->njobs = (size_t)seeds * norders;
	k->jobs = calloc(k->njobs, sizeof(*k->jobs));
	if (!k->jobs) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t s = 0, j = 0; s < seeds; s++)
		for (uint32_t i = 0; i < norders; i++, j++)
			k->jobs[j] = (struct dl_kjob){ .sc = sc, .order = orders[i],
						       .seed = sc->seed + s };
	k->stats = (struct dl_kernel_stats){ -1, -1, -1 };
	o.stats = &k->stats;
	if (dump_path)
		rc = dl_kernel_load_dump(k->jobs, k->njobs, dump_path, msg, len);
	else
		rc = dl_kernel_boot(k->jobs, k->njobs, &o, msg, len, kept, sizeof(kept));
	k->boot_wall_ns = dl_mono_ns() - t0;
	if (rc == -EINTR)
		return rc;
	if (rc && rc != -ETIMEDOUT)
		return -EINVAL;
	if (dump_path && check_dump(k, dump_path, ko->version, msg, len))
		return -EINVAL;
	if (rc)
		snprintf(warn, wlen, "%s%s%s", msg, kept[0] ? "; kept: " : "", kept);
	return check_converts(k, sc, dump_path, msg, len);
}

const struct dl_kjob *dl_run_kernel_next(struct dl_run_kernel *k, struct dl_run_req *q,
					 const char *version, struct dl_kernel_info *ki)
{
	const struct dl_kjob *j = &k->jobs[k->next++];

	q->backend = DL_BACKEND_KERNEL;
	q->eo.order = j->order;
	q->eo.seed = j->seed;
	q->dump = j->dump;
	q->dump_len = j->len;
	q->kernel = version;
	q->wall_ns = k->boot_wall_ns / (int64_t)k->njobs;
	q->ki = ki;
	return j;
}

void dl_run_kernel_free(struct dl_run_kernel *k)
{
	if (k->jobs)
		dl_kernel_jobs_free(k->jobs, k->njobs);
	free(k->jobs);
	k->jobs = NULL;
}
