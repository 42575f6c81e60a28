/*
 * test_dtb.c - dlsim import-dtb (sim/scenario/dtb_import.c): a tiny SoC
 * compiled with dtc at test time yields the fw_devlink links, CYCLE marks on
 * a remote-endpoint cycle, a scenario that dl_scenario_load() accepts; and
 * 2000 corrupted/truncated DTBs are refused or imported, never crash.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/scenario/dtb_import.h"
#include "sim/scenario/scenario.h"

static char tmpdir[64];
static char *dtb;		/* the tiny SoC, compiled */
static size_t dtb_len;

static const char tiny_dts[] =
	"/dts-v1/;\n"
	"/ {\n"
	"	model = \"Tiny SoC\";\n"
	"	compatible = \"acme,tiny\";\n"
	"	#address-cells = <1>; #size-cells = <1>;\n"
	"	chosen { bootargs = \"x\"; };\n"
	"	aliases { serial0 = &clk; };\n"
	"	memory@0 { device_type = \"memory\"; reg = <0 0x1000>; };\n"
	"	cpus { #address-cells = <1>; #size-cells = <0>;\n"
	"		cpu@0 { compatible = \"arm,cortex-a53\"; reg = <0>; clocks = <&clk 0>; }; };\n"
	"	reg1: regulator-3v3 { compatible = \"regulator-fixed\"; regulator-name = \"3v3\"; };\n"
	"	soc {\n"
	"		compatible = \"simple-bus\"; #address-cells = <1>; #size-cells = <1>; ranges;\n"
	"		interrupt-parent = <&gic>;\n"
	"		gic: interrupt-controller@1000 { compatible = \"arm,gic-400\"; reg = <0x1000 0x100>;\n"
	"			#address-cells = <0>; interrupt-controller; #interrupt-cells = <3>; };\n"
	"		clk: clock-controller@2000 { compatible = \"acme,ccu\"; reg = <0x2000 0x100>;\n"
	"			#clock-cells = <1>; };\n"
	"		pio: pinctrl@3000 { compatible = \"acme,pinctrl\"; reg = <0x3000 0x100>;\n"
	"			gpio-controller; #gpio-cells = <2>;\n"
	"			i2c_pins: i2c-pins { pins = \"PA0\"; }; };\n"
	"		i2c@4000 { compatible = \"acme,i2c\"; reg = <0x4000 0x100>;\n"
	"			#address-cells = <1>; #size-cells = <0>;\n"
	"			clocks = <&clk 1>, <&clk 2>; pinctrl-names = \"default\";\n"
	"			pinctrl-0 = <&i2c_pins>; interrupts = <0 5 4>;\n"
	"			sensor@48 { compatible = \"acme,sensor\"; reg = <0x48>;\n"
	"				vdd-supply = <&reg1>; reset-gpios = <&pio 3 0>; }; };\n"
	"		off@5000 { compatible = \"acme,off\"; reg = <0x5000 0x10>; status = \"disabled\";\n"
	"			clocks = <&clk 3>; };\n"
	"		dsi@6000 { compatible = \"acme,dsi\"; reg = <0x6000 0x100>; clocks = <&clk 4>;\n"
	"			port { dsi_out: endpoint { remote-endpoint = <&panel_in>; }; }; };\n"
	"		panel@7000 { compatible = \"acme,panel\"; reg = <0x7000 0x100>;\n"
	"			power-supply = <&reg1>;\n"
	"			port { panel_in: endpoint { remote-endpoint = <&dsi_out>; }; }; };\n"
	"	};\n"
	"};\n";

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Compile @dts with dtc; return the blob (free it) or NULL. */
static char *compile(const char *name, const char *dts, size_t *len)
{
	char src[128], out[128], cmd[512];
	FILE *f;

	snprintf(src, sizeof(src), "%s/%s.dts", tmpdir, name);
	snprintf(out, sizeof(out), "%s/%s.dtb", tmpdir, name);
	f = fopen(src, "w");
	if (!f)
		return NULL;
	fputs(dts, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "dtc -q -I dts -O dtb -o %s %s", out, src);
	if (system(cmd) != 0)
		return NULL;
	return read_all(out, len);
}

