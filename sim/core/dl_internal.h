/* dl_internal.h - helpers shared by the files of sim/core/ only. */
#ifndef DL_INTERNAL_H
#define DL_INTERNAL_H

#include <stddef.h>

#include "sim/core/dl_core.h"

void dl_link_set_status(struct dl_core *c, dl_link_t l, unsigned status);
void dl_link_drop_managed(struct dl_core *c, dl_link_t l);
int dl_rpm_get_internal(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed);
void dl_rpm_put_noidle(struct dl_core *c, dl_dev_t d);
int dl_rpm_cnt_alloc(struct dl_core *c);
void dl_core_emit(struct dl_core *c, unsigned kind, dl_dev_t dev, dl_link_t link,
		  uint32_t aux, uint32_t flags, unsigned phase);

/*
 * A list threaded by index through an array, as list.h's list_head is
 * through structs by pointer: node i's links are the dl_dev_t at
 * base + i * stride + prev_off (and + next_off), DL_NONE at the ends.  The
 * core keeps two, dpm_list over c->dev and the topo list over c->topo, each
 * with its own plain field names; built from constants, as dl_dpm_ilist()
 * builds it, the view inlines to the loads and stores those names give.
 */
struct dl_ilist {
	char *base;
	size_t stride, prev_off, next_off;
	dl_dev_t *head, *tail;
};

static inline struct dl_ilist dl_dpm_ilist(struct dl_core *c)
{
	return (struct dl_ilist){ (char *)c->dev, sizeof(*c->dev),
				  offsetof(struct dl_device, dpm_prev),
				  offsetof(struct dl_device, dpm_next), &c->dpm_head, &c->dpm_tail };
}

static inline dl_dev_t *dl_ilist_prev(struct dl_ilist l, dl_dev_t i)
{
	return (dl_dev_t *)(l.base + (size_t)i * l.stride + l.prev_off);
}

static inline dl_dev_t *dl_ilist_next(struct dl_ilist l, dl_dev_t i)
{
	return (dl_dev_t *)(l.base + (size_t)i * l.stride + l.next_off);
}

/* Link @d, not on the list, in after @at (DL_NONE: at the head). */
static inline void dl_ilist_link_after(struct dl_ilist l, dl_dev_t at, dl_dev_t d)
{
	dl_dev_t nx = at == DL_NONE ? *l.head : *dl_ilist_next(l, at);

	*dl_ilist_prev(l, d) = at;
	*dl_ilist_next(l, d) = nx;
	*(at != DL_NONE ? dl_ilist_next(l, at) : l.head) = d;
	*(nx != DL_NONE ? dl_ilist_prev(l, nx) : l.tail) = d;
}

/* Take @d off the list; its links become DL_NONE. */
static inline void dl_ilist_unlink(struct dl_ilist l, dl_dev_t d)
{
	dl_dev_t pv = *dl_ilist_prev(l, d), nx = *dl_ilist_next(l, d);

	*(pv != DL_NONE ? dl_ilist_next(l, pv) : l.head) = nx;
	*(nx != DL_NONE ? dl_ilist_prev(l, nx) : l.tail) = pv;
	*dl_ilist_prev(l, d) = *dl_ilist_next(l, d) = DL_NONE;
}

#endif
