/*
 * advise.c - what-ifs by re-simulation.  One working copy of the scenario's
 * device, profile and link arrays is changed for a run and restored after
 * it, so a candidate costs one engine run and no allocation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/advise/advise.h"
#include "sim/engine/cost.h"
#include "sim/run/dl_run.h"

struct work {
	struct dl_scenario w;		/* shallow copy; dev, prof, link are ours */
	const struct dl_scenario *sc;
	struct dl_advise_result *res;
	const struct dl_advise_opts *o;
	struct dl_run_result run;
	uint32_t cap;
	uint8_t *async;			/* the baseline's async flags */
	uint32_t *kid_off, *kid;	/* children, CSR */
	uint32_t *stack;
	uint64_t planned;		/* engine runs planned (planned_runs()) */
};

struct dl_latency dl_latency_halved(struct dl_latency l, int64_t *buf)
{
	l.mean /= 2;
	l.sd /= 2;
	if (l.min > 0)
		l.min /= 2;
	if (l.max != INT64_MAX)
		l.max /= 2;
	if (l.dist == DL_DIST_EMPIRICAL) {
		for (uint32_t i = 0; i < l.nsamp; i++)
			buf[i] = l.samp[i] / 2;
		l.samp = buf;
	}
	return l;
}

static bool has_latency(const struct dl_profile *p)
{
	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		if (p->lat[k].dist != DL_DIST_NONE && (p->lat[k].mean > 0 || p->lat[k].max > 0 ||
						       p->lat[k].dist == DL_DIST_EMPIRICAL))
			return true;
	return false;
}

static bool stopped(const struct work *wk)
{
	return wk->o->stop && *wk->o->stop;
}

/* One DES run of the working copy through dl_run(), not logged. */
/* Every engine run of the advice, counted (resims) and shown (the progress hook). */
static int des_run(struct work *wk, const struct dl_engine_opts *eo, struct dl_run_result *r)
{
	struct dl_run_req q = { .sc = &wk->w, .backend = DL_BACKEND_DES, .eo = *eo };
	int64_t run_id;
	int log_err, ret = dl_run(&q, r, &run_id, &log_err);

	wk->res->resims++;
	if (wk->o->progress)
		wk->o->progress(wk->o->progress_ctx, wk->res->resims, wk->planned);
	return ret;
}

/*
 * Run the working copy under @order on @workers and record it as advice @a.
 * Return: 0, 1 when the run was stopped (not advice), or the engine's error.
 */
static int simulate(struct work *wk, struct dl_advice *a, enum dl_order order, uint32_t workers)
{
	struct dl_engine_opts eo = { .order = order, .workers = workers, .seed = wk->w.seed,
				     .stop = wk->o->stop, .cost_profile = wk->o->cost_profile,
				     .probe_module = wk->o->probe_module };
	struct dl_advise_result *res = wk->res;
	int ret;

	ret = des_run(wk, &eo, &wk->run);
	if (ret == -EOVERFLOW) {
		/*
		 * The change's run passed 2^62 ns of virtual time (as sync does
		 * on a generated graph with more paths than a real device tree:
		 * the walk before each deferred retry, cmd_run.c
		 * overflow_message()): a change that breaks the run, ranked
		 * last, not the end of the advice.
		 */
		a->status = "failed";
		a->overflowed = true;
		a->total_saved_ns = INT64_MIN / 4;
		return 0;
	}
	if (ret && ret != -EINTR)
		return ret;
	if (ret || stopped(wk) || !strcmp(wk->run.status, "interrupted")) {
		res->interrupted = true;
		return 1;
	}
	a->status = wk->run.status;
	a->total_saved_ns = 0;
	for (uint32_t i = 0; i < res->base.nops && i < DL_MAX_OPS; i++) {
		int64_t m = i < wk->run.nops ? wk->run.op[i].makespan_ns : 0;

		a->saved_ns[i] = res->base.op[i].makespan_ns - m;
		a->total_saved_ns += a->saved_ns[i];
	}
	if (strcmp(wk->run.status, "ok") && !strcmp(res->base.status, "ok"))
		a->total_saved_ns = INT64_MIN / 4;	/* a change that breaks the run ranks last */
	return 0;
}

