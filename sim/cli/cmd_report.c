/* cmd_report.c - `dlsim report DB [--out DIR]`: plots and index.html (report/report.h). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "sim/cli/cli.h"

static void report_usage(FILE *f)
{
	fprintf(f, "usage: dlsim report DB [--out DIR]\n\n"
		   "Write plots (gnuplot, PNG and SVG) and an index.html with the runs table\n"
		   "for the dlsim database DB: makespan per run and operation with the lower\n"
		   "bound, and the newest run's suspend/resume timeline (first %d devices).\n\n"
		   "  --out DIR   output directory (default: 'report' beside DB)\n",
		DL_REPORT_GANTT_DEVICES);
}

int cmd_report(int argc, char **argv)
{
	const char *db = NULL, *out = NULL;
	char err[1024], dir[PATH_MAX];
	int ret;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			report_usage(stdout);
			return DL_EXIT_OK;
		} else if (!strcmp(a, "--out")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "dlsim report: --out needs a directory\n");
				return DL_EXIT_USAGE;
			}
			out = argv[++i];
		} else if (!strncmp(a, "--out=", 6)) {
			out = a + 6;
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
	if (!out) {
		if (dl_report_default_outdir(db, dir, sizeof(dir))) {
			fprintf(stderr, "dlsim report: %s: path too long\n", db);
			return DL_EXIT_USAGE;
		}
		out = dir;
	}
	ret = dl_report_write(db, out, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "dlsim report: %s\n", err);
		return DL_EXIT_USAGE;
	}
	printf("dlsim report: wrote %s/index.html\n", out);
	return DL_EXIT_OK;
}
