/*
 * dl_core.h - the link core: devices, drivers and device links.
 *
 * A pure, deterministic model of the Linux driver core's device links
 * (drivers/base/core.c, dd.c, power/main.c, power/runtime.c) as described in
 * shared/LINK-CORE.md.  No I/O, no threads, no clock: the engines call in at
 * the instant an action happens and stamp the events this layer emits.
 *
 * Data layout: devices and links live in arrays indexed by uint32_t ids.
 * Each device keeps small vectors of link ids (its supplier links and its
 * consumer links) and of child ids, in the order of the kernel's lists
 * (creation order, kept on deletion: that order decides where
 * device_reorder_to_tail() puts each device); a link remembers its slot in
 * both vectors.  Link ids are never reused within a core, so that a log can
 * name a link unambiguously.
 *
 * dpm_list is a doubly linked list over device ids, the kernel's order once
 * settled (dl_dpm_settle()).  A second list over the registered devices,
 * the topo list, is kept a topological order of parent->child and
 * supplier->consumer as links come, with a 64-bit key per device that grows
 * along it; that makes the cycle check cheap: a supplier whose key is below
 * the consumer's cannot depend on it, and a search from the consumer can
 * prune every device whose key is past the supplier's.  See dl_core.c.
 *
 * Every function returns 0 or a negative errno-style code unless it says
 * otherwise.  Nothing here prints.
 */
#ifndef DL_CORE_H
#define DL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/dl_event.h"

typedef uint32_t dl_dev_t;
typedef uint32_t dl_link_t;
#define DL_NONE UINT32_MAX

/* The kernel's DL_FLAG_* values (include/linux/device.h). */
enum {
	DL_FLAG_STATELESS           = 1u << 0,
	DL_FLAG_AUTOREMOVE_CONSUMER = 1u << 1,
	DL_FLAG_PM_RUNTIME          = 1u << 2,
	DL_FLAG_RPM_ACTIVE          = 1u << 3,
	DL_FLAG_AUTOREMOVE_SUPPLIER = 1u << 4,
	DL_FLAG_AUTOPROBE_CONSUMER  = 1u << 5,
	DL_FLAG_MANAGED             = 1u << 6,
	DL_FLAG_SYNC_STATE_ONLY     = 1u << 7,
	DL_FLAG_INFERRED            = 1u << 8,
	DL_FLAG_CYCLE               = 1u << 9,
};
#define DL_FLAG_COUNT 10

/*
 * Flags that only make sense on managed links (LINK-CORE.md rule 3), as
 * drivers/base/core.c defines DL_MANAGED_LINK_FLAGS in 6.12 and 7.3: CYCLE
 * is one of them, so it is a valid add flag and refused with STATELESS.
 */
#define DL_MANAGED_LINK_FLAGS (DL_FLAG_AUTOREMOVE_CONSUMER | DL_FLAG_AUTOREMOVE_SUPPLIER | \
			       DL_FLAG_AUTOPROBE_CONSUMER | DL_FLAG_SYNC_STATE_ONLY | \
			       DL_FLAG_INFERRED | DL_FLAG_CYCLE)
/* Flags a caller may pass to dl_link_add() (rule 2). */
#define DL_ADD_VALID_FLAGS (DL_MANAGED_LINK_FLAGS | DL_FLAG_STATELESS | \
			    DL_FLAG_PM_RUNTIME | DL_FLAG_RPM_ACTIVE)

/* links.status of a device (enum dl_dev_state in the kernel). */
enum dl_dev_state {
	DL_DEV_NO_DRIVER,
	DL_DEV_PROBING,
	DL_DEV_DRIVER_BOUND,
	DL_DEV_UNBINDING,
};

/* Link status (enum device_link_state; the kernel's NONE is -1). */
enum dl_link_state {
	DL_STATE_NONE,
	DL_STATE_DORMANT,
	DL_STATE_AVAILABLE,
	DL_STATE_CONSUMER_PROBE,
	DL_STATE_ACTIVE,
	DL_STATE_SUPPLIER_UNBIND,
	DL_STATE_COUNT
};

