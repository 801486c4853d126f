"""The suite as an adapter author installs it: a wheel in a fresh venv, run from elsewhere.

Builds the wheel with the in-tree backend (pip, offline: ``requires = []``),
installs it with ``--no-index --no-deps`` into a fresh venv that reuses this
environment's dependencies through a .pth file (nothing is downloaded), and
then, from a directory outside the checkout: the console script and
``python -m forge_conformance`` run cases against the packaged reference and
fixture, report the right version, print rerun lines that start the suite the
same way, install nothing but the one namespace; and the README's wire client
example runs under pytest there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from cases.report import release

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.search(r'(?m)^version\s*=\s*"([^"]+)"',
                    (ROOT / "pyproject.toml").read_text("utf-8")).group(1)
KNOBS = ("FORGE_PROVIDER", "PROVIDER", "FORGE_FIXTURE_ROOT", "FORGE_FIXTURE_DIR",
         "PYTHONPATH", "FORGE_BOOTSTRAPPED")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in KNOBS}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index",
                            "--disable-pip-version-check", "-q", "-w", str(dist), str(ROOT)],
                           capture_output=True, text=True, timeout=300, env=_env())
    assert build.returncode == 0, build.stdout + build.stderr
    wheels = list(dist.glob("forge_conformance-*.whl"))
    assert len(wheels) == 1, wheels
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # This environment's dependencies, after the venv's own site-packages.
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "forge-host-deps.pth").write_text("\n".join(sorted(here)) + "\n")
    inst = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--no-index", "--no-deps", "-q", "--disable-pip-version-check",
                           str(wheels[0])], capture_output=True, text=True, timeout=300,
                          env=_env())
    if inst.returncode != 0 and "no such option: --python" in inst.stderr:
        pytest.skip("this pip cannot install into another interpreter (--python)")
    assert inst.returncode == 0, inst.stdout + inst.stderr
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return {"wheel": wheels[0], "venv": venv, "python": python, "purelib": Path(purelib),
            "script": venv / "bin" / "forge-conformance", "cwd": elsewhere}


def _run(inst, argv, timeout=300):
    return subprocess.run(argv, cwd=inst["cwd"], env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def test_the_wheel_holds_one_namespace_with_the_fixture_data(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"forge_conformance", f"forge_conformance-{VERSION}.dist-info"}, tops
    for rel in ("fixture/MANIFEST.sha256", "fixture/FAULTS.json", "fixture/.gitattributes",
                "fixture/alpha/docs/url/issue#42.md", "fixture/alpha/docs/café.md",
                "fixture/vcs-inputs/steps.json", "fixture/beta/README.md",
                "vendor/fs_provider.py", "cases/test_trees.py", "wire/client.py"):
        assert f"forge_conformance/{rel}" in names, rel
    manifest = (ROOT / "fixture" / "MANIFEST.sha256").read_text("utf-8")
    frozen = [line.split("  ", 1)[1] for line in manifest.splitlines()]
    shipped = {n.removeprefix("forge_conformance/fixture/") for n in names}
    generated = {"alpha/big.bin"}
    missing = [f for f in frozen if f not in shipped and f not in generated
               and not f.startswith(("vcs/", "wide/"))]
    assert not missing, missing
    wheel = zipfile.ZipFile(installed["wheel"])
    cli = wheel.read("forge_conformance/cases/cli/command.py").decode()
    assert "from forge_conformance.cases import registry" in cli
    assert "from forge_conformance.cases.kit import invocation" in cli
    assert not re.search(r"(?m)^\s*from (wire|cases|fixture|vendor)\b", cli)


def test_console_script_runs_the_packaged_reference_from_elsewhere(installed):
    report = installed["cwd"] / "r.json"
    proc = _run(installed, [str(installed["script"]), "--case", "FC-001", "--case", "FC-020",
                            "--case", "FC-024", "--json", str(report)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    data = json.loads(report.read_text())
    assert data["version"] == VERSION
    assert data["matrix"] == release.compute_digest(str(ROOT))
    assert data["summary"]["passed"] == 3 and data["summary"]["failed"] == 0
    adapter = data["adapter"]["argv"][-1]
    assert adapter.startswith(str(installed["venv"])) and adapter.endswith("fs_provider.py")
    rows = {r["id"]: r for r in data["cases"]}
    assert rows["FC-020"]["rerun"] == f"{installed['script']} --case FC-020"
    assert "site-packages/run" not in proc.stdout + json.dumps(data)


def test_version_and_module_entry_point(installed):
    for argv in ([str(installed["script"]), "--version"],
                 [str(installed["python"]), "-m", "forge_conformance", "--version"]):
        proc = _run(installed, argv)
        assert proc.returncode == 0, proc.stderr
        # the digest the wheel carries is the checkout's, though its sources were rewritten
        digest = release.compute_digest(str(ROOT))
        assert proc.stdout.strip() == (f"forge-conformance {VERSION} (protocol 1.6, "
                                       f"matrix {digest})")


def test_module_rerun_line_and_failure_from_elsewhere(installed):
    """A failing case run with python -m: its rerun line starts the suite that way."""
    mutant = ROOT / "tests" / "mutant.py"
    proc = _run(installed, [str(installed["python"]), "-m", "forge_conformance",
                            "--case", "FC-021", "--", sys.executable, str(mutant),
                            "dirs-typed-dir"])
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr
    want = (f"rerun: {installed['python']} -m forge_conformance --case FC-021 -- "
            f"{sys.executable} {mutant} dirs-typed-dir")
    assert want in proc.stdout, proc.stdout[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr


def test_self_test_is_refused_when_installed(installed):
    proc = _run(installed, [str(installed["script"]), "--self-test"])
    assert proc.returncode == 2 and "checkout" in proc.stderr


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    m = re.search(r"<!-- example:wire-client -->\s*```python\n(.*?)```", text, re.S)
    assert m, "README.md lost its wire client example (<!-- example:wire-client -->)"
    return m.group(1)


def test_readme_wire_client_example_runs_against_the_installed_package(installed):
    test_file = installed["cwd"] / "test_my_adapter.py"
    test_file.write_text(_readme_example(), encoding="utf-8")
    proc = _run(installed, [str(installed["python"]), "-m", "pytest", "-q", "-p",
                            "no:cacheprovider", str(test_file)])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "passed" in proc.stdout


def _action_step(name: str) -> str:
    """The `run:` script of one step of action.yml (no YAML library: the
    block scalar is the lines indented deeper than its `run:` key)."""
    lines = (ROOT / "action.yml").read_text("utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip() == f"- name: {name}")
    key = next(i for i in range(start, len(lines)) if lines[i].strip() == "run: |")
    indent = len(lines[key]) - len(lines[key].lstrip())
    body = []
    for ln in lines[key + 1:]:
        if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
            break
        body.append(ln[indent + 2:])
    return "\n".join(body) + "\n"


def test_the_actions_run_step_writes_every_report(installed, tmp_path):
    """action.yml's suite step, run by bash as the runner would (inputs as env)."""
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    (runner_temp / "forge-conformance-venv").symlink_to(installed["venv"])
    outputs = tmp_path / "github_output"
    fs_provider = installed["purelib"] / "forge_conformance" / "vendor" / "fs_provider.py"
    env = {**_env(), "RUNNER_TEMP": str(runner_temp), "GITHUB_OUTPUT": str(outputs),
           "FORGE_PROVIDER": f"{installed['python']} {fs_provider}",
           "FORGE_KNOWN_FAILURES": "", "FORGE_LEVEL": "v1.1", "FORGE_STRICT": "true",
           "FORGE_ARGS": "--group handshake --group trees", "FORGE_REPORT_DIR": "out"}
    proc = subprocess.run(["bash", "-c", _action_step("Run the suite")], cwd=installed["cwd"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    out = installed["cwd"] / "out"
    for name in ("report.json", "junit.xml", "report.html"):
        assert (out / name).is_file(), name
    data = json.loads((out / "report.json").read_text())
    ran = {r["id"] for r in data["cases"] if r["outcome"] == "passed"}
    assert ran and all(r["since"] in ("v1", "v1.1") for r in data["cases"] if r["id"] in ran)
    assert data["strict"] is True
    assert sorted(p.name for p in (out / "transcripts").iterdir()) == sorted(
        f"{cid}.jsonl" for cid in ran)
    assert outputs.read_text().splitlines() == [
        "exit-code=0", "report=out/report.json", f"version={VERSION}",
        f"matrix={release.compute_digest(str(ROOT))}"]
