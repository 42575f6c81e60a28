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
#include "sim/cli/cli_opts.h"
#include "sim/measure/atlas.h"
#include "sim/scenario/dtb_import.h"

static void import_usage(FILE *f)
{
	fprintf(f, "usage: dlsim import-dtb [--kernel 6.12|7.3] [--async driver|none|all]\n"
		   "                        [--drivers table|all] FILE.dtb\n\n"
		   "Write a scenario (JSON, stdout) whose devices and links are derived from\n"
		   "a flattened device tree the way the kernel's fw_devlink derives them.\n"
		   "Devices: the available nodes with a compatible under the root, simple-bus\n"
		   "& co. and other devices, named by full path; not the nodes the kernel\n"
		   "initialises before the driver model (its IRQCHIP_DECLARE and\n"
		   "CLK_OF_DECLARE compatibles: GICs, fixed clocks, ...), which never get\n"
		   "links either.  Links come from phandle properties (clocks, *-supply,\n"
		   "pinctrl-N, *-gpios, interrupts, remote-endpoint, ...; iommus and dmas only\n"
		   "under fw_devlink.strict, so not here):\n"
		   "  own node of a device    INFERRED, AUTOPROBE_CONSUMER, PM_RUNTIME (gates probe)\n"
		   "  child node, not a device  INFERRED, SYNC_STATE_ONLY on the owning device\n"
		   "  on a dependency cycle   INFERRED, SYNC_STATE_ONLY, CYCLE\n"
		   "Drivers: a device binds the driver that the kernel's source has for its\n"
		   "most specific compatible (an of_device_id table) when Debian's arm64\n"
		   "config of that version builds it (in or as a module); a device without\n"
		   "one never binds: no callbacks, links to it relaxed to SYNC_STATE_ONLY\n"
		   "(fw_devlink_drivers_done()), no children created by its driver.  Each\n"
		   "device says where its facts came from: \"x-driver\" (the name, or null),\n"
		   "\"x-driver-file\", \"x-driver-build\", \"x-async\", \"x-binds\", \"x-why\".\n"
		   "Latencies: per phase the latency atlas's median for the device's driver,\n"
		   "else its subsystem (node name without unit address or number), from real\n"
		   "logs (`dlsim atlas`; \"x-latency\" names the log and lines), else a guess\n"
		   "by device class (see the scenario's \"x-doc\").\n"
		   "A summary goes to stderr.\n\n"
		   "options:\n"
		   "  --kernel V     whose property parsers and driver table: 6.12 (default;\n"
		   "                 pinctrl-0..8) or 7.3 (any pinctrl-N, mmc-pwrseq)\n"
		   "  --async M      driver (default: async when the driver calls\n"
		   "                 device_enable_async_suspend() or its bus does: i2c,\n"
		   "                 sdio, usb, pci, ...), none (every device sync) or all\n"
		   "  --drivers M    table (default: the kernel's driver table above) or all\n"
		   "                 (every device binds, as if each compatible had a driver)\n\n"
		   "exit status: 0 success, 2 bad usage or malformed DTB\n");
}

/* The options and the one FILE.dtb. */
struct dtb_args {
	struct dl_dtb_opts opt;
	const char *file;
};

static int opt_help(void *obj, const char *verb, const char *v)
{
	(void)obj, (void)verb, (void)v;
	import_usage(stdout);
	return 1;
}

static int opt_kernel(void *obj, const char *verb, const char *v)
{
	if (!*v) {
		fprintf(stderr, "dlsim %s: --kernel needs a value\n", verb);
		return -1;
	}
	if (dl_dtb_parse_kernel(v, &((struct dtb_args *)obj)->opt.kernel)) {
		fprintf(stderr, "dlsim %s: --kernel '%s': expected 6.12 or 7.3\n", verb, v);
		return -1;
	}
	return 0;
}

static int opt_async(void *obj, const char *verb, const char *v)
{
	if (!*v) {
		fprintf(stderr, "dlsim %s: --async needs a value\n", verb);
		return -1;
	}
	if (dl_dtb_parse_async(v, &((struct dtb_args *)obj)->opt.async)) {
		fprintf(stderr, "dlsim %s: --async '%s': expected driver, none or all\n", verb, v);
		return -1;
	}
	return 0;
}