static int init_suite(void)
{
	strcpy(tmpdir, "/tmp/dlsim-dtb-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	dtb = compile("tiny", tiny_dts, &dtb_len);
	return dtb ? 0 : -1;
}

static int clean_suite(void)
{
	char cmd[128];

	free(dtb);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The flags of link consumer -> supplier, or NULL when there is none. */
static json_t *find_link(json_t *sc, const char *con, const char *sup)
{
	json_t *l;
	size_t i;

	json_array_foreach(json_object_get(sc, "links"), i, l)
		if (!strcmp(json_string_value(json_object_get(l, "consumer")), con) &&
		    !strcmp(json_string_value(json_object_get(l, "supplier")), sup))
			return json_object_get(l, "flags");
	return NULL;
}

static int has_flag(json_t *flags, const char *f)
{
	json_t *v;
	size_t i;

	json_array_foreach(flags, i, v)
		if (!strcmp(json_string_value(v), f))
			return 1;
	return 0;
}

static int has_device(json_t *sc, const char *name, const char *parent)
{
	json_t *d;
	size_t i;

	json_array_foreach(json_object_get(sc, "devices"), i, d) {
		json_t *p = json_object_get(d, "parent");

		if (strcmp(json_string_value(json_object_get(d, "name")), name))
			continue;
		if (!parent)
			return p == NULL;
		return p && !strcmp(json_string_value(p), parent);
	}
	return 0;
}

static void test_tiny_soc(void)
{
	struct dl_dtb_stats st;
	struct dl_error err;
	json_t *sc, *f;
	size_t i;
	json_t *l;
	unsigned ncycle = 0;

	CU_ASSERT_EQUAL_FATAL(dl_dtb_import(dtb, dtb_len, "tiny.dtb", &sc, &st, &err), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(sc, "format")), DL_SC_FORMAT);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(sc, "name")), "Tiny SoC");
	CU_ASSERT_PTR_NOT_NULL(json_object_get(sc, "x-doc"));
	/* devices */
	CU_ASSERT(has_device(sc, "/soc", NULL));
	CU_ASSERT(has_device(sc, "/regulator-3v3", NULL));
	CU_ASSERT(has_device(sc, "/soc/clock-controller@2000", "/soc"));
	CU_ASSERT(has_device(sc, "/soc/i2c@4000/sensor@48", "/soc/i2c@4000"));
	CU_ASSERT(!has_device(sc, "/soc/off@5000", NULL) && !has_device(sc, "/soc/off@5000", "/soc"));
	CU_ASSERT(!has_device(sc, "/cpus/cpu@0", NULL) && !has_device(sc, "/chosen", NULL));
	CU_ASSERT(!has_device(sc, "/soc/pinctrl@3000/i2c-pins", "/soc/pinctrl@3000"));
	CU_ASSERT_EQUAL(st.devices, 9);
	/* links: clocks with args, pinctrl-0 via a config child, *-supply, *-gpios, interrupts */
	CU_ASSERT_PTR_NOT_NULL(f = find_link(sc, "/soc/i2c@4000", "/soc/clock-controller@2000"));
	CU_ASSERT(f && has_flag(f, "INFERRED") && has_flag(f, "PM_RUNTIME") && !has_flag(f, "CYCLE"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/i2c@4000", "/soc/pinctrl@3000"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/i2c@4000", "/soc/interrupt-controller@1000"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/i2c@4000/sensor@48", "/regulator-3v3"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/i2c@4000/sensor@48", "/soc/pinctrl@3000"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/dsi@6000", "/soc/clock-controller@2000"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/panel@7000", "/regulator-3v3"));
	/* no link from a disabled node, from the bus's interrupt-parent, or from /cpus */
	CU_ASSERT_PTR_NULL(find_link(sc, "/soc", "/soc/interrupt-controller@1000"));
	/* the remote-endpoint pair is a cycle: both links CYCLE, nothing else */
	CU_ASSERT_PTR_NOT_NULL(f = find_link(sc, "/soc/dsi@6000", "/soc/panel@7000"));
	CU_ASSERT(f && has_flag(f, "CYCLE"));
	CU_ASSERT_PTR_NOT_NULL(f = find_link(sc, "/soc/panel@7000", "/soc/dsi@6000"));
	CU_ASSERT(f && has_flag(f, "CYCLE"));
	json_array_foreach(json_object_get(sc, "links"), i, l)
		ncycle += (unsigned)has_flag(json_object_get(l, "flags"), "CYCLE");
	CU_ASSERT_EQUAL(ncycle, 2);
	CU_ASSERT_EQUAL(st.cycle_links, 2);
	CU_ASSERT_EQUAL(st.links, 9);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(sc, "links")), 9);
	json_decref(sc);
}

static void test_loads(void)
{
	struct dl_scenario *s = NULL;
	struct dl_error err;
	char path[128];
	json_t *sc;

	CU_ASSERT_EQUAL_FATAL(dl_dtb_import(dtb, dtb_len, "tiny.dtb", &sc, NULL, &err), 0);
	snprintf(path, sizeof(path), "%s/tiny.json", tmpdir);
	CU_ASSERT_EQUAL_FATAL(json_dump_file(sc, path, JSON_INDENT(2)), 0);
	json_decref(sc);
	CU_ASSERT_EQUAL_FATAL(dl_scenario_load(path, NULL, 0, NULL, &s, &err), 0);
	CU_ASSERT_EQUAL(s->ndev, 9);
	CU_ASSERT_EQUAL(s->nlink, 9);
	CU_ASSERT_NOT_EQUAL(dl_sc_find(s, "/soc/i2c@4000/sensor@48"), DL_SC_NONE);
	dl_scenario_free(s);
}

