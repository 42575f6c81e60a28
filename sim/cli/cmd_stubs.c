/*
 * cmd_stubs.c - verbs whose layer has not landed yet.  Each says so and
 * exits 2.  They are weak symbols: a verb's real cmd_X.c replaces its stub
 * at link time, and the stub is deleted when that issue lands.
 */
#include <stdio.h>
#include <string.h>

#include "sim/cli/cli.h"

static int stub(int argc, char **argv, const char *issue)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("dlsim %s: not built yet (see the issue \"%s\")\n", argv[0], issue);
		return DL_EXIT_OK;
	}
	return cli_not_built(argv[0], issue);
}

__attribute__((weak)) int cmd_import_dtb(int argc, char **argv)
{
	return stub(argc, argv, "Real device trees: dlsim import-dtb");
}

__attribute__((weak)) int cmd_validate(int argc, char **argv)
{
	return stub(argc, argv, "Scenario files: Jansson loader, generators");
}
