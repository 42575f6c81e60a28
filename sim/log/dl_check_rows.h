/*
 * dl_check_rows.h - inside dl_check: how the events rows reach the checker.
 * By seq, a row of a statement at a time (dl_check_read_row()); in rowid
 * order, streamed by a reader thread (the feed) in batches, so that SQLite's
 * decoding of the rows and the checker's work on them run side by side.
 * Not an API: only dl_check*.c include it.
 */
#ifndef DL_CHECK_ROWS_H
#define DL_CHECK_ROWS_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>

#include <sqlite3.h>

#include "sim/log/dl_check_verify.h"

/* The current row of @st, each column fetched once, kind and phase looked up. */
void dl_check_read_row(sqlite3_stmt *st, struct erow *r);

/* The SQL function the rowid-order statement wraps its columns in (events_stmt()). */
#define DL_CHECK_ROW_FN "dl_check_row"

/*
 * Rows a half: on a thread, few hand-overs (each may wake a thread: 1,024
 * rows a half spent 0.3 s of system time on 6.2M rows, 4,096 0.14 s);
 * inline, as few as the ring of rows read ahead that it replaces, so that
 * what is fetched for a row as it is read (ahead()) is in the cache when it
 * is checked.
 */
#define FEED_ROWS 4096
#define FEED_ROWS_INLINE 16

/*
 * The feed: two halves of @rows rows.  The reader steps the statement
 * into one half while the checker works through the other, and they swap
 * (under mx).  The reader holds @db_lock while it steps a batch; the
 * checker takes it for anything else it does on the connection (a
 * violation stored), which SQLite's multi-thread mode requires.  Without a
 * thread (one CPU, or pthread_create() failed) the checker fills each half
 * itself, the same way.
 */
struct dl_check_feed {
	sqlite3 *db;
	sqlite3_stmt *st;
	pthread_mutex_t *db_lock;
	struct erow *half[2];
	unsigned rows;          /* a half's: FEED_ROWS, FEED_ROWS_INLINE */
	/*
	 * inline, each row as it is read (what it will need fetched into the
	 * cache: the checker's are a row old by the time it reads it);
	 * on a thread, the checker looks ahead itself (dl_check_feed_peek())
	 */
	void (*ahead)(void *ctx, const struct erow *r);
	void *ahead_ctx;
	bool fn_registered, threaded;
	/*
	 * Between the two, under mx; the checker's and the reader's own fields
	 * on lines of their own, apart from these: sharing a line made the pair
	 * pass it to and fro on every row (1.33x the CPU of one thread, 1.19x
	 * apart, on a 200k-device log).
	 */
	alignas(64) pthread_mutex_t mx;
	pthread_cond_t cv;
	unsigned n[2];          /* rows in a full half */
	bool full[2];
	int rc;                 /* the reader's last sqlite3_step() */
	bool end;               /* the reader read its last half */
	bool redo;              /* a row was not as the feed expects: read by seq */
	bool quit;              /* the checker wants no more */
	/* the checker's: the half it holds (holding), its length and next row */
	alignas(64) unsigned cur, len, at;
	bool holding;
	/* the reader's (row_fn()): the row being filled, the calls for it */
	alignas(64) struct erow *sink;
	unsigned sink_calls;
	pthread_t tid;
};

/* Register DL_CHECK_ROW_FN on @db for @f (before the statement is prepared); 0 or -EIO. */
int dl_check_feed_register(struct dl_check_feed *f, sqlite3 *db);

/*
 * Start streaming @st (prepared over DL_CHECK_ROW_FN) into @f, on a thread
 * if @thread and one can be made.  @db_lock guards the connection.  0 or
 * -ENOMEM.
 */
int dl_check_feed_start(struct dl_check_feed *f, sqlite3_stmt *st, pthread_mutex_t *db_lock,
			bool thread);

/* The next row, or NULL at the end, at a redo or once @f quit. */
struct erow *dl_check_feed_next(struct dl_check_feed *f);

/* The row @ahead rows after the last one dl_check_feed_next() gave, in its batch, or NULL. */
static inline const struct erow *dl_check_feed_peek(const struct dl_check_feed *f, unsigned ahead)
{
	unsigned i = f->at + ahead - 1;

	return f->holding && i < f->len ? &f->half[f->cur][i] : NULL;
}

/*
 * Stop the reader (if it still reads) and wait for it; the statement is
 * the caller's to finalize.  Returns the last step's result code (SQLITE_DONE
 * if it ran to its end); *@redo: a row was not as expected.
 */
int dl_check_feed_stop(struct dl_check_feed *f, bool *redo);

/* Free @f's halves and unregister the function (once no statement uses it). */
void dl_check_feed_free(struct dl_check_feed *f);

#endif
