"""libmpiguide-tune's catalog as the coll suite must know it before anything is
built: its collectives, their mock-ups and the library's pool defaults. The C
side is the source of truth (`mg_collbench --list` prints it);
tests/python/test_catalog.py fails when these copies drift from it."""

# libmpiguide-tune's collectives (mpiguide/tune.h: mg_tune_collective_name), in its order.
COLLECTIVES = ("allgather", "allreduce", "alltoall", "bcast", "gather", "reduce", "reduce_scatter_block", "scan",
               "scatter")

# Their mock-ups (src/tune/mockups/*.c): collective -> (name, n of COLL-GLn, formula), in the library's order.
MOCKUPS = {
    "allgather": (("allgather_as_gather_bcast", 1, "MPI_Gather + MPI_Bcast"),
                  ("allgather_as_alltoall", 2, "MPI_Alltoall"), ("allgather_as_allreduce", 3, "MPI_Allreduce"),
                  ("allgather_as_allgatherv", 4, "MPI_Allgatherv")),
    "allreduce": (("allreduce_as_reduce_bcast", 5, "MPI_Reduce + MPI_Bcast"),
                  ("allreduce_as_reducescatterblock_allgather", 6, "MPI_Reduce_scatter_block + MPI_Allgather"),
                  ("allreduce_as_reducescatter_allgatherv", 7, "MPI_Reduce_scatter + MPI_Allgatherv")),
    "alltoall": (("alltoall_as_alltoallv", 8, "MPI_Alltoallv"),),
    "bcast": (("bcast_as_allgatherv", 9, "MPI_Allgatherv"),
              ("bcast_as_scatter_allgather", 10, "MPI_Scatter + MPI_Allgather")),
    "gather": (("gather_as_allgather", 11, "MPI_Allgather"), ("gather_as_gatherv", 12, "MPI_Gatherv"),
               ("gather_as_reduce", 13, "MPI_Reduce (MPI_BOR on zero-filled blocks)")),
    "reduce": (("reduce_as_allreduce", 14, "MPI_Allreduce"),
               ("reduce_as_reducescatterblock_gather", 15, "MPI_Reduce_scatter_block + MPI_Gather"),
               ("reduce_as_reducescatter_gatherv", 16, "MPI_Reduce_scatter + MPI_Gatherv")),
    "reduce_scatter_block": (("reducescatterblock_as_reduce_scatter", 17, "MPI_Reduce + MPI_Scatter"),
                             ("reducescatterblock_as_reducescatter", 18, "MPI_Reduce_scatter"),
                             ("reducescatterblock_as_allreduce", 19, "MPI_Allreduce")),
    "scan": (("scan_as_exscan_reducelocal", 20, "MPI_Exscan + MPI_Reduce_local"),),
    "scatter": (("scatter_as_bcast", 21, "MPI_Bcast"), ("scatter_as_scatterv", 22, "MPI_Scatterv")),
}

# libmpiguide-tune's pool defaults (src/tune/defaults.h), as its configuration writes them.
POOL_DEFAULTS = {"msg_pool": "64M", "int_pool": "256k"}
