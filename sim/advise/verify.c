/*
 * verify.c - advice the kernel has checked (verify.h): each change as a
 * scenario edit, the edits of one kernel booted together, each run's dump
 * converted through dl_run(), the kernel's saving set beside the DES's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/advise/verify.h"
#include "sim/engine/cost.h"
#include "sim/kernel/kmode.h"
#include "sim/run/dl_run.h"

static const char *const kernels[] = { "6.12", "7.3" };

/* One scenario edit: the baseline (a NULL change) or one change, and where it runs. */
struct edit {
	struct dl_scenario w;	/* shallow copy; dev, prof, link are ours */
	int64_t *samp;		/* halved empirical samples */
	enum dl_order order;
	const char *kernel;	/* NULL: kernel mode cannot play it (row's why) */
	/* over the boots: per op, the savings (paired) or the makespans of its runs */
	int64_t sum_ns[2][DL_MAX_OPS];	/* [0]: runs that completed, [1]: runs that failed */
	uint32_t nrun[2];
	uint32_t nmiss;		/* runs the guest never finished or that did not convert */
	bool paired;		/* sum_ns holds savings against the baselines either side */
	bool failed;		/* one of its runs failed (fail_why says how) */
	char fail_why[256];	/* a run failed or is missing */
};

static bool sync_in(const struct dl_scenario *w0, uint32_t d)
{
	return d != DL_SC_NONE && !w0->dev[d].async && !w0->dev[d].hotplug;
}

/* @x and every device from it up to @top sync in the baseline: in @top's sync subtree. */
static bool in_subtree(const struct dl_scenario *w0, uint32_t x, uint32_t top)
{
	for (; x != DL_SC_NONE; x = w0->dev[x].parent) {
		if (!sync_in(w0, x))
			return false;
		if (x == top)
			return true;
	}
	return false;
}

/* Copy @w0 (the baseline as advise simulated it) into @e's own arrays. */
static int edit_copy(struct edit *e, const struct dl_scenario *w0)
{
	e->w = *w0;
	e->w.dev = malloc(((size_t)w0->ndev + 1) * sizeof(*e->w.dev));
	e->w.prof = malloc(((size_t)w0->nprof + 1) * sizeof(*e->w.prof));
	e->w.link = malloc(((size_t)w0->nlink + 1) * sizeof(*e->w.link));
	if (!e->w.dev || !e->w.prof || !e->w.link)
		return -ENOMEM;
	if (w0->ndev)
		memcpy(e->w.dev, w0->dev, w0->ndev * sizeof(*w0->dev));
	if (w0->nprof)
		memcpy(e->w.prof, w0->prof, w0->nprof * sizeof(*w0->prof));
	if (w0->nlink)
		memcpy(e->w.link, w0->link, w0->nlink * sizeof(*w0->link));
	return 0;
}

/* Advice @a's devices made async in @e, as advise.c's async changes set them. */
static void edit_async(struct edit *e, const struct dl_scenario *w0, const struct dl_advice *a)
{
	uint32_t d = a->dev;

	switch (a->kind) {
	case DL_ADV_ASYNC_PAIR:
		e->w.dev[a->dev2].async = 1;
		/* fall through */
	case DL_ADV_ASYNC:
		e->w.dev[d].async = 1;
		break;
	case DL_ADV_ASYNC_CHAIN:
		for (uint32_t i = 0; i < a->n && d != DL_SC_NONE; i++, d = w0->dev[d].parent)
			e->w.dev[d].async = 1;
		break;
	case DL_ADV_ASYNC_SUBTREE:
		for (uint32_t x = 0; x < w0->ndev; x++)
			if (in_subtree(w0, x, d))
				e->w.dev[x].async = 1;
		break;
	default:	/* DL_ADV_ASYNC_ALL */
		for (uint32_t x = 0; x < w0->ndev; x++)
			e->w.dev[x].async = !w0->dev[x].hotplug || w0->dev[x].async;
		break;
	}
}

/* @a's device with its latencies halved: a profile of its own, appended. */
static int edit_halve(struct edit *e, const struct dl_scenario *w0, const struct dl_advice *a)
{
	const struct dl_profile *p = &w0->prof[w0->dev[a->dev].profile];
	size_t maxs = 0;

	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		if (p->lat[k].nsamp > maxs)
			maxs = p->lat[k].nsamp;
	if (!(e->samp = malloc((maxs * DL_LAT_COUNT + 1) * sizeof(*e->samp))))
		return -ENOMEM;
	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		e->w.prof[w0->nprof].lat[k] = dl_latency_halved(p->lat[k], e->samp + k * maxs);
	e->w.prof[w0->nprof].cpu_ppm = p->cpu_ppm;
	e->w.nprof = w0->nprof + 1;
	e->w.dev[a->dev].profile = w0->nprof;
	return 0;
}

