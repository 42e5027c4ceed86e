"""The derived-datatype expectation tests of Carpen-Amarie et al. (2016, "MPI
Derived Datatypes: Performance Expectations and Status Quo"): what each test
compares, under which guideline, on which grid, and the planning that turns a
selection of tests into launch templates of `mg_ddtbench`.

Tests 12 and 13 go beyond the paper (mg_ddtexchange): the 3D FFT's transposition by MPI_Alltoallw and a halo
exchange by MPI_Neighbor_alltoallw, with subarray types against packing them, against point-to-point messages and
against the call's nonblocking and persistent forms.

Guidelines (names as in mpiguide; docs/ddt.md):
  DT-GL1      X(c, t) ≃ X(1, contig(c, t))
  DT-GL2/3    X(c, t) ⪯ MPI_Pack + X(packed) + MPI_Unpack   (a ping-pong or collective does both sides)
  DT-GL4      X(c, t) ⪯ X(c, normal(t)), with the paper's best description as normal(t)
and beyond the paper, from mpiguide's datatype engine:
  DT-GL2/3-ENG  the datatype is no slower than the engine's pack + contiguous transfer + unpack
  DT-GL4-NORM   the description is no slower than mpiguide's normalized type (mg_dt_to_mpi)
  DT-GL4-BEST   mpiguide's normalized type of each description is no slower than the fastest
                description of the layout (per configuration, the one with the lowest median)
and in Tests 12 and 13:
  DT-GL2/3-MAN  the call with subarray types is no slower than packing by hand + contiguous call + unpacking
  COLL-NB       the blocking call is no slower than its nonblocking form + MPI_Wait
  COLL-PERS     the persistent form (MPI_X_init once, MPI_Start + MPI_Wait) is no slower than the blocking call
  COLL-NBR      the neighbourhood collective is no slower than the point-to-point exchange it stands for
(COLL-NB, COLL-PERS and COLL-NBR are also the collective suite's, docs/tuning.md)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mpiguide.core import launch
from mpiguide.core.errors import MpiguideError

PATTERNS = ("pingpong", "bcast", "allgather")  # mg_ddtbench's: the layouts of the paper
MODES = ("datatype", "pack", "engine", "normalized")
# mg_ddtexchange's (Tests 12 and 13): its patterns, the layout column of each, its modes
EXCHANGE_PATTERNS = ("transpose", "halo")
EXCHANGE_LAYOUTS = {"transpose": "pencils", "halo": "halo"}
EXCHANGE_MODES = ("datatype", "manual", "pack", "engine", "normalized", "p2p", "nonblocking", "persistent")
# what mpiguide ddt tune measures of them: the library's strategies and the packing they are compared with
EXCHANGE_TUNE_MODES = ("datatype", "manual", "pack", "engine", "normalized")
ALL_PATTERNS_ANY = (*PATTERNS, *EXCHANGE_PATTERNS)
ALL_MODES = tuple(dict.fromkeys((*MODES, *EXCHANGE_MODES)))
TUNED = "tuned"  # the datatype mode under the tuned library (validation of mpiguide ddt tune)
BASIC_TYPES = {"int": 4, "char": 1, "short": 2, "double": 8}
GRIDS = ("paper", "quick")
PRECEDES, SIMILAR = "⪯", "≃"  # compared no slower than reference / both no slower than the other
CHARACTERIZE, GUIDELINE = "characterize", "guideline"
BASIC_LAYOUTS = ("tiled", "block", "bucket", "alternating")


def label(spec: str) -> str:
    """The `layout` column mg_ddtbench writes for a spec: blanks become ':'."""
    return ":".join(spec.split())


@dataclass(frozen=True)
class Comparison:
    """`compared ⪯ reference` (or ≃) for one guideline, each side a (layout spec, mode). With `among`,
    the reference is, per configuration, the fastest of these layout specs in the reference's mode
    (reference[0] is then BEST)."""

    guideline: str
    compared: tuple[str, str]
    reference: tuple[str, str]
    relation: str = PRECEDES
    among: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        d = {"guideline": self.guideline, "compared": list(self.compared), "reference": list(self.reference),
             "relation": self.relation}
        if self.among:
            d["among"] = list(self.among)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Comparison:
        return cls(d["guideline"], tuple(d["compared"]), tuple(d["reference"]), d["relation"],
                   tuple(d.get("among", ())))


BEST = "best"  # the reference of a comparison `among` several descriptions


@dataclass(frozen=True)
class Grid:
    A: tuple[int, ...]
    sizes: tuple[int, ...]  # data sizes m in bytes (for MPI_INT elements)
    patterns: tuple[str, ...]


@dataclass(frozen=True)
class ExpectationTest:
    number: int
    title: str
    section: str  # of Carpen-Amarie et al. (2016)
    kind: str  # CHARACTERIZE or GUIDELINE
    guideline: str  # the paper's guideline ("" for characterization)
    references: tuple[str, ...]  # layout specs
    compared: tuple[str, ...]
    relation: str
    paper: Grid
    quick: Grid
    modes: tuple[str, ...]  # what the driver measures (beyond-paper modes included)
    expectation: str  # the paper's hypothesis, in mpiguide's words
    finding: str  # what the paper measured (NEC MPI 1.3.1, MVAPICH2 2.1, Open MPI 1.10.1, Intel MPI 5.1.3)
    panel: str = ""  # chart panels: "variant" (Test 1), "layout" (Test 3), "" (one panel)
    n_grid: bool = False  # the paper gives n (elements), not m: sizes are n * 4 bytes of MPI_INT
    # Tests 12 and 13 (beyond the paper): where the test comes from, its driver, what A is, and its comparisons as
    # (guideline, compared mode, reference mode) of its one layout
    source: str = ""
    driver: str = "mg_ddtbench"
    a_label: str = "blocksize A [elements]"
    pairs: tuple[tuple[str, str, str], ...] = ()

    @property
    def origin(self) -> str:
        """Where the test comes from: the paper's section, or the source of a test beyond it."""
        return f"Carpen-Amarie et al. 2016, Section {self.section}" if self.section else self.source

    @property
    def exchange(self) -> bool:
        """A test of mg_ddtexchange (its own patterns and modes)."""
        return self.driver == "mg_ddtexchange"

    @property
    def patterns(self) -> tuple[str, ...]:
        """The patterns the test may run under (--patterns): the paper's tests any of the three."""
        return self.paper.patterns if self.exchange else PATTERNS

    @property
    def layouts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.references + self.compared))

    def comparisons(self) -> list[Comparison]:
        """Every comparison of the test, the paper's and mpiguide's extra ones."""
        n = self.number
        out: list[Comparison] = []
        if self.pairs:
            return [Comparison(g, (spec, a), (spec, b)) for spec in self.layouts for g, a, b in self.pairs]
        if self.kind == CHARACTERIZE:
            ref = self.references[0]
            out = [Comparison("slowdown", (c, "datatype"), (ref, "datatype")) for c in self.compared]
        elif n == 3:
            for spec in self.compared:
                out.append(Comparison("DT-GL2/3", (spec, "datatype"), (spec, "pack")))
                out.append(Comparison("DT-GL2/3-ENG", (spec, "datatype"), (spec, "engine")))
        elif n == 4:
            for spec in self.compared:
                sub = spec.split("sub=")[1]
                out.append(Comparison("DT-GL1", (spec, "datatype"), (sub, "datatype"), SIMILAR))
        else:
            ref = self.references[0]
            out = [Comparison("DT-GL4", (c, "datatype"), (ref, "datatype"), self.relation) for c in self.compared]
        if "normalized" in self.modes:
            out += [Comparison("DT-GL4-NORM", (s, "datatype"), (s, "normalized")) for s in self.layouts]
            if self.guideline == "DT-GL4":
                out += [Comparison("DT-GL4-BEST", (s, "normalized"), (BEST, "datatype"), among=self.layouts)
                        for s in self.layouts]
        return out


