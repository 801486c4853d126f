"""The run report's model (cases/report/model.py) and its converter
(cases/report/convert.py):

- a JSON report reads into the model and writes back to the same text: every
  member, in its order, those left out when empty still left out (a run's
  report with a known-failures policy, the monitor's and --strict's marks and
  stderr tails; explore's report with its finding's evidence);
- a report of an older release (rows without ``spec``, ``since``,
  ``duration_s``, ``transcript``; no ``matrix``, ``interrupted``) reads, the
  members it lacks taking the model's defaults;
- a member of the wrong JSON type is refused, naming its path;
- ``build`` writes what the policy decided: a listed failure is known, a
  listed pass is stale (failed), a warned pass under --strict failed; the
  top-level ``known_failures`` names them.
"""

from __future__ import annotations

import json

import pytest

from cases import registry
from cases.report import convert, writers as report
from cases.report.known_failures import Policy


def _row(cid: str, outcome: str, **more) -> dict:
    c = registry.by_id(cid)
    row = {"id": cid, "group": c.group, "title": c.title, "spec": c.spec, "since": c.since,
           "outcome": outcome, "message": more.pop("message", ""),
           "warnings": more.pop("warnings", []), "duration_s": 0.25,
           "transcript": more.pop("transcript", None)}
    row.update(more)
    return row


RUN = {
    "suite": "forge-conformance", "version": "1.6.0", "protocol": "1.6",
    "matrix": "0123456789ab", "adapter": {"argv": ["./adapter", "--flag", "ü"]},
    "summary": {"passed": 1, "failed": 2, "skipped": 1, "known": 1, "warnings": 2,
                "duration_s": 3.5},
    "interrupted": False,
    "cases": [
        _row("FC-001", "passed", warnings=["slow"]),
        _row("FC-002", "failed", message="bad", transcript="/t/FC-002.jsonl",
             details="[FC-002] ...", rerun="python3 run --case FC-002", monitor_failure=True,
             stderr_tail={"adapter": "boom\n"}),
        _row("FC-003", "failed", message="--strict: a warning fails the case: w",
             warnings=["w"], strict_failure=True),
        _row("FC-004", "known", message="shape", known_failure={"reason": "#812",
                                                                "file": "kf.txt"}),
        _row("FC-005", "failed", message="stale", known_failure={"reason": "",
                                                                 "file": "kf.txt"},
             stale_known_failure=True),
        _row("FC-011", "skipped", message="not selected"),
    ],
    "strict": True,
    "known_failures": {"file": "kf.txt", "listed": ["FC-004", "FC-005"], "known": ["FC-004"],
                       "stale": ["FC-005"]},
}

EXPLORE = {
    "suite": "forge-conformance", "version": "1.6.0", "protocol": "1.6",
    "adapter": {"argv": []},
    "summary": {"passed": 0, "failed": 1, "skipped": 0, "known": 0, "warnings": 0,
                "duration_s": 2.0},
    "interrupted": False,
    "explore": {"seed": 7, "budget_s": None, "max_examples": 5, "examples": 5, "requests": 12,
                "first_failure_example": 3, "first_failure_s": 0.5, "database": "/d/examples",
                "reproduce": "python3 run --explore --seed 7"},
    "cases": [_row("FC-010", "failed", message="m", details="d", transcript="/d/t.jsonl",
                   rerun="python3 run --explore --seed 7",
                   evidence={"drawn": "/d/drawn", "transcript": "/d/t.jsonl",
                             "program_file": "/d/program.txt", "files": ["a/b"],
                             "replay": "python3 run --replay /d/t.jsonl",
                             "program": ["tree a", "blob a b"]})],
}


@pytest.mark.parametrize("data, indent", [(RUN, 2), (EXPLORE, 1)], ids=["run", "explore"])
def test_json_to_model_to_json_is_the_same_text(data, indent):
    text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    rep = convert.read(json.loads(text))
    assert convert.to_json(rep, indent=indent) == text