/*
 * @e made the scenario edit of advice @a (NULL: the baseline @w0 itself)
 * under @order; 0, -ENOMEM, or 1 with @why when kernel mode has no such edit.
 */
static int edit_make(struct edit *e, const struct dl_scenario *w0, enum dl_order order,
		     const struct dl_advice *a, char *why, size_t len)
{
	int ret = edit_copy(e, w0);

	e->order = order;
	if (ret || !a)
		return ret;
	switch (a->kind) {
	case DL_ADV_ASYNC:
	case DL_ADV_ASYNC_PAIR:
	case DL_ADV_ASYNC_CHAIN:
	case DL_ADV_ASYNC_SUBTREE:
	case DL_ADV_ASYNC_ALL:
		edit_async(e, w0, a);
		return 0;
	case DL_ADV_HALVE:
		return edit_halve(e, w0, a);
	case DL_ADV_DROP_LINK:
		/* the links after it move up one, as advise simulated it */
		memmove(&e->w.link[a->link], &w0->link[a->link + 1],
			(w0->nlink - a->link - 1) * sizeof(*w0->link));
		e->w.nlink = w0->nlink - 1;
		e->w.nlink_generated = w0->nlink_generated - (a->link < w0->nlink_generated);
		return 0;
	case DL_ADV_UPGRADE:
	case DL_ADV_ORDER:
		e->order = a->order;	/* (an order no kernel has: dl_kernel_refuse() says so) */
		return 0;
	case DL_ADV_CPUS:
		snprintf(why, len, "%u CPUs is another machine: kernel mode boots a one-CPU guest",
			 a->cpus);
		return 1;
	default:
		snprintf(why, len, "kernel mode has no edit for this change");
		return 1;
	}
}

/*
 * The warm-up that opens each boot: @w0's devices probed one after another
 * on the main thread, SETTLE_NS of guest time in all, no PM callback.
 * Measured on 6.12 (camera, six runs in a boot): every run that starts
 * before ~11.8 s of guest time takes 1.6x longer (its callbacks wake late,
 * 0.65 against 0.41 ms a callback), whatever the run; a sleep costs no
 * real time under -icount sleep=off, so the boot sleeps past it.
 */
#define SETTLE_NS 5000000000LL
static int edit_settle(struct edit *e, const struct dl_scenario *w0)
{
	int ret = edit_copy(e, w0);
	struct dl_profile *p = &e->w.prof[w0->nprof];

	if (ret)
		return ret;
	memset(p, 0, sizeof(*p));
	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		p->lat[k] = (struct dl_latency){ .dist = DL_DIST_NONE, .max = INT64_MAX };
	p->lat[DL_LAT_PROBE] = (struct dl_latency){ .dist = DL_DIST_FIXED, .max = INT64_MAX,
		.mean = SETTLE_NS / (w0->ndev ? w0->ndev : 1) };
	e->w.nprof = w0->nprof + 1;
	for (uint32_t d = 0; d < w0->ndev; d++) {
		e->w.dev[d].profile = w0->nprof;
		e->w.dev[d].async = 0;
	}
	e->w.nfault = 0;
	return 0;
}

static void edit_free(struct edit *e)
{
	free(e->w.dev);
	free(e->w.prof);
	free(e->w.link);
	free(e->samp);
}

/*
 * The kernel @e runs on: @first (the baseline's) if it has @e's order and
 * plays @e, else the other one that does; NULL with the first refusal in @why.
 */
static const char *kernel_for(const struct edit *e, const char *first, char *why, size_t len)
{
	const char *cand[3] = { first, kernels[0], kernels[1] };

	why[0] = '\0';
	for (int i = 0; i < 3; i++) {
		char w[256];

		if (!cand[i] || (i && first && !strcmp(cand[i], first)))
			continue;
		if (!dl_kernel_refuse(&e->w, e->order, cand[i], w, sizeof(w)))
			return cand[i];
		if (!why[0])
			snprintf(why, len, "%s", w);
	}
	return NULL;
}

