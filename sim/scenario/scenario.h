/*
 * scenario.h - scenario files (shared/SPEC.md "Scenario files"): loading and
 * validating them with Jansson, the graph generators, and the latency
 * distributions.  Depends on libc, libm and Jansson only.
 *
 * A loaded scenario is plain arrays indexed by device id (the order devices
 * are registered in): devices share latency profiles, links and ops refer to
 * devices by index.  Every function returns 0 or a negative errno code;
 * nothing here prints.
 */
#ifndef DL_SCENARIO_H
#define DL_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#define DL_SC_FORMAT "dlsim-scenario/1"

/* Documented limits: a file or generator beyond these is refused. */
#define DL_SC_MAX_DEVICES 10000000u
#define DL_SC_MAX_LINKS   50000000u
#define DL_SC_MAX_OPS     10000000u
#define DL_SC_MAX_FAULTS  1000000u
#define DL_SC_MAX_NAME    255u
#define DL_SC_NONE        UINT32_MAX	/* "no device" in parent, dev, dev2 */

/* Latency keys of a device; also "which callback" of a fault. */
enum dl_lat_key {
	DL_LAT_PROBE, DL_LAT_REMOVE, DL_LAT_PREPARE, DL_LAT_SUSPEND, DL_LAT_SUSPEND_LATE,
	DL_LAT_SUSPEND_NOIRQ, DL_LAT_RESUME_NOIRQ, DL_LAT_RESUME_EARLY, DL_LAT_RESUME,
	DL_LAT_COMPLETE, DL_LAT_RPM_SUSPEND, DL_LAT_RPM_RESUME, DL_LAT_COUNT
};

enum dl_dist { DL_DIST_NONE, DL_DIST_FIXED, DL_DIST_UNIFORM, DL_DIST_EXP, DL_DIST_NORMAL,
	       DL_DIST_LOGNORMAL, DL_DIST_EMPIRICAL };

/*
 * One latency, all in ns.  NONE: the phase takes no time.  FIXED: mean.
 * UNIFORM: [min, max].  EXP: mean.  NORMAL: mean, sd.  LOGNORMAL: mean and sd
 * of the sample itself (not of its logarithm).  EMPIRICAL: one of the nsamp
 * measured values samp[] (owned by the scenario), each equally likely; mean
 * is their mean.  Every sample is clamped to [min, max]; min defaults to 0
 * and max to INT64_MAX.
 */
struct dl_latency {
	uint8_t dist;
	int64_t mean, sd, min, max;
	uint32_t nsamp;
	const int64_t *samp;
};

/*
 * Devices share profiles: a million devices, a few profiles.  cpu_ppm: the
 * share (parts per million) of each callback's latency that keeps a CPU
 * busy; the rest is sleep (a bus transfer, msleep(), firmware), which holds
 * no CPU.  Key "cpu" (a number from 0 to 1) of "defaults" or of a device;
 * default 0: callbacks sleep for their whole latency (engine/cost.h).
 */
struct dl_profile {
	struct dl_latency lat[DL_LAT_COUNT];
	uint32_t cpu_ppm;
};

struct dl_sc_device {
	uint32_t name_off;	/* into dl_scenario.names */
	uint32_t parent;	/* device index, always < this one's; DL_SC_NONE = none */
	uint32_t profile;	/* index into dl_scenario.prof */
	uint8_t async;		/* async probe and suspend/resume allowed (default 1) */
	uint8_t hotplug;	/* not registered by probe; the op add registers it */
};

/*
 * Link flags are the kernel's DL_FLAG_* bit values (include/linux/device.h):
 * STATELESS 1<<0, AUTOREMOVE_CONSUMER 1<<1, PM_RUNTIME 1<<2, RPM_ACTIVE 1<<3,
 * AUTOREMOVE_SUPPLIER 1<<4, AUTOPROBE_CONSUMER 1<<5, MANAGED 1<<6,
 * SYNC_STATE_ONLY 1<<7, INFERRED 1<<8, CYCLE 1<<9.  The loader keeps any
 * combination, including those device_link_add() refuses: the engine refuses
 * and reports them the way the kernel would.
 */
struct dl_sc_link {
	uint32_t consumer, supplier, flags;
};

enum dl_op_kind {
	DL_OP_PROBE, DL_OP_SUSPEND, DL_OP_RESUME, DL_OP_UNBIND, DL_OP_BIND, DL_OP_REMOVE,
	DL_OP_ADD, DL_OP_LINK_ADD, DL_OP_LINK_DEL, DL_OP_RPM_GET, DL_OP_RPM_PUT, DL_OP_COUNT
};

/*
 * One script step.  Link ops: dev = consumer, dev2 = supplier, flags.
 * concurrent ("concurrent": true, ops other than probe, suspend and resume):
 * the op races the nearest earlier op that is not concurrent, issued
 * delay_ns ("delay", simulated) after that op started.  Threads mode runs
 * it on its own thread (a run of concurrent ops: one thread, in order);
 * DES serializes it after the previous op.
 */
struct dl_sc_op {
	uint8_t kind;
	uint32_t dev, dev2;	/* DL_SC_NONE when the op takes no device */
	uint32_t flags;
	uint8_t concurrent;
	int64_t delay_ns;
};

/* An injected failure of one callback of one device. */
struct dl_sc_fault {
	uint32_t dev;
	uint8_t lat_key;	/* which callback fails: probe, a PM phase, rpm_suspend/resume */
	int32_t err;		/* positive errno, e.g. EBUSY; EPROBE_DEFER is 517 */
	uint32_t times;		/* fails this many times, then succeeds; 0 = every time */
};

