"""How this run of the suite was started, and so how to start it again.

Three ways in: the checkout's ``run`` script, the ``forge-conformance``
console script of an installed package, ``python -m forge_conformance``;
plus plain pytest over cases/ (no launcher). ``command()`` gives the words
that start the suite the same way from the user's current directory: every
rerun line and the usage text use it. The version comes from pyproject.toml
in a checkout and from the installed distribution's metadata otherwise.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from pathlib import Path

DIST = "forge-conformance"
ROOT = Path(__file__).resolve().parent.parent   # the checkout, or the installed package
RUN, CONSOLE, MODULE = "run", "console", "module"

_launcher: str | None = None


def set_launcher(kind: str | None) -> None:
    global _launcher
    _launcher = kind


def launcher() -> str:
    if _launcher is not None:
        return _launcher
    return RUN if (ROOT / "run").is_file() else CONSOLE


def installed() -> bool:
    """True when running from an installed package (no checkout around us)."""
    return not (ROOT / "pyproject.toml").is_file()


def _python() -> str:
    """``python3`` when that is this interpreter, else its full path (a venv's)."""
    found = shutil.which("python3")
    try:
        same = bool(found) and os.path.realpath(found) == os.path.realpath(sys.executable)
        # A venv's python links to the base one: the same binary, not the same packages.
        same = same and (sys.prefix == sys.base_prefix or os.path.dirname(os.path.abspath(found))
                         == os.path.dirname(os.path.abspath(sys.executable)))
    except OSError:
        same = False
    return "python3" if same else shlex.quote(sys.executable)


def command() -> str:
    kind = launcher()
    if kind == MODULE:
        return f"{_python()} -m forge_conformance"
    if kind == CONSOLE:
        script = sys.argv[0] if sys.argv and sys.argv[0] else DIST
        found = shutil.which(DIST)
        try:
            same = found and os.path.realpath(found) == os.path.realpath(script)
        except OSError:
            same = False
        return DIST if same or os.path.sep not in script else shlex.quote(script)
    run = ROOT / "run"
    try:
        shown = "run" if Path.cwd().resolve() == ROOT else str(run)
    except OSError:
        shown = str(run)
    return f"python3 {shlex.quote(shown)}"


def quiet_interrupts() -> None:
    """Until the CLI installs its own handlers (which stop the adapters and
    write the report), Ctrl-C ends the process at once with exit 130 and one
    line, never a traceback: nothing has started that needs stopping."""
    import signal

    def stop(signum, frame):
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        try:
            os.write(2, b"forge-conformance: interrupted\n")
        except OSError:
            pass
        os._exit(130)

    signal.signal(signal.SIGINT, stop)


def version() -> str:
    """The suite version (pyproject.toml in a checkout, package metadata installed)."""
    try:
        text = (ROOT / "pyproject.toml").read_text("utf-8")
    except OSError:
        text = None
    if text is not None:
        m = re.search(r'(?m)^version\s*=\s*"([^"]+)"', text)
        return m.group(1) if m else "unknown"
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version
        return dist_version(DIST)
    except (ImportError, PackageNotFoundError):
        return "unknown"
