// SPDX-License-Identifier: GPL-2.0
/*
 * dlsim_kmod.c - the guest half of `dlsim run --mode kernel`: a test module
 * that plays a dlsim scenario on the real driver core.
 *
 * Built once per kernel version (never per scenario); the scenario arrives
 * as data.  /init writes lines into debugfs dlsim/ctl:
 *
 *   devices N RECS            N platform devices, indices 0..N-1, and room
 *                             for RECS records (dlsim sizes it from the script)
 *   dev I PARENT ASYNC RPM    parent index or -1; ASYNC: async probe driver
 *                             and device_enable_async_suspend(); RPM: the
 *                             driver enables runtime PM at probe (the device
 *                             stays runtime-suspended until someone gets it)
 *   lat KEY V0 ... VN-1       the latency (ns) of callback KEY of every device
 *                             for the ops that follow (dlsim samples them)
 *   fault I KEY ERR TIMES     callback KEY of device I returns -ERR, TIMES
 *                             times (0: always)
 *   register                  platform_device_register() every device in order
 *   link C S FLAGS            device_link_add(C, S, FLAGS) (listed or script)
 *   unlink C S                device_link_remove(C, S)
 *   probe                     register the drivers, wait_for_device_probe()
 *   unbind I | bind I         device_release_driver() / device_attach()
 *   remove I                  platform_device_unregister()
 *   rpm_get I | rpm_put I     pm_runtime_get_sync() / pm_runtime_put_sync()
 *   op K | opend K            marks: script op K starts / ends
 *   snap                      record dpm_list order and every link's status
 *
 * The driver core's own deferrals never reach the probe callback: a consumer
 * whose supplier is not bound is turned away by device_links_check_suppliers()
 * in really_probe() and queued for deferred_probe_work_func(), which every
 * bind re-triggers.  A kretprobe on the first records each such deferral of
 * our devices ("core_defer"), one on the second each retry walk
 * ("retry_begin"/"retry_end"), one on device_pm_move_to_tail() the guest time
 * of each reorder the walk does before a retry ("reorder").  They are best effort: a kernel where a probe
 * cannot be placed records none, and the header's "probes" says which were.
 *
 * debugfs dlsim/new prints the records since its last read, so that /init
 * can send them after every op and a guest that hangs loses only the op it
 * hangs in.
 *
 * Devices are named by index only ("dlsim-a.I": async, "dlsim-s.I": sync):
 * scenario names never reach the guest.  Every callback records
 * ktime_get_ns() at its start and end into a preallocated buffer (never the
 * console); the suspend_resume tracepoint marks each PM phase; debugfs
 * dlsim/events prints the buffer as text, one record a line.
 */
#include <linux/async.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/pm.h>
#include <linux/pm_runtime.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include <linux/vmalloc.h>
#include <trace/events/power.h>

#define KMOD_MAX_DEVICES 20000
#define KMOD_CTL_MAX (8u << 20)
#define SETTLE_MS 20
#define KMOD_MAX_RECS (16u << 20)

/* Callback keys, as dlsim's enum dl_lat_key. */
enum { K_PROBE, K_REMOVE, K_PREPARE, K_SUSPEND, K_SUSPEND_LATE, K_SUSPEND_NOIRQ,
       K_RESUME_NOIRQ, K_RESUME_EARLY, K_RESUME, K_COMPLETE, K_RPM_SUSPEND, K_RPM_RESUME,
       K_COUNT };

/* Record kinds; the dump prints their names (krec.h, shared with the host). */
#include "krec.h"

struct rec {
	u64 t;
	s32 dev, aux;
	u32 flags;
	u16 kind;
	s16 err;
	u32 pid;
	u8 key;
};

struct kdev {
	struct platform_device *pdev;
	s32 parent;
	u8 async, rpm;
	s64 lat[K_COUNT];
};

struct kfault {
	s32 dev;
	u8 key;
	s32 err;
	u32 times, used;
};

static struct kdev *devs;
static u32 ndev;
static struct kfault *faults;
static u32 nfault, fault_cap;
static struct rec *recs;
static u32 rec_cap;
static atomic_t nrec = ATOMIC_INIT(0);
static atomic_t lost = ATOMIC_INIT(0);
static bool drivers_registered, tp_registered;
static DEFINE_MUTEX(ctl_lock);
static char *ctl_buf;
static size_t ctl_len;
static struct dentry *dbg_dir;

