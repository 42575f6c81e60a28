/*
 * kboot.c - the host half of `--mode kernel` (kmode.h): which scenarios the
 * kernel can play, each run's script as data files, the module built once
 * per kernel and cached, the initramfs, and one QEMU boot for a batch.
 *
 * Nothing scenario-specific is compiled: the module is the same for every
 * run; devices are indices, latencies numbers (sampled here with
 * dl_latency_sample(), exactly as the engines sample them), and /init
 * writes the files to the module's control file in order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/core/dl_core.h"
#include "sim/kernel/kmode.h"

#define CACHE_DEFAULT "/var/cache/dlsim-kernels"
#define BUSYBOX "/bin/busybox"
#define QEMU "qemu-system-x86_64"
#define BOOT_BUDGET_MS 180000      /* boot and power-off: 8 s idle, 40 s and more on a loaded host */
#define CALLBACK_BUDGET_NS 5000000 /* wall time per callback on TCG, generous */
#define KMOD_SRC DLSIM_SOURCE_DIR "/sim/kernel"
#define KMOD_MAX_RECS_HOST (16u << 20)   /* dlsim_kmod.c's KMOD_MAX_RECS: 512 MB of guest memory */
#define KMOD_MIN_RECS_HOST (2u << 20)
/*
 * suspend.pm_test_delay=0: else pm_test waits 5 s a cycle.  cryptomgr.notests=1: 6.12's crypto
 * self-tests run in a cryptomgr_test kthread until ~12 s of guest time, a CPU hog beside the
 * first run's probe on the one vCPU (a traced d200-sync boot: 725 of its 1,051 ms of probe,
 * the probe 734 ms without it; tests/tools/probe_silences.py).  The guest's work, not the
 * driver core's.
 */
#define KERNEL_CMDLINE "console=ttyS0 loglevel=3 suspend.pm_test_delay=0 panic=-1 mitigations=off" \
	" cryptomgr.notests=1"

/* snprintf for paths: vsnprintf, so that GCC does not second-guess the sizes; 0 or -ENAMETOOLONG. */
static int pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static const char *cache_dir(const struct dl_kernel_opts *ko)
{
	const char *e = getenv("DLSIM_KERNEL_CACHE");

	return ko->cache ? ko->cache : (e && *e) ? e : CACHE_DEFAULT;
}

int dl_kernel_refuse(const struct dl_scenario *sc, enum dl_order order, const char *version,
		     char *why, size_t whylen)
{
	uint32_t kver;

	if (strcmp(version, "6.12") && strcmp(version, "7.3")) {
		snprintf(why, whylen, "--kernel '%s': kernel mode boots 6.12 or 7.3", version);
		return -EINVAL;
	}
	if (!dl_order_policy(order)->kernel_native) {
		char names[128];

		dl_order_native_names(names, sizeof(names));
		snprintf(why, whylen, "order '%s' is not the kernel's: kernel mode runs %s",
			 dl_order_name(order), names);
		return -EINVAL;
	}
	if (dl_kver_parse(version, &kver) ||
	    dl_order_check_kernel(order, kver, why, whylen))
		return -EINVAL;
	if (sc->ndev > DL_KERNEL_MAX_DEVICES) {
		snprintf(why, whylen, "%u devices: the guest takes at most %u", sc->ndev,
			 DL_KERNEL_MAX_DEVICES);
		return -EINVAL;
	}
	if (sc->nop > DL_MAX_OPS) {
		snprintf(why, whylen, "%u script ops: at most %d", sc->nop, DL_MAX_OPS);
		return -EINVAL;
	}
	if (!sc->nop || sc->op[0].kind != DL_OP_PROBE) {
		snprintf(why, whylen, "the script must start with probe: the guest registers and"
			 " probes every device first");
		return -EINVAL;
	}
	for (uint32_t i = 0; i < sc->ndev; i++)
		if (sc->dev[i].hotplug) {
			snprintf(why, whylen, "device %u is hot-plugged ('add'): kernel mode registers"
				 " every device at probe", i);
			return -EINVAL;
		}
	for (uint32_t i = 0; i < sc->nop; i++) {
		const struct dl_sc_op *op = &sc->op[i];

		if (op->concurrent) {
			snprintf(why, whylen, "op %u (%s) is concurrent: kernel mode runs the script"
				 " one op after another", i + 1, dl_op_name(op->kind));
			return -EINVAL;
		}
		switch (op->kind) {
		case DL_OP_PROBE:
			if (i) {
				snprintf(why, whylen, "op %u: a second probe op; use bind", i + 1);
				return -EINVAL;
			}
			break;
		case DL_OP_SUSPEND:
			if (i + 1 >= sc->nop || sc->op[i + 1].kind != DL_OP_RESUME) {
				snprintf(why, whylen, "op %u: a suspend must be followed by resume: the"
					 " guest runs a whole sleep cycle (pm_test platform) at once", i + 1);
				return -EINVAL;
			}
			break;
		case DL_OP_RESUME:
			if (!i || sc->op[i - 1].kind != DL_OP_SUSPEND) {
				snprintf(why, whylen, "op %u: resume without the suspend right before it", i + 1);
				return -EINVAL;
			}
			break;
		case DL_OP_ADD:
			snprintf(why, whylen, "op %u: add (hot-plug) is not supported in kernel mode", i + 1);
			return -EINVAL;
		default:
			break;
		}
	}
	return 0;
}

