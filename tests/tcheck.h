/*
 * tcheck.h - run a test scenario (tsc.h) on either backend, record its
 * events, log them to a database the way `dlsim run` does and re-verify the
 * log with dl_check_run_ex(), the checker `dlsim check` uses, so that the
 * engine suites judge runs by the real checker and not by a copy of it.
 * Header-only: each test program includes it once, after tsc.h.
 */
#ifndef DL_TESTS_TCHECK_H
#define DL_TESTS_TCHECK_H

#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sim/engine/engine.h"
#include "sim/engine/threads.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"

/* ---- recording sink (mutex-protected: the test does not rely on the engine's merge) ---- */

struct rec {
	pthread_mutex_t mx;
	struct dl_event *ev;
	size_t n, cap;
};

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mx, NULL);
}

static void rec_fini(struct rec *r)
{
	free(r->ev);
	pthread_mutex_destroy(&r->mx);
}

static void rec_push(struct rec *r, const struct dl_event *e)
{
	pthread_mutex_lock(&r->mx);
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4096;
		r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
	}
	r->ev[r->n++] = *e;
	pthread_mutex_unlock(&r->mx);
}

/*
 * rec_serial_problems - how far @r's prepare and complete walks stray from
 * dpm_prepare()/dpm_complete() (kernel 6.12, drivers/base/power/main.c): a
 * walk of prepare callbacks follows dpm_list (replayed here from the
 * register, dpm_move and device_del events), a walk of complete callbacks
 * the reverse of its prepare order, each on the main thread (worker 0), one
 * callback at a time.  Written apart from both the engines and dl_check.c.
 */
static size_t rec_serial_problems(const struct rec *r, uint32_t ndev)
{
	uint64_t *pos = calloc(ndev + 1, sizeof(*pos)), *prep = calloc(ndev + 1, sizeof(*prep));
	uint64_t clock = 0, pclock = 0, last = 0;
	size_t bad = 0;
	int walk = -1;
	bool open = false;

	for (size_t i = 0; pos && prep && i < r->n; i++) {
		const struct dl_event *e = &r->ev[i];
		bool start = e->kind == DL_EV_SUSPEND_START || e->kind == DL_EV_RESUME_START;
		bool end = e->kind == DL_EV_SUSPEND_END || e->kind == DL_EV_RESUME_END;

		if (e->dev >= ndev)
			continue;
		if (e->kind == DL_EV_REGISTER || (e->kind == DL_EV_DPM_MOVE && pos[e->dev]))
			pos[e->dev] = ++clock;
		if (e->kind == DL_EV_DEVICE_DEL)
			pos[e->dev] = 0;
		if ((!start && !end) || (e->phase != DL_PH_PREPARE && e->phase != DL_PH_COMPLETE))
			continue;
		if (end) {
			open = false;
			continue;
		}
		bad += open;               /* another one still runs */
		bad += e->worker != 0;     /* not the main thread */
		open = true;
		if (walk != (int)e->phase) {
			walk = (int)e->phase;
			last = e->phase == DL_PH_PREPARE ? 0 : UINT64_MAX;
		}
		if (e->phase == DL_PH_PREPARE) {
			bad += pos[e->dev] <= last;
			last = pos[e->dev];
			prep[e->dev] = ++pclock;
		} else {
			bad += prep[e->dev] >= last;
			last = prep[e->dev];
		}
	}
	if (!pos || !prep)
		bad++;
	free(pos);
	free(prep);
	return bad;
}

/*
 * Issue 18, item 6: @n independent devices (no links, no parents), every
 * fifth one sync (tsc.h), each suspend and resume callback @lat long,
 * prepare and complete free.  dpm_list is registration order.
 */
static struct tsc *make_independent(uint32_t n, int64_t lat)
{
	struct tsc *t = make(1, n, 31, false);

	t->sc.nlink = 0;
	for (unsigned k = DL_LAT_PREPARE; k <= DL_LAT_COMPLETE; k++)
		fixed(&t->prof[0].lat[k], k == DL_LAT_PREPARE || k == DL_LAT_COMPLETE ? 0 : lat);
	return t;
}

/* The time of @r's first event @kind of device @d in phase @phase, -1 if none. */
static int64_t rec_time(const struct rec *r, uint32_t d, unsigned kind, unsigned phase)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].dev == d && r->ev[i].kind == kind && r->ev[i].phase == phase)
			return r->ev[i].t_ns;
	return -1;
}

/*
 * How far a classic kernel-async run of make_independent() strays from
 * 6.12: in each resume phase every async device is queued before the sync
 * walk starts ("Trigger the resume of 'async' devices upfront"), so each
 * starts before the first sync device (0) has finished; in each suspend
 * phase an async device is queued when the walk (backward) reaches it, so
 * device 1 starts only after sync device 5 has finished.
 */
