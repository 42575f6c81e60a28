/* test_check.c - dlsim check on hand-made logs: a correct one, then mutations. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <sqlite3.h>

#include "sim/core/dl_core.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"

/* the verb itself (sim/cli is not a library; the tests do not link main.c) */
#include "sim/cli/cmd_check.c"

static char tmpdir[] = "/tmp/dlsim-test-check-XXXXXX";
static char dbpath[600];

enum { SUP = 0, CON = 1, CHILD = 2 };   /* CHILD's parent is SUP */

enum mutation {
	M_NONE,
	M_SWAP_SUSPEND,    /* supplier suspends before its consumer in phase 'suspend' */
	M_DROP_RESUME_END, /* the consumer's resume_end of phase 'resume' is missing */
	M_EARLY_PROBE,     /* the consumer probes before the supplier is bound */
	M_EARLY_UNBIND,    /* the supplier unbinds before its consumer */
	M_CYCLE,           /* a second link SUP -> CON closes a cycle */
	M_FAILED_SUSPENDED,/* status 'failed' with no resume at all */
	M_RUNNING,         /* run never ended */
	M_STATELESS_SWAP,  /* like M_SWAP_SUSPEND, the link is STATELESS */
	M_DORMANT_SWAP,    /* like M_SWAP_SUSPEND, the link is DORMANT: not a violation */
	M_RPM_OK,          /* PM_RUNTIME link, runtime PM in the right order */
	M_RPM_BAD,         /* the supplier runtime-suspends while the consumer is active */
	M_FAILED_CALLBACK, /* the consumer's suspend callback fails, everything resumes */
	M_BAD_REFUSAL,     /* CON -> SUP refused as a reverse dependency: it is not one */
	M_DPM_MOVE_OK,     /* SUP, then its child and consumer, move to the dpm_list tail */
	M_DPM_MOVE_BAD,    /* SUP alone moves to the tail: after its child and consumer */
	M_CYCLE_EARLY_PROBE, /* M_EARLY_PROBE over a CYCLE link (not SSO): it gates probe too */
	M_SSO_SWAP,        /* like M_SWAP_SUSPEND, the link is SYNC_STATE_ONLY and AVAILABLE */
	M_PREPARE_REVERSE, /* prepare walks dpm_list backward (dlsim before issue 18) */
	M_COMPLETE_FORWARD,/* complete walks in prepare order, not its reverse */
	M_PREPARE_THREADS, /* one prepare callback on a worker, not the main thread */
	M_PREPARE_OVERLAP, /* two prepare callbacks at once */
	M_SKIP_LATE,       /* the supplier runs neither suspend_late nor resume_early */
	M_SKIP_RESUME,     /* the consumer's resume callback never runs */
	M_NO_DRIVER_PM,    /* the child's probe fails, yet it runs PM callbacks */
	M_NO_DRIVER_QUIET, /* the child's probe fails and it runs none: correct */
};

/* runs.kernel of the next write_run() (NULL: none, as logged before dlsim recorded it) */
static const char *run_kernel = "6.12";

struct evbuf { struct dl_event e[256]; size_t n; int64_t t; };

static void add(struct evbuf *b, unsigned kind, uint32_t dev, uint32_t link, uint32_t aux,
		uint32_t flags, unsigned phase, int err)
{
	struct dl_event e = { .t_ns = (b->t += 10), .dev = dev, .link = link, .aux = aux,
			      .flags = flags, .kind = (uint16_t)kind, .phase = (uint16_t)phase,
			      .err = (int16_t)err };
	b->e[b->n++] = e;
}

static bool quiet_child;   /* pm() logs nothing for CHILD (M_NO_DRIVER_QUIET) */

static void pm(struct evbuf *b, uint32_t dev, int resume, unsigned ph, int drop_end)
{
	if (quiet_child && dev == CHILD)
		return;
	add(b, resume ? DL_EV_RESUME_START : DL_EV_SUSPEND_START, dev, DL_NONE, DL_NONE, 0, ph, 0);
	if (!drop_end)
		add(b, resume ? DL_EV_RESUME_END : DL_EV_SUSPEND_END, dev, DL_NONE, DL_NONE, 0, ph, 0);
}

