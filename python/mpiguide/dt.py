"""mpiguide's datatype engine for mpi4py programs (docs/mpi4py.md).

    from mpi4py import MPI
    from mpiguide import dt

    t = MPI.INT.Create_vector(4, 2, 6).Commit()
    dt.explain(t)                   # what `mpiguide dt explain` prints, as a dict
    n = dt.normalize(t, count=10)   # normal(t) for 10 elements, a committed MPI.Datatype
    packed = dt.pack(buf, t, count=10)          # a numpy uint8 array: what MPI_Pack writes
    dt.unpack(packed, out, t, count=10)

The engine is libmpiguide-dt of the MPI library mpi4py runs on: the mpiguide
stack whose MPI_Get_library_version is the one mpi4py reports, as `mpiguide
build` made it (built on first use where it is missing; the ranks take turns)
(MPIGUIDE_DT_LIBRARY=path/libmpiguide-dt.so takes a library as it is).
Buffers are numpy arrays or anything with the buffer protocol; their first
byte is where the type's displacement 0 lies, and every byte count elements of
the type touch must lie inside them."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from mpiguide.core.catalog import c_table
from mpiguide.core.errors import MpiguideError

try:
    from mpi4py import MPI
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("mpiguide.dt needs mpi4py (pip install mpi4py, built with the MPI you run: "
                      "docs/mpi4py.md)") from exc
if not hasattr(MPI.Datatype, "fromhandle"):  # pragma: no cover - depends on the environment
    raise ImportError("mpiguide.dt needs mpi4py 4 or newer (handles to and from C): pip install 'mpi4py>=4'")

Count = ctypes.c_longlong  # MPI_Count in every MPI library mpiguide builds for


def _handle_type():
    """The C type of MPI_Datatype in this MPI: an int in MPICH and Intel MPI (read unsigned, the bits mpi4py's
    handles carry), a pointer in Open MPI."""
    return ctypes.c_uint if MPI._sizeof(MPI.Datatype) == ctypes.sizeof(ctypes.c_int) else ctypes.c_void_p


def _first_line(text: str) -> str:
    """The first line with blanks folded (Open MPI's string, read through mpi4py, ends in a NUL)."""
    text = text.replace("\x00", "").strip()
    return " ".join(text.splitlines()[0].split()) if text else ""


def library_path() -> Path:
    """libmpiguide-dt.so for the MPI library mpi4py runs on (built if it is missing: a running program does not
    rebuild what `mpiguide build` made, and needs no cmake where one was built)."""
    env = os.environ.get("MPIGUIDE_DT_LIBRARY")
    if env:
        return Path(env)
    from mpiguide.core import build, stacks  # the stack machinery only when it is needed

    running = _first_line(MPI.Get_library_version())
    for s in stacks.all_stacks():
        if _first_line(s.library_version) == running:
            lib = build.build_dir(s) / "libmpiguide-dt.so"
            return lib if lib.exists() else build.ensure_built(s) / "libmpiguide-dt.so"
    try:
        import mpi4py

        mpicc = mpi4py.get_config().get("mpicc", "")
    except Exception:  # only for the hint
        mpicc = ""
    where = shutil.which(mpicc) if mpicc else None
    prefix = str(Path(where).resolve().parents[1]) if where else "PREFIX"
    raise MpiguideError(f"mpi4py runs on '{running}', which no mpiguide stack is: add it with `mpiguide stack add "
                        f"NAME --prefix {prefix}` (or set MPIGUIDE_DT_LIBRARY to a libmpiguide-dt.so built for it)")


@cache
def _lib() -> ctypes.CDLL:
    path = library_path()
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        raise MpiguideError(f"cannot load {path}: {exc}") from None
    h, p = _handle_type(), ctypes.c_void_p
    sig = {
        "mg_dt_strerror": (ctypes.c_char_p, [ctypes.c_int]),
        "mg_dt_from_mpi": (ctypes.c_int, [h, ctypes.POINTER(p)]),
        "mg_dt_free": (None, [p]),
        "mg_dt_size": (Count, [p]), "mg_dt_extent": (Count, [p]), "mg_dt_lb": (Count, [p]),
        "mg_dt_blocks": (Count, [p]), "mg_dt_mean_block": (Count, [p]), "mg_dt_same_signature": (ctypes.c_int, [p]),
        "mg_dt_pack": (ctypes.c_int, [p, p, Count, Count, p, Count, ctypes.POINTER(Count)]),
        "mg_dt_unpack": (ctypes.c_int, [p, p, Count, Count, p, Count, ctypes.POINTER(Count)]),
        "mg_dt_to_mpi_form": (ctypes.c_int, [p, Count, ctypes.c_int, ctypes.POINTER(h)]),
        "mg_dt_form_parse": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
        "mg_dt_describe": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_size_t]),
        "mg_dt_describe_count": (ctypes.c_int, [p, Count, ctypes.c_char_p, ctypes.c_size_t]),
        "mg_dt_shape": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_size_t]),
        "mg_dt_program": (ctypes.c_int, [p, Count, ctypes.c_char_p, ctypes.c_size_t]),
    }
    for name, (res, args) in sig.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise MpiguideError(f"{path} has no {name}: a libmpiguide-dt older than this mpiguide; rebuild it "
                                "(mpiguide build)") from None
        f.restype, f.argtypes = res, args
    return lib


