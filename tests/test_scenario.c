/*
 * test_scenario.c - the scenario loader (sim/scenario/): every class of
 * input error names the file and the key, samples are reproducible, each
 * generator has its documented shape, and every file in scenarios/ loads.
 */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/scenario/scenario.h"

static char tmpdir[64];

#define HDR "{ \"format\": \"dlsim-scenario/1\", "

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_FATAL(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* Load @text from a file called @name; return the code and fill @err. */
static int load_text(const char *name, const char *text, const struct dl_override *ov,
		     size_t nov, struct dl_scenario **s, struct dl_error *err)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	write_file(path, text);
	return dl_scenario_load(path, ov, nov, NULL, s, err);
}

/* @text must be refused with -EINVAL and a message naming @name and @needle. */
static void expect_refused(const char *name, const char *text, const char *needle)
{
	struct dl_scenario *s = NULL;
	struct dl_error err;
	int ret = load_text(name, text, NULL, 0, &s, &err);

	CU_ASSERT_EQUAL(ret, -EINVAL);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, name));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, needle));
	if (ret != -EINVAL || !strstr(err.msg, name) || !strstr(err.msg, needle))
		fprintf(stderr, "\n  %s: got %d '%s', wanted '%s'\n", name, ret, err.msg, needle);
	dl_scenario_free(s);
}

static struct dl_scenario *load_ok(const char *name, const char *text)
{
	struct dl_scenario *s = NULL;
	struct dl_error err;
	int ret = load_text(name, text, NULL, 0, &s, &err);

	CU_ASSERT_EQUAL(ret, 0);
	if (ret)
		fprintf(stderr, "\n  %s: %s\n", name, err.msg);
	return s;
}

/* Parents before children, and links + parents acyclic (Kahn's algorithm). */
/* Links fw_devlink marked CYCLE (imported DTBs) may close cycles. */
#define DL_SC_FLAG_CYCLE (1u << 9)

static int graph_is_sound(const struct dl_scenario *s)
{
	uint32_t *indeg = calloc(s->ndev + 1, sizeof(*indeg));
	uint32_t *start = calloc(s->ndev + 2, sizeof(*start));
	uint32_t *adj = malloc((s->nlink + s->ndev + 1) * sizeof(*adj));
	uint32_t *queue = malloc((s->ndev + 1) * sizeof(*queue)), head = 0, tail = 0;
	uint64_t seen = 0;
	int ok = 1;

	for (uint32_t d = 0; d < s->ndev; d++) {
		if (s->dev[d].parent != DL_SC_NONE) {
			if (s->dev[d].parent >= d)
				ok = 0;
			start[s->dev[d].parent + 1]++;
			indeg[d]++;
		}
	}
	for (uint32_t l = 0; l < s->nlink; l++) {
		if (s->link[l].flags & DL_SC_FLAG_CYCLE)
			continue;
		start[s->link[l].supplier + 1]++;
		indeg[s->link[l].consumer]++;
	}
	for (uint32_t d = 0; d < s->ndev; d++)
		start[d + 1] += start[d];
	{
		uint32_t *fill = calloc(s->ndev + 1, sizeof(*fill));

		for (uint32_t d = 0; d < s->ndev; d++)
			if (s->dev[d].parent != DL_SC_NONE)
				adj[start[s->dev[d].parent] + fill[s->dev[d].parent]++] = d;
		for (uint32_t l = 0; l < s->nlink; l++)
			if (!(s->link[l].flags & DL_SC_FLAG_CYCLE))
				adj[start[s->link[l].supplier] + fill[s->link[l].supplier]++] =
				s->link[l].consumer;
		free(fill);
	}
	for (uint32_t d = 0; d < s->ndev; d++)
		if (!indeg[d])
			queue[tail++] = d;
	while (head < tail) {
		uint32_t d = queue[head++];

		seen++;
		for (uint32_t e = start[d]; e < start[d + 1]; e++)
			if (!--indeg[adj[e]])
				queue[tail++] = adj[e];
	}
	if (seen != s->ndev)
		ok = 0;
	free(indeg);
	free(start);
	free(adj);
	free(queue);
	return ok;
}

