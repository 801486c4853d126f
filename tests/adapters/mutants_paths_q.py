"""Path mutants, part q: an adversarial review of where the truncation,
transport, round-trip and listing rules were judged, each mutant breaking
one MUST only where its owner case did not look before: `truncated` lies in
a respawned generation (judged now on every reply of the run), a malformed
repo/log `truncated`, repo/log with a limit at a commit id, three searches
in flight at once, and a remote clone URL.

Each mutant fails exactly its owner case (written like
tests/adapters/mutants_deep.py: a hook class per switch, its docstring's
first line what it changes, then "Hides on:").
"""

from __future__ import annotations

import re

from tests.adapters.hooks import ResultEdit, is_git
from tests.adapters.mutants_deep import promoted
from tests.adapters.proxy import Hooks, result_of

HEX_ID = re.compile(r"[0-9a-f]{7,64}")
TRUNCATED_RULE = ('RULINGS "Bounded compute": a claim of truncation that is false fails, and '
                  'so does a cut without truncated: true')

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

@promoted("clone-url-remote-org", "FC-113",
          '§3 repo/clone_url: Result {clone_url}, the URL that clones that repository')
class CloneUrlRemoteOrg(ResultEdit):
    """repo/clone_url answers https://forge.example/<org>.git for every repository: a well-formed remote URL that names the organisation, never the repository.

    Hides on: remote URLs; FC-113 cloned local paths only and checked a
    remote URL's form alone, so every repository could share one URL.
    """

    method = "repo/clone_url"

    def edit(self, proxy, req, result):
        org = str(req.params.get("repo")).split("/", 1)[0]
        result["clone_url"] = f"https://forge.example/{org}.git"


@promoted("clone-url-remote-no-path", "FC-113",
          '§3 repo/clone_url: Result {clone_url}, the URL that clones that repository')
class CloneUrlRemoteNoPath(ResultEdit):
    """repo/clone_url of the git repository answers https://forge.example/ (a server, no repository path).

    Hides on: a remote URL's path; FC-113 checked a remote URL against a
    pattern whose path was optional, and the plain repositories keep their
    own (local) URLs, so no two repositories share one.
    """

    method = "repo/clone_url"

    def applies(self, proxy, req):
        return is_git(proxy, req.params.get("repo"))

    def edit(self, proxy, req, result):
        result["clone_url"] = "https://forge.example/"
