/* sw_internal.h - what the files of sim/sweep/ share. */
#ifndef DL_SW_INTERNAL_H
#define DL_SW_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

struct sqlite3;

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
struct sw_merge;
int sw_merge_prepare(struct sqlite3 *out, struct sw_merge **m);
int sw_merge_step(struct sw_merge *m, uint32_t *merged);
void sw_merge_free(struct sw_merge *m);

#endif