static struct dl_advice *push(struct work *wk)
{
	struct dl_advise_result *res = wk->res;

	if (res->nadv == wk->cap) {
		uint32_t c = wk->cap ? wk->cap * 2 : 256;
		struct dl_advice *q = realloc(res->adv, c * sizeof(*q));

		if (!q)
			return NULL;
		res->adv = q;
		wk->cap = c;
	}
	memset(&res->adv[res->nadv], 0, sizeof(res->adv[0]));
	res->adv[res->nadv].dev = res->adv[res->nadv].dev2 = DL_SC_NONE;
	return &res->adv[res->nadv];
}

/* Simulate the async flags of the working copy as advice A (its fields set); restore them. */
static int try_async(struct work *wk, struct dl_advice *a)
{
	int ret = simulate(wk, a, wk->res->order, wk->res->workers);

	for (uint32_t d = 0; d < wk->sc->ndev; d++)
		wk->w.dev[d].async = wk->async[d];
	if (!ret)
		wk->res->nadv++;
	return ret;
}

static bool sync_dev(const struct work *wk, uint32_t d)
{
	return d != DL_SC_NONE && !wk->async[d] && !wk->sc->dev[d].hotplug;
}

static int cmp_u32(uint32_t x, uint32_t y)
{
	return (x > y) - (x < y);
}

/*
 * Most saved first; then a total order (two links between one pair, two
 * orders), so that the ranking does not depend on the order runs end in.
 */
static int cmp_advice(const void *x, const void *y)
{
	const struct dl_advice *a = x, *b = y;
	int c;

	if (a->total_saved_ns != b->total_saved_ns)
		return a->total_saved_ns > b->total_saved_ns ? -1 : 1;
	if ((c = cmp_u32(a->kind, b->kind)) || (c = cmp_u32(a->dev, b->dev)) ||
	    (c = cmp_u32(a->dev2, b->dev2)) || (c = cmp_u32(a->link, b->link)) ||
	    (c = cmp_u32(a->order, b->order)))
		return c;
	return cmp_u32(a->cpus, b->cpus);
}

/* Children in CSR form (a parent is listed before its children). */
static int build_kids(struct work *wk)
{
	const struct dl_scenario *sc = wk->sc;
	uint32_t *fill;

	wk->kid_off = calloc((size_t)sc->ndev + 2, sizeof(*wk->kid_off));
	wk->kid = malloc(((size_t)sc->ndev + 1) * sizeof(*wk->kid));
	wk->stack = malloc(((size_t)sc->ndev + 1) * sizeof(*wk->stack));
	fill = calloc((size_t)sc->ndev + 1, sizeof(*fill));
	if (!wk->kid_off || !wk->kid || !wk->stack || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t d = 0; d < sc->ndev; d++)
		if (sc->dev[d].parent != DL_SC_NONE)
			wk->kid_off[sc->dev[d].parent + 1]++;
	for (uint32_t d = 0; d < sc->ndev; d++)
		wk->kid_off[d + 1] += wk->kid_off[d];
	for (uint32_t d = 0; d < sc->ndev; d++) {
		uint32_t p = sc->dev[d].parent;

		if (p != DL_SC_NONE)
			wk->kid[wk->kid_off[p] + fill[p]++] = d;
	}
	free(fill);
	return 0;
}

/* Set D and its sync descendants async in the working copy; their number. */
static uint32_t set_subtree(struct work *wk, uint32_t d)
{
	uint32_t n = 0, top = 0;

	wk->stack[top++] = d;
	while (top) {
		uint32_t x = wk->stack[--top];

		if (!sync_dev(wk, x))
			continue;
		wk->w.dev[x].async = 1;
		n++;
		for (uint32_t j = wk->kid_off[x]; j < wk->kid_off[x + 1]; j++)
			wk->stack[top++] = wk->kid[j];
	}
	return n;
}

