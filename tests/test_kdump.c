/*
 * test_kdump.c - the conversion of a dlsim_kmod dump into dlsim events
 * (sim/kernel/kdump.c), on small hand-written dumps: what the kernel's
 * records and snapshots become, and the dumps that are refused or cut.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/core/dl_core.h"
#include "sim/kernel/kmode.h"

static char tmpdir[] = "/tmp/dlsim-kdump-XXXXXX";
static struct dl_scenario *sc;
static struct dl_event ev[256];
static size_t nev;

static void sink(void *ctx, struct dl_event *e)
{
	(void)ctx;
	if (nev < sizeof(ev) / sizeof(ev[0]))
		ev[nev++] = *e;
}

/* a (root), b (child of a), c (root); probe only */
static const char *scenario_json =
	"{\"format\":\"dlsim-scenario/1\",\"name\":\"t\",\"seed\":1,"
	"\"devices\":[{\"name\":\"a\"},{\"name\":\"b\",\"parent\":\"a\"},{\"name\":\"c\"}],"
	"\"script\":[{\"op\":\"probe\"}]}";

/*
 * c links to b (DORMANT: kernel status 0), b to c is refused; a probes on a
 * worker; a snapshot shows dpm_list as a c b and the link ACTIVE, with a
 * record of another thread (pid 30) between its records.
 */
static const char *dump_ok =
	"@run 000\n"
	"dlsim-kdump 1 6.12.0-test x86_64 devices 3 records 14 lost 0\n"
	"1000 op -1 0 0 0 0 10\n"
	"1100 register 0 -1 0 0 0 10\n"
	"1200 register 1 0 0 0 0 10\n"
	"1300 register 2 -1 0 0 0 10\n"
	"1400 link_add 2 1 0 0 64 10\n"
	"1500 link_refused 1 2 0 -22 0 10\n"
	"2000 cb_start 0 -1 0 0 0 20\n"
	"3000 cb_end 0 -1 0 0 0 20\n"
	"5000 snap -1 -1 0 0 0 10\n"
	"5001 order 0 -1 0 0 0 10\n"
	"5002 cb_start 2 -1 0 0 0 30\n"
	"5003 order 2 -1 0 0 0 10\n"
	"5004 order 1 -1 0 0 0 10\n"
	"5005 link 2 1 3 0 64 10\n"
	"5100 cb_end 2 -1 0 0 0 30\n"
	"6000 opend -1 0 0 0 0 10\n"
	"@done 000\n";

static int convert(const char *dump, struct dl_run_result *r, struct dl_kernel_info *ki)
{
	struct dl_engine_opts o = { .order = DL_ORDER_KERNEL_ASYNC, .seed = 1,
				    .sink = { .emit = sink } };

	nev = 0;
	return dl_kernel_convert(sc, dump, strlen(dump), &o, r, ki);
}

static const struct dl_event *find(unsigned kind, unsigned nth)
{
	for (size_t i = 0; i < nev; i++)
		if (ev[i].kind == kind && nth-- == 0)
			return &ev[i];
	return NULL;
}

static void test_records_become_events(void)
{
	static struct dl_run_result r;
	struct dl_kernel_info ki;
	const struct dl_event *e;

	CU_ASSERT_EQUAL(convert(dump_ok, &r, &ki), 0);
	CU_ASSERT_STRING_EQUAL(r.status, "ok");
	CU_ASSERT_STRING_EQUAL(ki.release, "6.12.0-test");
	/* registration, with the parent in aux; times from the probe op's start */
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_REGISTER, 1));
	CU_ASSERT_EQUAL(e->dev, 1);
	CU_ASSERT_EQUAL(e->aux, 0);
	CU_ASSERT_EQUAL(e->t_ns, 200);
	/* the kernel's DORMANT (0) is dlsim's DL_STATE_DORMANT */
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_LINK_ADD, 0));
	CU_ASSERT_EQUAL(e->dev, 2);
	CU_ASSERT_EQUAL(e->aux, 1);
	CU_ASSERT_EQUAL(e->phase, DL_STATE_DORMANT);
	/* b -> c closes no flag rule: device_link_add()'s dependency check refused it */
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_LINK_REFUSED, 0));
	CU_ASSERT_EQUAL(e->phase, DL_REFUSE_REVERSE_DEPENDENCY);
	CU_ASSERT_EQUAL(r.links_refused, 1);
	/* the probe ran on a kworker: worker 1; the other thread's callback on worker 2 */
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_PROBE_START, 0));
	CU_ASSERT_EQUAL(e->worker, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_PROBE_START, 1));
	CU_ASSERT_EQUAL(e->dev, 2);
	CU_ASSERT_EQUAL(e->worker, 2);
	/* the snapshot's list a c b differs from registration's a b c: moves in that order */
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_DPM_MOVE, 0));
	CU_ASSERT_EQUAL(e->dev, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_DPM_MOVE, 1));
	CU_ASSERT_EQUAL(e->dev, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_DPM_MOVE, 2));
	CU_ASSERT_EQUAL(e->dev, 1);
	CU_ASSERT_PTR_NULL(find(DL_EV_DPM_MOVE, 3));
	/* the link is ACTIVE now, and the interleaved record did not cut the snapshot short */
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_LINK_STATE, 0));
	CU_ASSERT_EQUAL(e->phase, DL_STATE_ACTIVE);
	CU_ASSERT_PTR_NULL(find(DL_EV_LINK_DEL, 0));
	/* the probe op: from its mark to the last callback's end */
	CU_ASSERT_EQUAL(r.op[0].makespan_ns, 4100);
	CU_ASSERT_EQUAL(r.op[0].probe_attempts, 2);
}

