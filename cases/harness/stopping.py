"""The stop path: what a stop signal (Ctrl-C's SIGINT, a CI timeout's SIGTERM,
a closed terminal's SIGHUP) does at every instant of a run, and what the run
must remove before it ends (``LEFTOVERS``). Nothing else in the suite
installs a handler for them or decides that a run was interrupted.

Three stages, one handler each:

1. From the entry point's first statement until a run catches the signals
   (``quiet``: ``run`` installs it while SIGINT is held back, the console
   script and ``python -m`` before anything else loads). Nothing has been
   started that needs stopping: SIGINT ends the process at once with exit
   130 and one line. No exception is raised, so nothing can swallow it.
2. While a run is caught (``catch`` ... ``restore``). The first stop signal
   is recorded (``came``), arms the stop bound and raises KeyboardInterrupt in
   the main thread; that unwinds the run through its cleanups (the adapters'
   trees stopped, the temp areas and LEFTOVERS removed) to the one place
   that reports it (``interrupted``: one line, 130). Later signals are
   recorded and do nothing else, so they cannot cut that cleanup short.
   A KeyboardInterrupt that lands where Python cannot raise it (a
   destructor, a weakref callback: sys.unraisablehook) is raised again at
   the main thread's next instruction once it left the hook
   (``_thread.interrupt_main``), never printed, never lost; ``check`` raises it at the run's
   well-defined points (each case's start, before the pre-flight's verdict is acted on); and the
   entry point's last word, ``ended``, turns a run during which a stop
   signal came into exit 130 with its one line, whatever became of the
   KeyboardInterrupt.
3. After ``restore``: the handlers that were there before (``quiet``'s in a
   run), the line never said twice.

Every wait of a stop is bounded (each tree by wire.process, the trees in
parallel by the harness): a few seconds in all. STOP_BOUND_S is far past
that. A stop still going on then is a bug of the suite's: the run says so
with every thread's stack, SIGKILLs the adapters' groups it still knows and
exits 130. The bound's watch is a bare ``_thread`` thread started by the
handler: it takes none of the threading module's locks, which the main
thread may hold at the instant the signal lands.

Imports os, sys and builtins only at the top: ``quiet`` runs before
anything else loads.
"""

from __future__ import annotations

import _signal
import _thread
import os
import sys

from cases.kit.exits import EXIT_INTERRUPTED, PROG, say

