/* seqops.c - script ops run one at a time on the main thread (see seqops.h). */
#include <errno.h>

#include "sim/engine/seqops.h"

/* One probe attempt: check suppliers, then the driver's probe. */
void dl_seq_probe_one(struct dl_seq *q, uint32_t d)
{
	int err;

	if (q->core->dev[d].state != DL_DEV_NO_DRIVER || !q->core->dev[d].registered)
		return;
	q->opr->probe_attempts++;
	if (dl_probe_begin(q->core, d, q->ignore_links) != 0) {
		q->opr->probe_defers++;
		q->emit(q->ctx, DL_EV_PROBE_DEFER, d, 0, -DL_EPROBE_DEFER);
		q->take_time(q->ctx, q->defer_ns);
		return;
	}
	q->emit(q->ctx, DL_EV_PROBE_START, d, 0, 0);
	q->take_time(q->ctx, q->sample(q->ctx, d, DL_LAT_PROBE));
	err = q->fault(q->ctx, d, DL_LAT_PROBE);
	dl_probe_end(q->core, d, err);
	q->emit(q->ctx, DL_EV_PROBE_END, d, 0, err);
}

/* The deferred-probe work: retry the active list until it is empty. */
void dl_seq_deferred(struct dl_seq *q)
{
	uint32_t d;

	while ((d = dl_deferred_next(q->core)) != DL_NONE)
		dl_seq_probe_one(q, d);
}

/* __device_release_driver() with the consumer cascade, time passing in remove(). */
static void seq_unbind(struct dl_seq *q, uint32_t d)
{
	dl_dev_t x = DL_NONE;

	if (q->core->dev[d].state != DL_DEV_DRIVER_BOUND)
		return;
	while (dl_links_busy(q->core, d)) {
		while ((x = dl_links_unbind_next(q->core, d)) != DL_NONE) {
			if (x == DL_UNBIND_WAIT_PROBE)
				break;   /* nothing probes during a sequential op */
			seq_unbind(q, x);
		}
		if (x == DL_UNBIND_WAIT_PROBE)
			break;
	}
	q->emit(q->ctx, DL_EV_UNBIND_START, d, 0, 0);
	q->take_time(q->ctx, q->sample(q->ctx, d, DL_LAT_REMOVE));
	q->emit(q->ctx, DL_EV_UNBIND_END, d, 0, 0);
	dl_driver_cleanup(q->core, d);
}

/* device_del(): children first, then the driver, then the links. */
static void seq_remove(struct dl_seq *q, uint32_t d)
{
	const struct dl_device *x = &q->core->dev[d];

	if (!x->registered)
		return;
	while (x->children.n)
		seq_remove(q, x->children.v[x->children.n - 1]);
	seq_unbind(q, d);
	dl_device_del(q->core, d);
}

static void rpm_events(struct dl_seq *q, struct dl_idvec *v, unsigned kind, unsigned key)
{
	for (uint32_t i = 0; i < v->n; i++) {
		q->take_time(q->ctx, q->sample(q->ctx, v->v[i], key));
		q->emit(q->ctx, kind, v->v[i], 0, 0);
	}
	v->n = 0;
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
		if (q->core->dev[op->dev].registered)
			break;
		err = dl_device_register(q->core, op->dev);
		if (err)
			break;
		dl_engine_add_listed_links(q->core, q->sc, op->dev);
		dl_seq_probe_one(q, op->dev);
		dl_seq_deferred(q);
		break;
	case DL_OP_LINK_ADD:
		dl_link_add(q->core, op->dev, op->dev2, op->flags, NULL);
		break;
	case DL_OP_LINK_DEL: {
		dl_link_t l = dl_link_find(q->core, op->dev, op->dev2);

		err = l == DL_NONE ? -ENOENT : dl_link_del(q->core, l);
		break;
	}
	case DL_OP_RPM_GET:
		if (dl_rpm_get(q->core, op->dev, &v) == 0)
			rpm_events(q, &v, DL_EV_RPM_RESUME, DL_LAT_RPM_RESUME);
		break;
	case DL_OP_RPM_PUT:
		if (dl_rpm_put(q->core, op->dev, &v) == 0)
			rpm_events(q, &v, DL_EV_RPM_SUSPEND, DL_LAT_RPM_SUSPEND);
		break;
	}
	dl_idvec_free(&v);
	if (err)
		q->opr->err = err;
	return 0;
}