/* ---- errors ---------------------------------------------------------- */

static void test_syntax_error_has_line_and_column(void)
{
	struct dl_scenario *s;
	struct dl_error err;
	int ret = load_text("syntax.json", "{\n  \"format\": \"dlsim-scenario/1\",\n  \"seed\": ,\n}\n",
			    NULL, 0, &s, &err);

	CU_ASSERT_EQUAL(ret, -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "syntax.json:3:"));
}

static void test_duplicate_keys_refused(void)
{
	expect_refused("dupkey.json", HDR "\"seed\": 1, \"seed\": 2 }", "duplicate");
}

static void test_missing_file_is_enoent(void)
{
	struct dl_scenario *s;
	struct dl_error err;

	CU_ASSERT_EQUAL(dl_scenario_load("/nonexistent/nope.json", NULL, 0, NULL, &s, &err),
			-ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nope.json"));
}

static void test_format_must_be_v1(void)
{
	expect_refused("fmt.json", "{ \"format\": \"dlsim-scenario/2\" }", "format");
	expect_refused("nofmt.json", "{ \"seed\": 1 }", "format");
	expect_refused("array.json", "[1, 2]", "object");
}

static void test_unknown_keys_refused_but_x_keys_free(void)
{
	struct dl_scenario *s;

	expect_refused("topkey.json", HDR "\"devcies\": [] }", "devcies");
	expect_refused("devkey.json", HDR "\"devices\": [{\"name\": \"a\"}, {\"name\": \"b\", "
		       "\"prob\": 5}] }", "devices[1]");
	expect_refused("linkkey.json", HDR "\"devices\": [{\"name\": \"a\"}, {\"name\": \"b\"}], "
		       "\"links\": [{\"consumer\": \"a\", \"supplier\": \"b\", \"flag\": []}] }",
		       "links[0]");
	s = load_ok("xkeys.json", HDR "\"x-doc\": \"hi\", \"devices\": [{\"name\": \"a\", "
		    "\"x-note\": 1}] }");
	dl_scenario_free(s);
}

static void test_unknown_device_names_refused(void)
{
	expect_refused("linkdev.json", HDR "\"devices\": [{\"name\": \"a\"}], \"links\": "
		       "[{\"consumer\": \"a\", \"supplier\": \"nope\"}] }", "links[0].supplier");
	expect_refused("faultdev.json", HDR "\"devices\": [{\"name\": \"a\"}], \"faults\": "
		       "[{\"device\": \"nope\", \"op\": \"suspend\"}] }", "faults[0].device");
	expect_refused("opdev.json", HDR "\"devices\": [{\"name\": \"a\"}], \"script\": "
		       "[{\"op\": \"probe\"}, {\"op\": \"unbind\", \"device\": \"nope\"}] }",
		       "script[1].device");
	expect_refused("opname.json", HDR "\"script\": [{\"op\": \"reboot\"}] }", "script[0].op");
	expect_refused("faultop.json", HDR "\"devices\": [{\"name\": \"a\"}], \"faults\": "
		       "[{\"device\": \"a\", \"op\": \"complete\"}] }", "faults[0].op");
	expect_refused("faulterr.json", HDR "\"devices\": [{\"name\": \"a\"}], \"faults\": "
		       "[{\"device\": \"a\", \"op\": \"probe\", \"error\": \"EWHAT\"}] }",
		       "faults[0].error");
}

static void test_unknown_flag_refused(void)
{
	expect_refused("flag.json", HDR "\"devices\": [{\"name\": \"a\"}, {\"name\": \"b\"}], "
		       "\"links\": [{\"consumer\": \"a\", \"supplier\": \"b\", \"flags\": "
		       "[\"PM_RUNTIME\", \"FAST\"]}] }", "links[0].flags[1]");
}

static void test_duplicate_device_names_refused(void)
{
	expect_refused("dupdev.json", HDR "\"devices\": [{\"name\": \"a\"}, {\"name\": \"a\"}] }",
		       "devices[1].name");
}

static void test_parent_listed_after_child_refused(void)
{
	expect_refused("parent.json", HDR "\"devices\": [{\"name\": \"c\", \"parent\": \"p\"}, "
		       "{\"name\": \"p\"}] }", "devices[0].parent");
	expect_refused("hotparent.json", HDR "\"devices\": [{\"name\": \"p\", \"hotplug\": true}, "
		       "{\"name\": \"c\", \"parent\": \"p\"}] }", "devices[1].hotplug");
}

static void test_bad_latencies_refused(void)
{
	expect_refused("parsecs.json", HDR "\"devices\": [{\"name\": \"a\", \"probe\": "
		       "\"2 parsecs\"}] }", "devices[0].probe");
	expect_refused("negative.json", HDR "\"defaults\": {\"suspend\": -5} }",
		       "defaults.suspend");
	expect_refused("negstr.json", HDR "\"defaults\": {\"suspend\": \"-1ms\"} }", "negative");
	expect_refused("nounit.json", HDR "\"defaults\": {\"suspend\": \"15\"} }", "unit");
}

static void test_impossible_distributions_refused(void)
{
	expect_refused("sd.json", HDR "\"defaults\": {\"resume\": {\"dist\": \"normal\", "
		       "\"mean\": \"1ms\", \"sd\": -5}} }", "defaults.resume.sd");
	expect_refused("minmax.json", HDR "\"defaults\": {\"resume\": {\"dist\": \"exp\", "
		       "\"mean\": \"1ms\", \"min\": \"2ms\", \"max\": \"1ms\"}} }", "min");
	expect_refused("uniform.json", HDR "\"defaults\": {\"resume\": {\"dist\": \"uniform\", "
		       "\"min\": \"1ms\"}} }", "uniform");
	expect_refused("dist.json", HDR "\"defaults\": {\"resume\": {\"dist\": \"cauchy\", "
		       "\"mean\": 1}} }", "defaults.resume.dist");
	expect_refused("nomean.json", HDR "\"defaults\": {\"resume\": {\"dist\": \"lognormal\", "
		       "\"sd\": 1}} }", "mean");
}

static void test_bad_generators_refused(void)
{
	expect_refused("gen.json", HDR "\"generate\": {\"topology\": \"star\"} }",
		       "generate.topology");
	expect_refused("genkey.json", HDR "\"generate\": {\"topology\": \"chain\", \"fanout\": 3} }",
		       "fanout");
	expect_refused("genrange.json", HDR "\"generate\": {\"topology\": \"random-dag\", "
		       "\"locality\": 1.5} }", "generate.locality");
	expect_refused("genorder.json", HDR "\"generate\": {\"topology\": \"tree\", "
		       "\"register_order\": \"alphabetical\"} }", "generate.register_order");
	expect_refused("genbig.json", HDR "\"generate\": {\"topology\": \"tree\", "
		       "\"devices\": 20000000} }", "generate.devices");
	expect_refused("genlinks.json", HDR "\"generate\": {\"topology\": \"random-dag\", "
		       "\"devices\": 9000000, \"suppliers_per_device\": 30} }", "links");
	expect_refused("gencollide.json", HDR "\"devices\": [{\"name\": \"dev3\"}], "
		       "\"generate\": {\"topology\": \"chain\", \"devices\": 10} }", "dev3");
}

static void test_set_overrides_generate(void)
{
	struct dl_override ov[] = { { "topology", "chain" }, { "devices", "50" } };
	struct dl_override bad[] = { { "fanotu", "3" } };
	struct dl_scenario *s = NULL;
	struct dl_error err;

	CU_ASSERT_EQUAL(load_text("set.json", HDR "\"seed\": 1 }", ov, 2, &s, &err), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->ndev, 50);
	CU_ASSERT_EQUAL(s->nlink, 49);
	dl_scenario_free(s);
	s = NULL;
	CU_ASSERT_EQUAL(load_text("setbad.json", HDR "\"generate\": {\"topology\": \"tree\"} }",
				  bad, 1, &s, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--set"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "fanotu"));
}

/* ---- values ---------------------------------------------------------- */

static void test_latency_units_and_defaults(void)
{
	struct dl_scenario *s = load_ok("units.json", HDR
		"\"defaults\": {\"probe\": \"1.5ms\", \"suspend\": 250, \"resume\": \"2us\"}, "
		"\"devices\": [{\"name\": \"a\"}, {\"name\": \"b\", \"probe\": \"1s\", "
		"\"async\": false}, {\"name\": \"c\"}] }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(dl_sc_latency(s, 0, DL_LAT_PROBE)->mean, 1500000);
	CU_ASSERT_EQUAL(dl_sc_latency(s, 0, DL_LAT_SUSPEND)->mean, 250);
	CU_ASSERT_EQUAL(dl_sc_latency(s, 0, DL_LAT_RESUME)->mean, 2000);
	CU_ASSERT_EQUAL(dl_sc_latency(s, 0, DL_LAT_REMOVE)->dist, DL_DIST_NONE);
	CU_ASSERT_EQUAL(dl_sc_latency(s, 1, DL_LAT_PROBE)->mean, 1000000000);
	CU_ASSERT_EQUAL(dl_sc_latency(s, 1, DL_LAT_SUSPEND)->mean, 250);	/* inherited */
	CU_ASSERT_EQUAL(s->dev[0].profile, s->dev[2].profile);
	CU_ASSERT_EQUAL(s->dev[0].async, 1);
	CU_ASSERT_EQUAL(s->dev[1].async, 0);
	CU_ASSERT_EQUAL(s->nop, 3);	/* no script: probe, suspend, resume */
	CU_ASSERT_EQUAL(s->op[0].kind, DL_OP_PROBE);
	CU_ASSERT_EQUAL(s->op[1].kind, DL_OP_SUSPEND);
	CU_ASSERT_EQUAL(s->op[2].kind, DL_OP_RESUME);
	CU_ASSERT_STRING_EQUAL(s->name, "units");
	CU_ASSERT_EQUAL(s->cost.queue_ns, -1);
	dl_scenario_free(s);
}

static void test_flag_names_are_kernel_bits(void)
{
	uint32_t bit;

	CU_ASSERT_EQUAL(dl_flag_from_name("STATELESS", &bit), 0);
	CU_ASSERT_EQUAL(bit, 1u << 0);
	CU_ASSERT_EQUAL(dl_flag_from_name("PM_RUNTIME", &bit), 0);
	CU_ASSERT_EQUAL(bit, 1u << 2);
	CU_ASSERT_EQUAL(dl_flag_from_name("SYNC_STATE_ONLY", &bit), 0);
	CU_ASSERT_EQUAL(bit, 1u << 7);
	CU_ASSERT_EQUAL(dl_flag_from_name("INFERRED", &bit), 0);
	CU_ASSERT_EQUAL(bit, 1u << 8);
	CU_ASSERT_EQUAL(dl_flag_from_name("FAST", &bit), -EINVAL);
}

static void test_samples_reproducible_and_order_independent(void)
{
	struct dl_latency l = { DL_DIST_LOGNORMAL, 1000000, 400000, 0, INT64_MAX, 0, NULL };
	int64_t fwd[64], x;
	int differ = 0;

	for (uint32_t i = 0; i < 64; i++)
		fwd[i] = dl_latency_sample(&l, 42, i % 8, DL_LAT_SUSPEND, i / 8);
	for (int i = 63; i >= 0; i--)
		CU_ASSERT_EQUAL(dl_latency_sample(&l, 42, i % 8, DL_LAT_SUSPEND, i / 8), fwd[i]);
	for (uint32_t i = 1; i < 64; i++)
		differ += fwd[i] != fwd[0];
	CU_ASSERT(differ > 50);
	x = dl_latency_sample(&l, 43, 0, DL_LAT_SUSPEND, 0);
	CU_ASSERT(x != fwd[0]);
}

static void test_samples_clamped_never_negative(void)
{
	struct dl_latency n = { DL_DIST_NORMAL, 0, 1000000, 0, INT64_MAX, 0, NULL };
	struct dl_latency c = { DL_DIST_EXP, 1000, 0, 500, 2000, 0, NULL };
	struct dl_latency u = { DL_DIST_UNIFORM, 0, 0, 100, 200, 0, NULL };
	struct dl_latency f = { DL_DIST_FIXED, 777, 0, 0, INT64_MAX, 0, NULL };
	struct dl_latency z = { DL_DIST_NONE, 0, 0, 0, INT64_MAX, 0, NULL };
	double sum = 0;

	for (uint32_t i = 0; i < 10000; i++) {
		int64_t a = dl_latency_sample(&n, 1, i, 0, 0);
		int64_t b = dl_latency_sample(&c, 1, i, 0, 0);
		int64_t d = dl_latency_sample(&u, 1, 0, 0, i);

		CU_ASSERT(a >= 0);
		CU_ASSERT(b >= 500 && b <= 2000);
		CU_ASSERT(d >= 100 && d <= 200);
		sum += d;
	}
	CU_ASSERT(sum / 10000 > 140 && sum / 10000 < 160);
	CU_ASSERT_EQUAL(dl_latency_sample(&f, 9, 9, 9, 9), 777);
	CU_ASSERT_EQUAL(dl_latency_sample(&z, 9, 9, 9, 9), 0);
}

static void test_lognormal_mean_is_the_samples_mean(void)
{
	struct dl_latency l = { DL_DIST_LOGNORMAL, 1000000, 400000, 0, INT64_MAX, 0, NULL };
	double sum = 0;

	for (uint32_t i = 0; i < 20000; i++)
		sum += (double)dl_latency_sample(&l, 5, i, DL_LAT_RESUME, 0);
	CU_ASSERT(sum / 20000 > 980000 && sum / 20000 < 1020000);
}

static void test_script_ops_parsed(void)
{
	struct dl_scenario *s = load_ok("script.json", HDR
		"\"devices\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"h\", \"hotplug\": true}], "
		"\"faults\": [{\"device\": \"b\", \"op\": \"suspend\", \"error\": \"EBUSY\", \"times\": 2}], "
		"\"script\": [{\"op\": \"probe\"}, {\"op\": \"add\", \"device\": \"h\"}, "
		"{\"op\": \"link_add\", \"consumer\": \"b\", \"supplier\": \"a\", \"flags\": [\"PM_RUNTIME\"]}, "
		"{\"op\": \"rpm_get\", \"device\": \"b\"}, {\"op\": \"link_del\", \"consumer\": \"b\", "
		"\"supplier\": \"a\"}], \"cost\": {\"cpus\": 4, \"wake_ns\": \"2us\", "
		"\"resume_wake_ns\": \"0.1ms\", \"retry_ns\": \"40us\", \"pool_init\": 0, "
		"\"worker_new_ns\": \"60us\", \"profile\": \"phone\"} }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->cost.retry_ns, 40000);
	CU_ASSERT_EQUAL(s->cost.worker_new_ns, 60000);
	CU_ASSERT_EQUAL(s->cost.pool_init, 0);
	CU_ASSERT_STRING_EQUAL(s->cost.profile, "phone");
	CU_ASSERT_EQUAL(s->cost.has, DL_COST_HAS_RETRY | DL_COST_HAS_WORKER_NEW | DL_COST_HAS_POOL_INIT);
	CU_ASSERT_EQUAL(s->nop, 5);
	CU_ASSERT_EQUAL(s->op[1].kind, DL_OP_ADD);
	CU_ASSERT_EQUAL(s->op[1].dev, 2);
	CU_ASSERT_EQUAL(s->op[2].kind, DL_OP_LINK_ADD);
	CU_ASSERT_EQUAL(s->op[2].dev, 1);
	CU_ASSERT_EQUAL(s->op[2].dev2, 0);
	CU_ASSERT_EQUAL(s->op[2].flags, 1u << 2);
	CU_ASSERT_EQUAL(s->dev[2].hotplug, 1);
	CU_ASSERT_EQUAL(s->nfault, 1);
	CU_ASSERT_EQUAL(s->fault[0].err, EBUSY);
	CU_ASSERT_EQUAL(s->fault[0].lat_key, DL_LAT_SUSPEND);
	CU_ASSERT_EQUAL(s->fault[0].times, 2);
	CU_ASSERT_EQUAL(s->cost.cpus, 4);
	CU_ASSERT_EQUAL(s->cost.wake_ns, 2000);
	CU_ASSERT_EQUAL(s->cost.resume_wake_ns, 100000);
	CU_ASSERT_EQUAL(s->cost.switch_ns, -1);
	dl_scenario_free(s);
}

/* ---- generators ------------------------------------------------------ */

static struct dl_scenario *generate(const char *topo, const char *params, const char *order)
{
	char text[512];

	snprintf(text, sizeof(text), HDR "\"seed\": 9, \"generate\": {\"topology\": \"%s\", "
		 "\"register_order\": \"%s\"%s%s} }", topo, order, *params ? ", " : "", params);
	return load_ok("gen-ok.json", text);
}

static const char *const orders[] = { "topological", "consumer-first", "random" };

static void test_tree_shape(void)
{
	for (int o = 0; o < 3; o++) {
		struct dl_scenario *s = generate("tree", "\"devices\": 1000, \"fanout\": 3", orders[o]);

		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL(s->ndev, 1000);
		CU_ASSERT_EQUAL(s->nlink, 0);
		for (uint32_t d = 0, roots = 0; d < s->ndev; d++) {
			roots += s->dev[d].parent == DL_SC_NONE;
			if (d == s->ndev - 1)
				CU_ASSERT_EQUAL(roots, 1);
		}
		CU_ASSERT(graph_is_sound(s));
		dl_scenario_free(s);
	}
}

static void test_chain_shape(void)
{
	for (int o = 0; o < 3; o++) {
		struct dl_scenario *s = generate("chain", "\"devices\": 500", orders[o]);
		uint32_t backwards = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL(s->ndev, 500);
		CU_ASSERT_EQUAL(s->nlink, 499);
		CU_ASSERT(graph_is_sound(s));
		for (uint32_t l = 0; l < s->nlink; l++)
			backwards += s->link[l].consumer < s->link[l].supplier;
		if (o == 0)
			CU_ASSERT_EQUAL(backwards, 0);
		if (o == 1)	/* consumer-first: every consumer registered before its supplier */
			CU_ASSERT_EQUAL(backwards, 499);
		if (o == 2)
			CU_ASSERT(backwards > 100 && backwards < 400);
		dl_scenario_free(s);
	}
}

static void test_random_dag_shape(void)
{
	for (int o = 0; o < 3; o++) {
		struct dl_scenario *s = generate("random-dag", "\"devices\": 5000, "
						 "\"suppliers_per_device\": 2.5, \"locality\": 0.3",
						 orders[o]);

		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL(s->ndev, 5000);
		CU_ASSERT(s->nlink > 5000 * 2.3 && s->nlink < 5000 * 2.6);
		uint32_t backwards = 0;

		CU_ASSERT(graph_is_sound(s));
		if (o == 0)
			CU_ASSERT_STRING_EQUAL(dl_sc_name(s, 0), "dev0");
		for (uint32_t l = 0; l < s->nlink; l++)
			backwards += s->link[l].consumer < s->link[l].supplier;
		if (o == 0)
			CU_ASSERT_EQUAL(backwards, 0);
		if (o == 1)	/* parents still first, but consumers mostly before suppliers */
			CU_ASSERT(backwards > s->nlink / 2);
		if (o == 2)
			CU_ASSERT(backwards > s->nlink / 10);
		dl_scenario_free(s);
	}
}

static void test_layered_shape(void)
{
	for (int o = 0; o < 3; o++) {
		struct dl_scenario *s = generate("layered", "\"layers\": 10, \"width\": 20, "
						 "\"cross_links\": 1", orders[o]);

		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL(s->ndev, 200);
		/* two diamond links per device below the first layer, plus cross links */
		CU_ASSERT(s->nlink >= 9 * 20 * 2 && s->nlink <= 9 * 20 * 2 + 8 * 20 * 2);
		CU_ASSERT(graph_is_sound(s));
		dl_scenario_free(s);
	}
}

static void test_camera_shape(void)
{
	for (int o = 0; o < 3; o++) {
		struct dl_scenario *s = generate("camera", "\"devices\": 3000", orders[o]);
		uint32_t sync = 0, clk = 0, *nconsumers;
		uint32_t maxc = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL(s->ndev, 3000);
		CU_ASSERT(graph_is_sound(s));
		CU_ASSERT(s->nlink > 3000 * 2);
		nconsumers = calloc(s->ndev, sizeof(*nconsumers));
		for (uint32_t l = 0; l < s->nlink; l++)
			nconsumers[s->link[l].supplier]++;
		for (uint32_t d = 0; d < s->ndev; d++) {
			sync += !s->dev[d].async;
			clk += !strncmp(dl_sc_name(s, d), "clk", 3);
			if (nconsumers[d] > maxc)
				maxc = nconsumers[d];
		}
		CU_ASSERT(sync > 0 && sync < 3000 / 2);
		CU_ASSERT(clk == 150);
		CU_ASSERT(maxc > 50);	/* suppliers with many consumers */
		CU_ASSERT(dl_sc_find(s, "soc0") != DL_SC_NONE);
		free(nconsumers);
		dl_scenario_free(s);
	}
}

static void test_generator_reproducible_by_seed(void)
{
	struct dl_scenario *a = generate("random-dag", "\"devices\": 2000", "random");
	struct dl_scenario *b = generate("random-dag", "\"devices\": 2000", "random");
	struct dl_scenario *c = generate("random-dag", "\"devices\": 2000, \"seed\": 10", "random");

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(a->nlink, b->nlink);
	CU_ASSERT(!memcmp(a->link, b->link, a->nlink * sizeof(*a->link)));
	CU_ASSERT(!memcmp(a->names, b->names, a->names_len));
	CU_ASSERT(a->nlink != c->nlink || memcmp(a->link, c->link, a->nlink * sizeof(*a->link)));
	dl_scenario_free(a);
	dl_scenario_free(b);
	dl_scenario_free(c);
}

static void test_generated_on_top_of_listed(void)
{
	struct dl_scenario *s = load_ok("ontop.json", HDR
		"\"devices\": [{\"name\": \"soc\"}], "
		"\"generate\": {\"topology\": \"chain\", \"devices\": 10}, "
		"\"links\": [{\"consumer\": \"dev0\", \"supplier\": \"soc\"}] }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->ndev, 11);
	CU_ASSERT_EQUAL(s->ndev_listed, 1);
	CU_ASSERT_EQUAL(s->nlink, 10);
	CU_ASSERT_EQUAL(s->nlink_generated, 9);
	CU_ASSERT(graph_is_sound(s));
	dl_scenario_free(s);
}

/* ---- shipped files --------------------------------------------------- */

static void test_every_shipped_scenario_loads(void)
{
	DIR *dir = opendir(DLSIM_SOURCE_DIR "/scenarios");
	struct dirent *e;
	int n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	while ((e = readdir(dir))) {
		size_t len = strlen(e->d_name);
		char path[1024];
		struct dl_scenario *s = NULL;
		struct dl_error err;
		int ret;

		if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/scenarios/%s", DLSIM_SOURCE_DIR, e->d_name);
		ret = dl_scenario_load(path, NULL, 0, NULL, &s, &err);
		CU_ASSERT_EQUAL(ret, 0);
		if (ret) {
			fprintf(stderr, "\n  %s\n", err.msg);
			continue;
		}
		CU_ASSERT(s->ndev > 0);
		CU_ASSERT(graph_is_sound(s) || !strcmp(e->d_name, "flags.json"));
		dl_scenario_free(s);
		n++;
	}
	closedir(dir);
	CU_ASSERT(n >= 7);
}

/* "cpu" (defaults, device) is the CPU share of a callback; "cost.max_active" the worker pool. */
static void test_cpu_share_and_max_active(void)
{
	struct dl_scenario *s = load_ok("cpu.json",
		"{ \"format\": \"dlsim-scenario/1\", \"defaults\": {\"cpu\": 0.25}, "
		"\"devices\": [ {\"name\": \"a\"}, {\"name\": \"b\", \"cpu\": 1}, "
		"{\"name\": \"c\", \"cpu\": 0} ], "
		"\"cost\": {\"max_active\": 16, \"handoff_ns\": \"1us\"} }");

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->prof[s->dev[0].profile].cpu_ppm, 250000);
	CU_ASSERT_EQUAL(s->prof[s->dev[1].profile].cpu_ppm, 1000000);
	CU_ASSERT_EQUAL(s->prof[s->dev[2].profile].cpu_ppm, 0);
	CU_ASSERT_NOT_EQUAL(s->dev[0].profile, s->dev[2].profile);
	CU_ASSERT_EQUAL(s->cost.max_active, 16);
	CU_ASSERT_EQUAL(s->cost.handoff_ns, 1000);
	dl_scenario_free(s);
	s = load_ok("nocpu.json", "{ \"format\": \"dlsim-scenario/1\", "
		    "\"devices\": [ {\"name\": \"a\"} ] }");
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->prof[s->dev[0].profile].cpu_ppm, 0);   /* default: all sleep */
	CU_ASSERT_EQUAL(s->cost.max_active, 0);                   /* unset: the kernel's */
	CU_ASSERT_EQUAL(s->cost.handoff_ns, -1);
	CU_ASSERT_EQUAL(s->cost.resume_wake_ns, -1);              /* unset: wake_ns */
	CU_ASSERT_EQUAL(s->cost.has, 0);                          /* dispatch keys: the profile's */
	CU_ASSERT_STRING_EQUAL(s->cost.profile, "");              /* the run's profile */
	dl_scenario_free(s);
	expect_refused("ap.json", "{ \"format\": \"dlsim-scenario/1\", "
		       "\"cost\": {\"async_probe_ns\": -3} }", "cost.async_probe_ns");
	expect_refused("pi.json", "{ \"format\": \"dlsim-scenario/1\", "
		       "\"cost\": {\"pool_init\": \"x\"} }", "cost.pool_init");
	expect_refused("pf.json", "{ \"format\": \"dlsim-scenario/1\", "
		       "\"cost\": {\"profile\": \"laptop\"} }", "cost.profile");
	expect_refused("cpu2.json", "{ \"format\": \"dlsim-scenario/1\", "
		       "\"devices\": [ {\"name\": \"a\", \"cpu\": 1.5} ] }", "devices[0].cpu");
	expect_refused("ma0.json", "{ \"format\": \"dlsim-scenario/1\", "
		       "\"cost\": {\"max_active\": 0} }", "cost.max_active");
	expect_refused("rw.json", "{ \"format\": \"dlsim-scenario/1\", "
		       "\"cost\": {\"resume_wake_ns\": 1.5} }", "cost.resume_wake_ns");
}

int main(void)
{
	static const struct { const char *name; CU_TestFunc fn; } tests[] = {
#define T(f) { #f, f }
		T(test_syntax_error_has_line_and_column),
		T(test_duplicate_keys_refused),
		T(test_missing_file_is_enoent),
		T(test_format_must_be_v1),
		T(test_unknown_keys_refused_but_x_keys_free),
		T(test_unknown_device_names_refused),
		T(test_unknown_flag_refused),
		T(test_duplicate_device_names_refused),
		T(test_parent_listed_after_child_refused),
		T(test_bad_latencies_refused),
		T(test_impossible_distributions_refused),
		T(test_bad_generators_refused),
		T(test_set_overrides_generate),
		T(test_latency_units_and_defaults),
		T(test_flag_names_are_kernel_bits),
		T(test_samples_reproducible_and_order_independent),
		T(test_samples_clamped_never_negative),
		T(test_lognormal_mean_is_the_samples_mean),
		T(test_script_ops_parsed),
		T(test_tree_shape),
		T(test_chain_shape),
		T(test_random_dag_shape),
		T(test_layered_shape),
		T(test_camera_shape),
		T(test_generator_reproducible_by_seed),
		T(test_generated_on_top_of_listed),
		T(test_every_shipped_scenario_loads),
		T(test_cpu_share_and_max_active),
#undef T
	};
	CU_pSuite suite;
	unsigned failures;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dlsim-scen-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("scenario", NULL, NULL);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		CU_add_test(suite, tests[i].name, tests[i].fn);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			return 1;
	}
	return failures ? 1 : 0;
}
