/*
 * fidelity.c - fidelity.html of `dlsim report` on a kernel-mode sweep with
 * twins: per board the dependency-ordered pairs the twin orders as the
 * kernel did, the agreement on pairs only timing orders, and per phase the
 * ratio twin / kernel, for model and replay twins (model twins of boot
 * probe context, "model-boot", in rows of their own); over the boards, per
 * phase, p10 / median / p90 of those ratios and a plot of their spread.
 * Boards that disagree on a dependency come first.  The numbers are the
 * sweep summary's own (sim/sweep/fidelity.h); names reach the page through
 * dl_html_put() and the data file through rp_put_field(), never gnuplot's
 * command line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/assets.h"
#include "report/explain.h"
#include "report/report_int.h"
#include "sim/log/dl_log.h"
#include "sim/sweep/fidelity.h"

/* "model-boot": the twins of sweeps run with --probe-context boot, beside "model" when both are in OUT.db */
static const char *const kinds[] = { "model", "replay", "model-boot" };
#define NKINDS 3

/* Whether a board's kind has kernel runs compared. */
static json_t *kind_of(const json_t *g, unsigned m)
{
	json_t *k = json_object_get(json_object_get(g, "kernel_fidelity"), kinds[m]);

	return k && json_integer_value(json_object_get(k, "runs")) ? k : NULL;
}

/* A board disagrees when a twin of either kind orders a dependency-ordered pair otherwise. */
static bool disagrees(const json_t *g)
{
	for (unsigned m = 0; m < NKINDS; m++) {
		json_t *k = kind_of(g, m);

		if (k && !json_is_true(json_object_get(k, "every_dependency_agrees")))
			return true;
	}
	return false;
}

/* The boards with disagreeing ones first, each part in the library's order (by label). */
static json_t *disagreeing_first(const json_t *boards)
{
	json_t *out = json_array(), *g;
	size_t i;

	for (int pass = 0; out && pass < 2; pass++)
		json_array_foreach(boards, i, g)
			if (disagrees(g) == !pass)
				json_array_append(out, g);
	return out;
}

/*
 * fidelity.tsv: per twin kind, phase and board, the board's median ratio;
 * then (gnuplot's index 1) per kind and phase p10, median and p90 of them.
 */
static int write_data(struct report *r, const json_t *boards, size_t *rows)
{
	char path[PATH_MAX];
	FILE *f = rp_open_out(r, "fidelity.tsv", path, sizeof(path));
	json_t *g;
	size_t i;

	*rows = 0;
	if (!f)
		return rp_err(r, -EIO, "%s/fidelity.tsv: %s", r->outdir, strerror(errno));
	fputs("# kind (0 model, 1 replay, 2 model-boot)\tphase_index\tphase\tratio_twin_over_kernel\tboard\n", f);
	for (unsigned m = 0; m < NKINDS; m++)
		for (unsigned ph = 0; ph < dl_fid_nphases; ph++)
			json_array_foreach(boards, i, g) {
				json_t *k = kind_of(g, m), *x;

				x = json_object_get(json_object_get(k, "phase_ratio_median"), dl_fid_phases[ph]);
				if (!json_is_real(x))
					continue;
				fprintf(f, "%u\t%u\t%s\t%.6f\t", m, ph, dl_fid_phases[ph], json_real_value(x));
				rp_put_field(f, json_string_value(json_object_get(g, "label")));
				fputc('\n', f);
				(*rows)++;
			}
	fputs("\n\n# kind\tphase_index\tphase\tp10\tmedian\tp90\tboards\n", f);
	for (unsigned m = 0; m < NKINDS; m++) {
		json_t *sum = dl_sweep_fidelity_phases(boards, kinds[m]), *x;

		for (unsigned ph = 0; ph < dl_fid_nphases; ph++) {
			x = json_object_get(json_object_get(sum, "phases"), dl_fid_phases[ph]);
			if (x)
				fprintf(f, "%u\t%u\t%s\t%.6f\t%.6f\t%.6f\t%lld\n", m, ph, dl_fid_phases[ph],
					json_real_value(json_array_get(x, 0)),
					json_real_value(json_array_get(x, 1)),
					json_real_value(json_array_get(x, 2)),
					(long long)json_integer_value(json_array_get(x, 3)));
		}
		json_decref(sum);
	}
	return rp_close_out(r, f, path);
}

static void put_ratio(FILE *f, const json_t *x)
{
	if (json_is_real(x))
		fprintf(f, "<td class=\"n\">%.2f</td>", json_real_value(x));
	else
		fputs("<td class=\"n\">&ndash;</td>", f);
}

