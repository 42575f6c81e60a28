/*
 * dtb_import.c - fw_devlink over a flattened device tree, with libfdt, after
 * the exact 6.12 (and 7.3) sources: drivers/of/property.c (the property
 * parsers), drivers/base/core.c (fw_devlink_create_devlink() and the
 * __fw_devlink_link_to_consumers/suppliers() pair), drivers/of/platform.c,
 * drivers/of/irq.c (of_irq_init()) and drivers/clk/clk.c (of_clk_init()).
 *
 * 1. Validate: fdt_check_header() and fdt_check_full() on the whole buffer;
 *    everything after that still checks every length libfdt hands back, and
 *    every loop is bounded (node count, depth, cell counts, ancestor walks).
 * 2. Early nodes: a node whose compatible is in 6.12's IRQCHIP_DECLARE or
 *    CLK_OF_DECLARE tables (dtb_early.inc: the entries of the source that
 *    Debian's arm64 image has built in) is initialised before the driver
 *    model and marked OF_POPULATED, so it never becomes a device (irqchips
 *    only when of_irq_init() takes them: "interrupt-controller", and the
 *    interrupt parent is the root or itself early).  CLK_OF_DECLARE_DRIVER
 *    nodes become devices too.  Both are FWNODE_FLAG_INITIALIZED (clock
 *    provider, irq domain registered), which fw_devlink reads as "may never
 *    probe": no link is made to them or to nodes beneath them.
 * 3. Devices (of_platform_populate): available nodes (status "okay"/"ok" or
 *    absent; a disabled node disables its subtree) with a "compatible" that
 *    are children of the root or of another device (simple-bus & co., and
 *    i2c/spi/mfd children of other devices), not early.  /chosen, /aliases,
 *    /memory*, /cpus, /reserved-memory, /__symbols__, /__fixups__,
 *    /__local_fixups__ are skipped.  Names are full node paths; parent =
 *    nearest device ancestor.
 *    Drivers (dtb_drivers_612.inc / _73.inc, gen-dtb-drivers.sh): a device
 *    binds the driver of its most specific compatible that Debian's arm64
 *    config of the version builds (in or as a module), else, for a child
 *    of an i2c or spi controller, the driver whose i2c/spi_device_id table
 *    has the first compatible without its vendor; AMBA primecells are
 *    assumed to bind (amba_id tables match by peripheral ID).  A device
 *    without one never binds: the children of a non-bus device that never
 *    binds are never created (its driver would create them).  Async
 *    suspend: the driver's device_enable_async_suspend() or its bus's.
 * 4. Links (of_supplier_bindings of the version; the "optional" iommus,
 *    iommu-map and dmas only with fw_devlink.strict, so never here).  The
 *    supplier is the nearest device ancestor-or-self of the phandle's target
 *    (fw_devlink hands a non-device child's consumers to its parent device
 *    when that binds).  A property of a device's own node gives that device
 *    a link with fw_devlink's default flags (fw_devlink=on:
 *    FW_DEVLINK_FLAGS_RPM = INFERRED|AUTOPROBE_CONSUMER|PM_RUNTIME).  A
 *    property of a node that is not a device gives its device-owning
 *    ancestor a proxy with FW_DEVLINK_FLAGS_PERMISSIVE (INFERRED|
 *    SYNC_STATE_ONLY), which gates nothing.  No link to self or from an
 *    ancestor of the supplier, none to/from disabled subtrees.  A pair that
 *    has both keeps the own link (device_link_add() upgrades an SSO link).
 * 5. Cycles among own links + parent edges (iterative Tarjan SCC, as
 *    __fw_devlink_relax_cycles() follows suppliers and parents): an own link
 *    whose ends share an SCC becomes FW_DEVLINK_FLAGS_PERMISSIVE|CYCLE.
 * 6. An own link to a supplier that never binds becomes
 *    FW_DEVLINK_FLAGS_PERMISSIVE, as fw_devlink_drivers_done() relaxes it
 *    (fw_devlink_no_driver(): !supplier->can_match): at late_initcall in a
 *    kernel without modules; in Debian's (CONFIG_MODULES=y) only when the
 *    deferred-probe timeout expires (deferred_probe_timeout_work_func(),
 *    10 s after the last extension by default).  That wait is not modelled:
 *    the consumers probe as if the link had been relaxed from the start.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfdt.h>

#include "sim/scenario/dtb_import.h"

/*
 * Latency classes: GUESSES, not measurements.  Chosen from compatible
 * substrings so that a real tree has a plausible shape: resource providers
 * (clocks, regulators, pinctrl, gpio, resets) are fast, multimedia blocks
 * (display, gpu, camera, video) are slow, devices on serial buses (children
 * of a non-bus device: i2c, spi, ...) pay bus transactions.
 */
enum dclass { C_DEFAULT, C_BUS, C_FAST, C_SERIAL, C_SLOW, C_COUNT };
static const struct {
	const char *name, *probe, *suspend, *resume;
} classes[C_COUNT] = {
	[C_DEFAULT] = { "default", "1ms", "200us", "300us" },
	[C_BUS]     = { "bus", "100us", "10us", "10us" },
	[C_FAST]    = { "fast", "200us", "50us", "50us" },
	[C_SERIAL]  = { "serial-bus device", "5ms", "500us", "1ms" },
	[C_SLOW]    = { "slow", "20ms", "2ms", "3ms" },
};
static const char *const fast_pat[] = {
	"clock", "clk", "ccu", "cru", "regulator", "pinctrl", "pinmux", "gpio", "reset",
	"syscon", "pmic", "interrupt-controller", "gic", "intc", NULL,
};
static const char *const slow_pat[] = {
	"display", "gpu", "mali", "drm", "dsi", "hdmi", "panel", "camera", "csi", "isp",
	"vop", "dpu", "mdss", "venus", "vpu", "video", "lcd", NULL,
};
static const char *const bus_compat[] = {
	"simple-bus", "simple-mfd", "isa", "arm,amba-bus", NULL,
};

/*
 * of_supplier_bindings' fixed-name lists of phandle + #<cells> arguments
 * (DEFINE_SIMPLE_PROP: a target without the #cells property has none).
 */
static const struct {
	const char *prop, *cells;
	enum dl_dtb_kernel since;
} simple_props[] = {
	{ "clocks", "#clock-cells", DL_DTB_K612 },
	{ "interconnects", "#interconnect-cells", DL_DTB_K612 },
	{ "mboxes", "#mbox-cells", DL_DTB_K612 },
	{ "io-channels", "#io-channel-cells", DL_DTB_K612 },
	{ "io-backends", "#io-backend-cells", DL_DTB_K612 },
	{ "power-domains", "#power-domain-cells", DL_DTB_K612 },
	{ "hwlocks", "#hwlock-cells", DL_DTB_K612 },
	{ "extcon", NULL, DL_DTB_K612 },
	{ "nvmem-cells", "#nvmem-cell-cells", DL_DTB_K612 },
	{ "phys", "#phy-cells", DL_DTB_K612 },
	{ "wakeup-parent", NULL, DL_DTB_K612 },
	{ "pwms", "#pwm-cells", DL_DTB_K612 },
	{ "resets", "#reset-cells", DL_DTB_K612 },
	{ "leds", NULL, DL_DTB_K612 },
	{ "backlight", NULL, DL_DTB_K612 },
	{ "panel", NULL, DL_DTB_K612 },
	{ "msi-parent", "#msi-cells", DL_DTB_K612 },
	{ "pses", "#pse-cells", DL_DTB_K612 },
	{ "power-supplies", NULL, DL_DTB_K612 },
	{ "access-controllers", "#access-controller-cells", DL_DTB_K612 },
	{ "mmc-pwrseq", NULL, DL_DTB_K73 },
	/* FWLINK_FLAG_IGNORE: matched, and never a device link */
	{ "post-init-providers", NULL, DL_DTB_K612 },
};

/* Links as found, before merging: an own-node link or a proxy. */
enum { LK_OWN, LK_PROXY };

struct dnode {
	int off;		/* structure-block offset */
	int parent;		/* node index, -1 for the root */
	int dev;		/* device index or -1 */
	int owner;		/* nearest device ancestor-or-self, -1 */
	uint32_t phandle;
	uint8_t avail;		/* this node and all its ancestors available */
	uint8_t early;		/* DL_DTB_EARLY_* bits that apply to this node */
	uint8_t early_up;	/* this node or an ancestor is early (FWNODE_FLAG_INITIALIZED) */
	char *path;
};

/* Whether a device binds a driver, and why not (enum dl_dtb_drivers, the table). */
enum { B_BINDS, B_NO_DRIVER, B_NOT_BUILT };

