"""The worker side of a run in several processes (``--jobs N``; the parent's
side, the fork and the go-ahead are cases/cli/jobs.py's).

A worker is pytest with the plugin over every selected case, carrying its
``Job`` as a plugin: the job's test loop runs only the groups the worker
takes (the k-th group of the queue first, then the next one nobody took,
each time it is free), each whole and in order, exactly as in a run of that
group alone. It writes no report: at its session's end the plugin calls
``write_part``, which hands the parent, through a file in the run's temp area,
the results of its cases, everything the protocol monitor found on its
processes (not judged yet) and its notes. Worker and parent talk through
that file, the go-ahead pipe and the claims file only.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from cases.harness import session as harness

PART = "worker-{}.part"


class Job:
    """A worker's job, as a pytest plugin: ``job`` is the dict the parent made
    (its pytest words, the queue, its index, the claims file, the go-ahead's
    read end, the parent's pid and temp area)."""

    def __init__(self, job: dict):
        self.job = job

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        h = harness.of(session.config)
        if h is None:
            return None
        return run_claimed(session, h, self.job)


def run_claimed(session, h, job: dict) -> bool:
    """A worker's test loop: every selected case is collected, but only the
    groups this worker takes are run, each whole and in order, one after
    another. Before the first, the worker gets its fixture copy ready and
    waits for the parent's word that the pre-flight passed; without it (the
    pre-flight failed, or the parent is gone) it removes what it made and
    ends without a word."""
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} error(s) during collection")
    if session.config.option.collectonly:
        return True
    by_module: dict[str, list] = {}
    for item in session.items:
        by_module.setdefault(os.path.realpath(str(item.path)), []).append(item)
    if session.items:
        try:
            h.fx()          # while the parent's pre-flight runs
        except Exception:   # (the case that needs it reports it; the pre-flight does first)
            pass
    if not _told_to_go(job["go"]):
        h.close()
        os._exit(0)
    groups = (g for g in (by_module.get(os.path.realpath(m), []) for m in _claims(job)) if g)
    for current in groups:
        # The next group is taken once this one's last case is over (taken
        # before it, a worker whose last case waits out a window would hold
        # a group another worker could start at once). For that case's
        # teardown pytest needs an item that follows: any item of another
        # module ends this module's fixtures and keeps the session's (those
        # are ended at the session's end).
        after_last = next((g[0] for g in by_module.values() if g[0].path != current[0].path),
                          None)
        for i, item in enumerate(current):
            nextitem = current[i + 1] if i + 1 < len(current) else after_last
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
    return True


def _told_to_go(fd: int) -> bool:
    """Block until the parent writes its go-ahead (True) or closes the pipe (False)."""
    try:
        return os.read(fd, 1) == b"g"
    finally:
        os.close(fd)


def _claims(job: dict):
    """The groups this worker runs: the k-th of the queue, then the next one
    nobody took yet, each time it is free, until none is left. The count of
    groups taken lives in a file under the run's temp area, locked while
    read and bumped (it starts at the number of workers, whose first groups
    are theirs already)."""
    order, k = job["queue"], job["index"]
    if k < len(order):
        yield order[k]
    import fcntl
    while True:
        with open(job["claims"], "r+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            n = int(f.read() or b"0")
            f.seek(0)
            f.write(str(n + 1).encode())
            f.truncate()
        if n >= len(order):
            return
        yield order[n]


def write_part(h) -> None:
    """What a worker's harness hands its parent (called at its session's end)."""
    part = {"results": h.results, "seen": h.seen, "notes": h.notes,
            "collected": h.collected, "deselected": h.deselected, "interrupted": h.interrupted}
    path = Path(h.worker_out)
    tmp = path.with_suffix(".tmp")
    try:
        with open(tmp, "wb") as f:
            pickle.dump(part, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)   # whole or not at all
    except OSError:   # the parent is gone, and its temp area with it: nobody to hand it to
        pass
