/*
 * plots.c - the data files of `dlsim report` and their plots: one
 * tab-separated NAME.tsv per plot, then gnuplot on report/NAME.gp for PNG
 * and SVG.  Names go into the data files only, through put_field(); the
 * gnuplot command line holds fixed file names and numbers, nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report/report_int.h"
#include "sim/order/order.h"

#ifndef DLSIM_SOURCE_DIR
#define DLSIM_SOURCE_DIR "."
#endif

static const char *const plot_name[P_COUNT] = {
	"makespan", "orders", "scaling", "util", "probe", "gantt", "fidelity",
};

/* Per device of the chosen run: probe_start and probe_defer events. */
static int read_probes(struct report *r, struct deferred **out, size_t *nout)
{
	sqlite3_stmt *st;
	struct deferred *v = NULL;
	size_t n = 0, cap = 0;
	int rc, ret = 0;

	*out = NULL;
	*nout = 0;
	if (!r->sel)
		return 0;
	if (sqlite3_prepare_v2(r->db, "SELECT dev_id, sum(kind = 'probe_start'), sum(kind = 'probe_defer') "
			       "FROM events WHERE run_id = ?1 AND kind IN ('probe_start', 'probe_defer') "
			       "AND dev_id IS NOT NULL GROUP BY dev_id", -1, &st, NULL) != SQLITE_OK)
		return rp_err(r, -EINVAL, "cannot read the probe events: %s", sqlite3_errmsg(r->db));
	sqlite3_bind_int64(st, 1, r->sel->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			struct deferred *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				ret = rp_err(r, -ENOMEM, "out of memory");
				break;
			}
			v = nv;
			cap = ncap;
		}
		v[n].dev_id = sqlite3_column_int64(st, 0);
		v[n].starts = sqlite3_column_int64(st, 1);
		v[n].defers = sqlite3_column_int64(st, 2);
		n++;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = rp_err(r, -EINVAL, "cannot read the probe events: %s", sqlite3_errmsg(r->db));
	sqlite3_finalize(st);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*nout = n;
	return 0;
}

static bool same_group(const struct run_row *a, const struct run_row *b)
{
	return rp_same_scenario(a, b) && !strcmp(a->order, b->order) && !strcmp(a->mode, b->mode) &&
	       !strcmp(a->kernel, b->kernel) && a->devices == b->devices && a->workers == b->workers;
}

/* Runs that differ only in their seed, grouped; a group sorts by its newest run. */
static int build_groups(struct report *r)
{
	r->groups = calloc(r->nruns ? r->nruns : 1, sizeof(*r->groups));
	if (!r->groups)
		return rp_err(r, -ENOMEM, "out of memory");
	for (size_t i = 0; i < r->nruns; i++) {
		const struct run_row *row = &r->runs[i];
		struct group *g = NULL;
		size_t k;

		for (k = 0; k < r->ngroups; k++)
			if (same_group(r->groups[k].newest, row))
				break;
		if (k == r->ngroups)
			r->ngroups++;
		g = &r->groups[k];
		g->newest = row;
		rp_acc_add(&g->mk, row->makespan);
		rp_acc_add(&g->lb, row->lower_bound);
		rp_acc_add(&g->probe, row->probe);
		rp_acc_add(&g->suspend, row->suspend);
		rp_acc_add(&g->resume, row->resume);
	}
	/* newest last: insertion sort by the newest run_id (runs are sorted) */
	for (size_t i = 1; i < r->ngroups; i++)
		for (size_t j = i; j > 0 && r->groups[j - 1].newest->id > r->groups[j].newest->id; j--) {
			struct group tmp = r->groups[j];

			r->groups[j] = r->groups[j - 1];
			r->groups[j - 1] = tmp;
		}
	for (size_t i = 0; i < r->ngroups; i++)
		r->groups_multi += r->groups[i].mk.n >= 2;
	return 0;
}

/* ---- data files ------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at S, 0 if S does not start one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2)
		n = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3;
	else if ((s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/*
 * Writes S as one data-file field: control characters (tab, newline, ...)
 * become spaces, '"' becomes '\'' (gnuplot would start a quoted field),
 * invalid UTF-8 becomes '?', and it is cut to LABEL_MAX bytes on a
 * character boundary.  An empty field would shift the columns: "-".
 */
