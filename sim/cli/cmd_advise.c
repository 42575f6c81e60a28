/*
 * cmd_advise.c - `dlsim advise SCENARIO [--order O] [--top N]`: the single
 * changes that save the most makespan, found by re-simulation (sim/advise/).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "sim/advise/advise.h"
#include "sim/advise/verify.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_opts.h"
#include "sim/engine/cost.h"
#include "sim/log/dl_advice_log.h"
#include "sim/log/dl_log.h"
#include "sim/run/dl_run.h"

#define ADV_MAX_SET 64
#define ADV_TEXT_MAX 8192	/* a change described, names whole (a chain of long names) */

static void advise_usage(FILE *f)
{
	fprintf(f, "usage: dlsim advise SCENARIO [--order O] [--top N] [--workers K] [--by OP]\n"
		   "                    [--research] [--json] [--jobs N] [--seed N] [--set KEY=VALUE]...\n"
		   "                    [--profile P] [--probe-context C]\n"
		   "                    [--verify N [--kernel V] [--kernel-timeout S] [--boots B]]\n\n"
		   "Simulate the scenario (DES) as it is, then once per change, and rank the\n"
		   "changes by the makespan they save (baseline minus changed, per op of the script\n"
		   "and in total; negative: the change costs time).  By default only changes a\n"
		   "kernel engineer can make:\n"
		   "  make X async        each sync device with a latency: its driver calls\n"
		   "                      device_enable_async_suspend()\n"
		   "  make X and its parent P async, make the chain X, P, ... async\n"
		   "                      a sync device with its sync parent, or with all its sync\n"
		   "                      ancestors, where neither alone saves 1%% of the run\n"
		   "  make X and its N sync descendants async   each sync device with sync children\n"
		   "  make every device async\n"
		   "  halve X's latencies every device with a latency (its driver twice as fast)\n"
		   "  upgrade the kernel  kernel-async (classic, up to 6.15) -> kernel-async-v2\n"
		   "  drop link S -> C    every link; UNSAFE: it removes an ordering guarantee the\n"
		   "                      kernel relies on, so only worth it where the dependency is\n"
		   "                      known to be spurious\n"
		   "--research adds what no kernel offers: the orders levels and cp-first, and 2K\n"
		   "CPUs (another machine).\n\n"
		   "The baseline is the scenario's own: its async flags; the order kernel-async\n"
		   "(run's default), or for a scenario from import-log, the log's: every device\n"
		   "without an async flag sync (the kernel's default), sync when no device ran\n"
		   "async, else kernel-async; K: cost.cpus, else the order's default.  A sync\n"
		   "baseline is simulated as kernel-async with every device sync (the same run),\n"
		   "so that a device can be made async.\n\n"
		   "  --order O       the order of the baseline instead\n"
		   "  --top N         rows to print (default 20; 0: all)\n"
		   "  --by OP         rank by one op's saving (probe, suspend, resume) instead of the total\n"
		   "  --workers K     CPUs of the baseline (default: cost.cpus, else the order's)\n"
		   "  --research      also the changes no kernel offers (orders, CPUs)\n"
		   "  --json          one JSON object on stdout\n"
		   "  --jobs N        threads that run the re-simulations, a copy of the scenario\n"
		   "                  each (default: the cores, at most %d); the ranking is the same\n"
		   "                  on any number\n"
		   "  --db PATH       also keep the ranking (the --top rows) in PATH's table advice,\n"
		   "                  for the report of that database\n"
		   "  --seed N, --set KEY=VALUE  as for run (dev.NAME.KEY, defaults.KEY, cost.KEY too)\n"
		   "  --profile P, --probe-context C  as for run: the cost model's defaults\n"
		   "                  (hardware, or guest: the TCG guest of --mode kernel) and probe\n"
		   "                  at boot or as a module loaded after it (kernel mode's way)\n"
		   "  --verify N      play the baseline and the first N changes of the ranking on a\n"
		   "                  real kernel (--mode kernel, QEMU; one boot per kernel) and print\n"
		   "                  beside each predicted saving the kernel's.  The baseline runs\n"
		   "                  before and after each change; a saving is measured against the\n"
		   "                  two either side; the largest difference between two baselines\n"
		   "                  in a row is the kernel's spread.  A row is flagged '!' when the\n"
		   "                  kernel's total saving is off the prediction by more than 10%%\n"
		   "                  of it or the spread, whichever is larger.  Changes the guest\n"
		   "                  cannot play (more CPUs, orders no kernel has) say so on their\n"
		   "                  row.  The upgrade to kernel-async-v2 runs on 7.3, a second boot.\n"
		   "  --kernel V      the baseline's kernel for --verify: 6.12 or 7.3 (default: the\n"
		   "                  first that has the baseline's order)\n"
		   "  --kernel-timeout S  --verify: kill a guest after S seconds (default: scaled)\n"
		   "  --boots B       --verify: B rounds of boots (default 1); the savings are the\n"
		   "                  means over them, the spread also the baseline's mean from\n"
		   "                  boot to boot\n\n"
		   "Ctrl-C stops within the re-simulation or the boot under way and ranks what was\n"
		   "simulated (no kernel column after a stopped boot).\n\n"
		   "exit status: 0 success, 2 bad usage or input, 130 interrupted (the changes\n"
		   "simulated until then are printed)\n", DL_ADVISE_MAX_JOBS);
}