/* The baseline's async flags as dl_advise() simulated them (its work_init()). */
static int baseline_of(const struct dl_scenario *sc, const struct dl_advise_opts *o,
		       const struct dl_advise_result *res, struct edit *w0)
{
	int ret = edit_copy(w0, sc);

	for (uint32_t d = 0; !ret && d < sc->ndev; d++)
		if (o->all_sync || res->order != o->order)
			w0->w.dev[d].async = 0;
	w0->order = res->order;
	return ret;
}

/* One run of a boot: its result, or why there is none. */
struct jrun {
	struct dl_run_result *r;
	int rc;			/* dl_run()'s, or -ENODATA: the guest never reached it */
	char why[256];
};

/* @j usable: converted, perhaps failed (a dump that stops early). */
static bool jrun_ok(const struct jrun *j)
{
	return j->r && (j->rc >= 0 || j->rc == -EPIPE);
}

/* @j a baseline to measure against: converted and complete. */
static bool base_ok(const struct jrun *j)
{
	return jrun_ok(j) && !strcmp(j->r->status, "ok");
}

/*
 * Boot the @n runs @ix (indices in @ed, repeats allowed) on @kernel at once,
 * after the warm-up, and convert each run's dump through dl_run() into
 * @out[i].  Return 0 (a run the guest never reached has rc -ENODATA),
 * -EINTR, -ENOMEM, or the boot's error with @vr->msg.
 */
static int boot_one(const struct edit *ed, const uint32_t *ix, size_t n, const struct edit *warm,
		    const char *kernel, const struct dl_verify_opts *vo, struct dl_verify_result *vr,
		    struct jrun *out)
{
	struct dl_kjob *jobs = calloc(n + 1, sizeof(*jobs)), *run;
	struct dl_kernel_stats st;
	struct dl_kernel_opts ko = { .version = kernel, .cache = vo->cache,
				     .timeout_ms = vo->timeout_ms, .stop = vo->stop, .stats = &st };
	char msg[512], kept[512];
	int64_t t0 = dl_mono_ns(), wall;
	int rc;

	if (!jobs)
		return -ENOMEM;
	run = jobs + 1;	/* jobs[0]: the warm-up (edit_settle()) */
	for (size_t i = 0; i < n; i++)
		run[i] = (struct dl_kjob){ .sc = &ed[ix[i]].w, .order = ed[ix[i]].order,
					   .seed = ed[ix[i]].w.seed };
	jobs[0] = (struct dl_kjob){ .sc = &warm->w, .order = warm->order, .seed = warm->w.seed };
	rc = dl_kernel_boot(jobs, n + 1, &ko, msg, sizeof(msg), kept, sizeof(kept));
	wall = dl_mono_ns() - t0;
	vr->boots++;
	vr->boot_wall_ns += wall;
	if (rc && rc != -EINTR)
		snprintf(vr->msg, sizeof(vr->msg), "kernel %s: %.300s%s%.150s", kernel, msg,
			 kept[0] ? "; kept: " : "", kept);
	for (size_t i = 0; i < n && (!rc || rc == -ETIMEDOUT); i++) {
		const struct edit *e = &ed[ix[i]];
		struct jrun *j = &out[i];
		struct dl_kernel_info ki = { .msg = "" };
		struct dl_run_req q = {
			.sc = &e->w, .backend = DL_BACKEND_KERNEL,
			.eo = { .order = e->order, .seed = e->w.seed, .stop = vo->stop },
			.dump = run[i].dump, .dump_len = run[i].len, .kernel = kernel,
			.wall_ns = wall / (int64_t)(n + 1), .ki = &ki };
		int64_t run_id;
		int log_err;

		if (!run[i].dump) {
			j->rc = -ENODATA;
			snprintf(j->why, sizeof(j->why), "the guest stopped before this run (%.200s)",
				 vr->msg);
			continue;
		}
		if (!(j->r = malloc(sizeof(*j->r)))) {
			rc = -ENOMEM;
			break;
		}
		j->rc = dl_run(&q, j->r, &run_id, &log_err);
		if (j->rc < 0 && j->rc != -EPIPE)
			snprintf(j->why, sizeof(j->why), "the guest's dump does not convert: %.200s",
				 ki.msg);
		else if (j->rc)		/* -EPIPE: where the dump stops; 1: an injected fault */
			snprintf(j->why, sizeof(j->why), "%.200s", ki.msg[0] ? ki.msg :
				 j->rc == 1 ? "an injected fault failed an op" : "");
		if (ix[i] == 0 && !vr->release[0])
			dl_kernel_release(run[i].dump, run[i].len, vr->release, sizeof(vr->release));
	}
	vr->runs += n + 1;
	dl_kernel_jobs_free(jobs, n + 1);
	free(jobs);
	return rc == -ETIMEDOUT ? 0 : rc;
}