/* Engine cost model from the optional "cost" object; unset: cpus 0, others -1. */
struct dl_cost {
	uint32_t cpus;
	uint32_t max_active;	/* "max_active": async work items at once; 0: unset */
	int64_t queue_ns, wake_ns, switch_ns, main_ns, probe_check_ns, handoff_ns;
	int64_t reorder_ns, reorder_visit_ns;
	int64_t rpm_ns, rpm_idle_ns, register_ns, link_add_ns, sleep_end_ns;
	int64_t resume_wake_ns;	/* "resume_wake_ns": wake_ns in resume phases; -1: wake_ns */
	/*
	 * The dispatch keys of issue 31, each valid where its DL_COST_HAS_*
	 * bit of @has is set, so that a zeroed struct leaves them to the
	 * profile (sim/engine/cost.h says what each stands for).
	 */
	uint32_t has;
	char profile[16];	/* "profile": the cost profile's name, "" unset (cost.h) */
	int64_t worker_new_ns;	/* "worker_new_ns": the async pool creates a kworker */
	int64_t async_probe_ns;	/* "async_probe_ns": async_schedule_dev() of an async probe */
	int64_t retry_ns;	/* "retry_ns": the deferred-probe retry path, per device */
	uint32_t pool_init;	/* "pool_init": the async pool's kworkers when a run starts */
};
enum {
	DL_COST_HAS_WORKER_NEW = 1u << 0,
	DL_COST_HAS_ASYNC_PROBE = 1u << 1,
	DL_COST_HAS_RETRY = 1u << 2,
	DL_COST_HAS_POOL_INIT = 1u << 3,
};

struct dl_scenario {
	char *path;
	char *name;		/* "name", or the file's base name without .json */
	uint64_t seed;		/* after --seed */
	char *names;		/* arena of NUL-terminated device names */
	size_t names_len;
	struct dl_sc_device *dev;
	uint32_t ndev;
	struct dl_sc_link *link;
	uint32_t nlink;
	struct dl_profile *prof;
	uint32_t nprof;
	struct dl_sc_op *op;
	uint32_t nop;
	struct dl_sc_fault *fault;
	uint32_t nfault;
	struct dl_cost cost;
	uint32_t ndev_listed;	/* devices[0..ndev_listed) came from "devices", the rest from "generate" */
	uint32_t nlink_generated; /* link[0..nlink_generated) came from "generate", the rest from "links" */
	char *topology;		/* generator name, or NULL */
	int64_t **emp;		/* the sample arrays of "empirical" latencies, to free */
	uint32_t nemp;
	char **driver;		/* per listed device its "x-driver" (NULL: none); NULL: no device has one */
	uint32_t ndriver;
};

/* "FILE:LINE:COL: what is wrong; expected ..." or "FILE: key.path: ...". */
struct dl_error {
	char msg[512];
};

/* --set KEY=VALUE: VALUE is JSON if it parses as JSON, else a string. */
struct dl_override {
	const char *key, *value;
};

/**
 * dl_scenario_load() - read, validate and expand a scenario file.
 * @ov, @nov: --set overrides: dev.NAME.KEY, defaults.KEY, cost.KEY, else a field
 *	of the "generate" object (created if absent).
 * @seed_override: --seed, or NULL.  The generators use "generate.seed" when
 *	given, else this seed.
 * Return: 0 and *@out (free with dl_scenario_free()); -EINVAL (bad input),
 * -ENOENT (no such file) or -ENOMEM, with @err filled.
 */
int dl_scenario_load(const char *path, const struct dl_override *ov, size_t nov,
		     const uint64_t *seed_override, struct dl_scenario **out,
		     struct dl_error *err);
/*
 * dl_scenario_load_json() - the same from a JSON object already in memory
 * (import-log's replay, advise); @label stands for the file name in messages.
 * @root is not modified (--set works on a copy).
 */
struct json_t;
int dl_scenario_load_json(const char *label, struct json_t *root, const struct dl_override *ov,
			  size_t nov, const uint64_t *seed_override, struct dl_scenario **out,
			  struct dl_error *err);
void dl_scenario_free(struct dl_scenario *s);

/* The name of device @dev. */
const char *dl_sc_name(const struct dl_scenario *s, uint32_t dev);
/* The driver device @dev's "x-driver" names (import-dtb, import-log write it), or NULL. */
const char *dl_sc_driver(const struct dl_scenario *s, uint32_t dev);
/* Index of the device named @name, or DL_SC_NONE (linear scan: not for hot paths). */
uint32_t dl_sc_find(const struct dl_scenario *s, const char *name);
/* Per device, whether its driver enables runtime PM (sc_build.c); calloc'd, NULL: out of memory. */
uint8_t *dl_sc_runtime_pm_users(const struct dl_scenario *s);
/* The latency of @key for @dev. */
const struct dl_latency *dl_sc_latency(const struct dl_scenario *s, uint32_t dev,
				       enum dl_lat_key key);

/**
 * dl_latency_sample() - the @occurrence-th sample of latency @l for @dev, @key.
 * Counter-based (a hash of seed, dev, key, occurrence), so it is reproducible
 * and independent of the order of calls.  Clamped to [min, max], never negative.
 */
int64_t dl_latency_sample(const struct dl_latency *l, uint64_t seed, uint32_t dev,
			  uint32_t key, uint32_t occurrence);

/* "PM_RUNTIME" -> 1u << 2.  Return 0, or -EINVAL for an unknown name. */
int dl_flag_from_name(const char *name, uint32_t *bit);

/* Names as they appear in scenario files; NULL when out of range. */
const char *dl_lat_key_name(unsigned key);
const char *dl_op_name(unsigned kind);
const char *dl_dist_name(unsigned dist);

/* splitmix64: the mixing function behind every sample and generator. */
static inline uint64_t dl_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

#endif