static int opt_drivers(void *obj, const char *verb, const char *v)
{
	if (strcmp(v, "table") && strcmp(v, "all")) {
		fprintf(stderr, "dlsim %s: --drivers '%s': expected table or all\n", verb, v);
		return -1;
	}
	((struct dtb_args *)obj)->opt.drivers = !strcmp(v, "all") ? DL_DTB_DRIVERS_ALL
								   : DL_DTB_DRIVERS_TABLE;
	return 0;
}

/* FILE.dtb, whatever it looks like (after "--"); one only. */
static int opt_file(void *obj, const char *verb, const char *arg)
{
	struct dtb_args *a = obj;

	if (a->file) {
		fprintf(stderr, "dlsim %s: more than one file ('%s')\n", verb, arg);
		return -1;
	}
	a->file = arg;
	return 0;
}

/* An argument no row names: an unknown option, or FILE.dtb ("-" and a lone "--" are names). */
static int opt_other(void *obj, const char *verb, const char *arg)
{
	if (arg[0] == '-' && arg[1] && strcmp(arg, "--")) {
		fprintf(stderr, "dlsim %s: unknown option '%s'\n", verb, arg);
		import_usage(stderr);
		return -1;
	}
	return opt_file(obj, verb, arg);
}

static const struct cli_opt dtb_opts[] = {
	{ CLI_ACTION("--help", "-h", opt_help) },
	{ CLI_FN("--kernel", opt_kernel) },
	{ CLI_FN("--async", opt_async) },
	{ CLI_FN("--drivers", opt_drivers) },
};

static const struct cli_verb dtb_verb = {
	.name = "import-dtb", .opt = dtb_opts, .nopt = sizeof(dtb_opts) / sizeof(dtb_opts[0]),
	.other = opt_other, .after_dashdash = opt_file,
};

/* The scenario (JSON) to stdout: 0, or -1 (said). */
static int print_scenario(json_t *sc, const char *file)
{
	char *text = json_dumps(sc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (!text) {
		fprintf(stderr, "dlsim import-dtb: %s: out of memory\n", file);
		return -1;
	}
	if (puts(text) == EOF || fflush(stdout)) {
		fprintf(stderr, "dlsim import-dtb: writing stdout: %s\n", strerror(errno));
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/* What the import found and made, to stderr. */
static void print_stats(const char *file, const struct dl_dtb_opts *opt,
			const struct dl_dtb_stats *st)
{
	fprintf(stderr, "dlsim import-dtb: %s: %u nodes, %u devices, %u links: %u gate probe, "
		"%u SYNC_STATE_ONLY proxies, %u on cycles (CYCLE); %u early-initialised nodes, "
		"%u links to them not made\n",
		file, st->nodes, st->devices, st->links, st->blocking, st->proxy, st->cycle_links,
		st->early_nodes, st->early_dropped);
	fprintf(stderr, "dlsim import-dtb: %s: drivers (%s): %u of %u devices have one in the "
		"table, %u bind, %u never bind (%u not built), %u async; %u links relaxed to "
		"never-binding suppliers, %u child nodes not created\n",
		file, opt->kernel == DL_DTB_K73 ? "7.3" : "6.12", st->known_driver, st->devices,
		st->bound, st->never_bind, st->not_built, st->async_devices, st->relaxed,
		st->unpopulated);
}

int cmd_import_dtb(int argc, char **argv)
{
	struct dtb_args a = { .opt = { .kernel = DL_DTB_K612, .async = DL_DTB_ASYNC_DRIVER,
				       .drivers = DL_DTB_DRIVERS_TABLE } };
	struct dl_dtb_stats st;
	struct dl_error err;
	json_t *sc;
	int rc, ret;

	rc = cli_opts_parse(&dtb_verb, argc, argv, &a);
	if (rc)
		return rc > 0 ? DL_EXIT_OK : DL_EXIT_USAGE;
	if (!a.file) {
		import_usage(stderr);
		return DL_EXIT_USAGE;
	}
	memset(&err, 0, sizeof(err));
	/* measured latencies from the built-in atlas (out of memory: exit 2, never class guesses said nowhere) */
	a.opt.dev_hook = dl_atlas_dtb_hook;
	ret = dl_dtb_import_file_opts(a.file, &a.opt, &sc, &st, &err);
	if (ret) {
		fprintf(stderr, "dlsim import-dtb: %s\n", err.msg);
		return DL_EXIT_USAGE;
	}
	ret = print_scenario(sc, a.file);
	json_decref(sc);
	if (ret)
		return DL_EXIT_USAGE;
	print_stats(a.file, &a.opt, &st);
	return DL_EXIT_OK;
}
