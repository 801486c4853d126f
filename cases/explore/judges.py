"""The judges explore applies to a reply about a drawn repository set.

Each judge reads only the members its rule is about and returns a
``Violation`` naming the case that owns the rule (cases.registry: the same
owner a case failure names), or None. Expectations are handed in, computed
from the drawn bytes and from git by the caller (cases/explore/machine.py).

Rules the cases judge inline, written once here with the same owner, so a
case can call them later instead of its own copy:

* ``tree_problem``: a tree's coverage (every path once, no path the tree
  lacks; a tree that says truncated true may leave paths out) and its
  entries' typing, as cases/test_trees.py judges the canonical trees;
* ``line_problem``: a search hit's line (1-based, split on ``\\n`` only, RULINGS;
  the term in any case of letters), as cases/test_search.py and
  cases/judges/claims.py judge a fixture term's hits;
* ``web_url_problem``: a web URL for a path with `` #?%`` in it: a URL
  (no raw blank or control character, every ``%`` an escape) in which the
  path's hostile characters are escaped (cases/test_listings.py checks
  only that a string comes back).

Rules a case module judges in a function of its own are judged by that
function: ``by_case(owner, judge, ...)`` runs it outside a case run and turns
its failure (cases.kit.api.CaseFailed) into a ``Violation`` of ``owner``; its
warnings (SHOULDs) are not explore's business.

The protocol monitor (wire/monitor.py, owners in cases/judges/monitoring.py) judges
every frame besides; explore hands its findings to their owners unchanged.
"""

from __future__ import annotations

import re
import unicodedata
import urllib.parse
from dataclasses import dataclass

from cases import registry

COVERAGE = registry.owner_of("coverage is")
TREE = registry.owner_of("tree replies are")
TYPING = registry.owner_of("entry shas are")
CUT = registry.owner_of("walks cut without truncated: true are")
BLOB = registry.owner_of("blob replies are")
BIG_BLOB = registry.owner_of("blobs above 1 MiB are")
SAME_ID = registry.owner_of("ids from one call to the next are")
SHARED_ID = registry.owner_of("ids shared by different contents are")
RESPAWN_ID = registry.owner_of("ids across respawns are")
LINE = registry.owner_of("search hit lines are")
ONE_SHOT = registry.owner_of("one-shot search replies are")
STREAMED = registry.owner_of("streamed replies are")
REFS = registry.owner_of("refs replies are")
LOG = registry.owner_of("log replies are")
LOG_CUT = registry.owner_of("log cuts are")
BLOB_AT = registry.owner_of("blob_at replies are")
WEB_URL = registry.owner_of("web URLs are")
RESPAWN = registry.owner_of("serving after a respawn is")
IN_FLIGHT = registry.owner_of("requests in flight at once are")
CANCELLED = registry.owner_of("cancelled streams are")
BLAME = registry.owner_of("blame replies are")
CLONE_URL = registry.owner_of("clone URLs are")
# a FAULTS.json kind -> the case that owns a fault repo's errors of it
FAULT = {"auth": registry.owner_of("credential faults are"),
         "rate_limited": registry.owner_of("throttling faults are"),
         "provider": registry.owner_of("backend failure faults are")}
SEARCH_REPOS = registry.owner_of("listed repository ids are")
ORG_REPOS = registry.owner_of("org/repos entries are")
ORG_URL = registry.owner_of("org URLs are")
COMMIT_SHAPE = registry.owner_of("commit replies are")
COMMIT_ID = registry.owner_of("commit identities are")
COMMIT_MESSAGE = registry.owner_of("commit messages are")
COMMIT_FILES = registry.owner_of("commit files are")
COMMIT_RENAMES = registry.owner_of("renamed files' previous paths are")
COMMIT_PATCHES = registry.owner_of("patch formats are")
COMMIT_METADATA = registry.owner_of("metadata-only and binary changes are")
COMMIT_COUNTS = registry.owner_of("commit line counts are")
COMMIT_CUT = registry.owner_of("commit truncation claims are")

URL_HOSTILE = " #?%"     # what a path must not carry raw into a URL (RFC 3986)
_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
SHOWN = 3


@dataclass(frozen=True)
class Violation:
    """One broken rule: the owning case, why, expected and got."""
    case_id: str
    why: str
    expected: str
    got: str

    @property
    def case(self) -> registry.Case:
        return registry.by_id(self.case_id)

    def sentence(self) -> str:
        c = self.case
        return (f"[{c.id}] {c.title} ({c.spec}): {self.why}: expected {self.expected}; "
                f"got {self.got}")


