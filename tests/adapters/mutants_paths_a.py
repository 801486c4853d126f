"""Path mutants, part a: each breaks a case's MUST where the case does not look
first (another repository, ref, commit, file, batch, method, generation or
moment), is in the matrix (``@promoted``) and fails exactly its owner.

Written like tests/adapters/mutants_deep.py (a hook class per switch, its
docstring's first line what it changes, then "Hides on:").
"""

from __future__ import annotations

from tests.adapters.mutants_deep import promoted  # noqa: F401
from tests.adapters.proxy import Hooks  # noqa: F401

import time

from fixture.catalog import WIDE
from tests.adapters.hooks import KindRewrite, StreamPause, repo_name
from tests.adapters.mutants_v16 import CancelFinishedAnswered
from tests.adapters.proxy import hits_of, result_of

STALL_S = 4.0   # twice the suite's 2 s inactivity window


# ====================================================================== streaming

@promoted("stream-stall-wide-scan", "FC-043",
          '§5.3: "SHOULD Emit batches at least every couple of seconds"; §7: a stream silent '
          'for a full inactivity window fails with timeout')
class StreamStallWideScan(StreamPause):
    """A streamed search goes silent for 4 s before its batch of hits in the wide repository.

    Hides on: a search whose hits lie in wide (600 files, scanned in one go
    before anything is sent); FC-043 streamed only TERM_SEVERAL, whose hits
    are in alpha and beta, and every other streamed search runs under the
    30 s deadline, not the 2 s inactivity window.
    """

    def partial(self, proxy, req, msg):
        if (req is not None and req.streaming and not req.state.get("stalled")
                and any(repo_name(h.get("repo")) == WIDE for h in hits_of(req, msg)
                        if isinstance(h, dict))):
            req.state["stalled"] = True
            time.sleep(STALL_S)      # the behaviour under test: a silent adapter
        return msg


# ====================================================================== lifecycle

@promoted("ref-index-in-host-root", "FC-055",
          '§10.2: "MUST NOT Write into the host\'s own cache root (`~/.cache/rootle/`) directly"')
class RefIndexInHostRoot(Hooks):
    """A repo/tree at a named ref records ref -> tree in <host root>/index/refs/<repo>/<ref>
    (the GitHub layout, rooted two levels above cache_dir).

    Hides on: repo/tree at a branch; the lifecycle group and FC-055's own
    requests ask trees of the default branch (ref null) only, so the index is
    never written where FC-055 looks.
    """

    def reply(self, proxy, req, msg):
        cache = proxy.init_params.get("cache_dir")
        ref = req.params.get("ref") if req is not None else None
        if (req is None or req.method != "repo/tree" or not isinstance(ref, str) or not ref
                or result_of(msg) is None or not isinstance(cache, str)):
            return msg
        from pathlib import Path
        index = Path(cache).parent.parent / "index" / "refs" / repo_name(req.params.get("repo"))
        index.mkdir(parents=True, exist_ok=True)
        (index / ref.replace("/", "_")).write_text(str(result_of(msg).get("branch", ref)))
        return msg


# ====================================================================== errors

@promoted("broken-refs-network", "FC-064",
          '§6.2: provider is for "internal adapter failure"; RULINGS: the `broken` fault '
          'answered with network, auth, rate_limited or not_found fails')
class BrokenRefsNetwork(KindRewrite):
    """repo/refs and repo/log report the backend failure (kind provider) with kind "network".

    Hides on: the revision methods (their git client maps every failure to
    network); FC-064 asked tree, blob, clone_url and web_url of the broken
    repo only.
    """

    def __init__(self):
        super().__init__("provider", "network", methods=("repo/refs", "repo/log"))


# ====================================================================== transport

CACHE_PARAMS = ("cache_dir", "cache_bytes")


@promoted("reinitialize-other-cache-refused", "FC-121",
          '§2.1: "MUST Answer every `initialize`, including a second one on the same process"')
class ReinitializeOtherCacheRefused(Hooks):
    """A later initialize whose cache params differ from the first's answers an error.

    Hides on: an initialize without the cache params (the v1.6 host's pair was
    one without and one with them); FC-121 repeated the first initialize's
    params unchanged.
    """

    def __init__(self):
        self.first: dict | None = None

    def request(self, proxy, req, msg):
        if req.method != "initialize":
            return msg
        params = req.params if isinstance(req.params, dict) else {}
        cache = {k: params.get(k) for k in CACHE_PARAMS}
        if self.first is None:
            self.first = cache
            return msg
        if cache != self.first:
            proxy.error(req, f"already initialized with cache_dir {self.first.get('cache_dir')!r}",
                        kind="provider")
            return None
        return msg


@promoted("cancel-finished-oneshot-answered", "FC-122",
          '§5.4: "MUST NOT Reply to the cancel notification"; "MUST Ignore cancels for unknown '
          'or already-completed ids — no error"')
class CancelFinishedOneShotAnswered(CancelFinishedAnswered):
    """A cancel naming an answered one-shot search/code is answered with an error under that id.

    Hides on: a finished search that did not stream (the adapter keeps its scan
    handle only for streams, and a lookup that misses answers "no such
    search"); FC-122 cancelled a finished repo/tree and a finished stream.
    """

    def remembers(self, req) -> bool:
        return req.method == "search/code" and not req.streaming

    def complaint(self, rid) -> str:
        return f"no such search {rid}"