/* Why dl_link_add() refused a link; dl_link_add() returns -reason. */
enum dl_refusal {
	DL_REFUSE_MISSING_DEVICE = 1,   /* rule 1: no such consumer or supplier */
	DL_REFUSE_SELF_LINK,            /* rule 1: consumer == supplier */
	DL_REFUSE_INVALID_FLAGS,        /* rule 2 */
	DL_REFUSE_STATELESS_MANAGED,    /* rule 3 */
	DL_REFUSE_AUTOPROBE_AUTOREMOVE, /* rule 4 */
	DL_REFUSE_SYNC_STATE_ONLY_FLAGS,/* rule 5 */
	DL_REFUSE_RPM_RESUME_FAILED,    /* rule 6 */
	DL_REFUSE_SUPPLIER_UNREGISTERED,/* rule 7 */
	DL_REFUSE_REVERSE_DEPENDENCY,   /* rule 8 */
	DL_REFUSE_CONSUMER_BOUND,       /* rule 9 */
	DL_REFUSE_COUNT
};

enum dl_rpm_status { DL_RPM_SUSPENDED, DL_RPM_ACTIVE };

/*
 * Kernel versions, MAJOR << 8 | MINOR: whose rules a core follows where they
 * changed between the two reference kernels, 6.12 and 7.3 (LINK-CORE.md):
 *  - 6.16, the async suspend/resume rework: the order kernel-async-v2 from
 *    then on, kernel-async up to 6.15 (sim/order/ checks the pair);
 *  - 6.18, "PM: sleep: Do not wait on SYNC_STATE_ONLY device links":
 *    dpm_wait_for_suppliers()/consumers() skip SYNC_STATE_ONLY links from
 *    then on (6.12 and 6.16 wait on one that is not DORMANT).
 */
#define DL_KVER(maj, min) ((uint32_t)(maj) << 8 | (uint32_t)(min))
#define DL_KVER_FIRST DL_KVER(6, 12)        /* the oldest modelled */
#define DL_KVER_LAST DL_KVER(7, 3)          /* the newest modelled */
#define DL_KVER_DEFAULT DL_KVER(6, 12)      /* a core's until dl_core_set_kernel() */
#define DL_KVER_ASYNC_V2 DL_KVER(6, 16)
#define DL_KVER_PM_SKIPS_SSO DL_KVER(6, 18)

#define DL_EPROBE_DEFER 517   /* the kernel's EPROBE_DEFER */

struct dl_idvec {
	uint32_t *v;
	uint32_t n, cap;        /* cap may carry DL_IDVEC_POOLED */
};
/* cap flag: v is a slice of dl_core.pool (dl_core_presize()), not its own allocation. */
#define DL_IDVEC_POOLED 0x80000000u

/*
 * 72 bytes, and 16 in dl_core.topo (88 in one record before the topo fields
 * moved out; 104 before the flags became bits and the runtime-PM counts moved
 * to dl_core.rpm_cnt): see docs/development.md for the bytes per device and
 * link at a million devices.
 */
struct dl_device {
	dl_dev_t parent;
	uint8_t state : 2;      /* enum dl_dev_state */
	uint8_t registered : 1; /* on dpm_list (device_pm_initialized) */
	uint8_t async : 1;      /* may be suspended/resumed asynchronously */
	uint8_t rpm_status : 1; /* enum dl_rpm_status */
	uint8_t deferred : 1;   /* on the deferred-probe pending or active list */
	uint8_t state_synced : 1; /* sync_state() has run */
	uint8_t rpm_fail : 1;   /* fault: runtime resume fails (rule 6) */
	uint8_t pm_depth;       /* suspend phases completed in this transition, 0..4 */
	uint8_t listed : 1;     /* has an entry in the pending or active list (maybe a stale one) */
	/*
	 * A probe attempt reads the fields above and the supplier vector: at
	 * offset 16 it sits next to them, in the record's first 32 bytes.
	 */
	struct dl_idvec suppliers;  /* link ids where this device is the consumer */
	uint32_t sync_waiting;  /* live managed consumer links not ACTIVE: sync_state() waits */
	dl_dev_t dpm_prev, dpm_next;
	/* the cycle check reads these two of every device its search reaches */
	uint32_t mark;          /* visit epoch for graph searches */
	struct dl_idvec consumers;  /* link ids where this device is the supplier */
	struct dl_idvec children;   /* device ids */
};
_Static_assert(DL_DEV_UNBINDING < 4, "dl_device.state holds every state");