/* ---- the data files of one run ---- */

static int lat_line(FILE *f, const struct dl_scenario *sc, uint64_t seed, unsigned key,
		    uint32_t occurrence)
{
	fprintf(f, "lat %u", key);
	for (uint32_t d = 0; d < sc->ndev; d++)
		fprintf(f, " %" PRId64, dl_latency_sample(dl_sc_latency(sc, d, key), seed, d, key,
							  occurrence));
	return fputc('\n', f) == EOF ? -EIO : 0;
}

static FILE *open_file(const char *dir, uint32_t n, const char *ext)
{
	char p[4096];

	pathf(p, sizeof(p), "%s/%04u.%s", dir, n, ext);
	return fopen(p, "w");
}

static int close_file(FILE *f)
{
	int e = ferror(f);

	return (fclose(f) || e) ? -EIO : 0;
}

/*
 * Records the module must hold for a run: per op, a start and an end per
 * callback of every device (eight PM phases, probe retries), a snapshot of
 * dpm_list and of every link, and runtime PM traffic: each probe resumes and
 * suspends the suppliers of PM_RUNTIME links.  Generous; the module refuses
 * more than KMOD_MAX_RECS, and a dump that lost records fails its run.
 */
static uint64_t record_budget(const struct dl_scenario *sc)
{
	uint64_t per_op = 24 * (uint64_t)sc->ndev + 12 * (uint64_t)sc->nlink;
	/*
	 * x4 and at least 2M records (32 bytes each): every deferred-probe retry
	 * runtime-resumes the consumer's suppliers before it defers
	 * (__driver_probe_device -> pm_runtime_get_suppliers), so a retry storm
	 * brings runtime PM callbacks no count of ops predicts (a 500-device DAG:
	 * 200k records).
	 */
	uint64_t n = 4 * (65536 + per_op * (sc->nop + 1));

	if (n < KMOD_MIN_RECS_HOST)
		n = KMOD_MIN_RECS_HOST;
	return n < KMOD_MAX_RECS_HOST ? n : KMOD_MAX_RECS_HOST;
}

/* pm_async: 1 when the order queues async work items (/sys/power/pm_async), else 0. */
static int write_pm_async(const char *dir, const struct dl_kjob *j)
{
	char p[4096];
	FILE *f;

	pathf(p, sizeof(p), "%s/pm_async", dir);
	if (!(f = fopen(p, "w")))
		return -errno;
	fprintf(f, "%d\n", dl_order_uses_items(dl_order_policy(j->order)));
	return close_file(f);
}

/* The probe op's head: the devices (parent, async, runtime PM) and the injected faults. */
static void write_devices(FILE *f, const struct dl_kjob *j, const uint8_t *rpm)
{
	const struct dl_scenario *sc = j->sc;
	bool items = dl_order_uses_items(dl_order_policy(j->order));

	fprintf(f, "devices %u %" PRIu64 "\n", sc->ndev, record_budget(sc));
	for (uint32_t d = 0; d < sc->ndev; d++)
		fprintf(f, "dev %u %" PRId64 " %d %d\n", d,
			sc->dev[d].parent == DL_SC_NONE ? (int64_t)-1 : (int64_t)sc->dev[d].parent,
			items && sc->dev[d].async, rpm[d]);
	for (uint32_t k = 0; k < sc->nfault; k++)
		fprintf(f, "fault %u %u %d %u\n", sc->fault[k].dev, sc->fault[k].lat_key,
			sc->fault[k].err, sc->fault[k].times);
}

