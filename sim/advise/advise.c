/*
 * advise.c - what-ifs by re-simulation.  A candidate change is a record
 * (struct dl_advice: its kind and devices) made in a working copy of the
 * scenario's device, profile and link arrays for one engine run and undone
 * after it, so a candidate costs one run and no allocation.  A stage's
 * candidates run on o->jobs threads, a working copy each; what one stage
 * saved decides the next one's candidates (singles, then pairs, then
 * chains, then the rest), so the advice is the same on any number.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/advise/advise.h"
#include "sim/engine/cost.h"
#include "sim/run/dl_run.h"

/* What every run of the advice reads, and the stage under way. */
struct advisor {
	const struct dl_scenario *sc;
	const struct dl_advise_opts *o;
	struct dl_advise_result *res;	/* adv[next..end): the stage's candidates */
	uint32_t cap;			/* room in res->adv */
	uint8_t *async;			/* the baseline's async flags */
	uint32_t *kid_off, *kid;	/* children, CSR */
	uint32_t maxs;			/* the most latency samples a profile has */
	uint64_t planned;		/* engine runs planned (planned_runs()) */
	uint32_t jobs;			/* working copies: threads at most */
	atomic_uint next;		/* the stage's next candidate not taken */
	uint32_t end;
	atomic_int halt;		/* a run's error, or 1 (a run stopped): the stage ends */
	pthread_mutex_t lock;		/* res->resims and the progress hook */
};

/* One thread's working copy. */
struct work {
	struct dl_scenario w;		/* shallow copy; dev, prof, link are ours */
	struct advisor *ad;
	struct dl_run_result run;
	int64_t *samp;			/* a halved profile's samples: maxs per latency */
	uint32_t *stack;		/* subtree() */
	pthread_t tid;
};

/* paired[d]: d not tried with its parent (add_pairs()), tried, tried and saved a hundredth */
enum { PAIR_NONE, PAIR_TRIED, PAIR_SAVED };

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


static bool stopped(const struct advisor *ad)
{
	return ad->o->stop && *ad->o->stop;
}

static struct dl_engine_opts engine_opts(const struct advisor *ad, enum dl_order order,
					 uint32_t workers)
{
	return (struct dl_engine_opts){ .order = order, .workers = workers, .seed = ad->sc->seed,
					.stop = ad->o->stop, .cost_profile = ad->o->cost_profile,
					.probe_module = ad->o->probe_module };
}

/*
 * One DES run of @wk's copy through dl_run(), not logged.  Every engine run
 * of the advice is counted (resims) and shown (the progress hook), one
 * thread at a time.
 */
static int des_run(struct work *wk, const struct dl_engine_opts *eo, struct dl_run_result *r)
{
	struct advisor *ad = wk->ad;
	struct dl_run_req q = { .sc = &wk->w, .backend = DL_BACKEND_DES, .eo = *eo };
	int64_t run_id;
	int log_err, ret = dl_run(&q, r, &run_id, &log_err);

	pthread_mutex_lock(&ad->lock);
	ad->res->resims++;
	if (ad->o->progress)
		ad->o->progress(ad->o->progress_ctx, ad->res->resims, ad->planned);
	pthread_mutex_unlock(&ad->lock);
	return ret;
}

/*
 * Run @wk's copy under @order on @workers into advice @a (its status and
 * savings).  Return: 0, 1 when the run was stopped (not advice), or the
 * engine's error.
 */
static int simulate(struct work *wk, struct dl_advice *a, enum dl_order order, uint32_t workers)
{
	const struct dl_run_result *base = &wk->ad->res->base;
	struct dl_engine_opts eo = engine_opts(wk->ad, order, workers);
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
	if (ret || stopped(wk->ad) || !strcmp(wk->run.status, "interrupted"))
		return 1;
	a->status = wk->run.status;
	a->total_saved_ns = 0;
	for (uint32_t i = 0; i < base->nops && i < DL_MAX_OPS; i++) {
		int64_t m = i < wk->run.nops ? wk->run.op[i].makespan_ns : 0;

		a->saved_ns[i] = base->op[i].makespan_ns - m;
		a->total_saved_ns += a->saved_ns[i];
	}
	if (strcmp(wk->run.status, "ok") && !strcmp(base->status, "ok"))
		a->total_saved_ns = INT64_MIN / 4;	/* a change that breaks the run ranks last */
	return 0;
}