static void put_field(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0;

	if (!*p) {
		fputc('-', f);
		return;
	}
	while (*p) {
		size_t n = utf8_len(p);

		if (used + (n ? n : 1) > LABEL_MAX) {
			fputs("...", f);
			return;
		}
		if (!n) {
			fputc('?', f);
			n = 1;
		} else if (n == 1 && (*p < 0x20 || *p == 0x7f)) {
			fputc(' ', f);
		} else if (*p == '"') {
			fputc('\'', f);
		} else if (*p == '>' && used >= 2 && p[-1] == ']' && p[-2] == ']') {
			fputs(" >", f);	/* gnuplot's SVG escapes '<' and '&', not the "]]>" XML forbids */
			used++;
		} else {
			fwrite(p, 1, n, f);
		}
		used += n;
		p += n;
	}
}

static void put_ms(FILE *f, double ns)
{
	if (isnan(ns))
		fputs("\t-", f);
	else
		fprintf(f, "\t%.6f", ns / NS_PER_MS);
}

/* makespan.tsv: newest DL_REPORT_PLOT_RUNS runs.  Return: rows with data. */
static int write_makespan_data(struct report *r, size_t *rows)
{
	char path[PATH_MAX];
	size_t first = r->nruns > DL_REPORT_PLOT_RUNS ? r->nruns - DL_REPORT_PLOT_RUNS : 0;
	FILE *f = rp_open_out(r, "makespan.tsv", path, sizeof(path));

	*rows = 0;
	if (!f)
		return rp_err(r, -EIO, "%s/makespan.tsv: %s", r->outdir, strerror(errno));
	fputs("# run_id\tlabel\tmakespan_ms\tlower_bound_ms\tprobe_ms\tsuspend_ms\tresume_ms\n", f);
	for (size_t i = first; i < r->nruns; i++) {
		const struct run_row *row = &r->runs[i];

		fprintf(f, "%lld\t#%lld ", (long long)row->id, (long long)row->id);
		put_field(f, row->order);
		put_ms(f, row->makespan);
		put_ms(f, row->lower_bound);
		put_ms(f, row->probe);
		put_ms(f, row->suspend);
		put_ms(f, row->resume);
		fputc('\n', f);
		if (!isnan(row->makespan) || !isnan(row->lower_bound) || !isnan(row->probe) ||
		    !isnan(row->suspend) || !isnan(row->resume))
			(*rows)++;
	}
	return rp_close_out(r, f, path);
}

static size_t first_plotted_group(const struct report *r)
{
	return r->ngroups > DL_REPORT_PLOT_GROUPS ? r->ngroups - DL_REPORT_PLOT_GROUPS : 0;
}

/* orders.tsv: per scenario/order group, mean and sd over its seeds. */
static int write_orders_data(struct report *r)
{
	char path[PATH_MAX], label[2 * LABEL_MAX];
	FILE *f = rp_open_out(r, "orders.tsv", path, sizeof(path));

	if (!f)
		return rp_err(r, -EIO, "%s/orders.tsv: %s", r->outdir, strerror(errno));
	fputs("# group\tlabel\truns\tmakespan_ms\tmakespan_sd_ms\tlower_bound_ms\tprobe_ms\tprobe_sd_ms"
	      "\tsuspend_ms\tsuspend_sd_ms\tresume_ms\tresume_sd_ms\n", f);
	for (size_t i = first_plotted_group(r); i < r->ngroups; i++) {
		const struct group *g = &r->groups[i];

		snprintf(label, sizeof(label), "%.20s %.20s n=%g", g->newest->scenario, g->newest->order, g->mk.n);
		fprintf(f, "%zu\t", i);
		put_field(f, label);
		fprintf(f, "\t%g", g->mk.n);
		put_ms(f, rp_acc_mean(&g->mk));
		put_ms(f, rp_acc_sd(&g->mk));
		put_ms(f, rp_acc_mean(&g->lb));
		put_ms(f, rp_acc_mean(&g->probe));
		put_ms(f, rp_acc_sd(&g->probe));
		put_ms(f, rp_acc_mean(&g->suspend));
		put_ms(f, rp_acc_sd(&g->suspend));
		put_ms(f, rp_acc_mean(&g->resume));
		put_ms(f, rp_acc_sd(&g->resume));
		fputc('\n', f);
	}
	return rp_close_out(r, f, path);
}

