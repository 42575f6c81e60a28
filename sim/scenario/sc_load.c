/*
 * sc_load.c - dl_scenario_load(): parse a scenario file with Jansson and
 * validate every field against shared/SPEC.md "Scenario files".
 *
 * Jansson keeps line and column only for syntax errors, so a semantic error
 * names the file and the key path instead ("devices[3].parent: ...").
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/scenario/sc_internal.h"

#define EPROBE_DEFER 517	/* kernel-internal, include/linux/err.h */

static const char *const top_keys[] = {
	"format", "name", "seed", "defaults", "devices", "links", "generate",
	"faults", "script", "cost", NULL,
};

static const struct { const char *name; int err; } errno_names[] = {
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EIO", EIO }, { "ENXIO", ENXIO },
	{ "EAGAIN", EAGAIN }, { "ENOMEM", ENOMEM }, { "EACCES", EACCES },
	{ "EBUSY", EBUSY }, { "ENODEV", ENODEV }, { "EINVAL", EINVAL },
	{ "ENOSPC", ENOSPC }, { "ETIMEDOUT", ETIMEDOUT }, { "EPROBE_DEFER", EPROBE_DEFER },
};

int sc_check_keys(struct sc_build *b, const char *path, json_t *obj,
		  const char *const *allowed)
{
	char list[256];
	size_t n = 0;

	for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
		const char *k = json_object_iter_key(it);
		const char *const *a;

		if (!strncmp(k, "x-", 2))
			continue;
		for (a = allowed; *a && strcmp(*a, k); a++)
			;
		if (*a)
			continue;
		list[0] = '\0';
		for (a = allowed; *a && n < sizeof(list); a++)
			n += snprintf(list + n, sizeof(list) - n, "%s%s", a == allowed ? "" : ", ", *a);
		return sc_fail(b, path, "unknown key '%s'; expected one of %s or an \"x-...\" key",
			       k, list);
	}
	return 0;
}

static int want_object(struct sc_build *b, const char *path, json_t *v)
{
	return json_is_object(v) ? 0 : sc_fail(b, path, "expected an object");
}

int sc_get_uint(struct sc_build *b, const char *path, json_t *v, uint64_t max,
		uint64_t *out)
{
	if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
	    json_real_value(v) >= 0 && json_real_value(v) <= (double)max) {
		*out = (uint64_t)json_real_value(v);
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return sc_fail(b, path, "expected an integer from 0 to %llu",
			       (unsigned long long)max);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int sc_get_real(struct sc_build *b, const char *path, json_t *v, double lo, double hi,
		double *out)
{
	double x;

	if (!json_is_number(v))
		return sc_fail(b, path, "expected a number from %g to %g", lo, hi);
	x = json_number_value(v);
	if (!(x >= lo && x <= hi))
		return sc_fail(b, path, "%g is out of range; expected a number from %g to %g",
			       x, lo, hi);
	*out = x;
	return 0;
}

int sc_get_bool(struct sc_build *b, const char *path, json_t *v, bool *out)
{
	if (!json_is_boolean(v))
		return sc_fail(b, path, "expected true or false");
	*out = json_is_true(v);
	return 0;
}

static int get_string(struct sc_build *b, const char *path, json_t *v, const char **out)
{
	if (!json_is_string(v))
		return sc_fail(b, path, "expected a string");
	*out = json_string_value(v);
	return 0;
}

/* A duration: a number of ns, or a string with a unit ("1.5ms", "300 us"). */
int sc_parse_duration(struct sc_build *b, const char *path, json_t *v, int64_t *out)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	const char *expect = "expected a number of ns or a string like \"1.5ms\" "
			     "(units ns, us, ms, s)";
	double x, mult = 0;

	if (json_is_number(v)) {
		x = json_number_value(v);
		/* SPEC.md: a bare number is nanoseconds, so 1.5 is surely a unit left out */
		if (json_is_real(v) && isfinite(x) && x != floor(x))
			return sc_fail(b, path, "%g would be a fraction of a nanosecond (a bare number "
				       "is in ns); expected whole ns or a string with its unit, like "
				       "\"%gms\" or \"%gus\"", x, x, x);
	} else if (json_is_string(v)) {
		const char *str = json_string_value(v), *p;
		char *end;

		if (!((*str >= '0' && *str <= '9') || *str == '.' || *str == '-'))
			return sc_fail(b, path, "cannot parse latency '%s'; %s", str, expect);
		x = strtod(str, &end);
		for (p = end; *p == ' '; p++)
			;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(p, units[i].unit))
				mult = units[i].ns;
		if (end == str || !mult)
			return sc_fail(b, path, "cannot parse latency '%s'; %s", str, expect);
		x *= mult;
	} else {
		return sc_fail(b, path, "expected a latency: %s, or an object with \"dist\"",
			       expect + strlen("expected "));
	}
	/* 1e300s overflows to inf: out of range, not negative */
	if (isnan(x) || x < 0)
		return sc_fail(b, path, "negative latency %g ns; expected a latency of 0 or more",
			       x);
	if (x > 9.2e18)
		return sc_fail(b, path, "latency %g ns is out of range; expected under 292 years", x);
	*out = (int64_t)llround(x);
	return 0;
}

/*
 * {"dist": "empirical", "samples": [...]}: measured latencies (import-log),
 * each a latency as above; a sample is drawn uniformly among them.
 */
static int parse_empirical(struct sc_build *b, const char *path, json_t *samples,
			   bool other_keys, struct dl_latency *l)
{
	struct dl_scenario *s = b->s;
	char sub[160];
	double sum = 0;
	int64_t *arr, **emp;
	json_t *x;
	size_t i, n;
	int ret;

	if (other_keys)
		return sc_fail(b, path, "\"empirical\" takes no mean, sd, min or max; "
			       "expected only \"samples\"");
	sc_path(sub, sizeof(sub), "%s.samples", path);
	if (!json_is_array(samples) || !json_array_size(samples) ||
	    json_array_size(samples) > UINT32_MAX)
		return sc_fail(b, sub, "expected a non-empty array of latencies");
	n = json_array_size(samples);
	emp = realloc(s->emp, (s->nemp + 1) * sizeof(*emp));
	if (!emp)
		return sc_nomem(b);
	s->emp = emp;
	arr = malloc(n * sizeof(*arr));
	if (!arr)
		return sc_nomem(b);
	s->emp[s->nemp++] = arr;
	json_array_foreach(samples, i, x) {
		sc_path(sub, sizeof(sub), "%s.samples[%zu]", path, i);
		if ((ret = sc_parse_duration(b, sub, x, &arr[i])))
			return ret;
		sum += (double)arr[i];
	}
	l->dist = DL_DIST_EMPIRICAL;
	l->nsamp = (uint32_t)n;
	l->samp = arr;
	l->mean = (int64_t)llround(sum / (double)n);
	return 0;
}