/* Each sync device with a latency made async (at most LIMIT): what each saves into SINGLE. */
static int async_singles(struct work *wk, uint32_t limit, int64_t *single)
{
	const struct dl_scenario *sc = wk->sc;
	struct dl_advice *a;
	uint32_t n = 0;
	int ret = 0;

	for (uint32_t d = 0; d < sc->ndev && n < limit && !ret && !stopped(wk); d++) {
		if (!sync_dev(wk, d) || !has_latency(&sc->prof[sc->dev[d].profile]))
			continue;
		if (!(a = push(wk)))
			return -ENOMEM;
		a->kind = DL_ADV_ASYNC;
		a->dev = d;
		a->n = 1;
		wk->w.dev[d].async = 1;
		ret = try_async(wk, a);
		if (!ret)
			single[d] = a->total_saved_ns;
		n++;
	}
	return ret;
}

/* D and its parent P made async together; *SAVES: that saves more than HELP. */
static int try_pair(struct work *wk, uint32_t d, uint32_t p, int64_t help, bool *saves)
{
	struct dl_advice *a = push(wk);
	int ret;

	if (!a)
		return -ENOMEM;
	a->kind = DL_ADV_ASYNC_PAIR;
	a->dev = d;
	a->dev2 = p;
	a->n = 2;
	wk->w.dev[d].async = wk->w.dev[p].async = 1;
	ret = try_async(wk, a);
	*saves = a->total_saved_ns > help;
	return ret;
}

/* D and all its sync ancestors made async together, when they are three or more and
 * ROOM says a chain may still be tried (*TRIED then). */
static int try_chain(struct work *wk, uint32_t d, bool room, bool *tried)
{
	const struct dl_scenario *sc = wk->sc;
	uint32_t len = 1, top = d;
	struct dl_advice *a;

	*tried = false;
	wk->w.dev[d].async = 1;
	while (sync_dev(wk, sc->dev[top].parent)) {
		top = sc->dev[top].parent;
		wk->w.dev[top].async = 1;
		len++;
	}
	if (len < 3 || !room) {
		for (uint32_t x = 0; x < sc->ndev; x++)
			wk->w.dev[x].async = wk->async[x];
		return 0;
	}
	if (!(a = push(wk)))
		return -ENOMEM;
	a->kind = DL_ADV_ASYNC_CHAIN;
	a->dev = d;
	a->dev2 = top;
	a->n = len;
	*tried = true;
	return try_async(wk, a);
}

/*
 * Pairs and chains, where no single change helps (neither the device nor its
 * parent saves HELP alone): the device with its parent (at most LIMIT; PAIRED
 * marks them), and where the pair does not help either, with the chain of its
 * sync ancestors (at most LIMIT).
 */
static int async_pairs_chains(struct work *wk, uint32_t limit, int64_t help, const int64_t *single,
			      uint8_t *paired)
{
	const struct dl_scenario *sc = wk->sc;
	uint32_t np = 0, nc = 0;
	int ret = 0;

	for (uint32_t d = 0; d < sc->ndev && !ret && !stopped(wk); d++) {
		uint32_t p = sc->dev[d].parent;
		bool saves = false, tried;

		if (!sync_dev(wk, d) || !sync_dev(wk, p) || single[d] > help || single[p] > help)
			continue;
		if (np < limit) {
			if ((ret = try_pair(wk, d, p, help, &saves)))
				break;
			paired[d] = 1;
			np++;
			if (saves)
				continue;
		}
		ret = try_chain(wk, d, nc < limit, &tried);
		nc += tried;
	}
	return ret;
}

/* Each sync device with sync children, with its sync descendants (at most LIMIT); not
 * one whose one sync child has no children and was PAIRED with it. */
