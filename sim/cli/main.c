/* main.c - `dlsim VERB ...`: dispatch, --help and --version. */
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "sim/cli/cli.h"

struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
};

static const struct verb verbs[] = {
	{ "run", cmd_run, "run SCENARIO [opts]      simulate the scenario's script, log it, print a summary" },
	{ "compare", cmd_compare, "compare SCENARIO --orders A,B  run several orders on identical samples" },
	{ "check", cmd_check, "check DB [--run ID]      re-verify the invariants from the log alone" },
	{ "report", cmd_report, "report DB [--out DIR]    plots and an index.html" },
	{ "validate", cmd_validate, "validate SCENARIO        parse and validate only" },
	{ "import-dtb", cmd_import_dtb, "import-dtb FILE.dtb      derive a scenario from a device tree (fw_devlink rules)" },
	{ "explain", cmd_explain, "explain DB [--run ID]    per op and phase: bound, chain- or CPU-bound, critical path" },
	{ "advise", cmd_advise, "advise SCENARIO          rank single changes (async, latency, order, CPUs, links) by makespan saved" },
	{ "import-log", cmd_import_log, "import-log FILE...       a scenario from real dmesg/ftrace callback timings" },
	{ "orders", cmd_orders, "orders                   list the ordering algorithms" },
	{ "diff", cmd_diff, "diff DB RUN_A RUN_B       two runs side by side: makespans, order agreement" },
	{ "atlas", cmd_atlas, "atlas [DRIVER]           callback latencies per driver from real logs, and which log" },
	{ "twin", cmd_twin, "twin DB RUN [--db OUT]    replay a logged run in the DES, each callback as long as logged" },
	{ "sweep", cmd_sweep, "sweep --scenarios P --orders A,B  many runs, resumable, in parallel (--jobs, mpirun)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: dlsim VERB [ARGS]\n\n"
		   "Simulate the Linux kernel's device links: probe ordering, deferred probing,\n"
		   "unbind cascades and async suspend/resume, in virtual time or on real threads.\n\n"
		   "verbs:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  dlsim %s\n", verbs[i].usage);
	fprintf(f, "\n  dlsim --version          print the version\n"
		   "  dlsim VERB --help        options of one verb\n\n"
		   "exit status: 0 ok, 1 invariant violated or injected fault, 2 bad usage or input\n");
}

int cli_not_built(const char *verb, const char *issue)
{
	fprintf(stderr, "dlsim %s: not built yet (see the issue \"%s\")\n", verb, issue);
	return DL_EXIT_USAGE;
}

/*
 * Blocks of 1 MiB and more straight from mmap, and back to the system when
 * freed.  glibc's threshold otherwise rises to the largest block freed so
 * far (up to 32 MiB): the arrays a run frees after registration then stay
 * resident under the later ones, and calloc() must clear heap memory that a
 * fresh mapping gives zeroed (18 MB of a 388 MB peak at 1M devices).
 */
#define MMAP_THRESHOLD (1 << 20)

int main(int argc, char **argv)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
#endif
	if (argc < 2) {
		usage(stderr);
		return DL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return DL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("dlsim %s\n", DLSIM_VERSION);
		return DL_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "dlsim: unknown verb '%s'; try 'dlsim --help'\n", argv[1]);
	return DL_EXIT_USAGE;
}
