"""Path mutants, part o: the line ends and the two dates of the vcs fixture's
tip commit (`eol`: fixture/catalog.py VCS_NO_FINAL_NEWLINE, VCS_CRLF; its
committer date is another instant than its author date).

Those bytes are the only place the fixture shows these changes: every other
text file of vcs ends in \\n, none holds a \\r, and every other commit's two
dates are one. Each mutant breaks one MUST only where those bytes are, and fails
exactly its owner case; the control breaks blame's SHOULD on that date and
only warns (a log or commit reporting the committer date is legal:
tests/adapters/controls_backend.py) (written like
tests/adapters/mutants_deep.py: a hook class per switch, its docstring's
first line what it changes, then "Hides on:").
"""

from __future__ import annotations

import base64

from tests.adapters.controls_backend import CommitterDates
from tests.adapters.controls_deep import kept
from tests.adapters.mutants_deep import promoted
from tests.adapters.mutants_v16 import CommitReply, commit_files
from tests.adapters.proxy import Hooks, result_of

PATCH_BYTES = ('§3.12: a file\'s patch is its first-parent change, lines split on \\n only '
               '(a \\r belongs to its line), "\\ No newline at end of file" marking a last '
               'line without \\n')


# ---------------------------------------------------------------- dates

@kept("blame-committer-date",
      '§3.8: "SHOULD author/date match that commit\'s author and author date as repo/log '
      'reports them": a blame date that is not the author date warns, it never fails',
      warns=("FC-098",))
class BlameCommitterDate(CommitterDates):
    """repo/blame ranges carry the committer date of their commit.

    A control, not a mutant: §3.8 makes the author date of a blame range a
    SHOULD, so FC-098 warns on the lines last changed by `eol` (CHANGELOG.md
    and notes/line-endings.txt at main, the only commit whose two dates
    differ) and fails nothing; before `eol` it could not even warn.
    """

    methods = ("repo/blame",)

    def items(self, result):
        return list(result.get("ranges") or [])


# ---------------------------------------------------------------- patches

def text_patches(result: dict) -> list[dict]:
    return [f for f in commit_files(result) if isinstance(f.get("patch"), str) and f["patch"]]


@promoted("patch-no-newline-marker-dropped", "FC-103", PATCH_BYTES)
class PatchNoNewlineMarkerDropped(CommitReply):
    """repo/commit patches leave out every `\\ No newline at end of file` line.

    Hides on: a change whose last line has no \\n (CHANGELOG.md in `eol`,
    the fixture's only one); the patch stays well-formed (FC-105) and its
    +/- lines and counts are unchanged (FC-107), but applied it gives a
    file ending in \\n.
    """

    def edit(self, proxy, req, result):
        for f in text_patches(result):
            f["patch"] = "\n".join(line for line in f["patch"].split("\n")
                                   if not line.startswith("\\"))


@promoted("patch-crlf-as-lf", "FC-103", PATCH_BYTES)
class PatchCrlfAsLf(CommitReply):
    """repo/commit patches lose the \\r of every CRLF line end.

    Hides on: a text file with CRLF line ends (notes/line-endings.txt,
    added in `eol`, the fixture's only one); counts and hunk format stay
    right, but the added lines are not the blob's.
    """

    def edit(self, proxy, req, result):
        for f in text_patches(result):
            f["patch"] = f["patch"].replace("\r\n", "\n")


# ---------------------------------------------------------------- blob bytes

class CrlfAsLf(Hooks):
    """Base: the bytes of ``method``'s results that are text (no NUL byte) have
    every CRLF turned into LF, as a text-mode transfer would (binary bytes and
    the reported sha left as they were)."""

    method = ""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != self.method or result is None:
            return msg
        data = result.get("bytes_b64")
        if isinstance(data, str):
            try:
                raw = base64.b64decode(data, validate=True)
            except ValueError:
                return msg
            if b"\r\n" in raw and b"\0" not in raw:
                result["bytes_b64"] = base64.b64encode(raw.replace(b"\r\n", b"\n")).decode("ascii")
        return msg


@promoted("blob-crlf-as-lf", "FC-024",
          '§3.4: "MUST bytes_b64 is the file\'s exact bytes" (line ends included)')
class BlobCrlfAsLf(CrlfAsLf):
    """repo/blob serves CRLF line ends as LF.

    Hides on: a text file with CRLF line ends; the fixture had none before
    notes/line-endings.txt (vcs, main).
    """

    method = "repo/blob"


class BlobAtCrlfAsLf(CrlfAsLf):
    """Base: repo/blob_at at the refs ``at_ref`` accepts."""

    method = "repo/blob_at"

    def at_ref(self, ref) -> bool:
        return True

    def reply(self, proxy, req, msg):
        if req is None or not self.at_ref(req.params.get("ref")):
            return msg
        return super().reply(proxy, req, msg)


@promoted("blob-at-crlf-as-lf", "FC-096",
          '§3.5: "MUST Bytes are the file at that ref (same base64 rules as §3.4)", the raw '
          'bytes, line ends included')
class BlobAtNamedRefCrlfAsLf(BlobAtCrlfAsLf):
    """repo/blob_at at a named ref or commit id serves CRLF line ends as LF.

    Hides on: a text file with CRLF line ends at a ref; the fixture had none
    before notes/line-endings.txt (vcs, main), and FC-096 asks it at main.
    """

    def at_ref(self, ref):
        return ref is not None


@promoted("blob-at-null-ref-crlf-as-lf", "FC-133",
          '§3.5: "MUST Bytes are the file at that ref"; "null = default branch"')
class BlobAtNullRefCrlfAsLf(BlobAtCrlfAsLf):
    """repo/blob_at with ref null serves CRLF line ends as LF.

    Hides on: a text file with CRLF line ends on the default branch; the
    fixture had none before notes/line-endings.txt (vcs, main).
    """

    def at_ref(self, ref):
        return ref is None
