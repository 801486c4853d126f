"""The in-tree PEP 517 build backend: how the checkout becomes the installed package.

A checkout keeps the design card's top-level folders (wire/, cases/, fixture/,
vendor/) and their imports name them directly (``from wire.errors import ...``).
Installed, they must not land in site-packages as generic top-level names, so
the wheel holds one namespace, ``forge_conformance``:

    checkout                 wheel
    wire/*.py                forge_conformance/wire/*.py
    cases/*.py               forge_conformance/cases/*.py (case modules, conftest, plugin)
    fixture/** (all data)    forge_conformance/fixture/** (alpha, beta, vcs-inputs, FAULTS.json,
                             MANIFEST.sha256, .gitattributes: byte for byte)
    vendor/*                 forge_conformance/vendor/* (the reference adapter)
    (generated)              forge_conformance/__init__.py (``__version__``, and
                             ``__matrix__``: the checkout's matrix digest, cases/report/release.py),
                             forge_conformance/__main__.py

While copying, the absolute imports of those four packages are rewritten to
their installed names (``from wire.errors`` -> ``from forge_conformance.wire.errors``,
``import fixture`` -> ``from forge_conformance import fixture``); the result is
parsed again and the build fails, naming file and line, if any import of a bare
top-level name is left. The sources in the checkout are never changed, so
branches editing them merge as usual.

Stdlib only and ``requires = []``: ``pip install <checkout>`` and the wheel
self-test need no download. Editable installs are not offered (a checkout runs
as ``python3 run``).
"""

from __future__ import annotations

import ast
import base64
import csv
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "forge_conformance"
PACKAGES = ("wire", "cases", "fixture", "vendor")
SKIP_DIRS = {"__pycache__", ".git", ".venv", ".hypothesis", "build", "dist"}
# Zip timestamps: fixed, so one checkout always gives the same wheel bytes.
EPOCH = (2020, 1, 1, 0, 0, 0)

_FROM = re.compile(r"^([ \t]*)from\s+(%s)((?:\.\w+)*)\s+import\b" % "|".join(PACKAGES), re.M)
_IMPORT = re.compile(r"^([ \t]*)import\s+(%s)(\s+as\s+\w+)?[ \t]*(#.*)?$" % "|".join(PACKAGES),
                     re.M)

_INIT = '''"""forge-conformance, the conformance suite for rootle stdio providers (installed).

The checkout's wire/, cases/, fixture/ and vendor/ are forge_conformance.wire,
.cases, .fixture and .vendor here. The wire client for an adapter's own
tests: ``from forge_conformance.wire import client`` (see its docstring).
"""

__version__ = %r
__matrix__ = %r   # the matrix digest of the checkout it was built from (cases/report/release.py)
'''

_MAIN = '''"""``python -m forge_conformance [options] [-- adapter argv...]``"""

import sys

from forge_conformance.cases.cli.entry import module_main

if __name__ == "__main__":
    sys.exit(module_main())
'''


# ------------------------------------------------------------------ project metadata

def _project() -> dict:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ImportError:   # Python 3.10: the few keys this backend reads, by pattern
        return _project_by_pattern(text)
    return tomllib.loads(text)["project"]


def _project_by_pattern(text: str) -> dict:
    def string(key: str) -> str:
        m = re.search(r'(?m)^%s\s*=\s*"([^"]*)"' % re.escape(key), text)
        return m.group(1) if m else ""
    deps = re.search(r"(?ms)^dependencies\s*=\s*\[(.*?)\]", text)
    scripts = re.search(r"(?ms)^\[project\.scripts\]\s*(.*?)(?=^\[|\Z)", text)
    return {"name": string("name"), "version": string("version"),
            "description": string("description"), "requires-python": string("requires-python"),
            "dependencies": re.findall(r'"([^"]+)"', deps.group(1)) if deps else [],
            "scripts": dict(re.findall(r'(?m)^([\w.-]+)\s*=\s*"([^"]+)"', scripts.group(1)))
            if scripts else {}}


