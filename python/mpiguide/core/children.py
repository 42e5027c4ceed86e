"""The processes of a launch, which never outlive mpiguide by a signal.

A launch (mpiexec, smpirun, a launcher template) runs in a session of its own: it is one process group that
mpiguide ends as a whole, and a Ctrl-C at the terminal or a signal to mpiguide's group reaches mpiguide
alone. So nothing ends the launch with mpiguide but mpiguide itself, in a `finally` around the launch, and a
signal must never end mpiguide where that `finally` does not cover the launch: after the fork but before the
`try` (inside subprocess.Popen, or on the way from it into the `try`), or while the `finally` stops the
group. session() holds the signals that end mpiguide (SIGINT, SIGTERM, SIGHUP) there: from before the fork
until the launch is inside the `try`, and again from the start of the `finally` until the group is stopped.
A signal held is delivered, to the handler mpiguide has for it, at the first point where the `finally`
covers the launch (or once the launch is stopped): KeyboardInterrupt, the runner's StopSignals, or, where the
signal's default would end mpiguide outright (SIGTERM, SIGHUP), an exit with status 128 + the signal through
the `finally` clauses. A signal ignored (nohup, a background job) stays ignored.

SIGKILL cannot be handled: `kill -9` of mpiguide leaves its launch running."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator

from mpiguide.core.errors import MpiguideError

ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class NotStarted(MpiguideError):
    """The program of a launch could not be started (missing, not executable)."""


def _call(handler: object, signum: int) -> None:
    """What mpiguide's handler of signum does (handler as signal.getsignal gives it)."""
    if handler == signal.SIG_DFL:
        raise SystemExit(128 + signum)  # the default ends the process: through the finally clauses instead
    handler(signum, None)  # type: ignore[operator]


class _Held:
    """The ending signals, handled while a launch starts and runs: recorded (held) where the launch is not
    covered yet or is being stopped, handed to mpiguide's own handler (delivered) where it is (armed)."""

    def __init__(self) -> None:
        self.previous: dict[int, object] = {}
        self.pending: list[int] = []
        self.armed = False

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signals are the main thread's: none to hold here
        for sig in ENDING:
            handler = signal.getsignal(sig)
            if handler in (signal.SIG_IGN, None):  # ignored stays ignored; None: not set from Python, not ours
                continue
            self.previous[sig] = handler
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: object) -> None:  # noqa: ARG002 - signal handler signature
        self.pending.append(signum)
        self._deliver()

    def _deliver(self) -> None:
        while self.armed and self.pending:
            self.armed = False  # whatever comes while the handler runs, or after it raised, is held
            signum = self.pending.pop(0)
            _call(self.previous[signum], signum)
            self.armed = True  # it did not raise (a signal the handler only records): deliver the next

    def arm(self) -> None:
        """The launch is covered from here: deliver what was held, and from now on what comes."""
        self.armed = True
        self._deliver()

    def disarm(self) -> None:
        self.armed = False

    def restore(self) -> None:
        """mpiguide's handlers back, and what was held delivered to them."""
        self.armed = False
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        pending, self.pending = self.pending, []
        for signum in dict.fromkeys(pending):
            _call(self.previous[signum], signum)


@contextlib.contextmanager
def session(argv: list[str], stop: Callable[[subprocess.Popen], None], **popen) -> Iterator[subprocess.Popen]:
    """argv started in a session of its own (popen: subprocess.Popen's other arguments); on any way out of the
    context, stop(proc) ends its process group, with the ending signals held (see the module's text).
    NotStarted where it cannot start."""
    held = _Held()
    try:
        held.install()
        try:
            proc = subprocess.Popen(argv, start_new_session=True, **popen)
        except OSError as exc:
            raise NotStarted(f"cannot start {argv[0]}: {exc.strerror}") from exc
        try:
            held.arm()  # a signal held since the fork raises here, inside the try
            yield proc
        finally:
            try:
                held.disarm()  # a signal delivered before this line raises inside the try around stop
            finally:
                stop(proc)
    finally:
        held.restore()
