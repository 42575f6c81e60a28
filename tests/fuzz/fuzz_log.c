/*
 * fuzz_log.c - libFuzzer harnesses for `dlsim check` (fuzz_check),
 * `dlsim report` (fuzz_report, built with -DFUZZ_REPORT), `dlsim diff`
 * (fuzz_diff, -DFUZZ_DIFF) and `dlsim explain` (fuzz_explain,
 * -DFUZZ_EXPLAIN) on a database built from the fuzz bytes.
 *
 * The bytes are read as a small program: a header (device count, run status,
 * tampering switches), a parent per device, then 4-byte ops that log what the
 * engine logs (register, probe, suspend/resume phases, links, unbind, runtime
 * PM, ...) with advancing times, plus a "raw" op that writes any kind, phase,
 * id and time, in or out of range.  Random bytes thus give logs that are
 * mostly well-formed (the rules are reached and exercised) and sometimes
 * corrupt (the verification is).  The database is a copy of a schema made by
 * dl_log_open() (so its marker and columns are dlsim's); rows are inserted
 * with bound parameters.  fuzz_check runs dl_check_run_ex() on it in memory
 * (sqlite3_deserialize(): no file, violations stored, printed to /dev/null);
 * fuzz_report writes it to a file on /dev/shm and runs dl_report_write_opts()
 * (data_only: data files, traces and index.html, no gnuplot), which
 * opens it like `dlsim report` does: slower, a few hundred inputs a second.
 * fuzz_diff and fuzz_explain do what their verbs do: the log verified first
 * (dl_check_verify(), the readers' step), then, for a log that is not
 * corrupt, dl_diff_runs() of run 1 against run 2 (run 1 again, its device
 * names reversed, so that the orders disagree; in memory) or
 * dl_explain_path() of run 1 (from the file, as the verb opens it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "report/explain.h"
#include "report/report.h"
#include "sim/core/dl_core.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_diff.h"
#include "sim/log/dl_log.h"

/* report and explain open the database by its path; check and diff take it in memory */
#if defined(FUZZ_REPORT) || defined(FUZZ_EXPLAIN)
#define FUZZ_FILE 1
#endif

#define MAX_DEV 24
#define MAX_EVENTS 4000

static char dir[256], db_path[300], out_dir[300];
static unsigned char *tmpl;
static size_t tmpl_len;
static FILE *devnull;

struct gen {
	sqlite3 *db;
	sqlite3_stmt *ev, *link;
	const uint8_t *p, *end;
	uint32_t ndev, nlink;
	int64_t seq, t, nev;
	int seq_glitch;
};

static int byte(struct gen *g)
{
	return g->p < g->end ? *g->p++ : -1;
}

