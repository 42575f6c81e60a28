/* twin.c - a logged run read back as the DES run that replays it (twin.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/dl_core.h"
#include "sim/engine/engine.h"
#include "sim/twin/twin.h"

/* The run's events, one at a time, as the rebuilt script sees them. */
struct rebuild {
	struct dl_twin *tw;
	struct dl_error *err;
	uint32_t ndev;
	int64_t *open;           /* per device: its callback's start, -1 none */
	uint32_t *fail_n;        /* per device and key: failed callbacks */
	int32_t *fail_err;       /* per device and key: their error (positive errno) */
	json_t *script, *links;
	int cur;                 /* enum dl_op_kind of the op under way, -1 before the first */
	bool probing, failed;    /* op 0 has probed (links after that are an op); a suspend failed */
	bool rolled;             /* ... and its rollback resumed devices */
	uint32_t next_reg;       /* registration must follow device ids */
	int64_t t0;              /* the op's first event */
};

static int fail(struct dl_error *err, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return ret;
}

static int name_index(const char *s, const char *(*name)(unsigned), unsigned n)
{
	for (unsigned i = 0; s && i < n; i++)
		if (name(i) && !strcmp(s, name(i)))
			return (int)i;
	return -1;
}

/* The latency cell of (op, device, key), the table grown to @op. */
static int64_t *cell(struct rebuild *b, uint32_t d, unsigned key)
{
	struct dl_lat_table *t = &b->tw->lat;
	uint32_t op = t->nop - 1;

	return &t->ns[((size_t)op * t->ndev + d) * DL_LAT_COUNT + key];
}

