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
#include "sim/cli/cli_opts.h"
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

/* The options: the overrides (argv's strings, cut at '='), the seed, the one SCENARIO. */
struct validate_args {
	struct dl_override *ov;	/* room for one per argument */
	size_t nov;
	uint64_t seed;
	bool has_seed;
	const char *file;
};

static int opt_help(void *obj, const char *verb, const char *v)
{
	(void)obj, (void)verb, (void)v;
	validate_usage(stdout);
	return 1;
}

static int opt_set(void *obj, const char *verb, const char *v)
{
	struct validate_args *a = obj;
	char *eq = strchr(v, '=');

	if (!eq || eq == v) {
		fprintf(stderr, "dlsim %s: --set %s: expected KEY=VALUE\n", verb, v);
		return -1;
	}
	*eq = '\0';	/* argv strings are ours to modify */
	a->ov[a->nov++] = (struct dl_override){ v, eq + 1 };
	return 0;
}

/* strtoull's, as before the table (" 5" is 5) */
static int opt_seed(void *obj, const char *verb, const char *v)
{
	struct validate_args *a = obj;
	char *end;

	errno = 0;
	a->seed = strtoull(v, &end, 10);
	if (!*v || *end || errno || *v == '-') {
		fprintf(stderr, "dlsim %s: --seed %s: expected a non-negative integer\n", verb, v);
		return -1;
	}
	a->has_seed = true;
	return 0;
}

/* An argument no row names: an unknown option, or SCENARIO ("-": stdin), one only. */
static int opt_other(void *obj, const char *verb, const char *arg)
{
	struct validate_args *a = obj;

	if (arg[0] == '-' && arg[1]) {
		fprintf(stderr, "dlsim %s: unknown option '%s'; try 'dlsim %s --help'\n", verb, arg,
			verb);
		return -1;
	}
	if (a->file) {
		fprintf(stderr, "dlsim %s: more than one SCENARIO ('%s', '%s')\n", verb, a->file, arg);
		return -1;
	}
	a->file = arg;
	return 0;
}

static const struct cli_opt validate_opts[] = {
	{ CLI_ACTION("--help", "-h", opt_help) },
	{ CLI_FN("--set", opt_set) },
	{ CLI_FN("--seed", opt_seed) },
};

static const struct cli_verb validate_verb = {
	.name = "validate", .opt = validate_opts,
	.nopt = sizeof(validate_opts) / sizeof(validate_opts[0]), .other = opt_other,
};

int cmd_validate(int argc, char **argv)
{
	struct validate_args a = { .ov = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*a.ov)) };
	struct dl_scenario *s;
	struct dl_error err;
	int ret = DL_EXIT_USAGE;

	if (!a.ov) {
		fprintf(stderr, "dlsim validate: out of memory\n");
		return DL_EXIT_USAGE;
	}
	ret = cli_opts_parse(&validate_verb, argc, argv, &a);
	if (ret) {
		ret = ret > 0 ? DL_EXIT_OK : DL_EXIT_USAGE;
		goto out;
	}
	ret = DL_EXIT_USAGE;
	if (!a.file) {
		validate_usage(stderr);
		goto out;
	}
	if (dl_scenario_load(a.file, a.ov, a.nov, a.has_seed ? &a.seed : NULL, &s, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		goto out;
	}
	printf("%s: %u devices, %u links, %u ops\n", a.file, s->ndev, s->nlink, s->nop);
	dl_scenario_free(s);
	ret = DL_EXIT_OK;
out:
	free(a.ov);
	return ret;
}
