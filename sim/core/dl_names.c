/* dl_names.c - the names the log, the CLI and scenario files use. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/dl_core.h"

static const char *const dev_state_names[] = {
	"NO_DRIVER", "PROBING", "DRIVER_BOUND", "UNBINDING",
};
static const char *const link_state_names[] = {
	"NONE", "DORMANT", "AVAILABLE", "CONSUMER_PROBE", "ACTIVE", "SUPPLIER_UNBIND",
};
static const char *const refusal_names[] = {
	"ok", "missing-device", "self-link", "invalid-flags", "stateless-with-managed-flags",
	"autoprobe-with-autoremove", "sync-state-only-with-flags",
	"supplier-rpm-resume-failed", "supplier-not-registered", "reverse-dependency",
	"sync-state-only-consumer-bound",
};
static const char *const flag_names[DL_FLAG_COUNT] = {
	"STATELESS", "AUTOREMOVE_CONSUMER", "PM_RUNTIME", "RPM_ACTIVE",
	"AUTOREMOVE_SUPPLIER", "AUTOPROBE_CONSUMER", "MANAGED", "SYNC_STATE_ONLY",
	"INFERRED", "CYCLE",
};
static const char *const kind_names[DL_EV_KIND_COUNT] = {
	"register", "probe_start", "probe_end", "probe_defer", "unbind_start",
	"unbind_end", "suspend_start", "suspend_end", "resume_start", "resume_end",
	"link_add", "link_refused", "link_del", "link_state", "rpm_resume",
	"rpm_suspend", "sync_state", "device_del", "dpm_move", "work_block", "work_wake",
	"deferred_retry",
};
static const char *const phase_names[DL_PH_COUNT] = {
	"prepare", "suspend", "suspend_late", "suspend_noirq",
	"resume_noirq", "resume_early", "resume", "complete",
};

#define NAME_OR(tab, i) ((i) < sizeof(tab) / sizeof(tab[0]) ? tab[i] : "?")

const char *dl_dev_state_name(unsigned s) { return NAME_OR(dev_state_names, s); }
const char *dl_link_state_name(unsigned s) { return NAME_OR(link_state_names, s); }
const char *dl_refusal_name(unsigned r) { return NAME_OR(refusal_names, r); }
const char *dl_flag_name(unsigned bit_index) { return NAME_OR(flag_names, bit_index); }
const char *dl_ev_kind_name(unsigned kind) { return NAME_OR(kind_names, kind); }
const char *dl_phase_name(unsigned phase) { return NAME_OR(phase_names, phase); }

/* dl_flag_parse - "PM_RUNTIME" (or "DL_FLAG_PM_RUNTIME") to its bit; -EINVAL if unknown. */
int dl_flag_parse(const char *name, uint32_t *bit)
{
	if (strncmp(name, "DL_FLAG_", 8) == 0)
		name += 8;
	for (unsigned i = 0; i < DL_FLAG_COUNT; i++) {
		if (strcmp(name, flag_names[i]) == 0) {
			*bit = 1u << i;
			return 0;
		}
	}
	return -EINVAL;
}

/* dl_flags_format - names joined by '|', as in the links table; returns the length. */
size_t dl_flags_format(uint32_t flags, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < DL_FLAG_COUNT; i++) {
		size_t w;

		if (!(flags & (1u << i)))
			continue;
		w = strlen(flag_names[i]);
		if (n + (n ? 1 : 0) + w + 1 > len)
			break;
		if (n)
			buf[n++] = '|';
		memcpy(buf + n, flag_names[i], w);
		n += w;
		buf[n] = '\0';
	}
	return n;
}

/**
 * dl_kver_parse - "6.12" (MAJOR.MINOR, decimal) to DL_KVER(6, 12).  -EINVAL
 * if it is not that shape, -ERANGE if it is outside the versions modelled
 * (DL_KVER_FIRST..DL_KVER_LAST).
 */
int dl_kver_parse(const char *s, uint32_t *out)
{
	unsigned long v[2];
	const char *p = s;

	for (int i = 0; i < 2; i++) {
		char *end;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		if (errno || v[i] > 255 || end - p > 3)
			return -EINVAL;
		p = end;
		if (i == 0 && *p++ != '.')
			return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	*out = DL_KVER(v[0], v[1]);
	return *out < DL_KVER_FIRST || *out > DL_KVER_LAST ? -ERANGE : 0;
}

/* dl_kver_format - DL_KVER(6, 12) as "6.12". */
void dl_kver_format(uint32_t kver, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u", kver >> 8, kver & 0xff);
}
