/*
 * cmd_import_log.c - `dlsim import-log FILE... [--into SCENARIO.json]`:
 * real callback timings in (sim/measure/), a scenario out; `--replay`
 * prints the replay check instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_opts.h"
#include "sim/measure/log_import.h"
#include "sim/measure/replay.h"

#define REPLAY_TOLERANCE 0.10	/* the "within 10%" */
#define MAX_HANGS_SHOWN 20

static void import_usage(FILE *f)
{
	fprintf(f, "usage: dlsim import-log FILE... [--into SCENARIO.json] [--replay [--order O] "
		   "[--workers K]] [--with-printing] [--name NAME]\n\n"
		   "Read real kernel logs (FILE \"-\": stdin; read a line at a time, so a log of any\n"
		   "size) and write a scenario (JSON, stdout): devices named as in\n"
		   "the log with the driver it names (\"x-driver\": the report's bar labels),\n"
		   "parents from \"parent:\", per-device per-phase callback times (several\n"
		   "cycles: the empirical distribution), the async flag (a callback that ran off the\n"
		   "main PM thread), the dpm order the log shows (the order of \"devices\"), failed\n"
		   "callbacks (x-log.failed_callbacks) and the main thread's median gap between\n"
		   "callbacks (x-log.main_gap_ns: mostly the console printing of initcall_debug,\n"
		   "which a system without it does not pay).  Formats: %s; also Ubuntu's per-device\n"
		   "\"PM: suspend of drv:X dev:Y complete after N msecs\".  Lines may carry the\n"
		   "prefixes of kern.log/syslog, journalctl -k, dmesg -T, dmesg -x and \"<6>\"\n"
		   "levels; journalctl's default and dmesg -T keep only a wall clock to the second:\n"
		   "such lines are timed by their \"after N usecs\" only, and said to be untimed.\n\n"
		   "  --into S.json   overlay the measured latencies and async flags on S's devices\n"
		   "                  by name (a device-tree path also matches \"UNIT.NAME\", as the\n"
		   "                  kernel names platform devices) and write S; the names that did\n"
		   "                  not match on either side go to stderr\n"
		   "  --replay        instead of the scenario, replay each cycle that printed phase\n"
		   "                  totals under the order the log shows (sync when every callback\n"
		   "                  ran on the main thread, else kernel-async) and print each total\n"
		   "                  beside the prediction, with the reason where they differ by\n"
		   "                  more than 10%%\n"
		   "  --order O       the order to replay under; --workers K its CPUs\n"
		   "  --with-printing add the phase's median main-thread gap to every callback, so\n"
		   "                  that 'dlsim run' reproduces the logged run, printing included\n"
		   "  --name NAME     the scenario's name (default: the first file's base name)\n\n"
		   "Several files of one run (its dmesg and its ftrace) are merged: a cycle that\n"
		   "overlaps in time a cycle of an earlier file is that cycle.\n\n"
		   "Lines in no known format are skipped and counted (stderr); contradictions\n"
		   "(a return without its call, time going backwards) are reported with their\n"
		   "line and skipped.  A call that never returned is listed with its line as a\n"
		   "hang (x-log.unreturned_calls), and a log that ends inside a cycle is said to\n"
		   "be truncated (x-log.cycles[].truncated).\n\n"
		   "exit status: 0 success, 2 bad usage, unreadable file or a file with no line in a\n"
		   "known format\n", dl_log_formats_help);
}

static char *base_name(const char *path)
{
	const char *p = strrchr(path, '/'), *dot;
	char *s;

	if (!strcmp(path, "-"))
		return strdup("stdin");

	p = p ? p + 1 : path;
	dot = strrchr(p, '.');
	s = strndup(p, dot && dot != p ? (size_t)(dot - p) : strlen(p));
	return s;
}