/* A candidate of @kind on @dev appended to res->adv, for run_stage(); NULL: no memory. */
static struct dl_advice *push(struct advisor *ad, uint8_t kind, uint32_t dev)
{
	struct dl_advise_result *res = ad->res;
	struct dl_advice *a;

	if (res->nadv == ad->cap) {
		uint32_t c = ad->cap ? ad->cap * 2 : 256;
		struct dl_advice *q = realloc(res->adv, c * sizeof(*q));

		if (!q)
			return NULL;
		res->adv = q;
		ad->cap = c;
	}
	a = &res->adv[res->nadv++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->dev = dev;
	a->dev2 = DL_SC_NONE;
	return a;
}

static bool sync_dev(const struct advisor *ad, uint32_t d)
{
	return d != DL_SC_NONE && !ad->async[d] && !ad->sc->dev[d].hotplug;
}

static int cmp_u32(uint32_t x, uint32_t y)
{
	return (x > y) - (x < y);
}

/*
 * Most saved first; then a total order (two links between one pair, two
 * orders), so that the ranking does not depend on the order runs end in.
 */
int dl_advice_cmp(const void *x, const void *y)
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
static int build_kids(struct advisor *ad)
{
	const struct dl_scenario *sc = ad->sc;
	uint32_t *fill;

	ad->kid_off = calloc((size_t)sc->ndev + 2, sizeof(*ad->kid_off));
	ad->kid = malloc(((size_t)sc->ndev + 1) * sizeof(*ad->kid));
	fill = calloc((size_t)sc->ndev + 1, sizeof(*fill));
	if (!ad->kid_off || !ad->kid || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t d = 0; d < sc->ndev; d++)
		if (sc->dev[d].parent != DL_SC_NONE)
			ad->kid_off[sc->dev[d].parent + 1]++;
	for (uint32_t d = 0; d < sc->ndev; d++)
		ad->kid_off[d + 1] += ad->kid_off[d];
	for (uint32_t d = 0; d < sc->ndev; d++) {
		uint32_t p = sc->dev[d].parent;

		if (p != DL_SC_NONE)
			ad->kid[ad->kid_off[p] + fill[p]++] = d;
	}
	free(fill);
	return 0;
}

/* D and its sync descendants: their number; made async in @dev too unless it is NULL. */
static uint32_t subtree(const struct advisor *ad, uint32_t *stack, uint32_t d,
			struct dl_sc_device *dev)
{
	uint32_t n = 0, top = 0;

