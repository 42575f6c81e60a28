/*
 * page.c - index.html of `dlsim report`: one self-contained page (no
 * network, no external script or font) with the tables, the plots, the
 * interactive timeline (timeline.c) and the limits.  Every string from the
 * database goes through dl_html_put().
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/advice_html.h"
#include "report/assets.h"
#include "report/explain.h"
#include "report/report_int.h"

/* ---- index.html ------------------------------------------------------- */

static void put_html_ms(FILE *f, double ns)
{
	if (isnan(ns))
		fputs("<td class=\"n\">&ndash;</td>", f);
	else
		fprintf(f, "<td class=\"n\">%.3f</td>", ns / NS_PER_MS);
}

static void put_figure(FILE *f, const char *name, const char *caption)
{
	fprintf(f, "<figure><img src=\"%s.png\" alt=\"%s\"><figcaption>%s "
		   "(<a href=\"%s.svg\">SVG</a>, <a href=\"%s.tsv\">data</a>)</figcaption></figure>\n",
		name, caption, caption, name, name);
}

static void write_runs_table(struct report *r, FILE *f)
{
	fputs("<h2 id=\"runs\">Runs</h2>\n<p>Makespan is probe, suspend and resume together; each op's own "
	      "time is in the headline and in the plot below. Content tells scenarios of one name apart: "
	      "a fingerprint of their devices and links.</p>\n<table>\n<tr><th>run_id</th><th>scenario</th>"
	      "<th>content</th><th>order</th><th>kernel</th><th>mode</th>"
	      "<th>seed</th><th>K</th><th>devices</th><th>links</th><th>status</th><th>makespan (ms)</th>"
	      "<th>lower bound (ms)</th><th>ratio</th><th>wall (ms)</th></tr>\n", f);
	for (size_t i = 0; i < r->nruns; i++) {
		const struct run_row *row = &r->runs[i];

		fprintf(f, "<tr%s><td class=\"n\">%lld</td><td>", row == r->sel ? " class=\"sel\"" : "",
			(long long)row->id);
		dl_html_put(f, row->scenario);
		fprintf(f, "</td><td><code>%06llx</code></td><td>", (unsigned long long)(row->content >> 40));
		dl_html_put(f, row->order);
		fputs(rp_kernel_order(row) ? " &#9733;</td><td>" : "</td><td>", f);
		dl_html_put(f, row->kernel);
		fputs("</td><td>", f);
		dl_html_put(f, row->mode);
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>"
			   "<td class=\"n\">%lld</td><td>", (long long)row->seed, (long long)row->workers,
			(long long)row->devices, (long long)row->links);
		dl_html_put(f, row->status);
		fputs("</td>", f);
		put_html_ms(f, row->makespan);
		put_html_ms(f, row->lower_bound);
		if (!isnan(row->makespan) && !isnan(row->lower_bound) && row->lower_bound > 0)
			fprintf(f, "<td class=\"n\">%.3f</td>", row->makespan / row->lower_bound);
		else
			fputs("<td class=\"n\">&ndash;</td>", f);
		put_html_ms(f, row->wall);
		fputs("</tr>\n", f);
	}
	if (!r->nruns)
		fputs("<tr><td colspan=\"15\">no runs in this database</td></tr>\n", f);
	fputs("</table>\n", f);
}

/* ---- the headline ------------------------------------------------------ */

/* The ops of the headline, in the order a reader asks about them. */
enum { HL_SUSPEND, HL_RESUME, HL_PROBE, HL_NOPS };
static const char *const hl_name[HL_NOPS] = { "Suspend", "Resume", "Probe" };
static const enum tl_op hl_tl_op[HL_NOPS] = { TL_SUSPEND, TL_RESUME, TL_PROBE };
/* Slowest devices named per op. */
#define HL_SLOWEST 3

static double hl_run_time(const struct run_row *row, int op)
{
	return op == HL_SUSPEND ? row->suspend : op == HL_RESUME ? row->resume : row->probe;
}

static const struct stat_acc *hl_group_time(const struct group *g, int op)
{
	return op == HL_SUSPEND ? &g->suspend : op == HL_RESUME ? &g->resume : &g->probe;
}

