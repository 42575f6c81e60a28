/*
 * atlas_build.c - the latency atlas from real logs: each log of
 * dl_atlas_logs[] is read by import-log's parser (log_import.h), every
 * successful callback is filed under its driver (the name the kernel printed
 * before the device: "DRV DEV: PM: ...", ftrace's "device_pm_callback_*: DRV
 * DEV", any other "DRV DEV: " line of the same log for boot probes) and under
 * its subsystem (dl_atlas_stem() of the device name), and each (driver or
 * subsystem, phase) becomes n, median, p90 and the lines it came from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/measure/atlas.h"
#include "sim/measure/log_import.h"

/*
 * Which logs, and why these: the others of shared/real carry no callback
 * durations (devlink listings, cover letters), or repeat a run read here
 * (pmgraph-skynet-mem-dmesg.txt is the same S3 cycle as its ftrace, which
 * also names the drivers), or have no driver names and no device-tree
 * subsystems (the hibernation dmesg of the same x86 laptop).
 */
const struct dl_atlas_log dl_atlas_logs[] = {
	{ "pixel6-v616rc4-suspend-initcall.txt",
	  "Pixel 6 (gs101), v6.16-rc4: sync and async suspend/resume, initcall_debug" },
	{ "pmgraph-skynet-mem-ftrace.txt",
	  "x86 laptop, 3.15: S3 suspend/resume, ftrace device_pm_callback_*" },
	{ "rk3588-opi5plus-boot-populate-fwdevlink.txt",
	  "Orange Pi 5 Plus (RK3588), 6.15.7: boot probe times (4 ms jiffies)" },
	{ "imx8m-spdif-dpm-reorder.txt",
	  "i.MX8M, ~5.13: two suspend callbacks (SPDIF)" },
};
const size_t dl_atlas_nlogs = sizeof(dl_atlas_logs) / sizeof(dl_atlas_logs[0]);

/* One callback filed under one name. */
struct rec {
	const char *name;	/* into the build's name arena (strings owned by names[]) */
	uint8_t kind, key;
	uint32_t log, line;
	int64_t ns;
};

struct build {
	struct rec *r;
	size_t n, cap;
	char **names;		/* every string a rec points at */
	size_t nnames, cap_names;
	struct dl_error *err;
};

static char *keep_name(struct build *b, const char *s, size_t len)
{
	char *c;

	if (b->nnames == b->cap_names) {
		size_t cap = b->cap_names ? 2 * b->cap_names : 256;
		char **n = realloc(b->names, cap * sizeof(*n));

		if (!n)
			return NULL;
		b->names = n;
		b->cap_names = cap;
	}
	c = strndup(s, len);
	if (c)
		b->names[b->nnames++] = c;
	return c;
}

static int add_rec(struct build *b, struct rec r)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		struct rec *n = realloc(b->r, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->r = n;
		b->cap = cap;
	}
	b->r[b->n++] = r;
	return 0;
}

/* Past "[ts]", "[Tn]" and "<n>" prefixes and blanks: where the message starts. */
static const char *msg_start(const char *p)
{
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[' || *p == '<') {
			const char *e = strchr(p, *p == '[' ? ']' : '>');

			if (!e)
				return p;
			p = e + 1;
			continue;
		}
		return p;
	}
}

/*
 * The driver the line names for one of @li's devices: "DRV DEV: ..." (the
 * kernel's dev_printk(): the driver's name, or the bus's before one binds)
 * or ftrace's "device_pm_callback_start: DRV DEV, ...".  Sets *@dev and the
 * driver's span; *@pm is 1 for a PM callback line (the surer kind).
 */
