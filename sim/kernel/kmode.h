/*
 * kmode.h - `--mode kernel`: a scenario played on a real Linux kernel in
 * QEMU, its record converted into ordinary dlsim events.
 *
 * The guest half is dlsim_kmod.c (a test module built once per kernel and
 * cached) and init.sh (the initramfs's /init).  The host half, here: decide
 * whether a scenario can be expressed at all, write each run's script as
 * data files (device indices, flags, sampled latencies: no names), pack the
 * initramfs, boot QEMU (TCG, -icount) once for a batch of runs, and turn
 * each run's dump into events through a dl_sink plus a dl_run_result, so
 * that the log, `check`, `report` and `compare` need nothing new.
 */
#ifndef DL_KMODE_H
#define DL_KMODE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine/engine.h"
#include "sim/scenario/scenario.h"

#define DL_KERNEL_DEFAULT "6.12"
#define DL_KERNEL_MAX_DEVICES 20000u   /* the module's table (KMOD_MAX_DEVICES) */

/* Where a boot's wall time went (ms); filled by dl_kernel_boot(). */
struct dl_kernel_stats {
	int64_t build_ms;          /* finding (or building) the module */
	int64_t boot_ms;           /* QEMU start to the guest's first output (-1: none) */
	int64_t qemu_ms;           /* QEMU start to its exit: boot, runs, power-off */
};

struct dl_kernel_opts {
	const char *version;       /* "6.12" or "7.3" */
	const char *cache;         /* NULL: $DLSIM_KERNEL_CACHE or /var/cache/dlsim-kernels */
	int64_t timeout_ms;        /* 0: scaled to the batch */
	const char *dump_out;      /* keep the raw dump here (NULL: only on failure) */
	atomic_int *stop;
	struct dl_kernel_stats *stats;   /* out; required */
};

/* One run of a batch booted together; dump is filled by dl_kernel_boot(). */
struct dl_kjob {
	const struct dl_scenario *sc;
	enum dl_order order;
	uint64_t seed;
	char *dump;                /* this run's section of the dump (malloc), or NULL */
	size_t len;
};

/**
 * dl_kernel_refuse() - whether kernel mode can play @sc under @order on
 * kernel @version.  Return 0, or -EINVAL with the reason in @why.
 */
int dl_kernel_refuse(const struct dl_scenario *sc, enum dl_order order, const char *version,
		     char *why, size_t whylen);

/**
 * dl_kernel_boot() - boot once for @n jobs and split the dump among them.
 * Return 0 (every job's section present), -ETIMEDOUT (the guest hung or
 * died: the jobs it reached have what was dumped, the rest none; @kept
 * names the directory kept with the whole dump and console log), -EINTR,
 * -ENOENT (kernel, QEMU or busybox missing: @msg says which and names the
 * make target), -ENOEXEC (the module does not build: @msg is the
 * compiler's output), other negative errno.  @msg and @kept are always
 * NUL-terminated.
 */
int dl_kernel_boot(struct dl_kjob *jobs, size_t n, const struct dl_kernel_opts *ko,
		   char *msg, size_t msglen, char *kept, size_t keptlen);

/*
 * dl_kernel_available() - whether kernel @version (cache @cache, NULL: as
 * dl_kernel_boot() finds it), QEMU and busybox are there to boot (always,
 * under DLSIM_KGUEST_STUB): 0, or -ENOENT with what to run in @msg.  For a
 * caller that must refuse before it writes anything (a sweep).
 */
int dl_kernel_available(const char *version, const char *cache, char *msg, size_t msglen);

/**
 * dl_kernel_split() - give each of the @n jobs its section of a whole dump
 * (what dl_kernel_boot() does with the guest's output; also for a dump
 * recorded earlier).  Return 0, -ETIMEDOUT when some job's section is
 * missing or unfinished, -ENOMEM.
 */
int dl_kernel_split(struct dl_kjob *jobs, size_t n, const char *dump, size_t len);

/* dl_kernel_split() of the dump saved in @path (--kernel-save); @msg says what failed. */
int dl_kernel_load_dump(struct dl_kjob *jobs, size_t n, const char *path, char *msg,
			size_t msglen);

/* The guest's kernel release from a job's dump into @out ("" if none); 0 or -ENOENT. */
int dl_kernel_release(const char *dump, size_t len, char *out, size_t outlen);

/* Free the jobs' dumps. */
void dl_kernel_jobs_free(struct dl_kjob *jobs, size_t n);

/* What a conversion learnt besides the events. */
struct dl_kernel_info {
	char release[96];          /* the guest kernel's release string ("" if unknown) */
	int32_t last_op;           /* the last op started, -1: none */
	int32_t last_phase;        /* enum dl_phase last begun, -1: none */
	uint32_t workers;          /* distinct threads that ran callbacks, main included */
	uint32_t core_defers;      /* probes the driver core deferred before the callback */
	uint32_t retry_walks;      /* deferred_probe_work_func() runs (0: not recorded) */
	int64_t retry_ns;          /* guest time inside them */
	uint32_t reorders;         /* device_pm_move_to_tail() calls on our devices */
	int64_t reorder_ns;        /* guest time inside them */
	char msg[256];             /* why the dump was refused or stops early */
};

/**
 * dl_kernel_convert() - replay one run's dump into @o->sink as dlsim events
 * and fill @r and @info.  Times are ns from the probe op's start.
 * Return 0 (every op completed), 1 (an injected fault made an op fail),
 * -EPIPE (the dump stops early: the guest hung or died; r->status
 * "failed", @info says where), -EINVAL (not a dump of this scenario:
 * @info->msg says why; nothing was emitted).
 */
int dl_kernel_convert(const struct dl_scenario *sc, const char *dump, size_t len,
		      const struct dl_engine_opts *o, struct dl_run_result *r,
		      struct dl_kernel_info *info);

#endif