/* Writes one run with the log API; returns its run_id. */
static int64_t write_run(enum mutation m)
{
	struct dl_run_info ri = { .scenario = "two-devices", .order = "hand", .mode = "des",
				  .version = "test", .kernel = run_kernel, .seed = 1, .workers = 1,
				  .devices = 3, .links = 1 };
	uint32_t lf = m == M_STATELESS_SWAP ? DL_FLAG_STATELESS :
		      m == M_RPM_OK || m == M_RPM_BAD ? DL_FLAG_MANAGED | DL_FLAG_PM_RUNTIME :
		      m == M_CYCLE_EARLY_PROBE ? DL_FLAG_MANAGED | DL_FLAG_INFERRED | DL_FLAG_CYCLE :
		      m == M_SSO_SWAP ? DL_FLAG_MANAGED | DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED :
		      DL_FLAG_MANAGED;
	struct evbuf *b = calloc(1, sizeof(*b));
	/* dpm_list: registration order, or as the dpm_move events below leave it */
	const uint32_t *ord = m == M_DPM_MOVE_OK ? (const uint32_t[]){ SUP, CHILD, CON } :
			      m == M_DPM_MOVE_BAD ? (const uint32_t[]){ CON, CHILD, SUP } :
			      (const uint32_t[]){ SUP, CON, CHILD };
	struct dl_log *l;
	char err[512];
	int64_t run = -1;

	if (!b || dl_log_open(dbpath, &l, err, sizeof(err)))
		return -1;
	quiet_child = m == M_NO_DRIVER_QUIET;
	dl_log_run_begin(l, &ri, &run);
	dl_log_device(l, SUP, "supp'lier\n<b>", UINT32_MAX, 0);
	dl_log_device(l, CON, "consumer\"", UINT32_MAX, 1);
	dl_log_device(l, CHILD, "child", SUP, 0);
	add(b, DL_EV_REGISTER, SUP, DL_NONE, DL_NONE, 0, 0, 0);
	add(b, DL_EV_REGISTER, CON, DL_NONE, DL_NONE, 0, 0, 0);
	add(b, DL_EV_REGISTER, CHILD, DL_NONE, SUP, 0, 0, 0);
	add(b, DL_EV_LINK_ADD, CON, 0, SUP, lf,
	    lf == DL_FLAG_STATELESS ? DL_STATE_NONE : DL_STATE_DORMANT, 0);
	if (m == M_CYCLE)
		add(b, DL_EV_LINK_ADD, SUP, 1, CON, DL_FLAG_MANAGED, DL_STATE_DORMANT, 0);
	/* (an SSO link is no dependency: SUP -> CON would not be refused) */
	if (m != M_SSO_SWAP)
		add(b, DL_EV_LINK_REFUSED, SUP, DL_NONE, CON, DL_FLAG_MANAGED,
		    DL_REFUSE_REVERSE_DEPENDENCY, 0);
	if (m == M_BAD_REFUSAL)
		add(b, DL_EV_LINK_REFUSED, CON, DL_NONE, SUP, DL_FLAG_MANAGED,
		    DL_REFUSE_REVERSE_DEPENDENCY, 0);
	if (m == M_DPM_MOVE_OK || m == M_DPM_MOVE_BAD)
		add(b, DL_EV_DPM_MOVE, SUP, DL_NONE, DL_NONE, 0, 0, 0);
	if (m == M_DPM_MOVE_OK) {
		add(b, DL_EV_DPM_MOVE, CHILD, DL_NONE, DL_NONE, 0, 0, 0);
		add(b, DL_EV_DPM_MOVE, CON, DL_NONE, DL_NONE, 0, 0, 0);
	}
	if (m == M_EARLY_PROBE || m == M_CYCLE_EARLY_PROBE) {
		add(b, DL_EV_PROBE_START, CON, DL_NONE, DL_NONE, 0, 0, 0);
		add(b, DL_EV_PROBE_END, CON, DL_NONE, DL_NONE, 0, 0, 0);
	}
	add(b, DL_EV_PROBE_START, SUP, DL_NONE, DL_NONE, 0, 0, 0);
	add(b, DL_EV_PROBE_END, SUP, DL_NONE, DL_NONE, 0, 0, 0);
	if ((lf & DL_FLAG_MANAGED) && m != M_DORMANT_SWAP)
		add(b, DL_EV_LINK_STATE, CON, 0, SUP, lf, DL_STATE_AVAILABLE, 0);
	if (m != M_EARLY_PROBE && m != M_CYCLE_EARLY_PROBE) {
		/* a first attempt fails: the device is not bound */
		add(b, DL_EV_PROBE_START, CON, DL_NONE, DL_NONE, 0, 0, 0);
		add(b, DL_EV_PROBE_END, CON, DL_NONE, DL_NONE, 0, 0, -EIO);
		add(b, DL_EV_PROBE_START, CON, DL_NONE, DL_NONE, 0, 0, 0);
		add(b, DL_EV_PROBE_END, CON, DL_NONE, DL_NONE, 0, 0, 0);
	}
	if ((lf & DL_FLAG_MANAGED) && m != M_DORMANT_SWAP)
		add(b, DL_EV_LINK_STATE, CON, 0, SUP, lf, DL_STATE_ACTIVE, 0);
	add(b, DL_EV_PROBE_START, CHILD, DL_NONE, DL_NONE, 0, 0, 0);
	add(b, DL_EV_PROBE_END, CHILD, DL_NONE, DL_NONE, 0, 0,
	    m == M_NO_DRIVER_PM || m == M_NO_DRIVER_QUIET ? -EIO : 0);
	if (m == M_RPM_OK || m == M_RPM_BAD) {
		add(b, DL_EV_RPM_RESUME, SUP, DL_NONE, DL_NONE, 0, 0, 0);
		add(b, DL_EV_RPM_RESUME, CON, DL_NONE, DL_NONE, 0, 0, 0);
		if (m == M_RPM_BAD) {
			add(b, DL_EV_RPM_SUSPEND, SUP, DL_NONE, DL_NONE, 0, 0, 0);
			add(b, DL_EV_RPM_SUSPEND, CON, DL_NONE, DL_NONE, 0, 0, 0);
		} else {
			add(b, DL_EV_RPM_SUSPEND, CON, DL_NONE, DL_NONE, 0, 0, 0);
			add(b, DL_EV_RPM_SUSPEND, SUP, DL_NONE, DL_NONE, 0, 0, 0);
		}
	}
	if (m == M_FAILED_CALLBACK) {
		/* prepare everywhere, then the consumer's suspend fails: abort, resume */
		for (int i = 0; i < 3; i++)
			pm(b, ord[i], 0, DL_PH_PREPARE, 0);
		pm(b, CHILD, 0, DL_PH_SUSPEND, 0);
		add(b, DL_EV_SUSPEND_START, CON, DL_NONE, DL_NONE, 0, DL_PH_SUSPEND, 0);
		add(b, DL_EV_SUSPEND_END, CON, DL_NONE, DL_NONE, 0, DL_PH_SUSPEND, -EBUSY);
		pm(b, CHILD, 1, DL_PH_RESUME, 0);
		for (int i = 2; i >= 0; i--)
			pm(b, ord[i], 1, DL_PH_COMPLETE, 0);
	}
	/* dpm_prepare(): dpm_list forward, on the main thread (worker 0), one at a time */
	if (m == M_PREPARE_OVERLAP) {
		add(b, DL_EV_SUSPEND_START, ord[0], DL_NONE, DL_NONE, 0, DL_PH_PREPARE, 0);
		pm(b, ord[1], 0, DL_PH_PREPARE, 0);
		add(b, DL_EV_SUSPEND_END, ord[0], DL_NONE, DL_NONE, 0, DL_PH_PREPARE, 0);
		pm(b, ord[2], 0, DL_PH_PREPARE, 0);
	} else if (m != M_FAILED_CALLBACK) {
		for (int i = 0; i < 3; i++) {
			pm(b, ord[m == M_PREPARE_REVERSE ? 2 - i : i], 0, DL_PH_PREPARE, 0);
			if (m == M_PREPARE_THREADS && i == 1)
				b->e[b->n - 1].worker = b->e[b->n - 2].worker = 1;
		}
	}
	for (unsigned p = DL_PH_SUSPEND; p <= DL_PH_SUSPEND_NOIRQ && m != M_FAILED_CALLBACK; p++) {
		int swap = p == DL_PH_SUSPEND && (m == M_SWAP_SUSPEND || m == M_STATELESS_SWAP ||
						  m == M_DORMANT_SWAP || m == M_SSO_SWAP);

		if (swap)
			pm(b, SUP, 0, p, 0);
		pm(b, CON, 0, p, 0);
		pm(b, CHILD, 0, p, 0);
		if (!swap && !(m == M_SKIP_LATE && p == DL_PH_SUSPEND_LATE))
			pm(b, SUP, 0, p, 0);
	}
	if (m != M_FAILED_SUSPENDED && m != M_FAILED_CALLBACK) {
		for (unsigned p = DL_PH_RESUME_NOIRQ; p <= DL_PH_RESUME; p++) {
			if (!(m == M_SKIP_LATE && p == DL_PH_RESUME_EARLY))
				pm(b, SUP, 1, p, 0);
			if (!(m == M_SKIP_RESUME && p == DL_PH_RESUME))
				pm(b, CON, 1, p, m == M_DROP_RESUME_END && p == DL_PH_RESUME);
			pm(b, CHILD, 1, p, 0);
		}
		/* dpm_complete(): the prepared devices backward */
		for (int i = 0; i < 3; i++)
			pm(b, ord[m == M_COMPLETE_FORWARD ? i : 2 - i], 1, DL_PH_COMPLETE, 0);
	}
	if (m == M_EARLY_UNBIND) {
		add(b, DL_EV_UNBIND_START, SUP, DL_NONE, DL_NONE, 0, 0, 0);
		add(b, DL_EV_UNBIND_END, SUP, DL_NONE, DL_NONE, 0, 0, 0);
	}
	add(b, DL_EV_UNBIND_START, CON, DL_NONE, DL_NONE, 0, 0, 0);
	add(b, DL_EV_UNBIND_END, CON, DL_NONE, DL_NONE, 0, 0, 0);
	if ((lf & DL_FLAG_MANAGED) && m != M_DORMANT_SWAP)
		add(b, DL_EV_LINK_STATE, CON, 0, SUP, lf, DL_STATE_AVAILABLE, 0);
	if (m != M_EARLY_UNBIND) {
		add(b, DL_EV_UNBIND_START, SUP, DL_NONE, DL_NONE, 0, 0, 0);
		add(b, DL_EV_UNBIND_END, SUP, DL_NONE, DL_NONE, 0, 0, 0);
	}
	add(b, DL_EV_LINK_DEL, CON, 0, SUP, lf, 0, 0);
	dl_log_events(l, b->e, b->n);
	if (m != M_RUNNING)
		dl_log_run_end(l, m == M_FAILED_SUSPENDED || m == M_FAILED_CALLBACK ? "failed" : "ok",
			       b->t, NULL, 0);
	else {
		/* leave it 'running': flush the events but never end the run */
		(void)dl_log_event_count(l);
	}
	if (m == M_RUNNING) {
		/* closing would mark it 'interrupted'; put 'running' back by hand */
		dl_log_close(l);
		sqlite3 *db;

		if (sqlite3_open(dbpath, &db) == SQLITE_OK) {
			char sql[128];

			snprintf(sql, sizeof(sql), "UPDATE runs SET status = 'running' WHERE run_id = %lld",
				 (long long)run);
			sqlite3_exec(db, sql, NULL, NULL, NULL);
			sqlite3_close(db);
		}
	} else {
		dl_log_close(l);
	}
	free(b);
	return run;
}

