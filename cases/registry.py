"""Who owns what: every case id, and the one case that owns each rule, here and nowhere else.

Everything that decides which case a verdict belongs to lives in this file;
the modules that judge look their owner up here and name no case themselves.
The tables:

* ``REGISTRY``: the case matrix. Each entry binds a stable id (``FC-nnn``) to
  its group (the case module ``cases/test_<group>.py`` that implements it),
  its title and the spec section it cites, plus ``since``: the protocol
  revision the rule arrived in. Ids never change meaning: a retired rule
  keeps its id unused, a new rule gets a new id.
* ``OWNERS``: every rule key -> the one case that owns it.

  - Run-wide rules, judged on every frame and process of the run (RULINGS
    "Attribution"): the key a finding carries (``wire/monitor.py``'s frame
    rules, the judges of ``cases/judges/claims.py`` and ``cases/judges/null_params.py``,
    ``cases/judges/monitoring.py``'s cache root), refined by what the finding is
    about where one rule has several owners: the notification answered, the
    method, ``streamed``, the member path (``[]``: any item), e.g.
    ``result-shape repo/tree truncated``. ``rule_owner`` takes the most
    specific key that is listed.
  - Topics: what a case's not-evaluated skip names as another case's
    (``cases.kit.api.owner("tree replies are")`` -> "tree replies are FC-020's").

* ``NOT_OWNED``: the run-wide rules no case owns, and why.
* ``SPEC_RULES``: each adapter rule of PROTOCOL.md (an id of
  ``cases/judges/rules.json``, which holds its section, strength and words) -> the
  cases that judge it (several when each judges a part of it).

tests/test_registry.py checks that every judge's key and every monitor rule
has exactly one owner here, that every owner is a case of ``REGISTRY``, and
that no key is left that nothing reports; ``markdown_table()`` renders the
README's case table from ``REGISTRY``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Case", "REGISTRY", "GROUPS", "GROUP_HEADINGS", "LEVELS", "OWNERS", "NOT_OWNED",
           "SPEC_RULES", "by_id", "in_group", "owner_of", "rule_owner", "markdown_table",
           "TABLE_BEGIN", "TABLE_END"]


@dataclass(frozen=True)
class Case:
    id: str       # "FC-013"
    group: str    # "content_ids": the module cases/test_content_ids.py
    title: str    # what the case encodes, as the brief words it
    spec: str     # the protocol section it cites
    since: str    # protocol revision the rule arrived in: one of LEVELS

    @property
    def module(self) -> str:
        return f"cases/test_{self.group}.py"


# Group name -> the heading the brief's matrix uses for it (table order).
GROUP_HEADINGS = {
    "handshake": "Handshake (v1)",
    "content_ids": "Content ids",
    "trees": "Trees & blobs",
    "search": "Search (v1.3)",
    "streaming": "Streaming (v1.3)",
    "lifecycle": "Lifecycle",
    "errors": "Errors (taxonomy)",
    "bounded": "Bounded compute (advisory)",
    "icons": "Icons (v1.3)",
    "revisions": "Revisions (v1.5)",
    "commits": "Commits (v1.6)",
    "listings": "Listings & links",
    "transport": "Transport",
    "roundtrips": "Revision round trips",
}
GROUPS: tuple[str, ...] = tuple(GROUP_HEADINGS)

# Protocol levels whose cases the terminal summary reports as met or not.
LEVELS = ("v1", "v1.1", "v1.2", "v1.3", "v1.4", "v1.5", "v1.6")

# rule key -> the case that owns it (see the module doc)
OWNERS: dict[str, str] = {
    # wire/monitor.py's frame rules, on every frame of the run
    "stdout-utf8": "FC-123",
    "stdout-json": "FC-123",
    "jsonrpc": "FC-124",
    "reply-members": "FC-124",
    "request-to-host": "FC-124",
    "reply-id": "FC-120",
    "reply-unknown": "FC-120",
    "reply-twice": "FC-120",
    "notification-answered": "FC-054",   # an answer to an unsolicited notification
    "notification-answered $/cancelRequest": "FC-122",   # to a cancel: the cancel edges'
    "partial-opt-in": "FC-046",
    "partial-after-reply": "FC-041",
    "partial-id": "FC-040",
    "partial-items": "FC-044",
    "partial-items items[] located": "FC-032",
    "base64": "FC-024",
    "error-shape": "FC-063",
    # every initialize result of the run: each generation of every process, a
    # second initialize on one process too
    "handshake-protocol": "FC-001",
    "handshake-name": "FC-002",
    "handshake-capabilities": "FC-003",
    "handshake-icon": "FC-004",
    "handshake-revision-capabilities": "FC-099",   # RULINGS: the revision keys are FC-099's
    "handshake-cache": "FC-005",   # the cache budget's reply member (§2.3)
    # an adapter process ending unasked (RULINGS "Process behaviour"), by what it followed
    "exit-after-cancel": "FC-122",         # §5.4 "no error, no crash", whichever id it names
    "exit-after-notification": "FC-054",   # §7.2, §7.7 unsolicited notifications are ignored
    "exit-idle": "FC-050",                 # a warning: the host restarts it (§7.10's backoff)
    # result shapes: by method, refined by the member the first problem is at
    "result-shape repo/tree": "FC-021",
    "result-shape repo/tree truncated": "FC-022",
    "result-shape repo/blob": "FC-024",
    "result-shape repo/blob_at": "FC-096",
    "result-shape repo/refs": "FC-090",
    "result-shape repo/log": "FC-094",
    "result-shape repo/log truncated": "FC-095",   # R-3.7-limit: the log's truncated
    "result-shape repo/blame": "FC-098",
    "result-shape repo/commit": "FC-100",
    "result-shape search/repos": "FC-110",
    "result-shape org/repos": "FC-111",
    "result-shape org/repos repos[] name": "FC-112",
    "result-shape org/repos repos[] description": "FC-112",
    "result-shape org/repos repos[] private": "FC-112",
    "result-shape org/repos repos[] archived": "FC-112",
    "result-shape org/repos repos[] pushed_at": "FC-112",
    "result-shape repo/clone_url": "FC-113",
    "result-shape repo/web_url": "FC-114",
    "result-shape org/url": "FC-115",
    "result-shape search/code": "FC-070",   # one-shot search replies
    "result-shape search/code index": "FC-033",
    "result-shape search/code items[] line": "FC-031",
    "result-shape search/code items[] located": "FC-032",
    "result-shape search/code streamed": "FC-042",   # a stream's final reply: metadata only
    "result-shape search/code streamed index": "FC-033",
    # cases/judges/claims.py: replies judged from the fixture's bytes and from git
    "tree-truncated": "FC-022",
    "log-truncated": "FC-095",
    "search-truncated": "FC-070",
    "stream-truncated": "FC-042",
    "icon-display": "FC-080",   # a one-code-point icon displayable, every handshake
    "commit-truncated": "FC-109",   # a commit's complete file list said truncated
    "search-line": "FC-031",   # a hit's line holds a match, on every search of the run
    "log-order": "FC-094",   # a log's items newest first, every vcs log of the run
    "log-date": "FC-094",   # a log item's date: ISO-8601, an instant of its commit, every log
    # cases/judges/null_params.py: §3.0 null like absent, on the first request of each method
    "null-like-absent": "FC-053",   # reader tolerance of params (RULINGS)
    # cases/judges/monitoring.py: what a process left in its host cache root
    "cache-root": "FC-055",

    # topics: what a case's not-evaluated skip names ("<topic> FC-nnn's")
    "coverage is": "FC-020",
    "starting without the cache params is": "FC-005",
    "handshake protocol values are": "FC-001",
    "handshake names are": "FC-002",
    "base capability values are": "FC-003",
    "handshake icons are": "FC-004",
    "revision capability values are": "FC-099",
    "tree replies are": "FC-020",
    "entry shas are": "FC-021",
    "blob replies are": "FC-024",
    "blobs above 1 MiB are": "FC-023",
    "credential faults are": "FC-060",
    "throttling faults are": "FC-061",
    "backend failure faults are": "FC-064",
    "ids shared by different contents are": "FC-012",
    "emitted blob ids resolving is": "FC-012",
    "ids from one call to the next are": "FC-010",
    "walks cut without truncated: true are": "FC-022",
    "search recall is": "FC-070",
    "one-shot search replies are": "FC-070",
    "path: queries are": "FC-034",
    "streamed replies are": "FC-042",
    "streamed hits are": "FC-042",
    "serving after a respawn is": "FC-050",
    "answering initialize after a respawn is": "FC-050",
    "network I/O during initialize is": "FC-052",
    "errors for a missing repository are": "FC-025",
    "errors for a missing blob are": "FC-062",
    "refs replies are": "FC-090",
    "trees at a ref are": "FC-091",
    "log replies are": "FC-094",
    "blob_at replies are": "FC-096",
    "logs at a ref are": "FC-130",
    "unknown params members are": "FC-053",
    "blob_at shas at a ref are": "FC-096",
    "blame replies are": "FC-098",
    "serving repo/commit at all is": "FC-099",
    "commit replies are": "FC-100",
    "commit identities are": "FC-101",
    "commit messages are": "FC-102",
    "commit files are": "FC-103",
    "renamed files' previous paths are": "FC-104",
    "patch formats are": "FC-105",
    "metadata-only and binary changes are": "FC-106",
    "commit line counts are": "FC-107",
    "commit truncation claims are": "FC-109",
    "org/repos entries are": "FC-111",
    "org/repos object members are": "FC-112",
    "ids across refs are": "FC-093",
    "declared capabilities served are": "FC-099",
    "ids across respawns are": "FC-013",
    "search hit lines are": "FC-031",
    "log cuts are": "FC-095",
    "web URLs are": "FC-114",
    "requests in flight at once are": "FC-120",
    "cancelled streams are": "FC-045",
    "clone URLs are": "FC-113",
    "listed repository ids are": "FC-110",
    "org URLs are": "FC-115",
}

# Run-wide rules no case owns: rule key -> why.
NOT_OWNED: dict[str, str] = {
    # each request in flight fails, as in the host, in the case waiting on it
    # (cases/report/explain.py names the exit status): one defect, one case
    "exit-in-flight": "the case waiting on the request fails on its closed output",
}

# PROTOCOL.md's adapter rules (cases/judges/rules.json ids) -> the cases that judge them.
# A rule absent here is judged by no case (rules.json gives it a status or a plan).
SPEC_RULES: dict[str, tuple[str, ...]] = {
    "R-1.1-repo-ids": ("FC-020",),
    "R-1.1-ids-round-trip": ("FC-110",),
    "R-1.2-one-line": ("FC-123",),
    "R-1.2-utf8": ("FC-123",),
    "R-1.2-jsonrpc": ("FC-124",),
    "R-1.2-reply-id": ("FC-120",),
    "R-1.2-result-xor-error": ("FC-124",),
    "R-1.2-no-answer-to-notifications": ("FC-054",),
    "R-2.1-initialize-id": ("FC-050", "FC-051"),
    "R-2.1-answer-every-initialize": ("FC-121",),
    "R-2.1-initialize-deadline": ("FC-050",),
    "R-2.1-no-network-in-initialize": ("FC-052",),
    "R-2.2-cache-params-absent": ("FC-005",),
    "R-2.2-unknown-initialize-params": ("FC-053",),
    "R-2.3-protocol-integer": ("FC-001",),
    "R-2.3-shape": ("FC-002", "FC-003", "FC-004", "FC-005"),
    "R-2.3-unknown-members": ("FC-001", "FC-002", "FC-003", "FC-004"),
    "R-2.4-booleans": ("FC-003", "FC-099"),
    "R-2.4-true-only-if-implemented": ("FC-099", "FC-034"),
    "R-2.4-partial-support": ("FC-099",),
    "R-2.5-icon-absent": ("FC-004",),
    "R-2.5-icon-shape": ("FC-004", "FC-080"),
    "R-3.0-unknown-params": ("FC-053",),
    "R-3.0-null-is-absent": ("FC-053", "FC-133"),
    "R-3.0-optional-params-absent": ("FC-005", "FC-053", "FC-070"),
    "R-3.1-shape": ("FC-110",),
    "R-3.2-shape": ("FC-111", "FC-112"),
    "R-3.2-relative-names": ("FC-111",),
    "R-3.3-shape": ("FC-020", "FC-021", "FC-022", "FC-091"),
    "R-3.3-recursive": ("FC-020", "FC-021"),
    "R-3.3-no-wire-pagination": ("FC-022",),
    "R-3.3-truncated-iff-cut": ("FC-022",),
    "R-3.3-unknown-repo-error": ("FC-025",),
    "R-3.3-unknown-ref-error": ("FC-092",),
    "R-3.3-tree-at-ref": ("FC-091", "FC-093"),
    "R-3.3-branch-echo": ("FC-091",),
    "R-3.4-shape": ("FC-024",),
    "R-3.4-strict-base64": ("FC-024",),
    "R-3.4-raw-bytes": ("FC-024",),
    "R-3.4-unknown-error": ("FC-062",),
    "R-3.4-emitted-ids-resolve": ("FC-011", "FC-012", "FC-030", "FC-091"),
    "R-3.4-big-blob-either": ("FC-023",),
    "R-3.4-big-blob-intact": ("FC-023",),
    "R-3.5-shape": ("FC-096",),
    "R-3.5-bytes-at-ref": ("FC-096",),
    "R-3.5-sha-is-tree-sha": ("FC-096",),
    "R-3.5-unknown-error": ("FC-062", "FC-097"),
    "R-3.6-shape": ("FC-090",),
    "R-3.6-one-default": ("FC-090",),
    "R-3.6-mark-default": ("FC-090",),
    "R-3.6-sha-on-every-entry": ("FC-090",),
    "R-3.6-refs-round-trip": ("FC-091", "FC-096", "FC-130", "FC-131", "FC-132"),
    "R-3.7-shape": ("FC-094",),
    "R-3.7-newest-first": ("FC-094",),
    "R-3.7-iso-dates": ("FC-094",),
    "R-3.7-path-filter": ("FC-094",),
    "R-3.7-walk-from-ref": ("FC-130",),
    "R-3.7-limit": ("FC-095",),
    "R-3.7-default-limit": ("FC-094",),
    "R-3.7-shas-round-trip": ("FC-132",),
    "R-3.8-shape": ("FC-098",),
    "R-3.8-one-based-inclusive": ("FC-098",),
    "R-3.8-cover-every-line": ("FC-098",),
    "R-3.8-coalesced": ("FC-098",),
    "R-3.8-last-change": ("FC-098", "FC-131"),
    "R-3.8-author-date": ("FC-098",),
    "R-3.8-no-fake-ranges": ("FC-098",),
    "R-3.9-shape": ("FC-113",),
    "R-3.9-git-clone-accepts": ("FC-113",),
    "R-3.10-shape": ("FC-114",),
    "R-3.11-shape": ("FC-115",),
    "R-3.12-shape": ("FC-100",),
    "R-3.12-identity": ("FC-101",),
    "R-3.12-status-words": ("FC-104",),
    "R-3.12-counts-are-lines": ("FC-107",),
    "R-3.12-truncated-meaning": ("FC-109",),
    "R-3.12-message-complete": ("FC-102",),
    "R-3.12-previous-path": ("FC-104",),
    "R-3.12-first-parent": ("FC-103",),
    "R-3.12-hunks-only": ("FC-105",),
    "R-3.12-no-file-headers": ("FC-105",),
    "R-3.12-patch-meaning": ("FC-106",),
    "R-3.12-no-zero-counts": ("FC-107",),
    "R-3.13-shape": ("FC-032", "FC-042", "FC-044", "FC-070"),
    "R-3.13-path-only-hits": ("FC-030",),
    "R-3.13-line-real": ("FC-031",),
    "R-3.13-as-of-string": ("FC-033",),
    "R-3.13-matches-literal": ("FC-030",),
    "R-3.13-truncated-provable": ("FC-070",),
    "R-3.13-limit-stop": ("FC-070",),
    "R-3.13-limit-ignore": ("FC-070",),
    "R-4-id-changes-with-bytes": ("FC-011",),
    "R-4-ids-stable": ("FC-010", "FC-013"),
    "R-4-no-shared-ids": ("FC-011", "FC-012"),
    "R-4-ids-differ-across-refs": ("FC-093",),
    "R-4-ids-shared-across-refs": ("FC-093",),
    "R-5.1-opt-in-only": ("FC-046",),
    "R-5.1-items-in-partials": ("FC-042",),
    "R-5.2-notification-no-id": ("FC-124",),
    "R-5.2-params-id": ("FC-040",),
    "R-5.2-items-shape": ("FC-044",),
    "R-5.3-partials-before-reply": ("FC-041",),
    "R-5.3-metadata-only-reply": ("FC-042",),
    "R-5.3-batch-cadence": ("FC-043",),
    "R-5.4-no-reply-to-cancel": ("FC-054", "FC-122"),
    "R-5.4-ignore-unknown-cancels": ("FC-054", "FC-122"),
    "R-5.4-may-ignore-cancels": ("FC-045",),
    "R-5.4-terminal-reply": ("FC-045",),
    "R-6.1-shape": ("FC-063",),
    "R-6.1-code-integer": ("FC-063",),
    "R-6.1-code-positive": ("FC-063",),
    "R-6.1-message-string": ("FC-063",),
    "R-6.1-errors-belong": ("FC-120",),
    "R-6.1-unknown-method": ("FC-063",),
    "R-6.2-kind-auth": ("FC-060",),
    "R-6.2-kind-rate-limited": ("FC-061",),
    "R-6.2-kind-not-found": ("FC-025", "FC-062", "FC-092", "FC-097", "FC-108"),
    "R-6.2-kind-provider": ("FC-064",),
    "R-6.3-send-retry-after": ("FC-061",),
    "R-6.3-retry-after-integer": ("FC-063", "FC-061"),
    "R-7.1-killable": ("FC-050",),
    "R-7.2-notifications-ignored": ("FC-054",),
    "R-7.2-stdout-protocol-only": ("FC-123",),
    "R-7.4-concurrent-any-order": ("FC-120",),
    "R-7.4-no-interleaving": ("FC-120", "FC-123"),
    "R-7.4-sequential": ("FC-120",),
    "R-7.6-no-requests-to-host": ("FC-124",),
    "R-7.8-diagnostics-to-stderr": ("FC-123",),
    "R-7.11-startup-cheap-idempotent": ("FC-050", "FC-051"),
    "R-7.11-no-shutdown-signal": ("FC-050",),
    "R-7.12-credential-error-is-auth": ("FC-060",),
    "R-10.2-not-host-root": ("FC-055",),
    "R-10.2-report-size": ("FC-051",),
}

_H, _CI, _T, _S, _ST = "handshake", "content_ids", "trees", "search", "streaming"
_L, _E, _B, _I, _R = "lifecycle", "errors", "bounded", "icons", "revisions"
_C, _LI, _TR, _RT = "commits", "listings", "transport", "roundtrips"
_COMMIT = "§Methods repo/commit (v1.6)"
_REV = "§Methods (Revisions, v1.5)"
_TOL = "§Transport (reader tolerance, normative both directions)"

REGISTRY: tuple[Case, ...] = (
    Case("FC-001", _H, "protocol=1 echoes", "§Handshake", "v1"),
    Case("FC-002", _H, "name present or absent", "§Handshake", "v1"),
    Case("FC-003", _H, "capabilities shape", "§Handshake (file_search, v1.3)", "v1.3"),
    Case("FC-004", _H, "icon is a builtin name or a single glyph or absent",
         "§Handshake (icon, v1.3)", "v1.3"),
    Case("FC-005", _H, "cache budget params tolerated when absent",
         "§Handshake (cache budget, v1.2)", "v1.2"),

    Case("FC-010", _CI, "same bytes -> same sha across two calls", "§Content ids", "v1"),
    Case("FC-011", _CI, "changed bytes -> different sha", "§Content ids", "v1"),
    Case("FC-012", _CI, "different content -> different sha (no path-keyed collisions)",
         "§Content ids", "v1"),
    Case("FC-013", _CI, "sha stability across respawns",
         "§Content ids + §Transport (restart obligations)", "v1"),

    Case("FC-020", _T, "recursive walk covers every fixture path", "§Methods repo/tree", "v1"),
    Case("FC-021", _T, "dir vs blob typing", "§Methods repo/tree", "v1"),
    Case("FC-022", _T, "truncated flag past a cap", "§Methods repo/tree", "v1"),
    Case("FC-023", _T, "blob >1 MiB refused (any error, provider kind preferred)",
         "§Methods repo/blob", "v1"),
    Case("FC-024", _T, "binary bytes served raw, base64 valid", "§Methods repo/blob", "v1"),
    Case("FC-025", _T, "tree at missing repo -> not_found",
         "§Methods repo/tree + §Errors (kinds, v1.1)", "v1.1"),

    Case("FC-030", _S, "path-only hit: empty matches legal, must render",
         "§Methods search/code", "v1.3"),
    Case("FC-031", _S, "line is 1-based and equals the fixture's real line",
         "§Methods search/code (line, v1.3)", "v1.3"),
    Case("FC-032", _S, "located:false tolerated",   # the located flag arrived in v1.1
         "§Methods search/code + §Progressive results (located, v1.3)", "v1.1"),
    Case("FC-033", _S, "index.as_of shape when present",
         "§Methods search/code (index, v1.3)", "v1.3"),
    Case("FC-034", _S, "file_search inherits code_search when absent",
         "§Handshake (capabilities, v1.3)", "v1.3"),

    Case("FC-040", _ST, "every $/partial carries the request's id",
         "§Progressive results (v1.3)", "v1.3"),
    Case("FC-041", _ST, "all partials precede the reply, no partial after it",
         "§Progressive results (v1.3)", "v1.3"),
    Case("FC-042", _ST,
         "reply is metadata-only when streamed (items empty, truncated authoritative)",
         "§Progressive results (v1.3)", "v1.3"),
    Case("FC-043", _ST, "inactivity deadline: a batch every 1.2s must not trip a 2s timeout",
         "§Transport (progressive results — per-inactivity deadline, v1.3)", "v1.3"),
    Case("FC-044", _ST, "a batch larger than the client's render budget is accepted",
         "§Progressive results (v1.3)", "v1.3"),
    # Its level is the wording it enforces: v1.6's advisory cancel, a normal
    # terminal reply after every cancel (PROTOCOL §1.4, §5.4); v1.5 let a
    # cancel end the stream with the reply optional, so --level v1.5 leaves it out.
    Case("FC-045", _ST, "stream stops cleanly on $/cancelRequest (advisory; must not error)",
         "§Cancellation (v1.6 wording) + §Progressive results (v1.3)", "v1.6"),
    Case("FC-046", _ST, "no $/partial for a request that did not opt in (every frame of the run)",
         "§Progressive results (opt-in, v1.3)", "v1.3"),

    Case("FC-050", _L, "kill mid-session: respawn is cheap and idempotent",
         "§Transport (restart, v1.2)", "v1.2"),
    Case("FC-051", _L, "initialize re-runs every generation with the same cache params",
         "§Transport (restart obligations)", "v1.2"),   # restarts and cache params: v1.2
    Case("FC-052", _L, "no network I/O during initialize (credentials are lazy)",
         "§Transport (restart obligations) + §Configuration (credential conventions)", "v1"),
    Case("FC-053", _L, "unknown fields in requests are ignored", _TOL, "v1"),
    Case("FC-054", _L, "unsolicited notifications ignored", _TOL, "v1"),
    Case("FC-055", _L, "nothing written into the host's cache root outside providers/",
         "§Disk caches", "v1.2"),

    Case("FC-060", _E, "auth for credential failures", "§Errors (kinds, v1.1)", "v1.1"),
    Case("FC-061", _E, "rate_limited with retry_after_s when applicable",
         "§Errors (kinds, v1.1)", "v1.1"),
    Case("FC-062", _E, "not_found for missing repo/blob", "§Errors (kinds, v1.1)", "v1.1"),
    Case("FC-063", _E, "unknown kinds tolerated (suite asserts shape, not kind set)",
         "§Errors (kinds, v1.1 — open enum)", "v1.1"),
    Case("FC-064", _E, "a backend failure (the broken fault) is kind provider, never "
         "network/auth/rate_limited/not_found", "§Errors (kinds, v1.1)", "v1.1"),

    # `truncated` on search/code arrived in v1.2, the advisory `limit` it judges in v1.4.
    Case("FC-070", _B, "honoring limit stops at ~N and sets truncated: true",
         "§Methods search/code (bounded compute, advisory)", "v1.4"),

    Case("FC-080", _I, "icon is absent, a builtin name, or a single glyph",
         "§Handshake (icon, v1.3)", "v1.3"),

    Case("FC-090", _R, "refs shape: branches/tags arrays, sha present, at most one default",
         "§Handshake (capabilities, v1.5) + " + _REV, "v1.5"),
    Case("FC-091", _R, "tree at ref serves that ref (git's paths and bytes; branch echo advised)",
         _REV, "v1.5"),
    Case("FC-092", _R, "tree at unknown ref -> error (not_found preferred)",
         _REV + " + §Errors", "v1.5"),
    Case("FC-093", _R, "sha discipline across refs: content differs -> ids differ (change "
         "rule, both directions); same-content sharing advisory",
         _REV + " + §Content ids", "v1.5"),
    Case("FC-094", _R, "log shape: newest-first, ISO-8601 dates, path filter narrows",
         _REV, "v1.5"),
    Case("FC-095", _R, "log limit stops at ~N and sets truncated: true",
         _REV + " (bounded compute)", "v1.5"),
    Case("FC-096", _R, "blob_at serves the ref's bytes; sha matches the tree-at-ref entry",
         _REV, "v1.5"),
    Case("FC-097", _R, "blob_at unknown path/ref -> not_found", _REV + " + §Errors", "v1.5"),
    Case("FC-098", _R, "blame ranges: 1-based, cover every line, same-sha coalesced, right shas",
         _REV, "v1.5"),
    Case("FC-099", _R, "capability honesty: refs/log/blame are booleans; false is never asked",
         "§Handshake (capabilities; commit, v1.6)", "v1.6"),

    Case("FC-100", _C, "commit shape: required members typed, optional members typed when "
         "present, ISO-8601 date", _COMMIT, "v1.6"),
    Case("FC-101", _C, "commit identity: sha resolves to the commit, parents in order (first "
         "first, root []), a date of that commit (author or committer)", _COMMIT, "v1.6"),
    Case("FC-102", _C, "message is complete (subject and body) without a trailing newline",
         _COMMIT, "v1.6"),
    Case("FC-103", _C, "files are the first-parent diff (root: all added against the empty "
         "tree; merge: first parent)", _COMMIT, "v1.6"),
    Case("FC-104", _C, "statuses lower-case (another string warns); renamed carries "
         "previous_path", _COMMIT, "v1.6"),
    Case("FC-105", _C, "patch is hunks only: headers match bodies, no file headers, \\n-joined, "
         "no trailing newline", _COMMIT, "v1.6"),
    Case("FC-106", _C, "metadata-only change has patch \"\"; a binary change has no text patch "
         "(binary: true)", _COMMIT, "v1.6"),
    Case("FC-107", _C, "counts equal the patch's +/- lines; unknown counts omitted, never zero",
         _COMMIT, "v1.6"),
    Case("FC-108", _C, "unknown sha -> answered, an error advised (not_found preferred; a "
         "result warns)", _COMMIT + " + §Errors",
         "v1.6"),
    Case("FC-109", _C, "truncated true only when the file list is incomplete", _COMMIT, "v1.6"),

    Case("FC-110", _LI, "search/repos: items with a string full_name or org; fixture repos found "
         "by name (warns); listed ids accepted back", "§Methods search/repos", "v1"),
    Case("FC-111", _LI, "org/repos: names relative to the org, alpha/beta/vcs listed; an org "
         "that cannot be listed is an error (warns)", "§Methods org/repos", "v1"),
    Case("FC-112", _LI, "org/repos objects: string name, optional members typed, pushed_at "
         "ISO-8601", "§Methods org/repos (rich entries, v1.4)", "v1.4"),
    Case("FC-113", _LI, "repo/clone_url: a path or URL git clone accepts (vcs cloned, its "
         "branches checked)", "§Methods repo/clone_url", "v1"),
    Case("FC-114", _LI, "repo/web_url: a URL for a file, a directory and the root; line and "
         "range anchors (warn)", "§Methods repo/web_url", "v1"),
    Case("FC-115", _LI, "org/url: a URL string", "§Methods org/url", "v1"),

    Case("FC-120", _TR, "requests in flight at once: each answered once, under its own id, in "
         "any order", "§Transport (concurrency, out-of-order replies, v1.2)", "v1.2"),
    Case("FC-121", _TR, "a second initialize on the same process is answered", "§Handshake",
         "v1"),
    Case("FC-122", _TR, "$/cancelRequest for a finished request changes nothing (no reply)",
         "§Cancellation", "v1.1"),
    Case("FC-123", _TR, "nothing but protocol messages on stdout (junk lines fail)",
         "§Transport (framing)", "v1"),
    Case("FC-124", _TR, "envelope: jsonrpc \"2.0\", exactly one of result/error, no requests "
         "to the host", "§Transport (framing)", "v1"),

    Case("FC-130", _RT, "log at a non-null ref walks history from that revision", _REV, "v1.5"),
    Case("FC-131", _RT, "blame at a non-null ref blames that revision", _REV, "v1.5"),
    Case("FC-132", _RT, "log's commit ids are accepted back as refs (blob_at, and tree when "
         "refs is declared)", _REV, "v1.5"),
    Case("FC-133", _RT, "blob_at with ref null serves the default branch; sha matches the tree "
         "entry", _REV, "v1.5"),
)

_BY_ID = {c.id: c for c in REGISTRY}


def by_id(case_id: str) -> Case:
    """The registry entry of ``case_id``; KeyError naming the id if unknown."""
    try:
        return _BY_ID[case_id]
    except KeyError:
        raise KeyError(f"unknown case id {case_id!r}") from None


def owner_of(key: str) -> str:
    """The id of the case that owns ``key`` (a key of OWNERS)."""
    try:
        return OWNERS[key]
    except KeyError:
        raise KeyError(f"no case owns {key!r} (add it to cases.registry.OWNERS)") from None


def rule_owner(*parts: str) -> str | None:
    """The owner of a run-wide finding described by ``parts`` (its rule key,
    then what refines it, most general first): the owner of the longest
    leading run of them OWNERS lists; None when no case owns the rule."""
    for n in range(len(parts), 0, -1):
        owner = OWNERS.get(" ".join(parts[:n]))
        if owner is not None:
            return owner
    return None


def in_group(group: str) -> tuple[Case, ...]:
    return tuple(c for c in REGISTRY if c.group == group)


TABLE_BEGIN = "<!-- cases:begin -->"
TABLE_END = "<!-- cases:end -->"


def markdown_table() -> str:
    """The README case table (without the markers), generated from REGISTRY."""
    rows = ["| Case | Encodes | Spec | Since | Group |", "|---|---|---|---|---|"]
    for group in GROUPS:
        rows.append(f"| **{GROUP_HEADINGS[group]}** | | | | |")
        for c in in_group(group):
            title = c.title.replace("|", "\\|")
            rows.append(f"| {c.id} | {title} | {c.spec} | {c.since} | {c.group} |")
    return "\n".join(rows) + "\n"


def update_readme(path) -> bool:
    """Rewrite the table between the markers of ``path``; True if it changed."""
    from pathlib import Path
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition(TABLE_BEGIN)
    _old, sep2, tail = rest.partition(TABLE_END)
    if not sep or not sep2:
        raise ValueError(f"{path} has no {TABLE_BEGIN} ... {TABLE_END} markers")
    new = f"{head}{TABLE_BEGIN}\n{markdown_table()}{TABLE_END}{tail}"
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":   # python3 -m cases.registry [--update-readme]
    import sys
    from pathlib import Path
    if sys.argv[1:] == ["--update-readme"]:
        readme = Path(__file__).resolve().parent.parent / "README.md"
        print("README.md updated" if update_readme(readme) else "README.md already current")
    else:
        sys.stdout.write(markdown_table())
