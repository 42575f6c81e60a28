/*
 * cmd_sweep_mpi.c - `mpirun -np N dlsim sweep ...`.  dlsim itself is not
 * linked with MPI (every other verb would pay for loading it): under mpirun
 * it executes dlsim-mpi from its own directory, the same program built with
 * MPI (DLSIM_WITH_MPI), where every rank runs sweep_mpi_main().
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/cli/cli.h"
#include "sim/cli/sweep_cli.h"

bool sweep_under_mpi(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

#ifndef DLSIM_WITH_MPI

int sweep_mpi_main(int argc, char **argv)
{
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 16);
	char **av = calloc((size_t)argc + 2, sizeof(*av));

	if (n > 0 && av) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			strcpy(slash + 1, "dlsim-mpi");
			av[0] = self;
			for (int i = 0; i < argc; i++)
				av[i + 1] = argv[i];
			execv(self, av);
		}
	}
	free(av);
	fprintf(stderr, "dlsim sweep: started by mpirun, but this dlsim was built without MPI"
		" (no dlsim-mpi beside it: install libopenmpi-dev with make deps, and rebuild)\n");
	return DL_EXIT_USAGE;
}

#else

#include <mpi.h>

int sweep_mpi_main(int argc, char **argv)
{
	struct sweep sw = { 0 };
	int rank, size, rc, worst = 0;

	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rc = sweep_prepare(argc, argv, &sw.o);
	if (rank == 0 && !rc)
		rc = sweep_open_out(&sw);
	MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (worst) {
		rc = worst < 0 ? DL_EXIT_OK : worst;   /* -1: --help was printed */
		goto out;
	}
	if (rank != 0 &&
	    !(sw.pending = calloc((size_t)dl_sweep_ntasks(&sw.o.plan) + 1, sizeof(*sw.pending)))) {
		fprintf(stderr, "dlsim sweep: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, DL_EXIT_USAGE);
	}
	MPI_Bcast(sw.pending, (int)dl_sweep_ntasks(&sw.o.plan), MPI_UINT64_T, 0, MPI_COMM_WORLD);
	/* every rank gives its runs the ids rank 0 will keep (dl_sweep_assign_ids) */
	MPI_Bcast(&sw.o.first_id, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	if (rank != 0 && dl_sweep_assign_ids(&sw.o.plan, sw.pending, sw.o.first_id)) {
		fprintf(stderr, "dlsim sweep: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, DL_EXIT_USAGE);
	}
	sweep_start(&sw, (uint32_t)size, rank == 0 && isatty(STDERR_FILENO));
	MPI_Bcast(&sw.co.total, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
	rc = 0;
	if (sw.co.total &&
	    dl_sweep_mpi_run(&sw.co, &sw.o.plan, sw.pending, !strcmp(sw.o.distribute, "queue"))) {
		fprintf(stderr, "dlsim sweep: %s\n", sw.co.err);
		rc = DL_EXIT_USAGE;
	}
	if (rank == 0) {
		int c = sweep_close_out(sw.db);

		if (!rc)
			rc = c;
	}
	if (rank == 0 && !rc)
		rc = sweep_finish(&sw);
	if (rank == 0 && sw.o.node_shards && size > 1)
		fprintf(stderr, "dlsim sweep: the runs of ranks 1-%d stay in %s on their nodes until"
			" gathered: copy every node's %s/* into %s.shards/ and run dlsim sweep --compact"
			" %s\n", size - 1, sw.o.node_shards, sw.o.node_shards, sw.o.db, sw.o.db);
	MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	rc = worst;
out:
	sweep_release(&sw);
	MPI_Finalize();
	return rc;
}

#endif
