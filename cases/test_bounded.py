"""Bounded compute (FC-070): search/code's advisory limit, both legal outcomes.

The full set is every fixture file containing the term (from the bytes on
disk). An adapter either honours the limit (truncated true) or ignores it
(the full set, truncated false). RULINGS "Bounded compute": the limit is a
budget, not a bound, so a cut at a backend page larger than the limit passes
(a warning past MANY_TIMES the limit); what fails is a false claim of
truncation, or a cut without truncated true.

"About N" (§3.13 "SHOULD Stop scanning at about N results and set truncated:
true") is read as within MANY_TIMES of the limit either way, and both ways it
is a SHOULD: past MANY_TIMES the limit a cut warns (a backend page), and so
does a cut with fewer than limit / MANY_TIMES hits while the fixture has
files the reply left out (RULINGS "Process behaviour": truncated is judged on
its truth, "provably incomplete, whatever chose the budget", and that result
really is incomplete). What fails is truncated true beside every matching
file, and a cut without truncated true.

FC-070 owns one-shot search replies and their recall (registry OWNERS): the
one-shot questions the other search cases ask (a term in one file, in many
files of alpha, in alpha and beta, in 600 files of wide, scoped and not) are
asked here too, and every hit must name a file that contains the term.
"""

from cases.kit.api import case, fail, listing, show, warn
from cases.kit.facts import files_containing
from cases.kit.replies import MANY_TIMES, folded, require_code_search, search, unreached_budget
from fixture.catalog import ALPHA, TERM_LINE, TERM_MANY_ALPHA, TERM_SEVERAL, TERM_WIDE, WIDE

@case("FC-070")
def test_limit_honoured_or_ignored(adapter, fx):
    """With limit 10 and 500 on a term in more than 100 files, unscoped and
    repo:-scoped, limit 500 on terms in one file, in alpha's files (unscoped
    and repo:-scoped to alpha) and in alpha and beta, and a limit equal to
    the number of alpha's files holding its term, the reply either is cut
    with truncated true (not every matching file listed; far fewer hits
    than the limit warns), or lists every matching file with truncated
    false; every hit names a file that contains the term. Every one-shot
    search of the run for one of the fixture's terms (unscoped or
    repo:-scoped; respawned generations too) is judged the same way, both
    ways (cases/judges/claims.py).

    Falsified by: search-one-page: One-shot searches return only the first 100 hits (one backend
    page) without truncated.
    """
    require_code_search(adapter)
    scoped = f"repo:{fx.repo(WIDE)} {TERM_WIDE}"   # TERM_WIDE is in wide only
    in_alpha = f"repo:{fx.repo(ALPHA)} {TERM_MANY_ALPHA}"   # all of them: nothing to cut
    # a budget that every matching file fills exactly: no further hit exists
    exact = len(files_containing(fx, TERM_MANY_ALPHA))
    for q, term, limit in ((TERM_WIDE, TERM_WIDE, 10), (TERM_WIDE, TERM_WIDE, 500),
                           (scoped, TERM_WIDE, 500), (TERM_SEVERAL, TERM_SEVERAL, 500),
                           (TERM_MANY_ALPHA, TERM_MANY_ALPHA, 500), (TERM_LINE, TERM_LINE, 500),
                           (in_alpha, TERM_MANY_ALPHA, 500),
                           (TERM_MANY_ALPHA, TERM_MANY_ALPHA, exact)):
        judge_limit(search(adapter, q, limit=limit, own=True), files_containing(fx, term),
                    term, limit)


def judge_limit(found, expected, term: str, limit: int) -> None:
    """FC-070 on one one-shot reply: its hits are files containing ``term``
    (``expected``), and truncated says whether that set was cut."""
    hits, truncated = found.items, found.result.truncated
    got = folded(hits)
    asked = f"search/code {show({'q': found.q, 'limit': limit})}"
    wrong = got - expected
    if wrong:
        named = {p.rsplit("/", 1)[-1] for _, p in expected}
        hint = (" (the file's base name instead of its path?)"
                if any(p.rsplit("/", 1)[-1] in named for _, p in wrong) else
                " (another repository's file?)" if {p for _, p in wrong} & {p for _, p in expected}
                else "")
        fail(f"{asked}: every hit names a file of its repository that contains {term!r}",
             expected=f"hits among the {len(expected)} files containing it",
             got=f"{len(wrong)} hit(s) on other files: "
             f"{listing(f'{r} {p}' for r, p in wrong)}{hint}")
    complete = expected <= got
    if truncated is True and complete:
        fail(f"{asked}: truncated true with every matching file returned claims a cut it "
             f"did not make", expected=f"truncated true with fewer than all "
             f"{len(expected)} files, or all of them without",
             got=f"all {len(got)} hits and truncated true"
             + (" (hint: truncated set because the reply holds limit hits, without looking "
                "one hit past the limit?)" if len(hits) == limit else ""))
    if truncated is True and unreached_budget(len(hits), limit):
        # incomplete (a complete one failed above): an honest cut, only early
        warn(f"{asked}: truncated true with {len(hits)} hit(s) of the {len(expected)} files "
             f"containing {term!r}: a true cut, far below the limit; bounded compute advises "
             f"stopping at about the limit (at least {-(-limit // MANY_TIMES)} hits)")
    if truncated is True and len(hits) > MANY_TIMES * limit:
        warn(f"{asked} returned {len(hits)} hits with truncated true: bounded compute "
             f"advises stopping at about the limit")
    if truncated is not True and not complete:
        fail(f"{asked}: an incomplete result must say truncated true",
             expected=f"all {len(expected)} files containing {term!r}, or truncated true",
             got=f"{len(got & expected)} of them, truncated {show(truncated)}; "
             f"missing e.g. {listing(f'{r} {p}' for r, p in expected - got)} (a silently "
             f"capped backend page, or a search that stopped after one repository?)")
