"""Self-tests of cases/kit/patchfacts.py, FC-103's reading of a patch.

git's own diffs of random texts, with each diff algorithm and several
context sizes, must apply exactly (whatever their hunks look like); a
patch read against the wrong side must not; and a hunk that sits one line
off is named. Texts carry carriage returns and sometimes no final newline,
the two line-end rules of §3.12.
"""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cases.kit.patchfacts import apply_problem, hunks

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
    reason="git is not installed")

OPTIONS = (("myers", "3"), ("patience", "1"), ("histogram", "5"), ("minimal", "0"))

lines = st.lists(st.sampled_from(["a", "b", "c", "a\r", "", "x y", "é"]), max_size=12)
texts = st.builds(lambda ls, end: "\n".join(ls) + ("\n" if end and ls else ""),
                  lines, st.booleans())


def git_patch(tmp_path, old: str, new: str, algorithm: str, context: str) -> str:
    """git's diff of ``old`` -> ``new``, hunks only, \\n-joined, no final newline
    (the shape §3.12 asks of a repo/commit patch)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(old.encode())
    b.write_bytes(new.encode())
    proc = subprocess.run(["git", "diff", "--no-index", "--no-color", f"--diff-algorithm={algorithm}",
                           f"-U{context}", "--", str(a), str(b)], capture_output=True)
    assert proc.returncode in (0, 1), proc.stderr
    out = proc.stdout.decode()
    body = out[out.index("@@"):] if "@@" in out else ""
    return body[:-1] if body.endswith("\n") else body


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts, texts)
def test_gits_diffs_apply_exactly_with_every_algorithm_and_context(tmp_path, old, new):
    for algorithm, context in OPTIONS:
        patch = git_patch(tmp_path, old, new, algorithm, context)
        assert apply_problem(patch, old, new) is None, (algorithm, context, patch)
        if old != new:
            assert apply_problem(patch, new, old) is not None, (algorithm, context, patch)


def test_a_hunk_one_line_late_is_named():
    old, new = "a\nb\nc\n", "a\nB\nc\n"
    patch = "@@ -2 +2 @@\n-b\n+B"
    assert apply_problem(patch, old, new) is None
    late = "@@ -3 +3 @@\n-b\n+B"
    problem = apply_problem(late, old, new)
    assert problem is not None and "hunk 1" in problem and "removed line" in problem


def test_the_no_newline_marker_belongs_to_the_line_before():
    old, new = "a\nb", "a\nc"
    patch = "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file"
    assert [body for h in hunks(patch) for body in h.body] == [(" ", "a\n"), ("-", "b"), ("+", "c")]
    assert apply_problem(patch, old, new) is None
    assert apply_problem(patch, old, "a\nc\n") is not None   # the commit's side has no final \n