	stack[top++] = d;
	while (top) {
		uint32_t x = stack[--top];

		if (!sync_dev(ad, x))
			continue;
		if (dev)
			dev[x].async = 1;
		n++;
		for (uint32_t j = ad->kid_off[x]; j < ad->kid_off[x + 1]; j++)
			stack[top++] = ad->kid[j];
	}
	return n;
}

/* Each sync device with a latency made async (at most LIMIT). */
static int add_singles(struct advisor *ad, uint32_t limit)
{
	const struct dl_scenario *sc = ad->sc;
	struct dl_advice *a;

	for (uint32_t d = 0, n = 0; d < sc->ndev && n < limit; d++) {
		if (!sync_dev(ad, d) || !has_latency(&sc->prof[sc->dev[d].profile]))
			continue;
		if (!(a = push(ad, DL_ADV_ASYNC, d)))
			return -ENOMEM;
		a->n = 1;
		n++;
	}
	return 0;
}

/* D and its parent both sync, and neither alone saves HELP (SINGLE: what each saved)? */
static bool pairable(const struct advisor *ad, uint32_t d, int64_t help, const int64_t *single)
{
	uint32_t p = ad->sc->dev[d].parent;

	return sync_dev(ad, d) && sync_dev(ad, p) && single[d] <= help && single[p] <= help;
}

/* Each device with its parent, where neither alone saves HELP (at most LIMIT). */
static int add_pairs(struct advisor *ad, uint32_t limit, int64_t help, const int64_t *single)
{
	const struct dl_scenario *sc = ad->sc;
	struct dl_advice *a;

	for (uint32_t d = 0, n = 0; d < sc->ndev && n < limit; d++) {
		if (!pairable(ad, d, help, single))
			continue;
		if (!(a = push(ad, DL_ADV_ASYNC_PAIR, d)))
			return -ENOMEM;
		a->dev2 = sc->dev[d].parent;
		a->n = 2;
		n++;
	}
	return 0;
}

/*
 * Where the pair was not tried (the limit) or did not save HELP either
 * (PAIRED): the device with all its sync ancestors, when they are three or
 * more (at most LIMIT).
 */
static int add_chains(struct advisor *ad, uint32_t limit, int64_t help, const int64_t *single,
		      const uint8_t *paired)
{
	const struct dl_scenario *sc = ad->sc;
	struct dl_advice *a;

	for (uint32_t d = 0, n = 0; d < sc->ndev && n < limit; d++) {
		uint32_t len = 1, top = d;

		if (!pairable(ad, d, help, single) || paired[d] == PAIR_SAVED)
			continue;
		while (sync_dev(ad, sc->dev[top].parent)) {
			top = sc->dev[top].parent;
			len++;
		}
		if (len < 3)
			continue;
		if (!(a = push(ad, DL_ADV_ASYNC_CHAIN, d)))
			return -ENOMEM;
		a->dev2 = top;
		a->n = len;
		n++;
	}
	return 0;
}

/* Each sync device with sync children, with its sync descendants (at most LIMIT); not
 * one whose one sync child has no children and was PAIRED with it. */
static int add_subtrees(struct advisor *ad, uint32_t limit, const uint8_t *paired,
			uint32_t *stack)
{
	const struct dl_scenario *sc = ad->sc;
	struct dl_advice *a;

	for (uint32_t d = 0, n = 0; d < sc->ndev && n < limit; d++) {
		uint32_t kids = 0, kid = DL_SC_NONE;

		for (uint32_t j = ad->kid_off[d]; j < ad->kid_off[d + 1]; j++)
			if (sync_dev(ad, ad->kid[j])) {
				kids++;
				kid = ad->kid[j];
			}
		/* (one sync child with none of its own: the pair, if it was tried) */
		if (!sync_dev(ad, d) || !kids ||
		    (kids == 1 && paired[kid] && ad->kid_off[kid] == ad->kid_off[kid + 1]))
			continue;
		if (!(a = push(ad, DL_ADV_ASYNC_SUBTREE, d)))
			return -ENOMEM;
		a->n = subtree(ad, stack, d, NULL);
		n++;
	}
	return 0;
}

/* Every device async (a hotplugged one keeps its flag), if any is sync. */
static int add_every(struct advisor *ad)
{
	struct dl_advice *a;
	uint32_t n = 0;

	for (uint32_t d = 0; d < ad->sc->ndev; d++)
		n += sync_dev(ad, d);
	if (!n)
		return 0;
	if (!(a = push(ad, DL_ADV_ASYNC_ALL, DL_SC_NONE)))
		return -ENOMEM;
	a->n = n;
	return 0;
}

/* Each device with a latency twice as fast (at most LIMIT). */
static int add_halves(struct advisor *ad, uint32_t limit)
{
	const struct dl_scenario *sc = ad->sc;

	for (uint32_t d = 0, n = 0; d < sc->ndev && n < limit; d++) {
		if (!has_latency(&sc->prof[sc->dev[d].profile]))
			continue;
		if (!push(ad, DL_ADV_HALVE, d))
			return -ENOMEM;
		n++;
	}
	return 0;
}

/* One whole-run change: the run under ORDER on WORKERS. */
static int add_whole(struct advisor *ad, uint8_t kind, enum dl_order order, uint32_t workers,
		     bool research)
{
	struct dl_advice *a = push(ad, kind, DL_SC_NONE);

	if (!a)
		return -ENOMEM;
	a->order = order;
	a->cpus = workers;
	a->research = research;
	return 0;
}

/* Each link dropped (at most LIMIT): unsafe. */
static int add_links(struct advisor *ad, uint32_t limit)
{
	const struct dl_scenario *sc = ad->sc;
	struct dl_advice *a;

	for (uint32_t l = 0; l < sc->nlink && l < limit; l++) {
		if (!(a = push(ad, DL_ADV_DROP_LINK, sc->link[l].consumer)))
			return -ENOMEM;
		a->unsafe = true;
		a->link = l;
		a->dev2 = sc->link[l].supplier;
	}
	return 0;
}

/* --research: orders no kernel has (naive ignores the links: no option), and twice the CPUs. */
static int add_research(struct advisor *ad)
{
	const struct dl_advise_result *res = ad->res;
	int ret = 0;

	for (int i = 0; i < DL_ORDER_COUNT && !ret; i++)
		if (dl_order_research(dl_order_policy((enum dl_order)i)) &&
		    (enum dl_order)i != res->order)
			ret = add_whole(ad, DL_ADV_ORDER, (enum dl_order)i, res->workers, true);
	return ret ? ret : add_whole(ad, DL_ADV_CPUS, res->order, res->workers * 2, true);
}

/*
 * The changes no run decides: subtrees and every device async (where the
 * order takes async flags), halves, the kernel upgraded, links, research.
 */
static int add_rest(struct advisor *ad, uint32_t limit, const uint8_t *paired, uint32_t *stack)
{
	const struct dl_advise_result *res = ad->res;
	enum dl_order next;
	int ret = 0;

	if (dl_order_policy(res->order)->use_async_flag &&
	    !(ret = add_subtrees(ad, limit, paired, stack)))
		ret = add_every(ad);
	if (!ret)
		ret = add_halves(ad, limit);
	if (!ret && !dl_order_successor(res->order, &next))
		ret = add_whole(ad, DL_ADV_UPGRADE, next, res->workers, false);
	if (!ret)
		ret = add_links(ad, limit);
	if (!ret && ad->o->research)
		ret = add_research(ad);
	return ret;
}

static bool whole_run(const struct dl_advice *a)
{
	return a->kind == DL_ADV_ORDER || a->kind == DL_ADV_CPUS || a->kind == DL_ADV_UPGRADE;
}

/* Make change @a in @wk's working copy (a whole-run change is the run's order or K). */
static void change(struct work *wk, const struct dl_advice *a)
{
	const struct advisor *ad = wk->ad;
	const struct dl_scenario *sc = ad->sc;
	uint32_t d = a->dev, l = a->link;

	switch (a->kind) {
	case DL_ADV_ASYNC:
	case DL_ADV_ASYNC_PAIR:
	case DL_ADV_ASYNC_CHAIN:	/* dev and its n - 1 ancestors */
		for (uint32_t i = 0; i < a->n; i++, d = sc->dev[d].parent)
			wk->w.dev[d].async = 1;
		break;
	case DL_ADV_ASYNC_SUBTREE:
		subtree(ad, wk->stack, d, wk->w.dev);
		break;
	case DL_ADV_ASYNC_ALL:
		for (d = 0; d < sc->ndev; d++)
			wk->w.dev[d].async = !sc->dev[d].hotplug || ad->async[d];
		break;
	case DL_ADV_HALVE: {	/* a profile of its own, after the scenario's */
		const struct dl_profile *p = &sc->prof[sc->dev[d].profile];
		struct dl_profile *h = &wk->w.prof[sc->nprof];

		for (unsigned k = 0; k < DL_LAT_COUNT; k++)
			h->lat[k] = dl_latency_halved(p->lat[k], wk->samp + (size_t)k * ad->maxs);
		h->cpu_ppm = p->cpu_ppm;
		wk->w.nprof = sc->nprof + 1;
		wk->w.dev[d].profile = sc->nprof;
		break;
	}
	case DL_ADV_DROP_LINK:
		/* the links after it move up one (the order links are added in matters) */
		memmove(&wk->w.link[l], &sc->link[l + 1], (sc->nlink - l - 1) * sizeof(*sc->link));
		wk->w.nlink = sc->nlink - 1;
		wk->w.nlink_generated = sc->nlink_generated - (l < sc->nlink_generated);
		break;
	default:
		assert(whole_run(a));
	}
}

/* Undo change @a: @wk's copy is the baseline's again. */
static void undo(struct work *wk, const struct dl_advice *a)
{
	const struct dl_scenario *sc = wk->ad->sc;

	switch (a->kind) {
	case DL_ADV_HALVE:
		wk->w.dev[a->dev].profile = sc->dev[a->dev].profile;
		wk->w.nprof = sc->nprof;
		break;
	case DL_ADV_DROP_LINK:
		memcpy(&wk->w.link[a->link], &sc->link[a->link],
		       (sc->nlink - a->link) * sizeof(*sc->link));
		wk->w.nlink = sc->nlink;
		wk->w.nlink_generated = sc->nlink_generated;
		break;
	default:
		if (whole_run(a))
			break;
		for (uint32_t d = 0; d < sc->ndev; d++)
			wk->w.dev[d].async = wk->ad->async[d];
	}
}

/* A run's result ends the stage: an error (the first stands), or 1, stopped (an error outranks it). */
static void halt(struct advisor *ad, int ret)
{
	int was = 0;

	while (!atomic_compare_exchange_weak(&ad->halt, &was, ret))
		if (was < 0 || ret == 1)
			break;
}

/* A thread's share of the stage: the next candidate not taken, until none is left or halt. */
static void *run_share(void *arg)
{
	struct work *wk = arg;
	struct advisor *ad = wk->ad;
	const struct dl_advise_result *res = ad->res;
	uint32_t i;

	while (!atomic_load(&ad->halt) && !stopped(ad) &&
	       (i = atomic_fetch_add(&ad->next, 1)) < ad->end) {
		struct dl_advice *a = &res->adv[i];
		int ret;

		change(wk, a);
		ret = simulate(wk, a, whole_run(a) ? a->order : res->order,
			       whole_run(a) ? a->cpus : res->workers);
		undo(wk, a);
		if (ret)
			halt(ad, ret);
	}
	return NULL;
}

/*
 * Run the candidates res->adv[@first..nadv) on up to ad->jobs threads (this
 * one among them), and keep those that ran, in their order; a stop leaves
 * res->interrupted set.  Return: 0, or a run's error.
 */
static int run_stage(struct advisor *ad, struct work *wk, uint32_t first)
{
	struct dl_advise_result *res = ad->res;
	uint32_t t, kept = first;
	int ret;

	atomic_store(&ad->next, first);
	atomic_store(&ad->halt, 0);
	ad->end = res->nadv;
	/* (a thread that cannot be started leaves its share to the others) */
	for (t = 1; t < ad->jobs && t < res->nadv - first; t++)
		if (pthread_create(&wk[t].tid, NULL, run_share, &wk[t]))
			break;
	run_share(&wk[0]);
	while (--t)
		pthread_join(wk[t].tid, NULL);
	for (uint32_t i = first; i < res->nadv; i++)
		if (res->adv[i].status)	/* (a run stopped has none) */
			res->adv[kept++] = res->adv[i];
	res->interrupted |= kept < res->nadv || stopped(ad);
	res->nadv = kept;
	ret = atomic_load(&ad->halt);
	return ret < 0 ? ret : 0;
}

/* What the runs so far saved: each single (SINGLE), each pair tried (PAIRED: more than HELP?). */
static void note_savings(const struct dl_advise_result *res, int64_t help, int64_t *single,
			 uint8_t *paired)
{
	for (uint32_t i = 0; i < res->nadv; i++) {
		const struct dl_advice *a = &res->adv[i];

		if (a->kind == DL_ADV_ASYNC)
			single[a->dev] = a->total_saved_ns;
		else if (a->kind == DL_ADV_ASYNC_PAIR)
			paired[a->dev] = a->total_saved_ns > help ? PAIR_SAVED : PAIR_TRIED;
	}
}

enum { STAGE_SINGLES, STAGE_PAIRS, STAGE_CHAINS, STAGE_REST, STAGE_COUNT };

/*
 * Every kind of change, at most @limit each, stage after stage until a stop:
 * the singles (where the order takes async flags), whose savings decide the
 * pairs, whose savings decide the chains; then the rest, which no run decides.
 */
static int try_changes(struct advisor *ad, struct work *wk, uint32_t limit)
{
	struct dl_advise_result *res = ad->res;
	int64_t *single = calloc((size_t)ad->sc->ndev + 1, sizeof(*single)), help = 0;
	uint8_t *paired = calloc((size_t)ad->sc->ndev + 1, 1);
	int s = dl_order_policy(res->order)->use_async_flag ? STAGE_SINGLES : STAGE_REST;
	int ret = single && paired ? 0 : -ENOMEM;

	/* a pair or chain is tried where no single change saves a hundredth of the run */
	for (uint32_t i = 0; i < res->base.nops; i++)
		help += res->base.op[i].makespan_ns;
	help /= 100;

	for (; s < STAGE_COUNT && !ret && !res->interrupted; s++) {
		uint32_t first = res->nadv;

		note_savings(res, help, single, paired);
		switch (s) {
		case STAGE_SINGLES:
			ret = add_singles(ad, limit);
			break;
		case STAGE_PAIRS:
			ret = add_pairs(ad, limit, help, single);
			break;
		case STAGE_CHAINS:
			ret = add_chains(ad, limit, help, single, paired);
			break;
		default:
			ret = add_rest(ad, limit, paired, wk[0].stack);
		}
		if (!ret)
			ret = run_stage(ad, wk, first);
	}
	free(single);
	free(paired);
	return ret;
}

/*
 * @wk: a working copy of the scenario's device, profile and link arrays, as
 * the baseline runs them; room for a halved profile's samples and a
 * subtree's stack.  0 or -ENOMEM.
 */
static int work_init(struct advisor *ad, struct work *wk)
{
	const struct dl_scenario *sc = ad->sc;

	wk->ad = ad;
	wk->w = *sc;
	wk->w.dev = malloc(((size_t)sc->ndev + 1) * sizeof(*wk->w.dev));
	wk->w.prof = malloc(((size_t)sc->nprof + 1) * sizeof(*wk->w.prof));
	wk->w.link = malloc(((size_t)sc->nlink + 1) * sizeof(*wk->w.link));
	wk->samp = malloc(((size_t)ad->maxs * DL_LAT_COUNT + 1) * sizeof(*wk->samp));
	wk->stack = malloc(((size_t)sc->ndev + 1) * sizeof(*wk->stack));
	if (!wk->w.dev || !wk->w.prof || !wk->w.link || !wk->samp || !wk->stack)
		return -ENOMEM;
	/* (an empty array may be NULL: memcpy must not see it) */
	if (sc->ndev)
		memcpy(wk->w.dev, sc->dev, sc->ndev * sizeof(*sc->dev));
	if (sc->nprof)
		memcpy(wk->w.prof, sc->prof, sc->nprof * sizeof(*sc->prof));
	if (sc->nlink)
		memcpy(wk->w.link, sc->link, sc->nlink * sizeof(*sc->link));
	for (uint32_t d = 0; d < sc->ndev; d++)
		wk->w.dev[d].async = ad->async[d];
	return 0;
}

static void work_free(struct work *wk)
{
	free(wk->w.dev);
	free(wk->w.prof);
	free(wk->w.link);
	free(wk->samp);
	free(wk->stack);
}

/*
 * The run every change is measured against, on @wk's copy.  Returns a
 * negative error, or 0 with res->interrupted set when it did not complete
 * (nothing to rank).
 */
static int run_baseline(struct advisor *ad, struct work *wk)
{
	struct dl_advise_result *res = ad->res;
	struct dl_engine_opts eo = engine_opts(ad, res->order, res->workers);
	int ret = des_run(wk, &eo, &res->base);   /* the first: resims 1 */

	if (ret && ret != -EINTR)
		return ret;
	if (ret || stopped(ad) || !strcmp(res->base.status, "interrupted"))
		res->interrupted = true;	/* no baseline: no change to rank */
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
 * saved, and a subtree that add_subtrees() skips as a pair tried (a few
 * too many).  Every link is one: at 28,000 devices this is some 126,000 runs.
 */
static uint64_t planned_runs(const struct advisor *ad, uint32_t limit)
{
	const struct dl_scenario *sc = ad->sc;
	uint64_t singles = 0, subtrees = 0, halves = 0, nsync = 0, n = 1;
	enum dl_order next;

	for (uint32_t d = 0; d < sc->ndev; d++) {
		bool lat = has_latency(&sc->prof[sc->dev[d].profile]), kids = false;

		for (uint32_t j = ad->kid_off[d]; j < ad->kid_off[d + 1] && !kids; j++)
			kids = sync_dev(ad, ad->kid[j]);
		nsync += sync_dev(ad, d);
		singles += sync_dev(ad, d) && lat;
		subtrees += sync_dev(ad, d) && kids;
		halves += lat;
	}
	if (dl_order_policy(ad->res->order)->use_async_flag)
		n += at_most(singles, limit) + at_most(subtrees, limit) + (nsync > 0);
	n += at_most(halves, limit) + !dl_order_successor(ad->res->order, &next) +
	     at_most(sc->nlink, limit);
	for (int i = 0; ad->o->research && i < DL_ORDER_COUNT; i++)
		n += dl_order_research(dl_order_policy((enum dl_order)i)) &&
		     (enum dl_order)i != ad->res->order;
	return n + ad->o->research;
}

/*
 * What every run reads: the baseline's async flags, the children lists,
 * the most samples a profile has; and the working copies (*@wk), one per
 * job: o->jobs, at most DL_ADVISE_MAX_JOBS and one per planned run.
 * 0 or -ENOMEM.
 */
static int advisor_init(struct advisor *ad, uint32_t limit, struct work **wk)
{
	const struct dl_scenario *sc = ad->sc;
	const struct dl_advise_opts *o = ad->o;
	uint32_t jobs = o->jobs > 1 ? o->jobs : 1;

	ad->async = malloc((size_t)sc->ndev + 1);
	if (!ad->async || build_kids(ad))
		return -ENOMEM;
	for (uint32_t d = 0; d < sc->ndev; d++)
		ad->async[d] = o->all_sync || ad->res->order != o->order ? 0 : sc->dev[d].async;
	for (uint32_t p = 0; p < sc->nprof; p++)
		for (unsigned k = 0; k < DL_LAT_COUNT; k++)
			if (sc->prof[p].lat[k].nsamp > ad->maxs)
				ad->maxs = sc->prof[p].lat[k].nsamp;
	ad->planned = planned_runs(ad, limit);
	jobs = (uint32_t)at_most(at_most(ad->planned, jobs), DL_ADVISE_MAX_JOBS);
	if (!(*wk = calloc(jobs, sizeof(**wk))))
		return -ENOMEM;
	ad->jobs = jobs;
	for (uint32_t j = 0; j < jobs; j++)
		if (work_init(ad, &(*wk)[j]))
			return -ENOMEM;
	return 0;
}

int dl_advise(const struct dl_scenario *sc, const struct dl_advise_opts *o,
	      struct dl_advise_result *res)
{
	struct advisor ad = { .sc = sc, .o = o, .res = res };
	struct work *wk = NULL;
	uint32_t limit = o->max_candidates ? o->max_candidates : UINT32_MAX;
	int64_t t0 = dl_mono_ns();
	int ret;

	memset(res, 0, sizeof(*res));
	pthread_mutex_init(&ad.lock, NULL);
	/* sync: kernel-async with every device sync runs the same, and takes async flags */
	res->order = dl_order_async_form(o->order);
	res->workers = dl_engine_workers(sc, res->order, o->workers);
	ret = advisor_init(&ad, limit, &wk);
	if (!ret)
		ret = run_baseline(&ad, wk);
	if (!ret && !res->interrupted)
		ret = try_changes(&ad, wk, limit);
	if (!ret) {
		if (stopped(&ad))
			res->interrupted = true;
		if (res->nadv)	/* qsort() must not see a NULL array */
			qsort(res->adv, res->nadv, sizeof(*res->adv), dl_advice_cmp);
	}
	res->wall_ns = dl_mono_ns() - t0;
	for (uint32_t j = 0; j < ad.jobs; j++)
		work_free(&wk[j]);
	free(wk);
	free(ad.async);
	free(ad.kid_off);
	free(ad.kid);
	pthread_mutex_destroy(&ad.lock);
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
