"""The materialized fixture as the cases see it (the ``fx`` / ``fx_mutable``
fixtures): repo ids, bytes on disk, the walk of a repo, git in the vcs repo;
plus the cheap fingerprint the harness uses to notice an adapter that
changed the copy it serves. What the kit and the judges compute from a copy is
kept on its view (``memo``), so it lives and ends with the session that made it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cases.kit.memo import remembered


class FixtureView:
    """One materialized copy: ``path``, the org, whether the vcs repo exists."""

    def __init__(self, path: Path, org: str, vcs_built: bool, vcs_skip_reason: str | None,
                 home: Path, answers=None):
        self.path = Path(path)
        self.org = org
        self.vcs_built = vcs_built
        self.vcs_skip_reason = vcs_skip_reason
        self._home = home   # an empty HOME for git, so no user config leaks in
        self.answers = answers   # fixture.git_answers.GitAnswers of this build, or None
        self.memo: dict = {}     # answers computed from this copy (cases.kit.memo.remembered)

    def __repr__(self) -> str:
        return f"<fixture {self.path} vcs={'built' if self.vcs_built else 'absent'}>"

    def repo(self, name: str) -> str:
        return f"{self.org}/{name}"

    def read(self, repo_name: str, relpath: str) -> bytes:
        return (self.path / repo_name / relpath).read_bytes()

    def walk(self, repo_name: str) -> dict[str, str]:
        """Every file ("blob") and directory ("tree") of a repo on disk, by
        ``/``-separated relative path; a git repo's ``.git`` is left out.
        Walked once per view (cases.kit.memo: the copy does not change while
        cases read it); each caller gets a dict of its own."""
        return dict(remembered(self, ("disk", repo_name), lambda: self._walk(repo_name)))

    def _walk(self, repo_name: str) -> dict[str, str]:
        top = self.path / repo_name
        found: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(top):
            rel_dir = os.path.relpath(dirpath, top)
            prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
            if not prefix:
                dirnames[:] = [d for d in dirnames if d != ".git"]
            for d in dirnames:
                found[prefix + d] = "tree"
            for f in filenames:
                found[prefix + f] = "blob"
        return dict(sorted(found.items()))

    def git_bytes(self, *args: str) -> bytes:
        """``git <args>`` in the vcs repo with an isolated environment; raises on
        error. An answer an earlier run got for the same build is taken as is
        (fixture.git_answers: the same build key is the same repo)."""
        known = self.answers.get(args) if self.answers is not None else None
        if known is None:
            env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(self._home),
                   "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                   "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat"}
            proc = subprocess.run(["git", "-C", str(self.path / "vcs"), *args], env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
            known = (proc.returncode, proc.stdout, proc.stderr)
            if self.answers is not None:
                self.answers.put(args, *known)
        code, out, err = known
        if code != 0:
            raise RuntimeError(f"git {' '.join(args)} failed ({code}): "
                               f"{err.decode('utf-8', 'replace').strip()}")
        return out

    def git(self, *args: str) -> str:
        return self.git_bytes(*args).decode("utf-8", "replace")


def snapshot(top: Path) -> dict[str, tuple]:
    """Cheap fingerprint of a materialized copy (size, mtime, mode per path;
    git's own .git internals left out)."""
    seen: dict[str, tuple] = {}
    stack = [str(top)]
    while stack:
        here = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for e in entries:
            if e.name == ".git":
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            seen[e.path] = (st.st_size, st.st_mtime_ns, st.st_mode)
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
    return seen