static void rec_add(u16 kind, s32 dev, s32 aux, u8 key, s16 err, u32 flags)
{
	int i = atomic_inc_return(&nrec) - 1;

	if (i >= rec_cap) {
		atomic_inc(&lost);
		return;
	}
	recs[i] = (struct rec){ .t = ktime_get_ns(), .dev = dev, .aux = aux, .key = key,
				.err = err, .flags = flags, .kind = kind, .pid = current->pid };
}

static int dev_index(struct device *d)
{
	struct platform_device *p;

	if (!d || d->bus != &platform_bus_type)
		return -1;
	p = to_platform_device(d);
	if (strcmp(p->name, "dlsim-a") && strcmp(p->name, "dlsim-s"))
		return -1;
	if (p->id < 0 || (u32)p->id >= ndev || !devs[p->id].pdev || &devs[p->id].pdev->dev != d)
		return -1;
	return p->id;
}

/* Sleep @ns of guest time (an absolute hrtimer, no slack; early wake-ups sleep again). */
static void sleep_ns(s64 ns)
{
	ktime_t end;

	if (ns <= 0)
		return;
	end = ktime_add_ns(ktime_get(), ns);
	while (ktime_before(ktime_get(), end)) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		schedule_hrtimeout_range(&end, 0, HRTIMER_MODE_ABS);
	}
}

static int fault_take(int i, int key)
{
	u32 f;

	for (f = 0; f < nfault; f++) {
		struct kfault *x = &faults[f];

		if (x->dev != i || x->key != key)
			continue;
		if (x->times && x->used >= x->times)
			continue;
		x->used++;
		return -x->err;
	}
	return 0;
}

/* One callback: start record, the sampled latency, the injected error, end record. */
static int callback(struct device *d, int key)
{
	int i = dev_index(d), err;

	if (i < 0)
		return 0;
	rec_add(R_CB_START, i, -1, key, 0, 0);
	sleep_ns(devs[i].lat[key]);
	err = fault_take(i, key);
	rec_add(R_CB_END, i, -1, key, err, 0);
	return err;
}

static int kmod_probe(struct platform_device *p)
{
	int i = dev_index(&p->dev), e = callback(&p->dev, K_PROBE);

	if (!e && i >= 0 && devs[i].rpm)
		pm_runtime_enable(&p->dev);
	return e;
}

static void kmod_remove(struct platform_device *p)
{
	int i = dev_index(&p->dev);

	callback(&p->dev, K_REMOVE);
	if (i >= 0 && devs[i].rpm)
		pm_runtime_disable(&p->dev);
}
static int kmod_prepare(struct device *d) { return callback(d, K_PREPARE); }
static void kmod_complete(struct device *d) { callback(d, K_COMPLETE); }
static int kmod_suspend(struct device *d) { return callback(d, K_SUSPEND); }
static int kmod_suspend_late(struct device *d) { return callback(d, K_SUSPEND_LATE); }
static int kmod_suspend_noirq(struct device *d) { return callback(d, K_SUSPEND_NOIRQ); }
static int kmod_resume_noirq(struct device *d) { return callback(d, K_RESUME_NOIRQ); }
static int kmod_resume_early(struct device *d) { return callback(d, K_RESUME_EARLY); }
static int kmod_resume(struct device *d) { return callback(d, K_RESUME); }
static int kmod_rpm_suspend(struct device *d) { return callback(d, K_RPM_SUSPEND); }
static int kmod_rpm_resume(struct device *d) { return callback(d, K_RPM_RESUME); }

static const struct dev_pm_ops kmod_pm = {
	.prepare = kmod_prepare,
	.complete = kmod_complete,
	.suspend = kmod_suspend,
	.suspend_late = kmod_suspend_late,
	.suspend_noirq = kmod_suspend_noirq,
	.resume_noirq = kmod_resume_noirq,
	.resume_early = kmod_resume_early,
	.resume = kmod_resume,
	.runtime_suspend = kmod_rpm_suspend,
	.runtime_resume = kmod_rpm_resume,
};

static struct platform_driver drv_sync = {
	.probe = kmod_probe,
	.remove = kmod_remove,
	.driver = { .name = "dlsim-s", .pm = &kmod_pm, .probe_type = PROBE_FORCE_SYNCHRONOUS },
};

