/*
 * dl_cpus.h - the CPUs this process may run on: its affinity (taskset, a
 * container's cpuset), not the machine's online count, which a process
 * pinned to one CPU would take for two.  What a verb sizes its threads by
 * (sweep and advise --jobs, check's reader thread).
 */
#ifndef DL_CPUS_H
#define DL_CPUS_H

#include <sched.h>
#include <stdint.h>
#include <unistd.h>

/* At least 1. */
static inline uint32_t dl_cpus_usable(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (uint32_t)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (uint32_t)n : 1;
}

#endif