static void summary(const struct dl_logimport *li)
{
	static const char *const fmt_names[DL_LG_FORMAT_COUNT] = {
		"PM calling/returned", "3.x PM calling/call", "phase totals", "ftrace",
		"boot probe/initcall", "failure lines", "sleep markers",
	};
	uint32_t pm = 0;

	for (uint32_t i = 0; i < li->nsmp; i++)
		pm += li->smp[i].key != DL_LAT_PROBE;
	fprintf(stderr, "dlsim import-log: %llu lines, %llu skipped (no known format); recognised:",
		(unsigned long long)li->lines, (unsigned long long)li->skipped);
	for (unsigned f = 0; f < DL_LG_FORMAT_COUNT; f++)
		if (li->matched[f])
			fprintf(stderr, " %s %llu,", fmt_names[f], (unsigned long long)li->matched[f]);
	fprintf(stderr, "\ndlsim import-log: %u devices, %u PM callbacks in %u cycles, %u boot "
		"probes, %u failed callbacks, %u phase totals; main-thread gap %.1f us (median)\n",
		li->ndev, pm, li->ncyc, li->probes, li->failures, li->ntot,
		li->main_gap_ns >= 0 ? (double)li->main_gap_ns / 1e3 : 0.0);
	for (uint32_t c = 0; c < li->ncyc; c++)
		fprintf(stderr, "  cycle %u (%s:%u): %u callbacks, %u off the main thread (pid %d)%s%s\n",
			c, li->files[li->cyc[c].file], li->cyc[c].line, li->cyc[c].ncb,
			li->cyc[c].nasync, li->cyc[c].main_pid == DL_LG_NONE ? -1
									  : (int)li->cyc[c].main_pid,
			li->cyc[c].gap ? "; lines lost (garbage or skipped phases)" : "",
			li->cyc[c].truncated ? "; the log ends inside it (truncated, or the "
					       "machine hung)" : "");
	for (uint32_t i = 0; i < li->nhang && i < MAX_HANGS_SHOWN; i++)
		fprintf(stderr, "  %s:%u: '%s' was called in %s (cycle %u) and never returned: "
			"a hang?\n", li->files[li->hang[i].file], li->hang[i].line,
			dl_lg_label(li, li->hang[i].dev), dl_lat_key_name(li->hang[i].key),
			li->hang[i].cycle);
	if (li->nhang > MAX_HANGS_SHOWN)
		fprintf(stderr, "  ... %u unreturned calls in all (x-log.unreturned_calls)\n",
			li->nhang);
	if (li->merged)
		fprintf(stderr, "  %u cycles of later files overlap an earlier file's in time (one "
			"run's dmesg and ftrace): merged, each callback kept once\n", li->merged);
	if (li->orphans)
		fprintf(stderr, "  %u returns without their call skipped (their start is unknown)\n",
			li->orphans);
	if (li->untimed)
		fprintf(stderr, "  %llu recognised lines have no time stamp, only a wall clock to the "
			"second (journalctl -k's default, dmesg -T): their callbacks are timed by "
			"\"after N usecs\", but their start times are unknown, so the dpm order (parents "
			"only), the main-thread gaps and the implied links are not measured; use "
			"'journalctl -k -o short-monotonic' or plain dmesg\n",
			(unsigned long long)li->untimed);
	if (li->order_conflicts)
		fprintf(stderr, "  the phases' walks disagree on the dpm order %u times (async "
			"cycles or reorders); the order written breaks those constraints\n",
			li->order_conflicts);
	for (uint32_t i = 0; i < li->nnote; i++)
		fprintf(stderr, "  %s:%u: %s\n", li->files[li->note[i].file], li->note[i].line,
			li->note[i].msg);
	if (li->ncontradictions > li->nnote)
		fprintf(stderr, "  ... %u contradictions in all\n", li->ncontradictions);
}

static double pct(int64_t pred, int64_t logged)
{
	return logged > 0 ? 100.0 * ((double)pred - (double)logged) / (double)logged : 0;
}