A_PAPER = (2, 10, 100, 1000, 1024, 10000)
A_QUICK = (2, 10, 1000)
M_SMALL, M_LARGE = 2000, 2560000  # Tests 4-7
M_SMALL_B = 3200  # Tests 1, 8-10
PING = ("pingpong",)
ALL_PATTERNS = ("pingpong", "bcast", "allgather")
VARIANT2 = tuple(f"{x} variant=2" for x in BASIC_LAYOUTS)
GL4_MODES = ("datatype", "normalized")


def _t(number, title, section, kind, guideline, references, compared, relation, paper, quick, modes,
       expectation, finding, **kw) -> ExpectationTest:
    return ExpectationTest(number, title, section, kind, guideline, tuple(references), tuple(compared), relation,
                           paper, quick, tuple(modes), expectation, finding, **kw)


TESTS: dict[int, ExpectationTest] = {t.number: t for t in (
    _t(1, "Contiguous vs the basic layouts", "2.4.1", CHARACTERIZE, "", ["contiguous"],
       [*BASIC_LAYOUTS, *VARIANT2], PRECEDES,
       Grid(A_PAPER, (M_SMALL_B, M_LARGE), ALL_PATTERNS), Grid(A_QUICK, (M_SMALL_B, M_LARGE), ALL_PATTERNS),
       ["datatype"],
       "Every non-contiguous layout is slower than the contiguous buffer of the same size, and the gap closes "
       "as the blocksize A grows.",
       "Tiled was the fastest non-contiguous layout in every pattern; the gaps were widest at small A; "
       "contiguous performance was alike across libraries, but non-contiguous performance differed by a "
       "factor of two and more (NEC MPI best).",
       panel="variant"),
    _t(2, "Contiguous bytes vs Tiled-heterogeneous", "2.4.2", CHARACTERIZE, "", ["contiguous type=byte"],
       ["tiled-heterogeneous"], PRECEDES,
       Grid((2, 6, 8, 10, 16, 100, 128, 200), (48000, 1500000), PING),
       Grid((2, 10, 100), (48000, 1500000), PING),
       ["datatype"],
       "A dense struct of char, int, double and short moves as fast as the same number of raw bytes, unless "
       "alignment padding makes the struct non-contiguous.",
       "Confirmed for all three libraries; the large differences came from the alignment padding of the struct, "
       "which makes it larger than its data and non-contiguous."),
    _t(3, "Datatypes vs MPI_Pack/MPI_Unpack", "3.2.1", GUIDELINE, "DT-GL2/3", [], list(BASIC_LAYOUTS), PRECEDES,
       Grid((2, 10, 10000), (64000, 320000, 640000, 1280000, 2560000), ALL_PATTERNS),
       Grid((2, 10, 10000), (64000, 2560000), ALL_PATTERNS),
       ["datatype", "pack", "engine"],
       "No library is slower with the datatype in the call than with MPI_Pack, a contiguous transfer and "
       "MPI_Unpack; a good one is faster.",
       "Many, often severe violations between nodes (MVAPICH2 by factors of two and more, NEC MPI too); on one "
       "node NEC MPI's datatypes were often faster than explicit packing.",
       panel="layout"),
    _t(4, "count x t vs one contiguous(count, t)", "3.2.2", GUIDELINE, "DT-GL1", list(BASIC_LAYOUTS),
       [f"contiguous-subtype sub={x}" for x in BASIC_LAYOUTS], SIMILAR,
       Grid(A_PAPER, (M_SMALL, M_LARGE), PING), Grid(A_QUICK, (M_SMALL, M_LARGE), PING),
       ["datatype"],
       "Sending c elements of t and one element of contiguous(c, t) take the same time.",
       "MVAPICH2 and Open MPI were about three times slower with the contiguous type over Tiled; no significant "
       "difference for Block, Bucket and Alternating."),
    _t(5, "Tiled vs Tiled-struct", "3.2.3", GUIDELINE, "DT-GL4", ["tiled"],
       ["tiled-struct S1=1 S2=1", "tiled-struct S1=2 S2=3"], PRECEDES,
       Grid(A_PAPER, (M_SMALL, M_LARGE), PING), Grid(A_QUICK, (M_SMALL, M_LARGE), PING), GL4_MODES,
       "A commit that saw that both struct members are tiled with the same A and B would make Tiled-struct as "
       "fast as Tiled; the authors expected libraries not to see it.",
       "Tiled-struct was several times slower at A = 2 (MVAPICH2 most), even with S1 = S2."),
    _t(6, "Tiled vs Tiled-vector", "3.2.4", GUIDELINE, "DT-GL4", ["tiled"], ["tiled-vector"], SIMILAR,
       Grid(A_PAPER, (M_SMALL, M_LARGE), PING), Grid(A_QUICK, (M_SMALL, M_LARGE), PING), GL4_MODES,
       "The vector description and the repeated Tiled block perform alike; the vector might even be a little "
       "faster.",
       "At small A, NEC MPI and Open MPI were much slower with Tiled-vector than with repeated Tiled blocks "
       "(in absolute terms NEC MPI's slow case matched MVAPICH2)."),
    _t(7, "Tiled vs Vector-tiled", "3.2.5", GUIDELINE, "DT-GL4", ["tiled"], ["vector-tiled"], PRECEDES,
       Grid(A_PAPER, (M_SMALL, M_LARGE), PING), Grid(A_QUICK, (M_SMALL, M_LARGE), PING), GL4_MODES,
       "The commit flattens the vector of vectors (outer stride a multiple of the inner one) into one vector, "
       "so Vector-tiled is as fast as Tiled.",
       "No library flattened it: at A = 2 Vector-tiled was 2 to 4 times slower."),
    _t(8, "Block vs Block-indexed", "3.2.6", GUIDELINE, "DT-GL4", ["block"], ["block-indexed"], SIMILAR,
       Grid(A_PAPER, (M_SMALL_B, M_LARGE), PING), Grid(A_QUICK, (M_SMALL_B, M_LARGE), PING), GL4_MODES,
       "Both descriptions should end up the same after commit; if not, a long index list may cost more than "
       "repeating the small Block type.",
       "At small A the Block description was the slower one (NEC MPI notably); otherwise the two were close."),
    _t(9, "Alternating vs Alternating-indexed", "3.2.7", GUIDELINE, "DT-GL4", ["alternating"],
       ["alternating-indexed"], SIMILAR,
       Grid(A_PAPER, (M_SMALL_B, M_LARGE), PING), Grid(A_QUICK, (M_SMALL_B, M_LARGE), PING), GL4_MODES,
       "As in Test 8, neither description is known to be better without normalization.",
       "At small A the opposite of Test 8: Alternating-indexed was slower (NEC MPI); alike at large A."),
    _t(10, "Alternating-repeated vs Alternating-struct", "3.2.8", GUIDELINE, "DT-GL4", ["alternating-struct"],
       ["alternating-repeated"], PRECEDES,
       Grid(A_PAPER, (M_SMALL_B, M_LARGE), PING), Grid(A_QUICK, (M_SMALL_B, M_LARGE), PING), GL4_MODES,
       "The struct of a head, one vector of merged runs and a tail approaches the tiled baseline; libraries do "
       "not find it from the repeated block, so Alternating-struct should be faster.",
       "Alternating-repeated was slower at small A with every library: even homogeneous layouts need the "
       "struct constructor for their best description."),
    _t(11, "RowCol descriptions", "3.2.9", GUIDELINE, "DT-GL4", ["rowcol-struct"],
       ["rowcol-fully-indexed", "rowcol-contiguous-and-indexed"], PRECEDES,
       Grid((2, 10, 100, 128, 512, 1000, 1024, 5000, 10000), (400, 40960), PING),
       Grid((2, 10, 100, 1000), (400, 40960), PING), GL4_MODES,
       "The compact struct (a contiguous row, a vector for the column) is the fastest description; the "
       "contiguous-and-indexed one may overtake the fully indexed one as A grows.",
       "NEC MPI: the struct best, fully-indexed close behind; MVAPICH2 slower for all three except large A; "
       "Open MPI: the struct close to twice as fast as the other two except at large A.",
       n_grid=True),
    _t(12, "3D FFT transpose: MPI_Alltoallw of subarrays", "", GUIDELINE, "DT-GL2/3-MAN", [], ["pencils"], PRECEDES,
       Grid((2,), (131072, 1048576, 8388608), ("transpose",)), Grid((2,), (131072, 1048576), ("transpose",)),
       ["datatype", "manual", "pack", "engine", "normalized", "nonblocking", "persistent"],
       "One MPI_Alltoallw with subarray types moves the pencils of a 3D FFT from x to y at least as fast as "
       "packing each block by hand, an MPI_Alltoall of the bytes and unpacking; its nonblocking form is no faster "
       "and its persistent form no slower.",
       "Dalcin, Mortensen and Keyes (2019) redistribute the pencils of their parallel FFT with one MPI_Alltoallw "
       "of subarray types and no packing of their own; Adefemi (2025), citing FFT studies, notes that some MPI "
       "libraries' MPI_Alltoallw is less optimized than their MPI_Alltoall.",
       source="beyond the paper: Dalcin, Mortensen and Keyes 2019", driver="mg_ddtexchange",
       a_label="process grid dimensions (1 slabs, 2 pencils)",
       pairs=(("DT-GL2/3-MAN", "datatype", "manual"), ("DT-GL2/3", "datatype", "pack"),
              ("DT-GL2/3-ENG", "datatype", "engine"), ("DT-GL4-NORM", "datatype", "normalized"),
              ("COLL-NB", "datatype", "nonblocking"), ("COLL-PERS", "persistent", "datatype"))),
    _t(13, "Halo exchange: MPI_Neighbor_alltoallw of subarrays", "", GUIDELINE, "DT-GL2/3-MAN", [], ["halo"], PRECEDES,
       Grid((2, 3), (131072, 1048576, 8388608), ("halo",)), Grid((2, 3), (131072, 1048576), ("halo",)),
       ["datatype", "manual", "pack", "engine", "normalized", "p2p", "nonblocking", "persistent"],
       "One MPI_Neighbor_alltoallw with subarray types on a Cartesian communicator exchanges a 2D or 3D halo at "
       "least as fast as packing the faces by hand around an MPI_Neighbor_alltoallv, and at least as fast as the "
       "point-to-point messages it stands for; its nonblocking form is no faster and its persistent form no slower.",
       "Adefemi (2025) measured halo exchanges of three stencil codes on one node with MPICH, Open MPI, Intel MPI "
       "and MVAPICH2: no variant (derived types or manual packing, point-to-point, neighbourhood or persistent) "
       "was best on every library; MPICH's neighbourhood and persistent derived-type variants were slow.",
       source="beyond the paper: Adefemi 2025", driver="mg_ddtexchange", a_label="dimensions of the halo (2, 3)",
       pairs=(("DT-GL2/3-MAN", "datatype", "manual"), ("DT-GL2/3", "datatype", "pack"),
              ("DT-GL2/3-ENG", "datatype", "engine"), ("DT-GL4-NORM", "datatype", "normalized"),
              ("COLL-NBR", "datatype", "p2p"), ("COLL-NB", "datatype", "nonblocking"),
              ("COLL-PERS", "persistent", "datatype"))),
)}
PAPER_TESTS = tuple(n for n, t in TESTS.items() if not t.exchange)  # 1-11: the default of --tests


