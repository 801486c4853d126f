"""How a run of the suite ends for its user: the exit codes, the one line on
stderr that says why (``say``), and ``UsageError``, the run that cannot start
(exit 2). Imports only os and sys: the entry points load it before anything
else (cases/harness/stopping.py, cases/cli/entry.py).

Exit codes (README, "Exit codes"; cases/cli/command.py says when each is given):
    0    no case failed
    1    at least one case failed
    2    the suite could not run (one line says why)
    130  interrupted (a stop signal; cases/harness/stopping.py)
"""

from __future__ import annotations

import sys

PROG = "forge-conformance"
EXIT_OK, EXIT_FAILED, EXIT_CANNOT_RUN, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """The run cannot start (a bad option, knob or adapter); the message is the one line the
    user sees, and the exit code is 2."""


def one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def say(text: str) -> None:
    """``forge-conformance: <text>`` as one line on stderr."""
    print(f"{PROG}: {one_line(text)}", file=sys.stderr, flush=True)
