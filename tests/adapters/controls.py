"""Negative controls: legal variations of the reference the suite must pass.

``CONTROLS`` maps a switch to its Variant: the hook set, a one-line
description (the hook class's first docstring line), and the case ids that
must carry a warning (``warns``). A control is fully green: exit 0 and no
failed case. An over-fitted suite, one that fails an adapter for something
the protocol allows, shows up here.

Run one: ``python3 tests/mutant.py <switch> <fixture-dir>``.
"""

from __future__ import annotations

import sys

from tests.adapters.hooks import (MIB, BigBlobsFromDisk, BlobIds, GitIds, PairReplies, StreamPause,
                                  Variant, is_git, registrar, repo_name, sha256_hex)
from tests.adapters.proxy import Hooks

CONTROLS: dict[str, Variant] = {}
control = registrar(CONTROLS)


def cited(switch: str, legal: str, warns: tuple[str, ...] = ()):
    """A control that carries ``legal``: the PROTOCOL.md / RULINGS.md text
    that makes its variation legal."""
    def add(cls):
        cls.legal = legal
        return control(switch, warns=warns)(cls)
    return add

GAP_S = 1.5


@control("slow-streamer")
class SlowStreamer(StreamPause):
    """Every gap of a streamed search is 1.5 s: before each batch and before the final reply."""

    def before(self, req, n):
        return GAP_S

    def before_reply(self, req):
        return GAP_S


@control("serve-big-blobs")
class ServeBigBlobs(BigBlobsFromDisk):
    """Blobs over 1 MiB are served whole (the reference refuses them with kind provider)."""


@control("ignore-limit")
class IgnoreLimit(Hooks):
    """search/code ignores limit: the full set, truncated false."""

    def request(self, proxy, req, msg):
        if req.method == "search/code":
            req.params.pop("limit", None)
        return msg


@control("ignore-cancel")
class IgnoreCancel(Hooks):
    """$/cancelRequest is ignored (never reaches the adapter)."""

    def notification(self, proxy, msg):
        return None if msg.get("method") == "$/cancelRequest" else msg


@control("commit-keyed", warns=("FC-093",))
class CommitKeyed(BlobIds):
    """Blob ids at a ref are derived from (commit, path): identical bytes at two refs get different ids.

    The working tree (ref null) keeps content ids, so changed bytes still
    change the id there. FC-093 must warn "commit-keyed" and pass.
    """

    def __init__(self):
        super().__init__()
        self.commits: dict[tuple, str] = {}

    def commit_of(self, proxy, repo, ref) -> str:
        key = (repo_name(repo), ref)
        if key not in self.commits:
            import subprocess
            run = subprocess.run(["git", "-C", str(proxy.fixture / key[0]), "rev-parse", "--verify",
                                  "--quiet", f"{ref}^{{commit}}"], capture_output=True, text=True)
            self.commits[key] = run.stdout.strip() or str(ref)
        return self.commits[key]

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if ref is None or not is_git(proxy, repo):
            return sha
        return sha256_hex(f"{self.commit_of(proxy, repo, ref)}:{path}".encode())


@control("out-of-order")
class OutOfOrder(PairReplies):
    """Concurrent requests are answered newest first (higher id before lower).

    While another request is in flight, a reply is held (up to HOLD_S, so a
    lone slow request is never stalled for long); when the next reply comes,
    the two go out higher id first. Each swap is logged to stderr.
    """

    HOLD_S = 0.3

    def __init__(self):
        super().__init__()
        self.swapped = 0

    def holds(self, req):
        return req.method != "initialize"

    def waits(self, proxy, req):
        return any(rid != req.id for rid in list(proxy.requests))

    def pair(self, proxy, held, msg):
        first, second = sorted((held, msg), key=lambda m: m.get("id"), reverse=True)
        proxy.send_host(first)
        self.swapped += 1
        proxy.log(f"out-of-order: reply {first.get('id')} sent before {second.get('id')} "
                  f"({self.swapped} swapped)")
        return second


