"""What names a release of the suite: its version and its matrix digest.

The version is ``<protocol major>.<protocol minor>.<suite release>``
(pyproject.toml, the one place it is written): 1.6.0 is the first release
judging protocol v1.6. Beside it, the *matrix digest* names exactly what
judged a run; two reports with the same digest were judged by the same cases,
on the same fixture, with the same run-wide judges.

The digest is a sha256 (its first ``DIGEST_LEN`` hex digits) over, in path
order, the path and the bytes of:

- ``fixture/MANIFEST.sha256`` (the fixture's every file, by its own hash) and
  ``cases/judges/rules.json`` (the rules table);
- every Python module of ``cases/`` (the registry rows and the ownership
  table, the cases ``cases/test_*.py``, the kit they import and the run-wide
  judges), of ``wire/`` (the protocol monitor's rules) and the top level of
  ``fixture/`` (the fixture facts and the git builder);
- except ``NOT_JUDGING``: the modules that only start a run, carry it out in
  several processes or tell its outcome (options, entry points, the stop path,
  the end of a run, reports, replay, the known-failures policy, this module). A module added anywhere else counts,
  so the digest may change when no verdict does, never the other way round.

Line ends are read as LF, so a checkout with CRLF names the same matrix.
Installed, the sources carry rewritten imports (tools/forge_build.py): the
wheel's build computes the digest from the checkout and writes it into the
package (``forge_conformance.__matrix__``), which is read back here.

Two reports are compared by ``--diff`` (cases/report/diff.py).

Stdlib only at import time: tools/forge_build.py loads this file by its path.
"""

from __future__ import annotations

import hashlib
import os

DIGEST_LEN = 12
DATA_FILES = ("fixture/MANIFEST.sha256", "cases/judges/rules.json")
CODE_DIRS = ("cases", "wire")     # every .py beneath them
FIXTURE_CODE = "fixture"          # its top-level .py only: its data is in the manifest
NOT_JUDGING = frozenset((
    "cases/cli/command.py", "cases/cli/entry.py", "cases/cli/jobs.py", "cases/cli/replay.py",
    "cases/kit/exits.py", "cases/kit/invocation.py",
    "cases/harness/stopping.py", "cases/harness/worker.py", "cases/harness/finish.py",
    "cases/report/writers.py", "cases/report/html_report.py", "cases/report/known_failures.py",
    "cases/report/release.py", "cases/report/model.py", "cases/report/convert.py",
    "cases/report/diff.py", "cases/judges/coverage.py"))
_SKIP_DIRS = {"__pycache__"}


def matrix_files(root: str) -> list[str]:
    """The paths (relative, with /) the digest reads, in the order it reads them."""
    found = [p for p in DATA_FILES if os.path.isfile(os.path.join(root, p))]
    for top in CODE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            found += [f"{rel}/{n}" for n in filenames if n.endswith(".py")]
    fixture_dir = os.path.join(root, FIXTURE_CODE)
    if os.path.isdir(fixture_dir):
        found += [f"{FIXTURE_CODE}/{n}" for n in os.listdir(fixture_dir)
                  if n.endswith(".py") and os.path.isfile(os.path.join(fixture_dir, n))]
    return sorted(p for p in found if p not in NOT_JUDGING)


def compute_digest(root: str) -> str:
    """The matrix digest of the checkout at ``root`` (see module doc)."""
    h = hashlib.sha256()
    for rel in matrix_files(root):
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read().replace(b"\r\n", b"\n")
        h.update(rel.encode("utf-8") + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()[:DIGEST_LEN]


_DIGEST: list[str] = []   # one computation a process


def matrix_digest() -> str:
    """This suite's matrix digest: computed in a checkout, read when installed."""
    if not _DIGEST:
        from cases.kit import invocation   # here, not at the top: forge_build loads this file alone
        if invocation.installed():
            import importlib
            package = importlib.import_module(__name__.split(".")[0])
            _DIGEST.append(getattr(package, "__matrix__", "unknown"))
        else:
            _DIGEST.append(compute_digest(invocation.ROOT))
    return _DIGEST[0]
