"""What names a release of the suite, and what changed between two reports.

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

``python3 run --diff OLD.json NEW.json`` (``diff_main``) compares two JSON
reports of one adapter: cases newly failing, newly passing, new warnings, and
the version and digest each names. A case *fails* when the adapter did not
meet it (outcome failed, or known: a known-failures file is the author's
policy, not the adapter's verdict).

Stdlib only at import time: tools/forge_build.py loads this file by its path.
"""

from __future__ import annotations

import hashlib
import json
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
    "cases/report/release.py", "cases/judges/coverage.py"))
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


# ------------------------------------------------------------------ --diff

FAILING = ("failed", "known")
EXIT_SAME, EXIT_NEWLY_FAILING, EXIT_BAD_INPUT = 0, 1, 2
_NOT_RUN = ("not selected", "not run")   # message prefixes of a case that did not run


class BadReport(Exception):
    """A --diff input that is not a forge-conformance JSON report; the one line shown."""


def load_report(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise BadReport(f"--diff: cannot read {path!r}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError):
        raise BadReport(f"--diff: {path!r} is not JSON (a forge-conformance report is "
                        f"written by --json)") from None
    if not (isinstance(data, dict) and data.get("suite") == "forge-conformance"
            and isinstance(data.get("cases"), list)):
        raise BadReport(f"--diff: {path!r} is not a forge-conformance JSON report "
                        f"(write one with --json)")
    for row in data["cases"]:
        if not (isinstance(row, dict) and isinstance(row.get("id"), str)
                and isinstance(row.get("outcome"), str)):
            raise BadReport(f"--diff: {path!r} has a case row without an id and an outcome")
    return data


def _ran(row: dict | None) -> bool:
    return row is not None and not str(row.get("message", "")).startswith(_NOT_RUN)


def _label(row: dict) -> str:
    return f"{row['id']}  {row.get('title', '')}".rstrip()


def _cut(text: str, limit: int = 110) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def diff(old: dict, new: dict) -> tuple[list[str], bool]:
    """The lines ``--diff`` prints and whether a case newly fails."""
    before = {r["id"]: r for r in old["cases"]}
    after = {r["id"]: r for r in new["cases"]}
    failing, passing, warned, other, gone = [], [], [], [], []
    not_compared = 0
    for cid in sorted(set(before) | set(after)):
        was, now = before.get(cid), after.get(cid)
        if now is None:
            gone.append(f"  {_label(was)}")
            continue
        if was is not None and not (_ran(was) and _ran(now)):
            not_compared += _ran(was) != _ran(now)
            continue
        if was is None and not _ran(now):
            continue
        new_case = " (a new case)" if was is None else ""
        old_outcome = was["outcome"] if was is not None else None
        if now["outcome"] in FAILING and old_outcome not in FAILING:
            known = " (listed as known)" if now["outcome"] == "known" else ""
            failing.append(f"  {_label(now)}{new_case}{known}")
            failing.append(f"      {_cut(now.get('message', ''))}")
        elif old_outcome in FAILING and now["outcome"] not in FAILING:
            passing.append(f"  {_label(now)}  ({old_outcome} -> {now['outcome']})")
        elif old_outcome is not None and old_outcome != now["outcome"]:
            other.append(f"  {_label(now)}  ({old_outcome} -> {now['outcome']})")
        elif was is None:
            other.append(f"  {_label(now)}  (a new case: {now['outcome']})")
        seen = set(was.get("warnings", [])) if was is not None else set()
        fresh = [w for w in now.get("warnings", []) if w not in seen]
        for w in fresh:
            warned.append(f"  {now['id']}  {_cut(w)}")
    lines = _header(old, new)
    for title, block in (("newly failing", failing), ("newly passing", passing),
                         ("new warnings", warned), ("other changes", other),
                         ("no longer cases", gone)):
        count = len([ln for ln in block if not ln.startswith("      ")])
        if count:
            lines += ["", f"{title} ({count}):", *block]
    if not_compared:
        lines += ["", f"{not_compared} case(s) ran in only one of the two runs (not selected, "
                      f"or not run): not compared"]
    if not (failing or passing or warned or other or gone):
        lines += ["", "no verdict changed"]
    return lines, bool(failing)


def _header(old: dict, new: dict) -> list[str]:
    out = []
    for key in ("version", "protocol", "matrix"):
        a, b = old.get(key, "unknown"), new.get(key, "unknown")
        out.append(f"{key:<9}{a} -> {b}" if a != b else f"{key:<9}{a} (same)")
    if old.get("matrix") and old.get("matrix") == new.get("matrix"):
        out.append("         the same cases judged both runs: any change is the adapter's")
    argv_a = (old.get("adapter") or {}).get("argv")
    argv_b = (new.get("adapter") or {}).get("argv")
    if argv_a != argv_b:
        out.append(f"adapter  {' '.join(map(str, argv_a or []))} -> "
                   f"{' '.join(map(str, argv_b or []))}")
    s_a, s_b = old.get("summary") or {}, new.get("summary") or {}
    counts = [f"{k} {s_a.get(k, 0)} -> {s_b.get(k, 0)}"
              for k in ("passed", "failed", "skipped", "known") if s_a.get(k) or s_b.get(k)]
    if counts:
        out.append("summary  " + ", ".join(counts))
    return out


def diff_main(old_path: str, new_path: str) -> int:
    """``--diff OLD NEW``: 1 when a case newly fails, 0 otherwise (2: BadReport, by the CLI)."""
    old, new = load_report(old_path), load_report(new_path)
    lines, newly_failing = diff(old, new)
    print("\n".join([f"forge-conformance --diff {old_path} -> {new_path}", *lines]), flush=True)
    return EXIT_NEWLY_FAILING if newly_failing else EXIT_SAME
