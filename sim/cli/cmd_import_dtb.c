/*
 * cmd_import_dtb.c - `dlsim import-dtb FILE.dtb`: print a scenario (JSON) whose
 * devices and links are derived from a flattened device tree the way
 * fw_devlink derives them (sim/scenario/dtb_import.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/scenario/dtb_import.h"

static void import_usage(FILE *f)
{
	fprintf(f, "usage: dlsim import-dtb FILE.dtb\n\n"
		   "Write a scenario (JSON, stdout) whose devices and links are derived from\n"
		   "a flattened device tree the way fw_devlink derives them: devices are the\n"
		   "available nodes with a compatible under the root, simple-bus & co. and\n"
		   "other devices, named by full path; links come from phandle properties\n"
		   "(clocks, *-supply, pinctrl-N, *-gpios, remote-endpoint, ...), flagged\n"
		   "INFERRED and PM_RUNTIME, plus CYCLE on dependency cycles.  Latencies are\n"
		   "guesses by device class (see the scenario's \"x-doc\").  A summary goes\n"
		   "to stderr.\n\n"
		   "exit status: 0 success, 2 bad usage or malformed DTB\n");
}

int cmd_import_dtb(int argc, char **argv)
{
	struct dl_dtb_stats st;
	struct dl_error err;
	const char *file = NULL;
	json_t *sc;
	char *text;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			import_usage(stdout);
			return DL_EXIT_OK;
		}
		if (argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--")) {
			fprintf(stderr, "dlsim import-dtb: unknown option '%s'\n", argv[i]);
			import_usage(stderr);
			return DL_EXIT_USAGE;
		}
		if (!strcmp(argv[i], "--") && i + 1 < argc)
			i++;
		if (file) {
			fprintf(stderr, "dlsim import-dtb: more than one file ('%s')\n", argv[i]);
			return DL_EXIT_USAGE;
		}
		file = argv[i];
	}
	if (!file) {
		import_usage(stderr);
		return DL_EXIT_USAGE;
	}
	memset(&err, 0, sizeof(err));
	ret = dl_dtb_import_file(file, &sc, &st, &err);
	if (ret) {
		fprintf(stderr, "dlsim import-dtb: %s\n", err.msg);
		return DL_EXIT_USAGE;
	}
	text = json_dumps(sc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(sc);
	if (!text) {
		fprintf(stderr, "dlsim import-dtb: %s: out of memory\n", file);
		return DL_EXIT_USAGE;
	}
	if (puts(text) == EOF || fflush(stdout)) {
		fprintf(stderr, "dlsim import-dtb: writing stdout: %s\n", strerror(errno));
		free(text);
		return DL_EXIT_USAGE;
	}
	free(text);
	fprintf(stderr, "dlsim import-dtb: %s: %u nodes, %u devices, %u links, %u on cycles (CYCLE)\n",
		file, st.nodes, st.devices, st.links, st.cycle_links);
	return DL_EXIT_OK;
}
