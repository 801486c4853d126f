"""Path mutants, part c: each breaks a case's MUST where the case does not look
first (another repository, ref, commit, file, batch, method, generation or
moment), is in the matrix (``@promoted``) and fails exactly its owner.

Written like tests/adapters/mutants_deep.py (a hook class per switch, its
docstring's first line what it changes, then "Hides on:").
"""

from __future__ import annotations

from tests.adapters.mutants_deep import promoted  # noqa: F401
from tests.adapters.proxy import Hooks  # noqa: F401


from fixture.catalog import VCS_DEFAULT_BRANCH
from tests.adapters.hooks import BlobIds, git_blob_id, is_git, read_worktree
from tests.adapters.proxy import result_of


# ---------------------------------------------------------------- listings and links

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


# ---------------------------------------------------------------- revision round trips

@promoted("log-path-ignores-ref", "FC-130",
          '§3.7: "MUST With ref, history is walked from that revision"')
class LogPathIgnoresRef(Hooks):
    """repo/log with a path walks the default branch whatever ref is asked (the path-filtered query drops the ref).

    Hides on: repo/log with both path and ref; FC-130 asks refs without a
    path, and the path-filtered logs of the other cases are at ref null.
    """

    def request(self, proxy, req, msg):
        if (req.method == "repo/log" and isinstance(msg.get("params"), dict)
                and req.params.get("path")):
            msg["params"]["ref"] = None
        return msg


@promoted("blame-hex-ref-default", "FC-131",
          '§3.8: "MUST sha is the commit that last changed those lines"; §3.6: "MUST Every name and sha '
          'listed here is accepted back as a ref by ... repo/blame"')
class BlameHexRefDefault(Hooks):
    """repo/blame at a commit id (40 hex) blames the default branch; branch and tag names are honoured.

    Hides on: commit ids as ref; FC-131 asks the v0.1 tag and the feature
    branch by name.
    """

    def request(self, proxy, req, msg):
        ref = req.params.get("ref")
        if (req.method == "repo/blame" and isinstance(ref, str) and len(ref) == 40
                and all(c in "0123456789abcdef" for c in ref)):
            msg["params"]["ref"] = None
        return msg


@promoted("blob-at-null-ref-binary-git-sha", "FC-133",
          '§3.5: "MUST sha equals the sha the same path has in repo/tree at the same ref"')
class BlobAtNullRefBinaryGitSha(BlobIds):
    """repo/blob_at with ref null reports git's blob id for binary files (NUL bytes); text files keep the tree's ids.

    Hides on: binary files; FC-133 asks three text files.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "blob_at" or ref is not None:
            return sha
        data = read_worktree(proxy, repo, path)
        return git_blob_id(data) if data is not None and b"\0" in data else sha
