/* cli.h - the verbs of `dlsim`; sim/cli/ is the only layer that prints. */
#ifndef DL_CLI_H
#define DL_CLI_H

int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_import_dtb(int argc, char **argv);
int cmd_orders(int argc, char **argv);

/* Exit statuses of every verb (shared/SPEC.md). */
enum { DL_EXIT_OK = 0, DL_EXIT_VIOLATION = 1, DL_EXIT_USAGE = 2, DL_EXIT_INTERRUPTED = 130 };

int cli_not_built(const char *verb, const char *issue);

#endif