/* A new op of kind @kind (its device filled in later where it takes one). */
static int op_begin(struct rebuild *b, int kind, int64_t t)
{
	struct dl_lat_table *tab = &b->tw->lat;
	size_t per = (size_t)tab->ndev * DL_LAT_COUNT;
	int64_t *ns;
	json_t *op;

	if (tab->nop >= DL_MAX_OPS)
		return fail(b->err, -EINVAL, "the run has more than %d ops", DL_MAX_OPS);
	ns = realloc(tab->ns, (tab->nop + 1) * per * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	tab->ns = ns;
	for (size_t i = 0; i < per; i++)
		ns[tab->nop * per + i] = -1;
	tab->nop++;
	op = json_pack("{s:s}", "op", dl_op_name((unsigned)kind));
	if (!op || json_array_append_new(b->script, op))
		return -ENOMEM;
	b->cur = kind;
	b->failed = false;
	b->rolled = false;
	b->t0 = t;
	return 0;
}

/* The device the op under way names (unbind: the last to unbind; bind: the first to probe). */
static int op_device(struct rebuild *b, json_t *names, uint32_t d)
{
	json_t *op = json_array_get(b->script, json_array_size(b->script) - 1);

	return json_object_set(op, "device", json_array_get(names, d)) ? -ENOMEM : 0;
}

static int refuse(struct rebuild *b, const char *what, int64_t t)
{
	return fail(b->err, -EINVAL, "the run has %s at t=%" PRId64 " ns, which a twin does not"
		    " rebuild from a log (it rebuilds probe, suspend, resume, unbind and bind)",
		    what, t);
}

static void cb_start(struct rebuild *b, uint32_t d, int64_t t)
{
	b->open[d] = t;
}

/* A callback of key @key of @d ended at @t with @err: its time into the table, a failure counted. */
static void cb_end(struct rebuild *b, uint32_t d, unsigned key, int64_t t, int err)
{
	int64_t *c = cell(b, d, key);

	if (b->open[d] >= 0 && t >= b->open[d] && *c < 0) {
		*c = t - b->open[d];
		b->tw->ncallbacks++;
	}
	b->open[d] = -1;
	/* (a probe callback returning -EPROBE_DEFER is a failure too; the core's own
	 * deferrals run no callback: probe_defer) */
	if (err) {
		b->fail_n[(size_t)d * DL_LAT_COUNT + key]++;
		b->fail_err[(size_t)d * DL_LAT_COUNT + key] = -err;
	}
}

/* A device registered: op 0 (probe) begins with the first; devices in id order, before probing. */
static int on_register(struct rebuild *b, uint32_t d, int64_t t)
{
	int ret = 0;

	if (b->cur < 0)
		ret = op_begin(b, DL_OP_PROBE, t);
	else if (b->cur != DL_OP_PROBE || b->probing)
		return refuse(b, "a device added after probing (op add)", t);
	if (!ret && d != b->next_reg++)
		return fail(b->err, -EINVAL, "device %" PRIu32 " registered out of id order;"
			    " a twin registers devices in id order", d);
	return ret;
}

/* A link added: one of op 0's, before probing started. */
static int on_link_add(struct rebuild *b, uint32_t link, int64_t t)
{
	if (b->cur != DL_OP_PROBE || b->probing)
		return refuse(b, "a link added after probing started (op link_add)", t);
	if (link != DL_NONE && json_array_append_new(b->links, json_integer(link)))
		return -ENOMEM;
	return 0;
}

/* A probe begins or defers: op 0's probing, else a bind op (@d the first to probe). */
static int on_probe(struct rebuild *b, json_t *names, int kind, uint32_t d, int64_t t)
{
	int ret;

	if (b->cur < 0)
		return fail(b->err, -EINVAL, "a probe before any device registered");
	if (b->cur == DL_OP_PROBE) {
		b->probing = true;
	} else if (b->cur != DL_OP_BIND) {
		if ((ret = op_begin(b, DL_OP_BIND, t)) || (ret = op_device(b, names, d)))
			return ret;
	}
	if (kind == DL_EV_PROBE_START)
		cb_start(b, d, t);
	return 0;
}

/* A PM callback begins: a suspend or resume op, or a failed suspend's rollback within it. */
static int on_pm_start(struct rebuild *b, int kind, uint32_t d, int64_t t)
{
	int ret;

	if (kind == DL_EV_SUSPEND_START) {
		/*
		 * a suspend after a failed one and its rollback: the script's resume
		 * between them found nothing suspended and logged nothing, but it
		 * keeps its place (the ops after it sample as the run did)
		 */
		if (b->cur == DL_OP_SUSPEND && b->rolled && (ret = op_begin(b, DL_OP_RESUME, t)))
			return ret;
		if (b->cur != DL_OP_SUSPEND && (ret = op_begin(b, DL_OP_SUSPEND, t)))
			return ret;
	} else if (b->cur == DL_OP_SUSPEND && b->failed) {
		b->rolled = true;	/* a failed suspend's rollback belongs to it */
	} else if (b->cur != DL_OP_RESUME && (ret = op_begin(b, DL_OP_RESUME, t))) {
		return ret;
	}
	cb_start(b, d, t);
	return 0;
}

/* A PM callback ends: its phase's time; a failed suspend callback fails the op. */
static int on_pm_end(struct rebuild *b, int kind, uint32_t d, int phase, int err, int64_t t)
{
	if (phase < 0 || phase >= DL_PH_COUNT)
		return fail(b->err, -EINVAL, "a PM event without a known phase");
	cb_end(b, d, DL_LAT_PREPARE + (unsigned)phase, t, err);
	if (kind == DL_EV_SUSPEND_END && err)
		b->failed = true;
	return 0;
}

/* One event of the run, in seq order. */
static int on_event(struct rebuild *b, json_t *names, int kind, uint32_t d, uint32_t link,
		    int phase, int err, int64_t t)
{
	int ret;

	if (d != DL_NONE && d >= b->ndev && kind != DL_EV_LINK_ADD && kind != DL_EV_LINK_STATE)
		return fail(b->err, -EINVAL, "an event names device %" PRIu32 " of %" PRIu32, d,
			    b->ndev);
	switch (kind) {
	case DL_EV_REGISTER:
		return on_register(b, d, t);
	case DL_EV_LINK_ADD:
		return on_link_add(b, link, t);
	case DL_EV_PROBE_START:
	case DL_EV_PROBE_DEFER:
		return on_probe(b, names, kind, d, t);
	case DL_EV_PROBE_END:
		cb_end(b, d, DL_LAT_PROBE, t, err);
		return 0;
	case DL_EV_UNBIND_START:
		if (b->cur != DL_OP_UNBIND && (ret = op_begin(b, DL_OP_UNBIND, t)))
			return ret;
		cb_start(b, d, t);
		return 0;
	case DL_EV_UNBIND_END:
		cb_end(b, d, DL_LAT_REMOVE, t, err);
		return b->cur == DL_OP_UNBIND ? op_device(b, names, d) : 0;
	case DL_EV_SUSPEND_START:
	case DL_EV_RESUME_START:
		return on_pm_start(b, kind, d, t);
	case DL_EV_SUSPEND_END:
	case DL_EV_RESUME_END:
		return on_pm_end(b, kind, d, phase, err, t);
	default:
		/*
		 * link states and deletions (a SYNC_STATE_ONLY link dropped at bind,
		 * AUTOREMOVE at unbind), runtime PM (around probe attempts, pm_wq
		 * after a resume), dpm moves, work items, retries: the engine redoes
		 * them; the ops that cause them otherwise are refused up front
		 * (refuse_ops())
		 */
		return 0;
	}
}

/*
 * The ops a twin does not rebuild from the events: the run's metrics name
 * each op kind it ran (OP.makespan_ns, dl_log_result.h), so refuse those.
 */
static int refuse_ops(sqlite3 *db, int64_t run, struct dl_error *err)
{
	static const unsigned kinds[] = { DL_OP_ADD, DL_OP_REMOVE, DL_OP_LINK_ADD, DL_OP_LINK_DEL,
					  DL_OP_RPM_GET, DL_OP_RPM_PUT };
	sqlite3_stmt *st;
	int ret = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM metrics WHERE run_id = ? AND name = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return fail(err, -EINVAL, "not a dlsim database: %s", sqlite3_errmsg(db));
	for (size_t i = 0; !ret && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char name[48];

		snprintf(name, sizeof(name), "%s.makespan_ns", dl_op_name(kinds[i]));
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW)
			ret = fail(err, -EINVAL, "the run's script has op %s, which a twin does not"
				   " rebuild from a log (it rebuilds probe, suspend, resume, unbind and"
				   " bind)", dl_op_name(kinds[i]));
	}
	sqlite3_finalize(st);
	return ret;
}

