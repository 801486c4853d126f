"""Error cases (FC-060..FC-064): the kinds of the taxonomy and the error shape.

FC-060/061/064 (and the fault part of FC-063) provoke real failures through the
FAULTS.json repos and skip when FORGE_NO_FAULTS=1. A fault kind is judged
only on requests the adapter must take to its backend (a tree, a log, a
path; and the URL methods when they answer an error), never on an id the
suite invented, which an adapter may refuse on sight with not_found
(RULINGS "Fault repos"). Kind cases judge only that an error came back and
its kind; the shape of every error is FC-063's.
"""

from cases.kit.api import case, fc_assert, listing, need, owner, show, skip, warn
from cases.kit.facts import faults, faults_disabled, served, unknown_blob_id
from cases.kit.replies import expect_error, judge_kind, try_request
from fixture.catalog import ALPHA, FAULT_REPOS, VCS, VCS_BLAME_TWO_AUTHORS, VCS_THREE_COMMITS
from wire import ProviderTimeout
from wire.messages import ErrorObject, ShapeError, structure

UNKNOWN_METHOD = "x/forgeNoSuchMethod"
# The FAULTS.json repo standing for each backend failure, by the kind it must answer.
FAULT_OF = {kind: name for name, kind in FAULT_REPOS.items()}
NO_SUCH_REF = "forge-no-such-ref-fc063"
BYTES_METHODS = ("repo/blob", "repo/blob_at")   # a result would be bytes of no file


def repo_asks(adapter, repo, *, tree=True, sha=None):
    """(method, params) of every method that takes a ``repo`` and that the
    adapter declares, each naming ``repo`` with params it would accept for a
    served repository: an error here is about the repository alone."""
    caps = adapter.caps
    asks = [("repo/tree", {"repo": repo, "ref": None})] if tree else []
    asks += [("repo/blob", {"repo": repo, "sha": sha or unknown_blob_id()}),
             ("repo/clone_url", {"repo": repo}),
             ("repo/web_url", {"repo": repo, "path": "", "branch": "", "line": None,
                               "end_line": None, "is_file": False})]
    if caps.refs:
        asks.append(("repo/refs", {"repo": repo}))
    if caps.log:
        asks += [("repo/log", {"repo": repo, "path": None, "ref": None, "limit": None}),
                 ("repo/blob_at", {"repo": repo, "path": VCS_THREE_COMMITS, "ref": None})]
    if caps.blame:
        asks.append(("repo/blame", {"repo": repo, "path": VCS_BLAME_TWO_AUTHORS, "ref": None}))
    if caps.commit:
        asks.append(("repo/commit", {"repo": repo, "sha": "0" * 40}))
    return asks


def at_ref(caps, repo, ref) -> list[tuple[str, dict]]:
    """(method, params) of every method that reads ``repo`` at ``ref`` and that
    the adapter declares: repo/tree (refs), repo/log and repo/blob_at (log),
    repo/blame (blame), each with params it would accept at a served ref."""
    asks = [("repo/tree", {"repo": repo, "ref": ref})] if caps.refs else []
    if caps.log:
        asks += [("repo/log", {"repo": repo, "path": None, "ref": ref, "limit": None}),
                 ("repo/blob_at", {"repo": repo, "path": VCS_THREE_COMMITS, "ref": ref})]
    if caps.blame:
        asks.append(("repo/blame", {"repo": repo, "path": VCS_BLAME_TWO_AUTHORS, "ref": ref}))
    return asks


FAULT_REF = "main"   # the branch name the host assumes: a ref a backend resolves only once in
# Asked of a fault repo, these may be answered without the backend: a URL the
# adapter builds from the id (§3.9, §3.10 leave the grammar to it). A result
# passes; an error came from the backend and carries the fault's kind.
LOCAL_METHODS = ("repo/clone_url", "repo/web_url")


def fault_asks(adapter, repo):
    """(method, params) of every request naming the fault repo ``repo`` that
    the adapter must take to its backend, or may (LOCAL_METHODS): tree, refs,
    log, and blob_at and blame of a path (an adapter cannot tell a path it
    never listed on sight), each method that takes a ``ref`` asked at ref
    null and at a named one (a backend refuses the repository before it
    looks for a ref), and the URLs. Never an id the suite invented (a blob
    or commit id): an adapter may refuse an id it can tell it never emitted
    on sight, with not_found, fault repo or not (RULINGS "Fault repos"; §4:
    ids are opaque). Those requests' error shape is FC-063's alone."""
    caps = adapter.caps
    asks = [(m, p) for m, p in repo_asks(adapter, repo)
            if m not in ("repo/blob", "repo/commit")]
    return asks + at_ref(caps, repo, FAULT_REF)