@control("stderr-flood")
class StderrFlood(Hooks):
    """Writes 4 MiB to stderr at start and 64 KiB before every request."""

    def start(self, proxy):
        self._spill(4 * MIB)

    def request(self, proxy, req, msg):
        self._spill(64 * 1024)
        return msg

    @staticmethod
    def _spill(n: int) -> None:
        line = b"stderr-flood: " + b"x" * 113 + b"\n"
        out = sys.stderr.buffer
        out.write(line * (n // len(line)))
        out.flush()


EXTRA = {"x_forge_extra": {"nested": [1, "two", None], "flag": True}}


def _decorate(value, depth=0):
    """Add EXTRA to every object of a result (results, items, entries...)."""
    if isinstance(value, dict):
        for key, inner in list(value.items()):
            _decorate(inner, depth + 1)
        value.update(EXTRA)
    elif isinstance(value, list):
        for inner in value:
            _decorate(inner, depth + 1)


@control("unknown-fields")
class UnknownFields(Hooks):
    """Every result, item, error and partial carries unknown members (and an unknown capability)."""

    def reply(self, proxy, req, msg):
        msg["x_envelope_extra"] = 1
        if isinstance(msg.get("result"), dict):
            _decorate(msg["result"])
            if req is not None and req.method == "initialize":
                caps = msg["result"].get("capabilities")
                if isinstance(caps, dict):
                    caps.pop("x_forge_extra", None)
                    caps["x_future"] = "maybe"
        elif isinstance(msg.get("error"), dict):
            _decorate(msg["error"])
        return msg

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if isinstance(params, dict):
            _decorate(params.get("items"))
            params.update(EXTRA)
        return msg


@control("git-blob-ids")
class GitBlobIds(GitIds):
    """Blob ids are git's (sha1 of "blob <len>\\0" + bytes) instead of sha256."""


# The modules that register into this table too (skipped when tests/mutant.py
# loads one switch's module alone: tests/adapters/__init__.py FULL_TABLES).
import tests.adapters as _package  # noqa: E402

if _package.FULL_TABLES:
    from tests.adapters import controls_v16  # noqa: E402,F401  (registers the v1.6 controls)

    # Deep controls the suite passes are promoted where they are written
    # (tests/adapters/controls_deep.py, ``@promoted``): importing it registers them here.
    from tests.adapters import controls_deep  # noqa: E402,F401

    # The deep controls the suite passes register themselves here (written in
    # tests/adapters/controls_deep.py beside the others).
    from tests.adapters import controls_deep as _kept  # noqa: E402,F401
    from tests.adapters import mutants_paths_f as _paths_f  # noqa: E402,F401  (its control: rate-limited-in-flight)

    # The control beside the errors and lifecycle mutants (it registers here too):
    from tests.adapters import mutants_paths_i as _beside_mutants  # noqa: E402,F401
    # Controls of the search, listing and icon paths live beside their
    # mutants (tests/adapters/mutants_paths_h.py, which mutants.py imports last).
    from tests.adapters import mutants as _with_paths_h  # noqa: E402,F401
    from tests.adapters import mutants_paths_d  # noqa: E402,F401  (opaque commit ids)
    from tests.adapters import mutants_paths_e  # noqa: E402,F401  (patch contents, FC-103)
    from tests.adapters import mutants_paths_o  # noqa: E402,F401  (its control: blame-committer-date)
    from tests.adapters import mutants_paths_p  # noqa: E402,F401  (its controls: tree-budget-2000, path-name-only)
    from tests.adapters import controls_q  # noqa: E402,F401  (a real backend's legal wire variations)
    from tests.adapters import controls_legal  # noqa: E402,F401  (matching, id grammar, early cuts, shared URLs)
    from tests.adapters import controls_pace  # noqa: E402,F401  (paced streams, and their mutant)
    from tests.adapters import controls_backend  # noqa: E402,F401  (a real backend's legal habits)
    from tests.adapters import controls_process  # noqa: E402,F401  (process life: keep-alive backend client)
    from tests.adapters import mutants_one_red as _one_red  # noqa: E402,F401  (one defect, one red)
