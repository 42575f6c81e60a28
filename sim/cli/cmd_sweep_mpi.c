/*
 * cmd_sweep_mpi.c - `mpirun -np N dlsim sweep ...` in a build without MPI:
 * say so instead of running N independent sweeps on one database.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim/cli/cli.h"
#include "sim/cli/sweep_cli.h"

bool sweep_under_mpi(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

int sweep_mpi_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "dlsim sweep: started by mpirun, but this dlsim was built without MPI"
		" (install libopenmpi-dev, i.e. run make deps, and rebuild)\n");
	return DL_EXIT_USAGE;
}