MG_DT_ERR_TRUNCATED = 8
# mg_dt_form_parse's names, from the engine's table (src/dt/policy.c)
FORMS = tuple(re.findall(r'"(\w+)"', c_table("src/dt/policy.c", r"form_names\[\] = \{([^}]*)\}", "form names")[0]))


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise MpiguideError(f"{what}: {_lib().mg_dt_strerror(rc).decode()}")


def _text(fn, *args) -> str:
    size = 1 << 14
    while True:
        buf = ctypes.create_string_buffer(size)
        rc = fn(*args, buf, size)
        if rc != MG_DT_ERR_TRUNCATED or size >= 1 << 26:
            _check(rc, fn.__name__)
            return buf.value.decode()
        size *= 8


@dataclass
class _Span:
    """Bytes count elements of a type touch, relative to the buffer's start: [lo, hi)."""

    lo: int
    hi: int


def _span(datatype: MPI.Datatype, count: int) -> _Span:
    lb, extent = datatype.Get_extent()
    tlb, textent = datatype.Get_true_extent()
    if count == 0 or datatype.Get_size() == 0:
        return _Span(0, 0)
    reach = (count - 1) * extent
    return _Span(tlb + min(0, reach), tlb + textent + max(0, reach))


def _address(buf, writable: bool) -> tuple[int, int, object]:
    """(address, bytes, keep-alive) of a buffer."""
    arr = buf if isinstance(buf, np.ndarray) else np.frombuffer(buf, dtype=np.uint8)
    if not arr.flags["C_CONTIGUOUS"]:
        raise MpiguideError("the buffer must be C-contiguous (a numpy view with strides is not)")
    if writable and not arr.flags["WRITEABLE"]:
        raise MpiguideError("the output buffer is read-only")
    return arr.ctypes.data, arr.nbytes, arr


