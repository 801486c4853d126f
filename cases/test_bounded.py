"""Bounded compute (FC-070): search/code's advisory limit, both legal outcomes.

The full set is every fixture file containing the term (from the bytes on
disk). An adapter either honours the limit (about N hits, truncated true) or
ignores it (the full set, truncated false); anything else fails.
"""

from cases.api import case, fail, listing, show
from cases.facts import files_containing
from cases.replies import folded, require_code_search, search
from fixture.catalog import TERM_WIDE


@case("FC-070")
def test_limit_honoured_or_ignored(adapter, fx):
    """With limit 10 and 500 on a term in more than 100 files, the reply either
    stops near the limit with truncated true, or lists every matching file with
    truncated false.

    Falsified by: search-one-page: One-shot searches return only the first 100 hits (one backend
    page) without truncated.
    """
    require_code_search(adapter)
    expected = files_containing(fx, TERM_WIDE)
    for limit in (10, 500):
        found = search(adapter, TERM_WIDE, limit=limit, own=True)
        got, truncated = folded(found.items), found.result.truncated
        complete = expected <= got
        if truncated is True and complete:
            fail("truncated true with every matching file returned claims a cap it did not take",
                 expected=f"about {limit} hits with truncated true, or all {len(expected)} without",
                 got=f"all {len(got)} hits and truncated true (limit {limit})")
        if truncated is True and len(got) > 2 * limit:
            fail("an honoured limit stops at about the limit", expected=f"at most {2 * limit} hits",
                 got=f"{len(got)} hits with truncated true (limit {limit})")
        if truncated is not True and not complete:
            fail("an incomplete result must say truncated true",
                 expected=f"all {len(expected)} files containing {TERM_WIDE!r}, or truncated true",
                 got=f"{len(got & expected)} of them, truncated {show(truncated)} (limit {limit}); "
                 f"missing e.g. {listing(p for _, p in expected - got)}")