static size_t rec_upfront_problems(const struct rec *r, uint32_t n)
{
	size_t bad = 0;

	for (unsigned p = DL_PH_RESUME_NOIRQ; p <= DL_PH_RESUME; p++) {
		int64_t end0 = rec_time(r, 0, DL_EV_RESUME_END, p);

		for (uint32_t d = 1; d < n; d++) {
			int64_t st = rec_time(r, d, DL_EV_RESUME_START, p);

			if (d % 5 != 0)
				bad += st < 0 || end0 < 0 || st >= end0;
		}
	}
	for (unsigned p = DL_PH_SUSPEND; p <= DL_PH_SUSPEND_NOIRQ; p++) {
		int64_t end5 = rec_time(r, 5, DL_EV_SUSPEND_END, p);
		int64_t st1 = rec_time(r, 1, DL_EV_SUSPEND_START, p);

		bad += st1 < 0 || end5 < 0 || st1 < end5;
	}
	return bad;
}

/*
 * Issue 18, item 7: three async devices, 2 a consumer of 1, 0 alone.  Under
 * 6.16+ (kernel-async-v2) device 2 is not a root, so resuming it is queued
 * by the walk before 1 has finished, and its item blocks in
 * dpm_wait_for_superior(); suspending, 1 is not a leaf, the walk queues it
 * while 2 still runs, and it blocks in dpm_wait_for_subordinate().
 */
static struct tsc *make_v2_block(int64_t lat)
{
	struct tsc *t = make_independent(3, lat);

	t->dev[0].async = 1;
	t->link[0] = (struct dl_sc_link){ 2, 1, 0 };
	t->sc.nlink = 1;
	return t;
}

/* The suspend and resume phases (not prepare/complete) where that block is missing. */
static size_t rec_v2_block_missing(const struct rec *r)
{
	size_t bad = 0;

	for (unsigned p = DL_PH_SUSPEND; p <= DL_PH_RESUME; p++)
		bad += rec_time(r, p <= DL_PH_SUSPEND_NOIRQ ? 1 : 2, DL_EV_WORK_BLOCK, p) < 0;
	return bad;
}

/* ---- a run, recorded and checked ---- */

enum tc_backend { TC_DES, TC_THREADS };

struct tc_run {
	enum dl_order order;
	uint32_t workers;
	enum tc_backend backend;
	double scale;                  /* threads: time scale (0: 0.001) */
	atomic_int *stop;
	struct rec *rec;               /* events, in sink order; may be NULL */
	bool quiet;                    /* do not print the violations (a run that must have some) */
	int64_t violations;            /* out: dl_check's total; -1: the check could not run */
	struct dl_check_result check;  /* out */
};

static char tc_dir[] = "/tmp/dlsim-test-XXXXXX";
static bool tc_have_dir;

struct tc_tee {
	struct dl_log *log;
	struct rec *rec;
};

static void tc_emit(void *ctx, struct dl_event *e)
{
	struct tc_tee *k = ctx;

	dl_log_events(k->log, e, 1);
	if (k->rec)
		rec_push(k->rec, e);
}

/*
 * tc_run - run @t as @x says, with its events logged to a database in a
 * scratch directory and then checked; returns the engine's result (0, 1 for
 * a failed op, negative errno) and fills @r and @x->violations.
 */
static int tc_run(struct tsc *t, struct tc_run *x, struct dl_run_result *r)
{
	struct dl_run_info ri = { .scenario = "test", .order = dl_order_name(x->order),
				  .mode = x->backend == TC_THREADS ? "threads" : "des",
				  .version = "test", .seed = t->sc.seed,
				  .workers = dl_engine_workers(&t->sc, x->order, x->workers),
				  .devices = t->sc.ndev, .links = t->sc.nlink };
	struct dl_engine_opts eo = { .order = x->order, .workers = x->workers,
				     .seed = t->sc.seed, .stop = x->stop };
	struct tc_tee tee = { .rec = x->rec };
	char path[600], err[512];
	sqlite3 *db;
	int64_t run_id = 0;
	int rc, c;

	x->violations = -1;
	if (!tc_have_dir && !(tc_have_dir = mkdtemp(tc_dir) != NULL))
		return -EIO;
	snprintf(path, sizeof(path), "%s/runs.db", tc_dir);
	if (dl_log_open(path, &tee.log, err, sizeof(err)))
		return -EIO;
	if (dl_log_run_begin(tee.log, &ri, &run_id)) {
		dl_log_close(tee.log);
		return -EIO;
	}
	for (uint32_t i = 0; i < t->sc.ndev; i++)
		dl_log_device(tee.log, i, dl_sc_name(&t->sc, i), t->sc.dev[i].parent,
			      t->sc.dev[i].async);
	eo.sink = (struct dl_sink){ .emit = tc_emit, .ctx = &tee };
	rc = x->backend == TC_THREADS ?
	     dl_threads_run(&t->sc, &eo, x->scale > 0 ? x->scale : 0.001, r) :
	     dl_engine_run(&t->sc, &eo, r);
	dl_log_run_end(tee.log, r->status, r->makespan_ns, NULL, 0);
	dl_log_close(tee.log);
	if (dl_log_open_existing(path, &db, err, sizeof(err)))
		return rc;
	c = dl_check_run_ex(db, run_id, x->quiet ? 0 : 1, stdout, &x->check);
	sqlite3_close(db);
	if (c == DL_CHECK_DONE)
		x->violations = (int64_t)x->check.total;
	return rc;
}

