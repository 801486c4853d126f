"""Path mutants, part q: the truncation, transport, round-trip, revision,
handshake and listing rules, each mutant breaking one MUST only where its
owner case does not look first: `truncated` lies in a respawned generation
(judged on every reply of the run, cases/judges/claims.py), a malformed repo/log `truncated`,
repo/log with a limit at a commit id, three searches in flight at once, a
remote clone URL, blob_at of a path the ref lacks, a commit id off the
default branch that no ref names, a cancel for a finished request that
aborts later work, a second initialize's icon, and serving after a second
initialize.

Each mutant fails exactly its owner case (written like
tests/adapters/mutants_deep.py: a hook class per switch, its docstring's
first line what it changes, then "Hides on:").
"""

from __future__ import annotations

import base64
import re

from tests.adapters.hooks import ResultEdit, is_git, read_worktree, repo_name, sha256_hex
from tests.adapters.mutants import EveryHit
from tests.adapters.mutants_deep import git_lines, promoted
from tests.adapters.mutants_paths_i import FirstInitialize
from tests.adapters.proxy import Hooks, result_of

HEX_ID = re.compile(r"[0-9a-f]{7,64}")
TRUNCATED_RULE = ('RULINGS "Bounded compute": a claim of truncation that is false fails, and '
                  'so does a cut without truncated: true')

# ---------------------------------------------------------------- respawned generations

class RespawnedEdit(FirstInitialize, ResultEdit):
    """Edit ``method``'s results in a respawned generation only."""

    def applies(self, proxy, req):
        return bool(self.respawned) and self.also(proxy, req)

    def also(self, proxy, req) -> bool:
        return True


@promoted("respawn-tree-truncated-lie", "FC-022",
          '§3.3: "MUST set truncated: true when (and only when) the budget cut the walk"')
class RespawnTreeTruncatedLie(RespawnedEdit):
    """A respawned generation's trees list every path but say truncated true.

    Hides on: a respawned generation; FC-022 read truncated on the group
    adapter's first generation only, and FC-013, FC-050 and FC-051, which
    ask trees after a respawn, judge their paths and ids.
    """

    method = "repo/tree"

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("respawn-log-truncated-lie", "FC-095", TRUNCATED_RULE + " (§3.7)")
class RespawnLogTruncatedLie(RespawnedEdit):
    """A respawned generation's repo/log says truncated true over git's whole history.

    Hides on: a respawned generation; FC-095 read truncated on the group
    adapter's first generation, and FC-050, which asks the log at the
    feature branch after a kill, compares its subjects only.
    """

    method = "repo/log"

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("respawn-log-cut-untruncated", "FC-095", TRUNCATED_RULE + " (§3.7)")
class RespawnLogCutUntruncated(RespawnedEdit):
    """A respawned generation's repo/log with limit null stops after one commit and says truncated false.

    Hides on: a respawned generation; FC-095 judged the cut of the group
    adapter's logs only, and FC-050's log comparison after a kill named a
    missing commit as a respawn that serves badly.
    """

    method = "repo/log"

    def also(self, proxy, req):
        return req.params.get("limit") is None

    def edit(self, proxy, req, result):
        items = result.get("items")
        if isinstance(items, list) and len(items) > 1:
            result["items"] = items[:1]
            result["truncated"] = False


@promoted("respawn-search-truncated-lie", "FC-070",
          '§3.13: "truncated ... true = the result set is provably incomplete"; ' + TRUNCATED_RULE)
class RespawnSearchTruncatedLie(RespawnedEdit):
    """A respawned generation's one-shot searches say truncated true whatever they found.

    Hides on: a respawned generation; FC-070 judged the group adapter's
    one-shot replies, and FC-013 and FC-050, which search after a respawn,
    read the hits only.
    """

    method = "search/code"

    def also(self, proxy, req):
        return not req.streaming

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("respawn-search-cut-untruncated", "FC-070", TRUNCATED_RULE + " (§3.13)")
class RespawnSearchCutUntruncated(RespawnedEdit):
    """A respawned generation's one-shot searches leave out their last hit and say truncated false.

    Hides on: a respawned generation; FC-070 judged the group adapter's
    one-shot replies, and FC-050, which compares a search after a kill
    with the group adapter's, named the missing file as a respawn that
    serves badly (a second owner of one rule).
    """

    method = "search/code"

    def also(self, proxy, req):
        return not req.streaming

    def edit(self, proxy, req, result):
        items = result.get("items")
        if isinstance(items, list) and items:
            result["items"] = items[:-1]
            result["truncated"] = False