def fault_errors(adapter, fx, name):
    """{label: (what, the error)} of every fault_asks request of the fault repo
    ``name``: an error is due where the adapter must ask its backend (a
    result fails); a URL method's result passes and is left out."""
    if faults_disabled():
        skip(f"provokes the {name!r} fault and FORGE_NO_FAULTS=1 turns faults off")
    errors = {}
    for method, params in fault_asks(adapter, fx.repo(name)):
        what = f"{method} {show(params, 100)} on the {name!r} fault repo"
        if method in LOCAL_METHODS:
            _, err = try_request(adapter, method, params)
            if err is None:
                continue
        else:
            err = expect_error(adapter, method, params, what=what)
        ref = params.get("ref")
        errors[method if ref is None else f"{method} at ref {ref!r}"] = (what, err)
    return errors


def judge_fault(adapter, fx, kind):
    """Every request of fault_asks naming the fault repo of ``kind`` answers
    an error of that kind (FIXTURES.md: every request naming it). A result
    where the backend must be asked fails; the wrong kind fails; an absent
    kind warns. Returns the errors, by method (and ref)."""
    errors = fault_errors(adapter, fx, FAULT_OF[kind])
    for what, err in errors.values():
        judge_fault_kind(err, kind, what=what)
    return {label: err for label, (_, err) in errors.items()}


def judge_fault_kind(err, kind: str, *, what: str) -> None:
    """One error of a fault repo standing for ``kind``: auth (FC-060) and
    rate_limited (FC-061) fail on another kind and warn on none; provider
    (FC-064) fails on a kind that blames the wrong cause (MISLEADING_KINDS)
    and warns on none or another."""
    if kind != "provider":
        judge_kind(err, kind, what=what)
        return
    raw = err.raw_kind
    fc_assert(raw not in MISLEADING_KINDS, expected="data.kind 'provider'",
              got=f"data.kind {show(raw)} (message {err.message!r})",
              why=f"{what}: a backend failure is not reported as {raw}")
    if raw != "provider":
        warn(f"{what}: {'no data.kind' if raw is None else f'data.kind {raw!r}'} "
             f"('provider' expected); message {err.message!r}")


@case("FC-060")
def test_auth_kind(adapter, fx):
    """A credential failure (every request naming the fault repo `denied`
    that the adapter must take to its backend: tree, refs, log, blob_at and
    blame of a path, at ref null and at a named ref; clone_url and web_url
    when they answer an error) is an error of kind auth. Blob and commit
    ids are never invented here: one an adapter can tell it never emitted
    may be refused on sight with not_found.

    Falsified by: auth-as-provider: Credential failures are reported with kind "provider".
    """
    judge_fault(adapter, fx, "auth")


@case("FC-061")
def test_rate_limited_kind(adapter, fx):
    """Throttling (every request naming the `throttled` fault repo that the
    adapter must take to its backend, as FC-060 asks them) is an error of
    kind rate_limited; it should carry the backend's retry_after_s (absent
    or another delay warns: §6.3 SHOULD; its type is FC-063's).

    Falsified by: throttle-as-network: Rate limits are reported with kind "network".
    """
    errors = judge_fault(adapter, fx, "rate_limited")
    want = faults(fx).get(FAULT_OF["rate_limited"], {}).get("retry_after_s")
    if want is None:
        return
    for method, err in errors.items():
        data = err.data if isinstance(err.data, dict) else {}
        if data.get("retry_after_s") is None:   # absent, or null (no value: §3.0)
            warn(f"throttling of {method} came without retry_after_s ({want} expected)")
            continue
        sent = data["retry_after_s"]
        # its type (a non-negative JSON integer) is error shape, FC-063's; its
        # value is the backend's by a SHOULD (§6.3), so another delay warns
        if type(sent) is int and sent != want:
            warn(f"throttling of {method} came with retry_after_s {sent}; the backend asked "
                 f"for {want}")


@case("FC-062")
def test_not_found_kind(adapter, fx):
    """repo/blob of an unknown id (64-hex and non-hex) in every served repo,
    and every method naming a missing repo (repo/tree aside: FC-025's), are
    errors of kind not_found; a result where an error was due is not judged
    here except for repo/blob and repo/blob_at (§3.4, §3.5: bytes are the
    file's, and a missing repository has none).

    Falsified by: blob-notfound-as-provider: repo/blob answers unknown ids and repositories with
    kind "provider".
    """
    for repo, name in served(fx).items():
        for sha in (unknown_blob_id(), "not-a-hex-id!"):
            what = f"repo/blob of the unknown id {sha!r} in {repo}"
            err = expect_error(adapter, "repo/blob", {"repo": repo, "sha": sha}, what=what)
            judge_kind(err, "not_found", what=what)
    missing = f"{fx.org}/no-such-repo-fc062"
    for method, params in repo_asks(adapter, missing, tree=False):
        what = f"{method} {show(params, 100)} (a missing repo)"
        if method in BYTES_METHODS:   # bytes of a file that cannot exist: an error is due
            err = expect_error(adapter, method, params, what=what)
        else:
            _, err = try_request(adapter, method, params)   # a result is not this case's concern
            if err is None:
                continue
        judge_kind(err, "not_found", what=what)


