/*
 * sc_gen.c - the graph generators of "generate": tree, chain, random-dag,
 * layered and camera.
 *
 * Parameters (all optional; "devices" defaults to 1000):
 *   every generator: devices (1..DL_SC_MAX_DEVICES), seed (default: the
 *     scenario's), register_order ("random" (default: real boards register
 *     consumers before suppliers), "topological", "consumer-first"),
 *     flags (link flags, default fw_devlink=rpm's INFERRED, AUTOPROBE_CONSUMER,
 *     PM_RUNTIME), prefix (device name prefix, default "dev"; not camera)
 *   tree:       fanout (default 4), suppliers_per_device (default 0), locality
 *   chain:      each device consumes the one before; suppliers_per_device
 *               (extra, default 0), locality
 *   random-dag: suppliers_per_device (mean, default 2, at most 64), locality
 *               (0..1, share of suppliers among the 64 devices before, default
 *               0.5), fanout (parent tree, default 8; 0 = no parents)
 *   layered:    layers (default 8), width (default devices/layers), cross_links
 *               (mean extra suppliers in any earlier layer, default 1); each
 *               device consumes two neighbours of the layer above: diamonds
 *   camera:     a SoC: soc, pinctrl, clk, reg, gpio, iommu, i2c buses and
 *               cam consumers with many suppliers each; sync_fraction (share
 *               of consumers with async=false, default 0.1; pinctrl is sync)
 *
 * Every generator works in "topological" indices: a parent or supplier always
 * has a smaller index than its child or consumer, so links and parents
 * together are acyclic.  The register order is then a permutation that keeps
 * parents before children.  No per-link allocation: links go straight into
 * the scenario's array.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/scenario/sc_internal.h"

#define GEN_LOCAL_WINDOW 64	/* "locality": suppliers among this many devices before */
#define GEN_MAX_SUPPLIERS 64
#define GEN_MAX_ROLES 8

struct rng {
	uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return dl_mix64(r->s);
}

/* Uniform in [0, n) without modulo bias worth mentioning (Lemire). */
static inline uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

struct role {
	const char *prefix;
	uint32_t start, count;
};

struct gen {
	struct sc_build *b;
	struct rng rng;
	uint32_t n;		/* devices generated */
	uint32_t base;		/* index of the first generated device */
	uint32_t link0;		/* index of the first generated link */
	uint32_t flags;		/* of every generated link */
	uint32_t *parent;	/* [n] topological index, or DL_SC_NONE */
	uint8_t *async;		/* [n] */
	struct role role[GEN_MAX_ROLES];
	unsigned nrole;
	/* parameters */
	double spd, locality, cross, sync_fraction;
	uint64_t fanout, layers, width;
	bool has_width, has_layers, has_devices;
};

/* Append generated link consumer <- supplier, both topological indices. */
static inline int gen_link(struct gen *g, uint32_t c, uint32_t s)
{
	struct sc_build *b = g->b;

	if (b->s->nlink == b->cap_link) {
		uint32_t more = b->cap_link ? b->cap_link : 1024;
		int ret;

		if ((uint64_t)b->s->nlink + more > DL_SC_MAX_LINKS)	/* up to the limit, then refuse */
			more = b->s->nlink < DL_SC_MAX_LINKS ? DL_SC_MAX_LINKS - b->s->nlink : 1;
		if ((ret = sc_reserve_links(b, more)))
			return ret;
	}
	b->s->link[b->s->nlink++] = (struct dl_sc_link){ c, s, g->flags };
	return 0;
}