static int check(int64_t run, struct dl_check_result *res)
{
	sqlite3 *db;
	char err[512];
	int rc;

	if (dl_log_open_existing(dbpath, &db, err, sizeof(err)))
		return -1000;
	rc = dl_check_run_ex(db, run, 1, stdout, res);
	sqlite3_close(db);
	return rc;
}

static int64_t stored(int64_t run, int inv)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t n = -1;

	if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM violations WHERE run_id = ? AND"
			       " invariant = ?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run);
		sqlite3_bind_int(st, 2, inv);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return n;
}

static void expect_only(enum mutation m, int inv)
{
	struct dl_check_result res;
	int64_t run = write_run(m);

	CU_ASSERT_FATAL(run > 0);
	CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_DONE);
	CU_ASSERT(res.events > 40);
	CU_ASSERT(res.by_inv[inv] >= 1);
	CU_ASSERT_EQUAL(res.total, res.by_inv[inv]);
	CU_ASSERT_EQUAL(stored(run, inv), (int64_t)res.by_inv[inv]);
	/* re-checking replaces the rows instead of adding to them */
	CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_DONE);
	CU_ASSERT_EQUAL(stored(run, inv), (int64_t)res.by_inv[inv]);
}

static void test_correct_log(void)
{
	struct dl_check_result res;
	uint64_t nv = 99;
	int64_t run = write_run(M_NONE);

	CU_ASSERT_FATAL(run > 0);
	CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_DONE);
	CU_ASSERT_EQUAL(res.total, 0);
	CU_ASSERT(res.events > 40);
	CU_ASSERT_STRING_EQUAL(res.status, "ok");
	CU_ASSERT_EQUAL(dl_check_path(dbpath, run, 0, &nv), DL_CHECK_DONE);
	CU_ASSERT_EQUAL(nv, 0);
	CU_ASSERT_EQUAL(dl_check_path(dbpath, 0, 0, &nv), DL_CHECK_DONE);   /* newest */
	CU_ASSERT_EQUAL(dl_check_path(dbpath, 12345, 0, &nv), -ENOENT);
}

