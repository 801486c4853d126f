"""The matrix mutants that break a case of cases/test_listings.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

from fixture.catalog import VCS_DEFAULT_BRANCH
from tests.adapters.hooks import ResultEdit, Variant, fixture_repos, is_git, matrix, repo_name
from tests.adapters.proxy import Hooks, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("search-repos-nested-serves-parent", "FC-110")
class SearchReposNestedServesParent(Hooks):
    """search/repos also lists <org>/alpha/docs, a nested id, whose repo/tree then serves the whole of alpha (not what docs/ holds)."""

    NESTED = "alpha/docs"

    def request(self, proxy, req, msg):
        repo = req.params.get("repo")
        if req.method == "repo/tree" and isinstance(repo, str) and repo.endswith("/" + self.NESTED):
            req.params["repo"] = repo[:-len("/docs")]
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/repos" and result is not None:
            items = [i for i in result.get("items") or [] if isinstance(i, dict)]
            org = next((str(i["full_name"]).split("/", 1)[0] for i in items
                        if "full_name" in i), "local")
            result["items"] = [{"full_name": f"{org}/{self.NESTED}"}, *items]
        return msg


@mutant("org-repos-full-ids", "FC-111")
class OrgReposFullIds(Hooks):
    """org/repos lists full ids (<org>/<name>) instead of names relative to the org."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "org/repos" and result is not None:
            org = req.params.get("org")
            result["repos"] = [f"{org}/{n}" if isinstance(n, str) else n
                               for n in result.get("repos") or []]
        return msg


@mutant("org-repos-epoch-pushed-at", "FC-112")
class OrgReposEpochPushedAt(Hooks):
    """org/repos answers objects whose pushed_at is epoch seconds as a string (names kept)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "org/repos" and result is not None:
            result["repos"] = [{"name": n, "pushed_at": "1705312800"} if isinstance(n, str) else n
                               for n in result.get("repos") or []]
        return msg


@mutant("clone-url-parent-dir", "FC-113")
class CloneUrlParentDir(Hooks):
    """repo/clone_url of a git repository names the directory above it (not a repository)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is not None and req.method == "repo/clone_url" and result is not None
                and is_git(proxy, req.params.get("repo"))):
            result["clone_url"] = str(proxy.fixture)
        return msg


@mutant("web-url-root-refused", "FC-114")
class WebUrlRootRefused(Hooks):
    """repo/web_url of the repository root (path "") answers an error."""

    def request(self, proxy, req, msg):
        if (req.method == "repo/web_url" and not req.params.get("path")
                and repo_name(req.params.get("repo")) in fixture_repos(proxy)):
            proxy.error(req, "repo/web_url needs a path", kind="not_found")
            return None
        return msg


@mutant("org-url-href", "FC-115")
class OrgUrlHref(Hooks):
    """org/url answers {"href": ...} instead of {"url": ...}."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "org/url" and result is not None and "url" in result:
            result["href"] = result.pop("url")
        return msg


@promoted("clone-url-not-cloneable", "FC-113", '§3.9: "MUST A URL (or path) that git clone accepts"')
class CloneUrlNotCloneable(Hooks):
    """repo/clone_url of the git-backed repo points at a path that does not exist.

    Hides on: repo/clone_url's value, which only FC-113 clones (FC-053 compares it, FC-063 errors it).
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/clone_url" and result is not None and is_git(
                proxy, req.params.get("repo")):
            result["clone_url"] = str(proxy.fixture / "no-such-clone-source.git")
        return msg


@promoted("search-repos-git-suffix", "FC-110",
          '§1: "MUST An adapter must accept back, unchanged, every repository id it has emitted"')
