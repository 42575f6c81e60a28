/*
 * log_import.h - real measurements in: read kernel logs (dmesg with
 * initcall_debug / pm_print_times, ftrace's device_pm_callback_* and
 * suspend_resume events) into per-device, per-phase callback timings, and
 * turn them into a scenario (JSON, Jansson) or overlay them on one.
 *
 * Prefixes removed first: "<6>" printk levels, dmesg -x's "kern  :info  : ",
 * syslog/kern.log's "Dec  4 18:35:38 host kernel: " (then "[ts]"), and the
 * wall clocks to the second of journalctl -k ("Dec 04 18:35:38 host kernel: ")
 * and dmesg -T ("[Fri Dec  4 18:35:38 2026] "): such lines have no time
 * stamp (ts -1, counted in ->untimed); their "after N usecs" still times them.
 *
 * Formats (shared/real/INDEX.md "Line formats"):
 *   modern PM   "[ts][Tn] DRV DEV: PM: calling CB @ PID, parent: P" /
 *               "... DRV DEV: PM: CB returned R after N usecs" ("PM: " optional,
 *               as before 5.x; CB may carry "+0x0/0x50" and " [module]")
 *   3.x PM      "[ts] calling  DEV+ @ PID, parent: P" / "[ts] call DEV+ returned R after N usecs"
 *   totals      "PM: [start ][late |early |noirq ]PHASE of devices complete after X msecs"
 *               (PHASE: suspend, resume, freeze, thaw, poweroff, restore)
 *   Ubuntu      "PM: [late |early |noirq ]PHASE of drv:DRV dev:DEV complete after X msecs"
 *               (one device's callback: it ended at the line's time)
 *   ftrace      "TASK-PID [cpu] flags TS: device_pm_callback_start: DRV DEV, parent: P, ... [EV]",
 *               "device_pm_callback_end: DRV DEV, err=E", "suspend_resume: NAME[n] begin|end"
 *   boot        "probe of DEV returned R after N usecs", "calling  FN+0x.. @ PID",
 *               "initcall FN+0x.. returned R after N usecs"
 *   failures    "PM: dpm_run_callback(): CB returns R", "DEV: PM: failed to suspend: error E",
 *               "PM: Device DEV failed to resume async: error E"
 *
 * Phases: callbacks are assigned to the phase whose total line follows them,
 * to the dpm_* phase an ftrace begin/end pair brackets, and to the phase a
 * callback's name says (…_noirq, …_late, …_early, …resume) when lines were
 * lost.  A cycle starts at "PM: suspend entry", "Freezing user space
 * processes", ftrace's suspend_enter and the like.  The main PM thread of a
 * cycle is the pid that printed its total lines (a [Tn] prefix, ftrace's
 * suspend_resume events), else the pid that ran most of its callbacks; a
 * callback on any other pid ran async.  Nothing here prints.
 */
#ifndef DL_LOG_IMPORT_H
#define DL_LOG_IMPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "sim/scenario/scenario.h"

#define DL_LG_NONE UINT32_MAX
#define DL_LG_MAX_NOTES 64		/* contradictions kept (all are counted) */

enum dl_lg_format {
	DL_LG_PM_MODERN, DL_LG_PM_3X, DL_LG_TOTAL, DL_LG_FTRACE, DL_LG_BOOT, DL_LG_FAILURE,
	DL_LG_MARKER, DL_LG_FORMAT_COUNT
};

/* One callback: a calling/returned pair (or an ftrace start/end pair). */
struct dl_lg_sample {
	uint32_t dev, file, line;	/* line of its "returned" */
	uint32_t pid;
	uint16_t cycle;
	uint8_t key;			/* enum dl_lat_key */
	uint8_t provisional;		/* phase guessed; the next total line decides */
	int32_t ret;
	int64_t start_ns, lat_ns;	/* log time of the call; its duration */
	int64_t end_ns;			/* log time of its return line (-1: none) */
};

/* A sample folded to what a scenario of all cycles needs (dl_log_fold()). */
struct dl_lg_lat {
	int64_t lat_ns;
	uint32_t dk;			/* device << DL_LG_KEY_BITS | lat key */
	uint32_t seq;			/* its place among the samples: log order */
};

#define DL_LG_KEY_BITS 5

