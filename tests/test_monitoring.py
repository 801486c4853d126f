"""cases/monitoring: each monitor finding goes to the one case that owns its rule,
and a verdict names where in the run it was seen."""

from __future__ import annotations

import pytest

from cases import claims, monitoring
from cases.registry import REGISTRY
from wire import monitor as m
from wire.monitor import Finding


def finding(rule, detail="d", method=None, streaming=False, strength="must"):
    return Finding(rule, detail, 1, strength, 7, method, 3, "raw", streaming)


@pytest.mark.parametrize("f, owner", [
    (finding(m.STDOUT_JSON), "FC-123"),
    (finding(m.PARTIAL_AFTER_REPLY), "FC-041"),
    (finding(m.PARTIAL_ITEMS, "$/partial params: items[0].located: expected a boolean"),
     "FC-032"),
    (finding(m.PARTIAL_ITEMS, "$/partial params: items[0].line: expected an integer"), "FC-044"),
    (finding(m.BASE64, method="repo/blob_at"), "FC-024"),
    (finding(m.NOTIFICATION_ANSWERED, method="$/cancelRequest"), "FC-122"),
    (finding(m.NOTIFICATION_ANSWERED, method="window/logMessage"), "FC-054"),
    (finding(m.RESULT_SHAPE, "repo/tree result: entries[3].sha: missing", "repo/tree"), "FC-021"),
    (finding(m.RESULT_SHAPE, "repo/tree result: truncated: expected a boolean", "repo/tree"),
     "FC-022"),
    (finding(m.RESULT_SHAPE, "repo/log result: truncated: expected a boolean", "repo/log"),
     "FC-095"),
    (finding(m.RESULT_SHAPE, "repo/log result: items[0].sha: missing", "repo/log"), "FC-094"),
    (finding(claims.TREE_TRUNCATED, method="repo/tree"), "FC-022"),
    (finding(claims.LOG_TRUNCATED, method="repo/log"), "FC-095"),
    (finding(claims.SEARCH_TRUNCATED, method="search/code"), "FC-070"),
    (finding(claims.STREAM_TRUNCATED, method="search/code", streaming=True), "FC-042"),
    (finding(claims.ICON_DISPLAY, method="initialize"), "FC-080"),
    (finding(claims.COMMIT_TRUNCATED, method="repo/commit"), "FC-109"),
    (finding(claims.SEARCH_LINE, method="search/code"), "FC-031"),
    (finding(m.RESULT_SHAPE, "search/code result: index.as_of: expected a string",
             "search/code"), "FC-033"),
    (finding(m.RESULT_SHAPE, "search/code result: items[2].located: expected a boolean",
             "search/code"), "FC-032"),
    (finding(m.RESULT_SHAPE, "search/code result: items[0].repo: missing", "search/code"),
     "FC-070"),
    (finding(m.RESULT_SHAPE, "search/code result: truncated: expected a boolean",
             "search/code"), "FC-070"),
    (finding(m.RESULT_SHAPE, "search/code result: truncated: expected a boolean",
             "search/code", streaming=True), "FC-042"),
    (finding(m.RESULT_SHAPE, "search/code result: index: expected an object",
             "search/code", streaming=True), "FC-033"),
    (finding(m.RESULT_SHAPE, "search/code result: items: expected an array", "search/code",
             streaming=True), "FC-042"),
])
def test_owners(f, owner):
    assert monitoring.owner_of(f) == owner


def test_every_owner_is_a_registry_case():
    known = {c.id for c in REGISTRY}
    owners = {*monitoring.RULE_OWNERS.values(), *monitoring.SHAPE_OWNERS.values(),
              *(o for _, _, o in monitoring.SHAPE_MEMBER_OWNERS),
              *monitoring.SHAPE_ITEM_MEMBER_OWNERS.values(), monitoring.STREAMED_SEARCH_OWNER,
              monitoring.CANCEL_ANSWERED, monitoring.NOTIFICATION_ANSWERED}
    assert owners <= known, sorted(owners - known)
    # every frame rule has an owner; the rules that are not a frame's are the
    # cache root's and the fixture-settled claims' (cases/claims.py)
    assert set(monitoring.RULE_OWNERS) | {m.RESULT_SHAPE, m.NOTIFICATION_ANSWERED} == \
        set(m.RULES) | {monitoring.CACHE_ROOT} | set(claims.RULES)


def test_a_cache_root_finding_names_the_process_and_fails_fc055(tmp_path):
    """What a process left in its host cache root is FC-055's, whatever case
    started the process; the sentence names the entries, the case and the
    process, and speaks of processes, not frames."""
    seen = [monitoring.cache_root_seen(tmp_path / "rootle", ["blobs", "crash.json"], "spawn#2",
                                       "FC-005")]
    out = monitoring.verdicts(seen, {"FC-055", "FC-005"})
    assert set(out) == {"FC-055"}
    text = out["FC-055"].failure
    assert "blobs, crash.json" in text and "during FC-005, spawn#2" in text
    assert "process(es)" in text and "frame" not in text and "generation" not in text


def test_verdicts_fail_for_a_must_warn_for_a_should_and_say_where():
    seen = [monitoring.Seen(finding(m.STDOUT_JSON, "junk"), "FC-020", "adapter"),
            monitoring.Seen(finding(m.STDOUT_JSON, "junk"), "FC-021", "adapter"),
            monitoring.Seen(finding(m.ERROR_SHAPE, "code 0", "repo/tree", strength="should"),
                            None, "spawn#1")]
    out = monitoring.verdicts(seen, {"FC-123", "FC-063"})
    assert "2 frame(s)" in out["FC-123"].failure and "during FC-020" in out["FC-123"].failure
    assert out["FC-063"].failure is None and "between cases" in out["FC-063"].warnings[0]
    assert monitoring.verdicts(seen, {"FC-001"}) == {}   # owners that did not run say nothing