/* qsort_r(): advice by the time it saves in op *@ctx, then as dl_advise() ranks it. */
static int cmp_by_op(const void *x, const void *y, void *ctx)
{
	const struct dl_advice *a = x, *b = y;
	int op = *(const int *)ctx;
	int64_t sa = a->saved_ns[op], sb = b->saved_ns[op];

	if (a->overflowed != b->overflowed)
		return a->overflowed ? 1 : -1;   /* no figure to rank by: last */
	if (sa != sb)
		return sa > sb ? -1 : 1;
	return dl_advice_cmp(a, b);   /* then as ranked: a total order, whatever qsort_r() does */
}

static const char *kind_name(unsigned k)
{
	static const char *const names[DL_ADV_KIND_COUNT] = {
		"async", "halve", "order", "cpus", "drop_link", "async_pair", "async_chain",
		"async_subtree", "async_all", "upgrade",
	};

	return k < DL_ADV_KIND_COUNT ? names[k] : "?";
}

/* How the baseline was chosen, for the header. */
struct baseline {
	enum dl_order order;
	const char *why;	/* "--order", "the log's", "run's default" */
	bool all_sync;		/* every device sync (sync, or a log that ran so) */
	bool cpus_given;	/* --workers or cost.cpus */
	bool guest_like;	/* --profile guest --probe-context module: as kernel mode runs */
	const char *profile;	/* --profile */
	bool probe_module;	/* --probe-context module */
};

/* Why a change is failed with no figures (dl_advice.overflowed). */
#define OVERFLOWED "its run passed 2^62 ns of virtual time"

/* --verify: the kernel's word on change @i, or NULL past the rows verified. */
static json_t *verify_json_row(const struct dl_advise_result *res, const struct dl_verify_result *vr,
			       uint32_t i)
{
	const struct dl_verify_row *v = &vr->row[i];
	json_t *k = json_object(), *saved;
	char lab[32];

	if (!k)
		return NULL;
	json_object_set_new(k, "ran", json_boolean(v->ran));
	if (v->why[0])
		json_object_set_new(k, "why", json_string(v->why));
	if (!v->ran)
		return k;
	json_object_set_new(k, "kernel", json_string(v->kernel));
	json_object_set_new(k, "saved_ns", saved = json_object());
	for (uint32_t op = 0; op < res->base.nops; op++)
		json_object_set_new(saved, cli_op_key(&res->base, op, lab, sizeof(lab)),
				    json_integer(v->saved_ns[op]));
	json_object_set_new(k, "total_saved_ns", json_integer(v->total_saved_ns));
	json_object_set_new(k, "off_ns", json_integer(v->off_ns));
	json_object_set_new(k, "tolerance_ns", json_integer(v->tolerance_ns));
	json_object_set_new(k, "flagged", json_boolean(v->flagged));
	return k;
}

/* --verify: the kernel's baseline, twice, and how rows are flagged. */
static json_t *verify_json(const struct dl_advise_result *res, const struct dl_verify_result *vr)
{
	json_t *o = json_object(), *runs = json_array(), *mean = json_object();
	char lab[32];

	if (!o || !runs || !mean) {
		json_decref(runs);
		json_decref(mean);
		return o;
	}
	json_object_set_new(o, "kernel", json_string(vr->kernel));
	json_object_set_new(o, "release", json_string(vr->release));
	json_object_set_new(o, "boots", json_integer(vr->boots));
	json_object_set_new(o, "runs", json_integer(vr->runs));
	json_object_set_new(o, "boot_wall_ns", json_integer(vr->boot_wall_ns));
	json_object_set_new(o, "baseline_runs", runs);
	for (uint32_t b = 0; b < vr->nbase; b++) {
		json_t *m = json_object();

		json_array_append_new(runs, m);
		for (uint32_t i = 0; m && i < res->base.nops; i++)
			json_object_set_new(m, cli_op_key(&res->base, i, lab, sizeof(lab)),
					    json_integer(i < vr->base[b].nops ?
							 vr->base[b].op[i].makespan_ns : 0));
	}
	json_object_set_new(o, "baseline_makespan_ns", mean);
	for (uint32_t i = 0; i < res->base.nops; i++)
		json_object_set_new(mean, cli_op_key(&res->base, i, lab, sizeof(lab)),
				    json_integer(vr->base_ns[i]));
	json_object_set_new(o, "spread_ns", json_integer(vr->spread_ns));
	json_object_set_new(o, "spread_from", json_string("the baseline runs before and after"
		" each change: the largest difference between two in a row, or between the boots'"
		" means"));
	json_object_set_new(o, "tolerance_pct", json_integer(DL_VERIFY_TOLERANCE_PCT));
	json_object_set_new(o, "changes_verified", json_integer(vr->nrow));
	return o;
}