static void test_swap_suspend(void) { expect_only(M_SWAP_SUSPEND, 3); }
static void test_stateless_swap(void) { expect_only(M_STATELESS_SWAP, 3); }
static void test_drop_resume_end(void) { expect_only(M_DROP_RESUME_END, 4); }
static void test_early_probe(void) { expect_only(M_EARLY_PROBE, 1); }

/*
 * A device with no driver bound runs no PM callback (sim/engine/oploop.h
 * dl_pm_part(): the kernel takes the driver's dev_pm_ops only "if
 * (dev->driver && ...)"): one that does breaks invariant 4, and its parent
 * need not wait for callbacks it has not got.
 */
static void test_no_driver_runs_no_pm_callback(void)
{
	struct dl_check_result res;
	int64_t run;

	expect_only(M_NO_DRIVER_PM, 4);
	run = write_run(M_NO_DRIVER_QUIET);
	CU_ASSERT_FATAL(run > 0);
	CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_DONE);
	CU_ASSERT_EQUAL(res.total, 0);
}
/* device_links_check_suppliers() skips SYNC_STATE_ONLY links only, not CYCLE ones */
static void test_cycle_early_probe(void) { expect_only(M_CYCLE_EARLY_PROBE, 1); }
/*
 * Item 10 of issue 18: an AVAILABLE SYNC_STATE_ONLY link orders suspend in
 * 6.12 and 6.16 (dpm_wait_for_consumers() skips only DORMANT links) and not
 * from 6.18; a run without runs.kernel is held to the later rule.
 */
static void test_sso_swap_by_kernel(void)
{
	struct dl_check_result res;
	static const struct { const char *kernel; int violations; } c[] = {
		{ "6.12", 1 }, { "6.16", 1 }, { "6.17", 1 }, { "6.18", 0 }, { "7.3", 0 }, { NULL, 0 },
	};

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int64_t run;

		run_kernel = c[i].kernel;
		run = write_run(M_SSO_SWAP);
		CU_ASSERT_FATAL(run > 0);
		CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_DONE);
		CU_ASSERT_EQUAL(res.total, res.by_inv[3]);
		/* the swap also suspends SUP before its child: one violation in every version */
		CU_ASSERT_EQUAL(res.by_inv[3], 1 + c[i].violations);
	}
	run_kernel = "6.12";
}