@case("FC-063")
def test_error_shape(adapter, fx):
    """Every error the adapter answers (each method naming a missing repo, an
    unknown blob, an unknown ref on each revision method, an unknown method,
    every fault repo on every method) has a non-empty message, an integer
    code, data absent or an object, kind absent or a non-empty string,
    retry_after_s absent or a non-negative JSON integer (null is no value,
    as absent: §3.0, genuinely optional members accept null). Kinds are not
    judged here (the `broken` fault's kind included), nor whether a request
    is answered at all: one the adapter leaves to the deadline has no error
    to judge (FC-025, FC-062, FC-092, FC-097... own answering it).

    The code MUST be an integer and SHOULD be positive (PROTOCOL §6.1's
    table): a code of 0 or below warns, and so does a code of the reserved
    JSON-RPC range (-32768..-32000, for protocol-level failures) on an error
    that is not one, i.e. anything but the unknown method.

    Falsified by: empty-error-messages: Every error message is the empty string.
    """
    missing = f"{fx.org}/no-such-repo-fc063"
    caps = adapter.caps
    asks = repo_asks(adapter, missing)
    asks += [("repo/blob", {"repo": fx.repo(ALPHA), "sha": unknown_blob_id()}),
             (UNKNOWN_METHOD, {})]
    # an unknown ref on every method that takes one (the revision flows)
    revs = fx.repo(VCS) if fx.vcs_built else fx.repo(ALPHA)
    asks += at_ref(caps, revs, NO_SUCH_REF)
    if not faults_disabled():
        for name in FAULT_REPOS:
            asks += repo_asks(adapter, fx.repo(name))
    problems, advised, judged = [], [], 0
    for method, params in asks:
        try:
            _, err = try_request(adapter, method, params)   # a result is not this case's concern
        except ProviderTimeout:
            continue   # no error to judge; answering at all is the kind cases' rule
        if err is None:
            continue
        judged += 1
        problem = error_shape_problem(err, unknown_method=method == UNKNOWN_METHOD)
        if problem:
            problems.append(f"{method} {show(params, 90)}: {problem}")
        else:
            advice = code_advice(err.raw.get("code"), unknown_method=method == UNKNOWN_METHOD)
            if advice:
                advised.append(f"{method} {show(params, 90)}: {advice}")
    if advised:
        warn(f"error codes SHOULD be positive integers (PROTOCOL §6.1): {listing(advised, 3)}")
    fc_assert(not problems, expected="a non-empty message, an integer code, kind a non-empty "
              "string", got=listing(problems, 4), why="every error reply has the protocol's shape")
    need(judged, f"none of the {len(asks)} requests for missing things (and an unknown method) "
         f"answered an error", f"{owner('errors for a missing repository are')}, "
         f"{owner('errors for a missing blob are')}")


def error_shape_problem(err, *, unknown_method):
    """What is wrong with one error object's shape, or None."""
    raw = err.raw
    if raw is None:
        return "the error member is not an object"
    try:
        obj = structure(raw, ErrorObject)
    except ShapeError as exc:
        return str(exc)
    if not obj.message:
        return "empty message"
    if obj.data is not None and obj.data.kind == "":
        return "empty data.kind"
    retry = raw.get("data", {}).get("retry_after_s") if isinstance(raw.get("data"), dict) else None
    if retry is not None and type(retry) is not int:
        return (f"retry_after_s {show(retry)} (a non-negative JSON integer; the host ignores "
                f"anything else)")
    return None


RESERVED_CODES = range(-32768, -32000 + 1)   # JSON-RPC's, for protocol-level failures


def code_advice(code, *, unknown_method):
    """Why an integer ``code`` breaks §6.1's SHOULD (positive; the reserved
    range only for protocol-level failures such as an unknown method), or None."""
    if code in RESERVED_CODES:
        return None if unknown_method else f"code {code} (reserved for protocol-level failures)"
    return None if code > 0 else f"code {code} (not positive)"


# ---------------------------------------------------------------- FC-064

# A backend failure reported with one of these sends the user after the wrong cause.
MISLEADING_KINDS = ("network", "auth", "rate_limited", "not_found")


@case("FC-064")
def test_broken_is_provider(adapter, fx):
    """Every request naming the `broken` fault repo that the adapter must
    take to its backend (a backend failure: tree and each revision method
    the adapter declares, at ref null and at a named ref; clone_url and
    web_url when they answer an error; never an invented id, as in FC-060)
    is an error of kind provider: network, auth, rate_limited or not_found
    fail (they blame the wrong cause); no kind or another kind warns.

    Falsified by: broken-clone-url-network: repo/clone_url reports the backend failure (kind
    provider) with kind "network".
    """
    for what, err in fault_errors(adapter, fx, FAULT_OF["provider"]).values():
        judge_fault_kind(err, "provider", what=what)
