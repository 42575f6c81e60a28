/*
 * oploop.c - what both backends do with a scenario's script, written once
 * (oploop.h): start a run (the core, the kernel whose rules apply, the
 * devices), the op loop, the probe op's device_add()s and fw_devlink links,
 * suspend -> rollback -> resume.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/core/dl_core.h"
#include "sim/core/dl_sat.h"
#include "sim/engine/cost.h"
#include "sim/engine/engine.h"
#include "sim/engine/oploop.h"
#include "sim/engine/run.h"

/* The core's stop poll: the engine's Ctrl-C flag (dl_engine_opts.stop). */
static bool stop_flag_set(void *ctx)
{
	return atomic_load_explicit((atomic_int *)ctx, memory_order_relaxed) != 0;
}

/**
 * dl_run_start - begin run @r of @sc under @o on core @c: @r zeroed, the
 * figures known up front set (K, devices, links, the kernel whose rules
 * apply), @c made for the scenario and set to that kernel.  Returns 0 or a
 * negative errno (-EINVAL: a pair of order and kernel that no kernel ran;
 * the CLI says why).  @c is to be finished (dl_core_fini()) either way.
 */
int dl_run_start(struct dl_run_result *r, struct dl_core *c, const struct dl_scenario *sc,
		 const struct dl_engine_opts *o)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->workers = dl_engine_workers(sc, o->order, o->workers);
	r->devices = sc->ndev;
	r->links = sc->nlink;
	r->fail_dev = DL_NONE;
	err = dl_core_init(c, sc->ndev + 1, sc->nlink + 1);
	if (!err && o->stop)
		dl_core_set_stop(c, stop_flag_set, o->stop);   /* heard in registration and walks */
	r->kernel = dl_order_kernel(o->order, o->kernel);
	if (!err && dl_order_check_kernel(o->order, r->kernel, NULL, 0))
		err = -EINVAL;
	if (!err)
		err = dl_core_set_kernel(c, r->kernel);
	if (!err && o->probe_module) {
		/*
		 * As the kernel mode's module: drivers enable runtime PM in probe,
		 * and every probe attempt takes its suppliers and parent first
		 * (dl_probe_rpm_get()).  The boot model leaves that out.
		 */
		uint8_t *u = dl_sc_runtime_pm_users(sc);

		err = u ? dl_core_set_rpm_users(c, u, sc->ndev) : -ENOMEM;
		free(u);
	}
	return err;
}

/**
 * dl_run_devices - create @sc's devices in @c (unregistered: the probe op
 * registers them) and size the core's vectors for them and the listed
 * links.  The core's sink is to be set first: creating a device may emit.
 */
int dl_run_devices(struct dl_core *c, const struct dl_scenario *sc)
{
	int err = 0;

	for (uint32_t i = 0; i < sc->ndev && !err; i++) {
		dl_dev_t id;

		err = dl_device_new(c, sc->dev[i].parent, sc->dev[i].async, &id);
	}
	return err ? err : dl_engine_presize(c, sc);
}

/*
 * Registration and link adds hear Ctrl-C: the flag is polled every
 * STOP_EVERY devices or links (a link add's walk polls on its own, see
 * dl_core_set_stop()); then the loop ends and the op returns -EINTR.
 */
#define STOP_EVERY 256u

static bool stop_due(struct dl_core *c, uint32_t i)
{
	return (i % STOP_EVERY == 0 || c->stopped) && dl_core_poll_stop(c);
}

/* Add one listed link as fw_devlink would (see dl_engine_add_listed_links()). */
static void add_listed_link(struct dl_core *c, const struct dl_sc_link *l)
{
	if (l->flags & DL_FLAG_CYCLE) {
		/*
		 * fw_devlink_get_flags(): a link found on a cycle is created
		 * INFERRED|SYNC_STATE_ONLY|CYCLE, so it neither closes a
		 * cycle nor blocks probe or PM ordering.
		 */
		dl_link_t id;

		if (dl_link_add(c, l->consumer, l->supplier,
				DL_FLAG_INFERRED | DL_FLAG_SYNC_STATE_ONLY, &id) == 0)
			dl_link_mark_cycle(c, id);
		return;
	}
	dl_link_add(c, l->consumer, l->supplier, l->flags, NULL);
}

/**
 * dl_engine_add_listed_links - add the scenario's links (all, or those of
 * device @only whose other end is registered), as fw_devlink would.
 */
void dl_engine_add_listed_links(struct dl_core *c, const struct dl_scenario *sc, uint32_t only)
{
	for (uint32_t i = 0; i < sc->nlink; i++) {
		const struct dl_sc_link *l = &sc->link[i];

		if (only != DL_NONE && l->consumer != only && l->supplier != only)
			continue;
		if (only != DL_NONE && (!c->dev[l->consumer].registered ||
					!c->dev[l->supplier].registered))
			continue;
		add_listed_link(c, l);
	}
}