static int64_t total_of(const struct dl_run_result *r, uint32_t nops)
{
	int64_t t = 0;

	for (uint32_t i = 0; i < nops && i < r->nops; i++)
		t += r->op[i].makespan_ns;
	return t;
}

static int64_t op_ns(const struct dl_run_result *r, uint32_t i)
{
	return i < r->nops ? r->op[i].makespan_ns : 0;
}

/*
 * Fold run @j of @e into its sums: with @lo and @hi (the baselines either
 * side of it in its boot) the saving against their mean, so that a drift
 * through the boot cancels; without, its makespans (a change on another
 * kernel, measured against the baseline's mean at the end).
 */
static void fold(struct edit *e, const struct jrun *j, const struct dl_run_result *lo,
		 const struct dl_run_result *hi, uint32_t nops)
{
	if (!jrun_ok(j)) {
		e->nmiss++;
		if (!e->fail_why[0])
			snprintf(e->fail_why, sizeof(e->fail_why), "%s", j->why[0] ? j->why : "not run");
		return;
	}
	int f = strcmp(j->r->status, "ok") != 0;	/* a failed run counts only if none completed */

	for (uint32_t i = 0; i < nops && i < DL_MAX_OPS; i++)
		e->sum_ns[f][i] += lo ? (op_ns(lo, i) + op_ns(hi, i)) / 2 - op_ns(j->r, i) :
					op_ns(j->r, i);
	e->paired = lo != NULL;
	e->nrun[f]++;
	if (f && !e->failed) {
		e->failed = true;
		snprintf(e->fail_why, sizeof(e->fail_why), "the kernel's run %s%s%.200s",
			 j->r->status, j->why[0] ? ": " : "", j->why);
	}
}

/* A change's run against its neighbouring baselines @lo and @hi (one if the other failed). */
static void fold_paired(struct edit *e, const struct jrun *j, const struct jrun *lo,
			const struct jrun *hi, uint32_t nops)
{
	if (!base_ok(lo) && !base_ok(hi)) {
		if (!e->fail_why[0])
			snprintf(e->fail_why, sizeof(e->fail_why), "the baseline runs either side of"
				 " it failed");
		return;
	}
	lo = base_ok(lo) ? lo : hi;
	hi = base_ok(hi) ? hi : lo;
	fold(e, j, lo->r, hi->r, nops);
}

/* Row @row from edit @e: the kernel's saving against the baselines, the flag. */
static void score(struct dl_verify_row *row, const struct edit *e, const struct dl_advice *a,
		  const struct dl_verify_result *vr, uint32_t nops)
{
	int k = e->nrun[0] ? 0 : 1;	/* the runs that completed, else those that failed */
	int64_t tol, off, n = e->nrun[k];

	snprintf(row->kernel, sizeof(row->kernel), "%s", e->kernel);
	if (!n) {
		snprintf(row->why, sizeof(row->why), "%s", e->fail_why);
		return;
	}
	row->ran = true;
	for (uint32_t i = 0; i < nops && i < DL_MAX_OPS; i++) {
		row->saved_ns[i] = e->paired ? e->sum_ns[k][i] / n :
				   vr->base_ns[i] - e->sum_ns[k][i] / n;
		row->total_saved_ns += row->saved_ns[i];
	}
	if (k == 0 && (e->failed || e->fail_why[0]))	/* measured on the runs that completed */
		snprintf(row->why, sizeof(row->why), "%u of %u runs left out: %.200s",
			 e->nrun[1] + e->nmiss, e->nrun[0] + e->nrun[1] + e->nmiss, e->fail_why);
	else if (e->failed || e->fail_why[0])
		snprintf(row->why, sizeof(row->why), "%s", e->fail_why);
	else if (strcmp(e->kernel, vr->kernel))
		snprintf(row->why, sizeof(row->why), "played on kernel %s (a boot of its own),"
			 " against the baseline on %s", e->kernel, vr->kernel);
	off = row->total_saved_ns - a->total_saved_ns;
	tol = (a->total_saved_ns < 0 ? -a->total_saved_ns : a->total_saved_ns) *
	      DL_VERIFY_TOLERANCE_PCT / 100;
	row->tolerance_ns = tol > vr->spread_ns ? tol : vr->spread_ns;
	row->off_ns = off;
	row->flagged = (off < 0 ? -off : off) > row->tolerance_ns ||
		       (k == 0) != !strcmp(a->status ? a->status : "?", "ok");
}

