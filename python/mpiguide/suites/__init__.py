"""The suites of mpiguide, one package each; a new suite is one more package and
one more entry here (mpiguide.core.suite has the protocol)."""

from mpiguide.core.suite import Registry
from mpiguide.suites.app import AppSuite
from mpiguide.suites.apps import AppsSuite
from mpiguide.suites.calls import CallsSuite
from mpiguide.suites.coll import CollSuite
from mpiguide.suites.ddt import DdtSuite
from mpiguide.suites.dtbench import DtBenchSuite
from mpiguide.suites.pingpong import PingPongSuite

SUITES = Registry([
    PingPongSuite(),
    DtBenchSuite(),
    DdtSuite(),
    CollSuite(),
    AppsSuite(),
    CallsSuite(),
    AppSuite(),
], default="pingpong")