/* Why a prediction misses the logged total. */
static void why(const struct dl_logimport *li, const struct dl_replay *rp,
		const struct dl_replay_row *row, char *buf, size_t len)
{
	double miss = pct(row->replay_ns, row->logged_ns) / 100;
	double dmiss = pct(row->replay_default_ns, row->logged_ns) / 100;
	uint32_t k = rp->workers ? rp->workers : 1;
	int64_t gap = li->gap_ns[row->last] >= 0 ? li->gap_ns[row->last] : li->main_gap_ns;
	bool items = dl_order_uses_items(dl_order_policy(rp->order));   /* sync: none */

	if (miss <= REPLAY_TOLERANCE && miss >= -REPLAY_TOLERANCE) {
		if (dmiss > REPLAY_TOLERANCE || dmiss < -REPLAY_TOLERANCE)
			snprintf(buf, len, "ok with the log's %.0f us gap per callback (console "
				 "printing of initcall_debug); without it %+.1f%%", (double)gap / 1e3,
				 100 * dmiss);
		else
			snprintf(buf, len, "ok");
		return;
	}
	if (li->cyc[rp->cycle].gap && row->ncb == 0)
		snprintf(buf, len, "missing phase: its lines were lost (garbage in the log)");
	else if (row->logged_ns < 1000000)
		snprintf(buf, len, "a phase under 1 ms: the engine's fixed per-device costs (walk, "
			 "queue, wake) over all %u devices decide it, not its %u callbacks (%.3f ms)",
			 li->ndev, row->ncb, (double)row->cb_sum_ns / 1e6);
	else if (li->cyc[rp->cycle].gap && row->first <= DL_LAT_RESUME &&
		 row->last >= DL_LAT_RESUME_NOIRQ)
		snprintf(buf, len, "lines lost in this cycle: the phase's callbacks are incomplete");
	else if (row->first == DL_LAT_PREPARE && row->ncb == 0 && !items)
		snprintf(buf, len, "missing phase: the log does not time prepare callbacks, and the "
			 "replay charges the printing gap to all %u devices' walk", li->ndev);
	else if (items && row->cb_sum_ns / k > row->logged_ns)
		snprintf(buf, len, "the cost model: a callback holds a CPU for all its time, so %.1f "
			 "ms of callbacks need %.1f ms on %u CPUs; in the log they overlapped more "
			 "(they sleep, e.g. PCI power-state delays)", (double)row->cb_sum_ns / 1e6,
			 (double)row->cb_sum_ns / k / 1e6, k);
	else if (items && miss < 0)
		snprintf(buf, len, "the cost model: in the log callbacks waited on dependencies it "
			 "does not show (no links in a log, only parents) or for the console");
	else if (items)
		snprintf(buf, len, "the cost model: %s on %u CPUs with parent/child waits only "
			 "(longest callback %.3f ms, sum %.3f ms)", dl_order_name(rp->order), k,
			 (double)row->cb_max_ns / 1e6, (double)row->cb_sum_ns / 1e6);
	else
		snprintf(buf, len, "the cost model: one median gap (%.0f us) per callback where the "
			 "log's gaps vary", (double)gap / 1e3);
}

static int print_replays(const struct dl_logimport *li, int order, uint32_t workers)
{
	struct dl_replay *rp = malloc(sizeof(*rp));
	struct dl_error err;
	uint32_t shown = 0, ok = 0, rows = 0;

	if (!rp)
		return DL_EXIT_USAGE;
	for (uint32_t c = 0; c < li->ncyc; c++) {
		bool items;
		int ret;

		if (!li->cyc[c].ncb) {
			/* the engine would replay nothing in no time: -100% says nothing */
			printf("%scycle %u (%s:%u): phase totals but no callback timed (initcall_debug "
			       "or pm_print_times off?): nothing to replay\n", shown++ ? "\n" : "", c,
			       li->files[li->cyc[c].file], li->cyc[c].line);
			continue;
		}
		ret = dl_log_replay(li, c, order, workers, rp, &err);
		if (ret == -ENODATA)
			continue;
		if (ret) {
			fprintf(stderr, "dlsim import-log: %s\n", err.msg);
			free(rp);
			return DL_EXIT_USAGE;
		}
		items = dl_order_uses_items(dl_order_policy(rp->order));
		printf("%scycle %u (%s:%u): %u callbacks (%u off the main thread), replayed %s on "
		       "K=%u%s; median main-thread gap %.1f us\n",
		       shown++ ? "\n" : "", c, li->files[li->cyc[c].file], li->cyc[c].line,
		       li->cyc[c].ncb, li->cyc[c].nasync, dl_order_name(rp->order), rp->workers,
		       !workers && rp->workers > (li->cpus ? li->cpus : 8) && items
		       ? " (the log ran that many callbacks at once: they sleep, they do not hold "
			 "a CPU)" : "",
		       rp->main_ns >= 0 ? (double)rp->main_ns / 1e3 : 0.0);
		printf("%-20s %6s %5s %11s %11s %7s %11s %7s  %s\n", "phase (log's name)", "line",
		       "cbs", "logged ms", "replay ms", "diff", "no-gap ms", "diff", "why");
		for (uint32_t i = 0; i < rp->nrow; i++) {
			const struct dl_replay_row *row = &rp->row[i];
			double d = pct(row->replay_ns, row->logged_ns);
			char buf[256];

			why(li, rp, row, buf, sizeof(buf));
			rows++;
			ok += d <= 100 * REPLAY_TOLERANCE && d >= -100 * REPLAY_TOLERANCE;
			printf("%-20s %6u %5u %11.3f %11.3f %+6.1f%% %11.3f %+6.1f%%  %s\n", row->label,
			       row->line, row->ncb, (double)row->logged_ns / 1e6,
			       (double)row->replay_ns / 1e6, d, (double)row->replay_default_ns / 1e6,
			       pct(row->replay_default_ns, row->logged_ns), buf);
		}
	}
	if (!shown)
		printf("no cycle printed a phase total: nothing to replay against\n");
	else if (rows)
		printf("\n%u of %u phase totals predicted within 10%%\n", ok, rows);
	free(rp);
	return DL_EXIT_OK;
}