def test_members_left_out_while_empty():
    rep = convert.read(RUN)
    plain = convert.unstructure(rep)["cases"][0]   # FC-001: passed, nothing to add
    assert list(plain) == list(RUN["cases"][0])
    explore = convert.unstructure(convert.read(EXPLORE))
    assert "matrix" not in explore and "strict" not in explore
    assert "known_failures" not in explore


def test_a_report_of_an_older_release_reads_with_defaults():
    old = {"suite": "forge-conformance", "version": "1.5.0", "protocol": "1.5",
           "adapter": {"argv": ["./a"]}, "summary": {"passed": 1, "failed": 1, "skipped": 0},
           "cases": [{"id": "FC-001", "group": "handshake", "title": "t", "outcome": "passed",
                      "message": "", "warnings": []},
                     {"id": "FC-002", "outcome": "failed", "message": "no", "warnings": ["w"],
                      "a_member_of_another_release": 1}]}
    rep = convert.read(old)
    assert rep.matrix is None and rep.interrupted is False and rep.summary.known == 0
    first, second = rep.cases
    assert (first.spec, first.since, first.duration_s, first.transcript) == ("", "", 0.0, None)
    assert second.failing and tuple(second.warnings) == ("w",) and second.title == ""
    written = convert.unstructure(rep)
    assert "matrix" not in written and written["cases"][1]["transcript"] is None


@pytest.mark.parametrize("path, value, said", [
    (("cases", 0, "warnings"), "w", "cases[0].warnings: expected an array"),
    (("cases", 0, "outcome"), 1, "cases[0].outcome: expected a string"),
    (("summary", "duration_s"), "3", "summary.duration_s: expected a non-negative number"),
    (("adapter", "argv"), [1], "adapter.argv[0]: expected a string"),
])
def test_a_member_of_the_wrong_type_is_refused_by_path(path, value, said):
    data = json.loads(json.dumps(RUN))
    where = data
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    with pytest.raises(convert.ShapeError) as exc:
        convert.read(data)
    assert said in str(exc.value)


def test_read_rows_takes_only_the_rows():
    rows = convert.read_rows({"cases": [{"id": "FC-001", "outcome": "known"}]})
    assert [(r.id, r.failing) for r in rows] == [("FC-001", True)]
    with pytest.raises(convert.ShapeError):
        convert.read_rows({"rows": []})


def test_build_writes_the_policy_s_verdicts(tmp_path):
    listed = tmp_path / "kf.txt"
    listed.write_text("FC-002  tracked\nFC-003\n", encoding="utf-8")
    policy = Policy.load(str(listed), strict=True)
    results = {"FC-001": report.CaseResult("FC-001", "passed", warnings=["w1"]),
               "FC-002": report.CaseResult("FC-002", "failed", "bad", details="text"),
               "FC-003": report.CaseResult("FC-003", "passed")}
    rep = report.build(results, selected=list(results), collected=list(results),
                       adapter_argv=["./a"], interrupted=False, duration_s=1.0, policy=policy)
    data = json.loads(convert.to_json(rep))
    rows = {r["id"]: r for r in data["cases"]}
    assert rows["FC-001"]["outcome"] == "failed" and rows["FC-001"]["strict_failure"] is True
    assert rows["FC-002"]["outcome"] == "known"
    assert rows["FC-002"]["known_failure"] == {"reason": "tracked", "file": str(listed)}
    assert rows["FC-003"]["outcome"] == "failed" and rows["FC-003"]["stale_known_failure"]
    assert data["strict"] is True
    assert data["known_failures"] == {"file": str(listed), "listed": ["FC-002", "FC-003"],
                                      "known": ["FC-002"], "stale": ["FC-003"]}
    assert data["summary"]["failed"] == 2 and data["summary"]["known"] == 1
    assert len(data["cases"]) == len(registry.REGISTRY)
    unselected = rows[registry.REGISTRY[-1].id]
    assert unselected["message"] == report.NOT_SELECTED and "rerun" not in unselected
    assert convert.to_json(convert.read(data)) == convert.to_json(rep)
