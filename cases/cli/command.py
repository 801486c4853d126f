"""The command line: ``python3 run [options] [--pytest ARGS...] [-- adapter argv...]``
(also ``forge-conformance ...`` and ``python -m forge_conformance ...`` when installed).

Parses options, checks the knobs and the adapter command, runs the pre-flight
(the fixture verifies and materializes; the adapter starts and answers
initialize once), then runs the case modules in-process with pytest and the
plugin (cases/harness/plugin.py), which writes the reports.

The argv grammar: the first ``--`` ends the suite's words; everything after
it is the adapter's command, never looked at. Before it, ``--pytest`` ends the
suite's own options; the words between it and ``--`` go to pytest as they are.

Exit codes:
    0    no case failed (skips and known failures allowed)
    1    at least one case failed (a stale known failure, or with --strict a
         warning, counts as failed); --replay: the frames differ; --diff: a case
         fails in the new report that did not fail in the old one
    2    the suite could not run: bad usage (unknown option, unknown case id or
         group, an adapter path that does not exist or is not executable, a bad
         FORGE_DEADLINE_S / FORGE_INACTIVITY_S), a corrupt fixture, an adapter
         that cannot be started, never answers initialize or answers it with an
         error, a --known-failures file naming an unknown id (or a case this
         release no longer has), a --diff input that is not a JSON report. One
         line on stderr says why.
    130  interrupted (Ctrl-C, SIGTERM or SIGHUP): the adapter's tree is stopped
         and the JSON report is still written, cases that did not run marked
         "not run (interrupted)"; a second signal does not cut that short, and
         a stop still going on after stopping.STOP_BOUND_S (a suite bug) ends with the
         thread stacks on stderr.

``python3 run --self-test [pytest args]`` runs the suite's self-tests
(pytest over tests/); "no tests collected" counts as a failure (exit 1).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import sys
from pathlib import Path

from cases.kit import invocation, options
from cases import registry
from cases.report import release
from cases.harness import stopping
from cases.kit.exits import EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK, PROG, UsageError, say
from cases.kit.settings import REPO_ROOT
from cases.harness.stopping import LEFTOVERS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):   # one line, no usage dump
        raise UsageError(f"{message} (see `{invocation.command()} --help`)")


def _parser() -> argparse.ArgumentParser:
    cmd = invocation.command()
    p = _Parser(prog=cmd, description=(
        "Run the forge-conformance suite against a rootle stdio provider. With nothing "
        "after `--`, the vendored reference adapter (vendor/fs_provider.py) is used."),
        usage=f"{cmd} [options] [--pytest PYTEST_ARGS...] [-- adapter argv...]\n"
              f"       {cmd} --replay TRANSCRIPT.jsonl [-- adapter argv...]\n"
              f"       {cmd} --diff OLD.json NEW.json\n"
              f"       {cmd} --self-test [pytest args]",
        epilog="Knobs (environment): FORGE_PROVIDER / PROVIDER (adapter command, shell "
               "words), FORGE_ORG (default local), FORGE_DEADLINE_S (default 30), "
               "FORGE_INACTIVITY_S (default 2), FORGE_NO_APPEND=1, FORGE_NO_FAULTS=1; "
               "a {fixture} word in the command is replaced by the fixture dir. "
               "Exit: 0 no failure, 1 a case failed, 2 could not run, 130 interrupted.")
    options.add_cli_options(p, {"groups": ", ".join(registry.GROUPS),
                                "levels": ", ".join(_levels())})
    return p


def _explore(args: argparse.Namespace, extra: list[str], adapter: list[str]) -> int | None:
    """Run --explore when asked (None otherwise); its knobs alone are bad usage."""
    if not args.explore:
        if args.seed is not None or args.budget is not None or args.examples is not None:
            raise UsageError("--seed, --budget and --examples go with --explore")
        return None
    if extra or args.case or args.group or args.list or args.replay or args.rerun_failed:
        raise UsageError("--explore takes only --seed, --budget or --examples, --json, --junit, "
                         "--html and an adapter after `--`")
    for flag, value in (("--json", args.json), ("--junit", args.junit), ("--html", args.html)):
        if value == "-":
            raise UsageError(f"{flag} needs a PATH")
    if args.budget is not None and args.examples is not None:
        raise UsageError("--budget and --examples exclude each other")
    if args.budget is not None and not args.budget > 0:
        raise UsageError("--budget wants a positive number of seconds")
    if args.examples is not None and args.examples < 1:
        raise UsageError("--examples wants a whole number of at least 1")
    seed = args.seed if args.seed is not None else "default"
    if seed not in ("default", "random") and not seed.isdigit():
        raise UsageError(f"--seed wants a whole number or random, not {seed!r}")
    from cases.explore import runner
    from cases.kit.settings import Settings
    settings = Settings.from_env(adapter)
    check_adapter(settings.adapter)
    previous = stopping.catch()   # the adapter's tree and the drawn sets go first
    try:
        return runner.main(settings, seed=seed, budget_s=args.budget, examples=args.examples,
                           json_path=args.json, junit_path=args.junit, html_path=args.html)
    except KeyboardInterrupt:
        return stopping.interrupted()
    finally:
        stopping.restore(previous)


def main(argv: list[str] | None = None, *, launcher: str | None = None) -> int:
    """The CLI; ``launcher`` (invocation.RUN/CONSOLE/MODULE) says how the user
    started it, for the rerun lines."""
    if launcher is not None:
        invocation.set_launcher(launcher)
    argv = list(sys.argv[1:] if argv is None else argv)
    stopping.begin()
    try:
        code = _main(argv)
    except UsageError as exc:
        say(str(exc))
        code = EXIT_CANNOT_RUN
    except KeyboardInterrupt:   # out of a run's last cleanup (cases/harness/stopping.py)
        LEFTOVERS.drop()        # (later stop signals do nothing: this ends)
        code = stopping.interrupted()
    except BrokenPipeError:   # `python3 run --list | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_OK
    if "--self-test" in split_argv(argv)[0]:
        return code   # pytest's own exit code: it owns its Ctrl-C, and its tests drive the stop path
    return stopping.ended(code)


def split_argv(argv: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(suite options, pytest args, adapter argv): see the module doc's grammar."""
    if "--" in argv:
        cut = argv.index("--")
        opts, adapter = argv[:cut], argv[cut + 1:]
    else:
        opts, adapter = argv, []
    if "--pytest" in opts:
        cut = opts.index("--pytest")
        opts, extra = opts[:cut], opts[cut + 1:]
    else:
        extra = []
    return opts, extra, adapter


