/*
 * timeline.c - trace.json and the interactive timeline of index.html (see
 * timeline.h).  Every string from the database is written JSON-escaped;
 * inside index.html also '<', '>' and '&' are escaped (\u003c ...) so that
 * no name can end the <script> element, and the script only ever puts
 * names into the page through textContent or the canvas.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
	if (sqlite3_prepare_v2(db, "SELECT dev_id, name, parent_id, async FROM devices WHERE run_id = ?1 "
			       "ORDER BY dev_id LIMIT ?2", -1, &st, NULL) != SQLITE_OK) {
		set_msg(err, errlen, "devices", db);
		return -EINVAL;
	}
	sqlite3_bind_int64(st, 1, t->run_id);
	sqlite3_bind_int64(st, 2, max_devs ? (sqlite3_int64)max_devs : -1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(st, 1);
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
		if (!d->name) {
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
	for (size_t i = 0; i < t->ndevs; i++)
		free(t->devs[i].name);
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
 * Writes S as a JSON string: '"', '\\' and control characters escaped
 * (\u00XX), invalid UTF-8 as U+FFFD.  HTML: also '<', '>', '&', U+2028 and
 * U+2029 as \uXXXX, so the text can sit inside a <script> element.
 */
static void put_json_str(FILE *f, const char *s, int html)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t n = utf8_seq(p);

		if (!n) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		if (n == 1) {
			if (*p == '"' || *p == '\\')
				fprintf(f, "\\%c", *p);
			else if (*p < 0x20 || *p == 0x7f || (html && (*p == '<' || *p == '>' || *p == '&')))
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		} else if (html && n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			fprintf(f, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
		} else {
			fwrite(p, 1, n, f);
		}
		p += n;
	}
	fputc('"', f);
}

/* ns as microseconds, exact: "1234.567". */
static void put_us(FILE *f, int64_t ns)
{
	if (ns < 0) {
		fputc('-', f);
		ns = -ns;
	}
	fprintf(f, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000));
}

int tl_write_trace(const struct tl_run *t, const char *scenario, const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned char seen[256] = { 0 };
	char label[128];
	int bad;

	if (!f)
		return -EIO;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
	snprintf(label, sizeof(label), "dlsim run %" PRId64 ": ", t->run_id);
	fprintf(f, "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":");
	{
		/* label + scenario as one string */
		size_t ll = strlen(label), sl = strlen(scenario ? scenario : "");
		char *full = malloc(ll + sl + 1);

		if (full) {
			memcpy(full, label, ll);
			memcpy(full + ll, scenario ? scenario : "", sl + 1);
			put_json_str(f, full, 0);
			free(full);
		} else {
			put_json_str(f, label, 0);
		}
	}
	fputs("}}", f);
	/* One thread_name per worker seen (workers beyond 255 are named too, once per segment). */
	for (size_t i = 0; i < t->nsegs; i++) {
		int w = t->segs[i].worker;

		if (w >= 0 && w < 256) {
			if (seen[w])
				continue;
			seen[w] = 1;
		}
		fprintf(f, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":"
			   "{\"name\":\"worker %d\"}}", w, w);
		fprintf(f, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":"
			   "{\"sort_index\":%d}}", w, w);
	}
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tl_seg *s = &t->segs[i];
		const struct tl_dev *d = &t->devs[s->row];

		fputs(",\n{\"ph\":\"X\",\"pid\":1,\"tid\":", f);
		fprintf(f, "%d,\"cat\":\"%s\",\"ts\":", s->worker, op_name[s->op]);
		put_us(f, s->t0);
		fputs(",\"dur\":", f);
		put_us(f, s->t1 - s->t0);
		fputs(",\"name\":", f);
		put_json_str(f, d->name, 0);
		fputs(",\"args\":{\"phase\":", f);
		put_json_str(f, t->phases[s->phase], 0);
		fprintf(f, ",\"op\":\"%s\",\"dev_id\":%" PRId64, op_name[s->op], d->dev_id);
		if (s->flags & TL_SEG_CRIT)
			fputs(",\"critical_path\":true", f);
		if (s->wait != TL_NONE) {
			const struct tl_seg *w = &t->segs[s->wait];

			fputs(",\"waited_for\":", f);
			put_json_str(f, t->devs[w->row].name, 0);
			fputs(",\"waited_for_phase\":", f);
			put_json_str(f, t->phases[w->phase], 0);
			fputs(",\"waited_for_end_us\":", f);
			put_us(f, w->t1);
			if (s->flags & TL_SEG_BARRIER)
				fputs(",\"wait\":\"phase barrier\"", f);
		}
		fputs("}}", f);
	}
	/*
	 * Flow arrows (legacy flow events, which Perfetto and chrome://tracing
	 * both read): "s" inside the awaited slice at its end, "f" with
	 * binding point "e" (the enclosing slice) at the waiting slice's start;
	 * the id is the waiting segment's index, unique in the file.
	 */
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tl_seg *s = &t->segs[i], *w;
		const char *cat;

		/* Barrier waits only on the critical path: otherwise every device
		 * without a dependency would get an arrow from the same slice. */
		if (s->wait == TL_NONE || ((s->flags & TL_SEG_BARRIER) && !(s->flags & TL_SEG_CRIT)))
			continue;
		w = &t->segs[s->wait];
		cat = s->flags & TL_SEG_BARRIER ? "barrier" : "dependency";
		fprintf(f, ",\n{\"ph\":\"s\",\"pid\":1,\"tid\":%d,\"id\":%zu,\"cat\":\"%s\","
			   "\"name\":\"waits for\",\"ts\":", w->worker, i, cat);
		put_us(f, w->t1 > w->t0 ? w->t1 - 1 : w->t0);
		fprintf(f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":%d,\"id\":%zu,"
			   "\"cat\":\"%s\",\"name\":\"waits for\",\"ts\":", s->worker, i, cat);
		put_us(f, s->t1 > s->t0 ? s->t0 + 1 : s->t0);
		fputc('}', f);
	}
	fputs("\n]}\n", f);
	bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		if (!errno)
			errno = EIO;
		return -EIO;
	}
	return 0;
}

