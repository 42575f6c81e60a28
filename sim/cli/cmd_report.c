/* cmd_report.c - `dlsim report DB [--out DIR] [--run ID]`: plots, traces and index.html (report/report.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_opts.h"

static void report_usage(FILE *f)
{
	fprintf(f, "usage: dlsim report DB [--out DIR [--force]] [--run ID] [--beside ID | --no-beside]\n"
		   "                        [--trace-devices N] [--trace-tracks worker|device] [--trace-json]\n\n"
		   "Write plots (gnuplot, PNG and SVG), Chrome trace files and an index.html\n"
		   "for the dlsim database DB: a headline (the chosen run's suspend, resume and\n"
		   "probe time with their slowest devices; its scenario under each order in DB,\n"
		   "the kernel's own order starred); the runs table; makespan per run and\n"
		   "operation with the lower bound; per scenario (name and content)/order the\n"
		   "mean and sd over seeds; time against devices when the runs have several\n"
		   "sizes; and for one run an interactive timeline (at most %d devices; rows\n"
		   "per worker, packed, or per device; the slowest devices pinned on top) with\n"
		   "the critical path and what each callback waited for, callbacks in progress\n"
		   "and blocked workers over time, probe attempts and defers, and a\n"
		   "suspend/resume Gantt (at most %d devices).  On a kernel-mode sweep with\n"
		   "twins (dlsim sweep --mode kernel --twins), also fidelity.html: per board\n"
		   "the kernel runs against their DES twins (dependency-ordered and timing-only\n"
		   "pairs agreeing, per-phase ratios twin/kernel and their spread over the\n"
		   "boards), boards that disagree on a dependency first.\n\n"
		   "  --out DIR   output directory (default: DB's name with -report, beside\n"
		   "              DB: dlsim.db gives dlsim-report/); never a source folder\n"
		   "              nor /; an existing folder must be empty or one that dlsim\n"
		   "              report wrote (it leaves a .dlsim-report file there).  Files\n"
		   "              are created afresh: a symlink there is replaced, not followed\n"
		   "  --force     write into an existing non-empty folder all the same\n"
		   "              (an existing folder keeps its mode, owner and files)\n"
		   "  --run ID    the run drawn in detail (default: the newest)\n"
		   "  --beside ID draw run ID (same scenario content: name, devices and links;\n"
		   "              another order, K or seed) beside it, per op on one time axis\n"
		   "              (default: its replay twin, 'dlsim twin', when it has one;\n"
		   "              at most %d devices of each run)\n"
		   "  --no-beside no beside view\n"
		   "  --trace-devices N  devices per trace file (default %d, about 4 KB of JSON\n"
		   "              each): the critical path first, then the slowest devices,\n"
		   "              then the lowest dev_ids; the page says when the cap\n"
		   "              cut a run\n"
		   "  --trace-tracks worker|device  one trace track per worker (default; tid 0\n"
		   "              is the main PM thread) or one per device\n"
		   "  --trace-json  plain trace-ID.json instead of trace-ID.json.gz (Perfetto,\n"
		   "              chrome://tracing and DevTools open the gzip as is)\n\n"
		   "Runs are drawn only if their log passes dlsim check's verification (times\n"
		   "in 0..2^62 ns, ids in range, ...): other runs get no trace file.\n"
		   "Exit status: 0 written; 2 bad usage, not a dlsim database, no such run,\n"
		   "an output folder refused;\n"
		   "3 the chosen run's log is corrupt (nothing is written); 130 interrupted\n"
		   "(Ctrl-C: what this report wrote is removed, DIR is left as it was).\n",
		DL_REPORT_TIMELINE_DEVICES, DL_REPORT_GANTT_DEVICES, DL_REPORT_BESIDE_DEVICES,
		DL_REPORT_TRACE_DEVICES);
}

/* The options and DB, as given; parse_args() checks the values. */
struct report_args {
	const char *db, *out, *run_arg, *beside_arg;
	struct dl_report_opts o;
};

static int opt_help(void *obj, const char *verb, const char *v)
{
	(void)obj, (void)verb, (void)v;
	report_usage(stdout);
	return 1;
}

static int opt_run(void *obj, const char *verb, const char *v)
{
	if (!*v) {
		fprintf(stderr, "dlsim %s: --run needs a run_id\n", verb);
		return -1;
	}
	((struct report_args *)obj)->run_arg = v;
	return 0;
}

static int opt_no_beside(void *obj, const char *verb, const char *v)
{
	struct report_args *a = obj;

	(void)verb, (void)v;
	a->beside_arg = "";
	a->o.beside = -1;
	return 0;
}

static int opt_trace_devices(void *obj, const char *verb, const char *v)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > 100000000) {
		fprintf(stderr, "dlsim %s: --trace-devices '%s': expected 1..100000000\n", verb, v);
		return -1;
	}
	((struct report_args *)obj)->o.trace_devices = (size_t)n;
	return 0;
}

