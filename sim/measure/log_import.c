/*
 * log_import.c - the line parser of import-log: each line of a kernel log
 * is matched against the formats of log_import.h by hand (no regex: a 10 MB
 * log must take well under a second), callbacks are paired and assigned to
 * a cycle and a phase.  Lines that match nothing are counted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/measure/log_import.h"

const char dl_log_formats_help[] =
	"dmesg with initcall_debug (\"DRV DEV: PM: calling CB @ PID, parent: P\" / \"... returned R "
	"after N usecs\", 3.x \"calling  DEV+ @ PID, parent: P\" / \"call DEV+ returned R after N "
	"usecs\", \"probe of DEV returned R after N usecs\"), phase totals (\"PM: suspend of devices "
	"complete after X msecs\"), or ftrace (device_pm_callback_start/end, suspend_resume)";

/* A "calling" seen, waiting for its "returned". */
struct dl_lg_pending {
	int64_t ts;
	uint32_t pid, line;
	uint8_t open, key;
};

/* Where in the input we are, for notes. */
struct cursor {
	uint32_t file, line;
	uint32_t tpid;		/* [Tn] caller prefix, or DL_LG_NONE */
	int64_t ts;		/* -1 when the line has no time stamp */
	bool wall;		/* its prefix had the only time: a wall clock to the second */
};

void dl_log_init(struct dl_logimport *li)
{
	memset(li, 0, sizeof(*li));
	li->main_gap_ns = -1;
	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		li->gap_ns[k] = -1;
}

void dl_log_free(struct dl_logimport *li)
{
	free(li->names);
	free(li->hash);
	free(li->dev);
	free(li->smp);
	free(li->tot);
	free(li->cyc);
	free(li->pend);
	free(li->order);
	free(li->probe_smp);
	free(li->wait);
	free(li->hang);
	free(li->ofail);
	free(li->fold);
	free(li->fail);
	for (uint32_t i = 0; i < li->nfiles; i++)
		free(li->files[i]);
	free(li->files);
	memset(li, 0, sizeof(*li));
}