static int async_subtrees(struct work *wk, uint32_t limit, const uint8_t *paired)
{
	const struct dl_scenario *sc = wk->sc;
	struct dl_advice *a;
	uint32_t n = 0;
	int ret = 0;

	for (uint32_t d = 0; d < sc->ndev && n < limit && !ret && !stopped(wk); d++) {
		uint32_t kids = 0, kid = DL_SC_NONE;

		for (uint32_t j = wk->kid_off[d]; j < wk->kid_off[d + 1]; j++)
			if (sync_dev(wk, wk->kid[j])) {
				kids++;
				kid = wk->kid[j];
			}
		/* (one sync child with none of its own: the pair, if it was tried) */
		if (!sync_dev(wk, d) || !kids ||
		    (kids == 1 && paired[kid] && wk->kid_off[kid] == wk->kid_off[kid + 1]))
			continue;
		if (!(a = push(wk)))
			return -ENOMEM;
		a->kind = DL_ADV_ASYNC_SUBTREE;
		a->dev = d;
		a->n = set_subtree(wk, d);
		ret = try_async(wk, a);
		n++;
	}
	return ret;
}

/* Every device async (a hotplugged one keeps its flag), if any is sync. */
static int async_every(struct work *wk)
{
	const struct dl_scenario *sc = wk->sc;
	struct dl_advice *a;
	uint32_t n = 0;

	for (uint32_t d = 0; d < sc->ndev; d++)
		n += sync_dev(wk, d);
	if (!n || stopped(wk))
		return 0;
	if (!(a = push(wk)))
		return -ENOMEM;
	a->kind = DL_ADV_ASYNC_ALL;
	a->n = n;
	for (uint32_t d = 0; d < sc->ndev; d++)
		wk->w.dev[d].async = !sc->dev[d].hotplug || wk->async[d];
	return try_async(wk, a);
}

/*
 * The candidates that make devices async: each sync device with a latency;
 * then, where neither a device nor its parent alone saves HELP, the pair,
 * and the chain of the device and its sync ancestors; each sync device
 * with sync children, with its subtree; every device.
 */
static int async_changes(struct work *wk, uint32_t limit, int64_t help)
{
	const struct dl_scenario *sc = wk->sc;
	int64_t *single = calloc((size_t)sc->ndev + 1, sizeof(*single));
	uint8_t *paired = calloc((size_t)sc->ndev + 1, 1);	/* tried with its parent */
	int ret = -ENOMEM;

	if (single && paired)
		ret = async_singles(wk, limit, single);
	if (!ret)
		ret = async_pairs_chains(wk, limit, help, single, paired);
	if (!ret)
		ret = async_subtrees(wk, limit, paired);
	if (!ret)
		ret = async_every(wk);
	free(single);
	free(paired);
	return ret < 0 ? ret : 0;
}

static int halve_changes(struct work *wk, uint32_t limit, int64_t *samp, uint32_t maxs)
{
	const struct dl_scenario *sc = wk->sc;
	uint32_t n = 0;
	int ret = 0;

	for (uint32_t d = 0; d < sc->ndev && n < limit && !stopped(wk); d++) {
		const struct dl_profile *p = &sc->prof[sc->dev[d].profile];
		struct dl_advice *a;

		if (!has_latency(p))
			continue;
		if (!(a = push(wk)))
			return -ENOMEM;
		for (unsigned k = 0; k < DL_LAT_COUNT; k++)
			wk->w.prof[sc->nprof].lat[k] = dl_latency_halved(p->lat[k], samp + (size_t)k * maxs);
		wk->w.prof[sc->nprof].cpu_ppm = p->cpu_ppm;
		wk->w.nprof = sc->nprof + 1;
		wk->w.dev[d].profile = sc->nprof;
		a->kind = DL_ADV_HALVE;
		a->dev = d;
		ret = simulate(wk, a, wk->res->order, wk->res->workers);
		wk->w.dev[d].profile = sc->dev[d].profile;
		wk->w.nprof = sc->nprof;
		if (ret)
			return ret < 0 ? ret : 0;
		wk->res->nadv++;
		n++;
	}
	return 0;
}

