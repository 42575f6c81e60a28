/*
 * fuzz_dtb.c - libFuzzer harness for the DTB importer (dl_dtb_import():
 * libfdt walk, phandle properties, fw_devlink's links, the scenario JSON).
 */
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "sim/scenario/dtb_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dl_dtb_stats st;
	struct dl_error err;
	json_t *out = NULL;

	/* both versions' parsers, the async and driver modes, chosen by the input's length */
	struct dl_dtb_opts opt = { .kernel = size & 1 ? DL_DTB_K73 : DL_DTB_K612,
				   .async = (enum dl_dtb_async)((size >> 1) % 3),
				   .drivers = (size & 8) ? DL_DTB_DRIVERS_ALL : DL_DTB_DRIVERS_TABLE };

	if (dl_dtb_import_opts(data, size, "fuzz.dtb", &opt, &out, &st, &err) == 0) {
		char *s = json_dumps(out, JSON_COMPACT);      /* what import-dtb prints */

		free(s);
	}
	json_decref(out);
	return 0;
}