def parse_tests(text: str) -> list[int]:
    """'1-11', '3,5-7', 'all' -> sorted unique test numbers."""
    if text.strip() == "all":
        return sorted(TESTS)
    out: set[int] = set()
    for item in text.split(","):
        item = item.strip()
        lo, sep, hi = item.partition("-")
        try:
            a, b = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise MpiguideError(f"bad --tests '{text}': numbers and ranges such as 1-11 or 3,5-7") from None
        if a > b or a not in TESTS or b not in TESTS:
            raise MpiguideError(f"bad --tests '{text}': tests are numbered 1 to {max(TESTS)}")
        out.update(range(a, b + 1))
    return sorted(out)


def pingpong_placement(collective: tuple[int, int] | None) -> str | None:
    """The paper runs ping-pong on 2x1 under 32x1 and on 1x2 under 1x16."""
    if collective is None:
        return None
    nodes = 2 if collective[0] >= 2 else 1
    return f"{nodes}x{2 // nodes}"


@dataclass
class Selection:
    """The options that narrow or change the tests' grids (None: the test's own)."""

    tests: list[int]
    grid: str = "paper"
    layouts: list[str] | None = None  # layout names or labels to keep among the compared ones
    A: list[int] | None = None
    sizes: list[int] | None = None
    patterns: list[str] | None = None
    modes: list[str] | None = None
    np: list[int] = field(default_factory=lambda: [launch.default_np()])
    basic: str = "int"
    # NODESxPPN of the collective launches, one launch per placement (the ping-pong's follows each:
    # pingpong_placement); none: the run's launcher decides
    placements: list[str] = field(default_factory=list)
    every_mode: bool = False  # every test measures all MODES, not only those of its comparisons (ddt tune)


