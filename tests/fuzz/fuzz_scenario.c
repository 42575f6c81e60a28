/*
 * fuzz_scenario.c - libFuzzer harness for the scenario loader
 * (dl_scenario_load(): Jansson parse, validation, generators).
 *
 * The input is a scenario file.  The loader takes a path, so the bytes go to
 * a memfd read back as /proc/self/fd/N (no disk, no fork).  Inputs whose
 * generators would build more than a few thousand devices are skipped: their
 * cost is the generators' by design (bounded by DL_SC_MAX_DEVICES), not a bug
 * a fuzzer finds by running them slowly.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "sim/scenario/scenario.h"

#define FUZZ_MAX_INPUT (256u << 10)
#define FUZZ_MAX_SIZE 2000.0     /* largest count a generator may be asked for */
#define FUZZ_MAX_FANIN 8.0       /* suppliers_per_device, cross_links */

static int fd = -1;
static char path[64];

/* 1 if any number under a generator key asks for a large graph. */
static int too_big(json_t *v, const char *key)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_number(v) && key) {
		double d = json_number_value(v);
		double max = !strcmp(key, "suppliers_per_device") || !strcmp(key, "cross_links") ?
			     FUZZ_MAX_FANIN : FUZZ_MAX_SIZE;

		return d > max || d < -max;
	}
	if (json_is_object(v)) {
		json_object_foreach(v, k, x)
			if (too_big(x, k))
				return 1;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (too_big(x, key))
				return 1;
	} else if (json_is_string(v) && key && (!strcmp(key, "devices") || !strcmp(key, "value"))) {
		return 1;       /* --set style strings that parse as numbers */
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dl_scenario *sc = NULL;
	struct dl_error err;
	json_t *root;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (fd < 0) {
		fd = memfd_create("fuzz-scenario", 0);
		if (fd < 0)
			return 0;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	root = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (root && too_big(root, NULL)) {
		json_decref(root);
		return 0;
	}
	json_decref(root);
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (dl_scenario_load(path, NULL, 0, NULL, &sc, &err) == 0)
		dl_scenario_free(sc);
	return 0;
}
