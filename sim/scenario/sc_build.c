/*
 * sc_build.c - the in-memory scenario: growing its arrays, the name arena
 * and hash, name tables, and the counter-based latency sampler.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/scenario/sc_internal.h"

static const char *const lat_key_names[DL_LAT_COUNT] = {
	"probe", "remove", "prepare", "suspend", "suspend_late", "suspend_noirq",
	"resume_noirq", "resume_early", "resume", "complete", "rpm_suspend", "rpm_resume",
};

static const char *const op_names[DL_OP_COUNT] = {
	"probe", "suspend", "resume", "unbind", "bind", "remove", "add",
	"link_add", "link_del", "rpm_get", "rpm_put",
};

static const char *const dist_names[] = {
	"none", "fixed", "uniform", "exp", "normal", "lognormal", "empirical",
};

/* Bit i of a DL_FLAG_* value, named as in include/linux/device.h. */
static const char *const flag_names[] = {
	"STATELESS", "AUTOREMOVE_CONSUMER", "PM_RUNTIME", "RPM_ACTIVE",
	"AUTOREMOVE_SUPPLIER", "AUTOPROBE_CONSUMER", "MANAGED", "SYNC_STATE_ONLY",
	"INFERRED", "CYCLE",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *dl_lat_key_name(unsigned key)
{
	return key < DL_LAT_COUNT ? lat_key_names[key] : NULL;
}

const char *dl_op_name(unsigned kind)
{
	return kind < DL_OP_COUNT ? op_names[kind] : NULL;
}

const char *dl_dist_name(unsigned dist)
{
	return dist < ARRAY_SIZE(dist_names) ? dist_names[dist] : NULL;
}

int dl_flag_from_name(const char *name, uint32_t *bit)
{
	if (!strncmp(name, "DL_FLAG_", 8))
		name += 8;
	for (unsigned i = 0; i < ARRAY_SIZE(flag_names); i++) {
		if (!strcmp(name, flag_names[i])) {
			*bit = 1u << i;
			return 0;
		}
	}
	return -EINVAL;
}

/* " (device 'cam0')": whom the array element at the head of PATH describes, or "". */
static void sc_who(const struct sc_build *b, const char *path, char *buf, size_t len)
{
	char key[16];
	unsigned long n;
	json_t *e;
	const char *a, *z;

	buf[0] = '\0';
	if (!b->root || sscanf(path, "%15[a-z][%lu]", key, &n) != 2)
		return;
	e = json_array_get(json_object_get(b->root, key), n);
	if (!json_is_object(e))
		return;
	if (!strcmp(key, "devices") && (a = json_string_value(json_object_get(e, "name"))))
		snprintf(buf, len, " (device '%s')", a);
	else if (!strcmp(key, "links") && (a = json_string_value(json_object_get(e, "consumer"))) &&
		 (z = json_string_value(json_object_get(e, "supplier"))))
		snprintf(buf, len, " (link '%s' -> '%s')", a, z);
	else if ((!strcmp(key, "faults") || !strcmp(key, "script")) &&
		 (a = json_string_value(json_object_get(e, "device"))))
		snprintf(buf, len, " (device '%s')", a);
}

/* ":LINE:COL" of PATH's value in the file, or "" (not found, or from --set). */
static void sc_where(const struct sc_build *b, const char *path, char *buf, size_t len)
{
	unsigned line, col;
	FILE *f;
	char *text;
	long n;

	buf[0] = '\0';
	if (!b->src || !path || !*path || *path == '-' || (b->nov && !strncmp(path, "generate", 8)))
		return;
	f = fopen(b->src, "rb");
	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (text = malloc((size_t)n))) {
		if (fread(text, 1, (size_t)n, f) == (size_t)n && !sc_locate(text, (size_t)n, path, &line, &col))
			snprintf(buf, len, ":%u:%u", line, col);
		free(text);
	}
	fclose(f);
}

