/*
 * dtb_import.h - derive a scenario from a flattened device tree (DTB) the way
 * fw_devlink derives device links (shared/LINK-CORE.md "fw_devlink").
 * Parsing is done with libfdt only; nothing here prints.
 */
#ifndef DL_DTB_IMPORT_H
#define DL_DTB_IMPORT_H

#include <stddef.h>

#include <jansson.h>

#include "sim/scenario/scenario.h"

/* Refused beyond these (hostile input must not exhaust memory or time). */
#define DL_DTB_MAX_FILE  (64u << 20)	/* bytes */
#define DL_DTB_MAX_NODES 1000000u
#define DL_DTB_MAX_DEPTH 64		/* node nesting */
#define DL_DTB_MAX_ARGS  16		/* #xxx-cells, like the kernel's MAX_PHANDLE_ARGS */

struct dl_dtb_stats {
	unsigned nodes, devices, links, cycle_links;
};

/**
 * dl_dtb_import() - build a scenario JSON object from the DTB @blob of @len bytes.
 * @label: the file name, for messages and the fallback scenario name.
 * Return: 0 and *@out (json_decref() it); -EINVAL (malformed DTB, @err says
 * why) or -ENOMEM.  @st may be NULL.
 */
int dl_dtb_import(const void *blob, size_t len, const char *label, json_t **out,
		  struct dl_dtb_stats *st, struct dl_error *err);

/* Read @path (at most DL_DTB_MAX_FILE bytes) and dl_dtb_import() it; -ENOENT etc. */
int dl_dtb_import_file(const char *path, json_t **out, struct dl_dtb_stats *st,
		       struct dl_error *err);

#endif