static bool line_driver(const struct dl_logimport *li, const char *line, uint32_t *dev,
			const char **drv, size_t *drv_len, int *pm)
{
	const char *p = strstr(line, "device_pm_callback_"), *sp, *end;
	char name[256];

	*pm = p != NULL;
	if (p) {
		p = strstr(p, ": ");
		if (!p)
			return false;
		p += 2;
		sp = strchr(p, ' ');
		end = sp ? strchr(sp + 1, ',') : NULL;
	} else {
		p = msg_start(line);
		sp = strchr(p, ' ');
		end = sp ? strstr(sp + 1, ": ") : NULL;
		*pm = end && (!strncmp(end, ": PM: ", 6) || !strncmp(end, ": calling ", 10));
	}
	if (!sp || !end || sp == p || end <= sp + 1 || (size_t)(end - sp - 1) >= sizeof(name) ||
	    memchr(sp + 1, ' ', (size_t)(end - sp - 1)))
		return false;
	memcpy(name, sp + 1, (size_t)(end - sp - 1));
	name[end - sp - 1] = '\0';
	*dev = dl_lg_find(li, name);
	*drv = p;
	*drv_len = (size_t)(sp - p);
	return *dev != DL_LG_NONE;
}

/* Every device's driver as the log @path names it; drv[] NULL where it does not. */
static int find_drivers(struct build *b, const struct dl_logimport *li, const char *path,
			char **drv)
{
	FILE *f = fopen(path, "r");
	uint8_t *sure = calloc(li->ndev + 1, 1);
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	if (!f || !sure) {
		ret = f ? -ENOMEM : -EIO;
		snprintf(b->err->msg, sizeof(b->err->msg), "%.400s: %s", path,
			 f ? "out of memory" : strerror(errno));
		goto out;
	}
	while (getline(&line, &cap, f) > 0) {
		const char *d;
		size_t dl;
		uint32_t dev;
		int pm;

		line[strcspn(line, "\r\n")] = '\0';
		if (!line_driver(li, line, &dev, &d, &dl, &pm) || (drv[dev] && sure[dev] >= pm))
			continue;
		if (!(drv[dev] = keep_name(b, d, dl))) {
			ret = -ENOMEM;
			snprintf(b->err->msg, sizeof(b->err->msg), "%.400s: out of memory", path);
			break;
		}
		sure[dev] = (uint8_t)pm;
	}
out:
	free(line);
	free(sure);
	if (f)
		fclose(f);
	return ret;
}

/* One log's successful callbacks, filed under their drivers and subsystems. */
static int read_log(struct build *b, const char *dir, uint32_t log)
{
	struct dl_logimport li;
	char path[4096], stem[DL_ATLAS_STEM_MAX + 1];
	char **drv = NULL;
	int ret;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, dl_atlas_logs[log].file) >=
	    sizeof(path)) {
		snprintf(b->err->msg, sizeof(b->err->msg), "%.400s: path too long", dir);
		return -EINVAL;
	}
	dl_log_init(&li);
	if ((ret = dl_log_read_file(&li, path, b->err)))
		goto out;
	ret = -ENOMEM;
	if (!(drv = calloc(li.ndev + 1, sizeof(*drv))))
		goto out;
	if ((ret = find_drivers(b, &li, path, drv)))
		goto out;
	for (uint32_t i = 0; i < li.nsmp; i++) {
		const struct dl_lg_sample *s = &li.smp[i];
		struct rec r = { .key = s->key, .log = log, .line = s->line, .ns = s->lat_ns };
		size_t sl;

		if (s->ret != 0 || s->lat_ns < 0)
			continue;	/* a failed callback says little of a working one */
		if (drv[s->dev]) {
			r.name = drv[s->dev];
			r.kind = DL_ATLAS_DRIVER;
			if ((ret = add_rec(b, r)))
				goto out;
		}
		if ((sl = dl_atlas_stem(dl_lg_name(&li, s->dev), stem, sizeof(stem)))) {
			ret = -ENOMEM;
			if (!(r.name = keep_name(b, stem, sl)))
				goto out;
			r.kind = DL_ATLAS_SUBSYSTEM;
			if ((ret = add_rec(b, r)))
				goto out;
		}
	}
	ret = 0;
out:
	if (ret == -ENOMEM)
		snprintf(b->err->msg, sizeof(b->err->msg), "%.400s: out of memory", path);
	free(drv);
	dl_log_free(&li);
	return ret;
}

static int cmp_rec(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	int c;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if ((c = strcmp(a->name, b->name)))
		return c;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->ns != b->ns)
		return a->ns < b->ns ? -1 : 1;
	if (a->log != b->log)
		return a->log < b->log ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

