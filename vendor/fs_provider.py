#!/usr/bin/env python3
"""fs_provider: the reference rootle provider, serving a folder of repositories.

Read this file top to bottom as a worked example of a provider for the rootle
provider protocol, spec v1.6 (NDJSON-RPC 2.0 over stdio). It is one file,
Python 3.10+, standard library only.

Running it
    python3 fs_provider.py <dir>        # exactly one argument
    FORGE_FIXTURE_DIR=<dir> python3 fs_provider.py

Every top-level directory of <dir> (hidden ones excepted) is one repository,
served as "<org>/<name>" with <org> = $FORGE_ORG (default "local"). The org
part of an incoming repository id is ignored, so any org works. A directory
with a `.git` inside is a git repository, read through the git CLI; any other
directory is a plain directory with a single branch, "main" (its files on
disk). `<dir>/FAULTS.json`, when present, maps repository names to simulated
backend failures, {"denied": {"kind": "auth"}, "throttled": {"kind":
"rate_limited", "retry_after_s": 37}}: every request naming such a repository
answers that error. That is how a test double stands in for a forge that
answers 401 or 429.

How it works
    * The main thread reads stdin line by line. Each line should be one JSON
      object; blank lines, junk and non-objects are skipped with a note on
      stderr. Requests (objects with an "id") go to a small thread pool, so
      a slow request never holds up a quick one and replies may come out of
      order; the host routes them by id. Notifications (no "id") are never
      answered; the only one acted on is $/cancelRequest.
    * One lock serialises every write to stdout, each line is flushed on its
      own, and nothing but protocol lines ever reaches stdout (diagnostics
      go to stderr; git runs with its output captured).
    * On stdin EOF it finishes the requests it has, then exits 0.
    * Startup is cheap and does no network or credential work: `initialize`
      only looks at the folder (is git on PATH, is any repository a git one).
    * Content is cached per process: the hash of each file, keyed by its
      stat (so a rewritten file gets a new id), directory listings, and git
      trees by commit id (immutable). Nothing persists across processes: the
      ids are pure functions of the bytes, so a respawned process gives the
      same ids.
    * Searches and listings of the working tree are live. On Linux an
      inotify watch per directory says whether anything changed since the
      last complete walk; if nothing did, that walk is replayed instead of
      an lstat per file (see "change notification" below).

Choices made where the protocol leaves room (vendor/README.md lists them too)
    * Blob id = lowercase hex sha256 of the bytes (one legal choice; ids are
      opaque to the host). A directory id = sha256 of a fixed prefix and the
      directory's path: directories have no content of their own.
    * `ref: null` means the working tree on disk (for git repositories too),
      for repo/tree and repo/blob_at; repo/log and repo/blame with a null ref
      read the default branch's commits.
    * Blobs over 1 MiB (1,048,576 bytes) are refused with kind "provider",
      saving a transfer the host would refuse to display anyway.
    * In repo/refs an annotated tag's sha is the tagged commit's id (not the
      tag object's), so every sha listed is a commit repo/commit accepts.
    * Errors carry HTTP-flavoured positive codes (404 not_found, 401 auth,
      429 rate_limited, 400 invalid_params, 500 provider); an unknown method
      answers the JSON-RPC code -32601 with kind "not_found".
    * search/code honours `limit` per hit and looks one hit past it, so
      `truncated: true` means a further hit exists. With `partial: true` it
      streams one $/partial per repository scanned.

Map of the file: constants and errors; small helpers (ids, dates, params);
files on disk; git; repositories (the Catalog and Repo classes); search;
the method handlers; the stdio server; main().
"""

from __future__ import annotations

# Every start pays for what is imported here (the host starts an adapter per
# session and again after a crash), so modules only some requests need
# (subprocess for git, datetime for commit dates, traceback, pathlib) are imported where used.
import binascii
import hashlib
import json
import os
import queue
import re
import stat
import sys
import threading
import time

PROTOCOL = 1
NAME = "fs"
ICON = "folder"

MAX_BLOB_BYTES = 1024 * 1024       # larger blobs are refused (kind "provider")
TREE_BUDGET = 100_000              # entries per repo/tree reply, then truncated: true
LOG_DEFAULT_LIMIT = 50
LOG_MAX_LIMIT = 99
COMMIT_FILE_BUDGET = 500           # files per repo/commit reply, then truncated: true
PATCH_MAX_BYTES = 1024 * 1024      # a larger per-file patch is left out (patch unavailable)
SEARCH_REPOS_MAX = 20
BINARY_SNIFF_BYTES = 8000          # like git: a NUL in the first 8000 bytes means binary
WORKERS = 8
GIT_TIMEOUT_S = 60
# A file (or directory) changed less than this long before we looked at it
# may change again within the same timestamp tick without its stat changing
# ("racy git"), so such cache entries are re-checked instead of trusted. The
# tick is the file system's timestamp granularity: a stamp with a sub-second
# part comes from a file system with fine stamps, which Linux takes from its
# coarse clock (one jiffy, at most 10 ms, behind the real time we compare
# with), so 50 ms covers it; a whole-second stamp may come from a file system
# with 1 s or 2 s stamps (FAT), so 2 s. A fixture copy made just before the
# run is then trusted after 50 ms instead of re-read by every walk for 1 s.
RACY_WINDOW_NS = 2_000_000_000
RACY_WINDOW_FINE_NS = 50_000_000

# a branch or tag name with no folder part and no revision syntax: the only
# names whose resolution resolve() remembers under a refs stamp
SIMPLE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# an abbreviated commit id (or a name that looks like one): what it names can
# change as objects are added, so it is never remembered
HEXISH = re.compile(r"[0-9a-f]{4,39}")

ORG = os.environ.get("FORGE_ORG") or "local"      # the org every repository id is built with
FAULTS_FILE = "FAULTS.json"
DIR_ID_PREFIX = b"fs_provider directory\0"

USAGE = """\
usage: fs_provider.py <dir>

Serve every top-level directory of <dir> as a repository <org>/<name>
(org = $FORGE_ORG, default "local") over the rootle provider protocol
(NDJSON-RPC 2.0 on stdin/stdout, spec v1.6). Without an argument the
directory is read from $FORGE_FIXTURE_DIR. <dir>/FAULTS.json may map repo
names to simulated errors: {"name": {"kind": "auth", "retry_after_s": 5}}.
"""


def note(text: str) -> None:
    """A diagnostic line on stderr (stdout carries protocol lines only)."""
    try:
        sys.stderr.write(f"fs_provider: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


# -- errors ---------------------------------------------------------------------

# Application errors use positive codes of our choosing (the host ignores the
# code; kinds are what it acts on). These mirror HTTP so they read naturally.
ERROR_CODES = {"not_found": 404, "auth": 401, "rate_limited": 429, "invalid_params": 400,
               "network": 502, "timeout": 504, "provider": 500}


class RpcError(Exception):
    """An error reply: always a code, a non-empty message and data.kind."""

    def __init__(self, kind: str, message: str, *, code: int | None = None,
                 retry_after_s: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.code = code if code is not None else ERROR_CODES.get(kind, 500)
        self.retry_after_s = retry_after_s

    def to_json(self) -> dict:
        data: dict = {"kind": self.kind}
        if self.retry_after_s is not None:
            data["retry_after_s"] = self.retry_after_s
        return {"code": self.code, "message": self.message, "data": data}


def not_found(message: str) -> RpcError:
    return RpcError("not_found", message)


def invalid_params(message: str) -> RpcError:
    return RpcError("invalid_params", message)


# -- small helpers: ids, dates, params, paths ---------------------------------------

def b64(data: bytes) -> str:
    """Strict base64 (RFC 4648: padded, no line breaks), as bytes_b64 wants."""
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def _traceback_text() -> str:
    import traceback
    return traceback.format_exc()


def blob_id(data: bytes) -> str:
    """Content id of a blob: the hex sha256 of its bytes (same bytes, same id, anywhere)."""
    return hashlib.sha256(data).hexdigest()


def dir_id(path: str) -> str:
    """Id of a directory: a hash of its path, under a prefix no ordinary file starts with."""
    return hashlib.sha256(DIR_ID_PREFIX + path.encode("utf-8")).hexdigest()


def iso_date(epoch: int, tz: str) -> str:
    """git's (seconds, "+0130") pair as ISO-8601 in the author's own offset."""
    from datetime import datetime, timedelta, timezone
    sign = -1 if tz.startswith("-") else 1
    digits = tz.lstrip("+-").rjust(4, "0")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4]))
    return datetime.fromtimestamp(epoch, timezone(sign * offset)).isoformat()


def param_str(params: dict, name: str, *, required: bool = False) -> str | None:
    """A string param; null counts as absent (the host sends optional params as null)."""
    value = params.get(name)
    if value is None:
        if required:
            raise invalid_params(f"missing string param '{name}'")
        return None
    if not isinstance(value, str):
        raise invalid_params(f"param '{name}' must be a string, got {type(value).__name__}")
    return value


