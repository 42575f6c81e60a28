/*
 * cost.h - the engines' cost model, once: the modelled overheads with their
 * defaults resolved, the latency samples, the injected faults and the clock.
 * Both backends (des.c in virtual time, threads.c in real time) read these;
 * neither keeps a copy.
 */
#ifndef DL_COST_H
#define DL_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/order/sched.h"
#include "sim/scenario/scenario.h"

/*
 * The cost model.
 *
 * A callback's latency is CPU time then sleep time: the share "cpu" of its
 * device's profile (scenario.h, default 0) keeps a CPU busy, the rest is
 * sleep (a bus transfer, msleep(), waiting for firmware), which holds no
 * CPU.  K CPUs (dl_engine_workers()) are shared by the main PM thread and
 * the work items; only CPU parts and the overheads below compete for them.
 * Work items (async suspend/resume and async probe) run on the kworkers of
 * the async workqueue: at most max_active of them hold a worker at once
 * (queued for a CPU, running, sleeping or blocked); the others wait FIFO.
 * In 6.12 and 7.3 that is async_wq (kernel/async.c async_init():
 * alloc_workqueue("async", WQ_UNBOUND, 0), so max_active = WQ_DFL_ACTIVE =
 * WQ_MAX_ACTIVE / 2 = 256, with min_active raised to the same 256), not
 * system_unbound_wq (WQ_MAX_ACTIVE, 512).  A blocked or sleeping item keeps
 * its worker and frees its CPU.
 *
 * The per-item overheads, all CPU time, the same for every order wherever
 * the kernel does the same thing:
 *  - main_ns: the main thread's step to the next device of dpm_list
 *    (list_for_each_entry + get_device + the mutex drop around a callback in
 *    dpm_suspend()/dpm_resume() and friends); serial_main_ns the same in
 *    dpm_prepare() and dpm_complete() (dl_cost_main());
 *  - queue_ns, paid by whoever queues an item: async_schedule_dev_nocall()
 *    (the entry's kzalloc, async_lock, queue_work_node()), by the main walk
 *    (classic dpm_async_fn(), and every async probe) or by a finishing
 *    device's hand-off walk (6.16+); the phone profile's, 32 us, is
 *    calibrated on the Pixel 6's published suspend (cost.c PHONE_PM_QUEUE_NS);
 *  - wake_ns, paid by the item on its CPU: a kworker wakes (try_to_wake_up
 *    and the switch to it) when its item is queued and again when a blocked
 *    item's completion fires (complete_all() in dpm_wait()); except an
 *    item that a kworker back from its previous one takes, which pays
 *    next_ns instead (below: worker_thread()'s process_one_work() loop);
 *  - resume_wake_ns, default wake_ns: the same wake in the resume-direction
 *    phases that run items (resume_noirq, resume_early, resume; complete is
 *    serial, nothing wakes), which one rule picks (sched.h dl_item_wake()).
 *    It stands for the scheduler's wake-up latency of a kworker where it
 *    differs by direction: on big.LITTLE with EAS (energy-aware scheduling)
 *    the kworkers woken during resume start on the little CPUs, "because of
 *    EAS, we don't use the bigger CPUs as quickly", hence "scheduling
 *    latency and preemption of runnable threads" (the Pixel 6 cover letter,
 *    ../shared/real/pixel6-async-cover-letter.txt), its reason why async
 *    resume is slow there (scenarios/pixel6-shape.json's classic figures do
 *    not need it: its x-doc says why);
 *  - switch_ns: a worker blocking in wait_for_completion() (counted into
 *    blocked_ns, the switch is charged to the waker's wake_ns);
 *  - handoff_ns, per dependent, for the orders whose finishing devices
 *    queue their dependents (kernel-async-v2, levels, cp-first): the walk of
 *    dpm_async_resume_subordinate() / dpm_async_suspend_superior() (6.16+,
 *    under dpm_list_mtx, and async_wip_mtx per device in
 *    dpm_async_with_cleanup()), run after the callback (kernel-async-v2:
 *    after its complete_all(), as 7.3's device_resume*() and
 *    device_suspend*() do) and before the dependents it queues can start;
 *    plus queue_ns per item it queues; not in prepare and complete, which
 *    walk nobody;
 *  - check_ns: a probe attempt that defers (really_probe() up to
 *    device_links_check_suppliers());
 *  - reorder_ns + reorder_visit_ns per call: device_pm_move_to_tail(), which
 *    deferred_probe_work_func() does before every retry, paid by the walk.
 *    device_reorder_to_tail() calls itself for every child and consumer with
 *    no visited set, once per path (dl_reorder_visits()).  Measured in the
 *    6.12 guest of --mode kernel (dlsim_kmod's "reorder" records, default.json
 *    100/200/500 devices): 1175 ns per call (R^2-free: 1174.8-1246.8 ns over
 *    28605 to 11.2 M calls), 2.6 us for a call of one; 7.3 pays 1246 ns
 *    (tests/tools/reorder_fit.py: a traced d200 kernel-async-v2 boot, 274k
 *    calls; a d50 one, 7k calls, 1621; 6.12's boots give 1178-1181 the
 *    same way).  The ~3960 ns once
 *    measured on 7.3 was its walk sharing the vCPU with the crypto self-tests
 *    (kernel mode now boots with cryptomgr.notests=1).
 *  - rpm_ns, probe in module context only (the kernel mode's module, whose
 *    drivers enable runtime PM in probe: dl_sc_runtime_pm_users()): every
 *    probe attempt, even one that defers, starts as 6.12's and 7.3's
 *    __driver_probe_device() does, pm_runtime_get_sync() of each PM_RUNTIME
 *    supplier and of the parent (dl_probe_rpm_get()); each device that
 *    resumes (a suspended supplier resumes its own parent and PM_RUNTIME
 *    suppliers first) costs the prober rpm_ns of CPU (rpm_resume() and
 *    rpm_callback() around the driver's runtime_resume) and its sampled
 *    rpm_resume latency.  The log puts these resumes, and the probe or the
 *    deferral, at the attempt's start: the callback's logged duration
 *    includes them.  The boot model leaves runtime PM out of probe;
 *  - rpm_idle_ns: the attempt's puts (pm_runtime_put(), asynchronous) queue
 *    idle requests that pm_wq's kworker runs this long after (its wake and
 *    its turn on a CPU); a device nobody took again by then suspends, with
 *    the suppliers and parent it held (the kernel queues one more request per
 *    level; here they go at once).  Until then it stays active, so the next
 *    attempts find it resumed: on a one-CPU guest whose deferred-probe walk
 *    keeps the CPU, that halves the resumes.  A suspend's own CPU is in the
 *    rpm_ns of the resume that made it; but pm_wq's kworker, once it has
 *    suspended anything, has taken the CPU from the prober: the prober's
 *    next attempt (the DES, des_pmwq_run()) or the attempt itself (threads
 *    and sequential ops, seqops.c) pays a kworker's wake and the switch
 *    back, wake_ns.  In the 6.12 guest's d50-sync boots the pm_wq batch
 *    between two retries starts 24 us after the deferral and the next
 *    retry's resumes 26 us after the batch; the d50 replay twin's probe
 *    was 0.925 of the kernel's without it, 0.958 with it (docs/usage.md).
 *  - register_ns and link_add_ns, the probe op in module context: the
 *    module's init registers every device (platform_device_register(): the
 *    device_add() with its sysfs and uevent) and adds every link
 *    (device_link_add(), which registers a device of class devlink for
 *    the link, plus the device_reorder_to_tail() walk of its consumer,
 *    priced as a retry's, reorder_ns + reorder_visit_ns a call) on one
 *    thread before any driver registers: serial time at the op's start.
 *    Defaults measured in --mode kernel's 6.12 guest (TCG, default.json 50
 *    and 200 devices and camera.json, medians: 218-221 us a device, 185-187
 *    us a link, its walk included; twice that with the host's two CPUs
 *    busy); a board's CPU is several times faster.
 * The end of a sleep costs nothing by default: the timer's wake-up is in the
 * sampled latency (a latency measured in a guest includes QEMU's ~70 us per
 * sleep).  The kernel-mode module's callbacks sleep the requested latencies,
 * and the guest wakes them late; sleep_end_ns (default 0, DES only: the
 * threads backend's sleeps are real) adds that to every callback that
 * sleeps (a latency above its CPU part), so that a DES twin of a kernel run
 * can be given the guest's measured overshoot (tests/kernel_fidelity.sh).
 * A replay twin sets it to 0 (sim/twin/twin.c replay_cost()): the logged
 * latencies it replays hold the overshoot already.
 *
 * The dispatch costs of issue 31, charged here for both backends:
 *  - worker_new_ns, pool_init and next_ns: the kworker pool of async_wq (an
 *    unbound pool, kernel/workqueue.c), as worker_thread() runs it.  A
 *    kworker back from a work item takes the next one on the pool's
 *    worklist itself (the process_one_work() loop: keep_working() holds
 *    while the worklist is not empty, as unbound workers never count in
 *    nr_running): next_ns, and no wake.  New work that no kworker comes
 *    back for is taken by an idle one that kick_pool() woke: the item's
 *    wake (wake_ns; an async probe pays it after its queueing), and if
 *    that kworker was the last idle one it creates one first
 *    (!may_start_working(): manage_workers() -> maybe_create_worker() ->
 *    create_worker(), kthread_create_on_node() and
 *    worker_attach_to_pool()), worker_new_ns before the item: the pool
 *    keeps an idle worker while it has work, and grows by one each time
 *    that one leaves for work, not when an item is queued.  Idle workers
 *    are reaped only after IDLE_WORKER_TIMEOUT (300 s), so the pool keeps
 *    what it grew for the rest of the run.  pool_init: the workers it has
 *    when the run starts (too_many_workers() leaves 2 idle plus a quarter
 *    of the busy ones once the boot's work is reaped).  dl_kpool_take(),
 *    dl_cost_start().
 *  - async_probe_ns: async probe start, __driver_attach() ->
 *    async_schedule_dev(__driver_attach_async_helper) for a
 *    PROBE_PREFER_ASYNCHRONOUS driver (and __device_attach_async_helper),
 *    paid by the probe item before its probe, in place of queue_ns, and
 *    then its kworker's start as any item's (dl_cost_start()).
 *  - retry_ns: the deferred-probe retry path per device,
 *    deferred_probe_work_func() taking it off deferred_probe_active_list
 *    (list_del_init, get_device, mutex_unlock/lock) and bus_probe_device()
 *    -> device_initial_probe() -> __device_attach() matching drivers,
 *    before really_probe(); paid by the walk with the reorder, in both
 *    backends (dl_cost_retry(), run.h dl_op_retry_walk()).
 * Three profiles (enum dl_cost_profile) give every default: hardware (the
 * default), guest, the TCG guest of --mode kernel, for twins against
 * kernel runs, and phone, the hardware profile with the PM dispatch
 * calibrated on the Pixel 6; cost.c says where each number comes from.  A
 * scenario's "cost" object may name its profile ("profile": "phone"),
 * which a run under the default profile takes; it overrides any profile
 * for the keys it has
 * (worker_new_ns, pool_init, async_probe_ns and retry_ns too, each also
 * --set cost.KEY=V).
 */
