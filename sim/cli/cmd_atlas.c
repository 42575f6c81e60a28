/*
 * cmd_atlas.c - `dlsim atlas [NAME] [--node NODE]`: what the latency atlas
 * (sim/measure/atlas.h) knows and from which real log, and `--regen DIR`,
 * which rebuilds it from the logs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "sim/cli/cli.h"
#include "sim/measure/atlas.h"

static void atlas_usage(FILE *f)
{
	fprintf(f, "usage: dlsim atlas [NAME] [--node NODE] [--file ATLAS.json]\n"
		   "       dlsim atlas --regen DIR\n\n"
		   "The callback latencies per driver (and per subsystem) that import-dtb gives\n"
		   "imported devices, each with the real log and lines it came from: n callbacks,\n"
		   "their median (what import-dtb uses) and 90th percentile, per phase.\n\n"
		   "  (no NAME)       every driver and subsystem, one line per phase\n"
		   "  NAME            a driver (else a subsystem) of that name; with --node, what\n"
		   "                  import-dtb gives a device bound by driver NAME at NODE:\n"
		   "                  per phase the driver's figure, else the subsystem's (NODE's\n"
		   "                  name without unit address or number: \"i2c@fe5a0000\" is\n"
		   "                  \"i2c\"), else none: the scenario keeps import-dtb's own\n"
		   "                  guess by device class (probe, suspend, resume) or no time\n"
		   "  --node NODE     the device's node path or name (NAME may then be \"-\": no driver)\n"
		   "  --file F        read the atlas F instead of the one built in\n"
		   "                  (sim/measure/atlas.json)\n"
		   "  --regen DIR     build the atlas from the real logs in DIR (shared/real) and\n"
		   "                  write it (JSON) to stdout; `make atlas` commits it\n\n"
		   "exit status: 0 ok (also when NAME is in no log: the fallback is printed),\n"
		   "2 bad usage, unreadable or malformed atlas or log\n");
}

static void print_ms(int64_t ns)
{
	printf(" %10.3f ms", (double)ns / 1e6);
}

static void print_from(const struct dl_atlas *a, const struct dl_atlas_stat *st)
{
	for (uint32_t i = 0; i < st->nfrom; i++)
		printf("%s%s:%" PRIu32 "-%" PRIu32 " (%" PRIu32 ")", i ? ", " : "  ",
		       a->logs[st->from[i].log], st->from[i].first, st->from[i].last, st->from[i].n);
	printf("\n");
}

static void print_stat_line(const struct dl_atlas *a, const char *kind, const char *name,
			    unsigned key, const struct dl_atlas_stat *st)
{
	printf("%-9s %-28s %-13s %6" PRIu32, kind, name, dl_lat_key_name(key), st->n);
	print_ms(st->median_ns);
	print_ms(st->p90_ns);
	print_from(a, st);
}

static const char *kind_name(enum dl_atlas_kind k)
{
	return k == DL_ATLAS_DRIVER ? "driver" : "subsystem";
}

static void print_header(void)
{
	printf("%-9s %-28s %-13s %6s %13s %13s  %s\n", "kind", "name", "phase", "n", "median",
	       "p90", "from (log:lines (callbacks))");
}

static void print_all(const struct dl_atlas *a)
{
	uint32_t nd = 0;

	for (uint32_t i = 0; i < a->n; i++)
		nd += a->e[i].kind == DL_ATLAS_DRIVER;
	printf("latency atlas: %" PRIu32 " drivers, %" PRIu32 " subsystems, from %" PRIu32 " logs:\n",
	       nd, a->n - nd, a->nlogs);
	for (uint32_t i = 0; i < a->nlogs; i++)
		printf("  %s\n", a->logs[i]);
	print_header();
	for (uint32_t i = 0; i < a->n; i++)
		for (unsigned k = 0; k < DL_LAT_COUNT; k++)
			if (a->e[i].ph[k].n)
				print_stat_line(a, kind_name(a->e[i].kind), a->e[i].name, k, &a->e[i].ph[k]);
}

/* What import-dtb gives a device bound by @driver (NULL: none known) at @node. */
static void print_device(const struct dl_atlas *a, const char *driver, const char *node)
{
	char stem[DL_ATLAS_STEM_MAX + 1];
	unsigned found = 0;

	if (!dl_atlas_stem(node, stem, sizeof(stem)))
		snprintf(stem, sizeof(stem), "(none)");
	printf("device at %s, driver %s, subsystem %s:\n", node, driver ? driver : "(unknown)", stem);
	print_header();
	for (unsigned k = 0; k < DL_LAT_COUNT; k++) {
		const struct dl_atlas_entry *e;
		const struct dl_atlas_stat *st = dl_atlas_lookup(a, driver, node, k, &e);

		if (st) {
			print_stat_line(a, kind_name(e->kind), e->name, k, st);
			found++;
		}
	}
	if (!found)
		printf("(in no log: the scenario keeps import-dtb's guess by device class)\n");
	else
		printf("other phases: in no log; the scenario keeps import-dtb's guess by device class "
		       "(probe, suspend, resume) or no time\n");
}

