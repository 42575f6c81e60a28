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
	struct dl_run_result *r;	/* this boot's run */
	int rc;			/* dl_run()'s, or -ENODATA: the guest never reached it */
	char why[256];		/* rc < 0: what went wrong */
	/* over the boots: the runs that converted */
	int64_t sum_ns[DL_MAX_OPS];
	uint32_t nrun;
	bool failed;		/* one of them failed (why[] kept from it) */
	char fail_why[256];
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
	free(e->r);
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

/*
 * Boot every edit on @kernel at once (@ix: their indices in @ed) and convert
 * each run's dump through dl_run().  Return 0 (a run the guest never reached
 * has rc -ENODATA), -EINTR, -ENOMEM, or the boot's error with @vr->msg.
 */
static int boot_one(struct edit *ed, const uint32_t *ix, size_t n, const struct edit *warm,
		    const char *kernel, const struct dl_verify_opts *vo, struct dl_verify_result *vr)
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
		struct edit *e = &ed[ix[i]];
		struct dl_kernel_info ki = { .msg = "" };
		struct dl_run_req q = {
			.sc = &e->w, .backend = DL_BACKEND_KERNEL,
			.eo = { .order = e->order, .seed = e->w.seed, .stop = vo->stop },
			.dump = run[i].dump, .dump_len = run[i].len, .kernel = kernel,
			.wall_ns = wall / (int64_t)(n + 1), .ki = &ki };
		int64_t run_id;
		int log_err;

		if (!run[i].dump) {
			e->rc = -ENODATA;
			snprintf(e->why, sizeof(e->why), "the guest stopped before this run (%.200s)",
				 vr->msg);
			continue;
		}
		if (!(e->r = malloc(sizeof(*e->r)))) {
			rc = -ENOMEM;
			break;
		}
		e->rc = dl_run(&q, e->r, &run_id, &log_err);
		if (e->rc < 0 && e->rc != -EPIPE)
			snprintf(e->why, sizeof(e->why), "the guest's dump does not convert: %.200s",
				 ki.msg);
		else if (e->rc)		/* -EPIPE: where the dump stops; 1: an injected fault */
			snprintf(e->why, sizeof(e->why), "%.200s", ki.msg[0] ? ki.msg :
				 e->rc == 1 ? "an injected fault failed an op" : "");
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

/* Fold this boot's run of @e into its sums; free it. */
static void fold(struct edit *e, uint32_t nops)
{
	if (e->r && (e->rc >= 0 || e->rc == -EPIPE)) {
		for (uint32_t i = 0; i < nops && i < DL_MAX_OPS; i++)
			e->sum_ns[i] += i < e->r->nops ? e->r->op[i].makespan_ns : 0;
		e->nrun++;
		if (strcmp(e->r->status, "ok") && !e->failed) {
			e->failed = true;
			snprintf(e->fail_why, sizeof(e->fail_why), "the kernel's run %s%s%.200s",
				 e->r->status, e->why[0] ? ": " : "", e->why);
		}
	} else if (!e->fail_why[0]) {
		snprintf(e->fail_why, sizeof(e->fail_why), "%s", e->why[0] ? e->why : "not run");
	}
	free(e->r);
	e->r = NULL;
	e->rc = 0;
	e->why[0] = '\0';
}

