"""What the two tuning suites (coll's `mpiguide tune`, ddt's `mpiguide ddt
tune`) share in their analysis and profiles; their common workflow is
mpiguide.front.tuneflow."""

from __future__ import annotations

from mpiguide.core.stats import PASS, VIOLATED

# the first line of every libmpiguide-tune profile, of collectives and of datatype strategies alike
PROFILE_HEADER = "# mpiguide tune profile 1"

PROFILES = "{run_dir}/profiles/{stack}"  # the validation launches' profiles, per stack

# the irregular collectives whose algorithms libmpiguide-tune's online mode chooses in the run (no profile
# keeps them: a rank knows only its own counts)
ONLINE_IRREGULAR = ("allgatherv", "alltoallv", "gatherv", "scatterv")


def repaired(verdict: str) -> str:
    """A violation's outcome with the tuned library, from the verdict of `tuned ⪯ the faster side`."""
    return {PASS: "yes", VIOLATED: "no"}.get(verdict, "unclear")