struct ddev {
	int node, parent;	/* node index; parent device or -1 */
	enum dclass cls;
	const struct dl_dtb_driver *drv;	/* its driver in the table, or NULL */
	const char *compat;	/* the compatible that matched drv (into the blob) */
	uint8_t bind;		/* B_* */
	uint8_t async;		/* suspends/resumes asynchronously */
	uint8_t amba;		/* an AMBA primecell without a table driver: assumed to bind */
	uint8_t by_id;		/* matched by its bus's i2c/spi_device_id table */
};

struct dlink {
	int c, s;
	uint8_t kind;		/* LK_OWN or LK_PROXY */
	uint8_t cycle;
	uint8_t relaxed;	/* own link to a supplier that never binds: fw_devlink_drivers_done() */
};

struct ph_ent {
	uint32_t ph;
	int node;
};

struct imp {
	const void *fdt;
	struct dnode *n;
	int nn;
	struct ddev *d;
	int nd;
	struct dlink *l;
	size_t nl, cap_l;
	struct ph_ent *ph;
	int nph;
	struct dl_error *err;
	const char *label;
	struct dl_dtb_opts opt;
	unsigned early_nodes, early_dropped, unpopulated;
	int oom;		/* a key could not be set (put()): out of memory */
};

static int fail(struct imp *m, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(m->err->msg, sizeof(m->err->msg), "%s: ", m->label);

	if (n < 0 || (size_t)n >= sizeof(m->err->msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(m->err->msg + n, sizeof(m->err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int nomem(struct imp *m)
{
	snprintf(m->err->msg, sizeof(m->err->msg), "%s: out of memory", m->label);
	return -ENOMEM;
}

static int cmp_ph(const void *a, const void *b)
{
	const struct ph_ent *x = a, *y = b;

	if (x->ph != y->ph)
		return x->ph < y->ph ? -1 : 1;
	return x->node - y->node;
}

static int node_by_phandle(const struct imp *m, uint32_t ph)
{
	int lo = 0, hi = m->nph - 1;

	if (ph == 0 || ph == 0xffffffffu)
		return -1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (m->ph[mid].ph == ph) {
			while (mid > 0 && m->ph[mid - 1].ph == ph)
				mid--;
			return m->ph[mid].node;
		}
		if (m->ph[mid].ph < ph)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Property @name of node @i as cells; NULL unless present with a length multiple of 4. */
static const fdt32_t *get_cells(const struct imp *m, int i, const char *name, int *ncells)
{
	int len;
	const void *p = fdt_getprop(m->fdt, m->n[i].off, name, &len);

	if (!p || len < 0 || len % 4)
		return NULL;
	*ncells = len / 4;
	return p;
}

/* #cells value of node @i, or -1 when absent or out of range. */
static int get_ncells(const struct imp *m, int i, const char *name)
{
	int n;
	const fdt32_t *c = get_cells(m, i, name, &n);
	uint32_t v;

	if (!c || n != 1)
		return -1;
	v = fdt32_ld(&c[0]);
	return v > DL_DTB_MAX_ARGS ? -1 : (int)v;
}

static int has_compat(const struct imp *m, int i, const char *const *list)
{
	for (; *list; list++)
		if (fdt_node_check_compatible(m->fdt, m->n[i].off, *list) == 0)
			return 1;
	return 0;
}

/* Does any compatible string of node @i contain one of @pats? */
static int compat_contains(const struct imp *m, int i, const char *const *pats)
{
	int len, pos = 0;
	const char *p = fdt_getprop(m->fdt, m->n[i].off, "compatible", &len);

	if (!p || len <= 0)
		return 0;
	while (pos < len) {
		const char *s = p + pos;
		size_t sl = strnlen(s, (size_t)(len - pos));

		for (const char *const *q = pats; *q; q++) {
			size_t ql = strlen(*q);

			for (size_t k = 0; k + ql <= sl; k++)
				if (!memcmp(s + k, *q, ql))
					return 1;
		}
		pos += (int)sl + 1;
	}
	return 0;
}

static int status_ok(const struct imp *m, int off)
{
	int len;
	const char *s = fdt_getprop(m->fdt, off, "status", &len);

	if (!s)
		return 1;
	if (len <= 0)
		return 0;
	return (len == 5 && !memcmp(s, "okay", 5)) || (len == 3 && !memcmp(s, "ok", 3)) ||
	       (len == 4 && !memcmp(s, "okay", 4)) || (len == 2 && !memcmp(s, "ok", 2));
}

static int skipped_top(const char *name, int len)
{
	static const char *const skip[] = {
		"chosen", "aliases", "cpus", "__symbols__", "__fixups__", "__local_fixups__",
		"reserved-memory", NULL,
	};
	size_t base = 0;

	while ((int)base < len && name[base] != '@')
		base++;
	if (base == 6 && !memcmp(name, "memory", 6))
		return 1;
	for (const char *const *s = skip; *s; s++)
		if (strlen(*s) == base && !memcmp(name, *s, base))
			return 1;
	return 0;
}

/* Is node @a a (strict) ancestor of node @b?  Bounded by the depth limit. */
static int is_ancestor(const struct imp *m, int a, int b)
{
	for (int k = 0, p = m->n[b].parent; p >= 0 && k <= DL_DTB_MAX_DEPTH; k++, p = m->n[p].parent)
		if (p == a)
			return 1;
	return 0;
}

/*
 * fw_devlink_create_devlink() for the fwnode link from node @con_node (the
 * node holding the property, or the port parent of an endpoint) to node
 * @sup_node (the phandle's target, already checked available).
 */
static int add_link(struct imp *m, int con_node, int sup_node)
{
	int c, s, kind;

	if (con_node < 0 || sup_node < 0 || !m->n[con_node].avail || !m->n[sup_node].avail)
		return 0;
	if (m->n[con_node].dev >= 0) {
		c = m->n[con_node].dev;
		kind = LK_OWN;
	} else {
		/* a child fwnode's link, made for its device-owning ancestor */
		c = m->n[con_node].owner;
		kind = LK_PROXY;
	}
	if (c < 0)
		return 0;
	/*
	 * "Not linking - dev might never probe" / "might never become dev":
	 * the supplier (a device: itself; not a device: it or an ancestor) is
	 * FWNODE_FLAG_INITIALIZED and has no driver when consumers are linked.
	 */
	if (m->n[sup_node].dev >= 0 ? m->n[sup_node].early != 0 : m->n[sup_node].early_up) {
		m->early_dropped++;
		return 0;
	}
	s = m->n[sup_node].owner;
	if (s < 0 || c == s)
		return 0;
	/*
	 * A device never depends on its own descendant: device_link_add()
	 * refuses an own link; __fw_devlink_link_to_consumers() skips a proxy.
	 */
	if (is_ancestor(m, m->d[c].node, m->d[s].node))
		return 0;
	if (m->nl == m->cap_l) {
		size_t cap = m->cap_l ? 2 * m->cap_l : 256;
		struct dlink *l;

		if (cap > DL_SC_MAX_LINKS)
			return fail(m, "too many links; expected at most %u", DL_SC_MAX_LINKS);
		l = realloc(m->l, cap * sizeof(*l));
		if (!l)
			return nomem(m);
		m->l = l;
		m->cap_l = cap;
	}
	m->l[m->nl++] = (struct dlink){ c, s, (uint8_t)kind, 0, 0 };
	return 0;
}

/*
 * of_parse_phandle_with_args() over the list @v of @n cells: link node @con
 * to each target in turn, as of_link_property() does with index 0, 1, ...
 * until the parser fails.  @cells names the target's #cells property or is
 * NULL (no arguments); @strict: a target without it stops the walk (the
 * suffix parsers), otherwise it has no arguments (DEFINE_SIMPLE_PROP).  An
 * empty (0) entry or an unknown phandle stops the walk too.
 */
static int walk_list(struct imp *m, int con, const fdt32_t *v, int n, const char *cells,
		     bool strict)
{
	int k = 0, ret;

	while (k < n) {
		int t = node_by_phandle(m, fdt32_ld(&v[k]));
		int args = 0;

		if (t < 0)
			return 0;
		if (cells) {
			args = get_ncells(m, t, cells);
			if (args < 0) {
				if (strict || fdt_getprop(m->fdt, m->n[t].off, cells, NULL))
					return 0;	/* absent when strict, or malformed */
				args = 0;
			}
		}
		if (k + 1 + args > n)
			return 0;		/* the list ends inside the arguments */
		if ((ret = add_link(m, con, t)))
			return ret;
		k += 1 + args;
	}
	return 0;
}

/* strcmp_suffix() == 0 in 6.12's property.c: @s strictly longer than @suf, ends with it. */
static int ends_with(const char *s, size_t sl, const char *suf)
{
	size_t n = strlen(suf);

	return sl > n && !memcmp(s + sl - n, suf, n);
}

/* of_irq_find_parent(): interrupt-parent, else the parent, until #interrupt-cells. */
static int irq_parent(const struct imp *m, int i)
{
	int cur = i;

	for (int k = 0; k <= 2 * DL_DTB_MAX_DEPTH; k++) {
		int n, nxt;
		const fdt32_t *ip = get_cells(m, cur, "interrupt-parent", &n);

		if (ip && n >= 1)
			nxt = node_by_phandle(m, fdt32_ld(&ip[0]));
		else
			nxt = m->n[cur].parent;
		if (nxt < 0)
			return -1;
		cur = nxt;
		if (fdt_getprop(m->fdt, m->n[cur].off, "#interrupt-cells", NULL))
			return cur;
	}
	return -1;
}

static int has_prop(const struct imp *m, int i, const char *name)
{
	return fdt_getprop(m->fdt, m->n[i].off, name, NULL) != NULL;
}

/*
 * The parents named by node @i's interrupt-map (of_irq_parse_imap_parent()):
 * up to @max of them into @out; the count, or -1 when the map is malformed.
 */
static int imap_parents(const struct imp *m, int i, int *out, int max)
{
	int n = 0, cnt = 0, intc = get_ncells(m, i, "#interrupt-cells"), addrc = 1;
	const fdt32_t *v = get_cells(m, i, "interrupt-map", &n);

	/* of_bus_n_addr_cells(): this node's #address-cells or an ancestor's, else 1 */
	for (int k = 0, p = i; p >= 0 && k <= DL_DTB_MAX_DEPTH; k++, p = m->n[p].parent)
		if (has_prop(m, p, "#address-cells")) {
			addrc = get_ncells(m, p, "#address-cells");
			break;
		}
	if (!v || intc < 0 || addrc < 0)
		return -1;
	for (int k = 0; k + addrc + intc + 1 < n && cnt < max;) {
		int t, pi, pa;

		k += addrc + intc;
		t = node_by_phandle(m, fdt32_ld(&v[k++]));
		if (t < 0 || (pi = get_ncells(m, t, "#interrupt-cells")) < 0)
			return cnt ? cnt : -1;
		pa = get_ncells(m, t, "#address-cells");
		if (pa < 0)
			pa = 0;
		if (k + pa + pi > n)
			return cnt ? cnt : -1;
		k += pa + pi;
		out[cnt++] = t;
	}
	return cnt;
}

/*
 * of_irq_parse_raw(), simplified: from the interrupt parent @p up to an
 * "interrupt-controller"; a nexus (interrupt-map) is followed when every
 * entry names the same parent, else -1 (the kernel matches the specifier).
 */
static int irq_controller(const struct imp *m, int p)
{
	for (int k = 0; p >= 0 && k <= 2 * DL_DTB_MAX_DEPTH; k++) {
		int par[8], np;
		bool imap = has_prop(m, p, "interrupt-map");

		if (has_prop(m, p, "interrupt-controller") && !imap)
			return p;
		if (!imap) {
			p = irq_parent(m, p);
			continue;
		}
		np = imap_parents(m, p, par, 8);
		if (np <= 0)
			return -1;
		for (int j = 1; j < np; j++)
			if (par[j] != par[0])
				return -1;
		if (par[0] == p)
			return -1;
		p = par[0];
	}
	return -1;
}

/* parse_interrupts(): "interrupts" or "interrupts-extended", each entry. */
static int irq_links(struct imp *m, int i)
{
	int n, ret;
	const fdt32_t *v = get_cells(m, i, "interrupts-extended", &n);

	if (v) {
		for (int k = 0; k < n;) {
			int t = node_by_phandle(m, fdt32_ld(&v[k]));
			int args = t < 0 ? -1 : get_ncells(m, t, "#interrupt-cells");

			if (args < 0 || k + 1 + args > n)
				return 0;
			if ((ret = add_link(m, i, irq_controller(m, t))))
				return ret;
			k += 1 + args;
		}
		return 0;
	}
	if (get_cells(m, i, "interrupts", &n) && n > 0) {
		int p = irq_parent(m, i), size = p < 0 ? -1 : get_ncells(m, p, "#interrupt-cells");

		/* every entry has the same parent; one link stands for them all */
		if (size > 0 && n >= size)
			return add_link(m, i, irq_controller(m, p));
	}
	return 0;
}

/* of_graph_get_port_parent(): endpoint -> port -> [ports|in-ports|out-ports ->] device. */
static int port_parent(const struct imp *m, int ep)
{
	int port = ep < 0 ? -1 : m->n[ep].parent, up;
	const char *name;
	int len;
	size_t base = 0;

	if (port < 0 || (up = m->n[port].parent) < 0)
		return -1;
	name = fdt_get_name(m->fdt, m->n[up].off, &len);
	if (!name || len < 0)
		return up;
	while ((int)base < len && name[base] != '@')
		base++;
	if ((base == 5 && !memcmp(name, "ports", 5)) || (base == 8 && !memcmp(name, "in-ports", 8)) ||
	    (base == 9 && !memcmp(name, "out-ports", 9)))
		return m->n[up].parent;
	return up;
}

static bool pinctrl_prop(const struct imp *m, const char *name)
{
	if (strncmp(name, "pinctrl-", 8) || name[8] < '0' || name[8] > '9')
		return false;
	if (m->opt.kernel >= DL_DTB_K73)
		return true;		/* parse_pinctrl_n() */
	return name[9] == '\0' && name[8] <= '8';	/* pinctrl0 .. pinctrl8 */
}

/* of_fwnode_add_links(): every property of node @i, through the bindings. */
static int node_links(struct imp *m, int i)
{
	int po, ret, count = 0;

	if (!m->n[i].avail)
		return 0;
	fdt_for_each_property_offset(po, m->fdt, m->n[i].off) {
		const char *name;
		int len, nc;
		const fdt32_t *v = fdt_getprop_by_offset(m->fdt, po, &name, &len);
		size_t nl;

		if (++count > 100000)
			return fail(m, "node %s: too many properties", m->n[i].path);
		if (!v || !name || len <= 0 || len % 4)
			continue;
		nc = len / 4;
		nl = strlen(name);
		if (name[0] == '#')
			continue;
		for (size_t k = 0; k < sizeof(simple_props) / sizeof(simple_props[0]); k++)
			if (!strcmp(name, simple_props[k].prop)) {
				if (m->opt.kernel < simple_props[k].since ||
				    !strcmp(name, "post-init-providers"))
					break;
				if ((ret = walk_list(m, i, v, nc, simple_props[k].cells, false)))
					return ret;
				goto next;
			}
		if (!strcmp(name, "interrupts") || !strcmp(name, "interrupts-extended")) {
			/* both names parse the same way: one pass, at "interrupts-extended" if any */
			if ((!strcmp(name, "interrupts-extended") || !has_prop(m, i, "interrupts-extended")) &&
			    (ret = irq_links(m, i)))
				return ret;
		} else if (!strcmp(name, "interrupt-map")) {
			int par[64], np = imap_parents(m, i, par, 64);

			for (int k = 0; k < np; k++)
				if ((ret = add_link(m, i, irq_controller(m, par[k]))))
					return ret;
		} else if (pinctrl_prop(m, name)) {
			if ((ret = walk_list(m, i, v, nc, NULL, false)))
				return ret;
		} else if (!strcmp(name, "remote-endpoint")) {
			int t = node_by_phandle(m, fdt32_ld(&v[0]));

			if (t >= 0 && (ret = add_link(m, port_parent(m, i), port_parent(m, t))))
				return ret;
		} else if (ends_with(name, nl, "-supply")) {
			if ((ret = walk_list(m, i, v, nc, NULL, false)))
				return ret;
		} else if (!strcmp(name, "gpio") || !strcmp(name, "gpios")) {
			/* parse_gpio_compat(): a hog's gpios are its parent's */
			if (!has_prop(m, i, "gpio-hog") &&
			    (ret = walk_list(m, i, v, nc, "#gpio-cells", true)))
				return ret;
		} else if (ends_with(name, nl, "-gpio") ||
			   (ends_with(name, nl, "-gpios") && !ends_with(name, nl, ",nr-gpios"))) {
			if ((ret = walk_list(m, i, v, nc, "#gpio-cells", true)))
				return ret;
		}
next:;
	}
	return 0;
}

/* Pass 1: every node, its path, parent, availability, phandle. */
static int collect_nodes(struct imp *m)
{
	int stack[DL_DTB_MAX_DEPTH + 1];
	int off = 0, depth = 0, cap = 0;

	for (off = 0; off >= 0; off = fdt_next_node(m->fdt, off, &depth)) {
		struct dnode *d;
		const char *name;
		int nlen, par;
		size_t plen;

		if (depth < 0)
			break;
		if (depth > DL_DTB_MAX_DEPTH)
			return fail(m, "nodes nested deeper than %d", DL_DTB_MAX_DEPTH);
		if ((unsigned)m->nn >= DL_DTB_MAX_NODES)
			return fail(m, "more than %u nodes", DL_DTB_MAX_NODES);
		if (m->nn && depth == 0)
			return fail(m, "more than one root node");
		if (m->nn == cap) {
			int nc = cap ? 2 * cap : 256;
			struct dnode *nn = realloc(m->n, (size_t)nc * sizeof(*nn));

			if (!nn)
				return nomem(m);
			m->n = nn;
			cap = nc;
		}
		name = fdt_get_name(m->fdt, off, &nlen);
		if (!name || nlen < 0)
			return fail(m, "node at offset %d: no name (%s)", off,
				    fdt_strerror(nlen < 0 ? nlen : -FDT_ERR_BADSTRUCTURE));
		if (m->nn && off <= m->n[m->nn - 1].off)
			return fail(m, "node offsets out of order");
		par = depth ? stack[depth - 1] : -1;
		if (depth && nlen == 0)
			return fail(m, "node at offset %d: empty name", off);
		if (memchr(name, '/', (size_t)nlen))
			return fail(m, "node at offset %d: name contains '/'", off);
		d = &m->n[m->nn];
		*d = (struct dnode){ .off = off, .parent = par, .dev = -1, .owner = -1 };
		plen = par < 0 ? 1 : strlen(m->n[par].path) + 1 + (size_t)nlen;
		d->path = malloc(plen + 1);
		if (!d->path)
			return nomem(m);
		if (par < 0)
			strcpy(d->path, "/");
		else if (par == 0)
			snprintf(d->path, plen + 1, "/%.*s", nlen, name);
		else
			snprintf(d->path, plen + 1, "%s/%.*s", m->n[par].path, nlen, name);
		d->avail = (par < 0 || m->n[par].avail) && status_ok(m, off);
		d->phandle = fdt_get_phandle(m->fdt, off);
		stack[depth] = m->nn++;
	}
	if (off < 0 && off != -FDT_ERR_NOTFOUND)
		return fail(m, "walking nodes: %s", fdt_strerror(off));
	if (m->nn == 0)
		return fail(m, "no root node");
	return 0;
}

static const struct {
	const char *compat;
	unsigned kind;
} early_table[] = {
#include "sim/scenario/dtb_early.inc"
};

static int cmp_early(const void *key, const void *ent)
{
	return strcmp(key, *(const char *const *)ent);
}

unsigned dl_dtb_early_compat(const char *compat)
{
	const size_t n = sizeof(early_table) / sizeof(early_table[0]);
	const char *const *hit = bsearch(compat, &early_table[0].compat, n, sizeof(early_table[0]),
					  cmp_early);
	size_t k;
	unsigned kind = 0;

	if (!hit)
		return 0;
	k = (size_t)((const char *)hit - (const char *)early_table) / sizeof(early_table[0]);
	while (k > 0 && !strcmp(early_table[k - 1].compat, compat))
		k--;
	for (; k < n && !strcmp(early_table[k].compat, compat); k++)
		kind |= early_table[k].kind;
	return kind;
}

/* The DL_DTB_EARLY_* bits of any of node @i's compatible strings. */
static unsigned node_early_kind(const struct imp *m, int i)
{
	int len, pos = 0;
	const char *p = fdt_getprop(m->fdt, m->n[i].off, "compatible", &len);
	unsigned kind = 0;

	if (!p || len <= 0)
		return 0;
	while (pos < len) {
		const char *s = p + pos;
		size_t sl = strnlen(s, (size_t)(len - pos));

		if ((int)(pos + (int)sl) < len)	/* NUL-terminated inside the property */
			kind |= dl_dtb_early_compat(s);
		pos += (int)sl + 1;
	}
	return kind;
}

/*
 * Driver facts per kernel version: drv_*[] (file, name, bus, CONFIG symbols,
 * built in Debian's arm64 config, flags) and compat_*[] (compatible -> the
 * index of its driver), both generated by gen-dtb-drivers.sh and sorted.
 */
struct dtb_compat {
	const char *compat;
	unsigned short drv;
};
#include "sim/scenario/dtb_drivers_612.inc"
#include "sim/scenario/dtb_drivers_73.inc"

static int cmp_compat(const void *key, const void *ent)
{
	return strcmp(key, ((const struct dtb_compat *)ent)->compat);
}

const struct dl_dtb_driver *dl_dtb_driver_of(enum dl_dtb_kernel k, const char *compat)
{
	const struct dtb_compat *tab = k == DL_DTB_K73 ? compat_73 : compat_612;
	const struct dl_dtb_driver *drv = k == DL_DTB_K73 ? drv_73 : drv_612;
	size_t n = k == DL_DTB_K73 ? sizeof(compat_73) / sizeof(compat_73[0]) :
				     sizeof(compat_612) / sizeof(compat_612[0]);
	const struct dtb_compat *hit = compat ? bsearch(compat, tab, n, sizeof(*tab), cmp_compat) : NULL;

	return hit ? &drv[hit->drv] : NULL;
}

const char *dl_dtb_driver_source(enum dl_dtb_kernel k)
{
	return k == DL_DTB_K73 ? DRV_SOURCE_73 : DRV_SOURCE_612;
}

int dl_dtb_parse_kernel(const char *s, enum dl_dtb_kernel *out)
{
	if (!strcmp(s, "6.12"))
		*out = DL_DTB_K612;
	else if (!strcmp(s, "7.3"))
		*out = DL_DTB_K73;
	else
		return -EINVAL;
	return 0;
}

int dl_dtb_parse_async(const char *s, enum dl_dtb_async *out)
{
	if (!strcmp(s, "driver"))
		*out = DL_DTB_ASYNC_DRIVER;
	else if (!strcmp(s, "none"))
		*out = DL_DTB_ASYNC_NONE;
	else if (!strcmp(s, "all"))
		*out = DL_DTB_ASYNC_ALL;
	else
		return -EINVAL;
	return 0;
}

static bool drv_built(const struct dl_dtb_driver *drv)
{
	return drv && (drv->built == DL_DTB_BUILT_IN || drv->built == DL_DTB_MODULE);
}

/*
 * The bus a controller device @c puts its children on, by its driver's
 * directory: "i2c", "spi", or NULL.
 */
static const char *child_bus(const struct ddev *c)
{
	if (!c->drv || c->bind != B_BINDS)
		return NULL;
	if (!strncmp(c->drv->file, "drivers/i2c/", 12))
		return "i2c";
	if (!strncmp(c->drv->file, "drivers/spi/", 12))
		return "spi";
	return NULL;
}

/*
 * i2c_device_match()/spi_match_device() after the OF match: the driver's
 * id_table against the client's name, the first compatible without its
 * vendor prefix (of_alias_from_compatible()): "i2c:NAME" in the table.
 */
static const struct dl_dtb_driver *match_by_id(const struct imp *m, const struct ddev *d,
					       const char *first)
{
	const char *bus = d->parent >= 0 ? child_bus(&m->d[d->parent]) : NULL;
	const char *name = strchr(first, ',');
	char key[160];

	if (!bus)
		return NULL;
	name = name ? name + 1 : first;
	if (strlen(name) + 5 >= sizeof(key))
		return NULL;
	snprintf(key, sizeof(key), "%s:%s", bus, name);
	return dl_dtb_driver_of(m->opt.kernel, key);
}

/*
 * The driver that binds device @d (node @i): the first of its compatibles
 * (most specific first) whose driver is built in or a module; else the
 * first that has a driver in the source at all (not built: it never binds);
 * else none.  Under DL_DTB_DRIVERS_ALL every device binds, with its
 * table driver when there is one.  Then whether it suspends asynchronously.
 */
static void match_driver(struct imp *m, int i, struct ddev *d)
{
	int len, pos = 0;
	const char *p = fdt_getprop(m->fdt, m->n[i].off, "compatible", &len);

	d->drv = NULL;
	d->compat = NULL;
	while (p && len > 0 && pos < len) {
		const char *s = p + pos;
		size_t sl = strnlen(s, (size_t)(len - pos));
		const struct dl_dtb_driver *drv;

		if (pos + (int)sl >= len)	/* not NUL-terminated inside the property */
			break;
		drv = dl_dtb_driver_of(m->opt.kernel, s);
		if (drv && (drv_built(drv) || !d->drv)) {
			d->drv = drv;
			d->compat = s;
			if (drv_built(drv))
				break;
		}
		pos += (int)sl + 1;
	}
	d->by_id = 0;
	if (!drv_built(d->drv) && p && len > 0 && memchr(p, '\0', (size_t)len)) {
		const struct dl_dtb_driver *drv = match_by_id(m, d, p);

		if (drv && (drv_built(drv) || !d->drv)) {
			d->drv = drv;
			d->compat = p;
			d->by_id = 1;
		}
	}
	/* AMBA primecells match amba_id tables by peripheral ID, not by compatible */
	d->amba = !drv_built(d->drv) &&
		  fdt_node_check_compatible(m->fdt, m->n[i].off, "arm,primecell") == 0;
	if (m->opt.drivers == DL_DTB_DRIVERS_ALL || drv_built(d->drv) || d->amba)
		d->bind = B_BINDS;
	else
		d->bind = d->drv ? B_NOT_BUILT : B_NO_DRIVER;
	switch (m->opt.async) {
	case DL_DTB_ASYNC_ALL:
		d->async = 1;
		break;
	case DL_DTB_ASYNC_NONE:
		d->async = 0;
		break;
	default:
		d->async = d->bind == B_BINDS && d->drv &&
			   (d->drv->flags & (DL_DTB_DRV_ASYNC_OWN | DL_DTB_DRV_ASYNC_BUS));
		break;
	}
}

/*
 * Which nodes the kernel initialises before the driver model: of_clk_init()
 * takes every available node of its table; of_irq_init() takes the available
 * "interrupt-controller" nodes of its table, the root controller (no parent,
 * or itself) first, then those whose parent it initialised, and so on.
 */
static int mark_early(struct imp *m)
{
	int *cand = NULL, *par = NULL, ncand = 0;

	for (int i = 0; i < m->nn; i++) {
		unsigned kind = m->n[i].avail ? node_early_kind(m, i) : 0;

		m->n[i].early = (uint8_t)(kind & (DL_DTB_EARLY_CLK | DL_DTB_EARLY_CLK_DRIVER));
		if ((kind & DL_DTB_EARLY_IRQCHIP) && has_prop(m, i, "interrupt-controller")) {
			if (!cand) {
				cand = malloc((size_t)m->nn * sizeof(*cand));
				par = malloc((size_t)m->nn * sizeof(*par));
				if (!cand || !par) {
					free(cand);
					free(par);
					return nomem(m);
				}
			}
			cand[ncand] = i;
			par[ncand++] = -2;	/* not yet initialised */
		}
	}
	for (int k = 0; k < ncand; k++) {
		int i = cand[k], n, p = -1;
		const fdt32_t *ie = get_cells(m, i, "interrupts-extended", &n);

		if (ie && n >= 1)
			p = node_by_phandle(m, fdt32_ld(&ie[0]));
		if (p < 0)
			p = irq_parent(m, i);
		par[k] = p == i ? -1 : p;
	}
	/* a pass per level of the irqchip tree; at most ncand levels */
	for (int pass = 0, changed = 1; changed && pass <= ncand; pass++) {
		changed = 0;
		for (int k = 0; k < ncand; k++) {
			int i = cand[k];

			if (m->n[i].early & DL_DTB_EARLY_IRQCHIP)
				continue;
			if (par[k] == -1 || (par[k] >= 0 && (m->n[par[k]].early & DL_DTB_EARLY_IRQCHIP))) {
				m->n[i].early |= DL_DTB_EARLY_IRQCHIP;
				changed = 1;
			}
		}
	}
	free(cand);
	free(par);
	for (int i = 0; i < m->nn; i++) {
		int p = m->n[i].parent;

		m->early_nodes += m->n[i].early != 0;
		m->n[i].early_up = m->n[i].early || (p >= 0 && m->n[p].early_up);
	}
	return 0;
}

static int collect_devices(struct imp *m)
{
	int ret;

	m->d = calloc((size_t)m->nn, sizeof(*m->d));
	m->ph = calloc((size_t)m->nn, sizeof(*m->ph));
	if (!m->d || !m->ph)
		return nomem(m);
	for (int i = 0; i < m->nn; i++) {
		struct dnode *n = &m->n[i];

		if (n->phandle && n->phandle != 0xffffffffu)
			m->ph[m->nph++] = (struct ph_ent){ n->phandle, i };
	}
	qsort(m->ph, (size_t)m->nph, sizeof(*m->ph), cmp_ph);
	if ((ret = mark_early(m)))
		return ret;
	for (int i = 0; i < m->nn; i++) {
		struct dnode *n = &m->n[i];
		int p = n->parent, is_dev = 0;

		/* of_irq_init()/of_clk_init() set OF_POPULATED: no platform device */
		if (!(n->early & (DL_DTB_EARLY_IRQCHIP | DL_DTB_EARLY_CLK)) && p >= 0 && n->avail &&
		    fdt_getprop(m->fdt, n->off, "compatible", NULL)) {
			if (p == 0) {
				int nlen;
				const char *name = fdt_get_name(m->fdt, n->off, &nlen);

				is_dev = name && !skipped_top(name, nlen);
			} else if (m->n[p].dev >= 0) {
				/*
				 * of_platform_populate() creates the children of a bus
				 * (simple-bus & co.); any other device's children are
				 * created by its driver (i2c, spi, mfd): never, when it
				 * never binds.
				 */
				const struct ddev *pd = &m->d[m->n[p].dev];

				is_dev = pd->cls == C_BUS || pd->bind == B_BINDS;
				m->unpopulated += !is_dev;
			}
		}
		if (is_dev) {
			struct ddev *d = &m->d[m->nd];

			if (strlen(n->path) > DL_SC_MAX_NAME)
				return fail(m, "node path %.60s... longer than %u characters",
					    n->path, DL_SC_MAX_NAME);
			d->node = i;
			d->parent = p >= 0 ? m->n[p].owner : -1;
			if (has_compat(m, i, bus_compat))
				d->cls = C_BUS;
			else if (compat_contains(m, i, slow_pat))
				d->cls = C_SLOW;
			else if (compat_contains(m, i, fast_pat) ||
				 fdt_getprop(m->fdt, n->off, "gpio-controller", NULL) ||
				 fdt_getprop(m->fdt, n->off, "#clock-cells", NULL))
				d->cls = C_FAST;
			else if (d->parent >= 0 && m->d[d->parent].cls != C_BUS)
				d->cls = C_SERIAL;
			else
				d->cls = C_DEFAULT;
			match_driver(m, i, d);
			n->dev = m->nd++;
		}
		n->owner = n->dev >= 0 ? n->dev : (p >= 0 ? m->n[p].owner : -1);
	}
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	const struct dlink *x = a, *y = b;

	if (x->c != y->c)
		return x->c - y->c;
	if (x->s != y->s)
		return x->s - y->s;
	return x->kind - y->kind;	/* LK_OWN first: it wins the merge */
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Tarjan's strongly connected components over the devices, iteratively (no recursion
 * on a hostile DTB's depth): the graph in CSR, the walk's state, comp[] the result. */
struct scc {
	int nd;
	size_t *start;          /* the edges of v: adj[start[v] .. start[v + 1]) */
	int *adj;
	int *idx, *low, *comp, *stk, *cs;
	size_t *it;             /* the next edge of v to follow */
	char *on;               /* on stk */
	int counter, sp, ncomp;
};

static void scc_free(struct scc *g)
{
	free(g->start); free(g->adj); free(g->idx); free(g->low); free(g->comp); free(g->stk);
	free(g->cs); free(g->it); free(g->on);
}

/* The edges: each own link consumer -> supplier (proxies are SYNC_STATE_ONLY:
 * __fw_devlink_relax_cycles() does not follow them), and child -> parent.  0, or -ENOMEM. */
static int scc_graph(const struct imp *m, struct scc *g)
{
	int nd = m->nd;
	size_t ne = m->nl + (size_t)nd, n1 = (size_t)nd + 1;

	g->nd = nd;
	g->start = calloc(n1, sizeof(*g->start));
	g->adj = malloc((ne ? ne : 1) * sizeof(*g->adj));
	g->idx = malloc(n1 * sizeof(int));
	g->low = malloc(n1 * sizeof(int));
	g->comp = malloc(n1 * sizeof(int));
	g->stk = malloc(n1 * sizeof(int));
	g->cs = malloc(n1 * sizeof(int));
	g->it = malloc(n1 * sizeof(*g->it));
	g->on = calloc(n1, 1);
	if (!g->start || !g->adj || !g->idx || !g->low || !g->comp || !g->stk || !g->cs ||
	    !g->it || !g->on)
		return -ENOMEM;
	for (size_t k = 0; k < m->nl; k++)
		if (m->l[k].kind == LK_OWN)
			g->start[m->l[k].c + 1]++;
	for (int v = 0; v < nd; v++)
		if (m->d[v].parent >= 0)
			g->start[v + 1]++;
	for (int v = 0; v < nd; v++)
		g->start[v + 1] += g->start[v];
	for (int v = 0; v < nd; v++)
		g->it[v] = g->start[v];
	for (size_t k = 0; k < m->nl; k++)
		if (m->l[k].kind == LK_OWN)
			g->adj[g->it[m->l[k].c]++] = m->l[k].s;
	for (int v = 0; v < nd; v++)
		if (m->d[v].parent >= 0)
			g->adj[g->it[v]++] = m->d[v].parent;
	for (int v = 0; v < nd; v++)
		g->idx[v] = -1;
	return 0;
}

/* V enters the walk: numbered, on the stack of the component and the call stack. */
static void scc_enter(struct scc *g, int v, int *csp)
{
	g->idx[v] = g->low[v] = g->counter++;
	g->it[v] = g->start[v];
	g->stk[g->sp++] = v;
	g->on[v] = 1;
	g->cs[(*csp)++] = v;
}

/* The components reachable from ROOT (not yet walked). */
static void scc_walk(struct scc *g, int root)
{
	int csp = 0;

	scc_enter(g, root, &csp);
	while (csp) {
		int v = g->cs[csp - 1];

		if (g->it[v] < g->start[v + 1]) {
			int w = g->adj[g->it[v]++];

			if (g->idx[w] < 0)
				scc_enter(g, w, &csp);
			else if (g->on[w] && g->idx[w] < g->low[v])
				g->low[v] = g->idx[w];
			continue;
		}
		if (g->low[v] == g->idx[v]) {
			int w;

			do {
				w = g->stk[--g->sp];
				g->on[w] = 0;
				g->comp[w] = g->ncomp;
			} while (w != v);
			g->ncomp++;
		}
		csp--;
		if (csp && g->low[v] < g->low[g->cs[csp - 1]])
			g->low[g->cs[csp - 1]] = g->low[v];
	}
}

/* The own links on a dependency cycle (consumer and supplier in one component): marked,
 * counted in *NCYCLE.  0, or -ENOMEM. */
static int mark_cycles(struct imp *m, unsigned *ncycle)
{
	struct scc g = { 0 };
	int ret = 0;

	*ncycle = 0;
	if (scc_graph(m, &g)) {
		ret = nomem(m);
		goto out;
	}
	for (int root = 0; root < m->nd; root++)
		if (g.idx[root] < 0)
			scc_walk(&g, root);
	for (size_t k = 0; k < m->nl; k++)
		if (m->l[k].kind == LK_OWN && g.comp[m->l[k].c] == g.comp[m->l[k].s]) {
			m->l[k].cycle = 1;
			(*ncycle)++;
		}
out:
	scc_free(&g);
	return ret;
}

/*
 * json_string() returns NULL for bytes that are not UTF-8 and when memory ran
 * out: 1 if S is not valid UTF-8, 0 if it is, -ENOMEM if that cannot be told.
 */
static int not_utf8(const char *s)
{
	json_t *v = json_string(s);

	if (v) {
		json_decref(v);
		return 0;
	}
	/* the same bytes unchecked: if even that fails, memory ran out */
	v = json_stringn_nocheck(s, strlen(s));
	json_decref(v);
	return v ? 1 : -ENOMEM;
}

/* A JSON string from bytes that may not be UTF-8: error instead of NULL. */
static int put_str(struct imp *m, json_t *obj, const char *key, const char *s)
{
	json_t *v = json_string(s);

	if (!v)
		return not_utf8(s) == 1 ? fail(m, "'%s' value is not valid UTF-8", key) : nomem(m);
	if (json_object_set_new(obj, key, v))
		return nomem(m);
	return 0;
}

static int utf8_ok(const char *s)
{
	json_t *v = json_string(s);

	json_decref(v);
	return v != NULL;
}

/*
 * json_object_set_new() that remembers a failure (out of memory) in m->oom:
 * build_json() then fails instead of writing a scenario without the key.
 */
static void put(struct imp *m, json_t *o, const char *key, json_t *v)
{
	if (json_object_set_new(o, key, v))
		m->oom = 1;
}

/*
 * A device's latencies: GUESSES by class (above); a device that never binds
 * has no callbacks to run.  The latency atlas hooks in here by driver name:
 * d->drv ? d->drv->name : NULL (also the device's "x-driver").
 */
static void dev_latencies(struct imp *m, const struct ddev *d, json_t *o)
{
	if (d->bind != B_BINDS) {
		put(m, o, "probe", json_integer(0));
		put(m, o, "suspend", json_integer(0));
		put(m, o, "resume", json_integer(0));
	} else if (d->cls != C_DEFAULT) {
		put(m, o, "probe", json_string(classes[d->cls].probe));
		put(m, o, "suspend", json_string(classes[d->cls].suspend));
		put(m, o, "resume", json_string(classes[d->cls].resume));
	}
}

/* The "x-" keys that say where device @d's driver facts came from. */
static int dev_facts(struct imp *m, const struct ddev *d, json_t *o)
{
	static const char *const built[] = { "built in", "module", "not built", "build unknown" };
	const struct dl_dtb_driver *drv = d->drv;
	const char *kv = m->opt.kernel == DL_DTB_K73 ? "7.3" : "6.12";
	char why[512];
	int ret;

	put(m, o, "x-driver", drv && d->bind == B_BINDS ? json_string(drv->name) :
				json_null());
	if (drv) {
		if ((ret = put_str(m, o, "x-compatible", d->compat)))
			return ret;
		if (d->by_id)
			put(m, o, "x-match", json_string(
				"the bus's device_id table: the first compatible without its vendor"));
		put(m, o, "x-driver-file", json_string(drv->file));
		put(m, o, "x-driver-bus", json_string(drv->bus));
		snprintf(why, sizeof(why), "%s (%s in Debian's arm64 config of %s)",
			 built[drv->built < 4 ? drv->built : 3],
			 *drv->config ? drv->config : "no CONFIG_ symbol", kv);
		put(m, o, "x-driver-build", json_string(why));
		put(m, o, "x-probe-async",
				    json_boolean(drv->flags & DL_DTB_DRV_ASYNC_PROBE));
		put(m, o, "x-runtime-pm", json_boolean(drv->flags & DL_DTB_DRV_RPM));
	}
	if (d->amba && m->opt.drivers == DL_DTB_DRIVERS_TABLE) {
		put(m, o, "x-driver-bus", json_string("amba"));
		put(m, o, "x-why", json_string(
			"assumed to bind: an AMBA primecell, matched by peripheral ID (amba_id "
			"tables), not by compatible; its driver's facts are unknown"));
	}
	if (d->bind != B_BINDS) {
		if (d->bind == B_NOT_BUILT)
			snprintf(why, sizeof(why), "never binds: its driver %s (%s) is not built in "
				 "Debian's arm64 config of %s", drv->name, drv->file, kv);
		else
			snprintf(why, sizeof(why), "never binds: no driver for its compatibles in "
				 "Linux %s's source (no of_device_id entry)", kv);
		put(m, o, "x-binds", json_false());
		put(m, o, "x-why", json_string(why));
	}
	if (m->opt.async == DL_DTB_ASYNC_ALL)
		snprintf(why, sizeof(why), "--async all");
	else if (m->opt.async == DL_DTB_ASYNC_NONE)
		snprintf(why, sizeof(why), "--async none");
	else if (d->bind != B_BINDS || !drv)
		snprintf(why, sizeof(why), "sync: no driver");
	else if (drv->flags & DL_DTB_DRV_ASYNC_OWN)
		snprintf(why, sizeof(why), "async: %s calls device_enable_async_suspend()",
			 drv->file);
	else if (drv->flags & DL_DTB_DRV_ASYNC_BUS)
		snprintf(why, sizeof(why), "async: the %s bus core enables it for every device",
			 drv->bus);
	else
		snprintf(why, sizeof(why), "sync: neither %s nor the %s bus calls "
			 "device_enable_async_suspend()", drv->file, drv->bus);
	put(m, o, "x-async", json_string(why));
	return 0;
}

/* The scenario's name: the DTB's model, else its file name (without folders). */
static void put_name(struct imp *m, json_t *root)
{
	const char *model, *b;
	int len;

	model = fdt_getprop(m->fdt, 0, "model", &len);
	if (model && len > 1 && memchr(model, '\0', (size_t)len) && utf8_ok(model) &&
	    !put_str(m, root, "name", model))
		return;
	b = strrchr(m->label, '/');
	b = b ? b + 1 : m->label;
	if (!utf8_ok(b))
		b = "dtb";
	put(m, root, "name", json_string(b));
}

/* "x-doc": the rules the import followed, the options it took, where latencies come from. */
static void put_doc(struct imp *m, json_t *root)
{
	char doc[4096];

	snprintf(doc, sizeof(doc),
		 "Imported from %s by dlsim import-dtb with fw_devlink's rules of Linux %s "
		 "(drivers/base/core.c, drivers/of/property.c): a property of a device's own node "
		 "gives it a link with the default flags (fw_devlink=on: INFERRED, "
		 "AUTOPROBE_CONSUMER, PM_RUNTIME); a property of a child node that is not a "
		 "device gives the owning device a SYNC_STATE_ONLY proxy that gates nothing; "
		 "links on a dependency cycle are INFERRED, SYNC_STATE_ONLY, CYCLE; suppliers "
		 "initialised before the driver model (IRQCHIP_DECLARE, CLK_OF_DECLARE "
		 "compatibles of 6.12) get no links (%u such nodes, %u links dropped). "
		 "Drivers: %s. "
		 "Async suspend: %s. "
		 "Latencies of a device that binds come from dlsim's latency atlas (dlsim atlas; "
		 "import-dtb and sweep --dtbs) where a real log has its driver, else its subsystem "
		 "(its node name without unit address or number), per phase: the median of the "
		 "logged callbacks; \"x-latency\" names each one's log and lines.  The others are "
		 "GUESSES by device class from compatible strings: default probe %s suspend %s "
		 "resume %s; bus (simple-bus etc.) "
		 "%s/%s/%s; fast (clock, regulator, pinctrl, gpio, reset controllers) %s/%s/%s; "
		 "serial-bus devices (i2c/spi children) %s/%s/%s; slow (display, gpu, camera, "
		 "video) %s/%s/%s.",
		 utf8_ok(m->label) ? m->label : "a DTB",
		 m->opt.kernel == DL_DTB_K73 ? "7.3" : "6.12", m->early_nodes, m->early_dropped,
		 m->opt.drivers == DL_DTB_DRIVERS_ALL ? "every device binds (--drivers all)" :
		 "each device binds the driver that Linux's source has for its most specific "
		 "compatible (an of_device_id table; sim/scenario/gen-dtb-drivers.sh), when Debian's "
		 "arm64 config builds it in or as a module; a device without one never binds: it "
		 "has no callbacks (latency 0), its own links to suppliers are kept, links to it "
		 "are relaxed to SYNC_STATE_ONLY as fw_devlink_drivers_done() does when the "
		 "deferred-probe timeout expires (the consumers' wait until then, 10 s by default "
		 "in a kernel with modules, is not modelled), "
		 "children its driver would create do not exist (see each device's x-driver, "
		 "x-binds, x-why)",
		 m->opt.async == DL_DTB_ASYNC_ALL ? "every device (--async all)" :
		 m->opt.async == DL_DTB_ASYNC_NONE ? "no device (--async none)" :
		 "a device whose driver calls device_enable_async_suspend() or whose bus core does "
		 "(i2c clients, sdio, usb, pci, ...); \"async\" also allows async probe here, "
		 "x-probe-async says whether the driver asks for it (PROBE_PREFER_ASYNCHRONOUS)",
		 classes[0].probe, classes[0].suspend, classes[0].resume,
		 classes[1].probe, classes[1].suspend, classes[1].resume,
		 classes[2].probe, classes[2].suspend, classes[2].resume,
		 classes[3].probe, classes[3].suspend, classes[3].resume,
		 classes[4].probe, classes[4].suspend, classes[4].resume);
	if (!utf8_ok(doc))
		snprintf(doc, sizeof(doc), "Imported by dlsim import-dtb; latencies are guesses.");
	put(m, root, "x-doc", json_string(doc));
}

/* "defaults" (the class of guesses every device falls back on) and "x-driver-facts". */
static void put_defaults(struct imp *m, json_t *root)
{
	json_t *defs = json_object();

	if (!defs) {
		m->oom = 1;
		return;
	}
	put(m, defs, "probe", json_string(classes[0].probe));
	put(m, defs, "suspend", json_string(classes[0].suspend));
	put(m, defs, "resume", json_string(classes[0].resume));
	put(m, defs, "async", json_boolean(m->opt.async == DL_DTB_ASYNC_ALL));
	put(m, root, "defaults", defs);
	put(m, root, "x-driver-facts",
			    json_string(m->opt.drivers == DL_DTB_DRIVERS_ALL ? "--drivers all" :
					dl_dtb_driver_source(m->opt.kernel)));
}

/* Device D as a scenario device appended to DEVS: 0 or a negative errno (m->err said). */
static int put_device(struct imp *m, const struct ddev *d, json_t *devs)
{
	json_t *o = json_object();
	int ret;

	if (!o || json_array_append_new(devs, o))
		return nomem(m);
	if ((ret = put_str(m, o, "name", m->n[d->node].path)))
		return ret;
	if (d->parent >= 0)
		put(m, o, "parent", json_string(m->n[m->d[d->parent].node].path));
	if (d->async != (m->opt.async == DL_DTB_ASYNC_ALL))
		put(m, o, "async", json_boolean(d->async));
	dev_latencies(m, d, o);
	if ((ret = dev_facts(m, d, o)))
		return ret;
	if (d->bind == B_BINDS && m->opt.dev_hook &&
	    (ret = m->opt.dev_hook(m->opt.dev_hook_ctx, d->drv ? d->drv->name : NULL,
				   d->drv ? d->compat : NULL, o))) {
		snprintf(m->err->msg, sizeof(m->err->msg), "%s: device %s: latencies: %s",
			 m->label, m->n[d->node].path, ret == -ENOMEM || ret == ENOMEM ?
			 "out of memory" : strerror(ret < 0 ? -ret : ret));
		return ret < 0 ? ret : -ret;
	}
	return 0;
}

/* Every link appended to LINKS with its fw_devlink flags: 0, or -ENOMEM (m->err said). */
static int put_links(struct imp *m, json_t *links)
{
	/* FW_DEVLINK_FLAGS_RPM; fw_devlink_get_flags() of a cycle; FW_DEVLINK_FLAGS_PERMISSIVE */
	json_t *flags_n = json_pack("[sss]", "INFERRED", "AUTOPROBE_CONSUMER", "PM_RUNTIME");
	json_t *flags_c = json_pack("[sss]", "INFERRED", "SYNC_STATE_ONLY", "CYCLE");
	json_t *flags_p = json_pack("[ss]", "INFERRED", "SYNC_STATE_ONLY");
	int ret = 0;

	for (size_t k = 0; flags_n && flags_c && flags_p && k < m->nl; k++) {
		const struct dlink *l = &m->l[k];
		json_t *o = json_pack("{s:s, s:s, s:O}",
				      "consumer", m->n[m->d[l->c].node].path,
				      "supplier", m->n[m->d[l->s].node].path,
				      "flags", l->kind == LK_PROXY ? flags_p :
					       l->cycle ? flags_c : l->relaxed ? flags_p : flags_n);

		if (o && l->relaxed)
			put(m, o, "x-relaxed", json_string(
				"the supplier never binds: fw_devlink_drivers_done() relaxes the "
				"link to SYNC_STATE_ONLY when the deferred-probe timeout expires "
				"(10 s by default with modules; late_initcall without); the "
				"consumer's wait until then is not modelled"));
		if (!o || json_array_append_new(links, o)) {
			json_decref(flags_p);
			flags_p = NULL;
		}
	}
	if (!flags_n || !flags_c || !flags_p)
		ret = nomem(m);
	json_decref(flags_n);
	json_decref(flags_c);
	json_decref(flags_p);
	return ret;
}

/* The scenario of the imported DTB into *OUT: 0, or a negative errno (m->err said). */
static int build_json(struct imp *m, json_t **out)
{
	json_t *root = json_object(), *devs = json_array(), *links = json_array();
	int ret = -ENOMEM;

	if (!root || !devs || !links)
		goto oom;
	put(m, root, "format", json_string(DL_SC_FORMAT));
	put_name(m, root);
	put_doc(m, root);
	put(m, root, "seed", json_integer(1));
	put_defaults(m, root);
	for (int i = 0; i < m->nd; i++)
		if ((ret = put_device(m, &m->d[i], devs)))
			goto err;
	if ((ret = put_links(m, links)))
		goto err;
	put(m, root, "devices", devs);
	put(m, root, "links", links);
	devs = links = NULL;
	if (m->oom)
		goto oom;
	*out = root;
	return 0;
oom:
	ret = nomem(m);
err:
	json_decref(root);
	json_decref(devs);
	json_decref(links);
	return ret;
}

int dl_dtb_import(const void *blob, size_t len, const char *label, json_t **out,
		  struct dl_dtb_stats *st, struct dl_error *err)
{
	return dl_dtb_import_opts(blob, len, label, NULL, out, st, err);
}

/*
 * libfdt 1.6.1's fdt_next_tag() adds a property's length to an int offset:
 * a length near 2^32 wraps it backwards, and fdt_check_full() walks the same
 * tokens over and over (minutes for an 848-byte file fuzz_dtb found, whose
 * property claims 0xfffffff4 bytes).  So the structure block's tokens are
 * walked here first, with 64-bit offsets, and a property that does not fit is
 * refused; every other defect is left to fdt_check_full() to name.
 */
static bool struct_bad_prop(const void *blob, uint32_t *at)
{
	const uint8_t *p = blob;
	uint64_t off = fdt_off_dt_struct(blob), end = fdt_totalsize(blob);
	uint32_t v;

	if (fdt_version(blob) >= 17 && off + fdt_size_dt_struct(blob) < end)
		end = off + fdt_size_dt_struct(blob);
	while (off + 4 <= end) {
		memcpy(&v, p + off, 4);
		off += 4;
		switch (fdt32_to_cpu(v)) {
		case FDT_BEGIN_NODE: {
			const uint8_t *nul = memchr(p + off, 0, (size_t)(end - off));

			if (!nul)
				return false;
			off = (uint64_t)(nul - p) + 1;
			break;
		}
		case FDT_PROP:
			if (off + 8 > end)
				return false;
			memcpy(&v, p + off, 4);
			if (fdt32_to_cpu(v) > end - off - 8) {
				*at = (uint32_t)(off - 4);
				return true;
			}
			off += 8 + fdt32_to_cpu(v);
			break;
		case FDT_END_NODE:
		case FDT_NOP:
			break;
		default:                /* FDT_END, or a defect libfdt names */
			return false;
		}
		off = (off + FDT_TAGSIZE - 1) & ~(uint64_t)(FDT_TAGSIZE - 1);
	}
	return false;
}

/* BLOB (LEN bytes) is a whole DTB libfdt can walk safely: 0, or fail()'s code. */
static int check_blob(struct imp *m, const void *blob, size_t len)
{
	uint32_t bad_at = 0;
	int ret;

	if (!blob || len < sizeof(struct fdt_header))
		return fail(m, "%zu bytes: too short for a flattened device tree header", len);
	if (len > DL_DTB_MAX_FILE)
		return fail(m, "larger than %u bytes", DL_DTB_MAX_FILE);
	if ((ret = fdt_check_header(blob)))
		return fail(m, "not a valid DTB header: %s", fdt_strerror(ret));
	if (fdt_totalsize(blob) > len)
		return fail(m, "truncated: header says %u bytes, file has %zu",
			    fdt_totalsize(blob), len);
	/* libfdt 1.6.1's fdt_check_full() dereferences NULL on a version < 16
	 * tree (names are full paths there); Linux needs 16+ anyway */
	if (fdt_version(blob) < 16)
		return fail(m, "DTB version %u: versions before 16 are not supported"
			    " (dtc writes 17)", fdt_version(blob));
	if (fdt_off_dt_struct(blob) < fdt_totalsize(blob) && struct_bad_prop(blob, &bad_at))
		return fail(m, "malformed DTB: the property at offset %u claims more bytes than"
			    " the structure block holds", bad_at);
	if ((ret = fdt_check_full(blob, len)))
		return fail(m, "malformed DTB: %s", fdt_strerror(ret));
	return 0;
}

/* One link per consumer and supplier (several properties may name the same pair). */
static void dedup_links(struct imp *m)
{
	size_t w = 1;

	if (!m->nl)
		return;
	qsort(m->l, m->nl, sizeof(*m->l), cmp_link);
	for (size_t k = 1; k < m->nl; k++)
		if (m->l[k].c != m->l[w - 1].c || m->l[k].s != m->l[w - 1].s)
			m->l[w++] = m->l[k];
	m->nl = w;
}

/* A hostile DTB may repeat a sibling name: device names must be unique. */
static int check_unique_paths(struct imp *m)
{
	char **names = malloc(((size_t)m->nd + 1) * sizeof(*names));
	int ret = 0;

	if (!names)
		return nomem(m);
	for (int i = 0; i < m->nd; i++)
		names[i] = m->n[m->d[i].node].path;
	qsort(names, (size_t)m->nd, sizeof(*names), cmp_strp);
	for (int i = 1; i < m->nd && !ret; i++)
		if (!strcmp(names[i - 1], names[i]))
			ret = fail(m, "duplicate node path %s", names[i]);
	free(names);
	return ret;
}

/* What the import found (NCYCLE links on cycles), for import-dtb's summary. */
static void fill_stats(const struct imp *m, unsigned ncycle, struct dl_dtb_stats *st)
{
	*st = (struct dl_dtb_stats){ (unsigned)m->nn, (unsigned)m->nd, (unsigned)m->nl, ncycle,
				     .early_nodes = m->early_nodes,
				     .early_dropped = m->early_dropped };
	for (size_t k = 0; k < m->nl; k++) {
		st->proxy += m->l[k].kind == LK_PROXY;
		st->blocking += m->l[k].kind == LK_OWN && !m->l[k].cycle && !m->l[k].relaxed;
		st->relaxed += m->l[k].relaxed;
	}
	st->unpopulated = m->unpopulated;
	for (int i = 0; i < m->nd; i++) {
		st->known_driver += m->d[i].drv != NULL;
		st->bound += m->d[i].bind == B_BINDS;
		st->never_bind += m->d[i].bind != B_BINDS;
		st->not_built += m->d[i].bind == B_NOT_BUILT;
		st->async_devices += m->d[i].async;
	}
}

static void imp_free(struct imp *m)
{
	for (int i = 0; i < m->nn; i++)
		free(m->n[i].path);
	free(m->n);
	free(m->d);
	free(m->l);
	free(m->ph);
}

int dl_dtb_import_opts(const void *blob, size_t len, const char *label,
		       const struct dl_dtb_opts *opt, json_t **out, struct dl_dtb_stats *st,
		       struct dl_error *err)
{
	struct imp m = { .fdt = blob, .err = err, .label = label ? label : "(dtb)" };
	unsigned ncycle = 0;
	int ret;

	if (opt)
		m.opt = *opt;
	*out = NULL;
	if ((ret = check_blob(&m, blob, len)))
		return ret;
	if (!(ret = collect_nodes(&m)) && !(ret = collect_devices(&m))) {
		for (int i = 0; i < m.nn && !ret; i++)
			ret = node_links(&m, i);
	}
	if (!ret) {
		dedup_links(&m);
		ret = check_unique_paths(&m);
	}
	if (!ret)
		ret = mark_cycles(&m, &ncycle);
	/* a link to a supplier that never binds: relaxed (fw_devlink_drivers_done()) */
	for (size_t k = 0; !ret && k < m.nl; k++)
		m.l[k].relaxed = m.l[k].kind == LK_OWN && !m.l[k].cycle &&
				 m.d[m.l[k].s].bind != B_BINDS;
	if (!ret)
		ret = build_json(&m, out);
	if (!ret && st)
		fill_stats(&m, ncycle, st);
	imp_free(&m);
	return ret;
}

int dl_dtb_import_file(const char *path, json_t **out, struct dl_dtb_stats *st,
		       struct dl_error *err)
{
	return dl_dtb_import_file_opts(path, NULL, out, st, err);
}

int dl_dtb_import_file_opts(const char *path, const struct dl_dtb_opts *opt, json_t **out,
			    struct dl_dtb_stats *st, struct dl_error *err)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf;
	int ret;

	*out = NULL;
	if (!f) {
		ret = -errno;
		snprintf(err->msg, sizeof(err->msg), "%s: %s", path,
			 errno == ENOMEM ? "out of memory" : strerror(errno));
		return ret ? ret : -ENOENT;
	}
	buf = malloc(cap);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);

		n += r;
		if (r == 0)
			break;
		if (n == cap) {
			char *nb;

			if (cap > DL_DTB_MAX_FILE) {
				fclose(f);
				free(buf);
				snprintf(err->msg, sizeof(err->msg),
					 "%s: larger than %u bytes; expected a DTB", path,
					 DL_DTB_MAX_FILE);
				return -EINVAL;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (!buf) {
		fclose(f);
		snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
		return -ENOMEM;
	}
	if (ferror(f)) {
		snprintf(err->msg, sizeof(err->msg), "%s: read error", path);
		fclose(f);
		free(buf);
		return -EIO;
	}
	fclose(f);
	ret = dl_dtb_import_opts(buf, n, path, opt, out, st, err);
	free(buf);
	return ret;
}