/*
 * 16 bytes: at a million devices the links outnumber them 2.5 to 1.  A link
 * does not remember its slots in the two vectors: deleting it keeps the
 * others in order (idvec_remove()), which costs the entries after it
 * anyway, so finding its slot by a scan from the end changes no bound.  Its
 * runtime-PM references live in dl_core.link_rpm (dl_link_rpm_active()).
 */
struct dl_link {
	dl_dev_t consumer, supplier;
	uint16_t flags;         /* DL_FLAG_* (DL_FLAG_COUNT bits) */
	uint8_t status;         /* enum dl_link_state */
	uint8_t live : 1;       /* 0 once deleted (ids are not reused) */
	uint8_t preactivated : 1; /* pm_runtime_get_suppliers() took the supplier (supplier_preactivated) */
	uint32_t kref;
};
_Static_assert(DL_FLAG_COUNT <= 16, "dl_link.flags holds every DL_FLAG_*");

/* Spacing of the topo keys; a core's topo_gap may be set smaller before use (tests). */
#define DL_TOPO_GAP ((uint64_t)1 << 32)

/*
 * A device's place on the topo list (dl_core.topo, by device id), apart from
 * its record: the list's relabelling walks read nothing else, and 16 bytes a
 * device stay in the caches where the 72-byte records do not.
 */
struct dl_topo_node {
	uint64_t key;           /* grows along the topo list; UINT64_MAX: unregistered */
	dl_dev_t prev, next;
};

/* A device and its topo key, for sorting (dl_core.c's topo_reorder()). */
struct dl_topo_ent {
	uint64_t key;
	dl_dev_t dev;
};

struct dl_core {
	struct dl_device *dev;
	uint32_t ndev, cap_dev;
	struct dl_link *link;
	uint32_t nlink, cap_link;
	uint32_t nlink_live;
	/*
	 * Per link id below cap_link, the runtime-PM references it holds on
	 * its supplier (the kernel's link->rpm_active); NULL until a link
	 * with DL_FLAG_PM_RUNTIME is added, since only those take any.
	 */
	uint32_t *link_rpm;
	/*
	 * Per device id below cap_dev, its runtime-PM usage count and
	 * runtime-active children (dl_rpm_usage(), dl_rpm_children()); NULL
	 * until runtime PM is first used (dl_rpm_get(), a PM_RUNTIME link,
	 * dl_core_set_rpm_users()): no device is runtime-active before.
	 */
	struct dl_rpm_cnt { int32_t usage, children; } *rpm_cnt;

	dl_dev_t dpm_head, dpm_tail;
	uint32_t dpm_count;
	/*
	 * The topo order (dl_core.c): a list of the registered devices whose
	 * keys grow along it.  A device registers at its tail, topo_gap past
	 * the last key; dl_link_add() moves the devices that must follow the
	 * supplier to right after it, relabelling its neighbours when the
	 * keys there are too close (topo_relabels counts it).
	 */
	struct dl_topo_node *topo;      /* cap_dev entries */
	dl_dev_t topo_fwd_bound;        /* depends_search()'s, for topo_reorder() */
	dl_dev_t topo_head, topo_tail;
	uint64_t topo_gap;
	uint64_t topo_relabels;
	struct dl_topo_ent *topo_ent;   /* topo_reorder()'s, topo_cap entries */
	uint32_t topo_cap;

	uint32_t epoch;
	struct dl_idvec scratch, scratch2;  /* search stacks, reused */