/* Row @row from edit @e: the kernel's saving against the baselines, the flag. */
static void score(struct dl_verify_row *row, const struct edit *e, const struct dl_advice *a,
		  const struct dl_verify_result *vr, uint32_t nops)
{
	int64_t tol, off;

	snprintf(row->kernel, sizeof(row->kernel), "%s", e->kernel);
	if (!e->nrun) {
		snprintf(row->why, sizeof(row->why), "%s", e->fail_why);
		return;
	}
	row->ran = true;
	for (uint32_t i = 0; i < nops && i < DL_MAX_OPS; i++) {
		row->saved_ns[i] = vr->base_ns[i] - e->sum_ns[i] / e->nrun;
		row->total_saved_ns += row->saved_ns[i];
	}
	if (e->failed || e->fail_why[0])
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
		       !e->failed != !strcmp(a->status ? a->status : "?", "ok");
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
 * The two baselines of this boot (@base, @last) into vr->base[] and the spread:
 * their difference, and how far this boot's mean is from the other boots'.
 */
static int take_baselines(const struct edit *base, const struct edit *last, uint32_t nops,
			  struct dl_verify_result *vr)
{
	int64_t t[2], mean;

	for (int b = 0; b < 2; b++) {
		const struct edit *e = b ? last : base;

		if (!e->r || (e->rc < 0 && e->rc != -EPIPE)) {
			snprintf(vr->msg, sizeof(vr->msg), "the kernel's %s baseline run: %.200s",
				 b ? "second" : "first", e->why);
			return -EINVAL;
		}
		vr->base[vr->nbase++] = *e->r;
		t[b] = total_of(e->r, nops);
	}
	mean = (t[0] + t[1]) / 2;
	if (llabs(t[0] - t[1]) > vr->spread_ns)
		vr->spread_ns = llabs(t[0] - t[1]);
	if (vr->nbase == 2)
		vr->boot_min_ns = vr->boot_max_ns = mean;
	vr->boot_min_ns = mean < vr->boot_min_ns ? mean : vr->boot_min_ns;
	vr->boot_max_ns = mean > vr->boot_max_ns ? mean : vr->boot_max_ns;
	if (vr->boot_max_ns - vr->boot_min_ns > vr->spread_ns)
		vr->spread_ns = vr->boot_max_ns - vr->boot_min_ns;
	return 0;
}

/*
 * One round: a boot per kernel, the baseline's first (its runs between its
 * two baselines), every run folded into its edit's sums.
 */
static int boot_round(struct edit *ed, uint32_t *ix, uint32_t n, uint32_t nops,
		      const struct dl_verify_opts *vo, struct dl_verify_result *vr)
{
	int ret = 0;

	for (int k = -1; k < 2 && !ret; k++) {
		const char *kv = k < 0 ? ed[0].kernel : kernels[k];
		size_t m = 0;

		if (k >= 0 && !strcmp(kv, ed[0].kernel))
			continue;
		for (uint32_t i = 0; i < n + 2; i++)
			if (ed[i].kernel && !strcmp(ed[i].kernel, kv))
				ix[m++] = i;
		if (m)
			ret = boot_one(ed, ix, m, &ed[n + 2], kv, vo, vr);
		if (ret && ret != -EINTR && ret != -ENOMEM && k >= 0) {
			/* another kernel's boot failed: its rows say so, the rest stand */
			for (size_t i = 0; i < m; i++)
				snprintf(ed[ix[i]].why, sizeof(ed[ix[i]].why), "%.255s", vr->msg);
			vr->msg[0] = '\0';
			ret = 0;
		} else if (ret > 0 || (ret && ret != -EINTR && ret != -ENOMEM)) {
			ret = -EINVAL;	/* the baseline's boot failed: nothing to measure */
		} else if (!ret && k < 0) {
			ret = take_baselines(&ed[0], &ed[n + 1], nops, vr);
		}
	}
	for (uint32_t i = 0; i < n + 2; i++)
		fold(&ed[i], nops);
	return ret;
}

int dl_advise_verify(const struct dl_scenario *sc, const struct dl_advise_opts *o,
		     const struct dl_advise_result *res, const struct dl_advice *adv, uint32_t n,
		     const struct dl_verify_opts *vo, struct dl_verify_result *vr)
{
	uint32_t boots = vo->boots ? vo->boots : 1;
	/* the baseline, the changes, the baseline again, the warm-up */
	struct edit *ed = calloc((size_t)n + 3, sizeof(*ed));
	uint32_t *ix = malloc(((size_t)n + 2) * sizeof(*ix));
	int ret;

	memset(vr, 0, sizeof(*vr));
	vr->row = calloc((size_t)n + 1, sizeof(*vr->row));
	vr->base = calloc((size_t)boots * 2, sizeof(*vr->base));
	if (!ed || !ix || !vr->row || !vr->base) {
		ret = -ENOMEM;
		goto out;
	}
	vr->nrow = n;
	ret = make_edits(sc, o, res, adv, n, vo, ed, vr);
	if (!ret)
		ret = edit_copy(&ed[n + 1], &ed[0].w);
	if (!ret)
		ret = edit_settle(&ed[n + 2], &ed[0].w);
	ed[n + 1].order = ed[n + 2].order = ed[0].order;
	ed[n + 1].kernel = ed[0].kernel;
	for (uint32_t b = 0; b < boots && !ret; b++)
		ret = boot_round(ed, ix, n, res->base.nops, vo, vr);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < res->base.nops && i < DL_MAX_OPS; i++)
		vr->base_ns[i] = (ed[0].sum_ns[i] + ed[n + 1].sum_ns[i]) / (ed[0].nrun + ed[n + 1].nrun);
	for (uint32_t i = 0; i < n; i++)
		if (ed[i + 1].kernel)
			score(&vr->row[i], &ed[i + 1], &adv[i], vr, res->base.nops);
out:
	for (uint32_t i = 0; ed && i < n + 3; i++)
		edit_free(&ed[i]);
	free(ed);
	free(ix);
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
