/* cmd_orders.c - `dlsim orders`: the ordering algorithms, one line each. */
#include <stdio.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/order/order.h"

int cmd_orders(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: dlsim orders\n\nList the ordering algorithms accepted by --order and --orders,\n"
		       "each with the kernel versions whose scheme it models (--kernel VERSION\n"
		       "outside them is refused) and the version a run gets without --kernel.\n"
		       "Versions select the rules that changed between 6.12 and 7.3: 6.16\n"
		       "replaced the classic async suspend/resume (kernel-async) by the rework\n"
		       "(kernel-async-v2); from 6.18 the PM core no longer waits on\n"
		       "SYNC_STATE_ONLY links.  The orders that are not the kernel's (levels,\n"
		       "cp-first, naive) run under any of them.\n");
		return DL_EXIT_OK;
	}
	if (argc > 1) {
		fprintf(stderr, "dlsim orders: unexpected argument '%s'\n", argv[1]);
		return DL_EXIT_USAGE;
	}
	for (int i = 0; i < DL_ORDER_COUNT; i++) {
		char kv[64];

		dl_order_kernels((enum dl_order)i, kv, sizeof(kv));
		printf("%-16s kernels %-24s %s\n", dl_order_name((enum dl_order)i), kv,
		       dl_order_doc((enum dl_order)i));
	}
	return DL_EXIT_OK;
}