	/*
	 * The kernel's dpm_list moves not applied yet (dl_dpm_settle()): the
	 * roots of device_reorder_to_tail() calls as (device, stamp) pairs in
	 * the order they happened, and per device the stamp of its latest one
	 * (0: none pending).  Settled before anything reads the list's order
	 * and before a device or a link other than SYNC_STATE_ONLY goes.
	 */
	struct dl_idvec dpm_pending;
	uint32_t *dpm_stamp;            /* cap_dev entries; NULL until a move is recorded */
	uint32_t dpm_clock;             /* last stamp handed out in this batch */
	struct dl_idvec settle_stack, settle_post;

	/* deferred probing (drivers/base/dd.c) */
	struct dl_idvec deferred_pending, deferred_active;
	uint32_t deferred_active_head;
	bool deferred_enabled;          /* set at late_initcall */
	bool sync_state_paused;         /* until late boot */
	uint64_t probe_attempts, probe_defers, deferred_triggers;
	/*
	 * dev->can_match, per device id below can_match_n (dl_core_track_can_match()):
	 * set by a device's first probe attempt; driver_deferred_probe_add()
	 * ignores a device without it (an AUTOPROBE_CONSUMER bind of its
	 * supplier before any driver tried it).  NULL: not tracked, every
	 * device may be added (the boot model, where retries wait until every
	 * device was tried).
	 */
	uint8_t *can_match;
	uint32_t can_match_n;

	/*
	 * dl_reorder_visits()'s memo: per device the number of calls
	 * device_reorder_to_tail() makes from it, valid while rv_gen[d] is
	 * graph_gen + 1 (graph_gen moves whenever a device's children or
	 * consumers change).
	 */
	uint64_t *rv;
	uint32_t *rv_gen, rv_cap, graph_gen;
	struct dl_idvec rv_stack;

	uint32_t *pool;                 /* dl_core_presize()'s vector storage */
	struct dl_sink sink;

	/*
	 * Runtime PM as drivers enable it (dl_core_set_rpm_users()): per device
	 * id below rpm_user_n, whether its driver calls pm_runtime_enable() in
	 * probe, so that its runtime PM is enabled while it is bound.  NULL: the
	 * legacy model, every device's runtime PM enabled, no runtime PM around
	 * a probe attempt.
	 */
	uint8_t *rpm_user;
	uint32_t rpm_user_n;

	uint32_t kver;                  /* DL_KVER() whose rules apply (dl_core_set_kernel()) */
	bool pm_skips_sso;              /* kver >= DL_KVER_PM_SKIPS_SSO */

	/*
	 * Ctrl-C in the long walks (dl_core_set_stop()): stop_poll(stop_ctx)
	 * is asked every DL_STOP_POLL_STEPS steps of a walk; once it says yes,
	 * stopped stays set, every walk gives up at once and the call under
	 * way returns -EINTR.  The core itself knows no signal.
	 */
	bool (*stop_poll)(void *ctx);
	void *stop_ctx;
	uint32_t stop_steps;
	bool stopped;
};

/* Steps of a walk between two stop polls: ~50 us of work, a load of a flag each. */
#define DL_STOP_POLL_STEPS 4096u

/* Lifetime. */
int dl_core_init(struct dl_core *c, uint32_t ndev_hint, uint32_t nlink_hint);
void dl_core_fini(struct dl_core *c);
void dl_core_trim(struct dl_core *c);
void dl_core_set_sink(struct dl_core *c, struct dl_sink sink);
void dl_core_set_stop(struct dl_core *c, bool (*poll)(void *ctx), void *ctx);
bool dl_core_poll_stop(struct dl_core *c);
int dl_core_set_kernel(struct dl_core *c, uint32_t kver);
int dl_kver_parse(const char *s, uint32_t *out);
void dl_kver_format(uint32_t kver, char *buf, size_t len);
int dl_core_presize(struct dl_core *c, const uint32_t *nsup, const uint32_t *ncon,
		    const uint32_t *nchild);

/* Devices. */
int dl_device_new(struct dl_core *c, dl_dev_t parent, bool async, dl_dev_t *out);
int dl_device_register(struct dl_core *c, dl_dev_t d);
int dl_device_del(struct dl_core *c, dl_dev_t d);

/* Links. */
int dl_link_add(struct dl_core *c, dl_dev_t consumer, dl_dev_t supplier,
		uint32_t flags, dl_link_t *out);