def _main(argv: list[str]) -> int:
    opts, extra, adapter = split_argv(argv)
    if "--self-test" in opts:
        return self_test([a for a in argv if a != "--self-test"])
    args = _parser().parse_args(opts)
    if args.version:
        print(version_line())
        return EXIT_OK
    if args.diff:
        others = (args.case, args.group, args.level, args.rerun_failed, args.list, args.json,
                  args.junit, args.html, args.transcripts, args.known_failures, args.strict,
                  args.jobs, args.replay, extra, adapter)
        if any(others):
            raise UsageError("--diff takes only the two reports")
        from cases.report import diff
        try:
            return diff.diff_main(*args.diff)
        except diff.BadReport as exc:
            raise UsageError(str(exc)) from None
    explored = _explore(args, extra, adapter)
    if explored is not None:
        return explored
    if args.replay:
        if extra or args.list:
            raise UsageError("--replay takes only an adapter after `--`")
        from cases.cli import replay
        previous = stopping.catch()   # the adapter's tree and the fixture copy go first
        try:
            return replay.main(Path(args.replay), adapter)
        except KeyboardInterrupt:
            return stopping.interrupted()
        finally:
            stopping.restore(previous)
    case_ids = list(args.case)
    if args.rerun_failed:
        failed = _failed_in(args.rerun_failed)
        if not failed:
            print(f"{PROG}: no case failed in {args.rerun_failed}; nothing to rerun")
            return EXIT_OK
        case_ids += failed
    selected = _selection(case_ids, args.group, args.level)
    if args.list:
        return _list(selected, args.json)
    if args.json == "-":
        raise UsageError("--json needs a PATH (only --list --json prints to stdout)")
    args.pytest_args = extra
    return run_suite(args, adapter, selected)


