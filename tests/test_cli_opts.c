/*
 * test_cli_opts.c - the walk of argv against a verb's table of options
 * (sim/cli/cli_opts.c): where each kind of row puts its value, the
 * refusals and their words, and what reaches the verb's own handlers.
 */
#include <CUnit/Basic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/cli_opts.h"

#define MAX_SEEN 8
/* a string compare that fails, not crashes, on NULL */
#define ASSERT_STR(s, want) CU_ASSERT_TRUE((s) && !strcmp((s), (want)))

struct t_opts {
	bool on, off;
	const char *name;
	uint32_t n;
	uint64_t big;
	unsigned actions;
	const char *seen[MAX_SEEN];	/* what .other got, in order */
	unsigned nseen;
	const char *after;		/* what .after_dashdash got */
};

static int t_action(void *obj, const char *verb, const char *v)
{
	(void)verb, (void)v;
	((struct t_opts *)obj)->actions++;
	return 1;
}

static int t_other(void *obj, const char *verb, const char *arg)
{
	struct t_opts *o = obj;

	(void)verb;
	if (o->nseen < MAX_SEEN)
		o->seen[o->nseen++] = arg;
	return 0;
}

static int t_after(void *obj, const char *verb, const char *arg)
{
	(void)verb;
	((struct t_opts *)obj)->after = arg;
	return 0;
}

#define ONLY_RUN 1u
#define ONLY_COMPARE 2u

static const struct cli_opt t_table[] = {
	{ CLI_ACTION("--help", "-h", t_action) },
	{ CLI_TRUE("--on", NULL, struct t_opts, on) },
	{ CLI_FALSE("--no-off", struct t_opts, off) },
	{ CLI_STR("--name", struct t_opts, name) },
	{ CLI_U32("--n", struct t_opts, n, 1, 10, " ms") },
	{ CLI_U64("--big", struct t_opts, big) },
	{ CLI_STR("--compare-only", struct t_opts, name), .only = ONLY_COMPARE },
};

static struct cli_verb verb(unsigned mask, cli_opt_fn other, cli_opt_fn after)
{
	return (struct cli_verb){ .name = "t", .opt = t_table,
				  .nopt = sizeof(t_table) / sizeof(t_table[0]), .mask = mask,
				  .other = other, .after_dashdash = after };
}

/* stderr of one parse, into err_text */
static char err_text[512];
/* the argv strings of every parse: the options point into them until the suite ends */
static char *kept[1024];
static unsigned nkept;

static int free_kept(void)
{
	while (nkept)
		free(kept[--nkept]);
	return 0;
}

static int parse(const struct cli_verb *vb, struct t_opts *o, int argc, const char **argv_c)
{
	char *argv[16];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO), rc;
	size_t n;

	for (int i = 0; i < argc && i < 16; i++) {
		argv[i] = strdup(argv_c[i]);   /* the parser may cut values (--set): ours */
		if (nkept < sizeof(kept) / sizeof(kept[0]))
			kept[nkept++] = argv[i];
	}
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	rc = cli_opts_parse(vb, argc, argv, o);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(err_text, 1, sizeof(err_text) - 1, tmp);
	err_text[n] = '\0';
	fclose(tmp);
	/* argv's strings stay (kept): the options point into them */
	return rc;
}

#define PARSE(vb, o, ...) parse((vb), (o), (int)(sizeof((const char *[]){ __VA_ARGS__ }) / \
					       sizeof(const char *)), (const char *[]){ __VA_ARGS__ })

static void test_values_go_to_their_fields(void)
{
	struct cli_verb vb = verb(0, NULL, NULL);
	struct t_opts o = { .off = true };

	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--on", "--no-off", "--name", "x", "--n=7",
			      "--big", "18446744073709551615"), 0);
	CU_ASSERT_TRUE(o.on);
	CU_ASSERT_FALSE(o.off);
	ASSERT_STR(o.name, "x");
	CU_ASSERT_EQUAL(o.n, 7);
	CU_ASSERT_EQUAL(o.big, UINT64_MAX);
	CU_ASSERT_STRING_EQUAL(err_text, "");
}

static void test_u32_out_of_range_is_refused_with_its_range(void)
{
	struct cli_verb vb = verb(0, NULL, NULL);
	struct t_opts o = { .n = 5 };

	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--n", "11"), -1);
	CU_ASSERT_STRING_EQUAL(err_text, "dlsim t: --n '11': expected 1..10 ms\n");
	CU_ASSERT_EQUAL(o.n, 5);
	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--n=0"), -1);
	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--n", "-3"), -1);
	/* a value missing at the end is "" and refused as such */
	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--n"), -1);
	CU_ASSERT_STRING_EQUAL(err_text, "dlsim t: --n '': expected 1..10 ms\n");
	CU_ASSERT_EQUAL(o.n, 5);
}

static void test_u64_refuses_a_sign(void)
{
	struct cli_verb vb = verb(0, NULL, NULL);
	struct t_opts o = { 0 };

	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--big", "-1"), -1);
	CU_ASSERT_STRING_EQUAL(err_text, "dlsim t: --big '-1': expected a non-negative integer\n");
}

static void test_unknown_and_positional_refused_without_other(void)
{
	struct cli_verb vb = verb(0, NULL, NULL);
	struct t_opts o = { 0 };

	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--nope"), -1);
	CU_ASSERT_STRING_EQUAL(err_text, "dlsim t: unknown option '--nope'; try 'dlsim t --help'\n");
	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "file"), -1);
	CU_ASSERT_STRING_EQUAL(err_text, "dlsim t: unexpected argument 'file'; try 'dlsim t --help'\n");
	/* a name that only starts as a row's does not match it */
	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--onx"), -1);
	CU_ASSERT_FALSE(o.on);
}

