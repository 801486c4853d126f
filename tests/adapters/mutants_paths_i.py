"""Mutants and controls of the errors and lifecycle cases judged on more of the run.

Each mutant breaks one MUST where its case does not look first: a missing
repository's file at a ref (FC-062), a fault repo asked at a named ref
(FC-060), a host cache root written by a respawned generation or by a
process started without cache_dir (FC-055, judged on every process of
the run), and a respawned generation that serves search or history badly
(FC-050's "serves as usual"), and blob_at at ref null of a URL-hostile name
(FC-133). The control is a legal reading of a SHOULD.
"""

from __future__ import annotations

import base64
import json
import os

from fixture.catalog import FAULT_REPOS
from tests.adapters.controls import control
from tests.adapters.hooks import repo_name
from tests.adapters.mutants import mutant
from tests.adapters.proxy import Hooks, result_of


class FirstInitialize(Hooks):
    """Knows whether this process is a respawned generation: its first
    initialize has an id other than 1 (the suite's first request of a spawn is
    its initialize, id 1; a respawn's initialize has a later id). A second
    initialize on the same process (FC-121) is not a respawn."""

    respawned: bool | None = None

    def request(self, proxy, req, msg):
        if req.method == "initialize" and self.respawned is None:
            self.respawned = req.id != 1
            self.on_first_initialize(proxy, req)
        return msg

    def on_first_initialize(self, proxy, req) -> None:
        pass


@mutant("blob-at-missing-repo-bytes", "FC-062")
class BlobAtMissingRepoBytes(Hooks):
    """repo/blob_at of a repository the fixture does not have answers empty bytes (and a made-up id) instead of an error."""

    def request(self, proxy, req, msg):
        if req.method == "repo/blob_at":
            name = repo_name(req.params.get("repo"))
            if name and not (proxy.fixture / name).exists() and name not in FAULT_REPOS:
                proxy.reply(req, {"bytes_b64": base64.b64encode(b"").decode(), "sha": "0" * 64})
                return None
        return msg


@mutant("denied-at-ref-not-found", "FC-060")
class DeniedAtRefNotFound(Hooks):
    """The denied fault repo asked at a named ref answers not_found (the ref is looked up before the credentials)."""

    def request(self, proxy, req, msg):
        if repo_name(req.params.get("repo")) == "denied" and req.params.get("ref") is not None:
            proxy.error(req, f"no ref {req.params['ref']!r}", kind="not_found")
            return None
        return msg


@mutant("cache-root-on-respawn", "FC-055")
class CacheRootOnRespawn(FirstInitialize):
    """A respawned generation writes provider-crash.json into the host's cache root (<cache_dir>/../..) when it starts."""

    def on_first_initialize(self, proxy, req):
        cache_dir = req.params.get("cache_dir")
        if self.respawned and isinstance(cache_dir, str):
            root = os.path.dirname(os.path.dirname(cache_dir))
            with open(os.path.join(root, "provider-crash.json"), "w") as f:
                json.dump({"respawned_at_id": req.id}, f)


@mutant("cache-fallback-xdg", "FC-055")
class CacheFallbackXdg(FirstInitialize):
    """A process started without cache_dir caches the blobs it serves in $XDG_CACHE_HOME/rootle/blobs/ (the host's cache root)."""

    no_cache_dir = False

    def on_first_initialize(self, proxy, req):
        self.no_cache_dir = not isinstance(req.params.get("cache_dir"), str)

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        xdg = os.environ.get("XDG_CACHE_HOME")
        if (self.no_cache_dir and xdg and req is not None and req.method == "repo/tree"
                and result is not None):
            blobs = os.path.join(xdg, "rootle", "blobs")
            os.makedirs(blobs, exist_ok=True)
            with open(os.path.join(blobs, "tree-seen"), "w") as f:
                f.write(str(req.params.get("repo")))
        return msg


@mutant("respawn-search-refused", "FC-050")
class RespawnSearchRefused(FirstInitialize):
    """A respawned generation refuses every search/code with kind provider (a search index it finds half-written)."""

    def request(self, proxy, req, msg):
        msg = super().request(proxy, req, msg)
        if self.respawned and req.method == "search/code":
            proxy.error(req, "search index is corrupt", kind="provider")
            return None
        return msg


@mutant("respawn-log-ignores-ref", "FC-050")
class RespawnLogIgnoresRef(FirstInitialize):
    """A respawned generation's repo/log walks the default branch whatever the ref."""

    def request(self, proxy, req, msg):
        msg = super().request(proxy, req, msg)
        if self.respawned and req.method == "repo/log" and req.params.get("ref") is not None:
            msg["params"] = {**req.params, "ref": None}
        return msg


@control("error-code-zero", warns=("FC-063",))
class ErrorCodeZero(Hooks):
    """Every error carries code 0 (an integer, as MUST; not positive, as SHOULD: FC-063 warns)."""

    def reply(self, proxy, req, msg):
        err = msg.get("error")
        if isinstance(err, dict):
            err["code"] = 0
        return msg


@mutant("blob-at-null-hostile-not-found", "FC-133")
class BlobAtNullHostileNotFound(Hooks):
    """repo/blob_at with ref null sends the path to the backend unescaped: a URL-hostile name (space, #, ?, %, +) answers not_found; at a named ref the path is escaped and served."""

    def request(self, proxy, req, msg):
        path = req.params.get("path")
        if (req.method == "repo/blob_at" and req.params.get("ref") is None
                and isinstance(path, str) and any(ch in path for ch in " #?%+")):
            proxy.error(req, f"404 Not Found: {path}", kind="not_found")
            return None
        return msg
