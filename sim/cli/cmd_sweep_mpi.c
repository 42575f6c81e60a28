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
#include <sqlite3.h>

int sweep_mpi_main(int argc, char **argv)
{
	struct sweep_opts o = { 0 };
	struct sweep_run sr = { 0 };
	struct dl_sweep_coord co = { 0 };
	uint64_t *pending = NULL;
	sqlite3 *db = NULL;
	int rank, size, rc, worst = 0;

	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rc = sweep_prepare(argc, argv, &o);
	if (rank == 0 && !rc)
		rc = sweep_open_out(&o, &db, &pending, &sr.planned, &co.total);
	MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (worst) {
		rc = worst < 0 ? DL_EXIT_OK : worst;   /* -1: --help was printed */
		goto out;
	}
	if (rank != 0 && !(pending = calloc((size_t)dl_sweep_ntasks(&o.plan) + 1, sizeof(*pending)))) {
		fprintf(stderr, "dlsim sweep: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, DL_EXIT_USAGE);
	}
	MPI_Bcast(pending, (int)dl_sweep_ntasks(&o.plan), MPI_UINT64_T, 0, MPI_COMM_WORLD);
	/* every rank gives its runs the ids rank 0 will keep (dl_sweep_assign_ids) */
	MPI_Bcast(&o.first_id, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	if (rank != 0 && dl_sweep_assign_ids(&o.plan, pending, o.first_id)) {
		fprintf(stderr, "dlsim sweep: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, DL_EXIT_USAGE);
	}
	sweep_start(&co, &sr, &o, db, (uint32_t)size, rank == 0 && isatty(STDERR_FILENO));
	MPI_Bcast(&co.total, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
	rc = 0;
	if (co.total && dl_sweep_mpi_run(&co, &o.plan, pending, !strcmp(o.distribute, "queue"))) {
		fprintf(stderr, "dlsim sweep: %s\n", co.err);
		rc = DL_EXIT_USAGE;
	}
	if (rank == 0) {
		int c = sweep_close_out(db);

		if (!rc)
			rc = c;
	}
	if (rank == 0 && !rc)
		rc = sweep_finish(db, &o.plan, &sr, &co, o.json);
	if (rank == 0 && o.node_shards && size > 1)
		fprintf(stderr, "dlsim sweep: the runs of ranks 1-%d stay in %s on their nodes until"
			" gathered: copy every node's %s/* into %s.shards/ and run dlsim sweep --compact"
			" %s\n", size - 1, o.node_shards, o.node_shards, o.db, o.db);
	MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	rc = worst;
out:
	sweep_release(&o, db, pending);
	MPI_Finalize();
	return rc;
}

#endif