static void test_early_unbind(void) { expect_only(M_EARLY_UNBIND, 2); }
static void test_cycle(void)
{
	/* the reverse managed link also breaks 1 and 2 (no order satisfies a cycle); what
	 * matters here is that 6 flags the link_add that closes it, exactly once */
	struct dl_check_result res;
	int64_t run = write_run(M_CYCLE);

	CU_ASSERT_FATAL(run > 0);
	CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_DONE);
	CU_ASSERT_EQUAL(res.by_inv[6], 1);
	CU_ASSERT_EQUAL(stored(run, 6), 1);
}
static void test_failed_suspended(void) { expect_only(M_FAILED_SUSPENDED, 4); }
static void test_prepare_reverse(void) { expect_only(M_PREPARE_REVERSE, 3); }
static void test_complete_forward(void) { expect_only(M_COMPLETE_FORWARD, 3); }
static void test_prepare_threads(void) { expect_only(M_PREPARE_THREADS, 3); }
static void test_prepare_overlap(void) { expect_only(M_PREPARE_OVERLAP, 3); }
/*
 * dpm_suspend_late() takes every device dpm_suspend() left on
 * dpm_suspended_list: a prepared device skipping a suspend phase (and so its
 * resume) is a violation, as is a resume that leaves a device suspended.
 */
static void test_skip_late(void) { expect_only(M_SKIP_LATE, 4); }
static void test_skip_resume(void) { expect_only(M_SKIP_RESUME, 4); }

static void test_rpm_bad(void) { expect_only(M_RPM_BAD, 5); }
static void test_bad_refusal(void) { expect_only(M_BAD_REFUSAL, 6); }

static void test_dpm_move_bad(void)
{
	struct dl_check_result res;
	int64_t run = write_run(M_DPM_MOVE_BAD);

	CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_DONE);
	/* the child is before its parent and the consumer before its supplier */
	CU_ASSERT_EQUAL(res.by_inv[7], 2);
	CU_ASSERT_EQUAL(res.total, 2);
	CU_ASSERT_EQUAL(stored(run, 7), 2);
}

/*
 * The rules run while the events are read for the verification: a violation
 * met before a corrupt row is neither counted, shown nor stored.
 */
static void test_violation_then_corrupt_row(void)
{
	struct dl_check_result res;
	int64_t run = write_run(M_SWAP_SUSPEND);
	char *text = NULL, sql[160];
	size_t len = 0;
	sqlite3 *db;
	FILE *out;
	int rc = -1;

	CU_ASSERT_FATAL(run > 0);
	CU_ASSERT_FATAL(sqlite3_open(dbpath, &db) == SQLITE_OK);
	/* the last event (the consumer's link_del, long after the swapped suspend) */
	snprintf(sql, sizeof(sql), "UPDATE events SET kind = 'bogus' WHERE run_id = %lld AND seq ="
		 " (SELECT max(seq) FROM events WHERE run_id = %lld)", (long long)run, (long long)run);
	CU_ASSERT_FATAL(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	out = open_memstream(&text, &len);
	CU_ASSERT_FATAL(out != NULL);
	rc = dl_check_run_ex(db, run, 1, out, &res);
	fclose(out);
	/* mended again: the later tests check the whole database */
	snprintf(sql, sizeof(sql), "UPDATE events SET kind = 'link_del' WHERE run_id = %lld AND"
		 " kind = 'bogus'", (long long)run);
	CU_ASSERT(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CU_ASSERT_EQUAL(rc, DL_CHECK_CORRUPT);
	CU_ASSERT(res.corrupt >= 1);
	CU_ASSERT_EQUAL(res.total, 0);
	CU_ASSERT_EQUAL(res.by_inv[3], 0);
	CU_ASSERT_EQUAL(stored(run, 3), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "unknown kind 'bogus'"));
	CU_ASSERT_PTR_NULL(strstr(text, "invariant 3"));
	free(text);
}

/* check's verbose output of RUN on DB: its text (to free), the verdict in *RC and RES. */
static char *check_text(sqlite3 *db, int64_t run, int *rc, struct dl_check_result *res)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return NULL;
	*rc = dl_check_run_ex(db, run, 1, out, res);
	fclose(out);
	return text;
}

/*
 * check streams a run's events in rowid order, as the writer stores them;
 * rows stored out of seq order (seq still dense) are read again by seq and
 * give the same verdict, violations and output, with the index and without
 * it (an interrupted run's log has none).
 */
