"""The entry points, each of which hands its words to cases.cli.command.main and ends
the process with its exit code: the checkout's ``run`` (after its bootstrap),
the installed ``forge-conformance`` console script and
``python -m forge_conformance``. The last two put the stop path's first stage
in place (cases/harness/stopping.py) before anything else loads; ``run`` does so at
its own first statement.
"""

from __future__ import annotations

import os
import sys

from cases.harness import stopping   # (os, sys and builtins: nothing else loads before ``quiet``)


def exit_now(code: int) -> NoReturn:   # (typing.NoReturn: not imported, never evaluated)
    """End the process with ``code`` once the run is over (cli.main's cleanups
    ran, the report is written): skip the interpreter's teardown of thousands
    of objects, which the user would wait for after the verdict line."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def run_main(argv: list[str]) -> NoReturn:
    """``python3 run``: its bootstrap installed ``stopping.quiet`` already."""
    from cases.cli.command import main
    from cases.kit.invocation import RUN
    exit_now(main(argv, launcher=RUN))


def console_main() -> NoReturn:
    """The ``forge-conformance`` console script."""
    stopping.quiet()
    from cases.cli.command import main
    from cases.kit.invocation import CONSOLE
    exit_now(main(launcher=CONSOLE))


def module_main() -> NoReturn:
    """``python -m forge_conformance``."""
    stopping.quiet()
    from cases.cli.command import main
    from cases.kit.invocation import MODULE
    exit_now(main(launcher=MODULE))
