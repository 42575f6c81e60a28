/*
 * bench_core.c - the link core: dl_link_add (visited-set search pruned by
 * dpm keys) against the kernel-faithful DFS, dl_reorder_to_tail, and a
 * plain Kahn pass as the O(V+E) yardstick.
 *
 * Graphs (devices are registered in id order before any link is added):
 *   chain/N    generator "chain", register_order consumer-first: every
 *              supplier registers after its consumer (every link reorders).
 *   random/N   generator "random-dag" (parent tree, 2 suppliers per device,
 *              random register order).
 *   diamond/W  20 layers of W = 2 devices (W = 3 would mean 3^19 paths),
 *              full connection between consecutive layers, deepest layer
 *              registered first and its links added first: the kernel's
 *              DFS follows W^depth paths.
 * Every graph ends with a few links that close a cycle and must be refused.
 *
 * BM_link_add_kernel_dfs does what device_link_add() does: the unmemoised
 * device_is_dependent(); for a new link other than SYNC_STATE_ONLY,
 * device_reorder_to_tail(consumer).  It still calls dl_link_add() to create
 * the link (which repeats our own pruned check and records our reorder), so
 * its time is ours plus the kernel's searches.  The set-up check requires
 * both to accept the same links and to leave the same dpm_list.
 * BM_link_add times the recorded moves' dl_dpm_settle() too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_common.h"
#include "sim/core/dl_core.h"

#define DIAMOND_LAYERS 20

struct graph {
	uint32_t ndev, nlink;
	uint32_t *parent;          /* DL_NONE or a smaller id */
	uint32_t *con, *sup, *flags;
	int8_t *kernel_ok;         /* [nlink] reference verdict, filled by the check */
	uint32_t nprobe;           /* the last nprobe links close a cycle */
	int checked;               /* 0 not yet, 1 ok, -1 mismatch */
};

enum { G_CHAIN, G_RANDOM, G_DIAMOND, G_COUNT };
static const char *const gname[G_COUNT] = { "chain", "random", "diamond" };

#define GCACHE 16
static struct { int kind; int64_t arg; struct graph *g; } gcache[GCACHE];
static unsigned ngcache;

static struct graph *graph_alloc(uint32_t ndev, uint32_t nlink)
{
	struct graph *g = calloc(1, sizeof(*g));

	g->ndev = ndev;
	g->nlink = nlink;
	g->parent = malloc(ndev * sizeof(uint32_t));
	g->con = malloc(nlink * sizeof(uint32_t));
	g->sup = malloc(nlink * sizeof(uint32_t));
	g->flags = malloc(nlink * sizeof(uint32_t));
	g->kernel_ok = calloc(nlink, 1);
	for (uint32_t i = 0; i < ndev; i++)
		g->parent[i] = DL_NONE;
	return g;
}

/* Cycle-closing probes: consumer = a source-side device, supplier = a sink-side one. */
#define NPROBES 4

static struct graph *graph_from_scenario(const struct dl_scenario *sc)
{
	struct graph *g = graph_alloc(sc->ndev, sc->nlink + NPROBES);
	uint32_t n = 0;

	for (uint32_t i = 0; i < sc->ndev; i++)
		g->parent[i] = sc->dev[i].parent == DL_SC_NONE ? DL_NONE : sc->dev[i].parent;
	for (uint32_t i = 0; i < sc->nlink; i++, n++) {
		g->con[n] = sc->link[i].consumer;
		g->sup[n] = sc->link[i].supplier;
		g->flags[n] = sc->link[i].flags & DL_ADD_VALID_FLAGS;
	}
	/* Reverse a few existing links: each closes a cycle. */
	for (uint32_t k = 0; k < NPROBES && k < sc->nlink; k++, n++) {
		uint32_t i = (uint32_t)(((uint64_t)sc->nlink * (2 * k + 1)) / (2 * NPROBES));

		g->con[n] = sc->link[i].supplier;
		g->sup[n] = sc->link[i].consumer;
		g->flags[n] = sc->link[i].flags & DL_ADD_VALID_FLAGS;
	}
	g->nprobe = n - sc->nlink;
	g->nlink = n;
	return g;
}

static struct graph *graph_diamond(uint32_t w)
{
	const uint32_t L = DIAMOND_LAYERS;
	struct graph *g = graph_alloc(L * w, (L - 1) * w * w + NPROBES);
	uint32_t n = 0;
#define ID(layer, k) ((L - 1 - (layer)) * w + (k))   /* deepest layer registers first */

	for (uint32_t l = L - 1; l >= 1; l--)
		for (uint32_t a = 0; a < w; a++)
			for (uint32_t b = 0; b < w; b++, n++) {
				g->con[n] = ID(l, a);
				g->sup[n] = ID(l - 1, b);
				g->flags[n] = DL_FLAG_PM_RUNTIME;
			}
	for (uint32_t k = 0; k < NPROBES; k++, n++) {
		g->con[n] = ID(k % 2 ? 1 : 0, k % w);       /* near the top ... */
		g->sup[n] = ID(L - 1 - k / 2, (k + 1) % w);  /* ... consumes near the bottom */
		g->flags[n] = DL_FLAG_PM_RUNTIME;
	}
#undef ID
	g->nprobe = NPROBES;
	g->nlink = n;
	return g;
}