enum dl_cost_profile { DL_PROFILE_HARDWARE, DL_PROFILE_GUEST, DL_PROFILE_PHONE, DL_PROFILE_COUNT };
struct dl_costs {
	int64_t main_ns;         /* the main thread walks to a device */
	int64_t serial_main_ns;  /* the same in prepare and complete (dl_cost_main()) */
	int64_t queue_ns;        /* queue a work item */
	int64_t wake_ns;         /* wake a blocked worker and switch to it */
	int64_t resume_wake_ns;  /* the same in resume_noirq, resume_early, resume */
	int64_t switch_ns;       /* a worker blocks: context switch away */
	int64_t check_ns;        /* a probe attempt that defers */
	int64_t handoff_ns;      /* the hand-off walk, per dependent */
	int64_t reorder_ns;      /* device_pm_move_to_tail() before a deferred retry */
	int64_t reorder_visit_ns; /* and per call of its device_reorder_to_tail() walk */
	int64_t rpm_ns;          /* a runtime resume on a probe attempt's path */
	int64_t rpm_idle_ns;     /* from a probe's pm_runtime_put() to pm_wq's suspend */
	int64_t register_ns;     /* module context: a device_add() */
	int64_t link_add_ns;     /* module context: a device_link_add(), its walk apart */
	int64_t sleep_end_ns;    /* des: a callback's sleep ends this much after its latency */
	uint32_t max_active;     /* work items holding a worker at once */
	int64_t worker_new_ns;   /* the async pool creates a kworker (none idle) */
	int64_t next_ns;         /* a kworker back from an item takes the next one (no wake) */
	uint32_t pool_init;      /* the async pool's workers when the run starts */
	int64_t async_probe_ns;  /* async_schedule_dev() of an async probe */
	int64_t retry_ns;        /* the deferred-probe retry path, per retried device */
	/* guest: the guest's own devices before each PM phase of an op (cost.c) */
	int64_t phase_gap_ns[DL_PH_COUNT];
};