int dl_link_del(struct dl_core *c, dl_link_t l);
dl_link_t dl_link_find(const struct dl_core *c, dl_dev_t consumer, dl_dev_t supplier);
int dl_link_mark_cycle(struct dl_core *c, dl_link_t l);
bool dl_is_dependent(struct dl_core *c, dl_dev_t dev, dl_dev_t target);
bool dl_topo_is_topological(const struct dl_core *c);
int dl_reorder_to_tail(struct dl_core *c, dl_dev_t d);
uint64_t dl_reorder_visits(struct dl_core *c, dl_dev_t d);
void dl_dpm_settle(struct dl_core *c);
dl_dev_t dl_dpm_first(struct dl_core *c);
dl_dev_t dl_dpm_last(struct dl_core *c);

/* Kernel-faithful reimplementations, for benchmarks and cross-checks only. */
bool dl_kernel_is_dependent(const struct dl_core *c, dl_dev_t dev, dl_dev_t target,
			    uint64_t *visits);
void dl_kernel_reorder_to_tail(struct dl_core *c, dl_dev_t d, uint64_t *visits);

/* Probe (drivers/base/dd.c). */
int dl_probe_check(struct dl_core *c, dl_dev_t d, bool ignore_links);
int dl_probe_begin(struct dl_core *c, dl_dev_t d, bool ignore_links);
void dl_probe_deferred(struct dl_core *c, dl_dev_t d, uint32_t trig);
void dl_probe_end(struct dl_core *c, dl_dev_t d, int err);
void dl_deferred_enable(struct dl_core *c);
int dl_core_track_can_match(struct dl_core *c);
void dl_deferred_trigger(struct dl_core *c);
void dl_deferred_add(struct dl_core *c, dl_dev_t d);
dl_dev_t dl_deferred_next(struct dl_core *c);
dl_dev_t dl_deferred_peek(const struct dl_core *c, uint32_t ahead);

/*
 * deferred_trigger_count as really_probe() reads it, an atomic_t: the
 * triggers since late_initcall, modulo 2^32 (dl_probe_deferred()).
 */
static inline uint32_t dl_deferred_trigger_count(const struct dl_core *c)
{
	return (uint32_t)c->deferred_triggers;
}
bool dl_sync_state_ready(const struct dl_core *c, dl_dev_t d);
void dl_sync_state_resume(struct dl_core *c);

/* Unbind (__device_release_driver), in steps so that an engine can let time pass. */
bool dl_links_busy(struct dl_core *c, dl_dev_t d);
#define DL_UNBIND_WAIT_PROBE ((dl_dev_t)(UINT32_MAX - 1))
dl_dev_t dl_links_unbind_next(struct dl_core *c, dl_dev_t d);
void dl_driver_cleanup(struct dl_core *c, dl_dev_t d);
int dl_release_driver(struct dl_core *c, dl_dev_t d, struct dl_idvec *order);

/* System sleep (who waits for whom: the dependency iterators below). */
bool dl_pm_ready(const struct dl_core *c, dl_dev_t d, bool suspend, const uint8_t *done);
uint32_t dl_pm_wait_count(const struct dl_core *c, dl_dev_t d, bool suspend);
bool dl_dpm_is_topological(struct dl_core *c);

/* Runtime PM through PM_RUNTIME links. */
int dl_rpm_get(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed);
int dl_rpm_put(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended);
int dl_core_set_rpm_users(struct dl_core *c, const uint8_t *users, uint32_t n);
bool dl_rpm_enabled(const struct dl_core *c, dl_dev_t d);
int dl_probe_rpm_get(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed);
void dl_probe_rpm_put(struct dl_core *c, dl_dev_t d, struct dl_idvec *idle);
void dl_rpm_idle(struct dl_core *c, dl_dev_t d, struct dl_idvec *suspended);

/* Names, for logs and messages. */
const char *dl_dev_state_name(unsigned s);
const char *dl_link_state_name(unsigned s);
const char *dl_refusal_name(unsigned r);
const char *dl_flag_name(unsigned bit_index);
int dl_flag_parse(const char *name, uint32_t *bit);
size_t dl_flags_format(uint32_t flags, char *buf, size_t len);