static int print_json(const struct dl_scenario *sc, const struct dl_advise_result *res,
		      const struct baseline *bl, bool research, uint32_t top,
		      const struct dl_verify_result *vr)
{
	json_t *o = json_object(), *base = json_object(), *arr = json_array();
	char lab[32], what[ADV_TEXT_MAX];
	char *text;

	if (!o || !base || !arr)
		return DL_EXIT_USAGE;
	json_object_set_new(o, "scenario", json_string(sc->name));
	json_object_set_new(o, "order", json_string(dl_order_name(bl->order)));
	json_object_set_new(o, "order_from", json_string(bl->why));
	json_object_set_new(o, "simulated_order", json_string(dl_order_name(res->order)));
	json_object_set_new(o, "all_sync", json_boolean(bl->all_sync));
	json_object_set_new(o, "workers", json_integer(res->workers));
	json_object_set_new(o, "profile", json_string(bl->profile));
	json_object_set_new(o, "probe_context", json_string(bl->probe_module ? "module" : "boot"));
	json_object_set_new(o, "research", json_boolean(research));
	json_object_set_new(o, "interrupted", json_boolean(res->interrupted));
	json_object_set_new(o, "resimulations", json_integer((json_int_t)res->resims));
	json_object_set_new(o, "wall_ns", json_integer(res->wall_ns));
	json_object_set_new(o, "baseline_makespan_ns", base);
	for (uint32_t i = 0; i < res->base.nops; i++)
		json_object_set_new(base, cli_op_key(&res->base, i, lab, sizeof(lab)),
				    json_integer(res->base.op[i].makespan_ns));
	if (vr)
		json_object_set_new(o, "verify", verify_json(res, vr));
	json_object_set_new(o, "changes", arr);
	for (uint32_t i = 0; i < res->nadv && (!top || i < top); i++) {
		const struct dl_advice *a = &res->adv[i];
		json_t *c = json_object(), *saved = json_object();

		if (!c || !saved || json_array_append_new(arr, c)) {
			json_decref(saved);
			break;
		}
		dl_advice_describe(sc, a, what, sizeof(what));
		json_object_set_new(c, "rank", json_integer(i + 1));
		json_object_set_new(c, "kind", json_string(kind_name(a->kind)));
		json_object_set_new(c, "change", json_string(what));
		if (a->dev != DL_SC_NONE)
			json_object_set_new(c, a->kind == DL_ADV_DROP_LINK ? "consumer" : "device",
					    json_string(dl_sc_name(sc, a->dev)));
		if (a->kind == DL_ADV_DROP_LINK)
			json_object_set_new(c, "supplier", json_string(dl_sc_name(sc, a->dev2)));
		if (a->kind == DL_ADV_ASYNC_PAIR || a->kind == DL_ADV_ASYNC_CHAIN) {
			json_t *devs = json_array();
			uint32_t d = a->dev;

			for (uint32_t k = 0; k < a->n && d != DL_SC_NONE; k++, d = sc->dev[d].parent)
				json_array_append_new(devs, json_string(dl_sc_name(sc, d)));
			json_object_set_new(c, "devices", devs);
		}
		if (a->n)
			json_object_set_new(c, "async_devices", json_integer(a->n));
		if (a->kind == DL_ADV_ORDER || a->kind == DL_ADV_UPGRADE)
			json_object_set_new(c, "to_order", json_string(dl_order_name(a->order)));
		if (a->kind == DL_ADV_CPUS)
			json_object_set_new(c, "cpus", json_integer(a->cpus));
		json_object_set_new(c, "unsafe", json_boolean(a->unsafe));
		json_object_set_new(c, "research", json_boolean(a->research));
		json_object_set_new(c, "status", json_string(a->status ? a->status : "?"));
		if (a->overflowed)
			json_object_set_new(c, "why", json_string(OVERFLOWED));
		json_object_set_new(c, "saved_ns", saved);
		/* no makespan, no saving: null, not 0 (which reads "saves nothing") */
		for (uint32_t k = 0; k < res->base.nops; k++)
			json_object_set_new(saved, cli_op_key(&res->base, k, lab, sizeof(lab)),
					    a->overflowed ? json_null() : json_integer(a->saved_ns[k]));
		json_object_set_new(c, "total_saved_ns", a->overflowed ? json_null() :
				    json_integer(a->total_saved_ns));
		if (vr && i < vr->nrow)
			json_object_set_new(c, "kernel", verify_json_row(res, vr, i));
	}
	text = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!text || puts(text) == EOF) {
		free(text);
		return DL_EXIT_USAGE;
	}
	free(text);
	return DL_EXIT_OK;
}