/* The hardware profile's costs, the scenario's "cost" object on top. */
void dl_costs_resolve(const struct dl_scenario *sc, struct dl_costs *c);
/* Profile @p's costs, the scenario's "cost" object on top. */
void dl_costs_resolve_profile(const struct dl_scenario *sc, enum dl_cost_profile p,
			      struct dl_costs *c);
/* "hardware", "guest", "phone"; NULL out of range.  Parse: 0, or -EINVAL. */
const char *dl_cost_profile_name(unsigned p);
int dl_cost_profile_parse(const char *s, enum dl_cost_profile *out);

/*
 * dl_kpool_take - an idle kworker of the pool (*@workers of them) was woken
 * for new work, @busy kworkers now busy with an item, it included: what its
 * item pays first, worker_new_ns if it was the last idle one and creates
 * one (the pool then has @busy + 1), else 0.  Not for an item that a
 * kworker back from its previous one takes (dl_cost_start()).
 */
static inline int64_t dl_kpool_take(uint32_t *workers, uint32_t busy, const struct dl_costs *c)
{
	if (busy < *workers)
		return 0;
	*workers = busy + 1;
	return c->worker_new_ns;
}

/*
 * The time device_pm_move_to_tail() takes for a walk of @visits calls, at
 * most DL_COST_REORDER_CAP_NS: a walk longer than that (2^64 paths, say)
 * would never end in the kernel either, and a million retries of it must
 * not overflow the clock.
 */
