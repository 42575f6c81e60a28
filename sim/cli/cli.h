/* cli.h - the verbs of `dlsim`; sim/cli/ is the only layer that prints. */
#ifndef DL_CLI_H
#define DL_CLI_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_import_dtb(int argc, char **argv);
int cmd_orders(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_import_log(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_explain(int argc, char **argv);
/* The explain account of RUN_ID under run's (full) or compare's (short) table. */
void cli_explain_after(const char *db, int64_t run_id, uint32_t devices, int is_short);
int cmd_sweep(int argc, char **argv);
int cmd_atlas(int argc, char **argv);
int cmd_twin(int argc, char **argv);

/* Exit statuses of every verb (shared/SPEC.md). */
enum { DL_EXIT_OK = 0, DL_EXIT_VIOLATION = 1, DL_EXIT_USAGE = 2, DL_EXIT_INTERRUPTED = 130 };
/* check and report: the log is not what dlsim writes (tampered or damaged). */
enum { DL_EXIT_CORRUPT = 3 };

int cli_not_built(const char *verb, const char *issue);

/*
 * The step every reader of a log (check, report, diff, explain) runs first
 * (cmd_check.c): PATH is a dlsim database (application_id, tables) and run
 * *RUN (0: the newest, written back; left 0 when there is none) passes
 * dl_check_verify().  Returns -1 to go on (a warning is printed for a run
 * still 'running' or whose log failed), else the exit status, the reason
 * printed: 2 no such database or run, 3 a corrupt log.
 */
struct sqlite3;
int cli_log_validate(const char *verb, const char *path, int64_t *run);
/* The same for run RUN of the open DB. */
int cli_log_verify_run(const char *verb, const char *path, struct sqlite3 *db, int64_t run);

/*
 * Ctrl-C and SIGTERM: cli_catch_stop() makes them set the flag that long
 * verbs poll (cli_stop_flag()), so that a run stops and what finished is
 * kept; cli_release_stop() gives them back their default action.  The one
 * piece of static state of the CLI: a signal handler has nowhere else.
 */
atomic_int *cli_stop_flag(void);
void cli_catch_stop(void);
void cli_release_stop(void);

/*
 * Names from scenarios, DTBs and logs printed to a terminal (cli_quote.c):
 * NAME itself when it holds no control character and is UTF-8, else its
 * escaped form (\u001b, \xff) in BUF, cut with "..." to fit.
 */
#define CLI_QUOTE_MAX 512
const char *cli_name(const char *name, char *buf, size_t len);
/* N bytes of TEXT to F, control characters but newlines and tabs escaped as by cli_name(). */
void cli_write_text(FILE *f, const char *text, size_t n);

/* "-EBUSY" for -16, "EPROBE_DEFER" for 517, the number if unknown; into BUF. */
const char *cli_errno_name(int err, char *buf, size_t len);

struct dl_run_result;
/* N-th op of its kind: "suspend", then "suspend2", ... (JSON keys, metrics); into BUF. */
const char *cli_op_key(const struct dl_run_result *r, uint32_t i, char *buf, size_t len);

/* Longest name cli_suggest() compares. */
#define CLI_NAME_MAX 63
/* The one of NAMES that WORD was probably meant to be ("cpfirst": "cp-first"), or NULL. */
const char *cli_suggest(const char *word, const char *const *names, size_t n);

/* A decimal unsigned number, the whole string ("010" is ten; no sign, no
 * suffix): 0, or -EINVAL. */
int cli_parse_u64(const char *s, uint64_t *out);

/* The CPUs this process may run on (its affinity), at most @max: the default of a verb's --jobs. */
uint32_t cli_usable_cpus(uint32_t max);

/*
 * argv[*i] is NAME VALUE or NAME=VALUE: returns VALUE (advancing *i past a
 * separate one), "" when the value is missing, NULL when argv[*i] is not NAME.
 */
static inline const char *cli_opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc)
		return "";
	return argv[++*i];
}

#endif