def _dist_name(project: dict) -> str:
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}",
             f"Version: {project['version']}", f"Summary: {project.get('description', '')}",
             f"Requires-Python: {project.get('requires-python', '')}"]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    lines.append("Description-Content-Type: text/markdown")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def matrix_digest() -> str:
    """The checkout's matrix digest, by cases/report/release.py (loaded by its path:
    this backend imports nothing of the suite's packages)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("_forge_release", ROOT / "cases" / "report" / "release.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute_digest(str(ROOT))


# ------------------------------------------------------------------ the files

def package_files() -> list[tuple[str, Path]]:
    """(path in the wheel, source file) for every file the package ships."""
    out = []
    for pkg in PACKAGES:
        for dirpath, dirnames, filenames in os.walk(ROOT / pkg):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                if name.endswith((".pyc", ".pyo")):
                    continue
                src = Path(dirpath) / name
                out.append((f"{NAMESPACE}/{src.relative_to(ROOT).as_posix()}", src))
    return out


def rewrite_imports(source: str, where: str) -> str:
    """The module's imports of wire/cases/fixture/vendor under NAMESPACE (see module doc)."""
    text = _FROM.sub(lambda m: f"{m.group(1)}from {NAMESPACE}.{m.group(2)}{m.group(3)} import",
                     source)
    text = _IMPORT.sub(lambda m: f"{m.group(1)}from {NAMESPACE} import {m.group(2)}"
                       f"{m.group(3) or ''}{'  ' + m.group(4) if m.group(4) else ''}", text)
    tree = ast.parse(text, filename=where)
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            if name.split(".")[0] in PACKAGES:
                raise RuntimeError(f"{where}:{node.lineno}: import of {name!r} has a form the "
                                   f"build cannot move under {NAMESPACE} (tools/forge_build.py); "
                                   f"write it as `from {name.split('.')[0]} import ...`")
    return text


def _content(arcname: str, src: Path) -> bytes:
    data = src.read_bytes()
    if arcname.endswith(".py") and "/fixture/alpha/" not in arcname:
        return rewrite_imports(data.decode("utf-8"), str(src)).encode("utf-8")
    return data


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _add(zf: zipfile.ZipFile, arcname: str, data: bytes, mode: int, record: list) -> None:
    info = zipfile.ZipInfo(arcname, EPOCH)
    info.external_attr = (mode & 0o777 | 0o100000) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)
    record.append((arcname, _record_hash(data), str(len(data))))


# ------------------------------------------------------------------ PEP 517 hooks

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    dist = _dist_name(project)
    version = project["version"]
    info_dir = f"{dist}-{version}.dist-info"
    name = f"{dist}-{version}-py3-none-any.whl"
    record: list = []
    with zipfile.ZipFile(Path(wheel_directory) / name, "w") as zf:
        _add(zf, f"{NAMESPACE}/__init__.py", (_INIT % (version, matrix_digest())).encode(),
             0o644, record)
        _add(zf, f"{NAMESPACE}/__main__.py", _MAIN.encode(), 0o644, record)
        for arcname, src in package_files():
            _add(zf, arcname, _content(arcname, src), src.stat().st_mode, record)
        scripts = project.get("scripts", {})
        entry = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())
        for fname, text in (("METADATA", _metadata(project)),
                            ("WHEEL", "Wheel-Version: 1.0\nGenerator: forge_build\n"
                                      "Root-Is-Purelib: true\nTag: py3-none-any\n"),
                            ("entry_points.txt", entry), ("top_level.txt", NAMESPACE + "\n")):
            _add(zf, f"{info_dir}/{fname}", text.encode("utf-8"), 0o644, record)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerows(record)
        writer.writerow((f"{info_dir}/RECORD", "", ""))
        info = zipfile.ZipInfo(f"{info_dir}/RECORD", EPOCH)
        info.external_attr = 0o100644 << 16
        zf.writestr(info, out.getvalue())
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The checkout's own files (the layout above is made by build_wheel from it)."""
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    name = f"{base}.tar.gz"
    files = ["pyproject.toml", "README.md", "CHANGELOG.md", "FIXTURES.md", "run",
             "tools/forge_build.py"]
    files += [src.relative_to(ROOT).as_posix() for _, src in package_files()]
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for rel in files:
            src = ROOT / rel
            if src.exists():
                info = tf.gettarinfo(str(src), f"{base}/{rel}")
                info.mtime, info.uid, info.gid, info.uname, info.gname = time.mktime(
                    EPOCH + (0, 0, -1)), 0, 0, "", ""
                with open(src, "rb") as f:
                    tf.addfile(info, f)
        pkg_info = _metadata(project).encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        tf.addfile(info, io.BytesIO(pkg_info))
    return name
