"""Controls of a real backend's legal habits: what the GitLab and Bitbucket
adapters do that the reference does not, each legal by the text it cites
(``legal``), each green with only its declared warnings.

- ids refused on sight: blob ids shaped ``<digest>:<path>`` (an id
  scheme of the adapter's own) and any id not of that shape, or not one
  the adapter emitted, refused with not_found before the backend is asked,
  fault repos included (their trees, logs and paths still reach the
  backend and answer auth, rate_limited, provider);
- committer dates: repo/log and repo/commit report the committer date,
  another ISO-8601 instant of the same commit;
- a result for an unknown commit: repo/commit answers a commit for an id
  that names none (FC-108 warns);
- refs paged: repo/refs lists a first page of branches and tags (FC-090
  warns).

They register into ``CONTROLS`` (controls.py imports this module at its end).
"""

from __future__ import annotations

import re

from tests.adapters.controls import control
from tests.adapters.hooks import BlobIds, is_git, repo_name
from tests.adapters.proxy import Hooks, result_of

# The adapter's own blob id grammar: the reference's id (sha256 of the
# bytes), a colon, the path (Bitbucket's is <commit>:<path>; a digest keeps
# the ids content ids, so nothing but the shape differs from the reference).
OWN_ID = re.compile(r"^([0-9a-f]{64}):(.+)$", re.S)


@control("ids-refused-on-sight")
class IdsRefusedOnSight(BlobIds):
    """Blob ids are "<digest>:<path>"; repo/blob of an id of any other shape answers not_found without asking the backend, fault repos included.

    Legal: §4 ("Treat ids as opaque strings"; "Never assume a particular id
    algorithm"); §3.4 ("Unknown repository or id -> error, SHOULD kind
    not_found"); RULINGS "Fault repos" ("An id the adapter can tell it never
    emitted may be refused on sight with not_found, fault repo or not").
    Trees, logs and paths of the fault repos still reach the backend.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        return f"{sha}:{path}" if isinstance(path, str) and path else sha

    def request(self, proxy, req, msg):
        if req.method != "repo/blob":
            return msg
        sha = req.params.get("sha")
        own = OWN_ID.match(sha) if isinstance(sha, str) else None
        if own is None:
            proxy.error(req, f"no blob {sha!r}: not an id this adapter hands out",
                        kind="not_found")
            return None
        req.params["sha"] = own.group(1)   # the digest is the reference's own id
        return msg


class CommitterDates(Hooks):
    """Base: each date of ``items(result)`` of ``methods``' results on a git
    repository becomes git's committer date of the commit it names, in the
    committer's own offset (most commits' two dates are one)."""

    methods: tuple[str, ...] = ()

    def __init__(self):
        self.dates: dict[str, dict[str, str]] = {}

    def committed(self, proxy, repo) -> dict[str, str]:
        """sha -> the committer date (strict ISO-8601) of every commit of ``repo``."""
        name = repo_name(repo)
        if name not in self.dates:
            import subprocess
            run = subprocess.run(["git", "-C", str(proxy.fixture / name), "log", "--all",
                                  "--format=%H %cI"], capture_output=True, text=True)
            self.dates[name] = dict(line.split() for line in run.stdout.splitlines()
                                    if len(line.split()) == 2)
        return self.dates[name]

    def items(self, result: dict) -> list:
        return []

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is None or req.method not in self.methods or result is None
                or not is_git(proxy, req.params.get("repo"))):
            return msg
        dates = self.committed(proxy, req.params.get("repo"))
        for item in self.items(result):
            if isinstance(item, dict) and item.get("sha") in dates:
                item["date"] = dates[item["sha"]]
        return msg


@control("log-committer-dates")
class LogCommitterDates(CommitterDates):
    """repo/log items carry each commit's committer date (the vcs tip's is two days after its author date).

    Legal: §3.7 ("MUST date is ISO-8601"); RULINGS "Content and revisions"
    ("repo/log and repo/commit dates are any ISO-8601 instant of that commit
    the backend reports (author or committer date)").
    """

    methods = ("repo/log",)

    def items(self, result):
        items = result.get("items")
        return items if isinstance(items, list) else []


@control("commit-committer-dates")
class CommitCommitterDates(CommitterDates):
    """repo/commit answers each commit's committer date (the vcs tip's is two days after its author date).

    Legal: §3.12 (date: "string, ISO-8601"); RULINGS "Content and
    revisions" (author or committer date).
    """

    methods = ("repo/commit",)

    def items(self, result):
        return [result]


@control("unknown-commit-result", warns=("FC-108",))
class UnknownCommitResult(Hooks):
    """repo/commit of an id git cannot resolve in vcs answers a commit of that id with no files (FC-108 warns).

    Legal: §3.12 sets no MUST on an id that names no commit; RULINGS
    "Content and revisions" ("a result warns, it does not fail"). The
    reply is well-formed: the id as asked, an author, an ISO-8601 date, an
    empty message and file list.
    """

    def request(self, proxy, req, msg):
        if req.method != "repo/commit" or not is_git(proxy, req.params.get("repo")):
            return msg
        sha = req.params.get("sha")
        if not isinstance(sha, str) or self.resolves(proxy, req.params["repo"], sha):
            return msg
        proxy.reply(req, {"sha": sha, "author": "unknown", "date": "1970-01-01T00:00:00Z",
                          "message": "", "files": []})
        return None

    @staticmethod
    def resolves(proxy, repo, sha: str) -> bool:
        import subprocess
        run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), "rev-parse",
                              "--verify", "--quiet", "--end-of-options", f"{sha}^{{commit}}"],
                             capture_output=True)
        return run.returncode == 0


@control("refs-first-page", warns=("FC-090",))
class RefsFirstPage(Hooks):
    """repo/refs lists only the first branch and the first tag, as a forge API's first page would (FC-090 warns).

    Legal: §3.6 sets no MUST on completeness: every entry it lists must be
    well-formed and accepted back as a ref, which these are. Trees, logs
    and blobs at the refs it leaves out are still served by name.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/refs" or result is None:
            return msg
        for key in ("branches", "tags"):
            listed = result.get(key)
            if isinstance(listed, list) and len(listed) > 1:
                result[key] = listed[:1]
        return msg
