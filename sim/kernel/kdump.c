/*
 * kdump.c - one run's dump from dlsim_kmod (debugfs dlsim/events) turned
 * into ordinary dlsim events and a dl_run_result (see kmode.h).
 *
 * The dump is text: a header line, then one record a line,
 *   T KIND DEV AUX KEY ERR FLAGS PID
 * with T the guest's ktime_get_ns().  Records come in the order the module
 * appended them, which is causal (a callback that waited for another one
 * was appended after it); they are stably sorted by T, which keeps that.
 *
 * What the kernel does not report callback by callback is taken from its
 * snapshots ("snap", after every op): the order of dpm_list (as dpm_move
 * events, only when it differs from the replayed one) and each link's
 * status and flags (as link_state and link_del events).
 *
 * Dumps since the module's kretprobes also hold "core_defer" (the driver
 * core turned a probe away in device_links_check_suppliers(), before the
 * probe callback: a probe_defer event, one attempt and one defer, as the
 * DES counts its own) and "retry_begin"/"retry_end" (one walk of
 * deferred_probe_work_func(); counted in the info) and "reorder" (FLAGS: the
 * ns that device_pm_move_to_tail() took before a retry; summed in the info).
 * Older dumps have none.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/dl_core.h"
#include "sim/kernel/kmode.h"
#include "sim/kernel/krec.h"

#define EPROBE_DEFER_ 517
#define MAX_PIDS 4096


struct krec {
	int64_t t;
	int32_t dev, aux, err;
	uint32_t key, flags, pid;
	uint8_t kind;
};

struct conv {
	const struct dl_scenario *sc;
	const struct dl_engine_opts *o;
	struct dl_run_result *r;
	struct dl_kernel_info *info;
	int64_t t0;
	/* links, by (consumer, supplier) pair: ids in order of first sight */
	uint32_t nl, capl;
	uint32_t *lc, *ls, *lflags;
	uint8_t *lstate, *llive, *lseen;
	/* replayed dpm_list */
	uint64_t *pos, clock;
	uint8_t *registered;
	uint32_t nreg;
	/* threads: pid -> worker number; 0 is the op's main thread */
	uint32_t pids[MAX_PIDS], npid, main_pid;
	int32_t cur_op, sleep_op, failed_sleep;
	int64_t *cb_start;       /* per device: start of the callback running */
	uint64_t events;
	uint32_t refused;        /* link_refused records */
	int64_t retry_t;         /* start of the deferred-probe walk running, -1: none */
	/* the snapshot being read: dpm_list's order so far */
	int in_snap;
	struct krec *order;
	uint32_t norder;
};

static int parse_kind(const char *s)
{
	for (int k = 0; k < R_COUNT; k++)
		if (!strcmp(s, rec_name[k]))
			return k;
	return -1;
}

/* The kernel's enum device_link_state is dlsim's minus one (NONE is -1, printed as u8). */
static uint8_t link_state(uint32_t k)
{
	return k >= DL_STATE_COUNT - 1 ? DL_STATE_NONE : (uint8_t)(k + 1);
}

static void emit(struct conv *c, int64_t t, uint16_t kind, uint32_t dev, uint32_t link,
		 uint32_t aux, uint32_t flags, uint16_t phase, int err, uint32_t pid)
{
	struct dl_event e = { .t_ns = t - c->t0, .dev = dev, .link = link, .aux = aux,
			      .flags = flags, .kind = kind, .phase = phase, .err = (int16_t)err };
	uint32_t w = 0;

	if (pid && pid != c->main_pid) {
		for (w = 0; w < c->npid && c->pids[w] != pid; w++)
			;
		if (w == c->npid && c->npid < MAX_PIDS)
			c->pids[c->npid++] = pid;
		w++;
	}
	e.worker = (int16_t)(w > INT16_MAX ? INT16_MAX : w);
	c->events++;
	if (c->o->sink.emit)
		c->o->sink.emit(c->o->sink.ctx, &e);
}

