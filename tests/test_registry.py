"""The case matrix cannot drift: the id set is pinned here, every case module
implements exactly the ids of its group, and the README table is the registry's.
And the ownership table is the only one: every rule a judge or the protocol
monitor can report has exactly one owner in it, every owner is a case, and
it holds no key that nothing reports or names."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cases import registry

ROOT = Path(__file__).resolve().parent.parent

# The brief's case matrix plus the v1.5 revision group and the cases added since. Written out by hand
# on purpose: adding, removing or renumbering a case must change this list.
PINNED_IDS = [
    "FC-001", "FC-002", "FC-003", "FC-004", "FC-005",
    "FC-010", "FC-011", "FC-012", "FC-013",
    "FC-020", "FC-021", "FC-022", "FC-023", "FC-024", "FC-025",
    "FC-030", "FC-031", "FC-032", "FC-033", "FC-034",
    "FC-040", "FC-041", "FC-042", "FC-043", "FC-044", "FC-045", "FC-046",
    "FC-050", "FC-051", "FC-052", "FC-053", "FC-054", "FC-055",
    "FC-060", "FC-061", "FC-062", "FC-063", "FC-064",
    "FC-070",
    "FC-080",
    "FC-090", "FC-091", "FC-092", "FC-093", "FC-094", "FC-095", "FC-096", "FC-097",
    "FC-098", "FC-099",
    "FC-100", "FC-101", "FC-102", "FC-103", "FC-104", "FC-105", "FC-106", "FC-107",
    "FC-108", "FC-109",
    "FC-110", "FC-111", "FC-112", "FC-113", "FC-114", "FC-115",
    "FC-120", "FC-121", "FC-122", "FC-123", "FC-124",
    "FC-130", "FC-131", "FC-132", "FC-133",
]


def test_the_ids_are_pinned():
    assert len(set(PINNED_IDS)) == len(PINNED_IDS) == 75
    assert [c.id for c in registry.REGISTRY] == PINNED_IDS


def test_entries_are_complete():
    for c in registry.REGISTRY:
        assert re.fullmatch(r"FC-\d{3}", c.id)
        assert c.group in registry.GROUPS, c
        assert c.title.strip() and c.spec.startswith("§"), c
        assert c.since in registry.LEVELS, c
        assert registry.by_id(c.id) is c
    # group order follows id order, so the report and the run agree
    assert [c.group for c in registry.REGISTRY] == sorted(
        (c.group for c in registry.REGISTRY), key=registry.GROUPS.index)
    with pytest.raises(KeyError):
        registry.by_id("FC-999")


def test_titles_and_levels_of_a_few_cases():
    # spot checks against the brief's matrix
    assert registry.by_id("FC-043").title == \
        "inactivity deadline: a batch every 1.2s must not trip a 2s timeout"
    # a case's level is the revision of the wording it enforces: FC-099 judges
    # the v1.6 `commit` key beside the v1.5 ones
    assert registry.by_id("FC-099").spec == "§Handshake (capabilities; commit, v1.6)"
    assert {c.since for c in registry.in_group("revisions") if c.id != "FC-099"} == {"v1.5"}
    assert registry.by_id("FC-099").since == "v1.6" and registry.by_id("FC-003").since == "v1.3"
    assert registry.by_id("FC-025").since == "v1.1"
    assert {c.since for c in registry.in_group("errors")} == {"v1.1"}
    assert registry.by_id("FC-005").since == "v1.2" and registry.by_id("FC-050").since == "v1.2"
    assert registry.by_id("FC-004").since == "v1.3" and registry.by_id("FC-001").since == "v1"


def _implemented(group: str) -> list[str]:
    module = importlib.import_module(f"cases.test_{group}")
    return [fn.forge_case.id for _, fn in inspect.getmembers(module, inspect.isfunction)
            if fn.__module__ == module.__name__ and hasattr(fn, "forge_case")]


@pytest.mark.parametrize("group", registry.GROUPS)
def test_each_module_implements_exactly_its_group(group):
    path = ROOT / "cases" / f"test_{group}.py"
    assert path.exists(), f"{path.name} is missing"
    ids = _implemented(group)
    want = [c.id for c in registry.in_group(group)]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"more than one test for {duplicates}"
    assert sorted(ids) == want, (f"{path.name}: missing {sorted(set(want) - set(ids))}, "
                                 f"foreign {sorted(set(ids) - set(want))}")


@pytest.mark.parametrize("group", registry.GROUPS)
def test_a_run_order_names_each_case_of_its_group_once(group):
    """A module's RUN_ORDER (cases.harness.plugin runs its cases in that order) lists
    exactly its group's ids: a case added later cannot be left out of it."""
    order = getattr(importlib.import_module(f"cases.test_{group}"), "RUN_ORDER", None)
    if order is None:
        return                      # file order (the registry's)
    assert sorted(order) == sorted(_implemented(group)) and len(set(order)) == len(order), order


