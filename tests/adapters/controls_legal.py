"""Negative controls of what the protocol leaves to the adapter: matching,
the repository-id grammar, how early a search may stop, clone URLs.

They register into ``CONTROLS`` (tests/adapters/controls.py imports this
module) and each cites the PROTOCOL or RULINGS text that makes it legal: an
org-only search/repos, `path:` taken as a content term, nested repository
ids with every other id refused, an honest small cut marked truncated, and
two repositories sharing one clone URL.
"""

from __future__ import annotations

import os

from tests.adapters.controls import CONTROLS, control
from tests.adapters.proxy import Hooks, result_of

__all__ = ["CONTROLS"]


@control("search-repos-org-names", warns=("FC-110",))
class SearchReposOrgNames(Hooks):
    """search/repos matches organisation names only: "alpha" answers [{"org": "alpha"}], "" answers [].

    Legal: §3.1 sets no MUST on matching ("Each item is ... else has a
    string org → an organisation"); RULINGS "Search": "search/repos matching
    is the adapter's ... a fixture repository not found by its name warns at
    most" (FC-110 warns).
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/repos" and result is not None:
            query = req.params.get("query")
            result["items"] = [{"org": query}] if isinstance(query, str) and query else []
        return msg


@control("path-as-content-term")
class PathAsContentTerm(Hooks):
    """search/code reads path:<text> as an ordinary term: the literal "path:<text>" looked for in file contents (the fixture has none).

    Legal: §3.13 REF "path: counts as an ordinary term"; RULINGS "Search": "A
    path: query may be matched as an ordinary term ... zero hits for a path:
    query is never red by itself".
    """

    def request(self, proxy, req, msg):
        q = req.params.get("q")
        if req.method == "search/code" and isinstance(q, str):
            words = [f'"{w}"' if w.lower().startswith("path:") else w for w in q.split()]
            req.params["q"] = " ".join(words)
        return msg


def holds_files(path: str) -> bool:
    try:
        return any(e.is_file(follow_symlinks=False) for e in os.scandir(path))
    except OSError:
        return False


@control("nested-ids")
class NestedIds(Hooks):
    """Every directory that directly holds files is a repository, nested ones too (<org>/alpha/src/net, <org>/wide/flat ...); every other id is refused with not_found.

    Legal: §1.1 "the adapter owns its grammar", "Ids may contain more than one
    slash"; RULINGS "Repository ids and listings": "a fixture directory may be
    served as several nested ids. A case judges the ids the adapter lists".
    A nested id serves its directory (its tree, and its clone URL, which is
    its top directory's: RULINGS, two repositories may share a clone URL).
    """

    def start(self, proxy):
        root = proxy.fixture_dir
        self.ids: list[str] = []
        for dirpath, dirnames, _files in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            if rel != "." and holds_files(dirpath):
                self.ids.append(rel)
        self.ids.sort()
        self.faults = set()
        try:
            import json

            with open(os.path.join(root, "FAULTS.json"), encoding="utf-8") as f:
                self.faults = set(json.load(f))
        except (OSError, ValueError):
            pass

    def request(self, proxy, req, msg):
        repo = req.params.get("repo")
        if not isinstance(repo, str) or "/" not in repo:
            return msg
        org, rel = repo.split("/", 1)
        if rel in self.faults:
            return msg
        if rel not in self.ids:
            proxy.error(req, f"no repository {repo}", "not_found")
            return None
        top, _, inner = rel.partition("/")
        if inner:   # asked of the top repository, the answer narrowed to the directory
            req.state["inner"] = inner
            req.params["repo"] = f"{org}/{top}"
            if req.method in ("repo/web_url", "repo/blob_at", "repo/log", "repo/blame") \
                    and isinstance(req.params.get("path"), str):
                req.params["path"] = "/".join(p for p in (inner, req.params["path"]) if p)
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        if req.method == "search/repos":
            query = str(req.params.get("query") or "").lower()
            org = proxy_org()
            found = [f"{org}/{r}" for r in self.ids if query in f"{org}/{r}".lower()]
            result["items"] = [{"full_name": n} for n in found[:20]] or [{"org": org}]
        elif req.method == "org/repos":
            result["repos"] = list(self.ids)
        elif req.method == "repo/tree" and req.state.get("inner"):
            prefix = req.state["inner"] + "/"
            result["entries"] = [dict(e, path=e["path"][len(prefix):])
                                 for e in result.get("entries") or []
                                 if isinstance(e, dict) and str(e.get("path")).startswith(prefix)]
        return msg


def proxy_org() -> str:
    return os.environ.get("FORGE_ORG") or "local"


CUT = 20   # hits a search keeps when there are more: a backend budget of its own


@control("honest-small-cut", warns=("FC-042", "FC-070"))
class HonestSmallCut(Hooks):
    """search/code keeps at most 20 hits whatever the limit, and says truncated true when it left any out (500 asked: far below a fifth of it).

    Legal: §3.13 "truncated ... true = the result set is provably incomplete"
    ("whatever chose the budget"); "SHOULD Stop scanning at about N results"
    is a SHOULD; RULINGS "Process behaviour": "a result that really is
    incomplete may stop anywhere below limit and say so; stopping far below
    limit warns" (FC-070 one-shot, FC-042 streamed).
    """

    def partial(self, proxy, req, msg):
        if req is None or req.method != "search/code":
            return msg
        params = msg.get("params")
        items = params.get("items") if isinstance(params, dict) else None
        if not isinstance(items, list):
            return msg
        room = CUT - req.state.get("sent", 0)
        if len(items) > room:
            req.state["cut"] = True
            params["items"] = items[:max(room, 0)]
        req.state["sent"] = req.state.get("sent", 0) + len(params["items"])
        return msg if params["items"] or not req.state.get("cut") else None

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "search/code" or result is None:
            return msg
        items = result.get("items")
        if isinstance(items, list) and len(items) > CUT:
            result["items"], req.state["cut"] = items[:CUT], True
        if req.state.get("cut"):
            result["truncated"] = True
        return msg


@control("shared-clone-url")
class SharedCloneUrl(Hooks):
    """repo/clone_url of every plain directory repository (alpha, beta, wide) answers one URL: the fixture root's path (a monorepo forge's).

    Legal: RULINGS "Repository ids and listings": "Two repositories may share
    a clone URL or a web URL (§3.9, §3.10 are silent)"; RULINGS "Content and
    revisions": for the plain-directory repositories the clone URL "must be
    a string URL or path" (only vcs is cloned).
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/clone_url" and result is not None:
            repo = req.params.get("repo")
            name = repo.split("/", 1)[1] if isinstance(repo, str) and "/" in repo else ""
            if name and not os.path.exists(os.path.join(proxy.fixture_dir, name, ".git")):
                result["clone_url"] = os.path.abspath(proxy.fixture_dir)
        return msg