@promoted("respawn-search-empty-page", "FC-050",
          '§2.1 and §10.2: a respawned generation serves as the first one did')
class RespawnSearchEmptyPage(RespawnedEdit):
    """A respawned generation's one-shot searches answer no hit at all, with truncated true.

    Hides on: a respawned generation; truncated true makes any cut a page
    (FC-070's cases.judges.claims judge no lie in it), so FC-050 tells a page that
    holds some of the files from one that holds none: a search not served.
    """

    method = "search/code"

    def also(self, proxy, req):
        return not req.streaming

    def edit(self, proxy, req, result):
        result["items"] = []
        result["truncated"] = True


@promoted("respawn-stream-cut-untruncated", "FC-042",
          '§5.3: the final reply\'s truncated is authoritative; ' + TRUNCATED_RULE)
class RespawnStreamCutUntruncated(FirstInitialize):
    """A respawned generation's streamed searches send no batch at all and end with truncated false.

    Hides on: a respawned generation; the streaming cases stream in the
    group adapter's first generation (FC-050 streams one after a respawn, and
    cases.judges.claims judges its cut as on every stream of the run).
    """

    def partial(self, proxy, req, msg):
        if self.respawned and req is not None and req.method == "search/code":
            return None
        return msg


@promoted("respawn-commit-truncated-lie", "FC-109",
          '§3.12: "truncated ... true = the file list is incomplete (budget reached)"')
class RespawnCommitTruncatedLie(RespawnedEdit):
    """A respawned generation's repo/commit replies say truncated true over their full file list.

    Hides on: a respawned generation; FC-109 judges the group adapter's
    replies (FC-050 asks a commit after a respawn, and cases.judges.claims judges
    every repo/commit reply of the run).
    """

    method = "repo/commit"

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("respawn-lines-zero-based", "FC-031",
          '§3.13: "line, when present, is 1-based and is the real line of the match in that blob"')
class RespawnLinesZeroBased(FirstInitialize, EveryHit):
    """A respawned generation's search hits, one-shot and streamed, give 0-based lines.

    Hides on: a respawned generation; FC-031 reads the lines of its own
    searches, all in the group adapter's first generation (cases.judges.claims
    reads the line of every hit of a fixture term's search in the run).
    """

    def edit(self, hit):
        if self.respawned and isinstance(hit.get("line"), int):
            hit["line"] -= 1


# ---------------------------------------------------------------- repo/log's truncated shape

@promoted("log-truncated-string", "FC-095",
          '§3.7: "Result: {items, truncated?: <boolean>}"; R-3.7-limit (truncated is FC-095\'s)')
class LogTruncatedString(ResultEdit):
    """repo/log answers truncated as the string "false" or "true" (not a boolean).

    Hides on: nothing new: the rule had two owners, FC-094 (the log's shape,
    through the monitor) and FC-095 (its truncated); the registry gives the
    member to FC-095 (R-3.7-limit), like repo/tree's to FC-022.
    """

    method = "repo/log"

    def edit(self, proxy, req, result):
        result["truncated"] = "true" if result.get("truncated") else "false"


# ---------------------------------------------------------------- repo/log at a commit id

@promoted("log-limit-at-id-untruncated", "FC-095", TRUNCATED_RULE + " (§3.7)")
class LogLimitAtIdUntruncated(ResultEdit):
    """repo/log at a commit id honours limit but never says truncated.

    Hides on: commit ids as ref (the host's history lens walks from the ids
    repo/log lists); FC-095 asked limit 2 at branch and tag names only, and
    FC-130, which asks logs at ids, judges which commits they list.
    """

    method = "repo/log"

    def applies(self, proxy, req):
        return HEX_ID.fullmatch(str(req.params.get("ref"))) is not None

    def edit(self, proxy, req, result):
        result.pop("truncated", None)


# ---------------------------------------------------------------- three streams in flight