static void test_rows_out_of_order(void)
{
	struct dl_check_result res;
	int64_t run = write_run(M_SWAP_SUSPEND);
	char *before, *after, *noidx, sql[440];
	int rc = -1, rc2 = -1, rc3 = -1;
	uint64_t inv3;
	sqlite3 *db;

	CU_ASSERT_FATAL(run > 0);
	CU_ASSERT_FATAL(sqlite3_open(dbpath, &db) == SQLITE_OK);
	before = check_text(db, run, &rc, &res);
	inv3 = res.by_inv[3];
	snprintf(sql, sizeof(sql), "CREATE TEMP TABLE ev AS SELECT * FROM events WHERE run_id = %lld;"
		 " DELETE FROM events WHERE run_id = %lld;"
		 " INSERT INTO events SELECT * FROM temp.ev ORDER BY CASE seq WHEN 5 THEN 6 WHEN 6"
		 " THEN 5 ELSE seq END; DROP TABLE temp.ev",
		 (long long)run, (long long)run);
	CU_ASSERT_FATAL(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	after = check_text(db, run, &rc2, &res);
	CU_ASSERT_EQUAL(res.by_inv[3], inv3);
	CU_ASSERT_EQUAL(res.corrupt, 0);
	CU_ASSERT(sqlite3_exec(db, "DROP INDEX events_run_seq", NULL, NULL, NULL) == SQLITE_OK);
	noidx = check_text(db, run, &rc3, &res);
	CU_ASSERT_EQUAL(res.by_inv[3], inv3);
	CU_ASSERT(sqlite3_exec(db, "CREATE INDEX events_run_seq ON events(run_id, seq)", NULL, NULL,
			       NULL) == SQLITE_OK);
	sqlite3_close(db);
	CU_ASSERT_EQUAL(rc, DL_CHECK_DONE);
	CU_ASSERT_EQUAL(rc2, DL_CHECK_DONE);
	CU_ASSERT_EQUAL(rc3, DL_CHECK_DONE);
	CU_ASSERT(inv3 >= 1);
	CU_ASSERT_FATAL(before && after && noidx);
	CU_ASSERT_STRING_EQUAL(after, before);
	CU_ASSERT_STRING_EQUAL(noidx, before);
	CU_ASSERT_EQUAL(stored(run, 3), (int64_t)inv3);
	free(before);
	free(after);
	free(noidx);
}

static void expect_clean(enum mutation m, const char *status)
{
	struct dl_check_result res;
	int64_t run = write_run(m);

	CU_ASSERT_FATAL(run > 0);
	CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_DONE);
	CU_ASSERT_EQUAL(res.total, 0);
	CU_ASSERT_STRING_EQUAL(res.status, status);
}

static void test_rpm_ok(void) { expect_clean(M_RPM_OK, "ok"); }
static void test_failed_callback(void) { expect_clean(M_FAILED_CALLBACK, "failed"); }
static void test_dpm_move_ok(void) { expect_clean(M_DPM_MOVE_OK, "ok"); }

static void test_dormant_swap(void)
{
	/* the child still orders the parent: one violation of 3 (parent/child), none for the
	 * DORMANT link */
	struct dl_check_result res;
	int64_t run = write_run(M_DORMANT_SWAP);

	CU_ASSERT_FATAL(run > 0);
	CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_DONE);
	CU_ASSERT_EQUAL(res.by_inv[3], 1);
	CU_ASSERT_EQUAL(res.total, 1);
}

static void test_running(void)
{
	struct dl_check_result res;
	int64_t run = write_run(M_RUNNING);

	CU_ASSERT_FATAL(run > 0);
	CU_ASSERT_EQUAL(check(run, &res), DL_CHECK_INCOMPLETE);
	CU_ASSERT(res.incomplete);
	CU_ASSERT_EQUAL(res.total, 0);
}

/*
 * Invariant 6 against a plain search: random parents and links on a few
 * devices, added and deleted, some SYNC_STATE_ONLY and cleared later (an
 * edge that appears without a search), some parents known only from their
 * register event.  The links table then holds links
 * that cross each other at different times, so the checker starts from the
 * parents' order and mends it at every add (dl_check_rules.c topo_*()).  In half
 * of the runs no add closes a cycle, so the mended order is used to the
 * end; in the others the adds are blind.  Each add that closes a cycle of
 * links and parents must be one violation, and no other add; and so must
 * each refusal as a reverse dependency where the consumer does not reach
 * the supplier (a search the order cut short would make one more).
 */
#define RC_DEV 24
#define RC_OPS 90

struct rc_graph {
	uint32_t parent[RC_DEV];
	uint32_t c[RC_OPS], s[RC_OPS];
	uint8_t live[RC_OPS], sso[RC_OPS];
	uint32_t nlink;
};

static bool rc_reaches(const struct rc_graph *g, uint32_t from, uint32_t to, uint8_t *seen)
{
	if (from == to)
		return true;
	if (seen[from])
		return false;
	seen[from] = 1;
	for (uint32_t d = 0; d < RC_DEV; d++)
		if (g->parent[d] == from && rc_reaches(g, d, to, seen))
			return true;
	for (uint32_t l = 0; l < g->nlink; l++)
		if (g->live[l] && !g->sso[l] && g->s[l] == from && rc_reaches(g, g->c[l], to, seen))
			return true;
	return false;
}

static bool rc_closes(const struct rc_graph *g, uint32_t c, uint32_t s)
{
	uint8_t seen[RC_DEV] = { 0 };

	return rc_reaches(g, c, s, seen);
}