def test_the_run_follows_run_order():
    """What pytest runs of a group with a RUN_ORDER is in that order."""
    proc = subprocess.run([sys.executable, str(ROOT / "run"), "--jobs", "1", "--group", "transport",
                           "--pytest", "--collect-only", "-v"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    import cases.test_transport as transport
    ran = re.findall(r"<Function (test_\w+)>", proc.stdout)
    by_name = {fn.__name__: fn.forge_case.id for fn in vars(transport).values()
               if hasattr(fn, "forge_case")}
    assert [by_name[n] for n in ran] == list(transport.RUN_ORDER), proc.stdout + proc.stderr


def test_no_stray_case_modules():
    modules = {p.stem.removeprefix("test_") for p in (ROOT / "cases").glob("test_*.py")}
    assert modules <= set(registry.GROUPS), modules - set(registry.GROUPS)


def test_readme_table_is_the_registry():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    _, begin, rest = text.partition(registry.TABLE_BEGIN)
    table, end, _ = rest.partition(registry.TABLE_END)
    assert begin and end, "README.md lacks the case table markers"
    assert table.strip("\n") == registry.markdown_table().strip("\n"), \
        "README case table is stale: run `python3 -m cases.registry --update-readme`"


def test_owners_are_registry_cases():
    """Every owner of registry.OWNERS and SPEC_RULES names a registry case."""
    known = {c.id for c in registry.REGISTRY}
    unknown = {t: cid for t, cid in registry.OWNERS.items() if cid not in known}
    assert not unknown, f"OWNERS names ids the registry does not have: {unknown}"
    unknown = {r: ids for r, ids in registry.SPEC_RULES.items() if not set(ids) <= known or not ids}
    assert not unknown, f"SPEC_RULES names ids the registry does not have: {unknown}"


def test_no_key_is_written_twice():
    """A dict literal keeps the last of two equal keys silently: each key of
    the registry's tables is written once, and owned or not owned, not both."""
    import ast

    tree = ast.parse((ROOT / "cases" / "registry.py").read_text(encoding="utf-8"))
    tables = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Dict):
            tables[node.target.id] = [k.value for k in node.value.keys]
    assert {"OWNERS", "NOT_OWNED", "SPEC_RULES"} <= set(tables)
    for name, keys in tables.items():
        twice = sorted({k for k in keys if keys.count(k) > 1})
        assert not twice, f"{name} writes these keys more than once: {twice}"
    assert not set(registry.OWNERS) & set(registry.NOT_OWNED)


def _monitor_rules() -> set[str]:
    """The rule keys wire/monitor.py reports, read from its code: the first
    argument of every found(...) and Finding(...), and the rule of every
    (rule, strength, problem) the handshake check appends."""
    import ast

    from wire import monitor as m

    consts = {k: v for k, v in vars(m).items() if k.isupper() and isinstance(v, str)}
    reported = set()
    for node in ast.walk(ast.parse((ROOT / "wire" / "monitor.py").read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        first = node.args[0]
        if getattr(node.func, "id", None) in ("found", "Finding"):
            reported.add(getattr(first, "id", None))
        elif getattr(node.func, "attr", None) == "append" and isinstance(first, ast.Tuple) \
                and len(first.elts) == 3:
            reported.add(getattr(first.elts[0], "id", None))
    return {consts[name] for name in reported if name in consts}


def _reported_rules() -> set[str]:
    """Every rule key a finding of the run can carry."""
    from cases.judges import claims, monitoring, null_params

    return _monitor_rules() | set(claims.JUDGES) | set(null_params.RULES) | {monitoring.CACHE_ROOT}


def test_the_monitor_reports_exactly_its_listed_rules():
    from wire import monitor as m

    assert _monitor_rules() == set(m.RULES)


def test_every_reported_rule_has_exactly_one_owner():
    """Every judge's key and every monitor rule is owned by one case in the
    registry's table (a result shape by method: one owner each), or listed
    as owned by none; never both, never neither."""
    from wire import monitor as m
    from wire.messages import RESULT_TYPES

    bases = {r for r in _reported_rules() if r != m.RESULT_SHAPE}
    bases |= {f"{m.RESULT_SHAPE} {method}" for method in RESULT_TYPES if method != "initialize"}
    neither = sorted(k for k in bases if k not in registry.OWNERS and k not in registry.NOT_OWNED)
    assert not neither, f"rules no case owns and NOT_OWNED does not list: {neither}"
    assert set(registry.NOT_OWNED) <= bases


def _rule_keys() -> dict[str, str]:
    reported = _reported_rules()
    return {k: v for k, v in registry.OWNERS.items() if k.split(" ")[0] in reported}


def _finding_for(key: str):
    """A finding described by ``key``: its rule, and what refines it."""
    from wire import monitor as m
    from wire.monitor import Finding

    rule, *rest = key.split(" ")
    method, streaming, detail = None, False, "a problem"
    if rule == m.RESULT_SHAPE:
        method, *rest = rest
        streaming = rest[:1] == ["streamed"]
        path = ".".join(p.replace("[]", "[0]") for p in rest[streaming:]) or "(top level)"
        detail = f"{method} result: {path}: a problem"
    elif rule == m.PARTIAL_ITEMS:
        method = "search/code"
        path = ".".join(p.replace("[]", "[0]") for p in rest) or "items"
        detail = f"$/partial params: {path}: a problem"
    elif rule == m.NOTIFICATION_ANSWERED:
        method = rest[0] if rest else "window/logMessage"
    return Finding(rule, detail, 1, "must", 7, method, 3, "", streaming)


def _member_classes(hint) -> list:
    import typing

    import attrs

    if attrs.has(hint):
        return [hint]
    return [c for arg in typing.get_args(hint) for c in _member_classes(arg)]


def _names_members(root: type, path: list[str]) -> bool:
    """Whether ``path`` (``["repos[]", "name"]``) walks members of the model ``root``."""
    import typing

    classes = [root]
    for part in path:
        name = part.removesuffix("[]")
        hints = [typing.get_type_hints(c, include_extras=True) for c in classes]
        here = [h[name] for h in hints if name in h]
        if not here:
            return False
        classes = [c for h in here for c in _member_classes(h)]
    return True


def test_every_rule_key_is_reached_by_its_findings():
    """Each key of the table is what monitoring.owner_of finds for a finding it
    describes (no key shadowed by another, none that no finding reaches), a
    refined key names members of the reply it refines and an owner other
    than its parent's (else it says nothing)."""
    from cases.judges import monitoring
    from wire import monitor as m
    from wire.messages import RESULT_TYPES, PartialParams

    for key, owner in _rule_keys().items():
        assert monitoring.owner_of(_finding_for(key)) == owner, key
        rule, *rest = key.split(" ")
        if rule == m.RESULT_SHAPE:
            method, *path = rest
            assert method in RESULT_TYPES, key
            path = path[1:] if path[:1] == ["streamed"] else path
            assert _names_members(RESULT_TYPES[method], path), key
        elif rule == m.PARTIAL_ITEMS:
            assert _names_members(PartialParams, rest), key
        elif rule == m.NOTIFICATION_ANSWERED:
            assert all(r.startswith("$/") for r in rest), key
        else:
            assert not rest, f"{key}: {rule} is not refined by what its findings are about"
        if rest:
            parent = registry.rule_owner(*key.split(" ")[:-1])
            assert parent != owner, f"{key} names its parent's owner {owner}: drop it"


def test_a_second_judge_for_a_rule_is_refused():
    from cases.judges import claims

    before = dict(claims.JUDGES)
    with pytest.raises(ValueError, match="a second judge"):
        claims.judge(claims.TREE_TRUNCATED, "repo/tree")(lambda claim, fx: None)
    with pytest.raises(KeyError, match="no case owns"):
        claims.judge("no-such-rule", "repo/tree")(lambda claim, fx: None)
    assert claims.JUDGES == before


def test_spec_rules_are_rules_of_rules_json():
    from cases.judges import rules

    assert rules.unlisted_spec_rules(rules.load()) == []
    assert rules.unlisted_spec_rules((), {"R-1.1-none": ("FC-001",)}) != []


def test_owner_references_in_the_cases_are_listed():
    """Every owner("...") a case module (or cases/) names is a topic of OWNERS,
    and every topic is named somewhere (no stale owner); every other key is a
    rule key (above)."""
    import ast

    named = set()
    for path in sorted((ROOT / "cases").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = getattr(node, "func", None)
            if isinstance(node, ast.Call) and node.args and (
                    getattr(called, "id", None) == "owner"          # owner("a" if x else "b")
                    or getattr(called, "attr", None) == "owner_of"):   # registry.owner_of("a")
                named |= _topics(node.args[0])
    topics = set(registry.OWNERS) - set(_rule_keys())
    assert named <= set(registry.OWNERS), f"owners nobody owns: {named - set(registry.OWNERS)}"
    assert topics - named == set(), f"stale OWNERS: {topics - named}"


def _topics(node):
    """The strings an owner(...) argument can be: a constant, or either branch
    of a conditional expression."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _topics(node.body) | _topics(node.orelse)
    return set()
