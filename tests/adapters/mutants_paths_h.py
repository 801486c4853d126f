"""Path mutants and controls, part h: search, streaming, bounded compute,
listings and icons judged where their cases do not look first, each mutant
failing exactly its owner; and legal variations of those paths the cases
must keep green, as controls.

Written like tests/adapters/mutants_paths_c.py (a hook class per switch, its
docstring's first line what it changes, then "Hides on:").
"""

from __future__ import annotations

import copy

from fixture.catalog import TERM_PATHONLY
from tests.adapters.controls import control
from tests.adapters.hooks import (FilesearchOnly, InitResult, ResultEdit, StreamedItemsInReply,
                                  read_worktree, repo_name)
from tests.adapters.mutants_deep import promoted
from tests.adapters.proxy import Hooks, hits_of, result_of


def query(req) -> str:
    q = req.params.get("q") if req is not None else None
    return q if isinstance(q, str) else ""


def is_path_query(req) -> bool:
    return query(req).startswith("path:")


def content_terms(req) -> list[str]:
    """The bare terms of a search's q (qualifiers left out)."""
    return [t for t in query(req).split() if ":" not in t]


class HitEdit(Hooks):
    """Edit every hit of the search/code replies and batches ``applies`` names."""

    def applies(self, req) -> bool:
        return True

    def edit(self, proxy, req, hit: dict) -> None:
        pass

    def _each(self, proxy, req, msg):
        if req is not None and req.method == "search/code" and self.applies(req):
            for hit in hits_of(req, msg):
                self.edit(proxy, req, hit)
        return msg

    def reply(self, proxy, req, msg):
        return self._each(proxy, req, msg)

    def partial(self, proxy, req, msg):
        return self._each(proxy, req, msg)


# ---------------------------------------------------------------- FC-030: filename hits

@control("filename-hits-with-matches", warns=("FC-030",))
class FilenameHitsWithMatches(HitEdit):
    """Filename hits carry matches [<the path: text>] (a search API's path match) instead of [].

    §3.13: a path-only hit is a MAY, and "SHOULD matches are literal
    substrings of the stored file": the name's text is not in the file, so
    FC-030 warns (RULINGS "Search": a filename match MAY be path-only).
    """

    def edit(self, proxy, req, hit):
        if not hit.get("matches"):
            hit["matches"] = [TERM_PATHONLY] if TERM_PATHONLY in query(req) else []


@promoted("filename-hits-matched-prefixed", "FC-030",
          '§3.13: hit "path": "repository-relative path"')
class FilenameHitsMatchedPrefixed(HitEdit):
    """Filename hits carry matches [<the path: text>] and a path prefixed with the repository name.

    Hides on: hits with non-empty matches; FC-030 judged the repo and path of
    path-only hits (matches []) only.
    """

    def applies(self, req):
        return TERM_PATHONLY in query(req)

    def edit(self, proxy, req, hit):
        hit["matches"] = [TERM_PATHONLY]
        if isinstance(hit.get("path"), str):
            hit["path"] = f"{repo_name(hit.get('repo'))}/{hit['path']}"


# ---------------------------------------------------------------- FC-031: lines

@promoted("scoped-line-zero-based", "FC-031",
          '§3.13: "MUST line, when present, is 1-based and is the real line of the match"')
class ScopedLineZeroBased(HitEdit):
    """Hits of repo:-scoped searches carry line counted from 0 (the first matching line's index).

    Hides on: repo:-scoped queries (the host's repository search); FC-031
    searched unscoped terms only.
    """

    def applies(self, req):
        return "repo:" in query(req)

    def edit(self, proxy, req, hit):
        data, terms = read_worktree(proxy, hit.get("repo"), hit.get("path")), content_terms(req)
        if data is None or not terms:
            return
        for n, line in enumerate(data.split(b"\n")):
            if terms[0].encode() in line and n > 0:
                hit["line"] = n
                return


# ---------------------------------------------------------------- FC-042: streamed replies

@promoted("single-hit-stream-in-reply", "FC-042",
          '§5.1: "Adapters therefore MUST deliver every item through $/partial when the '
          'request opted in"')
class SingleHitStreamInReply(Hooks):
    """A streamed content search whose whole result is one hit sends no $/partial; the hit is in the reply.

    Hides on: streams of a single hit; FC-042 streamed terms of 8 and 600 files.
    """

    def partial(self, proxy, req, msg):
        if req is None or is_path_query(req):
            return msg
        req.state.setdefault("held", []).append(msg)
        return None

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or not req.streaming or "held" not in req.state or result is None:
            return msg
        hits = [h for m in req.state["held"] for h in hits_of(req, m)]
        if len(hits) == 1:
            result["items"] = hits
        else:
            for held in req.state["held"]:
                proxy.send_host(held)
        return msg


class Batches(Hooks):
    """Count each stream's batches."""

    def partial(self, proxy, req, msg):
        if req is not None:
            req.state["batches"] = req.state.get("batches", 0) + 1
        return msg