/* --verify: the kernel's baseline and spread, said once above the table. */
static void print_verify_head(const struct dl_advise_result *res, const struct dl_verify_result *vr,
			      bool guest_like)
{
	char lab[32];

	printf("verified on kernel %s (%s): %u boot%s, %u runs, %.1f s; kernel baseline (mean of"
	       " %u):", vr->kernel, vr->release[0] ? vr->release : "?", vr->boots,
	       vr->boots == 1 ? "" : "s", vr->runs, (double)vr->boot_wall_ns / 1e9, vr->nbase);
	for (uint32_t i = 0; i < res->base.nops; i++)
		printf(" %s %.3f ms%s", cli_op_key(&res->base, i, lab, sizeof(lab)),
		       (double)vr->base_ns[i] / 1e6, i + 1 < res->base.nops ? "," : "");
	printf("\nthe kernel's spread: %.3f ms (the baseline runs before and after each change:"
	       " the largest difference between two in a row%s); a saving is measured against"
	       " the two either side; '!': the kernel's total saving off the prediction by more"
	       " than %d%% of it or the spread\n", (double)vr->spread_ns / 1e6,
	       vr->boots > 1 ? ", or between the boots' means" : "", DL_VERIFY_TOLERANCE_PCT);
	if (!guest_like)
		printf("(the kernel runs in a TCG guest and probes from a module loaded after boot;"
		       " --profile guest --probe-context module predicts for that guest)\n");
}

/* --verify: the kernel's total saving of row @i and its flag, or why it did not run. */
static void print_verify_cell(const struct dl_verify_result *vr, uint32_t i)
{
	const struct dl_verify_row *v = i < vr->nrow ? &vr->row[i] : NULL;

	if (!v)
		printf(" %10s %8s", "", "");
	else if (!v->ran)
		printf(" %10s %8s", "-", "");
	else
		printf(" %10.3f %7.0f%%%s", (double)v->total_saved_ns / 1e6,
		       v->off_ns && v->total_saved_ns - v->off_ns ?
		       100.0 * (double)v->off_ns / (double)llabs(v->total_saved_ns - v->off_ns) : 0.0,
		       v->flagged ? "!" : "");
}

static void print_table(const struct dl_scenario *sc, const struct dl_advise_result *res,
			const struct baseline *bl, uint32_t top, const struct dl_verify_result *vr)
{
	char lab[32], what[ADV_TEXT_MAX];
	int width = (int)strlen("change");
	bool overflowed = false;

	for (uint32_t i = 0; i < res->nadv && (!top || i < top); i++) {
		dl_advice_describe(sc, &res->adv[i], what, sizeof(what));
		if ((int)strlen(what) > width)
			width = (int)strlen(what);
	}
	printf("%s under %s (%s)%s on %u CPUs%s; baseline makespan:", sc->name,
	       dl_order_name(bl->order), bl->why,
	       dl_order_async_form(bl->order) != bl->order || bl->all_sync ?
		       ", every device sync, simulated as kernel-async with none async" : "",
	       res->workers, bl->cpus_given ? "" : " (not given: the order's default; --workers K)");
	for (uint32_t i = 0; i < res->base.nops; i++)
		printf(" %s %.3f ms%s", cli_op_key(&res->base, i, lab, sizeof(lab)),
		       (double)res->base.op[i].makespan_ns / 1e6, i + 1 < res->base.nops ? "," : "");
	printf("\n%llu re-simulations in %.2f s; makespan saved per op (ms), best first%s\n\n",
	       (unsigned long long)res->resims, (double)res->wall_ns / 1e9,
	       res->interrupted ? " (interrupted: what was simulated)" : "");
	if (vr)
		print_verify_head(res, vr, bl->guest_like);
	printf("%4s  %-*s", "rank", width, "change");
	for (uint32_t i = 0; i < res->base.nops; i++)
		printf(" %10s", cli_op_key(&res->base, i, lab, sizeof(lab)));
	printf(" %10s%s\n", "total", vr ? "     kernel      off" : "");
	for (uint32_t i = 0; i < res->nadv && (!top || i < top); i++) {
		const struct dl_advice *a = &res->adv[i];

		dl_advice_describe(sc, a, what, sizeof(what));
		printf("%4u  %-*s", i + 1, width, what);
		for (uint32_t k = 0; k < res->base.nops; k++) {
			if (a->overflowed)
				printf(" %10s", "-");
			else
				printf(" %10.3f", (double)a->saved_ns[k] / 1e6);
		}
		overflowed |= a->overflowed;
		if (a->status && strcmp(a->status, "ok"))
			printf(" %10s", a->status);
		else
			printf(" %10.3f", (double)a->total_saved_ns / 1e6);
		if (vr)
			print_verify_cell(vr, i);
		putchar('\n');
	}
	if (overflowed)
		printf("\n-: %s, no makespan to compare\n", OVERFLOWED);
	for (uint32_t i = 0, said = 0; vr && i < vr->nrow; i++)
		if (vr->row[i].why[0])
			printf("%srank %u: %s%s\n", said++ ? "" : "\n", i + 1,
			       vr->row[i].ran ? "" : "not played on the kernel: ", vr->row[i].why);
	if (!res->nadv)
		printf("%s\n", res->interrupted ? "(interrupted before any change was simulated)" :
		       "(no change to try: no sync device, no latency, no link)");
	for (uint32_t i = 0; i < res->nadv && (!top || i < top); i++)
		if (res->adv[i].unsafe) {
			printf("\nUNSAFE: dropping a link removes the guarantee that the consumer "
			       "suspends before and resumes after its supplier; only where the "
			       "dependency is known to be spurious.\n");
			break;
		}
}