/* Op @i, the probe of every device: its latencies, the devices registered, the links, probe. */
static void write_probe(FILE *f, const struct dl_kjob *j, uint32_t i)
{
	const struct dl_scenario *sc = j->sc;

	lat_line(f, sc, j->seed, DL_LAT_PROBE, i);
	lat_line(f, sc, j->seed, DL_LAT_REMOVE, i);
	/* every attempt runtime-resumes suppliers and parent first */
	lat_line(f, sc, j->seed, DL_LAT_RPM_SUSPEND, i);
	lat_line(f, sc, j->seed, DL_LAT_RPM_RESUME, i);
	fprintf(f, "register\n");
	for (uint32_t k = 0; k < sc->nlink; k++) {
		uint32_t fl = sc->link[k].flags;

		/* as the engines: fw_devlink makes a cycle link INFERRED|SYNC_STATE_ONLY|CYCLE */
		if (fl & DL_FLAG_CYCLE)
			fl = DL_FLAG_INFERRED | DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_CYCLE;
		fprintf(f, "link %u %u %u\n", sc->link[k].consumer, sc->link[k].supplier, fl);
	}
	fprintf(f, "probe\n");
}

/* Op @i of any kind but probe and suspend: its latencies and its one command. */
static void write_op(FILE *f, const struct dl_kjob *j, uint32_t i)
{
	const struct dl_scenario *sc = j->sc;
	const struct dl_sc_op *op = &sc->op[i];

	switch (op->kind) {
	case DL_OP_UNBIND:
	case DL_OP_REMOVE:
		lat_line(f, sc, j->seed, DL_LAT_REMOVE, i);
		fprintf(f, "%s %u\n", op->kind == DL_OP_UNBIND ? "unbind" : "remove", op->dev);
		break;
	case DL_OP_BIND:
		lat_line(f, sc, j->seed, DL_LAT_PROBE, i);
		lat_line(f, sc, j->seed, DL_LAT_RPM_SUSPEND, i);
		lat_line(f, sc, j->seed, DL_LAT_RPM_RESUME, i);
		fprintf(f, "bind %u\n", op->dev);
		break;
	case DL_OP_LINK_ADD:
		fprintf(f, "link %u %u %u\n", op->dev, op->dev2, op->flags);
		break;
	case DL_OP_LINK_DEL:
		fprintf(f, "unlink %u %u\n", op->dev, op->dev2);
		break;
	case DL_OP_RPM_GET:
	case DL_OP_RPM_PUT:
		lat_line(f, sc, j->seed, DL_LAT_RPM_SUSPEND, i);
		lat_line(f, sc, j->seed, DL_LAT_RPM_RESUME, i);
		fprintf(f, "%s %u\n", op->kind == DL_OP_RPM_GET ? "rpm_get" : "rpm_put", op->dev);
		break;
	default:
		break;
	}
}

/*
 * The suspend op @i and the resume op after it, one sleep cycle: a .sleep
 * file with the eight phases' latencies, then a .ctl file with the resume
 * op's end and a snapshot.
 */
static int write_sleep(const char *dir, uint32_t *fileno, const struct dl_kjob *j, uint32_t i)
{
	const struct dl_scenario *sc = j->sc;
	FILE *f = open_file(dir, (*fileno)++, "sleep");
	int err;

	if (!f)
		return -errno;
	fprintf(f, "op %u\n", i);
	for (unsigned key = DL_LAT_PREPARE; key <= DL_LAT_SUSPEND_NOIRQ; key++)
		lat_line(f, sc, j->seed, key, i);
	for (unsigned key = DL_LAT_RESUME_NOIRQ; key <= DL_LAT_COMPLETE; key++)
		lat_line(f, sc, j->seed, key, i + 1);
	if ((err = close_file(f)))
		return err;
	if (!(f = open_file(dir, (*fileno)++, "ctl")))
		return -errno;
	fprintf(f, "opend %u\nsnap\n", i + 1);
	return close_file(f);
}

/* One run: a file per op (a sleep cycle is one .sleep file and the next op's marks). */
static int write_run_files(const char *dir, const struct dl_kjob *j, const uint8_t *rpm)
{
	const struct dl_scenario *sc = j->sc;
	uint32_t fileno = 0;
	int err;

	if (mkdir(dir, 0755))
		return -errno;
	err = write_pm_async(dir, j);
	for (uint32_t i = 0; i < sc->nop && !err; i++) {
		FILE *f;

		if (sc->op[i].kind == DL_OP_SUSPEND) {
			err = write_sleep(dir, &fileno, j, i++);
			continue;
		}
		if (!(f = open_file(dir, fileno++, "ctl")))
			return -errno;
		if (sc->op[i].kind == DL_OP_PROBE)
			write_devices(f, j, rpm);
		fprintf(f, "op %u\n", i);
		if (sc->op[i].kind == DL_OP_PROBE)
			write_probe(f, j, i);
		else
			write_op(f, j, i);
		fprintf(f, "opend %u\nsnap\n", i);
		err = close_file(f);
	}
	return err;
}