/* The HL_SLOWEST devices of OP by their callbacks' time in it, into TOP (dev index) and MS; returns how many. */
static size_t hl_slowest(const struct report *r, enum tl_op op, double *sum, uint32_t *top, double *ms)
{
	const struct tl_run *t = &r->tl;
	size_t n = 0;

	for (size_t i = 0; i < t->ndevs; i++)
		sum[i] = 0;
	for (size_t k = 0; k < t->nsegs; k++)
		if (t->segs[k].op == op)
			sum[t->segs[k].row] += (double)(t->segs[k].t1 - t->segs[k].t0);
	for (size_t i = 0; i < t->ndevs; i++) {
		size_t j;

		if (sum[i] <= 0)
			continue;
		for (j = n; j > 0 && sum[top[j - 1]] < sum[i]; j--)
			if (j < HL_SLOWEST) {
				top[j] = top[j - 1];
				ms[j] = ms[j - 1];
			}
		if (j < HL_SLOWEST) {
			top[j] = (uint32_t)i;
			ms[j] = sum[i];
			if (n < HL_SLOWEST)
				n++;
		}
	}
	return n;
}

/* NS as milliseconds with a tenth for the large and three decimals for the small. */
static void put_ms_short(FILE *f, double ns)
{
	fprintf(f, ns >= NS_PER_MS ? "%.1f ms" : "%.3f ms", ns / NS_PER_MS);
}

/* One box per op of the chosen run: its time and its slowest devices, as sleepgraph opens. */
static void write_headline_boxes(struct report *r, FILE *f)
{
	double *sum = r->have_tl ? calloc(r->tl.ndevs ? r->tl.ndevs : 1, sizeof(*sum)) : NULL;

	fputs("<div class=\"hl-boxes\">\n", f);
	for (int op = 0; op < HL_NOPS; op++) {
		double v = hl_run_time(r->sel, op), ms[HL_SLOWEST];
		uint32_t top[HL_SLOWEST];
		size_t n = sum ? hl_slowest(r, hl_tl_op[op], sum, top, ms) : 0;

		if (isnan(v) && !n)
			continue;
		fprintf(f, "<div class=\"hl-box hl-%s\" data-op=\"%s\"><div class=\"hl-what\">%s time</div>"
			   "<div class=\"hl-ms\">", hl_tl_op[op] == TL_SUSPEND ? "suspend" : hl_tl_op[op] ==
			   TL_RESUME ? "resume" : "probe", hl_tl_op[op] == TL_SUSPEND ? "suspend" :
			   hl_tl_op[op] == TL_RESUME ? "resume" : "probe", hl_name[op]);
		if (isnan(v))
			fputs("&ndash;", f);
		else
			put_ms_short(f, v);
		fputs("</div>", f);
		if (n) {
			fputs("<div class=\"hl-slow\">slowest:", f);
			for (size_t k = 0; k < n; k++) {
				fputs(k ? ", <b>" : " <b>", f);
				dl_html_put(f, r->tl.devs[top[k]].name);
				fputs("</b> ", f);
				put_ms_short(f, ms[k]);
			}
			fputs("</div>", f);
		}
		fputs("</div>\n", f);
	}
	fputs("</div>\n", f);
	free(sum);
}

/* Whether group G holds the chosen run. */
static bool hl_sel_group(const struct report *r, const struct group *g)
{
	const struct run_row *a = g->newest, *b = r->sel;

	return rp_same_scenario(a, b) && !strcmp(a->order, b->order) && !strcmp(a->kernel, b->kernel) &&
	       !strcmp(a->mode, b->mode) && a->workers == b->workers && a->devices == b->devices;
}

/*
 * The chosen run's scenario under each order (and kernel, mode, K) in the
 * database: each op's mean over seeds, with a bar on one axis per op.
 */
