/*
 * naive.c - the order "naive".
 *
 * Registration order, links ignored: the negative control that
 * `dlsim check` must catch.
 */
#include "sim/order/order.h"

const struct dl_order_def dl_order_naive = {
	.name = "naive",
	.doc = "registration order with links ignored: the negative control that `dlsim check` must catch",
	.policy = { .probe_deferral = true, .default_workers = 1 },
};