/*
 * A dump with the module's kretprobe records: the driver core turns c's probe
 * away twice (its supplier b is not bound) before the callback, inside two
 * walks of the deferred-probe list, each after a reorder of c.
 */
static const char *dump_core_defer =
	"@run 000\n"
	"dlsim-kdump 1 6.12.0-test x86_64 devices 3 records 15 lost 0 probes core_defer,retry,reorder\n"
	"1000 op -1 0 0 0 0 10\n"
	"1100 register 0 -1 0 0 0 10\n"
	"1200 register 1 0 0 0 0 10\n"
	"1300 register 2 -1 0 0 0 10\n"
	"1400 link_add 2 1 0 0 356 10\n"
	"1500 core_defer 2 -1 0 -517 0 20\n"
	"2000 cb_start 0 -1 0 0 0 20\n"
	"2100 retry_begin -1 -1 0 0 0 40\n"
	"2150 reorder 2 -1 0 0 30 40\n"
	"2200 core_defer 2 -1 0 -517 0 40\n"
	"2300 retry_end -1 -1 0 0 0 40\n"
	"3000 cb_end 0 -1 0 0 0 20\n"
	"3100 cb_start 1 -1 0 0 0 20\n"
	"3500 cb_end 1 -1 0 0 0 20\n"
	"3600 retry_begin -1 -1 0 0 0 40\n"
	"3650 reorder 2 -1 0 0 20 40\n"
	"3700 cb_start 2 -1 0 0 0 40\n"
	"3800 cb_end 2 -1 0 0 0 40\n"
	"3900 retry_end -1 -1 0 0 0 40\n"
	"6000 opend -1 0 0 0 0 10\n"
	"@done 000\n";

static void test_core_deferrals_are_probe_defers(void)
{
	static struct dl_run_result r;
	struct dl_kernel_info ki;
	const struct dl_event *e;

	CU_ASSERT_EQUAL(convert(dump_core_defer, &r, &ki), 0);
	CU_ASSERT_STRING_EQUAL(r.status, "ok");
	/* each is an attempt and a defer, as the DES counts device_links_check_suppliers() */
	CU_ASSERT_EQUAL(r.op[0].probe_defers, 2);
	CU_ASSERT_EQUAL(r.op[0].probe_attempts, 5);
	CU_ASSERT_EQUAL(ki.core_defers, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_PROBE_DEFER, 0));
	CU_ASSERT_EQUAL(e->dev, 2);
	CU_ASSERT_EQUAL(e->err, -517);
	CU_ASSERT_EQUAL(e->t_ns, 500);
	CU_ASSERT_EQUAL(e->worker, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e = find(DL_EV_PROBE_DEFER, 1));
	CU_ASSERT_EQUAL(e->worker, 2);
	CU_ASSERT_PTR_NULL(find(DL_EV_PROBE_DEFER, 2));
	/* the walks and the reorders before each retry */
	CU_ASSERT_EQUAL(ki.retry_walks, 2);
	CU_ASSERT_EQUAL(ki.retry_ns, 200 + 300);
	CU_ASSERT_EQUAL(ki.reorders, 2);
	CU_ASSERT_EQUAL(ki.reorder_ns, 50);
	/* a dump without them (before the kretprobes) counts none */
	CU_ASSERT_EQUAL(convert(dump_ok, &r, &ki), 0);
	CU_ASSERT_EQUAL(r.op[0].probe_defers, 0);
	CU_ASSERT_EQUAL(ki.core_defers + ki.retry_walks + ki.reorders, 0);
	CU_ASSERT_PTR_NULL(find(DL_EV_PROBE_DEFER, 0));
}

static void test_link_gone_from_snapshot_is_deleted(void)
{
	static struct dl_run_result r;
	struct dl_kernel_info ki;
	char d[2048];

	/* the same dump without the snapshot's link record: the kernel deleted it */
	snprintf(d, sizeof(d), "%s", dump_ok);
	char *l = strstr(d, "5005 link 2 1 3 0 64 10\n");

	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	memmove(l, l + strlen("5005 link 2 1 3 0 64 10\n"), strlen(l + strlen("5005 link 2 1 3 0 64 10\n")) + 1);
	CU_ASSERT_EQUAL(convert(d, &r, &ki), 0);
	CU_ASSERT_PTR_NOT_NULL(find(DL_EV_LINK_DEL, 0));
}