def _protocol() -> str:
    from cases.report.writers import PROTOCOL
    return PROTOCOL


def version_line() -> str:
    """``forge-conformance 1.6.0 (protocol 1.6, matrix <digest>)``: what judges a run."""
    return (f"{PROG} {invocation.version()} (protocol {_protocol()}, "
            f"matrix {release.matrix_digest()})")


def _list(selected: list[str], as_json: str | None) -> int:
    if as_json is None:
        for c in registry.REGISTRY:
            if c.id in selected:
                print(f"{c.id}  {c.group:<11}  {c.title} — {c.spec}")
        return EXIT_OK
    import json
    rows = [{"id": c.id, "group": c.group, "title": c.title, "spec": c.spec, "since": c.since}
            for c in registry.REGISTRY if c.id in selected]
    text = json.dumps({"suite": PROG, "version": invocation.version(), "protocol": _protocol(),
                       "matrix": release.matrix_digest(),
                       "levels": list(_levels()), "groups": list(registry.GROUPS),
                       "cases": rows}, indent=2, ensure_ascii=False) + "\n"
    if as_json == "-":
        sys.stdout.write(text)
    else:
        try:
            Path(as_json).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--json: cannot write {as_json!r}: {exc.strerror or exc}") from None
    return EXIT_OK


def _failed_in(path: str) -> list[str]:
    """The ids a previous JSON report says failed (known failures included)."""
    import json

    from cases.report import convert
    try:
        rows = convert.read_rows(json.loads(Path(path).read_text(encoding="utf-8")))
        ids = [r.id for r in rows if r.failing]
    except OSError as exc:
        raise UsageError(f"--rerun-failed: cannot read {path!r}: {exc.strerror or exc}") from None
    except ValueError:   # not JSON (a UnicodeDecodeError too), or not a report (ShapeError)
        raise UsageError(f"--rerun-failed: {path!r} is not a forge-conformance JSON report "
                         f"(write one with --json)") from None
    known = {c.id for c in registry.REGISTRY}
    return [i for i in ids if i in known]


def _level_key(level: str) -> tuple[int, ...]:
    return tuple(int(x) for x in level.lstrip("v").split("."))


def _levels() -> tuple[str, ...]:
    """The protocol levels cases belong to (registry ``since`` values), oldest first."""
    found = set(registry.LEVELS) | {c.since for c in registry.REGISTRY}
    return tuple(sorted(found, key=_level_key))


def _selection(case_ids: list[str], groups: list[str], level: str | None = None) -> list[str]:
    """The selected ids in registry order (everything when nothing was asked);
    ``level`` keeps the cases of that protocol level and below."""
    wanted: set[str] = set()
    for cid in case_ids:
        norm = cid.strip().upper()
        try:
            wanted.add(registry.by_id(norm).id)
        except KeyError:
            raise UsageError(f"unknown case id {cid!r} (`{invocation.command()} --list` shows the "
                             f"{len(registry.REGISTRY)} cases)") from None
    for g in groups:
        if g not in registry.GROUPS:
            raise UsageError(f"unknown group {g!r}; groups: {', '.join(registry.GROUPS)}")
        wanted.update(c.id for c in registry.in_group(g))
    if not case_ids and not groups:
        wanted = {c.id for c in registry.REGISTRY}
    if level is not None:
        norm = level.strip().lower()
        norm = norm if norm.startswith("v") else "v" + norm
        if norm not in _levels():
            raise UsageError(f"unknown protocol level {level!r}; levels: {', '.join(_levels())}")
        top = _level_key(norm)
        wanted = {cid for cid in wanted if _level_key(registry.by_id(cid).since) <= top}
    return [c.id for c in registry.REGISTRY if c.id in wanted]