/* @k suppliers of @i, distinct, each before @i; locality picks close ones. */
static int gen_random_suppliers(struct gen *g, uint32_t i, double mean, uint32_t avoid)
{
	uint32_t chosen[GEN_MAX_SUPPLIERS], k = (uint32_t)mean, nch = 0;
	int ret;

	if (rng_unit(&g->rng) < mean - k)
		k++;
	if (k > i)
		k = i;
	for (uint32_t t = 0; t < k; t++) {
		for (int attempt = 0; attempt < 4; attempt++) {
			uint32_t s, w = i < GEN_LOCAL_WINDOW ? i : GEN_LOCAL_WINDOW, j;

			if (rng_unit(&g->rng) < g->locality)
				s = i - 1 - rng_below(&g->rng, w);
			else
				s = rng_below(&g->rng, i);
			for (j = 0; j < nch && chosen[j] != s; j++)
				;
			if (j < nch || s == avoid)
				continue;
			chosen[nch++] = s;
			if ((ret = gen_link(g, i, s)))
				return ret;
			break;
		}
	}
	return 0;
}

static int gen_tree_like(struct gen *g, bool chain)
{
	int ret;

	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t avoid = DL_SC_NONE;

		g->parent[i] = (!chain && g->fanout && i) ? (uint32_t)((i - 1) / g->fanout)
							    : DL_SC_NONE;
		if (chain && i) {
			if ((ret = gen_link(g, i, i - 1)))
				return ret;
			avoid = i - 1;
		}
		if (g->spd > 0 && (ret = gen_random_suppliers(g, i, g->spd, avoid)))
			return ret;
	}
	return 0;
}

static int gen_layered(struct gen *g)
{
	uint32_t w = (uint32_t)g->width;
	int ret;

	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t layer = i / w, pos = i % w, prev, wprev, s1, s2;

		g->parent[i] = DL_SC_NONE;
		if (!layer)
			continue;
		g->parent[i] = pos;	/* a layer-0 device acts as the bus */
		prev = (layer - 1) * w;
		wprev = w;
		s1 = prev + pos % wprev;
		s2 = prev + (pos + 1) % wprev;
		if ((ret = gen_link(g, i, s1)))
			return ret;
		if (s2 != s1 && (ret = gen_link(g, i, s2)))
			return ret;
		if (g->cross > 0 && layer > 1) {
			uint32_t k = (uint32_t)g->cross;

			if (rng_unit(&g->rng) < g->cross - k)
				k++;
			for (uint32_t t = 0; t < k; t++) {
				uint32_t s = rng_below(&g->rng, prev);	/* layers before the one above */

				if ((ret = gen_link(g, i, s)))
					return ret;
			}
		}
	}
	return 0;
}

static void add_role(struct gen *g, const char *prefix, uint32_t count)
{
	uint32_t start = g->nrole ? g->role[g->nrole - 1].start + g->role[g->nrole - 1].count : 0;

	g->role[g->nrole++] = (struct role){ prefix, start, count };
}

/* A random member of role @r. */
static inline uint32_t pick(struct gen *g, unsigned r)
{
	return g->role[r].start + rng_below(&g->rng, g->role[r].count);
}

enum { R_SOC, R_PINCTRL, R_CLK, R_REG, R_GPIO, R_IOMMU, R_BUS, R_CAM };

/* Two distinct suppliers of role @r for @i (one if the role has one member). */
static int link_two(struct gen *g, uint32_t i, unsigned r, bool two)
{
	uint32_t a = pick(g, r), c;
	int ret = gen_link(g, i, a);

	if (ret || !two || g->role[r].count < 2)
		return ret;
	c = pick(g, r);
	return c == a ? 0 : gen_link(g, i, c);
}

