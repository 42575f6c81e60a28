/*
 * cli_opts.c - the one walk of argv against a verb's table of options
 * (cli_opts.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_opts.h"
#include "sim/engine/cost.h"
#include "sim/run/dl_run.h"
#include "sim/scenario/scenario.h"

static bool takes_value(enum cli_opt_kind k)
{
	return k != CLI_OPT_TRUE && k != CLI_OPT_FALSE && k != CLI_OPT_ACTION;
}

/* The row that argv[*i] names (advancing *i past a separate value, into *V), or NULL. */
static const struct cli_opt *find_opt(const struct cli_verb *vb, int argc, char **argv, int *i,
				      const char **v)
{
	for (size_t k = 0; k < vb->nopt; k++) {
		const struct cli_opt *o = &vb->opt[k];

		if (o->only && !(o->only & vb->mask))
			continue;
		if (!takes_value(o->kind)) {
			if (!strcmp(argv[*i], o->name) || (o->alias && !strcmp(argv[*i], o->alias)))
				return o;
		} else if ((*v = cli_opt_value(argc, argv, i, o->name))) {
			return o;
		}
	}
	return NULL;
}

/* Store V as row O says, in OBJ: 0, or -1 with the refusal printed. */
static int apply(const char *verb, const struct cli_opt *o, void *obj, const char *v)
{
	char *f = (char *)obj + o->field;
	uint64_t u;

	switch (o->kind) {
	case CLI_OPT_TRUE:
	case CLI_OPT_FALSE:
		*(bool *)f = o->kind == CLI_OPT_TRUE;
		return 0;
	case CLI_OPT_STR:
		*(const char **)f = v;
		return 0;
	case CLI_OPT_U32:
		if (cli_parse_u64(v, &u) || u < o->min || u > o->max) {
			fprintf(stderr, "dlsim %s: %s '%s': expected %u..%u%s\n", verb, o->name, v,
				o->min, o->max, o->unit ? o->unit : "");
			return -1;
		}
		*(uint32_t *)f = (uint32_t)u;
		return 0;
	case CLI_OPT_U64:
		if (cli_parse_u64(v, (uint64_t *)f)) {
			fprintf(stderr, "dlsim %s: %s '%s': expected a non-negative integer\n", verb,
				o->name, v);
			return -1;
		}
		return 0;
	case CLI_OPT_ACTION:
	case CLI_OPT_FN:
		return o->fn(obj, verb, v);
	}
	return -1;
}

int cli_opts_refuse(const char *verb, const char *arg)
{
	fprintf(stderr, "dlsim %s: %s '%s'; try 'dlsim %s --help'\n", verb,
		arg[0] == '-' ? "unknown option" : "unexpected argument", arg, verb);
	return -1;
}

int cli_opts_parse(const struct cli_verb *vb, int argc, char **argv, void *obj)
{
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		const struct cli_opt *o;
		int rc;

		if (vb->after_dashdash && !strcmp(argv[i], "--") && i + 1 < argc) {
			if ((rc = vb->after_dashdash(obj, vb->name, argv[++i])))
				return rc;
			continue;
		}
		o = find_opt(vb, argc, argv, &i, &v);
		if (o)
			rc = apply(vb->name, o, obj, v);
		else if (vb->other)
			rc = vb->other(obj, vb->name, argv[i]);
		else
			rc = cli_opts_refuse(vb->name, argv[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int cli_opt_override(const char *verb, const char *v, struct dl_override *set, size_t *nset,
		     size_t max)
{
	char *eq = strchr(v, '=');

	if (!eq || eq == v || *nset == max) {
		fprintf(stderr, "dlsim %s: --set '%s': expected KEY=VALUE\n", verb, v);
		return -1;
	}
	*eq = '\0';
	set[*nset].key = v;
	set[(*nset)++].value = eq + 1;
	return 0;
}

int cli_opt_probe_context(const char *verb, const char *v, bool *module)
{
	if (strcmp(v, "boot") && strcmp(v, "module")) {
		fprintf(stderr, "dlsim %s: --probe-context '%s': expected boot or module\n", verb, v);
		return -1;
	}
	*module = !strcmp(v, "module");
	return 0;
}

int cli_opt_backend(const char *verb, const char *v, enum dl_backend *out)
{
	if (dl_backend_parse(v, out)) {
		fprintf(stderr, "dlsim %s: --mode '%s': expected des, threads or kernel\n", verb, v);
		return -1;
	}
	return 0;
}

int cli_opt_profile(const char *verb, const char *v, enum dl_cost_profile *out)
{
	if (dl_cost_profile_parse(v, out)) {
		fprintf(stderr, "dlsim %s: --profile '%s': expected hardware or guest\n", verb, v);
		return -1;
	}
	return 0;
}