static struct graph *get_graph(int kind, int64_t arg)
{
	const struct dl_scenario *sc = NULL;
	struct graph *g;

	for (unsigned i = 0; i < ngcache; i++)
		if (gcache[i].kind == kind && gcache[i].arg == arg)
			return gcache[i].g;
	if (kind == G_DIAMOND) {
		g = graph_diamond((uint32_t)arg);
	} else {
		sc = kind == G_CHAIN ? bench_gen_scenario("chain", (uint32_t)arg, "consumer-first")
				     : bench_gen_scenario("random-dag", (uint32_t)arg, "random");
		if (!sc)
			return NULL;
		g = graph_from_scenario(sc);
	}
	if (ngcache < GCACHE) {
		gcache[ngcache].kind = kind;
		gcache[ngcache].arg = arg;
		gcache[ngcache++].g = g;
	}
	return g;
}

/* Devices created and registered, no links; on failure nothing to free. */
static int core_setup(struct dl_core *c, const struct graph *g)
{
	if (dl_core_init(c, g->ndev, g->nlink))
		return -1;
	for (uint32_t i = 0; i < g->ndev; i++) {
		dl_dev_t d;

		if (dl_device_new(c, g->parent[i], true, &d) || d != i)
			goto err;
	}
	for (uint32_t i = 0; i < g->ndev; i++)
		if (dl_device_register(c, i))
			goto err;
	return 0;
err:
	dl_core_fini(c);
	return -1;
}

/* Our path.  Returns the number of refused links. */
static uint32_t add_ours(struct dl_core *c, const struct graph *g, int8_t *ok)
{
	uint32_t refused = 0;

	for (uint32_t i = 0; i < g->nlink; i++) {
		int rc = dl_link_add(c, g->con[i], g->sup[i], g->flags[i], NULL);

		refused += rc < 0;
		if (ok)
			ok[i] = rc >= 0;
	}
	dl_dpm_settle(c);       /* the moves recorded count too */
	return refused;
}

/* device_link_add()'s searches, kernel style. */
static uint32_t add_kernel(struct dl_core *c, const struct graph *g, int8_t *ok,
			   uint64_t *visits)
{
	uint32_t refused = 0;

	for (uint32_t i = 0; i < g->nlink; i++) {
		dl_dev_t con = g->con[i], sup = g->sup[i];
		bool fresh, accepted;

		if (dl_kernel_is_dependent(c, con, sup, visits)) {
			accepted = false;
		} else {
			fresh = dl_link_find(c, con, sup) == DL_NONE;
			accepted = dl_link_add(c, con, sup, g->flags[i], NULL) >= 0;
			/*
			 * The kernel's walk moves every device of the set at
			 * least once, so it alone decides their final order,
			 * whatever our dl_link_add() left pending.
			 */
			if (accepted && fresh && !(g->flags[i] & DL_FLAG_SYNC_STATE_ONLY))
				dl_kernel_reorder_to_tail(c, con, visits);
		}
		refused += !accepted;
		if (ok)
			ok[i] = accepted;
	}
	return refused;
}

/*
 * The kernel's DFS is exponential in the depth of a random DAG (about 11M
 * visits at 10k devices): beyond this size the reference is not run.
 */
#define KERNEL_CHECK_MAX_DEV 10000

/* dpm_list, settled, into @out (ndev entries; unregistered: DL_NONE at the end). */
static void dpm_order(struct dl_core *c, uint32_t *out)
{
	uint32_t n = 0;

	for (dl_dev_t d = dl_dpm_first(c); d != DL_NONE; d = c->dev[d].dpm_next)
		out[n++] = d;
	while (n < c->ndev)
		out[n++] = DL_NONE;
}

/*
 * Both implementations must accept and refuse the same links and leave the
 * same dpm_list; ours must accept every generated link and refuse every
 * cycle-closing probe, and keep dpm_list topological.  Graphs above
 * KERNEL_CHECK_MAX_DEV are checked against that expectation only.
 */
static int graph_check(struct graph *g)
{
	struct dl_core c;
	int8_t *ours;
	uint32_t *order;
	bool expected = true;

	if (g->checked)
		return g->checked;
	order = calloc(2 * (size_t)g->ndev + 1, sizeof(*order));
	ours = calloc(g->nlink, 1);
	g->checked = -1;
	if (ours && order && core_setup(&c, g) == 0) {
		uint32_t r1 = add_ours(&c, g, ours);
		bool topo = dl_dpm_is_topological(&c);

		dpm_order(&c, order);
		dl_core_fini(&c);
		for (uint32_t i = 0; i < g->nlink; i++)
			expected &= ours[i] == (i < g->nlink - g->nprobe);
		if (!topo || !expected || r1 != g->nprobe || r1 == 0) {
			/* g->checked stays -1 */
		} else if (g->ndev > KERNEL_CHECK_MAX_DEV) {
			g->checked = 1;
		} else if (core_setup(&c, g) == 0) {
			uint32_t r2 = add_kernel(&c, g, g->kernel_ok, NULL);

			dpm_order(&c, order + g->ndev);
			if (r1 == r2 && dl_dpm_is_topological(&c) &&
			    !memcmp(ours, g->kernel_ok, g->nlink) &&
			    !memcmp(order, order + g->ndev, g->ndev * sizeof(*order)))
				g->checked = 1;
			dl_core_fini(&c);
		}
	}
	free(order);
	free(ours);
	return g->checked;
}

