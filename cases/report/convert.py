"""The run report between its models (cases/report/model.py) and JSON.

``converter`` is a copy of wire's (wire/messages.py): the same strict JSON
types, an optional member's null read as absent, every problem raised as one
``ShapeError`` naming the member path. Its own hooks here: a ``CaseRow`` and a
``RunReport`` leave out the members marked "omitted" in the model while they
carry nothing, so ``unstructure`` gives the report's JSON members in the
model's order.

``to_json`` is the one JSON text of a report (``indent``: 2 for a run's
report, 1 for explore's); ``read`` structures a decoded report (``--diff``),
``load`` one from a file, ``read_rows`` only the rows of one
(``--rerun-failed``).
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
from cattrs.gen import make_dict_unstructure_fn, override

from cases.report.model import CaseRow, RunReport
from wire import messages
from wire.messages import ShapeError

__all__ = ["converter", "to_json", "unstructure", "read", "read_rows", "load", "ShapeError"]

converter = messages.converter.copy()

_OMITTED = {
    CaseRow: ("details", "rerun", "evidence", "monitor_failure", "stderr_tail",
              "strict_failure", "known_failure", "stale_known_failure"),
    RunReport: ("matrix", "explore", "strict", "known_failures"),
}


def _in_order(cls: type, names: tuple[str, ...]):
    """cattrs' unstructure function for ``cls`` leaving out ``names`` at their
    defaults, its members put back in the fields' order (cattrs writes the
    ones it may leave out last)."""
    generated = make_dict_unstructure_fn(cls, converter,
                                         **{n: override(omit_if_default=True) for n in names})
    order = [a.name for a in attrs.fields(cls)]

    def hook(obj) -> dict:
        d = generated(obj)
        return {k: d[k] for k in order if k in d}
    return hook


for _cls, _names in _OMITTED.items():
    converter.register_unstructure_hook(_cls, _in_order(_cls, _names))


def unstructure(rep: RunReport) -> dict:
    return converter.unstructure(rep)


def to_json(rep: RunReport, *, indent: int = 2) -> str:
    return json.dumps(unstructure(rep), indent=indent, ensure_ascii=False) + "\n"


def read(data: object) -> RunReport:
    """A decoded JSON report as the model; ``ShapeError`` names what does not fit."""
    return converter.structure(data, RunReport)


def read_rows(data: object) -> list[CaseRow]:
    """Only the rows of a decoded report (``--rerun-failed`` asks nothing else of it)."""
    if type(data) is not dict or "cases" not in data:
        raise ShapeError("cases", "missing required member")
    return list(converter.structure(data["cases"], tuple[CaseRow, ...]))


def load(path: str | Path) -> RunReport:
    """A JSON report file as the model: OSError when it cannot be read,
    ValueError (UnicodeDecodeError, json's) when it is not JSON, ShapeError
    when it is not a report."""
    with open(path, encoding="utf-8") as f:
        return read(json.load(f))