static int write_run(const char *dir, const struct dl_kjob *j)
{
	uint8_t *rpm = dl_sc_runtime_pm_users(j->sc);
	int err = rpm ? write_run_files(dir, j, rpm) : -ENOMEM;

	free(rpm);
	return err;
}

/* ---- the initramfs: cpio "newc", uncompressed ---- */

struct cpio {
	FILE *f;
	uint32_t ino;
	int err;
};

static void cpio_pad(struct cpio *c)
{
	long pos = ftell(c->f);

	while (pos >= 0 && pos % 4) {
		fputc(0, c->f);
		pos++;
	}
}

static void cpio_entry(struct cpio *c, const char *name, uint32_t mode, const void *data,
		       size_t len)
{
	size_t nl = strlen(name) + 1;

	fprintf(c->f, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X",
		++c->ino, mode, 0u, 0u, 1u, 0u, len, 0u, 0u, 0u, 0u, nl, 0u);
	fwrite(name, 1, nl, c->f);
	cpio_pad(c);
	if (len && fwrite(data, 1, len, c->f) != len)
		c->err = -EIO;
	cpio_pad(c);
}

static int read_all(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *b;

	if (!f)
		return -errno;
	b = malloc(cap);
	while (b) {
		size_t got = fread(b + n, 1, cap - n, f);

		n += got;
		if (n < cap)
			break;
		char *nb = realloc(b, cap * 2);

		if (!nb) {
			free(b);
			b = NULL;
			break;
		}
		b = nb;
		cap *= 2;
	}
	fclose(f);
	if (!b)
		return -ENOMEM;
	b[n] = '\0';	/* n < cap: for the readers that take it as a string */
	*buf = b;
	*len = n;
	return 0;
}

static int cpio_file(struct cpio *c, const char *name, const char *path, uint32_t mode)
{
	char *b;
	size_t n;
	int e = read_all(path, &b, &n);

	if (e)
		return e;
	cpio_entry(c, name, mode, b, n);
	free(b);
	return 0;
}

/* Every file under @dir (one level of run directories) as runs/NAME/FILE. */
static int cpio_runs(struct cpio *c, const char *dir)
{
	struct dirent **runs;
	int n = scandir(dir, &runs, NULL, alphasort), e = 0;

	if (n < 0)
		return -errno;
	cpio_entry(c, "runs", 040755, NULL, 0);
	for (int i = 0; i < n; i++) {
		char sub[4096], name[512];
		struct dirent **files;
		int m;

		if (runs[i]->d_name[0] == '.') {
			free(runs[i]);
			continue;
		}
		pathf(sub, sizeof(sub), "%s/%s", dir, runs[i]->d_name);
		pathf(name, sizeof(name), "runs/%s", runs[i]->d_name);
		cpio_entry(c, name, 040755, NULL, 0);
		m = scandir(sub, &files, NULL, alphasort);
		for (int k = 0; k < m; k++) {
			char p[4600], nm[800];

			if (files[k]->d_name[0] != '.' && !e) {
				pathf(p, sizeof(p), "%s/%s", sub, files[k]->d_name);
				pathf(nm, sizeof(nm), "%s/%s", name, files[k]->d_name);
				e = cpio_file(c, nm, p, 0100644);
			}
			free(files[k]);
		}
		if (m >= 0)
			free(files);
		free(runs[i]);
	}
	free(runs);
	return e;
}

static int write_initramfs(const char *out, const char *ko, const char *runs)
{
	struct cpio c = { .f = fopen(out, "wb") };
	char init[4096];
	int e;

	if (!c.f)
		return -errno;
	for (const char *d = "bin\0proc\0sys\0dev\0"; *d; d += strlen(d) + 1)
		cpio_entry(&c, d, 040755, NULL, 0);
	pathf(init, sizeof(init), "%s/init.sh", KMOD_SRC);
	e = cpio_file(&c, "init", init, 0100755);
	if (!e)
		e = cpio_file(&c, "bin/busybox", BUSYBOX, 0100755);
	if (!e)
		e = cpio_file(&c, "dlsim_kmod.ko", ko, 0100644);
	if (!e)
		e = cpio_runs(&c, runs);
	cpio_entry(&c, "TRAILER!!!", 0, NULL, 0);
	if (!e)
		e = c.err;
	if (fclose(c.f) && !e)
		e = -EIO;
	return e;
}

/* ---- running commands ---- */

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * Run @argv with stdout and stderr into @log; wait at most @timeout_ms
 * (0: forever) or until *@stop.  With @watch, *@first_ms is set to the time
 * (ms after the start) at which that file first had data.  Return the exit
 * status, -ETIMEDOUT, -EINTR or -errno of the fork.
 */
