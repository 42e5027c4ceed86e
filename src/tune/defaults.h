/* libmpiguide-tune's defaults (docs/tuning.md): the library reads them, and the
 * drivers print them (mg_collbench --list) so that mpiguide's Python side can
 * check that it states the same values. Macros only. */
#ifndef MG_TUNE_DEFAULTS_H
#define MG_TUNE_DEFAULTS_H

#define MG_TUNE_DEFAULT_MSG_POOL ((size_t)64 << 20)  /* bytes of the message pool */
#define MG_TUNE_DEFAULT_INT_POOL ((size_t)256 << 10) /* bytes of the int-vector pool */
#define MG_TUNE_DEFAULT_CHUNK    64                  /* elements of a round-robin chunk (GL7, GL16) */

#endif
