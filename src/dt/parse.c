/* placeholder: the notation parser is being written */
#include "mpiguide/dt.h"
int mg_dt_parse(const char *text, MPI_Datatype *out, char *errbuf, size_t errlen)
{
    (void)text; (void)out; (void)errbuf; (void)errlen;
    return MG_DT_ERR_UNSUPPORTED;
}
