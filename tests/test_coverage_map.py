"""The rule-coverage map cannot drift: every MUST of PROTOCOL.md is judged by a
case or carries a status and a reason, every mapped id is a registry case,
every registry case judges a rule, and COVERAGE.md and the README's counts
are what cases/judges/coverage.py renders from cases/rules.json."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cases.judges import coverage, rules as R
from cases.registry import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
# The spec lives beside the repo (../shared/PROTOCOL.md), not inside it.
PROTOCOL_MD = ROOT.parent / "shared" / "PROTOCOL.md"

RULES = R.load()


def test_the_data_is_consistent():
    assert R.problems(RULES) == []


def test_every_must_is_judged_or_has_a_status():
    waiting = R.unmapped_musts(RULES)
    assert not waiting, (
        f"{len(waiting)} MUST rule(s) judged by no case and given no status "
        f"(python3 -m cases.judges.coverage --missing):\n"
        + "\n".join(f"  {r.id} \"{r.quote}\" (planned: {r.planned or '-'})" for r in waiting))


def test_every_mapped_id_is_a_registry_case():
    known = {c.id for c in REGISTRY}
    unknown = sorted({(r.id, c) for r in RULES for c in r.cases if c not in known})
    assert not unknown, f"mapped ids not in cases/registry.py: {unknown}"


def test_every_registry_case_judges_a_rule():
    assert R.uncited_cases(RULES) == [], "cases that judge no rule of cases/judges/rules.json"


def test_coverage_md_is_the_generated_output():
    text = (ROOT / "COVERAGE.md").read_text(encoding="utf-8")
    assert text == coverage.render(RULES), "run: python3 -m cases.judges.coverage --update"


def test_readme_states_the_counts():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    _, _, rest = readme.partition(coverage.BEGIN)
    body, found, _ = rest.partition(coverage.END)
    assert found, f"README.md has no {coverage.BEGIN} ... {coverage.END} markers"
    assert body == "\n" + coverage.readme_section(RULES), \
        "run: python3 -m cases.judges.coverage --update"


def _normalised(text: str) -> str:
    # emphasis markers dropped, whitespace collapsed: quotes stay plain words
    return re.sub(r"\s+", " ", text.replace("*", "")).strip()


@pytest.mark.skipif(not PROTOCOL_MD.exists(), reason=f"{PROTOCOL_MD} is not present")
def test_every_quote_is_in_the_protocol():
    spec = _normalised(PROTOCOL_MD.read_text(encoding="utf-8"))
    absent = [r.id for r in RULES if _normalised(r.quote) not in spec]
    assert not absent, f"quotes not found in {PROTOCOL_MD}: {absent}"


@pytest.mark.skipif(not PROTOCOL_MD.exists(), reason=f"{PROTOCOL_MD} is not present")
def test_every_section_is_a_protocol_heading():
    headings = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", PROTOCOL_MD.read_text(
        encoding="utf-8"), re.M))
    # §3.0 is "### 3.0 Common rules"; §4 is "## 4. Content ids"
    assert set(R.SECTIONS) <= headings, sorted(set(R.SECTIONS) - headings)


def test_the_checks_catch_what_they_should():
    # each defect the map can have, planted in a copy of one rule
    base = RULES[0]
    bad = [
        R.Rule(id="R-9.9-x", section="1.1", strength="MUST", quote="q"),   # id/section mismatch
        R.Rule(id=base.id, section=base.section, strength="MUST", quote="q"),   # duplicate id
        R.Rule(id="R-2.1-y", section="2.1", strength="SHALL", quote="q"),   # strength
        R.Rule(id="R-2.1-z", section="2.1", strength="MUST", quote="q", status="host-side"),
        R.Rule(id="R-2.1-w", section="2.1", strength="MUST", quote="q", cases=("FC-999",)),
    ]
    found = R.problems(RULES + tuple(bad))
    for needle in ("names section 9.9", f"{base.id}: id used 2 times", "SHALL",
                   "status host-side without a reason", "FC-999 is not in cases/registry.py"):
        assert any(needle in p for p in found), (needle, found)
    waiting = R.unmapped_musts((R.Rule(id="R-2.1-v", section="2.1", strength="MUST NOT",
                                       quote="q", planned="FC-120..129"),))
    assert [r.id for r in waiting] == ["R-2.1-v"]
    assert "R-2.1-v" in coverage.missing_report(waiting)
    assert R.uncited_cases((), REGISTRY[:1]) == [REGISTRY[0].id]


def test_unknown_members_are_refused(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text('{"rules": [{"id": "R-1.1-a", "section": "1.1", "strength": "MUST", '
                    '"quote": "q", "cases": [], "cases_planned": []}]}', encoding="utf-8")
    with pytest.raises(R.RulesError, match="cases_planned"):
        R.load(path)