static void bm_link_add_common(struct bm_state *st, bool kernel)
{
	int kind = (int)bm_user(st);
	struct graph *g = get_graph(kind, bm_range(st, 0));
	uint64_t visits = 0;
	uint32_t refused = 0;

	if (!g || graph_check(g) != 1) {
		bm_skip(st, "setup check failed: implementations disagree on links or dpm_list (or no graph)");
		return;
	}
	while (bm_keep_running(st)) {
		struct dl_core c;

		bm_pause(st);
		if (core_setup(&c, g)) {
			bm_resume(st);
			bm_skip(st, "core setup failed");
			break;
		}
		bm_resume(st);
		refused = kernel ? add_kernel(&c, g, NULL, &visits) : add_ours(&c, g, NULL);
		bm_pause(st);
		dl_core_fini(&c);
		bm_resume(st);
	}
	bm_set_items(st, bm_iterations(st) * (int64_t)g->nlink);
	bm_counter(st, "devices", g->ndev);
	bm_counter(st, "links", g->nlink);
	bm_counter(st, "refused", refused);
	if (kernel && bm_iterations(st))
		bm_counter(st, "dfs_visits", (double)visits / (double)bm_iterations(st));
}

static void bm_link_add(struct bm_state *st) { bm_link_add_common(st, false); }
static void bm_link_add_kernel_dfs(struct bm_state *st) { bm_link_add_common(st, true); }

/* Random devices of a random DAG moved to the tail (with their dependents). */
static void bm_reorder_to_tail(struct bm_state *st)
{
	struct graph *g = get_graph(G_RANDOM, bm_range(st, 0));
	struct dl_core c;
	uint64_t x = 12345;

	if (!g || core_setup(&c, g)) {
		bm_skip(st, "setup failed");
		return;
	}
	add_ours(&c, g, NULL);
	while (bm_keep_running(st)) {
		x = dl_mix64(x);
		dl_reorder_to_tail(&c, (dl_dev_t)(((unsigned __int128)x * g->ndev) >> 64));
		dl_dpm_settle(&c);      /* recorded, then applied: the whole move */
	}
	if (!dl_dpm_is_topological(&c))
		bm_skip(st, "dpm_list no longer topological");
	bm_set_items(st, bm_iterations(st));
	dl_core_fini(&c);
}

static void bm_topo_pass(struct bm_state *st)
{
	const struct dl_scenario *sc = bench_default_scenario((uint32_t)bm_range(st, 0));
	struct bench_csr *g;
	uint32_t sorted = 0;

	if (!sc) {
		bm_skip(st, "scenario failed to load");
		return;
	}
	g = bench_csr_build(sc);
	while (bm_keep_running(st))
		sorted = bench_kahn(g);
	if (sorted != g->n)
		bm_skip(st, "graph has a cycle");
	bm_set_items(st, bm_iterations(st) * (int64_t)(g->n + g->m));
	bm_counter(st, "vertices", g->n);
	bm_counter(st, "edges", g->m);
	bench_csr_free(g);
}

void bm_register_core(void)
{
	static const int64_t chain_n[] = { 1000, 10000 }, random_n[] = { 1000, 10000, 100000 },
			     diamond_w[] = { 2 }, kernel_random_n[] = { 1000, 10000 };
	char name[64];

	for (int k = 0; k < G_COUNT; k++) {
		const int64_t *a = k == G_CHAIN ? chain_n : k == G_RANDOM ? random_n : diamond_w;
		int na = k == G_RANDOM ? 3 : k == G_DIAMOND ? 1 : 2;

		for (int i = 0; i < na; i++) {
			snprintf(name, sizeof(name), "BM_link_add/%s", gname[k]);
			bm_register(name, bm_link_add, k, &a[i], 1, 'u');
		}
		if (k == G_RANDOM)
			a = kernel_random_n;
		for (int i = 0; i < (k == G_DIAMOND ? 1 : 2); i++) {
			snprintf(name, sizeof(name), "BM_link_add_kernel_dfs/%s", gname[k]);
			bm_register(name, bm_link_add_kernel_dfs, k, &a[i], 1, 'u');
		}
	}
	for (int64_t n = 1000; n <= (bm_full() ? 1000000 : 100000); n *= 10) {
		bm_register("BM_reorder_to_tail", bm_reorder_to_tail, 0, &n, 1, 'n');
		bm_register("BM_topo_pass", bm_topo_pass, 0, &n, 1, 'u');
	}
}
