/*
 * dl_check_verify.c - is a run's log what dlsim's writer writes?  The runs
 * row, metrics, devices and links before the events, then each events row
 * as dl_check.c reads it; what does not hold makes the run corrupt
 * (corrupt()), never a violation.  The rules (dl_check_rules.c) run only on
 * rows verified here.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/log/dl_check_verify.h"

#define CORRUPT_PRINT 10

static void corrupt(struct checker *k, const char *fmt, ...)
{
	char what[224];
	va_list ap;

	if (k->by_rowid) {
		k->redo = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	/* the text quoted from a damaged row is data: no control byte reaches a terminal */
	for (char *c = what; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	if (!k->res->corrupt)
		snprintf(k->res->corrupt_first, sizeof(k->res->corrupt_first), "%s", what);
	k->res->corrupt++;
	if (k->verbose && (k->verbose > 1 || k->res->corrupt <= CORRUPT_PRINT))
		fprintf(k->out, "run %" PRId64 ": corrupt log: %s\n", k->run, what);
}

/* An integer column in [0, max): its value, or -1 (NULL, not an integer, out of range). */
static int64_t col_in(sqlite3_stmt *st, int i, int64_t max)
{
	int64_t v;

	if (sqlite3_column_type(st, i) != SQLITE_INTEGER)
		return -1;
	v = sqlite3_column_int64(st, i);
	return v >= 0 && v < max ? v : -1;
}

static int known_status(const char *s)
{
	static const char *const ok[] = { "running", "ok", "violations", "failed", "interrupted" };

	for (size_t i = 0; s && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(s, ok[i]))
			return 1;
	return 0;
}

static int finished_status(const char *s)
{
	return !strcmp(s, "ok") || !strcmp(s, "violations") || !strcmp(s, "failed");
}

static int is_link_kind(int kind)
{
	return kind == DL_EV_LINK_ADD || kind == DL_EV_LINK_DEL || kind == DL_EV_LINK_STATE;
}

/* A figure of the runs row: NULL, or an integer in [lo, hi]; "" when it is, else why not. */
static const char *figure_bad(sqlite3_stmt *st, int i, int64_t lo, int64_t hi)
{
	int64_t v;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return "";
	if (sqlite3_column_type(st, i) != SQLITE_INTEGER)
		return "not an integer";
	v = sqlite3_column_int64(st, i);
	return v < lo ? "below its range" : v > hi ? "above its range" : "";
}

/* The runs row: *ndev from runs.devices (or the devices rows of a hand-made log). */
static int verify_run_row(struct checker *k, struct vrun *vr, int64_t *ndev, int64_t *nev,
			  int *from_zero)
{
	sqlite3_stmt *st;
	int has_ev = dl_check_has_column(k->db, "runs", "events"), have_events;
	const char *why;
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT devices, %s, (SELECT count(*) FROM devices WHERE run_id = ?1),"
		 " EXISTS (SELECT 1 FROM events WHERE run_id = ?1), makespan_ns, workers, links,"
		 " mode = 'des' FROM runs WHERE run_id = ?1", has_ev ? "events" : "NULL");
	if (sqlite3_prepare_v2(k->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return -EIO;
	}
	if (!known_status(k->res->status))
		corrupt(k, "runs.status '%.40s' is none of running, ok, violations, failed,"
			" interrupted", k->res->status);
	*ndev = sqlite3_column_int64(st, 2);
	k->rows_prefix = k->res->incomplete ||
			 (!strcmp(k->res->status, "interrupted") && !sqlite3_column_int(st, 3));
	/* a run without devices rows and events holds no detail (a summary-only log) */
	if (sqlite3_column_type(st, 0) != SQLITE_NULL && (*ndev || sqlite3_column_int(st, 3))) {
		int64_t d = col_in(st, 0, (int64_t)DL_CHECK_MAX_IDS + 1);

		if (d < 0)
			corrupt(k, "runs.devices is not a count of devices (0..%u)", DL_CHECK_MAX_IDS);
		else if (d < *ndev || (d > *ndev && !k->rows_prefix))
			corrupt(k, "runs.devices is %" PRId64 " but the run has %" PRId64 " devices rows",
				d, *ndev);
		else
			*ndev = d;      /* k->rows_prefix: only the first rows may be stored */
	}
	if (*ndev > DL_CHECK_MAX_IDS) {
		corrupt(k, "%" PRId64 " devices rows (at most %u)", *ndev, DL_CHECK_MAX_IDS);
		*ndev = 0;
	}
	/* dlsim's writer numbers from 0 and counts; hand-made logs may do neither */
	*from_zero = has_ev;
	have_events = sqlite3_column_type(st, 1) != SQLITE_NULL;
	*nev = have_events ? col_in(st, 1, INT64_MAX) : -1;
	if (have_events && *nev < 0)
		corrupt(k, "runs.events is not a count");
	else if (has_ev && !have_events && strcmp(k->res->status, "running") != 0)
		corrupt(k, "runs.events is NULL in a run that is not 'running'");
	if (*(why = figure_bad(st, 4, 0, DL_CHECK_T_MAX)))
		corrupt(k, "runs.makespan_ns %.40s is %s (0..%" PRId64 " ns)",
			(const char *)sqlite3_column_text(st, 4), why, (int64_t)DL_CHECK_T_MAX);
	if (*(why = figure_bad(st, 5, 0, INT16_MAX)))
		corrupt(k, "runs.workers %.40s is %s (0..%d)", (const char *)sqlite3_column_text(st, 5),
			why, INT16_MAX);
	if (*(why = figure_bad(st, 6, 0, DL_CHECK_MAX_IDS)))
		corrupt(k, "runs.links %.40s is %s (0..%u)", (const char *)sqlite3_column_text(st, 6),
			why, DL_CHECK_MAX_IDS);
	vr->writer = has_ev;
	/* a run whose log failed (runs.log_error) stored only part of its events */
	vr->finished = finished_status(k->res->status) && !k->res->incomplete;
	vr->virtual_time = sqlite3_column_int(st, 7);
	vr->makespan = sqlite3_column_type(st, 4) == SQLITE_INTEGER ? sqlite3_column_int64(st, 4) : -1;
	sqlite3_finalize(st);
	return 0;
}