#define DL_COST_REORDER_CAP_NS 1000000000000LL   /* 1000 s */
static inline int64_t dl_cost_reorder(const struct dl_costs *c, uint64_t visits)
{
	const int64_t cap = DL_COST_REORDER_CAP_NS;

	if (c->reorder_ns >= cap ||
	    (c->reorder_visit_ns > 0 && visits > (uint64_t)((cap - c->reorder_ns) / c->reorder_visit_ns)))
		return cap;
	return c->reorder_ns + (int64_t)visits * c->reorder_visit_ns;
}

/*
 * dl_cost_main - the main thread's step to the next device of its walk:
 * serial_main_ns in prepare and complete (@serial, dl_phase_scheme.serial),
 * whose loops in dpm_prepare() and dpm_complete() do less per device than
 * the phases that may queue and wait; main_ns elsewhere.  The hardware
 * profile has one price for both.
 */
static inline int64_t dl_cost_main(const struct dl_costs *c, bool serial)
{
	return serial ? c->serial_main_ns : c->main_ns;
}

/*
 * dl_cost_retry - what a walker of the deferral (main, or the deferred-probe
 * kworker) pays for each device it takes off the active list, besides the
 * device_pm_move_to_tail() walk (dl_cost_reorder()): retry_ns, whether the
 * device is then probed or found busy.
 */
static inline int64_t dl_cost_retry(const struct dl_costs *c)
{
	return c->retry_ns;
}

/*
 * dl_cost_phase_gap - what the main thread spends before PM phase @phase of
 * kind @pk (enum dl_probe_kind's DL_PK_SUSPEND or DL_PK_RESUME) in an op
 * that is a suspend (@op_suspend) or a resume: the guest's own devices
 * (phase_gap_ns), in a phase of the op's own kind only (not in a failed
 * suspend's rollback).  Both backends spend it (des_phase.c, thr_phase.c).
 */