def streaming_search(req) -> bool:
    return req is not None and req.method == "search/code" and req.streaming


@promoted("three-streams-crossed", "FC-120",
          '§5.2: "params.id is the opted-in request\'s id"; §7.4: replies and partials are '
          'routed by id, with several requests in flight')
class ThreeStreamsCrossed(Hooks):
    """With three or more streaming searches in flight, each batch goes out under the id of the newest one (a stream table of two slots that evicts).

    Two streams in flight together are never touched, and every batch still
    precedes its reply (the newest stream is answered last).

    Hides on: three streams in flight together; FC-120 had two, and every
    other case streams one search at a time.
    """

    def partial(self, proxy, req, msg):
        if not streaming_search(req):
            return msg
        live = [r for r in list(proxy.requests.values()) if streaming_search(r)]
        if len(live) >= 3:
            msg["params"]["id"] = max(r.id for r in live)
        return msg


# ---------------------------------------------------------------- remote clone URLs

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


# ---------------------------------------------------------------- blob_at of a path a ref lacks

def git_has(proxy, repo, ref, path) -> bool:
    """Whether git has ``path`` at ``ref`` in the fixture repository."""
    import subprocess
    run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), "cat-file", "-e",
                          f"{ref}:{path}"], capture_output=True)
    return run.returncode == 0


def blob_at_missing(proxy, req) -> bool:
    """A repo/blob_at at a named ref of a git repository whose tree lacks the path."""
    repo, ref, path = (req.params.get(k) for k in ("repo", "ref", "path"))
    return (req.method == "repo/blob_at" and isinstance(ref, str) and isinstance(path, str)
            and is_git(proxy, repo) and git_lines(proxy, repo, "rev-parse", "--verify", "--quiet",
                                                  f"{ref}^{{commit}}") != []
            and not git_has(proxy, repo, ref, path))


@promoted("blob-at-absent-from-worktree", "FC-097",
          '§3.5: "MUST Unknown path or unknown ref -> error"')
class BlobAtAbsentFromWorktree(Hooks):
    """repo/blob_at of a path the asked ref does not have serves the checked-out file of that path (a fallback to the working tree).

    Hides on: a path that exists on the default branch but not at the ref
    (docs/new-name.md at a tag); FC-097 asked a path no revision has, and
    FC-096 asks each file only at the refs where it exists.
    """

    def request(self, proxy, req, msg):
        if blob_at_missing(proxy, req):
            data = read_worktree(proxy, req.params.get("repo"), req.params.get("path"))
            if data is not None:
                proxy.reply(req, {"bytes_b64": base64.b64encode(data).decode("ascii"),
                                  "sha": sha256_hex(data)})
                return None
        return msg


@promoted("blob-at-deleted-from-history", "FC-097",
          '§3.5: "MUST Unknown path or unknown ref -> error"')
class BlobAtDeletedFromHistory(Hooks):
    """repo/blob_at of a path deleted before the asked ref serves its last version from an older commit (a lookup across the whole history).

    Hides on: a path an older revision had (obsolete.txt, removed on main);
    FC-097 asked a path no revision ever had.
    """

    def request(self, proxy, req, msg):
        if blob_at_missing(proxy, req):
            repo, path = req.params.get("repo"), req.params.get("path")
            last = git_lines(proxy, repo, "rev-list", "-1", "--all", "--", path)
            if last:
                import subprocess
                older = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), "show",
                                        f"{last[0]}^:{path}"], capture_output=True)
                if older.returncode == 0:
                    proxy.reply(req, {"bytes_b64": base64.b64encode(older.stdout).decode("ascii"),
                                      "sha": sha256_hex(older.stdout)})
                    return None
        return msg


# ---------------------------------------------------------------- ids off the default branch

@promoted("ids-off-main-refused", "FC-132",
          '§3.7: "Every sha listed is accepted back as a ref"')
