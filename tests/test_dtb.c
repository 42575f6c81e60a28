/*
 * test_dtb.c - dlsim import-dtb (sim/scenario/dtb_import.c): a tiny SoC
 * compiled with dtc at test time yields the fw_devlink links of 6.12 (own-node
 * links with FW_DEVLINK_FLAGS_RPM, SYNC_STATE_ONLY proxies for child nodes,
 * SYNC_STATE_ONLY|CYCLE on a remote-endpoint cycle, none to early-initialised
 * irqchips and clocks), sync devices unless --async all, a scenario that
 * dl_scenario_load() accepts; and 2000 corrupted/truncated DTBs are refused or
 * imported, never crash.  The fw_devlink tests use made-up compatibles, so
 * they import with --drivers all (every device binds); the driver-facts test
 * uses real ones: a driver built in or as a module binds, a compatible without
 * a driver never binds (latency 0, links to it relaxed, no children), an i2c
 * client is async by its bus, and each device says where its facts came from.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libfdt.h>

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

/* The fw_devlink tests' made-up compatibles have no driver: every device binds. */
static const struct dl_dtb_opts all_bind = { .drivers = DL_DTB_DRIVERS_ALL };

static void test_tiny_soc(void)
{
	struct dl_dtb_stats st;
	struct dl_error err;
	json_t *sc, *f;
	size_t i;
	json_t *l;
	unsigned ncycle = 0;

	CU_ASSERT_EQUAL_FATAL(dl_dtb_import_opts(dtb, dtb_len, "tiny.dtb", &all_bind, &sc, &st,
						 &err), 0);
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
	/* the GIC is IRQCHIP_DECLAREd: of_irq_init() makes it OF_POPULATED, never a device */
	CU_ASSERT(!has_device(sc, "/soc/interrupt-controller@1000", "/soc"));
	CU_ASSERT_EQUAL(st.devices, 8);
	/* links: clocks with args, pinctrl-0 via a config child, *-supply, *-gpios */
	CU_ASSERT_PTR_NOT_NULL(f = find_link(sc, "/soc/i2c@4000", "/soc/clock-controller@2000"));
	/* fw_devlink=on's FW_DEVLINK_FLAGS_RPM, and nothing else */
	CU_ASSERT(f && json_array_size(f) == 3 && has_flag(f, "INFERRED") &&
		  has_flag(f, "AUTOPROBE_CONSUMER") && has_flag(f, "PM_RUNTIME"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/i2c@4000", "/soc/pinctrl@3000"));
	/* interrupts: the parent is the early GIC, "might never become dev" */
	CU_ASSERT_PTR_NULL(find_link(sc, "/soc/i2c@4000", "/soc/interrupt-controller@1000"));
	CU_ASSERT_EQUAL(st.early_nodes, 1);
	CU_ASSERT_EQUAL(st.early_dropped, 1);
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/i2c@4000/sensor@48", "/regulator-3v3"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/i2c@4000/sensor@48", "/soc/pinctrl@3000"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/dsi@6000", "/soc/clock-controller@2000"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/soc/panel@7000", "/regulator-3v3"));
	/* no link from a disabled node, from the bus's interrupt-parent, or from /cpus */
	CU_ASSERT_PTR_NULL(find_link(sc, "/soc", "/soc/interrupt-controller@1000"));
	/* the remote-endpoint pair is a cycle: both links SYNC_STATE_ONLY|CYCLE, nothing else */
	CU_ASSERT_PTR_NOT_NULL(f = find_link(sc, "/soc/dsi@6000", "/soc/panel@7000"));
	CU_ASSERT(f && has_flag(f, "CYCLE") && has_flag(f, "SYNC_STATE_ONLY") &&
		  has_flag(f, "INFERRED") && json_array_size(f) == 3);
	CU_ASSERT_PTR_NOT_NULL(f = find_link(sc, "/soc/panel@7000", "/soc/dsi@6000"));
	CU_ASSERT(f && has_flag(f, "CYCLE") && has_flag(f, "SYNC_STATE_ONLY"));
	json_array_foreach(json_object_get(sc, "links"), i, l)
		ncycle += (unsigned)has_flag(json_object_get(l, "flags"), "CYCLE");
	CU_ASSERT_EQUAL(ncycle, 2);
	CU_ASSERT_EQUAL(st.cycle_links, 2);
	CU_ASSERT_EQUAL(st.links, 8);
	CU_ASSERT_EQUAL(st.blocking, 6);
	CU_ASSERT_EQUAL(st.proxy, 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(sc, "links")), 8);
	json_decref(sc);
}

