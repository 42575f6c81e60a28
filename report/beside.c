/*
 * beside.c - index.html's beside view: the chosen run and another run of
 * the same scenario content (its twin, or `report --beside RUN`) drawn per
 * op on one shared time axis, one above the other (beside.js draws it), so
 * that where they diverge shows.  The devices drawn are the union of each
 * run's tl_select_rows() at DL_REPORT_BESIDE_DEVICES, matched by dev_id.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report/assets.h"
#include "report/report_int.h"

/* Index of devs[] with DEV_ID in T (sorted by dev_id), or TL_NONE. */
static uint32_t dev_index(const struct tl_run *t, int64_t dev_id)
{
	size_t lo = 0, hi = t->ndevs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->devs[mid].dev_id < dev_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->ndevs && t->devs[lo].dev_id == dev_id ? (uint32_t)lo : TL_NONE;
}

/* S as a JSON string ("?" when it is not UTF-8), or null for NULL. */
static json_t *jtext(const char *s)
{
	json_t *j = s ? json_string(s) : json_null();

	return j ? j : json_string("?");
}

/* Index of NAME in the array PHASES, appended when missing. */
static int phase_slot(json_t *phases, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(phases, i, v)
		if (!strcmp(json_string_value(v), name))
			return (int)i;
	json_array_append_new(phases, jtext(name));
	return (int)json_array_size(phases) - 1;
}

/* Dumps J (consumed) into a <script type="application/json">: '<', '>', '&' escaped. */
static void bs_json(FILE *f, const char *id, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;

	fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
	for (const char *p = s ? s : "null"; *p; p++) {
		if (*p == '<' || *p == '>' || *p == '&')
			fprintf(f, "\\u%04x", (unsigned char)*p);
		else
			fputc(*p, f);
	}
	fputs("</script>\n", f);
	free(s);
	json_decref(j);
}

/* Run T's segments of drawn devices: [slot, op, phase, t0, t1, worker, instance]. */
static json_t *bs_segs(const struct tl_run *t, const uint32_t *slot_of, json_t *phases)
{
	json_t *a = json_array();
	int *ph = calloc(t->nphases ? t->nphases : 1, sizeof(*ph));

	if (!a || !ph) {
		free(ph);
		return a;
	}
	for (size_t i = 0; i < t->nphases; i++)
		ph[i] = phase_slot(phases, t->phases[i]);
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tl_seg *s = &t->segs[i];

		if (slot_of[s->row] == TL_NONE)
			continue;
		json_array_append_new(a, json_pack("[I,i,i,I,I,i,I]", (json_int_t)slot_of[s->row],
						   (int)s->op, ph[s->phase], (json_int_t)s->t0,
						   (json_int_t)s->t1, (int)s->worker, (json_int_t)s->inst));
	}
	free(ph);
	return a;
}

static json_t *bs_run(const struct run_row *row, const char *role)
{
	return json_pack("{s:I, s:s, s:s, s:I, s:s}", "run", (json_int_t)row->id, "order",
			 row->order ? row->order : "", "mode", row->mode ? row->mode : "", "workers",
			 (json_int_t)row->workers, "role", role);
}