static int cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * scaling.tsv: one block per order (separated by two blank lines, gnuplot's
 * `index`), one line per size: mean simulated makespan and mean wall time
 * over the runs of that order and size.  Written only when the runs have
 * at least two sizes (r->scaling_sizes).
 */
static int write_scaling_data(struct report *r)
{
	char path[PATH_MAX];
	int64_t *sizes;
	size_t nsizes = 0;
	FILE *f;
	int ret;

	sizes = malloc((r->nruns ? r->nruns : 1) * sizeof(*sizes));
	if (!sizes)
		return rp_err(r, -ENOMEM, "out of memory");
	for (size_t i = 0; i < r->nruns; i++)
		sizes[nsizes++] = r->runs[i].devices;
	qsort(sizes, nsizes, sizeof(*sizes), cmp_int64);
	r->scaling_sizes = 0;
	for (size_t i = 0; i < nsizes; i++)
		if (sizes[i] > 0 && (i == 0 || sizes[i] != sizes[i - 1]))
			sizes[r->scaling_sizes++] = sizes[i];
	if (r->scaling_sizes < 2) {
		free(sizes);
		return 0;
	}
	f = rp_open_out(r, "scaling.tsv", path, sizeof(path));
	if (!f) {
		free(sizes);
		return rp_err(r, -EIO, "%s/scaling.tsv: %s", r->outdir, strerror(errno));
	}
	fputs("# blocks: one per order; header line 'order NAME'; then devices, makespan_ms, wall_ms, runs\n", f);
	for (size_t i = 0; i < r->nruns; i++) {
		const struct run_row *o = &r->runs[i];
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(r->runs[j].order, o->order);
		if (seen)
			continue;
		if (r->scaling_orders++)
			fputs("\n\n", f);
		fputs("order\t", f);
		put_field(f, o->order);
		fputs("\tmakespan_ms\twall_ms\truns\n", f);
		for (size_t s = 0; s < r->scaling_sizes; s++) {
			struct stat_acc mk = { 0 }, wall = { 0 };

			for (size_t j = i; j < r->nruns; j++)
				if (r->runs[j].devices == sizes[s] && !strcmp(r->runs[j].order, o->order)) {
					rp_acc_add(&mk, r->runs[j].makespan);
					rp_acc_add(&wall, r->runs[j].wall);
				}
			if (!mk.n && !wall.n)
				continue;
			fprintf(f, "%lld", (long long)sizes[s]);
			put_ms(f, rp_acc_mean(&mk));
			put_ms(f, rp_acc_mean(&wall));
			fprintf(f, "\t%g\n", mk.n > wall.n ? mk.n : wall.n);
		}
	}
	free(sizes);
	ret = rp_close_out(r, f, path);
	return ret;
}

/* ---- utilization ------------------------------------------------------ */

struct delta { int64_t t; int32_t busy, blocked, ready; };

