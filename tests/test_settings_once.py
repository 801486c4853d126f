"""A run reads its knobs and its adapter command once a process: the command
line's Settings (cases/cli.py) are the session's (cases.harness.GivenSettings),
the adapter's argv stays the list it was given, never joined and split again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PROBE = r"""
import json, sys
from cases import settings
built, split = [], []
real_from_env = settings.Settings.from_env.__func__
def counted(cls, adapter=None, environ=None):
    built.append(list(adapter) if adapter else None)
    return real_from_env(cls, adapter, environ)
settings.Settings.from_env = classmethod(counted)
import shlex
real_split = shlex.split
shlex.split = lambda *a, **k: (split.append(a[0]), real_split(*a, **k))[1]
from cases import cli, harness
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