/* The overlay, the unmatched names to stderr. */
static int overlay(const struct dl_logimport *li, const char *into, json_t **out)
{
	json_error_t jerr;
	json_t *sc = json_load_file(into, JSON_REJECT_DUPLICATES, &jerr);
	json_t *un_log = json_array(), *un_sc = json_array(), *v;
	size_t i;
	int ret;

	if (!sc) {
		fprintf(stderr, "dlsim import-log: %s:%d:%d: %s; expected a scenario file\n", into,
			jerr.line, jerr.column, jerr.text);
		json_decref(un_log);
		json_decref(un_sc);
		return DL_EXIT_USAGE;
	}
	ret = un_log && un_sc ? dl_log_overlay(li, sc, un_log, un_sc) : -ENOMEM;
	if (ret) {
		fprintf(stderr, "dlsim import-log: %s: %s\n", into, ret == -EINVAL
			? "no \"devices\" array; expected a scenario that lists its devices "
			  "(a generated one has no names to match)" : "out of memory");
		json_decref(sc);
		json_decref(un_log);
		json_decref(un_sc);
		return DL_EXIT_USAGE;
	}
	fprintf(stderr, "dlsim import-log: --into %s: %zu devices of the log matched, %zu did "
		"not; %zu listed devices of the scenario have no timing in the log\n", into,
		(size_t)0 + json_array_size(json_object_get(sc, "devices")) - json_array_size(un_sc),
		json_array_size(un_log), json_array_size(un_sc));
	fprintf(stderr, "  in the log, not in the scenario:");
	json_array_foreach(un_log, i, v)
		fprintf(stderr, "%s %s", i ? "," : "", json_string_value(v));
	fprintf(stderr, "\n  in the scenario, not in the log:");
	json_array_foreach(un_sc, i, v)
		fprintf(stderr, "%s %s", i ? "," : "", json_string_value(v));
	fprintf(stderr, "\n");
	json_decref(un_log);
	json_decref(un_sc);
	*out = sc;
	return DL_EXIT_OK;
}

/* The options and the state their parse builds: the log is read file by file as they come. */
struct import_args {
	const char *into, *name;
	bool replay, with_gap;
	int order;		/* -1: the order the log shows */
	uint32_t workers;	/* 0: the log's */
	int nfiles;
	char *dflt;		/* the first file's base name */
	struct dl_logimport li;
};

static int opt_order(void *obj, const char *verb, const char *v)
{
	enum dl_order o;

	if (dl_order_parse(v, &o)) {
		fprintf(stderr, "dlsim %s: unknown order '%s'; see 'dlsim orders'\n", verb, v);
		return -1;
	}
	((struct import_args *)obj)->order = (int)o;
	return 0;
}