static int cmp_delta(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

/* Deltas between two looks at the Ctrl-C flag while they are sorted. */
#define SORT_STOP_EVERY (1u << 20)

/*
 * The deltas by time, stably: an LSD radix sort on 16-bit digits of the
 * time (4 passes), polling Ctrl-C every SORT_STOP_EVERY deltas (a qsort of
 * the millions a 200k-device run gives held a report 5 s after Ctrl-C);
 * qsort when the scratch array cannot be had.  -EINTR once stopped.
 */
static int sort_deltas(const struct report *r, struct delta *d, size_t nd)
{
	struct delta *tmp = nd > 1 ? malloc(nd * sizeof(*tmp)) : NULL, *from = d, *to = tmp;
	size_t *count = nd > 1 ? malloc(65537 * sizeof(*count)) : NULL;

	if (nd > 1 && (!tmp || !count)) {
		free(tmp);
		free(count);
		qsort(d, nd, sizeof(*d), cmp_delta);
		return 0;
	}
	for (unsigned shift = 0; nd > 1 && shift < 64; shift += 16) {
		memset(count, 0, 65537 * sizeof(*count));
		for (size_t i = 0; i < nd; i++)
			count[((((uint64_t)from[i].t ^ (1ull << 63)) >> shift) & 0xffff) + 1]++;
		for (size_t k = 1; k <= 65536; k++)
			count[k] += count[k - 1];
		for (size_t i = 0; i < nd; i++) {
			if (i % SORT_STOP_EVERY == 0 && rp_stopped(r)) {
				free(tmp);
				free(count);
				return -EINTR;
			}
			to[count[(((uint64_t)from[i].t ^ (1ull << 63)) >> shift) & 0xffff]++] = from[i];
		}
		from = to;
		to = to == tmp ? d : tmp;
	}
	/* four passes: the sorted deltas are back in d */
	free(tmp);
	free(count);
	return 0;
}

/* Does the chosen run's order block workers on dependencies (kernel-async)? */
static bool order_blocks_workers(const char *order)
{
	enum dl_order o;

	return dl_order_parse(order, &o) == 0 && dl_order_policy(o)->queue_up_front;
}

static void util_point(FILE *f, int64_t t, double busy, double blocked, double ready, int64_t k)
{
	fprintf(f, "%.6f\t%.4f\t%.4f\t%.4f\t%lld\n", (double)t / NS_PER_MS, busy, blocked, ready, (long long)k);
}

/*
 * The run's logged work_block / work_wake events as +1 / -1 deltas of the
 * blocked count, appended to *d (grown as needed); -1 on error.
 */
static int logged_blocks(struct report *r, struct delta **d, size_t *nd, size_t *cap)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->db, "SELECT t_ns, kind = 'work_block' FROM events WHERE run_id = ?"
			       " AND kind IN ('work_block', 'work_wake')", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, r->sel->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*nd == *cap) {
			size_t nc = *cap * 2 + 64;
			struct delta *nv = realloc(*d, nc * sizeof(*nv));

			if (!nv) {
				sqlite3_finalize(st);
				return -1;
			}
			*d = nv;
			*cap = nc;
		}
		(*d)[(*nd)++] = (struct delta){ .t = sqlite3_column_int64(st, 0),
						.blocked = sqlite3_column_int(st, 1) ? 1 : -1 };
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * util.tsv: callbacks in progress ("busy", the main thread's included; a
 * callback sleeping in its driver holds no CPU, so busy may exceed K),
 * workers blocked on a dependency, and devices ready but not started, as a
 * step function of time.  Busy comes straight from the start/end pairs,
 * blocked from the work_block / work_wake events the engines log.  Logs
 * without them (older dlsim) get it derived: under kernel-async every async
 * device's work item is queued up front and sleeps from its phase's start
 * until its last dependency ends (the other orders never block a worker).
 * Past DL_REPORT_UTIL_POINTS change points the function is averaged over
 * equal time buckets.
 */
