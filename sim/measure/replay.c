/*
 * replay.c - the replay check: per-phase spans of an engine run, from its
 * events (a phase ends when its last callback ends; the next starts there,
 * as phases are separated by barriers), against the log's total lines.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/measure/replay.h"

struct spans {
	int64_t end[DL_PH_COUNT];
};

static void on_event(void *ctx, struct dl_event *ev)
{
	struct spans *sp = ctx;

	if (ev->kind != DL_EV_SUSPEND_START && ev->kind != DL_EV_SUSPEND_END &&
	    ev->kind != DL_EV_RESUME_START && ev->kind != DL_EV_RESUME_END)
		return;
	if (ev->phase < DL_PH_COUNT && ev->t_ns > sp->end[ev->phase])
		sp->end[ev->phase] = ev->t_ns;
}

/* Span of each PM phase (index: dl_phase) of one run of @sc. */
static int run_spans(const struct dl_scenario *sc, enum dl_order order, uint32_t workers,
		     int64_t span[DL_PH_COUNT], struct dl_error *err)
{
	static struct dl_run_result r;	/* large; import-log runs one replay at a time */
	struct dl_engine_opts o = { .order = order, .workers = workers, .seed = sc->seed };
	struct spans sp;
	int ret;

	for (unsigned p = 0; p < DL_PH_COUNT; p++)
		sp.end[p] = -1;
	o.sink.emit = on_event;
	o.sink.ctx = &sp;
	ret = dl_engine_run(sc, &o, &r);
	if (ret) {
		snprintf(err->msg, sizeof(err->msg), "replay: the engine refused the imported "
			 "scenario (%s)", strerror(-ret));
		return ret;
	}
	for (unsigned p = 0; p < DL_PH_COUNT; p++) {
		int64_t start = -1;

		if (p == DL_PH_PREPARE || p == DL_PH_RESUME_NOIRQ) {
			/* first phase of the suspend or resume op */
			for (uint32_t i = 0; i < r.nops; i++)
				if (r.op[i].kind == (p == DL_PH_PREPARE ? DL_OP_SUSPEND : DL_OP_RESUME))
					start = r.op[i].start_ns;
		} else {
			start = sp.end[p - 1];
		}
		span[p] = sp.end[p] >= 0 && start >= 0 ? sp.end[p] - start : -1;
	}
	return 0;
}

/* OUT's rows: each phase total the log printed for CYCLE, with the callbacks inside it. */
static void logged_rows(const struct dl_logimport *li, uint32_t cycle, struct dl_replay *out)
{
	for (uint32_t t = 0; t < li->ntot && out->nrow < DL_REPLAY_MAX_ROWS; t++) {
		const struct dl_lg_total *tt = &li->tot[t];
		struct dl_replay_row *row;

		if (tt->cycle != cycle)
			continue;
		row = &out->row[out->nrow++];
		snprintf(row->label, sizeof(row->label), "%s", tt->label);
		row->first = tt->first;
		row->last = tt->last;
		row->line = tt->line;
		row->logged_ns = tt->ns;
		for (uint32_t i = li->cyc[cycle].smp_first; i < li->cyc[cycle].smp_end; i++) {
			const struct dl_lg_sample *s = &li->smp[i];

			if (s->cycle != cycle || s->key < tt->first || s->key > tt->last)
				continue;
			row->ncb++;
			row->cb_sum_ns += s->lat_ns;
			if (s->lat_ns > row->cb_max_ns)
				row->cb_max_ns = s->lat_ns;
		}
	}
}

/* The replay's order (ORDER, else the log's) and CPUs (WORKERS, else the log's). */
static void replay_setup(const struct dl_logimport *li, uint32_t cycle, int order,
			 uint32_t workers, struct dl_replay *out)
{
	bool items;

	out->order = order >= 0 ? (enum dl_order)order
				: dl_order_of_kernel(li->cyc[cycle].nasync != 0, 0);
	items = dl_order_uses_items(dl_order_policy(out->order));
	out->workers = workers ? workers : !items ? 1 : li->cpus ? li->cpus : DL_COST_CPUS;
	/*
	 * The engine holds a CPU for a callback's whole latency; a log that shows
	 * more callbacks running at once than CPUs shows callbacks that sleep
	 * (msleep in PCI power transitions...): give the replay that many.
	 */
	if (!workers && items && li->cyc[cycle].peak > out->workers)
		out->workers = li->cyc[cycle].peak;
}

/* CYCLE as a scenario (WITH_GAP: the main thread's gaps added) run by OUT's order and
 * CPUs: each phase's span into SPAN.  0, or a negative errno (ERR says why). */
static int replay_spans(const struct dl_logimport *li, uint32_t cycle, bool with_gap,
			const struct dl_replay *out, int64_t *span, struct dl_error *err)
{
	json_t *js = dl_log_scenario(li, cycle, with_gap, "replay");
	struct dl_scenario *sc = NULL;
	int ret;

	if (!js)
		return -ENOMEM;
	ret = dl_scenario_load_json("(imported scenario)", js, NULL, 0, NULL, &sc, err);
	if (!ret)
		ret = run_spans(sc, out->order, out->workers, span, err);
	dl_scenario_free(sc);
	json_decref(js);
	return ret;
}

int dl_log_replay(const struct dl_logimport *li, uint32_t cycle, int order, uint32_t workers,
		  struct dl_replay *out, struct dl_error *err)
{
	int64_t fit[DL_PH_COUNT], def[DL_PH_COUNT];
	int ret;

	memset(out, 0, sizeof(*out));
	out->cycle = cycle;
	out->main_ns = li->main_gap_ns;
	logged_rows(li, cycle, out);
	if (!out->nrow) {
		snprintf(err->msg, sizeof(err->msg), "cycle %u printed no phase total; nothing to "
			 "replay against", cycle);
		return -ENODATA;
	}
	replay_setup(li, cycle, order, workers, out);
	if ((ret = replay_spans(li, cycle, true, out, fit, err)) ||
	    (ret = replay_spans(li, cycle, false, out, def, err)))
		return ret;
	for (uint32_t i = 0; i < out->nrow; i++) {
		struct dl_replay_row *row = &out->row[i];

		row->replay_ns = row->replay_default_ns = 0;
		for (unsigned k = row->first; k <= row->last; k++) {
			unsigned p = k - DL_LAT_PREPARE;

			row->replay_ns += fit[p] > 0 ? fit[p] : 0;
			row->replay_default_ns += def[p] > 0 ? def[p] : 0;
		}
	}
	return 0;
}
