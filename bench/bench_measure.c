/*
 * bench_measure.c - import-log and advise (issue "Real measurements in,
 * advice out"; targets: a 10 MB log in <= 1 s, advise --top 20 of a
 * 500-device scenario in <= 10 s on one core).
 *
 * BM_import_log/MB: parse a synthetic initcall_debug log of about MB
 * megabytes (cycles of 1,000 devices: calling/returned pairs of six phases
 * in the modern format with [Tn] prefixes, and their total lines), find the
 * main threads, gaps and order, and write the scenario JSON:
 * bytes_per_second, and lines/s as items.
 * BM_advise/N: dl_advise() on default.json at N devices under
 * kernel-async-v2: items = re-simulations, counter resims per run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_common.h"
#include "sim/advise/advise.h"
#include "sim/measure/log_import.h"

#define LOG_DEVICES 1000

/* A log of at least @mb megabytes; *lines and *ncb receive its lines and callbacks. */
static char *synth_log(int64_t mb, size_t *len, int64_t *lines, int64_t *ncb)
{
	static const char *const phase[6][2] = {
		{ "platform_pm_suspend", "suspend" }, { "platform_pm_suspend_late", "late suspend" },
		{ "genpd_suspend_noirq", "noirq suspend" }, { "genpd_resume_noirq", "noirq resume" },
		{ "platform_pm_resume_early", "early resume" }, { "platform_pm_resume", "resume" },
	};
	size_t cap = (size_t)mb * 1048576 + 65536, n = 0;
	char *buf = malloc(cap);
	double t = 100.0;

	*lines = *ncb = 0;
	if (!buf)
		return NULL;
	while (n < (size_t)mb * 1048576) {
		n += (size_t)snprintf(buf + n, cap - n, "[%12.6f][T4242] PM: suspend entry (deep)\n", t);
		(*lines)++;
		for (int p = 0; p < 6 && n + 400 * LOG_DEVICES < cap; p++) {
			for (int d = 0; d < LOG_DEVICES; d++) {
				int dev = p < 3 ? LOG_DEVICES - 1 - d : d;
				unsigned us = (unsigned)(dev * 7 % 300);

				n += (size_t)snprintf(buf + n, cap - n,
						      "[%12.6f][T4242] soc-drv %x.dev-%d: PM: calling %s @ 4242, "
						      "parent: %x.bus-%d\n", t, dev, dev, phase[p][0],
						      dev / 16, dev / 16);
				t += 0.000010;
				n += (size_t)snprintf(buf + n, cap - n,
						      "[%12.6f][T4242] soc-drv %x.dev-%d: PM: %s returned 0 after "
						      "%u usecs\n", t + us * 1e-6, dev, dev, phase[p][0], us);
				t += 0.000010 + us * 1e-6;
				*lines += 2;
				(*ncb)++;
			}
			n += (size_t)snprintf(buf + n, cap - n, "[%12.6f][T4242] PM: %s of devices complete "
					      "after 123.456 msecs\n", t, phase[p][1]);
			(*lines)++;
		}
	}
	*len = n;
	return buf;
}

static void bm_import_log(struct bm_state *st)
{
	int64_t lines, ncb;
	size_t len;
	char *buf = synth_log(bm_range(st, 0), &len, &lines, &ncb);

	if (!buf) {
		bm_skip(st, "out of memory");
		return;
	}
	while (bm_keep_running(st)) {
		struct dl_logimport li;
		struct dl_error err;
		json_t *sc;

		dl_log_init(&li);
		if (dl_log_read_buf(&li, "synthetic", buf, len, &err) || dl_log_finish(&li) ||
		    li.nsmp != (uint32_t)ncb || li.skipped != li.matched[DL_LG_MARKER] ||
		    !(sc = dl_log_scenario(&li, DL_LG_NONE, false, "synthetic"))) {
			dl_log_free(&li);
			bm_skip(st, "the synthetic log did not import whole");
			break;
		}
		json_decref(sc);
		dl_log_free(&li);
	}
	bm_set_items(st, lines * bm_iterations(st));
	bm_counter_rate(st, "bytes_per_second", (double)len * (double)bm_iterations(st));
	free(buf);
}

static void bm_advise(struct bm_state *st)
{
	const struct dl_scenario *sc = bench_default_scenario((uint32_t)bm_range(st, 0));
	struct dl_advise_opts o = { .order = DL_ORDER_KERNEL_ASYNC_V2 };
	int64_t resims = 0;

	if (!sc) {
		bm_skip(st, "no scenario");
		return;
	}
	while (bm_keep_running(st)) {
		struct dl_advise_result res;

		if (dl_advise(sc, &o, &res)) {
			bm_skip(st, "dl_advise failed");
			break;
		}
		resims = (int64_t)res.resims;
		free(res.adv);
	}
	bm_set_items(st, resims * bm_iterations(st));
	bm_counter(st, "resims", (double)resims);
}

void bm_register_measure(void)
{
	static const int64_t mb[] = { 10 }, n500[] = { 500 };

	bm_register("BM_import_log", bm_import_log, 0, mb, 1, 'm');
	bm_register("BM_advise", bm_advise, 0, n500, 1, 'm');
}