static void test_loads(void)
{
	struct dl_scenario *s = NULL;
	struct dl_error err;
	char path[128];
	json_t *sc;

	CU_ASSERT_EQUAL_FATAL(dl_dtb_import_opts(dtb, dtb_len, "tiny.dtb", &all_bind, &sc, NULL,
						 &err), 0);
	snprintf(path, sizeof(path), "%s/tiny.json", tmpdir);
	CU_ASSERT_EQUAL_FATAL(json_dump_file(sc, path, JSON_INDENT(2)), 0);
	json_decref(sc);
	CU_ASSERT_EQUAL_FATAL(dl_scenario_load(path, NULL, 0, NULL, &s, &err), 0);
	CU_ASSERT_EQUAL(s->ndev, 8);
	CU_ASSERT_EQUAL(s->nlink, 8);
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
	{	/* a property claiming 0xfffffff4 bytes: libfdt 1.6.1 walked it for minutes */
		char *big = malloc(dtb_len);
		int poff = fdt_first_property_offset(dtb, 0);

		CU_ASSERT_PTR_NOT_NULL_FATAL(big);
		CU_ASSERT_FATAL(poff >= 0);
		memcpy(big, dtb, dtb_len);
		memcpy(big + fdt_off_dt_struct(dtb) + (unsigned)poff + 4, "\xff\xff\xff\xf4", 4);
		CU_ASSERT_EQUAL(dl_dtb_import(big, dtb_len, "big.dtb", &sc, NULL, &err), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "claims more bytes"));
		free(big);
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

/* Import @dts with @opt (NULL: defaults); the scenario, or NULL. */
static json_t *import_dts(const char *name, const char *dts, const struct dl_dtb_opts *opt,
			  struct dl_dtb_stats *st)
{
	struct dl_error err;
	size_t len;
	char *blob = compile(name, dts, &len);
	json_t *sc = NULL;

	if (blob && dl_dtb_import_opts(blob, len, name, opt, &sc, st, &err))
		sc = NULL;
	free(blob);
	return sc;
}

/*
 * __fw_devlink_link_to_suppliers(): a property of a child node that is not a
 * device links the owning device with FW_DEVLINK_FLAGS_PERMISSIVE
 * (INFERRED|SYNC_STATE_ONLY), a proxy that gates nothing; when the device has
 * its own link to the same supplier, device_link_add() keeps the stronger one.
 */
static void test_child_node_property_is_a_proxy(void)
{
	static const char dts[] =
		"/dts-v1/;\n/ {\n"
		"	r1: reg1 { compatible = \"regulator-fixed\"; };\n"
		"	r2: reg2 { compatible = \"regulator-fixed\"; };\n"
		"	pmic { compatible = \"x,pmic\"; vdd-supply = <&r2>;\n"
		"		regulators { ldo1 { vin-supply = <&r1>; }; ldo2 { vin-supply = <&r2>; }; };\n"
		"	};\n"
		"};\n";
	struct dl_dtb_stats st;
	json_t *sc = import_dts("proxy", dts, NULL, &st), *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	f = find_link(sc, "/pmic", "/reg1");
	CU_ASSERT(f && json_array_size(f) == 2 && has_flag(f, "INFERRED") &&
		  has_flag(f, "SYNC_STATE_ONLY"));
	f = find_link(sc, "/pmic", "/reg2");
	CU_ASSERT(f && has_flag(f, "AUTOPROBE_CONSUMER") && !has_flag(f, "SYNC_STATE_ONLY"));
	CU_ASSERT_EQUAL(st.links, 2);
	CU_ASSERT_EQUAL(st.proxy, 1);
	CU_ASSERT_EQUAL(st.blocking, 1);
	json_decref(sc);
}

/*
 * fw_devlink_create_devlink(): no link to a supplier initialised before the
 * driver model (FWNODE_FLAG_INITIALIZED without a bound driver), nor to a node
 * beneath one.  IRQCHIP_DECLARE and CLK_OF_DECLARE nodes are not devices
 * (OF_POPULATED); a CLK_OF_DECLARE_DRIVER node is one, but still no supplier.
 * An IRQCHIP_DECLARE compatible counts only with "interrupt-controller" and a
 * parent of_irq_init() took first.
 */
static void test_early_initialised_suppliers(void)
{
	static const char dts[] =
		"/dts-v1/;\n/ {\n"
		"	#address-cells = <1>; #size-cells = <1>;\n"
		"	interrupt-parent = <&gic>;\n"
		"	osc: osc { compatible = \"fixed-clock\"; #clock-cells = <0>; };\n"
		"	gic: gic@0 { compatible = \"arm,gic-400\"; reg = <0 1>; interrupt-controller;\n"
		"		#interrupt-cells = <3>; #address-cells = <1>; #size-cells = <1>; ranges;\n"
		"		frame: v2m@10 { compatible = \"arm,gic-v2m-frame\"; reg = <0x10 1>;\n"
		"			msi-controller; }; };\n"
		"	rintc: intc@100 { compatible = \"allwinner,sun6i-a31-r-intc\"; reg = <0x100 1>;\n"
		"		interrupt-controller; #interrupt-cells = <3>; interrupts = <0 1 4>; };\n"
		"	notirq: sysirq@200 { compatible = \"mediatek,mt6577-sysirq\"; reg = <0x200 1>;\n"
		"		#clock-cells = <0>; };\n"
		"	rtc: rtc@300 { compatible = \"allwinner,sun6i-a31-rtc\"; reg = <0x300 1>;\n"
		"		#clock-cells = <1>; };\n"
		"	gpio: gpio@400 { compatible = \"x,gpio\"; reg = <0x400 1>; interrupt-controller;\n"
		"		#interrupt-cells = <2>; gpio-controller; #gpio-cells = <2>;\n"
		"		interrupts = <0 2 4>; };\n"
		"	dev@500 { compatible = \"x,dev\"; reg = <0x500 1>; clocks = <&osc>, <&rtc 0>;\n"
		"		interrupts = <0 3 4>; msi-parent = <&frame>;\n"
		"		interrupts-extended = <&rintc 0 1 2>, <&gpio 1 2>; };\n"
		"	user@600 { compatible = \"x,user\"; reg = <0x600 1>; clocks = <&notirq>; };\n"
		"};\n";
	struct dl_dtb_stats st;
	json_t *sc = import_dts("early", dts, NULL, &st);

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT(!has_device(sc, "/osc", NULL));
	CU_ASSERT(!has_device(sc, "/gic@0", NULL));
	CU_ASSERT(!has_device(sc, "/gic@0/v2m@10", "/gic@0"));
	CU_ASSERT(!has_device(sc, "/intc@100", NULL));	/* its parent, the GIC, went first */
	CU_ASSERT(has_device(sc, "/sysirq@200", NULL));	/* no "interrupt-controller" */
	CU_ASSERT(has_device(sc, "/rtc@300", NULL));	/* CLK_OF_DECLARE_DRIVER */
	CU_ASSERT(has_device(sc, "/gpio@400", NULL));
	CU_ASSERT_PTR_NULL(find_link(sc, "/dev@500", "/rtc@300"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/dev@500", "/gpio@400"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/user@600", "/sysirq@200"));
	CU_ASSERT_EQUAL(st.links, 2);
	/* dev: osc, rtc, rintc, the v2m frame; gpio: the GIC */
	CU_ASSERT_EQUAL(st.early_dropped, 5);
	CU_ASSERT_EQUAL(st.early_nodes, 4);
	json_decref(sc);
	/* the generated table is sorted for bsearch, and knows the usual suspects */
	CU_ASSERT_EQUAL(dl_dtb_early_compat("arm,gic-400"), DL_DTB_EARLY_IRQCHIP);
	CU_ASSERT_EQUAL(dl_dtb_early_compat("arm,gic-v3"), DL_DTB_EARLY_IRQCHIP);
	CU_ASSERT_EQUAL(dl_dtb_early_compat("fixed-clock"), DL_DTB_EARLY_CLK);
	CU_ASSERT_EQUAL(dl_dtb_early_compat("rockchip,rk3399-cru"), DL_DTB_EARLY_CLK);
	CU_ASSERT_EQUAL(dl_dtb_early_compat("allwinner,sun6i-a31-rtc"), DL_DTB_EARLY_CLK_DRIVER);
	/* MIPS and 32-bit ARM entries are not built into Debian's arm64 image */
	CU_ASSERT_EQUAL(dl_dtb_early_compat("ingenic,jz4740-tcu"), 0);
	CU_ASSERT_EQUAL(dl_dtb_early_compat("arm,sp810"), 0);
	CU_ASSERT_EQUAL(dl_dtb_early_compat("allwinner,sun50i-a64-ccu"), 0);
	CU_ASSERT_EQUAL(dl_dtb_early_compat("regulator-fixed"), 0);
	CU_ASSERT_EQUAL(dl_dtb_early_compat(""), 0);
}

/* --async driver (default), none and all: "defaults": {"async": ...}. */
static void test_async_option(void)
{
	struct dl_dtb_opts opt = { .kernel = DL_DTB_K612, .async = DL_DTB_ASYNC_ALL };
	struct dl_scenario *s = NULL;
	struct dl_error err;
	char path[128];
	json_t *sc = import_dts("async", tiny_dts, NULL, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT(json_is_false(json_object_get(json_object_get(sc, "defaults"), "async")));
	snprintf(path, sizeof(path), "%s/async.json", tmpdir);
	CU_ASSERT_EQUAL_FATAL(json_dump_file(sc, path, JSON_INDENT(2)), 0);
	json_decref(sc);
	CU_ASSERT_EQUAL_FATAL(dl_scenario_load(path, NULL, 0, NULL, &s, &err), 0);
	for (uint32_t d = 0; d < s->ndev; d++)
		CU_ASSERT(!s->dev[d].async);
	dl_scenario_free(s);
	sc = import_dts("async", tiny_dts, &opt, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT(json_is_true(json_object_get(json_object_get(sc, "defaults"), "async")));
	json_decref(sc);
}

static json_t *device(json_t *sc, const char *name)
{
	size_t i;
	json_t *d;

	json_array_foreach(json_object_get(sc, "devices"), i, d)
		if (!strcmp(json_string_value(json_object_get(d, "name")), name))
			return d;
	return NULL;
}

static const char *dstr(json_t *sc, const char *name, const char *key)
{
	const char *v = json_string_value(json_object_get(device(sc, name), key));

	return v ? v : "";
}

/*
 * Driver facts from the kernel's table (gen-dtb-drivers.sh): rk3x-i2c and
 * rk8xx-i2c bind (module, built in); the PMIC is an i2c client, async by its
 * bus (i2c_new_client_device()); a compatible no driver has never binds: no
 * callbacks, the link to it relaxed (fw_devlink_drivers_done()), its child
 * never created; a driver that Debian's config does not build never binds
 * either.  Every device says where its facts came from (x- keys).
 */
static void test_driver_facts(void)
{
	static const char dts[] =
		"/dts-v1/;\n/ {\n"
		"	model = \"Facts\"; #address-cells = <1>; #size-cells = <1>;\n"
		"	reg1: regulator-3v3 { compatible = \"regulator-fixed\"; regulator-name = \"3v3\"; };\n"
		"	soc { compatible = \"simple-bus\"; #address-cells = <1>; #size-cells = <1>; ranges;\n"
		"		nod: nodrv@1000 { compatible = \"acme,no-such-device\"; reg = <0x1000 0x10>;\n"
		"			#clock-cells = <0>;\n"
		"			child { compatible = \"regulator-fixed\"; }; };\n"
		"		i2c@2000 { compatible = \"rockchip,rk3399-i2c\"; reg = <0x2000 0x10>;\n"
		"			#address-cells = <1>; #size-cells = <0>; clocks = <&nod>;\n"
		"			pmic@1b { compatible = \"rockchip,rk808\"; reg = <0x1b>;\n"
		"				vcc1-supply = <&reg1>; }; };\n"
		"		sata@3000 { compatible = \"mediatek,mtk-ahci\"; reg = <0x3000 0x10>; };\n"
		"	};\n};\n";
	struct dl_dtb_opts none = { .async = DL_DTB_ASYNC_NONE };
	struct dl_dtb_stats st;
	struct dl_scenario *s = NULL;
	struct dl_error err;
	char path[128];
	json_t *sc = import_dts("facts", dts, NULL, &st), *l;
	const char *pmic = "/soc/i2c@2000/pmic@1b", *nod = "/soc/nodrv@1000";

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT(strstr(json_string_value(json_object_get(sc, "x-driver-facts")),
			 "linux-source-6.12") != NULL);
	/* a compatible with a driver: its name, file, build and async facts */
	CU_ASSERT_STRING_EQUAL(dstr(sc, "/soc/i2c@2000", "x-driver"), "rk3x-i2c");
	CU_ASSERT_STRING_EQUAL(dstr(sc, "/soc/i2c@2000", "x-driver-file"),
			       "drivers/i2c/busses/i2c-rk3x.c");
	CU_ASSERT(strstr(dstr(sc, "/soc/i2c@2000", "x-driver-build"), "CONFIG_I2C_RK3X") != NULL);
	CU_ASSERT(!json_is_true(json_object_get(device(sc, "/soc/i2c@2000"), "async")));
	CU_ASSERT(!strncmp(dstr(sc, "/soc/i2c@2000", "x-async"), "sync:", 5));
	/* an async bus: i2c clients */
	CU_ASSERT_STRING_EQUAL(dstr(sc, pmic, "x-driver"), "rk8xx-i2c");
	CU_ASSERT_STRING_EQUAL(dstr(sc, pmic, "x-driver-bus"), "i2c");
	CU_ASSERT(json_is_true(json_object_get(device(sc, pmic), "async")));
	CU_ASSERT(strstr(dstr(sc, pmic, "x-async"), "i2c bus") != NULL);
	CU_ASSERT_PTR_NOT_NULL(l = find_link(sc, pmic, "/regulator-3v3"));
	CU_ASSERT(l && json_array_size(l) == 3 && has_flag(l, "AUTOPROBE_CONSUMER"));
	/* a compatible without a driver: never binds, relaxed link, no child */
	CU_ASSERT_PTR_NOT_NULL_FATAL(device(sc, nod));
	CU_ASSERT(json_is_null(json_object_get(device(sc, nod), "x-driver")));
	CU_ASSERT(json_is_false(json_object_get(device(sc, nod), "x-binds")));
	CU_ASSERT(strstr(dstr(sc, nod, "x-why"), "no driver") != NULL);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(device(sc, nod), "probe")), 0);
	CU_ASSERT_PTR_NULL(device(sc, "/soc/nodrv@1000/child"));
	CU_ASSERT_PTR_NOT_NULL(l = find_link(sc, "/soc/i2c@2000", nod));
	CU_ASSERT(l && json_array_size(l) == 2 && has_flag(l, "SYNC_STATE_ONLY"));
	/* a driver in the source that Debian's config does not build */
	CU_ASSERT(json_is_false(json_object_get(device(sc, "/soc/sata@3000"), "x-binds")));
	CU_ASSERT(strstr(dstr(sc, "/soc/sata@3000", "x-why"), "not built") != NULL);
	CU_ASSERT_STRING_EQUAL(dstr(sc, "/soc/sata@3000", "x-driver-file"), "drivers/ata/ahci_mtk.c");
	CU_ASSERT_EQUAL(st.devices, 6);
	CU_ASSERT_EQUAL(st.known_driver, 5);
	CU_ASSERT_EQUAL(st.bound, 4);
	CU_ASSERT_EQUAL(st.never_bind, 2);
	CU_ASSERT_EQUAL(st.not_built, 1);
	CU_ASSERT_EQUAL(st.async_devices, 1);
	CU_ASSERT_EQUAL(st.relaxed, 1);
	CU_ASSERT_EQUAL(st.unpopulated, 1);
	CU_ASSERT_EQUAL(st.blocking, 1);
	/* the scenario loads, with the PMIC async and the rest sync */
	snprintf(path, sizeof(path), "%s/facts.json", tmpdir);
	CU_ASSERT_EQUAL_FATAL(json_dump_file(sc, path, JSON_INDENT(2)), 0);
	json_decref(sc);
	CU_ASSERT_EQUAL_FATAL(dl_scenario_load(path, NULL, 0, NULL, &s, &err), 0);
	for (uint32_t d = 0; d < s->ndev; d++)
		CU_ASSERT_EQUAL(s->dev[d].async, d == dl_sc_find(s, pmic));
	dl_scenario_free(s);
	/* --async none overrides the bus; --drivers all binds everything */
	sc = import_dts("facts", dts, &none, &st);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT(!json_is_true(json_object_get(device(sc, pmic), "async")));
	CU_ASSERT_STRING_EQUAL(dstr(sc, pmic, "x-async"), "--async none");
	CU_ASSERT_EQUAL(st.async_devices, 0);
	json_decref(sc);
	sc = import_dts("facts", dts, &all_bind, &st);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_PTR_NOT_NULL(device(sc, "/soc/nodrv@1000/child"));
	CU_ASSERT_EQUAL(st.never_bind, 0);
	CU_ASSERT_EQUAL(st.relaxed, 0);
	json_decref(sc);
	/* per version: 7.3's table knows drivers 6.12 did not have */
	CU_ASSERT_PTR_NULL(dl_dtb_driver_of(DL_DTB_K612, "rockchip,rk3368-dw-hdmi"));
	CU_ASSERT_PTR_NOT_NULL(dl_dtb_driver_of(DL_DTB_K73, "rockchip,rk3368-dw-hdmi"));
	CU_ASSERT_PTR_NULL(dl_dtb_driver_of(DL_DTB_K73, "acme,no-such-device"));
	CU_ASSERT(strstr(dl_dtb_driver_source(DL_DTB_K73), "7.3") != NULL);
}

/*
 * An i2c client whose driver has only an i2c_device_id table (max77620.c):
 * i2c_device_match() takes the first compatible without its vendor; on
 * another bus the same compatible has no driver.
 */
static void test_match_by_id(void)
{
	static const char dts[] =
		"/dts-v1/;\n/ {\n"
		"	#address-cells = <1>; #size-cells = <1>;\n"
		"	i2c@2000 { compatible = \"rockchip,rk3399-i2c\"; reg = <0x2000 0x10>;\n"
		"		#address-cells = <1>; #size-cells = <0>;\n"
		"		pmic@3c { compatible = \"maxim,max77620\"; reg = <0x3c>; }; };\n"
		"	pmic { compatible = \"maxim,max77620\"; };\n"
		"};\n";
	struct dl_dtb_stats st;
	json_t *sc = import_dts("byid", dts, NULL, &st);
	const char *pmic = "/i2c@2000/pmic@3c";

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_PTR_NULL(dl_dtb_driver_of(DL_DTB_K612, "maxim,max77620"));
	CU_ASSERT_STRING_EQUAL(dstr(sc, pmic, "x-driver"), "max77620");
	CU_ASSERT_STRING_EQUAL(dstr(sc, pmic, "x-driver-file"), "drivers/mfd/max77620.c");
	CU_ASSERT(strstr(dstr(sc, pmic, "x-match"), "device_id") != NULL);
	CU_ASSERT(json_is_true(json_object_get(device(sc, pmic), "async")));
	CU_ASSERT(json_is_false(json_object_get(device(sc, "/pmic"), "x-binds")));
	CU_ASSERT_EQUAL(st.never_bind, 1);
	json_decref(sc);
}

/* A latency hook (the atlas's way in): called per bound device with its driver. */
static int hook_calls;
static int hook(void *ctx, const char *driver, const char *compat, json_t *dev)
{
	hook_calls++;
	if (driver && !strcmp(driver, "rk3x-i2c")) {
		CU_ASSERT_STRING_EQUAL(compat, "rockchip,rk3399-i2c");
		json_object_set_new(dev, "probe", json_string("7ms"));
		json_object_set_new(dev, "x-latency-from", json_string(ctx));
	}
	return driver && !strcmp(driver, "reg-fixed-voltage") && !strcmp(ctx, "fail") ? -EINVAL : 0;
}

static void test_dev_hook(void)
{
	static const char dts[] =
		"/dts-v1/;\n/ {\n"
		"	reg1: regulator-3v3 { compatible = \"regulator-fixed\"; regulator-name = \"3v3\"; };\n"
		"	nodrv { compatible = \"acme,no-such-device\"; };\n"
		"	i2c@2000 { compatible = \"rockchip,rk3399-i2c\"; vdd-supply = <&reg1>; };\n"
		"};\n";
	struct dl_dtb_opts opt = { .dev_hook = hook, .dev_hook_ctx = "test atlas" };
	json_t *sc;

	hook_calls = 0;
	sc = import_dts("hook", dts, &opt, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL(hook_calls, 2);		/* not the device that never binds */
	CU_ASSERT_STRING_EQUAL(dstr(sc, "/i2c@2000", "probe"), "7ms");
	CU_ASSERT_STRING_EQUAL(dstr(sc, "/i2c@2000", "x-latency-from"), "test atlas");
	json_decref(sc);
	opt.dev_hook_ctx = "fail";
	CU_ASSERT_PTR_NULL(import_dts("hook", dts, &opt, NULL));
}

/*
 * of_supplier_bindings of 6.12 and 7.3: iommus, iommu-map and dmas are
 * "optional" (fw_devlink.strict only); pinctrl-0..8 in 6.12, any pinctrl-N
 * and mmc-pwrseq in 7.3; a gpio hog's gpios are its parent's; an empty (0)
 * entry ends the list; nvmem-cells take #nvmem-cell-cells; post-init-providers
 * never make a link.
 */
static void test_bindings_per_version(void)
{
	static const char dts[] =
		"/dts-v1/;\n/ {\n"
		"	iommu: iommu { compatible = \"x,iommu\"; #iommu-cells = <1>; };\n"
		"	dma: dma { compatible = \"x,dma\"; #dma-cells = <1>; };\n"
		"	p9: pins9 { compatible = \"x,pins9\"; };\n"
		"	pw: pwrseq { compatible = \"mmc-pwrseq-simple\"; };\n"
		"	a: a { compatible = \"x,a\"; #clock-cells = <0>; };\n"
		"	b: b { compatible = \"x,b\"; #clock-cells = <0>; };\n"
		"	nv: nv { compatible = \"x,nv\"; #nvmem-cell-cells = <1>; };\n"
		"	c: c { compatible = \"x,c\"; #clock-cells = <0>; };\n"
		"	g: gpio { compatible = \"x,gpio\"; gpio-controller; #gpio-cells = <2>;\n"
		"		hog { gpio-hog; gpios = <&g 1 0>; }; };\n"
		"	dev { compatible = \"x,dev\"; iommus = <&iommu 1>; dmas = <&dma 2>;\n"
		"		pinctrl-9 = <&p9>; mmc-pwrseq = <&pw>; clocks = <&a>, <0>, <&b>;\n"
		"		nvmem-cells = <&nv 3>, <&c>; post-init-providers = <&c>; };\n"
		"};\n";
	struct dl_dtb_opts k73 = { .kernel = DL_DTB_K73 };
	struct dl_dtb_stats st;
	json_t *sc = import_dts("bind", dts, NULL, &st);

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_PTR_NULL(find_link(sc, "/dev", "/iommu"));
	CU_ASSERT_PTR_NULL(find_link(sc, "/dev", "/dma"));
	CU_ASSERT_PTR_NULL(find_link(sc, "/dev", "/pins9"));
	CU_ASSERT_PTR_NULL(find_link(sc, "/dev", "/pwrseq"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/dev", "/a"));
	CU_ASSERT_PTR_NULL(find_link(sc, "/dev", "/b"));	/* after the empty entry */
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/dev", "/nv"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/dev", "/c"));	/* nvmem-cells, not post-init */
	CU_ASSERT_EQUAL(st.links, 3);
	json_decref(sc);
	sc = import_dts("bind73", dts, &k73, &st);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/dev", "/pins9"));
	CU_ASSERT_PTR_NOT_NULL(find_link(sc, "/dev", "/pwrseq"));
	CU_ASSERT_PTR_NULL(find_link(sc, "/dev", "/iommu"));
	CU_ASSERT_EQUAL(st.links, 5);
	json_decref(sc);
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
	    !CU_add_test(s, "child node property is a proxy", test_child_node_property_is_a_proxy) ||
	    !CU_add_test(s, "early-initialised suppliers", test_early_initialised_suppliers) ||
	    !CU_add_test(s, "--async none|all", test_async_option) ||
	    !CU_add_test(s, "driver facts", test_driver_facts) ||
	    !CU_add_test(s, "per-device latency hook", test_dev_hook) ||
	    !CU_add_test(s, "i2c_device_id match", test_match_by_id) ||
	    !CU_add_test(s, "bindings per version", test_bindings_per_version) ||
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
