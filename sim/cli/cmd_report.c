/* cmd_report.c - `dlsim report DB [--out DIR] [--run ID]`: plots, traces and index.html (report/report.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "sim/cli/cli.h"

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

int cmd_report(int argc, char **argv)
{
	const char *db = NULL, *out = NULL, *run_arg = NULL, *beside_arg = NULL;
	struct dl_report_opts o = { .run = -1 };
	char err[1024], dir[PATH_MAX];
	long long run = -1;
	int64_t chosen;
	int ret;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			report_usage(stdout);
			return DL_EXIT_OK;
		} else if ((v = cli_opt_value(argc, argv, &i, "--out"))) {
			out = v;        /* "" (no value) is refused below */
		} else if ((v = cli_opt_value(argc, argv, &i, "--run"))) {
			if (!*v) {
				fprintf(stderr, "dlsim report: --run needs a run_id\n");
				return DL_EXIT_USAGE;
			}
			run_arg = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--beside"))) {
			beside_arg = v;
		} else if (!strcmp(a, "--no-beside")) {
			beside_arg = "";
			o.beside = -1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--trace-devices"))) {
			char *end;
			long long n;

			errno = 0;
			n = strtoll(v, &end, 10);
			if (errno || end == v || *end || n < 1 || n > 100000000) {
				fprintf(stderr, "dlsim report: --trace-devices '%s': expected 1..100000000\n", v);
				return DL_EXIT_USAGE;
			}
			o.trace_devices = (size_t)n;
		} else if ((v = cli_opt_value(argc, argv, &i, "--trace-tracks"))) {
			if (strcmp(v, "worker") && strcmp(v, "device")) {
				fprintf(stderr, "dlsim report: --trace-tracks '%s': expected worker or device\n", v);
				return DL_EXIT_USAGE;
			}
			o.trace_per_device = !strcmp(v, "device");
		} else if (!strcmp(a, "--force")) {
			o.force = 1;
		} else if (!strcmp(a, "--trace-json")) {
			o.trace_plain = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "dlsim report: unknown option '%s'; try 'dlsim report --help'\n", a);
			return DL_EXIT_USAGE;
		} else if (!db) {
			db = a;
		} else {
			fprintf(stderr, "dlsim report: unexpected argument '%s'\n", a);
			return DL_EXIT_USAGE;
		}
	}
	if (!db) {
		report_usage(stderr);
		return DL_EXIT_USAGE;
	}
	if (out && !*out) {
		fprintf(stderr, "dlsim report: --out needs a directory\n");
		return DL_EXIT_USAGE;
	}
	if (run_arg) {
		char *end;

		errno = 0;
		run = strtoll(run_arg, &end, 10);
		if (errno || end == run_arg || *end || run < 0) {
			fprintf(stderr, "dlsim report: --run '%s': expected a run_id (a number >= 0)\n", run_arg);
			return DL_EXIT_USAGE;
		}
	}
	if (beside_arg && *beside_arg) {
		char *end;
		long long b;

		errno = 0;
		b = strtoll(beside_arg, &end, 10);
		if (errno || end == beside_arg || *end || b < 1) {
			fprintf(stderr, "dlsim report: --beside '%s': expected a run_id (a number >= 1)\n",
				beside_arg);
			return DL_EXIT_USAGE;
		}
		o.beside = (int64_t)b;
	}
	if (!out) {
		if (dl_report_default_outdir(db, dir, sizeof(dir))) {
			fprintf(stderr, "dlsim report: %s: path too long\n", db);
			return DL_EXIT_USAGE;
		}
		out = dir;
	}
	o.outdir = out;
	o.run = (int64_t)run;
	chosen = run > 0 ? run : 0;     /* 0: the newest */
	if ((ret = cli_log_validate("report", db, &chosen)) >= 0)
		return ret;     /* the chosen run verified first, before any file is written */
	o.verified_run = chosen;        /* dl_report_write_opts() need not verify it again */
	/* till here only reading (Ctrl-C's default action); from here on Ctrl-C
	 * removes what this report wrote, and the folder is left as it was */
	cli_catch_stop();
	o.stop = cli_stop_flag();
	ret = dl_report_write_opts(db, &o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "dlsim report: %s\n", err);
		return ret == -EINTR ? DL_EXIT_INTERRUPTED : ret == -EBADMSG ? DL_EXIT_CORRUPT : DL_EXIT_USAGE;
	}
	printf("dlsim report: wrote %s/index.html\n", out);
	return DL_EXIT_OK;
}