/* Small vector helpers shared by the layers. */
int dl_idvec_push_slow(struct dl_idvec *v, uint32_t x);

/*
 * dl_prefetch - start loading the cache line at @p.  GCC 12's dead-code
 * elimination drops some __builtin_prefetch calls that sit under a branch
 * (measured: all three in dl_deferred_next), so on x86 this is an asm the
 * optimiser must keep.
 */
static inline void dl_prefetch(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p);
#endif
}

/* Append @x (0, or -ENOMEM): inline while there is room, since the searches push per visit. */
static inline int dl_idvec_push(struct dl_idvec *v, uint32_t x)
{
	if (v->n < (v->cap & ~DL_IDVEC_POOLED)) {
		v->v[v->n++] = x;
		return 0;
	}
	return dl_idvec_push_slow(v, x);
}
void dl_idvec_free(struct dl_idvec *v);

static inline const struct dl_device *dl_dev(const struct dl_core *c, dl_dev_t d)
{
	return &c->dev[d];
}

/* Runtime-PM usage count and runtime-active children of @d (dl_core.rpm_cnt). */
static inline int32_t dl_rpm_usage(const struct dl_core *c, dl_dev_t d)
{
	return c->rpm_cnt ? c->rpm_cnt[d].usage : 0;
}

static inline int32_t dl_rpm_children(const struct dl_core *c, dl_dev_t d)
{
	return c->rpm_cnt ? c->rpm_cnt[d].children : 0;
}

/* The runtime-PM references link @l holds on its supplier (link->rpm_active). */
static inline uint32_t dl_link_rpm_active(const struct dl_core *c, dl_link_t l)
{
	return c->link_rpm ? c->link_rpm[l] : 0;
}

static inline bool dl_link_is_sync_state_only(uint32_t flags)
{
	/*
	 * device_link_flag_is_sync_state_only(): MANAGED is a marker too, so a
	 * SYNC_STATE_ONLY link stays one while device_link_drop_managed()
	 * takes it down.
	 */
	return (flags & ~(DL_FLAG_INFERRED | DL_FLAG_CYCLE | DL_FLAG_MANAGED)) ==
	       DL_FLAG_SYNC_STATE_ONLY;
}

/*
 * dpm_wait_for_suppliers()/consumers(): a link counts unless DORMANT
 * (STATELESS ones, status NONE, count); from 6.18 SYNC_STATE_ONLY links
 * never count (device_link_flag_is_sync_state_only() in 7.3's main.c).
 */
static inline bool dl_link_counts_for_pm(const struct dl_core *c, const struct dl_link *l)
{
	return l->live && l->status != DL_STATE_DORMANT &&
	       !(c->pm_skips_sso && dl_link_is_sync_state_only(l->flags));
}

/*
 * dl_link_gates_probe - does @l hold its consumer's probe back until the
 * supplier is bound (device_links_check_suppliers())?  Managed links
 * without the SYNC_STATE_ONLY bit.  CYCLE exempts nothing by itself:
 * fw_devlink creates cycle links SYNC_STATE_ONLY|INFERRED|CYCLE, and once a
 * driver's plain add clears SYNC_STATE_ONLY the link gates like any other.
 */
static inline bool dl_link_gates_probe(const struct dl_link *l)
{
	return l->live && (l->flags & DL_FLAG_MANAGED) && !(l->flags & DL_FLAG_SYNC_STATE_ONLY);
}

/*
 * dl_pm_has_no_deps - kernel-async-v2's device queued before the walk
 * (6.16+): dpm_root_device() when resuming (no parent, no supplier link),
 * dpm_leaf_device() when @suspend (no child, no consumer link).  Any link
 * counts, even a DORMANT or SYNC_STATE_ONLY one, as in the kernel.
 */
static inline bool dl_pm_has_no_deps(const struct dl_core *c, dl_dev_t d, bool suspend)
{
	const struct dl_device *x = &c->dev[d];

	return suspend ? x->children.n == 0 && x->consumers.n == 0 :
			 x->parent == DL_NONE && x->suppliers.n == 0;
}