class SearchReposGitSuffix(Hooks):
    """search/repos names a git repository by its clone directory, <org>/<name>.git.

    Hides on: the vcs repository; FC-110 asks alpha first, and the other
    cases ask search/repos of alpha only.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "search/repos" or result is None:
            return msg
        for item in result.get("items") or []:
            name = item.get("full_name") if isinstance(item, dict) else None
            if isinstance(name, str) and is_git(proxy, name):
                item["full_name"] = f"{name}.git"
        return msg


@promoted("org-repos-rich-full-path", "FC-111",
          '§3.2: "MUST Entries are repository names relative to the org, not full ids"')
class OrgReposRichFullPath(Hooks):
    """org/repos answers git repositories as objects whose name is the full id <org>/<name>.

    Hides on: the object form, for the vcs repository only; the primary
    mutant prefixes every bare string entry.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "org/repos" and result is not None:
            org = req.params.get("org")
            result["repos"] = [{"name": f"{org}/{n}", "archived": False}
                               if isinstance(n, str) and is_git(proxy, n) else n
                               for n in result.get("repos") or []]
        return msg


@promoted("org-repos-git-date-pushed-at", "FC-112",
          '§3.2: pushed_at "string, ISO-8601"; RULINGS "a member that is present ... has its stated '
          'JSON type"')
class OrgReposGitDatePushedAt(Hooks):
    """org/repos answers git repositories as objects whose pushed_at is git's default date format.

    Hides on: the vcs repository's entry only (the other entries stay bare
    strings); the primary mutant breaks every entry.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "org/repos" or result is None:
            return msg
        repos = []
        for n in result.get("repos") or []:
            if isinstance(n, str) and is_git(proxy, n):
                import subprocess
                run = subprocess.run(["git", "-C", str(proxy.fixture / n), "log", "-1",
                                      "--format=%cd", VCS_DEFAULT_BRANCH],
                                     capture_output=True, text=True)
                n = {"name": n, "pushed_at": run.stdout.strip() or "Mon Jan 15 10:00:00 2024 +0100"}
            repos.append(n)
        result["repos"] = repos
        return msg


@promoted("web-url-git-repo-no-remote", "FC-114",
          '§3.10: "Result: {"url": <string>} (required)"')
class WebUrlGitRepoNoRemote(Hooks):
    """repo/web_url of a git repository answers an error (the link is built from its origin remote, which it lacks).

    Hides on: the vcs repository; FC-114 and the other cases ask web_url of
    alpha (a plain directory) only.
    """

    def request(self, proxy, req, msg):
        if req.method == "repo/web_url" and is_git(proxy, req.params.get("repo")):
            proxy.error(req, "no remote 'origin' to build a web link from", kind="not_found")
            return None
        return msg


@promoted("org-url-empty-before-listing", "FC-115",
          '§3.11: "Result: {"url": <string>} — the organisation\'s web page"')
class OrgUrlEmptyBeforeListing(Hooks):
    """org/url answers an empty url until org/repos has listed that org in this process.

    Hides on: a process that has not listed the org yet; in the suite's
    processes org/repos is always asked before org/url (FC-111 before
    FC-115, FC-053's and the transport cases' asks).
    """

    def __init__(self):
        self.listed: set = set()

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        if req.method == "org/repos":
            self.listed.add(req.params.get("org"))
        elif req.method == "org/url" and req.params.get("org") not in self.listed:
            result["url"] = ""
        return msg


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


@promoted("clone-url-remote-bad-scheme", "FC-113",
          '§3.9: "MUST A URL (or path) that git clone accepts"')
class CloneUrlRemoteBadScheme(ResultEdit):
    """repo/clone_url answers htps://forge.example/<org>/<name>.git (a misspelt scheme git clone refuses) for every repository.

    Hides on: remote URLs, which the suite does not clone (it runs
    offline): only their form can be judged.
    """

    method = "repo/clone_url"

    def edit(self, proxy, req, result):
        result["clone_url"] = f"htps://forge.example/{req.params.get('repo')}.git"


@promoted("clone-url-remote-no-path", "FC-113",
          '§3 repo/clone_url: Result {clone_url}, the URL that clones that repository')
class CloneUrlRemoteNoPath(ResultEdit):
    """repo/clone_url of the git repository answers https://forge.example/ (a server, no repository path).

    Hides on: a remote URL's path; FC-113 checked a remote URL against a
    pattern whose path was optional.
    """

    method = "repo/clone_url"

    def applies(self, proxy, req):
        return is_git(proxy, req.params.get("repo"))

    def edit(self, proxy, req, result):
        result["clone_url"] = "https://forge.example/"