static uint32_t link_id(struct conv *c, uint32_t con, uint32_t sup, int create)
{
	for (uint32_t i = 0; i < c->nl; i++)
		if (c->lc[i] == con && c->ls[i] == sup)
			return i;
	if (!create)
		return DL_NONE;
	if (c->nl == c->capl) {
		uint32_t cap = c->capl ? c->capl * 2 : 64;
		uint32_t *a = realloc(c->lc, cap * sizeof(*a)), *b, *f;
		uint8_t *s, *l, *n;

		if (a) c->lc = a;
		b = realloc(c->ls, cap * sizeof(*b));
		if (b) c->ls = b;
		f = realloc(c->lflags, cap * sizeof(*f));
		if (f) c->lflags = f;
		s = realloc(c->lstate, cap);
		if (s) c->lstate = s;
		l = realloc(c->llive, cap);
		if (l) c->llive = l;
		n = realloc(c->lseen, cap);
		if (n) c->lseen = n;
		if (!a || !b || !f || !s || !l || !n)
			return DL_NONE;
		c->capl = cap;
	}
	c->lc[c->nl] = con;
	c->ls[c->nl] = sup;
	c->lflags[c->nl] = 0;
	c->lstate[c->nl] = DL_STATE_NONE;
	c->llive[c->nl] = 0;
	c->lseen[c->nl] = 0;
	return c->nl++;
}

/*
 * The kernel only says NULL; the reason is the first of device_link_add()'s
 * checks (drivers/base/core.c, in its order) that the request fails.  Those
 * on flags are exact; of the others, runtime PM is tried before the
 * dependency check, and a SYNC_STATE_ONLY link to a bound consumer last.
 */
static unsigned refusal(const struct conv *c, uint32_t con, uint32_t sup, uint32_t f)
{
	(void)c;
	if (con == sup)
		return DL_REFUSE_SELF_LINK;
	if (f & ~DL_ADD_VALID_FLAGS)
		return DL_REFUSE_INVALID_FLAGS;
	if ((f & DL_FLAG_STATELESS) && (f & DL_MANAGED_LINK_FLAGS))
		return DL_REFUSE_STATELESS_MANAGED;
	if ((f & DL_FLAG_AUTOPROBE_CONSUMER) &&
	    (f & (DL_FLAG_AUTOREMOVE_CONSUMER | DL_FLAG_AUTOREMOVE_SUPPLIER)))
		return DL_REFUSE_AUTOPROBE_AUTOREMOVE;
	if ((f & DL_FLAG_SYNC_STATE_ONLY) && (f & ~(DL_FLAG_SYNC_STATE_ONLY | DL_FLAG_INFERRED)))
		return DL_REFUSE_SYNC_STATE_ONLY_FLAGS;
	if ((f & DL_FLAG_PM_RUNTIME) && (f & DL_FLAG_RPM_ACTIVE))
		return DL_REFUSE_RPM_RESUME_FAILED;
	if (f & DL_FLAG_SYNC_STATE_ONLY)
		return DL_REFUSE_CONSUMER_BOUND;
	return DL_REFUSE_REVERSE_DEPENDENCY;
}

static struct dl_op_result *op_at(struct conv *c, int32_t i)
{
	return i >= 0 && (uint32_t)i < c->r->nops ? &c->r->op[i] : NULL;
}

static void op_touch(struct conv *c, int32_t i, int64_t t)
{
	struct dl_op_result *op = op_at(c, i);

	if (op && t - c->t0 - op->start_ns > op->makespan_ns)
		op->makespan_ns = t - c->t0 - op->start_ns;
}