static inline int64_t dl_cost_phase_gap(const struct dl_costs *c, unsigned pk, unsigned phase,
					bool op_suspend)
{
	if (phase >= DL_PH_COUNT || (pk == DL_PK_SUSPEND) != op_suspend)
		return 0;
	return c->phase_gap_ns[phase];
}

/* The CPU part of a callback of latency @lat whose profile's cpu share is @ppm (parts per million). */
static inline int64_t dl_cost_cpu_part(int64_t lat, uint32_t ppm)
{
	if (ppm == 0 || lat <= 0)
		return 0;
	if (ppm >= 1000000)
		return lat;
	return (int64_t)((double)lat * ppm / 1e6);
}

/*
 * A replay twin's latencies (sim/twin/): what each callback of a logged run
 * took, by op, device and latency key; ns[(op * ndev + dev) * DL_LAT_COUNT
 * + key], negative where the run logged none (the scenario's sample then).
 */
struct dl_lat_table {
	uint32_t nop, ndev;
	int64_t *ns;
};

/*
 * dl_cost_sample - the latency of @key for device @d (of latency profile
 * @profile) in op @op: the replayed one if @tab (may be NULL) has it, else a
 * pure function of the run's seed, so that every order and both backends
 * see the same samples.
 */
static inline int64_t dl_cost_sample(const struct dl_lat_table *tab, const struct dl_scenario *sc,
				     uint32_t profile, uint64_t seed, uint32_t d, unsigned key,
				     uint32_t op)
{
	if (tab && op < tab->nop && d < tab->ndev) {
		int64_t v = tab->ns[((size_t)op * tab->ndev + d) * DL_LAT_COUNT + key];

		if (v >= 0)
			return v;
	}
	return dl_latency_sample(&sc->prof[profile].lat[key], seed, d, key, op);
}

/* The scenario's injected faults and how often each has fired in this run. */
struct dl_faults {
	const struct dl_scenario *sc;
	uint8_t *has;            /* per device: some fault names it */
	uint32_t *used;          /* per fault */
};

int dl_faults_init(struct dl_faults *f, const struct dl_scenario *sc);
void dl_faults_fini(struct dl_faults *f);
/* The error (negative errno) callback @key of @d fails with now, or 0; counts it. */
int dl_faults_take(struct dl_faults *f, uint32_t d, unsigned key);
/* Cheap test before taking a lock around dl_faults_take(). */
static inline int dl_faults_any(const struct dl_faults *f, uint32_t d)
{
	return f->has[d];
}

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t dl_mono_ns(void);

/* Queueing an item: an async probe's async_schedule_dev() (@probe), else queue_ns. */
static inline int64_t dl_cost_queue(const struct dl_costs *c, bool probe)
{
	return probe ? c->async_probe_ns : c->queue_ns;
}

/*
 * dl_cost_item - what a work item pays before its callback under @c:
 * @pays, enum dl_item_pays (sched.h: the order's rule), the queueing at
 * dl_cost_queue()'s price when @probe; anything else pays nothing.
 */
static inline int64_t dl_cost_item(const struct dl_costs *c, unsigned pays, bool probe)
{
	switch (pays) {
	case DL_PAYS_QUEUE:
		return dl_cost_queue(c, probe);
	case DL_PAYS_WAKE:
		return c->wake_ns;
	case DL_PAYS_WAKE_RESUME:
		return c->resume_wake_ns;
	default:
		return 0;
	}
}

/*
 * dl_cost_start - what new work pays as a kworker starts it, by @pays
 * (enum dl_item_pays): an async probe its queueing (dl_cost_queue()) if
 * DL_PAYS_QUEUE (DL_PAYS_NONE: the walker that queued it paid that), then,
 * as every item, the wake of the idle kworker kick_pool() woke for it
 * (resume_wake_ns for DL_PAYS_WAKE_RESUME, else wake_ns), or next_ns if
 * @chained, a kworker back from its previous item taking it
 * (dl_kpool_take()).
 */
static inline int64_t dl_cost_start(const struct dl_costs *c, unsigned pays, bool probe,
				    bool chained)
{
	int64_t start = chained ? c->next_ns :
			pays == DL_PAYS_WAKE_RESUME ? c->resume_wake_ns : c->wake_ns;

	return (pays == DL_PAYS_QUEUE ? dl_cost_queue(c, probe) : 0) + start;
}

#endif