static void test_other_gets_what_no_row_names_in_order(void)
{
	struct cli_verb vb = verb(0, t_other, NULL);
	struct t_opts o = { 0 };

	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "a", "--on", "--x", "-", "--name", "--n"), 0);
	CU_ASSERT_EQUAL(o.nseen, 3);
	ASSERT_STR(o.seen[0], "a");
	ASSERT_STR(o.seen[1], "--x");
	ASSERT_STR(o.seen[2], "-");
	/* --name takes the next argument as its value, whatever it looks like */
	ASSERT_STR(o.name, "--n");
}

static void test_a_handler_stops_the_walk(void)
{
	struct cli_verb vb = verb(0, t_other, NULL);
	struct t_opts o = { 0 };

	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "-h", "--on", "later"), 1);
	CU_ASSERT_EQUAL(o.actions, 1);
	CU_ASSERT_FALSE(o.on);
	CU_ASSERT_EQUAL(o.nseen, 0);
}

static void test_only_rows_apply_to_their_parse(void)
{
	struct cli_verb run = verb(ONLY_RUN, t_other, NULL), cmp = verb(ONLY_COMPARE, t_other, NULL);
	struct t_opts o = { 0 };

	CU_ASSERT_EQUAL(PARSE(&run, &o, "t", "--compare-only", "v"), 0);
	CU_ASSERT_PTR_NULL(o.name);
	CU_ASSERT_EQUAL(o.nseen, 2);
	memset(&o, 0, sizeof(o));
	CU_ASSERT_EQUAL(PARSE(&cmp, &o, "t", "--compare-only", "v"), 0);
	ASSERT_STR(o.name, "v");
	CU_ASSERT_EQUAL(o.nseen, 0);
}

static void test_after_dashdash_takes_the_next_argument_whatever_it_is(void)
{
	struct cli_verb vb = verb(0, t_other, t_after);
	struct t_opts o = { 0 };

	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--", "--on", "--n", "3"), 0);
	ASSERT_STR(o.after, "--on");
	CU_ASSERT_FALSE(o.on);
	CU_ASSERT_EQUAL(o.n, 3);	/* the walk goes on after it */
	CU_ASSERT_EQUAL(o.nseen, 0);
	/* a trailing "--" has nothing after it: it is an argument like any other */
	memset(&o, 0, sizeof(o));
	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--"), 0);
	CU_ASSERT_PTR_NULL(o.after);
	CU_ASSERT_EQUAL(o.nseen, 1);
	ASSERT_STR(o.seen[0], "--");
}

static void test_without_after_dashdash_it_is_an_argument(void)
{
	struct cli_verb vb = verb(0, t_other, NULL);
	struct t_opts o = { 0 };

	CU_ASSERT_EQUAL(PARSE(&vb, &o, "t", "--", "--on"), 0);
	CU_ASSERT_TRUE(o.on);
	CU_ASSERT_EQUAL(o.nseen, 1);
	ASSERT_STR(o.seen[0], "--");
}

static void test_override_cut_at_equals_up_to_max(void)
{
	struct dl_override set[2];
	size_t n = 0;
	char a[] = "k=v", b[] = "=v", c[] = "nokey", d[] = "x=1=2", e[] = "y=2";

	CU_ASSERT_EQUAL(cli_opt_override("t", a, set, &n, 2), 0);
	CU_ASSERT_EQUAL(n, 1);
	ASSERT_STR(set[0].key, "k");
	ASSERT_STR(set[0].value, "v");
	CU_ASSERT_EQUAL(cli_opt_override("t", b, set, &n, 2), -1);
	CU_ASSERT_EQUAL(cli_opt_override("t", c, set, &n, 2), -1);
	CU_ASSERT_EQUAL(cli_opt_override("t", d, set, &n, 2), 0);
	ASSERT_STR(set[1].key, "x");
	ASSERT_STR(set[1].value, "1=2");
	CU_ASSERT_EQUAL(cli_opt_override("t", e, set, &n, 2), -1);	/* full */
	CU_ASSERT_EQUAL(n, 2);
}

int main(void)
{
	CU_pSuite s;
	unsigned nf;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("cli_opts", NULL, free_kept);
	CU_add_test(s, "values go to their fields", test_values_go_to_their_fields);
	CU_add_test(s, "a u32 out of range is refused with its range",
		    test_u32_out_of_range_is_refused_with_its_range);
	CU_add_test(s, "a u64 refuses a sign", test_u64_refuses_a_sign);
	CU_add_test(s, "unknown and positional refused without .other",
		    test_unknown_and_positional_refused_without_other);
	CU_add_test(s, ".other gets what no row names, in order",
		    test_other_gets_what_no_row_names_in_order);
	CU_add_test(s, "a handler stops the walk", test_a_handler_stops_the_walk);
	CU_add_test(s, ".only rows apply to their parse", test_only_rows_apply_to_their_parse);
	CU_add_test(s, "after \"--\" the next argument, whatever it is",
		    test_after_dashdash_takes_the_next_argument_whatever_it_is);
	CU_add_test(s, "without .after_dashdash \"--\" is an argument",
		    test_without_after_dashdash_it_is_an_argument);
	CU_add_test(s, "--set is cut at '=', up to its max", test_override_cut_at_equals_up_to_max);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	nf = CU_get_number_of_failures();
	CU_cleanup_registry();
	return nf ? 1 : 0;
}