def param_int(params: dict, name: str) -> int | None:
    """An optional integer param; anything that is not a JSON integer counts as absent."""
    value = params.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def param_ref(params: dict, name: str = "ref") -> str | None:
    """A revision param; null and "" both mean the default (the host sends web_url's branch as "")."""
    return param_str(params, name) or None


def clean_path(path: str) -> str:
    """A repository-relative path, or not_found for anything that could leave the repository."""
    parts = [p for p in path.strip("/").split("/") if p not in ("", ".")]
    if "\0" in path or ".." in parts:
        raise not_found(f"no path {path!r}")
    return "/".join(parts)


def repo_name_of(repo_id: str) -> str:
    """The repository name of an id: everything after the first '/' (the org is ignored)."""
    return repo_id.split("/", 1)[1] if "/" in repo_id else repo_id


# -- files on disk ----------------------------------------------------------------

def _stat_key(st: os.stat_result) -> tuple:
    # ctime changes on every write and cannot be set back by utime().
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def _racy(st: os.stat_result, seen_at_ns: int) -> bool:
    changed = max(st.st_mtime_ns, st.st_ctime_ns)
    fine = st.st_mtime_ns % 1_000_000_000 or st.st_ctime_ns % 1_000_000_000
    return seen_at_ns - changed < (RACY_WINDOW_FINE_NS if fine else RACY_WINDOW_NS)


class FileInfo:
    """What we know of one file's bytes: id, size, and (for text) its decoded contents."""
    __slots__ = ("key", "trusted", "sha", "size", "binary", "text", "lower")

    def __init__(self, key: tuple, trusted: bool, sha: str, size: int, binary: bool,
                 text: str | None = None, lower: str | None = None):
        self.key = key
        self.trusted = trusted    # False while the file is "racy" (recently changed)
        self.sha = sha
        self.size = size
        self.binary = binary
        self.text = text          # decoded text (invalid UTF-8 replaced), None if binary
        self.lower = lower        # text.lower(), what search looks in


_files: dict[str, FileInfo] = {}
_listings: dict[str, tuple[tuple, bool, list[tuple[str, str]]]] = {}


def read_entry_bytes(abspath: str, st: os.stat_result) -> bytes:
    # A symlink is served the way git stores it: a blob holding the link target.
    if stat.S_ISLNK(st.st_mode):
        return os.fsencode(os.readlink(abspath))
    # os.read, not open(): a walk of a fresh process reads every file once, and
    # the buffered file object costs more than the read itself for small files.
    # The size from stat is a hint only: one byte more is asked for, and
    # unless exactly the stat's size came back (the end was reached), the
    # file changed since (or is huge) and is read on to its end.
    # O_NONBLOCK: a file swapped for a FIFO since its stat reads as empty
    # instead of hanging the worker (it changes nothing for a regular file).
    fd = os.open(abspath, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        data = os.read(fd, st.st_size + 1)
        if len(data) == st.st_size:
            return data
        chunks = [data]
        while True:
            more = os.read(fd, 1 << 20)
            if not more:
                return b"".join(chunks)
            chunks.append(more)
    finally:
        os.close(fd)


def file_info(abspath: str, st: os.stat_result | None = None) -> FileInfo:
    """The FileInfo of a regular file or symlink, hashed at most once per version."""
    if st is None:
        st = os.lstat(abspath)
    key = _stat_key(st)
    cached = _files.get(abspath)
    if cached is not None and cached.key == key and cached.trusted:
        return cached
    seen_at = time.time_ns()
    data = read_entry_bytes(abspath, st)
    binary = b"\0" in data[:BINARY_SNIFF_BYTES]
    info = FileInfo(key=key, trusted=not _racy(st, seen_at), sha=blob_id(data),
                    size=len(data), binary=binary)
    if not binary:
        info.text = data.decode("utf-8", errors="replace")
        info.lower = info.text.lower()
    _files[abspath] = info
    return info


def list_dir(abspath: str) -> list[tuple[str, str]]:
    """Sorted (name, "tree"|"blob") children of a directory, cached by the directory's stat.

    Names that are not valid UTF-8 are skipped (the wire is UTF-8 only), as
    are sockets, FIFOs and devices (reading a FIFO would hang) and `.git`.
    """
    st = os.stat(abspath)
    key = _stat_key(st)
    cached = _listings.get(abspath)
    if cached is not None and cached[0] == key and cached[1]:
        return cached[2]
    seen_at = time.time_ns()
    children = []
    with os.scandir(abspath) as it:
        for entry in it:
            if entry.name == ".git":
                continue
            try:
                entry.name.encode("utf-8")
            except UnicodeEncodeError:
                note(f"skipping {os.path.join(abspath, entry.name)!r}: name is not valid UTF-8")
                continue
            if entry.is_dir(follow_symlinks=False):
                children.append((entry.name, "tree"))
            elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                children.append((entry.name, "blob"))
    children.sort()
    _listings[abspath] = (key, not _racy(st, seen_at), children)
    return children


# -- change notification (Linux) ------------------------------------------------------
#
# Every search and every listing of a working tree walks all its files, and
# the walk's cost is one lstat per file. On Linux the kernel can say instead
# whether anything changed: an inotify watch on each directory of a tree
# reports every write, truncation, chmod, create, delete and rename of its
# entries, queued before the writing call returns. A walk that finds the
# queue empty since the last complete walk of its repository replays that
# walk; any event at all (which entry it names does not matter) makes the
# next walk of every repository a full one. So the answers stay live.
#
# Used only where the kernel sees every change: a local file system (a
# network or FUSE mount may change under us unseen), and a tree whose files
# have one link each (a write through another hard link is reported to that
# link's directory only). Not seen: writes through a shared memory mapping,
# which no editor or tool we know of uses on source files. If anything fails
# (no inotify, the watch limit is reached), it is off for the rest of the
# process and every walk is a full one, as without it.

_IN_CHANGES = (0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800)
# IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE,
# IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF (never IN_ACCESS or IN_OPEN: our own
# reads must not count as changes)
_IN_DIR_ONLY = 0x01000000 | 0x02000000          # IN_ONLYDIR | IN_DONT_FOLLOW
LOCAL_FILE_SYSTEMS = {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "jfs",
                      "reiserfs", "ramfs", "zfs", "bcachefs"}


def _file_system_of(path: str) -> str | None:
    """The type of the mount holding `path` (/proc/self/mountinfo), or None."""
    best, kind = "", None
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            for raw in f.read().decode("utf-8", "replace").splitlines():
                left, _, right = raw.partition(" - ")
                fields = left.split()
                if len(fields) < 5 or not right:
                    continue
                point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, right.split()[0]
    except OSError:
        return None
    return kind


class _Watcher:
    """One inotify instance for the process: which trees are unchanged since a mark."""

    def __init__(self):
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._libc = None
        self._off = False
        self._watched: set[str] = set()
        self._local: dict[str, bool] = {}          # served root -> on a local file system
        self.epoch = 0                             # +1 each time events were found

    def usable(self, root: str) -> bool:
        """Whether changes under `root` can be watched (starting inotify at first use)."""
        with self._lock:
            if self._off:
                return False
            if root not in self._local:
                self._local[root] = _file_system_of(os.path.realpath(root)) in LOCAL_FILE_SYSTEMS
            if not self._local[root]:
                return False
            if self._fd is None:
                try:
                    import ctypes
                    libc = ctypes.CDLL(None, use_errno=True)
                    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
                except (OSError, AttributeError):
                    fd = -1
                if fd < 0:
                    self._off = True
                    return False
                self._libc, self._fd = libc, fd
            return True

    def watch(self, directory: str) -> bool:
        """Watch one directory (before it is listed); False: watching is off now."""
        with self._lock:
            if self._off:
                return False
            if directory in self._watched:
                return True
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(directory),
                                              _IN_CHANGES | _IN_DIR_ONLY)
            if wd < 0:                  # the watch limit, or the directory is gone
                self._stop()
                return False
            self._watched.add(directory)
            return True

    def current(self) -> int | None:
        """The epoch after reading every event queued so far; None when off."""
        with self._lock:
            if self._off or self._fd is None:
                return None
            try:
                while os.read(self._fd, 65536):
                    self.epoch += 1
            except BlockingIOError:
                pass                    # the queue is empty
            except OSError:
                self._stop()
                return None
            return self.epoch

    def _stop(self) -> None:
        self._off = True
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


_watcher = _Watcher()


# -- git --------------------------------------------------------------------------

_git_path: list[str] = []   # git's path once looked up ("" if not on PATH)


