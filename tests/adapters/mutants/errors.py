"""The matrix mutants that break a case of cases/test_errors.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

import base64

from fixture.catalog import FAULT_REPOS
from tests.adapters.common import ref_of
from tests.adapters.hooks import KindRewrite, Variant, fixture_repos, is_git, matrix, repo_name
from tests.adapters.proxy import Hooks, error_data

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("auth-as-provider", "FC-060")
class AuthAsProvider(KindRewrite):
    """Credential failures are reported with kind "provider"."""

    def __init__(self):
        super().__init__("auth", "provider")


@mutant("throttle-as-network", "FC-061")
class ThrottleAsNetwork(KindRewrite):
    """Rate limits are reported with kind "network"."""

    def __init__(self):
        super().__init__("rate_limited", "network")


@mutant("blob-notfound-as-provider", "FC-062")
class BlobNotFoundAsProvider(KindRewrite):
    """repo/blob answers unknown ids and repositories with kind "provider"."""

    def __init__(self):
        super().__init__("not_found", "provider", methods=("repo/blob",))


@mutant("empty-error-messages", "FC-063")
class EmptyErrorMessages(Hooks):
    """Every error message is the empty string."""

    def reply(self, proxy, req, msg):
        if isinstance(msg.get("error"), dict):
            msg["error"]["message"] = ""
        return msg


@mutant("broken-clone-url-network", "FC-064")
class BrokenCloneUrlNetwork(KindRewrite):
    """repo/clone_url reports the backend failure (kind provider) with kind "network"."""

    def __init__(self):
        super().__init__("provider", "network", methods=("repo/clone_url",))


class KindRewriteOffTree(KindRewrite):
    """A KindRewrite for every method but repo/tree (the one the kind cases ask)."""

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/tree":
            return msg
        return super().reply(proxy, req, msg)


@promoted("auth-as-provider-off-tree", "FC-060",
      'RULINGS "Strength": a case whose title names a kind (FC-060) fails on a different kind; '
      '§6.2 auth is for "missing, expired or insufficient credentials"; README: every request '
      'naming denied must fail with kind auth')
class AuthAsProviderOffTree(KindRewriteOffTree):
    """Credential failures of every method but repo/tree are kind "provider".

    Hides on: repo/blob, search, log... of the denied repo; FC-060 asks repo/tree only.
    """

    def __init__(self):
        super().__init__("auth", "provider")


@promoted("throttle-as-network-off-tree", "FC-061",
      'RULINGS "Strength": a case whose title names a kind (FC-061) fails on a different kind; '
      '§6.2 rate_limited is for "backend throttling"; README: every request naming throttled must '
      'fail with kind rate_limited')
class ThrottleAsNetworkOffTree(KindRewriteOffTree):
    """Throttling of every method but repo/tree is kind "network".

    Hides on: other methods on the throttled repo; FC-061 asks repo/tree only.
    """

    def __init__(self):
        super().__init__("rate_limited", "network")


@promoted("retry-after-float", "FC-063",
      '§6.3: "MUST If sent, it is a non-negative JSON integer number of seconds" (RULINGS: error shape '
      'incl. retry_after_s is FC-063\'s)')
class RetryAfterFloat(Hooks):
    """retry_after_s is sent as 37.0 (a float; the host ignores it).

    Hides on: the throttled fault, which FC-063 does not provoke (FC-061 only warns).
    """

    def reply(self, proxy, req, msg):
        data = error_data(msg)
        if data is not None and type(data.get("retry_after_s")) is int:
            data["retry_after_s"] = float(data["retry_after_s"])
        return msg


@promoted("vcs-blob-notfound-as-provider", "FC-062", '§3.4: "MUST Unknown repository or id → error, SHOULD '
      'kind not_found" (RULINGS: a case whose title names a kind fails on a different kind)')
class VcsBlobNotFoundAsProvider(KindRewrite):
    """repo/blob of an unknown id in the git-backed repo answers kind "provider" (git cat-file failed).

    Hides on: vcs; FC-062 asks alpha and a missing repo.
    """

    def __init__(self):
        super().__init__("not_found", "provider", methods=("repo/blob",))

    def reply(self, proxy, req, msg):
        if req is None or not is_git(proxy, req.params.get("repo")):
            return msg
        return super().reply(proxy, req, msg)


@promoted("missing-repo-kind-provider-revisions", "FC-062",
      '§6.2 not_found "unknown repository, blob id, path, ref, commit" (RULINGS: a case whose title '
      'names a kind fails on a different kind; FC-062 "not_found for missing repo/blob")')
class MissingRepoKindProviderRevisions(Hooks):
    """A missing repository asked through refs, log, blame, clone_url or web_url is kind "provider".

    Hides on: methods other than tree and blob; FC-063 provokes these errors
    but judges their shape only.
    """

    METHODS = ("repo/refs", "repo/log", "repo/blame", "repo/clone_url", "repo/web_url")

    def reply(self, proxy, req, msg):
        data = error_data(msg)
        if (req is not None and req.method in self.METHODS and data is not None
                and data.get("kind") == "not_found"
                and repo_name(req.params.get("repo")) not in fixture_repos(proxy)):
            data["kind"] = "provider"
        return msg


@promoted("ref-error-data-string", "FC-063",
      '§6.1: error.data "optional object" (RULINGS: error shape, data an object, is FC-063\'s)')
class RefErrorDataString(Hooks):
    """Errors of requests carrying a non-null ref have data "not_found" (a string, not an object).

    Hides on: ref errors (FC-092, FC-097 provoke them, and only warn on a
    kindless error); FC-063 asks no request with a ref.
    """

    def reply(self, proxy, req, msg):
        data = error_data(msg)
        if req is not None and ref_of(req) is not None and data is not None:
            msg["error"]["data"] = str(data.get("kind"))
        return msg


@promoted("fault-empty-message", "FC-063", '§6.1: "MUST error.message be a human-readable string" '
      '(RULINGS: message a non-empty string, FC-063)')
class FaultEmptyMessage(Hooks):
    """Errors of the denied and throttled fault repos have an empty message.

    Hides on: the auth and rate-limit faults; FC-063 provokes only the broken fault.
    """

    def reply(self, proxy, req, msg):
        if (req is not None and isinstance(msg.get("error"), dict)
                and repo_name(req.params.get("repo")) in ("denied", "throttled")):
            msg["error"]["message"] = ""
        return msg


@promoted("broken-refs-network", "FC-064",
          '§6.2: provider is for "internal adapter failure"; RULINGS: the `broken` fault '
          'answered with network, auth, rate_limited or not_found fails')
class BrokenRefsNetwork(KindRewrite):
    """repo/refs and repo/log report the backend failure (kind provider) with kind "network".

    Hides on: the revision methods (their git client maps every failure to
    network); FC-064 asked tree, blob, clone_url and web_url of the broken
    repo only.
    """

    def __init__(self):
        super().__init__("provider", "network", methods=("repo/refs", "repo/log"))


@mutant("blob-at-missing-repo-bytes", "FC-062")
class BlobAtMissingRepoBytes(Hooks):
    """repo/blob_at of a repository the fixture does not have answers empty bytes (and a made-up id) instead of an error."""

    def request(self, proxy, req, msg):
        if req.method == "repo/blob_at":
            name = repo_name(req.params.get("repo"))
            if name and not (proxy.fixture / name).exists() and name not in FAULT_REPOS:
                proxy.reply(req, {"bytes_b64": base64.b64encode(b"").decode(), "sha": "0" * 64})
                return None
        return msg


@mutant("denied-at-ref-not-found", "FC-060")
class DeniedAtRefNotFound(Hooks):
    """The denied fault repo asked at a named ref answers not_found (the ref is looked up before the credentials)."""

    def request(self, proxy, req, msg):
        if repo_name(req.params.get("repo")) == "denied" and req.params.get("ref") is not None:
            proxy.error(req, f"no ref {req.params['ref']!r}", kind="not_found")
            return None
        return msg
