"""Whether an adapter changed the fixture copy it serves, without a walk per group.

After every group the harness makes sure no adapter wrote into its fixture
copy (the served data is read-only). A stat walk of the copy's 3,300
entries costs about 13 ms, and a run checks sixteen times. On Linux the
kernel can say instead whether anything changed: an inotify watch on every
directory of the copy (git's own ``.git`` left out, as the fingerprint
leaves it out) reports every write, truncation, chmod, create, delete and
rename, queued before the writing call returns. The harness walks the copy
only when something was reported, to name what changed.

Two things an inotify watch does not see: a write through a shared memory
mapping, and a write through a second hard link in another directory (a
fresh copy has none). So the end of the run walks the copy once whatever the
watch said (``Baseline.changed(full=True)``).

Where inotify is missing or refuses a watch, the watch is off and every
check walks the copy. The reference adapter has its own copy of this idea
(vendor/fs_provider.py, "change notification"): it stays one standalone file.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from cases.harness.fixture_view import snapshot

# IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE,
# IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF; never IN_ACCESS or IN_OPEN (reads
# by the adapters and the cases are not changes)
_EVENTS = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
_ONLY_DIRECTORIES = 0x01000000 | 0x02000000          # IN_ONLYDIR | IN_DONT_FOLLOW


class _Inotify:
    """One inotify instance watching every directory of a tree (but .git)."""

    def __init__(self, top: Path):
        import ctypes
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        try:
            for dirpath, dirnames, _files in os.walk(top):
                dirnames[:] = [d for d in dirnames if d != ".git"]
                if self._libc.inotify_add_watch(self._fd, os.fsencode(dirpath),
                                                _EVENTS | _ONLY_DIRECTORIES) < 0:
                    raise OSError(ctypes.get_errno(), f"inotify_add_watch {dirpath}")
        except BaseException:
            self.close()
            raise

    def events(self) -> bool:
        """Whether any event was queued since the last call (the queue is emptied)."""
        seen = False
        try:
            while os.read(self._fd, 65536):
                seen = True
        except BlockingIOError:
            pass
        return seen

    def close(self) -> None:
        # The fd is forgotten before it is closed: a Ctrl-C between the two
        # then leaks it until the process ends, instead of letting a second
        # close (the stop path closes again) hit a number reused since.
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)


class Baseline:
    """A fixture copy as it was made: its fingerprint, and a watch on it."""

    def __init__(self, top: Path):
        self.top = Path(top)
        self._lock = threading.Lock()
        try:
            self._watch: _Inotify | None = _Inotify(self.top)   # before the fingerprint
        except (OSError, AttributeError):                        # no inotify here, or no room
            self._watch = None
        self.snapshot = snapshot(self.top)
        self._differs = False       # a change was found: every later look walks too

    def changed(self, *, full: bool = False) -> dict | None:
        """The copy's fingerprint now when it differs from the baseline, else
        None. Without ``full``, a copy whose watch saw nothing since the last
        look, and that was never found changed, is not walked."""
        with self._lock:
            quiet = self._watch is not None and not self._watch.events()
            if quiet and not full and not self._differs:
                return None
        now = snapshot(self.top)
        if now == self.snapshot:
            return None
        self._differs = True
        return now

    def changes(self, when: str, *, full: bool = False) -> str | None:
        """One sentence naming the first changes since the baseline, or None
        when there are none (``full``: walk even if the watch saw nothing)."""
        now = self.changed(full=full)
        if now is None:
            return None
        before, top = self.snapshot, str(self.top) + os.sep
        changes = ([f"{p.removeprefix(top)} added" for p in sorted(set(now) - set(before))]
                   + [f"{p.removeprefix(top)} removed" for p in sorted(set(before) - set(now))]
                   + [f"{p.removeprefix(top)} changed" for p in sorted(set(now) & set(before))
                      if now[p] != before[p] and not stat.S_ISDIR(now[p][2])])
        shown = ", ".join(changes[:3]) + (f" (and {len(changes) - 3} more)"
                                          if len(changes) > 3 else "")
        return f"the adapter modified the fixture copy it serves {when}: {shown}"

    def close(self) -> None:
        with self._lock:
            watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()