void rp_write_beside(const struct report *r, FILE *f)
{
	const struct tl_run *a = &r->tl, *b = &r->tl2;
	size_t na = a->ndevs ? a->ndevs : 1, nb = b->ndevs ? b->ndevs : 1, nslots = 0;
	uint32_t *rowa, *rowb, *sla, *slb;
	json_t *d, *ids, *names, *drivers, *phases, *ops, *runs;
	static const char *const op_name[TL_NOPS] = { "probe", "unbind", "suspend", "resume" };

	if (!r->other || !r->tl.nsegs)
		return;
	rowa = malloc(na * sizeof(*rowa));
	rowb = malloc(nb * sizeof(*rowb));
	sla = malloc(na * sizeof(*sla));
	slb = malloc(nb * sizeof(*slb));
	fprintf(f, "<h2 id=\"beside\">Run %lld beside run %lld</h2>\n", (long long)r->sel->id,
		(long long)r->other->id);
	fprintf(f, "<p>Both runs of this scenario per op on one time axis (ms from each run's start of "
		   "the op), run %lld above, run %lld (%s) under it, each packed into rows per worker; a "
		   "dashed line marks where each run's op ended. Hover a bar for its callback and the same "
		   "callback in the other run; under each pane the devices whose callbacks ended furthest "
		   "apart. Limit: each run's %d devices of the timeline's choice (critical path first), "
		   "both runs' together.</p>\n", (long long)r->sel->id, (long long)r->other->id,
		r->other_is_twin > 0 ? "its replay twin" : r->other_is_twin < 0 ?
		"the run it replays as a twin" : "--beside", DL_REPORT_BESIDE_DEVICES);
	d = json_object();
	ids = json_array();
	names = json_array();
	drivers = json_array();
	phases = json_array();
	ops = json_array();
	runs = json_array();
	if (!rowa || !rowb || !sla || !slb || !d || !ids || !names || !drivers || !phases || !ops ||
	    !runs) {
		fputs("<p>Out of memory: the beside view is left out.</p>\n", f);
		goto out;
	}
	tl_select_rows(a, DL_REPORT_BESIDE_DEVICES, ~0u, rowa);
	tl_select_rows(b, DL_REPORT_BESIDE_DEVICES, ~0u, rowb);
	for (size_t i = 0; i < b->ndevs; i++)
		slb[i] = TL_NONE;
	/* slots: A's chosen devices and B's, each dev_id once, matched across the runs */
	for (size_t i = 0; i < a->ndevs; i++) {
		uint32_t j = dev_index(b, a->devs[i].dev_id);

		sla[i] = TL_NONE;
		if (rowa[i] == TL_NONE && (j == TL_NONE || rowb[j] == TL_NONE))
			continue;
		sla[i] = (uint32_t)nslots++;
		if (j != TL_NONE)
			slb[j] = sla[i];
	}
	for (size_t j = 0; j < b->ndevs; j++)
		if (slb[j] == TL_NONE && rowb[j] != TL_NONE && dev_index(a, b->devs[j].dev_id) == TL_NONE)
			slb[j] = (uint32_t)nslots++;
	for (size_t i = 0; i < a->ndevs; i++) {
		const struct tl_dev *dv = &a->devs[i];
		uint32_t j = dev_index(b, dv->dev_id);
		const char *drv = dv->driver ? dv->driver : j != TL_NONE ? b->devs[j].driver : NULL;

		if (sla[i] == TL_NONE)
			continue;
		json_array_append_new(ids, json_integer(dv->dev_id));
		json_array_append_new(names, jtext(dv->name));
		json_array_append_new(drivers, jtext(drv));
	}
	for (size_t j = 0; j < b->ndevs; j++) {
		const struct tl_dev *dv = &b->devs[j];

		if (slb[j] == TL_NONE || dev_index(a, dv->dev_id) != TL_NONE)
			continue;
		json_array_append_new(ids, json_integer(dv->dev_id));
		json_array_append_new(names, jtext(dv->name));
		json_array_append_new(drivers, jtext(dv->driver));
	}
	for (int k = 0; k < TL_NOPS; k++)
		json_array_append_new(ops, json_string(op_name[k]));
	json_array_append_new(runs, bs_run(r->sel, "chosen"));
	json_array_append_new(runs, bs_run(r->other, r->other_is_twin > 0 ? "its twin" :
					   r->other_is_twin < 0 ? "the run it replays" : "beside"));
	json_object_set_new(d, "runs", runs);
	json_object_set_new(d, "ops", ops);
	json_object_set_new(d, "ids", ids);
	json_object_set_new(d, "names", names);
	json_object_set_new(d, "drivers", drivers);
	json_object_set_new(d, "devices_total", json_pack("[I,I]", (json_int_t)a->total_devs,
							  (json_int_t)b->total_devs));
	json_object_set_new(d, "limit", json_integer(DL_REPORT_BESIDE_DEVICES));
	fputs("<div id=\"bs\"><noscript><p>The beside view needs JavaScript.</p></noscript></div>\n", f);
	bs_json(f, "bs-segs-a", bs_segs(a, sla, phases));
	bs_json(f, "bs-segs-b", bs_segs(b, slb, phases));
	json_object_set_new(d, "phases", phases);
	phases = NULL;
	ids = names = drivers = ops = runs = NULL;
	bs_json(f, "bs-data", d);
	d = NULL;
	fputs("<script>\n", f);
	fwrite(rp_asset_beside_js, 1, rp_asset_beside_js_len, f);
	fputs("</script>\n", f);
out:
	if (d) {
		json_decref(ids);
		json_decref(names);
		json_decref(drivers);
		json_decref(phases);
		json_decref(ops);
		json_decref(runs);
		json_decref(d);
	}
	free(rowa);
	free(rowb);
	free(sla);
	free(slb);
}