static int run_cmd(char *const argv[], const char *log, int64_t timeout_ms,
		   atomic_int *stop, const char *watch, int64_t *first_ms)
{
	int64_t t0 = now_ms();
	pid_t parent = getpid();
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd;

		/*
		 * The guest has its own process group (our kill(-pid) reaches
		 * what QEMU starts), so a kill -9 of dlsim would leave it
		 * running: it dies with this thread instead.  A parent that
		 * died before the prctl is seen by getppid().
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setpgid(0, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		if (watch && *first_ms < 0) {
			struct stat sb;

			if (stat(watch, &sb) == 0 && sb.st_size > 0)
				*first_ms = now_ms() - t0;
		}
		if (w == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if ((timeout_ms && now_ms() - t0 > timeout_ms) || (stop && *stop)) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return stop && *stop ? -EINTR : -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
	}
}

static void tail_into(const char *path, char *msg, size_t len)
{
	char *b;
	size_t n;

	if (read_all(path, &b, &n))
		return;
	size_t from = n > len - 1 ? n - (len - 1) : 0;

	snprintf(msg, len, "%.*s", (int)(n - from), b + from);
	free(b);
}

static void rm_tree(const char *dir);

/* The module's source files (KMOD_SRC), copied into its kbuild directory. */
static const char *const kmod_files[] = { "dlsim_kmod.c", "krec.h" };

/* A 64-bit FNV-1a of the module's sources: the cache key of its build; 0 if one is unreadable. */
static uint64_t fnv_sources(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char path[4096], *b;
	size_t n;

	for (size_t f = 0; f < sizeof(kmod_files) / sizeof(kmod_files[0]); f++) {
		pathf(path, sizeof(path), "%s/%s", KMOD_SRC, kmod_files[f]);
		if (read_all(path, &b, &n))
			return 0;
		for (size_t i = 0; i < n; i++)
			h = (h ^ (unsigned char)b[i]) * 0x100000001b3ull;
		free(b);
	}
	return h;
}

/* Copies the module's sources into @dir. */
static int copy_sources(const char *dir, char *msg, size_t msglen)
{
	char src[4096], dst[4400], *b;
	size_t n;

	for (size_t f = 0; f < sizeof(kmod_files) / sizeof(kmod_files[0]); f++) {
		FILE *o;

		pathf(src, sizeof(src), "%s/%s", KMOD_SRC, kmod_files[f]);
		pathf(dst, sizeof(dst), "%s/%s", dir, kmod_files[f]);
		if (read_all(src, &b, &n)) {
			snprintf(msg, msglen, "%s: cannot read the module's source", src);
			return -EIO;
		}
		o = fopen(dst, "w");
		if (!o || fwrite(b, 1, n, o) != n || fclose(o)) {
			free(b);
			snprintf(msg, msglen, "%s: cannot write", dst);
			return -EIO;
		}
		free(b);
	}
	return 0;
}

/*
 * The module for kernel @kdir, built once per source version into
 * @kdir/kmod-HASH/ (a temporary directory renamed into place, so that two
 * dlsim processes never see half a build).
 */
static int module_path(const char *kdir, char *ko, size_t kolen, char *msg, size_t msglen)
{
	char dir[4096], tmp[4200], p[4400], build[4096], log[4300];
	uint64_t h;
	int rc;

	h = fnv_sources();
	if (!h) {
		snprintf(msg, msglen, "%s: cannot read the module's sources", KMOD_SRC);
		return -ENOENT;
	}
	pathf(dir, sizeof(dir), "%s/kmod-%016" PRIx64, kdir, h);
	pathf(ko, kolen, "%s/dlsim_kmod.ko", dir);
	if (access(ko, R_OK) == 0)
		return 0;
	pathf(build, sizeof(build), "%s/build", kdir);
	pathf(tmp, sizeof(tmp), "%s.tmp%ld", dir, (long)getpid());
	if (mkdir(tmp, 0755) && errno != EEXIST) {
		snprintf(msg, msglen, "%s: %s", tmp, strerror(errno));
		return -errno;
	}
	pathf(p, sizeof(p), "%s/Kbuild", tmp);
	FILE *f = fopen(p, "w");

	if (!f || fprintf(f, "obj-m := dlsim_kmod.o\n") < 0 || fclose(f)) {
		snprintf(msg, msglen, "%s: cannot write", p);
		return -EIO;
	}
	rc = copy_sources(tmp, msg, msglen);
	if (rc)
		return rc;
	{
		char mflag[4300], script[4200], marker[4200];
		/* no BTF: pahole is not needed, and the guest does not use module BTF */
		char *argv[] = { "make", "-s", "-C", build, mflag, "CONFIG_DEBUG_INFO_BTF_MODULES=",
				 "modules", NULL };
		/* a kernel whose kbuild needs a newer toolchain than the host's (7.3):
		 * @kdir is a Debian root with one (fetch-kernel.sh), paths relative to it */
		char *chroot_argv[] = { "sh", script, (char *)kdir, "make", "-s", "-C", "/build",
					mflag, "CONFIG_DEBUG_INFO_BTF_MODULES=", "modules", NULL };
		bool in_root;

		pathf(marker, sizeof(marker), "%s/kbuild-chroot", kdir);
		in_root = access(marker, F_OK) == 0;
		pathf(script, sizeof(script), "%s/kbuild-chroot.sh", KMOD_SRC);
		pathf(mflag, sizeof(mflag), "M=%s", in_root ? tmp + strlen(kdir) : tmp);
		pathf(log, sizeof(log), "%s/build.log", tmp);
		rc = run_cmd(in_root ? chroot_argv : argv, log, 0, NULL, NULL, NULL);
	}
	if (rc) {
		tail_into(log, msg, msglen);
		rm_tree(tmp);
		return -ENOEXEC;
	}
	if (rename(tmp, dir) && access(ko, R_OK)) {
		snprintf(msg, msglen, "%s: %s", dir, strerror(errno));
		return -EIO;
	}
	return 0;
}

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		return false;
	for (const char *p = path; *p;) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, p, prog);
		if (access(buf, X_OK) == 0)
			return true;
		p += l + (e != NULL);
	}
	return false;
}