STOP_SIGNALS = tuple(getattr(_signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(_signal, name))
STOP_BOUND_S = 30.0
INTERRUPTED = "interrupted"


class _State:
    def __init__(self):
        self.came: list[int] = []       # the stop signals of this run, in order
        self.said = False               # its one line was written
        self.again = False              # a KeyboardInterrupt is being raised again
        self.main = _thread.get_ident()
        self.hook = sys.unraisablehook  # the hook ``_unraisable`` stands in front of
        self.bound = None               # a lock held while the stop bound is armed


_STATE = _State()


# ------------------------------------------------------------------ stage 1

def quiet() -> None:
    """SIGINT ends the process at once: exit 130, one line (nothing to stop yet)."""
    _signal.signal(_signal.SIGINT, _quit)


def _quit(signum, frame):
    try:
        sys.stdout.flush()
    except Exception:   # (a write the signal interrupted: its buffer is busy)
        pass
    try:
        if not _STATE.said:
            os.write(2, f"{PROG}: {INTERRUPTED}\n".encode())
    except OSError:
        pass
    os._exit(EXIT_INTERRUPTED)


# ------------------------------------------------------------------ stage 2

def begin() -> None:
    """A run begins in this process: no stop signal has come to it yet."""
    _STATE.__init__()


def catch() -> dict:
    """From here on the stop signals raise KeyboardInterrupt (once); returns what
    ``restore`` puts back. Signals ignored when the run started stay ignored
    (nohup's SIGHUP, a background job's SIGINT)."""
    import faulthandler  # noqa: F401  (builtin; loaded now, not by the bound's watch)
    begin()
    previous: dict = {}
    for sig in STOP_SIGNALS:
        old = _signal.getsignal(sig)
        if old is not _signal.SIG_IGN:
            previous[sig] = old
            _signal.signal(sig, _on_stop)
    previous["unraisable"] = sys.unraisablehook
    sys.unraisablehook = _unraisable
    return previous


def restore(previous: dict) -> None:
    """The stop is over (its cleanups ran): the handlers of before, the bound off."""
    for sig, handler in previous.items():
        if sig == "unraisable":
            sys.unraisablehook = handler
        else:
            _signal.signal(sig, handler)
    bound, _STATE.bound = _STATE.bound, None
    if bound is not None:
        bound.release()


def came() -> bool:
    """Whether a stop signal came during this run."""
    return bool(_STATE.came)


def check() -> None:
    """Raise KeyboardInterrupt when a stop signal came (a well-defined point of
    the run: what was swallowed on the way is raised here)."""
    if _STATE.came:
        raise KeyboardInterrupt


def interrupted(text: str = INTERRUPTED) -> int:
    """Say the run's one line about its stop (once a process); 130."""
    if not _STATE.said:
        _STATE.said = True
        say(text)
    return EXIT_INTERRUPTED


def ended(code: int) -> int:
    """The exit code of a run that returned ``code``: 130, with its line, when
    a stop signal came during it."""
    return interrupted() if _STATE.came else code


def _on_stop(signum, frame):
    if _STATE.again:    # raising again one that could not be raised where it landed
        _STATE.again = False
        raise KeyboardInterrupt
    _STATE.came.append(signum)
    if len(_STATE.came) == 1:
        _arm_bound()
        raise KeyboardInterrupt


def _unraisable(unraisable) -> None:
    """The run's KeyboardInterrupt landed in a destructor or a weakref callback,
    where Python would print it ("Exception ignored in ...") and go on: raise
    it again at the main thread's next instruction. Anything else is printed
    as Python prints it."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _STATE.came \
            and _thread.get_ident() == _STATE.main:
        for sig in STOP_SIGNALS:
            if _signal.getsignal(sig) is _on_stop:
                _STATE.again = True
                # As that signal would, in the main thread: from a thread of its
                # own, which needs the GIL to do it, so the main thread has
                # left this hook (its last call) before the handler runs.
                try:
                    _thread.start_new_thread(_thread.interrupt_main, (sig,))
                except RuntimeError:   # no thread to be had: ``check`` and ``ended`` still stop it
                    _STATE.again = False
                return
        return   # no handler of ours left to raise it: ``ended`` still says 130
    _STATE.hook(unraisable)


def _arm_bound() -> None:
    off = _thread.allocate_lock()
    off.acquire()
    _STATE.bound = off
    try:
        _thread.start_new_thread(_watch_stop, (STOP_BOUND_S, off))
    except RuntimeError:   # no thread to be had: the stop goes on unbounded, never untold
        _STATE.bound = None


def _watch_stop(bound_s: float, off) -> None:
    if off.acquire(timeout=bound_s):   # a deadline: released by ``restore``
        return
    try:
        os.write(2, f"{PROG}: the stop took over {bound_s:g} s, which is a bug of the suite; "
                    "exiting (please report it with the thread stacks below)\n".encode())
        import faulthandler
        faulthandler.dump_traceback(file=2, all_threads=True)
    except OSError:
        pass
    finally:
        process = sys.modules.get("wire.process")   # not imported: no adapter started
        if process is not None:
            process.kill_every_tree()
        os._exit(EXIT_INTERRUPTED)


# ------------------------------------------------------------------ what to remove

class Leftovers:
    """What a run must remove before the process ends (temp areas, fixture
    copies, waiting workers). A stop signal can land at any instant, also
    inside this cleanup or just before it: the first one raises
    KeyboardInterrupt and later ones do nothing, so ``drop`` (called where the
    run ends and again by the entry point) finishes the job once that has
    passed through."""

    def __init__(self):
        self._steps: list = []

    def add(self, step, *, first: bool = False) -> None:
        self._steps.insert(0, step) if first else self._steps.append(step)

    def drop(self) -> None:
        interrupted_ = False
        while self._steps:
            try:
                self._steps[0]()
                self._steps.pop(0)
            except KeyboardInterrupt:
                interrupted_ = True   # later signals do nothing: the next round ends it
        if interrupted_:
            raise KeyboardInterrupt


LEFTOVERS = Leftovers()