def check_adapter(argv: list[str]) -> None:
    """An adapter that cannot possibly start is bad usage, said before anything runs."""
    exe = argv[0]
    if "{fixture}" in exe:
        return
    if os.sep in exe or (os.altsep and os.altsep in exe):
        path = Path(exe)
        if not path.exists():
            raise UsageError(f"adapter {exe!r} does not exist")
        if path.is_dir():
            raise UsageError(f"adapter {exe!r} is a directory, not a program")
        if not os.access(path, os.X_OK):
            raise UsageError(f"adapter {exe!r} is not executable (chmod +x it, or put its "
                             f"interpreter first: -- python3 {exe})")
    elif shutil.which(exe) is None:
        raise UsageError(f"adapter command {exe!r} was not found on PATH")


def check_outputs(args: argparse.Namespace) -> None:
    """Report files must be writable before anything runs: a report that
    silently fails to appear at the end would be worse than no run."""
    if args.known_failures:
        from cases.report.known_failures import KnownFailuresError, parse
        try:
            parse(args.known_failures)
        except KnownFailuresError as exc:
            raise UsageError(str(exc)) from None
    for flag, value in (("--json", args.json), ("--junit", args.junit), ("--html", args.html)):
        if not value:
            continue
        path = Path(value)
        if path.is_dir():
            raise UsageError(f"{flag} {value!r} is a directory; give a file path")
        if not path.parent.is_dir():
            raise UsageError(f"{flag}: the folder {str(path.parent)!r} does not exist")
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise UsageError(f"{flag}: the folder {str(path.parent)!r} is not writable")
    if args.transcripts:
        try:
            Path(args.transcripts).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--transcripts: cannot use {args.transcripts!r}: "
                             f"{exc.strerror or exc}") from None
        if not os.access(args.transcripts, os.W_OK | os.X_OK):
            raise UsageError(f"--transcripts: the folder {args.transcripts!r} is not writable")


def run_suite(args: argparse.Namespace, adapter: list[str], selected: list[str]) -> int:
    from cases.report import writers as report
    from cases.harness.session import run_order
    from cases.kit.settings import Settings, make_temp_area
    settings = Settings.from_env(adapter)   # the one parse of this process's knobs
    check_adapter(settings.adapter)
    check_outputs(args)
    modules = sorted({str(REPO_ROOT / registry.by_id(cid).module) for cid in selected
                      if (REPO_ROOT / registry.by_id(cid).module).exists()},
                     key=lambda m: run_order(Path(m).stem.removeprefix("test_")))
    if not modules:
        raise UsageError("no case module implements the selected cases yet")
    watch = _Watch()
    # The stop path is caught before the temp area is made: until then a
    # Ctrl-C ends the process at once (stopping.quiet), which would leave the
    # folder behind.
    previous = stopping.catch()
    try:
        temp = make_temp_area("forge-preflight-")
        LEFTOVERS.add(lambda: shutil.rmtree(temp, ignore_errors=True))
        from cases.cli import jobs
        n = jobs.count(modules, args.jobs)
        workers = None
        if n > 1:   # they get ready while the pre-flight runs, and wait for its verdict
            workers = jobs.Workers(args, settings, selected, modules, n, temp)
            LEFTOVERS.add(workers.abandon, first=True)
        materialized = preflight(settings, temp)
        LEFTOVERS.add(materialized.cleanup, first=True)
        stopping.check()   # a stop swallowed on the way: no case starts
        if workers is not None:   # (the pre-flight's copy is removed while they run)
            return jobs.run_parallel(args, selected, workers, watch,
                                     meanwhile=materialized.cleanup)
        return _pytest(args, settings, selected, modules, materialized.path, watch)
    except KeyboardInterrupt:
        code = stopping.interrupted()
        if args.json and watch.report is None:   # (a signal after the run keeps its report)
            rep = report.skeleton(settings.adapter, interrupted=True, selected=selected)
            report.write_json(Path(args.json), rep)
        return code
    finally:
        LEFTOVERS.drop()   # (a stop inside it goes on to main, still caught: later ones do nothing)
        stopping.restore(previous)