/* Edits 0..n: the baseline (0), the n changes; @base_kernel the baseline's. */
static int make_edits(const struct dl_scenario *sc, const struct dl_advise_opts *o,
		      const struct dl_advise_result *res, const struct dl_advice *adv, uint32_t n,
		      const struct dl_verify_opts *vo, struct edit *ed, struct dl_verify_result *vr)
{
	char why[256];
	int ret = baseline_of(sc, o, res, &ed[0]);

	if (ret)
		return ret;
	if (vo->kernel && dl_kernel_refuse(&ed[0].w, ed[0].order, vo->kernel, why, sizeof(why))) {
		snprintf(vr->msg, sizeof(vr->msg), "%s", why);
		return -EINVAL;
	}
	if (!(ed[0].kernel = kernel_for(&ed[0], vo->kernel, why, sizeof(why)))) {
		snprintf(vr->msg, sizeof(vr->msg), "kernel mode cannot play the baseline: %s", why);
		return -EINVAL;
	}
	snprintf(vr->kernel, sizeof(vr->kernel), "%s", ed[0].kernel);
	for (uint32_t i = 0; i < n; i++) {
		struct edit *e = &ed[i + 1];

		ret = edit_make(e, &ed[0].w, ed[0].order, &adv[i], why, sizeof(why));
		if (ret < 0)
			return ret;
		if (!ret)
			e->kernel = kernel_for(e, ed[0].kernel, why, sizeof(why));
		if (!e->kernel)
			snprintf(vr->row[i].why, sizeof(vr->row[i].why), "%s", why);
	}
	return 0;
}

/*
 * The baselines of one boot (the runs of @out whose @ix is 0) into vr->base[]
 * and the spread: the largest difference between two neighbouring baselines,
 * or between this boot's mean and another boot's.
 */
static int take_baselines(const struct jrun *out, const uint32_t *ix, size_t m, uint32_t nops,
			  struct dl_verify_result *vr)
{
	int64_t sum = 0, prev = 0, mean;
	uint32_t nb = 0;

	for (size_t p = 0; p < m; p++) {
		int64_t t;

		if (ix[p] || !base_ok(&out[p]))
			continue;	/* a change, or a baseline that failed: its neighbours stand in */
		vr->base[vr->nbase++] = *out[p].r;
		t = total_of(out[p].r, nops);
		if (nb++ && llabs(t - prev) > vr->spread_ns)
			vr->spread_ns = llabs(t - prev);
		prev = t;
		sum += t;
	}
	if (!nb) {
		for (size_t p = 0; p < m && !vr->msg[0]; p++)
			if (!ix[p])
				snprintf(vr->msg, sizeof(vr->msg), "no baseline run of the boot"
					 " completed: %.200s", out[p].why[0] ? out[p].why : "it failed");
		return -EINVAL;
	}
	mean = sum / nb;
	if (vr->nbase == nb)
		vr->boot_min_ns = vr->boot_max_ns = mean;
	vr->boot_min_ns = mean < vr->boot_min_ns ? mean : vr->boot_min_ns;
	vr->boot_max_ns = mean > vr->boot_max_ns ? mean : vr->boot_max_ns;
	if (vr->boot_max_ns - vr->boot_min_ns > vr->spread_ns)
		vr->spread_ns = vr->boot_max_ns - vr->boot_min_ns;
	return 0;
}

/*
 * The runs of one boot on @kv into @ix: on the baseline's kernel the
 * baseline, then each change followed by the baseline again; on another,
 * its changes only.  Returns how many.
 */
static size_t boot_plan(const struct edit *ed, uint32_t n, const char *kv, bool base, uint32_t *ix)
{
	size_t m = 0;

	if (base)
		ix[m++] = 0;
	for (uint32_t i = 1; i <= n; i++)
		if (ed[i].kernel && !strcmp(ed[i].kernel, kv)) {
			ix[m++] = i;
			if (base)
				ix[m++] = 0;
		}
	if (base && m == 1)
		ix[m++] = 0;	/* no change on this kernel: the baseline twice, for the spread */
	return m;
}