/* ---- index.html ------------------------------------------------------- */

/*
 * The viewer.  Rows: devices; x: time.  Wheel zooms about the pointer,
 * shift+wheel scrolls the rows, dragging pans, buttons zoom/reset/page.
 * Names reach the page only through the canvas and textContent.
 */
static const char tl_script[] =
"(function () {\n"
"'use strict';\n"
"var box = document.getElementById('tl');\n"
"var D = JSON.parse(document.getElementById('tl-data').textContent);\n"
"var names = D.names, segs = D.segs, phases = D.phases, ops = D.ops, n = D.rows;\n"
"var CRIT = 1, BARRIER = 2, hl = false, hover = null;\n"
"var ROW = 14, LAB = 190, AX = 24, MAXH = 600;\n"
"var COL = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',\n"
"  '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#8cd17d', '#b6992d', '#499894', '#79706e'];\n"
"function colour(p) { return COL[p % COL.length]; }\n"
"var tmin = Infinity, tmax = -Infinity, byRow = [], crit = [], i;\n"
"for (i = 0; i < n; i++) byRow.push([]);\n"
"for (i = 0; i < segs.length; i++) {\n"
"  var s = segs[i];\n"
"  if (s[0] < n) byRow[s[0]].push(s);\n"
"  if (s[9] & CRIT) crit.push(s);\n"
"  if (s[3] < tmin) tmin = s[3];\n"
"  if (s[4] > tmax) tmax = s[4];\n"
"}\n"
"if (!(tmax > tmin)) { tmin = 0; tmax = isFinite(tmax) && tmax > 0 ? tmax : 1000; }\n"
"var pad = (tmax - tmin) * 0.01; tmin -= pad; tmax += pad;\n"
"var v0 = tmin, v1 = tmax, top = 0, W = 800, H = 100, dpr = 1;\n"
"var bar = document.createElement('div'); bar.className = 'tl-bar';\n"
"function button(label, title, f) {\n"
"  var b = document.createElement('button'); b.type = 'button'; b.textContent = label;\n"
"  b.title = title; b.addEventListener('click', f); bar.appendChild(b);\n"
"}\n"
"var cv = document.createElement('canvas'); cv.className = 'tl-canvas';\n"
"var ctx = cv.getContext('2d');\n"
"var tip = document.createElement('div'); tip.className = 'tl-tip'; tip.hidden = true;\n"
"var legend = document.createElement('div'); legend.className = 'tl-legend';\n"
"var used = {};\n"
"for (i = 0; i < segs.length; i++) used[segs[i][2]] = 1;\n"
"for (i = 0; i < phases.length; i++) {\n"
"  if (!used[i]) continue;\n"
"  var item = document.createElement('span'), sw = document.createElement('span');\n"
"  sw.className = 'tl-sw'; sw.style.background = colour(i);\n"
"  item.appendChild(sw); item.appendChild(document.createTextNode(phases[i]));\n"
"  legend.appendChild(item);\n"
"}\n"
"function ms(t) { return (t / 1e6).toFixed(3) + ' ms'; }\n"
"function plotH() { return H - AX; }\n"
"function clampView() {\n"
"  var span = v1 - v0, full = tmax - tmin;\n"
"  if (span > full) { span = full; }\n"
"  if (span < 100) span = 100;\n"
"  if (v0 < tmin) v0 = tmin;\n"
"  v1 = v0 + span;\n"
"  if (v1 > tmax) { v1 = tmax; v0 = v1 - span; }\n"
"  var maxTop = Math.max(0, n * ROW - plotH());\n"
"  top = Math.max(0, Math.min(top, maxTop));\n"
"}\n"
"function xOf(t) { return LAB + (t - v0) / (v1 - v0) * (W - LAB); }\n"
"function tOf(x) { return v0 + (x - LAB) / (W - LAB) * (v1 - v0); }\n"
"function niceStep(span, px) {\n"
"  var raw = span / Math.max(1, px / 90), p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));\n"
"  var m = raw / p;\n"
"  return (m < 2 ? 2 : m < 5 ? 5 : 10) * p;\n"
"}\n"
"function draw() {\n"
"  clampView();\n"
"  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);\n"
"  ctx.clearRect(0, 0, W, H);\n"
"  ctx.font = '11px sans-serif'; ctx.textBaseline = 'middle';\n"
"  var r0 = Math.floor(top / ROW), r1 = Math.min(n, Math.ceil((top + plotH()) / ROW)), r, k;\n"
"  ctx.save(); ctx.beginPath(); ctx.rect(0, AX, W, plotH()); ctx.clip();\n"
"  for (r = r0; r < r1; r++) {\n"
"    var y = AX + r * ROW - top;\n"
"    if (r % 2) { ctx.fillStyle = '#f4f4f4'; ctx.fillRect(0, y, W, ROW); }\n"
"  }\n"
"  ctx.save(); ctx.beginPath(); ctx.rect(LAB, AX, W - LAB, plotH()); ctx.clip();\n"
"  var step = niceStep(v1 - v0, W - LAB), g;\n"
"  ctx.strokeStyle = '#ddd'; ctx.lineWidth = 1;\n"
"  for (g = Math.ceil(v0 / step) * step; g <= v1; g += step) {\n"
"    var gx = Math.round(xOf(g)) + 0.5; ctx.beginPath(); ctx.moveTo(gx, AX); ctx.lineTo(gx, H); ctx.stroke();\n"
"  }\n"
"  for (r = r0; r < r1; r++) {\n"
"    var yy = AX + r * ROW - top + 2, row = byRow[r];\n"
"    for (k = 0; k < row.length; k++) {\n"
"      var q = row[k];\n"
"      if (q[4] < v0 || q[3] > v1) continue;\n"
"      var xa = Math.max(LAB - 1, xOf(q[3])), xb = Math.min(W + 1, xOf(q[4]));\n"
"      ctx.globalAlpha = hl && !(q[9] & CRIT) ? 0.2 : 1;\n"
"      ctx.fillStyle = colour(q[2]); ctx.fillRect(xa, yy, Math.max(1, xb - xa), ROW - 4);\n"
"      if (q[9] & CRIT) {\n"
"        ctx.globalAlpha = 1; ctx.strokeStyle = '#b00020'; ctx.lineWidth = 2;\n"
"        ctx.strokeRect(xa, yy, Math.max(1, xb - xa), ROW - 4);\n"
"      }\n"
"    }\n"
"  }\n"
"  ctx.globalAlpha = 1;\n"
"  for (k = 0; k < crit.length; k++) link(crit[k], '#b00020', 1.5);\n"
"  if (hover) link(hover, '#222', 1.5);\n"
"  ctx.restore();\n"
"  ctx.fillStyle = '#222';\n"
"  ctx.save(); ctx.beginPath(); ctx.rect(0, AX, LAB - 6, plotH()); ctx.clip();\n"
"  for (r = r0; r < r1; r++) ctx.fillText(names[r], 4, AX + r * ROW - top + ROW / 2);\n"
"  ctx.restore(); ctx.restore();\n"
"  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, AX);\n"
"  ctx.fillStyle = '#222'; ctx.strokeStyle = '#888';\n"
"  ctx.beginPath(); ctx.moveTo(LAB, AX - 0.5); ctx.lineTo(W, AX - 0.5); ctx.stroke();\n"
"  ctx.textAlign = 'center';\n"
"  var dec = Math.max(0, Math.min(6, Math.ceil(-Math.log(step / 1e6) / Math.LN10)));\n"
"  for (g = Math.ceil(v0 / step) * step; g <= v1; g += step)\n"
"    ctx.fillText((g / 1e6).toFixed(dec), xOf(g), AX / 2);\n"
"  ctx.textAlign = 'left';\n"
"  ctx.fillText('device / time (ms)', 4, AX / 2);\n"
"}\n"
"function link(q, c, w) {\n"
"  if (q[6] < 0 || q[6] >= n || q[8] > v1 || q[3] < v0) return;\n"
"  var ya = AX + q[6] * ROW - top + ROW / 2, yb = AX + q[0] * ROW - top + ROW / 2;\n"
"  var xa = xOf(q[8]), xb = xOf(q[3]);\n"
"  ctx.strokeStyle = c; ctx.lineWidth = w; ctx.beginPath(); ctx.moveTo(xa, ya);\n"
"  ctx.lineTo(xb, yb); ctx.stroke();\n"
"  ctx.beginPath(); ctx.arc(xb, yb, 2.5, 0, 2 * Math.PI); ctx.fillStyle = c; ctx.fill();\n"
"}\n"
"function resize() {\n"
"  dpr = window.devicePixelRatio || 1;\n"
"  W = Math.max(480, box.clientWidth || 800);\n"
"  H = Math.min(Math.max(n, 1) * ROW, MAXH) + AX;\n"
"  cv.width = Math.round(W * dpr); cv.height = Math.round(H * dpr);\n"
"  cv.style.width = W + 'px'; cv.style.height = H + 'px';\n"
"  draw();\n"
"}\n"
"function zoom(f, at) {\n"
"  var t = at === undefined ? (v0 + v1) / 2 : at;\n"
"  v0 = t - (t - v0) * f; v1 = t + (v1 - t) * f; draw();\n"
"}\n"
"function pos(e) { var b = cv.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; }\n"
"function hit(x, y) {\n"
"  if (x < LAB || y < AX) return null;\n"
"  var r = Math.floor((y - AX + top) / ROW);\n"
"  if (r < 0 || r >= n) return null;\n"
"  var t = tOf(x), tol = 2 * (v1 - v0) / (W - LAB), best = null, k;\n"
"  for (k = 0; k < byRow[r].length; k++) {\n"
"    var q = byRow[r][k];\n"
"    if (q[3] - tol <= t && t <= q[4] + tol && (!best || q[4] - q[3] < best[4] - best[3])) best = q;\n"
"  }\n"
"  return best;\n"
"}\n"
"cv.addEventListener('wheel', function (e) {\n"
"  e.preventDefault();\n"
"  var p = pos(e);\n"
"  if (e.shiftKey) { top += (e.deltaY || e.deltaX) > 0 ? 3 * ROW : -3 * ROW; draw(); return; }\n"
"  zoom(e.deltaY < 0 ? 0.8 : 1.25, p[0] >= LAB ? tOf(p[0]) : undefined);\n"
"}, { passive: false });\n"
"var drag = null;\n"
"cv.addEventListener('mousedown', function (e) { drag = pos(e); tip.hidden = true; });\n"
"window.addEventListener('mouseup', function () { drag = null; });\n"
"cv.addEventListener('mouseleave', function () { tip.hidden = true; if (hover) { hover = null; draw(); } });\n"
"cv.addEventListener('mousemove', function (e) {\n"
"  var p = pos(e);\n"
"  if (drag) {\n"
"    var dt = (p[0] - drag[0]) / (W - LAB) * (v1 - v0);\n"
"    v0 -= dt; v1 -= dt; top -= p[1] - drag[1]; drag = p; draw(); return;\n"
"  }\n"
"  var q = hit(p[0], p[1]);\n"
"  if (q !== hover) { hover = q; draw(); }\n"
"  if (!q) { tip.hidden = true; return; }\n"
"  var w = q[6] < 0 ? 'waited for: nothing (first to start)' :\n"
"    'waited for: ' + names[q[6]] + ' (' + phases[q[7]] + ', ended at ' + ms(q[8]) +\n"
"    ((q[9] & BARRIER) ? '; the previous phase\\'s last callback' : '') + ')';\n"
"  tip.textContent = names[q[0]] + '\\n' + ops[q[1]] + ' / ' + phases[q[2]] +\n"
"    '\\nstart ' + ms(q[3]) + '\\nduration ' + ms(q[4] - q[3]) + '\\nworker ' + q[5] +\n"
"    ', dev_id ' + D.ids[q[0]] + '\\n' + w + ((q[9] & CRIT) ? '\\non the critical path' : '');\n"
"  tip.hidden = false;\n"
"  tip.style.left = Math.min(p[0] + 14, W - 220) + 'px'; tip.style.top = (p[1] + 14) + 'px';\n"
"});\n"
"button('+', 'zoom in', function () { zoom(0.5); });\n"
"button('\\u2212', 'zoom out', function () { zoom(2); });\n"
"button('reset', 'whole run', function () { v0 = tmin; v1 = tmax; top = 0; draw(); });\n"
"button('\\u25b2', 'previous rows', function () { top -= plotH() * 0.9; draw(); });\n"
"button('\\u25bc', 'next rows', function () { top += plotH() * 0.9; draw(); });\n"
"button('critical path', 'fade every bar that is not on the critical path', function () {\n"
"  hl = !hl; this.setAttribute('aria-pressed', hl ? 'true' : 'false'); draw();\n"
"});\n"
"var wrap = document.createElement('div'); wrap.className = 'tl-wrap';\n"
"wrap.appendChild(cv); wrap.appendChild(tip);\n"
"box.appendChild(bar); box.appendChild(legend); box.appendChild(wrap);\n"
"window.addEventListener('resize', resize);\n"
"resize();\n"
"var ready = document.createElement('p'); ready.id = 'tl-ready';\n"
"ready.textContent = 'Timeline: ' + n + ' device rows' +\n"
"  (D.devices_total > n ? ' (of ' + D.devices_total + ')' : '') + ', ' + segs.length +\n"
"  ' bars, ' + ms(tmax - tmin) + '; critical path: ' + D.crit.segments + ' callbacks' +\n"
"  (D.crit.hidden ? ' (' + D.crit.hidden + ' of them on rows not drawn)' : '') +\n"
"  '. Wheel: zoom; shift+wheel or \\u25b2\\u25bc: scroll rows; drag: pan.';\n"
"box.appendChild(ready);\n"
"})();\n";

