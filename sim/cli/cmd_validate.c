/*
 * cmd_validate.c - `dlsim validate SCENARIO [--set K=V]... [--seed N]`:
 * load and validate a scenario, print its size, touch nothing else.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/scenario/scenario.h"

static void validate_usage(FILE *f)
{
	fprintf(f, "usage: dlsim validate SCENARIO [--set KEY=VALUE]... [--seed N]\n\n"
		   "Parse and validate a scenario file (and expand its generator); print\n"
		   "\"FILE: N devices, M links, K ops\".\n\n"
		   "  --set KEY=VALUE  override a field of the scenario's \"generate\" object;\n"
		   "                   dev.NAME.KEY=VALUE: a listed device's latency or async\n"
		   "                   defaults.KEY=VALUE: a key of \"defaults\", for every device\n"
		   "                   cost.KEY=VALUE: a key of the cost model (cost.wake_ns=70us)\n"
		   "  --seed N         override the scenario's seed\n\n"
		   "exit status: 0 valid, 2 bad usage or bad input\n");
}

int cmd_validate(int argc, char **argv)
{
	struct dl_override *ov = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*ov));
	const char *file = NULL, *val;
	struct dl_scenario *s;
	struct dl_error err;
	uint64_t seed;
	bool has_seed = false;
	size_t nov = 0;
	int ret = DL_EXIT_USAGE;

	if (!ov) {
		fprintf(stderr, "dlsim validate: out of memory\n");
		return DL_EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			validate_usage(stdout);
			ret = DL_EXIT_OK;
			goto out;
		} else if ((val = cli_opt_value(argc, argv, &i, "--set"))) {
			char *eq = strchr(val, '=');

			if (!eq || eq == val) {
				fprintf(stderr, "dlsim validate: --set %s: expected KEY=VALUE\n", val);
				goto out;
			}
			*eq = '\0';	/* argv strings are ours to modify */
			ov[nov++] = (struct dl_override){ val, eq + 1 };
		} else if ((val = cli_opt_value(argc, argv, &i, "--seed"))) {
			char *end;

			errno = 0;
			seed = strtoull(val, &end, 10);
			if (!*val || *end || errno || *val == '-') {
				fprintf(stderr, "dlsim validate: --seed %s: expected a non-negative "
					"integer\n", val);
				goto out;
			}
			has_seed = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "dlsim validate: unknown option '%s'; try 'dlsim validate "
				"--help'\n", argv[i]);
			goto out;
		} else if (file) {
			fprintf(stderr, "dlsim validate: more than one SCENARIO ('%s', '%s')\n",
				file, argv[i]);
			goto out;
		} else {
			file = argv[i];
		}
	}
	if (!file) {
		validate_usage(stderr);
		goto out;
	}
	if (dl_scenario_load(file, ov, nov, has_seed ? &seed : NULL, &s, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		goto out;
	}
	printf("%s: %u devices, %u links, %u ops\n", file, s->ndev, s->nlink, s->nop);
	dl_scenario_free(s);
	ret = DL_EXIT_OK;
out:
	free(ov);
	return ret;
}
