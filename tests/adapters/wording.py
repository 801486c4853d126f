"""The mutant matrix in words, generated from the code.

A mutant's behaviour is described once: the first paragraph of its hook
class docstring (``Variant.description``). From it come tests/MUTANTS.txt
(one line per case id: the intended mutant) and the "Falsified by:" line at
the end of each case's docstring; tests/test_mutants.py checks both are
current, and ``python3 tests/mutant.py --update-wording`` rewrites them.

A case's intended mutant is the mutant whose expected set is exactly that
case (the first registered, should there be several).
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

from cases.registry import REGISTRY
from tests.adapters.hooks import Variant
from tests.adapters.mutants import MUTANTS

ROOT = Path(__file__).resolve().parents[2]
MUTANTS_TXT = ROOT / "tests" / "MUTANTS.txt"
CASES = ROOT / "cases"
LABEL = "Falsified by:"

HEADER = """\
# The intended mutant of every case: the case it must fail, alone.
#
# Generated from the hook class docstrings of tests/adapters/mutants.py
# (`python3 tests/mutant.py --update-wording`); tests/test_mutants.py keeps it
# current. One line per case id: <id>  <switch>  <what the mutant changes in
# the reference adapter>. Each case's docstring ends with the same words.
#
"""


def intended() -> dict[str, Variant]:
    """Case id -> its intended mutant (registry ids without one are left out)."""
    out: dict[str, Variant] = {}
    for variant in MUTANTS.values():
        if len(variant.expected) == 1:
            out.setdefault(next(iter(variant.expected)), variant)
    return out


def falsified_by(variant: Variant) -> str:
    return f"{LABEL} {variant.switch}: {variant.description}"


def mutants_txt() -> str:
    mine = intended()
    rows = [f"{c.id}  {mine[c.id].switch:26} {mine[c.id].description}"
            for c in REGISTRY if c.id in mine]
    return HEADER + "\n".join(rows) + "\n"


def _case_functions(path: Path):
    """(case id, function node) of each @case function of a case module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                if (isinstance(d, ast.Call) and getattr(d.func, "id", None) == "case" and d.args
                        and isinstance(d.args[0], ast.Constant)):
                    yield d.args[0].value, node


def docstring_lines() -> dict[str, str]:
    """Case id -> its docstring's "Falsified by:" paragraph, on one line ("" if none)."""
    out = {}
    for path in sorted(CASES.glob("test_*.py")):
        for cid, node in _case_functions(path):
            doc = ast.get_docstring(node) or ""
            found = re.search(rf"{LABEL}.*?(?=\n\s*\n|\Z)", doc, re.S)
            out[cid] = " ".join(found.group(0).split()) if found else ""
    return out


def _wrapped(text: str, indent: str) -> str:
    return textwrap.fill(text, width=100, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def update() -> list[str]:
    """Rewrite MUTANTS.txt and every case docstring's "Falsified by:" paragraph
    from the code; the paths changed."""
    changed = []
    text = mutants_txt()
    if MUTANTS_TXT.read_text(encoding="utf-8") != text:
        MUTANTS_TXT.write_text(text, encoding="utf-8")
        changed.append(str(MUTANTS_TXT))
    mine = intended()
    for path in sorted(CASES.glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.split("\n")
        for cid, node in sorted(_case_functions(path), key=lambda x: -x[1].lineno):
            if cid not in mine:
                continue
            doc = node.body[0]
            first, last = doc.lineno - 1, doc.end_lineno - 1
            at = next((i for i in range(first, last + 1) if LABEL in lines[i]), None)
            if at is None:
                continue
            end = at
            while end + 1 < last and lines[end + 1].strip():
                end += 1
            indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
            text = falsified_by(mine[cid]).replace("\\", "\\\\")   # source of a docstring
            lines[at:end + 1] = _wrapped(text, indent).split("\n")
        new = "\n".join(lines)
        if new != source:
            path.write_text(new, encoding="utf-8")
            changed.append(str(path))
    return changed