/* --db: the ranking into the advice table. */
static int store(const char *db, const struct dl_scenario *sc, const struct dl_advise_result *res,
		 enum dl_order order, uint32_t top)
{
	uint32_t n = top && top < res->nadv ? top : res->nadv;
	struct dl_advice_row *rows = calloc(n + 1, sizeof(*rows));
	char (*what)[ADV_TEXT_MAX] = calloc(n + 1, sizeof(*what)), labs[DL_MAX_OPS][32];
	const char *ops[DL_MAX_OPS];
	char err[1024];
	int ret = -1;

	if (rows && what) {
		for (uint32_t i = 0; i < res->base.nops; i++)
			ops[i] = cli_op_key(&res->base, i, labs[i], sizeof(labs[i]));
		for (uint32_t i = 0; i < n; i++) {
			const struct dl_advice *a = &res->adv[i];

			dl_advice_describe(sc, a, what[i], sizeof(what[i]));
			rows[i] = (struct dl_advice_row){ i + 1, kind_name(a->kind), what[i],
							  a->status ? a->status : "?", a->unsafe,
							  a->saved_ns, a->total_saved_ns };
		}
		ret = dl_log_advice(db, sc->name, dl_order_name(order), res->workers, res->resims,
				    res->base.nops, ops, rows, n, DL_LOG_BUSY_MS, err, sizeof(err));
		if (ret)
			fprintf(stderr, "dlsim advise: %s\n", err);
	} else {
		fprintf(stderr, "dlsim advise: out of memory\n");
	}
	free(rows);
	free(what);
	return ret;
}

/* Is KEY among the first N overrides? */
static bool overridden(const struct dl_override *set, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(set[i].key, key))
			return true;
	return false;
}

/*
 * Load PATH with the overrides.  A scenario written by import-log
 * ("x-log") is the log's machine: a device the log never saw run off the
 * main thread has no async flag there and is sync, as the kernel's default
 * is (unless --set defaults.async says otherwise); its order is the log's,
 * sync when no device ran async (BL).
 */
static int load(const char *path, struct dl_override *set, size_t *nset, const uint64_t *seed,
		struct dl_scenario **sc, struct baseline *bl, struct dl_error *err)
{
	json_t *root = json_load_file(path, 0, NULL);
	bool any_async = false;
	int ret;

	if (!root || !json_is_object(json_object_get(root, "x-log"))) {
		json_decref(root);	/* (a file that does not parse: the loader says where) */
		return dl_scenario_load(path, set, *nset, seed, sc, err);
	}
	if (!overridden(set, *nset, "defaults.async") && *nset < ADV_MAX_SET) {
		if (!(set[*nset].key = strdup("defaults.async"))) {
			json_decref(root);
			return -ENOMEM;
		}
		set[(*nset)++].value = "false";
	}
	ret = dl_scenario_load_json(path, root, set, *nset, seed, sc, err);
	json_decref(root);
	if (ret)
		return ret;
	for (uint32_t d = 0; d < (*sc)->ndev; d++)
		any_async |= (*sc)->dev[d].async && !(*sc)->dev[d].hotplug;
	bl->order = dl_order_of_kernel(any_async, 0);
	bl->why = any_async ? "the log's: devices ran async" : "the log's: no device ran async";
	return 0;
}

/* What the command line asks of advise. */
struct advise_args {
	struct dl_advise_opts ao;
	struct dl_verify_opts vo;
	struct dl_override set[ADV_MAX_SET];	/* keys strdup'ed (load() may add one) */
	size_t nset;
	const char *path, *by, *db;
	uint64_t seed;
	bool have_seed, json, have_order;
	uint32_t top, verify;
};