static int read_run_row(sqlite3 *db, int64_t run, struct dl_twin *tw, uint32_t *ndev,
			struct dl_error *err)
{
	sqlite3_stmt *st;
	const char *o, *k, *pc, *name, *mode;
	int ret = 0;

	if (sqlite3_prepare_v2(db, "SELECT scenario, order_name, mode, seed, workers, devices,"
			       " kernel, probe_context, status FROM runs WHERE run_id = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return fail(err, -EINVAL, "not a dlsim database: %s", sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, run);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return fail(err, -ENOENT, "no run %" PRId64, run);
	}
	name = (const char *)sqlite3_column_text(st, 0);
	o = (const char *)sqlite3_column_text(st, 1);
	mode = (const char *)sqlite3_column_text(st, 2);
	k = (const char *)sqlite3_column_text(st, 6);
	pc = (const char *)sqlite3_column_text(st, 7);
	snprintf(tw->name, sizeof(tw->name), "%s", name ? name : "run");
	snprintf(tw->mode, sizeof(tw->mode), "%s", mode ? mode : "?");
	tw->seed = (uint64_t)sqlite3_column_int64(st, 3);
	tw->workers = (uint32_t)sqlite3_column_int64(st, 4);
	*ndev = (uint32_t)sqlite3_column_int64(st, 5);
	tw->probe_module = (pc && !strcmp(pc, "module")) || (mode && !strcmp(mode, "kernel"));
	if (!o || dl_order_parse(o, &tw->order))
		ret = fail(err, -EINVAL, "run %" PRId64 ": unknown order '%s'", run, o ? o : "");
	else if (k && dl_kver_parse(k, &tw->kernel))
		ret = fail(err, -EINVAL, "run %" PRId64 ": unknown kernel '%s'", run, k);
	else if (sqlite3_column_int64(st, 4) < 1 || sqlite3_column_int64(st, 5) < 0 ||
		 sqlite3_column_int64(st, 5) > DL_SC_MAX_DEVICES)
		ret = fail(err, -EINVAL, "run %" PRId64 ": workers or devices out of range", run);
	sqlite3_finalize(st);
	return ret;
}

/* devices[] of the scenario (and their names, by id, into @names). */
static int read_devices(sqlite3 *db, int64_t run, uint32_t ndev, json_t *devs, json_t *names,
			struct dl_error *err)
{
	sqlite3_stmt *st;
	int ret = 0, have_driver = 0;