/* PATH.dist of latency object V: its name into *DIST, the distribution into l->dist. */
static int parse_dist(struct sc_build *b, const char *path, json_t *v, struct dl_latency *l,
		      const char **dist)
{
	char sub[160];
	int ret;

	sc_path(sub, sizeof(sub), "%s.dist", path);
	if (!json_object_get(v, "dist"))
		return sc_fail(b, sub, "missing; expected \"fixed\", \"uniform\", \"exp\", "
			       "\"normal\", \"lognormal\" or \"empirical\"");
	ret = get_string(b, sub, json_object_get(v, "dist"), dist);
	if (ret)
		return ret;
	for (l->dist = DL_DIST_FIXED; dl_dist_name(l->dist); l->dist++)
		if (!strcmp(*dist, dl_dist_name(l->dist)))
			break;
	if (!dl_dist_name(l->dist))
		return sc_fail(b, sub, "unknown distribution '%s'; expected \"fixed\", "
			       "\"uniform\", \"exp\", \"normal\", \"lognormal\" or "
			       "\"empirical\"", *dist);
	return 0;
}

/* PATH.NAME, a duration of 0 or more, into *DST when J is given. */
static int lat_field(struct sc_build *b, const char *path, const char *name, json_t *j,
		     int64_t *dst)
{
	char sub[160];

	if (!j)
		return 0;
	sc_path(sub, sizeof(sub), "%s.%s", path, name);
	if (json_is_number(j) && json_number_value(j) < 0)
		return sc_fail(b, sub, "%s is negative; expected 0 or more", name);
	return sc_parse_duration(b, sub, j, dst);
}

/* The fields distribution DIST needs and takes (MEAN, SD, MIN, MAX: given or NULL). */
static int check_dist_fields(struct sc_build *b, const char *path, const char *dist,
			     const struct dl_latency *l, const json_t *mean, const json_t *sd,
			     const json_t *min, const json_t *max)
{
	switch (l->dist) {
	case DL_DIST_FIXED:
	case DL_DIST_EXP:
		if (!mean)
			return sc_fail(b, path, "\"%s\" without \"mean\"; expected a mean", dist);
		if (sd)
			return sc_fail(b, path, "\"%s\" takes no \"sd\"; expected only mean, min, max",
				       dist);
		break;
	case DL_DIST_UNIFORM:
		if (!min || !max)
			return sc_fail(b, path, "\"uniform\" without \"min\" and \"max\"; "
				       "expected both");
		if (mean || sd)
			return sc_fail(b, path, "\"uniform\" takes no mean or sd; expected min and max");
		break;
	case DL_DIST_NORMAL:
	case DL_DIST_LOGNORMAL:
		if (!mean || !sd)
			return sc_fail(b, path, "\"%s\" without \"mean\" and \"sd\"; expected both",
				       dist);
		if (l->dist == DL_DIST_LOGNORMAL && l->mean == 0 && l->sd > 0)
			return sc_fail(b, path, "lognormal with mean 0; expected a positive mean");
		break;
	}
	if (l->min > l->max)
		return sc_fail(b, path, "min %lld ns > max %lld ns; expected min <= max",
			       (long long)l->min, (long long)l->max);
	return 0;
}

static int parse_latency(struct sc_build *b, const char *path, json_t *v,
			 struct dl_latency *l)
{
	static const char *const keys[] = { "dist", "mean", "sd", "min", "max", "samples", NULL };
	const char *dist = NULL;
	json_t *mean, *sd, *min, *max, *samples;
	int ret;

	*l = (struct dl_latency){ DL_DIST_FIXED, 0, 0, 0, INT64_MAX, 0, NULL };
	if (!json_is_object(v))
		return sc_parse_duration(b, path, v, &l->mean);
	if ((ret = sc_check_keys(b, path, v, keys)) || (ret = parse_dist(b, path, v, l, &dist)))
		return ret;
	mean = json_object_get(v, "mean");
	sd = json_object_get(v, "sd");
	min = json_object_get(v, "min");
	max = json_object_get(v, "max");
	samples = json_object_get(v, "samples");
	if (l->dist == DL_DIST_EMPIRICAL)
		return parse_empirical(b, path, samples, mean || sd || min || max, l);
	if (samples)
		return sc_fail(b, path, "\"samples\" with \"%s\"; expected them only with "
			       "\"empirical\"", dist);
	if ((ret = lat_field(b, path, "mean", mean, &l->mean)) ||
	    (ret = lat_field(b, path, "sd", sd, &l->sd)) ||
	    (ret = lat_field(b, path, "min", min, &l->min)) ||
	    (ret = lat_field(b, path, "max", max, &l->max)))
		return ret;
	return check_dist_fields(b, path, dist, l, mean, sd, min, max);
}

/* Latency keys (and "async") of "defaults" or of one device. */
static int parse_profile(struct sc_build *b, const char *path, json_t *obj,
			 struct dl_profile *p, bool *custom, bool *async)
{
	char sub[160];
	json_t *v;
	int ret;