/* One whole-run change under ORDER on WORKERS. */
static int run_change(struct work *wk, uint8_t kind, enum dl_order order, uint32_t workers,
		      bool research)
{
	struct dl_advice *a = push(wk);
	int ret;

	if (!a)
		return -ENOMEM;
	a->kind = kind;
	a->order = order;
	a->cpus = workers;
	a->research = research;
	ret = simulate(wk, a, order, workers);
	if (!ret)
		wk->res->nadv++;
	return ret < 0 ? ret : 0;
}

static int link_changes(struct work *wk, uint32_t limit)
{
	const struct dl_scenario *sc = wk->sc;
	uint32_t n = 0;
	int ret;

	for (uint32_t l = 0; l < sc->nlink && n < limit && !stopped(wk); l++) {
		struct dl_advice *a;

		if (!(a = push(wk)))
			return -ENOMEM;
		a->kind = DL_ADV_DROP_LINK;
		a->unsafe = true;
		a->link = l;
		a->dev = sc->link[l].consumer;
		a->dev2 = sc->link[l].supplier;
		/* the links after it move up one (the order links are added in matters) */
		memmove(&wk->w.link[l], &sc->link[l + 1], (sc->nlink - l - 1) * sizeof(*sc->link));
		wk->w.nlink = sc->nlink - 1;
		wk->w.nlink_generated = sc->nlink_generated - (l < sc->nlink_generated);
		ret = simulate(wk, a, wk->res->order, wk->res->workers);
		memcpy(&wk->w.link[l], &sc->link[l], (sc->nlink - l) * sizeof(*sc->link));
		wk->w.nlink = sc->nlink;
		wk->w.nlink_generated = sc->nlink_generated;
		if (ret)
			return ret < 0 ? ret : 0;
		wk->res->nadv++;
		n++;
	}
	return 0;
}

/*
 * The working copy: the scenario's device, profile and link arrays, the
 * baseline's async flags and the children lists; *samp a buffer for the
 * most latency samples a profile has (*maxs).  0 or -ENOMEM.
 */
static int work_init(struct work *wk, int64_t **samp, uint32_t *maxs)
{
	const struct dl_scenario *sc = wk->sc;
	const struct dl_advise_opts *o = wk->o;

	wk->w = *sc;
	wk->w.dev = malloc(((size_t)sc->ndev + 1) * sizeof(*wk->w.dev));
	wk->w.prof = malloc(((size_t)sc->nprof + 1) * sizeof(*wk->w.prof));
	wk->w.link = malloc(((size_t)sc->nlink + 1) * sizeof(*wk->w.link));
	wk->async = malloc((size_t)sc->ndev + 1);
	for (uint32_t p = 0; p < sc->nprof; p++)
		for (unsigned k = 0; k < DL_LAT_COUNT; k++)
			if (sc->prof[p].lat[k].nsamp > *maxs)
				*maxs = sc->prof[p].lat[k].nsamp;
	*samp = malloc(((size_t)*maxs * DL_LAT_COUNT + 1) * sizeof(**samp));
	if (!wk->w.dev || !wk->w.prof || !wk->w.link || !wk->async || !*samp || build_kids(wk))
		return -ENOMEM;
	/* (an empty array may be NULL: memcpy must not see it) */
	if (sc->ndev)
		memcpy(wk->w.dev, sc->dev, sc->ndev * sizeof(*sc->dev));
	if (sc->nprof)
		memcpy(wk->w.prof, sc->prof, sc->nprof * sizeof(*sc->prof));
	if (sc->nlink)
		memcpy(wk->w.link, sc->link, sc->nlink * sizeof(*sc->link));
	for (uint32_t d = 0; d < sc->ndev; d++) {
		if (o->all_sync || wk->res->order != o->order)
			wk->w.dev[d].async = 0;
		wk->async[d] = wk->w.dev[d].async;
	}
	return 0;
}

static void work_free(struct work *wk)
{
	free(wk->w.dev);
	free(wk->w.prof);
	free(wk->w.link);
	free(wk->async);
	free(wk->kid_off);
	free(wk->kid);
	free(wk->stack);
}

/*
 * The run every change is measured against.  Returns a negative error, or
 * 0 with res->interrupted set when it did not complete (nothing to rank).
 */