/**
 * dl_engine_register_listed - the probe op's device_add()s: register, in
 * listed order, every device that is not hot-plugged and whose parent is
 * registered, each followed by its listed links to suppliers listed before
 * it (fw_devlink_link_device() in device_add(): the consumer is then the
 * tail of dpm_list, so the link's reorder moves nothing); then every other
 * listed link with both ends registered, in listed order (those whose
 * supplier registers after the consumer, which the kernel makes at the
 * supplier's device_add(), and those of devices registered before, added
 * again as every probe op does).  Making the backward ones at once as the
 * kernel does costs a walk of the consumer's set per link here (the list is
 * kept topological): 111 s instead of 2 s for sync at 40k devices of
 * default.json.  Returns 0, -ENOMEM, or -EINTR when the run is to stop.
 */
int dl_engine_register_listed(struct dl_core *c, const struct dl_scenario *sc)
{
	uint32_t n = c->ndev < sc->ndev ? c->ndev : sc->ndev, m = sc->nlink;
	uint32_t *off = calloc((size_t)n + 2, sizeof(*off));
	uint32_t *idx = malloc(((size_t)m + 1) * sizeof(*idx));
	uint8_t *done = calloc((size_t)m + 1, 1);

	if (!off || !idx || !done) {
		free(off);
		free(idx);
		free(done);
		return -ENOMEM;
	}
	/* the links to earlier-listed suppliers by consumer, in listed order */
	for (uint32_t i = 0; i < m; i++) {
		const struct dl_sc_link *l = &sc->link[i];

		if (l->consumer < n && l->supplier < l->consumer)
			off[l->consumer + 2]++;
	}
	for (uint32_t d = 0; d < n; d++)
		off[d + 2] += off[d + 1];
	for (uint32_t i = 0; i < m; i++) {
		const struct dl_sc_link *l = &sc->link[i];

		if (l->consumer < n && l->supplier < l->consumer)
			idx[off[l->consumer + 1]++] = i;
	}
	for (uint32_t d = 0; d < n && !stop_due(c, d); d++) {
		if (sc->dev[d].hotplug || c->dev[d].registered ||
		    (sc->dev[d].parent != DL_NONE && !c->dev[sc->dev[d].parent].registered))
			continue;
		if (dl_device_register(c, d))
			continue;
		for (uint32_t j = off[d]; j < off[d + 1]; j++) {
			const struct dl_sc_link *l = &sc->link[idx[j]];

			if (c->dev[l->consumer].registered && c->dev[l->supplier].registered) {
				add_listed_link(c, l);
				done[idx[j]] = 1;
			}
		}
	}
	for (uint32_t i = 0; i < m && !stop_due(c, i); i++) {
		const struct dl_sc_link *l = &sc->link[i];

		if (!done[i] && l->consumer < n && l->supplier < n &&
		    c->dev[l->consumer].registered && c->dev[l->supplier].registered)
			add_listed_link(c, l);
	}
	free(off);
	free(idx);
	free(done);
	return c->stopped ? -EINTR : 0;
}

/**
 * dl_engine_presize - size the core's vectors for the scenario's devices and
 * listed links (dl_core_presize()), once its devices are created.
 */
int dl_engine_presize(struct dl_core *c, const struct dl_scenario *sc)
{
	uint32_t n = c->ndev, *cnt = calloc(3 * (size_t)n + 1, sizeof(*cnt));
	int err;

	if (!cnt)
		return -ENOMEM;
	for (uint32_t i = 0; i < sc->nlink; i++) {
		if (sc->link[i].consumer < n && sc->link[i].supplier < n) {
			cnt[sc->link[i].consumer]++;
			cnt[n + sc->link[i].supplier]++;
		}
	}
	for (uint32_t i = 0; i < sc->ndev && i < n; i++)
		if (sc->dev[i].parent < n)
			cnt[2 * (size_t)n + sc->dev[i].parent]++;
	err = dl_core_presize(c, cnt, cnt + n, cnt + 2 * (size_t)n);
	free(cnt);
	return err;
}

/**
 * dl_engine_register_module - the probe op's device_add()s as `--mode
 * kernel`'s module makes them (sim/kernel/dlsim_kmod.c, "register" then
 * "link" per listed link): every device that dl_engine_register_listed()
 * would register, in listed order, then every listed link with both ends
 * registered, in listed order, each reordering its consumer's set as
 * device_link_add() does.  With @spend, each takes its time (cost.h:
 * register_ns a device; link_add_ns a link, and the reorder walk of its
 * consumer, reorder_ns + reorder_visit_ns a call, unless SYNC_STATE_ONLY).
 * Returns 0, -ENOMEM, or -EINTR when the run is to stop.
 */
