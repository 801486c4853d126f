"""Controls of a real backend's legal habits, each green with only its declared warnings.

``TABLE`` maps each switch to its Variant (tests/adapters/controls/__init__.py
gathers the tables into CONTROLS).
"""

from __future__ import annotations

import itertools
import re

from tests.adapters.common import CommitterDates, shorten
from tests.adapters.hooks import BlobIds, HitsEdit, Variant, is_git, kept_in, registrar, repo_name
from tests.adapters.http_double import HttpDouble
from tests.adapters.proxy import Hooks, error_data, result_of

TABLE: dict[str, Variant] = {}
control = registrar(TABLE)
kept = promoted = kept_in(TABLE)   # deep controls (controls_deep.py) the suite passes


@kept("changing-unknown-members",
         'RULINGS "Never compare whole objects": an unknown member, with any value that may change '
         'from call to call, never fails anything; §7.2 reader tolerance (MUST ignore unknown members)')
class ChangingUnknownMembers(Hooks):
    """Every result, item, entry, error, error.data and partial carries x_nonce, a new value on every message.

    initialize carries x_started_at (the generation's start) and an unknown
    capability whose value changes too.
    """

    def __init__(self):
        self.counter = itertools.count(1)

    def _mark(self, value):
        if isinstance(value, dict):
            for inner in value.values():
                self._mark(inner)
            value["x_nonce"] = next(self.counter)
        elif isinstance(value, list):
            for inner in value:
                self._mark(inner)

    def reply(self, proxy, req, msg):
        import datetime as _dt
        result = result_of(msg)
        if result is not None:
            caps = result.get("capabilities") if req is not None and req.method == "initialize" else None
            self._mark(result)
            if isinstance(caps, dict):
                caps.pop("x_nonce", None)
                caps["x_rollout"] = next(self.counter)
                result["x_started_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat()
        elif isinstance(msg.get("error"), dict):
            msg["error"]["x_nonce"] = next(self.counter)
            data = error_data(msg)
            if data is not None:
                data["x_nonce"] = next(self.counter)
        return msg

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if isinstance(params, dict):
            self._mark(params.get("items"))
            params["x_nonce"] = next(self.counter)
        return msg


@promoted("backend-page-100",
         'RULINGS "Bounded compute": a search that stops at a backend page larger than limit with '
         'truncated: true passes (a warning when it returned many times limit)', warns=("FC-070",))
class BackendPage100(Hooks):
    """search/code works in backend pages of 100: a limit under 100 still returns the first page, truncated true when more exist."""

    PAGE = 100

    def request(self, proxy, req, msg):
        limit = req.params.get("limit")
        if req.method == "search/code" and type(limit) is int and limit < self.PAGE:
            req.params["limit"] = self.PAGE
        return msg


@kept("abbreviated-commit-ids",
         'RULINGS "Commit ids are in the backend\'s vocabulary: any string that is accepted back as a '
         'ref ... and resolves to the right commit passes, abbreviated or not"; §3.12 reply sha stays full')
class AbbreviatedCommitIds(Hooks):
    """Commit ids in repo/refs, repo/log, repo/blame and repo/commit's parents are 12-hex abbreviations (accepted back as refs)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        if req.method == "repo/refs":
            for key in ("branches", "tags"):
                for ref in result.get(key) or []:
                    if isinstance(ref, dict):
                        ref["sha"] = shorten(ref.get("sha"))
        elif req.method in ("repo/log", "repo/blame"):
            for row in result.get("items" if req.method == "repo/log" else "ranges") or []:
                if isinstance(row, dict):
                    row["sha"] = shorten(row.get("sha"))
        elif req.method == "repo/commit" and isinstance(result.get("parents"), list):
            result["parents"] = [shorten(p) for p in result["parents"]]
        return msg


@kept("short-commit-ids-refused",
      '§3.12 repo/commit "SHOULD accept any commit-ish the backend resolves": a backend that '
      'takes only the full ids it emitted may refuse an abbreviated one')
class ShortCommitIdsRefused(Hooks):
    """repo/commit of an abbreviated hex id (4 to 39 hex digits) answers not_found; full ids and names are served."""

    def request(self, proxy, req, msg):
        sha = req.params.get("sha") if req.method == "repo/commit" else None
        if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{4,39}", sha):
            proxy.error(req, f"unknown revision {sha} (full commit ids only)", kind="not_found")
            return None
        return msg


def commit_rows(req, result: dict) -> list:
    """The rows of a repo/log, repo/blame or repo/commit result that carry a
    commit's author and date (log items, blame ranges, the commit itself)."""
    return {"repo/log": result.get("items"), "repo/blame": result.get("ranges"),
            "repo/commit": [result]}.get(req.method) or []


@kept("login-authors",
         'RULINGS: "Author strings are the backend\'s: repo/log\'s author is a required string, not '
         'necessarily git\'s author name"; §3.8 blame author matching is a SHOULD', warns=("FC-098",))
class LoginAuthors(Hooks):
    """Authors in repo/log, repo/blame and repo/commit are the backend's login ("ada.marsh"), not git's name."""

    @staticmethod
    def login(name):
        return ".".join(name.lower().split()) if isinstance(name, str) else name

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        for row in commit_rows(req, result):
            if isinstance(row, dict) and "author" in row:
                row["author"] = self.login(row["author"])
        return msg


@kept("annotated-tag-object",
         'RULINGS: "An annotated tag\'s sha in repo/refs may be the tag object\'s id or the tagged '
         'commit\'s id; either must resolve, as a ref, to that commit"')
class AnnotatedTagObject(Hooks):
    """repo/refs reports an annotated tag's own object id (the reference reports the tagged commit)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/refs" or result is None:
            return msg
        import subprocess
        run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(req.params.get("repo"))),
                              "for-each-ref", "--format=%(refname:short)%00%(objectname)", "refs/tags"],
                             capture_output=True, text=True)
        objects = dict(line.split("\0", 1) for line in run.stdout.splitlines() if "\0" in line)
        for tag in result.get("tags") or []:
            if isinstance(tag, dict) and tag.get("name") in objects:
                tag["sha"] = objects[tag["name"]]
        return msg


class DateRewrite(Hooks):
    """Rewrite every date of repo/log, repo/blame and repo/commit through ``spell(datetime)``."""

    def spell(self, when: _dt.datetime) -> str:
        return when.isoformat()

    def _one(self, row):
        import datetime as _dt
        if isinstance(row, dict) and isinstance(row.get("date"), str):
            try:
                when = _dt.datetime.fromisoformat(row["date"].replace("Z", "+00:00"))
            except ValueError:
                return
            row["date"] = self.spell(when)

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        for row in commit_rows(req, result):
            self._one(row)
        return msg


@kept("dates-utc",
         'RULINGS "Dates are ISO-8601; compare instants, never strings (Z and +00:00 are both fine; '
         'any offset is fine)"')
class DatesUtc(DateRewrite):
    """Dates in UTC: log and commit dates end in "Z", blame dates in "+00:00"."""

    def reply(self, proxy, req, msg):
        self.z = req is None or req.method != "repo/blame"
        return super().reply(proxy, req, msg)

    def spell(self, when):
        import datetime as _dt
        text = when.astimezone(_dt.timezone.utc).isoformat()
        return text.replace("+00:00", "Z") if self.z else text


@kept("dates-basic-format",
         'RULINGS "The extended format passes; the basic format (20260302T093000Z) passes with a '
         'warning"', warns=("FC-094", "FC-098", "FC-100"))   # log, blame and commit dates
class DatesBasicFormat(DateRewrite):
    """Dates in ISO-8601 basic format (20260302T093000Z)."""

    def spell(self, when):
        import datetime as _dt
        return when.astimezone(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


@promoted("optional-members-absent",
         'PROTOCOL §3.0 "a receiver MUST accept every member marked optional being absent"; RULINGS '
         '"A case never fails an adapter for omitting an optional field"')
class OptionalMembersAbsent(HitsEdit):
    """Optional members are left out: tree size and truncated false, hit line/branch/sha/located, refs default false, commit parents, log truncated false, name."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        if result.get("truncated") is False:
            result.pop("truncated")
        if req.method == "initialize":
            result.pop("name", None)
        elif req.method == "repo/tree":
            for entry in result.get("entries") or []:
                if isinstance(entry, dict):
                    entry.pop("size", None)
        elif req.method == "search/code":
            self._hits(result.get("items"))
        elif req.method == "repo/refs":
            for branch in result.get("branches") or []:
                if isinstance(branch, dict) and branch.get("default") is False:
                    branch.pop("default")
        elif req.method == "repo/commit":
            result.pop("parents", None)
        return msg

    def hit(self, hit):
        for key in ("line", "branch", "sha", "located"):
            hit.pop(key, None)


@kept("tree-branch-absent",
         'PROTOCOL §3.3 branch: default "main"; "SHOULD branch echoes the served revision" (SHOULD '
         'warns, RULINGS "Strength")', warns=("FC-091",))
class TreeBranchAbsent(Hooks):
    """repo/tree leaves out branch (optional; the host assumes "main")."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/tree" and result is not None:
            result.pop("branch", None)
        return msg


@promoted("error-data-extras",
         'RULINGS "Unknown keys anywhere (results, items, errors, capabilities) are ignored, whatever '
         'their value type"')
class ErrorDataExtras(Hooks):
    """Errors carry extra members in data (http_status, request_id, the backend's body) and beside it."""

    def __init__(self):
        self.counter = itertools.count(1)

    def reply(self, proxy, req, msg):
        err = msg.get("error")
        if isinstance(err, dict):
            n = next(self.counter)
            err.setdefault("data", {})
            if isinstance(err["data"], dict):
                err["data"].update({"http_status": 404 + n % 100, "request_id": f"req-{n:06d}",
                                    "backend": {"message": err.get("message"), "errors": [n, None]}})
            err["x_trace"] = [n]
        return msg


class TestDouble(Hooks):
    """A loopback HTTP test double started in the adapter's process at start
    (a LISTEN socket during initialize), used on the first repo/tree only,
    after initialize. ``fetch(url)`` is how the adapter reaches it; when the
    fetch fails, repo/tree answers kind network (what a real adapter does)."""

    def start(self, proxy):
        self.double = HttpDouble(lambda path: b'{"ok": true}')
        self.url = f"http://127.0.0.1:{self.double.port}/api/v4/projects"

    fetched = False

    def fetch(self, url: str) -> None:
        raise NotImplementedError

    def request(self, proxy, req, msg):
        if req.method == "repo/tree" and not self.fetched:
            self.fetched = True
            try:
                self.fetch(self.url)
            except OSError as exc:
                proxy.log(f"test double unreachable: {exc}")
                proxy.error(req, f"backend unreachable: {exc}", kind="network")
                return None
        return msg


@kept("loopback-test-double",
         'RULINGS: FC-052 "counts connections opened by the adapter\'s process tree during initialize '
         '..., not listening sockets"; the test double is contacted only after initialize')
class LoopbackTestDouble(TestDouble):
    """The wrapper's loopback test double listens from the start; the adapter connects to it directly on its first repo/tree."""

    def fetch(self, url):
        import socket
        with socket.create_connection(self.double.address, timeout=5) as conn:
            conn.sendall(b"GET /api/v4/projects HTTP/1.0\r\nHost: test-double\r\n\r\n")
            if not conn.recv(64).startswith(b"HTTP/1."):
                raise OSError("the test double did not answer HTTP")


@kept("proxy-honouring-client",
         'RULINGS: FC-052 "... a client that honours the proxy variables must still work after '
         'initialize"; §7.1 the child inherits the host\'s environment')
class ProxyHonouringClient(TestDouble):
    """An HTTP client honouring HTTP(S)_PROXY (urllib's default) GETs the loopback test double on its first repo/tree."""

    def fetch(self, url):
        import urllib.request   # (here: every test adapter process loads this module)
        urllib.request.urlopen(url, timeout=5).read()


@kept("proxy-client-late-double",
         'RULINGS: FC-052 "... a client that honours the proxy variables must still work after '
         'initialize"; nothing listens or connects during initialize')
class ProxyClientLateDouble(ProxyHonouringClient):
    """Like proxy-honouring-client, but the test double starts only at the first repo/tree (nothing listens during initialize).

    Separates FC-052's two false positives: this one meets only the proxy
    variables pointing at a canary that is gone after initialize.
    """

    def start(self, proxy):
        self.fetched = False

    def request(self, proxy, req, msg):
        if req.method == "repo/tree" and not self.fetched:
            TestDouble.start(self, proxy)
        return super().request(proxy, req, msg)


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
