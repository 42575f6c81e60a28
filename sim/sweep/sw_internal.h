/* sw_internal.h - what the files of sim/sweep/ share. */
#ifndef DL_SW_INTERNAL_H
#define DL_SW_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

/* The sweep table and its key index (OUT.db and every shard). */
extern const char sw_sweep_schema[];

struct sqlite3;

/*
 * The copy of a shard attached to OUT as schema 's' (main: OUT), its
 * statements prepared once and reused for every pass.  sw_merge_step() runs
 * inside the caller's transaction: when @whole and *@hwm is 0 and the shard
 * qualifies, every table is copied in bulk, otherwise run by run after the
 * sweep row *@hwm; *@merged counts the runs (and recorded failures) copied.
 * sw_merge_clear() empties every table of the shard.
 */
struct sw_merge;
int sw_merge_prepare(struct sqlite3 *out, bool stay, struct sw_merge **m);
int sw_merge_step(struct sw_merge *m, bool whole, int64_t *hwm, uint32_t *merged);
int sw_merge_clear(struct sw_merge *m);
void sw_merge_free(struct sw_merge *m);

/* Unlinks a shard with its -wal and -shm files. */
void sw_shard_remove(const char *path);

#endif