def by_case(owner: str, judge, *args, **kwargs) -> Violation | None:
    """``judge(*args, **kwargs)``, a case module's judge, outside a case run:
    its failure as a Violation of ``owner`` (the case that owns the rule), or
    None. What it warns is dropped: explore judges MUSTs only."""
    import warnings

    from cases.kit.api import UNSET, CaseFailed
    from cases.kit.api import show
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            judge(*args, **kwargs)
    except CaseFailed as exc:
        told = lambda v: "(not said)" if v is UNSET else v if isinstance(v, str) else show(v)
        return Violation(owner, exc.why, told(exc.expected), told(exc.got))
    return None


def _listing(items, n: int = SHOWN) -> str:
    items = sorted(items)
    # NFC and NFD spellings look alike: spell the code points out where they differ
    spell = ascii if any(isinstance(i, str) and unicodedata.normalize("NFC", i) != i
                         for i in items) else repr
    shown = ", ".join(spell(i) for i in items[:n])
    return shown + (f" and {len(items) - n} more" if len(items) > n else "")


def tree_problem(what: str, listed: list[tuple[str, str]], truncated: object,
                 files: set[str], dirs: set[str]) -> Violation | None:
    """``listed``: (path, type) of every entry as sent; ``files``/``dirs``: the
    tree's paths. Coverage first, then typing, then a truncated true beside
    a complete walk (each its owner's)."""
    want = files | dirs
    seen: dict[str, int] = {}
    for path, _ in listed:
        seen[path] = seen.get(path, 0) + 1
    extra = set(seen) - want
    twice = {p for p, n in seen.items() if n > 1}
    missing = set() if truncated is True else want - set(seen)
    if extra or twice or missing:
        return Violation(COVERAGE, f"{what} lists every path of the tree exactly once",
                         f"the {len(want)} paths of the drawn tree",
                         f"missing {_listing(missing) or 'none'}; not in the tree "
                         f"{_listing(extra) or 'none'}; twice {_listing(twice) or 'none'}")
    wrong = [f"{p!r} as {t!r}" for p, t in listed
             if (p in files and t != "blob") or (p in dirs and t != "tree")]
    if wrong:
        return Violation(TYPING, f"{what} types each entry as the tree holds it",
                         '"blob" for files, "tree" for directories', ", ".join(wrong[:SHOWN]))
    if truncated is True and not want - set(seen):
        return Violation(CUT, f"{what} says truncated true", "truncated true only when the "
                         "budget cut the walk", f"all {len(want)} paths listed")
    return None


def line_problem(line: object, data: bytes, term: str) -> str | None:
    """Why a hit's ``line`` is not the 1-based line (split on \\n only) of a
    match of ``term`` in ``data``, or None."""
    if not isinstance(line, int) or isinstance(line, bool):
        return None                        # its type is the shape rule's
    needle = term.encode("utf-8").lower()
    holding = [n for n, text in enumerate(data.split(b"\n"), 1) if needle in text.lower()]
    if line < 1 or line not in holding:
        splitlines = [n for n, text in enumerate(data.decode("utf-8", "replace").splitlines(), 1)
                      if term in text.lower()]
        hint = " (lines counted with str.splitlines?)" if line in splitlines else ""
        return (f"line {line}; the term is on line(s) {', '.join(map(str, holding)) or 'none'} "
                f"counting \\n only{hint}")
    return None


def web_url_problem(url: object, path: str) -> str | None:
    """Why ``url`` is not a URL that carries ``path`` escaped, or None. Only
    what any URL grammar shares is judged (§3.10 leaves the grammar to the
    adapter): no raw blank or control character, every ``%`` starting an
    escape, and a path holding `` #?%`` never appearing raw."""
    if not isinstance(url, str) or not url.strip():
        return None                        # a missing URL is the web URL case's own business
    raw = [c for c in url if c == " " or ord(c) < 0x20 or ord(c) == 0x7f]
    if raw:
        return f"{url!r} holds a raw {raw[0]!r} (a URL escapes it)"
    bad = _ESCAPE.search(url)
    if bad:
        return f"{url!r} has a '%' at {bad.start()} that starts no %XX escape"
    # raw '#' or '?' of the path cut the URL (a '%' is judged as an escape, above and below);
    # a path of hostile characters alone ("#") may meet a URL's own anchor
    if any(c in path for c in "#?") and path.strip(URL_HOSTILE + "/") and path in url:
        return f"{url!r} carries the path {path!r} unescaped (its '#', '?' or '%' changes the URL)"
    decoded = urllib.parse.unquote(url)
    if "%" in path and path not in decoded and urllib.parse.unquote(path) in decoded:
        return f"{url!r} reads back as {decoded!r}: the path's '%' was not escaped"
    return None