/* Does [@p, @end) begin with @word? (The dump is bytes: no NUL to stop at.) */
static bool starts(const char *p, const char *end, const char *word)
{
	size_t l = strlen(word);

	return (size_t)(end - p) >= l && !memcmp(p, word, l);
}

/* "@run N" at @p: N below @n in *@idx; false if not such a line. */
static bool run_line(const char *p, const char *end, size_t n, size_t *idx)
{
	size_t v = 0;
	const char *d = p + 5;

	if (!starts(p, end, "@run "))
		return false;
	for (; d < end && *d >= '0' && *d <= '9'; d++) {
		v = v * 10 + (size_t)(*d - '0');
		if (v >= n)
			return false;
	}
	*idx = v;
	return d > p + 5;
}

int dl_kernel_split(struct dl_kjob *jobs, size_t n, const char *dump, size_t len)
{
	const char *p = dump, *end = dump + len;
	int missing = 0;

	while (p < end) {
		const char *run = NULL;
		size_t idx;

		if (run_line(p, end, n, &idx))
			run = p;
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		p = nl ? nl + 1 : end;
		if (!run)
			continue;
		const char *q = p;

		while (q < end && !starts(q, end, "@run ") && !starts(q, end, "@end")) {
			const char *e = memchr(q, '\n', (size_t)(end - q));

			q = e ? e + 1 : end;
		}
		free(jobs[idx].dump);
		jobs[idx].len = (size_t)(q - run);
		jobs[idx].dump = malloc(jobs[idx].len + 1);
		if (!jobs[idx].dump)
			return -ENOMEM;
		memcpy(jobs[idx].dump, run, jobs[idx].len);
		jobs[idx].dump[jobs[idx].len] = '\0';
		p = q;
	}
	for (size_t i = 0; i < n; i++)
		missing += !jobs[i].dump || !strstr(jobs[i].dump, "\n@done");
	return missing ? -ETIMEDOUT : 0;
}

static void rm_tree(const char *dir)
{
	char *argv[] = { "rm", "-rf", (char *)dir, NULL };

	run_cmd(argv, "/dev/null", 0, NULL, NULL, NULL);
}

/* Wall time the guest may take: boot plus a budget per callback of the batch. */
static int64_t batch_timeout_ms(const struct dl_kjob *jobs, size_t n)
{
	int64_t cb = 0;

	for (size_t i = 0; i < n; i++)
		cb += (int64_t)jobs[i].sc->ndev * (2 + 8 * (int64_t)jobs[i].sc->nop);
	return BOOT_BUDGET_MS + cb * CALLBACK_BUDGET_NS / 1000000;
}

/*
 * Runs the guest (@argv: QEMU, or the stub) under the boot's timeout and
 * Ctrl-C, then reads the dump it left in @dump into jobs[0..n).  The dump's
 * bytes are left in *@buf (*@buf NULL: none).  Return: 0, -ETIMEDOUT (did not
 * power off, or stopped before every run ended), -EINTR, -EIO (no dump), or the
 * guest's exit status (> 0), each with @msg saying which.
 */
