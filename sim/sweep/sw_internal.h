/* sw_internal.h - what the files of sim/sweep/ share. */
#ifndef DL_SW_INTERNAL_H
#define DL_SW_INTERNAL_H

/* The sweep table and its key index (OUT.db and every shard). */
extern const char sw_sweep_schema[];

/* Unlinks a shard with its -wal and -shm files. */
void sw_shard_remove(const char *path);

#endif
