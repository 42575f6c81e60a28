#!/bin/busybox sh
# /init of the initramfs that `dlsim run --mode kernel` boots (sim/kernel/).
# Everything scenario-specific is data under /runs/RUN/: numbered files that are
# written to the module's control file in order; a file named *.sleep is
# followed by one system-sleep cycle (pm_test "platform": all eight phases).
# After each file the new records go to the virtio-serial port; after the last
# run the guest powers off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug
echo platform > /sys/power/pm_test
port=$(ls /dev/vport*p1 2>/dev/null | head -n 1)
[ -n "$port" ] || { echo "dlsim-init: no virtio-serial port" >&2; poweroff -f; }
ctl=/sys/kernel/debug/dlsim/ctl
# dlsim_trace=1 on the kernel's command line (DLSIM_KERNEL_APPEND; the kernel hands it to
# /init as an environment variable): a diagnostic boot.  The scheduler, workqueue, timer
# and idle tracepoints are recorded (ftrace, clock "mono": ktime_get_ns(), the module's)
# and the trace follows "@end" on the port, where the host's split ignores it
# (tests/tools/probe_silences.py reads it from a --kernel-save dump).
tr=/sys/kernel/debug/tracing
if [ -n "${dlsim_trace:-}" ] && [ -d $tr/events ]; then
	echo mono > $tr/trace_clock
	echo 262144 > $tr/buffer_size_kb
	for e in sched/sched_switch sched/sched_wakeup workqueue/workqueue_queue_work \
		workqueue/workqueue_execute_start workqueue/workqueue_execute_end \
		timer/hrtimer_expire_entry timer/timer_expire_entry power/cpu_idle \
		power/device_pm_callback_start power/device_pm_callback_end \
		irq/irq_handler_entry; do
		echo 1 > $tr/events/$e/enable || echo "@error trace $e" > "$port"
	done
	# entry and return of the workqueue's and async's dispatch paths (kprobe events
	# dl_F / dl_F_ret): a worker's creation, an async item's scheduling
	for f in create_worker async_schedule_node_domain async_schedule_dev_nocall; do
		echo "p:dl_$f $f" >> $tr/kprobe_events && echo "r:dl_${f}_ret $f" >> $tr/kprobe_events \
			&& echo 1 > $tr/events/kprobes/dl_$f/enable \
			&& echo 1 > $tr/events/kprobes/dl_${f}_ret/enable || echo "@error kprobe $f" > "$port"
	done
	echo 1 > $tr/tracing_on
fi
# 7.x's virtio_pci resets the device on suspend; virtcons_restore() then asks the host
# whether the port is open before it refills the control queue, QEMU's answer is lost
# and every later write blocks.  So the console driver is unbound for each sleep cycle
# and bound again after it: its probe does the handshake afresh.
vcons=/sys/bus/virtio/drivers/virtio_console
vdev=$(basename "$(readlink -f "/sys/class/virtio-ports/${port#/dev/}/device")")
sleep_cycle() {
	echo "$vdev" > $vcons/unbind
	r=0
	echo freeze > /sys/power/state || r=1
	echo "$vdev" > $vcons/bind
	while [ ! -e "$port" ]; do sleep 0.01; done
	# the node can be back before the port opens: writes then fail with ENXIO ("No such
	# device or address") and the run's records are lost (2 of ~75 boots of 16 runs in a
	# kernel-mode sweep); wait until it opens, 10 s at most (in a subshell: a failed
	# redirection of a special built-in such as ':' would end /init itself)
	n=0
	until (true > "$port") 2>/dev/null || [ $n -ge 1000 ]; do sleep 0.01; n=$((n + 1)); done
	return $r
}
for run in /runs/*; do
	echo "@run ${run#/runs/}" > "$port"
	echo 1 > /sys/power/pm_async
	[ -f "$run/pm_async" ] && cat "$run/pm_async" > /sys/power/pm_async
	if ! insmod /dlsim_kmod.ko; then
		echo "@error insmod" > "$port"
		continue
	fi
	for f in "$run"/[0-9]*; do
		cat "$f" > "$ctl" || echo "@error ctl ${f#$run/}" > "$port"
		case $f in
		*.sleep) sleep_cycle || echo "@sleep-failed ${f#$run/}" > "$port" ;;
		esac
		cat /sys/kernel/debug/dlsim/new > "$port"
	done
	echo "@done ${run#/runs/}" > "$port"
	rmmod dlsim_kmod || echo "@error rmmod" > "$port"
done
echo "@end" > "$port"
if [ -n "${dlsim_trace:-}" ] && [ -d $tr/events ]; then
	echo 0 > $tr/tracing_on
	echo "@trace" > "$port"
	cat $tr/trace > "$port"
fi
sync
poweroff -f