static int guest_run(char *const argv[], struct dl_kjob *jobs, size_t n,
		     const struct dl_kernel_opts *ko, const char *dump, char **buf, size_t *len,
		     char *msg, size_t msglen)
{
	int64_t to = ko->timeout_ms ? ko->timeout_ms : batch_timeout_ms(jobs, n);
	int64_t t0 = now_ms();
	int rc;

	*buf = NULL;
	*len = 0;
	ko->stats->boot_ms = -1;
	rc = run_cmd(argv, "/dev/null", to, ko->stop, dump, &ko->stats->boot_ms);
	ko->stats->qemu_ms = now_ms() - t0;
	if (rc == -ETIMEDOUT)
		snprintf(msg, msglen, "the guest did not power off within %.0f s"
			 " (--kernel-timeout)", (double)to / 1000);
	else if (rc > 0)
		snprintf(msg, msglen, "%s exited with status %d", argv[0], rc);
	if (rc == -EINTR)
		return rc;
	if (read_all(dump, buf, len) == 0) {
		int sp = dl_kernel_split(jobs, n, *buf, *len);

		if (sp && !rc) {
			rc = sp;
			snprintf(msg, msglen, "the guest stopped before every run ended");
		}
	} else if (!rc) {
		rc = -EIO;
		snprintf(msg, msglen, "the guest wrote no dump");
	}
	return rc;
}

/* Each job's files in @runs/NNN/, as the guest's init reads them. */
static int write_runs(const char *runs, const struct dl_kjob *jobs, size_t n)
{
	int rc = mkdir(runs, 0755) ? -errno : 0;

	for (size_t i = 0; i < n && !rc; i++) {
		char d[4300];

		pathf(d, sizeof(d), "%s/%03zu", runs, i);
		rc = write_run(d, &jobs[i]);
	}
	return rc;
}

/*
 * DLSIM_KGUEST_STUB=PROG: a fake guest for tests without QEMU.  PROG runs in
 * the guest's place as `PROG RUNS_DIR DUMP_FILE KERNEL_VERSION`, under the
 * same timeout and Ctrl-C as QEMU; RUNS_DIR holds each job's files as the
 * guest would see them (NNN/, one folder a job) and what PROG writes to
 * DUMP_FILE is read as the guest's dump.  No kernel, module or QEMU needed.
 */
static int stub_boot(struct dl_kjob *jobs, size_t n, const struct dl_kernel_opts *ko,
		     char *msg, size_t msglen)
{
	char tmpl[] = "/tmp/dlsim-kstub-XXXXXX", runs[4200], dump[4200];
	char *dumpbuf = NULL;
	size_t dumplen = 0;
	int rc;

	if (!mkdtemp(tmpl)) {
		snprintf(msg, msglen, "mkdtemp: %s", strerror(errno));
		return -errno;
	}
	pathf(runs, sizeof(runs), "%s/runs", tmpl);
	pathf(dump, sizeof(dump), "%s/dump.txt", tmpl);
	ko->stats->build_ms = 0;
	rc = write_runs(runs, jobs, n);
	if (!rc) {
		char *argv[] = { getenv("DLSIM_KGUEST_STUB"), runs, dump,
				 (char *)ko->version, NULL };

		rc = guest_run(argv, jobs, n, ko, dump, &dumpbuf, &dumplen, msg, msglen);
	}
	free(dumpbuf);
	rm_tree(tmpl);
	return rc > 0 ? -ETIMEDOUT : rc;   /* as the real guest's */
}

int dl_kernel_available(const char *version, const char *cache, char *msg, size_t msglen)
{
	struct dl_kernel_opts ko = { .version = version, .cache = cache };
	char vmlinuz[4200];

	if (getenv("DLSIM_KGUEST_STUB") && *getenv("DLSIM_KGUEST_STUB"))
		return 0;
	pathf(vmlinuz, sizeof(vmlinuz), "%s/%s/vmlinuz", cache_dir(&ko), version);
	if (access(vmlinuz, R_OK)) {
		snprintf(msg, msglen, "no kernel %s in %s/%s: run 'make kernels' (KERNELS=%s) to fetch"
			 " it once", version, cache_dir(&ko), version, version);
		return -ENOENT;
	}
	if (!in_path(QEMU)) {
		snprintf(msg, msglen, "%s is not installed: run 'make deps' (Debian package"
			 " qemu-system-x86) or 'make kernels'", QEMU);
		return -ENOENT;
	}
	if (access(BUSYBOX, X_OK)) {
		snprintf(msg, msglen, "%s is missing: run 'make deps' (Debian package busybox-static)"
			 " or 'make kernels'", BUSYBOX);
		return -ENOENT;
	}
	return 0;
}