/* The end of a snapshot: dpm_list order and the links' status. */
static void snap_end(struct conv *c, const struct krec *order, uint32_t norder, int64_t t,
		     uint32_t pid)
{
	int same = norder == c->nreg;

	for (uint32_t i = 1; same && i < norder; i++)
		same = c->pos[order[i].dev] > c->pos[order[i - 1].dev];
	if (!same)
		for (uint32_t i = 0; i < norder; i++) {
			c->pos[order[i].dev] = ++c->clock;
			emit(c, t, DL_EV_DPM_MOVE, (uint32_t)order[i].dev, DL_NONE, DL_NONE, 0, 0, 0, pid);
		}
	for (uint32_t l = 0; l < c->nl; l++) {
		if (c->llive[l] && !c->lseen[l]) {
			c->llive[l] = 0;
			emit(c, t, DL_EV_LINK_DEL, c->lc[l], l, c->ls[l], c->lflags[l], 0, 0, pid);
		}
		c->lseen[l] = 0;
	}
}

static void snap_link(struct conv *c, const struct krec *k, uint32_t pid)
{
	uint32_t l = link_id(c, (uint32_t)k->dev, (uint32_t)k->aux, 1);
	uint8_t st = link_state(k->key);

	if (l == DL_NONE)
		return;
	c->lseen[l] = 1;
	if (!c->llive[l]) {
		c->llive[l] = 1;
		c->lflags[l] = k->flags;
		c->lstate[l] = st;
		emit(c, k->t, DL_EV_LINK_ADD, (uint32_t)k->dev, l, (uint32_t)k->aux, k->flags, st, 0, pid);
		return;
	}
	if (st != c->lstate[l] || k->flags != c->lflags[l]) {
		c->lstate[l] = st;
		c->lflags[l] = k->flags;
		emit(c, k->t, DL_EV_LINK_STATE, (uint32_t)k->dev, l, (uint32_t)k->aux, k->flags, st, 0, pid);
	}
}

static void callback(struct conv *c, const struct krec *k, int end)
{
	uint32_t d = (uint32_t)k->dev;
	unsigned key = k->key;
	struct dl_op_result *op = op_at(c, c->cur_op);
	uint16_t kind;
	uint16_t phase = 0;

	if (key == DL_LAT_PROBE) {
		kind = end ? DL_EV_PROBE_END : DL_EV_PROBE_START;
		if (!end && op)
			op->probe_attempts++;
		if (end && k->err == -EPROBE_DEFER_ && op)
			op->probe_defers++;
	} else if (key == DL_LAT_REMOVE) {
		kind = end ? DL_EV_UNBIND_END : DL_EV_UNBIND_START;
	} else if (key >= DL_LAT_PREPARE && key <= DL_LAT_SUSPEND_NOIRQ) {
		kind = end ? DL_EV_SUSPEND_END : DL_EV_SUSPEND_START;
		phase = (uint16_t)(key - DL_LAT_PREPARE);
	} else if (key >= DL_LAT_RESUME_NOIRQ && key <= DL_LAT_COMPLETE) {
		kind = end ? DL_EV_RESUME_END : DL_EV_RESUME_START;
		phase = (uint16_t)(key - DL_LAT_PREPARE);
	} else if (key == DL_LAT_RPM_SUSPEND || key == DL_LAT_RPM_RESUME) {
		if (!end || k->err)
			return;
		kind = key == DL_LAT_RPM_SUSPEND ? DL_EV_RPM_SUSPEND : DL_EV_RPM_RESUME;
	} else {
		return;
	}
	if (!end) {
		c->cb_start[d] = k->t;
	} else if (op) {
		op->work_ns += k->t - c->cb_start[d];
		op_touch(c, c->cur_op, k->t);
		if (k->err && k->err != -EPROBE_DEFER_ && !op->err) {
			op->err = k->err;
			op->fail_dev = d;
			if (key >= DL_LAT_PREPARE && key <= DL_LAT_SUSPEND_NOIRQ)
				c->failed_sleep = 1;
		}
	}
	emit(c, k->t, kind, d, DL_NONE, DL_NONE, 0, phase, k->err, k->pid);
}

