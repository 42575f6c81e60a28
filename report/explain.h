/*
 * explain.h - why a run took what it took, from its log alone: per op and
 * phase the makespan and the engine's bound max(chain, CPU work/K), whether
 * the phase was chain-bound (its critical path of callback latencies against
 * the callbacks' CPU parts / K) or CPU-bound, with both figures, or, where
 * the log has no CPU work (kernel mode, older logs), the longest chain of
 * waits and the callbacks' time, without a verdict; what set each phase's
 * time, in parts that add up to it (the main thread's serial work, a chain
 * of callbacks on workers, CPU contention, dispatch); the deferred-probe reorder
 * walks' share (metrics reorder_*) when at least a tenth; the links the core
 * refused and why; the unbind cascades by name.  `dlsim explain`, the
 * accounts under `run` and `compare`, and the report's section share it.
 */
#ifndef DL_REPORT_EXPLAIN_H
#define DL_REPORT_EXPLAIN_H

#include <stdint.h>
#include <stdio.h>

#include <stdatomic.h>

#include <sqlite3.h>

struct tl_run;

enum dl_explain_detail {
	DL_EXPLAIN_FULL,	/* every phase, critical devices, refused links, cascades */
	DL_EXPLAIN_SHORT,	/* one line per op (compare) */
};

/*
 * dl_explain_run() - the account of RUN (<= 0: the newest) of DB on OUT.
 * Return: 0, -ENOENT (no such run: ERR says so), -EINVAL (not a dlsim log,
 * SQL error), -ENOMEM.
 */
int dl_explain_run(sqlite3 *db, int64_t run, enum dl_explain_detail detail, FILE *out, char *err,
		   size_t errlen);

/* The same for a path (opened read-only). */
int dl_explain_path(const char *path, int64_t run, enum dl_explain_detail detail, FILE *out,
		    char *err, size_t errlen);
/*
 * The same, stopped by @stop (Ctrl-C; may be NULL) within SQLite's next
 * EXPLAIN_POLL_STEPS steps: -EINTR, what was written to OUT incomplete.
 */
int dl_explain_path_stop(const char *path, int64_t run, enum dl_explain_detail detail, FILE *out,
			 const atomic_int *stop, char *err, size_t errlen);

/* S HTML-escaped (& < > " ') onto F. */
void dl_html_put(FILE *f, const char *s);

/*
 * dl_explain_html() - the full account of the analysed run T (tl_analyse()
 * done) as an HTML section (names escaped), for the report's page.
 */
void dl_explain_html(sqlite3 *db, const struct tl_run *t, FILE *f);

#endif
