/*
 * atlas.h - the latency atlas: how long real drivers' callbacks take, per
 * driver (and per subsystem, as a fallback) and per phase, each figure with
 * the real log and line range it came from.
 *
 * Built from the logs of shared/real by import-log's parser (dl_atlas_build(),
 * `dlsim atlas --regen DIR`), written as JSON and committed as
 * sim/measure/atlas.json, which the build embeds in the program (no log is
 * ever copied into the tree: only the derived numbers).  import-dtb draws
 * each device's latencies from it (dl_atlas_apply()):
 *
 *   1. the device's driver, if the atlas has that phase for it;
 *   2. else its subsystem: the stem of its node name ("i2c@10d50000" and the
 *      platform device "10d50000.i2c" are both "i2c"), or the stem's last or
 *      first word ("vcc5v0-sys-regulator": "regulator"), if the atlas has it;
 *   3. else the scenario's own value (import-dtb's class guess, or none).
 *
 * A figure is the median of the successful callbacks logged (p90 beside it);
 * the scenario gets the median, fixed.  Nothing here prints.
 */
#ifndef DL_ATLAS_H
#define DL_ATLAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sim/scenario/scenario.h"

#define DL_ATLAS_FORMAT "dlsim-atlas/1"
#define DL_ATLAS_STEM_MAX 48		/* longest subsystem stem kept */
#define DL_ATLAS_MAX_FILE (16u << 20)	/* bytes of an atlas file */

enum dl_atlas_kind { DL_ATLAS_DRIVER, DL_ATLAS_SUBSYSTEM };

/* One log's share of a figure: its lines first..last, n callbacks. */
struct dl_atlas_from {
	uint32_t log;			/* index into dl_atlas.logs */
	uint32_t first, last, n;
};

/* One phase of one driver or subsystem. */
struct dl_atlas_stat {
	uint32_t n;			/* 0: the atlas knows nothing of this phase */
	int64_t median_ns, p90_ns;
	struct dl_atlas_from *from;
	uint32_t nfrom;
};

struct dl_atlas_entry {
	char *name;
	enum dl_atlas_kind kind;
	struct dl_atlas_stat ph[DL_LAT_COUNT];
};

struct dl_atlas {
	char **logs;			/* log file names (base names) */
	uint32_t nlogs;
	struct dl_atlas_entry *e;	/* by (kind, name): dl_atlas_find() bisects */
	uint32_t n;
};

/* The logs of shared/real the atlas is built from, and what each gives. */
struct dl_atlas_log {
	const char *file, *what;
};
extern const struct dl_atlas_log dl_atlas_logs[];
extern const size_t dl_atlas_nlogs;

/**
 * dl_atlas_build() - read the logs of dl_atlas_logs[] from directory @dir
 * (import-log's parser) and return the atlas as JSON in *@out.
 * Return: 0; -ENOENT/-EIO/-ENODATA (a log cannot be read or has no callback:
 * @err names it), -ENOMEM.
 */
int dl_atlas_build(const char *dir, json_t **out, struct dl_error *err);

/**
 * dl_atlas_load() - the atlas of the JSON @j (what dl_atlas_build() writes);
 * @label names it in @err.  Return: 0; -EINVAL (not an atlas: @err says
 * where), -ENOMEM.  dl_atlas_free() it.
 */
int dl_atlas_load(const json_t *j, const char *label, struct dl_atlas *a, struct dl_error *err);
/* The same from the file @path: errors name its line and column.  -ENOENT, -EIO too. */
int dl_atlas_load_file(const char *path, struct dl_atlas *a, struct dl_error *err);
void dl_atlas_free(struct dl_atlas *a);

/*
 * dl_atlas_builtin() - the committed atlas (sim/measure/atlas.json, embedded
 * at build time), parsed once per process and never freed; NULL if it could
 * not be (out of memory, or a build without it).  Safe from any thread.
 */
const struct dl_atlas *dl_atlas_builtin(void);

/* The entry of @kind named @name, or NULL. */
const struct dl_atlas_entry *dl_atlas_find(const struct dl_atlas *a, enum dl_atlas_kind kind,
					   const char *name);

/*
 * dl_atlas_stem() - the subsystem of a device or node name into @buf: the
 * node name of a platform device ("fd7c0000.clock-controller"), the part
 * before '@' ("i2c@fec80000"), then without a trailing number ("i2c-8",
 * "spi11"), lower case.  Return: its length, 0 when the name has none
 * (bus addresses like "0000:00:1f.2", one letter).
 */
size_t dl_atlas_stem(const char *name, char *buf, size_t len);

/**
 * dl_atlas_lookup() - the figure for phase @key of a device bound by
 * @driver (NULL: unknown) whose node or device name is @node: the driver's,
 * else the subsystem's (the stem of @node).  *@via (may be NULL) gets the
 * entry it came from.  Return: the figure, or NULL when the atlas has none.
 */
const struct dl_atlas_stat *dl_atlas_lookup(const struct dl_atlas *a, const char *driver,
					    const char *node, enum dl_lat_key key,
					    const struct dl_atlas_entry **via);

/**
 * dl_atlas_apply() - give the scenario device @dev (a JSON object) the
 * atlas's figure for every phase it has one of (dl_atlas_lookup()), and an
 * "x-latency" object saying per phase where each came from.  Phases the atlas
 * does not know keep @dev's own values.  Return: 0 or -ENOMEM.
 */
int dl_atlas_apply(const struct dl_atlas *a, const char *driver, const char *node, json_t *dev);

/*
 * dl_atlas_dtb_hook() - dl_dtb_opts.dev_hook for import-dtb and sweep --dtbs:
 * dl_atlas_apply() of the atlas @ctx (NULL: dl_atlas_builtin(), parsed on the
 * first device that binds, so that a run without a DTB never pays for it)
 * to the imported device @dev, by its driver and its "name" (the node
 * path).  Return: 0 or -ENOMEM.
 */
int dl_atlas_dtb_hook(void *ctx, const char *driver, const char *compat, json_t *dev);

#endif
