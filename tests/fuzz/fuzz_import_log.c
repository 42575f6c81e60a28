/*
 * fuzz_import_log.c - libFuzzer harness for `dlsim import-log`'s reader
 * (sim/measure/log_import.c): dmesg with initcall_debug / pm_print_times,
 * ftrace device_pm_callback_* and suspend_resume lines, totals, failures,
 * then the scenario it makes (all cycles; the first cycle with its gaps).
 * Seeds: the real logs of ../shared/real/ (read from there, never copied).
 */
#include <stdint.h>

#include <jansson.h>

#include "sim/measure/log_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dl_logimport li;
	struct dl_error err;

	dl_log_init(&li);
	if (dl_log_read_buf(&li, "fuzz.log", (const char *)data, size, &err) == 0 &&
	    dl_log_finish(&li) == 0) {
		json_decref(dl_log_scenario(&li, DL_LG_NONE, false, "fuzz"));
		json_decref(dl_log_scenario(&li, 0, true, "fuzz"));
	}
	dl_log_free(&li);
	return 0;
}
