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
#include "sim/cli/cli_opts.h"
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

/* The options and the one NAME. */
struct atlas_args {
	const char *name, *node, *file, *dir;
};

static int opt_help(void *obj, const char *verb, const char *v)
{
	(void)obj, (void)verb, (void)v;
	atlas_usage(stdout);
	return 1;
}

/* A path or name that must not be empty: "--node needs a value". */
static int need_value(const char *verb, const char *opt, const char *v, const char **out)
{
	if (!*v) {
		fprintf(stderr, "dlsim %s: %s needs a value\n", verb, opt);
		return -1;
	}
	*out = v;
	return 0;
}

static int opt_node(void *obj, const char *verb, const char *v)
{
	return need_value(verb, "--node", v, &((struct atlas_args *)obj)->node);
}

static int opt_file(void *obj, const char *verb, const char *v)
{
	return need_value(verb, "--file", v, &((struct atlas_args *)obj)->file);
}

static int opt_regen(void *obj, const char *verb, const char *v)
{
	return need_value(verb, "--regen", v, &((struct atlas_args *)obj)->dir);
}

/* An argument no row names: an unknown option, or NAME ("-": no driver), one only. */
static int opt_other(void *obj, const char *verb, const char *arg)
{
	struct atlas_args *a = obj;

	if (arg[0] == '-' && strcmp(arg, "-")) {
		fprintf(stderr, "dlsim %s: unknown option '%s'\n", verb, arg);
		atlas_usage(stderr);
		return -1;
	}
	if (a->name) {
		fprintf(stderr, "dlsim %s: one NAME only ('%s' and '%s')\n", verb, a->name, arg);
		return -1;
	}
	a->name = arg;
	return 0;
}

static const struct cli_opt atlas_opts[] = {
	{ CLI_ACTION("--help", "-h", opt_help) },
	{ CLI_FN("--node", opt_node) },
	{ CLI_FN("--file", opt_file) },
	{ CLI_FN("--regen", opt_regen) },
};

static const struct cli_verb atlas_verb = {
	.name = "atlas", .opt = atlas_opts, .nopt = sizeof(atlas_opts) / sizeof(atlas_opts[0]),
	.other = opt_other,
};

/* --file's atlas into *OWN, else the built-in one; NULL when it cannot be had (said). */
static const struct dl_atlas *open_atlas(const char *file, struct dl_atlas *own)
{
	const struct dl_atlas *a;

	if (file) {
		struct dl_error err = { { 0 } };

		if (dl_atlas_load_file(file, own, &err)) {
			fprintf(stderr, "dlsim atlas: %s\n", err.msg);
			return NULL;
		}
		return own;
	}
	if (!(a = dl_atlas_builtin()))
		fprintf(stderr, "dlsim atlas: the built-in atlas could not be loaded\n");
	return a;
}

int cmd_atlas(int argc, char **argv)
{
	struct atlas_args o = { 0 };
	struct dl_atlas own = { 0 };
	const struct dl_atlas *a;
	int ret;

	ret = cli_opts_parse(&atlas_verb, argc, argv, &o);
	if (ret)
		return ret > 0 ? DL_EXIT_OK : DL_EXIT_USAGE;
	if (o.dir)
		return o.name || o.node || o.file ? (fprintf(stderr, "dlsim atlas: --regen takes no "
					      "other argument\n"), DL_EXIT_USAGE) : regen(o.dir);
	if (o.node && !o.name) {
		fprintf(stderr, "dlsim atlas: --node needs a driver NAME (or \"-\" for none)\n");
		return DL_EXIT_USAGE;
	}
	if (!(a = open_atlas(o.file, &own)))
		return DL_EXIT_USAGE;
	ret = DL_EXIT_OK;
	if (o.node)
		print_device(a, strcmp(o.name, "-") ? o.name : NULL, o.node);
	else if (o.name)
		ret = print_name(a, o.name);
	else
		print_all(a);
	dl_atlas_free(&own);
	return ret;
}