static struct platform_driver drv_async = {
	.probe = kmod_probe,
	.remove = kmod_remove,
	.driver = { .name = "dlsim-a", .pm = &kmod_pm, .probe_type = PROBE_PREFER_ASYNCHRONOUS },
};

static const char *const phase_action[] = {
	"dpm_prepare", "dpm_suspend", "dpm_suspend_late", "dpm_suspend_noirq",
	"dpm_resume_noirq", "dpm_resume_early", "dpm_resume", "dpm_complete",
};

static void tp_suspend_resume(void *data, const char *action, int val, bool start)
{
	int p;

	for (p = 0; p < ARRAY_SIZE(phase_action); p++)
		if (!strcmp(action, phase_action[p])) {
			rec_add(start ? R_PHASE_BEGIN : R_PHASE_END, -1, -1, p, 0, 0);
			return;
		}
}

static void snap_order_one(struct device *d, void *data)
{
	int i = dev_index(d);

	if (i >= 0)
		rec_add(R_ORDER, i, -1, 0, 0, 0);
}

/* dpm_list order of our devices, then the status and flags of every link between them. */
static void snap(void)
{
	u32 i;

	rec_add(R_SNAP, -1, -1, 0, 0, 0);
	dpm_for_each_dev(NULL, snap_order_one);
	for (i = 0; i < ndev; i++) {
		struct device_link *l;

		if (!devs[i].pdev)
			continue;
		list_for_each_entry(l, &devs[i].pdev->dev.links.suppliers, c_node) {
			int s = dev_index(l->supplier);

			if (s >= 0)
				rec_add(R_LINK, i, s, (u8)l->status, 0, l->flags);
		}
	}
}

/* device_links_check_suppliers(dev): remember dev, record a deferral of ours on return. */
static int kp_check_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(struct device **)ri->data = (struct device *)regs_get_kernel_argument(regs, 0);
	return 0;
}

static int kp_check_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	int i = dev_index(*(struct device **)ri->data);
	int ret = (int)regs_return_value(regs);   /* an int: the upper half of rax is not ours */

	if (i >= 0 && ret == -EPROBE_DEFER)
		rec_add(R_CORE_DEFER, i, -1, K_PROBE, (s16)ret, 0);
	return 0;
}

static struct kretprobe kp_check = {
	.kp.symbol_name = "device_links_check_suppliers",
	.entry_handler = kp_check_entry,
	.handler = kp_check_ret,
	.data_size = sizeof(struct device *),
	.maxactive = 64,
};

/* deferred_probe_work_func(): one walk of the deferred-probe active list. */
static int kp_retry_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (devs)
		rec_add(R_RETRY_BEGIN, -1, -1, 0, 0, 0);
	return 0;
}

static int kp_retry_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (devs)
		rec_add(R_RETRY_END, -1, -1, 0, 0, 0);
	return 0;
}

static struct kretprobe kp_retry = {
	.kp.symbol_name = "deferred_probe_work_func",
	.entry_handler = kp_retry_entry,
	.handler = kp_retry_ret,
	.maxactive = 4,
};

/*
 * device_pm_move_to_tail(dev), which the retry walk calls before every retry:
 * device_reorder_to_tail() moves dev, then recurses into every child and every
 * consumer, once per path (no visited mark).  "reorder" DEV, FLAGS: its guest
 * time in ns (saturated at 2^32-1).
 */
struct kp_move_data {
	struct device *dev;
	u64 t;
};

static int kp_move_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kp_move_data *m = (struct kp_move_data *)ri->data;

	m->dev = (struct device *)regs_get_kernel_argument(regs, 0);
	m->t = ktime_get_ns();
	return 0;
}

static int kp_move_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kp_move_data *m = (struct kp_move_data *)ri->data;
	int i = dev_index(m->dev);
	u64 ns = ktime_get_ns() - m->t;

	if (i >= 0)
		rec_add(R_REORDER, i, -1, 0, 0, ns > U32_MAX ? U32_MAX : (u32)ns);
	return 0;
}

static struct kretprobe kp_move = {
	.kp.symbol_name = "device_pm_move_to_tail",
	.entry_handler = kp_move_entry,
	.handler = kp_move_ret,
	.data_size = sizeof(struct kp_move_data),
	.maxactive = 16,
};