static int write_util_data(struct report *r)
{
	const struct tl_run *t = &r->tl;
	bool blocks = order_blocks_workers(r->sel->order);
	struct delta *d;
	int64_t *inst_start;
	size_t nd = 0, cap, npieces = 0;
	char path[PATH_MAX];
	double area_busy = 0, area_blocked = 0, span;
	int64_t cur_b = 0, cur_k = 0, cur_r = 0, tmin, tmax;
	FILE *f;

	if (!t->nsegs)
		return 0;
	cap = 6 * t->nsegs;
	d = malloc(cap * sizeof(*d));
	inst_start = malloc((t->ninst ? t->ninst : 1) * sizeof(*inst_start));
	if (!d || !inst_start || logged_blocks(r, &d, &nd, &cap)) {
		free(d);
		free(inst_start);
		return rp_err(r, -ENOMEM, "cannot read the work_block events: %s",
			      sqlite3_errmsg(r->db));
	}
	r->util_blocked_logged = nd > 0;
	if (nd)
		blocks = false;         /* logged: nothing to derive */
	r->util_blocked_derived = blocks;
	if (cap < nd + 6 * t->nsegs) {
		struct delta *nv = realloc(d, (nd + 6 * t->nsegs) * sizeof(*nv));

		if (!nv) {
			free(d);
			free(inst_start);
			return rp_err(r, -ENOMEM, "out of memory");
		}
		d = nv;
	}
	for (uint32_t i = 0; i < t->ninst; i++)
		inst_start[i] = INT64_MAX;
	for (size_t i = 0; i < t->nsegs; i++)
		if (t->segs[i].t0 < inst_start[t->segs[i].inst])
			inst_start[t->segs[i].inst] = t->segs[i].t0;
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tl_seg *s = &t->segs[i];
		int64_t st = inst_start[s->inst], ready = s->ready < st ? st : s->ready;

		if (tl_stop_due(r->stop, i)) {
			free(inst_start);
			free(d);
			return rp_err(r, -EINTR, "interrupted");
		}

		if (ready > s->t0)
			ready = s->t0;
		d[nd++] = (struct delta){ .t = s->t0, .busy = 1 };
		d[nd++] = (struct delta){ .t = s->t1, .busy = -1 };
		if (blocks && t->devs[s->row].async && (s->op == TL_SUSPEND || s->op == TL_RESUME) &&
		    ready > st) {
			d[nd++] = (struct delta){ .t = st, .blocked = 1 };
			d[nd++] = (struct delta){ .t = ready, .blocked = -1 };
		}
		if (s->t0 > ready) {
			d[nd++] = (struct delta){ .t = ready, .ready = 1 };
			d[nd++] = (struct delta){ .t = s->t0, .ready = -1 };
		}
	}
	free(inst_start);
	if (sort_deltas(r, d, nd)) {
		free(d);
		return rp_err(r, -EINTR, "interrupted");
	}
	tmin = d[0].t;
	tmax = d[nd - 1].t;
	for (size_t i = 0; i < nd; i++)
		npieces += i + 1 == nd || d[i + 1].t != d[i].t;
	f = rp_open_out(r, "util.tsv", path, sizeof(path));
	if (!f) {
		free(d);
		return rp_err(r, -EIO, "%s/util.tsv: %s", r->outdir, strerror(errno));
	}
	fprintf(f, "# time_ms\tbusy\tblocked\tready\tK (run %lld, %s)\n", (long long)r->sel->id,
		npieces <= DL_REPORT_UTIL_POINTS ? "exact steps" : "bucket averages");
	span = tmax > tmin ? (double)(tmax - tmin) : 1;
	if (npieces <= DL_REPORT_UTIL_POINTS) {
		for (size_t i = 0; i < nd && !tl_stop_due(r->stop, i); i++) {
			cur_b += d[i].busy;
			cur_k += d[i].blocked;
			cur_r += d[i].ready;
			if (i + 1 < nd && d[i + 1].t == d[i].t)
				continue;
			if (i + 1 < nd) {
				area_busy += (double)cur_b * (double)(d[i + 1].t - d[i].t);
				area_blocked += (double)cur_k * (double)(d[i + 1].t - d[i].t);
			}
			util_point(f, d[i].t, (double)cur_b, (double)cur_k, (double)cur_r, r->sel->workers);
			r->util_points++;
		}
	} else {
		const size_t nb = DL_REPORT_UTIL_POINTS / 2;
		double width = span / (double)nb, acc[3] = { 0, 0, 0 };
		size_t b = 0;

		for (size_t i = 0; i < nd && !tl_stop_due(r->stop, i); i++) {
			double x0, x1;

			cur_b += d[i].busy;
			cur_k += d[i].blocked;
			cur_r += d[i].ready;
			if (i + 1 < nd && d[i + 1].t == d[i].t)
				continue;
			if (i + 1 == nd)
				break;
			area_busy += (double)cur_b * (double)(d[i + 1].t - d[i].t);
			area_blocked += (double)cur_k * (double)(d[i + 1].t - d[i].t);
			/* spread the piece [d[i].t, d[i+1].t) over the buckets it covers */
			x0 = (double)(d[i].t - tmin);
			x1 = (double)(d[i + 1].t - tmin);
			while (x0 < x1) {
				double edge = (double)(b + 1) * width, end = x1 < edge ? x1 : edge;

				acc[0] += (double)cur_b * (end - x0);
				acc[1] += (double)cur_k * (end - x0);
				acc[2] += (double)cur_r * (end - x0);
				x0 = end;
				if (x0 >= edge && b + 1 < nb) {
					util_point(f, tmin + (int64_t)((double)b * width), acc[0] / width,
						   acc[1] / width, acc[2] / width, r->sel->workers);
					r->util_points++;
					acc[0] = acc[1] = acc[2] = 0;
					b++;
				} else if (x0 >= edge) {
					break;
				}
			}
		}
		util_point(f, tmin + (int64_t)((double)b * width), acc[0] / width, acc[1] / width,
			   acc[2] / width, r->sel->workers);
		util_point(f, tmax, 0, 0, 0, r->sel->workers);
		r->util_points += 2;
	}
	r->util_busy = area_busy / span;
	r->util_blocked = area_blocked / span;
	free(d);
	return rp_close_out(r, f, path);
}