static void test_file_and_errors(void)
{
	struct dl_error err;
	char path[128];
	json_t *sc;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tiny.dtb", tmpdir);
	CU_ASSERT_EQUAL(dl_dtb_import_file(path, &sc, NULL, &err), 0);
	json_decref(sc);
	CU_ASSERT_EQUAL(dl_dtb_import_file("/nonexistent/x.dtb", &sc, NULL, &err), -ENOENT);
	CU_ASSERT_EQUAL(dl_dtb_import("", 0, "empty", &sc, NULL, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "empty"));
	CU_ASSERT_EQUAL(dl_dtb_import(dtb, dtb_len / 2, "half.dtb", &sc, NULL, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "half.dtb"));
	{	/* an old-version header: libfdt 1.6.1's fdt_check_full() crashed on it */
		char *old = malloc(dtb_len);

		CU_ASSERT_PTR_NOT_NULL_FATAL(old);
		memcpy(old, dtb, dtb_len);
		memcpy(old + 20, "\0\0\0\x09\0\0\0\x03", 8);	/* version 9, last_comp 3 */
		CU_ASSERT_EQUAL(dl_dtb_import(old, dtb_len, "old.dtb", &sc, NULL, &err), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "version 9"));
		free(old);
	}
	snprintf(path, sizeof(path), "%s/garbage", tmpdir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs("this is not a device tree, just text that is long enough for a header\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(dl_dtb_import_file(path, &sc, NULL, &err), -EINVAL);
	CU_ASSERT_PTR_NULL(sc);
}

/* Two devices that are each other's supplier through clocks: a cycle. */
static void test_clock_cycle(void)
{
	static const char dts[] =
		"/dts-v1/;\n/ {\n"
		"	a: a { compatible = \"x,a\"; #clock-cells = <0>; clocks = <&b>; };\n"
		"	b: b { compatible = \"x,b\"; #clock-cells = <0>; clocks = <&a>; };\n"
		"	c { compatible = \"x,c\"; clocks = <&a>, <&b>; };\n"
		"};\n";
	struct dl_dtb_stats st;
	struct dl_error err;
	size_t len;
	char *blob = compile("cyc", dts, &len);
	json_t *sc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(blob);
	CU_ASSERT_EQUAL_FATAL(dl_dtb_import(blob, len, "cyc.dtb", &sc, &st, &err), 0);
	CU_ASSERT_EQUAL(st.links, 4);
	CU_ASSERT_EQUAL(st.cycle_links, 2);
	CU_ASSERT(has_flag(find_link(sc, "/a", "/b"), "CYCLE"));
	CU_ASSERT(!has_flag(find_link(sc, "/c", "/a"), "CYCLE"));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(sc, "name")), "cyc.dtb");
	json_decref(sc);
	free(blob);
}

static void test_fuzz(void)
{
	char *buf = malloc(dtb_len);
	uint64_t rng = 12345;
	unsigned ok = 0, bad = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	for (int iter = 0; iter < 2000; iter++) {
		struct dl_error err;
		size_t len = dtb_len;
		unsigned nflip;
		json_t *sc;
		int ret;

		memcpy(buf, dtb, dtb_len);
		rng = dl_mix64(rng);
		nflip = 1 + (unsigned)(rng % 8);
		for (unsigned k = 0; k < nflip; k++) {
			rng = dl_mix64(rng);
			buf[rng % dtb_len] ^= (char)(1u << ((rng >> 32) % 8));
			if ((rng >> 40) % 4 == 0)	/* sometimes a whole random byte */
				buf[(rng >> 8) % dtb_len] = (char)(rng >> 48);
		}
		rng = dl_mix64(rng);
		if (rng % 4 == 0)
			len = (size_t)((rng >> 16) % dtb_len);
		ret = dl_dtb_import(buf, len, "fuzz.dtb", &sc, NULL, &err);
		CU_ASSERT(ret == 0 || ret == -EINVAL);
		if (ret == 0) {
			CU_ASSERT_PTR_NOT_NULL(sc);
			json_decref(sc);
			ok++;
		} else {
			bad++;
		}
	}
	CU_ASSERT_EQUAL(ok + bad, 2000);
	CU_ASSERT(bad > 0);
	free(buf);
}

int main(void)
{
	CU_pSuite s;
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("dtb_import", init_suite, clean_suite);
	if (!s || !CU_add_test(s, "tiny SoC links and CYCLE marks", test_tiny_soc) ||
	    !CU_add_test(s, "scenario loads", test_loads) ||
	    !CU_add_test(s, "file reading and errors", test_file_and_errors) ||
	    !CU_add_test(s, "clock cycle", test_clock_cycle) ||
	    !CU_add_test(s, "fuzzed DTBs never crash", test_fuzz)) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