static bool kp_check_on, kp_retry_on, kp_move_on;

static int register_one(u32 i)
{
	struct platform_device_info info = {
		.name = devs[i].async ? "dlsim-a" : "dlsim-s",
		.id = i,
	};
	struct platform_device *p;

	if (devs[i].pdev)
		return -EEXIST;
	if (devs[i].parent >= 0) {
		if (!devs[devs[i].parent].pdev)
			return -ENODEV;
		info.parent = &devs[devs[i].parent].pdev->dev;
	}
	p = platform_device_register_full(&info);
	if (IS_ERR(p))
		return PTR_ERR(p);
	devs[i].pdev = p;
	if (devs[i].async)
		device_enable_async_suspend(&p->dev);
	rec_add(R_REGISTER, i, devs[i].parent, 0, 0, 0);
	return 0;
}

static void unregister_one(u32 i)
{
	if (!devs[i].pdev)
		return;
	platform_device_unregister(devs[i].pdev);
	devs[i].pdev = NULL;
	rec_add(R_UNREGISTER, i, -1, 0, 0, 0);
}

static int link_one(u32 c, u32 s, u32 flags)
{
	struct device_link *l;

	if (c >= ndev || s >= ndev || !devs[c].pdev || !devs[s].pdev) {
		rec_add(R_LINK_REFUSED, c, s, 0, -ENODEV, flags);
		return 0;
	}
	l = device_link_add(&devs[c].pdev->dev, &devs[s].pdev->dev, flags);
	if (!l)
		rec_add(R_LINK_REFUSED, c, s, 0, -EINVAL, flags);
	else
		rec_add(R_LINK_ADD, c, s, (u8)l->status, 0, l->flags);
	return 0;
}

static char *next_tok(char **p)
{
	char *s = *p, *t;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	t = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	if (*s)
		*s++ = 0;
	*p = s;
	return t;
}

static int tok_s64(char **p, s64 *v)
{
	char *t = next_tok(p);

	return t ? kstrtos64(t, 10, v) : -EINVAL;
}

static int tok_idx(char **p, u32 *v)
{
	s64 x;
	int e = tok_s64(p, &x);

	if (e)
		return e;
	if (x < 0 || x >= ndev)
		return -ERANGE;
	*v = (u32)x;
	return 0;
}

static int cmd_devices(char **p)
{
	s64 n, cap;
	int e = tok_s64(p, &n);

	if (e || (e = tok_s64(p, &cap)))
		return e;
	if (devs || n <= 0 || n > KMOD_MAX_DEVICES || cap <= 0 || cap > KMOD_MAX_RECS)
		return -EINVAL;
	devs = vzalloc(array_size(n, sizeof(*devs)));
	rec_cap = (u32)cap;
	recs = vzalloc(array_size(rec_cap, sizeof(*recs)));
	if (!devs || !recs)
		return -ENOMEM;
	ndev = (u32)n;
	for (n = 0; n < ndev; n++)
		devs[n].parent = -1;
	return 0;
}

static int cmd_dev(char **p)
{
	u32 i;
	s64 parent, async, rpm;
	int e = tok_idx(p, &i);

	if (e || (e = tok_s64(p, &parent)) || (e = tok_s64(p, &async)) || (e = tok_s64(p, &rpm)))
		return e;
	if (parent >= (s64)i || parent < -1)
		return -EINVAL;
	devs[i].parent = (s32)parent;
	devs[i].async = async != 0;
	devs[i].rpm = rpm != 0;
	return 0;
}

static int cmd_lat(char **p)
{
	s64 key, v;
	u32 i;
	int e = tok_s64(p, &key);

	if (e)
		return e;
	if (key < 0 || key >= K_COUNT)
		return -EINVAL;
	for (i = 0; i < ndev; i++) {
		if ((e = tok_s64(p, &v)))
			return e;
		devs[i].lat[key] = v;
	}
	return 0;
}

static int cmd_fault(char **p)
{
	u32 i;
	s64 key, err, times;
	int e = tok_idx(p, &i);

	if (e || (e = tok_s64(p, &key)) || (e = tok_s64(p, &err)) || (e = tok_s64(p, &times)))
		return e;
	if (key < 0 || key >= K_COUNT || err <= 0 || err > 4095 || times < 0)
		return -EINVAL;
	if (nfault == fault_cap) {
		u32 cap = fault_cap ? fault_cap * 2 : 16;
		struct kfault *f = krealloc_array(faults, cap, sizeof(*f), GFP_KERNEL);

		if (!f)
			return -ENOMEM;
		faults = f;
		fault_cap = cap;
	}
	faults[nfault++] = (struct kfault){ .dev = i, .key = key, .err = err, .times = times };
	return 0;
}

