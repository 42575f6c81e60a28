/*
 * dl_event.h - the one fixed-size event record every layer shares.
 *
 * The core emits link, registration and dpm_list events (register appends
 * the device to dpm_list, dpm_move moves it to the tail, device_del takes it
 * off, so that a reader can replay the list's order), the engines emit probe,
 * unbind and PM events; all of them go through a dl_sink.  The sink owner
 * stamps t_ns and worker (the core has no clock).  The log writer turns a
 * record into one row of the `events` table of shared/SPEC.md.
 */
#ifndef DL_EVENT_H
#define DL_EVENT_H

#include <stdint.h>

enum dl_ev_kind {
	DL_EV_REGISTER,
	DL_EV_PROBE_START,
	DL_EV_PROBE_END,       /* err 0: bound */
	DL_EV_PROBE_DEFER,
	DL_EV_UNBIND_START,
	DL_EV_UNBIND_END,
	DL_EV_SUSPEND_START,
	DL_EV_SUSPEND_END,
	DL_EV_RESUME_START,
	DL_EV_RESUME_END,
	DL_EV_LINK_ADD,        /* dev consumer, aux supplier, flags */
	DL_EV_LINK_REFUSED,    /* dev consumer, aux supplier, flags, phase = refusal */
	DL_EV_LINK_DEL,
	DL_EV_LINK_STATE,      /* phase = new enum dl_link_state */
	DL_EV_RPM_RESUME,
	DL_EV_RPM_SUSPEND,
	DL_EV_SYNC_STATE,      /* extension: the supplier's sync_state() ran */
	DL_EV_DEVICE_DEL,      /* extension: device_del() finished */
	DL_EV_DPM_MOVE,        /* extension: device_pm_move_last() of dev (reorder) */
	DL_EV_WORK_BLOCK,      /* extension: dev's work item sleeps on its dependencies (phase) */
	DL_EV_WORK_WAKE,       /* extension: ... and is woken: the last one finished */
	DL_EV_DEFERRED_RETRY,  /* extension: deferred_probe_work_func() takes dev off the
				  active list and moves it to the tail (device_pm_move_to_tail) */
	DL_EV_KIND_COUNT
};

/* System-sleep phases, in the order they run. */
enum dl_phase {
	DL_PH_PREPARE,
	DL_PH_SUSPEND,
	DL_PH_SUSPEND_LATE,
	DL_PH_SUSPEND_NOIRQ,
	DL_PH_RESUME_NOIRQ,
	DL_PH_RESUME_EARLY,
	DL_PH_RESUME,
	DL_PH_COMPLETE,
	DL_PH_COUNT
};

/*
 * The latest event time (about 146 years): a run whose virtual clock passes it
 * stops with -EOVERFLOW, and `check` calls a later time corrupt, so that the
 * difference of two times never overflows.
 */
#define DL_T_MAX ((int64_t)1 << 62)

struct dl_event {
	int64_t t_ns;
	uint32_t dev;      /* DL_NONE when none */
	uint32_t link;     /* DL_NONE when none */
	uint32_t aux;      /* link events: the supplier */
	uint32_t flags;    /* link events: DL_FLAG_* */
	uint16_t kind;     /* enum dl_ev_kind */
	uint16_t phase;    /* PM: enum dl_phase; link_state: state; link_refused: reason */
	int16_t worker;    /* 0: main thread, 1..K: workers */
	int16_t err;       /* negative errno, 0 for success */
};

struct dl_sink {
	void (*emit)(void *ctx, struct dl_event *ev);
	void *ctx;
};

const char *dl_ev_kind_name(unsigned kind);
const char *dl_phase_name(unsigned phase);

#endif
