"""libmpiguide-tune's catalog as the coll suite must know it before anything is
built: its collectives, their mock-ups and the library's pool defaults, read
from the C sources (src/tune/catalog.c, src/tune/mockups/<collective>.c,
src/tune/defaults.h). tests/python/test_catalog.py checks them against what a
built mg_collbench prints with --list."""

from __future__ import annotations

from mpiguide.core.catalog import c_table

# libmpiguide-tune's collectives in its order (the mock-up tables of src/tune/catalog.c).
COLLECTIVES = tuple(c_table("src/tune/catalog.c", r"\[MG_COLL_[A-Z_]+\] = &mg_([a-z_]+)_mockups", "collectives"))

# Their mock-ups: collective -> (name, n of COLL-GLn, formula), in the library's order (each file's mg_mockup
# table: {"name", n, "formula", supports, need, run}).
MOCKUPS = {c: tuple((name, int(n), formula) for name, n, formula in
                    c_table(f"src/tune/mockups/{c}.c", r'\{"([a-z_]+)", (\d+), "([^"]+)",', f"mock-ups of {c}"))
           for c in COLLECTIVES}


def _pool(name: str) -> str:
    """A pool default of src/tune/defaults.h, `((size_t)64 << 20)`, as the options write it: 64M."""
    [(n, shift)] = c_table("src/tune/defaults.h", rf"#define {name} \(\(size_t\)(\d+) << (10|20)\)", name)
    return n + ("k" if shift == "10" else "M")


# libmpiguide-tune's pool defaults, as its configuration writes them.
POOL_DEFAULTS = {"msg_pool": _pool("MG_TUNE_DEFAULT_MSG_POOL"), "int_pool": _pool("MG_TUNE_DEFAULT_INT_POOL")}

# mg_collbench's own neighbourhood collectives (src/bench/collcalls.c, mg_coll_neighborhoods): name -> (MPI name,
# topology). The library has no mock-up of them; they are measured against their point-to-point exchange (COLL-NBR).
NEIGHBORHOODS = {name: (mpi, topology) for name, mpi, topology in c_table(
    "src/bench/collcalls.c", r'\{"([a-z_]+)", "(MPI_[A-Za-z_]+)", "([a-z]+)", C_NBR_[A-Z]+\}',
    "neighbourhood collectives")}

# The forms of a call mg_collbench measures beside its blocking one (collcalls.c, mg_coll_forms): implementation
# label -> the guideline it is checked by. Measured, reported, never chosen by a profile.
FORMS = dict(c_table("src/bench/collcalls.c", r'\[MG_FORM_[A-Z0-9]+\] = \{"([a-z0-9]+)", "(COLL-[A-Z]+)"\}',
                     "forms of the calls"))
# --forms: the forms every collective can take (p2p is the neighbourhood collectives' own)
CHOSEN_FORMS = ("nonblocking", "persistent")