static void note(struct dl_logimport *li, const struct cursor *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A contradiction in the data: counted, and the first DL_LG_MAX_NOTES kept. */
static void note(struct dl_logimport *li, const struct cursor *c, const char *fmt, ...)
{
	va_list ap;

	li->ncontradictions++;
	if (li->nnote == DL_LG_MAX_NOTES)
		return;
	li->note[li->nnote].file = c->file;
	li->note[li->nnote].line = c->line;
	va_start(ap, fmt);
	vsnprintf(li->note[li->nnote].msg, sizeof(li->note[0].msg), fmt, ap);
	va_end(ap);
	li->nnote++;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	/* not zeroed: untouched capacity costs no memory (RSS), only address space */
	q = realloc(*p, (size_t)c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

const char *dl_lg_name(const struct dl_logimport *li, uint32_t dev)
{
	return li->names + li->dev[dev].name_off;
}

/* Enter device @d, named s[0..n), in the first free slot of its probe sequence. */
static void hash_put(struct dl_logimport *li, uint32_t d, const char *s, size_t n)
{
	uint32_t i = name_hash(s, n) & li->hash_mask;

	while (li->hash[i])
		i = (i + 1) & li->hash_mask;
	li->hash[i] = d + 1;
}

static int rehash(struct dl_logimport *li, uint32_t size)
{
	uint32_t *h = calloc(size, sizeof(*h));

	if (!h)
		return -ENOMEM;
	free(li->hash);
	li->hash = h;
	li->hash_mask = size - 1;
	for (uint32_t d = 0; d < li->ndev; d++) {
		const char *nm = dl_lg_name(li, d);

		hash_put(li, d, nm, strlen(nm));
	}
	return 0;
}

/* Append s[0..n) and a NUL to the names arena: its offset, or UINT32_MAX without memory. */
static uint32_t put_name(struct dl_logimport *li, const char *s, size_t n)
{
	uint32_t off;

	if (li->names_len + n + 1 > li->names_cap) {
		size_t c = li->names_cap ? li->names_cap * 2 : 4096;
		char *q;

		while (c < li->names_len + n + 1)
			c *= 2;
		q = realloc(li->names, c);
		if (!q)
			return UINT32_MAX;
		li->names = q;
		li->names_cap = c;
	}
	memcpy(li->names + li->names_len, s, n);
	li->names[li->names_len + n] = '\0';
	off = (uint32_t)li->names_len;
	li->names_len += n + 1;
	return off;
}

/*
 * A name as stored: cut to DL_SC_MAX_NAME, and a byte that is not printable
 * ASCII (console garbage: kernel names are ASCII) becomes '?', so that every
 * name is valid JSON text.  @buf: DL_SC_MAX_NAME + 1 bytes.  Its length.
 */
static size_t clean_name(const char *s, size_t n, char *buf)
{
	if (n > DL_SC_MAX_NAME)
		n = DL_SC_MAX_NAME;
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f ? '?' : s[i];
	buf[n] = '\0';
	return n;
}

/* A new device named s[0..n) of driver drv[0..ndrv) (none: ndrv 0); DL_LG_NONE: no memory. */
static uint32_t create(struct dl_logimport *li, const char *drv, size_t ndrv, const char *s,
		       size_t n)
{
	uint32_t d, name_off, drv_off = UINT32_MAX;

	if (n > DL_SC_MAX_NAME)
		n = DL_SC_MAX_NAME;
	if (ndrv > DL_SC_MAX_NAME)
		ndrv = DL_SC_MAX_NAME;
	if ((li->ndev + 1) * 2 > li->hash_mask + 1 &&
	    rehash(li, li->hash ? 2 * (li->hash_mask + 1) : 1024))
		return DL_LG_NONE;
	if (grow((void **)&li->dev, &li->cap_dev, li->ndev + 1, sizeof(*li->dev)) ||
	    grow((void **)&li->pend, &li->cap_pend, li->ndev + 1, sizeof(*li->pend)))
		return DL_LG_NONE;
	name_off = put_name(li, s, n);
	if (name_off == UINT32_MAX || (ndrv && (drv_off = put_name(li, drv, ndrv)) == UINT32_MAX))
		return DL_LG_NONE;
	d = li->ndev++;
	li->dev[d] = (struct dl_lg_device){ .name_off = name_off, .parent = DL_LG_NONE,
					    .drv_off = drv_off };
	li->pend[d] = (struct dl_lg_pending){ 0 };
	hash_put(li, d, s, n);
	return d;
}

const char *dl_lg_driver(const struct dl_logimport *li, uint32_t dev)
{
	return li->dev[dev].drv_off == UINT32_MAX ? "" : li->names + li->dev[dev].drv_off;
}

/* Is the stored name @nm the text s[0..n)? */
static bool name_is(const char *nm, const char *s, size_t n)
{
	return !strncmp(nm, s, n) && !nm[n];
}

/* The next device after hash slot *slot named s[0..n) (start: first_named()). */
static uint32_t next_named(const struct dl_logimport *li, const char *s, size_t n, uint32_t *slot)
{
	if (!li->hash)
		return DL_LG_NONE;
	for (;;) {
		uint32_t d;
		const char *nm;

		*slot = (*slot + 1) & li->hash_mask;
		d = li->hash[*slot];
		if (!d)
			return DL_LG_NONE;
		nm = li->names + li->dev[d - 1].name_off;
		if (name_is(nm, s, n))
			return d - 1;
	}
}

/*
 * The first device named s[0..n), or DL_LG_NONE; *slot is left where
 * next_named() goes on to the next of that name.
 */
static uint32_t first_named(const struct dl_logimport *li, const char *s, size_t n,
			    uint32_t *slot)
{
	*slot = (name_hash(s, n) - 1) & li->hash_mask;
	return next_named(li, s, n, slot);
}

/* The first device named s[0..n). */
static uint32_t find_n(const struct dl_logimport *li, const char *s, size_t n)
{
	uint32_t slot;

	return first_named(li, s, n, &slot);
}

/* A line's device name and the parent it names (npar 0: none), as stored (clean_name()). */
struct line_names {
	char s[DL_SC_MAX_NAME + 1], par[DL_SC_MAX_NAME + 1];
	size_t n, npar;
};

static void clean_line_names(struct line_names *ln, const char *s, size_t n, const char *par,
			     size_t npar)
{
	ln->n = clean_name(s, n, ln->s);
	ln->npar = par ? clean_name(par, npar, ln->par) : 0;
}

/*
 * The device a line names, keyed by (driver, name): the kernel prints
 * dev_driver_string() (the driver, else the bus or class) before the name,
 * and 0:0:0:0 of sd, scsi_disk and bsg are three devices.  A device first
 * seen without a driver (as a parent, in a 3.x line) takes this one's;
 * par[0..npar): the parent the line names, if it names one.
 */
static uint32_t intern_drv(struct dl_logimport *li, const char *drv, size_t ndrv, const char *s,
			   size_t n, const char *par, size_t npar)
{
	char db[DL_SC_MAX_NAME + 1];
	struct line_names ln;
	uint32_t slot, d, bare = DL_LG_NONE;

	clean_line_names(&ln, s, n, par, npar);
	ndrv = clean_name(drv, ndrv, db);
	for (d = first_named(li, ln.s, ln.n, &slot); d != DL_LG_NONE;
	     d = next_named(li, ln.s, ln.n, &slot)) {
		const char *dr = dl_lg_driver(li, d);
		uint32_t p = li->dev[d].parent;

		if (name_is(dr, db, ndrv))
			return d;
		/* of the driverless ones, the one with this parent (3.x's twins) */
		if (!*dr && (bare == DL_LG_NONE || (ln.npar && p != DL_LG_NONE &&
						    name_is(dl_lg_name(li, p), ln.par, ln.npar))))
			bare = d;
	}
	if (bare != DL_LG_NONE && ndrv) {
		uint32_t off = put_name(li, db, ndrv);

		if (off == UINT32_MAX)
			return DL_LG_NONE;
		li->dev[bare].drv_off = off;
		return bare;
	}
	return create(li, db, ndrv, ln.s, ln.n);
}

/* The device named s[0..n), by name alone (the first of that name), created when new. */
static uint32_t intern(struct dl_logimport *li, const char *s, size_t n)
{
	char nb[DL_SC_MAX_NAME + 1];
	uint32_t d;

	n = clean_name(s, n, nb);
	d = find_n(li, nb, n);
	return d != DL_LG_NONE ? d : create(li, NULL, 0, nb, n);
}

/*
 * A parent named s[0..n) of @child: a device of that name other than the
 * child (scsi_disk 0:0:0:0's parent is sd 0:0:0:0), created when new.
 */
static uint32_t intern_parent(struct dl_logimport *li, const char *s, size_t n, uint32_t child)
{
	char nb[DL_SC_MAX_NAME + 1];
	uint32_t slot, d;

	n = clean_name(s, n, nb);
	for (d = first_named(li, nb, n, &slot); d != DL_LG_NONE; d = next_named(li, nb, n, &slot))
		if (d != child)
			return d;
	return create(li, NULL, 0, nb, n);
}

/*
 * A 3.x line names a device without its driver: of the devices of that
 * name, the one whose parent is named par[0..npar) (a 3.x "calling" line),
 * or with a call open (its "call ... returned"; npar 0).  A different
 * parent is a different device (the platform and ACPI PNP0C0B:00).
 * Picks by parent where intern_drv() picks by driver.
 */
static uint32_t intern_3x(struct dl_logimport *li, const char *s, size_t n, const char *par,
			  size_t npar)
{
	struct line_names ln;
	uint32_t slot, d, first = DL_LG_NONE, loose = DL_LG_NONE;

	clean_line_names(&ln, s, n, par, npar);
	for (d = first_named(li, ln.s, ln.n, &slot); d != DL_LG_NONE;
	     d = next_named(li, ln.s, ln.n, &slot)) {
		uint32_t p = li->dev[d].parent;
		const char *pn = p == DL_LG_NONE ? "none" : dl_lg_name(li, p);

		if (first == DL_LG_NONE)
			first = d;
		if (!ln.npar ? li->pend[d].open : name_is(pn, ln.par, ln.npar))
			return d;
		if (ln.npar && p == DL_LG_NONE && loose == DL_LG_NONE)
			loose = d;
	}
	if (!ln.npar && first != DL_LG_NONE)
		return first;
	if (loose != DL_LG_NONE)
		return loose;
	return create(li, NULL, 0, ln.s, ln.n);
}

/*
 * Scenario names: a name the log gives several devices becomes "DRV NAME"
 * as the kernel prints it ("sd 0:0:0:0", "scsi_disk 0:0:0:0"); a second
 * one without a driver (3.x lines) "NAME#k".  Others keep their name.
 */
int dl_lg_make_labels(struct dl_logimport *li)
{
	for (uint32_t d = 0; d < li->ndev; d++) {
		const char *nm = dl_lg_name(li, d), *drv = dl_lg_driver(li, d);
		size_t n = strlen(nm);
		uint32_t slot, o, same = 0, bare_before = 0;
		char buf[2 * DL_SC_MAX_NAME + 16];
		uint32_t off;

		li->dev[d].label_off = li->dev[d].name_off;
		for (o = first_named(li, nm, n, &slot); o != DL_LG_NONE;
		     o = next_named(li, nm, n, &slot)) {
			same += o != d;
			bare_before += o < d && !*dl_lg_driver(li, o);
		}
		if (!same || (!*drv && !bare_before))
			continue;
		if (*drv)
			snprintf(buf, sizeof(buf), "%s %s", drv, nm);
		else
			snprintf(buf, sizeof(buf), "%s#%u", nm, bare_before + 1);
		off = put_name(li, buf, strlen(buf));
		if (off == UINT32_MAX)
			return -ENOMEM;
		li->dev[d].label_off = off;
	}
	return 0;
}

const char *dl_lg_label(const struct dl_logimport *li, uint32_t dev)
{
	return li->names + li->dev[dev].label_off;
}

/* "DRV NAME" (a label): the device of that driver and name. */
static uint32_t find_drv(const struct dl_logimport *li, const char *label)
{
	const char *sp = strrchr(label, ' '), *nm;
	uint32_t slot, d;
	size_t n;

	if (!sp || !li->hash)
		return DL_LG_NONE;
	nm = sp + 1;
	n = strlen(nm);
	for (d = first_named(li, nm, n, &slot); d != DL_LG_NONE; d = next_named(li, nm, n, &slot)) {
		const char *dr = dl_lg_driver(li, d);

		if (strlen(dr) == (size_t)(sp - label) && !memcmp(dr, label, (size_t)(sp - label)))
			return d;
	}
	return DL_LG_NONE;
}

uint32_t dl_lg_find(const struct dl_logimport *li, const char *name)
{
	uint32_t d = find_n(li, name, strlen(name));

	return d != DL_LG_NONE ? d : find_drv(li, name);
}

/* ---- small matchers over [p, e) ---- */

static bool starts(const char *p, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - p) >= n && !memcmp(p, lit, n);
}

static const char *find(const char *p, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	for (; (size_t)(e - p) >= n; p++) {
		p = memchr(p, lit[0], (size_t)(e - p) - n + 1);
		if (!p)
			return NULL;
		if (!memcmp(p, lit, n))
			return p;
	}
	return NULL;
}

/* A token ends at a space or at @e. */
static const char *tok_end(const char *p, const char *e)
{
	while (p < e && *p != ' ')
		p++;
	return p;
}

/* Unsigned decimal; false when there is none. */
static bool num_u(const char **pp, const char *e, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (p >= e || *p < '0' || *p > '9')
		return false;
	while (p < e && *p >= '0' && *p <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*p++ - '0');
	}
	*pp = p;
	*out = v;
	return true;
}

static bool num_i(const char **pp, const char *e, int64_t *out)
{
	const char *p = *pp;
	bool neg = p < e && *p == '-';
	uint64_t v;

	if (neg)
		p++;
	if (!num_u(&p, e, &v) || v > INT32_MAX)
		return false;
	*pp = p;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

/*
 * The tail of a "returned" line, "R after N usecs" at *@pp: the return value
 * and the latency in ns (N must fit); *@pp is then just past "usecs".
 */
static bool returned_after(const char **pp, const char *e, int64_t *rv, int64_t *lat_ns)
{
	const char *q = *pp;
	uint64_t us;

	if (!num_i(&q, e, rv) || !starts(q, e, " after "))
		return false;
	q += 7;
	if (!num_u(&q, e, &us) || us > INT64_MAX / 1000 || !starts(q, e, " usecs"))
		return false;
	*pp = q + 6;
	*lat_ns = (int64_t)us * 1000;
	return true;
}

/* "SEC.FRAC" to ns (FRAC up to 9 digits). */
static bool num_time(const char **pp, const char *e, int64_t *ns, int64_t unit_ns)
{
	const char *p = *pp;
	uint64_t whole, frac = 0, scale = 1;

	if (!num_u(&p, e, &whole) || whole > (uint64_t)INT64_MAX / (uint64_t)unit_ns / 2)
		return false;
	if (p < e && *p == '.') {
		p++;
		while (p < e && *p >= '0' && *p <= '9') {
			if (scale < 1000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
			p++;
		}
	}
	*pp = p;
	*ns = (int64_t)whole * unit_ns + (int64_t)((double)frac * (double)unit_ns / (double)scale);
	return true;
}

/* "[ 123.456789]" with optional "[ T123]"/"[ C1]" after it. */
static bool parse_stamp(const char **pp, const char *e, struct cursor *c)
{
	const char *p = *pp;

	if (p >= e || *p != '[')
		return false;
	p++;
	while (p < e && *p == ' ')
		p++;
	if (!num_time(&p, e, &c->ts, 1000000000) || p >= e || *p != ']')
		return false;
	p++;
	if (p < e && *p == '[') {
		const char *q = p + 1;
		uint64_t v;

		while (q < e && *q == ' ')
			q++;
		if (q < e && (*q == 'T' || *q == 'C')) {
			bool task = *q == 'T';

			q++;
			if (num_u(&q, e, &v) && q < e && *q == ']') {
				if (task && v <= UINT32_MAX - 1)
					c->tpid = (uint32_t)v;
				p = q + 1;
			}
		}
	}
	while (p < e && *p == ' ')
		p++;
	*pp = p;
	return true;
}

/* ---- phases ---- */

static bool suspend_side(unsigned key)
{
	return key <= DL_LAT_SUSPEND_NOIRQ;
}

/* Sequence position of a PM key: prepare 0 .. complete 7. */
static unsigned ph_pos(unsigned key)
{
	return key - DL_LAT_PREPARE;
}

/* The phase a callback's name gives, or DL_LAT_COUNT; *side: 1 suspend, 2 resume, 0 none. */
static unsigned cb_hint(const char *p, const char *e, int *side)
{
	bool noirq = find(p, e, "noirq"), late = find(p, e, "_late"), early = find(p, e, "_early");
	bool sus = find(p, e, "suspend") || find(p, e, "freeze") || find(p, e, "poweroff");
	bool res = find(p, e, "resume") || find(p, e, "thaw") || find(p, e, "restore");

	*side = sus && !res ? 1 : res && !sus ? 2 : 0;
	if (find(p, e, "prepare"))
		return DL_LAT_PREPARE;
	if (find(p, e, "complete"))
		return DL_LAT_COMPLETE;
	if (noirq && *side)
		return *side == 1 ? DL_LAT_SUSPEND_NOIRQ : DL_LAT_RESUME_NOIRQ;
	if (late && *side == 1)
		return DL_LAT_SUSPEND_LATE;
	if (early && *side == 2)
		return DL_LAT_RESUME_EARLY;
	return DL_LAT_COUNT;
}

/*
 * The calls still open when their cycle or file ends never returned: the
 * usual signature of a hang (a callback that blocked, the log cut after it).
 */
static int close_calls(struct dl_logimport *li, uint32_t file)
{
	for (uint32_t d = 0; d < li->ndev; d++) {
		struct dl_lg_pending *pe = &li->pend[d];

		if (!pe->open)
			continue;
		pe->open = 0;
		if (grow((void **)&li->hang, &li->cap_hang, li->nhang + 1, sizeof(*li->hang)))
			return -ENOMEM;
		li->hang[li->nhang++] = (struct dl_lg_hang){ d, file, pe->line,
							     li->ncyc ? li->ncyc - 1 : 0, pe->key };
	}
	return 0;
}

static int new_cycle(struct dl_logimport *li, const struct cursor *c)
{
	if (grow((void **)&li->cyc, &li->cap_cyc, li->ncyc + 1, sizeof(*li->cyc)))
		return -ENOMEM;
	if (li->ncyc >= UINT16_MAX)
		return 0;	/* later callbacks join the last cycle */
	if (close_calls(li, c->file))
		return -ENOMEM;
	li->cyc[li->ncyc++] = (struct dl_lg_cycle){ .file = c->file, .line = c->line,
						    .main_pid = DL_LG_NONE };
	li->cur_key = DL_LAT_SUSPEND;
	li->cycle_open = 1;
	li->cycle_has_cb = 0;
	li->seg_start = li->nsmp;
	return 0;
}

/* A line that starts a system sleep: the next callback opens a new cycle. */
static void cycle_marker(struct dl_logimport *li)
{
	if (li->cycle_has_cb)
		li->cycle_open = 0;
}

/*
 * Move to the phase a callback's name says when it is later than the
 * current one (lines were lost: the log skipped a total), or to a new cycle
 * when a suspend-side callback comes after resume-side ones.
 */
static int apply_hint(struct dl_logimport *li, const struct cursor *c, unsigned hint, int side,
		      bool *provisional)
{
	unsigned cur = li->cur_key;

	*provisional = false;
	if (hint != DL_LAT_COUNT) {
		if (ph_pos(hint) > ph_pos(cur)) {
			if (ph_pos(hint) > ph_pos(cur) + 1 || suspend_side(cur) != suspend_side(hint))
				li->cyc[li->ncyc - 1].gap = 1;
			li->cur_key = (uint8_t)hint;
			li->seg_start = li->nsmp;
		} else if (!suspend_side(cur) && suspend_side(hint) && li->cycle_has_cb) {
			return new_cycle(li, c);
		}
		return 0;
	}
	if (side == 2 && suspend_side(cur)) {
		/* a resume callback in a suspend phase: lines were lost */
		li->cyc[li->ncyc - 1].gap = 1;
		li->cur_key = DL_LAT_RESUME;
		li->seg_start = li->nsmp;
		*provisional = true;
	} else if (side == 1 && !suspend_side(cur) && li->cycle_has_cb) {
		return new_cycle(li, c);
	}
	return 0;
}

static int begin_callback(struct dl_logimport *li, const struct cursor *c, uint32_t dev,
			  uint32_t pid)
{
	struct dl_lg_pending *pe = &li->pend[dev];

	if (pe->open) {
		note(li, c, "'%s': a second call before the first returned (line %u)",
		     dl_lg_name(li, dev), pe->line);
		if (grow((void **)&li->hang, &li->cap_hang, li->nhang + 1, sizeof(*li->hang)))
			return -ENOMEM;
		li->hang[li->nhang++] = (struct dl_lg_hang){ dev, c->file, pe->line,
							     li->ncyc - 1, pe->key };
	}
	*pe = (struct dl_lg_pending){ c->ts, pid, c->line, 1, li->cur_key };
	return 0;
}

/* A callback of @dev in phase @key of the current cycle. */
static int add_sample(struct dl_logimport *li, const struct cursor *c, uint32_t dev, unsigned key,
		      int64_t ret, int64_t start, int64_t lat_ns, uint32_t pid, bool provisional)
{
	if (grow((void **)&li->smp, &li->cap_smp, li->nsmp + 1, sizeof(*li->smp)))
		return -ENOMEM;
	if (ret)
		li->failures++;
	li->smp[li->nsmp++] = (struct dl_lg_sample){
		.dev = dev, .file = c->file, .line = c->line, .pid = pid,
		.cycle = (uint16_t)(li->ncyc - 1), .key = (uint8_t)key, .provisional = provisional,
		.ret = (int32_t)ret, .start_ns = start, .lat_ns = lat_ns, .end_ns = c->ts };
	li->dev[dev].nsamples++;
	li->cyc[li->ncyc - 1].ncb++;
	li->cycle_has_cb = 1;
	return 0;
}

/* A callback of @dev returned @ret after @lat_ns: record it in the current phase. */
static int end_callback(struct dl_logimport *li, const struct cursor *c, uint32_t dev,
			int64_t ret, int64_t lat_ns, uint32_t pid, bool provisional)
{
	struct dl_lg_pending *pe = &li->pend[dev];

	if (!pe->open) {
		/* its start, pid and cycle are unknown: a sample would be half a guess */
		li->orphans++;
		note(li, c, "'%s' returned without its call (no \"calling\" line before it); "
		     "skipped", dl_lg_name(li, dev));
		if (!ret)
			return 0;
		/* not a sample, but still a failure of that device */
		if (grow((void **)&li->ofail, &li->cap_ofail, li->nofail + 1, sizeof(*li->ofail)))
			return -ENOMEM;
		li->failures++;
		li->ofail[li->nofail++] = (struct dl_lg_sample){
			.dev = dev, .file = c->file, .line = c->line, .pid = pid,
			.cycle = (uint16_t)(li->ncyc - 1), .key = li->cur_key, .ret = (int32_t)ret,
			.start_ns = -1, .lat_ns = lat_ns, .end_ns = c->ts };
		return 0;
	}
	pe->open = 0;
	return add_sample(li, c, dev, li->cur_key, ret, pe->ts, lat_ns,
			  pid == DL_LG_NONE ? pe->pid : pid, provisional);
}

static int ensure_cycle(struct dl_logimport *li, const struct cursor *c)
{
	return li->cycle_open ? 0 : new_cycle(li, c);
}

/*
 * Where the parent's name after "parent: " ends: at a space, a control or
 * non-ASCII byte, or a "^C" echoed into the console; what follows is junk
 * the console left on the line, not part of the name.
 */
static const char *parent_end(const char *p, const char *e)
{
	const char *q = p;

	while (q < e && (unsigned char)*q > ' ' && (unsigned char)*q < 0x7f &&
	       !(q[0] == '^' && q + 1 < e && q[1] == 'C'))
		q++;
	return q;
}

static int set_parent(struct dl_logimport *li, const struct cursor *c, uint32_t dev,
		      const char *p, const char *e)
{
	uint32_t par;

	e = parent_end(p, e);
	if (e == p)
		return 0;

	if (e - p == 4 && !memcmp(p, "none", 4))
		return 0;
	par = intern_parent(li, p, (size_t)(e - p), dev);
	if (par == DL_LG_NONE)
		return -ENOMEM;
	if (par == dev) {
		note(li, c, "'%s' is its own parent", dl_lg_name(li, dev));
		return 0;
	}
	if (li->dev[dev].parent == DL_LG_NONE) {
		/* refuse a parent loop: walk up from the new parent */
		for (uint32_t a = par, n = 0; a != DL_LG_NONE && n <= li->ndev;
		     a = li->dev[a].parent, n++)
			if (a == dev) {
				note(li, c, "parent '%s' of '%s' would make a loop; ignored",
				     dl_lg_name(li, par), dl_lg_name(li, dev));
				return 0;
			}
		li->dev[dev].parent = par;
	} else if (li->dev[dev].parent != par) {
		note(li, c, "'%s': parent '%s' here, '%s' before", dl_lg_name(li, dev),
		     dl_lg_name(li, par), dl_lg_name(li, li->dev[dev].parent));
	}
	return 0;
}

/* ---- the formats ---- */

/* The phase of a total line: @side 1 suspend, 2 resume; @level 0 plain, 1 late/early, 2 noirq. */
static unsigned phase_key(int side, unsigned level)
{
	if (side == 1)
		return level == 0 ? DL_LAT_SUSPEND : level == 1 ? DL_LAT_SUSPEND_LATE
								: DL_LAT_SUSPEND_NOIRQ;
	return level == 0 ? DL_LAT_RESUME : level == 1 ? DL_LAT_RESUME_EARLY : DL_LAT_RESUME_NOIRQ;
}

/*
 * Ubuntu's per-device time, after "PM: [late |early |noirq ]PHASE of drv:":
 * "DRV dev:DEV complete after X msecs" (DRV may hold spaces, or be empty).
 * A callback without a "calling" line: it ended at the line's time and took
 * X.  Skipped when initcall_debug already timed that callback.
 */
static int match_ubuntu(struct dl_logimport *li, const struct cursor *c, const char *p,
			const char *e, unsigned key, int side)
{
	const char *d = find(p, e, " dev:"), *de, *q;
	int64_t ns;
	uint32_t dev;
	bool prov;
	int ret;

	if (!d)
		return 0;
	d += 5;
	de = tok_end(d, e);
	q = de;
	if (de == d || !starts(q, e, " complete after "))
		return 0;
	q += 16;
	if (!num_time(&q, e, &ns, 1000000) || !starts(q, e, " msecs"))
		return 0;
	if ((ret = ensure_cycle(li, c)) || (ret = apply_hint(li, c, key, side, &prov)))
		return ret;
	dev = intern_drv(li, p, (size_t)(d - 5 - p), d, (size_t)(de - d), NULL, 0);
	if (dev == DL_LG_NONE)
		return -ENOMEM;
	for (uint32_t i = li->nsmp; i-- > li->seg_start && li->smp[i].cycle == li->ncyc - 1;)
		if (li->smp[i].dev == dev && li->smp[i].key == key)
			return 1;
	return add_sample(li, c, dev, key, 0, c->ts >= 0 ? c->ts - ns : -1, ns, c->tpid, false)
		       ?: 1;
}

/* "PM: [start ][late |early |noirq ]PHASE of devices complete after X msecs" */
static int match_total(struct dl_logimport *li, const struct cursor *c, const char *p,
		       const char *e)
{
	static const struct { const char *w; int side; } base[] = {
		{ "suspend", 1 }, { "freeze", 1 }, { "poweroff", 1 },
		{ "resume", 2 }, { "thaw", 2 }, { "restore", 2 },
	};
	const char *q = find(p, e, "PM: "), *lab, *after;
	bool start = false;
	unsigned level = 0;	/* 0 plain, 1 late/early, 2 noirq */
	int side = 0;
	int64_t ns;
	struct dl_lg_total *t;
	unsigned first, last;

	if (!q)
		return 0;
	lab = q + 4;
	q = lab;
	if (starts(q, e, "start ")) {
		start = true;
		q += 6;
	}
	if (starts(q, e, "late ") || starts(q, e, "early ")) {
		level = 1;
		q = tok_end(q, e) + 1;
	} else if (starts(q, e, "noirq ")) {
		level = 2;
		q += 6;
	}
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		if (starts(q, e, base[i].w)) {
			side = base[i].side;
			q += strlen(base[i].w);
			break;
		}
	if (side && !start && starts(q, e, " of drv:"))
		return match_ubuntu(li, c, q + 8, e, phase_key(side, level), side);
	if (!side || !starts(q, e, " of devices complete after "))
		return 0;
	after = q + strlen(" of devices complete after ");
	if (!num_time(&after, e, &ns, 1000000) || !starts(after, e, " msecs"))
		return 0;
	last = phase_key(side, level);
	first = start && side == 1 && level == 0 ? DL_LAT_PREPARE : last;
	if (start && first == last)
		return 0;	/* "start resume"? not a format we know */
	if (ensure_cycle(li, c))
		return -ENOMEM;
	if (grow((void **)&li->tot, &li->cap_tot, li->ntot + 1, sizeof(*li->tot)))
		return -ENOMEM;
	t = &li->tot[li->ntot++];
	*t = (struct dl_lg_total){ (uint16_t)(li->ncyc - 1), (uint8_t)first, (uint8_t)last,
				   c->file, c->line, c->tpid, ns, "" };
	snprintf(t->label, sizeof(t->label), "%.*s", (int)(q - lab), lab);
	if (first == last) {
		/* the callbacks since the last boundary whose phase was a guess are this one's */
		for (uint32_t i = li->seg_start; i < li->nsmp; i++)
			if (li->smp[i].provisional && li->smp[i].cycle == li->ncyc - 1) {
				li->smp[i].key = (uint8_t)last;
				li->smp[i].provisional = 0;
			}
		if (last != DL_LAT_RESUME && last != DL_LAT_COMPLETE)
			li->cur_key = (uint8_t)(last + 1);
		else
			li->cur_key = DL_LAT_COMPLETE;
		li->seg_start = li->nsmp;
	}
	return 1;
}

/* Strip "+0x0/0x50" and " [module]" from a callback name: [p, *e) becomes the symbol. */
static const char *cb_symbol_end(const char *p, const char *e)
{
	const char *q = p;

	while (q < e && *q != ' ' && *q != '+')
		q++;
	return q;
}

/*
 * Modern: "DRV DEV: [PM: ]calling CB[ [MOD]] @ PID, parent: P" and
 * "DRV DEV: [PM: ]CB[ [MOD]] returned R after N usecs".
 */
static int match_modern(struct dl_logimport *li, const struct cursor *c, const char *p,
			const char *e)
{
	const char *sep = find(p, e, ": PM: "), *dev_p, *dev_e, *q, *cb, *cb_e;
	uint32_t dev;
	int side, ret;
	unsigned hint;
	bool prov;

	/* the device is the token before ": PM: " (drivers' names may have spaces) */
	if (sep) {
		q = sep + 6;
	} else if ((sep = find(p, e, ": calling "))) {
		q = sep + 2;
	} else {
		const char *r = find(p, e, " returned "), *x;

		if (!r)
			return 0;
		for (sep = NULL, x = p; (x = find(x, r, ": ")); x += 2)
			sep = x;
		if (!sep)
			return 0;
		q = sep + 2;
	}
	dev_e = sep;
	for (dev_p = dev_e; dev_p > p && dev_p[-1] != ' '; dev_p--)
		;
	if (dev_p == dev_e || dev_p - p < 2)
		return 0;	/* no device, or no driver before it */
	dev_e++;		/* dev_e - 1 is where the name ends, as below */
	if (starts(q, e, "calling ")) {
		const char *at = find(q, e, " @ "), *par;
		uint64_t pid;

		cb = q + 8;
		if (!at || !(par = find(at, e, ", parent: ")))
			return 0;
		q = at + 3;
		if (!num_u(&q, e, &pid) || q != par || par + 10 >= e)
			return 0;
		cb_e = cb_symbol_end(cb, at);
		hint = cb_hint(cb, cb_e, &side);
		if ((ret = ensure_cycle(li, c)) || (ret = apply_hint(li, c, hint, side, &prov)))
			return ret;
		dev = intern_drv(li, p, (size_t)(dev_p - 1 - p), dev_p, (size_t)(dev_e - 1 - dev_p),
				 par + 10, (size_t)(parent_end(par + 10, e) - (par + 10)));
		if (dev == DL_LG_NONE || set_parent(li, c, dev, par + 10, e))
			return -ENOMEM;
		return begin_callback(li, c, dev, pid > UINT32_MAX - 1 ? DL_LG_NONE : (uint32_t)pid)
			       ?: 1;
	}
	cb = q;
	q = find(q, e, " returned ");
	if (q) {
		const char *r = q + 10;
		int64_t rv, lat;

		if (!returned_after(&r, e, &rv, &lat) || r != e)
			return 0;
		cb_e = cb_symbol_end(cb, q);
		hint = cb_hint(cb, cb_e, &side);
		if ((ret = ensure_cycle(li, c)) || (ret = apply_hint(li, c, hint, side, &prov)))
			return ret;
		dev = intern_drv(li, p, (size_t)(dev_p - 1 - p), dev_p, (size_t)(dev_e - 1 - dev_p),
				 NULL, 0);
		if (dev == DL_LG_NONE)
			return -ENOMEM;
		return end_callback(li, c, dev, rv, lat, c->tpid, prov) ?: 1;
	}
	return 0;
}

/* 3.x: "calling  DEV+ @ PID, parent: P" and "call DEV+ returned R after N usecs". */
static int match_3x(struct dl_logimport *li, const struct cursor *c, const char *p,
		    const char *e)
{
	const char *q, *dev_e;
	uint32_t dev;
	int ret;

	if (starts(p, e, "calling  ")) {
		const char *par = find(p, e, ", parent: ");
		uint64_t pid;

		p += 9;
		dev_e = find(p, e, "+ @ ");
		if (!par || !dev_e || dev_e > par || dev_e == p)
			return 0;
		q = dev_e + 4;
		if (!num_u(&q, e, &pid) || q != par || par + 10 >= e)
			return 0;
		if ((ret = ensure_cycle(li, c)))
			return ret;
		dev = intern_3x(li, p, (size_t)(dev_e - p), par + 10,
				(size_t)(parent_end(par + 10, e) - (par + 10)));
		if (dev == DL_LG_NONE || set_parent(li, c, dev, par + 10, e))
			return -ENOMEM;
		return begin_callback(li, c, dev, pid > UINT32_MAX - 1 ? DL_LG_NONE : (uint32_t)pid)
			       ?: 1;
	}
	if (starts(p, e, "call ")) {
		int64_t rv, lat;

		p += 5;
		dev_e = find(p, e, "+ returned ");
		if (!dev_e || dev_e == p)
			return 0;
		q = dev_e + 11;
		if (!returned_after(&q, e, &rv, &lat))
			return 0;
		if ((ret = ensure_cycle(li, c)))
			return ret;
		dev = intern_3x(li, p, (size_t)(dev_e - p), NULL, 0);
		if (dev == DL_LG_NONE)
			return -ENOMEM;
		return end_callback(li, c, dev, rv, lat, DL_LG_NONE, false) ?: 1;
	}
	return 0;
}

/* Boot: "probe of DEV returned R after N usecs", initcalls. */
static int match_boot(struct dl_logimport *li, const struct cursor *c, const char *p,
		      const char *e)
{
	const char *q;
	int64_t rv, lat;

	(void)c;
	if (starts(p, e, "probe of ")) {
		const char *dev_e;
		uint32_t dev;

		p += 9;
		dev_e = find(p, e, " returned ");
		if (!dev_e || dev_e == p)
			return 0;
		q = dev_e + 10;
		if (!returned_after(&q, e, &rv, &lat))
			return 0;
		dev = intern(li, p, (size_t)(dev_e - p));
		if (dev == DL_LG_NONE)
			return -ENOMEM;
		if (grow((void **)&li->smp, &li->cap_smp, li->nsmp + 1, sizeof(*li->smp)))
			return -ENOMEM;
		li->smp[li->nsmp++] = (struct dl_lg_sample){
			.dev = dev, .file = c->file, .line = c->line, .pid = c->tpid,
			.cycle = UINT16_MAX, .key = DL_LAT_PROBE, .ret = (int32_t)rv,
			.start_ns = c->ts >= 0 ? c->ts - lat : -1,
			.lat_ns = lat, .end_ns = c->ts };
		li->dev[dev].nsamples++;
		li->probes++;
		li->probes_failed += rv != 0;
		return 1;
	}
	if (starts(p, e, "calling  ") && (q = find(p, e, "+0x")) && find(q, e, " @ ") &&
	    !find(q, e, ", parent: "))
		return 1;
	if (starts(p, e, "initcall ") && find(p, e, "+0x") && find(p, e, " returned ") &&
	    find(p, e, " usecs")) {
		li->initcalls++;
		return 1;
	}
	return 0;
}

/* Failure lines: counted (the failing "returned" line itself carries the sample). */
static int match_failure(const char *p, const char *e)
{
	return find(p, e, "PM: dpm_run_callback(): ") || find(p, e, "PM: failed to ") ||
	       (find(p, e, "PM: Device ") && find(p, e, " failed to ") && find(p, e, "error "));
}

static int match_marker(struct dl_logimport *li, const char *p, const char *e)
{
	static const char *const starts_sleep[] = {
		"PM: suspend entry", "PM: Syncing filesystems", "PM: Preparing system for",
		"PM: hibernation entry", "Freezing user space processes", "PM: Entering ",
	};
	static const char *const ends_sleep[] = { "PM: suspend exit", "Restarting tasks",
						  "PM: Finishing wakeup", "PM: hibernation exit" };

	for (size_t i = 0; i < sizeof(starts_sleep) / sizeof(starts_sleep[0]); i++)
		if (find(p, e, starts_sleep[i])) {
			cycle_marker(li);
			return 1;
		}
	for (size_t i = 0; i < sizeof(ends_sleep) / sizeof(ends_sleep[0]); i++)
		if (find(p, e, ends_sleep[i])) {
			cycle_marker(li);
			return 1;
		}
	return 0;
}

/* ftrace: "TASK-PID [cpu] flags TS: EVENT: ..." */
static const struct { const char *name; uint8_t key; } dpm_phases[] = {
	{ "dpm_prepare", DL_LAT_PREPARE }, { "dpm_suspend_late", DL_LAT_SUSPEND_LATE },
	{ "dpm_suspend_noirq", DL_LAT_SUSPEND_NOIRQ }, { "dpm_suspend", DL_LAT_SUSPEND },
	{ "dpm_resume_noirq", DL_LAT_RESUME_NOIRQ }, { "dpm_resume_early", DL_LAT_RESUME_EARLY },
	{ "dpm_resume", DL_LAT_RESUME }, { "dpm_complete", DL_LAT_COMPLETE },
};

/*
 * The head of an ftrace line P..E whose event starts at EV: the time stamp is
 * the token before ": EVENT" (into c->ts), the pid ends the first token
 * (UINT32_MAX when it has none).  False when the line is not ftrace's.
 */
static bool ftrace_head(struct cursor *c, const char *p, const char *e, const char *ev,
			uint32_t *pid)
{
	const char *q = ev, *dash = NULL;
	uint64_t u = UINT32_MAX;

	while (q > p && q[-1] != ' ')
		q--;
	if (!num_time(&q, ev, &c->ts, 1000000000) || q != ev)
		return false;
	while (p < e && *p == ' ')
		p++;
	for (q = p; q < e && *q != ' '; q++)
		if (*q == '-')
			dash = q;
	if (dash) {
		q = dash + 1;
		if (!num_u(&q, e, &u) || u >= UINT32_MAX)
			u = UINT32_MAX;
	}
	*pid = (uint32_t)u;
	return true;
}

/* "suspend_resume: dpm_X[...] begin|end" of phase I (dpm_phases): its begin noted, its
 * end a total.  1, or a negative errno. */
static int ftrace_phase(struct dl_logimport *li, struct cursor *c, size_t i, bool begin,
			uint32_t pid)
{
	const char *nm = dpm_phases[i].name;
	unsigned key = dpm_phases[i].key;
	struct dl_lg_total *t;
	int ret;

	if ((ret = ensure_cycle(li, c)))
		return ret;
	if (begin) {
		if (ph_pos(key) < ph_pos(li->cur_key) && li->cycle_has_cb && (ret = new_cycle(li, c)))
			return ret;
		li->cur_key = (uint8_t)key;
		li->seg_start = li->nsmp;
		li->ph_begin[key] = c->ts;
		li->ph_begin_pid = pid;
		return 1;
	}
	if (li->ph_begin[key] < 0 || li->cur_key != key) {
		note(li, c, "%s end without its begin", nm);
		return 1;
	}
	if (grow((void **)&li->tot, &li->cap_tot, li->ntot + 1, sizeof(*li->tot)))
		return -ENOMEM;
	t = &li->tot[li->ntot++];
	*t = (struct dl_lg_total){ (uint16_t)(li->ncyc - 1), (uint8_t)key, (uint8_t)key, c->file,
				   c->line, pid, c->ts - li->ph_begin[key], "" };
	snprintf(t->label, sizeof(t->label), "%s", nm);
	li->ph_begin[key] = -1;
	return 1;
}

/* "suspend_resume: NAME[...] begin|end" at EV: 1 (used or not), 0 not this event, or a
 * negative errno. */
static int ftrace_suspend_resume(struct dl_logimport *li, struct cursor *c, const char *ev,
				 const char *e, uint32_t pid)
{
	const char *n = ev + 16, *br = n;
	bool begin;

	while (br < e && *br != '[')
		br++;
	if (br >= e)
		return 0;
	begin = find(br, e, "] begin") != NULL;
	if (!begin && !find(br, e, "] end"))
		return 0;
	if (br - n == 13 && !memcmp(n, "suspend_enter", 13) && begin) {
		cycle_marker(li);
		return 1;
	}
	for (size_t i = 0; i < sizeof(dpm_phases) / sizeof(dpm_phases[0]); i++) {
		const char *nm = dpm_phases[i].name;

		if ((size_t)(br - n) == strlen(nm) && !memcmp(n, nm, (size_t)(br - n)))
			return ftrace_phase(li, c, i, begin, pid);
	}
	return 1;	/* another suspend_resume event: recognised, not used */
}

/* "device_pm_callback_start: DRIVER DEVICE, parent: PARENT, ..." at EV. */
static int ftrace_cb_start(struct dl_logimport *li, struct cursor *c, const char *ev,
			   const char *e, uint32_t pid)
{
	const char *d = tok_end(ev + 26, e), *dev_e = find(d, e, ", parent: "), *par_e;
	uint32_t dev;
	int ret;

	if (d >= e || !dev_e)
		return 0;
	d++;
	par_e = find(dev_e + 10, e, ", ");
	if (!par_e)
		return 0;
	if ((ret = ensure_cycle(li, c)))
		return ret;
	dev = intern_drv(li, ev + 26, (size_t)(d - 1 - (ev + 26)), d, (size_t)(dev_e - d),
			 dev_e + 10, (size_t)(par_e - (dev_e + 10)));
	if (dev == DL_LG_NONE || set_parent(li, c, dev, dev_e + 10, par_e))
		return -ENOMEM;
	return begin_callback(li, c, dev, pid) ?: 1;
}

/* "device_pm_callback_end: DRIVER DEVICE, err=N" at EV. */
static int ftrace_cb_end(struct dl_logimport *li, struct cursor *c, const char *ev, const char *e,
			 uint32_t pid)
{
	const char *d = tok_end(ev + 24, e), *dev_e = find(d, e, ", err="), *q;
	uint32_t dev;
	int64_t rv;
	int ret;

	if (d >= e || !dev_e)
		return 0;
	d++;
	q = dev_e + 6;
	if (!num_i(&q, e, &rv))
		return 0;
	if ((ret = ensure_cycle(li, c)))
		return ret;
	dev = intern_drv(li, ev + 24, (size_t)(d - 1 - (ev + 24)), d, (size_t)(dev_e - d), NULL, 0);
	if (dev == DL_LG_NONE)
		return -ENOMEM;
	if (!li->pend[dev].open) {
		li->orphans++;
		note(li, c, "'%s' callback end without its start; skipped", dl_lg_name(li, dev));
		return 1;
	}
	return end_callback(li, c, dev, rv, c->ts - li->pend[dev].ts, pid, false) ?: 1;
}

/* An ftrace line: 1 used, 0 not one of its events, or a negative errno. */
static int match_ftrace(struct dl_logimport *li, struct cursor *c, const char *p, const char *e)
{
	const char *ev = find(p, e, ": device_pm_callback_");
	uint32_t pid;

	if (!ev)
		ev = find(p, e, ": suspend_resume: ");
	if (!ev || !ftrace_head(c, p, e, ev, &pid))
		return 0;
	ev += 2;
	if (starts(ev, e, "suspend_resume: "))
		return ftrace_suspend_resume(li, c, ev, e, pid);
	if (starts(ev, e, "device_pm_callback_start: "))
		return ftrace_cb_start(li, c, ev, e, pid);
	if (starts(ev, e, "device_pm_callback_end: "))
		return ftrace_cb_end(li, c, ev, e, pid);
	return 0;
}

/* ---- the prefixes a log picks up on its way into a bug report ---- */

static bool is_alpha(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* "<6>": the printk level, as /dev/kmsg, dmesg -r and some consoles keep it. */
static const char *skip_level(const char *p, const char *e)
{
	const char *q = p + 1;

	if (p >= e || *p != '<' || q >= e || !is_digit(*q))
		return p;
	while (q < e && is_digit(*q))
		q++;
	return q < e && *q == '>' ? q + 1 : p;
}

/* "kern  :info  : " (dmesg -x): a facility and a level, each padded, then ": ". */
static const char *skip_dmesg_x(const char *p, const char *e)
{
	static const char *const level[] = { "emerg", "alert", "crit", "err", "warn", "notice",
					     "info", "debug" };
	const char *q = p, *l;

	while (q < e && (is_alpha(*q) || is_digit(*q)))
		q++;
	if (q == p || q - p > 8)
		return p;
	while (q < e && *q == ' ')
		q++;
	if (q >= e || *q != ':')
		return p;
	l = ++q;
	while (q < e && is_alpha(*q))
		q++;
	for (size_t i = 0; i < sizeof(level) / sizeof(level[0]); i++)
		if ((size_t)(q - l) == strlen(level[i]) && !memcmp(l, level[i], (size_t)(q - l))) {
			while (q < e && *q == ' ')
				q++;
			if (q < e && *q == ':') {
				q++;
				while (q < e && *q == ' ')
					q++;
				return q;
			}
		}
	return p;
}

/* "HH:MM:SS" */
static bool clock_time(const char **pp, const char *e)
{
	const char *p = *pp;

	for (int i = 0; i < 8; i++, p++)
		if (p >= e || ((i == 2 || i == 5) ? *p != ':' : !is_digit(*p)))
			return false;
	*pp = p;
	return true;
}

static bool month(const char *p, const char *e)
{
	static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";

	if (e - p < 4 || p[3] != ' ')
		return false;
	for (int m = 0; m < 12; m++)
		if (!memcmp(p, names + 3 * m, 3))
			return true;
	return false;
}

/*
 * "Dec  4 18:35:38 host kernel: " (syslog, kern.log: "[ts] ..." follows;
 * journalctl -k's default: nothing follows) and rsyslog's
 * "2026-12-04T18:35:38.123456+00:00 host kernel: ".
 */
static const char *skip_syslog(const char *p, const char *e)
{
	const char *q = p;

	if (month(q, e)) {
		q += 4;
		while (q < e && *q == ' ')
			q++;
		if (q >= e || !is_digit(*q))
			return p;
		while (q < e && is_digit(*q))
			q++;
		if (q >= e || *q != ' ')
			return p;
		q++;
		if (!clock_time(&q, e))
			return p;
	} else if (e - p >= 19 && is_digit(p[0]) && p[4] == '-' && p[10] == 'T') {
		q = tok_end(p, e);
	} else {
		return p;
	}
	if (q >= e || *q != ' ')
		return p;
	q = tok_end(q + 1, e);	/* the host */
	if (!starts(q, e, " kernel: "))
		return p;
	return q + 9;
}

/* "[Fri Dec  4 18:35:38 2026] " (dmesg -T): the wall clock, to the second. */
static const char *skip_ctime(const char *p, const char *e)
{
	const char *q = p + 1;

	if (e - p < 26 || *p != '[' || !is_alpha(q[0]) || !is_alpha(q[1]) || !is_alpha(q[2]) ||
	    q[3] != ' ' || !month(q + 4, e))
		return p;
	q += 8;
	while (q < e && *q == ' ')
		q++;
	while (q < e && is_digit(*q))
		q++;
	if (q >= e || *q != ' ')
		return p;
	q++;
	if (!clock_time(&q, e) || e - q < 6 || *q != ' ')
		return p;
	q++;
	while (q < e && is_digit(*q))
		q++;
	if (q >= e || *q != ']')
		return p;
	q++;
	while (q < e && *q == ' ')
		q++;
	return q;
}

/*
 * Strip the prefixes of syslog, journalctl, dmesg -x/-T and printk levels
 * from [p, e).  *wall: a prefix was the line's only time, a wall clock to the
 * second (journalctl -k, dmesg -T): the line has no usable time stamp.
 */
static const char *strip_prefixes(const char *p, const char *e, bool *wall)
{
	for (;;) {
		const char *q = skip_level(p, e);

		q = skip_dmesg_x(q, e);
		q = skip_level(q, e);
		if (q == p) {
			const char *s = skip_syslog(p, e), *t = s == p ? skip_ctime(p, e) : p;

			if (s == p && t == p)
				return p;
			*wall = true;
			q = s != p ? s : t;
		}
		p = q;
	}
}

static int match_body(struct dl_logimport *li, struct cursor *c, const char *body,
		      const char *e);

/* One line [p, e): 1 recognised, 0 not, negative errno. */
static int parse_line(struct dl_logimport *li, struct cursor *c, const char *p, const char *e)
{
	const char *body;
	bool wall = false;
	int r;

	c->tpid = DL_LG_NONE;
	c->ts = -1;
	if (starts(p, e, "#") ) {
		const char *q = find(p, e, "#P:");
		uint64_t n;

		if (q) {
			q += 3;
			if (num_u(&q, e, &n) && n && n <= 65536)
				li->cpus = (uint32_t)n;
			return 1;
		}
		return 0;
	}
	if (find(p, e, ": device_pm_callback_") || find(p, e, ": suspend_resume: ")) {
		r = match_ftrace(li, c, p, e);
		if (r)
			li->matched[DL_LG_FTRACE] += r > 0;
		return r;
	}
	body = p;
	wall = c->wall;
	if (!wall && !parse_stamp(&body, e, c))
		return 0;
	if (wall && body < e && *body == '[' && parse_stamp(&body, e, c))
		wall = false;	/* kern.log: the kernel's own "[ts]" follows the syslog prefix */
	if (c->ts < li->last_ts && li->last_ts >= 0 && c->ts >= 0 &&
	    li->last_ts - c->ts > 1000000000) {
		/* dmesg is monotonic; a big step back is a reboot or a spliced log */
		note(li, c, "time goes back %.6f s (from %.6f)", (double)(li->last_ts - c->ts) / 1e9,
		     (double)li->last_ts / 1e9);
		cycle_marker(li);
	}
	if (c->ts >= 0)
		li->last_ts = c->ts;
	r = match_body(li, c, body, e);
	if (r > 0 && wall)
		li->untimed++;
	return r;
}

/* The line after its time stamp: 1 recognised, 0 not, negative errno. */
static int match_body(struct dl_logimport *li, struct cursor *c, const char *body,
		      const char *e)
{
	int r;

	if ((r = match_total(li, c, body, e))) {
		li->matched[DL_LG_TOTAL] += r > 0;
		return r;
	}
	if ((r = match_3x(li, c, body, e))) {
		li->matched[DL_LG_PM_3X] += r > 0;
		return r;
	}
	if ((r = match_boot(li, c, body, e))) {
		li->matched[DL_LG_BOOT] += r > 0;
		return r;
	}
	if ((r = match_modern(li, c, body, e))) {
		li->matched[DL_LG_PM_MODERN] += r > 0;
		return r;
	}
	if (match_failure(body, e)) {
		li->matched[DL_LG_FAILURE]++;
		return 1;
	}
	if (match_marker(li, body, e)) {
		li->matched[DL_LG_MARKER]++;
		return 0;	/* context, not data: still counted as skipped */
	}
	return 0;
}

/* A '[' at a stamp inside the line: where a line lost its end (garbage) and a new one starts. */
static const char *embedded_stamp(const char *p, const char *e)
{
	for (const char *q = p + 1; q < e; q++) {
		struct cursor c;
		const char *b = q;

		q = memchr(q, '[', (size_t)(e - q));
		if (!q)
			return NULL;
		b = q;
		if (b[-1] != ' ' && parse_stamp(&b, e, &c))
			return q;
	}
	return NULL;
}

/* Whether @s is valid UTF-8 (Jansson's test: what it accepts as a JSON string). */
static bool utf8_valid(const char *s)
{
	json_t *j = json_string(s);

	json_decref(j);
	return j != NULL;
}

/* Start file @label: its index in li->files, the parser state of a new file. */
static int file_begin(struct dl_logimport *li, const char *label, struct cursor *c)
{
	char **files = realloc(li->files, (li->nfiles + 1) * sizeof(*files));

	if (!files)
		return -ENOMEM;
	li->files = files;
	if (!(li->files[li->nfiles] = strdup(label)))
		return -ENOMEM;
	if (!utf8_valid(label))
		for (char *q = li->files[li->nfiles]; *q; q++)
			if ((unsigned char)*q >= 0x80)
				*q = '?';	/* a path that is not UTF-8, made valid JSON text */
	*c = (struct cursor){ .file = li->nfiles++ };
	li->cycle_open = 0;
	li->cycle_has_cb = 0;
	li->last_ts = -1;
	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		li->ph_begin[k] = -1;
	return 0;
}

/* One line [p, e) of the file (without its '\n'): parsed and counted. */
static int file_line(struct dl_logimport *li, struct cursor *c, const char *p, const char *e,
		     uint64_t *recognised)
{
	const char *s;
	int r;

	if (e > p && e[-1] == '\r')
		e--;
	c->line++;
	li->lines++;
	/* indentation, and "^C" echoed into the console */
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e - p >= 2 && p[0] == '^' && p[1] == 'C')
		p += 2;
	c->wall = false;
	p = strip_prefixes(p, e, &c->wall);
	r = parse_line(li, c, p, e);
	if (r == 0 && (s = embedded_stamp(p, e))) {
		/* a line cut short by garbage, and a whole one after it */
		r = parse_line(li, c, s, e);
		if (r > 0) {
			li->skipped++;	/* the garbled head */
			if (li->ncyc && li->cycle_open)
				li->cyc[li->ncyc - 1].gap = 1;
		}
	}
	if (r < 0)
		return r;
	if (r)
		(*recognised)++;
	else
		li->skipped++;
	return 0;
}

static int out_of_memory(const char *label, struct dl_error *err)
{
	snprintf(err->msg, sizeof(err->msg), "%s: out of memory", label);
	return -ENOMEM;
}

/* The log times of every cycle's callbacks: [lo[c], hi[c]] (lo > hi: none timed). */
static void cycle_spans(const struct dl_logimport *li, int64_t *lo, int64_t *hi)
{
	for (uint32_t c = 0; c < li->ncyc; c++) {
		lo[c] = INT64_MAX;
		hi[c] = INT64_MIN;
	}
	for (uint32_t i = 0; i < li->nsmp; i++) {
		const struct dl_lg_sample *s = &li->smp[i];

		if (s->cycle >= li->ncyc || s->start_ns < 0)
			continue;
		if (s->start_ns < lo[s->cycle])
			lo[s->cycle] = s->start_ns;
		if (s->start_ns + s->lat_ns > hi[s->cycle])
			hi[s->cycle] = s->start_ns + s->lat_ns;
	}
}

/* Cycle @c after merge_cycles() moved this file's cycles (from @first, of @ncyc) down: into[]. */
static uint32_t moved_cycle(uint32_t c, uint32_t first, uint32_t ncyc, const uint32_t *into)
{
	return c >= first && c < ncyc ? into[c - first] : c;
}

/*
 * INTO[c - FIRST]: the cycle of the earlier files that cycle C (of this file)
 * overlaps in time, or DL_LG_NONE (LO, HI: the cycles' spans).  Returns how
 * many overlap.
 */
static uint32_t match_cycles(const struct dl_logimport *li, uint32_t first, uint32_t *into,
			     const int64_t *lo, const int64_t *hi)
{
	uint32_t n = 0;

	for (uint32_t c = first; c < li->ncyc; c++) {
		into[c - first] = DL_LG_NONE;
		for (uint32_t a = 0; a < first && lo[c] <= hi[c]; a++)
			if (lo[a] <= hi[a] && lo[c] <= hi[a] && lo[a] <= hi[c]) {
				into[c - first] = a;
				n++;
				break;
			}
	}
	return n;
}

/* Cycle C's callbacks into cycle A; the ones A has already are dropped (key DL_LAT_COUNT).
 * SEEN: a byte per device and key. */
static void merge_samples(struct dl_logimport *li, uint32_t c, uint32_t a, uint8_t *seen)
{
	memset(seen, 0, (size_t)li->ndev * DL_LAT_COUNT);
	for (uint32_t i = 0; i < li->nsmp; i++)
		if (li->smp[i].cycle == a)
			seen[(size_t)li->smp[i].dev * DL_LAT_COUNT + li->smp[i].key] = 1;
	for (uint32_t i = 0; i < li->nsmp; i++) {
		struct dl_lg_sample *s = &li->smp[i];

		if (s->cycle != c)
			continue;
		if (seen[(size_t)s->dev * DL_LAT_COUNT + s->key]) {
			li->dev[s->dev].nsamples--;
			if (s->ret)
				li->failures--;
			s->key = DL_LAT_COUNT;
		} else {
			s->cycle = (uint16_t)a;
			li->cyc[a].ncb++;
		}
	}
}

/* Cycle C's phase totals, hangs and failures into cycle A; a total A has is dropped
 * (first DL_LAT_COUNT). */
static void merge_rest(struct dl_logimport *li, uint32_t c, uint32_t a)
{
	for (uint32_t t = 0; t < li->ntot; t++) {
		struct dl_lg_total *tt = &li->tot[t];
		bool dup = false;

		if (tt->cycle != c)
			continue;
		for (uint32_t u = 0; u < li->ntot; u++)
			dup = dup || (li->tot[u].cycle == a && li->tot[u].first == tt->first &&
				      li->tot[u].last == tt->last);
		if (dup)
			tt->first = DL_LAT_COUNT;
		tt->cycle = (uint16_t)a;
	}
	for (uint32_t h = 0; h < li->nhang; h++)
		if (li->hang[h].cycle == c)
			li->hang[h].cycle = a;
	for (uint32_t h = 0; h < li->nofail; h++)
		if (li->ofail[h].cycle == c)
			li->ofail[h].cycle = (uint16_t)a;
	li->cyc[a].gap |= li->cyc[c].gap;
	li->cyc[a].truncated |= li->cyc[c].truncated;
}

/* The cycles of this file left (from FIRST) move down over the merged ones; the dropped
 * samples and totals go.  INTO becomes each cycle's new index. */
static void compact_cycles(struct dl_logimport *li, uint32_t first, uint32_t *into)
{
	uint32_t w = first, k = 0;

	for (uint32_t c = first; c < li->ncyc; c++) {
		if (into[c - first] != DL_LG_NONE)
			continue;
		into[c - first] = w;
		li->cyc[w++] = li->cyc[c];
	}
	for (uint32_t i = 0; i < li->nsmp; i++) {
		struct dl_lg_sample *s = &li->smp[i];

		if (s->key == DL_LAT_COUNT)
			continue;
		s->cycle = (uint16_t)moved_cycle(s->cycle, first, li->ncyc, into);
		li->smp[k++] = *s;
	}
	li->nsmp = k;
	k = 0;
	for (uint32_t t = 0; t < li->ntot; t++) {
		struct dl_lg_total *tt = &li->tot[t];

		if (tt->first == DL_LAT_COUNT)
			continue;
		tt->cycle = (uint16_t)moved_cycle(tt->cycle, first, li->ncyc, into);
		li->tot[k++] = *tt;
	}
	li->ntot = k;
	for (uint32_t h = 0; h < li->nhang; h++)
		li->hang[h].cycle = moved_cycle(li->hang[h].cycle, first, li->ncyc, into);
	for (uint32_t h = 0; h < li->nofail; h++)
		li->ofail[h].cycle = (uint16_t)moved_cycle(li->ofail[h].cycle, first, li->ncyc, into);
	li->ncyc = w;
	li->seg_start = li->nsmp;
}

/*
 * One run's dmesg and ftrace, read one after the other, are one cycle: a
 * cycle of file @file whose callbacks overlap in time a cycle of an earlier
 * file (dmesg and ftrace share the clock) is merged into it.  A callback
 * both logged (same device, same phase) is kept once, from the earlier
 * file, as are the totals of a phase both printed.
 */
static int merge_cycles(struct dl_logimport *li, uint32_t file)
{
	uint32_t first = li->ncyc, *into = NULL, n = 0;
	uint8_t *seen = NULL;
	int64_t *lo = NULL, *hi = NULL;
	int ret = 0;

	while (first && li->cyc[first - 1].file == file)
		first--;
	if (first == li->ncyc || !first || li->cyc[0].file == file)
		return 0;
	into = malloc((li->ncyc - first) * sizeof(*into));
	seen = calloc((size_t)li->ndev * DL_LAT_COUNT + 1, 1);
	lo = malloc(li->ncyc * sizeof(*lo));
	hi = malloc(li->ncyc * sizeof(*hi));
	if (!into || !seen || !lo || !hi) {
		ret = -ENOMEM;
		goto out;
	}
	cycle_spans(li, lo, hi);
	n = match_cycles(li, first, into, lo, hi);
	if (!n)
		goto out;
	for (uint32_t c = first; c < li->ncyc; c++) {
		uint32_t a = into[c - first];

		if (a == DL_LG_NONE)
			continue;
		merge_samples(li, c, a, seen);
		merge_rest(li, c, a);
	}
	compact_cycles(li, first, into);
	li->merged += n;
out:
	free(into);
	free(seen);
	free(lo);
	free(hi);
	return ret;
}

/*
 * The end of a file: a cycle still suspended, or with calls open, was cut
 * (the log was saved before the resume, or the machine hung); its open
 * calls are hangs.
 */
static int file_end(struct dl_logimport *li, const struct cursor *c, const char *label,
		    uint64_t recognised, struct dl_error *err)
{
	if (li->ncyc && li->cycle_open && li->cycle_has_cb &&
	    li->cyc[li->ncyc - 1].file == c->file) {
		bool open = false;

		for (uint32_t d = 0; d < li->ndev && !open; d++)
			open = li->pend[d].open;
		if (open || suspend_side(li->cur_key))
			li->cyc[li->ncyc - 1].truncated = 1;
	}
	if (close_calls(li, c->file) || merge_cycles(li, c->file))
		return out_of_memory(label, err);
	li->cycle_open = 0;
	if (!recognised) {
		snprintf(err->msg, sizeof(err->msg), "%s: no line in a known format (%llu lines "
			 "read); expected %s", label, (unsigned long long)c->line, dl_log_formats_help);
		return -ENODATA;
	}
	return 0;
}

int dl_log_read_buf(struct dl_logimport *li, const char *label, const char *buf, size_t len,
		    struct dl_error *err)
{
	uint64_t recognised = 0;
	struct cursor c;
	const char *p = buf, *end = buf + len;

	if (file_begin(li, label, &c))
		return out_of_memory(label, err);
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));

		if (!e)
			e = end;
		if (file_line(li, &c, p, e, &recognised))
			return out_of_memory(label, err);
		p = e + 1;
	}
	return file_end(li, &c, label, recognised, err);
}