def preflight(settings, temp: Path):
    """Fixture verified and materialized; adapter spawned and initialized once.
    Raises UsageError (exit 2) with one line when the suite cannot run."""
    import fixture
    from cases.report import writers as report
    from cases.report.explain import start_failure, violations
    from cases.harness.providers import new_provider   # imports wire: only for a real run
    from wire.errors import ProviderError, SpawnError
    # (everything made here lives under `temp`, which the caller removes)
    try:
        materialized = fixture.materialize(temp, root=settings.fixture_root)
    except fixture.FixtureError as exc:
        raise UsageError(f"the fixture is not usable: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot materialize the fixture: {exc}") from None
    p = new_provider(settings, materialized.path, temp, label="preflight")
    try:
        p.start()
    except SpawnError as exc:
        raise UsageError(str(exc)) from None
    except ProviderError as exc:
        cmd = shlex.join(settings.adapter)
        why = start_failure(exc) + violations(p)
        last = [ln for ln in p.stderr_tail(2000).splitlines() if ln.strip()]
        if last:
            why += f"; its stderr ends: {report.cut(last[-1], 200)}"
        raise UsageError(f"{why} [{cmd}]") from None
    finally:
        p.close()
    return materialized


class _Watch:
    """A tiny pytest plugin telling the CLI how the session ended."""

    def __init__(self):
        self.interrupted = False
        self.collect_errors = 0
        self.report: dict | None = None

    def pytest_unconfigure(self, config):
        from cases.harness import session as harness
        h = harness.of(config)
        if h is not None and h.report is not None:
            self.report = h.report

    def pytest_keyboard_interrupt(self, excinfo):
        self.interrupted = True

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors += 1


def _pytest(args, settings, selected: list[str], modules: list[str], fixture_dir: Path,
            watch: "_Watch") -> int:
    from cases.harness import finish, plugin
    from cases.harness.session import GivenSettings
    pargs = plugin.command_line(args, selected, modules, fixture_dir)
    # The session takes the settings built here (read once a process).
    code = plugin.run_pytest(pargs, [watch, GivenSettings(settings)])
    if watch.interrupted or stopping.came():
        return finish.verdict(watch.report, interrupted=True, counted_by_pytest=True)
    if code in (0, 1, 5):    # 5: every selected case is unimplemented (reported as skipped)
        return finish.verdict(watch.report, interrupted=False, counted_by_pytest=True,
                              pytest_code=code)
    if watch.collect_errors:
        say("the suite could not run: a case module failed to import (see above)")
    elif code == 3:
        say("the suite could not run: internal error in the suite (see above)")
    else:
        say(f"the suite could not run (pytest exit {code}; see above)")
    return EXIT_CANNOT_RUN


def _is_path(arg: str) -> bool:
    """An existing file or directory (a long -k expression is no file name: OSError)."""
    try:
        return Path(arg).exists()
    except OSError:
        return False


def self_test(pytest_args: list[str]) -> int:
    """pytest over tests/ in this interpreter; no tests collected is a failure."""
    if not (REPO_ROOT / "tests").is_dir():
        raise UsageError("--self-test needs a checkout of the suite (the self-tests are not "
                         "installed)")
    signal.signal(signal.SIGINT, signal.default_int_handler)   # pytest reports a Ctrl-C itself
    import pytest
    os.chdir(REPO_ROOT)
    # `--self-test tests/test_cli.py` runs that file only; with no path, all of tests/.
    named = [a for a in pytest_args if not a.startswith("-") and _is_path(a.split("::")[0])]
    code = int(pytest.main([*([] if named else ["tests"]), "-q", *pytest_args]))
    if code == 5:
        say("self-test: no tests were collected (pytest exit 5); that is a failure")
        return EXIT_FAILED
    return code
