/*
 * dl_testhook.h - named points at which a test makes dlsim take Ctrl-C or
 * die, at a moment no timing can hit reliably (between two commits, inside
 * an index build, part-way through a report).  DLSIM_TEST_HOOK=POINT:int
 * raises SIGINT at POINT (the verb's handler then sets the stop flag as a
 * real Ctrl-C does); POINT:kill raises SIGKILL.  The point's name is said
 * on stderr first ("dlsim: test hook POINT:ACTION"), so that a test knows
 * it fired.  Compiled only with DLSIM_TEST_HOOKS (CMake option, on in the
 * test builds, off in Release); elsewhere every hook is empty.
 *
 * The points: index-build (dl_log.c, the first progress call of a finished
 * run's index build), twin-recorded (cmd_twin.c, the twin's run committed),
 * report-files (report.c, the first files of a report written),
 * sweep-twin-recorded (sw_worker.c, a sweep's twin run committed),
 * twin-begin (cmd_twin.c, the twin's run about to be begun, Ctrl-C caught).
 */
#ifndef DL_TESTHOOK_H
#define DL_TESTHOOK_H

#ifdef DLSIM_TEST_HOOKS
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void dl_test_hook(const char *point)
{
	const char *e = getenv("DLSIM_TEST_HOOK");
	size_t n = strlen(point);

	if (!e || strncmp(e, point, n) != 0 || e[n] != ':')
		return;
	fprintf(stderr, "dlsim: test hook %s\n", e);
	fflush(stderr);
	if (!strcmp(e + n + 1, "kill"))
		raise(SIGKILL);
	else if (!strcmp(e + n + 1, "int"))
		raise(SIGINT);
}
#else
static inline void dl_test_hook(const char *point)
{
	(void)point;
}
#endif

#endif
