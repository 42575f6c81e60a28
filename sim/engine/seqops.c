/* seqops.c - script ops run one at a time on the main thread (see seqops.h). */
#include <errno.h>

#include "sim/core/dl_sat.h"
#include "sim/engine/cost.h"
#include "sim/engine/seqops.h"

/* The threads engine's locks (seqops.h); no-ops in DES. */
static void seq_lock(struct dl_seq *q)
{
	if (q->lock)
		q->lock(q->ctx);
}

static void seq_unlock(struct dl_seq *q)
{
	if (q->unlock)
		q->unlock(q->ctx);
}

static void seq_dev_lock(struct dl_seq *q, uint32_t d)
{
	if (q->dev_lock)
		q->dev_lock(q->ctx, d);
}

static void seq_dev_unlock(struct dl_seq *q, uint32_t d)
{
	if (q->dev_unlock)
		q->dev_unlock(q->ctx, d);
}

/*
 * Spend latency @lat of device @d: its CPU part, then (with q->sleep) the
 * rest asleep; without, all of it, and sleep_end_ns if part of it sleeps.
 */
static void seq_spend(struct dl_seq *q, uint32_t d, int64_t lat)
{
	int64_t cpu = dl_cost_cpu_part(lat, q->sc->prof[q->sc->dev[d].profile].cpu_ppm);

	if (q->sleep) {
		q->take_time(q->ctx, cpu);
		if (lat > cpu)
			q->sleep(q->ctx, lat - cpu);
	} else {
		q->take_time(q->ctx, lat > cpu ? dl_sat_add_i64(lat, q->sleep_end_ns) : lat);
	}
}

/*
 * A probe attempt's runtime resumes (module context, dl_probe_rpm_get()), on
 * the prober's path: each rpm_ns and its rpm_resume latency.  Called with
 * the core locked; returns with it locked.
 */
static void seq_rpm_get(struct dl_seq *q, uint32_t d)
{
	struct dl_idvec v = { 0 };

	if (!dl_probe_rpm_get(q->core, d, &v))
		return;
	for (uint32_t i = 0; i < v.n; i++)
		q->emit(q->ctx, DL_EV_RPM_RESUME, v.v[i], 0, 0);
	seq_unlock(q);
	for (uint32_t i = 0; i < v.n; i++) {
		q->take_time(q->ctx, q->rpm_ns);
		seq_spend(q, v.v[i], q->sample(q->ctx, v.v[i], DL_LAT_RPM_RESUME));
	}
	dl_idvec_free(&v);
	seq_lock(q);
}

/*
 * And its puts (dl_probe_rpm_put()): the suspends they lead to run on
 * pm_wq, here at once, as a sequential op has nothing to overlap them
 * with.  Their CPU is in rpm_ns; pm_wq's kworker, when it suspends
 * anything, costs the prober its wake and the switch back, wake_ns
 * (cost.h).  Called with the core locked; returns with it locked.
 */
static void seq_rpm_put(struct dl_seq *q, uint32_t d)
{
	struct dl_idvec idle = { 0 }, v = { 0 };

	dl_probe_rpm_put(q->core, d, &idle);
	for (uint32_t i = 0; i < idle.n; i++)
		dl_rpm_idle(q->core, idle.v[i], &v);
	for (uint32_t i = 0; i < v.n; i++)
		q->emit(q->ctx, DL_EV_RPM_SUSPEND, v.v[i], 0, 0);
	if (v.n) {
		seq_unlock(q);
		q->take_time(q->ctx, q->pmwq_wake_ns);
		seq_lock(q);
	}
	dl_idvec_free(&idle);
	dl_idvec_free(&v);
}

/* One probe attempt: check suppliers, then the driver's probe (device_lock held). */
void dl_seq_probe_one(struct dl_seq *q, uint32_t d)
{
	bool blocked;
	uint32_t trig;
	int err;

	seq_dev_lock(q, d);
	seq_lock(q);
	if (q->core->dev[d].state != DL_DEV_NO_DRIVER || !q->core->dev[d].registered) {
		seq_unlock(q);
		seq_dev_unlock(q, d);
		return;
	}
	q->opr->probe_attempts++;
	trig = dl_deferred_trigger_count(q->core);
	if (q->core->rpm_user)
		seq_rpm_get(q, d);
	blocked = q->probe_blocked && q->probe_blocked(q->ctx);
	if (blocked || dl_probe_check(q->core, d, q->ignore_links) != 0) {
		q->opr->probe_defers++;
		q->emit(q->ctx, DL_EV_PROBE_DEFER, d, 0, -DL_EPROBE_DEFER);
		if (q->core->rpm_user)
			seq_rpm_put(q, d);
		seq_unlock(q);
		q->take_time(q->ctx, q->defer_ns);
		/*
		 * driver_probe_device(): on the deferred list once the attempt has
		 * returned; under defer_all_probes (really_probe(), until
		 * dpm_complete()) without the re-trigger
		 */
		seq_lock(q);
		if (blocked)
			dl_deferred_add(q->core, d);
		else
			dl_probe_deferred(q->core, d, trig);
		seq_unlock(q);
		seq_dev_unlock(q, d);
		return;
	}
	q->emit(q->ctx, DL_EV_PROBE_START, d, 0, 0);
	seq_unlock(q);
	seq_spend(q, d, q->sample(q->ctx, d, DL_LAT_PROBE));
	err = q->fault(q->ctx, d, DL_LAT_PROBE);
	seq_lock(q);
	dl_probe_end(q->core, d, err);
	q->emit(q->ctx, DL_EV_PROBE_END, d, 0, err);
	if (q->core->rpm_user)
		seq_rpm_put(q, d);
	seq_unlock(q);
	seq_dev_unlock(q, d);
}