/*
 * Wait until probing is over: wait_for_device_probe() can return while a
 * bind that just finished has queued the deferred-probe retry, so wait again
 * until a round adds no record.  The sleep is guest time only.
 */
static void settle(void)
{
	int before;

	do {
		before = atomic_read(&nrec);
		wait_for_device_probe();
		msleep(SETTLE_MS);
	} while (atomic_read(&nrec) != before);
}

static int cmd_probe(void)
{
	int e;

	if (drivers_registered)
		return -EBUSY;
	/* the sync driver first: its devices probe in registration order on this thread */
	e = platform_driver_register(&drv_sync);
	if (e)
		return e;
	e = platform_driver_register(&drv_async);
	if (e) {
		platform_driver_unregister(&drv_sync);
		return e;
	}
	drivers_registered = true;
	settle();
	return 0;
}

static int run_line(char *line)
{
	char *p = line, *cmd = next_tok(&p);
	u32 a, b;
	s64 v;
	int e = 0;

	if (!cmd)
		return 0;
	if (strcmp(cmd, "devices") && !devs)
		return -ENODEV;
	if (!strcmp(cmd, "devices"))
		return cmd_devices(&p);
	if (!strcmp(cmd, "dev"))
		return cmd_dev(&p);
	if (!strcmp(cmd, "lat"))
		return cmd_lat(&p);
	if (!strcmp(cmd, "fault"))
		return cmd_fault(&p);
	if (!strcmp(cmd, "register")) {
		for (a = 0; a < ndev && !e; a++)
			e = register_one(a);
		return e;
	}
	if (!strcmp(cmd, "link") || !strcmp(cmd, "unlink")) {
		if ((e = tok_idx(&p, &a)) || (e = tok_idx(&p, &b)))
			return e;
		if (!strcmp(cmd, "unlink")) {
			if (devs[a].pdev && devs[b].pdev)
				device_link_remove(&devs[a].pdev->dev, &devs[b].pdev->dev);
			rec_add(R_LINK_DEL, a, b, 0, 0, 0);
			return 0;
		}
		if ((e = tok_s64(&p, &v)))
			return e;
		return link_one(a, b, (u32)v);
	}
	if (!strcmp(cmd, "probe"))
		return cmd_probe();
	if (!strcmp(cmd, "op") || !strcmp(cmd, "opend")) {
		if ((e = tok_s64(&p, &v)))
			return e;
		rec_add(cmd[2] ? R_OPEND : R_OP, -1, (s32)v, 0, 0, 0);
		return 0;
	}
	if (!strcmp(cmd, "snap")) {
		snap();
		return 0;
	}
	if ((e = tok_idx(&p, &a)))
		return e;
	if (!devs[a].pdev)
		return -ENODEV;
	if (!strcmp(cmd, "unbind")) {
		device_release_driver(&devs[a].pdev->dev);
	} else if (!strcmp(cmd, "bind")) {
		e = device_attach(&devs[a].pdev->dev);
		settle();
		e = e < 0 ? e : 0;
	} else if (!strcmp(cmd, "remove")) {
		unregister_one(a);
	} else if (!strcmp(cmd, "rpm_get")) {
		e = pm_runtime_get_sync(&devs[a].pdev->dev);
		e = e < 0 ? e : 0;
	} else if (!strcmp(cmd, "rpm_put")) {
		e = pm_runtime_put_sync(&devs[a].pdev->dev);
		e = e < 0 ? e : 0;
	} else {
		e = -EINVAL;
	}
	return e;
}

