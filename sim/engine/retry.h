/*
 * retry.h - the main thread's deferred-probe retry walk, once for both
 * backends.  Probing with deferral (the orders that probe in registration
 * order), the main thread first walks the devices in registration order
 * (the backend's walk, phase.h); then comes late_initcall: once the probes
 * in flight are done, deferred probing is enabled and sync_state() resumed
 * (driver_deferred_probe_enable(), which triggers the active list), and
 * deferred_probe_work_func() retries the active list until it is empty.
 * A probe still in flight may bind and trigger the list again, so an empty
 * list ends the walk only once nothing is in flight.
 *
 * The iterator says what to do next; the backend waits its own way (an
 * event in virtual time, a drain on real threads), holds its own locks
 * around the call, and skips a device already queued, probing or bound
 * (bus_probe_device() is a no-op for it).  dl_deferred_next() moves each
 * device it hands out to the tail of dpm_list (device_pm_move_to_tail()).
 */
#ifndef DL_RETRY_H
#define DL_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/core/dl_core.h"

enum dl_retry_step {
	DL_RETRY_DEVICE,   /* retry *dev */
	DL_RETRY_DRAIN,    /* wait until no probe is in flight, then ask again */
	DL_RETRY_END,      /* the list is empty and nothing is in flight */
};

struct dl_retry {
	bool late;         /* late_initcall done: walking the active list */
};

/* A new walk, before late_initcall. */
static inline void dl_retry_start(struct dl_retry *r)
{
	r->late = false;
}

/**
 * dl_retry_next - the next step of the walk of @c once the registration
 * walk is over; @idle: no probe in flight.  DL_RETRY_DEVICE sets *@dev.
 * Inline: a retry storm calls it once per retry, a million times a run.
 */
static inline enum dl_retry_step dl_retry_next(struct dl_retry *r, struct dl_core *c, bool idle,
					       uint32_t *dev)
{
	if (!r->late) {
		if (!idle)
			return DL_RETRY_DRAIN;   /* late_initcall runs once the probes in flight are done */
		dl_deferred_enable(c);
		dl_sync_state_resume(c);
		r->late = true;
	}
	*dev = dl_deferred_next(c);
	if (*dev != DL_NONE)
		return DL_RETRY_DEVICE;
	return idle ? DL_RETRY_END : DL_RETRY_DRAIN;
}

#endif
