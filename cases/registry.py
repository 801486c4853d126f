"""The case matrix: the single source of truth for every case id.

Each entry binds a stable id (``FC-nnn``) to its group (the case module
``cases/test_<group>.py`` that implements it), its title and the spec section
it cites, exactly as the product brief lists them, plus ``since``: the
protocol revision the rule arrived in (taken from the title/spec text or the
group heading; base cases are "v1"). Ids never change meaning: a retired
rule keeps its id unused, a new rule gets a new id.

``markdown_table()`` renders the README's case table from this registry;
tests/test_registry.py keeps the two equal.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Case", "REGISTRY", "GROUPS", "GROUP_HEADINGS", "LEVELS", "OWNERS", "by_id",
           "in_group", "owner_of", "markdown_table", "TABLE_BEGIN", "TABLE_END"]


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

# What a case owns, as another case's not-evaluated skip names it
# (cases.api.owner): "<topic> FC-nnn's". tests/test_registry.py checks every
# owner is a registry id and every topic a case module names is listed here.
OWNERS: dict[str, str] = {
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
    "commit files are": "FC-103",
    "patch formats are": "FC-105",
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


def owner_of(topic: str) -> str:
    """The id of the case that owns ``topic`` (a key of OWNERS)."""
    try:
        return OWNERS[topic]
    except KeyError:
        raise KeyError(f"no case owns {topic!r} (add it to cases.registry.OWNERS)") from None


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