/* One round: a boot per kernel, the baseline's first; every run folded into its edit's sums. */
static int boot_round(struct edit *ed, uint32_t *ix, struct jrun *out, uint32_t n,
		      uint32_t nops, const struct dl_verify_opts *vo, struct dl_verify_result *vr)
{
	int ret = 0;

	for (int k = -1; k < 2 && !ret; k++) {
		const char *kv = k < 0 ? ed[0].kernel : kernels[k];
		size_t m;

		if (k >= 0 && !strcmp(kv, ed[0].kernel))
			continue;
		m = boot_plan(ed, n, kv, k < 0, ix);
		memset(out, 0, (2 * (size_t)n + 2) * sizeof(*out));
		if (m)
			ret = boot_one(ed, ix, m, &ed[n + 1], kv, vo, vr, out);
		if (ret && ret != -EINTR && ret != -ENOMEM && k >= 0) {
			/* another kernel's boot failed: its rows say so, the rest stand */
			for (size_t i = 0; i < m; i++)
				snprintf(out[i].why, sizeof(out[i].why), "%.255s", vr->msg);
			vr->msg[0] = '\0';
			ret = 0;
		} else if (ret > 0 || (ret && ret != -EINTR && ret != -ENOMEM)) {
			ret = -EINVAL;	/* the baseline's boot failed: nothing to measure */
		} else if (!ret && k < 0) {
			ret = take_baselines(out, ix, m, nops, vr);
		}
		for (size_t i = 0; i < m && !ret; i++) {
			if (k < 0 && ix[i] == 0) {
				if (base_ok(&out[i]))
					fold(&ed[0], &out[i], NULL, NULL, nops);
			}
			else if (k < 0)
				fold_paired(&ed[ix[i]], &out[i], &out[i - 1], &out[i + 1], nops);
			else
				fold(&ed[ix[i]], &out[i], NULL, NULL, nops);
		}
		for (size_t i = 0; i < m; i++)
			free(out[i].r);
	}
	return ret;
}

int dl_advise_verify(const struct dl_scenario *sc, const struct dl_advise_opts *o,
		     const struct dl_advise_result *res, const struct dl_advice *adv, uint32_t n,
		     const struct dl_verify_opts *vo, struct dl_verify_result *vr)
{
	uint32_t boots = vo->boots ? vo->boots : 1;
	/* the baseline, the changes, the warm-up */
	struct edit *ed = calloc((size_t)n + 2, sizeof(*ed));
	uint32_t *ix = malloc((2 * (size_t)n + 2) * sizeof(*ix));
	struct jrun *out = calloc(2 * (size_t)n + 2, sizeof(*out));
	int ret;

	memset(vr, 0, sizeof(*vr));
	vr->row = calloc((size_t)n + 1, sizeof(*vr->row));
	vr->base = calloc((size_t)boots * (n + 2), sizeof(*vr->base));
	if (!ed || !ix || !out || !vr->row || !vr->base) {
		ret = -ENOMEM;
		goto out;
	}
	vr->nrow = n;
	ret = make_edits(sc, o, res, adv, n, vo, ed, vr);
	if (!ret)
		ret = edit_settle(&ed[n + 1], &ed[0].w);
	ed[n + 1].order = ed[0].order;
	for (uint32_t b = 0; b < boots && !ret; b++)
		ret = boot_round(ed, ix, out, n, res->base.nops, vo, vr);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < res->base.nops && i < DL_MAX_OPS; i++)
		vr->base_ns[i] = ed[0].sum_ns[0][i] / ed[0].nrun[0];
	for (uint32_t i = 0; i < n; i++)
		if (ed[i + 1].kernel)
			score(&vr->row[i], &ed[i + 1], &adv[i], vr, res->base.nops);
out:
	for (uint32_t i = 0; ed && i < n + 2; i++)
		edit_free(&ed[i]);
	free(ed);
	free(ix);
	free(out);
	if (ret && ret != -EINTR && !vr->msg[0])
		snprintf(vr->msg, sizeof(vr->msg), "%s", strerror(-ret));
	return ret;
}

void dl_verify_free(struct dl_verify_result *vr)
{
	free(vr->base);
	vr->base = NULL;
	free(vr->row);
	vr->row = NULL;
	vr->nrow = 0;
}
