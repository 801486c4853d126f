"""The reference adapter's change watcher (vendor/fs_provider.py, "change notification").

A walk of a working tree that the watcher shows nothing happened since
replays the last complete walk instead of an lstat per file. These tests
prove that the replay happens (no lstat at all) and that every kind of change
is seen at the next walk: each walk is compared with the tree as the disk
holds it (os.walk and sha256 of the bytes), never with another walk. They
also prove the ways it stays off: a file system it does not trust, a file
with a second hard link, a kernel that refuses a watch.

Each test loads its own copy of the module, so each has a fresh watcher. The
racy window is set to zero here (its own test is in test_reference_adapter):
entries are trusted at once, so a test needs no wait.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

ADAPTER = Path(__file__).resolve().parents[1] / "vendor" / "fs_provider.py"


def load(tag: str):
    spec = importlib.util.spec_from_file_location(f"fs_provider_watch_{tag}", ADAPTER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.RACY_WINDOW_NS = module.RACY_WINDOW_FINE_NS = 0
    return module


@pytest.fixture
def root(tmp_path):
    """A served folder on a file system the watcher trusts (tmpfs /dev/shm,
    else the temp dir when it is local), with one repository, r."""
    F = load("probe")
    base = None
    for candidate in ("/dev/shm", str(tmp_path)):
        if os.path.isdir(candidate) and os.access(candidate, os.W_OK) \
                and F._file_system_of(os.path.realpath(candidate)) in F.LOCAL_FILE_SYSTEMS:
            base = candidate
            break
    if base is None:
        pytest.skip("no local file system here (the watcher is off; every walk is full)")
    top = Path(tempfile.mkdtemp(prefix="forge-watch-", dir=base))
    repo = top / "r"
    (repo / "a" / "b").mkdir(parents=True)
    (repo / "top.txt").write_bytes(b"top\n")
    (repo / "a" / "one.txt").write_bytes(b"one\n")
    (repo / "a" / "b" / "two.txt").write_bytes(b"two two\n")
    yield top
    shutil.rmtree(top, ignore_errors=True)


def on_disk(repo: Path) -> dict[str, str | None]:
    """path -> sha256 of its bytes (None for a directory), as the disk holds it now."""
    found: dict[str, str | None] = {}
    for dirpath, dirnames, filenames in os.walk(repo):
        rel = os.path.relpath(dirpath, repo)
        prefix = "" if rel == "." else rel + "/"
        for d in dirnames:
            found[prefix + d] = None
        for f in filenames:
            found[prefix + f] = hashlib.sha256(Path(dirpath, f).read_bytes()).hexdigest()
    return found


class Counted:
    """os.lstat, counted, while a walk runs (in this thread: the self-tests'
    gate pool runs beside it, tests/gate.py)."""

    def __init__(self, monkeypatch):
        self.calls = 0
        real = os.lstat
        mine = threading.get_ident()

        def lstat(*args, **kwargs):
            if threading.get_ident() == mine:
                self.calls += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(os, "lstat", lstat)


def walked(repo, monkeypatch) -> tuple[dict[str, str | None], int]:
    """One walk of a served repository: (path -> id or None, the lstat calls it made)."""
    with monkeypatch.context() as m:
        counter = Counted(m)
        entries = {path: (info.sha if info else None) for path, kind, info in repo.walk()}
    return entries, counter.calls


def served(F, top: Path):
    """Repository r of the folder, one object for the whole test (it holds the last walk)."""
    return F.Catalog(str(top)).repo("r")


def rewrite_same_size(repo: Path) -> None:
    target = repo / "a" / "b" / "two.txt"
    stamp = os.stat(target)
    target.write_bytes(b"TWO TWO\n")
    os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))   # mtime as before


def atomic_replace(repo: Path) -> None:
    tmp = repo / "a" / ".one.tmp"
    tmp.write_bytes(b"one, replaced\n")
    os.replace(tmp, repo / "a" / "one.txt")


CHANGES = {
    "rewrite at the same size and mtime": rewrite_same_size,
    "append": lambda repo: (repo / "top.txt").open("ab").write(b"more\n"),
    "truncate": lambda repo: os.truncate(repo / "a" / "one.txt", 0),
    "new file deep down": lambda repo: (repo / "a" / "b" / "new.txt").write_bytes(b"new\n"),
    "new directory with a file": lambda repo: ((repo / "c").mkdir(),
                                               (repo / "c" / "f.txt").write_bytes(b"f\n")),
    "delete": lambda repo: (repo / "a" / "b" / "two.txt").unlink(),
    "rename": lambda repo: os.rename(repo / "a" / "one.txt", repo / "a" / "uno.txt"),
    "directory renamed": lambda repo: os.rename(repo / "a" / "b", repo / "a" / "bee"),
    "atomic replace (temp file + rename)": atomic_replace,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_an_unchanged_tree_is_replayed_and_every_change_is_seen(root, monkeypatch, change):
    F = load("change")
    r = served(F, root)
    repo = root / "r"
    first, _ = walked(r, monkeypatch)
    assert first == on_disk(repo)
    again, lstats = walked(r, monkeypatch)
    assert again == first and lstats == 0, "an unchanged tree is replayed without an lstat"
    CHANGES[change](repo)
    after, lstats = walked(r, monkeypatch)
    assert after == on_disk(repo) and after != first
    assert lstats > 0, "a change means a full walk"
    settled, lstats = walked(r, monkeypatch)
    assert settled == after and lstats == 0, "the full walk is the new replay"


def test_a_file_with_another_hard_link_keeps_every_walk_full(root, monkeypatch):
    F = load("link")
    r = served(F, root)
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    os.link(root / "r" / "top.txt", elsewhere / "top.txt")
    walked(r, monkeypatch)
    _, lstats = walked(r, monkeypatch)
    assert lstats > 0
    (elsewhere / "top.txt").write_bytes(b"written through the other link\n")
    after, _ = walked(r, monkeypatch)
    assert after == on_disk(root / "r")


def test_a_file_system_it_does_not_trust_keeps_every_walk_full(root, monkeypatch):
    F = load("nfs")
    r = served(F, root)
    monkeypatch.setattr(F, "_file_system_of", lambda path: "nfs")
    walked(r, monkeypatch)
    _, lstats = walked(r, monkeypatch)
    assert lstats > 0 and F._watcher._fd is None


def test_a_refused_watch_turns_the_watcher_off_and_walks_stay_live(root, monkeypatch):
    F = load("refused")
    r = served(F, root)
    walked(r, monkeypatch)                   # inotify started, watches in place

    class Refusing:
        def inotify_add_watch(self, fd, path, mask):
            return -1                              # as at the kernel's watch limit
    F._watcher._libc = Refusing()
    (root / "r" / "a" / "b" / "new").mkdir()       # a new directory needs a new watch
    after, _ = walked(r, monkeypatch)
    assert after == on_disk(root / "r") and F._watcher._off
    (root / "r" / "top.txt").write_bytes(b"changed while off\n")
    later, lstats = walked(r, monkeypatch)
    assert later == on_disk(root / "r") and lstats > 0