	for (uint32_t i = 0; i < ndev; i++)
		if (json_array_append_new(names, json_null()))
			return -ENOMEM;
	/* devices.driver is additive: a log written before it has none */
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('devices') WHERE name = 'driver'",
			       -1, &st, NULL) == SQLITE_OK) {
		have_driver = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	if (sqlite3_prepare_v2(db, have_driver ?
			       "SELECT dev_id, name, parent_id, async, driver FROM devices WHERE"
			       " run_id = ? ORDER BY dev_id" :
			       "SELECT dev_id, name, parent_id, async, NULL FROM devices WHERE"
			       " run_id = ? ORDER BY dev_id", -1, &st, NULL) != SQLITE_OK)
		return fail(err, -EINVAL, "not a dlsim database: %s", sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, run);
	while (!ret && sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), par = sqlite3_column_int64(st, 2);
		const char *nm = (const char *)sqlite3_column_text(st, 1);
		json_t *dev;

		if (id < 0 || id >= ndev || !nm || json_array_size(devs) != (size_t)id)
			ret = fail(err, -EINVAL, "devices of the run: id %" PRId64 " out of place", id);
		else if (!(dev = json_pack("{s:s, s:b}", "name", nm, "async",
					   sqlite3_column_int(st, 3))))
			ret = -ENOMEM;
		else if (sqlite3_column_type(st, 2) != SQLITE_NULL &&
			 (par < 0 || par >= id ||
			  json_object_set(dev, "parent", json_array_get(names, (size_t)par))))
			ret = fail(err, -EINVAL, "device %" PRId64 ": parent %" PRId64 " not listed"
				   " before it", id, par);
		else if (json_array_append_new(devs, dev) ||
			 json_array_set(names, (size_t)id, json_object_get(dev, "name")))
			ret = -ENOMEM;
		/* the driver goes on as the twin's x-driver (not UTF-8: left out, it is a label) */
		else if (sqlite3_column_type(st, 4) == SQLITE_TEXT)
			json_object_set_new(dev, "x-driver",
					    json_string((const char *)sqlite3_column_text(st, 4)));
	}
	sqlite3_finalize(st);
	if (!ret && json_array_size(devs) != ndev)
		ret = fail(err, -EINVAL, "the run lists %zu of its %" PRIu32 " devices",
			   json_array_size(devs), ndev);
	return ret;
}

/* The listed links (the ids op 0 added before probing), with the flags a scenario gives. */
static int read_links(sqlite3 *db, int64_t run, json_t *ids, json_t *names, json_t *out,
		      struct dl_error *err)
{
	sqlite3_stmt *st;
	size_t i;
	json_t *id;
	int ret = 0;

