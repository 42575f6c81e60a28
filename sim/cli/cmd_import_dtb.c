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

int cmd_import_dtb(int argc, char **argv)
{
	struct dl_dtb_opts opt = { .kernel = DL_DTB_K612, .async = DL_DTB_ASYNC_DRIVER,
				   .drivers = DL_DTB_DRIVERS_TABLE };
	struct dl_dtb_stats st;
	struct dl_error err;
	const char *file = NULL, *v;
	json_t *sc;
	char *text;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			import_usage(stdout);
			return DL_EXIT_OK;
		}
		if ((v = cli_opt_value(argc, argv, &i, "--kernel"))) {
			if (!*v) {
				fprintf(stderr, "dlsim import-dtb: --kernel needs a value\n");
				return DL_EXIT_USAGE;
			}
			if (dl_dtb_parse_kernel(v, &opt.kernel)) {
				fprintf(stderr, "dlsim import-dtb: --kernel '%s': expected 6.12 or 7.3\n", v);
				return DL_EXIT_USAGE;
			}
			continue;
		}
		if ((v = cli_opt_value(argc, argv, &i, "--async"))) {
			if (!*v) {
				fprintf(stderr, "dlsim import-dtb: --async needs a value\n");
				return DL_EXIT_USAGE;
			}
			if (dl_dtb_parse_async(v, &opt.async)) {
				fprintf(stderr, "dlsim import-dtb: --async '%s': expected driver, none or all\n",
					v);
				return DL_EXIT_USAGE;
			}
			continue;
		}
		if ((v = cli_opt_value(argc, argv, &i, "--drivers"))) {
			if (!strcmp(v, "table") || !strcmp(v, "all")) {
				opt.drivers = !strcmp(v, "all") ? DL_DTB_DRIVERS_ALL : DL_DTB_DRIVERS_TABLE;
			} else {
				fprintf(stderr, "dlsim import-dtb: --drivers '%s': expected table or all\n", v);
				return DL_EXIT_USAGE;
			}
			continue;
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
	/* measured latencies from the built-in atlas (out of memory: exit 2, never class guesses said nowhere) */
	opt.dev_hook = dl_atlas_dtb_hook;
	ret = dl_dtb_import_file_opts(file, &opt, &sc, &st, &err);
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
	fprintf(stderr, "dlsim import-dtb: %s: %u nodes, %u devices, %u links: %u gate probe, "
		"%u SYNC_STATE_ONLY proxies, %u on cycles (CYCLE); %u early-initialised nodes, "
		"%u links to them not made\n",
		file, st.nodes, st.devices, st.links, st.blocking, st.proxy, st.cycle_links,
		st.early_nodes, st.early_dropped);
	fprintf(stderr, "dlsim import-dtb: %s: drivers (%s): %u of %u devices have one in the "
		"table, %u bind, %u never bind (%u not built), %u async; %u links relaxed to "
		"never-binding suppliers, %u child nodes not created\n",
		file, opt.kernel == DL_DTB_K73 ? "7.3" : "6.12", st.known_driver, st.devices,
		st.bound, st.never_bind, st.not_built, st.async_devices, st.relaxed,
		st.unpopulated);
	return DL_EXIT_OK;
}
