"""Self-test session setup: what the suite runs under test leave behind goes away.

Many self-tests run the CLI against failing adapters on purpose, and a failing
run keeps its cases' transcripts in a temp folder for the user (named in its
summary). Those folders are the user's, not the self-test's: every subprocess
of the session gets TMPDIR pointing at one session folder, removed at the end.
This process's own temp dir (pytest's tmp_path) is left as it was.

The gate tests' suite runs start in the background once collection is over,
and the modules that wait for them run last (tests/gate.py "one pool per
pytest session").
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


def pytest_collection_modifyitems(session, config, items):
    if hasattr(config, "workerinput"):
        return
    from tests import gate
    items[:] = gate.order(items)


def pytest_collection_finish(session):
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:
        return
    from tests import gate
    gate.start(session.items)


def pytest_sessionfinish(session, exitstatus):
    from tests import gate
    gate.finish()