/* Writes one random run; *EXPECT: the adds that close a cycle. */
static int64_t write_random_links(unsigned seed, bool acyclic, uint64_t *expect)
{
	struct dl_run_info ri = { .scenario = "random-links", .order = "hand", .mode = "des",
				  .version = "test", .kernel = run_kernel, .seed = seed, .workers = 1,
				  .devices = RC_DEV, .links = RC_OPS };
	struct rc_graph g = { .nlink = 0 };
	struct dl_event *ev = calloc(RC_DEV + RC_OPS, sizeof(*ev));
	size_t n = 0;
	int64_t t = 0, run = -1;
	struct dl_log *l;
	char err[512], name[16];

	*expect = 0;
	if (!ev || dl_log_open(dbpath, &l, err, sizeof(err))) {
		free(ev);
		return -1;
	}
	srand(seed);
	dl_log_run_begin(l, &ri, &run);
	for (uint32_t d = 0; d < RC_DEV; d++) {
		g.parent[d] = d && rand() % 2 ? (uint32_t)rand() % d : DL_NONE;
		snprintf(name, sizeof(name), "d%u", d);
		/* a third of the parents only in the register event: an edge the order learns late */
		dl_log_device(l, d, name, d % 3 ? g.parent[d] : DL_NONE, 0);
		ev[n++] = (struct dl_event){ .t_ns = t += 10, .dev = d, .link = DL_NONE,
					     .aux = g.parent[d], .kind = DL_EV_REGISTER };
	}
	for (int op = 0; op < RC_OPS; op++) {
		uint32_t l0 = g.nlink ? (uint32_t)rand() % g.nlink : 0, c, s;
		int what = rand() % 8;

		if (what == 0 && g.nlink && g.live[l0]) {               /* delete a link */
			g.live[l0] = 0;
			ev[n++] = (struct dl_event){ .t_ns = t += 10, .dev = g.c[l0], .link = l0,
						     .aux = g.s[l0], .kind = DL_EV_LINK_DEL };
			continue;
		}
		if (what == 1 && g.nlink && g.live[l0] && g.sso[l0] &&
		    !(acyclic && rc_closes(&g, g.c[l0], g.s[l0]))) {    /* SSO cleared */
			g.sso[l0] = 0;
			ev[n++] = (struct dl_event){ .t_ns = t += 10, .dev = g.c[l0], .link = l0,
						     .aux = g.s[l0], .flags = DL_FLAG_MANAGED,
						     .kind = DL_EV_LINK_STATE,
						     .phase = DL_STATE_AVAILABLE };
			continue;
		}
		c = (uint32_t)rand() % RC_DEV;
		s = (uint32_t)rand() % RC_DEV;
		if (c == s)
			continue;
		if (what == 3) {        /* refused as a reverse dependency: true only if C reaches S */
			*expect += !rc_closes(&g, c, s);
			ev[n++] = (struct dl_event){ .t_ns = t += 10, .dev = c, .link = DL_NONE,
						     .aux = s, .flags = DL_FLAG_MANAGED,
						     .kind = DL_EV_LINK_REFUSED,
						     .phase = DL_REFUSE_REVERSE_DEPENDENCY };
			continue;
		}
		if (acyclic && what != 2 && rc_closes(&g, c, s))
			continue;
		g.c[g.nlink] = c;
		g.s[g.nlink] = s;
		g.sso[g.nlink] = what == 2;
		if (what != 2 && rc_closes(&g, c, s))
			(*expect)++;
		g.live[g.nlink] = 1;
		ev[n++] = (struct dl_event){ .t_ns = t += 10, .dev = c, .link = g.nlink, .aux = s,
					     .flags = DL_FLAG_MANAGED |
						      (what == 2 ? DL_FLAG_SYNC_STATE_ONLY : 0),
					     .kind = DL_EV_LINK_ADD, .phase = DL_STATE_DORMANT };
		g.nlink++;
	}
	dl_log_events(l, ev, n);
	dl_log_run_end(l, "ok", t, NULL, 0);
	dl_log_close(l);
	free(ev);
	return run;
}

static void test_cycles_random(void)
{
	unsigned runs_with_cycles = 0;

	for (unsigned seed = 1; seed <= 120; seed++) {
		struct dl_check_result res;
		uint64_t expect;
		int64_t run = write_random_links(seed, seed % 2, &expect);
		sqlite3 *db;
		char err[512];

		CU_ASSERT_FATAL(run > 0);
		CU_ASSERT_FATAL(dl_log_open_existing(dbpath, &db, err, sizeof(err)) == 0);
		CU_ASSERT_EQUAL(dl_check_run_ex(db, run, 0, stdout, &res), DL_CHECK_DONE);
		sqlite3_close(db);
		if (res.by_inv[6] != expect)
			printf("\nseed %u: %" PRIu64 " violations found, %" PRIu64 " made\n", seed,
			       res.by_inv[6], expect);
		CU_ASSERT_EQUAL(res.by_inv[6], expect);
		runs_with_cycles += expect > 0;
	}
	CU_ASSERT(runs_with_cycles >= 30);       /* the blind half does close cycles */
}