/* The driver core deferred a probe before its callback (device_links_check_suppliers()). */
static void core_defer(struct conv *c, const struct krec *k)
{
	struct dl_op_result *op = op_at(c, c->cur_op);

	if (op) {
		op->probe_attempts++;
		op->probe_defers++;
		op_touch(c, c->cur_op, k->t);
	}
	c->info->core_defers++;
	emit(c, k->t, DL_EV_PROBE_DEFER, (uint32_t)k->dev, DL_NONE, DL_NONE, 0, 0,
	     -EPROBE_DEFER_, k->pid);
}

static void phase_mark(struct conv *c, const struct krec *k, int begin)
{
	int p = (int)k->key;
	struct dl_op_result *op;

	if (p < 0 || p >= DL_PH_COUNT)
		return;
	if (begin) {
		c->main_pid = k->pid;
		c->info->last_phase = p;
		if (p == DL_PH_PREPARE) {
			c->sleep_op = c->cur_op;
			c->failed_sleep = 0;
			if ((op = op_at(c, c->cur_op)))
				op->start_ns = k->t - c->t0;
		} else if (p == DL_PH_RESUME_NOIRQ && !c->failed_sleep && c->sleep_op >= 0) {
			c->cur_op = c->sleep_op + 1;
			c->info->last_op = c->cur_op;
			if ((op = op_at(c, c->cur_op)))
				op->start_ns = k->t - c->t0;
		}
	} else {
		op_touch(c, c->cur_op, k->t);
	}
}

static int parse_line(const char *s, struct krec *k)
{
	char name[24];
	long long t;
	int n, kind;

	if (sscanf(s, "%lld %23s %" SCNd32 " %" SCNd32 " %" SCNu32 " %" SCNd32 " %" SCNu32
		   " %" SCNu32 "%n", &t, name, &k->dev, &k->aux, &k->key, &k->err, &k->flags,
		   &k->pid, &n) != 8)
		return -EINVAL;
	if ((kind = parse_kind(name)) < 0)
		return -EINVAL;
	k->t = t;
	k->kind = (uint8_t)kind;
	return 0;
}

/*
 * A snapshot's order and link records are written by one thread right after
 * its snap record, but records of other threads (an async runtime suspend,
 * say) may take buffer slots and times in between: give the snapshot's
 * records the snap record's time, so that sorting keeps them together.
 */
static void snap_times(struct krec *k, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (k[i].kind != R_SNAP)
			continue;
		for (uint32_t j = i + 1; j < n; j++) {
			if (k[j].pid != k[i].pid)
				continue;
			if (k[j].kind != R_ORDER && k[j].kind != R_LINK)
				break;
			k[j].t = k[i].t;
		}
	}
}

/*
 * Stable by time: the records are nearly sorted (only independent callbacks
 * racing for the buffer swap places), so insertion sort is linear here and
 * keeps the causal order of records with equal times.
 */
static void sort_by_time(struct krec *k, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct krec x = k[i];
		uint32_t j = i;

		while (j > 0 && k[j - 1].t > x.t) {
			k[j] = k[j - 1];
			j--;
		}
		k[j] = x;
	}
}