/* strtoul's, as before the table: " 8" and "+8" are 8 */
static int opt_workers(void *obj, const char *verb, const char *v)
{
	char *end;
	unsigned long k = strtoul(v, &end, 10);

	if (!*v || *end || !k || k > 65536) {
		fprintf(stderr, "dlsim %s: --workers '%s'; expected 1..65536\n", verb, v);
		return -1;
	}
	((struct import_args *)obj)->workers = (uint32_t)k;
	return 0;
}

/* An argument no row names: a log file ("-": stdin), read now, or an unknown option. */
static int opt_file(void *obj, const char *verb, const char *arg)
{
	struct import_args *a = obj;
	struct dl_error err;

	if (arg[0] == '-' && arg[1]) {
		fprintf(stderr, "dlsim %s: unknown option '%s'\n", verb, arg);
		import_usage(stderr);
		return -1;
	}
	if (dl_log_read_file(&a->li, arg, &err)) {
		fprintf(stderr, "dlsim %s: %s\n", verb, err.msg);
		return -1;
	}
	if (!a->nfiles++)
		a->dflt = base_name(arg);
	return 0;
}

static const struct cli_opt import_opts[] = {
	{ CLI_STR("--into", struct import_args, into) },
	{ CLI_STR("--name", struct import_args, name) },
	{ CLI_FN("--order", opt_order) },
	{ CLI_FN("--workers", opt_workers) },
	{ CLI_TRUE("--replay", NULL, struct import_args, replay) },
	{ CLI_TRUE("--with-printing", NULL, struct import_args, with_gap) },
};

static const struct cli_verb import_verb = {
	.name = "import-log", .opt = import_opts,
	.nopt = sizeof(import_opts) / sizeof(import_opts[0]), .other = opt_file,
};

/* --help or -h anywhere, even after a bad option or as an option's value, is the help. */
static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

/* Parse (reading the logs), then what the options say together: 0 or -1 (said). */
static int import_parse(struct import_args *a, int argc, char **argv)
{
	if (cli_opts_parse(&import_verb, argc, argv, a))
		return -1;
	if (a->into && !*a->into) {
		fprintf(stderr, "dlsim import-log: --into without a file\n");
		return -1;
	}
	if (!a->nfiles) {
		import_usage(stderr);
		return -1;
	}
	return 0;
}

/* The scenario of all cycles (or S of --into with them overlaid), streamed to stdout. */
static int write_scenario(struct import_args *a)
{
	json_t *sc = NULL;
	int rc = DL_EXIT_USAGE;

	/* only the scenario of all cycles is left to write: fold the samples to it */
	if (dl_log_fold(&a->li) == -ENOMEM) {
		fprintf(stderr, "dlsim import-log: out of memory\n");
		return DL_EXIT_USAGE;
	}
	if (a->into) {
		if (overlay(&a->li, a->into, &sc) != DL_EXIT_OK)
			goto out;
	} else {
		sc = dl_log_scenario(&a->li, DL_LG_NONE, a->with_gap,
				     a->name ? a->name : a->dflt ? a->dflt : "imported");
		if (!sc) {
			fprintf(stderr, "dlsim import-log: out of memory\n");
			goto out;
		}
	}
	/* streamed out, not dumped to a string first: the text would be a copy of it all */
	if (json_dumpf(sc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER) || putchar('\n') == EOF ||
	    fflush(stdout)) {
		fprintf(stderr, "dlsim import-log: writing stdout: %s\n", strerror(errno));
		goto out;
	}
	rc = DL_EXIT_OK;
out:
	json_decref(sc);
	return rc;
}

int cmd_import_log(int argc, char **argv)
{
	struct import_args a = { .order = -1 };
	int rc = DL_EXIT_USAGE;

	if (wants_help(argc, argv)) {
		import_usage(stdout);
		return DL_EXIT_OK;
	}
	dl_log_init(&a.li);
	if (import_parse(&a, argc, argv))
		goto out;
	if (dl_log_finish(&a.li)) {
		fprintf(stderr, "dlsim import-log: out of memory\n");
		goto out;
	}
	summary(&a.li);
	rc = a.replay ? print_replays(&a.li, a.order, a.workers) : write_scenario(&a);
out:
	free(a.dflt);
	dl_log_free(&a.li);
	return rc;
}