	*custom = false;
	for (unsigned k = 0; k < DL_LAT_COUNT; k++) {
		v = json_object_get(obj, dl_lat_key_name(k));
		if (!v)
			continue;
		sc_path(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", dl_lat_key_name(k));
		ret = parse_latency(b, sub, v, &p->lat[k]);
		if (ret)
			return ret;
		*custom = true;
	}
	v = json_object_get(obj, "cpu");
	if (v) {
		double share = 0;	/* set whenever sc_get_real() succeeds; -O2 cannot see it */

		sc_path(sub, sizeof(sub), "%s%scpu", path, *path ? "." : "");
		if ((ret = sc_get_real(b, sub, v, 0, 1, &share)))
			return ret;
		p->cpu_ppm = (uint32_t)(share * 1e6 + 0.5);
		*custom = true;
	}
	v = json_object_get(obj, "async");
	if (v) {
		sc_path(sub, sizeof(sub), "%s%sasync", path, *path ? "." : "");
		return sc_get_bool(b, sub, v, async);
	}
	return 0;
}

static bool lat_equal(const struct dl_latency *a, const struct dl_latency *c)
{
	return a->dist == c->dist && a->mean == c->mean && a->sd == c->sd &&
	       a->min == c->min && a->max == c->max && a->nsamp == c->nsamp &&
	       (!a->nsamp || !memcmp(a->samp, c->samp, a->nsamp * sizeof(*a->samp)));
}

/* Index of a profile equal to @p, appending it if new. */
static int64_t intern_profile(struct sc_build *b, const struct dl_profile *p)
{
	struct dl_scenario *s = b->s;
	uint32_t from = s->nprof > 256 ? s->nprof - 256 : 0;

	for (uint32_t i = from; i < s->nprof; i++) {
		unsigned k;

		if (s->prof[i].cpu_ppm != p->cpu_ppm)
			continue;
		for (k = 0; k < DL_LAT_COUNT && lat_equal(&s->prof[i].lat[k], &p->lat[k]); k++)
			;
		if (k == DL_LAT_COUNT)
			return i;
	}
	if (s->nprof == b->cap_prof) {
		uint32_t c = b->cap_prof ? 2 * b->cap_prof : 8;
		struct dl_profile *q = realloc(s->prof, c * sizeof(*q));

		if (!q)
			return sc_nomem(b);
		s->prof = q;
		b->cap_prof = c;
	}
	s->prof[s->nprof] = *p;
	return s->nprof++;
}

static int lookup_dev(struct sc_build *b, const char *path, json_t *v, uint32_t *out)
{
	const char *name = NULL;
	int ret = get_string(b, path, v, &name);

	if (ret)
		return ret;
	*out = sc_lookup(b, name);
	if (*out == DL_SC_NONE)
		return sc_fail(b, path, "unknown device '%s'; expected the name of a device "
			       "of \"devices\" or of the generator", name);
	return 0;
}

static int parse_flags(struct sc_build *b, const char *path, json_t *v, uint32_t *flags)
{
	char sub[160];
	size_t i;
	json_t *f;

	*flags = 0;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return sc_fail(b, path, "expected an array of DL_FLAG_* names without the prefix");
	json_array_foreach(v, i, f) {
		uint32_t bit;

		sc_path(sub, sizeof(sub), "%s[%zu]", path, i);
		if (!json_is_string(f) || dl_flag_from_name(json_string_value(f), &bit))
			return sc_fail(b, sub, "unknown flag %s%s%s; expected STATELESS, "
				       "AUTOREMOVE_CONSUMER, PM_RUNTIME, RPM_ACTIVE, AUTOREMOVE_SUPPLIER, "
				       "AUTOPROBE_CONSUMER, MANAGED, SYNC_STATE_ONLY, INFERRED or CYCLE",
				       json_is_string(f) ? "'" : "",
				       json_is_string(f) ? json_string_value(f) : "(not a string)",
				       json_is_string(f) ? "'" : "");
		*flags |= bit;
	}
	return 0;
}

/* Device @idx of the listed @arr is driven by @v's string. */
static int set_driver(struct sc_build *b, json_t *arr, int64_t idx, json_t *v)
{
	struct dl_scenario *s = b->s;

	if (!s->driver) {
		s->ndriver = (uint32_t)json_array_size(arr);
		s->driver = calloc(s->ndriver, sizeof(*s->driver));
		if (!s->driver)
			return sc_nomem(b);
	}
	if ((uint64_t)idx >= s->ndriver)
		return 0;
	free(s->driver[idx]);
	s->driver[idx] = strdup(json_string_value(v));
	return s->driver[idx] ? 0 : sc_nomem(b);
}

static int parse_devices(struct sc_build *b, json_t *arr, const struct dl_profile *def,
			 bool def_async)
{
	static const char *const keys[] = {
		"name", "parent", "async", "cpu", "hotplug", "probe", "remove", "prepare", "suspend",
		"suspend_late", "suspend_noirq", "resume_noirq", "resume_early", "resume",
		"complete", "rpm_suspend", "rpm_resume", NULL,
	};
	char path[64], sub[96];
	size_t i;
	json_t *d;
	int ret;

	if (!json_is_array(arr))
		return sc_fail(b, "devices", "expected an array of device objects");
	if (json_array_size(arr) > DL_SC_MAX_DEVICES)
		return sc_fail(b, "devices", "%zu devices; expected at most %u",
			       json_array_size(arr), DL_SC_MAX_DEVICES);
	ret = sc_reserve_devices(b, (uint32_t)json_array_size(arr));
	if (ret)
		return ret;
	json_array_foreach(arr, i, d) {
		struct dl_profile p = *def;
		bool custom, async = def_async, hotplug = false;
		uint32_t parent = DL_SC_NONE;
		const char *name = NULL;
		int64_t prof = 0, idx;
		json_t *v;

		sc_path(path, sizeof(path), "devices[%zu]", i);
		if ((ret = want_object(b, path, d)) || (ret = sc_check_keys(b, path, d, keys)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.name", path);
		if (!json_object_get(d, "name"))
			return sc_fail(b, sub, "missing; expected a unique device name");
		if ((ret = get_string(b, sub, json_object_get(d, "name"), &name)))
			return ret;
		v = json_object_get(d, "parent");
		if (v && !json_is_null(v)) {
			const char *pn = NULL;

			sc_path(sub, sizeof(sub), "%s.parent", path);
			if ((ret = get_string(b, sub, v, &pn)))
				return ret;
			parent = sc_lookup(b, pn);
			if (parent == DL_SC_NONE)
				return sc_fail(b, sub, "unknown device '%s'; expected a device listed "
					       "before it", pn);
		}
		v = json_object_get(d, "hotplug");
		sc_path(sub, sizeof(sub), "%s.hotplug", path);
		if (v && (ret = sc_get_bool(b, sub, v, &hotplug)))
			return ret;
		if (parent != DL_SC_NONE && b->s->dev[parent].hotplug && !hotplug)
			return sc_fail(b, sub, "parent '%s' is hot-plugged; expected this device to "
				       "be \"hotplug\": true too", dl_sc_name(b->s, parent));
		if ((ret = parse_profile(b, path, d, &p, &custom, &async)))
			return ret;
		if (custom && (prof = intern_profile(b, &p)) < 0)
			return (int)prof;
		sc_path(sub, sizeof(sub), "%s.name", path);
		idx = sc_add_device(b, sub, name, strlen(name), parent, (uint32_t)prof, async,
				    hotplug);
		if (idx < 0)
			return (int)idx;
		/* "x-driver": free-form like every x- key; a non-empty string is the driver's name */
		v = json_object_get(d, "x-driver");
		if (json_is_string(v) && json_string_length(v) && (ret = set_driver(b, arr, idx, v)))
			return ret;
	}
	return 0;
}

static int parse_links(struct sc_build *b, json_t *arr)
{
	static const char *const keys[] = { "consumer", "supplier", "flags", NULL };
	char path[64], sub[96];
	size_t i;
	json_t *l;
	int ret;

	if (!json_is_array(arr))
		return sc_fail(b, "links", "expected an array of link objects");
	if (json_array_size(arr) > DL_SC_MAX_LINKS)
		return sc_fail(b, "links", "%zu links; expected at most %u",
			       json_array_size(arr), DL_SC_MAX_LINKS);
	if ((ret = sc_reserve_links(b, (uint32_t)json_array_size(arr))))
		return ret;
	json_array_foreach(arr, i, l) {
		uint32_t c, s, flags;

		sc_path(path, sizeof(path), "links[%zu]", i);
		if ((ret = want_object(b, path, l)) || (ret = sc_check_keys(b, path, l, keys)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.consumer", path);
		if (!json_object_get(l, "consumer"))
			return sc_fail(b, sub, "missing; expected a device name");
		if ((ret = lookup_dev(b, sub, json_object_get(l, "consumer"), &c)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.supplier", path);
		if (!json_object_get(l, "supplier"))
			return sc_fail(b, sub, "missing; expected a device name");
		if ((ret = lookup_dev(b, sub, json_object_get(l, "supplier"), &s)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.flags", path);
		if ((ret = parse_flags(b, sub, json_object_get(l, "flags"), &flags)))
			return ret;
		if ((ret = sc_add_link(b, c, s, flags)))
			return ret;
	}
	return 0;
}

static int parse_errno(struct sc_build *b, const char *path, json_t *v, int32_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 4096) {
		*out = (int32_t)json_integer_value(v);
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);

		if (*s == '-')
			s++;
		for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++) {
			if (!strcmp(s, errno_names[i].name)) {
				*out = errno_names[i].err;
				return 0;
			}
		}
	}
	return sc_fail(b, path, "unknown error; expected a positive errno or one of EPERM, "
		       "ENOENT, EIO, ENXIO, EAGAIN, ENOMEM, EACCES, EBUSY, ENODEV, EINVAL, "
		       "ENOSPC, ETIMEDOUT, EPROBE_DEFER");
}

static int parse_faults(struct sc_build *b, json_t *arr)
{
	static const char *const keys[] = { "device", "op", "error", "times", NULL };
	struct dl_scenario *s = b->s;
	char path[64], sub[96];
	size_t i;
	json_t *f;
	int ret;

	if (!json_is_array(arr))
		return sc_fail(b, "faults", "expected an array of fault objects");
	if (json_array_size(arr) > DL_SC_MAX_FAULTS)
		return sc_fail(b, "faults", "%zu faults; expected at most %u",
			       json_array_size(arr), DL_SC_MAX_FAULTS);
	s->fault = calloc(json_array_size(arr) + 1, sizeof(*s->fault));
	if (!s->fault)
		return sc_nomem(b);
	json_array_foreach(arr, i, f) {
		struct dl_sc_fault *ft = &s->fault[s->nfault];
		const char *op = NULL;
		uint64_t times = 0;
		unsigned k;

		sc_path(path, sizeof(path), "faults[%zu]", i);
		if ((ret = want_object(b, path, f)) || (ret = sc_check_keys(b, path, f, keys)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.device", path);
		if (!json_object_get(f, "device"))
			return sc_fail(b, sub, "missing; expected a device name");
		if ((ret = lookup_dev(b, sub, json_object_get(f, "device"), &ft->dev)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.op", path);
		if (!json_object_get(f, "op"))
			return sc_fail(b, sub, "missing; expected the callback that fails");
		if ((ret = get_string(b, sub, json_object_get(f, "op"), &op)))
			return ret;
		for (k = 0; k < DL_LAT_COUNT && strcmp(op, dl_lat_key_name(k)); k++)
			;
		if (k == DL_LAT_COUNT || k == DL_LAT_REMOVE || k == DL_LAT_COMPLETE)
			return sc_fail(b, sub, "'%s' cannot fail; expected probe, prepare, suspend, "
				       "suspend_late, suspend_noirq, resume_noirq, resume_early, resume, "
				       "rpm_suspend or rpm_resume", op);
		ft->lat_key = (uint8_t)k;
		ft->err = EIO;
		sc_path(sub, sizeof(sub), "%s.error", path);
		if (json_object_get(f, "error") &&
		    (ret = parse_errno(b, sub, json_object_get(f, "error"), &ft->err)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.times", path);
		if (json_object_get(f, "times") &&
		    (ret = sc_get_uint(b, sub, json_object_get(f, "times"), UINT32_MAX, &times)))
			return ret;
		ft->times = (uint32_t)times;
		s->nfault++;
	}
	return 0;
}

/* "concurrent": true and its optional "delay" (see struct dl_sc_op). */
static int parse_concurrent(struct sc_build *b, const char *path, json_t *o,
			    struct dl_sc_op *op)
{
	json_t *c = json_object_get(o, "concurrent"), *d = json_object_get(o, "delay");
	char sub[96];
	bool on = false;
	int ret;

	if (c) {
		sc_path(sub, sizeof(sub), "%s.concurrent", path);
		if ((ret = sc_get_bool(b, sub, c, &on)))
			return ret;
	}
	if (d) {
		sc_path(sub, sizeof(sub), "%s.delay", path);
		if (!on)
			return sc_fail(b, sub, "a delay without \"concurrent\": true; expected "
				       "both or neither");
		if ((ret = sc_parse_duration(b, sub, d, &op->delay_ns)))
			return ret;
	}
	op->concurrent = on;
	return 0;
}

static int parse_op(struct sc_build *b, const char *path, json_t *o, struct dl_sc_op *op)
{
	static const char *const k_none[] = { "op", NULL };
	static const char *const k_dev[] = { "op", "device", "concurrent", "delay", NULL };
	static const char *const k_link[] = { "op", "consumer", "supplier", "flags",
					      "concurrent", "delay", NULL };
	static const char *const k_link_del[] = { "op", "consumer", "supplier", "concurrent",
						  "delay", NULL };
	char sub[96];
	const char *name = NULL;
	unsigned k;
	int ret;

	if ((ret = want_object(b, path, o)))
		return ret;
	sc_path(sub, sizeof(sub), "%s.op", path);
	if (!json_object_get(o, "op"))
		return sc_fail(b, sub, "missing; expected an op name");
	if ((ret = get_string(b, sub, json_object_get(o, "op"), &name)))
		return ret;
	for (k = 0; k < DL_OP_COUNT && strcmp(name, dl_op_name(k)); k++)
		;
	if (k == DL_OP_COUNT)
		return sc_fail(b, sub, "unknown op '%s'; expected probe, suspend, resume, unbind, "
			       "bind, remove, add, link_add, link_del, rpm_get or rpm_put", name);
	*op = (struct dl_sc_op){ (uint8_t)k, DL_SC_NONE, DL_SC_NONE, 0, 0, 0 };
	if ((ret = parse_concurrent(b, path, o, op)))
		return ret;
	switch (k) {
	case DL_OP_PROBE:
	case DL_OP_SUSPEND:
	case DL_OP_RESUME:
		if (json_object_get(o, "concurrent") || json_object_get(o, "delay"))
			return sc_fail(b, path, "a %s op cannot be concurrent; expected "
				       "\"concurrent\" only on unbind, bind, remove, add, link_add, "
				       "link_del, rpm_get or rpm_put", name);
		return sc_check_keys(b, path, o, k_none);
	case DL_OP_LINK_ADD:
	case DL_OP_LINK_DEL:
		if ((ret = sc_check_keys(b, path, o, k == DL_OP_LINK_ADD ? k_link : k_link_del)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.consumer", path);
		if (!json_object_get(o, "consumer"))
			return sc_fail(b, sub, "missing; expected a device name");
		if ((ret = lookup_dev(b, sub, json_object_get(o, "consumer"), &op->dev)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.supplier", path);
		if (!json_object_get(o, "supplier"))
			return sc_fail(b, sub, "missing; expected a device name");
		if ((ret = lookup_dev(b, sub, json_object_get(o, "supplier"), &op->dev2)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.flags", path);
		return parse_flags(b, sub, json_object_get(o, "flags"), &op->flags);
	default:
		if ((ret = sc_check_keys(b, path, o, k_dev)))
			return ret;
		sc_path(sub, sizeof(sub), "%s.device", path);
		if (!json_object_get(o, "device"))
			return sc_fail(b, sub, "missing; expected a device name");
		return lookup_dev(b, sub, json_object_get(o, "device"), &op->dev);
	}
}

static int parse_script(struct sc_build *b, json_t *arr)
{
	struct dl_scenario *s = b->s;
	char path[64];
	size_t i, n = arr ? json_array_size(arr) : 3;
	json_t *o;
	int ret;

	if (arr && !json_is_array(arr))
		return sc_fail(b, "script", "expected an array of op objects");
	if (n > DL_SC_MAX_OPS)
		return sc_fail(b, "script", "%zu ops; expected at most %u", n, DL_SC_MAX_OPS);
	s->op = calloc(n + 1, sizeof(*s->op));
	if (!s->op)
		return sc_nomem(b);
	if (!arr) {
		/* Without a script: probe, suspend, resume (shared/SPEC.md). */
		for (i = 0; i < 3; i++)
			s->op[i] = (struct dl_sc_op){ (uint8_t)(DL_OP_PROBE + i), DL_SC_NONE,
						      DL_SC_NONE, 0, 0, 0 };
		s->nop = 3;
		return 0;
	}
	json_array_foreach(arr, i, o) {
		sc_path(path, sizeof(path), "script[%zu]", i);
		if ((ret = parse_op(b, path, o, &s->op[s->nop])))
			return ret;
		if (s->nop == 0 && s->op[0].concurrent)
			return sc_fail(b, path, "the first op cannot be concurrent; expected an "
				       "earlier op for it to race");
		s->nop++;
	}
	return 0;
}

/* cost.KEY, a count up to MAX, into *OUT when given; ZERO: why 0 is refused (NULL: taken). */
static int cost_count(struct sc_build *b, json_t *o, const char *key, uint64_t max,
		      const char *zero, uint32_t *out, bool *given)
{
	json_t *v = json_object_get(o, key);
	char sub[64];
	uint64_t n;
	int ret;

	*given = v != NULL;
	if (!v)
		return 0;
	sc_path(sub, sizeof(sub), "cost.%s", key);
	if ((ret = sc_get_uint(b, sub, v, max, &n)))
		return ret;
	if (!n && zero)
		return sc_fail(b, sub, "%s", zero);
	*out = (uint32_t)n;
	return 0;
}

/* cost.profile: one of sim/engine/cost.c's profile names (the scenario layer does not
 * see the engine). */
static int cost_profile(struct sc_build *b, json_t *o, struct dl_cost *c)
{
	static const char *const profiles[] = { "hardware", "guest", "phone" };
	json_t *v = json_object_get(o, "profile");
	const char *name = json_is_string(v) ? json_string_value(v) : NULL;
	unsigned i;

	if (!v)
		return 0;
	for (i = 0; name && i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (!strcmp(name, profiles[i]))
			break;
	if (!name || i == sizeof(profiles) / sizeof(profiles[0]))
		return sc_fail(b, "cost.profile", "expected \"hardware\", \"guest\" or \"phone\"");
	snprintf(c->profile, sizeof(c->profile), "%s", name);
	return 0;
}

/* The durations of cost: KEYS[1..14] in struct order, then the newer ones with their
 * DL_COST_HAS_* bits. */
static int cost_durations(struct sc_build *b, json_t *o, struct dl_cost *c,
			  const char *const *keys)
{
	/* the keys after max_active, their DL_COST_HAS_* bits and fields */
	static const struct { const char *key; uint32_t bit; size_t off; } newer[] = {
		{ "worker_new_ns", DL_COST_HAS_WORKER_NEW, offsetof(struct dl_cost, worker_new_ns) },
		{ "async_probe_ns", DL_COST_HAS_ASYNC_PROBE, offsetof(struct dl_cost, async_probe_ns) },
		{ "retry_ns", DL_COST_HAS_RETRY, offsetof(struct dl_cost, retry_ns) },
	};
	int64_t *dst[] = { &c->queue_ns, &c->wake_ns, &c->switch_ns, &c->main_ns,
			   &c->probe_check_ns, &c->handoff_ns, &c->reorder_ns,
			   &c->reorder_visit_ns, &c->rpm_ns, &c->rpm_idle_ns, &c->register_ns,
			   &c->link_add_ns, &c->sleep_end_ns, &c->resume_wake_ns };
	char sub[64];
	int ret;

	for (unsigned i = 0; i < sizeof(dst) / sizeof(dst[0]); i++) {
		json_t *v = json_object_get(o, keys[i + 1]);

		sc_path(sub, sizeof(sub), "cost.%s", keys[i + 1]);
		if (v && (ret = sc_parse_duration(b, sub, v, dst[i])))
			return ret;
	}
	for (unsigned i = 0; i < sizeof(newer) / sizeof(newer[0]); i++) {
		json_t *v = json_object_get(o, newer[i].key);

		sc_path(sub, sizeof(sub), "cost.%s", newer[i].key);
		if (v && (ret = sc_parse_duration(b, sub, v,
						  (int64_t *)((char *)c + newer[i].off))))
			return ret;
		if (v)
			c->has |= newer[i].bit;
	}
	return 0;
}

static int parse_cost(struct sc_build *b, json_t *o)
{
	static const char *const keys[] = { "cpus", "queue_ns", "wake_ns", "switch_ns",
					    "main_ns", "probe_check_ns", "handoff_ns",
					    "reorder_ns", "reorder_visit_ns", "rpm_ns", "rpm_idle_ns",
					    "register_ns", "link_add_ns", "sleep_end_ns", "resume_wake_ns",
					    "max_active", "worker_new_ns", "async_probe_ns", "retry_ns",
					    "pool_init", "profile", NULL };
	struct dl_cost *c = &b->s->cost;
	bool given;
	int ret;

	if ((ret = want_object(b, "cost", o)) || (ret = sc_check_keys(b, "cost", o, keys)) ||
	    (ret = cost_count(b, o, "cpus", 65536, "0 cpus; expected 1 or more", &c->cpus,
			      &given)) ||
	    (ret = cost_count(b, o, "max_active", 1u << 20, "0 work items; expected 1 or more",
			      &c->max_active, &given)) ||
	    (ret = cost_profile(b, o, c)) ||
	    (ret = cost_count(b, o, "pool_init", 1u << 20, NULL, &c->pool_init, &given)))
		return ret;
	if (given)
		c->has |= DL_COST_HAS_POOL_INIT;
	return cost_durations(b, o, c, keys);
}

static int parse_seed(struct sc_build *b, json_t *v, uint64_t *seed)
{
	if (json_is_string(v)) {
		const char *str = json_string_value(v);
		char *end;

		errno = 0;
		*seed = strtoull(str, &end, 0);
		if (*str >= '0' && *str <= '9' && !*end && !errno)
			return 0;
	} else if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*seed = (uint64_t)json_integer_value(v);
		return 0;
	}
	return sc_fail(b, "seed", "expected a non-negative integer (or a string of digits "
		       "for seeds above 2^63)");
}

#define DEV_PREFIX "dev."
#define COST_PREFIX "cost."
#define DEFAULTS_PREFIX "defaults."

static bool dev_key(const char *key)
{
	return !strncmp(key, DEV_PREFIX, strlen(DEV_PREFIX));
}

static bool cost_key(const char *key)
{
	return !strncmp(key, COST_PREFIX, strlen(COST_PREFIX));
}

static bool defaults_key(const char *key)
{
	return !strncmp(key, DEFAULTS_PREFIX, strlen(DEFAULTS_PREFIX));
}

/* A key --set does not give to the generator: dev.NAME.KEY, defaults.KEY or cost.KEY. */
static bool own_key(const char *key)
{
	return dev_key(key) || cost_key(key) || defaults_key(key);
}

/* VALUE as JSON when it parses, else as a string. */
static json_t *override_value(const char *value)
{
	json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);

	return v ? v : json_string(value);
}

/*
 * --set cost.KEY=VALUE: set KEY of the scenario's "cost" object (created if
 * absent), validated with the rest of it afterwards, so an unknown KEY or a
 * bad VALUE is reported as the file's own would be ("cost.KEY: ...").
 */
static int apply_cost_overrides(struct sc_build *b, json_t *root)
{
	json_t *cost = json_object_get(root, "cost");

	for (size_t i = 0; i < b->nov; i++) {
		const char *key = b->ov[i].key;
		json_t *v;

		if (!key || !cost_key(key))
			continue;
		if (!key[strlen(COST_PREFIX)]) {
			char sub[320];

			sc_path(sub, sizeof(sub), "--set %s", key);
			return sc_fail(b, sub, "expected cost.KEY=VALUE (KEY: cpus, main_ns, queue_ns, "
				       "wake_ns, ...)");
		}
		if (!cost) {
			cost = json_object();
			if (!cost || json_object_set_new(root, "cost", cost))
				return sc_nomem(b);
		}
		if (!json_is_object(cost))
			return sc_fail(b, "cost", "expected an object");
		v = override_value(b->ov[i].value);
		if (!v || json_object_set_new(cost, key + strlen(COST_PREFIX), v))
			return sc_nomem(b);
	}
	return 0;
}

/*
 * --set defaults.KEY=VALUE: set KEY (a latency key, async or cpu) of the
 * scenario's "defaults" object (created if absent), before it is read, so
 * that every device without KEY of its own takes VALUE and a bad KEY or
 * VALUE is reported as the file's own would be ("defaults.KEY: ...").
 */
static int apply_defaults_overrides(struct sc_build *b, json_t *root)
{
	json_t *defs = json_object_get(root, "defaults");

	for (size_t i = 0; i < b->nov; i++) {
		const char *key = b->ov[i].key;
		json_t *v;

		if (!key || !defaults_key(key))
			continue;
		if (!key[strlen(DEFAULTS_PREFIX)]) {
			char sub[320];

			sc_path(sub, sizeof(sub), "--set %s", key);
			return sc_fail(b, sub, "expected defaults.KEY=VALUE (KEY: async, cpu or a "
				       "latency key such as suspend)");
		}
		if (!defs) {
			defs = json_object();
			if (!defs || json_object_set_new(root, "defaults", defs))
				return sc_nomem(b);
		}
		if (!json_is_object(defs))
			return sc_fail(b, "defaults", "expected an object");
		v = override_value(b->ov[i].value);
		if (!v || json_object_set_new(defs, key + strlen(DEFAULTS_PREFIX), v))
			return sc_nomem(b);
	}
	return 0;
}

/*
 * --set dev.NAME.KEY=VALUE: set KEY (a latency key or "async") of the listed
 * device NAME (which may itself hold dots: KEY is after the last one).  The
 * device's fields are validated with the rest, afterwards.
 */
static int apply_device_overrides(struct sc_build *b, json_t *root)
{
	json_t *devs = json_object_get(root, "devices");

	for (size_t i = 0; i < b->nov; i++) {
		const char *key = b->ov[i].key, *name, *dot;
		char sub[320];
		size_t n, j;
		json_t *d = NULL, *v;
		bool known;

		if (!key || !dev_key(key))
			continue;
		name = key + strlen(DEV_PREFIX);
		dot = strrchr(name, '.');
		sc_path(sub, sizeof(sub), "--set %s", key);
		if (!dot || dot == name || !dot[1])
			return sc_fail(b, sub, "expected dev.NAME.KEY=VALUE (KEY: a latency key such as "
				       "suspend, or async)");
		known = !strcmp(dot + 1, "async") || !strcmp(dot + 1, "cpu");
		for (unsigned k = 0; k < DL_LAT_COUNT; k++)
			known = known || !strcmp(dot + 1, dl_lat_key_name(k));
		if (!known)
			return sc_fail(b, sub, "unknown key '%s'; expected async, cpu or a latency key "
				       "(probe, remove, prepare, suspend, suspend_late, suspend_noirq, "
				       "resume_noirq, resume_early, resume, complete, rpm_suspend, "
				       "rpm_resume)", dot + 1);
		n = (size_t)(dot - name);
		if (!json_is_array(devs))
			return sc_fail(b, sub, "the scenario lists no \"devices\"; expected dev.NAME "
				       "to name a listed device");
		json_array_foreach(devs, j, d) {
			const char *dn = json_string_value(json_object_get(d, "name"));

			if (dn && strlen(dn) == n && !memcmp(dn, name, n))
				break;
		}
		if (j == json_array_size(devs))
			return sc_fail(b, sub, "no listed device named '%.*s'; expected the name of a "
				       "device of \"devices\" (generated devices take generate keys)",
				       (int)n, name);
		v = override_value(b->ov[i].value);
		if (!v || json_object_set_new(d, dot + 1, v))
			return sc_nomem(b);
	}
	return 0;
}

/* Apply --set KEY=VALUE to the "generate" object, creating it if need be. */
static int apply_overrides(struct sc_build *b, json_t *root)
{
	json_t *gen = json_object_get(root, "generate");
	size_t ngen = 0;

	for (size_t i = 0; i < b->nov; i++) {
		if (!b->ov[i].key || !*b->ov[i].key)
			return sc_fail(b, "--set", "empty key; expected KEY=VALUE");
		ngen += !own_key(b->ov[i].key);
	}
	if (!ngen)
		return 0;
	if (!gen && json_object_get(root, "devices")) {
		for (size_t i = 0; i < b->nov; i++)
			if (!own_key(b->ov[i].key)) {
				char sub[300];
				/* NAME.KEY: one device's; KEY: every device's */
				bool one = strchr(b->ov[i].key, '.');

				sc_path(sub, sizeof(sub), "--set %s", b->ov[i].key);
				return sc_fail(b, sub, "this scenario has no \"generate\" object, so "
					       "there is no generator key to set; expected "
					       "dev.NAME.KEY=VALUE for one listed device, "
					       "defaults.KEY=VALUE for every device or cost.KEY=VALUE "
					       "(e.g. --set %s%s=%s)", one ? "dev." : "defaults.",
					       b->ov[i].key, b->ov[i].value);
			}
	}
	if (!gen) {
		gen = json_object();
		if (!gen || json_object_set_new(root, "generate", gen))
			return sc_nomem(b);
	}
	if (!json_is_object(gen))
		return sc_fail(b, "generate", "expected an object");
	for (size_t i = 0; i < b->nov; i++) {
		json_t *v;

		if (own_key(b->ov[i].key))
			continue;
		v = override_value(b->ov[i].value);
		if (!v || json_object_set_new(gen, b->ov[i].key, v))
			return sc_nomem(b);
	}
	return 0;
}

static char *base_name(const char *path)
{
	const char *p = strrchr(path, '/');
	size_t n;
	char *s;

	p = p ? p + 1 : path;
	n = strlen(p);
	if (n > 5 && !strcmp(p + n - 5, ".json"))
		n -= 5;
	s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

/* "format" (required, ours), "name" (else the file's) and "seed" (SEED_OVERRIDE wins). */
static int load_header(struct sc_build *b, json_t *root, const uint64_t *seed_override)
{
	struct dl_scenario *s = b->s;
	json_t *v = json_object_get(root, "format");
	int ret;

	if (!v)
		return sc_fail(b, "format", "missing; expected \"" DL_SC_FORMAT "\"");
	if (!json_is_string(v) || strcmp(json_string_value(v), DL_SC_FORMAT))
		return sc_fail(b, "format", "unsupported %s%s%s; expected \"" DL_SC_FORMAT "\"",
			       json_is_string(v) ? "'" : "",
			       json_is_string(v) ? json_string_value(v) : "value",
			       json_is_string(v) ? "'" : "");
	v = json_object_get(root, "name");
	if (v) {
		const char *n = NULL;

		if ((ret = get_string(b, "name", v, &n)))
			return ret;
		s->name = strdup(n);
	} else {
		s->name = base_name(b->file);
	}
	if (!s->name)
		return sc_nomem(b);
	v = json_object_get(root, "seed");
	if (v && (ret = parse_seed(b, v, &s->seed)))
		return ret;
	if (seed_override)
		s->seed = *seed_override;
	return 0;
}

/* "defaults" (with --set defaults.KEY) into DEF and *DEF_ASYNC, interned as profile 0. */
static int load_defaults(struct sc_build *b, json_t *root, struct dl_profile *def,
			 bool *def_async)
{
	static const char *const keys[] = {
		"async", "cpu", "probe", "remove", "prepare", "suspend", "suspend_late",
		"suspend_noirq", "resume_noirq", "resume_early", "resume", "complete",
		"rpm_suspend", "rpm_resume", NULL,
	};
	bool custom;
	json_t *v;
	int ret;

	memset(def, 0, sizeof(*def));
	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		def->lat[k] = (struct dl_latency){ DL_DIST_NONE, 0, 0, 0, INT64_MAX, 0, NULL };
	if ((ret = apply_defaults_overrides(b, root)))
		return ret;
	v = json_object_get(root, "defaults");
	if (v && ((ret = want_object(b, "defaults", v)) ||
		  (ret = sc_check_keys(b, "defaults", v, keys)) ||
		  (ret = parse_profile(b, "defaults", v, def, &custom, def_async))))
		return ret;
	if (intern_profile(b, def) < 0)	/* profile 0: the defaults */
		return -ENOMEM;
	return 0;
}

static int load_root(struct sc_build *b, json_t *root, const uint64_t *seed_override)
{
	struct dl_scenario *s = b->s;
	struct dl_profile def;
	bool def_async = true;
	json_t *v;
	int ret;

	if (!json_is_object(root))
		return sc_fail(b, NULL, "expected a JSON object at the top level");
	if ((ret = sc_check_keys(b, "", root, top_keys)) ||
	    (ret = load_header(b, root, seed_override)) ||
	    (ret = load_defaults(b, root, &def, &def_async)))
		return ret;
	if ((ret = apply_device_overrides(b, root)) || (ret = apply_cost_overrides(b, root)))
		return ret;
	v = json_object_get(root, "devices");
	if (v && (ret = parse_devices(b, v, &def, def_async)))
		return ret;
	s->ndev_listed = s->ndev;
	if ((ret = apply_overrides(b, root)))
		return ret;
	v = json_object_get(root, "generate");
	if (v && ((ret = want_object(b, "generate", v)) ||
		  (ret = sc_generate(b, v, s->seed, def_async))))
		return ret;
	s->nlink_generated = s->nlink;
	/* After the generator, so that links may name generated devices. */
	v = json_object_get(root, "links");
	if (v && (ret = parse_links(b, v)))
		return ret;
	v = json_object_get(root, "faults");
	if (v && (ret = parse_faults(b, v)))
		return ret;
	if ((ret = parse_script(b, json_object_get(root, "script"))))
		return ret;
	v = json_object_get(root, "cost");
	if (v && (ret = parse_cost(b, v)))
		return ret;
	return 0;
}

/* A scenario shell with its path and unset cost; NULL when out of memory. */
static struct dl_scenario *sc_new(const char *path)
{
	struct dl_scenario *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cost = (struct dl_cost){ .queue_ns = -1, .wake_ns = -1, .switch_ns = -1, .main_ns = -1,
				   .probe_check_ns = -1, .handoff_ns = -1, .reorder_ns = -1,
				   .reorder_visit_ns = -1, .rpm_ns = -1,
				   .rpm_idle_ns = -1, .register_ns = -1, .link_add_ns = -1,
				   .sleep_end_ns = -1, .resume_wake_ns = -1 };
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return NULL;
	}
	return s;
}

/* Validate @root into b->s; on success *out takes it. */
static int sc_finish(struct sc_build *b, json_t *root, const uint64_t *seed_override,
		     struct dl_scenario **out)
{
	int ret;

	b->root = root;
	ret = load_root(b, root, seed_override);
	b->root = NULL;
	sc_build_fini(b);
	if (ret) {
		if (!b->err->msg[0])
			sc_nomem(b);
		dl_scenario_free(b->s);
		return ret;
	}
	*out = b->s;
	return 0;
}

int dl_scenario_load_json(const char *label, json_t *root, const struct dl_override *ov,
			  size_t nov, const uint64_t *seed_override, struct dl_scenario **out,
			  struct dl_error *err)
{
	struct sc_build b = { .err = err, .file = label, .ov = ov, .nov = nov };
	json_t *copy;
	int ret;

	*out = NULL;
	err->msg[0] = '\0';
	b.s = sc_new(label);
	copy = nov ? json_deep_copy(root) : json_incref(root);
	if (!b.s || !copy) {
		json_decref(copy);
		dl_scenario_free(b.s);
		return sc_nomem(&b);
	}
	ret = sc_finish(&b, copy, seed_override, out);
	json_decref(copy);
	return ret;
}

int dl_scenario_load(const char *path, const struct dl_override *ov, size_t nov,
		     const uint64_t *seed_override, struct dl_scenario **out,
		     struct dl_error *err)
{
	struct sc_build b = { .err = err, .file = path, .ov = ov, .nov = nov };
	json_error_t jerr;
	json_t *root;
	int ret;

	*out = NULL;
	err->msg[0] = '\0';
	b.s = sc_new(path);
	if (!b.s)
		return sc_nomem(&b);
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		FILE *f = json_error_code(&jerr) == json_error_out_of_memory ? NULL :
			  fopen(path, "r");

		if (json_error_code(&jerr) == json_error_out_of_memory || (!f && errno == ENOMEM)) {
			/* not the file's fault: say what ran out */
			dl_scenario_free(b.s);
			return sc_nomem(&b);
		} else if (!f) {
			snprintf(err->msg, sizeof(err->msg), "%s: cannot open: %s; expected a "
				 "readable scenario file", path, strerror(errno));
			ret = errno == ENOENT ? -ENOENT : -EINVAL;
		} else {
			fclose(f);
			snprintf(err->msg, sizeof(err->msg), "%s:%d:%d: %s; expected valid JSON "
				 "(one object, no duplicate keys)", path, jerr.line, jerr.column,
				 jerr.text);
			ret = -EINVAL;
		}
		dl_scenario_free(b.s);
		return ret;
	}
	b.src = path;
	ret = sc_finish(&b, root, seed_override, out);
	json_decref(root);
	return ret;
}
