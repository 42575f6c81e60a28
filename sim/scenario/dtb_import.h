/*
 * dtb_import.h - derive a scenario from a flattened device tree (DTB) the way
 * fw_devlink derives device links (shared/LINK-CORE.md "fw_devlink").
 * Parsing is done with libfdt only; nothing here prints.
 */
#ifndef DL_DTB_IMPORT_H
#define DL_DTB_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "sim/scenario/scenario.h"

/* Refused beyond these (hostile input must not exhaust memory or time). */
#define DL_DTB_MAX_FILE  (64u << 20)	/* bytes */
#define DL_DTB_MAX_NODES 1000000u
#define DL_DTB_MAX_DEPTH 64		/* node nesting */
#define DL_DTB_MAX_ARGS  16		/* #xxx-cells, like the kernel's MAX_PHANDLE_ARGS */

/* Which kernel's fw_devlink rules (drivers/of/property.c differs). */
enum dl_dtb_kernel {
	DL_DTB_K612,	/* Debian 12's 6.12: pinctrl-0..pinctrl-8 only */
	DL_DTB_K73,	/* Debian 13 backports' 7.3: any pinctrl-N, mmc-pwrseq */
};

struct dl_dtb_opts {
	enum dl_dtb_kernel kernel;	/* default DL_DTB_K612 */
	bool async;	/* device_enable_async_suspend() on every device; default false */
};

struct dl_dtb_stats {
	unsigned nodes, devices, links, cycle_links;
	unsigned blocking;	/* own-node links with the default flags: they gate probe */
	unsigned proxy;		/* SYNC_STATE_ONLY proxies for properties of non-device nodes */
	unsigned early_nodes;	/* nodes initialised before the driver model (*_OF_DECLARE) */
	unsigned early_dropped;	/* links not made because the supplier was early */
};

/**
 * dl_dtb_import() - build a scenario JSON object from the DTB @blob of @len bytes.
 * @label: the file name, for messages and the fallback scenario name.
 * Return: 0 and *@out (json_decref() it); -EINVAL (malformed DTB, @err says
 * why) or -ENOMEM.  @st may be NULL.
 */
int dl_dtb_import(const void *blob, size_t len, const char *label, json_t **out,
		  struct dl_dtb_stats *st, struct dl_error *err);

/* dl_dtb_import() with options; @opt NULL means the defaults (6.12, all sync). */
int dl_dtb_import_opts(const void *blob, size_t len, const char *label,
		       const struct dl_dtb_opts *opt, json_t **out, struct dl_dtb_stats *st,
		       struct dl_error *err);

/*
 * How 6.12 initialises a node with compatible @compat before the driver model
 * (sim/scenario/dtb_early.inc, generated from the kernel source by
 * gen-dtb-early.sh): a mask of these bits, 0 when it does not.
 */
enum {
	DL_DTB_EARLY_IRQCHIP    = 1u << 0,	/* IRQCHIP_DECLARE: of_irq_init() */
	DL_DTB_EARLY_CLK        = 1u << 1,	/* CLK_OF_DECLARE: of_clk_init() */
	DL_DTB_EARLY_CLK_DRIVER = 1u << 2,	/* CLK_OF_DECLARE_DRIVER: also a device later */
};
unsigned dl_dtb_early_compat(const char *compat);

/* Read @path (at most DL_DTB_MAX_FILE bytes) and dl_dtb_import() it; -ENOENT etc. */
int dl_dtb_import_file(const char *path, json_t **out, struct dl_dtb_stats *st,
		       struct dl_error *err);
int dl_dtb_import_file_opts(const char *path, const struct dl_dtb_opts *opt, json_t **out,
			    struct dl_dtb_stats *st, struct dl_error *err);

#endif