/* The figure of recs @r[0..n) (one name, one phase, sorted by duration). */
static json_t *phase_json(const struct rec *r, size_t n)
{
	/* median: the mean of the middle two when n is even; p90: nearest rank */
	int64_t med = n % 2 ? r[n / 2].ns : r[n / 2 - 1].ns + (r[n / 2].ns - r[n / 2 - 1].ns) / 2;
	size_t p90 = (9 * n + 9) / 10 - 1;
	json_t *from = json_array(), *o;

	if (!from)
		return NULL;
	for (uint32_t log = 0; log < dl_atlas_nlogs; log++) {
		uint32_t first = UINT32_MAX, last = 0, k = 0;

		for (size_t i = 0; i < n; i++)
			if (r[i].log == log) {
				first = r[i].line < first ? r[i].line : first;
				last = r[i].line > last ? r[i].line : last;
				k++;
			}
		if (k && json_array_append_new(from, json_pack("{s:s, s:[II], s:I}", "log",
							       dl_atlas_logs[log].file, "lines",
							       (json_int_t)first, (json_int_t)last,
							       "n", (json_int_t)k))) {
			json_decref(from);
			return NULL;
		}
	}
	o = json_pack("{s:I, s:I, s:I, s:o}", "n", (json_int_t)n, "median_ns", (json_int_t)med,
		      "p90_ns", (json_int_t)r[p90].ns, "from", from);
	return o;
}

static json_t *entries_json(struct build *b)
{
	json_t *arr = json_array();

	if (!arr)
		return NULL;
	qsort(b->r, b->n, sizeof(*b->r), cmp_rec);
	for (size_t i = 0; i < b->n;) {
		size_t j = i;
		json_t *ph = json_object(), *e;

		e = json_pack("{s:s, s:s, s:o}", "kind",
			      b->r[i].kind == DL_ATLAS_DRIVER ? "driver" : "subsystem",
			      "name", b->r[i].name, "phases", ph);
		if (!e || json_array_append_new(arr, e))
			goto oom;
		while (j < b->n && b->r[j].kind == b->r[i].kind && !strcmp(b->r[j].name, b->r[i].name)) {
			size_t k = j;

			while (k < b->n && b->r[k].kind == b->r[j].kind && b->r[k].key == b->r[j].key &&
			       !strcmp(b->r[k].name, b->r[j].name))
				k++;
			if (json_object_set_new(ph, dl_lat_key_name(b->r[j].key),
						phase_json(b->r + j, k - j)))
				goto oom;
			j = k;
		}
		i = j;
	}
	return arr;
oom:
	json_decref(arr);
	return NULL;
}

int dl_atlas_build(const char *dir, json_t **out, struct dl_error *err)
{
	struct build b = { .err = err };
	json_t *root = NULL, *logs = json_array(), *ents = NULL;
	int ret = -ENOMEM;

	*out = NULL;
	for (uint32_t log = 0; log < dl_atlas_nlogs; log++)
		if ((ret = read_log(&b, dir, log)))
			goto out;
	ret = -ENOMEM;
	snprintf(err->msg, sizeof(err->msg), "out of memory");
	for (uint32_t log = 0; logs && log < dl_atlas_nlogs; log++)
		if (json_array_append_new(logs, json_pack("{s:s, s:s}", "file", dl_atlas_logs[log].file,
							  "what", dl_atlas_logs[log].what)))
			goto out;
	if (!logs || !(ents = entries_json(&b)))
		goto out;
	root = json_pack("{s:s, s:s, s:O, s:O}", "format", DL_ATLAS_FORMAT, "x-doc",
			 "Generated by `dlsim atlas --regen DIR` (make atlas) from the logs listed, "
			 "read by import-log's parser: per driver (the name printed before the device) "
			 "and per subsystem (the device's node name without unit address or number), "
			 "per phase, the successful callbacks' count, median and 90th percentile in ns, "
			 "and the lines of each log they came from.  Do not edit.",
			 "logs", logs, "entries", ents);
	if (root) {
		*out = root;
		err->msg[0] = '\0';
		ret = 0;
	}
out:
	json_decref(logs);
	json_decref(ents);
	for (size_t i = 0; i < b.nnames; i++)
		free(b.names[i]);
	free(b.names);
	free(b.r);
	return ret;
}