/* V as a decimal count MIN..MAX, read by strtoul() as advise always has: 0, or -1. */
static int parse_count(const char *v, unsigned long min, unsigned long max, uint32_t *out)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (!*v || *end || n < min || n > max)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

/* The option handlers: each 0, or -1 with the refusal printed (1: --help printed). */
static int opt_help(void *obj, const char *verb, const char *v)
{
	(void)obj, (void)verb, (void)v;
	advise_usage(stdout);
	return 1;
}

static int opt_order(void *obj, const char *verb, const char *v)
{
	struct advise_args *a = obj;

	(void)verb;
	if (dl_order_parse(v, &a->ao.order)) {
		fprintf(stderr, "dlsim advise: unknown order '%s'; see 'dlsim orders'\n", v);
		return -1;
	}
	a->have_order = true;
	return 0;
}

static int opt_top(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (parse_count(v, 0, UINT32_MAX, &((struct advise_args *)obj)->top)) {
		fprintf(stderr, "dlsim advise: --top '%s'; expected a count (0: all)\n", v);
		return -1;
	}
	return 0;
}

static int opt_workers(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (parse_count(v, 1, 65536, &((struct advise_args *)obj)->ao.workers)) {
		fprintf(stderr, "dlsim advise: --workers '%s'; expected 1..65536\n", v);
		return -1;
	}
	return 0;
}

static int opt_seed(void *obj, const char *verb, const char *v)
{
	struct advise_args *a = obj;
	char *end;

	(void)verb;
	a->seed = strtoull(v, &end, 0);
	if (!*v || *end) {
		fprintf(stderr, "dlsim advise: --seed '%s'; expected an integer\n", v);
		return -1;
	}
	a->have_seed = true;
	return 0;
}

static int opt_verify(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (parse_count(v, 1, 1000, &((struct advise_args *)obj)->verify)) {
		fprintf(stderr, "dlsim advise: --verify '%s'; expected 1..1000 changes\n", v);
		return -1;
	}
	return 0;
}

static int opt_kernel(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (strcmp(v, "6.12") && strcmp(v, "7.3")) {
		fprintf(stderr, "dlsim advise: --kernel '%s'; expected 6.12 or 7.3\n", v);
		return -1;
	}
	((struct advise_args *)obj)->vo.kernel = v;
	return 0;
}

static int opt_profile(void *obj, const char *verb, const char *v)
{
	enum dl_cost_profile p;

	if (cli_opt_profile(verb, v, &p))
		return -1;
	((struct advise_args *)obj)->ao.cost_profile = p;
	return 0;
}

static int opt_probe_context(void *obj, const char *verb, const char *v)
{
	return cli_opt_probe_context(verb, v, &((struct advise_args *)obj)->ao.probe_module);
}

static int opt_boots(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (parse_count(v, 1, 20, &((struct advise_args *)obj)->vo.boots)) {
		fprintf(stderr, "dlsim advise: --boots '%s': expected 1..20\n", v);
		return -1;
	}
	return 0;
}

static int opt_kernel_timeout(void *obj, const char *verb, const char *v)
{
	uint32_t s;

	(void)verb;
	if (parse_count(v, 1, 86400, &s)) {
		fprintf(stderr, "dlsim advise: --kernel-timeout '%s': expected 1..86400 s\n", v);
		return -1;
	}
	((struct advise_args *)obj)->vo.timeout_ms = (int64_t)s * 1000;
	return 0;
}

static int opt_db(void *obj, const char *verb, const char *v)
{
	(void)verb;
	if (!*v) {
		fprintf(stderr, "dlsim advise: --db without a path\n");
		return -1;
	}
	((struct advise_args *)obj)->db = v;
	return 0;
}

/* --set KEY=VALUE: KEY copied (argv stays whole), an empty one let through to the loader. */
static int opt_set(void *obj, const char *verb, const char *v)
{
	struct advise_args *a = obj;
	const char *eq = strchr(v, '=');

	(void)verb;
	if (!eq || a->nset == ADV_MAX_SET) {
		fprintf(stderr, "dlsim advise: --set '%s'; expected KEY=VALUE (at most %d)\n", v,
			ADV_MAX_SET);
		return -1;
	}
	a->set[a->nset].key = strndup(v, (size_t)(eq - v));
	a->set[a->nset++].value = eq + 1;
	return 0;
}

/* SCENARIO, the one argument that is not an option. */
static int opt_other(void *obj, const char *verb, const char *arg)
{
	struct advise_args *a = obj;

	(void)verb;
	if (arg[0] == '-' && arg[1]) {
		fprintf(stderr, "dlsim advise: unknown option '%s'\n", arg);
		advise_usage(stderr);
		return -1;
	}
	if (a->path) {
		fprintf(stderr, "dlsim advise: more than one scenario ('%s')\n", arg);
		return -1;
	}
	a->path = arg;
	return 0;
}

