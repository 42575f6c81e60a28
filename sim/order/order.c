/*
 * order.c - the registry of ordering algorithms: one file per order
 * (sync.c, kernel_async.c, ...), one line here.  The engines read an order
 * only through its policy and the phase scheme made from it (order.h), and
 * ask sched.h's rules of that scheme while a phase runs, so an order added
 * here runs in both backends.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/order/order.h"

static const struct dl_order_def *const registry[DL_ORDER_COUNT] = {
	[DL_ORDER_SYNC] = &dl_order_sync,
	[DL_ORDER_KERNEL_ASYNC] = &dl_order_kernel_async,
	[DL_ORDER_KERNEL_ASYNC_V2] = &dl_order_kernel_async_v2,
	[DL_ORDER_LEVELS] = &dl_order_levels,
	[DL_ORDER_CP_FIRST] = &dl_order_cp_first,
	[DL_ORDER_NAIVE] = &dl_order_naive,
};

const char *dl_order_name(enum dl_order o) { return o < DL_ORDER_COUNT ? registry[o]->name : "?"; }
const char *dl_order_doc(enum dl_order o) { return o < DL_ORDER_COUNT ? registry[o]->doc : "?"; }
const struct dl_order_policy *dl_order_policy(enum dl_order o) { return &registry[o]->policy; }

int dl_order_parse(const char *name, enum dl_order *out)
{
	for (int i = 0; i < DL_ORDER_COUNT; i++) {
		if (strcmp(name, registry[i]->name) == 0) {
			*out = (enum dl_order)i;
			return 0;
		}
	}
	return -EINVAL;
}

static enum dl_order order_of(const struct dl_order_def *d)
{
	int i = 0;

	while (i < DL_ORDER_COUNT - 1 && registry[i] != d)
		i++;
	assert(registry[i] == d);   /* async_form, successor: orders of the registry */
	return (enum dl_order)i;
}

/*
 * dl_order_async_form - the order that runs as @o does when no device is
 * async but honours the devices' async flags (sync: kernel-async), else @o:
 * what `dlsim advise` simulates to try making devices async.
 */
enum dl_order dl_order_async_form(enum dl_order o)
{
	return registry[o]->async_form ? order_of(registry[o]->async_form) : o;
}

/*
 * dl_order_successor - the scheme a later kernel replaced @o with
 * (kernel-async: kernel-async-v2) in *@out: 0, or -ENOENT if none did.
 */
int dl_order_successor(enum dl_order o, enum dl_order *out)
{
	if (!registry[o]->successor)
		return -ENOENT;
	*out = order_of(registry[o]->successor);
	return 0;
}

/*
 * dl_order_of_kernel - the order a kernel @kver (DL_KVER(); 0: the default
 * kernel) ran, with (@async) or without async devices: what a kernel's log
 * is replayed under.
 */
enum dl_order dl_order_of_kernel(bool async, uint32_t kver)
{
	int i;

	kver = kver ? kver : DL_KVER_DEFAULT;
	for (i = 0; i < DL_ORDER_COUNT; i++) {
		const struct dl_order_policy *p = &registry[i]->policy;

		if (p->kernel_native && dl_order_uses_items(p) == async &&
		    !dl_order_check_kernel((enum dl_order)i, kver, NULL, 0))
			break;
	}
	return i < DL_ORDER_COUNT ? (enum dl_order)i : DL_ORDER_DEFAULT;
}

/*
 * dl_order_link_aware - every order but the negative control (what "all"
 * orders means to compare and sweep) into @out (DL_ORDER_COUNT entries), of
 * those with kernel @kver (nonzero) only those that model it; returns how many.
 */
uint32_t dl_order_link_aware(enum dl_order *out, uint32_t kver)
{
	uint32_t n = 0;

	for (int i = 0; i < DL_ORDER_COUNT; i++)
		if (registry[i]->policy.link_aware &&
		    (!kver || !dl_order_check_kernel((enum dl_order)i, kver, NULL, 0)))
			out[n++] = (enum dl_order)i;
	return n;
}

static uint32_t kver_min(const struct dl_order_policy *p)
{
	return p->kver_min ? p->kver_min : DL_KVER_FIRST;
}

static uint32_t kver_max(const struct dl_order_policy *p)
{
	return p->kver_max ? p->kver_max : DL_KVER_LAST;
}

/* dl_order_default_kernel - the kernel a run of @o follows without --kernel. */
uint32_t dl_order_default_kernel(enum dl_order o)
{
	const struct dl_order_policy *p = &registry[o]->policy;

	return p->kver_default ? p->kver_default : DL_KVER_DEFAULT;
}