/* ---- probe attempts --------------------------------------------------- */

static int cmp_deferred(const void *a, const void *b)
{
	const struct deferred *x = a, *y = b;

	if (x->defers != y->defers)
		return x->defers < y->defers ? 1 : -1;
	return (x->dev_id > y->dev_id) - (x->dev_id < y->dev_id);
}

/*
 * probe.tsv: a histogram over the chosen run's devices of the number of
 * probe attempts (probe_start + probe_defer) and of defers, bins of equal
 * width (1 up to PROBE_BINS attempts).  Keeps the most deferred devices.
 */
static int write_probe_data(struct report *r)
{
	struct deferred *v;
	size_t n, nbins;
	int64_t maxv = 0, width;
	int64_t *att, *def;
	char path[PATH_MAX];
	FILE *f;
	int ret = read_probes(r, &v, &n);

	if (ret || !n) {
		free(v);
		return ret;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t a = v[i].starts + v[i].defers;

		if (a > maxv)
			maxv = a;
	}
	r->probe_devs = n;
	r->probe_max_attempts = maxv;
	width = maxv < PROBE_BINS ? 1 : (maxv + PROBE_BINS) / PROBE_BINS;
	nbins = (size_t)(maxv / width) + 1;
	r->probe_bins = nbins;
	att = calloc(nbins, sizeof(*att));
	def = calloc(nbins, sizeof(*def));
	f = att && def ? rp_open_out(r, "probe.tsv", path, sizeof(path)) : NULL;
	if (!f) {
		ret = att && def ? rp_err(r, -EIO, "%s/probe.tsv: %s", r->outdir, strerror(errno))
				 : rp_err(r, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		att[(v[i].starts + v[i].defers) / width]++;
		def[v[i].defers / width]++;
	}
	fprintf(f, "# bin\tlabel\tdevices_by_attempts\tdevices_by_defers (run %lld, %zu devices probed)\n",
		(long long)r->sel->id, n);
	for (size_t b = 0; b < nbins; b++) {
		if (width == 1)
			fprintf(f, "%zu\t%zu\t%lld\t%lld\n", b, b, (long long)att[b], (long long)def[b]);
		else
			fprintf(f, "%zu\t%lld-%lld\t%lld\t%lld\n", b, (long long)(b * width),
				(long long)((b + 1) * width - 1), (long long)att[b], (long long)def[b]);
	}
	ret = rp_close_out(r, f, path);
	qsort(v, n, sizeof(*v), cmp_deferred);
	for (r->ntop = 0; r->ntop < TOP_DEFERRED && r->ntop < n && v[r->ntop].defers > 0; r->ntop++)
		r->top[r->ntop] = v[r->ntop];
out:
	free(att);
	free(def);
	free(v);
	return ret;
}

/* ---- Gantt ------------------------------------------------------------ */

struct row_key { int64_t t0; uint32_t dev; };

static int cmp_row_key(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return (x->dev > y->dev) - (x->dev < y->dev);
}

/* Gantt rows by their first suspend/resume start (then dev_id), as sleepgraph draws them. */
static int sort_gantt_rows(struct report *r)
{
	const struct tl_run *t = &r->tl;
	struct row_key *k = malloc((r->gantt_rows ? r->gantt_rows : 1) * sizeof(*k));

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < t->ndevs; i++)
		if (r->gantt_row[i] != TL_NONE)
			k[r->gantt_row[i]] = (struct row_key){ .t0 = INT64_MAX, .dev = (uint32_t)i };
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct tl_seg *s = &t->segs[i];
		uint32_t row = r->gantt_row[s->row];

		if (row != TL_NONE && (s->op == TL_SUSPEND || s->op == TL_RESUME) && s->t0 < k[row].t0)
			k[row].t0 = s->t0;
	}
	qsort(k, r->gantt_rows, sizeof(*k), cmp_row_key);
	for (size_t i = 0; i < r->gantt_rows; i++)
		r->gantt_row[k[i].dev] = (uint32_t)i;
	free(k);
	return 0;
}