int dl_kernel_boot(struct dl_kjob *jobs, size_t n, const struct dl_kernel_opts *ko,
		   char *msg, size_t msglen, char *kept, size_t keptlen)
{
	char kdir[4096], vmlinuz[4200], kofile[4400], tmpl[] = "/tmp/dlsim-kernel-XXXXXX";
	char runs[4200], initrd[4200], dump[4200], console[4200], chardev[4400];
	char *dumpbuf = NULL;
	size_t dumplen = 0;
	int rc;

	msg[0] = kept[0] = '\0';
	if (getenv("DLSIM_KGUEST_STUB") && *getenv("DLSIM_KGUEST_STUB"))
		return stub_boot(jobs, n, ko, msg, msglen);
	if ((rc = dl_kernel_available(ko->version, ko->cache, msg, msglen)))
		return rc;
	pathf(kdir, sizeof(kdir), "%s/%s", cache_dir(ko), ko->version);
	pathf(vmlinuz, sizeof(vmlinuz), "%s/vmlinuz", kdir);
	{
		int64_t t0 = now_ms();

		rc = module_path(kdir, kofile, sizeof(kofile), msg, msglen);
		ko->stats->build_ms = now_ms() - t0;
	}
	if (rc)
		return rc;
	if (!mkdtemp(tmpl)) {
		snprintf(msg, msglen, "mkdtemp: %s", strerror(errno));
		return -errno;
	}
	pathf(runs, sizeof(runs), "%s/runs", tmpl);
	pathf(initrd, sizeof(initrd), "%s/initrd.cpio", tmpl);
	pathf(dump, sizeof(dump), "%s/dump.txt", tmpl);
	pathf(console, sizeof(console), "%s/console.txt", tmpl);
	rc = write_runs(runs, jobs, n);
	if (!rc)
		rc = write_initramfs(initrd, kofile, runs);
	if (rc) {
		snprintf(msg, msglen, "writing the initramfs in %s: %s", tmpl, strerror(-rc));
		rm_tree(tmpl);
		return rc;
	}
	pathf(chardev, sizeof(chardev), "file,id=dump,path=%s", dump);
	{
		char serial[4300], append[1024];
		char *argv[] = {
			QEMU, "-M", "pc", "-m", "2048M", "-smp", "1", "-nodefaults", "-nographic",
			"-no-reboot", "-icount", "shift=2,sleep=off", "-kernel", vmlinuz,
			"-initrd", initrd, "-append", append,
			"-serial", serial, "-device", "virtio-serial-pci", "-chardev", chardev,
			"-device", "virtserialport,chardev=dump,name=dlsim", "-monitor", "none", NULL
		};
		const char *extra = getenv("DLSIM_KERNEL_APPEND");

		pathf(serial, sizeof(serial), "file:%s", console);
		/* DLSIM_KERNEL_APPEND: more kernel parameters, for experiments */
		if (pathf(append, sizeof(append), "%s %s", KERNEL_CMDLINE, extra ? extra : "")) {
			snprintf(msg, msglen, "DLSIM_KERNEL_APPEND is too long");
			rm_tree(tmpl);
			return -EINVAL;
		}
		rc = guest_run(argv, jobs, n, ko, dump, &dumpbuf, &dumplen, msg, msglen);
	}
	if (dumpbuf && ko->dump_out) {
		FILE *f = fopen(ko->dump_out, "w");

		if (!f || fwrite(dumpbuf, 1, dumplen, f) != dumplen || fclose(f))
			snprintf(msg, msglen, "%s: cannot write the dump", ko->dump_out);
	}
	free(dumpbuf);
	if (rc && rc != -EINTR) {
		snprintf(kept, keptlen, "%s", tmpl);
		rc = rc > 0 ? -ETIMEDOUT : rc;
	} else {
		rm_tree(tmpl);
	}
	return rc;
}

int dl_kernel_load_dump(struct dl_kjob *jobs, size_t n, const char *path, char *msg,
			size_t msglen)
{
	char *b;
	size_t len;
	int rc = read_all(path, &b, &len);

	if (rc) {
		snprintf(msg, msglen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = dl_kernel_split(jobs, n, b, len);
	free(b);
	if (rc == -ETIMEDOUT)
		snprintf(msg, msglen, "%s: some run's dump is missing or stops early", path);
	return rc;
}

void dl_kernel_jobs_free(struct dl_kjob *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(jobs[i].dump);
		jobs[i].dump = NULL;
		jobs[i].len = 0;
	}
}