def _keep_layout(spec: str, wanted: list[str]) -> bool:
    return spec.split()[0] in wanted or label(spec) in wanted


def plan_tests(sel: Selection) -> list[dict]:
    """One entry per launch template: test, pattern, processes, layouts, A, sizes, modes, comparisons."""
    out = []
    unit = BASIC_TYPES[sel.basic]
    for number in sel.tests:
        t = TESTS[number]
        grid = t.paper if sel.grid == "paper" else t.quick
        compared = [c for c in t.compared if sel.layouts is None or _keep_layout(c, sel.layouts)]
        if not compared:
            continue
        every = (EXCHANGE_TUNE_MODES if t.exchange else MODES) if sel.every_mode else t.modes
        modes = [m for m in every if sel.modes is None or m in sel.modes]
        if "datatype" not in modes:
            continue  # every comparison has the datatype on one side
        comps = [c for c in t.comparisons()
                 if (c.compared[0] in compared
                     or c.guideline in ("DT-GL4-NORM", "DT-GL4-BEST") and c.compared[0] in t.references)
                 and c.compared[1] in modes and c.reference[1] in modes]
        # the fastest description is sought among those measured
        comps = [Comparison(c.guideline, c.compared, c.reference, c.relation,
                            tuple(s for s in c.among if s in compared or s in t.references)) if c.among else c
                 for c in comps]
        if not comps:
            continue
        used = {s for c in comps for s in (c.compared[0], c.reference[0], *c.among) if s != BEST}
        specs = [s for s in t.layouts if s in used]
        # The paper gives m in bytes; Test 11 gives n elements of MPI_INT, kept as n for other element types.
        sizes = sel.sizes or [m // 4 * unit if t.n_grid else m for m in grid.sizes]
        for pattern in [p for p in sel.patterns or grid.patterns if p in t.patterns]:
            for np_, placement in _launch_shapes(pattern, sel):
                key = f"t{number:02d}-{pattern}-np{np_}" + (f"-{placement}" if placement else "")
                out.append({
                    "key": key, "test": number, "driver": t.driver, "pattern": pattern, "nprocs": np_,
                    "placement": placement,
                    "layouts": specs, "A": list(sel.A or grid.A), "sizes": list(sizes), "modes": modes,
                    "comparisons": [c.to_dict() for c in comps],
                })
    return out


def _launch_shapes(pattern: str, sel: Selection) -> list[tuple[int, str | None]]:
    """(processes, placement) of a pattern's launches: one per placement (the ping-pong's derived from each,
    repeats dropped), or per --np without placements."""
    if not sel.placements:
        return [(2, None)] if pattern == "pingpong" else [(n, None) for n in sel.np]
    shapes = []
    for p in sel.placements:
        nodes, ppn = launch.parse_placement(p)
        shape = (2, pingpong_placement((nodes, ppn))) if pattern == "pingpong" else (nodes * ppn, p)
        if shape not in shapes:
            shapes.append(shape)
    return shapes


# ---------------------------------------------------------------- time estimate

# A rough model of this kind of machine (shared memory, 2 cores): startup per
# launch, per configuration and mode a data check plus setup, and the timed
# repetitions at a bandwidth that non-contiguous data lowers.
LAUNCH_S = 0.9
SETUP_S = 0.0015
LATENCY_S = 4e-6
BYTES_PER_S = 2.5e9


def _nrep(m: int) -> int:
    """mg_nrep_rule() of src/bench/mg_bench.c."""
    return 100 if m <= 32 * 1024 else 50 if m <= 320 * 1024 else 20


def estimate(entries: list[dict], nrep: str | int) -> tuple[int, float]:
    """(configurations, seconds) of one launch of every entry; configurations count layout x A x m x mode."""
    configs, seconds = 0, 0.0
    for e in entries:
        p = e["nprocs"]
        transfers = {"pingpong": 2, "bcast": max(1, math.ceil(math.log2(p))), "allgather": p, "transpose": p,
                     "halo": 2}[e["pattern"]]
        seconds += LAUNCH_S
        for m in e["sizes"]:
            reps = nrep if isinstance(nrep, int) else _nrep(m) if nrep == "rule" else 100
            for _layout in e["layouts"]:
                for mode in e["modes"]:
                    configs += len(e["A"])
                    copies = 3 if mode in ("pack", "engine", "manual") else 2
                    op = LATENCY_S * transfers + copies * transfers * m / BYTES_PER_S
                    seconds += len(e["A"]) * (SETUP_S + (reps + 2) * op)
    return configs, seconds