	if (sqlite3_prepare_v2(db, "SELECT consumer_id, supplier_id, flags FROM links WHERE"
			       " run_id = ? AND link_id = ?", -1, &st, NULL) != SQLITE_OK)
		return fail(err, -EINVAL, "not a dlsim database: %s", sqlite3_errmsg(db));
	json_array_foreach(ids, i, id) {
		json_t *l, *fl;
		char *flags, *save = NULL;
		const char *f;
		int64_t c, s;

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run);
		sqlite3_bind_int64(st, 2, json_integer_value(id));
		if (sqlite3_step(st) != SQLITE_ROW)
			continue;
		c = sqlite3_column_int64(st, 0);
		s = sqlite3_column_int64(st, 1);
		f = (const char *)sqlite3_column_text(st, 2);
		if (c < 0 || s < 0 || (size_t)c >= json_array_size(names) ||
		    (size_t)s >= json_array_size(names)) {
			ret = fail(err, -EINVAL, "link %" PRId64 ": no such device",
				   (int64_t)json_integer_value(id));
			break;
		}
		fl = json_array();
		l = json_pack("{s:O, s:O, s:o}", "consumer", json_array_get(names, (size_t)c),
			      "supplier", json_array_get(names, (size_t)s), "flags", fl);
		flags = strdup(f ? f : "");
		if (!l || !flags) {
			json_decref(l);
			free(flags);
			ret = -ENOMEM;
			break;
		}
		/* MANAGED is the core's own mark (device_link_add() sets it), no caller's flag */
		for (char *w = strtok_r(flags, "|", &save); w; w = strtok_r(NULL, "|", &save))
			if (*w && strcmp(w, "MANAGED") && json_array_append_new(fl, json_string(w)))
				ret = -ENOMEM;
		free(flags);
		if (ret || json_array_append_new(out, l)) {
			ret = -ENOMEM;
			break;
		}
	}
	sqlite3_finalize(st);
	return ret;
}