@promoted("multibatch-items-in-reply", "FC-042",
          '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has '
          'items: []"')
class MultibatchItemsInReply(StreamedItemsInReply):
    """A stream of two or more batches repeats every streamed hit in its final reply.

    Hides on: streams of several batches (a term in alpha and beta); FC-042
    streamed terms of one repository (one batch each).
    """

    def partial(self, proxy, req, msg):
        if req is not None:
            req.state["batches"] = req.state.get("batches", 0) + 1
        return super().partial(proxy, req, msg)

    def reply(self, proxy, req, msg):
        if req is not None and req.state.get("batches", 0) >= 2:
            return super().reply(proxy, req, msg)
        return msg


@promoted("multibatch-truncated-lie", "FC-042",
          '§3.13: truncated "true = the result set is provably incomplete"; RULINGS "Bounded '
          'compute": a claim of truncation that is false fails')
class MultibatchTruncatedLie(Batches):
    """A complete stream of two or more batches says truncated true.

    Hides on: streams of several batches; FC-042 judged truncated on one-repo streams only.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.streaming and result is not None \
                and req.state.get("batches", 0) >= 2:
            result["truncated"] = True
        return msg


@promoted("bigstream-cut-no-truncated", "FC-042",
          '§5.3: the final reply "carries the authoritative truncated"; RULINGS "Bounded '
          'compute": a cut without truncated: true fails')
class BigstreamCutNoTruncated(Hooks):
    """A stream cut by a limit of 100 or more (the host's 500) ends with truncated false.

    Hides on: limits of 100 and more; FC-042 cut wide's stream at 20 only.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        limit = req.params.get("limit") if req is not None else None
        if req is not None and req.streaming and result is not None \
                and isinstance(limit, int) and limit >= 100:
            result["truncated"] = False
        return msg


@promoted("path-stream-items-in-reply", "FC-042",
          '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has '
          'items: []"')
class PathStreamItemsInReply(StreamedItemsInReply):
    """Streamed path: searches (filename search) repeat every streamed hit in the final reply.

    Hides on: path: queries; FC-042 streamed content terms only.
    """

    def reply(self, proxy, req, msg):
        return super().reply(proxy, req, msg) if is_path_query(req) else msg


@promoted("filesearch-only-items-in-streamed-reply", "FC-042",
          '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has '
          'items: []"')
class FilesearchOnlyItemsInStreamedReply(FilesearchOnly, StreamedItemsInReply):
    """Declares code_search false, file_search true (legal), and repeats streamed path: hits in the reply.

    Hides on: an adapter without content search; FC-042 streamed content
    terms only.
    """


@promoted("scoped-stream-items-in-reply", "FC-042",
          '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has '
          'items: []"')
class ScopedStreamItemsInReply(StreamedItemsInReply):
    """repo:-scoped streamed searches repeat every streamed hit in the final reply.

    Hides on: repo:-scoped streams, which FC-042 does not ask (FC-031 does):
    the protocol monitor sees the reply's items wherever they are sent.
    """

    def reply(self, proxy, req, msg):
        return super().reply(proxy, req, msg) if "repo:" in query(req) else msg


@promoted("streamed-beta-hits-under-alpha", "FC-042",
          '§3.13: hit "repo": "repository id", "path": "repository-relative path"')
class StreamedBetaHitsUnderAlpha(HitEdit):
    """Streamed hits in beta are reported under alpha's repository id (the path kept).

    Hides on: streams of a term in alpha and beta; FC-042 streamed terms of
    one repository, and FC-031 skipped hits naming no file of the fixture.
    """

    def applies(self, req):
        return req.streaming

    def edit(self, proxy, req, hit):
        if repo_name(hit.get("repo")) == "beta":
            hit["repo"] = hit["repo"].rsplit("/", 1)[0] + "/alpha"


# ---------------------------------------------------------------- FC-070: one-shot replies

class OneShotContent(ResultEdit):
    """One-shot content searches (not path: queries)."""

    method = "search/code"

    def applies(self, proxy, req):
        return not req.streaming and not is_path_query(req)


@promoted("oneshot-content-empty-untruncated", "FC-070",
          'RULINGS "Bounded compute": "what fails is ... a cut without truncated: true"')
class OneshotContentEmptyUntruncated(OneShotContent):
    """One-shot content searches answer no hit with truncated false (a "cut" before the first hit, claimed complete).

    Hides on: the cases that need one-shot hits skip naming FC-070 when
    there are none; FC-070 alone can tell an empty result is incomplete.
    """

    def edit(self, proxy, req, result):
        result["items"], result["truncated"] = [], False


@promoted("oneshot-first-repo-only", "FC-070",
          'RULINGS "Bounded compute": "what fails is ... a cut without truncated: true"')
class OneshotFirstRepoOnly(OneShotContent):
    """One-shot searches return only the hits of the first repository that has any, truncated false.

    Hides on: terms in several repositories; FC-070 searched wide's term only.
    """

    def edit(self, proxy, req, result):
        items = [h for h in result.get("items") or [] if isinstance(h, dict)]
        if items:
            result["items"] = [h for h in items if h.get("repo") == items[0].get("repo")]


@promoted("oneshot-content-hit-basename", "FC-070",
          '§3.13: hit "path": "repository-relative path"')
class OneshotContentHitBasename(OneShotContent):
    """One-shot content hits carry the file's base name as path (src/net/retry.rs -> retry.rs).

    Hides on: FC-070 judged no hit of a cut reply, and wide's files sit one
    directory deep; FC-031 skipped hits naming no file.
    """

    def edit(self, proxy, req, result):
        for hit in hits_of(req, {"result": result}):
            if hit.get("matches") and isinstance(hit.get("path"), str):
                hit["path"] = hit["path"].rsplit("/", 1)[-1]


@promoted("oneshot-beta-hits-under-alpha", "FC-070",
          '§3.13: hit "repo": "repository id", "path": "repository-relative path"')
class OneshotBetaHitsUnderAlpha(HitEdit):
    """One-shot hits in beta are reported under alpha's repository id (the path kept).

    Hides on: terms in alpha and beta; FC-070 searched wide's term only.
    """

    def applies(self, req):
        return not req.streaming

    def edit(self, proxy, req, hit):
        if repo_name(hit.get("repo")) == "beta":
            hit["repo"] = hit["repo"].rsplit("/", 1)[0] + "/alpha"


# ---------------------------------------------------------------- FC-043: batches

@control("single-batch-stream")
class SingleBatchStream(Hooks):
    """Every stream is buffered and sent as one $/partial right before the final reply.

    RULINGS "Streaming": one batch carrying every hit is a legal stream
    (FC-043 warned that the window's reset went unexercised).
    """

    def partial(self, proxy, req, msg):
        if req is None:
            return msg
        req.state.setdefault("hits", []).extend(hits_of(req, msg))
        return None

    def reply(self, proxy, req, msg):
        if req is not None and req.streaming and "hits" in req.state:
            proxy.send_host({"jsonrpc": "2.0", "method": "$/partial",
                             "params": {"id": req.id, "items": req.state["hits"]}})
        return msg


@control("hit-per-matching-line")
class HitPerMatchingLine(Hooks):
    """A streamed hit is sent once per line of its file containing the match, each with that line.

    One hit per matching chunk (GitLab-style); the host folds by file. No
    SHOULD asks for the first occurrence (FC-031 warned on the others).
    """

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        items = params.get("items") if isinstance(params, dict) else None
        if req is None or not isinstance(items, list):
            return msg
        out = []
        for hit in items:
            data = read_worktree(proxy, hit.get("repo"), hit.get("path"))
            match = (hit.get("matches") or [None])[0]
            if data is None or not match or not isinstance(hit.get("line"), int):
                out.append(hit)
                continue
            out += [dict(copy.deepcopy(hit), line=n)
                    for n, line in enumerate(data.split(b"\n"), 1) if match.encode() in line]
        params["items"] = out
        return msg


# ---------------------------------------------------------------- listings and icons

@promoted("search-repos-unservable-kindless", "FC-110",
          '§1.1: "MUST An adapter must accept back, unchanged, every repository id it has '
          'emitted"')
class SearchReposUnservableKindless(Hooks):
    """search/repos also lists <id>-archive for each repository found; repo/clone_url errors carry no kind.

    Hides on: an error without data.kind; FC-110 counted a refusal only when
    its kind was not_found.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/repos" and result is not None:
            items = result.get("items") or []
            result["items"] = items + [{"full_name": i["full_name"] + "-archive"} for i in items
                                       if isinstance(i, dict)
                                       and isinstance(i.get("full_name"), str)]
        err = msg.get("error")
        if req is not None and req.method == "repo/clone_url" and isinstance(err, dict) \
                and isinstance(err.get("data"), dict):
            err["data"].pop("kind", None)
            if not err["data"]:
                err.pop("data")
        return msg


@control("org-repos-basic-pushed-at", warns=("FC-112",))
class OrgReposBasicPushedAt(ResultEdit):
    """org/repos answers v1.4 objects whose pushed_at is in the ISO-8601 basic format (20260302T093000Z).

    RULINGS "Content and revisions": the basic format passes with a warning.
    """

    method = "org/repos"

    def edit(self, proxy, req, result):
        result["repos"] = [{"name": n, "pushed_at": "20260302T093000Z"} if isinstance(n, str)
                           else n for n in result.get("repos") or []]


@promoted("icon-hangul-filler", "FC-080",
          '§2.5: icon "exactly one literal character that any terminal can display without '
          'special fonts"')
class IconHangulFiller(InitResult):
    """icon "\\u3164" (HANGUL FILLER): one code point of category Lo whose glyph is blank.

    Hides on: a letter category; FC-080 judged categories only.
    """

    def edit(self, proxy, req, result):
        result["icon"] = "\u3164"