static int run_baseline(struct work *wk)
{
	struct dl_advise_result *res = wk->res;
	struct dl_engine_opts eo = { .seed = wk->sc->seed, .stop = wk->o->stop,
				     .order = res->order, .workers = res->workers,
				     .cost_profile = wk->o->cost_profile,
				     .probe_module = wk->o->probe_module };
	int ret = des_run(wk, &eo, &res->base);   /* the first: resims 1 */
	if (ret && ret != -EINTR)
		return ret;
	if (ret || stopped(wk) || !strcmp(res->base.status, "interrupted"))
		res->interrupted = true;	/* no baseline: no change to rank */
	return 0;
}

/* --research: orders no kernel has, and twice the CPUs. */
static int research_changes(struct work *wk)
{
	struct dl_advise_result *res = wk->res;
	int ret;

	/* orders no kernel has (naive ignores the links: no option) */
	for (int i = 0; i < DL_ORDER_COUNT; i++)
		if (!stopped(wk) && dl_order_research(dl_order_policy((enum dl_order)i)) &&
		    (enum dl_order)i != res->order &&
		    (ret = run_change(wk, DL_ADV_ORDER, (enum dl_order)i, res->workers, true)))
			return ret;
	if (!stopped(wk))
		return run_change(wk, DL_ADV_CPUS, res->order, res->workers * 2, true);
	return 0;
}

static uint64_t at_most(uint64_t n, uint32_t limit)
{
	return n < limit ? n : limit;
}

/*
 * The engine runs try_changes() will make, the baseline's included, for the
 * progress line: each kind's candidates as its loop counts them, at most
 * @limit each; not the pairs and chains, which depend on what the singles
 * saved, and a subtree that async_subtrees() skips as a pair tried (a few
 * too many).  Every link is one: at 28,000 devices this is some 126,000 runs.
 */
static uint64_t planned_runs(const struct work *wk, uint32_t limit)
{
	const struct dl_scenario *sc = wk->sc;
	uint64_t singles = 0, subtrees = 0, halves = 0, nsync = 0, n = 1;
	enum dl_order next;

	for (uint32_t d = 0; d < sc->ndev; d++) {
		bool lat = has_latency(&sc->prof[sc->dev[d].profile]), kids = false;

		for (uint32_t j = wk->kid_off[d]; j < wk->kid_off[d + 1] && !kids; j++)
			kids = sync_dev(wk, wk->kid[j]);
		nsync += sync_dev(wk, d);
		singles += sync_dev(wk, d) && lat;
		subtrees += sync_dev(wk, d) && kids;
		halves += lat;
	}
	if (dl_order_policy(wk->res->order)->use_async_flag)
		n += at_most(singles, limit) + at_most(subtrees, limit) + (nsync > 0);
	n += at_most(halves, limit) + !dl_order_successor(wk->res->order, &next) +
	     at_most(sc->nlink, limit);
	for (int i = 0; wk->o->research && i < DL_ORDER_COUNT; i++)
		n += dl_order_research(dl_order_policy((enum dl_order)i)) &&
		     (enum dl_order)i != wk->res->order;
	return n + wk->o->research;
}

/* Every kind of change, one after the other, until @limit each or a stop. */
static int try_changes(struct work *wk, uint32_t limit, int64_t *samp, uint32_t maxs)
{
	struct dl_advise_result *res = wk->res;
	int64_t help = 0;
	enum dl_order next;
	int ret;

	/* a pair or chain is tried where no single change saves a hundredth of the run */
	for (uint32_t i = 0; i < res->base.nops; i++)
		help += res->base.op[i].makespan_ns;
	help /= 100;

	if (dl_order_policy(res->order)->use_async_flag && (ret = async_changes(wk, limit, help)))
		return ret;
	if (!stopped(wk) && (ret = halve_changes(wk, limit, samp, maxs)))
		return ret;
	if (!stopped(wk) && !dl_order_successor(res->order, &next) &&
	    (ret = run_change(wk, DL_ADV_UPGRADE, next, res->workers, false)))
		return ret;
	if (!stopped(wk) && (ret = link_changes(wk, limit)))
		return ret;
	if (wk->o->research)
		return research_changes(wk);
	return 0;
}