int dl_kernel_release(const char *dump, size_t len, char *out, size_t outlen)
{
	const char *end = dump + len;

	out[0] = '\0';
	for (const char *p = dump; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[256], rel[96];
		unsigned v;

		if (l < sizeof(line) && l > 12 && !strncmp(p, "dlsim-kdump ", 12)) {
			memcpy(line, p, l);
			line[l] = '\0';
			if (sscanf(line, "dlsim-kdump %u %95s", &v, rel) == 2) {
				snprintf(out, outlen, "%s", rel);
				return 0;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return -ENOENT;
}

/* Split @dump into lines and parse the records; the header gives the release. */
static int parse_dump(const char *dump, size_t len, uint32_t ndev, struct krec **out,
		      uint32_t *nout, int *done, unsigned *lost, struct dl_kernel_info *info)
{
	struct krec *k = NULL;
	uint32_t n = 0, cap = 0, lineno = 0;
	int header = 0;
	const char *p = dump, *end = dump + len;

	*done = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[256];

		lineno++;
		if (l >= sizeof(line))
			l = sizeof(line) - 1;
		memcpy(line, p, l);
		line[l] = '\0';
		p = nl ? nl + 1 : end;
		if (!line[0])
			continue;
		if (line[0] == '@') {
			if (!strncmp(line, "@done", 5))
				*done = 1;
			else if (strncmp(line, "@run", 4))
				snprintf(info->msg, sizeof(info->msg), "guest: %.200s", line + 1);
			continue;
		}
		if (!strncmp(line, "dlsim-kdump ", 12)) {
			unsigned v, nd, nrec = 0, nlost = 0;
			char rel[96], mach[32];

			if (sscanf(line, "dlsim-kdump %u %95s %31s devices %u records %u lost %u", &v, rel,
				   mach, &nd, &nrec, &nlost) < 4 || v != 1) {
				snprintf(info->msg, sizeof(info->msg), "line %u: not a dlsim-kdump 1 header",
					 lineno);
				goto bad;
			}
			if (nd != ndev) {
				snprintf(info->msg, sizeof(info->msg), "the dump has %u devices, the"
					 " scenario %u: a dump of another scenario", nd, ndev);
				goto bad;
			}
			snprintf(info->release, sizeof(info->release), "%s", rel);
			header = 1;
			if (nlost)
				*lost = nlost;
			continue;
		}
		if (n == cap) {
			uint32_t nc = cap ? cap * 2 : 4096;
			struct krec *nk = realloc(k, nc * sizeof(*nk));

			if (!nk) {
				free(k);
				return -ENOMEM;
			}
			k = nk;
			cap = nc;
		}
		if (parse_line(line, &k[n])) {
			snprintf(info->msg, sizeof(info->msg), "line %u: not a record: '%.60s'", lineno, line);
			goto bad;
		}
		if ((k[n].dev >= 0 && (uint32_t)k[n].dev >= ndev) ||
		    (k[n].kind != R_OP && k[n].kind != R_OPEND && k[n].kind != R_REGISTER &&
		     k[n].aux >= 0 && (uint32_t)k[n].aux >= ndev)) {
			snprintf(info->msg, sizeof(info->msg), "line %u: device index out of range", lineno);
			goto bad;
		}
		n++;
	}
	if (!header && n) {
		snprintf(info->msg, sizeof(info->msg), "records without a dlsim-kdump header");
		goto bad;
	}
	*out = k;
	*nout = n;
	return 0;
bad:
	free(k);
	return -EINVAL;
}

static void conv_free(struct conv *c)
{
	free(c->lc); free(c->ls); free(c->lflags); free(c->lstate); free(c->llive); free(c->lseen);
	free(c->pos); free(c->registered); free(c->cb_start); free(c->order);
}

/* A failed result and empty info with @sc's ops, before the dump is read. */
static void result_init(const struct dl_scenario *sc, struct dl_run_result *r,
			struct dl_kernel_info *info)
{
	memset(info, 0, sizeof(*info));
	info->last_op = info->last_phase = -1;
	memset(r, 0, sizeof(*r));
	r->status = "failed";
	r->fail_dev = DL_NONE;
	r->nops = sc->nop < DL_MAX_OPS ? sc->nop : DL_MAX_OPS;
	for (uint32_t i = 0; i < r->nops; i++) {
		r->op[i].kind = sc->op[i].kind;
		r->op[i].fail_dev = DL_NONE;
	}
}

static int conv_alloc(struct conv *c, uint32_t ndev)
{
	c->pos = calloc(ndev + 1, sizeof(*c->pos));
	c->registered = calloc(ndev + 1, 1);
	c->cb_start = calloc(ndev + 1, sizeof(*c->cb_start));
	c->order = malloc((ndev + 1) * sizeof(*c->order));
	return c->pos && c->registered && c->cb_start && c->order ? 0 : -ENOMEM;
}

static void rec_register(struct conv *c, const struct krec *x)
{
	if (!c->registered[x->dev]) {
		c->registered[x->dev] = 1;
		c->nreg++;
	}
	c->pos[x->dev] = ++c->clock;
	emit(c, x->t, DL_EV_REGISTER, (uint32_t)x->dev, DL_NONE,
	     x->aux < 0 ? DL_NONE : (uint32_t)x->aux, 0, 0, 0, x->pid);
	op_touch(c, c->cur_op, x->t);
}

static void rec_unregister(struct conv *c, const struct krec *x)
{
	if (c->registered[x->dev]) {
		c->registered[x->dev] = 0;
		c->nreg--;
	}
	c->pos[x->dev] = 0;
	emit(c, x->t, DL_EV_DEVICE_DEL, (uint32_t)x->dev, DL_NONE, DL_NONE, 0, 0, 0, x->pid);
	op_touch(c, c->cur_op, x->t);
}

static int rec_link_add(struct conv *c, const struct krec *x)
{
	uint32_t l = link_id(c, (uint32_t)x->dev, (uint32_t)x->aux, 1);

	if (l == DL_NONE)
		return -ENOMEM;
	c->llive[l] = 1;
	c->lflags[l] = x->flags;
	c->lstate[l] = link_state(x->key);
	emit(c, x->t, DL_EV_LINK_ADD, (uint32_t)x->dev, l, (uint32_t)x->aux, x->flags,
	     c->lstate[l], 0, x->pid);
	op_touch(c, c->cur_op, x->t);
	return 0;
}

static void rec_link_refused(struct conv *c, const struct krec *x)
{
	unsigned why = x->err == -ENODEV ?
		(c->registered[x->dev] ? DL_REFUSE_SUPPLIER_UNREGISTERED : DL_REFUSE_MISSING_DEVICE) :
		refusal(c, (uint32_t)x->dev, (uint32_t)x->aux, x->flags);

	c->refused++;
	emit(c, x->t, DL_EV_LINK_REFUSED, (uint32_t)x->dev, DL_NONE, (uint32_t)x->aux,
	     x->flags, (uint16_t)why, 0, x->pid);
	op_touch(c, c->cur_op, x->t);
}

/* deferred_probe_work_func()'s only call (6.12 dd.c:121, 7.3 alike) */
static void rec_reorder(struct conv *c, const struct krec *x)
{
	struct dl_op_result *op = op_at(c, c->cur_op);

	c->info->reorders++;
	c->info->reorder_ns += x->flags;
	if (op) {
		op->reorder_walks++;
		op->reorder_ns += x->flags;
	}
}

/* Turns one record into events and counts; 0 or -ENOMEM. */
static int conv_record(struct conv *c, const struct krec *x)
{
	switch (x->kind) {
	case R_OP:
		c->cur_op = x->aux;
		c->main_pid = x->pid;
		c->info->last_op = x->aux;
		if (op_at(c, x->aux))
			c->r->op[x->aux].start_ns = x->t - c->t0;
		break;
	case R_REGISTER:
		rec_register(c, x);
		break;
	case R_UNREGISTER:
		rec_unregister(c, x);
		break;
	case R_LINK_ADD:
		return rec_link_add(c, x);
	case R_LINK_REFUSED:
		rec_link_refused(c, x);
		break;
	case R_CB_START:
	case R_CB_END:
		if (x->dev >= 0)
			callback(c, x, x->kind == R_CB_END);
		break;
	case R_PHASE_BEGIN:
	case R_PHASE_END:
		phase_mark(c, x, x->kind == R_PHASE_BEGIN);
		break;
	case R_CORE_DEFER:
		if (x->dev >= 0)
			core_defer(c, x);
		break;
	case R_RETRY_BEGIN:
		c->info->retry_walks++;
		c->retry_t = x->t;
		break;
	case R_RETRY_END:
		if (c->retry_t >= 0)
			c->info->retry_ns += x->t - c->retry_t;
		c->retry_t = -1;
		break;
	case R_REORDER:
		rec_reorder(c, x);
		break;
	case R_SNAP:
		c->in_snap = 1;
		c->norder = 0;
		break;
	case R_ORDER:
		if (c->in_snap && c->norder <= c->sc->ndev && x->dev >= 0)
			c->order[c->norder++] = *x;
		break;
	case R_LINK:
		if (c->in_snap && x->dev >= 0 && x->aux >= 0)
			snap_link(c, x, x->pid);
		break;
	default:
		break;
	}
	return 0;
}

/* Converts the time-sorted records @k; a snapshot ends at its first other record. */
static int conv_records(struct conv *c, const struct krec *k, uint32_t n)
{
	int rc;

	c->t0 = n ? k[0].t : 0;
	for (uint32_t i = 0; i < n; i++) {
		if (c->in_snap && k[i].kind != R_ORDER && k[i].kind != R_LINK) {
			snap_end(c, c->order, c->norder, k[i - 1].t, k[i - 1].pid);
			c->in_snap = 0;
		}
		rc = conv_record(c, &k[i]);
		if (rc)
			return rc;
	}
	if (c->in_snap)
		snap_end(c, c->order, c->norder, k[n - 1].t, k[n - 1].pid);
	return 0;
}

/* The run's totals: its counts and the sums of its ops' figures. */
static void result_sum(struct conv *c)
{
	struct dl_run_result *r = c->r;

	r->devices = c->sc->ndev;
	r->links = c->nl;
	r->links_refused = c->refused;
	r->workers = 1;
	r->events = c->events;
	c->info->workers = c->npid + 1;
	for (uint32_t i = 0; i < r->nops; i++) {
		const struct dl_op_result *op = &r->op[i];

		r->makespan_ns += op->makespan_ns;
		r->work_ns += op->work_ns;
		r->probe_attempts += op->probe_attempts;
		r->probe_defers += op->probe_defers;
		r->reorder_walks += op->reorder_walks;
		r->reorder_ns += op->reorder_ns;
		if (op->err && !r->err) {
			r->err = op->err;
			r->fail_dev = op->fail_dev;
		}
	}
}

/* The run's status, and dl_kernel_convert()'s result, from how the dump ended. */
static int result_status(struct dl_run_result *r, struct dl_kernel_info *info, unsigned lost,
			 int done)
{
	r->status = "failed";
	if (lost) {
		/* the module's buffer was full: the log would have holes */
		snprintf(info->msg, sizeof(info->msg), "the module's buffer overflowed: %u records"
			 " lost (dlsim's record budget is too small for this script)", lost);
		return -EPIPE;
	}
	if (!done) {
		if (!info->msg[0])
			snprintf(info->msg, sizeof(info->msg), "the guest stopped before the run's end");
		return -EPIPE;
	}
	if (r->err)
		return 1;
	r->status = "ok";
	return 0;
}

int dl_kernel_convert(const struct dl_scenario *sc, const char *dump, size_t len,
		      const struct dl_engine_opts *o, struct dl_run_result *r,
		      struct dl_kernel_info *info)
{
	struct conv c = { .sc = sc, .o = o, .r = r, .info = info, .cur_op = -1, .sleep_op = -1,
			  .retry_t = -1 };
	struct krec *k = NULL;
	uint32_t n = 0;
	unsigned lost = 0;
	int done, rc;

	result_init(sc, r, info);
	rc = parse_dump(dump, len, sc->ndev, &k, &n, &done, &lost, info);
	if (rc)
		return rc;
	rc = conv_alloc(&c, sc->ndev);
	if (!rc) {
		snap_times(k, n);
		sort_by_time(k, n);
		rc = conv_records(&c, k, n);
	}
	if (!rc) {
		result_sum(&c);
		rc = result_status(r, info, lost, done);
	}
	free(k);
	conv_free(&c);
	return rc;
}