static int read_events(sqlite3 *db, int64_t run, struct rebuild *b, json_t *names)
{
	sqlite3_stmt *st;
	int ret = 0, rc;

	if (sqlite3_prepare_v2(db, "SELECT t_ns, dev_id, link_id, kind, phase, err FROM events"
			       " WHERE run_id = ? ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
		return fail(b->err, -EINVAL, "not a dlsim database: %s", sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, run);
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int kind = name_index((const char *)sqlite3_column_text(st, 3), dl_ev_kind_name,
				      DL_EV_KIND_COUNT);
		int phase = name_index((const char *)sqlite3_column_text(st, 4), dl_phase_name,
				       DL_PH_COUNT);
		int64_t dv = sqlite3_column_int64(st, 1), lk = sqlite3_column_int64(st, 2);
		uint32_t d = sqlite3_column_type(st, 1) == SQLITE_NULL || dv < 0 || dv > UINT32_MAX ?
			     DL_NONE : (uint32_t)dv;
		uint32_t l = sqlite3_column_type(st, 2) == SQLITE_NULL || lk < 0 || lk > UINT32_MAX ?
			     DL_NONE : (uint32_t)lk;

		if (kind < 0)
			continue;   /* a kind this dlsim does not know: nothing to replay */
		ret = on_event(b, names, kind, d, l, phase, sqlite3_column_int(st, 5),
			       sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	if (!ret && b->cur < 0)
		ret = fail(b->err, -EINVAL, "the run logged no event to replay");
	/* a failed suspend last: the resume a script has after it logged nothing (as above) */
	if (!ret && b->cur == DL_OP_SUSPEND && b->rolled)
		ret = op_begin(b, DL_OP_RESUME, 0);
	return ret;
}

/* faults[]: each callback the run logged failing, as often as it failed. */
static int add_faults(struct rebuild *b, json_t *names, json_t *sc)
{
	json_t *faults = json_array();

	if (!faults || json_object_set_new(sc, "faults", faults))
		return -ENOMEM;
	for (uint32_t d = 0; d < b->ndev; d++) {
		for (unsigned k = 0; k < DL_LAT_COUNT; k++) {
			size_t i = (size_t)d * DL_LAT_COUNT + k;
			json_t *f;

			if (!b->fail_n[i])
				continue;
			f = json_pack("{s:O, s:s, s:i, s:i}", "device", json_array_get(names, d),
				      "op", dl_lat_key_name(k), "error", (int)b->fail_err[i],
				      "times", (int)b->fail_n[i]);
			if (!f || json_array_append_new(faults, f))
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The twin scenario's "cost": a logged callback lasted until its sleep
 * really ended, its timer's overshoot included, so a replayed one gets no
 * sleep_end_ns on top (cost.h).  A guest profile's 15 us counted again
 * made every near-empty callback of prepare, complete and the late and
 * noirq phases 16 us long where the log had 0.4 us: those phases came out
 * 2.6-6.9x the kernel's in the twin of a 58-device board.  --set
 * cost.sleep_end_ns still overrides it.
 */
static json_t *replay_cost(void)
{
	return json_pack("{s:i}", "sleep_end_ns", 0);
}

int dl_twin_read(sqlite3 *db, int64_t run, struct dl_twin *tw, struct dl_error *err)
{
	struct rebuild b = { .tw = tw, .err = err, .cur = -1 };
	json_t *devs = json_array(), *names = json_array(), *links = json_array();
	int ret;

	memset(tw, 0, sizeof(*tw));
	err->msg[0] = '\0';
	b.script = json_array();
	b.links = json_array();
	tw->scenario = json_object();
	if (!devs || !names || !links || !b.script || !b.links || !tw->scenario) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read_run_row(db, run, tw, &b.ndev, err);
	if (!ret)
		ret = refuse_ops(db, run, err);
	if (!ret)
		ret = read_devices(db, run, b.ndev, devs, names, err);
	if (ret)
		goto out;
	tw->lat.ndev = b.ndev;
	b.open = malloc(((size_t)b.ndev + 1) * sizeof(*b.open));
	b.fail_n = calloc((size_t)b.ndev * DL_LAT_COUNT + 1, sizeof(*b.fail_n));
	b.fail_err = calloc((size_t)b.ndev * DL_LAT_COUNT + 1, sizeof(*b.fail_err));
	if (!b.open || !b.fail_n || !b.fail_err) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t d = 0; d < b.ndev; d++)
		b.open[d] = -1;
	ret = read_events(db, run, &b, names);
	if (!ret)
		ret = read_links(db, run, b.links, names, links, err);
	if (!ret && (json_object_set_new(tw->scenario, "format", json_string("dlsim-scenario/1")) ||
		     json_object_set_new(tw->scenario, "name", json_string(tw->name)) ||
		     json_object_set_new(tw->scenario, "seed", json_integer((json_int_t)tw->seed)) ||
		     json_object_set_new(tw->scenario, "x-twin-of", json_integer(run)) ||
		     json_object_set(tw->scenario, "devices", devs) ||
		     json_object_set(tw->scenario, "links", links) ||
		     json_object_set(tw->scenario, "script", b.script) ||
		     json_object_set_new(tw->scenario, "cost", replay_cost())))
		ret = -ENOMEM;
	if (!ret)
		ret = add_faults(&b, names, tw->scenario);
	if (ret == -ENOMEM && !err->msg[0])
		fail(err, ret, "out of memory");
out:
	json_decref(devs);
	json_decref(names);
	json_decref(links);
	json_decref(b.script);
	json_decref(b.links);
	free(b.open);
	free(b.fail_n);
	free(b.fail_err);
	if (ret)
		dl_twin_free(tw);
	return ret;
}

void dl_twin_free(struct dl_twin *tw)
{
	json_decref(tw->scenario);
	free(tw->lat.ns);
	tw->scenario = NULL;
	tw->lat.ns = NULL;
	tw->lat.nop = 0;
}