int dl_engine_register_module(struct dl_core *c, const struct dl_scenario *sc,
			      void (*spend)(void *ctx, int64_t ns), void *ctx)
{
	uint32_t n = c->ndev < sc->ndev ? c->ndev : sc->ndev;
	struct dl_costs cost;

	dl_costs_resolve(sc, &cost);
	for (uint32_t d = 0; d < n && !stop_due(c, d); d++) {
		if (sc->dev[d].hotplug || c->dev[d].registered ||
		    (sc->dev[d].parent != DL_NONE && !c->dev[sc->dev[d].parent].registered))
			continue;
		if (dl_device_register(c, d) == -ENOMEM)
			return -ENOMEM;
		if (spend)
			spend(ctx, cost.register_ns);
	}
	for (uint32_t i = 0; i < sc->nlink && !stop_due(c, i); i++) {
		const struct dl_sc_link *l = &sc->link[i];
		uint32_t nl = c->nlink;
		int64_t ns = cost.link_add_ns;

		if (!(l->consumer < n && l->supplier < n &&
		      c->dev[l->consumer].registered && c->dev[l->supplier].registered))
			continue;
		add_listed_link(c, l);
		if (!spend)
			continue;
		/* device_link_add(): a new link other than SYNC_STATE_ONLY reorders its consumer */
		if (c->nlink > nl && !dl_link_is_sync_state_only(c->link[c->nlink - 1].flags))
			ns = dl_sat_add_i64(ns, dl_cost_reorder(&cost, dl_reorder_visits(c, l->consumer)));
		spend(ctx, ns);
	}
	return c->stopped ? -EINTR : 0;
}

/* ---- the op loop ---- */

/*
 * The CPU time used so far, in ns: the calling thread's, or the whole
 * process's when backend @b works on threads of its own (cpu_process).
 * Read at op and phase boundaries only, never inside a phase.
 */
