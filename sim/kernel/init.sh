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
		*.sleep) echo freeze > /sys/power/state || echo "@sleep-failed ${f#$run/}" > "$port" ;;
		esac
		cat /sys/kernel/debug/dlsim/new > "$port"
	done
	echo "@done ${run#/runs/}" > "$port"
	rmmod dlsim_kmod || echo "@error rmmod" > "$port"
done
echo "@end" > "$port"
sync
poweroff -f