/* A schema exactly as dl_log_open() makes it, kept as bytes and copied per input. */
static int make_template(void)
{
	struct dl_log *l;
	sqlite3 *db;
	char err[256];
	FILE *f;
	long n;

	/* per-connection bulk allocations cost more than the work under ASan */
	sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
	sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0);
	/* run.sh names a scratch folder it removes; else one per process on /dev/shm */
	if (getenv("DLSIM_FUZZ_TMP"))
		snprintf(dir, sizeof(dir), "%s", getenv("DLSIM_FUZZ_TMP"));
	else
		snprintf(dir, sizeof(dir), "/dev/shm/dlsim-fuzz-%d", (int)getpid());
	snprintf(db_path, sizeof(db_path), "%s/log.db", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/report", dir);
	if (mkdir(dir, 0700) && access(dir, W_OK))
		return -1;
	unlink(db_path);
	if (dl_log_open(db_path, &l, err, sizeof(err)))
		return -1;
	dl_log_close(l);
	if (sqlite3_open(db_path, &db) != SQLITE_OK)
		return -1;
	sqlite3_exec(db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
	sqlite3_close(db);
	f = fopen(db_path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(tmpl = malloc((size_t)n)) || fread(tmpl, 1, (size_t)n, f) != (size_t)n)
		return -1;
	fclose(f);
	tmpl_len = (size_t)n;
	devnull = fopen("/dev/null", "w");
	return devnull ? 0 : -1;
}

static void put_event(struct gen *g, int kind, const char *kind_name, const char *phase,
		      int64_t dev, int64_t link, int64_t aux, int err, int arg, uint32_t flags)
{
	sqlite3_stmt *st = g->ev;
	int64_t seq = g->seq++;

	if (g->nev >= MAX_EVENTS)
		return;
	if (g->seq_glitch && g->nev == g->seq_glitch)
		seq--;          /* a duplicate seq */
	sqlite3_bind_int64(st, 1, seq);
	sqlite3_bind_int64(st, 2, g->t);
	sqlite3_bind_int64(st, 3, dev);
	if (link < 0)
		sqlite3_bind_null(st, 4);
	else
		sqlite3_bind_int64(st, 4, link);
	sqlite3_bind_text(st, 5, kind_name ? kind_name : dl_ev_kind_name((unsigned)kind), -1,
			  SQLITE_STATIC);
	if (phase)
		sqlite3_bind_text(st, 6, phase, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 6);
	sqlite3_bind_int(st, 7, err);
	if (aux < 0)
		sqlite3_bind_null(st, 8);
	else
		sqlite3_bind_int64(st, 8, aux);
	sqlite3_bind_int64(st, 9, flags);
	sqlite3_bind_int(st, 10, arg);
	sqlite3_step(st);
	sqlite3_reset(st);
	g->nev++;
}

static void pm_pair(struct gen *g, int start, int phase, uint32_t d, int err)
{
	const char *ph = dl_phase_name((unsigned)phase);

	put_event(g, start, NULL, ph, d, -1, -1, 0, phase, 0);
	g->t += 1000;
	put_event(g, start + 1, NULL, ph, d, -1, -1, err, phase, 0);
}

static void put_link(struct gen *g, uint32_t l, uint32_t c, uint32_t s, uint32_t flags)
{
	char f[256];

	dl_flags_format(flags, f, sizeof(f));
	sqlite3_bind_int64(g->link, 1, l);
	sqlite3_bind_int64(g->link, 2, c);
	sqlite3_bind_int64(g->link, 3, s);
	sqlite3_bind_text(g->link, 4, f, -1, SQLITE_TRANSIENT);
	sqlite3_step(g->link);
	sqlite3_reset(g->link);
}

static void run_ops(struct gen *g)
{
	int op, a, b, c;

	while ((op = byte(g)) >= 0 && (a = byte(g)) >= 0 && (b = byte(g)) >= 0 && (c = byte(g)) >= 0) {
		uint32_t d = (uint32_t)a % g->ndev, s = (uint32_t)b % g->ndev;

		g->t += (c & 0x0f) * 1000;
		switch (op % 16) {
		case 0:
			put_event(g, DL_EV_REGISTER, NULL, NULL, d, -1, -1, 0, 0, 0);
			break;
		case 1:
			put_event(g, DL_EV_PROBE_START, NULL, NULL, d, -1, -1, 0, 0, 0);
			g->t += 1000;
			put_event(g, DL_EV_PROBE_END, NULL, NULL, d, -1, -1, (c & 0x10) ? -5 : 0, 0, 0);
			break;
		case 2:
			put_event(g, DL_EV_PROBE_DEFER, NULL, NULL, d, -1, -1, -517, 0, 0);
			break;
		case 3:
			pm_pair(g, DL_EV_SUSPEND_START, b % 4, d, (c & 0x30) == 0x30 ? -16 : 0);
			break;
		case 4:
			pm_pair(g, DL_EV_RESUME_START, 4 + b % 4, d, 0);
			break;
		case 5: {
			uint32_t l = (c & 0x80) && g->nlink ? (uint32_t)c % g->nlink : g->nlink++;
			uint32_t flags = (uint32_t)(c * 0x9e3779b1u) & 0x7ff;

			put_link(g, l, d, s, flags);
			put_event(g, DL_EV_LINK_ADD, NULL, NULL, d, l, s, 0, b % DL_STATE_COUNT, flags);
			break;
		}
		case 6:
		case 7:
			if (!g->nlink)
				break;
			put_event(g, op % 16 == 6 ? DL_EV_LINK_DEL : DL_EV_LINK_STATE, NULL,
				  op % 16 == 6 ? NULL : dl_link_state_name((unsigned)c % DL_STATE_COUNT),
				  d, (uint32_t)a % g->nlink, s, 0, c % DL_STATE_COUNT, 0);
			break;
		case 8:
			put_event(g, DL_EV_UNBIND_START, NULL, NULL, d, -1, -1, 0, 0, 0);
			g->t += 1000;
			put_event(g, DL_EV_UNBIND_END, NULL, NULL, d, -1, -1, 0, 0, 0);
			break;
		case 9:
		case 10:
			put_event(g, op % 16 == 9 ? DL_EV_RPM_RESUME : DL_EV_RPM_SUSPEND, NULL, NULL, d,
				  -1, -1, 0, 0, 0);
			break;
		case 11:
			put_event(g, DL_EV_DEVICE_DEL, NULL, NULL, d, -1, -1, 0, 0, 0);
			break;
		case 12:
			put_event(g, DL_EV_DPM_MOVE, NULL, NULL, d, -1, -1, 0, 0, 0);
			break;
		case 13:
			put_event(g, DL_EV_LINK_REFUSED, NULL, dl_refusal_name((unsigned)c % DL_REFUSE_COUNT),
				  d, -1, s, 0, c % DL_REFUSE_COUNT, (uint32_t)c << 3);
			break;
		case 14:
			put_event(g, DL_EV_WORK_BLOCK + (c & 1), NULL, dl_phase_name((unsigned)b % DL_PH_COUNT),
				  d, -1, -1, 0, b % DL_PH_COUNT, 0);
			break;
		default: {      /* raw: anything, in range or not */
			static const int64_t ids[] = { -1, 1 << 28, INT32_MAX, (int64_t)1 << 40 };
			static const int64_t times[] = { -1, INT64_MAX, INT64_MIN, (int64_t)1 << 62 };
			int kind = a % (DL_EV_KIND_COUNT + 1);
			int64_t dev = (c & 0xc0) == 0xc0 ? ids[c & 3] : (int64_t)((uint32_t)c % g->ndev);
			int64_t t = g->t;

			if ((b & 0xf0) == 0xf0)
				g->t = times[b & 3];
			put_event(g, kind, kind == DL_EV_KIND_COUNT ? "probe_strat" : NULL,
				  (b & 8) ? NULL : dl_phase_name((unsigned)b % (DL_PH_COUNT + 1)),
				  dev, (c & 0x20) ? (int64_t)b : -1, (c & 0x10) ? (int64_t)b : -1,
				  (int8_t)b, b, (uint32_t)c);
			if (g->t < 0 || g->t > ((int64_t)1 << 62))
				g->t = t;
			break;
		}
		}
	}
}

static int build(const uint8_t *data, size_t size, sqlite3 **db_out)
{
	static const char *const status[] = { "ok", "ok", "ok", "running", "failed", "interrupted",
					      "violations", "bogus" };
	struct gen g = { .p = data, .end = data + size };
	sqlite3_stmt *st;
	int h0 = byte(&g), h1 = byte(&g), sw = byte(&g);
#ifdef FUZZ_FILE
	FILE *f;
#endif

	if (h0 < 0 || h1 < 0 || sw < 0)
		return -1;
	g.ndev = 1 + (uint32_t)h0 % MAX_DEV;
	g.seq_glitch = (sw & 0x20) ? 1 + h1 % 64 : 0;
#ifdef FUZZ_FILE
	f = fopen(db_path, "wb");
	if (!f || fwrite(tmpl, 1, tmpl_len, f) != tmpl_len) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	if (sqlite3_open(db_path, &g.db) != SQLITE_OK) {
		sqlite3_close(g.db);
		return -1;
	}
#else
	/* one in-memory copy of the template, emptied per input: no schema parse each time */
	static sqlite3 *mem;

	if (!mem) {
		unsigned char *buf = sqlite3_malloc64(tmpl_len);

		if (!buf || sqlite3_open(":memory:", &mem) != SQLITE_OK)
			abort();
		memcpy(buf, tmpl, tmpl_len);
		if (sqlite3_deserialize(mem, "main", buf, (sqlite3_int64)tmpl_len, (sqlite3_int64)tmpl_len,
					SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) != SQLITE_OK)
			abort();
	}
	g.db = mem;
	if (sqlite3_exec(mem, "DELETE FROM runs; DELETE FROM devices; DELETE FROM links;"
			 " DELETE FROM events; DELETE FROM metrics; DELETE FROM violations;"
			 " DELETE FROM refused", NULL, NULL, NULL) != SQLITE_OK)
		abort();
#endif
	sqlite3_exec(g.db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN", NULL, NULL, NULL);
	sqlite3_prepare_v2(g.db, "INSERT INTO devices(run_id, dev_id, name, parent_id, async)"
			   " VALUES(1, ?, ?, ?, 1)", -1, &st, NULL);
	for (uint32_t i = 0; i < g.ndev; i++) {
		int p = byte(&g);
		char name[32];

		if ((sw & 0x08) && i == 1)
			continue;       /* a deleted device row */
		sqlite3_bind_int64(st, 1, i);
		if ((sw & 0x10) && i == 2) {
			sqlite3_bind_null(st, 2);
		} else {
			/* names are data: quotes, controls, a byte that is not UTF-8 */
			snprintf(name, sizeof(name), (sw & 0x80) ? "d%u\"'<\\\n\t\xff" : "dev%u", i);
			sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
		}
		if (p < 0x80)
			sqlite3_bind_null(st, 3);
		else
			sqlite3_bind_int64(st, 3, (sw & 0x40) ? p : p % (int)g.ndev);
		sqlite3_step(st);
		sqlite3_reset(st);
		if ((sw & 0x04) && i == 0) {
			sqlite3_step(st);       /* a duplicated device row */
			sqlite3_reset(st);
		}
	}
	sqlite3_finalize(st);
	sqlite3_prepare_v2(g.db, "INSERT INTO events(run_id, seq, t_ns, dev_id, link_id, kind, phase,"
			   " worker, err, aux, flags, arg) VALUES(1, ?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?8, ?9, ?10)",
			   -1, &g.ev, NULL);
	sqlite3_prepare_v2(g.db, "INSERT INTO links(run_id, link_id, consumer_id, supplier_id, flags)"
			   " VALUES(1, ?, ?, ?, ?) ON CONFLICT(run_id, link_id) DO UPDATE SET"
			   " flags = excluded.flags", -1, &g.link, NULL);
	run_ops(&g);
	sqlite3_finalize(g.ev);
	sqlite3_finalize(g.link);
	sqlite3_prepare_v2(g.db, "INSERT INTO runs(run_id, scenario, order_name, mode, seed, workers,"
			   " devices, links, status, makespan_ns, started_at, version, finished_at,"
			   " events, log_error) VALUES(1, 'fuzz', 'kernel-async', 'des', 1, 8, ?, ?, ?, ?,"
			   " '2026-12-03T00:00:00Z', '0', '2026-12-03T00:00:00Z', ?, ?)", -1, &st, NULL);
	sqlite3_bind_int64(st, 1, g.ndev + ((sw & 0x01) ? 1 : 0));
	sqlite3_bind_int64(st, 2, g.nlink);
	sqlite3_bind_text(st, 3, status[h1 % 8], -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, g.t);
	if (!strcmp(status[h1 % 8], "running"))
		sqlite3_bind_null(st, 5);
	else
		sqlite3_bind_int64(st, 5, g.nev + ((sw & 0x02) ? 1 : 0));
	if ((sw & 0x03) == 0x03)
		sqlite3_bind_text(st, 6, "disk full", -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 6);
	sqlite3_step(st);
	sqlite3_finalize(st);
	sqlite3_exec(g.db, "COMMIT", NULL, NULL, NULL);
	*db_out = g.db;
	return 0;
}

#ifdef FUZZ_DIFF
/* diff's tolerance from the input's last byte: 0 (every gap orders a pair) to 255 us */
static int64_t c_tol(const uint8_t *data, size_t size)
{
	return size ? (int64_t)data[size - 1] * 1000 : 0;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sqlite3 *db;

	if (size > 4 * MAX_EVENTS)
		return 0;
	if (!tmpl && make_template())
		abort();        /* the harness itself cannot run: say so loudly */
	if (build(data, size, &db))
		return 0;
#if defined(FUZZ_REPORT)
	{
		struct dl_report_opts o = { .outdir = out_dir, .run = 1, .trace_plain = 1, .data_only = 1 };
		char err[512];

		sqlite3_close(db);
		dl_report_write_opts(db_path, &o, err, sizeof(err));
	}
#elif defined(FUZZ_EXPLAIN)
	{
		struct dl_check_result res;
		char err[512];
		int rc = dl_check_verify(db, 1, &res);

		sqlite3_close(db);
		if (rc == DL_CHECK_DONE)
			dl_explain_path(db_path, 1, DL_EXPLAIN_FULL, devnull, err, sizeof(err));
	}
#elif defined(FUZZ_DIFF)
	{
		struct dl_check_result res;
		struct dl_diff *d;
		int64_t which;

		/* run 2: run 1 with its device names reversed (dev0 is named as the last) */
		if (sqlite3_exec(db, "INSERT INTO runs(run_id, scenario, order_name, mode, seed, workers,"
				 " devices, links, status, makespan_ns, started_at, version, finished_at,"
				 " events, log_error) SELECT 2, scenario, order_name, mode, seed, workers,"
				 " devices, links, status, makespan_ns, started_at, version, finished_at,"
				 " events, log_error FROM runs WHERE run_id = 1;"
				 " INSERT INTO devices(run_id, dev_id, name, parent_id, async)"
				 " SELECT 2, dev_id, (SELECT e.name FROM devices e WHERE"
				 " e.run_id = 1 AND e.dev_id = (SELECT max(dev_id) FROM devices WHERE"
				 " run_id = 1) - d.dev_id), parent_id, async FROM devices d WHERE run_id = 1;"
				 " INSERT INTO links SELECT 2, link_id, consumer_id, supplier_id, flags FROM"
				 " links WHERE run_id = 1;"
				 " INSERT INTO events SELECT 2, seq, t_ns, dev_id, link_id, kind, phase, worker,"
				 " err, aux, flags, arg FROM events WHERE run_id = 1;"
				 " INSERT INTO metrics SELECT 2, name, value FROM metrics WHERE run_id = 1",
				 NULL, NULL, NULL) != SQLITE_OK)
			abort();
		if (dl_check_verify(db, 1, &res) != DL_CHECK_DONE ||
		    dl_check_verify(db, 2, &res) != DL_CHECK_DONE)
			return 0;
		if (dl_diff_runs(db, 1, 2, (c_tol(data, size)), 8, &d, &which) == 0)
			dl_diff_free(d);
	}
#else
	{
		struct dl_check_result res;

		dl_check_run_ex(db, 1, 1, devnull, &res);
	}
#endif
	return 0;
}