static void test_cut_dump_fails(void)
{
	static struct dl_run_result r;
	struct dl_kernel_info ki;
	char d[2048];

	snprintf(d, sizeof(d), "%.*s", (int)(strstr(dump_ok, "5000 snap") - dump_ok), dump_ok);
	CU_ASSERT_EQUAL(convert(d, &r, &ki), -EPIPE);
	CU_ASSERT_STRING_EQUAL(r.status, "failed");
	CU_ASSERT_EQUAL(ki.last_op, 0);
}

static void test_foreign_dumps_refused(void)
{
	static struct dl_run_result r;
	struct dl_kernel_info ki;

	CU_ASSERT_EQUAL(convert("dlsim-kdump 1 6.12.0 x86_64 devices 4 records 0 lost 0\n@done 000\n",
				&r, &ki), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(ki.msg, "another scenario"));
	CU_ASSERT_EQUAL(nev, 0);
	CU_ASSERT_EQUAL(convert("dlsim-kdump 1 6.12.0 x86_64 devices 3 records 1 lost 0\n"
				"1000 register 7 -1 0 0 0 1\n@done 000\n", &r, &ki), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(ki.msg, "out of range"));
	CU_ASSERT_EQUAL(nev, 0);
}

/*
 * dl_kernel_split() reads a dump of @len bytes, not a string: here the dump
 * ends at a page followed by one that cannot be read.  Its "@run N" lines
 * were read with sscanf(), which looks for a NUL past the end (a SEGV under
 * TSan in cli_advise_verify, where the guest's dump file was read into a
 * buffer without one).
 */
static char *guarded(const char *text, size_t *len)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	*len = strlen(text);
	if (m == MAP_FAILED || *len > (size_t)pg || mprotect(m + pg, (size_t)pg, PROT_NONE))
		return NULL;
	memcpy(m + pg - *len, text, *len);
	return m + pg - *len;
}

static void test_split_reads_no_byte_past_the_dump(void)
{
	static const char two[] = "@run 000\nA\n@done 000\n@run 1\nB\n@done 001\n@end";
	struct dl_kjob jobs[2] = { { .dump = NULL }, { .dump = NULL } };
	size_t len;
	char *d = guarded(two, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(dl_kernel_split(jobs, 2, d, len), 0);
	CU_ASSERT_STRING_EQUAL(jobs[0].dump, "@run 000\nA\n@done 000\n");
	CU_ASSERT_STRING_EQUAL(jobs[1].dump, "@run 1\nB\n@done 001\n");
	dl_kernel_jobs_free(jobs, 2);
	/* a dump cut inside the "@run" line, and a run number past the jobs */
	d = guarded("@done 000\n@run 1", &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(dl_kernel_split(jobs, 2, d, len), -ETIMEDOUT);
	dl_kernel_jobs_free(jobs, 2);
	d = guarded("@run 7\nX\n@done 007\n@ru", &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(dl_kernel_split(jobs, 2, d, len), -ETIMEDOUT);
	CU_ASSERT_PTR_NULL(jobs[0].dump);
	CU_ASSERT_PTR_NULL(jobs[1].dump);
	dl_kernel_jobs_free(jobs, 2);
}

int main(void)
{
	struct dl_error err;
	char path[256];
	FILE *f;
	CU_pSuite s;
	unsigned nf;

	if (!mkdtemp(tmpdir))
		return 2;
	snprintf(path, sizeof(path), "%s/t.json", tmpdir);
	f = fopen(path, "w");
	if (!f || fputs(scenario_json, f) < 0 || fclose(f))
		return 2;
	if (dl_scenario_load(path, NULL, 0, NULL, &sc, &err))
		return 2;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("kdump", NULL, NULL);
	CU_add_test(s, "records and snapshots become events", test_records_become_events);
	CU_add_test(s, "the driver core's deferrals are probe defers", test_core_deferrals_are_probe_defers);
	CU_add_test(s, "a link missing from a snapshot is deleted", test_link_gone_from_snapshot_is_deleted);
	CU_add_test(s, "a dump cut short fails the run", test_cut_dump_fails);
	CU_add_test(s, "another scenario's dump is refused", test_foreign_dumps_refused);
	CU_add_test(s, "split reads no byte past the dump", test_split_reads_no_byte_past_the_dump);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	nf = CU_get_number_of_failures();
	CU_cleanup_registry();
	dl_scenario_free(sc);
	unlink(path);
	rmdir(tmpdir);
	return nf ? 1 : 0;
}
