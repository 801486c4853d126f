"""The option table (cases/kit/options.py): the CLI's parser and the pytest
plugin's options come from it, and every run option the CLI takes reaches
the plugin as its --forge- twin with the same value."""

from __future__ import annotations

import argparse
from pathlib import Path

from cases.cli import command
from cases.kit import options


class _Group:
    """Stands in for a pytest option group: addoption goes to argparse, which
    pytest's own parser is built on."""

    def __init__(self):
        self.parser = argparse.ArgumentParser(add_help=False)

    def addoption(self, *words, **keywords):
        self.parser.add_argument(*words, **keywords)


def _plugin_parser() -> argparse.ArgumentParser:
    group = _Group()
    options.add_pytest_options(group)
    return group.parser


def test_each_side_gets_its_rows_once():
    cli = {a.dest for a in command._parser()._actions} - {"help"}
    plugin = {a.dest for a in _plugin_parser()._actions}
    for o in options.OPTIONS:
        dest = o.name.replace("-", "_")
        assert (dest in cli) == (o.side != options.PYTEST), o.name
        assert (f"forge_{dest}" in plugin) == (o.side != options.CLI), o.name
    assert len(cli) == sum(o.side != options.PYTEST for o in options.OPTIONS)
    assert len(plugin) == sum(o.side != options.CLI for o in options.OPTIONS)


def test_run_options_reach_the_plugin_with_their_values(tmp_path):
    given = {"json": "r.json", "junit": "r.xml", "html": "r.html", "transcripts": "t",
             "known-failures": "known.txt"}
    argv = [w for name, value in given.items() for w in (f"--{name}", str(tmp_path / value))]
    args = command._parser().parse_args([*argv, "--strict"])
    seen = vars(_plugin_parser().parse_args(options.forwarded(args)))
    for name, value in given.items():
        assert seen[f"forge_{name.replace('-', '_')}"] == str((tmp_path / value).resolve())
    assert seen["forge_strict"] is True
    assert {o.name for o in options.OPTIONS if o.side == options.BOTH} == {*given, "strict"}


def test_nothing_given_forwards_nothing():
    args = command._parser().parse_args([])
    assert options.forwarded(args) == []
    seen = vars(_plugin_parser().parse_args([]))
    assert seen["forge_strict"] is False
    assert all(v is None for k, v in seen.items() if k != "forge_strict")


def test_relative_paths_are_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = command._parser().parse_args(["--json", "out.json"])
    assert options.forwarded(args) == ["--forge-json", str(Path(tmp_path, "out.json").resolve())]