static void write_headline_orders(struct report *r, FILE *f)
{
	double max[HL_NOPS] = { 0 };
	size_t n = 0;

	for (size_t i = 0; i < r->ngroups; i++) {
		const struct group *g = &r->groups[i];

		if (!rp_same_scenario(g->newest, r->sel))
			continue;
		n++;
		for (int op = 0; op < HL_NOPS; op++) {
			double m = rp_acc_mean(hl_group_time(g, op));

			if (!isnan(m) && m > max[op])
				max[op] = m;
		}
	}
	if (!n)
		return;
	fputs("<table class=\"hl-orders\">\n<tr><th>order</th><th>kernel</th><th>mode</th><th>K</th><th>runs</th>", f);
	for (int op = 0; op < HL_NOPS; op++)
		fprintf(f, "<th>%s (ms)</th>", hl_name[op]);
	fputs("</tr>\n", f);
	for (size_t i = 0; i < r->ngroups; i++) {
		const struct group *g = &r->groups[i];

		if (!rp_same_scenario(g->newest, r->sel))
			continue;
		fprintf(f, "<tr%s><td>", hl_sel_group(r, g) ? " class=\"sel\"" : "");
		dl_html_put(f, g->newest->order);
		if (rp_kernel_order(g->newest))
			fputs(" <span class=\"hl-kernel\">&#9733; the kernel&#8217;s order</span>", f);
		fputs("</td><td>", f);
		dl_html_put(f, g->newest->kernel);
		fputs("</td><td>", f);
		dl_html_put(f, g->newest->mode);
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%g</td>", (long long)g->newest->workers,
			g->mk.n);
		for (int op = 0; op < HL_NOPS; op++) {
			double m = rp_acc_mean(hl_group_time(g, op));

			if (isnan(m)) {
				fputs("<td class=\"n\">&ndash;</td>", f);
				continue;
			}
			fprintf(f, m >= NS_PER_MS ? "<td class=\"n hl-cell\">%.1f" : "<td class=\"n hl-cell\">%.3f",
				m / NS_PER_MS);
			fprintf(f, "<div class=\"hl-bar hl-%s\" style=\"width:%.1f%%\"></div></td>",
				op == HL_SUSPEND ? "suspend" : op == HL_RESUME ? "resume" : "probe",
				max[op] > 0 ? 100 * m / max[op] : 0);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void write_headline(struct report *r, FILE *f)
{
	const struct run_row *s = r->sel;

	fprintf(f, "<section id=\"headline\">\n<h2>Run %lld: ", (long long)s->id);
	dl_html_put(f, s->scenario);
	fputs(", ", f);
	dl_html_put(f, s->order);
	if (*s->kernel) {
		fputs(" on ", f);
		dl_html_put(f, s->kernel);
	}
	fprintf(f, " (%lld devices, K = %lld, ", (long long)s->devices, (long long)s->workers);
	dl_html_put(f, s->mode);
	fputs(")</h2>\n", f);
	write_headline_boxes(r, f);
	fputs("<p>Each op's time runs from its first callback's start to its last one's end, all its "
	      "phases together (suspend: prepare to noirq; resume: noirq to complete). The same scenario "
	      "(its name, devices and links) under each order in this database, the mean over seeds; the "
	      "bars of a column share one axis. &#9733; marks the order the run's kernel itself uses "
	      "(classic async before 6.16, the 6.16 rework from it).</p>\n", f);
	write_headline_orders(r, f);
	fputs("</section>\n", f);
}

static void put_mean_sd(FILE *f, const struct stat_acc *a)
{
	if (!a->n)
		fputs("<td class=\"n\">&ndash;</td>", f);
	else
		fprintf(f, "<td class=\"n\">%.3f &plusmn; %.3f</td>", rp_acc_mean(a) / NS_PER_MS, rp_acc_sd(a) / NS_PER_MS);
}

static void write_orders(struct report *r, FILE *f)
{
	fputs("<h2 id=\"orders\">Makespan per order, over seeds</h2>\n", f);
	if (!r->groups_multi) {
		fputs("<p>Every scenario/order ran once here; <code>dlsim compare SCENARIO --orders A,B --seeds N</code> "
		      "writes N runs of each, and this plot then shows their mean &plusmn; sd.</p>\n", f);
		return;
	}
	if (rp_plotted(r, P_ORDERS))
		put_figure(f, "orders", "Makespan per scenario and order: mean and sd over the runs that differ "
			   "only in their seed, with the mean lower bound");
	fputs("<table>\n<tr><th>scenario</th><th>order</th><th>kernel</th><th>mode</th><th>devices</th><th>K</th><th>runs</th>"
	      "<th>makespan (ms)</th><th>lower bound (ms)</th><th>ratio</th><th>probe (ms)</th>"
	      "<th>suspend (ms)</th><th>resume (ms)</th></tr>\n", f);
	for (size_t i = r->ngroups; i-- > 0;) {
		const struct group *g = &r->groups[i];
		double mk = rp_acc_mean(&g->mk), lb = rp_acc_mean(&g->lb);

		fputs("<tr><td>", f);
		dl_html_put(f, g->newest->scenario);
		fputs("</td><td>", f);
		dl_html_put(f, g->newest->order);
		fputs("</td><td>", f);
		dl_html_put(f, g->newest->kernel);
		fputs("</td><td>", f);
		dl_html_put(f, g->newest->mode);
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">%g</td>",
			(long long)g->newest->devices, (long long)g->newest->workers, g->mk.n);
		put_mean_sd(f, &g->mk);
		put_html_ms(f, lb);
		if (!isnan(mk) && !isnan(lb) && lb > 0)
			fprintf(f, "<td class=\"n\">%.3f</td>", mk / lb);
		else
			fputs("<td class=\"n\">&ndash;</td>", f);
		put_mean_sd(f, &g->probe);
		put_mean_sd(f, &g->suspend);
		put_mean_sd(f, &g->resume);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void write_scaling(struct report *r, FILE *f)
{
	fputs("<h2 id=\"scaling\">Scaling</h2>\n", f);
	if (r->scaling_sizes < 2) {
		fputs("<p>All runs here have the same number of devices, so there is no scaling plot; "
		      "runs of several sizes (<code>--set devices=N</code>) make one.</p>\n", f);
		return;
	}
	if (rp_plotted(r, P_SCALING))
		put_figure(f, "scaling", "Simulated makespan and the simulator's wall time against the number "
			   "of devices, per order (log-log; mean over the runs of each size)");
}

static void write_crit_table(struct report *r, FILE *f)
{
	const struct tl_run *t = &r->tl;
	uint32_t *path;
	size_t n = 0;

	if (!t->ncrit)
		return;
	path = malloc(t->ncrit * sizeof(*path));
	if (!path)
		return;
	for (size_t i = 0; i < t->nsegs && n < t->ncrit; i++)
		if (t->segs[i].flags & TL_SEG_CRIT)
			path[n++] = (uint32_t)i;
	{
		double busy = 0, gaps = 0;

		for (size_t k = 0; k < n; k++) {
			const struct tl_seg *s = &t->segs[path[k]];

			busy += (double)(s->t1 - s->t0);
			if (s->wait != TL_NONE)
				gaps += (double)(s->t0 - t->segs[s->wait].t1);
		}
		fprintf(f, "<details><summary>Critical path: %zu callbacks, ending at %.3f ms: %.3f ms in "
			   "callbacks, %.3f ms between what a callback waited for and its start (queueing, "
			   "wake-ups, the main thread's walk)", t->ncrit, (double)t->crit_end / NS_PER_MS,
			busy / NS_PER_MS, gaps / NS_PER_MS);
	}
	if (n > DL_REPORT_CRIT_ROWS)
		fprintf(f, " (the last %d listed)", DL_REPORT_CRIT_ROWS);
	fputs("</summary>\n<table>\n<tr><th>device</th><th>op / phase</th><th>start (ms)</th>"
	      "<th>duration (ms)</th><th>gap after what it waited for (ms)</th><th>waited for</th></tr>\n", f);
	/* segments are in end order, the path too: list it forwards */
	for (size_t k = n > DL_REPORT_CRIT_ROWS ? n - DL_REPORT_CRIT_ROWS : 0; k < n; k++) {
		const struct tl_seg *s = &t->segs[path[k]];

		fputs("<tr><td>", f);
		dl_html_put(f, t->devs[s->row].name);
		fputs("</td><td>", f);
		dl_html_put(f, t->phases[s->phase]);
		fputs("</td>", f);
		put_html_ms(f, (double)s->t0);
		put_html_ms(f, (double)(s->t1 - s->t0));
		if (s->wait != TL_NONE) {
			const struct tl_seg *w = &t->segs[s->wait];

			put_html_ms(f, (double)(s->t0 - w->t1));
			fputs("<td>", f);
			dl_html_put(f, t->devs[w->row].name);
			fputs(" (", f);
			dl_html_put(f, t->phases[w->phase]);
			fputs(s->flags & TL_SEG_BARRIER ? "; the previous phase's last callback)" : ")", f);
			fputs("</td>", f);
		} else {
			fputs("<td class=\"n\">&ndash;</td><td>nothing: first to start</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</details>\n", f);
	free(path);
}

/* The interactive timeline of the chosen run and the links to the trace files. */
static void write_timeline(struct report *r, FILE *f)
{
	size_t shown = r->tl.ndevs < DL_REPORT_TIMELINE_DEVICES ? r->tl.ndevs : DL_REPORT_TIMELINE_DEVICES;

	fprintf(f, "<h2 id=\"timeline\">Timeline of run %lld</h2>\n", (long long)r->sel->id);
	if (!r->have_tl || !r->tl.nsegs) {
		fputs("<p>No probe, unbind, suspend or resume events logged for this run.</p>\n", f);
		return;
	}
	fprintf(f, "<p>One pane per op, its time axis in ms from the op's start. On top, the op's %d slowest "
		   "devices (most callback time); under them, as sleepgraph draws it, one row per worker (the "
		   "main PM thread first) with its callbacks packed into it, the device's name and {driver} "
		   "on each bar wide "
		   "enough; the rows button switches to one row per device in the order they started. Bars are "
		   "coloured by phase; the critical path (what set the makespan, walked back from the last end "
		   "through what each callback waited for) is outlined in red; hover a bar for its device, "
		   "phase, start, duration, worker and what it waited for. Limit: at most %d devices are drawn, "
		   "the devices on the critical path first, then each op's slowest, then the lowest dev_ids: %zu of this run's %zu "
		   "devices here.</p>\n", TL_PINNED, DL_REPORT_TIMELINE_DEVICES, shown, r->tl.total_devs);
	tl_write_html(&r->tl, DL_REPORT_TIMELINE_DEVICES, f);
	write_crit_table(r, f);
}

static void write_traces_links(struct report *r, FILE *f)
{
	const char *ext = rp_trace_ext(r);

	fprintf(f, "<h2 id=\"traces\">Traces</h2>\n<p>The run as Chrome trace events, %s, with a flow "
		   "arrow from each awaited callback's end to the start of the one that waited for it: "
		   "<a href=\"trace%s\">trace%s</a> (run %lld; open it in the Perfetto UI, "
		   "chrome://tracing or the DevTools Performance panel%s).",
		r->trace_per_device ? "one track per device" : "one track per worker (tid 0: the main PM thread)",
		ext, ext, (long long)r->sel->id, r->trace_plain ? "" : ", which read gzip as is");
	if (r->ntraced) {
		fputs(" Per run:", f);
		for (size_t i = 0; i < r->ntraced; i++)
			fprintf(f, " <a href=\"trace-%lld%s\">%lld</a>", (long long)r->traced[i], ext,
				(long long)r->traced[i]);
	}
	fputs("</p>\n", f);
	if (r->tl.ndevs > r->trace_devs)
		fprintf(f, "<p class=\"note\">Size cap: these trace files hold %zu of the run's %zu devices "
			   "(the devices on the critical path first, then each op's slowest, then the lowest dev_ids), about 4 KB of JSON "
			   "each; larger traces do not load in the viewers' JSON importers. <code>dlsim report "
			   "--trace-devices N</code> raises the cap.</p>\n", r->trace_devs, r->tl.ndevs);
}

static void write_util(struct report *r, FILE *f)
{
	fprintf(f, "<h2 id=\"util\">Workers of run %lld</h2>\n", (long long)r->sel->id);
	if (!rp_plotted(r, P_UTIL)) {
		fputs("<p>No phases logged for this run.</p>\n", f);
		return;
	}
	put_figure(f, "util", "Callbacks in progress (the main thread's included), workers blocked on a "
		   "dependency and devices ready but not started, over time");
	fprintf(f, "<p>On average over the run's phases %.2f callbacks were in progress (K = %lld simulated "
		   "CPUs; a callback that sleeps in its driver, waiting for hardware, holds no CPU, so more "
		   "than K can be in progress) and %.2f workers were blocked. ", r->util_busy,
		(long long)r->sel->workers, r->util_blocked);
	if (r->util_blocked_logged)
		fputs("Blocked counts the work items asleep on their dependencies, from the engine's "
		      "work_block and work_wake events; ready counts devices waiting for a CPU, the main "
		      "thread's walk or a probe retry.", f);
	else if (r->util_blocked_derived)
		fputs("Blocked is derived, not logged (this log has no work_block events): this order queues "
		      "every async device's work up front and the item sleeps from its phase's start until "
		      "its last dependency ends.", f);
	else
		fputs("This order never blocks a worker on a dependency (work is queued when it is ready), so "
		      "blocked stays 0; ready counts devices waiting for a CPU, the main thread's walk or a "
		      "probe retry.", f);
	fputs("</p>\n", f);
}

static void write_probe(struct report *r, FILE *f)
{
	fprintf(f, "<h2 id=\"probe\">Probe attempts of run %lld</h2>\n", (long long)r->sel->id);
	if (!rp_plotted(r, P_PROBE)) {
		fputs("<p>No probe events logged for this run.</p>\n", f);
		return;
	}
	put_figure(f, "probe", "Devices by number of probe attempts (probe_start + probe_defer) and of defers");
	if (!r->ntop) {
		fputs("<p>No device deferred its probe.</p>\n", f);
		return;
	}
	fputs("<table>\n<tr><th>most deferred</th><th>dev_id</th><th>defers</th><th>probe starts</th></tr>\n", f);
	for (size_t i = 0; i < r->ntop; i++) {
		const struct deferred *d = &r->top[i];
		const char *name = "";

		for (size_t k = 0; k < r->tl.ndevs; k++)
			if (r->tl.devs[k].dev_id == d->dev_id)
				name = r->tl.devs[k].name;
		fputs("<tr><td>", f);
		dl_html_put(f, name);
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td></tr>\n",
			(long long)d->dev_id, (long long)d->defers, (long long)d->starts);
	}
	fputs("</table>\n", f);
}

static void write_gantt(struct report *r, FILE *f)
{
	const struct tl_run *t = &r->tl;
	double *sum = NULL;
	uint8_t *crit = NULL;
	uint32_t *dev_of = NULL;

	fprintf(f, "<h2 id=\"gantt\">Suspend/resume of run %lld</h2>\n", (long long)r->sel->id);
	if (!rp_plotted(r, P_GANTT)) {
		fputs("<p>No suspend/resume events logged for this run.</p>\n", f);
		return;
	}
	fprintf(f, "<p>At most %d device rows: those on the critical path first, then the slowest, then the lowest dev_ids.</p>\n",
		DL_REPORT_GANTT_DEVICES);
	put_figure(f, "gantt", "Per-device suspend and resume phases, the critical path outlined");
	sum = calloc(2 * r->gantt_rows + 1, sizeof(*sum));
	crit = calloc(r->gantt_rows + 1, sizeof(*crit));
	dev_of = calloc(r->gantt_rows + 1, sizeof(*dev_of));
	if (!sum || !crit || !dev_of)
		goto out;
	for (size_t k = 0; k < t->nsegs; k++) {
		const struct tl_seg *s = &t->segs[k];
		uint32_t row = r->gantt_row[s->row];

		if (row == TL_NONE || (s->op != TL_SUSPEND && s->op != TL_RESUME))
			continue;
		sum[2 * row + (s->op == TL_RESUME)] += (double)(s->t1 - s->t0);
		crit[row] |= s->flags & TL_SEG_CRIT;
	}
	fputs("<table>\n<tr><th>row</th><th>dev_id</th><th>device</th><th>suspend (ms)</th>"
	      "<th>resume (ms)</th><th>critical</th></tr>\n", f);
	for (size_t i = 0; i < t->ndevs; i++)
		if (r->gantt_row[i] != TL_NONE)
			dev_of[r->gantt_row[i]] = (uint32_t)i;
	for (uint32_t row = 0; row < r->gantt_rows; row++) {
		size_t i = dev_of[row];

		fprintf(f, "<tr><td class=\"n\">%u</td><td class=\"n\">%lld</td><td>", row,
			(long long)t->devs[i].dev_id);
		dl_html_put(f, t->devs[i].name);
		fputs("</td>", f);
		put_html_ms(f, sum[2 * row]);
		put_html_ms(f, sum[2 * row + 1]);
		fprintf(f, "<td>%s</td></tr>\n", crit[row] ? "yes" : "");
	}
	fputs("</table>\n", f);
out:
	free(sum);
	free(crit);
	free(dev_of);
}

static void write_limits(struct report *r, FILE *f)
{
	fprintf(f, "<h2 id=\"limits\">Limits</h2>\n<ul>\n"
		   "<li>Interactive timeline: at most %d device rows (critical path first, then each op's "
		   "slowest, then the lowest dev_ids).</li>\n<li>Trace files: at most %zu devices each, chosen the same way "
		   "(<code>--trace-devices N</code>).</li>\n"
		   "<li>Gantt plot: at most %d device rows, chosen the same way.</li>\n"
		   "<li>Makespan per run: the newest %d runs; per order: the newest %d scenario/order groups.</li>\n"
		   "<li>Utilization: exact steps up to %d change points, averages over %d equal time buckets "
		   "past that.</li>\n"
		   "<li>Trace files: the chosen run and the newest %d runs.</li>\n"
		   "<li>Waits and the critical path are derived from the log alone: for each callback, the "
		   "dependency of the same phase that ended last before it started.</li>\n</ul>\n",
		DL_REPORT_TIMELINE_DEVICES, r->trace_devices, DL_REPORT_GANTT_DEVICES, DL_REPORT_PLOT_RUNS, DL_REPORT_PLOT_GROUPS,
		DL_REPORT_UTIL_POINTS, DL_REPORT_UTIL_POINTS / 2, DL_REPORT_TRACE_RUNS);
}

int rp_write_index(struct report *r, const char *dbpath)
{
	char path[PATH_MAX];
	FILE *f;
	int ret = rp_write_fidelity(r, dbpath);

	if (ret)
		return ret;
	f = rp_open_out(r, "index.html", path, sizeof(path));
	if (!f)
		return rp_err(r, -EIO, "%s/index.html: %s", r->outdir, strerror(errno));
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>dlsim report</title>\n<style>\n", f);
	fwrite(rp_asset_page_css, 1, rp_asset_page_css_len, f);
	fputs("</style>\n</head>\n<body>\n<h1>dlsim report</h1>\n<p>Database: <code>", f);
	dl_html_put(f, dbpath);
	fputs("</code>", f);
	if (r->sel) {
		fprintf(f, "; run drawn in detail: %lld (", (long long)r->sel->id);
		dl_html_put(f, r->sel->scenario);
		fputs(", ", f);
		dl_html_put(f, r->sel->order);
		fputs(")", f);
	}
	fputs("</p>\n<nav><a href=\"#headline\">headline</a><a href=\"#runs\">runs</a><a href=\"#makespan\">makespan</a><a href=\"#orders\">orders</a>"
	      "<a href=\"#scaling\">scaling</a><a href=\"#timeline\">timeline</a><a href=\"#util\">workers</a>"
	      "<a href=\"#probe\">probe</a><a href=\"#gantt\">suspend/resume</a><a href=\"#traces\">traces</a>"
	      "<a href=\"#limits\">limits</a>", f);
	if (r->fidelity_boards)
		fprintf(f, "<a href=\"fidelity.html\">kernel vs twins (%zu boards)</a>", r->fidelity_boards);
	fputs("</nav>\n", f);
	if (r->plot_ret) {
		fputs("<p class=\"err\">Plots incomplete: ", f);
		dl_html_put(f, r->plot_err);
		fputs("</p>\n", f);
	}
	if (r->sel)
		write_headline(r, f);
	write_runs_table(r, f);
	fputs("<h2 id=\"makespan\">Makespan per run</h2>\n", f);
	if (rp_plotted(r, P_MAKESPAN))
		put_figure(f, "makespan", "Makespan per run and operation, with the lower bound");
	else
		fputs("<p>No makespan data.</p>\n", f);
	write_orders(r, f);
	write_scaling(r, f);
	if (r->sel) {
		write_timeline(r, f);
		rp_write_beside(r, f);
		if (r->have_tl)
			dl_explain_html(r->db, &r->tl, f);
		dl_advice_html(r->db, r->sel->scenario, f);
		write_util(r, f);
		write_probe(r, f);
		write_gantt(r, f);
		write_traces_links(r, f);
	}
	write_limits(r, f);
	fputs("</body>\n</html>\n", f);
	return rp_close_out(r, f, path);
}

