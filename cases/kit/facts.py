"""Fixture facts: what the bytes of the materialized copy say (the repos it
serves, the files of a repo, the files and 1-based lines containing a term,
FAULTS.json, ids that name no bytes). Expectations come from here, never
from an adapter's output."""

from __future__ import annotations

import hashlib
import json
import os

from cases.kit import settings
from cases.kit.memo import remembered
from fixture.catalog import ALPHA, BETA, VCS, WIDE

def served(fx) -> dict[str, str]:
    """Repository id -> top-level directory name, for every repo the fixture serves."""
    names = [ALPHA, BETA, WIDE] + ([VCS] if fx.vcs_built else [])
    return {fx.repo(name): name for name in names}


def disk_blobs(fx, name: str) -> frozenset[str]:
    """Paths of the files of a repo on disk (vcs: its worktree, .git excluded).
    Remembered per copy: no case adds or removes files."""
    return remembered(fx, ("blobs", name),
                      lambda: frozenset(p for p, kind in fx.walk(name).items() if kind == "blob"))


def read_or_none(fx, name: str, path: str) -> bytes | None:
    try:
        return fx.read(name, path)
    except (OSError, ValueError):
        return None


def lines_with(data: bytes, term: str) -> list[int]:
    """1-based numbers of the lines containing ``term`` (lines split on \\n only)."""
    needle = term.encode("utf-8")
    return [n for n, line in enumerate(data.split(b"\n"), 1) if needle in line]


def text_files(fx) -> tuple[tuple[str, str, bytes], ...]:
    """(repo id, path, bytes) of every text file of the fixture (no NUL byte:
    binary files are left out, adapters may skip them), read once per copy
    (no case writes into the shared copy; FC-011 rewrites its own). The walk
    reads the files directly (thousands of them in wide): like fx.walk, it
    leaves out a git repo's .git."""
    return remembered(fx, ("texts",), lambda: tuple(_read_text_files(fx)))


def _read_text_files(fx):
    for repo, name in served(fx).items():
        top = os.path.join(fx.path, name)
        for dirpath, dirnames, filenames in os.walk(top):
            if dirpath == top:
                dirnames[:] = [d for d in dirnames if d != ".git"]
                prefix = ""
            else:   # one relpath a folder, not one a file: wide holds thousands
                prefix = os.path.relpath(dirpath, top).replace(os.sep, "/") + "/"
            for filename in filenames:
                with open(os.path.join(dirpath, filename), "rb") as f:
                    data = f.read()
                if b"\0" not in data:
                    yield repo, prefix + filename, data


def files_named(fx, text: str) -> frozenset[tuple[str, str]]:
    """(repo id, path) of every file of the fixture whose repository-relative
    path holds ``text``: what a path: query for it finds at the least (the
    matching semantics are the adapter's, RULINGS "Search")."""
    return remembered(fx, ("named", text), lambda: frozenset(
        (repo, path) for repo, name in served(fx).items()
        for path, kind in fx.walk(name).items() if kind == "blob" and text in path))


def files_containing(fx, term: str) -> frozenset[tuple[str, str]]:
    """(repo id, path) of every text file of the fixture whose bytes contain
    ``term`` (text_files: binary files are left out)."""
    needle = term.encode("utf-8")
    return remembered(fx, ("containing", term), lambda: frozenset(
        (repo, path) for repo, path, data in text_files(fx) if needle in data))


def git_entries_at(fx, ref: str) -> dict[str, tuple[str, str, int | None]]:
    """path -> (type, git's object id, a file's size) of every entry of git's
    tree at ``ref`` (directories included); {} when git cannot resolve it."""
    from cases.kit.gitfacts import git_bytes
    try:
        out = git_bytes(fx, "ls-tree", "-r", "-t", "-l", "-z", ref)
    except RuntimeError:   # fx.git raises when git exits non-zero
        return {}
    entries = {}
    for row in out.split(b"\0"):
        if b"\t" in row:
            meta, path = row.split(b"\t", 1)
            _mode, kind, obj, size = meta.decode().split()
            entries[path.decode("utf-8", "surrogateescape")] = (kind, obj,
                                                               None if size == "-" else int(size))
    return entries


def content_of(fx, name: str, ref: str | None):
    """path -> something equal for two files exactly when their bytes are:
    the bytes on disk at ref null, git's object id at a ref (None for a path
    that is not a file there)."""
    if ref is None:
        return lambda path: read_or_none(fx, name, path)
    entries = git_entries_at(fx, ref)
    return lambda path: entries[path][1] if entries.get(path, ("",))[0] == "blob" else None


URL_HOSTILE = " #?%+"


def url_hostile(path: str) -> bool:
    return any(ch in path for ch in URL_HOSTILE)


# A hint for the common cause of a URL-hostile path going wrong on an HTTP backend.
ESCAPE_HINT = (f"hint: the path contains URL-hostile characters ({URL_HOSTILE!r}); was it sent "
               f"unescaped (or escaped twice) in the backend URL?")


def faults(fx) -> dict:
    """FAULTS.json of the materialized copy (name -> {"kind", "retry_after_s"?})."""
    try:
        return json.loads((fx.path / "FAULTS.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def faults_disabled() -> bool:
    """FORGE_NO_FAULTS set: the adapter under test has no fault repos."""
    return settings.active().no_faults


def unknown_blob_id() -> str:
    """A 64-hex id of bytes that are nowhere in the fixture."""
    return hashlib.sha256(b"forge-conformance: bytes that exist in no fixture file\n").hexdigest()
