/* Which entry of the MPI library the engine calls. Built into libmpiguide-dt
 * (and the drivers) it calls the MPI_ functions, so that a profiling library
 * sees its calls like any other code's. Built into libmpiguide-tune, which
 * intercepts MPI_Type_commit and the other calls its datatype strategies
 * watch, it calls the PMPI_ entries (MG_DT_CALL_PMPI): the engine's own type
 * constructions are not the application's and must not re-enter the library.
 * tests/c/engine_pmpi.cmake checks that no MPI_ call is left in that build;
 * a new MPI call of the engine needs its line here. */
#ifndef MG_DT_MPI_ENTRY_H
#define MG_DT_MPI_ENTRY_H

#ifdef MG_DT_CALL_PMPI
#define MPI_Comm_get_errhandler PMPI_Comm_get_errhandler
#define MPI_Comm_set_errhandler PMPI_Comm_set_errhandler
#define MPI_Errhandler_free PMPI_Errhandler_free
#define MPI_Error_string PMPI_Error_string
#define MPI_Finalized PMPI_Finalized
#define MPI_Get_library_version PMPI_Get_library_version
#define MPI_Initialized PMPI_Initialized
#define MPI_Pack PMPI_Pack
#define MPI_Type_commit PMPI_Type_commit
#define MPI_Type_contiguous PMPI_Type_contiguous
#define MPI_Type_contiguous_c PMPI_Type_contiguous_c
#define MPI_Type_create_darray PMPI_Type_create_darray
#define MPI_Type_create_darray_c PMPI_Type_create_darray_c
#define MPI_Type_create_f90_complex PMPI_Type_create_f90_complex
#define MPI_Type_create_f90_integer PMPI_Type_create_f90_integer
#define MPI_Type_create_f90_real PMPI_Type_create_f90_real
#define MPI_Type_create_hindexed PMPI_Type_create_hindexed
#define MPI_Type_create_hindexed_block PMPI_Type_create_hindexed_block
#define MPI_Type_create_hindexed_block_c PMPI_Type_create_hindexed_block_c
#define MPI_Type_create_hindexed_c PMPI_Type_create_hindexed_c
#define MPI_Type_create_hvector PMPI_Type_create_hvector
#define MPI_Type_create_hvector_c PMPI_Type_create_hvector_c
#define MPI_Type_create_indexed_block PMPI_Type_create_indexed_block
#define MPI_Type_create_indexed_block_c PMPI_Type_create_indexed_block_c
#define MPI_Type_create_resized PMPI_Type_create_resized
#define MPI_Type_create_struct PMPI_Type_create_struct
#define MPI_Type_create_struct_c PMPI_Type_create_struct_c
#define MPI_Type_create_subarray PMPI_Type_create_subarray
#define MPI_Type_create_subarray_c PMPI_Type_create_subarray_c
#define MPI_Type_dup PMPI_Type_dup
#define MPI_Type_free PMPI_Type_free
#define MPI_Type_get_contents PMPI_Type_get_contents
#define MPI_Type_get_contents_c PMPI_Type_get_contents_c
#define MPI_Type_get_envelope PMPI_Type_get_envelope
#define MPI_Type_get_envelope_c PMPI_Type_get_envelope_c
#define MPI_Type_get_extent PMPI_Type_get_extent
#define MPI_Type_get_extent_x PMPI_Type_get_extent_x
#define MPI_Type_get_name PMPI_Type_get_name
#define MPI_Type_get_true_extent PMPI_Type_get_true_extent
#define MPI_Type_get_true_extent_x PMPI_Type_get_true_extent_x
#define MPI_Type_indexed PMPI_Type_indexed
#define MPI_Type_indexed_c PMPI_Type_indexed_c
#define MPI_Type_size PMPI_Type_size
#define MPI_Type_size_x PMPI_Type_size_x
#define MPI_Type_vector PMPI_Type_vector
#define MPI_Type_vector_c PMPI_Type_vector_c
#define MPI_Unpack PMPI_Unpack
#endif

#endif