class IdsOffMainRefused(Hooks):
    """repo/tree and repo/blob_at at a commit id that is neither on the default branch's history nor a branch or tag tip answer not_found (ids resolved by walking main's log).

    Hides on: the ids of feature's log below its tip; FC-132 asked back the
    ids of logs at the default branch only, and the tips are asked as the
    shas repo/refs lists (FC-091, FC-096).
    """

    def request(self, proxy, req, msg):
        repo, ref = req.params.get("repo"), req.params.get("ref")
        if (req.method in ("repo/tree", "repo/blob_at") and isinstance(ref, str)
                and HEX_ID.fullmatch(ref) and is_git(proxy, repo)):
            tips = {line.split()[0] for line in git_lines(proxy, repo, "show-ref", "--dereference")}
            import subprocess
            on_main = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)),
                                      "merge-base", "--is-ancestor", ref, "HEAD"],
                                     capture_output=True).returncode == 0
            if not on_main and not any(t.startswith(ref) for t in tips):
                proxy.error(req, f"no commit {ref}", kind="not_found")
                return None
        return msg


# ---------------------------------------------------------------- a cancel for a finished request

@promoted("stale-cancel-aborts-next-stream", "FC-122",
          '§5.4: "MUST Ignore cancels for unknown or already-completed ids"')
class StaleCancelAbortsNextStream(Hooks):
    """A cancel naming an answered repo/tree sets an abort flag that the next streaming search consumes: it is answered at once, with no batch and truncated true.

    Hides on: the requests after the cancel; FC-122 asked a repo/tree after
    its cancels, which the flag does not touch.
    """

    def __init__(self):
        self.methods: dict = {}
        self.abort = False

    def request(self, proxy, req, msg):
        self.methods[req.id] = req.method
        if req.method == "search/code" and req.streaming and self.abort:
            self.abort = False
            proxy.reply(req, {"items": [], "truncated": True})
            return None
        return msg

    def notification(self, proxy, msg):
        params = msg.get("params")
        rid = params.get("id") if isinstance(params, dict) else None
        if (msg.get("method") == "$/cancelRequest" and rid not in proxy.requests
                and self.methods.get(rid) == "repo/tree"):
            self.abort = True
        return msg


# ---------------------------------------------------------------- a second initialize's icon

@promoted("second-initialize-icon-private-use", "FC-080",
          '§2.5: "MUST If present, icon is ... exactly one literal character that any terminal '
          'can display without special fonts"')
class SecondInitializeIconPrivateUse(Hooks):
    """An initialize after the first on the same process answers icon "\\ue709" (one code point, a Nerd Font private-use glyph).

    Hides on: a second initialize on one process (an older host sent two);
    FC-080 read the group adapter's generations and the start without cache
    params, the protocol monitor judges an icon's shape only (FC-004's: one
    code point passes), and FC-121 only that a result came back.
    """

    def __init__(self):
        self.initializes = 0

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "initialize" and result is not None:
            self.initializes += 1
            if self.initializes > 1:
                result["icon"] = "\ue709"
        return msg


# ---------------------------------------------------------------- serving after a second initialize

@promoted("reinit-search-refused", "FC-121",
          '§2.1: "MUST Answer every initialize, including a second one on the same process" '
          '(and go on serving: RULINGS, startup is idempotent)')
class ReinitSearchRefused(Hooks):
    """After a second initialize on the same process, search/code answers a provider error (the re-initialize dropped the search index).

    Hides on: the methods after a second initialize; FC-121 asked only
    repo/tree of alpha after its extra initializes.
    """

    def __init__(self):
        self.initializes = 0

    def request(self, proxy, req, msg):
        if req.method == "initialize":
            self.initializes += 1
        elif req.method == "search/code" and self.initializes > 1:
            proxy.error(req, "search index not loaded", kind="provider")
            return None
        return msg


# ---------------------------------------------------------------- requests in flight together

@promoted("crowded-tree-truncated-lie", "FC-022",
          '§3.3: "MUST set truncated: true when (and only when) the budget cut the walk"')
class CrowdedTreeTruncatedLie(ResultEdit):
    """A repo/tree answered while another request is in flight lists every path but says truncated true (a budget shared by the requests in flight).

    Hides on: requests in flight together; FC-022 asks one tree at a time,
    and FC-120, which sends wide's and alpha's trees beside streams and
    blobs, compares their paths only.
    """

    method = "repo/tree"

    def applies(self, proxy, req):
        return any(r.id != req.id for r in list(proxy.requests.values()))

    def edit(self, proxy, req, result):
        result["truncated"] = True
