/*
 * sw_pool.c - the local pool: N worker processes (fork), fed one task at a
 * time over a pipe (a queue: the costliest tasks first, so that the last
 * ones are short).  Direct (the default): each worker commits its runs into
 * OUT.db itself, one at a time under SQLite's write lock.  --write shards:
 * each worker writes its own shard and the parent merges finished runs from
 * the shards every second, and once more at the end.
 *
 * Processes, not threads: a run that crashes takes its worker with it, not
 * the sweep.  The parent merges what the dead worker finished, records the
 * rest of its task as failed, and starts another worker.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sim/sweep/sw_internal.h"
#include "sim/sweep/sweep.h"

#define MERGE_EVERY_NS 1000000000LL
#define TICK_MS 200

/* A batch of tasks (plan.batch, kernel mode: one boot); a result comes back per task, in order. */
struct msg_task {
	uint32_t n;
	uint32_t task[DL_SWEEP_MAX_BATCH];
	uint64_t pending[DL_SWEEP_MAX_BATCH];
};

struct msg_done {
	uint32_t task;
	struct dl_sweep_task_result res;
};

struct child {
	pid_t pid;
	int to, from;                /* task pipe (write end), result pipe (read end) */
	bool busy;
	struct msg_task cur;
	uint32_t reported;           /* tasks of cur whose result came back */
	char shard[4200];
	char prefix[300];            /* its shard files' names start with this */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* All @n bytes through a pipe (@out: write, else read), across EINTR and short transfers. */
static bool full_io(int fd, void *buf, size_t n, bool out)
{
	char *p = buf;

	while (n) {
		ssize_t k = out ? write(fd, p, n) : read(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

static bool full_read(int fd, void *buf, size_t n)
{
	return full_io(fd, buf, n, false);
}

static bool full_write(int fd, const void *buf, size_t n)
{
	return full_io(fd, (void *)buf, n, true);
}

/* The worker process: tasks in, results out, until the task pipe closes. */
static void child_main(const char *outpath, bool direct, const struct dl_sweep_plan *p, int in,
		       int out, atomic_int *stop)
{
	struct dl_sweep_worker *w;
	struct msg_task t;
	char shard[4200], err[512];
	int code = 0;

	signal(SIGPIPE, SIG_IGN);
	dl_sweep_shard_path(outpath, (long)getpid(), -1, shard, sizeof(shard));
	if (dl_sweep_worker_open(shard, direct ? outpath : NULL, p, &w, err, sizeof(err))) {
		fprintf(stderr, "dlsim sweep: worker: %s\n", err);
		_exit(3);
	}
	while (!*stop && full_read(in, &t, sizeof(t))) {
		struct dl_sweep_task_result res[DL_SWEEP_MAX_BATCH];
		bool sent = true;

		if (dl_sweep_worker_run_batch(w, t.task, t.pending, t.n, stop, res)) {
			fprintf(stderr, "dlsim sweep: worker: %s\n", dl_sweep_worker_error(w));
			code = 4;
			break;
		}
		for (uint32_t i = 0; i < t.n && sent; i++) {
			struct msg_done d = { .task = t.task[i], .res = res[i] };

			sent = full_write(out, &d, sizeof(d));
		}
		if (!sent)
			break;
	}
	dl_sweep_worker_close(w);
	_exit(code);
}

static int spawn(struct child *c, struct child *all, uint32_t n, const struct dl_sweep_coord *co,
		 const struct dl_sweep_plan *p)
{
	int tp[2], rp[2];
	pid_t pid, parent;

	if (pipe(tp))
		return -errno;
	if (pipe(rp)) {
		close(tp[0]);
		close(tp[1]);
		return -errno;
	}
	fflush(NULL);
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		close(tp[0]);
		close(tp[1]);
		close(rp[0]);
		close(rp[1]);
		return -errno;
	}
	if (pid == 0) {
		/*
		 * A sweep killed with -9 takes its workers along: SIGTERM is the
		 * stop a worker hears (its run or guest is ended, the shard
		 * closed), and its guest dies with it (kboot.c).  A parent gone
		 * before the prctl shows in getppid().
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
			_exit(3);
		/* only its own pipes: another worker's must see EOF when the parent closes it */
		for (uint32_t i = 0; i < n; i++) {
			if (all[i].pid && all[i].to >= 0)
				close(all[i].to);
			if (all[i].pid && all[i].from >= 0)
				close(all[i].from);
		}
		close(tp[1]);
		close(rp[0]);
		child_main(co->outpath, co->direct, p, tp[0], rp[1], co->stop);
	}
	close(tp[0]);
	close(rp[1]);
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->to = tp[1];
	c->from = rp[0];
	dl_sweep_shard_path(co->outpath, (long)pid, -1, c->shard, sizeof(c->shard));
	{
		const char *base = strrchr(c->shard, '/');
		size_t n;

		base = base ? base + 1 : c->shard;
		n = strlen(base);
		if (n > 3 && !strcmp(base + n - 3, ".db"))
			n -= 3;
		snprintf(c->prefix, sizeof(c->prefix), "%.*s-s", (int)n, base);
	}
	return 0;
}

/* The runs the worker finished since the last look (their events stay in its shard). */
static int merge_child(struct dl_sweep_coord *co, struct child *c)
{
	uint32_t k = 0;
	int ret;

	ret = dl_sweep_merge_dir(co->out, co->outpath, c->prefix, &k, co->err, sizeof(co->err));
	co->merged += k;
	return ret;
}

/* A worker is gone: keep what it finished, record the rest of its task as failed. */
static int reap(struct dl_sweep_coord *co, struct child *c, const struct dl_sweep_plan *p)
{
	int status = 0, ret;
	char why[160];

	close(c->to);
	close(c->from);
	c->to = c->from = -1;
	waitpid(c->pid, &status, 0);
	ret = merge_child(co, c);
	if (!ret && c->busy && !*co->stop) {
		if (WIFSIGNALED(status))
			snprintf(why, sizeof(why), "the worker died of signal %d during this run",
				 WTERMSIG(status));
		else
			snprintf(why, sizeof(why), "the worker exited with status %d during this run",
				 WEXITSTATUS(status));
		for (uint32_t i = c->reported; i < c->cur.n && !ret; i++) {
			ret = dl_sweep_out_fail(co->out, p, c->cur.task[i], c->cur.pending[i], why,
						&co->failed);
			co->done += (uint32_t)__builtin_popcountll(c->cur.pending[i]);
		}
		if (ret)
			snprintf(co->err, sizeof(co->err), "%s%s: recording the runs of a lost worker: %s",
				 (sqlite3_extended_errcode(co->out) & 0xff) == SQLITE_FULL ? "disk full: " : "",
				 co->outpath, sqlite3_errmsg(co->out));
	}
	c->pid = 0;
	c->busy = false;
	return ret;
}

/*
 * Tasks in the next batch: plan.batch, but no more than leaves every worker
 * a share of what is left (three boards on two workers: 2 and 1).
 */
static uint32_t batch_size(const struct dl_sweep_plan *p, const uint64_t *pending,
			   const uint32_t *order, uint32_t next, uint32_t ntask, uint32_t jobs)
{
	uint32_t want = p->batch ? p->batch : 1, left = 0;

	if (want > DL_SWEEP_MAX_BATCH)
		want = DL_SWEEP_MAX_BATCH;
	if (want <= 1)
		return 1;
	for (uint32_t k = next; k < ntask && left < want * jobs; k++)
		left += pending[order[k]] != 0;
	left = (left + jobs - 1) / jobs;
	return left < want ? (left ? left : 1) : want;
}

/* The pool as dl_sweep_pool() runs it. */
struct pool {
	struct dl_sweep_coord *co;
	const struct dl_sweep_plan *p;
	const uint64_t *pending;
	uint32_t *order;             /* the tasks, costliest first */
	uint32_t next, ntask;        /* the next task of order[] to hand out */
	struct child *ch;
	struct pollfd *pf;
	uint32_t jobs;
	bool forwarded;              /* Ctrl-C passed on to the workers */
	int64_t last_merge;
	int ret;                     /* the first failure */
};

/* Ctrl-C: the runs in flight end as 'interrupted' (a terminal signals them too). */
static void forward_stop(struct pool *pl)
{
	if (!*pl->co->stop || pl->forwarded)
		return;
	for (uint32_t i = 0; i < pl->jobs; i++)
		if (pl->ch[i].pid)
			kill(pl->ch[i].pid, SIGTERM);
	pl->forwarded = true;
}

/* Idle worker C gets the next batch; one that died idle leaves it to its successor. */
static void hand_out(struct pool *pl, struct child *c)
{
	uint32_t want = batch_size(pl->p, pl->pending, pl->order, pl->next, pl->ntask, pl->jobs);
	uint32_t k = pl->next;

	memset(&c->cur, 0, sizeof(c->cur));
	for (; k < pl->ntask && c->cur.n < want; k++)
		if (pl->pending[pl->order[k]]) {
			c->cur.task[c->cur.n] = pl->order[k];
			c->cur.pending[c->cur.n++] = pl->pending[pl->order[k]];
		}
	c->reported = 0;
	c->busy = full_write(c->to, &c->cur, sizeof(c->cur));
	if (c->busy)
		pl->next = k;
}

/* Hand out tasks to idle workers; close the pipes of idle ones at the end. */
static void feed_idle(struct pool *pl)
{
	for (uint32_t i = 0; i < pl->jobs; i++) {
		struct child *c = &pl->ch[i];

		if (!c->pid || c->busy || c->to < 0)
			continue;
		while (pl->next < pl->ntask && !pl->pending[pl->order[pl->next]])
			pl->next++;
		if (pl->next < pl->ntask && !*pl->co->stop && !pl->ret) {
			hand_out(pl, c);
		} else {
			close(c->to);
			c->to = -1;
		}
	}
}

/* Wait up to a tick for a worker's word: the workers alive (0: the pool is done). */
static uint32_t wait_workers(struct pool *pl)
{
	uint32_t alive = 0;

	for (uint32_t i = 0; i < pl->jobs; i++) {
		pl->pf[i].fd = pl->ch[i].pid ? pl->ch[i].from : -1;
		pl->pf[i].events = POLLIN;
		pl->pf[i].revents = 0;
		alive += pl->ch[i].pid != 0;
	}
	if (alive && poll(pl->pf, pl->jobs, TICK_MS) < 0 && errno != EINTR) {
		pl->ret = -errno;
		return 0;
	}
	return alive;
}

/* One task's result D from worker C, into the sweep's counts. */
static void take_result(struct dl_sweep_coord *co, struct child *c, const struct msg_done *d)
{
	uint64_t pend = c->reported < c->cur.n ? c->cur.pending[c->reported] : 0;

	c->busy = ++c->reported < c->cur.n;
	co->done += (uint32_t)__builtin_popcountll(pend) - d->res.interrupted;
	co->failed += d->res.failed;
	co->violations += d->res.violations;
	co->lock_wait_ns += d->res.lock_wait_ns;
	co->lock_hold_ns += d->res.lock_hold_ns;
	co->lock_hold_cpu_ns += d->res.lock_hold_cpu_ns;
	if (co->task_done)
		co->task_done(co, d->task, &d->res);
}

/* Results from the workers that spoke; a worker gone is reaped and, tasks left, replaced
 * (one that cannot be started ends the round: pl->ret says why). */
static void collect(struct pool *pl)
{
	for (uint32_t i = 0; i < pl->jobs; i++) {
		struct child *c = &pl->ch[i];
		struct msg_done d;
		int r;

		if (!c->pid || !(pl->pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (full_read(c->from, &d, sizeof(d))) {
			take_result(pl->co, c, &d);
			continue;
		}
		/* EOF: the worker exited (end of tasks, Ctrl-C, or a crash) */
		r = reap(pl->co, c, pl->p);
		if (r && !pl->ret)
			pl->ret = r;
		if (pl->next < pl->ntask && !*pl->co->stop && !pl->ret &&
		    (pl->ret = spawn(c, pl->ch, pl->jobs, pl->co, pl->p)))
			return;
	}
}

/* --write shards: the runs the workers finished, into OUT.db every second.  Direct: the
 * workers commit their runs themselves; the parent only after one died (reap). */
static void merge_due(struct pool *pl)
{
	if (pl->co->direct || now_ns() - pl->last_merge < MERGE_EVERY_NS)
		return;
	for (uint32_t i = 0; i < pl->jobs && !pl->ret; i++)
		if (pl->ch[i].pid)
			pl->ret = merge_child(pl->co, &pl->ch[i]);
	pl->last_merge = now_ns();
}

int dl_sweep_pool(struct dl_sweep_coord *co, const struct dl_sweep_plan *p,
		  const uint64_t *pending, uint32_t jobs)
{
	struct pool pl = {
		.co = co, .p = p, .pending = pending, .order = dl_sweep_task_order(p),
		.ntask = dl_sweep_ntasks(p), .ch = calloc(jobs, sizeof(*pl.ch)),
		.pf = calloc(jobs, sizeof(*pl.pf)), .jobs = jobs, .last_merge = now_ns(),
	};
	char dir[4096];

	if (!pl.order || !pl.ch || !pl.pf) {
		free(pl.order);
		free(pl.ch);
		free(pl.pf);
		snprintf(co->err, sizeof(co->err), "out of memory");
		return -ENOMEM;
	}
	dl_sweep_shard_dir(co->outpath, dir, sizeof(dir));
	mkdir(dir, 0777);
	signal(SIGPIPE, SIG_IGN);
	for (uint32_t i = 0; i < jobs && !pl.ret; i++)
		pl.ret = spawn(&pl.ch[i], pl.ch, jobs, co, p);
	for (;;) {
		forward_stop(&pl);
		feed_idle(&pl);
		if (!wait_workers(&pl))
			break;
		collect(&pl);
		merge_due(&pl);
		if (co->progress)
			co->progress(co);
	}
	for (uint32_t i = 0; i < jobs; i++)
		if (pl.ch[i].pid) {
			int r = reap(co, &pl.ch[i], p);

			if (r && !pl.ret)
				pl.ret = r;
		}
	rmdir(dir);             /* only if no worker wrote a shard */
	free(pl.order);
	free(pl.ch);
	free(pl.pf);
	return pl.ret;
}