/* NAME_OF[i]: index of devs[i] in the page's names array (rows, then awaited devices), or -1. */
static size_t name_slots(const struct tl_run *t, const uint32_t *row_of, size_t rows, int64_t *name_of)
{
	size_t next = rows;

	for (size_t i = 0; i < t->ndevs; i++)
		name_of[i] = row_of[i] == TL_NONE ? -1 : (int64_t)row_of[i];
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tl_seg *s = &t->segs[i];
		uint32_t wd;

		if (row_of[s->row] == TL_NONE || s->wait == TL_NONE)
			continue;
		wd = t->segs[s->wait].row;
		if (name_of[wd] < 0)
			name_of[wd] = (int64_t)next++;
	}
	return next;
}

void tl_write_html(const struct tl_run *t, size_t max_rows, FILE *f)
{
	uint32_t *row_of = malloc((t->ndevs ? t->ndevs : 1) * sizeof(*row_of));
	int64_t *name_of = malloc((t->ndevs ? t->ndevs : 1) * sizeof(*name_of));
	uint32_t *dev_of = NULL;
	size_t rows = 0, nnames = 0, nseg = 0, crit_hidden = 0;

	if (row_of && name_of) {
		rows = tl_select_rows(t, max_rows, ~0u, row_of);
		nnames = name_slots(t, row_of, rows, name_of);
		dev_of = malloc((nnames ? nnames : 1) * sizeof(*dev_of));
	}
	if (!dev_of) {
		/* Out of memory: an empty timeline, still a valid page. */
		rows = nnames = 0;
	} else {
		for (size_t i = 0; i < t->ndevs; i++)
			if (name_of[i] >= 0)
				dev_of[name_of[i]] = (uint32_t)i;
	}
	for (size_t i = 0; dev_of && i < t->nsegs; i++)
		crit_hidden += (t->segs[i].flags & TL_SEG_CRIT) && row_of[t->segs[i].row] == TL_NONE;
	fputs("<style>\n#tl{position:relative;margin:.5em 0 1.5em}\n"
	      ".tl-bar button{margin-right:.3em;min-width:2.2em}\n"
	      ".tl-bar button[aria-pressed=true]{background:#b00020;color:#fff}\n"
	      ".tl-legend{margin:.4em 0;font-size:90%}\n.tl-legend>span{margin-right:1em;white-space:nowrap}\n"
	      ".tl-sw{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em}\n"
	      ".tl-wrap{position:relative;border:1px solid #ccc;display:inline-block}\n"
	      ".tl-canvas{display:block;cursor:crosshair}\n"
	      ".tl-tip{position:absolute;pointer-events:none;background:#ffffe8;border:1px solid #999;"
	      "padding:.3em .5em;font-size:85%;white-space:pre;box-shadow:1px 1px 3px #aaa}\n</style>\n", f);
	fputs("<div id=\"tl\"><noscript><p>The interactive timeline needs JavaScript.</p></noscript></div>\n", f);
	fputs("<script type=\"application/json\" id=\"tl-data\">{\"run\":", f);
	fprintf(f, "%" PRId64 ",\"limit\":%zu,\"rows\":%zu,\"devices_total\":%zu,"
		   "\"crit\":{\"segments\":%zu,\"hidden\":%zu,\"end\":%" PRId64 "},\"ops\":[",
		t->run_id, max_rows, rows, t->total_devs, t->ncrit, crit_hidden, t->crit_end);
	for (int i = 0; i < TL_NOPS; i++)
		fprintf(f, "%s\"%s\"", i ? "," : "", op_name[i]);
	fputs("],\n\"phases\":[", f);
	for (size_t i = 0; i < t->nphases; i++) {
		if (i)
			fputc(',', f);
		put_json_str(f, t->phases[i], 1);
	}
	fputs("],\n\"ids\":[", f);
	for (size_t i = 0; i < nnames; i++)
		fprintf(f, "%s%" PRId64, i ? "," : "", t->devs[dev_of[i]].dev_id);
	fputs("],\n\"names\":[", f);
	for (size_t i = 0; i < nnames; i++) {
		if (i)
			fputs(i % 16 ? "," : ",\n", f);
		put_json_str(f, t->devs[dev_of[i]].name, 1);
	}
	/* [row, op, phase, t0, t1, worker, waited-for name or -1, its phase, its end, flags] */
	fputs("],\n\"segs\":[", f);
	for (size_t i = 0; dev_of && i < t->nsegs; i++) {
		const struct tl_seg *s = &t->segs[i];
		const struct tl_seg *w = s->wait == TL_NONE ? NULL : &t->segs[s->wait];

		if (row_of[s->row] == TL_NONE)
			continue;
		fprintf(f, "%s[%" PRIu32 ",%d,%d,%" PRId64 ",%" PRId64 ",%" PRId32 ",%" PRId64 ",%d,%" PRId64
			   ",%d]", nseg ? (nseg % 6 ? "," : ",\n") : "",
			row_of[s->row], (int)s->op, (int)s->phase, s->t0, s->t1, s->worker,
			w ? name_of[w->row] : -1, w ? (int)w->phase : -1, w ? w->t1 : -1, (int)s->flags);
		nseg++;
	}
	fputs("]}</script>\n<script>\n", f);
	fputs(tl_script, f);
	fputs("</script>\n", f);
	free(row_of);
	free(name_of);
	free(dev_of);
}