/* Lines may straddle writes: keep the tail after the last newline. */
static ssize_t ctl_write(struct file *f, const char __user *ubuf, size_t n, loff_t *pos)
{
	size_t start = 0, i;
	int e = 0;

	mutex_lock(&ctl_lock);
	if (ctl_len + n + 1 > KMOD_CTL_MAX) {
		e = -E2BIG;
		goto out;
	}
	if (copy_from_user(ctl_buf + ctl_len, ubuf, n)) {
		e = -EFAULT;
		goto out;
	}
	ctl_len += n;
	for (i = 0; i < ctl_len && !e; i++) {
		if (ctl_buf[i] != '\n')
			continue;
		ctl_buf[i] = 0;
		e = run_line(ctl_buf + start);
		if (e)
			pr_err("dlsim_kmod: '%.40s': error %d\n", ctl_buf + start, e);
		start = i + 1;
	}
	memmove(ctl_buf, ctl_buf + start, ctl_len - start);
	ctl_len -= start;
out:
	mutex_unlock(&ctl_lock);
	return e ? e : n;
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.write = ctl_write,
};

static void *ev_start(struct seq_file *m, loff_t *pos)
{
	u32 n = min_t(u32, atomic_read(&nrec), rec_cap);

	if (*pos == 0)
		return SEQ_START_TOKEN;
	return *pos <= n ? &recs[*pos - 1] : NULL;
}

static void *ev_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return ev_start(m, pos);
}

static void ev_stop(struct seq_file *m, void *v) {}

static int ev_show(struct seq_file *m, void *v)
{
	const struct rec *r = v;

	if (v == SEQ_START_TOKEN) {
		seq_printf(m, "dlsim-kdump 1 %s %s devices %u records %d lost %d probes %s%s%s\n",
			   init_utsname()->release, init_utsname()->machine, ndev,
			   atomic_read(&nrec), atomic_read(&lost),
			   kp_check_on ? "core_defer" : "none", kp_retry_on ? ",retry" : "",
			   kp_move_on ? ",reorder" : "");
		return 0;
	}
	seq_printf(m, "%llu %s %d %d %u %d %u %u\n", r->t, rec_name[r->kind], r->dev, r->aux,
		   r->key, r->err, r->flags, r->pid);
	return 0;
}

/* dlsim/new: the records appended since the last read (the header on the first). */
static u32 new_cursor;

static int new_show(struct seq_file *m, void *v)
{
	u32 n = min_t(u32, atomic_read(&nrec), rec_cap), i;

	if (!new_cursor)
		ev_show(m, SEQ_START_TOKEN);
	for (i = new_cursor; i < n; i++)
		ev_show(m, &recs[i]);
	if (!seq_has_overflowed(m))
		new_cursor = n;
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(new);

static const struct seq_operations ev_sops = {
	.start = ev_start, .next = ev_next, .stop = ev_stop, .show = ev_show,
};
DEFINE_SEQ_ATTRIBUTE(ev);

static int __init kmod_init(void)
{
	int e;

	ctl_buf = vmalloc(KMOD_CTL_MAX);
	if (!ctl_buf)
		return -ENOMEM;
	e = register_trace_suspend_resume(tp_suspend_resume, NULL);
	if (e) {
		vfree(ctl_buf);
		return e;
	}
	tp_registered = true;
	kp_check_on = !register_kretprobe(&kp_check);
	kp_retry_on = !register_kretprobe(&kp_retry);
	kp_move_on = !register_kretprobe(&kp_move);
	dbg_dir = debugfs_create_dir("dlsim", NULL);
	debugfs_create_file("ctl", 0200, dbg_dir, NULL, &ctl_fops);
	debugfs_create_file("events", 0400, dbg_dir, NULL, &ev_fops);
	debugfs_create_file("new", 0400, dbg_dir, NULL, &new_fops);
	return 0;
}

static void __exit kmod_exit(void)
{
	u32 i;

	debugfs_remove_recursive(dbg_dir);
	if (kp_check_on)
		unregister_kretprobe(&kp_check);
	if (kp_retry_on)
		unregister_kretprobe(&kp_retry);
	if (kp_move_on)
		unregister_kretprobe(&kp_move);
	if (drivers_registered) {
		platform_driver_unregister(&drv_async);
		platform_driver_unregister(&drv_sync);
	}
	for (i = ndev; i-- > 0;)
		unregister_one(i);
	if (tp_registered) {
		unregister_trace_suspend_resume(tp_suspend_resume, NULL);
		tracepoint_synchronize_unregister();
	}
	vfree(devs);
	vfree(recs);
	kfree(faults);
	vfree(ctl_buf);
}

module_init(kmod_init);
module_exit(kmod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dlsim: a scenario of device links played on the real driver core");