/*
 * dl_order_kernel - the kernel a run of @o follows: @requested (--kernel,
 * DL_KVER()) if nonzero, else the order's default.  Both engines ask this
 * (and dl_order_check_kernel()), so the choice is made in one place.
 */
uint32_t dl_order_kernel(enum dl_order o, uint32_t requested)
{
	return requested ? requested : dl_order_default_kernel(o);
}

/**
 * dl_order_check_kernel - did kernel @kver (DL_KVER()) run the scheme @o
 * models?  0, or -EINVAL with a sentence saying why not (and what would
 * work) in @why (may be NULL): kernel-async is the classic scheme, gone in 6.16;
 * kernel-async-v2 is the 6.16 rework.
 */
int dl_order_check_kernel(enum dl_order o, uint32_t kver, char *why, size_t len)
{
	const struct dl_order_policy *p = &registry[o]->policy;
	char v[16], lo[16], hi[16];

	if (kver >= kver_min(p) && kver <= kver_max(p))
		return 0;
	dl_kver_format(kver, v, sizeof(v));
	dl_kver_format(kver_min(p), lo, sizeof(lo));
	dl_kver_format(kver_max(p), hi, sizeof(hi));
	if (o == DL_ORDER_KERNEL_ASYNC && kver >= DL_KVER_ASYNC_V2)
		snprintf(why, len, "order kernel-async is the classic async suspend/resume, which"
			 " kernels up to 6.15 ran; %s has the 6.16 rework: use --order"
			 " kernel-async-v2, or --kernel %s to %s", v, lo, hi);
	else if (o == DL_ORDER_KERNEL_ASYNC_V2 && kver < DL_KVER_ASYNC_V2)
		snprintf(why, len, "order kernel-async-v2 is the async suspend/resume rework of"
			 " 6.16, which %s does not have: use --order kernel-async, or --kernel"
			 " %s to %s", v, lo, hi);
	else
		snprintf(why, len, "order %s models kernels %s to %s, not %s", registry[o]->name,
			 lo, hi, v);
	return -EINVAL;
}

/* dl_order_kernels - "6.12-6.15 (default 6.12)": the versions @o models, for `dlsim orders`. */
void dl_order_kernels(enum dl_order o, char *buf, size_t len)
{
	const struct dl_order_policy *p = &registry[o]->policy;
	char lo[16], hi[16], d[16];

	dl_kver_format(kver_min(p), lo, sizeof(lo));
	dl_kver_format(kver_max(p), hi, sizeof(hi));
	dl_kver_format(dl_order_default_kernel(o), d, sizeof(d));
	snprintf(buf, len, "%s-%s (default %s)", lo, hi, d);
}

struct dl_phase_scheme dl_order_scheme(enum dl_order o, unsigned kind, unsigned phase)
{
	const struct dl_order_policy *p = &registry[o]->policy;
	bool pm = kind == DL_PK_SUSPEND || kind == DL_PK_RESUME;
	struct dl_phase_scheme s = { .kind = (uint8_t)kind, .link_aware = p->link_aware };

	s.serial = pm && (phase == DL_PH_PREPARE || phase == DL_PH_COMPLETE);
	s.main_only = !p->link_aware || s.serial;
	s.blocking = pm && !s.serial && p->link_aware && (p->queue_up_front || p->v2_walk);
	s.classic = p->queue_up_front;
	s.v2 = s.blocking && p->v2_walk;
	s.queue_when_ready = !p->queue_up_front && !s.blocking;
	s.barrier = p->level_barrier && !s.serial;
	s.by_priority = p->critical_first && !s.serial;
	s.handoff = pm && !s.serial && p->link_aware && !p->queue_up_front &&
		    (p->use_async_flag || p->all_async);
	s.main_waits_only = p->all_async && !s.serial;
	return s;
}

unsigned dl_order_probe_kind(enum dl_order o)
{
	return registry[o]->policy.probe_deferral ? DL_PK_PROBE_DEFER : DL_PK_PROBE;
}

/* dl_order_native_names - "sync, kernel-async (6.12-6.15), ...": the orders some kernel runs. */
void dl_order_native_names(char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (int i = 0; i < DL_ORDER_COUNT && at < len; i++) {
		const struct dl_order_policy *p = &registry[i]->policy;
		char lo[16], hi[16];
		int n;

		if (!p->kernel_native)
			continue;
		dl_kver_format(kver_min(p), lo, sizeof(lo));
		dl_kver_format(kver_max(p), hi, sizeof(hi));
		n = snprintf(buf + at, len - at, "%s%s (%s-%s)", at ? ", " : "", registry[i]->name,
			     lo, hi);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}
