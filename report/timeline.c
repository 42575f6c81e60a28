/*
 * timeline.c - the Chrome trace files and the interactive timeline of
 * index.html (see timeline.h).  All JSON is written by Jansson; inside
 * index.html '<', '>' and '&' are escaped as well (\u003c ...) so that no
 * name can end the <script> element, and the script (timeline.js) only
 * ever puts names into the page through textContent or the canvas.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "report/assets.h"
#include "report/report_int.h"
#include "report/timeline.h"

static const char *const op_name[TL_NOPS] = { "probe", "unbind", "suspend", "resume" };

/* More distinct phase names than this are folded into the last one. */
#define TL_MAX_PHASES 64

static void set_msg(char *err, size_t errlen, const char *what, sqlite3 *db)
{
	if (err && errlen)
		snprintf(err, errlen, "cannot read the %s: %s", what, sqlite3_errmsg(db));
}

static struct tl_dev *find_dev(struct tl_run *t, int64_t dev_id)
{
	size_t lo = 0, hi = t->ndevs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->devs[mid].dev_id == dev_id)
			return &t->devs[mid];
		if (t->devs[mid].dev_id < dev_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int phase_index(struct tl_run *t, const char *name)
{
	char **n;

	for (size_t i = 0; i < t->nphases; i++)
		if (!strcmp(t->phases[i], name))
			return (int)i;
	if (t->nphases == TL_MAX_PHASES)
		return TL_MAX_PHASES - 1;
	n = realloc(t->phases, (t->nphases + 1) * sizeof(*n));
	if (!n)
		return -1;
	t->phases = n;
	t->phases[t->nphases] = strdup(name);
	if (!t->phases[t->nphases])
		return -1;
	return (int)t->nphases++;
}

static int add_seg(struct tl_run *t, size_t row, enum tl_op op, int p, int worker, uint32_t inst,
		   int64_t t0, int64_t t1)
{
	struct tl_seg *s;

	if (t->nsegs == t->segcap) {
		size_t ncap = t->segcap ? 2 * t->segcap : 256;
		struct tl_seg *n = realloc(t->segs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->segs = n;
		t->segcap = ncap;
	}
	s = &t->segs[t->nsegs++];
	s->row = (uint32_t)row;
	s->op = (uint8_t)op;
	s->phase = (uint16_t)p;
	s->flags = 0;
	s->worker = worker;
	s->inst = inst;
	s->wait = TL_NONE;
	s->t0 = t0;
	s->t1 = t1;
	s->ready = t0;
	return 0;
}

/* 1 when the log's devices table has the (additive) driver column. */
static int has_driver(sqlite3 *db)
{
	sqlite3_stmt *st;
	int yes = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('devices') WHERE name = 'driver'",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static int read_devs(sqlite3 *db, struct tl_run *t, size_t max_devs, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM devices WHERE run_id = ?1", -1, &st, NULL) != SQLITE_OK) {
		set_msg(err, errlen, "devices", db);
		return -EINVAL;
	}
	sqlite3_bind_int64(st, 1, t->run_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		t->total_devs = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	/* devices.driver is additive: a log written before it has none */
	if (sqlite3_prepare_v2(db, has_driver(db) ?
			       "SELECT dev_id, name, parent_id, async, driver FROM devices WHERE run_id = ?1 "
			       "ORDER BY dev_id LIMIT ?2" :
			       "SELECT dev_id, name, parent_id, async, NULL FROM devices WHERE run_id = ?1 "
			       "ORDER BY dev_id LIMIT ?2", -1, &st, NULL) != SQLITE_OK) {
		set_msg(err, errlen, "devices", db);
		return -EINVAL;
	}
	sqlite3_bind_int64(st, 1, t->run_id);
	sqlite3_bind_int64(st, 2, max_devs ? (sqlite3_int64)max_devs : -1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(st, 1), *drv;
		struct tl_dev *d;

		if (t->ndevs == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct tl_dev *n = realloc(t->devs, ncap * sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			t->devs = n;
			cap = ncap;
		}
		d = &t->devs[t->ndevs];
		d->dev_id = sqlite3_column_int64(st, 0);
		d->parent_id = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
		d->parent = TL_NONE;
		d->async = sqlite3_column_int(st, 3) != 0;
		d->name = strdup(name ? (const char *)name : "");
		drv = sqlite3_column_text(st, 4);
		d->driver = drv && *drv ? strdup((const char *)drv) : NULL;
		if (!d->name || (drv && *drv && !d->driver)) {
			free(d->name);
			free(d->driver);
			ret = -ENOMEM;
			break;
		}
		for (int i = 0; i < TL_NOPS; i++) {
			d->open_t[i] = -1;
			d->open_w[i] = 0;
		}
		t->ndevs++;
	}
	if (!ret && rc != SQLITE_DONE) {
		set_msg(err, errlen, "devices", db);
		ret = -EINVAL;
	}
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory");
	sqlite3_finalize(st);
	return ret;
}

/*
 * Phases run one after another over all devices (a barrier between them),
 * so a new phase instance begins whenever a start event names another op
 * or phase than the start before it.
 */
int tl_read(sqlite3 *db, int64_t run, size_t max_devs, struct tl_run *t, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc, ret, last_op = -1, last_phase = -1;

	memset(t, 0, sizeof(*t));
	t->run_id = run;
	ret = read_devs(db, t, max_devs, err, errlen);
	if (ret || !t->ndevs)
		return ret;
	if (sqlite3_prepare_v2(db, "SELECT dev_id, kind, phase, t_ns, worker FROM events WHERE run_id = ?1 "
			       "AND kind IN ('probe_start', 'probe_end', 'unbind_start', 'unbind_end', "
			       "'suspend_start', 'suspend_end', 'resume_start', 'resume_end') "
			       "AND dev_id <= ?2 ORDER BY seq", -1, &st, NULL) != SQLITE_OK) {
		set_msg(err, errlen, "events", db);
		return -EINVAL;
	}
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, t->devs[t->ndevs - 1].dev_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tl_dev *d = find_dev(t, sqlite3_column_int64(st, 0));
		const char *kind = (const char *)sqlite3_column_text(st, 1);
		const char *phase = (const char *)sqlite3_column_text(st, 2);
		int64_t tm = sqlite3_column_int64(st, 3);
		int worker = sqlite3_column_int(st, 4);
		const char *us;
		int op = -1;

		if (!d || !kind || !(us = strchr(kind, '_')))
			continue;
		for (int i = 0; i < TL_NOPS; i++)
			if ((size_t)(us - kind) == strlen(op_name[i]) && !strncmp(kind, op_name[i], (size_t)(us - kind)))
				op = i;
		if (op < 0)
			continue;
		if (!strcmp(us, "_start")) {
			int p = phase_index(t, phase && *phase ? phase : op_name[op]);

			if (p < 0) {
				ret = -ENOMEM;
				if (err && errlen)
					snprintf(err, errlen, "out of memory");
				break;
			}
			if (op != last_op || p != last_phase || !t->ninst) {
				t->ninst++;
				last_op = op;
				last_phase = p;
			}
			d->open_t[op] = tm;
			d->open_w[op] = worker;
			d->open_inst[op] = t->ninst - 1;
		} else if (d->open_t[op] >= 0) {
			int p = phase_index(t, phase && *phase ? phase : op_name[op]);

			if (p < 0 || add_seg(t, (size_t)(d - t->devs), (enum tl_op)op, p, d->open_w[op],
					     d->open_inst[op], d->open_t[op],
					     tm < d->open_t[op] ? d->open_t[op] : tm)) {
				ret = -ENOMEM;
				if (err && errlen)
					snprintf(err, errlen, "out of memory");
				break;
			}
			d->open_t[op] = -1;
		}
	}
	if (!ret && rc != SQLITE_DONE) {
		set_msg(err, errlen, "events", db);
		ret = -EINVAL;
	}
	sqlite3_finalize(st);
	return ret;
}

void tl_free(struct tl_run *t)
{
	for (size_t i = 0; i < t->ndevs; i++) {
		free(t->devs[i].name);
		free(t->devs[i].driver);
	}
	free(t->devs);
	for (size_t i = 0; i < t->nphases; i++)
		free(t->phases[i]);
	free(t->phases);
	free(t->segs);
	free(t->sup_off);
	free(t->sup);
	free(t->con_off);
	free(t->con);
	free(t->kid_off);
	free(t->kid);
	memset(t, 0, sizeof(*t));
}

/* ---- JSON ------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at S (no overlongs, no surrogates), 0 if none. */
static size_t utf8_seq(const unsigned char *s)
{
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0;
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

/*
 * S as a JSON string.  Names come from logs and device trees and need not
 * be UTF-8, which Jansson refuses: invalid bytes become U+FFFD.
 */
static json_t *jstr(const char *s)
{
	json_t *j = json_string(s);
	const unsigned char *p = (const unsigned char *)s;
	char *fix, *o;

	if (j)
		return j;
	fix = o = malloc(3 * strlen(s) + 1);
	if (!fix)
		return json_string("?");
	while (*p) {
		size_t n = utf8_seq(p);

		if (!n) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = '\0';
	j = json_string(fix);
	free(fix);
	return j ? j : json_string("?");
}

/* ns as microseconds, the unit of Chrome trace timestamps. */
static json_t *jus(int64_t ns)
{
	return json_real((double)ns / 1000.0);
}

/* Where a trace goes: a plain file or a gzip stream; the first error sticks. */
struct tl_out {
	FILE *f;
	gzFile gz;
	int bad;
};

static int out_write(const char *buf, size_t n, void *ctx)
{
	struct tl_out *o = ctx;

	if (o->bad || !n)
		return o->bad ? -1 : 0;
	if (o->gz)
		o->bad = gzwrite(o->gz, buf, (unsigned)n) != (int)n;
	else
		o->bad = fwrite(buf, 1, n, o->f) != n;
	return o->bad ? -1 : 0;
}

static void out_puts(struct tl_out *o, const char *s)
{
	out_write(s, strlen(s), o);
}

/* Timestamps to the ns, without %.17g's noise digits. */
#define TL_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

/* One element of the traceEvents array (J is consumed). */
static void out_event(struct tl_out *o, json_t *j, int *first)
{
	out_puts(o, *first ? "\n" : ",\n");
	*first = 0;
	if (j)
		json_dump_callback(j, out_write, o, TL_JSON_FLAGS);
	else
		o->bad = 1;
	json_decref(j);
}

static json_t *meta(int64_t tid, const char *what, json_t *args)
{
	return json_pack("{s:s, s:i, s:I, s:s, s:o}", "ph", "M", "pid", 1, "tid", (json_int_t)tid,
			 "name", what, "args", args);
}

/* The track of segment S: its worker, or its device's row (per-device tracks). */
static int64_t track_of(const struct tl_seg *s, const uint32_t *row_of, int per_device)
{
	return per_device ? (int64_t)row_of[s->row] + 1 : s->worker;
}

int tl_write_trace(const struct tl_run *t, const char *scenario, const struct tl_trace_opts *opt,
		   const char *path, size_t *devices)
{
	struct tl_out o = { 0 };
	uint32_t *row_of = malloc((t->ndevs ? t->ndevs : 1) * sizeof(*row_of));
	unsigned char seen[256] = { 0 };
	char label[128];
	bool stopped = false;
	size_t rows;
	int first = 1, ret, fd;

	if (!row_of)
		return -ENOMEM;
	rows = tl_select_rows(t, opt->max_devices ? opt->max_devices : t->ndevs, ~0u, row_of);
	if (devices)
		*devices = rows;
	fd = rp_create_file(path);
	if (fd >= 0 && opt->gzip)
		o.gz = gzdopen(fd, "wb6");
	else if (fd >= 0)
		o.f = fdopen(fd, "w");
	if (!o.gz && !o.f) {
		if (fd >= 0)
			close(fd);
		free(row_of);
		return -EIO;
	}
	out_puts(&o, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	snprintf(label, sizeof(label), "dlsim run %" PRId64 ": ", t->run_id);
	{
		size_t ll = strlen(label), sl = strlen(scenario ? scenario : "");
		char *full = malloc(ll + sl + 1);

		if (full) {
			memcpy(full, label, ll);
			memcpy(full + ll, scenario ? scenario : "", sl + 1);
		}
		out_event(&o, meta(0, "process_name", json_pack("{s:o}", "name", jstr(full ? full : label))),
			  &first);
		free(full);
	}
	if (opt->per_device) {
		/* a track per device: named by the device, in dev_id order */
		for (size_t i = 0; i < t->ndevs; i++) {
			if (row_of[i] == TL_NONE)
				continue;
			out_event(&o, meta(row_of[i] + 1, "thread_name",
					   json_pack("{s:o}", "name", jstr(t->devs[i].name))), &first);
			out_event(&o, meta(row_of[i] + 1, "thread_sort_index",
					   json_pack("{s:I}", "sort_index", (json_int_t)row_of[i] + 1)), &first);
		}
	} else {
		/* one track per worker seen (beyond 255 named once per segment); tid 0 is main */
		for (size_t i = 0; i < t->nsegs; i++) {
			int w = t->segs[i].worker;
			char name[32];

			if (row_of[t->segs[i].row] == TL_NONE)
				continue;
			if (w >= 0 && w < 256) {
				if (seen[w])
					continue;
				seen[w] = 1;
			}
			if (w == 0)
				snprintf(name, sizeof(name), "main PM thread");
			else
				snprintf(name, sizeof(name), "worker %d", w);
			out_event(&o, meta(w, "thread_name", json_pack("{s:s}", "name", name)), &first);
			out_event(&o, meta(w, "thread_sort_index", json_pack("{s:i}", "sort_index", w)), &first);
		}
	}
	for (size_t i = 0; i < t->nsegs && !stopped; i++) {
		const struct tl_seg *s = &t->segs[i];
		const struct tl_dev *d = &t->devs[s->row];
		json_t *args, *ev;

		if (tl_stop_due(opt->stop, i)) {
			stopped = true;
			break;
		}
		if (row_of[s->row] == TL_NONE)
			continue;
		args = json_pack("{s:o, s:s, s:I, s:i}", "phase", jstr(t->phases[s->phase]),
				 "op", op_name[s->op], "dev_id", (json_int_t)d->dev_id, "worker", s->worker);
		if (d->driver)
			json_object_set_new(args, "driver", jstr(d->driver));
		if (s->flags & TL_SEG_CRIT)
			json_object_set_new(args, "critical_path", json_true());
		if (s->wait != TL_NONE) {
			const struct tl_seg *w = &t->segs[s->wait];

			json_object_set_new(args, "waited_for", jstr(t->devs[w->row].name));
			json_object_set_new(args, "waited_for_phase", jstr(t->phases[w->phase]));
			json_object_set_new(args, "waited_for_end_us", jus(w->t1));
			if (s->flags & TL_SEG_BARRIER)
				json_object_set_new(args, "wait", json_string("phase barrier"));
		}
		ev = json_pack("{s:s, s:i, s:I, s:s, s:o, s:o, s:o, s:o}", "ph", "X", "pid", 1,
			       "tid", (json_int_t)track_of(s, row_of, opt->per_device), "cat", op_name[s->op],
			       "ts", jus(s->t0), "dur", jus(s->t1 - s->t0), "name", jstr(d->name), "args", args);
		out_event(&o, ev, &first);
	}
	/*
	 * Flow arrows (legacy flow events, which Perfetto and chrome://tracing
	 * both read): "s" inside the awaited slice at its end, "f" with
	 * binding point "e" (the enclosing slice) at the waiting slice's start;
	 * the id is the waiting segment's index, unique in the file.
	 */
	for (size_t i = 0; i < t->nsegs && !stopped; i++) {
		const struct tl_seg *s = &t->segs[i], *w;
		const char *cat;

		if (tl_stop_due(opt->stop, i)) {
			stopped = true;
			break;
		}

		/* Barrier waits only on the critical path: otherwise every device
		 * without a dependency would get an arrow from the same slice. */
		if (s->wait == TL_NONE || ((s->flags & TL_SEG_BARRIER) && !(s->flags & TL_SEG_CRIT)))
			continue;
		w = &t->segs[s->wait];
		if (row_of[s->row] == TL_NONE || row_of[w->row] == TL_NONE)
			continue;
		cat = s->flags & TL_SEG_BARRIER ? "barrier" : "dependency";
		out_event(&o, json_pack("{s:s, s:i, s:I, s:I, s:s, s:s, s:o}", "ph", "s", "pid", 1,
					"tid", (json_int_t)track_of(w, row_of, opt->per_device),
					"id", (json_int_t)i, "cat", cat, "name", "waits for",
					"ts", jus(w->t1 > w->t0 ? w->t1 - 1 : w->t0)), &first);
		out_event(&o, json_pack("{s:s, s:s, s:i, s:I, s:I, s:s, s:s, s:o}", "ph", "f", "bp", "e",
					"pid", 1, "tid", (json_int_t)track_of(s, row_of, opt->per_device),
					"id", (json_int_t)i, "cat", cat, "name", "waits for",
					"ts", jus(s->t1 > s->t0 ? s->t0 + 1 : s->t0)), &first);
	}
	out_puts(&o, "\n]}\n");
	free(row_of);
	ret = o.bad;
	if (o.gz)
		ret |= gzclose(o.gz) != Z_OK;
	else
		ret |= ferror(o.f) | (fclose(o.f) != 0);
	if (stopped)
		return -EINTR;
	if (ret) {
		if (!errno)
			errno = EIO;
		return -EIO;
	}
	return 0;
}

/* ---- index.html ------------------------------------------------------- */

/* Dumps into a <script> element: no '<', '>' or '&' (JSON escapes them). */
static int html_write(const char *buf, size_t n, void *ctx)
{
	FILE *f = ctx;
	size_t from = 0;

	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '<' && buf[i] != '>' && buf[i] != '&')
			continue;
		fwrite(buf + from, 1, i - from, f);
		fprintf(f, "\\u%04x", (unsigned char)buf[i]);
		from = i + 1;
	}
	fwrite(buf + from, 1, n - from, f);
	return 0;
}

/* J (consumed) as JSON inside a <script type="application/json" id=ID>. */
static void html_json(FILE *f, const char *id, json_t *j)
{
	fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
	if (j)
		json_dump_callback(j, html_write, f, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	else
		fputs("null", f);
	fputs("</script>\n", f);
	json_decref(j);
}

/* The slot of devs[D] in the page's names, given it one if it has none. */
static int64_t slot_of(size_t d, int64_t *name_of, uint32_t *dev_of, size_t *next)
{
	if (name_of[d] < 0) {
		name_of[d] = (int64_t)*next;
		dev_of[(*next)++] = (uint32_t)d;
	}
	return name_of[d];
}

/* Links listed per device in the click panel; the rest are counted. */
#define TL_LINKS_LISTED 24

/* JSON array of the slots of devices IDX[OFF[d] .. OFF[d+1]), at most TL_LINKS_LISTED. */
static json_t *link_slots(const uint32_t *off, const uint32_t *idx, size_t d, int64_t *name_of,
			  uint32_t *dev_of, size_t *next)
{
	json_t *a = json_array();

	for (uint32_t j = off[d]; j < off[d + 1] && j - off[d] < TL_LINKS_LISTED; j++)
		json_array_append_new(a, json_integer(slot_of(idx[j], name_of, dev_of, next)));
	return a;
}

void tl_write_html(const struct tl_run *t, size_t max_rows, FILE *f)
{
	size_t n = t->ndevs ? t->ndevs : 1;
	uint32_t *row_of = malloc(n * sizeof(*row_of)), *dev_of = malloc(n * sizeof(*dev_of));
	int64_t *name_of = malloc(n * sizeof(*name_of));
	size_t rows = 0, next = 0, crit_hidden = 0;
	json_t *d = json_object(), *segs = json_array(), *a;
	json_t *sup = json_array(), *con = json_array(), *nsup = json_array(), *ncon = json_array();

	fputs("<style>\n", f);
	fwrite(rp_asset_timeline_css, 1, rp_asset_timeline_css_len, f);
	fputs("</style>\n<div id=\"tl\"><noscript><p>The interactive timeline needs JavaScript.</p></noscript></div>\n", f);
	if (row_of && dev_of && name_of) {
		rows = tl_select_rows(t, max_rows, ~0u, row_of);
		for (size_t i = 0; i < t->ndevs; i++)
			name_of[i] = -1;
		for (size_t i = 0; i < t->ndevs; i++)	/* the drawn rows are slots 0 .. rows-1 */
			if (row_of[i] != TL_NONE) {
				name_of[i] = row_of[i];
				dev_of[row_of[i]] = (uint32_t)i;
			}
		next = rows;
		for (size_t r = 0; r < rows && t->sup_off; r++) {
			size_t i = dev_of[r];

			json_array_append_new(sup, link_slots(t->sup_off, t->sup, i, name_of, dev_of, &next));
			json_array_append_new(con, link_slots(t->con_off, t->con, i, name_of, dev_of, &next));
			json_array_append_new(nsup, json_integer(t->sup_off[i + 1] - t->sup_off[i]));
			json_array_append_new(ncon, json_integer(t->con_off[i + 1] - t->con_off[i]));
		}
		/* [slot, op, phase, t0, t1, worker, waited-for slot or -1, its phase, its end, flags, instance] */
		for (size_t i = 0; i < t->nsegs; i++) {
			const struct tl_seg *s = &t->segs[i];
			const struct tl_seg *w = s->wait == TL_NONE ? NULL : &t->segs[s->wait];

			if (row_of[s->row] == TL_NONE) {
				crit_hidden += (s->flags & TL_SEG_CRIT) != 0;
				continue;
			}
			json_array_append_new(segs, json_pack("[I,i,i,I,I,i,I,i,I,i,I]",
				(json_int_t)row_of[s->row], (int)s->op, (int)s->phase, (json_int_t)s->t0,
				(json_int_t)s->t1, (int)s->worker,
				(json_int_t)(w ? slot_of(w->row, name_of, dev_of, &next) : -1),
				w ? (int)w->phase : -1, (json_int_t)(w ? w->t1 : -1), (int)s->flags,
				(json_int_t)s->inst));
		}
		/* parents last: they may add slots, which need a parent of their own only when drawn */
		for (size_t k = 0; k < rows; k++)
			if (t->devs[dev_of[k]].parent != TL_NONE)
				slot_of(t->devs[dev_of[k]].parent, name_of, dev_of, &next);
	} else {
		rows = 0;	/* out of memory: an empty timeline, still a valid page */
	}
	json_object_set_new(d, "run", json_integer(t->run_id));
	json_object_set_new(d, "limit", json_integer((json_int_t)max_rows));
	json_object_set_new(d, "rows", json_integer((json_int_t)rows));
	json_object_set_new(d, "devices_total", json_integer((json_int_t)t->total_devs));
	json_object_set_new(d, "crit", json_pack("{s:I, s:I, s:I}", "segments", (json_int_t)t->ncrit,
						 "hidden", (json_int_t)crit_hidden, "end", (json_int_t)t->crit_end));
	a = json_array();
	for (int i = 0; i < TL_NOPS; i++)
		json_array_append_new(a, json_string(op_name[i]));
	json_object_set_new(d, "ops", a);
	a = json_array();
	for (size_t i = 0; i < t->nphases; i++)
		json_array_append_new(a, jstr(t->phases[i]));
	json_object_set_new(d, "phases", a);
	{
		json_t *ids = json_array(), *names = json_array(), *par = json_array(), *as = json_array();
		json_t *drv = json_array();

		for (size_t k = 0; k < next; k++) {
			const struct tl_dev *dv = &t->devs[dev_of[k]];

			json_array_append_new(ids, json_integer(dv->dev_id));
			json_array_append_new(names, jstr(dv->name));
			json_array_append_new(drv, dv->driver ? jstr(dv->driver) : json_null());
			json_array_append_new(par, json_integer(dv->parent != TL_NONE && name_of[dv->parent] >= 0 ?
								name_of[dv->parent] : -1));
			json_array_append_new(as, json_integer(dv->async));
		}
		json_object_set_new(d, "ids", ids);
		json_object_set_new(d, "names", names);
		json_object_set_new(d, "drivers", drv);
		json_object_set_new(d, "parent", par);
		json_object_set_new(d, "async", as);
	}
	json_object_set_new(d, "sup", sup);
	json_object_set_new(d, "con", con);
	json_object_set_new(d, "nsup", nsup);
	json_object_set_new(d, "ncon", ncon);
	html_json(f, "tl-data", d);
	html_json(f, "tl-segs", segs);
	fputs("<script>\n", f);
	fwrite(rp_asset_timeline_js, 1, rp_asset_timeline_js_len, f);
	fputs("</script>\n", f);
	free(row_of);
	free(name_of);
	free(dev_of);
}