/*
 * Issue 18, items 4 and 5: dpm_prepare() walks dpm_list forward and
 * dpm_complete() the prepared list backward, on the main thread alone, for
 * every order (the kernel has no async prepare or complete), also when a
 * prepare fault on @fault_dev aborts the suspend; the checker agrees.  Run
 * on backend @b over a random DAG of @ndev devices, 4 workers.
 */
static void tc_check_serial_walks(enum tc_backend b, uint32_t ndev, uint32_t fault_dev)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		for (int fault = 0; fault < 2; fault++) {
			struct tsc *t;
			struct dl_run_result r;
			struct rec rec;
			struct tc_run x = { .order = (enum dl_order)o, .workers = 4, .backend = b,
					    .rec = &rec };

			if (!dl_order_policy((enum dl_order)o)->link_aware)
				continue;   /* walks registration order: the negative control */
			t = make(1, ndev, 23, false);
			rec_init(&rec);
			if (fault) {
				t->fault[0] = (struct dl_sc_fault){ .dev = fault_dev,
								    .lat_key = DL_LAT_PREPARE, .err = 16 };
				t->sc.nfault = 1;
			}
			CU_ASSERT_EQUAL(tc_run(t, &x, &r), fault);
			CU_ASSERT_EQUAL(x.violations, 0);
			CU_ASSERT_EQUAL(rec_serial_problems(&rec, t->sc.ndev), 0);
			/* one callback at a time: the phase's bound is its work */
			CU_ASSERT(r.op[1].makespan_ns >= r.op[1].work_ns / 4);
			rec_fini(&rec);
			free(t);
		}
	}
}

/* Remove the scratch directory (DLSIM_TEST_KEEP=1 keeps it); 0, or 1 if that failed. */
static int tc_cleanup(void)
{
	char cmd[700];

	if (!tc_have_dir || getenv("DLSIM_TEST_KEEP"))
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tc_dir);
	return system(cmd) != 0;
}


/*
 * A device with no driver bound runs no PM callback (oploop.h dl_pm_part()):
 * in a chain (device i consumes i + 1) whose device 30 fails its probe,
 * devices 0..30 never bind; they log no suspend or resume event, every
 * bound device logs all eight, and the checker agrees (its invariant 4
 * flags a PM callback of a device without a driver).  Naive ignores links
 * and is left out.
 */
static void tc_check_never_bound(enum tc_backend be)
{
	for (int o = 0; o < DL_ORDER_COUNT; o++) {
		struct tsc *t;
		struct rec rec;
		struct dl_run_result r;
		struct tc_run x = { .order = (enum dl_order)o, .workers = 4, .backend = be,
				    .rec = &rec };
		uint8_t bound[60] = { 0 };
		unsigned npm[60] = { 0 };

		if (!dl_order_policy((enum dl_order)o)->link_aware)
			continue;
		t = make(0, 60, 19, false);
		t->fault[0] = (struct dl_sc_fault){ .dev = 30, .lat_key = DL_LAT_PROBE, .err = 5 };
		t->sc.nfault = 1;
		rec_init(&rec);
		CU_ASSERT_EQUAL(tc_run(t, &x, &r), 0);
		CU_ASSERT_EQUAL(x.violations, 0);
		for (size_t i = 0; i < rec.n; i++) {
			const struct dl_event *e = &rec.ev[i];

			if (e->dev >= 60)
				continue;
			if (e->kind == DL_EV_PROBE_END && !e->err)
				bound[e->dev] = 1;
			if (e->kind == DL_EV_SUSPEND_START || e->kind == DL_EV_RESUME_START)
				npm[e->dev]++;
		}
		for (uint32_t d = 0; d < 60; d++) {
			CU_ASSERT_EQUAL(bound[d], d > 30);
			CU_ASSERT_EQUAL(npm[d], d > 30 ? (unsigned)DL_PH_COUNT : 0u);
		}
		rec_fini(&rec);
		free(t);
	}
}

#endif
