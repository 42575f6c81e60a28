/* cmd_orders.c - `dlsim orders`: the ordering algorithms, one line each. */
#include <stdio.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/order/order.h"

int cmd_orders(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: dlsim orders\n\nList the ordering algorithms accepted by --order and --orders.\n");
		return DL_EXIT_OK;
	}
	if (argc > 1) {
		fprintf(stderr, "dlsim orders: unexpected argument '%s'\n", argv[1]);
		return DL_EXIT_USAGE;
	}
	for (int i = 0; i < DL_ORDER_COUNT; i++)
		printf("%-16s %s\n", dl_order_name((enum dl_order)i), dl_order_doc((enum dl_order)i));
	return DL_EXIT_OK;
}
