/*
 * sc_internal.h - what the files of sim/scenario/ share: the builder that
 * grows a dl_scenario (arrays, name arena, name hash) and the JSON helpers
 * that turn a bad value into a "FILE: key.path: ...; expected ..." error.
 */
#ifndef DL_SC_INTERNAL_H
#define DL_SC_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "sim/scenario/scenario.h"

struct sc_build {
	struct dl_scenario *s;
	struct dl_error *err;
	const char *file;
	uint32_t cap_dev, cap_link, cap_prof, cap_op, cap_fault;
	size_t names_cap;
	uint32_t *hash;		/* open addressing: device index + 1, 0 = empty */
	uint32_t hash_mask;
	const struct dl_override *ov;	/* to tell "--set" values in messages */
	json_t *root;			/* the file, to name the device of a message */
	const char *src;		/* the file's path, to locate a value; NULL: not from a file */
	size_t nov;
};

/*
 * sc_locate() - the line and column (1-based) in TEXT of the value at PATH
 * ("devices[5].parent"), TEXT being valid JSON.  Return: 0, or -1 if the
 * path is not in the text.
 */
int sc_locate(const char *text, size_t len, const char *path, unsigned *line, unsigned *col);

/* Fill b->err with "FILE:LINE:COL: PATH (its device): what" and return -EINVAL. */
int sc_fail(struct sc_build *b, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int sc_nomem(struct sc_build *b);
/* snprintf() for key paths: a path cut short only shortens a message. */
void sc_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Reserve room for @n more devices/links (amortised doubling). */
int sc_reserve_devices(struct sc_build *b, uint32_t n);
int sc_reserve_links(struct sc_build *b, uint32_t n);
/* Append a device; its name must not exist yet.  Return index or negative. */
int64_t sc_add_device(struct sc_build *b, const char *path, const char *name, size_t len,
		      uint32_t parent, uint32_t profile, bool async, bool hotplug);
int sc_add_link(struct sc_build *b, uint32_t consumer, uint32_t supplier, uint32_t flags);
uint32_t sc_lookup(const struct sc_build *b, const char *name);
void sc_build_fini(struct sc_build *b);

/* JSON helpers: return 0 or sc_fail(). */
int sc_check_keys(struct sc_build *b, const char *path, json_t *obj,
		  const char *const *allowed);
int sc_get_uint(struct sc_build *b, const char *path, json_t *v, uint64_t max,
		uint64_t *out);
int sc_get_real(struct sc_build *b, const char *path, json_t *v, double lo, double hi,
		double *out);
int sc_get_bool(struct sc_build *b, const char *path, json_t *v, bool *out);
int sc_parse_duration(struct sc_build *b, const char *path, json_t *v, int64_t *out);

/* Expand the "generate" object (sc_gen.c). */
int sc_generate(struct sc_build *b, json_t *gen, uint64_t seed, bool async);

#endif
