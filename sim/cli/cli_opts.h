/*
 * cli_opts.h - a verb's options as a table: each row names an option, says
 * whether it takes a value and where that value goes (a field of the verb's
 * options struct, by offset) or which handler takes it.  One parser walks
 * argv against the table, as getopt_long() does against its `struct option`,
 * so that a verb's parse_args is its table and the checks between options.
 */
#ifndef DL_CLI_OPTS_H
#define DL_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine/cost.h"
#include "sim/run/dl_run.h"
#include "sim/scenario/scenario.h"

enum cli_opt_kind {
	CLI_OPT_TRUE,	/* no value: the bool at .field becomes true */
	CLI_OPT_FALSE,	/* no value: the bool at .field becomes false */
	CLI_OPT_ACTION,	/* no value: .fn(obj, verb, NULL) */
	CLI_OPT_STR,	/* the value itself, to the const char * at .field */
	CLI_OPT_U32,	/* a decimal .min...max to the uint32_t at .field, else
			 * "--NAME 'V': expected MIN..MAX[UNIT]" */
	CLI_OPT_U64,	/* a decimal to the uint64_t at .field, else
			 * "--NAME 'V': expected a non-negative integer" */
	CLI_OPT_FN,	/* .fn(obj, verb, value) */
};

/*
 * A handler: 0 to go on, -1 when it refused the value (the reason printed,
 * "dlsim VERB: ..."), 1 to stop with success (--help printed).
 */
typedef int (*cli_opt_fn)(void *obj, const char *verb, const char *value);

struct cli_opt {
	const char *name;	/* "--seeds"; a value as "--seeds 3" or "--seeds=3" */
	const char *alias;	/* "-h", or NULL; options without a value only */
	enum cli_opt_kind kind;
	size_t field;		/* offsetof() in the verb's options struct */
	uint32_t min, max;	/* CLI_OPT_U32 */
	const char *unit;	/* CLI_OPT_U32: after MAX in the refusal (" ms"), or NULL */
	cli_opt_fn fn;		/* CLI_OPT_ACTION, CLI_OPT_FN */
	unsigned only;		/* 0: always; else only when the parse's mask has a bit of it */
};

/*
 * offsetof(T, M), and a compile-time error (-Werror) unless T's M is of type
 * TYPE: the parser writes through the offset, so a row must name a field of
 * the type its kind stores.
 */
#define CLI_FIELD(T, M, TYPE) (offsetof(T, M) + 0 * sizeof((TYPE *){ &((T *)0)->M }))

/* A row's fields, each in braces: { CLI_U32("--seeds", struct opts, nseeds, 1, 100, NULL) },
 * and ", .only = BIT" added inside them for a row some parses leave out. */
#define CLI_TRUE(n, a, T, m)	.name = (n), .alias = (a), .kind = CLI_OPT_TRUE, \
				.field = CLI_FIELD(T, m, bool)
#define CLI_FALSE(n, T, m)	.name = (n), .kind = CLI_OPT_FALSE, .field = CLI_FIELD(T, m, bool)
#define CLI_ACTION(n, a, h)	.name = (n), .alias = (a), .kind = CLI_OPT_ACTION, .fn = (h)
#define CLI_STR(n, T, m)	.name = (n), .kind = CLI_OPT_STR, \
				.field = CLI_FIELD(T, m, const char *)
#define CLI_U32(n, T, m, lo, hi, u) .name = (n), .kind = CLI_OPT_U32, \
				.field = CLI_FIELD(T, m, uint32_t), .min = (lo), .max = (hi), .unit = (u)
#define CLI_U64(n, T, m)	.name = (n), .kind = CLI_OPT_U64, \
				.field = CLI_FIELD(T, m, uint64_t)
#define CLI_FN(n, h)		.name = (n), .kind = CLI_OPT_FN, .fn = (h)

struct cli_verb {
	const char *name;	/* "sweep", the errors' "dlsim sweep: " */
	const struct cli_opt *opt;
	size_t nopt;
	unsigned mask;		/* which rows with .only apply (run or compare) */
	/* An argument no row names (a positional one, or an unknown option);
	 * NULL: refused with cli_opts_refuse(). */
	cli_opt_fn other;
	/* "--" then ARG: ARG goes here whatever it looks like, and the walk goes on
	 * after it; NULL (or "--" last): "--" is an argument like any other. */
	cli_opt_fn after_dashdash;
};

/*
 * Parse ARGV[1..ARGC) against VB into OBJ.  Returns 0, 1 (a handler asked
 * to stop: --help) or -1 (refused, the reason printed on stderr).
 */
int cli_opts_parse(const struct cli_verb *vb, int argc, char **argv, void *obj);

/* The default refusal of ARG: "dlsim VERB: unknown option 'ARG'; try 'dlsim
 * VERB --help'" (or "unexpected argument" when ARG is not an option); -1. */
int cli_opts_refuse(const char *verb, const char *arg);

/*
 * Values several verbs take alike, with the same refusal: each 0, or -1 with
 * "dlsim VERB: --OPTION 'V': expected ..." printed.
 */
/* --set KEY=VALUE: V is cut at '=' (KEY and VALUE point into it), at most MAX of them. */
int cli_opt_override(const char *verb, const char *v, struct dl_override *set, size_t *nset,
		     size_t max);
/* --probe-context boot|module: *MODULE. */
int cli_opt_probe_context(const char *verb, const char *v, bool *module);
/* --mode des|threads|kernel. */
int cli_opt_backend(const char *verb, const char *v, enum dl_backend *out);
/* --profile: the cost model's defaults. */
int cli_opt_profile(const char *verb, const char *v, enum dl_cost_profile *out);

#endif
