/* sw_internal.h - what the files of sim/sweep/ share. */
#ifndef DL_SW_INTERNAL_H
#define DL_SW_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/order/order.h"

struct sqlite3;
struct sqlite3_stmt;
struct dl_sweep_plan;

/* The sweep table and its key index (OUT.db and every shard). */
extern const char sw_sweep_schema[];
/* Adds sweep.import_kernel to a sweep table an older dlsim made; 0 or -EIO. */
int sw_sweep_schema_up(struct sqlite3 *db);

/*
 * The copy of a shard attached to OUT as schema 's' (main: OUT), its
 * statements prepared once and reused for every pass; sw_merge_prepare()
 * records the shard in OUT's table shards.  sw_merge_step() runs inside the
 * caller's transaction: it copies the small rows (dl_log_shard_tables stay)
 * and a run_shards row of every complete run after the shard's sweep row
 * shards.seen whose key OUT lacks; *@merged counts them (and recorded
 * failures).
 */
/* ?@i: @text (not copied: it outlives the statement's step), or NULL for none. */
void sw_bind_text_or_null(struct sqlite3_stmt *st, int i, const char *text);
/*
 * ?@i..?@i+4: what tells a run of a scenario apart from its other runs in
 * the sweep table: order, seed, kernel (NULL: the order's own), mode, and
 * the workers @p gives the order.
 */
void sw_bind_run_key(struct sqlite3_stmt *st, int i, const struct dl_sweep_plan *p,
		     enum dl_order o, uint64_t seed, const char *kernel, const char *mode);

struct sw_merge;
int sw_merge_prepare(struct sqlite3 *out, struct sw_merge **m);
int sw_merge_step(struct sw_merge *m, uint32_t *merged);
void sw_merge_free(struct sw_merge *m);

#endif
