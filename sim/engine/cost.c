/* cost.c - the engines' cost model (cost.h) and the run bookkeeping both backends share (run.h). */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "sim/core/dl_core.h"
#include "sim/core/dl_sat.h"
#include "sim/engine/bound.h"
#include "sim/engine/cost.h"
#include "sim/engine/engine.h"
#include "sim/engine/run.h"

/* A "cost" field the scenario left unset is negative. */
static int64_t cost_or(int64_t v, int64_t def)
{
	return v >= 0 ? v : def;
}

void dl_costs_resolve(const struct dl_scenario *sc, struct dl_costs *c)
{
	c->main_ns = cost_or(sc->cost.main_ns, DL_COST_MAIN_NS);
	c->queue_ns = cost_or(sc->cost.queue_ns, DL_COST_QUEUE_NS);
	c->wake_ns = cost_or(sc->cost.wake_ns, DL_COST_WAKE_NS);
	c->resume_wake_ns = cost_or(sc->cost.resume_wake_ns, c->wake_ns);
	c->switch_ns = cost_or(sc->cost.switch_ns, DL_COST_SWITCH_NS);
	c->check_ns = cost_or(sc->cost.probe_check_ns, DL_COST_PROBE_CHECK_NS);
	c->handoff_ns = cost_or(sc->cost.handoff_ns, DL_COST_HANDOFF_NS);
	c->reorder_ns = cost_or(sc->cost.reorder_ns, DL_COST_REORDER_NS);
	c->reorder_visit_ns = cost_or(sc->cost.reorder_visit_ns, DL_COST_REORDER_VISIT_NS);
	c->rpm_ns = cost_or(sc->cost.rpm_ns, DL_COST_RPM_NS);
	c->rpm_idle_ns = cost_or(sc->cost.rpm_idle_ns, DL_COST_RPM_IDLE_NS);
	c->register_ns = cost_or(sc->cost.register_ns, DL_COST_REGISTER_NS);
	c->link_add_ns = cost_or(sc->cost.link_add_ns, DL_COST_LINK_ADD_NS);
	c->sleep_end_ns = cost_or(sc->cost.sleep_end_ns, 0);
	c->max_active = sc->cost.max_active ? sc->cost.max_active : DL_COST_MAX_ACTIVE;
}

int dl_faults_init(struct dl_faults *f, const struct dl_scenario *sc)
{
	f->sc = sc;
	f->has = calloc(sc->ndev + 1, 1);
	f->used = calloc(sc->nfault + 1, sizeof(*f->used));
	if (!f->has || !f->used) {
		dl_faults_fini(f);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < sc->nfault; i++)
		if (sc->fault[i].dev < sc->ndev)
			f->has[sc->fault[i].dev] = 1;
	return 0;
}

void dl_faults_fini(struct dl_faults *f)
{
	free(f->has);
	free(f->used);
	f->has = NULL;
	f->used = NULL;
}

int dl_faults_take(struct dl_faults *f, uint32_t d, unsigned key)
{
	if (!f->has[d])
		return 0;
	for (uint32_t i = 0; i < f->sc->nfault; i++) {
		const struct dl_sc_fault *x = &f->sc->fault[i];

		if (x->dev != d || x->lat_key != key)
			continue;
		if (x->times && f->used[i] >= x->times)
			continue;
		f->used[i]++;
		return -x->err;
	}
	return 0;
}

int64_t dl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint32_t dl_engine_workers(const struct dl_scenario *sc, enum dl_order order, uint32_t requested)
{
	uint32_t k = requested ? requested :
		     sc->cost.cpus ? sc->cost.cpus : dl_order_policy(order)->default_workers;

	return k ? k : 1;
}

void dl_op_add_phase(struct dl_op_result *opr, int64_t makespan, const struct dl_bound *b,
		     int64_t main_bound)
{
	opr->makespan_ns += makespan;
	opr->lower_bound_ns += b->lower_bound_ns;
	opr->critical_path_ns += b->critical_path_ns;
	opr->work_ns += b->work_ns;
	if (main_bound >= 0) {
		opr->main_bound_ns += main_bound;
		opr->order_bound_ns += b->lower_bound_ns > main_bound ? b->lower_bound_ns : main_bound;
	}
}

/* Serial time of an op outside its phases: in its makespan and every bound. */
void dl_op_add_serial(struct dl_op_result *opr, int64_t ns)
{
	opr->makespan_ns = dl_sat_add_i64(opr->makespan_ns, ns);
	opr->lower_bound_ns = dl_sat_add_i64(opr->lower_bound_ns, ns);
	opr->critical_path_ns = dl_sat_add_i64(opr->critical_path_ns, ns);
	opr->main_bound_ns = dl_sat_add_i64(opr->main_bound_ns, ns);
	opr->order_bound_ns = dl_sat_add_i64(opr->order_bound_ns, ns);
}

void dl_run_account_op(struct dl_run_result *r, const struct dl_op_result *op, bool overlaps)
{
	if (!overlaps)
		r->makespan_ns += op->makespan_ns;
	r->lower_bound_ns += op->lower_bound_ns;
	r->critical_path_ns += op->critical_path_ns;
	r->work_ns += op->work_ns;
	r->main_bound_ns += op->main_bound_ns;
	r->order_bound_ns += op->order_bound_ns;
	r->blocked_ns += op->blocked_ns;
	r->probe_attempts += op->probe_attempts;
	r->probe_defers += op->probe_defers;
	r->sync_fallbacks += op->sync_fallbacks;
	r->reorder_walks += op->reorder_walks;
	r->reorder_calls = dl_sat_add_u64(r->reorder_calls, op->reorder_calls);
	r->reorder_capped += op->reorder_capped;
	r->reorder_ns = dl_sat_add_i64(r->reorder_ns, op->reorder_ns);
	if (op->peak_workers > r->peak_workers)
		r->peak_workers = op->peak_workers;
	if (op->err && op->fail_dev != DL_NONE && r->fail_dev == DL_NONE) {
		r->err = op->err;
		r->fail_dev = op->fail_dev;
	}
}

int dl_run_finish(struct dl_run_result *r, int64_t wall0, int err, bool failed)
{
	r->wall_ns = dl_mono_ns() - wall0;
	if (err == -EINTR)
		r->status = "interrupted";
	else if (err)
		r->status = "failed";   /* SPEC.md: a run that stopped on an engine error failed */
	else
		r->status = failed ? "failed" : "ok";
	return err ? err : failed;
}