static void write_summary(FILE *f, const json_t *boards)
{
	json_t *sum[NKINDS];

	fputs("<h2 id=\"phases\">Per phase, twin / kernel over the boards</h2>\n"
	      "<p>Each board's median ratio over its kernel runs; p10, median and p90 of those.</p>\n"
	      "<table>\n<tr><th>phase</th>", f);
	for (unsigned m = 0; m < NKINDS; m++) {
		sum[m] = dl_sweep_fidelity_phases(boards, kinds[m]);
		if (sum[m] && json_integer_value(json_object_get(sum[m], "boards")))
			fprintf(f, "<th>%s p10</th><th>%s median</th><th>%s p90</th>", kinds[m], kinds[m],
				kinds[m]);
	}
	fputs("</tr>\n", f);
	for (unsigned ph = 0; ph < dl_fid_nphases; ph++) {
		fprintf(f, "<tr><td>%s</td>", dl_fid_phases[ph]);
		for (unsigned m = 0; m < NKINDS; m++) {
			json_t *x = json_object_get(json_object_get(sum[m], "phases"), dl_fid_phases[ph]);

			if (!sum[m] || !json_integer_value(json_object_get(sum[m], "boards")))
				continue;
			for (unsigned q = 0; q < 3; q++)
				put_ratio(f, json_array_get(x, q));
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<ul>\n", f);
	for (unsigned m = 0; m < NKINDS; m++) {
		if (sum[m] && json_integer_value(json_object_get(sum[m], "boards")))
			fprintf(f, "<li>%s twins: <strong>%lld of %lld boards</strong> agree on every "
				"dependency-ordered pair.</li>\n", kinds[m],
				(long long)json_integer_value(json_object_get(sum[m], "agree")),
				(long long)json_integer_value(json_object_get(sum[m], "boards")));
		json_decref(sum[m]);
	}
	fputs("</ul>\n", f);
}

/* Up to DL_FID_PAIRS pairs per kernel run the twin ordered otherwise. */
static void put_disagreeing(FILE *f, const json_t *k)
{
	json_t *run, *p;
	size_t i, j;

	json_array_foreach(json_object_get(k, "runs_compared"), i, run)
		json_array_foreach(json_object_get(run, "disagreeing"), j, p) {
			fprintf(f, "<br>run %lld, ", (long long)json_integer_value(json_object_get(run, "kernel_run")));
			dl_html_put(f, json_string_value(json_object_get(p, "op")));
			fputs(": twin ran <code>", f);
			dl_html_put(f, json_string_value(json_object_get(p, "first_in_twin")));
			fputs("</code> first, the kernel <code>", f);
			dl_html_put(f, json_string_value(json_object_get(p, "first_in_kernel")));
			fputs("</code>", f);
		}
}

static void write_boards(FILE *f, const json_t *sorted)
{
	json_t *g;
	size_t i;

	fputs("<h2 id=\"boards\">Per board</h2>\n<p>Boards that disagree on a dependency-ordered pair "
	      "first.  Pairs: two devices whose callbacks in one phase are ordered with a gap over 1 ms "
	      "in both runs; a dependency orders some (a link or the parent), timing alone the rest.  "
	      "Phase columns: the board's median ratio twin / kernel.</p>\n"
	      "<table>\n<tr><th>board</th><th>scenario</th><th>twin</th><th>kernel runs</th>"
	      "<th>dependency pairs agreeing</th><th>timing-only pairs agreeing</th>", f);
	for (unsigned ph = 0; ph < dl_fid_nphases; ph++)
		fprintf(f, "<th>%s</th>", dl_fid_phases[ph]);
	fputs("</tr>\n", f);
	json_array_foreach(sorted, i, g) {
		for (unsigned m = 0; m < NKINDS; m++) {
			json_t *k = kind_of(g, m);
			json_int_t tp, ta;
			bool agree;

			if (!k)
				continue;
			agree = json_is_true(json_object_get(k, "every_dependency_agrees"));
			tp = json_integer_value(json_object_get(k, "timing_pairs"));
			ta = json_integer_value(json_object_get(k, "timing_agree"));
			fprintf(f, "<tr class=\"%s\"><td>", agree ? "agree" : "disagree");
			dl_html_put(f, json_string_value(json_object_get(g, "label")));
			fputs("</td><td>", f);
			dl_html_put(f, json_string_value(json_object_get(g, "scenario")));
			fprintf(f, "</td><td>%s</td><td class=\"n\">%lld</td><td class=\"n\">", kinds[m],
				(long long)json_integer_value(json_object_get(k, "runs")));
			if (json_is_true(json_object_get(k, "dependencies_known")))
				fprintf(f, "%lld / %lld",
					(long long)json_integer_value(json_object_get(k, "dependency_agree")),
					(long long)json_integer_value(json_object_get(k, "dependency_pairs")));
			else
				fputs("unknown", f);
			if (!agree)
				put_disagreeing(f, k);
			fprintf(f, "</td><td class=\"n\">%.1f%% of %lld</td>",
				tp ? 100.0 * (double)ta / (double)tp : 100.0, (long long)tp);
			for (unsigned ph = 0; ph < dl_fid_nphases; ph++)
				put_ratio(f, json_object_get(json_object_get(k, "phase_ratio_median"),
							     dl_fid_phases[ph]));
			fputs("</tr>\n", f);
		}
	}
	fputs("</table>\n", f);
}

static int write_page(struct report *r, const json_t *boards, const char *dbpath)
{
	char path[PATH_MAX];
	FILE *f = rp_open_out(r, "fidelity.html", path, sizeof(path));
	json_t *sorted = disagreeing_first(boards);
	size_t ndis = 0, i;
	json_t *g;

	if (!f) {
		json_decref(sorted);
		return rp_err(r, -EIO, "%s/fidelity.html: %s", r->outdir, strerror(errno));
	}
	json_array_foreach(boards, i, g)
		ndis += disagrees(g);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>dlsim report: the kernel against its twins</title>\n<style>\n", f);
	fwrite(rp_asset_page_css, 1, rp_asset_page_css_len, f);
	fputs("tr.disagree td { background: #ffe4e4; }\n</style>\n</head>\n<body>\n"
	      "<h1>The kernel against its DES twins, per board</h1>\n<p>Database: <code>", f);
	dl_html_put(f, dbpath);
	fprintf(f, "</code>; %zu boards, %zu of them disagreeing on a dependency-ordered pair.  "
		"<a href=\"index.html\">Back to the report</a>.</p>\n"
		"<nav><a href=\"#phases\">per phase</a><a href=\"#plot\">plot</a>"
		"<a href=\"#boards\">per board</a></nav>\n", json_array_size(boards), ndis);
	write_summary(f, boards);
	fputs("<h2 id=\"plot\">Spread of the ratios</h2>\n", f);
	if (rp_plotted(r, P_FIDELITY))
		fputs("<figure><img src=\"fidelity.png\" alt=\"twin / kernel per phase\"><figcaption>Each "
		      "board's median ratio twin / kernel per phase (points), with p10 to p90 and the "
		      "median over the boards (<a href=\"fidelity.svg\">SVG</a>, "
		      "<a href=\"fidelity.tsv\">data</a>)</figcaption></figure>\n", f);
	else
		fputs("<p>No plot (no phase ratios, or gnuplot failed: see index.html).</p>\n", f);
	write_boards(f, sorted);
	fputs("</body>\n</html>\n", f);
	json_decref(sorted);
	return rp_close_out(r, f, path);
}

/* Whether the database has a sweep table (a database of `dlsim sweep`). */
static bool has_sweep(struct report *r)
{
	sqlite3_stmt *st;
	bool found = false;

	if (sqlite3_prepare_v2(r->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sweep'",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int rp_write_fidelity(struct report *r, const char *dbpath)
{
	char err[1024];
	json_t *boards;
	sqlite3 *db;
	size_t rows;
	int ret;

	r->fidelity_boards = 0;
	if (!has_sweep(r))
		return 0;
	/* a connection of its own: each pair attaches its two runs' shards, which would
	 * replace what the report's connection has attached (every shard) */
	if (dl_log_open_reader(dbpath, &db, err, sizeof(err)))
		return rp_err(r, -EINVAL, "%s", err);
	boards = dl_sweep_fidelity_boards(db, err, sizeof(err));
	sqlite3_close(db);
	if (!boards)
		return rp_err(r, -EINVAL, "the sweep's kernel runs against their twins: %s", err);
	if (!json_array_size(boards)) {
		json_decref(boards);
		return 0;
	}
	ret = write_data(r, boards, &rows);
	if (!ret && rows)
		rp_plot(r, P_FIDELITY, rows);
	if (!ret)
		ret = write_page(r, boards, dbpath);
	if (!ret)
		r->fidelity_boards = json_array_size(boards);
	json_decref(boards);
	return ret;
}