static int print_name(const struct dl_atlas *a, const char *name)
{
	const struct dl_atlas_entry *e = dl_atlas_find(a, DL_ATLAS_DRIVER, name);

	if (!e)
		e = dl_atlas_find(a, DL_ATLAS_SUBSYSTEM, name);
	if (!e) {
		char stem[DL_ATLAS_STEM_MAX + 1];

		printf("'%s' is in no log of the atlas (neither a driver nor a subsystem).\n", name);
		if (dl_atlas_stem(name, stem, sizeof(stem)) && strcmp(stem, name) &&
		    dl_atlas_find(a, DL_ATLAS_SUBSYSTEM, stem))
			printf("as a node name its subsystem is '%s': dlsim atlas %s\n", stem, stem);
		printf("import-dtb falls back to the device's subsystem (its node name without unit "
		       "address or number), then to its own guess by device class.\n");
		return DL_EXIT_OK;
	}
	print_header();
	for (unsigned k = 0; k < DL_LAT_COUNT; k++)
		if (e->ph[k].n)
			print_stat_line(a, kind_name(e->kind), e->name, k, &e->ph[k]);
	return DL_EXIT_OK;
}

static int regen(const char *dir)
{
	struct dl_error err = { { 0 } };
	json_t *j;
	int ret = dl_atlas_build(dir, &j, &err);

	if (ret) {
		fprintf(stderr, "dlsim atlas: %s\n", err.msg);
		return DL_EXIT_USAGE;
	}
	ret = json_dumpf(j, stdout, JSON_INDENT(1)) || fputc('\n', stdout) == EOF;
	json_decref(j);
	if (ret || fflush(stdout)) {
		fprintf(stderr, "dlsim atlas: cannot write the atlas: %s\n", strerror(errno));
		return DL_EXIT_USAGE;
	}
	return DL_EXIT_OK;
}

int cmd_atlas(int argc, char **argv)
{
	const char *name = NULL, *node = NULL, *file = NULL, *dir = NULL, *v;
	struct dl_atlas own = { 0 };
	const struct dl_atlas *a;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			atlas_usage(stdout);
			return DL_EXIT_OK;
		} else if ((v = cli_opt_value(argc, argv, &i, "--node"))) {
			node = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--file"))) {
			file = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--regen"))) {
			dir = v;
		} else if (argv[i][0] == '-' && strcmp(argv[i], "-")) {
			fprintf(stderr, "dlsim atlas: unknown option '%s'\n", argv[i]);
			atlas_usage(stderr);
			return DL_EXIT_USAGE;
		} else if (!name) {
			name = argv[i];
		} else {
			fprintf(stderr, "dlsim atlas: one NAME only ('%s' and '%s')\n", name, argv[i]);
			return DL_EXIT_USAGE;
		}
		if (v && !*v) {
			fprintf(stderr, "dlsim atlas: %s needs a value\n", argv[i]);
			return DL_EXIT_USAGE;
		}
	}
	if (dir)
		return name || node || file ? (fprintf(stderr, "dlsim atlas: --regen takes no other "
					      "argument\n"), DL_EXIT_USAGE) : regen(dir);
	if (node && !name) {
		fprintf(stderr, "dlsim atlas: --node needs a driver NAME (or \"-\" for none)\n");
		return DL_EXIT_USAGE;
	}
	if (file) {
		struct dl_error err = { { 0 } };

		if (dl_atlas_load_file(file, &own, &err)) {
			fprintf(stderr, "dlsim atlas: %s\n", err.msg);
			return DL_EXIT_USAGE;
		}
		a = &own;
	} else if (!(a = dl_atlas_builtin())) {
		fprintf(stderr, "dlsim atlas: the built-in atlas could not be loaded\n");
		return DL_EXIT_USAGE;
	}
	ret = DL_EXIT_OK;
	if (node)
		print_device(a, strcmp(name, "-") ? name : NULL, node);
	else if (name)
		ret = print_name(a, name);
	else
		print_all(a);
	dl_atlas_free(&own);
	return ret;
}