/*
 * The message is "FILE:LINE:COL: PATH (device 'NAME'): REASON".  Names are up
 * to DL_SC_MAX_NAME bytes: when the whole does not fit in dl_error.msg the
 * name part is cut ("...") so that the reason is never the part lost.
 */
#define SC_WHO_MIN 40

int sc_fail(struct sc_build *b, const char *path, const char *fmt, ...)
{
	char where[32], who[2 * DL_SC_MAX_NAME + 32], why[sizeof(b->err->msg)];
	const char *sep = path && *path ? ": " : "";
	size_t room = sizeof(b->err->msg) - 1, fixed;
	va_list ap;
	int n;

	sc_where(b, path, where, sizeof(where));
	if (path)
		sc_who(b, path, who, sizeof(who));
	else
		who[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fixed = strlen(b->file) + strlen(where) + 2 + (path ? strlen(path) : 0) + strlen(sep) +
		strlen(why);
	if (fixed + strlen(who) > room && strlen(who) > SC_WHO_MIN) {
		size_t keep = fixed + SC_WHO_MIN < room ? room - fixed - 4 : SC_WHO_MIN - 4;

		memcpy(who + keep, "...)", 5);
	}
	n = snprintf(b->err->msg, sizeof(b->err->msg), "%s%s: %s%s%s", b->file, where,
		     path ? path : "", who, sep);
	/* still too long only when the file's name or the path alone is: the reason is cut */
	if (n >= 0 && (size_t)n < room) {
		size_t len = strlen(why);

		if (len > room - (size_t)n)
			len = room - (size_t)n;
		memcpy(b->err->msg + n, why, len);
		b->err->msg[(size_t)n + len] = '\0';
	}
	return -EINVAL;
}

void sc_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

int sc_nomem(struct sc_build *b)
{
	snprintf(b->err->msg, sizeof(b->err->msg), "%s: out of memory", b->file);
	return -ENOMEM;
}

static int grow(void **p, uint32_t *cap, uint64_t need, size_t elem)
{
	uint64_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (c > UINT32_MAX)
		c = UINT32_MAX;
	q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = (uint32_t)c;
	return 0;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static int rehash(struct sc_build *b, uint32_t want)
{
	uint32_t size = 1024, *t;

	while (size < 2 * (uint64_t)want)
		size *= 2;
	t = calloc(size, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (uint32_t d = 0; d < b->s->ndev; d++) {
		uint32_t h = name_hash(b->s->names + b->s->dev[d].name_off) & (size - 1);

		while (t[h])
			h = (h + 1) & (size - 1);
		t[h] = d + 1;
	}
	free(b->hash);
	b->hash = t;
	b->hash_mask = size - 1;
	return 0;
}

int sc_reserve_devices(struct sc_build *b, uint32_t n)
{
	uint64_t need = (uint64_t)b->s->ndev + n;

	if (need > DL_SC_MAX_DEVICES)
		return sc_fail(b, "devices", "%llu devices in all; expected at most %u",
			       (unsigned long long)need, DL_SC_MAX_DEVICES);
	if (grow((void **)&b->s->dev, &b->cap_dev, need, sizeof(*b->s->dev)))
		return sc_nomem(b);
	if (!b->hash || need * 2 > (uint64_t)b->hash_mask + 1)
		if (rehash(b, (uint32_t)need))
			return sc_nomem(b);
	return 0;
}

int sc_reserve_links(struct sc_build *b, uint32_t n)
{
	uint64_t need = (uint64_t)b->s->nlink + n;

	if (need > DL_SC_MAX_LINKS)
		return sc_fail(b, "links", "%llu links in all; expected at most %u",
			       (unsigned long long)need, DL_SC_MAX_LINKS);
	if (grow((void **)&b->s->link, &b->cap_link, need, sizeof(*b->s->link)))
		return sc_nomem(b);
	return 0;
}

uint32_t sc_lookup(const struct sc_build *b, const char *name)
{
	uint32_t h;

	if (!b->hash)
		return DL_SC_NONE;
	for (h = name_hash(name) & b->hash_mask; b->hash[h]; h = (h + 1) & b->hash_mask)
		if (!strcmp(b->s->names + b->s->dev[b->hash[h] - 1].name_off, name))
			return b->hash[h] - 1;
	return DL_SC_NONE;
}

int64_t sc_add_device(struct sc_build *b, const char *path, const char *name, size_t len,
		      uint32_t parent, uint32_t profile, bool async, bool hotplug)
{
	struct dl_scenario *s = b->s;
	struct dl_sc_device *d;
	uint32_t h, idx;
	int ret;

	if (len == 0 || len > DL_SC_MAX_NAME || memchr(name, '\0', len))
		return sc_fail(b, path, "bad device name; expected 1 to %u characters",
			       DL_SC_MAX_NAME);
	ret = sc_reserve_devices(b, 1);
	if (ret)
		return ret;
	for (h = name_hash(name) & b->hash_mask; b->hash[h]; h = (h + 1) & b->hash_mask)
		if (!strcmp(s->names + s->dev[b->hash[h] - 1].name_off, name))
			return sc_fail(b, path, "duplicate device name '%s'; expected unique names",
				       name);
	if (s->names_len + len + 1 > b->names_cap) {
		size_t c = b->names_cap ? b->names_cap : 4096;
		char *q;

		while (c < s->names_len + len + 1)
			c *= 2;
		if (c > UINT32_MAX)
			return sc_fail(b, path, "device names too long in all; expected under 4 GiB");
		q = realloc(s->names, c);
		if (!q)
			return sc_nomem(b);
		s->names = q;
		b->names_cap = c;
	}
	idx = s->ndev++;
	d = &s->dev[idx];
	d->name_off = (uint32_t)s->names_len;
	memcpy(s->names + s->names_len, name, len);
	s->names[s->names_len + len] = '\0';
	s->names_len += len + 1;
	d->parent = parent;
	d->profile = profile;
	d->async = async;
	d->hotplug = hotplug;
	b->hash[h] = idx + 1;
	return idx;
}

int sc_add_link(struct sc_build *b, uint32_t consumer, uint32_t supplier, uint32_t flags)
{
	int ret = sc_reserve_links(b, 1);

	if (ret)
		return ret;
	b->s->link[b->s->nlink++] = (struct dl_sc_link){ consumer, supplier, flags };
	return 0;
}

void sc_build_fini(struct sc_build *b)
{
	free(b->hash);
	b->hash = NULL;
}

void dl_scenario_free(struct dl_scenario *s)
{
	if (!s)
		return;
	free(s->path);
	free(s->name);
	free(s->names);
	free(s->dev);
	free(s->link);
	free(s->prof);
	free(s->op);
	free(s->fault);
	free(s->topology);
	for (uint32_t i = 0; i < s->nemp; i++)
		free(s->emp[i]);
	free(s->emp);
	for (uint32_t i = 0; s->driver && i < s->ndriver; i++)
		free(s->driver[i]);
	free(s->driver);
	free(s);
}

/*
 * The devices whose driver enables runtime PM: those an rpm op names or a
 * PM_RUNTIME link joins, and their ancestors (a parent must be able to
 * runtime-resume under its child).  The kernel mode's module enables runtime
 * PM in the probe of these, and the engines model the same
 * (dl_core_set_rpm_users()).  calloc'd, one byte per device (and one more).
 */
uint8_t *dl_sc_runtime_pm_users(const struct dl_scenario *sc)
{
	const uint32_t pm_runtime = 1u << 2;   /* DL_FLAG_PM_RUNTIME (scenario.h) */
	uint8_t *u = calloc(sc->ndev + 1, 1);

	if (!u)
		return NULL;
	for (uint32_t i = 0; i < sc->nop; i++)
		if ((sc->op[i].kind == DL_OP_RPM_GET || sc->op[i].kind == DL_OP_RPM_PUT) &&
		    sc->op[i].dev < sc->ndev)
			u[sc->op[i].dev] = 1;
	for (uint32_t i = 0; i < sc->nlink; i++)
		if (sc->link[i].flags & pm_runtime)
			u[sc->link[i].consumer] = u[sc->link[i].supplier] = 1;
	for (uint32_t i = 0; i < sc->nop; i++)
		if (sc->op[i].kind == DL_OP_LINK_ADD && (sc->op[i].flags & pm_runtime) &&
		    sc->op[i].dev < sc->ndev && sc->op[i].dev2 < sc->ndev)
			u[sc->op[i].dev] = u[sc->op[i].dev2] = 1;
	/* parents precede children: one backward pass marks every ancestor */
	for (uint32_t d = sc->ndev; d-- > 0;)
		if (u[d] && sc->dev[d].parent != DL_SC_NONE)
			u[sc->dev[d].parent] = 1;
	return u;
}

const char *dl_sc_name(const struct dl_scenario *s, uint32_t dev)
{
	return dev < s->ndev ? s->names + s->dev[dev].name_off : "?";
}

const char *dl_sc_driver(const struct dl_scenario *s, uint32_t dev)
{
	return s->driver && dev < s->ndriver ? s->driver[dev] : NULL;
}

uint32_t dl_sc_find(const struct dl_scenario *s, const char *name)
{
	for (uint32_t d = 0; d < s->ndev; d++)
		if (!strcmp(s->names + s->dev[d].name_off, name))
			return d;
	return DL_SC_NONE;
}

const struct dl_latency *dl_sc_latency(const struct dl_scenario *s, uint32_t dev,
				       enum dl_lat_key key)
{
	return &s->prof[s->dev[dev].profile].lat[key];
}

/* A uniform double in (0, 1) from 53 random bits. */
static double unit_open(uint64_t r)
{
	return ((double)(r >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double std_normal(uint64_t r1, uint64_t r2)
{
	return sqrt(-2.0 * log(unit_open(r1))) * cos(2.0 * M_PI * unit_open(r2));
}

int64_t dl_latency_sample(const struct dl_latency *l, uint64_t seed, uint32_t dev,
			  uint32_t key, uint32_t occurrence)
{
	/* One hash per (seed, dev, key, occurrence): no state, so no call order. */
	uint64_t r1 = dl_mix64(seed ^ dl_mix64(((uint64_t)dev << 32 | key) ^
					       dl_mix64((uint64_t)occurrence + 0x51ed27)));
	uint64_t r2 = dl_mix64(r1);
	double x, m = (double)l->mean, sd = (double)l->sd;
	int64_t lo = l->min > 0 ? l->min : 0, hi = l->max;

	switch (l->dist) {
	case DL_DIST_NONE:
		return 0;
	case DL_DIST_FIXED:
		x = m;
		break;
	case DL_DIST_UNIFORM:
		x = (double)l->min + unit_open(r1) * ((double)l->max - (double)l->min);
		break;
	case DL_DIST_EXP:
		x = -m * log(unit_open(r1));
		break;
	case DL_DIST_NORMAL:
		x = m + sd * std_normal(r1, r2);
		break;
	case DL_DIST_LOGNORMAL: {
		/* mean and sd of the sample: sigma^2 = ln(1 + sd^2/mean^2) */
		double s2 = m > 0 ? log1p(sd * sd / (m * m)) : 0;

		x = m > 0 ? exp(log(m) - s2 / 2 + sqrt(s2) * std_normal(r1, r2)) : 0;
		break;
	}
	case DL_DIST_EMPIRICAL:
		x = l->nsamp ? (double)l->samp[r1 % l->nsamp] : 0;
		break;
	default:
		return 0;
	}
	if (!(x >= (double)lo))		/* also NaN */
		return lo;
	if (x >= (double)hi)
		return hi;
	return (int64_t)llround(x);
}
