"""The exploring state machine: a drawn repository set, one adapter, a drawn program.

``Explore`` is a hypothesis ``RuleBasedStateMachine``. Its initialize rule
draws a repository set (fixture/drawn.py), writes it to a private temp
folder and starts the adapter on it the way the harness does (wire/: own
process group, the contract's argv and environment, a host's initialize).
Once started it asks the requests that touch the set's costly shapes
(``aim``). Its rules send what the host sends, at drawn repositories, refs, paths and
terms: repo/tree, repo/blob of listed ids, search/code one-shot and
streamed with a limit, repo/refs, repo/log, repo/blob_at, repo/blame,
repo/commit (of any drawn commit by its full or abbreviated id, or of a branch or tag name),
repo/web_url, repo/clone_url, the listings (search/repos, org/repos,
org/url), requests cancelled in flight, requests at a fault repository, a
kill (the next request respawns) and a respawn. Every reply is judged
(cases/explore/judges.py) against the drawn bytes and git, and every frame
by the protocol monitor; the first violation ends the example by raising
``Found``, one subclass per owning case (so hypothesis shrinks each owner's
failure on its own).

The runner (cases/explore/runner.py) hands the machine a ``Context``: the
settings, where to write, the clock, and the record of what failed.

Each rule sends one kind of request the host sends and computes, beside it,
the expectations its reply is judged against.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from cases.harness.fixture_view import FixtureView
from cases.judges import monitoring
from cases.kit.commit_ids import commit_by_stamp, git_commit_of
from cases.explore import judges as J
from cases.kit.formats import b64_loose   # b64: bytes, not the encoding (the blob case's)
from cases.kit.settings import CACHE_BYTES, CACHE_PROVIDER
from cases.explore.drawing import repo_sets
from fixture import drawn as D
from wire.errors import ProviderError, SpawnError
from wire.messages import (Blame, Blob, BlobAt, CloneUrl, Commit, InitializeResult, Log, OrgRepos,
                           Refs, SearchRepos, SearchResult, Tree, WebUrl, read)
from wire.monitor import Monitor
from wire.transport import Provider

PICK = st.integers(0, 255)      # an index into whatever list a rule picks from (shrinks to 0)
EXACT = "exact"                 # a limit of exactly the number of files holding the term
LIMITS = (500, 1, 2, EXACT)     # the host's search budget, and budgets a drawn set can reach
SEARCH_MODES = ("one-shot", "streamed", "partial false")
IN_FLIGHT = (2, 9, 12)          # requests written together: a pair, and past FC-120's eight
LOG_LIMITS = (None, 1, 2)
LISTINGS = ("org/repos", "search/repos", "org/url")
REPO_QUERIES = ("name", "part", "upper", "empty")   # what the pick popup sends as the user types
# A repository a repo: qualifier can name: the query grammar (§3.13) has no
# quoting for an id holding a blank or a quote, so a hostile name is searched unscoped.
SCOPABLE = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*")


class Found(Exception):
    """A violation ended the example (one subclass per owning case)."""

    def __init__(self, violation: J.Violation):
        super().__init__(violation.sentence())
        self.violation = violation


_FOUND: dict[str, type] = {}


def found_class(case_id: str) -> type:
    if case_id not in _FOUND:
        _FOUND[case_id] = type(f"Found_{case_id.replace('-', '_')}", (Found,), {})
    return _FOUND[case_id]


class CannotRun(BaseException):
    """The adapter cannot be started or initialized: the run ends (exit 2).
    A BaseException, so hypothesis does not shrink it as a failure."""


class BudgetSpent(BaseException):
    """The budget ran out before a failure: the run ends (not a failure)."""


class GitView:
    """git in one drawn repository, for cases.kit.gitfacts (``.path``, ``git_bytes``, ``memo``).
    Pathspecs are literal: drawn names hold '?' and other glob characters."""

    def __init__(self, path: Path, home: Path, repo_id: str = "", memo: dict | None = None):
        self.path = path
        self.repo_id = repo_id
        # git's answers about this repository (cases.kit.memo.remembered); the
        # runner shares one among the copies of one build (Context.git_memo)
        self.memo: dict = {} if memo is None else memo
        self._env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home),
                     "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                     "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_LITERAL_PATHSPECS": "1"}

    def git_bytes(self, *args: str) -> bytes:
        proc = subprocess.run(["git", "-C", str(self.path), *args], env=self._env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.decode("utf-8", "replace").strip())
        return proc.stdout

    def repo(self, _name: str) -> str:
        """The repository id (cases.kit.commit_ids asks ``fx.repo(VCS)``: here, this one)."""
        return self.repo_id

    def commit_of(self, rev: str) -> str | None:
        try:
            return self.git_bytes("rev-parse", "--verify", "-q", f"{rev}^{{commit}}").decode().strip()
        except RuntimeError:
            return None


class CommitHost:
    """The adapter as the commit cases' helpers ask it (cases.kit.commitfacts:
    ``request``, ``generation``, ``caps``): asking a commit back to resolve
    an id the adapter spelled its own way."""

    def __init__(self, provider: Provider, caps):
        self.provider, self.caps = provider, caps

    def request(self, method: str, params: dict, **kw):
        return self.provider.request(method, params, **kw)

    @property
    def generation(self) -> int:
        return self.provider.generation


class Explore(RuleBasedStateMachine):
    """One drawn repository set, one adapter, a drawn program of requests."""

    ctx = None   # the runner's Context, set on a subclass per run

    def __init__(self):
        super().__init__()
        self.p: Provider | None = None
        self.tmp: Path | None = None
        self.program: list[str] = []
        self.listed: list[tuple[str, str, str, bytes]] = []   # (repo id, path, sha, bytes)
        self.ids: dict[tuple, tuple[str, int]] = {}           # (repo, ref, path) -> (sha, gen)
        self.contents: dict[tuple[str, str], bytes] = {}      # (repo id, sha) -> bytes
        self.tree_ids: dict[tuple, str] = {}                  # (repo, ref, path) -> sha
        self.taken = 0
        self.last_call = None
        self.shorts: dict[str, dict[str, str]] = {}          # repo name -> full id -> %h
        self.link_text: dict[tuple, bytes] = {}               # (repo, path, sha) -> link target

    # -- the set and the adapter --------------------------------------------

    @initialize(drawn=repo_sets(), opening=st.data())
    def start(self, drawn, opening):
        ctx = self.ctx
        ctx.before_example()           # may raise BudgetSpent, or reject() past the shrink bound
        self.drawn = drawn
        # named as a run's fixture copy and cache are, so --replay maps the
        # transcript's paths onto its own (cases/cli/replay.py)
        self.tmp = Path(tempfile.mkdtemp(prefix="forge-explore-", dir=ctx.temp))
        self.fx = self.tmp / "forge-fixture-drawn"
        self.commits = ctx.materialize(drawn, self.fx)
        home = self.tmp / "git-home"
        home.mkdir()
        self.git = {r.name: GitView(self.fx / r.name, home, self.rid(r.name),
                                    ctx.git_memo(drawn, r.name))
                    for r in drawn.repos if r.is_git}
        # the drawn set as the listing cases' judges read a fixture (repo ids, walks)
        self.view = FixtureView(self.fx, ctx.settings.org, False, None, home)
        cache = self.tmp / "cache-explore" / "rootle" / "providers" / CACHE_PROVIDER
        cache.mkdir(parents=True)
        s = ctx.settings
        extra = {"XDG_CACHE_HOME": str(cache.parents[2])}
        self.p = Provider(s.argv_for(self.fx), env=s.adapter_env(self.fx, extra=extra),
                          deadline_s=s.deadline_s,
                          init_params={"protocol": 1, "cache_bytes": CACHE_BYTES,
                                       "cache_dir": str(cache)},
                          stderr_dir=self.tmp, monitor=Monitor())
        try:
            self.p.start()
        except (SpawnError, ProviderError) as exc:
            raise CannotRun(f"the adapter did not start on a drawn set: "
                            f"{getattr(exc, 'message', None) or exc}") from None
        init = self.p.init_results[0] if self.p.init_results else {}
        self.caps = read(init, InitializeResult).model
        self.caps = self.caps.capabilities if self.caps is not None else None
        self.host = CommitHost(self.p, self.caps)
        self.monitor()
        self.aim()
        self.open(opening)

    def aim(self) -> None:
        """The requests that touch the costly shapes this set holds, asked
        before the drawn program (a drawn rule reaches each only now and
        then): repo/tree of each repository at ref null, repo/blob_at of a
        blob above 1 MiB, repo/commit of the wide commit and of the merge,
        search/repos of nothing (the pick popup lists every repository, hostile
        names among them), org/repos of a listing brought to a page size, and
        one request at a fault repository. The rules judge each reply, as in
        the program."""
        for at, repo in enumerate(self.drawn.repos):
            if repo.files:
                self.repo_tree(at)        # at < len(repos): ref null
        gits = [x for x in self.drawn.repos if x.is_git]
        for r, repo in enumerate(gits):
            if repo.history.empty:
                continue
            files = dict(repo.files)
            big = [f for f, p in enumerate(sorted(files)) if len(files[p]) > D.ONE_MIB]
            if big and self.cap("log"):
                self.repo_blob_at(r, 0, big[0])           # ref null, the big blob
            h = repo.history
            wide = [f"s{i}" for i, snap in enumerate(h.side_commits)
                    if any(p.startswith(D.WIDE_FOLDER + "/") for p, _ in snap)][:1]
            merge = [f"d{len(h.commits) - 1}"] if h.merged else []
            for label in (wide + merge) if self.cap("commit") else ():
                self.judge_commit(repo, self.commits[repo.name][label], label)
        self.search_repos(0, "empty")
        if self.drawn.fillers and self.cap("orgs"):
            self.repos_of_org()
        if self.drawn.faults and not self.ctx.settings.no_faults:
            self.request_at_fault(0, 0)

    def open(self, data) -> None:
        """A drawn opening: some of the program's rules, each once at most,
        in a drawn order and with drawn arguments (as the program draws
        them), before the program. hypothesis draws the program's rules
        unevenly (an early example often repeats one rule), so this gives
        each kind of request its turn within the first examples; it shrinks
        to no opening."""
        rules = type(self).setup_state().rules
        picked = data.draw(st.lists(st.integers(0, len(rules) - 1), unique=True,
                                    max_size=len(rules)), label="opening")
        for k in picked:
            rule = rules[k]
            if all(ok(self) for ok in rule.preconditions):
                rule.function(self, **{name: data.draw(strategy)
                                       for name, strategy in rule.arguments_strategies.items()})

    def teardown(self):
        if self.p is not None:
            self.p.close()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers ------------------------------------------------------------

    def rid(self, name: str) -> str:
        return f"{self.ctx.settings.org}/{name}"

    def cap(self, name: str) -> bool:
        return bool(self.caps is not None and getattr(self.caps, name, False))

    def refs_of(self, repo: D.DrawnRepo) -> list:
        """The refs a rule may ask at: null, and for git the branches, both tags
        and the oldest commit's id."""
        if not repo.is_git or not self.cap("refs") or repo.history.empty:
            return [None]
        h = repo.history
        return [None, h.default_branch, h.side_branch, D.LIGHT_TAG, D.ANNOTATED_TAG,
                self.commits[repo.name]["d0"]]

    def files_at(self, repo: D.DrawnRepo, ref) -> dict[str, bytes]:
        if ref is None:
            return dict(repo.files)
        return dict(repo.history.labels()[self.label_of(repo, ref)])

    def links_at(self, repo: D.DrawnRepo, ref) -> dict[str, str]:
        """The symbolic links (path -> target) of ``repo`` at ``ref``: a git
        repository's are its tip commit's."""
        if not repo.links or ref is None:
            return dict(repo.links)
        tip = f"d{len(repo.history.commits) - 1}"
        return dict(repo.links) if self.label_of(repo, ref) == tip else {}

    def label_of(self, repo: D.DrawnRepo, ref: str) -> str:
        """The commit label a drawn ref names: a branch, a tag, a commit's full
        or abbreviated (``shortened``) id."""
        h = repo.history
        by_name = {h.default_branch: f"d{len(h.commits) - 1}",
                   h.side_branch: f"s{len(h.side_commits) - 1}",
                   D.LIGHT_TAG: f"d{h.light_tag}", D.ANNOTATED_TAG: f"d{h.annotated_tag}"}
        by_name.update({sha: label for label, sha in self.commits[repo.name].items()})
        if ref not in by_name:
            full = {s: f for f, s in self.abbreviated(repo).items()}
            return by_name[full[ref]]
        return by_name[ref]

    def shortened(self, repo: D.DrawnRepo, ref) -> str | None:
        """git's abbreviated id of ``ref`` when it is a drawn commit's full id
        (asked again at that spelling after the full one), else None."""
        if ref is None or not repo.is_git or ref not in self.commits[repo.name].values():
            return None
        return self.abbreviated(repo)[ref]

    def fail(self, case_id: str, why: str, expected: str, got: str):
        v = J.Violation(case_id, why, expected, got)
        self.raise_(v)

    def raise_(self, v: J.Violation):
        self.ctx.record(v, self)
        raise found_class(v.case_id)(v)

    def step(self, text: str) -> None:
        self.program.append(text)
        self.ctx.requests += 1

    def monitor(self) -> None:
        """Hand the protocol monitor's MUST findings to their owners."""
        found = self.p.findings[self.taken:]
        self.taken += len(found)
        for f in found:
            owner = monitoring.owner_of(f)
            if owner is not None and f.strength == "must":
                self.fail(owner, f"the protocol monitor, {f.where()}", f"no {f.rule} violation",
                          f.detail)

    def ask(self, method: str, params: dict, owner: str, *, stream: bool = False,
            may_refuse: bool = False):
        """Send one request (streamed with partial: true); an error is a
        violation of ``owner``, unless ``may_refuse`` (the protocol leaves the
        choice: a blob above 1 MiB, an empty repository): then the result is
        None. Returns (result, streamed items)."""
        self.step(f"{method} {_show(params)}" + (" streamed" if stream else ""))
        try:
            call = self.p.call(method, {**params, "partial": True} if stream else params)
            self.last_call = call
            result = call.result()
            items = [i for b in call.partials if isinstance(b, list) for i in b] if stream else []
        except ProviderError as exc:
            self.monitor()
            if may_refuse:
                return None, []
            self.fail(owner, f"{method} {_show(params)} answers", "a result",
                      f"an error: {exc.message!r}")
        self.monitor()
        return result, items

    # -- the rules ----------------------------------------------------------

    # Rule names are what each sends: hypothesis orders rules by their number
    # of arguments, then by name, and its simplest program repeats the first
    # enabled one, so a tree (one argument, "repo_tree" < "restart" < "url_of_clone")
    # comes first (repo/refs, one argument too, needs a git repository).
    @rule(at=PICK)
    def repo_tree(self, at):
        """repo/tree at null or a drawn ref; at a commit's full id, then at its
        abbreviated id too (§3.3: no rule makes an adapter resolve an id no
        reply spelled that way, so an error there is accepted; a result is
        that revision's tree)."""
        repo = _pick(self.drawn.repos, at)
        k = at // len(self.drawn.repos)      # ref null half the time: the host asks there most
        ref = None if k % 2 == 0 else _pick(self.refs_of(repo), k // 2)
        self.tree_at(repo, ref)
        short = self.shortened(repo, ref)
        if short is not None:
            self.tree_at(repo, short, may_refuse=True)

    def tree_at(self, repo: D.DrawnRepo, ref, *, may_refuse: bool = False) -> None:
        params = {"repo": self.rid(repo.name), "ref": ref}
        files = self.files_at(repo, ref)
        # an empty repository may be refused (FIXTURES.md "Drawn sets")
        result, _ = self.ask("repo/tree", params, J.COVERAGE, may_refuse=may_refuse or not files)
        model = read(result, Tree).model if result is not None else None
        if model is None:
            return                                 # the shape is the monitor's
        # a symbolic link: PROTOCOL is silent, so it may be left out or listed
        # as any type (FIXTURES.md "Drawn sets"); the other paths are judged
        links = self.links_at(repo, ref)
        listed = [(e.path, e.type) for e in model.entries if e.path not in links]
        v = J.tree_problem(f"repo/tree {_show(params)}", listed, model.truncated, set(files),
                           D.directories(files.items()))
        if v is not None:
            self.raise_(v)
        gen = self.p.generation
        for e in model.entries:
            if e.path in links and e.type != "tree" and links[e.path] in files:
                # its blob: the link's target text (git's) or the target's bytes
                self.link_text[(params["repo"], e.path, e.sha)] = links[e.path].encode()
                self.listed.append((params["repo"], e.path, e.sha, files[links[e.path]]))
            if e.type != "blob" or e.path not in files:
                continue
            self.judge_id(params["repo"], ref, e.path, e.sha, files[e.path], gen)
            self.listed.append((params["repo"], e.path, e.sha, files[e.path]))
            self.tree_ids[(params["repo"], ref, e.path)] = e.sha

    def judge_id(self, repo: str, ref, path: str, sha: str, data: bytes, gen: int) -> None:
        key = (repo, ref, path)
        before = self.ids.get(key)
        if before is not None and before[0] != sha:
            owner = J.SAME_ID if before[1] == gen else J.RESPAWN_ID
            self.fail(owner, f"the id of {path!r} at ref {ref!r} of {repo}",
                      f"{before[0]!r} again (generation {before[1]})",
                      f"{sha!r} (generation {gen})")
        self.ids[key] = (sha, gen)
        other = self.contents.get((repo, sha))
        if other is not None and other != data:
            self.fail(J.SHARED_ID, f"the id {sha!r} of {path!r} in {repo}",
                      "different ids for different contents",
                      f"the same id for {len(other)} and {len(data)} bytes that differ")
        self.contents[(repo, sha)] = data

    @precondition(lambda self: self.listed)
    @rule(i=PICK)
    def repo_blob(self, i):
        from cases.test_trees import judge_big_blob
        repo, path, sha, data = _pick(self.listed, i)
        params = {"repo": repo, "sha": sha}
        big = len(data) > D.ONE_MIB
        result, _ = self.ask("repo/blob", params, J.BLOB, may_refuse=big)
        model = read(result, Blob).model if result is not None else None
        got = b64_loose(model.bytes_b64) if model is not None else None
        if got is not None and big:
            v = J.by_case(J.BIG_BLOB, judge_big_blob, f"repo/blob {_show(params)}", got, data,
                          path)
            if v is not None:
                self.raise_(v)
        elif got is not None and got != data and got != self.link_text.get((repo, path, sha)):
            drawn = next(r for r in self.drawn.repos if self.rid(r.name) == repo)
            other = [ref for ref in self.refs_of(drawn)
                     if self.files_at(drawn, ref).get(path) == got]
            if other:   # the blob is right for its id: the tree listed another revision's
                self.fail(J.TREE, f"the tree listed for {path!r} the id of its content at "
                          f"ref {other[0]!r}", f"the id of its {len(data)} bytes there",
                          f"an id of {len(got)} bytes {got[:40]!r}")
            self.fail(J.BLOB, f"repo/blob of the id listed for {path!r}", f"its {len(data)} bytes "
                      f"{data[:40]!r}", f"{len(got)} bytes {got[:40]!r}")

    @precondition(lambda self: self.drawn.terms and self.cap("code_search"))
    @rule(t=PICK, scoped=st.booleans(), mode=st.sampled_from(SEARCH_MODES),
          limit=st.sampled_from(LIMITS))
    def search_code(self, t, scoped, mode, limit):
        """One-shot (``partial`` absent, or false as some hosts send it) or
        streamed; the limit the host's, small, or exactly the number of files
        holding the term. Judged by the cases' own judges: FC-070's
        judge_limit (one-shot), FC-042's judge_metadata_only (streamed), and
        the line rule on every hit."""
        from cases.kit.replies import Search
        from cases.test_bounded import judge_limit
        from cases.test_streaming import judge_metadata_only
        term, planted = _pick(self.drawn.terms, t)
        want = {(self.rid(n), p) for n, p in planted}
        q = term
        if scoped and SCOPABLE.fullmatch(planted[0][0]):
            name = planted[0][0]
            q = f"repo:{self.rid(name)} {term}"
            want = {(self.rid(n), p) for n, p in planted if n == name}
        streamed = mode == "streamed"
        owner = J.STREAMED if streamed else J.ONE_SHOT
        params = {"q": q, "limit": len(want) if limit == EXACT else limit}
        if mode == "partial false":
            params["partial"] = False
        mark = self.p.transcript.mark()
        result, items = self.ask("search/code", params, owner, stream=streamed)
        reading = read(result, SearchResult)
        if reading.model is None:
            return                                 # the shape is the monitor's
        call = self.last_call
        found = Search(self.p, call, reading, mark, q, streamed)
        v = (J.by_case(owner, judge_metadata_only, found, want) if streamed else
             J.by_case(owner, judge_limit, found, want, term, params["limit"]))
        if v is not None:
            self.raise_(J.Violation(v.case_id, f"{found.what} {_show(params)}: {v.why}",
                                    v.expected, v.got))
        what = f"search/code {_show(params)}" + (" streamed" if streamed else "")
        files = {(self.rid(r.name), p): d for r in self.drawn.repos for p, d in r.files}
        for h in (found.streamed if streamed else found.items):
            if h.line is None or (h.repo, h.path) not in want:
                continue
            why = J.line_problem(h.line, files[(h.repo, h.path)], term)
            if why:
                self.fail(J.LINE, f"{what}: the hit {h.path!r} of {h.repo}",
                          "the 1-based line of a match, lines split on \\n only", why)

    @precondition(lambda self: self.drawn.terms and self.cap("code_search"))
    @rule(t=PICK, scoped=st.booleans(), streamed=st.booleans())
    def search_cancelled(self, t, scoped, streamed):
        """A search/code with its $/cancelRequest in the same write (a user
        typing ahead), judged by FC-045's own judge: it ends with a result. A
        stream still going STREAM_READ_S after the cancel is legal (a cancel
        is advisory) and left to end by itself."""
        from cases.kit.replies import stream_read_s
        from cases.test_streaming import judge_cancelled_reply
        term, planted = _pick(self.drawn.terms, t)
        scoped = scoped and SCOPABLE.fullmatch(planted[0][0])
        q = f"repo:{self.rid(planted[0][0])} {term}" if scoped else term
        params = {"q": q, "limit": 500, **({"partial": True} if streamed else {})}
        what = f"search/code {q!r}" + (" (streamed)" if streamed else " (one-shot)")
        self.step(f"search/code {_show(params)} cancelled at once")
        call = self.p.call("search/code", params, cancel_at_once=True)
        if not call.wait(stream_read_s()):
            return
        self.monitor()
        v = J.by_case(J.CANCELLED, judge_cancelled_reply, call, params, what)
        if v is not None:
            self.raise_(v)

    @rule(n=st.sampled_from(IN_FLIGHT), picks=st.lists(PICK, min_size=max(IN_FLIGHT),
                                                     max_size=max(IN_FLIGHT)))
    def in_flight(self, n, picks):
        """``n`` requests written back to back before any reply (trees of the
        drawn repositories, blobs of listed ids; identical ones among them
        whenever the picks repeat), judged by FC-120's own judges: each
        answered exactly once, and each as the same request answers alone."""
        from cases.test_transport import judge_answered_once, judge_as_alone, replies_per_id
        pool = [("repo/tree", {"repo": self.rid(r.name), "ref": None}) for r in self.drawn.repos]
        pool += [("repo/blob", {"repo": repo, "sha": sha})
                 for repo, sha in dict.fromkeys((repo, sha) for repo, _, sha, _ in self.listed)]
        asks = [pool[i % len(pool)] for i in picks[:n]]
        self.step(f"{n} requests in flight at once: "
                  + "; ".join(f"{m} {_show(p)}" for m, p in asks))
        self.ctx.requests += n - 1
        mark = self.p.transcript.mark()
        try:
            calls = [self.p.call(m, dict(p)) for m, p in asks]
        except ProviderError as exc:
            self.monitor()
            self.fail(J.IN_FLIGHT, f"{n} requests in flight at once", "each written",
                      f"{getattr(exc, 'message', None) or exc}")
        for c in calls:
            c.wait()
        self.monitor()
        for judge, args in ((judge_answered_once, (replies_per_id(self.p, mark), calls)),
                            (judge_as_alone, (self.p, calls, asks))):
            v = J.by_case(J.IN_FLIGHT, judge, *args)
            if v is not None:
                self.raise_(J.Violation(v.case_id, f"{n} requests in flight at once: {v.why}",
                                        v.expected, v.got))
        self.monitor()

    @precondition(lambda self: any(r.is_git for r in self.drawn.repos) and self.cap("refs"))
    @rule(r=PICK)
    def repo_refs(self, r):
        repo = _pick([x for x in self.drawn.repos if x.is_git], r)
        params = {"repo": self.rid(repo.name)}
        # an empty repository may be refused (FIXTURES.md "Drawn sets")
        result, _ = self.ask("repo/refs", params, J.REFS, may_refuse=repo.history.empty)
        model = read(result, Refs).model if result is not None else None
        if model is None:
            return
        defaults = [b.name for b in model.branches if b.default]
        if len(defaults) > 1:
            self.fail(J.REFS, f"repo/refs {_show(params)}", "at most one default branch",
                      f"default: true on {J._listing(defaults)}")
        g = self.git[repo.name]
        for ref in (*model.branches, *model.tags):
            want = g.commit_of(f"refs/{'tags' if ref in model.tags else 'heads'}/{ref.name}")
            sent = git_commit_of(g, ref.sha)   # None: the backend's own spelling, not judged here
            if want is not None and sent is not None and sent != want:
                self.fail(J.REFS, f"repo/refs {_show(params)}: {ref.name!r}",
                          f"a sha that resolves to {want[:12]}", f"{ref.sha!r}")

    @precondition(lambda self: any(r.is_git for r in self.drawn.repos) and self.cap("log"))
    @rule(r=PICK, k=PICK, f=PICK, with_path=st.booleans(), limit=st.sampled_from(LOG_LIMITS))
    def repo_log(self, r, k, f, with_path, limit):
        """repo/log at a drawn ref, with or without a path; at a commit's full
        id, then at its abbreviated id too (an error there is accepted, as
        repo_tree says)."""
        repo = _pick([x for x in self.drawn.repos if x.is_git], r)
        ref = _pick(self.refs_of(repo), k)
        files = sorted(self.files_at(repo, ref))
        path = _pick(files, f) if with_path and files else None
        self.log_at(repo, ref, path, limit)
        short = self.shortened(repo, ref)
        if short is not None:
            self.log_at(repo, short, path, limit, may_refuse=True)

    def log_at(self, repo: D.DrawnRepo, ref, path, limit, *, may_refuse: bool = False) -> None:
        from cases.kit import gitfacts
        params = {"repo": self.rid(repo.name), "path": path, "ref": ref, "limit": limit}
        empty = repo.history.empty    # no commit: no history, or an error (FIXTURES.md "Drawn sets")
        result, _ = self.ask("repo/log", params, J.LOG, may_refuse=may_refuse or empty)
        model = read(result, Log).model if result is not None else None
        if model is None:
            return
        g = self.git[repo.name]
        want = [] if empty else [c.sha for c in gitfacts.git_log(g, ref or repo.history.default_branch,
                                                                 path)]
        # ids in the backend's vocabulary (RULINGS): a spelling git resolves, else the
        # commit of that date (cases.kit.commit_ids.resolve's reading)
        every = [] if empty else gitfacts.git_log(g, "--all")
        got = [git_commit_of(g, i.sha) or commit_by_stamp(every, i.subject, i.date)
               for i in model.items]
        what = f"repo/log {_show(params)}"
        # a path's log across merges: git's default listing, or any listing of
        # commits touching the path by another reading (FIXTURES.md)
        may = (gitfacts.git_log_touching(g, ref or repo.history.default_branch, path)
               if path is not None and not empty else frozenset())
        why = gitfacts.not_newest_first(g, got, want, may)
        if why:
            self.fail(J.LOG, what, "a newest-first leading part of git's log there "
                      f"({len(want)} commits)", why)
        missing = gitfacts.log_left_out(got, want)
        if missing and model.truncated is not True:
            self.fail(J.LOG_CUT, what, f"all {len(want)} commits, or truncated true",
                      f"{len(got)} commits ({missing[0][:12]} left out), "
                      f"truncated {model.truncated!r}")
        if gitfacts.log_complete(got, want, may) and model.truncated is True:
            self.fail(J.LOG_CUT, what, "truncated false: every commit is listed",
                      f"all {len(got)} commits and truncated true")

    @precondition(lambda self: any(r.is_git for r in self.drawn.repos) and self.cap("log"))
    @rule(r=PICK, k=PICK, f=PICK)
    def repo_blob_at(self, r, k, f):
        """repo/blob_at of a file at a drawn ref; at a commit's full id, then
        at its abbreviated id too (an error there is accepted, as repo_tree
        says)."""
        repo = _pick([x for x in self.drawn.repos if x.is_git], r)
        ref = _pick(self.refs_of(repo), k)
        files = self.files_at(repo, ref)
        if not files:
            return                                 # an empty repository has no path to ask
        path = _pick(sorted(files), f)
        self.blob_at(repo, ref, path, files)
        short = self.shortened(repo, ref)
        if short is not None:
            self.blob_at(repo, short, path, files, may_refuse=True)

    def blob_at(self, repo: D.DrawnRepo, ref, path: str, files: dict, *,
                may_refuse: bool = False) -> None:
        params = {"repo": self.rid(repo.name), "path": path, "ref": ref}
        # above 1 MiB: refused or served whole (§3.4's policy for every blob)
        result, _ = self.ask("repo/blob_at", params, J.BLOB_AT,
                             may_refuse=may_refuse or len(files[path]) > D.ONE_MIB)
        model = read(result, BlobAt).model if result is not None else None
        if model is None:
            return
        got = b64_loose(model.bytes_b64)
        what = f"repo/blob_at {_show(params)}"
        if got is not None and got != files[path]:
            self.fail(J.BLOB_AT, what, f"the {len(files[path])} bytes of the file at that ref "
                      f"{files[path][:40]!r}", f"{len(got)} bytes {got[:40]!r}")
        listed = self.tree_ids.get((params["repo"], ref, path))
        if listed is not None and model.sha != listed:
            self.fail(J.BLOB_AT, what, f"the sha the tree at that ref lists, {listed!r}",
                      repr(model.sha))

    @rule(r=PICK, f=PICK, anchor=st.booleans())
    def repo_web_url(self, r, f, anchor):
        repo = _pick([x for x in self.drawn.repos if x.files], r)
        files = dict(repo.files)
        paths = sorted(D.tree_paths(files.items()))
        path = _pick(paths, f)
        is_file = path in files
        params = {"repo": self.rid(repo.name), "path": path, "branch": "",
                  "line": 2 if anchor and is_file else None, "end_line": None, "is_file": is_file}
        result, _ = self.ask("repo/web_url", params, J.WEB_URL)
        model = read(result, WebUrl).model
        why = J.web_url_problem(model.url if model is not None else None, path)
        if why:
            self.fail(J.WEB_URL, f"repo/web_url {_show(params)}",
                      "a URL with the path's ' ', '#', '?' and '%' escaped", why)

    @precondition(lambda self: any(r.is_git for r in self.drawn.repos) and self.cap("blame"))
    @rule(r=PICK, k=PICK, f=PICK, at_ref=st.booleans())
    def repo_blame(self, r, k, f, at_ref):
        """repo/blame of a text file at ref null or a drawn ref, judged by FC-098's own
        judge against git blame (which commit only at the default branch: at
        another ref that is FC-131's); ids resolved as the cases resolve them
        (cases.kit.commit_ids: a backend's own spelling through repo/log)."""
        from types import SimpleNamespace

        from cases.kit.commit_ids import resolve
        from cases.kit.gitfacts import git_blame
        from cases.test_revisions import judge_blame
        repo = _pick([x for x in self.drawn.repos if x.is_git], r)
        ref = _pick(self.refs_of(repo), k) if at_ref else None   # the host blames at null most
        files = self.files_at(repo, ref)
        texts = sorted(p for p, d in files.items() if b"\0" not in d)
        if not texts:
            return
        path = _pick(texts, f)
        params = {"repo": self.rid(repo.name), "path": path, "ref": ref}
        result, _ = self.ask("repo/blame", params, J.BLAME)
        model = read(result, Blame).model
        if model is None:
            return
        g = self.git[repo.name]
        default = repo.history.default_branch
        want = git_blame(g, ref or default, path)
        host = SimpleNamespace(request=self.p.request, caps=self.caps)
        seen: dict = {}

        def commits(sha):
            if sha not in seen:
                seen[sha] = resolve(host, g, sha)
            return seen[sha]
        what = f"repo/blame {_show(params)}"
        v = J.by_case(J.BLAME, judge_blame, what, model.ranges, want, commits,
                      exact=ref in (None, default))
        self.monitor()
        if v is not None:
            self.raise_(v)

    @precondition(lambda self: any(r.is_git and not r.history.empty for r in self.drawn.repos)
                  and self.cap("commit"))
    @rule(r=PICK, by_name=st.booleans())
    def repo_commit(self, r, by_name):
        """repo/commit of every drawn commit by git's full id (the root first,
        the side branch's, a merge and a wide one among them), or by the
        other commit-ishes §3.12 SHOULD accept: every branch and tag name,
        then every commit's abbreviated id as git abbreviates it (``%h``,
        unique in the repository). An error to any of them, or to an id, is
        left alone as the commit cases leave it; one request at a time as a
        host's commit view asks them."""
        repo = _pick([x for x in self.drawn.repos if x.is_git and not x.history.empty], r)
        h, ids = repo.history, self.commits[repo.name]
        labels = sorted(ids, key=lambda x: (x[0], int(x[1:])))
        if by_name:
            asks = [(h.default_branch, f"d{len(h.commits) - 1}"),
                    (h.side_branch, f"s{len(h.side_commits) - 1}"),
                    (D.LIGHT_TAG, f"d{h.light_tag}"), (D.ANNOTATED_TAG, f"d{h.annotated_tag}")]
            short = self.abbreviated(repo)
            asks += [(short[ids[label]], label) for label in labels]
        else:
            asks = [(ids[label], label) for label in labels]
        for spelled, label in asks:
            self.judge_commit(repo, spelled, label)

    def abbreviated(self, repo: D.DrawnRepo) -> dict[str, str]:
        """git's full id -> its abbreviated id (``%h``: unique among the
        repository's objects) for every commit of ``repo``."""
        if repo.name not in self.shorts:
            out = self.git[repo.name].git_bytes("log", "--all", "--format=%H %h").decode()
            self.shorts[repo.name] = dict(line.split() for line in out.splitlines()
                                          if line.strip())
        return self.shorts[repo.name]

    def judge_commit(self, repo: D.DrawnRepo, spelled: str, label: str) -> None:
        """One repo/commit, judged by the commit cases' own judges
        (cases/test_commits.py: FC-101..107, FC-109) against git; the reply's
        shape is the monitor's (FC-100)."""
        from cases import test_commits as C
        from cases.kit.gitfacts import git_commit
        sha = self.commits[repo.name][label]
        params = {"repo": self.rid(repo.name), "sha": spelled}
        what = f"repo/commit {_show(params)} ({label}" + (f", commit {sha[:12]})"
                                                          if spelled != sha else ")")
        self.step(f"repo/commit {_show(params)}")
        try:
            result = self.p.call("repo/commit", params).result()
        except ProviderError as exc:
            self.monitor()
            if exc.origin != "adapter":
                self.fail(J.COMMIT_SHAPE, what, "a reply",
                          f"{getattr(exc, 'message', None) or exc}")
            return
        self.monitor()
        model = read(result, Commit).model
        if model is None:
            return                                 # the shape is the monitor's
        g = self.git[repo.name]
        git = git_commit(g, sha)
        for owner, judge, args in (
                (J.COMMIT_ID, C.judge_identity, (self.host, g, what, sha, git, model, result)),
                (J.COMMIT_MESSAGE, C.judge_message, (what, git, model)),
                (J.COMMIT_FILES, C.judge_first_parent_patches, (g, what, sha, git, model, result)),
                (J.COMMIT_RENAMES, C.judge_renames, (what, sha, git, model, result)),
                (J.COMMIT_PATCHES, C.judge_one_patch_format, (what, sha, model, result)),
                (J.COMMIT_METADATA, C.judge_metadata_only, (what, sha, git, model, result)),
                (J.COMMIT_COUNTS, C.judge_counts, (what, sha, git, model, result)),
                (J.COMMIT_CUT, C.judge_truncated, (what, sha, git, model, result))):
            v = J.by_case(owner, judge, *args)
            self.monitor()
            if v is not None:
                self.raise_(v)

    @rule(r=PICK)
    def url_of_clone(self, r):
        """repo/clone_url of a drawn repository, judged by FC-113's own
        judges: its form, and for a git repository a local URL cloned with
        both branches at git's commits."""
        from cases.test_listings import judge_clone_url_form, judge_cloned
        repo = _pick(self.drawn.repos, r)
        params = {"repo": self.rid(repo.name)}
        # an empty repository may be refused (FIXTURES.md "Drawn sets")
        result, _ = self.ask("repo/clone_url", params, J.CLONE_URL, may_refuse=not repo.files)
        model = read(result, CloneUrl).model if result is not None else None
        if model is None:
            return
        what = f"repo/clone_url {_show(params)}"
        v = J.by_case(J.CLONE_URL, judge_clone_url_form, what, model.clone_url)
        if v is None and repo.is_git:
            h, g = repo.history, self.git[repo.name]
            v = J.by_case(J.CLONE_URL, judge_cloned, model.clone_url, params["repo"],
                          lambda b: g.commit_of(f"refs/heads/{b}"),
                          () if h.empty else (h.default_branch, h.side_branch))
        if v is not None:
            self.raise_(v)

    @precondition(lambda self: self.drawn.faults and not self.ctx.settings.no_faults)
    @rule(i=PICK, a=PICK)
    def request_at_fault(self, i, a):
        """A request naming a FAULTS.json repository, one the fault cases send
        (cases.test_errors.fault_asks: tree, refs, log, blob_at and blame of a
        path, at ref null and at a named ref, the URLs), judged by their own
        judge of its kind (judge_fault_kind: FC-060, FC-061, FC-064). A result
        fails where the adapter must ask its backend; a URL may be answered."""
        from types import SimpleNamespace

        from cases.test_errors import LOCAL_METHODS, fault_asks, judge_fault_kind
        name, kind, _ = _pick(self.drawn.faults, i)
        caps = SimpleNamespace(**{c: self.cap(c) for c in ("refs", "log", "blame", "commit")})
        method, params = _pick(fault_asks(SimpleNamespace(caps=caps), self.rid(name)), a)
        what = f"{method} {_show(params)} on the {name!r} fault repo"
        owner = J.FAULT[kind]
        self.step(f"{method} {_show(params)}")
        try:
            result = self.p.call(method, params).result()
        except ProviderError as exc:
            self.monitor()
            v = J.by_case(owner, judge_fault_kind, exc, kind, what=what)
            if v is not None:
                self.raise_(v)
            return
        self.monitor()
        if method not in LOCAL_METHODS:
            self.fail(owner, f"{what} must answer an error", "an error reply",
                      f"a result {_show(result)[:200]}")

    # -- listings and cancels -------------------------------------------------

    def own_ids(self) -> set[str]:
        """The ids of every drawn repository (their trees are FC-020's)."""
        return {self.rid(r.name) for r in self.drawn.listed()}

    def fresh(self) -> None:
        """A respawn, so the next request is a fresh process's first."""
        self.step("respawn")
        try:
            self.p.respawn()
        except (SpawnError, ProviderError) as exc:
            self.fail(J.RESPAWN, "respawn", "a restarted, initialized adapter",
                      f"{getattr(exc, 'message', None) or exc}")
        self.monitor()

    @rule(first=st.sampled_from(LISTINGS), r=PICK, how=st.sampled_from(REPO_QUERIES),
          fresh=st.booleans())
    def listing(self, first, r, how, fresh):
        """The listings the host sends, ``first`` of them now and then as a
        fresh process's first request: search/repos (of a drawn name, part
        of it, its upper case or nothing) and, with the orgs capability,
        org/repos and org/url of the org."""
        asks = [m for m in LISTINGS if m == "search/repos" or self.cap("orgs")]
        asks.sort(key=lambda m: m != first)
        if fresh:
            self.fresh()
        for method in asks:
            if method == "org/repos":
                self.repos_of_org()
            elif method == "org/url":
                self.url_of_org()
            else:
                self.search_repos(r, how)

    def repos_of_org(self):
        """org/repos of the org, judged by FC-111's own judge: names relative
        to the org, every drawn repository listed (the fillers that bring
        the listing to a page size too), and <org>/<name> of each other name
        accepted back (a drawn repository is served by the contract: its
        tree and clone URL are their own cases', judged by their own rules)."""
        from cases.test_listings import LISTED_BACK, judge_org_names, org_entry_names
        params = {"org": self.ctx.settings.org}
        result, _ = self.ask("org/repos", params, J.ORG_REPOS)
        reading = read(result, OrgRepos)
        if reading.model is None:
            return                                 # the shape is the monitor's
        names, problems = org_entry_names(reading, result)
        if problems:
            return                                 # entries that are not names: the monitor's
        # an empty repository (a directory with no file, a git repository with no
        # commit) is a repository or not by the adapter's grammar (§1.1; Appendix A
        # lists the second, not the first; FIXTURES.md "Drawn sets"): listing it is
        # the adapter's choice
        drawn = {r.name for r in self.drawn.listed() if r.files}
        ask = [n for n in names if n not in {r.name for r in self.drawn.listed()}]
        self.ctx.requests += 2 * min(len(ask), LISTED_BACK)
        v = J.by_case(J.ORG_REPOS, judge_org_names, self.p, self.view, f"org/repos {_show(params)}",
                      names, drawn, own=self.own_ids(), ask=ask)
        self.monitor()
        if v is not None:
            self.raise_(v)

    def search_repos(self, r, how):
        """search/repos (matching is the adapter's, RULINGS "Search": what is
        found is not judged), judged by FC-110's own judge: every id listed
        is <org>/<name>, and accepted back when it is not a drawn
        repository's (those are served by the contract, judged by their own
        rules)."""
        from cases.test_listings import LISTED_BACK, judge_listed_ids
        from wire.messages import RepoItem
        name = _pick(self.drawn.repos, r).name
        query = {"name": name, "part": name[1:] or name, "upper": name.upper(), "empty": ""}[how]
        params = {"query": query}
        result, _ = self.ask("search/repos", params, J.SEARCH_REPOS)
        model = read(result, SearchRepos).model
        if model is None:
            return
        ids = list(dict.fromkeys(i.full_name for i in model.items
                                 if isinstance(i, RepoItem) and isinstance(i.full_name, str)))
        own = self.own_ids()
        ask = [i for i in ids if i not in own]
        self.ctx.requests += 2 * min(len(ask), LISTED_BACK)
        v = J.by_case(J.SEARCH_REPOS, judge_listed_ids, self.p, self.view, ids, own=own, ask=ask)
        self.monitor()
        if v is not None:
            self.raise_(J.Violation(v.case_id, f"search/repos {_show(params)}: {v.why}",
                                    v.expected, v.got))

    def url_of_org(self):
        """org/url of the org (FC-115's judge: a non-empty string url)."""
        from cases.test_listings import judge_org_url
        params = {"org": self.ctx.settings.org}
        result, _ = self.ask("org/url", params, J.ORG_URL)
        v = J.by_case(J.ORG_URL, judge_org_url, f"org/url {_show(params)}", result)
        if v is not None:
            self.raise_(v)

    @rule(m=PICK, i=PICK)
    def cancel_other(self, m, i):
        """A repo/tree, repo/blob, repo/log, repo/refs, repo/blob_at,
        repo/blame or repo/clone_url with its $/cancelRequest in the same
        write, judged by FC-045's own judges: answered first without a
        cancel (an error then is the method's owner's), the cancelled one
        ends with a result of the method's shape (a cancel is advisory: no
        error), and the same request sent after it is answered."""
        from cases.test_streaming import judge_cancelled_reply, judge_served_after_cancel
        # an empty repository may be refused (FIXTURES.md "Drawn sets"): not asked here
        filled = [x for x in self.drawn.repos if x.files]
        asks = [("repo/tree", J.COVERAGE, Tree,
                 {"repo": self.rid(_pick(filled, i).name), "ref": None})] if filled else []
        # a blob above 1 MiB may be refused (§3.4): not asked here
        small = [x for x in self.listed if len(x[3]) <= D.ONE_MIB]
        if small:
            repo, _, sha, _ = _pick(small, i)
            asks.append(("repo/blob", J.BLOB, Blob, {"repo": repo, "sha": sha}))
        gits = [x for x in self.drawn.repos if x.is_git and not x.history.empty]
        if gits and self.cap("log"):
            asks.append(("repo/log", J.LOG, Log, {"repo": self.rid(_pick(gits, i).name),
                                                  "path": None, "ref": None, "limit": None}))
        if gits and self.cap("refs"):
            asks.append(("repo/refs", J.REFS, Refs, {"repo": self.rid(_pick(gits, i).name)}))
        files = dict(_pick(gits, i).files) if gits else {}
        served = sorted(p for p, d in files.items() if len(d) <= D.ONE_MIB)
        if served and self.cap("log"):
            asks.append(("repo/blob_at", J.BLOB_AT, BlobAt, {"repo": self.rid(_pick(gits, i).name),
                                                            "path": _pick(served, i), "ref": None}))
        texts = sorted(p for p, d in files.items() if b"\0" not in d)
        if texts and self.cap("blame"):
            asks.append(("repo/blame", J.BLAME, Blame, {"repo": self.rid(_pick(gits, i).name),
                                                       "path": _pick(texts, i), "ref": None}))
        if filled:
            asks.append(("repo/clone_url", J.CLONE_URL, CloneUrl,
                         {"repo": self.rid(_pick(filled, i).name)}))
        if not asks:
            return
        method, owner, shape, params = _pick(asks, m)
        what = f"{method} {_show(params)}"
        self.ask(method, params, owner)
        self.step(f"{what} cancelled at once")
        call = self.p.call(method, params, cancel_at_once=True)
        call.wait()
        self.monitor()
        v = J.by_case(J.CANCELLED, judge_cancelled_reply, call, params, what, method, shape)
        if v is None:
            self.step(f"{what} after the cancel")
            try:
                self.p.request(method, params)
                err = None
            except ProviderError as exc:
                err = exc
            self.monitor()
            v = J.by_case(J.CANCELLED, judge_served_after_cancel, what, err)
        if v is not None:
            self.raise_(v)

    @rule(crash=st.booleans())
    def restart(self, crash):
        """A crash (the next request respawns the adapter) or a respawn now."""
        if crash:
            self.step("kill (the next request respawns the adapter)")
            self.p.kill()
            return
        self.fresh()


def _pick(items, i: int):
    items = list(items)
    return items[i % len(items)]


def _show(params: dict) -> str:
    import json
    return json.dumps(params, ensure_ascii=False)
