/*
 * krec.h - the record kinds of --mode kernel's dump: dlsim_kmod.c (in the
 * guest, kernel C) writes one line per record naming its kind, kdump.c (on
 * the host) reads them back.  The one list both sides compile, so that the
 * two cannot drift; kboot.c ships this file beside the module's source.
 */
#ifndef DL_KREC_H
#define DL_KREC_H

enum { R_REGISTER, R_CB_START, R_CB_END, R_LINK_ADD, R_LINK_REFUSED, R_LINK_DEL,
       R_PHASE_BEGIN, R_PHASE_END, R_OP, R_OPEND, R_ORDER, R_LINK, R_SNAP, R_UNREGISTER,
       R_CORE_DEFER, R_RETRY_BEGIN, R_RETRY_END, R_REORDER, R_COUNT };

static const char *const rec_name[R_COUNT] = {
	"register", "cb_start", "cb_end", "link_add", "link_refused", "link_del",
	"phase_begin", "phase_end", "op", "opend", "order", "link", "snap", "unregister",
	"core_defer", "retry_begin", "retry_end", "reorder",
};

#endif