/*
 * gantt.tsv: one line per suspend or resume phase of the rows chosen by
 * tl_select_rows() (critical path first), sorted by start, the last
 * column 1 on the critical path.  Times count from the first suspend (or
 * resume) callback's start: after a long probe the run's own clock reads
 * 1.8e9 ms there.
 */
static int write_gantt_data(struct report *r)
{
	const struct tl_run *t = &r->tl;
	char path[PATH_MAX];
	int64_t base = INT64_MAX;
	FILE *f;

	for (size_t i = 0; i < t->nsegs; i++)
		if ((t->segs[i].op == TL_SUSPEND || t->segs[i].op == TL_RESUME) && t->segs[i].t0 < base)
			base = t->segs[i].t0;
	r->gantt_row = malloc((t->ndevs ? t->ndevs : 1) * sizeof(*r->gantt_row));
	if (!r->gantt_row)
		return rp_err(r, -ENOMEM, "out of memory");
	r->gantt_rows = tl_select_rows(t, DL_REPORT_GANTT_DEVICES, 1u << TL_SUSPEND | 1u << TL_RESUME,
				       r->gantt_row);
	if (sort_gantt_rows(r))
		return rp_err(r, -ENOMEM, "out of memory");
	f = rp_open_out(r, "gantt.tsv", path, sizeof(path));
	if (!f)
		return rp_err(r, -EIO, "%s/gantt.tsv: %s", r->outdir, strerror(errno));
	fputs("# row\tdevice\top\top_name\tphase\tstart_ms\tend_ms\tcritical\n", f);
	for (size_t i = 0; i < t->nsegs && !tl_stop_due(r->stop, i); i++) {
		const struct tl_seg *s = &t->segs[i];

		if ((s->op != TL_SUSPEND && s->op != TL_RESUME) || r->gantt_row[s->row] == TL_NONE)
			continue;
		fprintf(f, "%u\t", r->gantt_row[s->row]);
		put_field(f, t->devs[s->row].name);
		fprintf(f, "\t%d\t%s\t", s->op == TL_SUSPEND ? 1 : 2, s->op == TL_SUSPEND ? "suspend" : "resume");
		put_field(f, t->phases[s->phase]);
		put_ms(f, (double)(s->t0 - base));
		put_ms(f, (double)(s->t1 - base));
		fprintf(f, "\t%d\n", (s->flags & TL_SEG_CRIT) ? 1 : 0);
		r->gantt_segs++;
	}
	return rp_close_out(r, f, path);
}

/* ---- gnuplot ---------------------------------------------------------- */

static const char *template_dir(void)
{
	const char *d = getenv("DLSIM_REPORT_DIR");

	return d && *d ? d : DLSIM_SOURCE_DIR "/report";
}

/*
 * Runs `gnuplot -e "datafile='NAME.tsv'; outfile='NAME.FMT'; fmt='FMT';
 * nrows=N" TEMPLATE` inside outdir, output appended to gnuplot.log.  Every
 * word of the -e string is ours: no quoting problem whatever the paths are.
 */