#define AA struct advise_args
static const struct cli_opt advise_opts_table[] = {
	{ CLI_ACTION("--help", "-h", opt_help) },
	{ CLI_FN("--order", opt_order) },
	{ CLI_FN("--top", opt_top) },
	{ CLI_FN("--workers", opt_workers) },
	{ CLI_U32("--jobs", AA, ao.jobs, 1, DL_ADVISE_MAX_JOBS, NULL) },
	{ CLI_FN("--seed", opt_seed) },
	{ CLI_STR("--by", AA, by) },
	{ CLI_FN("--verify", opt_verify) },
	{ CLI_FN("--kernel", opt_kernel) },
	{ CLI_FN("--profile", opt_profile) },
	{ CLI_FN("--probe-context", opt_probe_context) },
	{ CLI_FN("--boots", opt_boots) },
	{ CLI_FN("--kernel-timeout", opt_kernel_timeout) },
	{ CLI_FN("--db", opt_db) },
	{ CLI_FN("--set", opt_set) },
	{ CLI_TRUE("--json", NULL, AA, json) },
	{ CLI_TRUE("--research", NULL, AA, ao.research) },
};
#undef AA

static const struct cli_verb advise_verb = {
	.name = "advise", .opt = advise_opts_table,
	.nopt = sizeof(advise_opts_table) / sizeof(advise_opts_table[0]), .other = opt_other,
};

/* 0, 1 (--help printed) or -1 (refused, the reason printed). */
static int parse_args(int argc, char **argv, struct advise_args *a)
{
	int rc;

	a->ao.order = DL_ORDER_DEFAULT;
	a->top = 20;
	rc = cli_opts_parse(&advise_verb, argc, argv, a);
	if (rc)
		return rc;
	if (!a->path) {
		advise_usage(stderr);
		return -1;
	}
	if ((a->vo.kernel || a->vo.timeout_ms || a->vo.boots) && !a->verify) {
		fprintf(stderr, "dlsim advise: --kernel, --kernel-timeout and --boots need --verify N\n");
		return -1;
	}
	if (!a->ao.jobs)
		a->ao.jobs = cli_usable_cpus(DL_ADVISE_MAX_JOBS);
	return 0;
}

/* The baseline: the scenario's (BL, from load()) unless --order; how it is simulated. */
static void set_baseline(struct advise_args *a, const struct dl_scenario *sc, struct baseline *bl)
{
	struct dl_advise_opts *ao = &a->ao;

	if (a->have_order) {
		bl->order = ao->order;
		bl->why = "--order";
	}
	ao->order = bl->order;
	/* sync: its async form (kernel-async) with no device async */
	ao->all_sync = bl->all_sync = bl->all_sync || dl_order_async_form(bl->order) != bl->order;
	bl->cpus_given = ao->workers || sc->cost.cpus;
	bl->guest_like = ao->cost_profile == DL_PROFILE_GUEST && ao->probe_module;
	bl->profile = dl_cost_profile_name(ao->cost_profile);
	bl->probe_module = ao->probe_module;
}

/* --by OP: rank RES by that op's saving; 0, or -1 (no such op, said). */
static int rank_by(const char *by, struct dl_advise_result *res)
{
	char lab[32];
	int by_op = -1;

	for (uint32_t i = 0; i < res->base.nops; i++)
		if (!strcmp(cli_op_key(&res->base, i, lab, sizeof(lab)), by))
			by_op = (int)i;
	if (by_op < 0) {
		fprintf(stderr, "dlsim advise: --by '%s': no such op in the script; expected "
			"one of its ops (probe, suspend, resume, ...)\n", by);
		return -1;
	}
	if (res->nadv)
		qsort_r(res->adv, res->nadv, sizeof(*res->adv), cmp_by_op, &by_op);
	return 0;
}

/*
 * --verify N: the first N changes of RES on a real kernel, into VR.  0 (a
 * stop leaves RES interrupted, without the kernel's word), or -1 (said).
 */
static int verify_ranking(struct advise_args *a, const struct dl_scenario *sc,
			  struct dl_advise_result *res, struct dl_verify_result *vr, bool *verified)
{
	int ret;

	a->vo.stop = a->ao.stop;
	ret = dl_advise_verify(sc, &a->ao, res, res->adv, a->verify < res->nadv ? a->verify : res->nadv,
			       &a->vo, vr);
	if (ret == -EINTR) {
		res->interrupted = true;
		return 0;
	}
	if (ret) {
		fprintf(stderr, "dlsim advise: %s: --verify: %s\n", a->path, vr->msg);
		return -1;
	}
	*verified = true;
	if (a->top && a->top < vr->nrow)
		a->top = vr->nrow;
	return 0;
}