def git_executable() -> str | None:
    """git on PATH (like shutil.which, without its import at every start)."""
    if not _git_path:
        found = ""
        for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
            candidate = os.path.join(folder or os.curdir, "git")
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                found = candidate
                break
        _git_path.append(found)
    return _git_path[0] or None


def _git_env() -> dict[str, str]:
    """Our environment minus every GIT_* variable, isolated from user and system config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "XDG_CONFIG_HOME": os.devnull,     # older gits without GIT_CONFIG_GLOBAL
        "HOME": os.devnull,
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "GIT_TERMINAL_PROMPT": "0",        # never ask anyone for anything
        "GIT_LITERAL_PATHSPECS": "1",      # a path is a path, never a pattern
        "GIT_OPTIONAL_LOCKS": "0",         # we only read; take no locks
        "LC_ALL": "C",
    })
    return env


GIT_ENV = _git_env()


class GitError(Exception):
    def __init__(self, args: list[str], returncode: int, stderr: bytes):
        self.stderr = stderr.decode("utf-8", errors="replace").strip()
        super().__init__(f"git {' '.join(args[:2])} failed ({returncode}): {self.stderr[:300]}")


def git(repo_dir: str, *args: str, input: bytes | None = None) -> bytes:
    """Run git in `repo_dir` and return its stdout.

    Output is always captured: a git that inherited our stdout could write
    into the protocol stream, and could hold the pipe open after we die.
    """
    import subprocess
    argv = [git_executable() or "git", "--no-pager", *args]
    proc = subprocess.run(argv, cwd=repo_dir, env=GIT_ENV, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=GIT_TIMEOUT_S)
    if proc.returncode != 0:
        raise GitError(list(args), proc.returncode, proc.stderr)
    return proc.stdout


# Answers of git questions that can never change, remembered per process:
# every revision they name is a full object id (a commit or blob id names
# the same bytes for ever), e.g. a blob's bytes, a commit's metadata and its
# diff against its parent, a log or blame at a commit id. The same commit
# asked again (by its full id, then by an abbreviated one) costs no git.
GIT_MEMO_MAX_BYTES = 32 * 1024 * 1024
_git_memo: dict[tuple, bytes] = {}
_git_memo_bytes = 0
_memo_lock = threading.Lock()


def git_fixed(repo_dir: str, *args: str) -> bytes:
    """git(repo_dir, *args) for a question whose revisions are full object ids."""
    global _git_memo_bytes
    key = (repo_dir, args)
    known = _git_memo.get(key)
    if known is not None:
        return known
    out = git(repo_dir, *args)
    with _memo_lock:
        if _git_memo_bytes + len(out) > GIT_MEMO_MAX_BYTES:
            _git_memo.clear()           # bounded: start over rather than track ages
            _git_memo_bytes = 0
        if len(out) <= GIT_MEMO_MAX_BYTES and key not in _git_memo:
            _git_memo[key] = out
            _git_memo_bytes += len(out)
    return out


class GitObjects:
    """git's objects of one repository through a `git cat-file --batch` kept
    open for the life of the process.

    A provider process asks git a handful of short questions per repository
    (the commit a ref names, a blob's bytes, the blobs of a tree to hash),
    and starting a git for each one cost more than the answer. Only a found
    object is trusted: "missing" or "ambiguous" from a git that has been
    running a while may be stale (objects written since, short ids it has
    listed before), so the caller then asks a git of its own, as it would
    without this. Any trouble with the batch process (it ended, it answered
    something unreadable) turns it off for the rest of the process: every
    question then goes to a git of its own. It ends with the process
    (close_all) or, killed with it, at EOF on its input.
    """

    def __init__(self, repo_dir: str):
        self.repo_dir = repo_dir
        self._lock = threading.Lock()
        self._proc = None
        self._off = False

    def lookup(self, name: str) -> tuple[str, str, bytes] | None:
        """(object id, type, content) of the object ``name`` names, or None."""
        if not name or any(c in name for c in "\n\r\0") or name.startswith("-"):
            return None
        with self._lock:
            if self._off:
                return None
            try:
                proc = self._started()
                proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
                proc.stdin.flush()
                header = proc.stdout.readline()
                fields = header.split()
                if not header.endswith(b"\n") or not fields:
                    raise OSError("git cat-file --batch ended")
                if fields[-1] in (b"missing", b"ambiguous"):
                    return None
                if len(fields) != 3 or not fields[2].isdigit():
                    raise OSError(f"git cat-file --batch said {header[:200]!r}")
                size = int(fields[2])
                data = proc.stdout.read(size + 1)
                if len(data) != size + 1:
                    raise OSError("git cat-file --batch ended mid-object")
                return fields[0].decode(), fields[1].decode(), data[:size]
            except (OSError, ValueError) as exc:
                note(f"git cat-file --batch in {self.repo_dir}: {exc}; asking git per question")
                self._off = True
                self._close()
                return None

    def _started(self):
        if self._proc is None:
            import subprocess
            self._proc = subprocess.Popen(
                [git_executable() or "git", "--no-pager", "cat-file", "--batch"],
                cwd=self.repo_dir, env=GIT_ENV, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._proc

    def _close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()                 # git ends at EOF
        except OSError:
            pass
        try:
            proc.wait(timeout=2)
        except Exception:
            proc.kill()
            proc.wait()
        proc.stdout.close()

    def close(self) -> None:
        with self._lock:
            self._off = True
            self._close()


_objects: dict[str, GitObjects] = {}
_objects_lock = threading.Lock()


def git_objects(repo_dir: str) -> GitObjects:
    with _objects_lock:
        found = _objects.get(repo_dir)
        if found is None:
            found = _objects[repo_dir] = GitObjects(repo_dir)
        return found


def close_git_objects() -> None:
    """End every batch git (at the process's end: none is left behind)."""
    with _objects_lock:
        every = list(_objects.values())
    for objects in every:
        objects.close()


class GitEntry:
    __slots__ = ("path", "type", "oid", "size")

    def __init__(self, path: str, type: str, oid: str, size: int | None):
        self.path = path
        self.type = type           # "blob" or "tree"
        self.oid = oid             # git's object id
        self.size = size


# Git objects are immutable, so this cache never needs invalidating.
_blob_sha_by_oid: dict[str, str] = {}          # git blob oid -> our content id
_blob_size_by_oid: dict[str, int] = {}         # git blob oid -> its size in bytes
TREE_CACHE_COMMITS = 64                        # commit trees kept per repository


# -- repositories ---------------------------------------------------------------------

class Repo:
    """One served repository: a plain directory, or a git repository."""

    def __init__(self, name: str, path: str, is_git: bool):
        self.name = name
        self.path = path
        self.is_git = is_git
        self._worktree_ids: dict[str, str] = {}      # content id -> path, from the last walk
        # the last complete walk, replayed while no change was seen since its
        # start: (watcher epoch, its entries, its content-id map); see _Watcher
        self._last_walk: tuple | None = None
        self._git_ids: dict[str, str] = {}           # content id -> git blob oid
        self._trees: dict[str, list[GitEntry]] = {}  # commit id -> its tree (immutable)
        self._default_branch: str | None = None
        # ref -> (commit id, refs stamp or None): a full commit id names its
        # commit for ever; a plain branch or tag name is trusted only while the
        # refs on disk are as they were (see _refs_stamp)
        self._resolved: dict[str, tuple[str, tuple | None]] = {}

    # The working tree on disk.

    def walk(self):
        """Yield (path, type, FileInfo|None) for every entry of the working tree, depth first.

        Every complete walk also refreshes the content-id -> path map that
        repo/blob looks in first. A walk that the change watcher shows
        nothing happened since replays the last complete one (see _Watcher).
        """
        epoch = _watcher.current() if _watcher.usable(self.path) else None
        last = self._last_walk
        if epoch is not None and last is not None and last[0] == epoch:
            self._worktree_ids = last[2]
            yield from last[1]
            return
        watching = epoch is not None
        entries = []
        settled = True                         # no entry is too recent to trust (_racy)
        ids: dict[str, str] = {}
        stack = [""]
        while stack:
            rel = stack.pop()
            here = f"{self.path}/{rel}" if rel else self.path
            if watching:
                watching = _watcher.watch(here)    # before the listing: no change falls between
            try:
                children = list_dir(here)
            except OSError as exc:
                note(f"cannot list {here}: {exc.strerror}")
                settled = False
                continue
            settled = settled and _listings[here][1]
            subdirs = []
            for name, kind in children:
                path = f"{rel}/{name}" if rel else name
                if kind == "tree":
                    entries.append((path, "tree", None))
                    yield path, "tree", None
                    subdirs.append(path)
                    continue
                try:
                    st = os.lstat(f"{here}/{name}")
                    info = file_info(f"{here}/{name}", st)
                except OSError:
                    settled = False
                    continue                   # vanished while we looked
                ids.setdefault(info.sha, path)
                # a file with another hard link can be written through a
                # directory nobody watches: such a tree is always walked whole
                settled = settled and info.trusted and st.st_nlink == 1
                entries.append((path, "blob", info))
                yield path, "blob", info
            stack.extend(reversed(subdirs))
        self._worktree_ids = ids
        self._last_walk = (epoch, tuple(entries), ids) if watching and settled else None

    def file_at_worktree(self, path: str) -> tuple[str, os.stat_result, FileInfo]:
        """A file of the working tree by path, as the walk would list it, or not_found."""
        path = clean_path(path)
        missing = not_found(f"no file {path!r} in {ORG}/{self.name}")
        abspath = os.path.join(self.path, path)
        # The walk never follows a symlinked directory, so neither may a path
        # (it could lead out of the repository); .git is never served either.
        parent = os.path.normpath(os.path.join(os.path.realpath(self.path), os.path.dirname(path)))
        if not path or ".git" in path.split("/") or os.path.realpath(os.path.dirname(abspath)) != parent:
            raise missing
        try:
            st = os.lstat(abspath)
        except OSError:
            raise missing from None
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise missing
        return abspath, st, file_info(abspath, st)

    # Revisions.

    def serves_worktree(self, ref: str | None) -> bool:
        """Whether a ref means the files on disk: no ref, or a plain directory's only branch."""
        return ref is None or (not self.is_git and ref == "main")

    def default_branch(self) -> str:
        """The branch the working tree stands for: HEAD's branch for git, else "main"."""
        if self._default_branch is None:
            name = "main"
            if self.is_git:
                branch = self._head_branch()
                if branch is None:
                    try:
                        branch = git(self.path, "symbolic-ref", "-q", "--short", "HEAD").decode().strip()
                    except GitError:
                        heads = self.branch_names()
                        branch = "main" if "main" in heads or not heads else heads[0]
                name = branch or name
            self._default_branch = name
        return self._default_branch

    def _head_branch(self) -> str | None:
        """The branch .git/HEAD names ("ref: refs/heads/<name>"), read as
        `git symbolic-ref --short HEAD` would; None when that file does not
        say so plainly (a .git file, a detached or odd HEAD): git is asked."""
        try:
            with open(os.path.join(self.path, ".git", "HEAD"), "rb") as f:
                head = f.read(4096)
        except OSError:
            return None
        prefix = b"ref: refs/heads/"
        if not head.startswith(prefix) or not head.endswith(b"\n") or head.count(b"\n") != 1:
            return None
        try:
            name = head[len(prefix):-1].decode("utf-8")
        except UnicodeDecodeError:
            return None
        if not name or name != name.strip():
            return None
        # --short says heads/<name> when another ref of that name exists
        git_dir = os.path.join(self.path, ".git")
        others = (f"refs/{name}", f"refs/tags/{name}", f"refs/remotes/{name}",
                  f"refs/remotes/{name}/HEAD")
        try:
            with open(os.path.join(git_dir, "packed-refs"), "rb") as f:
                packed = {line.split(b" ", 1)[1].strip() for line in f
                          if b" " in line and not line.startswith((b"#", b"^"))}
        except OSError:
            packed = set()
        if any(os.path.lexists(os.path.join(git_dir, r)) or r.encode() in packed for r in others):
            return None
        return name

    def branch_names(self) -> list[str]:
        out = git(self.path, "for-each-ref", "--format=%(refname:strip=2)", "refs/heads")
        return out.decode("utf-8", errors="replace").split()

    def require_git(self, what: str) -> None:
        if not self.is_git:
            raise not_found(f"{ORG}/{self.name} is a plain directory, not a git repository: "
                            f"it has no {what} (its only revision is the working tree, 'main')")

    def resolve(self, ref: str) -> str:
        """The full commit id a ref names (branch, tag, commit id...), or not_found."""
        if not self.is_git:
            raise not_found(f"no ref {ref!r} in {ORG}/{self.name}: a plain directory has "
                            f"one branch, 'main'")
        if ref.startswith("-"):                      # never let a ref become an option
            raise not_found(f"no ref {ref!r} in {ORG}/{self.name}")
        known = self._resolved.get(ref)
        stamp = self._refs_stamp() if SIMPLE_REF.fullmatch(ref) and not HEXISH.fullmatch(ref) \
            else None
        if known is not None and (known[1] is None or known[1] == stamp):
            return known[0]
        found = git_objects(self.path).lookup(f"{ref}^{{commit}}")
        if found is not None and found[1] == "commit":
            commit = found[0]
        else:
            try:
                out = git(self.path, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
            except GitError:
                raise not_found(f"no ref {ref!r} in {ORG}/{self.name}") from None
            commit = out.decode().strip()
        if commit == ref:
            self._resolved[ref] = (commit, None)
        elif stamp is not None:
            self._resolved[ref] = (commit, stamp)
        return commit

    def _refs_stamp(self) -> tuple | None:
        """What changes when a branch or tag is created, moved or deleted (a
        loose ref is replaced by a rename in its folder; packing rewrites
        packed-refs; HEAD may be repointed): the modification times of those."""
        stamp = []
        for rel in ("HEAD", "packed-refs", "refs/heads", "refs/tags"):
            try:
                stamp.append(os.stat(os.path.join(self.path, ".git", rel)).st_mtime_ns)
            except OSError:
                stamp.append(None)
        # no such files (a .git file pointing elsewhere): nothing to trust a memory by
        return tuple(stamp) if any(t is not None for t in stamp) else None

    def git_tree(self, commit: str) -> list[GitEntry]:
        """Every entry of a commit's tree (directories included), with content ids computed."""
        cached = self._trees.get(commit)
        if cached is not None:
            return cached
        entries = self._tree_from_objects(commit)
        if entries is None:
            entries = self._tree_from_ls_tree(commit)
        self._hash_blobs([e.oid for e in entries if e.type == "blob"])
        for e in entries:
            if e.type == "blob" and e.size is None:
                e.size = _blob_size_by_oid.get(e.oid)
        for e in entries:
            if e.type == "blob":
                self._git_ids.setdefault(_blob_sha_by_oid[e.oid], e.oid)
        if len(self._trees) >= TREE_CACHE_COMMITS:   # keep memory bounded
            self._trees.clear()
        self._trees[commit] = entries
        return entries

    def _tree_from_ls_tree(self, commit: str) -> list[GitEntry]:
        out = git(self.path, "ls-tree", "-r", "-t", "-l", "-z", "--full-tree", commit)
        entries = []
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            _mode, kind, oid, size = meta.decode().split()
            try:
                path = raw_path.decode("utf-8")
            except UnicodeDecodeError:
                continue                              # the wire is UTF-8 only
            if kind in ("blob", "tree"):              # submodules ("commit") are skipped
                entries.append(GitEntry(path, kind, oid, int(size) if kind == "blob" else None))
        return entries

    def _tree_from_objects(self, commit: str) -> list[GitEntry] | None:
        """What `git ls-tree -r -t` lists (a tree before what it holds, in
        git's order; submodules and names that are not UTF-8 left out), read
        through the batch git from the commit's tree objects; blob sizes are
        left for _hash_blobs to learn. None when the batch cannot answer (the
        caller asks ls-tree)."""
        objects = git_objects(self.path)
        found = objects.lookup(commit)
        if found is None or found[1] != "commit" or not found[2].startswith(b"tree "):
            return None
        root = found[2][5:found[2].index(b"\n")].decode("ascii")
        width = len(root) // 2                        # 20 bytes (SHA-1) or 32 (SHA-256)
        entries: list[GitEntry] = []

        def read_tree(oid: str, prefix: bytes) -> bool:
            got = objects.lookup(oid)
            if got is None or got[1] != "tree":
                return False
            data, pos = got[2], 0
            while pos < len(data):
                space = data.index(b" ", pos)
                nul = data.index(b"\0", space)
                mode, name = data[pos:space], data[space + 1:nul]
                child = data[nul + 1:nul + 1 + width].hex()
                pos = nul + 1 + width
                if mode == b"160000":                 # a submodule's commit
                    continue
                raw_path = prefix + name
                try:
                    path = raw_path.decode("utf-8")
                except UnicodeDecodeError:
                    path = None                       # the wire is UTF-8 only
                if mode == b"40000":
                    if path is not None:
                        entries.append(GitEntry(path, "tree", child, None))
                    if not read_tree(child, raw_path + b"/"):
                        return False
                elif path is not None:
                    entries.append(GitEntry(path, "blob", child, None))
            return True

        try:
            return entries if read_tree(root, b"") else None
        except ValueError:                            # a tree object we cannot read
            return None

    def _hash_blobs(self, oids: list[str]) -> None:
        """Compute our content id (sha256) of git blobs not seen before: through
        the batch git (GitObjects), the rest (if it fails) in one git call."""
        todo = sorted({o for o in oids if o not in _blob_sha_by_oid})
        objects = git_objects(self.path)
        done = 0
        for oid in todo:
            found = objects.lookup(oid)
            if found is None:
                break                                # the rest from a git of their own
            _blob_sha_by_oid[found[0]] = blob_id(found[2])
            _blob_size_by_oid[found[0]] = len(found[2])
            done += 1
        todo = todo[done:]
        if not todo:
            return
        out = git(self.path, "cat-file", "--batch", input="".join(f"{o}\n" for o in todo).encode())
        pos = 0
        while pos < len(out):
            eol = out.index(b"\n", pos)
            header = out[pos:eol].split()
            pos = eol + 1
            if len(header) != 3:                     # "<oid> missing"
                continue
            size = int(header[2])
            _blob_sha_by_oid[header[0].decode()] = blob_id(out[pos:pos + size])
            _blob_size_by_oid[header[0].decode()] = size
            pos += size + 1

    def _hash_all_blobs(self) -> None:
        out = git(self.path, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
        blobs = [line.split()[0] for line in out.decode().splitlines() if line.endswith(" blob")]
        self._hash_blobs(blobs)
        for oid in blobs:
            self._git_ids.setdefault(_blob_sha_by_oid[oid], oid)

    def git_blob(self, oid: str) -> bytes:
        found = git_objects(self.path).lookup(oid)
        if found is not None and found[1] == "blob" and found[0] == oid:
            return found[2]
        return git_fixed(self.path, "cat-file", "blob", oid)

    def ref_commits(self) -> list[str]:
        """The commits every branch and tag points at (for looking up blob ids)."""
        out = git(self.path, "for-each-ref",
                  "--format=%(objecttype) %(objectname) %(*objecttype) %(*objectname)",
                  "refs/heads", "refs/tags")
        commits = set()
        for line in out.decode().splitlines():
            fields = line.split()
            if fields[-2:-1] == ["commit"] or fields[:1] == ["commit"]:
                commits.add(fields[-1])              # the peeled commit of an annotated tag
        return sorted(commits)

    # Lookups by content id.

    def blob_bytes(self, sha: str) -> bytes:
        """The bytes of any content id this repository has emitted: working tree first, then refs."""
        data = self._worktree_blob(sha)
        if data is None and self.is_git:
            data = self._ref_blob(sha)
        if data is None:
            raise not_found(f"no blob {sha} in {ORG}/{self.name}")
        return data

    def _worktree_blob(self, sha: str) -> bytes | None:
        # Try the map of the last walk; if it is stale or silent, walk again once.
        for attempt in range(2):
            if attempt:
                for _ in self.walk():
                    pass
            path = self._worktree_ids.get(sha)
            if path is None:
                continue
            try:
                abspath, st, info = self.file_at_worktree(path)
            except (RpcError, OSError):
                continue                              # gone since the walk
            if info.sha != sha:
                continue                              # rewritten since the walk
            check_blob_size(info.size, sha)
            try:
                data = read_entry_bytes(abspath, st)
            except OSError:
                continue
            if blob_id(data) == sha:                  # never serve bytes under another id
                return data
        return None

    def _ref_blob(self, sha: str) -> bytes | None:
        oid = self._git_ids.get(sha)
        if oid is None:
            for commit in self.ref_commits():        # list every ref's tree once
                self.git_tree(commit)
            oid = self._git_ids.get(sha)
        if oid is None:
            # Last resort: an id emitted for an older commit (blob_at at a sha from
            # repo/log), asked for by a later process. Hash every blob git holds.
            self._hash_all_blobs()
            oid = self._git_ids.get(sha)
        if oid is None:
            return None
        data = self.git_blob(oid)
        check_blob_size(len(data), sha)
        return data


def check_blob_size(size: int, what: str) -> None:
    if size > MAX_BLOB_BYTES:
        raise RpcError("provider", f"blob {what} is {size:,} bytes; this adapter refuses blobs "
                                   f"over 1 MiB ({MAX_BLOB_BYTES:,} bytes)")


class Catalog:
    """The served folder: which repositories exist, and which stand for failures."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self._repos: dict[str, Repo] = {}
        self._lock = threading.Lock()
        self._capabilities: dict | None = None

    def names(self) -> list[str]:
        """Names of the served repositories: the non-hidden top-level directories."""
        return [name for name, kind in list_dir(self.root)
                if kind == "tree" and not name.startswith(".")]

    def faults(self) -> dict[str, dict]:
        """FAULTS.json, read afresh each time (it is tiny); invalid content is ignored."""
        path = os.path.join(self.root, FAULTS_FILE)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return {}
            with open(path, "rb") as f:
                faults = json.loads(f.read())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            note(f"ignoring {path}: {exc}")
            return {}
        return faults if isinstance(faults, dict) else {}

    def fault_for(self, name: str) -> RpcError | None:
        spec = self.faults().get(name)
        if not isinstance(spec, dict):
            return None
        kind = spec.get("kind")
        kind = kind if isinstance(kind, str) and kind else "provider"
        retry = spec.get("retry_after_s")
        retry = retry if isinstance(retry, int) and not isinstance(retry, bool) and retry >= 0 else None
        return RpcError(kind, f"{ORG}/{name}: simulated backend failure ({kind}) from {FAULTS_FILE}",
                        retry_after_s=retry)

    def repo(self, repo_id: str) -> Repo:
        """The repository an id names; a FAULTS.json entry answers its error instead."""
        name = repo_name_of(repo_id)
        fault = self.fault_for(name)
        if fault is not None:
            raise fault
        if name not in self.names():
            raise not_found(f"no repository {repo_id!r} (served: {', '.join(self.names())})")
        path = os.path.join(self.root, name)
        is_git = git_executable() is not None and os.path.exists(os.path.join(path, ".git"))
        with self._lock:
            repo = self._repos.get(name)
            if repo is None or repo.is_git != is_git:
                repo = self._repos[name] = Repo(name, path, is_git)
        return repo

    def capabilities(self) -> dict:
        """Computed once, so every initialize in this process gets the same answer."""
        if self._capabilities is None:
            has_git = git_executable() is not None and any(
                os.path.exists(os.path.join(self.root, n, ".git")) for n in self.names())
            self._capabilities = {"orgs": True, "code_search": True, "file_search": True,
                                  "refs": has_git, "log": has_git, "blame": has_git,
                                  "commit": has_git}
        return self._capabilities


# -- search ------------------------------------------------------------------------

QUALIFIERS = ("repo", "org", "extension", "path", "language")

# language: qualifiers become extension lists; an unknown language is taken
# to be its own extension (language:toml -> .toml).
LANGUAGES = {
    "rust": {"rs"}, "python": {"py", "pyi"}, "go": {"go"}, "javascript": {"js", "mjs", "cjs", "jsx"},
    "typescript": {"ts", "tsx"}, "markdown": {"md", "markdown"}, "shell": {"sh", "bash"},
    "c": {"c", "h"}, "c++": {"cc", "cpp", "cxx", "hh", "hpp"}, "cpp": {"cc", "cpp", "cxx", "hh", "hpp"},
    "java": {"java"}, "ruby": {"rb"}, "yaml": {"yml", "yaml"}, "json": {"json"},
    "toml": {"toml"}, "text": {"txt"},
}


class Query:
    """A parsed search/code `q`. Terms are lower-cased; qualifier values are kept as typed."""

    def __init__(self):
        self.terms: list[str] = []
        self.not_terms: list[str] = []
        self.quals: dict[str, list[str]] = {}       # key -> values (OR)
        self.not_quals: dict[str, list[str]] = {}

    def positive(self) -> bool:
        return bool(self.terms or self.quals)


def tokenize(q: str) -> list[list[tuple[str, bool]]]:
    """Split on whitespace outside double quotes; each token is its (text, quoted) pieces.

    An unterminated quote is closed at the end of the query. Keeping the
    pieces lets `"-x"` or `"repo:x"` stay literal text while -x and repo:x
    are operators.
    """
    tokens: list[list[tuple[str, bool]]] = []
    pieces: list[tuple[str, bool]] = []
    buf: list[str] = []
    quoted = False
    for ch in q:
        if ch == '"':
            if buf:
                pieces.append(("".join(buf), quoted))
                buf = []
            quoted = not quoted
        elif ch.isspace() and not quoted:
            if buf:
                pieces.append(("".join(buf), False))
                buf = []
            if pieces:
                tokens.append(pieces)
                pieces = []
        else:
            buf.append(ch)
    if buf:
        pieces.append(("".join(buf), quoted))
    if pieces:
        tokens.append(pieces)
    return tokens


def parse_query(q: str) -> Query:
    query = Query()
    negate_next = False
    for pieces in tokenize(q):
        head, head_quoted = pieces[0]
        text = "".join(p for p, _ in pieces)
        if not head_quoted and text == "NOT":
            negate_next = True
            continue
        negated, negate_next = negate_next, False
        if not head_quoted and head.startswith("-") and len(text) > 1:
            negated, text, head = True, text[1:], head[1:]
        key, colon, _ = head.partition(":")
        if not head_quoted and colon and key.lower() in QUALIFIERS:
            value = text[len(key) + 1:].strip()
            if value:
                target = query.not_quals if negated else query.quals
                target.setdefault(key.lower(), []).append(value)
            continue
        (query.not_terms if negated else query.terms).append(text.lower())
    return query


def _extension(path: str) -> str:
    base = path.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[1].lower() if "." in base else ""


def _qualifier_holds(key: str, value: str, path: str, repo: str) -> bool:
    value = value.lower()
    if key == "repo":
        return repo_name_of(value) == repo.lower()
    if key == "org":
        return value == ORG.lower()
    if key == "path":
        return value in path.lower()
    if key == "extension":
        return _extension(path) == value.lstrip(".")
    if key == "language":
        return _extension(path) in LANGUAGES.get(value, {value})
    return True


def search_hit(repo: Repo, path: str, info: FileInfo, query: Query) -> dict | None:
    """The hit for one file, or None.

    Qualifiers hold (OR within a key, AND across keys; negated ones exclude);
    every term is in the content or the path; no negated term is in either.
    Binary files are never searched by content, but their paths still match.
    `matches` holds each content-matched term as the file spells it, and
    `line` the 1-based line of the first one; a file matched only through its
    path is a path-only hit (matches []).
    """
    for key, values in query.quals.items():
        if not any(_qualifier_holds(key, v, path, repo.name) for v in values):
            return None
    for key, values in query.not_quals.items():
        if any(_qualifier_holds(key, v, path, repo.name) for v in values):
            return None
    lower_path = path.lower()
    content = info.lower if info.lower is not None else ""
    for term in query.not_terms:
        if term in lower_path or term in content:
            return None
    matches: list[str] = []
    line = None
    for term in query.terms:
        at = content.find(term)
        if at >= 0:
            found = _original_spelling(info.text or "", content, term, at)
            if found is not None:
                start, text = found
                if line is None:
                    line = info.text.count("\n", 0, start) + 1
                matches.append(text)
                continue
        if term not in lower_path:
            return None
    hit = {"repo": f"{ORG}/{repo.name}", "path": path, "sha": info.sha,
           "branch": repo.default_branch(), "matches": matches}
    if line is not None:
        hit["line"] = line
    return hit


def _original_spelling(text: str, lower: str, term: str, at: int) -> tuple[int, str] | None:
    """(offset, substring of the file) for a case-insensitive match found in `lower`."""
    if len(lower) == len(text):                    # the usual case: offsets line up
        return at, text[at:at + len(term)]
    m = re.search(re.escape(term), text, re.IGNORECASE)
    return (m.start(), m.group(0)) if m else None


def run_search(catalog: Catalog, q: str, limit: int | None, call: "CallContext") -> dict:
    """search/code: scan the working trees, stop at `limit` hits, stream per repository."""
    query = parse_query(q)
    if not query.positive():
        return {"items": [], "truncated": False}
    names = catalog.names()
    if "repo" in query.quals:
        wanted = []
        for value in query.quals["repo"]:
            repo = catalog.repo(value)                # a fault or unknown repo answers its error
            if repo.name not in wanted:
                wanted.append(repo.name)
        names = wanted
    items: list[dict] = []
    truncated = False
    total = 0
    for name in names:
        if call.cancelled.is_set():
            truncated = True                          # cut by $/cancelRequest: incomplete
            break
        repo = catalog.repo(name)
        batch = []
        for path, kind, info in repo.walk():
            if kind != "blob":
                continue
            if call.cancelled.is_set():
                truncated = True
                break
            hit = search_hit(repo, path, info, query)
            if hit is None:
                continue
            if limit is not None and total >= limit:
                truncated = True                      # one hit past the limit proves there are more
                break
            batch.append(hit)
            total += 1
        if call.streaming:
            if batch:
                call.send_partial(batch)
        else:
            items.extend(batch)
        if truncated:
            break
    return {"items": [] if call.streaming else items, "truncated": truncated}


# -- the methods ------------------------------------------------------------------

class CallContext:
    """What a handler may use besides its params: streaming and cancellation."""
    __slots__ = ("streaming", "cancelled", "send_partial")

    def __init__(self, streaming: bool, cancelled: threading.Event, send_partial=None):
        self.streaming = streaming
        self.cancelled = cancelled
        self.send_partial = send_partial              # callable(items) when streaming


def m_initialize(cat: Catalog, params: dict, call: CallContext) -> dict:
    # Cheap and idempotent: no network, no credentials, the same answer every time.
    return {"protocol": PROTOCOL, "name": NAME, "icon": ICON, "capabilities": cat.capabilities()}


def m_search_repos(cat: Catalog, params: dict, call: CallContext) -> dict:
    query = (param_str(params, "query") or "").lower()
    items: list[dict] = [{"full_name": f"{ORG}/{n}"} for n in cat.names()
                         if query in f"{ORG}/{n}".lower()][:SEARCH_REPOS_MAX]
    if query in ORG.lower():
        items.append({"org": ORG})
    return {"items": items}


def m_org_repos(cat: Catalog, params: dict, call: CallContext) -> dict:
    # Names relative to the org; the org asked about is ignored like an id's org part.
    return {"repos": cat.names()}


def m_repo_tree(cat: Catalog, params: dict, call: CallContext) -> dict:
    repo = cat.repo(param_str(params, "repo", required=True))
    ref = param_ref(params)
    if repo.serves_worktree(ref):
        rows = ((path, kind, info.sha if info else dir_id(path), info.size if info else None)
                for path, kind, info in repo.walk())
    else:
        rows = ((e.path, e.type, _blob_sha_by_oid[e.oid] if e.type == "blob" else dir_id(e.path), e.size)
                for e in repo.git_tree(repo.resolve(ref)))
    entries: list[dict] = []
    truncated = False
    for path, kind, sha, size in rows:
        if len(entries) == TREE_BUDGET:             # an honest cut: there is at least one more
            truncated = True
            break
        entries.append({"path": path, "type": kind, "sha": sha, **({"size": size} if kind == "blob" else {})})
    return {"entries": entries, "truncated": truncated, "branch": ref or repo.default_branch()}


def m_repo_blob(cat: Catalog, params: dict, call: CallContext) -> dict:
    repo = cat.repo(param_str(params, "repo", required=True))
    data = repo.blob_bytes(param_str(params, "sha", required=True))
    return {"bytes_b64": b64(data)}


def m_repo_blob_at(cat: Catalog, params: dict, call: CallContext) -> dict:
    repo = cat.repo(param_str(params, "repo", required=True))
    path = clean_path(param_str(params, "path", required=True))
    ref = param_ref(params)
    if repo.serves_worktree(ref):
        abspath, st, info = repo.file_at_worktree(path)
        check_blob_size(info.size, path)
        data = read_entry_bytes(abspath, st)
        return {"bytes_b64": b64(data), "sha": blob_id(data)}
    entry = next((e for e in repo.git_tree(repo.resolve(ref)) if e.path == path), None)
    if entry is None or entry.type != "blob":
        raise not_found(f"no file {path!r} at {ref!r} in {ORG}/{repo.name}")
    check_blob_size(entry.size or 0, path)
    return {"bytes_b64": b64(repo.git_blob(entry.oid)),
            "sha": _blob_sha_by_oid[entry.oid]}


def m_repo_refs(cat: Catalog, params: dict, call: CallContext) -> dict:
    repo = cat.repo(param_str(params, "repo", required=True))
    repo.require_git("refs")
    out = git(repo.path, "for-each-ref",
              "--format=%(refname)%00%(objectname)%00%(objecttype)%00%(*objectname)%00%(*objecttype)",
              "refs/heads", "refs/tags")
    default = repo.default_branch()
    branches, tags = [], []
    for line in out.decode("utf-8", errors="replace").splitlines():
        refname, oid, kind, peeled, peeled_kind = line.split("\0")
        if refname.startswith("refs/heads/"):
            name = refname[len("refs/heads/"):]
            branches.append({"name": name, "sha": oid, "default": name == default})
            continue
        # Tags: report the commit a tag names (the peeled id for annotated tags).
        if kind == "commit":
            sha = oid
        elif peeled_kind == "commit":
            sha = peeled
        else:
            try:                                      # a tag of a tag: peel all the way
                sha = repo.resolve(refname)
            except RpcError:
                continue                              # a tag of a tree or blob names no revision
        tags.append({"name": refname[len("refs/tags/"):], "sha": sha})
    return {"branches": branches, "tags": tags}


def m_repo_log(cat: Catalog, params: dict, call: CallContext) -> dict:
    repo = cat.repo(param_str(params, "repo", required=True))
    repo.require_git("history")
    path = param_str(params, "path")
    path = clean_path(path) if path else None
    ref = param_ref(params)
    commit = repo.resolve(ref if ref is not None else repo.default_branch())
    limit = param_int(params, "limit")
    limit = LOG_DEFAULT_LIMIT if limit is None else max(1, min(limit, LOG_MAX_LIMIT))
    # Ask for one row more than we return: if it exists, the list is provably truncated.
    args = ["log", "-z", "--format=%H%x1f%an%x1f%aI%x1f%s", f"-n{limit + 1}", commit, "--"]
    out = git_fixed(repo.path, *args, *([path] if path else []))
    items = []
    for record in out.decode("utf-8", errors="replace").split("\0"):
        if record.strip():
            sha, author, date, subject = record.strip("\n").split("\x1f", 3)
            items.append({"sha": sha, "subject": subject, "author": author, "date": date})
    if path and not items:
        raise not_found(f"no commit touches {path!r} at {ref or repo.default_branch()!r} "
                        f"in {ORG}/{repo.name}")
    return {"items": items[:limit], "truncated": len(items) > limit}


def m_repo_blame(cat: Catalog, params: dict, call: CallContext) -> dict:
    repo = cat.repo(param_str(params, "repo", required=True))
    repo.require_git("blame")
    path = clean_path(param_str(params, "path", required=True))
    ref = param_ref(params)
    commit = repo.resolve(ref if ref is not None else repo.default_branch())
    if not any(e.path == path and e.type == "blob" for e in repo.git_tree(commit)):
        raise not_found(f"no file {path!r} at {ref or repo.default_branch()!r} in {ORG}/{repo.name}")
    out = git_fixed(repo.path, "blame", "--line-porcelain", "--no-textconv", commit, "--", path)
    return {"ranges": coalesce_blame(parse_line_porcelain(out))}


_BLAME_HEADER = re.compile(rb"^([0-9a-f]{40,64}) \d+ (\d+)")


def parse_line_porcelain(out: bytes) -> list[dict]:
    """One {line, sha, author, date} per line of `git blame --line-porcelain` output."""
    lines = []
    current: dict = {}
    for raw in out.split(b"\n"):
        if raw.startswith(b"\t"):                     # the line's content ends its group
            lines.append({"line": current["line"], "sha": current["sha"],
                          "author": current.get("author", ""),
                          "date": iso_date(current.get("time", 0), current.get("tz", "+0000"))})
            current = {}
            continue
        m = _BLAME_HEADER.match(raw) if not current else None
        if m:
            current = {"sha": m.group(1).decode(), "line": int(m.group(2))}
        elif raw.startswith(b"author "):
            current["author"] = raw[7:].decode("utf-8", errors="replace")
        elif raw.startswith(b"author-time "):
            current["time"] = int(raw[12:])
        elif raw.startswith(b"author-tz "):
            current["tz"] = raw[10:].decode()
    return lines


def coalesce_blame(lines: list[dict]) -> list[dict]:
    """1-based inclusive ranges; adjacent lines from the same commit become one range."""
    ranges: list[dict] = []
    for ln in sorted(lines, key=lambda x: x["line"]):
        last = ranges[-1] if ranges else None
        if last and last["sha"] == ln["sha"] and last["end_line"] + 1 == ln["line"]:
            last["end_line"] = ln["line"]
        else:
            ranges.append({"start_line": ln["line"], "end_line": ln["line"], "sha": ln["sha"],
                           "author": ln["author"], "date": ln["date"]})
    return ranges


STATUS = {"A": "added", "D": "removed", "M": "modified", "T": "modified", "R": "renamed",
          "C": "added"}


def m_repo_commit(cat: Catalog, params: dict, call: CallContext) -> dict:
    repo = cat.repo(param_str(params, "repo", required=True))
    repo.require_git("commits")
    commit = repo.resolve(param_str(params, "sha", required=True))
    meta = commit_meta(repo.path, commit)
    if meta is None:
        meta = git_fixed(repo.path, "show", "-s", "--format=%H%x00%P%x00%an%x00%aI%x00%B", commit)
    sha, parents, author, date, message = meta.decode("utf-8", errors="replace").split("\0", 4)
    parents = parents.split()
    # First-parent diff; a root commit is compared with the empty tree.
    diff_args = ["diff-tree", "-r", "-M", "--no-commit-id"]
    revs = [parents[0], commit] if parents else ["--root", commit]
    raw = git_fixed(repo.path, *diff_args, "-z", "--raw", *revs)
    patch = git_fixed(repo.path, *diff_args, "-p", "--no-color", "--no-ext-diff", "--no-textconv",
                      *revs)
    changes = parse_raw_diff(raw)
    files = attach_patches(changes, split_patch(patch))
    return {"sha": sha, "author": author, "date": date, "message": message.rstrip("\n"),
            "parents": parents, "files": files[:COMMIT_FILE_BUDGET],
            "truncated": len(files) > COMMIT_FILE_BUDGET}


def commit_meta(repo_dir: str, commit: str) -> bytes | None:
    """What `git show -s --format=%H%x00%P%x00%an%x00%aI%x00%B <commit>`
    prints, read from the commit object through the batch git: the id, the
    parent ids, the author's name (up to the first "<", trailing spaces
    trimmed), the author date in strict ISO-8601 and the raw message. None
    (the caller asks git show) when the batch cannot answer, or the commit
    says anything this reading does not cover (an encoding, an odd header)."""
    found = git_objects(repo_dir).lookup(commit)
    if found is None or found[1] != "commit" or found[0] != commit:
        return None
    data = found[2]
    end = data.find(b"\n\n")
    if end < 0:
        return None
    parents, author = [], None
    for line in data[:end].split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"parent":
            parents.append(value)
        elif key == b"author" and author is None:
            author = value
        elif key == b"encoding":
            return None                              # git show would re-encode the message
    if author is None or b"<" not in author or b">" not in author:
        return None
    name = author[:author.index(b"<")].rstrip(b" \t\n\r")
    when = author[author.rindex(b">") + 1:].split()
    if len(when) != 2 or not when[0].isdigit() or len(when[1]) != 5 or \
            when[1][:1] not in (b"+", b"-") or not when[1][1:].isdigit():
        return None
    date = iso_date(int(when[0]), when[1].decode("ascii")).encode("ascii")
    # (--format is a terminator: git show ends the record with a newline)
    return b"\0".join([commit.encode("ascii"), b" ".join(parents), name, date,
                       data[end + 2:] + b"\n"])


def parse_raw_diff(raw: bytes) -> list[dict]:
    """`git diff-tree -z --raw` records as {status letter, path, previous_path?}."""
    fields = raw.split(b"\0")
    changes = []
    i = 0
    while i < len(fields):
        meta = fields[i].decode()
        i += 1
        if not meta.startswith(":"):
            continue
        letter = meta.split()[4][0]
        if letter in "RC":
            old, new = fields[i].decode("utf-8", "replace"), fields[i + 1].decode("utf-8", "replace")
            i += 2
            changes.append({"letter": letter, "path": new, "previous_path": old})
        else:
            changes.append({"letter": letter, "path": fields[i].decode("utf-8", "replace")})
            i += 1
    return changes


def split_patch(patch: bytes) -> list[list[bytes]]:
    """The lines of `git diff-tree -p` output, one list per `diff --git` section."""
    sections: list[list[bytes]] = []
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            sections.append([])
        elif sections:
            sections[-1].append(line)
    return sections


def attach_patches(changes: list[dict], sections: list[list[bytes]]) -> list[dict]:
    """Wire file objects: status, hunks-only patch, counts, binary flag.

    git prints one patch section per change, in the raw output's order, except
    a type change (file <-> symlink), which it prints as a deletion plus a
    creation: two sections.
    """
    wanted = sum(2 if c["letter"] == "T" else 1 for c in changes)
    aligned = wanted == len(sections)
    if not aligned:
        note(f"patch sections ({len(sections)}) do not line up with changes ({wanted}); "
             f"leaving patches out")
    files = []
    for change in changes:
        out = {"path": change["path"], "status": STATUS.get(change["letter"], "modified")}
        if "previous_path" in change:
            out["previous_path"] = change["previous_path"]
        if aligned:
            own = sections.pop(0) + (sections.pop(0) if change["letter"] == "T" else [])
            out.update(describe_patch(own))
        files.append(out)
    return files


def describe_patch(lines: list[bytes]) -> dict:
    """Hunks only (no diff/index/---/+++/mode lines), joined with \\n, no trailing newline."""
    if any(l.startswith((b"Binary files ", b"GIT binary patch")) for l in lines):
        return {"binary": True}                       # no patch, no counts
    hunks, in_hunks = [], False
    for line in lines:
        if line.startswith(b"@@"):
            in_hunks = True
        if in_hunks and line:                         # hunk lines are never empty
            hunks.append(line)
    added = sum(1 for l in hunks if l.startswith(b"+"))
    removed = sum(1 for l in hunks if l.startswith(b"-"))
    text = b"\n".join(hunks)
    out: dict = {"additions": added, "deletions": removed}
    if len(text) <= PATCH_MAX_BYTES:
        out["patch"] = text.decode("utf-8", errors="replace")   # CRs stay as they are
    return out


def m_repo_clone_url(cat: Catalog, params: dict, call: CallContext) -> dict:
    repo = cat.repo(param_str(params, "repo", required=True))
    return {"clone_url": repo.path}                   # git clone takes a local path


def m_repo_web_url(cat: Catalog, params: dict, call: CallContext) -> dict:
    # A file:// URI of the path on disk (the branch cannot be expressed in one).
    repo = cat.repo(param_str(params, "repo", required=True))
    path = clean_path(param_str(params, "path") or "")
    target = os.path.join(repo.path, path) if path else repo.path
    from pathlib import Path
    url = Path(target).as_uri()                       # percent-encodes ' ', '#', '?', '%', '+'
    is_file = params.get("is_file")                 # the host's hint; else look on disk
    is_file = bool(path) and (is_file if isinstance(is_file, bool) else os.path.isfile(target))
    line, end = param_int(params, "line"), param_int(params, "end_line")
    if is_file and line is not None and line >= 1:
        url += f"#L{line}-L{end}" if end is not None and end > line else f"#L{line}"
    return {"url": url}


def m_org_url(cat: Catalog, params: dict, call: CallContext) -> dict:
    from pathlib import Path
    return {"url": Path(cat.root).as_uri()}


def m_search_code(cat: Catalog, params: dict, call: CallContext) -> dict:
    limit = param_int(params, "limit")
    return run_search(cat, param_str(params, "q") or "", limit if limit and limit > 0 else None, call)


METHODS = {
    "initialize": m_initialize,
    "search/repos": m_search_repos,
    "org/repos": m_org_repos,
    "repo/tree": m_repo_tree,
    "repo/blob": m_repo_blob,
    "repo/blob_at": m_repo_blob_at,
    "repo/refs": m_repo_refs,
    "repo/log": m_repo_log,
    "repo/blame": m_repo_blame,
    "repo/commit": m_repo_commit,
    "repo/clone_url": m_repo_clone_url,
    "repo/web_url": m_repo_web_url,
    "org/url": m_org_url,
    "search/code": m_search_code,
}


# -- the stdio server ----------------------------------------------------------------

class _Pool:
    """A fixed set of worker threads, started as work comes (what
    concurrent.futures' executor does, without its import at every start)."""

    def __init__(self, workers: int):
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._max = workers
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, fn, *args) -> None:
        with self._lock:
            start = self._idle == 0 and len(self._threads) < self._max
            if start:
                t = threading.Thread(target=self._run, name=f"fs-worker-{len(self._threads)}",
                                     daemon=True)
                self._threads.append(t)
            else:
                self._idle -= 1 if self._idle else 0
        self._work.put((fn, args))
        if start:
            t.start()

    def _run(self) -> None:
        while True:
            job = self._work.get()
            if job is None:
                return
            fn, args = job
            try:
                fn(*args)
            except BaseException:   # run_request reports its own errors; never lose a worker
                note(f"a worker's job failed:\n{_traceback_text()}")
            with self._lock:
                self._idle += 1

    def shutdown(self) -> None:
        """Finish the work queued, then end the workers."""
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._work.put(None)
        for t in threads:
            t.join()



class Server:
    """Reads requests from `inp`, answers them on worker threads, writes to `out`."""

    def __init__(self, catalog: Catalog, inp, out, workers: int = WORKERS):
        self.catalog = catalog
        self.inp = inp
        self.out = out
        self.pool = _Pool(workers)
        self._write_lock = threading.Lock()
        self._output_broken = False
        self._running: dict = {}                  # request id -> its cancel Event
        self._running_lock = threading.Lock()

    def send(self, message: dict) -> None:
        """Write one message as one line; the lock keeps lines from interleaving."""
        try:
            line = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
            data = (line + "\n").encode("utf-8")
        except UnicodeEncodeError:                # a lone surrogate slipped through
            data = (line + "\n").encode("utf-8", errors="replace")
        with self._write_lock:
            if self._output_broken:
                return
            try:
                self.out.write(data)
                self.out.flush()
            except (OSError, ValueError):
                self._output_broken = True
                note("stdout is closed; replies are being dropped")

    def serve(self) -> None:
        """Until stdin ends: read a line, dispatch it. Then finish the work in hand."""
        for raw in iter(self.inp.readline, b""):
            self.handle_line(raw)
        self.pool.shutdown()

    def handle_line(self, raw: bytes) -> None:
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            note("skipping an input line that is not valid UTF-8")
            return
        if not text:
            return
        try:
            msg = json.loads(text)
        except ValueError:
            note(f"skipping an input line that is not JSON: {text[:80]!r}")
            return
        if not isinstance(msg, dict):
            note(f"skipping an input line that is not a JSON object: {text[:80]!r}")
            return
        if "id" not in msg:
            self.notification(msg)
            return
        method, params, msg_id = msg.get("method"), msg.get("params"), msg["id"]
        if not isinstance(method, str):
            if "result" in msg or "error" in msg:
                note("skipping a reply: this adapter sends no requests")
            else:
                self.send({"jsonrpc": "2.0", "id": msg_id,
                           "error": RpcError("invalid_params", "a request needs a string 'method'",
                                             code=-32600).to_json()})
            return
        params = params if isinstance(params, dict) else {}   # null (or junk) = no params
        cancelled = threading.Event()
        key = msg_id if isinstance(msg_id, (int, str)) else None
        if key is not None:
            # Registered before the work is queued, so a cancel can never miss it.
            with self._running_lock:
                self._running[key] = cancelled
        self.pool.submit(self.run_request, msg_id, key, method, params, cancelled)

    def notification(self, msg: dict) -> None:
        """Notifications are never answered; $/cancelRequest is the only one acted on."""
        if msg.get("method") != "$/cancelRequest":
            return
        params = msg.get("params")
        target = params.get("id") if isinstance(params, dict) else None
        if isinstance(target, (int, str)):
            with self._running_lock:
                event = self._running.get(target)
            if event is not None:                     # unknown or finished ids are ignored
                event.set()

    def run_request(self, msg_id, key, method: str, params: dict, cancelled: threading.Event) -> None:
        streaming = params.get("partial") is True

        def send_partial(items: list) -> None:
            self.send({"jsonrpc": "2.0", "method": "$/partial",
                       "params": {"id": msg_id, "items": items}})

        call = CallContext(streaming=streaming, cancelled=cancelled,
                           send_partial=send_partial if streaming else None)
        try:
            handler = METHODS.get(method)
            if handler is None:
                raise RpcError("not_found", f"unknown method {method!r}", code=-32601)
            reply = {"jsonrpc": "2.0", "id": msg_id, "result": handler(self.catalog, params, call)}
        except RpcError as exc:
            reply = {"jsonrpc": "2.0", "id": msg_id, "error": exc.to_json()}
        except Exception as exc:                      # a bug or a git failure: answer, keep serving
            note(f"{method} (id {msg_id!r}) failed:\n{_traceback_text()}")
            error = RpcError("provider", f"{method} failed inside the adapter: {exc}")
            reply = {"jsonrpc": "2.0", "id": msg_id, "error": error.to_json()}
        self.send(reply)
        if key is not None:
            with self._running_lock:
                if self._running.get(key) is cancelled:
                    del self._running[key]


# -- main ----------------------------------------------------------------------------

def main(argv: list[str] | None = None, inp=None, out=None) -> int:
    """Serve the folder named in ``argv`` on ``inp`` / ``out`` (binary streams
    with readline, and write and flush; stdin and stdout when not given) until
    ``inp`` ends. Returns the exit status."""
    args = sys.argv[1:] if argv is None else argv
    if args in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    if not args and os.environ.get("FORGE_FIXTURE_DIR"):
        args = [os.environ["FORGE_FIXTURE_DIR"]]
    if len(args) != 1:
        sys.stderr.write(USAGE)
        return 2
    root = args[0]
    if not os.path.isdir(root):
        sys.stderr.write(f"fs_provider: {root!r} is not a directory\n\n{USAGE}")
        return 2
    server = Server(Catalog(root), sys.stdin.buffer if inp is None else inp,
                    sys.stdout.buffer if out is None else out)
    try:
        server.serve()
    except KeyboardInterrupt:
        return 130
    finally:
        close_git_objects()
    return 0


if __name__ == "__main__":
    sys.exit(main())
