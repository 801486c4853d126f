"""cases.harness.copy_watch: the harness's check that no adapter changed its fixture copy.

A copy whose watch saw nothing is not walked; any change is found and named,
in a group's check and at the end of the run (``full``); a copy found changed
stays changed for every later look; without inotify every look walks. Each
expectation is the change the test made itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cases.harness import copy_watch


@pytest.fixture
def copy(tmp_path) -> Path:
    top = tmp_path / "copy"
    (top / "alpha" / "src").mkdir(parents=True)
    (top / "alpha" / "README.md").write_bytes(b"alpha\n")
    (top / "alpha" / "src" / "lib.rs").write_bytes(b"fn main() {}\n")
    (top / "vcs" / ".git").mkdir(parents=True)
    (top / "vcs" / "a.txt").write_bytes(b"a\n")
    return top


@pytest.fixture
def walks(monkeypatch):
    """How many times the copy was walked (cases.harness.fixture_view.snapshot)."""
    count = [0]
    real = copy_watch.snapshot

    def counted(top):
        count[0] += 1
        return real(top)
    monkeypatch.setattr(copy_watch, "snapshot", counted)
    return count


def watched(copy) -> copy_watch.Baseline:
    base = copy_watch.Baseline(copy)
    if base._watch is None:
        pytest.fail("inotify is refused on this Linux machine; the watch would be off")
    return base


CHANGES = {
    "rewritten": (lambda top: (top / "alpha" / "README.md").write_bytes(b"ALPHA\n"),
                  "alpha/README.md changed"),
    "added deep down": (lambda top: (top / "alpha" / "src" / "new.rs").write_bytes(b"x"),
                        "alpha/src/new.rs added"),
    "removed": (lambda top: (top / "vcs" / "a.txt").unlink(), "vcs/a.txt removed"),
    "chmod": (lambda top: os.chmod(top / "alpha" / "src" / "lib.rs", 0o600),
              "alpha/src/lib.rs changed"),
}


@pytest.mark.skipif(not Path("/proc/self/mountinfo").exists(), reason="inotify is Linux's")
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_quiet_copy_is_not_walked_and_a_change_is_named(copy, walks, change):
    base = watched(copy)
    made = walks[0]
    assert base.changes("during a group") is None and walks[0] == made, \
        "a copy nobody touched is not walked"
    act, named = CHANGES[change]
    act(copy)
    text = base.changes("during a group")
    assert text is not None and named in text and "during a group" in text
    assert base.changes("during the next group") is not None, \
        "a copy found changed stays changed (it is replaced, or failed again)"
    base.close()


@pytest.mark.skipif(not Path("/proc/self/mountinfo").exists(), reason="inotify is Linux's")
def test_gits_own_folder_is_not_watched_and_full_walks_anyway(copy, walks):
    base = watched(copy)
    (copy / "vcs" / ".git" / "index").write_bytes(b"git writes here\n")
    assert base.changes("during a group") is None, "the fingerprint leaves .git out too"
    made = walks[0]
    assert base.changes("by the end of the run", full=True) is None and walks[0] == made + 1
    base.close()


def test_without_inotify_every_look_walks(copy, walks, monkeypatch):
    def refused(top):
        raise OSError("no inotify here")
    monkeypatch.setattr(copy_watch, "_Inotify", refused)
    base = copy_watch.Baseline(copy)
    made = walks[0]
    assert base.changes("during a group") is None and walks[0] == made + 1
    (copy / "alpha" / "README.md").write_bytes(b"changed\n")
    assert "alpha/README.md changed" in base.changes("during a group")
