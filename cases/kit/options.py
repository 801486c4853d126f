"""The one table of the suite's options, and the two parsers built from it.

Each row names an option once: its words, help, argparse keywords and which
side takes it. ``CLI`` rows are ``python3 run``'s (cases/cli/command.py);
``PYTEST`` rows are the plugin's ``--forge-...`` options (cases/harness/plugin.py,
for plain ``pytest cases`` and for the run the CLI hands to pytest); a row on
both sides is a run option the CLI passes on to pytest as its ``--forge-`` twin
(``forwarded``). Help texts may name ``{groups}`` and ``{levels}``, which the
CLI fills in.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

CLI, PYTEST, BOTH = "cli", "pytest", "both"


def whole_number(flag: str) -> Callable[[str], int]:
    """An argparse type: a whole number of at least 1."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            raise argparse.ArgumentTypeError(
                f"{flag} wants a whole number of at least 1, not {text!r}")
        return n
    return parse


@dataclass(frozen=True)
class Option:
    """One option: ``name`` is its CLI word without dashes (the plugin's is
    ``--forge-<name>``), ``help`` its CLI help (``pytest_help`` the plugin's
    when it differs), ``cli`` the argparse keywords of the CLI side."""

    name: str
    side: str
    help: str
    pytest_help: str | None = None
    short: str | None = None
    cli: dict[str, Any] = field(default_factory=dict)

    @property
    def flag(self) -> str:
        return f"--{self.name}"

    @property
    def forge_flag(self) -> str:
        return f"--forge-{self.name}"

    @property
    def is_switch(self) -> bool:
        return self.cli.get("action") == "store_true"


_EXPLORE = "--explore: "

OPTIONS: tuple[Option, ...] = (
    # ---- what to run
    Option("case", CLI, "run only this case (repeatable)",
           cli=dict(action="append", default=[], metavar="FC-nnn")),
    Option("group", CLI, "run only this group (repeatable): {groups}",
           cli=dict(action="append", default=[], metavar="NAME")),
    Option("level", CLI, "run only the cases of this protocol level and below: {levels}",
           cli=dict(metavar="vX.Y")),
    Option("rerun-failed", CLI,
           "run only the cases that failed (or failed as known) in that report",
           cli=dict(metavar="REPORT.json")),
    Option("list", CLI, "list the case matrix and exit (with --json: as JSON)",
           cli=dict(action="store_true")),
    # ---- the reports and the verdict (the CLI passes them on to pytest)
    Option("json", BOTH, "write the JSON report to PATH (--list --json: to stdout)",
           "write the JSON report here", cli=dict(metavar="PATH", nargs="?", const="-")),
    Option("junit", BOTH, "write JUnit XML to PATH", "write JUnit XML here",
           cli=dict(metavar="PATH")),
    Option("html", BOTH, "write the single-file HTML report to PATH",
           "write the single-file HTML report here", cli=dict(metavar="PATH")),
    Option("transcripts", BOTH, "write one JSONL wire transcript per case into DIR",
           "one JSONL transcript per case here", cli=dict(metavar="DIR")),
    Option("known-failures", BOTH,
           "cases expected to fail, one `FC-nnn  reason` a line: reported as known, not "
           "failing the run; one that passes fails the run as stale",
           "known failures file (FC-nnn reason)", cli=dict(metavar="FILE")),
    Option("strict", BOTH, "a case with a warning fails", "a warning fails its case",
           cli=dict(action="store_true")),
    # ---- how to run
    Option("jobs", CLI,
           "run the case groups in N processes at once, each with its own adapter and "
           "fixture copy (default: FORGE_JOBS, else one more than the cores, at most 4, on "
           "a machine of 2 cores or more, else 1); --jobs 1 runs them one after another, "
           "for a backend with strict rate limits",
           cli=dict(metavar="N", type=whole_number("--jobs"), default=None)),
    Option("replay", CLI,
           "re-send the host side of a saved case transcript to the adapter and say where "
           "its frames now differ", cli=dict(metavar="TRANSCRIPT.jsonl")),
    Option("diff", CLI,
           "what changed between two JSON reports of one adapter (cases newly failing, "
           "newly passing, new warnings, version and matrix digest); exit 1 when a case "
           "newly fails", cli=dict(nargs=2, metavar=("OLD.json", "NEW.json"))),
    Option("version", CLI, "print the version, the protocol and the matrix digest and exit",
           cli=dict(action="store_true")),
    # ---- --explore and its knobs (cases/explore: drawn repositories, shrunk findings)
    Option("explore", CLI,
           "judge the adapter on hypothesis-drawn repositories and request programs "
           "instead of the cases; a violation is shrunk and reproduced",
           cli=dict(action="store_true")),
    Option("seed", CLI, _EXPLORE + "the seed (a number, or random; default fixed)",
           cli=dict(metavar="S")),
    Option("budget", CLI, _EXPLORE + "stop drawing new examples after this long (default 60)",
           cli=dict(metavar="SECONDS", type=float)),
    Option("examples", CLI, _EXPLORE + "draw N examples instead of a time budget",
           cli=dict(metavar="N", type=int)),
    Option("verbose", CLI, "more output", short="-v", cli=dict(action="count", default=0)),
    Option("self-test", CLI, "run the suite's own tests (pytest over tests/) instead",
           cli=dict(action="store_true")),
    # ---- the plugin's own: what the CLI (or a user of plain pytest) hands the session
    Option("adapter", PYTEST, "adapter command (shell words); default FORGE_PROVIDER/PROVIDER "
           "or the reference"),
    Option("select", PYTEST, "comma-separated case ids to run"),
    Option("fixture-dir", PYTEST,
           "an already materialized fixture copy to use (the CLI's pre-flight)"),
    Option("kept-dir", PYTEST,
           "where a failing case's transcript goes when no --forge-transcripts is given"),
    Option("worker-out", PYTEST,
           "(a worker of a run in several processes, cases/cli/jobs.py) hand the results "
           "and the monitor's findings to the parent through this file; write no report"),
)


def add_cli_options(parser: argparse.ArgumentParser, fill: dict[str, str]) -> None:
    """The ``python3 run`` side of the table, in its order."""
    for o in OPTIONS:
        if o.side == PYTEST:
            continue
        words = [o.short, o.flag] if o.short else [o.flag]
        parser.add_argument(*words, help=o.help.format(**fill), **o.cli)


def add_pytest_options(group) -> None:
    """The plugin's side (``--forge-<name>``) into a pytest option group."""
    for o in OPTIONS:
        if o.side == CLI:
            continue
        help_text = o.pytest_help or o.help
        if o.is_switch:
            group.addoption(o.forge_flag, action="store_true", help=help_text)
        else:
            group.addoption(o.forge_flag, default=None, help=help_text)


def forwarded(args: argparse.Namespace) -> list[str]:
    """The pytest words for the run options given on the command line (paths
    made absolute: pytest runs with its own rootdir)."""
    words: list[str] = []
    for o in OPTIONS:
        if o.side != BOTH:
            continue
        value = getattr(args, o.name.replace("-", "_"))
        if o.is_switch:
            words += [o.forge_flag] if value else []
        elif value:
            words += [o.forge_flag, str(Path(value).resolve())]
    return words