static int gen_camera(struct gen *g)
{
	uint32_t n = g->n, fixed;
	int ret;

	if (n < 16)
		return sc_fail(g->b, "generate.devices", "%u devices; expected at least 16 for "
			       "\"camera\"", n);
	g->nrole = 0;
	add_role(g, "soc", 1);
	add_role(g, "pinctrl", n / 200 > 1 ? n / 200 : 1);
	add_role(g, "clk", n / 20 > 2 ? n / 20 : 2);
	add_role(g, "reg", n / 25 > 2 ? n / 25 : 2);
	add_role(g, "gpio", n / 50 > 1 ? n / 50 : 1);
	add_role(g, "iommu", n / 100 > 1 ? n / 100 : 1);
	add_role(g, "i2c", n / 16 > 1 ? n / 16 : 1);
	fixed = g->role[R_BUS].start + g->role[R_BUS].count;
	add_role(g, "cam", n - fixed);

	for (uint32_t i = 0; i < n; i++) {
		uint32_t local;
		unsigned r;

		for (r = 0; r + 1 < g->nrole && i >= g->role[r + 1].start; r++)
			;
		local = i - g->role[r].start;
		g->parent[i] = i ? g->role[R_SOC].start : DL_SC_NONE;
		switch (r) {
		case R_SOC:
			break;
		case R_PINCTRL:
			g->async[i] = 0;	/* pin controllers probe early and synchronously */
			break;
		case R_CLK:	/* a clock tree: each clock fed by a parent clock */
			if (local && (ret = gen_link(g, i, g->role[R_CLK].start + (local - 1) / 4)))
				return ret;
			break;
		case R_REG:	/* regulator supply chains */
			if (local && (ret = gen_link(g, i, g->role[R_REG].start + (local - 1) / 3)))
				return ret;
			break;
		case R_GPIO:
			if ((ret = gen_link(g, i, pick(g, R_PINCTRL))) ||
			    (ret = gen_link(g, i, pick(g, R_CLK))))
				return ret;
			break;
		case R_IOMMU:
			if ((ret = gen_link(g, i, pick(g, R_CLK))) ||
			    (ret = gen_link(g, i, pick(g, R_REG))))
				return ret;
			break;
		case R_BUS:
			if ((ret = gen_link(g, i, pick(g, R_PINCTRL))) ||
			    (ret = gen_link(g, i, pick(g, R_CLK))))
				return ret;
			break;
		default:	/* a sensor, CSI receiver or ISP on a bus */
			g->parent[i] = pick(g, R_BUS);
			if ((ret = link_two(g, i, R_CLK, rng_unit(&g->rng) < 0.5)) ||
			    (ret = link_two(g, i, R_REG, rng_unit(&g->rng) < 0.6)))
				return ret;
			if (rng_unit(&g->rng) < 0.5 && (ret = gen_link(g, i, pick(g, R_GPIO))))
				return ret;
			if (rng_unit(&g->rng) < 0.7 && (ret = gen_link(g, i, pick(g, R_PINCTRL))))
				return ret;
			if (rng_unit(&g->rng) < 0.3 && (ret = gen_link(g, i, pick(g, R_IOMMU))))
				return ret;
			/* an ISP consuming a nearby sensor */
			if (local && rng_unit(&g->rng) < 0.25) {
				uint32_t back = 1 + rng_below(&g->rng, local < 8 ? local : 8);

				if ((ret = gen_link(g, i, i - back)))
					return ret;
			}
			if (rng_unit(&g->rng) < g->sync_fraction)
				g->async[i] = 0;
			break;
		}
	}
	return 0;
}

