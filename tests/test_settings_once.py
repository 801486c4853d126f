"""A run reads its knobs and its adapter command once a process: the command
line's Settings (cases/cli/command.py) are the session's (cases.harness.session.GivenSettings),
the adapter's argv stays the list it was given, never joined and split again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PROBE = r"""
import json, sys
from cases.kit import settings
built, split = [], []
real_from_env = settings.Settings.from_env.__func__
def counted(cls, adapter=None, environ=None):
    built.append(list(adapter) if adapter else None)
    return real_from_env(cls, adapter, environ)
settings.Settings.from_env = classmethod(counted)
import shlex
real_split = shlex.split
shlex.split = lambda *a, **k: (split.append(a[0]), real_split(*a, **k))[1]
from cases.cli import command as cli
from cases.harness import session as harness
seen = []
real_init = harness.Harness.__init__
def init(self, config):
    real_init(self, config)
    seen.append(self.settings.adapter)
harness.Harness.__init__ = init
code = cli.main(sys.argv[1:])
print(json.dumps({"code": code, "built": built, "split": split, "seen": seen}))
"""


def test_one_process_builds_its_settings_once_and_keeps_the_argv_a_list():
    adapter = [sys.executable, "-S", str(ROOT / "vendor" / "fs_provider.py")]
    proc = subprocess.run([sys.executable, "-c", _PROBE, "--jobs", "1", "--case", "FC-001",
                           "--", *adapter], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"] == 0
    assert out["built"] == [adapter], out      # once, from the list after `--`
    assert out["seen"] == [adapter], out       # the session's are those
    assert not [s for s in out["split"] if "fs_provider" in s], out   # never re-split


_FORKED_PROBE = r"""
import json, os, sys
from cases.kit import settings
log = os.environ["PROBE_LOG"]
def note(kind, value):
    with open(log, "a", encoding="utf-8") as f:   # (each process appends whole lines)
        f.write(json.dumps([kind, os.getpid(), value]) + "\n")
real_from_env = settings.Settings.from_env.__func__
def counted(cls, adapter=None, environ=None):
    note("built", list(adapter) if adapter else None)
    return real_from_env(cls, adapter, environ)
settings.Settings.from_env = classmethod(counted)
import shlex
real_split = shlex.split
def split(text, *a, **k):
    note("split", text)
    return real_split(text, *a, **k)
shlex.split = split
from cases.cli import command as cli
from cases.harness import session as harness
real_init = harness.Harness.__init__
def init(self, config):
    real_init(self, config)
    note("seen", self.settings.adapter)
harness.Harness.__init__ = init
print(json.dumps({"code": cli.main(sys.argv[1:])}))
"""


def test_the_workers_of_a_run_take_the_parents_settings(tmp_path):
    """With --jobs 2 the workers (forked) run on the Settings the parent built:
    one parse in the whole run, and each worker's session sees the argv list."""
    adapter = [sys.executable, "-S", str(ROOT / "vendor" / "fs_provider.py")]
    log = tmp_path / "probe.log"
    proc = subprocess.run([sys.executable, "-c", _FORKED_PROBE, "--jobs", "2",
                           "--group", "handshake", "--group", "icons", "--", *adapter],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PROBE_LOG": str(log)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["code"] == 0
    notes = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    built = [value for kind, _, value in notes if kind == "built"]
    seen = {pid: value for kind, pid, value in notes if kind == "seen"}
    assert built == [adapter], notes                        # once, in the parent
    assert len(seen) == 2 and all(v == adapter for v in seen.values()), notes   # two workers
    assert not [v for kind, _, v in notes if kind == "split" and "fs_provider" in v], notes