class Type:
    """An MPI datatype decoded once by the engine (for repeated pack/unpack); free() or a with block."""

    def __init__(self, datatype: MPI.Datatype):
        if datatype == MPI.DATATYPE_NULL:
            raise MpiguideError("MPI.DATATYPE_NULL has no layout")
        self.datatype = datatype
        self._t = ctypes.c_void_p()
        _check(_lib().mg_dt_from_mpi(_handle_type()(MPI._handleof(datatype)), ctypes.byref(self._t)),
               "mg_dt_from_mpi")

    def free(self) -> None:
        if self._t:
            _lib().mg_dt_free(self._t)
            self._t = ctypes.c_void_p()

    def __enter__(self) -> Type:
        return self

    def __exit__(self, *exc) -> None:
        self.free()

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:  # interpreter shutdown
            pass

    @property
    def size(self) -> int:
        return _lib().mg_dt_size(self._t)

    def explain(self, count: int = 1) -> dict:
        lib = _lib()
        lb, extent = self.datatype.Get_extent()
        return {"size": lib.mg_dt_size(self._t), "extent": extent, "lb": lb, "blocks": lib.mg_dt_blocks(self._t),
                "mean_block": lib.mg_dt_mean_block(self._t), "shape": _text(lib.mg_dt_shape, self._t),
                "normalized": _text(lib.mg_dt_describe, self._t),
                "count": count, "normalized_count": _text(lib.mg_dt_describe_count, self._t, count),
                "program": _text(lib.mg_dt_program, self._t, count).splitlines(),
                "same_signature": bool(lib.mg_dt_same_signature(self._t))}

    def normalize(self, count: int = 1, form: str = "auto") -> MPI.Datatype:
        """normal(t) for count elements: one element of the result moves what count elements of t move (same
        type map, lb and extent as MPI_Type_contiguous(count, t)), committed; the caller frees it. form: how it
        is built (FORMS; "auto": the form measured best on the MPI library running, docs/dt-engine.md)."""
        if count < 1:
            raise MpiguideError(f"count {count}: at least 1 element")
        code = ctypes.c_int()
        if _lib().mg_dt_form_parse(form.encode(), ctypes.byref(code)) != 0:
            raise MpiguideError(f"form {form!r}: expected one of {', '.join(FORMS)}")
        out = _handle_type()()
        _check(_lib().mg_dt_to_mpi_form(self._t, count, code.value, ctypes.byref(out)), "mg_dt_to_mpi_form")
        return MPI.Datatype.fromhandle(out.value or 0)

    def _fits(self, nbytes: int, count: int, what: str) -> None:
        s = _span(self.datatype, count)
        if s.lo < 0 or s.hi > nbytes:
            raise MpiguideError(f"{count} element(s) of the type touch bytes [{s.lo}, {s.hi}) of the {what}, which "
                                f"has {nbytes}")

    def pack(self, buf, count: int = 1, out=None) -> np.ndarray:
        """The packed bytes of count elements read from buf (what MPI_Pack writes), into out (a uint8 array of at
        least count * size bytes) or a new array."""
        if count < 0:
            raise MpiguideError(f"count {count}: not a number of elements")
        addr, nbytes, keep = _address(buf, writable=False)
        self._fits(nbytes, count, "input buffer")
        want = count * self.size
        if out is None:
            out = np.empty(want, dtype=np.uint8)
        oaddr, obytes, okeep = _address(out, writable=True)
        if obytes < want:
            raise MpiguideError(f"the output holds {obytes} bytes, {want} are packed")
        got = Count()
        _check(_lib().mg_dt_pack(self._t, addr, count, 0, oaddr, want, ctypes.byref(got)), "mg_dt_pack")
        del keep, okeep
        return out[:want] if isinstance(out, np.ndarray) and out.dtype == np.uint8 else out

    def unpack(self, packed, buf, count: int = 1) -> int:
        """Scatter the packed bytes of count elements into buf laid out as those elements (as MPI_Unpack: packed
        must hold them all); returns the bytes taken."""
        if count < 0:
            raise MpiguideError(f"count {count}: not a number of elements")
        paddr, pbytes, pkeep = _address(packed, writable=False)
        addr, nbytes, keep = _address(buf, writable=True)
        self._fits(nbytes, count, "output buffer")
        want = count * self.size
        if pbytes < want:
            raise MpiguideError(f"the packed input holds {pbytes} bytes, {count} element(s) take {want}")
        got = Count()
        _check(_lib().mg_dt_unpack(self._t, paddr, want, 0, addr, count, ctypes.byref(got)), "mg_dt_unpack")
        del pkeep, keep
        return got.value


def explain(datatype: MPI.Datatype, count: int = 1) -> dict:
    """What `mpiguide dt explain` prints, as data: size, extent, lb, blocks, mean_block, shape, normalized,
    normalized_count (count elements), program (its lines), same_signature."""
    with Type(datatype) as t:
        return t.explain(count)


def normalize(datatype: MPI.Datatype, count: int = 1, form: str = "auto") -> MPI.Datatype:
    """mpiguide's normalized type of count elements of datatype, committed (free it with .Free()); form as in
    Type.normalize."""
    with Type(datatype) as t:
        return t.normalize(count, form)


def pack(buf, datatype: MPI.Datatype, count: int = 1, out=None) -> np.ndarray:
    """The packed bytes of count elements of datatype read from buf (as MPI_Pack writes them)."""
    with Type(datatype) as t:
        return t.pack(buf, count, out)


def unpack(packed, buf, datatype: MPI.Datatype, count: int = 1) -> int:
    """The packed bytes scattered into buf as count elements of datatype; returns the bytes taken."""
    with Type(datatype) as t:
        return t.unpack(packed, buf, count)
