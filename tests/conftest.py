"""Self-test session setup: what the suite runs under test leave behind goes away.

Many self-tests run the CLI against failing adapters on purpose, and a failing
run keeps its cases' transcripts in a temp folder for the user (named in its
summary). Those folders are the user's, not the self-test's: every subprocess
of the session gets TMPDIR pointing at one session folder, removed at the end.
This process's own temp dir (pytest's tmp_path) is left as it was.
"""

import os
import shutil
import tempfile

_SESSION_TMP = None
_SAVED = None


def pytest_configure(config):
    global _SESSION_TMP, _SAVED
    if _SESSION_TMP is not None or hasattr(config, "workerinput"):
        return
    tempfile.tempdir = tempfile.gettempdir()   # freeze this process's choice first
    _SESSION_TMP = tempfile.mkdtemp(prefix="forge-selftest-")
    _SAVED = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = _SESSION_TMP
    from tests.gate import bytecode_env
    os.environ.update(bytecode_env())   # the test adapters' bytecode, compiled once a session


def pytest_unconfigure(config):
    global _SESSION_TMP
    if _SESSION_TMP is None:
        return
    if _SAVED is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = _SAVED
    shutil.rmtree(_SESSION_TMP, ignore_errors=True)
    _SESSION_TMP = None