/*
 * The dependency rules of a phase, once for every layer: what a device
 * waits for, and whom it releases when it finishes.
 *  - suspend phases (dpm_wait_for_subordinate()): a device waits for its
 *    children and the consumers of its links that count for PM;
 *  - resume phases (dpm_wait_for_superior()): for its parent and the
 *    suppliers of those links;
 *  - probe (device_links_check_suppliers()): for the suppliers of the links
 *    that gate probe.
 * Releasing is the same relation read backwards.  The iterator visits the
 * parent or the children first, then the links in vector order; that order
 * is part of every engine's deterministic event sequence.  Registration is
 * not filtered here (children and parents of a registered device are
 * registered; a link's other end may not be): callers that take part of
 * the devices filter them.
 */
enum dl_dep_kind { DL_DEP_SUSPEND, DL_DEP_RESUME, DL_DEP_PROBE, DL_DEP_COUNT };

struct dl_dep_iter {
	const struct dl_core *c;
	const struct dl_device *x;
	uint32_t i;
	uint8_t stage;          /* 0: parent or children, 1: links, 2: done */
	uint8_t up;             /* toward the parent and the suppliers */
	uint8_t probe;          /* links that gate probe, no parent or children */
};

static inline void dl_dep_iter_init(struct dl_dep_iter *it, const struct dl_core *c,
				    unsigned kind, dl_dev_t d, bool up)
{
	it->c = c;
	it->x = &c->dev[d];
	it->i = 0;
	it->stage = 0;
	it->up = up;
	it->probe = kind == DL_DEP_PROBE;
}

/* The next device of @it, or DL_NONE at the end. */
static inline dl_dev_t dl_dep_next(struct dl_dep_iter *it)
{
	const struct dl_device *x = it->x;

	if (it->stage == 0) {
		if (!it->probe) {
			if (!it->up && it->i < x->children.n)
				return x->children.v[it->i++];
			if (it->up && it->i++ == 0 && x->parent != DL_NONE)
				return x->parent;
		}
		it->stage = 1;
		it->i = 0;
	}
	if (it->stage == 1) {
		const struct dl_idvec *v = it->up ? &x->suppliers : &x->consumers;

		while (it->i < v->n) {
			const struct dl_link *k = &it->c->link[v->v[it->i++]];

			if (it->probe ? dl_link_gates_probe(k) : dl_link_counts_for_pm(it->c, k))
				return it->up ? k->supplier : k->consumer;
		}
		it->stage = 2;
	}
	return DL_NONE;
}

/* The devices @d waits for in a phase of @kind (enum dl_dep_kind). */
static inline void dl_waits_for_init(struct dl_dep_iter *it, const struct dl_core *c,
				     unsigned kind, dl_dev_t d)
{
	dl_dep_iter_init(it, c, kind, d, kind != DL_DEP_SUSPEND);
}

/* The devices that wait for @d in a phase of @kind: @d's end releases them. */
static inline void dl_releases_init(struct dl_dep_iter *it, const struct dl_core *c,
				    unsigned kind, dl_dev_t d)
{
	dl_dep_iter_init(it, c, kind, d, kind == DL_DEP_SUSPEND);
}

/* An upper bound of what the iterator of @d in direction @up visits (for sizing). */
static inline uint32_t dl_dep_most(const struct dl_core *c, unsigned kind, dl_dev_t d, bool up)
{
	const struct dl_device *x = &c->dev[d];

	if (kind == DL_DEP_PROBE)
		return up ? x->suppliers.n : x->consumers.n;
	return up ? 1 + x->suppliers.n : x->children.n + x->consumers.n;
}

#define dl_for_each_waited(it, c, kind, d, y) \
	for (dl_waits_for_init(&(it), c, kind, d); ((y) = dl_dep_next(&(it))) != DL_NONE;)
#define dl_for_each_released(it, c, kind, d, y) \
	for (dl_releases_init(&(it), c, kind, d); ((y) = dl_dep_next(&(it))) != DL_NONE;)

#endif
