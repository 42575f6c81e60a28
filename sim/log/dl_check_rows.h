/*
 * dl_check_rows.h - inside dl_check: how the events rows reach the checker
 * (dl_check_rows.c).  Not an API: only dl_check*.c include it.
 */
#ifndef DL_CHECK_ROWS_H
#define DL_CHECK_ROWS_H

#include <sqlite3.h>

#include "sim/log/dl_check_verify.h"

/* The SQL function a rowid-order statement wraps its columns in (events_stmt()). */
#define DL_CHECK_ROW_FN "dl_check_row"

/* The current row of @st into @r, each column fetched once, kind and phase looked up. */
void dl_check_read_row(sqlite3_stmt *st, struct erow *r);

/* Register DL_CHECK_ROW_FN on k->db, rows into k->sink; 0 or -EIO. */
int dl_check_row_fn_register(struct checker *k);

/* Once no statement uses it: the connection keeps no pointer to the checker. */
void dl_check_row_fn_unregister(struct checker *k);

#endif