static int run_gnuplot(struct report *r, const char *name, const char *fmt, size_t nrows)
{
	char tmpl[PATH_MAX], expr[256], log[PATH_MAX], out[PATH_MAX];
	pid_t pid;
	int status, fd;

	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/%s.gp", template_dir(), name) >= sizeof(tmpl) ||
	    (size_t)snprintf(log, sizeof(log), "%s/gnuplot.log", r->outdir) >= sizeof(log))
		return rp_err(r, -EIO, "%s: path too long", r->outdir);
	if (access(tmpl, R_OK) != 0)
		return rp_err(r, -ECHILD, "%s: gnuplot template missing", tmpl);
	snprintf(expr, sizeof(expr), "datafile='%s.tsv'; outfile='%s.%s'; fmt='%s'; nrows=%zu",
		 name, name, fmt, fmt, nrows);
	/* gnuplot opens its output as it finds it: make it a fresh file of ours first */
	if ((size_t)snprintf(out, sizeof(out), "%s/%s.%s", r->outdir, name, fmt) >= sizeof(out) ||
	    (fd = rp_create_file(out)) < 0)
		return rp_err(r, -EIO, "%s/%s.%s: %s", r->outdir, name, fmt, strerror(errno));
	close(fd);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return rp_err(r, -EIO, "%s: %s", log, strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fd);
		return rp_err(r, -ECHILD, "cannot start gnuplot: %s", strerror(errno));
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (chdir(r->outdir) == 0)
			execlp("gnuplot", "gnuplot", "-e", expr, tmpl, (char *)NULL);
		_exit(127);
	}
	close(fd);
	/* Ctrl-C: gnuplot is stopped too (a terminal signals it; a kill -INT of dlsim does not) */
	for (bool killed = false;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return rp_err(r, -ECHILD, "gnuplot: %s", strerror(errno));
		if (!killed && rp_stopped(r)) {
			kill(pid, SIGKILL);
			killed = true;
		}
		nanosleep(&ts, NULL);
	}
	if (rp_stopped(r))
		return rp_err(r, -EINTR, "interrupted");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return rp_err(r, -ECHILD, "gnuplot failed on %s (%s %d); see %s/gnuplot.log", tmpl,
			       WIFEXITED(status) ? "exit" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
			       r->final[0] ? r->final : r->outdir);   /* where it ends up */
	return 0;
}

/* Plots NAME in PNG and SVG; a failure is remembered (the page says so) and the next plots still run. */
static void plot(struct report *r, enum plot_id id, size_t nrows)
{
	int ret;

	if (r->data_only || rp_stopped(r))
		return;         /* the data files only (dl_report_opts.data_only), or Ctrl-C */
	ret = run_gnuplot(r, plot_name[id], "png", nrows);

	if (!ret)
		ret = run_gnuplot(r, plot_name[id], "svg", nrows);
	if (!ret) {
		r->plotted |= 1u << id;
	} else if (!r->plot_ret) {
		r->plot_ret = ret;
		snprintf(r->plot_err, sizeof(r->plot_err), "%s", r->err);
	}
}

void rp_plot(struct report *r, enum plot_id id, size_t nrows)
{
	plot(r, id, nrows);
}

void rp_put_field(FILE *f, const char *s)
{
	put_field(f, s ? s : "");
}

bool rp_plotted(const struct report *r, enum plot_id id)
{
	return r->plotted & (1u << id);
}

/* Every data file, then its plot when it has something to show. */
int rp_write_plots(struct report *r)
{
	char log[PATH_MAX];
	size_t rows;
	int ret = 0, fd;

	/* this report's gnuplot.log starts empty (and is a file of ours, not a link) */
	if (!r->data_only) {
		if ((size_t)snprintf(log, sizeof(log), "%s/gnuplot.log", r->outdir) >= sizeof(log) ||
		    (fd = rp_create_file(log)) < 0)
			return rp_err(r, -EIO, "%s/gnuplot.log: %s", r->outdir, strerror(errno));
		close(fd);
	}
	ret = write_makespan_data(r, &rows);

	if (!ret && rows)
		plot(r, P_MAKESPAN, rows);
	if (!ret)
		ret = build_groups(r);
	if (!ret && r->groups_multi) {
		ret = write_orders_data(r);
		if (!ret)
			plot(r, P_ORDERS, r->ngroups - first_plotted_group(r));
	}
	if (!ret)
		ret = write_scaling_data(r);
	if (!ret && r->scaling_sizes >= 2)
		plot(r, P_SCALING, r->scaling_orders);
	if (ret || !r->have_tl)
		return ret;
	/* each step takes a second or more at a million devices: Ctrl-C is heard between them */
	ret = write_util_data(r);
	if (!ret && r->util_points)
		plot(r, P_UTIL, r->util_points);
	if (!ret && !rp_stopped(r))
		ret = write_probe_data(r);
	if (!ret && r->probe_devs)
		plot(r, P_PROBE, r->probe_bins);
	if (!ret && !rp_stopped(r))
		ret = write_gantt_data(r);
	if (!ret && r->gantt_segs)
		plot(r, P_GANTT, r->gantt_rows);
	return ret;
}

