"""How this run of the suite was started, and so how to start it again.

Three ways in: the checkout's ``run`` script, the ``forge-conformance``
console script of an installed package, ``python -m forge_conformance``;
plus plain pytest over cases/ (no launcher). ``command()`` gives the words
that start the suite the same way from the user's current directory: every
rerun line and the usage text use it. The version comes from pyproject.toml
in a checkout and from the installed distribution's metadata otherwise.

It imports only os and sys at the top: ``run`` and every test adapter load it
(``keep_bytecode``) before anything else, dozens of times a run.
"""

from __future__ import annotations

import os
import sys

DIST = "forge-conformance"
# the checkout, or the installed package (the one definition: every module takes it from here,
# as a Path through cases/kit/settings.py)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # cases/kit/..
RUN, CONSOLE, MODULE = "run", "console", "module"

_launcher: str | None = None


def set_launcher(kind: str | None) -> None:
    global _launcher
    _launcher = kind


def launcher() -> str:
    if _launcher is not None:
        return _launcher
    return RUN if os.path.isfile(os.path.join(ROOT, "run")) else CONSOLE


def installed() -> bool:
    """True when running from an installed package (no checkout around us)."""
    return not os.path.isfile(os.path.join(ROOT, "pyproject.toml"))


def _python() -> str:
    """``python3`` when that is this interpreter, else its full path (a venv's)."""
    import shlex
    import shutil
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
    import shlex
    import shutil
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
    run = os.path.join(ROOT, "run")
    try:
        shown = "run" if os.path.realpath(os.getcwd()) == ROOT else run
    except OSError:
        shown = run
    return f"python3 {shlex.quote(shown)}"


# Set by the self-tests (tests/gate.py) for the adapters they start: the
# suite gives every adapter spawn its own XDG_CACHE_HOME (FC-055), so a test
# adapter looking there would find an empty folder and compile its modules
# again at every one of its dozens of starts a run.
BYTECODE_ENV = "FORGE_BYTECODE_DIR"


def bytecode_dir() -> str | None:
    """Where keep_bytecode caches bytecode, or None for "leave Python as it is"."""
    if not sys.dont_write_bytecode or sys.pycache_prefix:
        return None
    return private_bytecode_folder()


def private_bytecode_folder() -> str | None:
    """The suite's own bytecode folder (FORGE_BYTECODE_DIR, else "bytecode"
    beside the fixture cache), created if need be; None when caching is off
    (FORGE_FIXTURE_CACHE=off) or no folder of ours alone can be had."""
    chosen = os.environ.get("FORGE_FIXTURE_CACHE")
    if chosen is not None and chosen.strip().lower() in ("off", "0", "no", "false", ""):
        return None
    pinned = os.environ.get(BYTECODE_ENV, "")
    xdg, home = os.environ.get("XDG_CACHE_HOME", ""), os.environ.get("HOME", "")
    if os.path.isabs(pinned):
        base, where = os.path.dirname(pinned), pinned
    else:
        if chosen and os.path.isabs(chosen):
            base = chosen
        elif os.path.isabs(xdg):
            base = os.path.join(xdg, "forge-conformance")
        elif os.path.isabs(home) and os.path.isdir(home):
            base = os.path.join(home, ".cache", "forge-conformance")
        else:
            return None    # no private place for it (a shared temp folder is not one)
        where = os.path.join(base, "bytecode")
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        for level in (base, where):
            st = os.stat(level)
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None    # not ours alone: bytecode from there would run as our code
    except (OSError, AttributeError):
        return None
    return where


def keep_bytecode() -> None:
    """Cache the bytecode of the modules this process imports from here on,
    when the environment says not to write it beside the sources
    (PYTHONDONTWRITEBYTECODE, common in containers and CI images). A run
    starts dozens of the suite's own processes (the suite, and in the
    self-tests a proxy per adapter start), and compiling the same sources in
    each costs tens of milliseconds of CPU every time. The bytecode goes
    under the suite's cache folder (beside the fixture cache: $XDG_CACHE_HOME
    or ~/.cache, a folder of ours that nobody else can write; or the folder
    FORGE_BYTECODE_DIR names), never into the checkout, so the variable's
    intent holds. Only this process changes: an adapter's environment is
    never touched. FORGE_FIXTURE_CACHE=off, or a PYTHONPYCACHEPREFIX of the
    user's own, leaves Python as it is."""
    where = bytecode_dir()
    if where is not None:
        sys.pycache_prefix = where
        sys.dont_write_bytecode = False


def version() -> str:
    """The suite version (pyproject.toml in a checkout, package metadata installed)."""
    import re
    try:
        with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
            text = f.read()
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
