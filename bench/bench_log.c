/*
 * bench_log.c - the SQLite log and the checker.
 *
 * BM_log_insert/N: one logged run per iteration (run_begin, N device rows,
 * the events of a real engine run of default.json at N devices, run_end,
 * which flushes the writer thread): items_per_second = rows/s of wall
 * time (the writer thread does the work: BM_log_insert/N/real_time).
 * BM_check/N: dl_check_path() over one such run: items_per_second = events/s.
 * Databases live in /tmp and are removed afterwards.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench_common.h"
#include "sim/log/dl_check.h"
#include "sim/log/dl_log.h"

static void db_path(char *buf, size_t len, const char *what, int64_t n)
{
	snprintf(buf, len, "/tmp/dlsim-bench-%s-%ld-%lld.db", what, (long)getpid(), (long long)n);
}

static void db_remove(const char *path)
{
	char p[300];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-journal", path);
	unlink(p);
}

/* One run into LOG; 0 or negative. */
static int log_run(struct dl_log *log, const struct dl_scenario *sc, const struct bench_events *b)
{
	struct dl_run_info info = { .scenario = sc->name, .order = "kernel-async", .mode = "des",
				    .version = "bench", .seed = sc->seed, .devices = sc->ndev,
				    .links = sc->nlink, .workers = 0 };
	int64_t run_id, makespan = 0;
	const size_t batch = 4096;

	/* the DES run's makespan is its last event's time (check verifies no event is later) */
	for (size_t i = 0; i < b->n; i++)
		if (b->ev[i].t_ns > makespan)
			makespan = b->ev[i].t_ns;
	if (dl_log_run_begin(log, &info, &run_id))
		return -1;
	for (uint32_t i = 0; i < sc->ndev; i++)
		dl_log_device(log, i, dl_sc_name(sc, i), sc->dev[i].parent, sc->dev[i].async);
	for (size_t i = 0; i < b->n; i += batch)
		dl_log_events(log, b->ev + i, b->n - i < batch ? b->n - i : batch);
	return dl_log_run_end(log, "ok", makespan, NULL, 0);
}

/*
 * The scenario and captured events of size @n and a log opened on a fresh
 * database at @path; NULL (the benchmark skipped) if any is missing.
 */
static struct dl_log *fresh_log(struct bm_state *st, const char *what, uint32_t n,
				const struct dl_scenario **sc, const struct bench_events **b,
				char *path, size_t len)
{
	struct dl_log *log;
	char msg[256];

	*sc = bench_default_scenario(n);
	*b = bench_capture(n);
	if (!*sc || !*b) {
		bm_skip(st, "no scenario or capture");
		return NULL;
	}
	db_path(path, len, what, n);
	db_remove(path);
	if (dl_log_open(path, &log, msg, sizeof(msg))) {
		bm_skip(st, msg);
		return NULL;
	}
	return log;
}

static void bm_log_insert(struct bm_state *st)
{
	const struct dl_scenario *sc;
	const struct bench_events *b;
	char path[256];
	struct dl_log *log = fresh_log(st, "log", (uint32_t)bm_range(st, 0), &sc, &b, path,
				       sizeof(path));

	if (!log)
		return;
	while (bm_keep_running(st))
		if (log_run(log, sc, b)) {
			bm_skip(st, "log write failed");
			break;
		}
	dl_log_close(log);
	db_remove(path);
	bm_set_items(st, bm_iterations(st) * (int64_t)(b->n + sc->ndev));
	bm_counter_rate(st, "events/s", (double)bm_iterations(st) * (double)b->n);
	bm_counter(st, "events", (double)b->n);
}

static void bm_check(struct bm_state *st)
{
	const struct dl_scenario *sc;
	const struct bench_events *b;
	char path[256];
	uint64_t viol = 0;
	struct dl_log *log = fresh_log(st, "check", (uint32_t)bm_range(st, 0), &sc, &b, path,
				       sizeof(path));

	if (!log)
		return;
	if (log_run(log, sc, b)) {
		dl_log_close(log);
		db_remove(path);
		bm_skip(st, "log write failed");
		return;
	}
	dl_log_close(log);
	while (bm_keep_running(st)) {
		int rc = dl_check_path(path, 0, 0, &viol);

		/* a corrupt log is verified only, its rules never run: not what this measures */
		if (rc != DL_CHECK_DONE) {
			bm_skip(st, rc == DL_CHECK_CORRUPT ? "the log is corrupt" :
				"dl_check_path failed");
			break;
		}
	}
	db_remove(path);
	if (viol)
		bm_skip(st, "the checker found violations in a clean run");
	bm_set_items(st, bm_iterations(st) * (int64_t)b->n);
	bm_counter_rate(st, "events/s", (double)bm_iterations(st) * (double)b->n);
	bm_counter(st, "events", (double)b->n);
}

void bm_register_log(void)
{
	static const int64_t sizes[] = { 2000, 20000 };

	for (int i = 0; i < 2; i++) {
		/* wall clock: the rows are written by the log's writer thread */
		bm_register_real_time("BM_log_insert", bm_log_insert, 0, &sizes[i], 1, 'm');
		bm_register("BM_check", bm_check, 0, &sizes[i], 1, 'm');
	}
}
