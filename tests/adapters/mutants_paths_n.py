"""Path mutants, part n: repository ids a listing emits that are not served
back, on paths FC-110 and FC-111 do not take first: ids accepted by repo/clone_url
alone, and ids listed only for a loose query; and repo/web_url refused at a
branch or for a URL-hostile name (FC-114).

Each fails exactly its case (written like tests/adapters/mutants_deep.py: a
hook class per switch, its docstring's first line what it changes, then
"Hides on:").
"""

from __future__ import annotations

from tests.adapters.hooks import fixture_repos, is_git
from tests.adapters.mutants_deep import promoted
from tests.adapters.proxy import Hooks, result_of

RULE = '§1.1: "An adapter must accept back, unchanged, every repository id it has emitted"'


class CloneUrlTakesDotGit(Hooks):
    """repo/clone_url takes <org>/<name>.git for <org>/<name> (every other method refuses it)."""

    def request(self, proxy, req, msg):
        repo = req.params.get("repo")
        if req.method == "repo/clone_url" and isinstance(repo, str) and repo.endswith(".git"):
            msg["params"]["repo"] = repo[:-4]
        return msg


@promoted("search-repos-clone-only-id", "FC-110", RULE)
class SearchReposCloneOnlyId(CloneUrlTakesDotGit):
    """search/repos lists each git repository a second time, as <org>/<name>.git, an id only repo/clone_url accepts.

    Hides on: ids asked back by another method than repo/clone_url (the
    host opens a pick with repo/tree); the right id is listed too.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "search/repos" or result is None:
            return msg
        items = result.get("items") or []
        result["items"] = items + [
            {"full_name": f"{i['full_name']}.git"} for i in items
            if isinstance(i, dict) and isinstance(i.get("full_name"), str)
            and is_git(proxy, i["full_name"])]
        return msg


@promoted("search-repos-loose-query-ids", "FC-110", RULE)
class SearchReposLooseQueryIds(Hooks):
    """search/repos by a query that is no repository's whole name (empty, part of a name) lists ids <org>/<name>.git, which nothing accepts.

    Hides on: queries other than a fixture repository's exact name (the
    pick popup's text as the user types, starting with "").
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "search/repos" or result is None \
                or req.params.get("query") in fixture_repos(proxy):
            return msg
        for item in result.get("items") or []:
            if isinstance(item, dict) and isinstance(item.get("full_name"), str):
                item["full_name"] += ".git"
        return msg


@promoted("org-repos-clone-only-name", "FC-111", RULE)
class OrgReposCloneOnlyName(CloneUrlTakesDotGit):
    """org/repos lists each git repository a second time, as <name>.git, whose <org>/<name>.git only repo/clone_url accepts.

    Hides on: the joined id asked back by another method than
    repo/clone_url (the host opens it with repo/tree); the plain name is
    listed too.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "org/repos" or result is None:
            return msg
        repos = result.get("repos") or []
        result["repos"] = repos + [f"{n}.git" for n in repos
                                   if isinstance(n, str) and is_git(proxy, n)]
        return msg


WEB_URL_RULE = '§3.10: repo/web_url "Result: {"url": <string>} (required)"'


@promoted("web-url-branch-refused", "FC-114", WEB_URL_RULE)
class WebUrlBranchRefused(Hooks):
    """repo/web_url answers an error whenever branch names a revision (anything but "").

    Hides on: a branch in the request; FC-114 sent branch "" (unknown)
    only, the host sends the branch being browsed.
    """

    def request(self, proxy, req, msg):
        branch = req.params.get("branch")
        if req.method == "repo/web_url" and isinstance(branch, str) and branch:
            proxy.error(req, f"cannot link at branch {branch!r}", kind="not_found")
            return None
        return msg


@promoted("web-url-hostile-path-refused", "FC-114", WEB_URL_RULE)
class WebUrlHostilePathRefused(Hooks):
    """repo/web_url answers an error for a path holding a character a URL must escape (space, #, ?, %, +).

    Hides on: URL-hostile file names; FC-114 linked src/net/retry.rs, its
    directory, the roots and the first nested file of each other repository.
    """

    def request(self, proxy, req, msg):
        path = req.params.get("path")
        if req.method == "repo/web_url" and isinstance(path, str) and set(" #?%+") & set(path):
            proxy.error(req, f"path {path!r} cannot be put in a URL", kind="provider")
            return None
        return msg