/*
 * A progress line on stderr, only on a terminal, once the advice has taken
 * half a second, redrawn at most ten times a second: an advice of a few
 * thousand devices takes minutes, of tens of thousands hours (one engine
 * run per link), and said nothing meanwhile.
 */
struct progress {
	int64_t t0, drawn;
	bool shown;
};

static void show_progress(void *ctx, uint64_t done, uint64_t planned)
{
	struct progress *p = ctx;
	int64_t now = dl_mono_ns();
	double el = (double)(now - p->t0) / 1e9, each = el / (double)done;
	double left = planned > done ? each * (double)(planned - done) : 0;

	if (el < 0.5 || now - p->drawn < 100000000)
		return;
	p->drawn = now;
	p->shown = true;
	fprintf(stderr, "\r[advise] %llu of ~%llu runs, %.1f s (%.0f ms each, ~%.0f %s to go)  ",
		(unsigned long long)done, (unsigned long long)(planned > done ? planned : done), el,
		each * 1e3, left >= 5400 ? left / 3600 : left >= 90 ? left / 60 : left,
		left >= 5400 ? "h" : left >= 90 ? "min" : "s");
}

/* Print RES (and VR when verified), keep it in --db: the exit status. */
static int report(const struct advise_args *a, const struct dl_scenario *sc,
		  const struct dl_advise_result *res, const struct baseline *bl,
		  const struct dl_verify_result *vr)
{
	int rc = DL_EXIT_OK;

	if (a->json)
		rc = print_json(sc, res, bl, a->ao.research, a->top, vr);
	else
		print_table(sc, res, bl, a->top, vr);
	if (a->db && rc == DL_EXIT_OK && !res->interrupted && store(a->db, sc, res, bl->order, a->top))
		rc = DL_EXIT_USAGE;
	if (rc == DL_EXIT_OK && res->interrupted)
		rc = DL_EXIT_INTERRUPTED;
	return rc;
}

int cmd_advise(int argc, char **argv)
{
	struct advise_args a = { 0 };
	struct baseline bl = { .order = DL_ORDER_DEFAULT, .why = "run's default" };
	struct dl_advise_result res = { 0 };
	struct dl_verify_result vr = { 0 };
	struct progress pr = { 0 };
	struct dl_scenario *sc = NULL;
	struct dl_error err;
	bool verified = false;
	int rc = DL_EXIT_USAGE, ret;

	ret = parse_args(argc, argv, &a);
	if (ret) {
		rc = ret > 0 ? DL_EXIT_OK : DL_EXIT_USAGE;
		goto out;
	}
	ret = load(a.path, a.set, &a.nset, a.have_seed ? &a.seed : NULL, &sc, &bl, &err);
	if (ret) {
		fprintf(stderr, "dlsim advise: %s\n", ret == -ENOMEM ? "out of memory" : err.msg);
		goto out;
	}
	set_baseline(&a, sc, &bl);
	cli_catch_stop();
	a.ao.stop = cli_stop_flag();
	pr.t0 = pr.drawn = dl_mono_ns();
	if (isatty(STDERR_FILENO)) {
		a.ao.progress = show_progress;
		a.ao.progress_ctx = &pr;
	}
	ret = dl_advise(sc, &a.ao, &res);
	if (pr.shown)
		fprintf(stderr, "\r%78s\r", "");
	if (ret) {
		cli_release_stop();
		if (ret == -EOVERFLOW)
			fprintf(stderr, "dlsim advise: %s: the run under %s, on which every change is"
				" measured, passed 2^62 ns of virtual time: ", a.path,
				dl_order_name(bl.order));
		if (ret == -EOVERFLOW && !dl_run_overflowed_in_walk(&res.base))
			fputs("a latency is too large for this scenario; nothing to rank\n", stderr);
		else if (ret == -EOVERFLOW)
			fprintf(stderr, "nothing to rank: the walk before each deferred-probe retry,"
				" device_pm_move_to_tail(), on a graph with more paths than a real device"
				" tree ('dlsim run SCENARIO --order %s' says more).  " DL_RUN_WALK_OUT "\n",
				dl_order_name(bl.order));
		else
			fprintf(stderr, "dlsim advise: %s: the engine refused the scenario (%s)\n",
				a.path, dl_run_strerror(ret));
		goto out;
	}
	if (a.by && rank_by(a.by, &res))
		goto out;
	if (a.verify && !res.interrupted && verify_ranking(&a, sc, &res, &vr, &verified)) {
		cli_release_stop();
		goto out;
	}
	cli_release_stop();
	rc = report(&a, sc, &res, &bl, verified ? &vr : NULL);
out:
	dl_verify_free(&vr);
	free(res.adv);
	for (size_t i = 0; i < a.nset; i++)
		free((char *)a.set[i].key);
	dl_scenario_free(sc);
	return rc;
}
