/* Messages for the engine's error codes. */
#include "mpiguide/dt.h"

const char *mg_dt_strerror(int code)
{
    static const char *const msg[MG_DT_ERR_COUNT_] = {
        [MG_DT_SUCCESS] = "success",
        [MG_DT_ERR_ARG] = "invalid argument (NULL pointer, MPI_DATATYPE_NULL or a negative count)",
        [MG_DT_ERR_OFFSET] = "offset lies beyond the end of the packed stream",
        [MG_DT_ERR_NOMEM] = "out of memory",
        [MG_DT_ERR_MPI] = "an MPI call failed",
        [MG_DT_ERR_UNSUPPORTED] = "the datatype uses a combiner or named type the engine cannot decode",
        [MG_DT_ERR_OVERFLOW] = "a size or displacement does not fit in MPI_Count/MPI_Aint (or in an int "
                               "where the MPI library has no large-count constructors)",
        [MG_DT_ERR_PARSE] = "the text is not a datatype in the notation (see docs/dt-notation.md)",
        [MG_DT_ERR_TRUNCATED] = "the output buffer was too small; the text was cut",
    };
    if (code < 0 || code >= MG_DT_ERR_COUNT_ || !msg[code]) return "unknown error code";
    return msg[code];
}