/* The op family of a metrics key "probe.makespan_ns", "suspend2.makespan_ns": FAM_*, or -1. */
static int metric_family(const char *name)
{
	static const char *const fam[FAM_COUNT] = { "probe", "unbind", "suspend", "resume" };
	size_t n = strcspn(name, ".");

	if (strcmp(name + n, ".makespan_ns") != 0)
		return -1;
	while (n && name[n - 1] >= '0' && name[n - 1] <= '9')
		n--;
	for (int f = 0; f < FAM_COUNT; f++)
		if (strlen(fam[f]) == n && !strncmp(name, fam[f], n))
			return f;
	return -1;
}

/*
 * The metrics: every value a finite number, every time ("..._ns") in
 * 0..DL_CHECK_T_MAX, makespan_ns and events equal to the runs row's (events:
 * unless the log failed, runs.events then counts what was stored); the ops
 * with a makespan are counted per family for verify_promises().
 */
static int verify_metrics(struct checker *k, struct vrun *vr, int64_t nev)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(k->db, "SELECT name, value FROM metrics WHERE run_id = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;       /* a hand-made log without metrics */
	sqlite3_bind_int64(st, 1, k->run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int type = sqlite3_column_type(st, 1);
		double v = sqlite3_column_double(st, 1);
		size_t n = name ? strlen(name) : 0;
		int f;

		if (!name) {
			corrupt(k, "a metrics row has no name");
			continue;
		}
		if ((type != SQLITE_FLOAT && type != SQLITE_INTEGER) || !isfinite(v)) {
			corrupt(k, "metric '%.60s' is %.40s, not a number", name,
				type == SQLITE_NULL ? "NULL" : (const char *)sqlite3_column_text(st, 1));
			continue;
		}
		if (n > 3 && !strcmp(name + n - 3, "_ns") && (v < 0 || v > (double)DL_CHECK_T_MAX))
			corrupt(k, "metric '%.60s' is %g, not a time in 0..%" PRId64 " ns", name, v,
				(int64_t)DL_CHECK_T_MAX);
		else if (!strcmp(name, "makespan_ns") && vr->makespan >= 0 && v != (double)vr->makespan)
			corrupt(k, "metric makespan_ns is %.0f but runs.makespan_ns is %" PRId64, v,
				vr->makespan);
		else if (!strcmp(name, "events") && nev >= 0 && !k->res->incomplete &&
			 v != (double)nev)
			corrupt(k, "metric events is %.0f but runs.events is %" PRId64, v, nev);
		if ((f = metric_family(name)) >= 0 && v > 0)
			vr->ops[f]++;
		if (!strcmp(name, "devices_unregistered") && v >= 0 && v <= DL_CHECK_MAX_IDS)
			vr->unregistered = (int64_t)v;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/*
 * What a run that ran to its end promises about its events, for a log of
 * dlsim's writer: its devices registered but those the writer saw never
 * register, the callbacks of every suspend and
 * resume op that took time, and (virtual time) no event after the makespan.
 */
static void verify_promises(struct checker *k, const struct vrun *vr, const struct vdev *v,
			    int64_t ndev)
{
	static const char *const fam[FAM_COUNT] = { "probe", "unbind", "suspend", "resume" };
	int64_t never = 0, first = -1;

	if (!vr->writer || !vr->finished)
		return;
	/*
	 * A device may never register (hot-plugged, never added): the writer
	 * counts those (metric devices_unregistered); rows beyond that count
	 * were added or had their events deleted.  Older logs without the
	 * metric: at least one device registered.
	 */
	for (int64_t d = 0; d < ndev; d++) {
		if (!v[d].seen || v[d].registered)
			continue;
		if (!never++)
			first = d;
	}
	if (vr->unregistered >= 0 && never != vr->unregistered)
		corrupt(k, "%" PRId64 " devices never registered (the first: device %" PRId64 ") but the"
			" writer saw %" PRId64 " (metric devices_unregistered)", never, first,
			vr->unregistered);
	else if (vr->unregistered < 0 && ndev > 0 && never == ndev)
		corrupt(k, "none of the run's %" PRId64 " devices registered in a run that ended '%s'",
			ndev, k->res->status);
	/*
	 * Only PM ops: a suspend or resume that took time ran callbacks, if any
	 * device had a driver (a log without probes: every device has one).
	 * Without, the main thread walks devices that run no callback
	 * (sim/engine/oploop.h dl_pm_part()).  A probe or unbind op can take
	 * time without one (a racing op's delay, a device without a driver to
	 * unbind).
	 */
	for (int f = FAM_SUSPEND; f <= FAM_RESUME; f++)
		if (vr->ops[f] && !vr->callbacks[f] && (!vr->callbacks[FAM_PROBE] || vr->binds))
			corrupt(k, "the metrics hold %" PRIu64 " %s op%s that took time but the events"
				" no %s callback", vr->ops[f], fam[f], vr->ops[f] == 1 ? "" : "s",
				fam[f]);
	/* threads and kernel runs time their makespan apart from the events */
	if (vr->virtual_time && vr->makespan >= 0 && vr->t_last > vr->makespan)
		corrupt(k, "an event at t=%" PRId64 " after runs.makespan_ns %" PRId64, vr->t_last,
			vr->makespan);
}

static int verify_devices(struct checker *k, struct vdev *v, int64_t ndev)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(k->db, "SELECT dev_id, name, parent_id FROM devices WHERE run_id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = col_in(st, 0, ndev), p = col_in(st, 2, ndev);

		if (id < 0) {
			corrupt(k, "a devices row has dev_id %s, not in 0..%" PRId64,
				sqlite3_column_type(st, 0) == SQLITE_NULL ? "NULL" :
				(const char *)sqlite3_column_text(st, 0), ndev - 1);
			continue;
		}
		if (v[id].seen)
			corrupt(k, "device %" PRId64 " has two devices rows", id);
		v[id].seen = 1;
		if (sqlite3_column_type(st, 1) != SQLITE_TEXT)
			corrupt(k, "device %" PRId64 " has no name", id);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL && (p < 0 || p == id))
			corrupt(k, "device %" PRId64 " has parent_id %s, not a device in 0..%" PRId64
				" other than itself", id, (const char *)sqlite3_column_text(st, 2), ndev - 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The links table: *nlink one past the largest link id; KNOWN[l] set for each. */
static int verify_links(struct checker *k, int64_t ndev, uint8_t **known, uint32_t *nlink)
{
	sqlite3_stmt *st;
	int rc;

	*known = NULL;
	*nlink = 0;
	if (sqlite3_prepare_v2(k->db, "SELECT max(link_id), count(*) FROM links WHERE run_id = ?", -1,
			       &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 1) > 0) {
		int64_t m = col_in(st, 0, (int64_t)DL_CHECK_MAX_IDS);

		if (m < 0)
			corrupt(k, "a link_id is not an id in 0..%u", DL_CHECK_MAX_IDS - 1);
		else
			*nlink = (uint32_t)m + 1;
	}
	sqlite3_finalize(st);
	*known = calloc(*nlink ? *nlink : 1, 1);
	if (!*known)
		return -ENOMEM;
	if (sqlite3_prepare_v2(k->db, "SELECT link_id, consumer_id, supplier_id, flags FROM links"
			       " WHERE run_id = ?", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, k->run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t l = col_in(st, 0, *nlink);

		if (l < 0) {
			if (*nlink)
				corrupt(k, "a links row has link_id %s",
					sqlite3_column_type(st, 0) == SQLITE_NULL ? "NULL" :
					(const char *)sqlite3_column_text(st, 0));
			continue;
		}
		if ((*known)[l])
			corrupt(k, "link %" PRId64 " has two links rows", l);
		(*known)[l] = 1;
		if (col_in(st, 1, ndev) < 0 || col_in(st, 2, ndev) < 0)
			corrupt(k, "link %" PRId64 " joins devices not in 0..%" PRId64, l, ndev - 1);
		if (sqlite3_column_type(st, 3) != SQLITE_NULL &&
		    !dl_check_flags_memo(k, (const char *)sqlite3_column_text(st, 3)).known)
			corrupt(k, "link %" PRId64 " has flags '%.60s', not DL_FLAG_* names joined by '|'",
				l, (const char *)sqlite3_column_text(st, 3));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The family of a callback's first event, FAM_* (probe_start, ...), or -1. */
static int callback_family(int kind)
{
	switch (kind) {
	case DL_EV_PROBE_START: return FAM_PROBE;
	case DL_EV_UNBIND_START: return FAM_UNBIND;
	case DL_EV_SUSPEND_START: return FAM_SUSPEND;
	case DL_EV_RESUME_START: return FAM_RESUME;
	default: return -1;
	}
}

/* worker, err and flags of an event (columns 7, 8, 9): in the ranges dl_event gives them. */
static void verify_event_fields(struct checker *k, sqlite3_stmt *st, const struct erow *r,
				int have_ext, int64_t seq, const char *ks)
{
	static const char *const col[] = { "worker", "err", "flags" };
	const int64_t lo[] = { -1, INT16_MIN, 0 };
	const int64_t hi[] = { INT16_MAX, INT16_MAX, ((int64_t)1 << DL_FLAG_COUNT) - 1 };

	for (int i = 0; i < (have_ext ? 3 : 2); i++) {
		int c = EC_WORKER + i;
		const char *why = r->type[c] == SQLITE_NULL ? "" : r->type[c] != SQLITE_INTEGER ?
				  "not an integer" : r->v[c] < lo[i] ? "below its range" :
				  r->v[c] > hi[i] ? "above its range" : "";

		if (*why)
			corrupt(k, "seq %" PRId64 ": %s with %s %.40s, %s (%" PRId64 "..%" PRId64 ")", seq,
				ks, col[i], col_text(st, 7 + i), why, lo[i],
				hi[i]);
	}
}

static int verify_event(struct checker *k, sqlite3_stmt *st, struct erow *r, int have_ext,
			struct vdev *v, int64_t ndev, const uint8_t *known, uint32_t nlink, int64_t seq,
			struct vrun *vr)
{
	const char *ks = r->kind;
	int kind = r->kind_id;
	int64_t d = row_in(r, EC_DEV, ndev), t = r->v[EC_T];

	if (r->type[EC_T] != SQLITE_INTEGER || t < 0 || t > DL_CHECK_T_MAX) {
		corrupt(k, "seq %" PRId64 ": t_ns %s is not a time in 0..%" PRId64 " ns", seq,
			col_text(st, EC_T), (int64_t)DL_CHECK_T_MAX);
		t = -1;
	}
	if (kind < 0) {
		corrupt(k, "seq %" PRId64 ": unknown kind '%.40s'", seq, ks ? ks : "NULL");
		return -1;
	}
	verify_event_fields(k, st, r, have_ext, seq, ks);
	if (t > vr->t_last)
		vr->t_last = t;
	if (callback_family(kind) >= 0)
		vr->callbacks[callback_family(kind)]++;
	if (kind == DL_EV_PROBE_END && r->type[EC_ERR] == SQLITE_INTEGER && r->v[EC_ERR] == 0)
		vr->binds++;
	if (d < 0) {
		corrupt(k, "seq %" PRId64 ": %s of dev_id %s, not a device in 0..%" PRId64, seq, ks,
			col_text(st, EC_DEV), ndev - 1);
		return kind;
	}
	if (is_link_kind(kind)) {
		int64_t l = row_in(r, EC_LINK, nlink);

		if (l < 0 || !known[l])
			corrupt(k, "seq %" PRId64 ": %s of link %s, which the links table does not hold",
				seq, ks, col_text(st, EC_LINK));
	}
	if (have_ext && (is_link_kind(kind) || kind == DL_EV_LINK_REFUSED ||
			 (kind == DL_EV_REGISTER && r->type[EC_AUX] != SQLITE_NULL)) &&
	    row_in(r, EC_AUX, ndev) < 0)
		corrupt(k, "seq %" PRId64 ": %s with aux %s, not a device in 0..%" PRId64, seq, ks,
			col_text(st, EC_AUX), ndev - 1);
	if (is_pm_kind(kind) && r->name < 0)
		corrupt(k, "seq %" PRId64 ": %s in unknown phase '%.40s'", seq, ks,
			r->phase ? r->phase : "NULL");
	if (kind == DL_EV_LINK_STATE && r->name < 0)
		corrupt(k, "seq %" PRId64 ": link_state to unknown state '%.40s'", seq,
			r->phase ? r->phase : "NULL");
	if (kind == DL_EV_REGISTER)
		v[d].registered = 1;
	if (t >= 0) {
		if (t < v[d].t)
			corrupt(k, "seq %" PRId64 ": %s of device %" PRId64 " at t=%" PRId64 ", before its"
				" previous event (t=%" PRId64 ")", seq, ks, d, t, v[d].t);
		else
			v[d].t = t;
	}
	switch (kind) {
	case DL_EV_PROBE_START:
	case DL_EV_UNBIND_START:
		if (v[d].open)
			corrupt(k, "seq %" PRId64 ": %s of device %" PRId64 " while its %s has not ended",
				seq, ks, d, v[d].open == OPEN_PROBE ? "probe" : "unbind");
		v[d].open = kind == DL_EV_PROBE_START ? OPEN_PROBE : OPEN_UNBIND;
		break;
	case DL_EV_PROBE_END:
	case DL_EV_UNBIND_END:
		if (v[d].open != (kind == DL_EV_PROBE_END ? OPEN_PROBE : OPEN_UNBIND))
			corrupt(k, "seq %" PRId64 ": %s of device %" PRId64 " without its %s", seq, ks, d,
				kind == DL_EV_PROBE_END ? "probe_start" : "unbind_start");
		v[d].open = 0;
		break;
	default:
		break;
	}
	return kind;
}

void dl_check_verify_free(struct verify *V)
{
	free(V->v);
	free(V->known);
}

/* What precedes the events: the runs row, the metrics, the devices and the links. */
int dl_check_verify_begin(struct checker *k, struct verify *V, int have_ext)
{
	int rc;

	memset(V, 0, sizeof(*V));
	V->vr.t_last = -1;
	V->vr.unregistered = -1;
	V->nev = -1;
	V->have_ext = have_ext;
	rc = verify_run_row(k, &V->vr, &V->ndev, &V->nev, &V->from_zero);
	if (!rc)
		rc = verify_metrics(k, &V->vr, V->nev);
	if (rc)
		return rc;
	V->v = dl_check_calloc_huge((size_t)(V->ndev ? V->ndev : 1), sizeof(*V->v));
	if (!V->v)
		return -ENOMEM;
	rc = verify_devices(k, V->v, V->ndev);
	if (!rc)
		rc = verify_links(k, V->ndev, &V->known, &V->nlink);
	for (int64_t d = 0; !rc && d < V->ndev && k->res->corrupt < CORRUPT_STOP; d++)
		if (!V->v[d].seen && !(k->rows_prefix && (d == V->ndev - 1 || !V->v[d + 1].seen)))
			corrupt(k, "device %" PRId64 " has no devices row (ids are 0..%" PRId64 ")", d,
				V->ndev - 1);
	return rc;
}

/*
 * One events row R, read by read_row() from ST (NULL: read ahead, the
 * statement is on a later row): its kind, or -1 if unknown.
 */
int dl_check_verify_row(struct checker *k, struct verify *V, sqlite3_stmt *st, struct erow *r)
{
	int64_t seq = r->v[EC_SEQ];

	if (r->type[EC_SEQ] != SQLITE_INTEGER)
		corrupt(k, "an event has seq %s", col_text(st, EC_SEQ));
	else if (V->rows == 0 ? (V->from_zero && seq != 0) : seq != V->prev + 1)
		corrupt(k, "seq %" PRId64 " follows %s%" PRId64 " (seq is dense: 0, 1, 2, ...)", seq,
			V->rows ? "seq " : "the start, expected ", V->rows ? V->prev : 0);
	V->prev = seq;
	V->rows++;
	return verify_event(k, st, r, V->have_ext, V->v, V->ndev, V->known, V->nlink, seq, &V->vr);
}

/* After the last row read; ALL: the statement ran to its end. */
void dl_check_verify_end(struct checker *k, struct verify *V, int all)
{
	if (V->nev >= 0 && all && V->rows != V->nev)
		corrupt(k, "runs.events is %" PRId64 " but the run has %" PRId64 " events rows", V->nev,
			V->rows);
	if (k->res->corrupt < CORRUPT_STOP)
		verify_promises(k, &V->vr, V->v, V->ndev);
}