static int64_t cpu_now(const struct dl_backend_ops *b)
{
	struct timespec ts;

	if (clock_gettime(b->cpu_process ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * The figures the backend added to the op @opr since @was (dl_op_add_phase())
 * are phase @phase's (a PM phase, or DL_OP_PROBE_PHASE): keep them apart in
 * opr->ph[@phase] too.
 */
static void keep_phase(struct dl_op_result *opr, const struct dl_bound *was, unsigned phase)
{
	opr->ph[phase] = (struct dl_bound){
		dl_sat_sub_i64(opr->critical_path_ns, was->critical_path_ns),
		dl_sat_sub_i64(opr->work_ns, was->work_ns),
		dl_sat_sub_i64(opr->lower_bound_ns, was->lower_bound_ns),
	};
	opr->ph_ran |= (uint16_t)(1u << phase);
}

static struct dl_bound op_figures(const struct dl_op_result *opr)
{
	return (struct dl_bound){ opr->critical_path_ns, opr->work_ns, opr->lower_bound_ns };
}

/* The probe op: the device_add()s and fw_devlink links, then the backend's probe phase. */
static int op_probe(const struct dl_backend_ops *b, void *be, struct dl_core *core,
		    const struct dl_scenario *sc, enum dl_order order, struct dl_op_result *opr)
{
	unsigned pk = dl_order_probe_kind(order);
	bool module = b->module_probe && b->module_probe(be);
	struct dl_bound was;
	int64_t cpu0;
	int err;

	b->lock(be);
	err = module ? dl_engine_register_module(core, sc, b->spend, be) :
		       dl_engine_register_listed(core, sc);
	if (!err && (pk == DL_PK_PROBE || module)) {
		/*
		 * link-aware probing never defers: retries are on from the start;
		 * so they are for a module loaded after boot
		 */
		dl_deferred_enable(core);
		dl_sync_state_resume(core);
	}
	b->unlock(be);
	if (err)
		return err;
	was = op_figures(opr);
	cpu0 = cpu_now(b);
	err = b->probe(be, pk);
	opr->ph_cpu_ns[DL_OP_PROBE_PHASE] = cpu_now(b) - cpu0;
	/*
	 * Registration's working storage, for the PM phases' graphs to reuse.
	 * The phase is over, so no worker reads the core; not under b->lock(),
	 * which in DES makes main the current worker of the moves still pending.
	 */
	dl_core_trim(core);
	keep_phase(opr, &was, DL_OP_PROBE_PHASE);
	return err;
}

/*
 * One PM phase of kind @pk of the op @opr, its figures added to the op's;
 * kept apart too when it is of the op's own kind (not a failed suspend's
 * rollback).
 */
static int pm_phase(const struct dl_backend_ops *b, void *be, struct dl_op_result *opr,
		    unsigned pk, unsigned phase)
{
	const struct dl_bound was = op_figures(opr);
	const int64_t cpu0 = cpu_now(b);
	int err = b->pm_phase(be, pk, phase);

	if ((pk == DL_PK_SUSPEND) == (opr->kind == DL_OP_SUSPEND) && phase < DL_PH_COUNT) {
		opr->ph_cpu_ns[phase] = cpu_now(b) - cpu0;
		keep_phase(opr, &was, phase);
	}
	return err;
}

/* Resume every device that completed suspend phases >= q + 1, q = @top..0. */
static int resume_phases(const struct dl_backend_ops *b, void *be, struct dl_op_result *opr,
			 int top)
{
	int err = 0;

	for (int q = top; q >= 0 && !err; q--)
		err = pm_phase(b, be, opr, DL_PK_RESUME, DL_PH_COMPLETE - (unsigned)q);
	return err;
}

/*
 * The suspend op: dpm_prepare() .. dpm_suspend_noirq(); when a callback
 * fails, every device suspended so far is resumed, in order, and the op
 * fails (1), as the kernel reports it.
 */
static int op_suspend(const struct dl_backend_ops *b, void *be, struct dl_op_result *opr)
{
	if (b->probing)
		b->probing(be, true);
	for (unsigned ph = DL_PH_PREPARE; ph <= DL_PH_SUSPEND_NOIRQ; ph++) {
		int err = pm_phase(b, be, opr, DL_PK_SUSPEND, ph);

		if (err)
			return err;
		if (b->aborted(be, &opr->err, &opr->fail_dev)) {
			err = resume_phases(b, be, opr, (int)ph);
			if (!err && b->probing)
				b->probing(be, false);   /* dpm_resume_end() */
			return err ? err : 1;
		}
	}
	return 0;
}

static int op_resume(const struct dl_backend_ops *b, void *be, struct dl_op_result *opr)
{
	int err = resume_phases(b, be, opr, DL_PH_SUSPEND_NOIRQ);

	if (!err && b->probing)
		b->probing(be, false);
	return err;
}

int dl_oploop_run(const struct dl_backend_ops *b, void *be, struct dl_core *core,
		  const struct dl_scenario *sc, enum dl_order order, struct dl_run_result *r,
		  bool *failed)
{
	int err = 0;

	*failed = false;
	for (uint32_t i = 0; i < sc->nop && r->nops < DL_MAX_OPS && !err;) {
		const struct dl_sc_op *op = &sc->op[i];
		struct dl_op_result *opr;
		uint32_t end = i + 1;
		int64_t cpu0;

		while (b->races && end < sc->nop && end - i < DL_MAX_OPS - r->nops &&
		       sc->op[end].concurrent)
			end++;
		if (b->stopped && b->stopped(be)) {
			err = -EINTR;
			break;
		}
		cpu0 = cpu_now(b);
		opr = &r->op[r->nops++];
		opr->kind = op->kind;
		opr->start_ns = b->now(be);
		opr->fail_dev = DL_NONE;
		for (uint32_t j = i + 1; j < end; j++) {
			struct dl_op_result *x = &r->op[r->nops++];

			x->kind = sc->op[j].kind;
			x->fail_dev = DL_NONE;
		}
		err = b->op_begin(be, i, end, opr);
		if (err)
			break;
		switch (op->kind) {
		case DL_OP_PROBE:
			err = op_probe(b, be, core, sc, order, opr);
			break;
		case DL_OP_SUSPEND:
			err = op_suspend(b, be, opr);
			break;
		case DL_OP_RESUME:
			err = op_resume(b, be, opr);
			break;
		default:
			err = b->seq(be, op);
			break;
		}
		b->op_end(be, i, end);
		opr->cpu_ns = cpu_now(b) - cpu0;
		if (err == 1) {
			*failed = true;
			err = 0;
		}
		for (uint32_t j = i; j < end; j++) {
			dl_run_account_op(r, &opr[j - i], j > i);
			if (opr[j - i].err && opr[j - i].fail_dev != DL_NONE)
				*failed = true;
		}
		i = end;
	}
	/*
	 * The core applies dpm_list moves when the list is read (dl_dpm_settle()):
	 * apply those still pending, so that the log's dpm_move events leave the
	 * list the kernel has at the end of the run (dlsim check replays it).
	 */
	if (core) {
		b->lock(be);
		dl_dpm_settle(core);
		b->unlock(be);
	}
	return err;
}
