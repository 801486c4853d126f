"""Bounded compute (FC-070): search/code's advisory limit, both legal outcomes.

The full set is every fixture file containing the term (from the bytes on
disk). An adapter either honours the limit (truncated true) or ignores it
(the full set, truncated false). RULINGS "Bounded compute": the limit is a
budget, not a bound, so a cut at a backend page larger than the limit passes
(a warning past MANY_TIMES the limit); what fails is a false claim of
truncation, or a cut without truncated true.
"""

from cases.api import case, fail, listing, show, warn
from cases.facts import files_containing
from cases.replies import folded, require_code_search, search
from fixture.catalog import TERM_WIDE, WIDE

# "About N" is a SHOULD: past this many times the limit, a cut result warns.
MANY_TIMES = 5


@case("FC-070")
def test_limit_honoured_or_ignored(adapter, fx):
    """With limit 10 and 500 on a term in more than 100 files, unscoped and
    repo:-scoped, the reply either is cut with truncated true (not every
    matching file listed), or lists every matching file with truncated false.

    Falsified by: search-one-page: One-shot searches return only the first 100 hits (one backend
    page) without truncated.
    """
    require_code_search(adapter)
    expected = files_containing(fx, TERM_WIDE)
    scoped = f"repo:{fx.repo(WIDE)} {TERM_WIDE}"   # TERM_WIDE is in wide only
    for q, limit in ((TERM_WIDE, 10), (TERM_WIDE, 500), (scoped, 500)):
        found = search(adapter, q, limit=limit, own=True)
        got, truncated = folded(found.items), found.result.truncated
        complete = expected <= got
        asked = f"search/code {show({'q': q, 'limit': limit})}"
        if truncated is True and complete:
            fail(f"{asked}: truncated true with every matching file returned claims a cut it "
                 f"did not make", expected=f"truncated true with fewer than all "
                 f"{len(expected)} files, or all of them without",
                 got=f"all {len(got)} hits and truncated true")
        if truncated is True and len(got) > MANY_TIMES * limit:
            warn(f"{asked} returned {len(got)} hits with truncated true: bounded compute "
                 f"advises stopping at about the limit")
        if truncated is not True and not complete:
            fail(f"{asked}: an incomplete result must say truncated true",
                 expected=f"all {len(expected)} files containing {TERM_WIDE!r}, or truncated true",
                 got=f"{len(got & expected)} of them, truncated {show(truncated)}; "
                 f"missing e.g. {listing(p for _, p in expected - got)} (a silently capped "
                 f"backend page?)")
