/* dl_internal.h - helpers shared by the files of sim/core/ only. */
#ifndef DL_INTERNAL_H
#define DL_INTERNAL_H

#include "sim/core/dl_core.h"

void dl_link_set_status(struct dl_core *c, dl_link_t l, unsigned status);
void dl_link_drop_managed(struct dl_core *c, dl_link_t l);
int dl_rpm_get_internal(struct dl_core *c, dl_dev_t d, struct dl_idvec *resumed);
void dl_rpm_put_noidle(struct dl_core *c, dl_dev_t d);
int dl_rpm_cnt_alloc(struct dl_core *c);
void dl_core_emit(struct dl_core *c, unsigned kind, dl_dev_t dev, dl_link_t link,
		  uint32_t aux, uint32_t flags, unsigned phase);

#endif