static int opt_trace_tracks(void *obj, const char *verb, const char *v)
{
	if (strcmp(v, "worker") && strcmp(v, "device")) {
		fprintf(stderr, "dlsim %s: --trace-tracks '%s': expected worker or device\n", verb, v);
		return -1;
	}
	((struct report_args *)obj)->o.trace_per_device = !strcmp(v, "device");
	return 0;
}

static int opt_force(void *obj, const char *verb, const char *v)
{
	(void)verb, (void)v;
	((struct report_args *)obj)->o.force = 1;
	return 0;
}

static int opt_trace_json(void *obj, const char *verb, const char *v)
{
	(void)verb, (void)v;
	((struct report_args *)obj)->o.trace_plain = 1;
	return 0;
}

/* An argument no row names: an unknown option ("-" is not one), else DB, one only. */
static int opt_other(void *obj, const char *verb, const char *arg)
{
	struct report_args *a = obj;

	if (arg[0] == '-' && arg[1])
		return cli_opts_refuse(verb, arg);
	if (a->db) {
		fprintf(stderr, "dlsim %s: unexpected argument '%s'\n", verb, arg);
		return -1;
	}
	a->db = arg;
	return 0;
}

static const struct cli_opt report_opts[] = {
	{ CLI_ACTION("--help", "-h", opt_help) },
	{ CLI_STR("--out", struct report_args, out) },	/* "" (no value) is refused after */
	{ CLI_FN("--run", opt_run) },
	{ CLI_STR("--beside", struct report_args, beside_arg) },
	{ CLI_ACTION("--no-beside", NULL, opt_no_beside) },
	{ CLI_FN("--trace-devices", opt_trace_devices) },
	{ CLI_FN("--trace-tracks", opt_trace_tracks) },
	{ CLI_ACTION("--force", NULL, opt_force) },
	{ CLI_ACTION("--trace-json", NULL, opt_trace_json) },
};

static const struct cli_verb report_verb = {
	.name = "report", .opt = report_opts, .nopt = sizeof(report_opts) / sizeof(report_opts[0]),
	.other = opt_other,
};

/* A run_id of at least MIN, the whole of S: 0, or -1 with "--OPT 'S': expected ..." said. */
static int parse_run_id(const char *opt, const char *s, long long min, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno || end == s || *end || *out < min) {
		fprintf(stderr, "dlsim report: %s '%s': expected a run_id (a number >= %lld)\n", opt,
			s, min);
		return -1;
	}
	return 0;
}

/*
 * Parse argv into @a, its run, beside run and output folder (@dir holds the
 * default one): 0 to go on, 1 when --help was printed, else DL_EXIT_USAGE
 * with the reason printed.
 */
static int parse_args(int argc, char **argv, struct report_args *a, char *dir, size_t dirsz)
{
	long long run = -1, b;
	int ret = cli_opts_parse(&report_verb, argc, argv, a);

	if (ret)
		return ret > 0 ? 1 : DL_EXIT_USAGE;
	if (!a->db) {
		report_usage(stderr);
		return DL_EXIT_USAGE;
	}
	if (a->out && !*a->out) {
		fprintf(stderr, "dlsim report: --out needs a directory\n");
		return DL_EXIT_USAGE;
	}
	if (a->run_arg && parse_run_id("--run", a->run_arg, 0, &run))
		return DL_EXIT_USAGE;
	if (a->beside_arg && *a->beside_arg) {
		if (parse_run_id("--beside", a->beside_arg, 1, &b))
			return DL_EXIT_USAGE;
		a->o.beside = (int64_t)b;
	}
	if (!a->out) {
		if (dl_report_default_outdir(a->db, dir, dirsz)) {
			fprintf(stderr, "dlsim report: %s: path too long\n", a->db);
			return DL_EXIT_USAGE;
		}
		a->out = dir;
	}
	a->o.outdir = a->out;
	a->o.run = (int64_t)run;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { .o = { .run = -1 } };
	char err[1024], dir[PATH_MAX];
	int64_t chosen;
	int ret;

	ret = parse_args(argc, argv, &a, dir, sizeof(dir));
	if (ret)
		return ret == 1 ? DL_EXIT_OK : ret;
	chosen = a.o.run > 0 ? a.o.run : 0;     /* 0: the newest */
	if ((ret = cli_log_validate("report", a.db, &chosen)) >= 0)
		return ret;     /* the chosen run verified first, before any file is written */
	a.o.verified_run = chosen;        /* dl_report_write_opts() need not verify it again */
	/* till here only reading (Ctrl-C's default action); from here on Ctrl-C
	 * removes what this report wrote, and the folder is left as it was */
	cli_catch_stop();
	a.o.stop = cli_stop_flag();
	ret = dl_report_write_opts(a.db, &a.o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "dlsim report: %s\n", err);
		return ret == -EINTR ? DL_EXIT_INTERRUPTED : ret == -EBADMSG ? DL_EXIT_CORRUPT : DL_EXIT_USAGE;
	}
	printf("dlsim report: wrote %s/index.html\n", a.out);
	return DL_EXIT_OK;
}