static int run_cmd(int argc, const char *const *args)
{
	char *argv[8];

	for (int i = 0; i < argc; i++)
		argv[i] = (char *)args[i];
	argv[argc] = NULL;
	fflush(stdout);
	return cmd_check(argc, argv);
}

static void test_cmd(void)
{
	int64_t good = write_run(M_NONE), bad = write_run(M_SWAP_SUSPEND);
	char gs[32], bs[32], txt[700];
	FILE *f;

	snprintf(gs, sizeof(gs), "%lld", (long long)good);
	snprintf(bs, sizeof(bs), "%lld", (long long)bad);
	snprintf(txt, sizeof(txt), "%s/text", tmpdir);
	f = fopen(txt, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("not a database at all, not even close\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(run_cmd(2, (const char *[]){ "check", "--help" }), 0);
	CU_ASSERT_EQUAL(run_cmd(1, (const char *[]){ "check" }), 2);
	CU_ASSERT_EQUAL(run_cmd(3, (const char *[]){ "check", dbpath, "--bogus" }), 2);
	CU_ASSERT_EQUAL(run_cmd(4, (const char *[]){ "check", dbpath, "--run", gs }), 0);
	CU_ASSERT_EQUAL(run_cmd(2, (const char *[]){ "check", dbpath }), 1);  /* newest: bad */
	CU_ASSERT_EQUAL(run_cmd(4, (const char *[]){ "check", dbpath, "--run", bs }), 1);
	CU_ASSERT_EQUAL(run_cmd(4, (const char *[]){ "check", dbpath, "--run", "999999" }), 2);
	CU_ASSERT_EQUAL(run_cmd(4, (const char *[]){ "check", dbpath, "--run", "x" }), 2);
	CU_ASSERT_EQUAL(run_cmd(3, (const char *[]){ "check", dbpath, "--all" }), 1);
	CU_ASSERT_EQUAL(run_cmd(2, (const char *[]){ "check", txt }), 2);
	CU_ASSERT_EQUAL(run_cmd(2, (const char *[]){ "check", "/nonexistent/x.db" }), 2);
}

int main(void)
{
	CU_pSuite s;
	unsigned nf;

	if (!mkdtemp(tmpdir))
		return 2;
	snprintf(dbpath, sizeof(dbpath), "%s/check.db", tmpdir);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("check", NULL, NULL);
	CU_add_test(s, "a correct log passes", test_correct_log);
	CU_add_test(s, "supplier suspends first: invariant 3", test_swap_suspend);
	CU_add_test(s, "STATELESS link counts for invariant 3", test_stateless_swap);
	CU_add_test(s, "DORMANT link does not count for invariant 3", test_dormant_swap);
	CU_add_test(s, "missing resume_end: invariant 4", test_drop_resume_end);
	CU_add_test(s, "consumer probes before supplier bound: invariant 1", test_early_probe);
	CU_add_test(s, "a device with no driver runs no PM callback: invariant 4",
		    test_no_driver_runs_no_pm_callback);
	CU_add_test(s, "CYCLE link gates probe: invariant 1", test_cycle_early_probe);
	CU_add_test(s, "SYNC_STATE_ONLY link orders suspend up to 6.17: invariant 3",
		    test_sso_swap_by_kernel);
	CU_add_test(s, "supplier unbinds first: invariant 2", test_early_unbind);
	CU_add_test(s, "cycle of links: invariant 6", test_cycle);
	CU_add_test(s, "a violation before a corrupt row is not reported", test_violation_then_corrupt_row);
	CU_add_test(s, "events stored out of seq order: read by seq, same verdict", test_rows_out_of_order);
	CU_add_test(s, "random links and parents, cycles found as a search finds them: invariant 6",
		    test_cycles_random);
	CU_add_test(s, "failed run left suspended: invariant 4", test_failed_suspended);
	CU_add_test(s, "a running run is incomplete", test_running);
	CU_add_test(s, "runtime PM in order passes", test_rpm_ok);
	CU_add_test(s, "supplier runtime-suspends first: invariant 5", test_rpm_bad);
	CU_add_test(s, "failed suspend callback, all resumed: passes", test_failed_callback);
	CU_add_test(s, "refusal reason not borne out: invariant 6", test_bad_refusal);
	CU_add_test(s, "dpm_list reordered with its dependents: passes", test_dpm_move_ok);
	CU_add_test(s, "supplier moved behind its dependents: invariant 7", test_dpm_move_bad);
	CU_add_test(s, "prepare walks dpm_list backward: invariant 3", test_prepare_reverse);
	CU_add_test(s, "complete in prepare order: invariant 3", test_complete_forward);
	CU_add_test(s, "a prepare on a worker: invariant 3", test_prepare_threads);
	CU_add_test(s, "two prepares at once: invariant 3", test_prepare_overlap);
	CU_add_test(s, "a device skips suspend_late: invariant 4", test_skip_late);
	CU_add_test(s, "a resume leaves a device suspended: invariant 4", test_skip_resume);
	CU_add_test(s, "dlsim check exit statuses", test_cmd);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	nf = CU_get_number_of_failures();
	CU_cleanup_registry();
	if (!nf) {
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return nf ? 1 : 0;
}