/* A phase total: "PM: suspend of devices complete after 471.873 msecs". */
struct dl_lg_total {
	uint16_t cycle;
	uint8_t first, last;		/* lat keys it covers ("start suspend": prepare..suspend) */
	uint32_t file, line, pid;	/* pid: [Tn] prefix or ftrace task, else DL_LG_NONE */
	int64_t ns;
	char label[32];			/* as logged: "late suspend", "dpm_resume" */
};

struct dl_lg_cycle {
	uint32_t file, line;		/* where it starts */
	uint32_t main_pid;		/* DL_LG_NONE until dl_log_finish() */
	uint32_t ncb, nasync;		/* callbacks, of which off the main thread */
	uint32_t peak;			/* most callbacks running at once */
	uint8_t gap;			/* lines were lost in it (garbage, phases skipped) */
	uint8_t truncated;		/* its file ends inside it (suspended, or calls open) */
	uint32_t smp_first, smp_end;	/* its samples in smp[] (dl_log_finish(); boot probes,
					 * of no cycle, may lie among them) */
};

/* A call that never returned ("calling" without its "returned"): the signature of a hang. */
struct dl_lg_hang {
	uint32_t dev, file, line;	/* the line of its "calling" */
	uint32_t cycle;
	uint8_t key;			/* the phase it was called in */
};

struct dl_lg_device {
	uint32_t name_off;
	uint32_t drv_off;		/* its driver (bus, class) as logged; UINT32_MAX: none */
	uint32_t label_off;		/* its scenario name (dl_log_finish) */
	uint32_t parent;		/* device index or DL_LG_NONE */
	uint32_t nsamples;
	uint8_t async;			/* 1: a callback ran off the main thread */
	uint8_t sync_seen;		/* 1: on the main thread in a cycle that had async ones */
	uint32_t rank;			/* registration position (dl_log_finish) */
};

/*
 * A wait the log implies: the main thread sat idle before calling a device
 * until an async callback ended; no parent explains it, so a link did.
 */
struct dl_lg_wait {
	uint32_t consumer, supplier;	/* device indices */
	uint32_t file, line;		/* the callback that waited */
	uint8_t key;
	int64_t idle_ns;
};

struct dl_lg_note {
	uint32_t file, line;
	char msg[200];
};

struct dl_logimport {
	char *names;			/* arena of NUL-terminated device names */
	size_t names_len, names_cap;
	uint32_t *hash, hash_mask;
	struct dl_lg_device *dev;
	uint32_t ndev, cap_dev;
	struct dl_lg_sample *smp;
	uint32_t nsmp, cap_smp;
	struct dl_lg_total *tot;
	uint32_t ntot, cap_tot;
	struct dl_lg_cycle *cyc;
	uint32_t ncyc, cap_cyc;
	struct dl_lg_hang *hang;	/* unreturned calls, in log order */
	uint32_t nhang, cap_hang;
	uint32_t orphans;		/* returns without their call: skipped */
	uint32_t merged;		/* cycles of a file merged into an earlier file's (same run) */
	struct dl_lg_sample *ofail;	/* ... of which failed: listed with the failures */
	uint32_t nofail, cap_ofail;
	struct dl_lg_note note[DL_LG_MAX_NOTES];
	uint32_t nnote, ncontradictions;
	char **files;
	uint32_t nfiles;
	uint32_t probes, probes_failed, initcalls, failures;
	uint64_t lines, skipped, matched[DL_LG_FORMAT_COUNT];
	uint64_t untimed;		/* recognised lines timed by a wall clock to the second only */
	uint32_t cpus;			/* ftrace "#P:N", 0 unknown */
	uint32_t *order;		/* devices by rank (dl_log_finish) */
	uint32_t *probe_smp, nprobe_smp;	/* the boot probes' samples (dl_log_finish) */
	struct dl_lg_lat *fold;		/* dl_log_fold(): the samples' latencies, by device */
	uint32_t nfold;
	struct dl_lg_sample *fail;	/* dl_log_fold(): the failed samples, kept whole */
	uint32_t nfail;
	uint32_t order_conflicts;	/* order constraints the merge had to break */
	struct dl_lg_wait *wait;	/* implied links (dl_log_finish), one per pair */
	uint32_t nwait, cap_wait;
	int64_t main_gap_ns;		/* median gap between main-thread callbacks, -1 none */
	int64_t gap_ns[DL_LAT_COUNT];	/* the same per phase, -1 none */
	/* parser state of the file being read */
	struct dl_lg_pending *pend;
	uint32_t cap_pend;
	uint8_t cur_key, cycle_open, cycle_has_cb;
	uint32_t seg_start;		/* first sample since the last phase boundary */
	int64_t last_ts, ph_begin[DL_LAT_COUNT];
	uint32_t ph_begin_pid;
};