int dl_advise(const struct dl_scenario *sc, const struct dl_advise_opts *o,
	      struct dl_advise_result *res)
{
	struct work wk = { .sc = sc, .res = res, .o = o };
	uint32_t maxs = 0, limit = o->max_candidates ? o->max_candidates : UINT32_MAX;
	int64_t *samp = NULL, t0 = dl_mono_ns();
	int ret;

	memset(res, 0, sizeof(*res));
	/* sync: kernel-async with every device sync runs the same, and takes async flags */
	res->order = dl_order_async_form(o->order);
	res->workers = dl_engine_workers(sc, res->order, o->workers);
	ret = work_init(&wk, &samp, &maxs);
	if (!ret) {
		wk.planned = planned_runs(&wk, limit);
		ret = run_baseline(&wk);
	}
	if (!ret && !res->interrupted)
		ret = try_changes(&wk, limit, samp, maxs);
	if (!ret) {
		if (stopped(&wk))
			res->interrupted = true;
		if (res->nadv)	/* qsort() must not see a NULL array */
			qsort(res->adv, res->nadv, sizeof(*res->adv), cmp_advice);
	}
	res->wall_ns = dl_mono_ns() - t0;
	work_free(&wk);
	free(samp);
	if (ret) {
		free(res->adv);
		res->adv = NULL;
		res->nadv = 0;
	}
	return ret;
}

/* "a, b, c": D and its N - 1 ancestors. */
static void put_chain(const struct dl_scenario *sc, uint32_t d, uint32_t n, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < n && d != DL_SC_NONE && at < len; i++, d = sc->dev[d].parent) {
		int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", dl_sc_name(sc, d));

		if (w < 0)
			break;
		at += (size_t)w;
	}
}

void dl_advice_describe(const struct dl_scenario *sc, const struct dl_advice *a, char *buf,
			size_t len)
{
	switch (a->kind) {
	case DL_ADV_ASYNC:
		snprintf(buf, len, "make %s async", dl_sc_name(sc, a->dev));
		break;
	case DL_ADV_ASYNC_PAIR:
		snprintf(buf, len, "make %s and its parent %s async", dl_sc_name(sc, a->dev),
			 dl_sc_name(sc, a->dev2));
		break;
	case DL_ADV_ASYNC_CHAIN: {
		int w = snprintf(buf, len, "make the chain ");

		if (w > 0 && (size_t)w < len)
			put_chain(sc, a->dev, a->n, buf + w, len - (size_t)w);
		w = (int)strlen(buf);
		snprintf(buf + w, len - (size_t)w, " async");
		break;
	}
	case DL_ADV_ASYNC_SUBTREE:
		snprintf(buf, len, "make %s and its %u sync descendant%s async",
			 dl_sc_name(sc, a->dev), a->n - 1, a->n == 2 ? "" : "s");
		break;
	case DL_ADV_ASYNC_ALL:
		snprintf(buf, len, "make every device async (%u sync now)", a->n);
		break;
	case DL_ADV_HALVE:
		snprintf(buf, len, "halve %s's latencies", dl_sc_name(sc, a->dev));
		break;
	case DL_ADV_UPGRADE:
		snprintf(buf, len, "upgrade the kernel to 6.16+ (kernel-async -> kernel-async-v2)");
		break;
	case DL_ADV_ORDER:
		snprintf(buf, len, "order %s (research: no kernel has it)", dl_order_name(a->order));
		break;
	case DL_ADV_CPUS:
		snprintf(buf, len, "%u CPUs (research: another machine)", a->cpus);
		break;
	case DL_ADV_DROP_LINK:
		snprintf(buf, len, "drop link %s -> %s (UNSAFE)", dl_sc_name(sc, a->dev2),
			 dl_sc_name(sc, a->dev));
		break;
	default:
		snprintf(buf, len, "?");
	}
}