/*
 * The file is read in chunks of DL_LG_CHUNK bytes, a line at a time: memory
 * does not grow with the file.  A line longer than a chunk is parsed from
 * its first DL_LG_CHUNK bytes (no format has lines that long: it is garbage).
 */
#define DL_LG_CHUNK (1u << 20)

int dl_log_read_stream(struct dl_logimport *li, const char *label, FILE *f,
		       struct dl_error *err)
{
	uint64_t recognised = 0;
	struct cursor c;
	char *buf = malloc(DL_LG_CHUNK);
	size_t have = 0;
	bool discard = false;	/* the rest of an over-long line */

	if (!buf || file_begin(li, label, &c))
		goto nomem;
	for (;;) {
		size_t n = fread(buf + have, 1, DL_LG_CHUNK - have, f);
		char *p = buf, *nl;

		if (!n) {
			if (ferror(f)) {
				snprintf(err->msg, sizeof(err->msg), "%s: cannot read: %s", label,
					 strerror(errno));
				free(buf);
				return -EIO;
			}
			if (have && !discard && file_line(li, &c, buf, buf + have, &recognised))
				goto nomem;
			break;
		}
		have += n;
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			if (!discard && file_line(li, &c, p, nl, &recognised))
				goto nomem;
			discard = false;
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		if (have == DL_LG_CHUNK) {
			if (!discard && file_line(li, &c, buf, buf + have, &recognised))
				goto nomem;
			discard = true;
			have = 0;
		} else {
			memmove(buf, p, have);
		}
	}
	free(buf);
	return file_end(li, &c, label, recognised, err);
nomem:
	free(buf);
	return out_of_memory(label, err);
}

int dl_log_read_file(struct dl_logimport *li, const char *path, struct dl_error *err)
{
	FILE *f;
	int ret;

	if (!strcmp(path, "-"))
		return dl_log_read_stream(li, "<stdin>", stdin, err);
	f = fopen(path, "rb");
	if (!f) {
		snprintf(err->msg, sizeof(err->msg), "%s: cannot open: %s", path, strerror(errno));
		return errno == ENOENT ? -ENOENT : -EIO;
	}
	ret = dl_log_read_stream(li, path, f, err);
	fclose(f);
	return ret;
}