/* Text naming the formats, for "no recognised line" errors. */
extern const char dl_log_formats_help[];

void dl_log_init(struct dl_logimport *li);
void dl_log_free(struct dl_logimport *li);

/**
 * dl_log_read_file() - parse one log file into @li (several files: call once each),
 * a line at a time (memory does not grow with the file's size); @path "-" is stdin.
 * Return: 0; -ENOENT/-EIO (cannot read, @err says why), -ENODATA (no line in
 * a known format: @err names the formats), -ENOMEM.
 */
int dl_log_read_file(struct dl_logimport *li, const char *path, struct dl_error *err);
/* The same from an open stream (a pipe: stdin); @label names it in notes. */
int dl_log_read_stream(struct dl_logimport *li, const char *label, FILE *f,
		       struct dl_error *err);
/* The same on a buffer (tests, fuzzing); @label names it in notes. */
int dl_log_read_buf(struct dl_logimport *li, const char *label, const char *buf, size_t len,
		    struct dl_error *err);

/* After the last file: main threads, async flags, the registration order. */
int dl_log_finish(struct dl_logimport *li);

const char *dl_lg_name(const struct dl_logimport *li, uint32_t dev);
/* The driver (or bus, class) the log names @dev with; "" when it names none (3.x, parents). */
const char *dl_lg_driver(const struct dl_logimport *li, uint32_t dev);
/*
 * @dev's name in the scenario (after dl_log_finish()): its name, or "DRV NAME"
 * when the log names several devices alike (devices are keyed by driver and
 * name: 0:0:0:0 of sd, scsi_disk and bsg are three).
 */
const char *dl_lg_label(const struct dl_logimport *li, uint32_t dev);
int dl_lg_make_labels(struct dl_logimport *li);	/* called by dl_log_finish() */
/* The device named @name (the first of that name), or labelled "DRV NAME"; DL_LG_NONE. */
uint32_t dl_lg_find(const struct dl_logimport *li, const char *name);

/**
 * dl_log_fold() - after dl_log_finish(), when only the scenario of all
 * cycles is wanted: fold the samples (48 bytes each) to their device, phase
 * and latency (16 bytes) and free them, the failed ones kept whole.  After
 * it li->smp is empty: dl_log_scenario(@li, DL_LG_NONE, ...) and
 * dl_log_overlay() work, one cycle's scenario and dl_log_replay() do not.
 * Return 0, -E2BIG (too many devices to fold: nothing done) or -ENOMEM
 * (nothing done).
 */
int dl_log_fold(struct dl_logimport *li);

/*
 * dl_log_scenario() - the scenario (dlsim-scenario/1) of everything read:
 * devices in the observed dpm order, parents, latencies (one cycle: fixed;
 * several: "empirical" over the cycles), async flags, cost.cpus, and "x-log"
 * with the cycles, totals, gaps and failed callbacks.  @cycle: DL_LG_NONE
 * for all cycles, else only that cycle's latencies (the replay).
 * @with_gap: add the phase's median main-thread gap to every logged callback
 * (the console printing of the logged run: what its totals include).
 * @name: the scenario's name.
 */
json_t *dl_log_scenario(const struct dl_logimport *li, uint32_t cycle, bool with_gap,
			const char *name);

/*
 * dl_log_overlay() - overlay measured latencies and async flags on the
 * scenario @sc (modified) by device name.  @unmatched_log gets the names of
 * the log not in @sc, @unmatched_sc the listed devices of @sc not in the log
 * (JSON arrays of strings).  Return 0, -EINVAL (@sc has no "devices" array)
 * or -ENOMEM.
 */
int dl_log_overlay(const struct dl_logimport *li, json_t *sc, json_t *unmatched_log,
		   json_t *unmatched_sc);

#endif