/* The deferred-probe work: retry the active list until it is empty. */
void dl_seq_deferred(struct dl_seq *q)
{
	for (;;) {
		uint32_t d;

		seq_lock(q);
		d = dl_deferred_next(q->core);
		seq_unlock(q);
		if (d == DL_NONE)
			break;
		dl_seq_probe_one(q, d);
	}
}

/* __device_release_driver() with the consumer cascade, time passing in remove(). */
static void seq_unbind(struct dl_seq *q, uint32_t d)
{
	dl_dev_t x = DL_NONE;

	seq_dev_lock(q, d);
	seq_lock(q);
	if (q->core->dev[d].state != DL_DEV_DRIVER_BOUND) {
		seq_unlock(q);
		seq_dev_unlock(q, d);
		return;
	}
	while (dl_links_busy(q->core, d)) {
		while ((x = dl_links_unbind_next(q->core, d)) != DL_NONE) {
			if (x == DL_UNBIND_WAIT_PROBE)
				break;
			seq_unlock(q);
			seq_unbind(q, x);
			seq_lock(q);
		}
		if (x == DL_UNBIND_WAIT_PROBE) {
			if (!q->wait_probe)
				break;   /* nothing probes during a sequential op */
			q->wait_probe(q->ctx);
		}
	}
	q->emit(q->ctx, DL_EV_UNBIND_START, d, 0, 0);
	seq_unlock(q);
	q->take_time(q->ctx, q->sample(q->ctx, d, DL_LAT_REMOVE));
	seq_lock(q);
	q->emit(q->ctx, DL_EV_UNBIND_END, d, 0, 0);
	dl_driver_cleanup(q->core, d);
	seq_unlock(q);
	seq_dev_unlock(q, d);
}

/* device_del(): children first, then the driver, then the links. */
static void seq_remove(struct dl_seq *q, uint32_t d)
{
	const struct dl_device *x = &q->core->dev[d];

	seq_dev_lock(q, d);
	seq_lock(q);
	if (!x->registered) {
		seq_unlock(q);
		seq_dev_unlock(q, d);
		return;
	}
	while (x->children.n) {
		uint32_t ch = x->children.v[x->children.n - 1];

		seq_unlock(q);
		seq_remove(q, ch);
		seq_lock(q);
	}
	seq_unlock(q);
	seq_unbind(q, d);
	seq_lock(q);
	dl_device_del(q->core, d);
	seq_unlock(q);
	seq_dev_unlock(q, d);
}

static void rpm_events(struct dl_seq *q, struct dl_idvec *v, unsigned kind, unsigned key)
{
	for (uint32_t i = 0; i < v->n; i++) {
		q->take_time(q->ctx, q->sample(q->ctx, v->v[i], key));
		seq_lock(q);
		q->emit(q->ctx, kind, v->v[i], 0, 0);
		seq_unlock(q);
	}
	v->n = 0;
}

/* device_add() of a hot-plugged device: register, fw_devlink's links, probe. */
static int seq_add(struct dl_seq *q, uint32_t d)
{
	int err = -EEXIST;

	seq_lock(q);
	if (!q->core->dev[d].registered) {
		err = dl_device_register(q->core, d);
		if (!err)
			dl_engine_add_listed_links(q->core, q->sc, d);
	}
	seq_unlock(q);
	if (err)
		return err == -EEXIST ? 0 : err;   /* adding a registered device: no-op */
	dl_seq_probe_one(q, d);
	dl_seq_deferred(q);
	return 0;
}

/**
 * dl_seq_op - run one of the ops that are not probe, suspend or resume.  An
 * op the core refuses (say device_link_del() of a managed link) is recorded
 * in opr->err as the kernel would WARN, and the script goes on.
 */
int dl_seq_op(struct dl_seq *q, const struct dl_sc_op *op)
{
	struct dl_idvec v = { 0 };
	int err = 0;

	switch (op->kind) {
	case DL_OP_UNBIND:
		seq_unbind(q, op->dev);
		break;
	case DL_OP_BIND:
		dl_seq_probe_one(q, op->dev);
		dl_seq_deferred(q);
		break;
	case DL_OP_REMOVE:
		seq_remove(q, op->dev);
		break;
	case DL_OP_ADD:
		err = seq_add(q, op->dev);
		break;
	case DL_OP_LINK_ADD:
		seq_lock(q);
		dl_link_add(q->core, op->dev, op->dev2, op->flags, NULL);
		seq_unlock(q);
		break;
	case DL_OP_LINK_DEL: {
		dl_link_t l;

		seq_lock(q);
		l = dl_link_find(q->core, op->dev, op->dev2);
		err = l == DL_NONE ? -ENOENT : dl_link_del(q->core, l);
		seq_unlock(q);
		break;
	}
	case DL_OP_RPM_GET:
		seq_lock(q);
		err = dl_rpm_get(q->core, op->dev, &v);
		seq_unlock(q);
		if (err == 0)
			rpm_events(q, &v, DL_EV_RPM_RESUME, DL_LAT_RPM_RESUME);
		err = 0;
		break;
	case DL_OP_RPM_PUT:
		seq_lock(q);
		err = dl_rpm_put(q->core, op->dev, &v);
		seq_unlock(q);
		if (err == 0)
			rpm_events(q, &v, DL_EV_RPM_SUSPEND, DL_LAT_RPM_SUSPEND);
		err = 0;
		break;
	}
	dl_idvec_free(&v);
	if (err)
		q->opr->err = err;
	return 0;
}