static void heap_push(uint64_t *h, uint32_t *n, uint64_t v)
{
	uint32_t i = (*n)++;

	while (i && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static uint64_t heap_pop(uint64_t *h, uint32_t *n)
{
	uint64_t top = h[0], v = h[--*n];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
	return top;
}

/*
 * Listing order: a permutation of the topological indices that keeps every
 * parent before its children.  Devices become available once their parent
 * is listed; of those available, "consumer-first" lists the highest
 * topological index (the most consumer-like) next, "random" a random one.
 */
static int gen_order(struct gen *g, int mode, uint32_t *order)
{
	uint32_t n = g->n, *start, *child, hn = 0, p = 0;
	uint64_t *heap;
	int ret = -ENOMEM;

	if (mode == 0) {	/* topological */
		for (uint32_t i = 0; i < n; i++)
			order[i] = i;
		return 0;
	}
	start = calloc((size_t)n + 1, sizeof(*start));
	child = malloc((size_t)n * sizeof(*child));
	heap = malloc((size_t)n * sizeof(*heap));
	if (!start || !child || !heap)
		goto out;
	/* children in CSR form: start[p]..start[p+1] */
	for (uint32_t i = 0; i < n; i++)
		if (g->parent[i] != DL_SC_NONE)
			start[g->parent[i]]++;
	for (uint32_t i = 0, sum = 0; i <= n; i++) {
		uint32_t c = i < n ? start[i] : 0;

		start[i] = sum;
		sum += c;
	}
	for (uint32_t i = 0; i < n; i++)
		if (g->parent[i] != DL_SC_NONE)
			child[start[g->parent[i]]++] = i;
	for (uint32_t i = n; i > 0; i--)	/* undo the fill's advance */
		start[i] = start[i - 1];
	start[0] = 0;
	for (uint32_t i = 0; i < n; i++)
		if (g->parent[i] == DL_SC_NONE)
			heap[hn++] = i;
	if (mode == 1)
		for (uint32_t i = 0, k = hn; i < k; i++) {
			hn = i;
			heap_push(heap, &hn, heap[i]);
			hn = k;
		}
	while (hn) {
		uint32_t d;

		if (mode == 1) {
			d = (uint32_t)heap_pop(heap, &hn);
		} else {	/* random: swap a random available device to the end */
			uint32_t r = rng_below(&g->rng, hn);

			d = (uint32_t)heap[r];
			heap[r] = heap[--hn];
		}
		order[p++] = d;
		for (uint32_t e = start[d]; e < start[d + 1]; e++) {
			if (mode == 1)
				heap_push(heap, &hn, child[e]);
			else
				heap[hn++] = child[e];
		}
	}
	assert(p == n);
	ret = 0;
out:
	free(start);
	free(child);
	free(heap);
	return ret;
}

/* Add the generated devices in listing order and renumber their links. */
static int gen_commit(struct gen *g, int mode, bool def_async)
{
	struct sc_build *b = g->b;
	struct dl_scenario *s = b->s;
	uint32_t *order = malloc((size_t)g->n * sizeof(*order));
	uint32_t *pos = malloc((size_t)g->n * sizeof(*pos));
	char name[64];
	int ret = -ENOMEM;

	if (!order || !pos)
		goto out;
	if ((ret = gen_order(g, mode, order)))
		goto out;
	for (uint32_t p = 0; p < g->n; p++)
		pos[order[p]] = p;
	if ((ret = sc_reserve_devices(b, g->n)))
		goto out;
	for (uint32_t p = 0; p < g->n; p++) {
		uint32_t t = order[p], par = g->parent[t];
		unsigned r;
		int64_t idx;
		int len;

		for (r = 0; r + 1 < g->nrole && t >= g->role[r + 1].start; r++)
			;
		len = snprintf(name, sizeof(name), "%s%u", g->role[r].prefix,
			       t - g->role[r].start);
		idx = sc_add_device(b, "generate", name, (size_t)len,
				    par == DL_SC_NONE ? DL_SC_NONE : g->base + pos[par], 0,
				    g->async[t] ? def_async : false, false);
		if (idx < 0) {
			/* only a clash is the prefix's fault: out of memory says so (sc_nomem()) */
			ret = sc_lookup(b, name) == DL_SC_NONE ? (int)idx :
			      sc_fail(b, "generate", "generated name '%s' is also a listed device; "
				      "expected another \"prefix\"", name);
			goto out;
		}
	}
	for (uint32_t l = g->link0; l < s->nlink; l++) {
		s->link[l].consumer = g->base + pos[s->link[l].consumer];
		s->link[l].supplier = g->base + pos[s->link[l].supplier];
	}
	ret = 0;
out:
	if (ret == -ENOMEM)
		sc_nomem(b);
	free(order);
	free(pos);
	return ret;
}

static const char *const common_keys[] = { "topology", "devices", "seed", "register_order",
					   "flags", "prefix" };

static int check_gen_keys(struct sc_build *b, json_t *gen, const char *const *extra)
{
	const char *allowed[16];
	size_t n = 0;
	char path[96];

	for (size_t i = 0; i < sizeof(common_keys) / sizeof(common_keys[0]); i++)
		allowed[n++] = common_keys[i];
	while (*extra && n < 15)
		allowed[n++] = *extra++;
	allowed[n] = NULL;
	for (void *it = json_object_iter(gen); it; it = json_object_iter_next(gen, it)) {
		const char *k = json_object_iter_key(it);

		for (size_t i = 0; i < b->nov; i++) {
			if (!strcmp(b->ov[i].key, k)) {
				snprintf(path, sizeof(path), "generate (--set %s)", k);
				json_t *one = json_object();
				int ret;

				json_object_set(one, k, json_object_iter_value(it));
				ret = sc_check_keys(b, path, one, allowed);
				json_decref(one);
				if (ret)
					return ret;
			}
		}
	}
	return sc_check_keys(b, "generate", gen, allowed);
}

/* Path of generate key @k, naming --set when the value came from there. */
static const char *gen_path(struct sc_build *b, const char *k, char *buf, size_t len)
{
	bool set = false;

	for (size_t i = 0; i < b->nov; i++)
		set |= !strcmp(b->ov[i].key, k);
	snprintf(buf, len, "generate.%s%s", k, set ? " (from --set)" : "");
	return buf;
}

/* What a generate object asks for, besides the shape parameters in struct gen. */
struct gen_args {
	int topo;		/* index into topologies[] */
	int mode;		/* register order: index into orders[] */
	const char *prefix;	/* of device names */
	uint64_t n;		/* devices */
	uint64_t seed;
};

enum { TOPO_TREE, TOPO_CHAIN, TOPO_DAG, TOPO_LAYERED, TOPO_CAMERA, TOPO_COUNT };

static const char *const topologies[TOPO_COUNT] = { "tree", "chain", "random-dag", "layered",
						    "camera" };
static const char *const orders[] = { "topological", "consumer-first", "random" };

#define GEN_PATH(k) gen_path(b, k, path, sizeof(path))

/* generate.topology, and the keys that topology allows. */
static int parse_topology(struct sc_build *b, json_t *gen, int *topo)
{
	static const char *const k_tree[] = { "fanout", "suppliers_per_device", "locality", NULL };
	static const char *const k_chain[] = { "suppliers_per_device", "locality", NULL };
	static const char *const k_dag[] = { "suppliers_per_device", "locality", "fanout", NULL };
	static const char *const k_layered[] = { "layers", "width", "cross_links", NULL };
	static const char *const k_camera[] = { "sync_fraction", NULL };
	static const char *const *keys[TOPO_COUNT] = { k_tree, k_chain, k_dag, k_layered,
						       k_camera };
	json_t *v = json_object_get(gen, "topology");
	const char *name;
	int t, ret;

	if (!v || !json_is_string(v))
		return sc_fail(b, "generate.topology", "missing; expected \"tree\", \"chain\", "
			       "\"random-dag\", \"layered\" or \"camera\"");
	name = json_string_value(v);
	for (t = 0; t < TOPO_COUNT && strcmp(name, topologies[t]); t++)
		;
	if (t == TOPO_COUNT)
		return sc_fail(b, "generate.topology", "unknown generator '%s'; expected \"tree\", "
			       "\"chain\", \"random-dag\", \"layered\" or \"camera\"", name);
	if ((ret = check_gen_keys(b, gen, keys[t])))
		return ret;
	b->s->topology = strdup(name);
	if (!b->s->topology)
		return sc_nomem(b);
	*topo = t;
	return 0;
}

/* generate.flags: the DL_FLAG_* names every generated link gets. */
static int parse_flags(struct sc_build *b, json_t *v, uint32_t *flags)
{
	char path[96];
	uint32_t f;

	if (!json_is_array(v))
		return sc_fail(b, GEN_PATH("flags"), "expected an array of DL_FLAG_* names");
	*flags = 0;
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *e = json_array_get(v, i);

		if (!json_is_string(e) || dl_flag_from_name(json_string_value(e), &f))
			return sc_fail(b, GEN_PATH("flags"), "unknown flag; expected names such as "
				       "PM_RUNTIME, AUTOPROBE_CONSUMER, INFERRED");
		*flags |= f;
	}
	return 0;
}

/* The keys every topology has: devices, seed, register_order, prefix, flags. */
static int parse_common(struct sc_build *b, json_t *gen, struct gen *g, struct gen_args *a)
{
	char path[96];
	json_t *v;
	int ret;

	if ((v = json_object_get(gen, "devices"))) {
		if ((ret = sc_get_uint(b, GEN_PATH("devices"), v, DL_SC_MAX_DEVICES, &a->n)))
			return ret;
		g->has_devices = true;
	}
	if ((v = json_object_get(gen, "seed")) &&
	    (ret = sc_get_uint(b, GEN_PATH("seed"), v, INT64_MAX, &a->seed)))
		return ret;
	if ((v = json_object_get(gen, "register_order"))) {
		const char *o = json_is_string(v) ? json_string_value(v) : "";

		for (a->mode = 0; a->mode < 3 && strcmp(o, orders[a->mode]); a->mode++)
			;
		if (a->mode == 3)
			return sc_fail(b, GEN_PATH("register_order"), "expected \"topological\", "
				       "\"consumer-first\" or \"random\"");
	}
	if ((v = json_object_get(gen, "prefix"))) {
		if (!json_is_string(v) || !*json_string_value(v) ||
		    strlen(json_string_value(v)) > 32 || a->topo == TOPO_CAMERA)
			return sc_fail(b, GEN_PATH("prefix"), a->topo == TOPO_CAMERA ?
				       "camera names its own devices; expected no prefix" :
				       "expected a string of 1 to 32 characters");
		a->prefix = json_string_value(v);
	}
	if ((v = json_object_get(gen, "flags")))
		return parse_flags(b, v, &g->flags);
	return 0;
}

/* A count of 1 or more: generate.layers, generate.width. */
static int parse_count(struct sc_build *b, json_t *gen, const char *k, uint64_t *out, bool *has)
{
	char path[96];
	json_t *v = json_object_get(gen, k);
	int ret;

	if (!v)
		return 0;
	if ((ret = sc_get_uint(b, GEN_PATH(k), v, DL_SC_MAX_DEVICES, out)))
		return ret;
	if (!*out)
		return sc_fail(b, GEN_PATH(k), "0; expected 1 or more");
	*has = true;
	return 0;
}

/* The shape parameters of topology @t, each with its default. */
static int parse_shape(struct sc_build *b, json_t *gen, struct gen *g, int t)
{
	char path[96];
	json_t *v;
	int ret;

	g->spd = t == TOPO_DAG ? 2.0 : 0.0;
	g->locality = 0.5;
	g->fanout = t == TOPO_TREE ? 4 : t == TOPO_DAG ? 8 : 0;
	g->layers = 8;
	g->cross = 1.0;
	g->sync_fraction = 0.1;
	if ((v = json_object_get(gen, "suppliers_per_device")) &&
	    (ret = sc_get_real(b, GEN_PATH("suppliers_per_device"), v, 0, GEN_MAX_SUPPLIERS,
			       &g->spd)))
		return ret;
	if ((v = json_object_get(gen, "locality")) &&
	    (ret = sc_get_real(b, GEN_PATH("locality"), v, 0, 1, &g->locality)))
		return ret;
	if ((v = json_object_get(gen, "fanout")) &&
	    (ret = sc_get_uint(b, GEN_PATH("fanout"), v, DL_SC_MAX_DEVICES, &g->fanout)))
		return ret;
	if (t == TOPO_TREE && !g->fanout)
		return sc_fail(b, GEN_PATH("fanout"), "0; expected 1 or more for a tree");
	if ((v = json_object_get(gen, "cross_links")) &&
	    (ret = sc_get_real(b, GEN_PATH("cross_links"), v, 0, GEN_MAX_SUPPLIERS, &g->cross)))
		return ret;
	if ((v = json_object_get(gen, "sync_fraction")) &&
	    (ret = sc_get_real(b, GEN_PATH("sync_fraction"), v, 0, 1, &g->sync_fraction)))
		return ret;
	if ((ret = parse_count(b, gen, "layers", &g->layers, &g->has_layers)))
		return ret;
	return parse_count(b, gen, "width", &g->width, &g->has_width);
}

/* layered: devices = layers * width, any one of the three left out. */
static int size_layered(struct sc_build *b, struct gen *g, uint64_t *n)
{
	char path[96];

	if (g->has_width && !g->has_devices)
		*n = g->layers * g->width;
	if (g->has_width && g->has_layers && g->has_devices && *n != g->layers * g->width)
		return sc_fail(b, GEN_PATH("devices"), "%llu devices but %llu layers of %llu; "
			       "expected devices = layers * width, or one of them left out",
			       (unsigned long long)*n, (unsigned long long)g->layers,
			       (unsigned long long)g->width);
	if (!g->has_width)
		g->width = *n ? (*n + g->layers - 1) / g->layers : 1;
	return 0;
}

/* Refuses a scenario over the limits, and reserves its links before anything is allocated. */
static int reserve_gen(struct sc_build *b, const struct gen *g, uint64_t n, int t)
{
	/* A bound on links before anything is allocated. */
	double est = (double)n * (t == TOPO_CHAIN ? 1 + g->spd : t == TOPO_LAYERED ? 2 + g->cross :
				  t == TOPO_CAMERA ? 4.3 : g->spd);

	if (n + b->s->ndev > DL_SC_MAX_DEVICES)
		return sc_fail(b, "generate.devices", "%llu devices in all; expected at most %u",
			       (unsigned long long)(n + b->s->ndev), DL_SC_MAX_DEVICES);
	if (est + b->s->nlink > DL_SC_MAX_LINKS)
		return sc_fail(b, "generate", "about %.0f links; expected at most %u "
			       "(fewer devices or suppliers)", est, DL_SC_MAX_LINKS);
	return sc_reserve_links(b, (uint32_t)(est * 1.05) + 16);
}

/* Builds the graph of topology @t into @g, then adds it to the scenario. */
static int gen_build(struct gen *g, int t, int mode, bool def_async)
{
	int ret;

	g->parent = malloc((size_t)g->n * sizeof(*g->parent));
	g->async = malloc((size_t)g->n);
	if (!g->parent || !g->async) {
		ret = sc_nomem(g->b);
		goto out;
	}
	memset(g->async, 1, g->n);
	switch (t) {
	case TOPO_TREE: ret = gen_tree_like(g, false); break;
	case TOPO_CHAIN: ret = gen_tree_like(g, true); break;
	case TOPO_DAG: ret = gen_tree_like(g, false); break;
	case TOPO_LAYERED: ret = gen_layered(g); break;
	default: ret = gen_camera(g); break;
	}
	if (!ret)
		ret = gen_commit(g, mode, def_async);
out:
	free(g->parent);
	free(g->async);
	return ret;
}

int sc_generate(struct sc_build *b, json_t *gen, uint64_t seed, bool def_async)
{
	struct gen g = { .b = b, .flags = (1u << 8) | (1u << 5) | (1u << 2) };
	struct gen_args a = { .mode = 2, .prefix = "dev", .n = 1000, .seed = seed };
	int ret;

	if ((ret = parse_topology(b, gen, &a.topo)) || (ret = parse_common(b, gen, &g, &a)) ||
	    (ret = parse_shape(b, gen, &g, a.topo)))
		return ret;
	if (a.topo == TOPO_LAYERED && (ret = size_layered(b, &g, &a.n)))
		return ret;
	if ((ret = reserve_gen(b, &g, a.n, a.topo)))
		return ret;
	g.n = (uint32_t)a.n;
	g.base = b->s->ndev;
	g.link0 = b->s->nlink;
	g.rng.s = dl_mix64(a.seed ^ 0x6a09e667f3bcc909ull);
	g.role[0] = (struct role){ a.prefix, 0, g.n };
	g.nrole = 1;
	if (!a.n)
		return 0;
	return gen_build(&g, a.topo, a.mode, def_async);
}
