"""Build topiclink's sdist and wheel, check what they hold, and use the wheel as a new user.

Usage (from anywhere; needs the ``build`` package in the running Python)::

    python scripts/check_wheel.py [--dist DIR] [--datasets DIR] [--keep]

Steps, each timed; the script exits non-zero on the first failed step (the content checks
list every problem first):

1. ``python -m build`` of the repository into ``--dist`` (default: a temporary folder):
   the sdist, then the wheel built from the sdist (so a file missing from the sdist
   breaks the wheel too).
2. The wheel must hold the package data (bundled Cora and its README, the report's static
   files), ``topiclink/py.typed``, the licence files (``LICENSE``, ``LICENSES/*``) and a
   ``License-Expression``; nothing but ``topiclink/`` and its ``.dist-info``: no tests,
   benchmarks, reproductions, results, byte code, and no ``.npz`` outside the bundled
   data.  The sdist must hold the licences, ``docs/``, every file the README links to,
   and a test suite that runs with the README's test command (``tests/conftest.py``,
   helpers, golden data, the v0.1.0 model files; ``reproductions/``, which it installs);
   no ``.ci/``, byte code or figures of ``benchmarks/results``.
3. A fresh virtual environment (no system site packages) in an empty temporary folder;
   ``pip install`` of the wheel (its dependencies from the index, or pip's cache as
   usual).
4. There, with the working directory an empty folder, ``HOME`` a temporary folder and
   ``TOPICLINK_DATA`` unset: ``topiclink demo``; the README's quick start (the first
   ```` ```python ```` block under ``## Quick start``, read from ``README.md`` now); and,
   where ``scripts/serve_datasets.py`` exists, ``topiclink datasets fetch nations`` from
   that loopback server (``TOPICLINK_DATA_MIRROR``), serving ``--datasets`` (default
   ``$TOPICLINK_DATA``, else ``../shared/datasets`` beside the checkout).

It ends with one line per measure: the wheel's and the sdist's size, the build, install,
demo, quick start and fetch times; then one line per Python warning that the demo or the
quick start printed (a failure with ``--strict-warnings``).
"""

from __future__ import annotations

import argparse
import email.parser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import venv
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: files the wheel must hold (paths inside the wheel)
WHEEL_REQUIRED = (
    "topiclink/__init__.py",
    "topiclink/py.typed",
    "topiclink/datasets/bundled/cora_rlda.npz",
    "topiclink/datasets/bundled/cora_rlda.README.md",
    "topiclink/report/static/report.css",
    "topiclink/report/static/report.js",
)
#: licence files, under ``<name>.dist-info/licenses/``
LICENCE_FILES = ("LICENSE", "LICENSES/cora-rlda.txt")
#: the only ``.npz`` files a wheel may hold
WHEEL_NPZ_ALLOWED = re.compile(r"^topiclink/datasets/bundled/[^/]+\.npz$")
#: path parts that never belong in the wheel
WHEEL_FORBIDDEN_PARTS = ("tests", "benchmarks", "reproductions", "results", "__pycache__")

#: files the sdist must hold (relative to its top folder)
SDIST_REQUIRED = (
    "LICENSE", "LICENSES/cora-rlda.txt", "README.md", "CHANGELOG.md", "pyproject.toml",
    "MANIFEST.in", "mkdocs.yml", "docs/index.md", "src/topiclink/py.typed",
    "src/topiclink/datasets/bundled/cora_rlda.npz", "tests/__init__.py",
    "tests/conftest.py", "tests/naive.py", "tests/golden/fixed_seed_outputs.npz",
    "tests/fixtures/v0.1.0/expected.npz", "tests/fixtures/v0.1.0/lda.npz",
    "tests/test_io.py", "tests/test_model_files_v010.py",
    # the README's test command installs ./reproductions too
    "reproductions/pyproject.toml", "reproductions/README.md", "reproductions/tests/conftest.py",
)
SDIST_FORBIDDEN_PREFIXES = (".ci/", ".venv", "build/", "dist/", "reproductions/build/")
#: what the sdist may hold under benchmarks/results: text (the docs are built from it)
SDIST_RESULTS_ALLOWED = re.compile(r"^benchmarks/results/.+\.(json|jsonl|csv|md|txt)$")

#: wall-clock limits (s) of the steps run in the fresh environment
TIMEOUTS = {"build": 600, "install": 1200, "demo": 900, "quickstart": 900, "fetch": 300}


#: the Python warnings that the demo and the quick start printed (a user reads them)
WARNINGS: list[str] = []


class CheckFailed(RuntimeError):
    """A step failed; the message says which and why (one line)."""


# ---------------------------------------------------------------------- helpers
def _run(cmd: Sequence[str | os.PathLike[str]], *, step: str, cwd: Path,
         env: dict[str, str] | None = None, log: Path | None = None, echo: bool = False,
         warnings: list[str] | None = None) -> float:
    """Run ``cmd``; return its seconds, raise on failure.

    Without ``log`` its output is passed through.  With ``log`` it is written there, then
    printed whole if ``echo``, else its last lines only if it fails; ``warnings`` collects
    its lines that print a Python warning (``...Warning: ...``)."""
    print(f"check_wheel: [{step}] {' '.join(map(str, cmd))}  (in {cwd})", flush=True)
    t0 = time.perf_counter()
    sink = open(log, "wb") if log is not None else None   # closed below
    try:
        proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, check=False,
                              stdin=subprocess.DEVNULL, stdout=sink,
                              stderr=subprocess.STDOUT if sink else None,
                              timeout=TIMEOUTS[step])
    except subprocess.TimeoutExpired:
        proc = None
    finally:
        if sink is not None:
            sink.close()
    seconds = time.perf_counter() - t0
    failed = proc is None or proc.returncode != 0
    if log is not None:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        if echo or failed:
            print("\n".join(lines if echo else lines[-40:]),
                  file=sys.stderr if failed else sys.stdout, flush=True)
        if warnings is not None:
            warnings += [f"{step}: {line.strip()}" for line in lines
                         if re.search(r"\b[A-Z]\w*Warning: ", line)]
    if failed:
        why = (f"still running after {TIMEOUTS[step]} s, stopped" if proc is None
               else f"exit code {proc.returncode} after {seconds:.0f} s")
        raise CheckFailed(f"{step}: {why} ({' '.join(map(str, cmd))})")
    return seconds


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB ({n:,} bytes)"


def quick_start_code(readme: Path) -> str:
    """The first ```` ```python ```` block under the heading ``## Quick start``."""
    text = readme.read_text(encoding="utf-8")
    heading = re.search(r"^## Quick start[ \t]*$", text, flags=re.MULTILINE)
    if heading is None:
        raise CheckFailed(f"{readme}: no '## Quick start' heading")
    section = text[heading.end():]
    following = re.search(r"^## ", section, flags=re.MULTILINE)
    if following is not None:
        section = section[:following.start()]
    block = re.search(r"^```python[ \t]*\n(.*?)^```[ \t]*$", section,
                      flags=re.MULTILINE | re.DOTALL)
    if block is None:
        raise CheckFailed(f"{readme}: no ```python block under '## Quick start'")
    return block.group(1)


def readme_links(readme: Path) -> list[str]:
    """The README's relative link targets (files of the repository), without anchors."""
    targets = re.findall(r"\]\(([^)\s]+)\)", readme.read_text(encoding="utf-8"))
    return sorted({t.split("#", 1)[0] for t in targets
                   if t and not re.match(r"^[a-z][a-z0-9+.-]*:|^#", t)} - {""})


# ---------------------------------------------------------------------- contents
def wheel_problems(names: Iterable[str], metadata: str) -> list[str]:
    """What is missing from, or does not belong in, a wheel with these member names."""
    names = sorted(names)
    problems = [f"wheel: missing {n}" for n in WHEEL_REQUIRED if n not in names]
    info = sorted({n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(
        ".dist-info")})
    if len(info) != 1:
        return [*problems, f"wheel: expected one .dist-info folder, found {info}"]
    for lic in LICENCE_FILES:
        if f"{info[0]}/licenses/{lic}" not in names:
            problems.append(f"wheel: missing licence file {info[0]}/licenses/{lic}")
    for name in names:
        top = name.split("/", 1)[0]
        parts = name.split("/")
        if top not in ("topiclink", info[0]):
            problems.append(f"wheel: {name} is outside the package")
        elif any(p in WHEEL_FORBIDDEN_PARTS for p in parts[:-1]) or name.endswith(".pyc"):
            problems.append(f"wheel: {name} does not belong in the wheel")
        elif name.endswith(".npz") and not WHEEL_NPZ_ALLOWED.match(name):
            problems.append(f"wheel: {name} is a .npz file outside the bundled data")
    headers = email.parser.Parser().parsestr(metadata, headersonly=True)
    if not headers.get("License-Expression"):
        problems.append("wheel: METADATA has no License-Expression (PEP 639)")
    files = set(headers.get_all("License-File") or [])
    problems += [f"wheel: METADATA does not name License-File {lic}"
                 for lic in LICENCE_FILES if lic not in files]
    return problems


def sdist_problems(names: Iterable[str], readme_targets: Iterable[str]) -> list[str]:
    """What is missing from, or does not belong in, an sdist (names without the top
    folder)."""
    names = set(names)
    problems = [f"sdist: missing {n}" for n in SDIST_REQUIRED if n not in names]
    problems += [f"sdist: missing {t} (the README links to it)" for t in readme_targets
                 if t.rstrip("/") not in names
                 and not any(n.startswith(t.rstrip("/") + "/") for n in names)]
    problems += [f"sdist: {n} does not belong in the sdist" for n in sorted(names)
                 if n.startswith(SDIST_FORBIDDEN_PREFIXES) or "/__pycache__/" in f"/{n}"
                 or n.endswith(".pyc") or (n.startswith("benchmarks/results/")
                                           and not SDIST_RESULTS_ALLOWED.match(n))]
    return problems


def check_contents(wheel: Path, sdist: Path) -> None:
    """Raise :class:`CheckFailed` listing every content problem of the two files."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        metadata = zf.read(meta).decode("utf-8") if meta else ""
    problems = wheel_problems(names, metadata)
    with tarfile.open(sdist) as tf:
        members = [m.name.split("/", 1)[1] for m in tf.getmembers()
                   if m.isfile() and "/" in m.name]
    problems += sdist_problems(members, readme_links(ROOT / "README.md"))
    print(f"check_wheel: [contents] wheel {len(names)} files, sdist {len(members)} files")
    if problems:
        for p in problems:
            print(f"check_wheel: {p}", file=sys.stderr)
        raise CheckFailed(f"contents: {len(problems)} problem(s), listed above")


# ---------------------------------------------------------------------- the fresh venv
def user_env(home: Path) -> dict[str, str]:
    """A new user's environment: ``HOME`` a temporary folder, no topiclink variables, no
    ``PYTHONPATH`` (nothing of the checkout), pip's cache where it was."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TOPICLINK_") and k not in ("PYTHONPATH", "VIRTUAL_ENV",
                                                           "PYTHONHOME", "XDG_DATA_HOME",
                                                           "XDG_CACHE_HOME")}
    cache = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
    env.update(HOME=str(home), PIP_CACHE_DIR=cache, MPLBACKEND="Agg")
    return env


def _serve(python: Path, datasets: Path, tmp: Path, env: dict[str, str]
           ) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``scripts/serve_datasets.py`` on the loopback; return it and its base URL."""
    port_file = tmp / "port"
    port_file.unlink(missing_ok=True)        # a port file of an earlier run is stale
    server = subprocess.Popen([str(python), str(ROOT / "scripts" / "serve_datasets.py"),
                               str(datasets), "--port-file", str(port_file)],
                              cwd=tmp, env=env, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise CheckFailed(f"fetch: serve_datasets.py exited with {server.returncode}")
        text = port_file.read_text().strip() if port_file.exists() else ""
        if text.isdigit():
            return server, f"http://127.0.0.1:{int(text)}"
        time.sleep(0.2)
    server.terminate()
    raise CheckFailed("fetch: serve_datasets.py wrote no port file within 30 s")


def fresh_install(wheel: Path, tmp: Path, datasets: Path | None,
                  times: dict[str, str | float]) -> None:
    """Install ``wheel`` into a new venv under ``tmp`` and use it; each step's seconds
    go into ``times`` as it ends."""
    home, work = tmp / "home", tmp / "work"
    home.mkdir()
    work.mkdir()
    env = user_env(home)
    t0 = time.perf_counter()
    venv.EnvBuilder(with_pip=True, system_site_packages=False, clear=True).create(tmp / "venv")
    python = tmp / "venv" / "bin" / "python"
    times["venv"] = time.perf_counter() - t0
    times["install"] = _run([python, "-m", "pip", "install", "--quiet", wheel],
                            step="install", cwd=work, env=env)
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    probe = subprocess.run([str(python), "-c", "import topiclink, sys; "
                            "sys.stdout.write(topiclink.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0 or not probe.stdout.startswith(str(tmp / "venv")):
        raise CheckFailed(f"install: topiclink imports from {probe.stdout or probe.stderr!r}, "
                          f"not from the fresh environment {tmp / 'venv'}")
    failures: list[str] = []
    for step, use in (("demo", _demo), ("quickstart", _quick_start), ("fetch", _fetch)):
        try:   # the three uses are independent: run each, report every failure
            seconds = use(python, work, home, env, datasets)
        except CheckFailed as exc:
            print(f"check_wheel: [{step}] FAILED: {exc}", file=sys.stderr, flush=True)
            failures.append(str(exc))
        else:
            if seconds is not None:
                times[step] = seconds
    if failures:
        raise CheckFailed("; ".join(failures))


def _demo(python: Path, work: Path, home: Path, env: dict[str, str],
          datasets: Path | None) -> float:
    """``topiclink demo`` in the empty folder."""
    return _run([python.parent / "topiclink", "demo"], step="demo", cwd=work, env=env,
                log=work.parent / "demo.log", echo=True, warnings=WARNINGS)


def _quick_start(python: Path, work: Path, home: Path, env: dict[str, str],
                 datasets: Path | None) -> float:
    """The README's quick start, read from README.md now, as a script."""
    script = work / "quickstart.py"
    script.write_text(quick_start_code(ROOT / "README.md"), encoding="utf-8")
    return _run([python, script.name], step="quickstart", cwd=work, env=env,
                log=work.parent / "quickstart.log", echo=True, warnings=WARNINGS)


def _fetch(python: Path, work: Path, home: Path, env: dict[str, str],
           datasets: Path | None) -> float | None:
    """``topiclink datasets fetch nations`` from the loopback mirror into the user's data
    home (None: skipped, no ``scripts/serve_datasets.py``)."""
    if not (ROOT / "scripts" / "serve_datasets.py").exists():
        print("check_wheel: [fetch] skipped: scripts/serve_datasets.py does not exist")
        return None
    if datasets is None or not datasets.is_dir():
        raise CheckFailed(f"fetch: no datasets folder to serve ({datasets}); give --datasets")
    server, url = _serve(python, datasets, work.parent, env)
    try:
        seconds = _run([python.parent / "topiclink", "datasets", "fetch", "nations"],
                       step="fetch", cwd=work, env={**env, "TOPICLINK_DATA_MIRROR": url})
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    # TOPICLINK_DATA unset: the files go to the user's data home, under HOME
    fetched = [p for p in home.rglob("*")
               if p.is_file() and "nations" in str(p.relative_to(home))]
    if not fetched:
        raise CheckFailed(f"fetch: exit code 0 but no nations file under HOME ({home})")
    return seconds


# ---------------------------------------------------------------------- main
def build(dist: Path) -> tuple[Path, Path, float]:
    """Build the sdist and, from it, the wheel into ``dist``; return both and the time."""
    seconds = _run([sys.executable, "-m", "build", "--outdir", dist, ROOT], step="build",
                   cwd=ROOT, log=dist / "build.log")
    wheels, sdists = sorted(dist.glob("topiclink-*.whl")), sorted(dist.glob("topiclink-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        raise CheckFailed(f"build: expected one wheel and one sdist in {dist}, found "
                          f"{[p.name for p in [*wheels, *sdists]]}")
    return wheels[0], sdists[0], seconds


def _default_datasets() -> Path | None:
    given = os.environ.get("TOPICLINK_DATA")
    if given:
        return Path(given)
    beside = ROOT.parent / "shared" / "datasets"
    return beside if beside.is_dir() else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--dist", type=Path, default=None,
                        help="folder for the sdist and the wheel (default: temporary)")
    parser.add_argument("--datasets", type=Path, default=_default_datasets(),
                        help="folder served for the fetch (default: $TOPICLINK_DATA, else "
                             "../shared/datasets beside the checkout)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary folders (printed) for a look")
    parser.add_argument("--strict-warnings", action="store_true",
                        help="fail if the demo or the quick start prints a Python warning "
                             "(default: list them)")
    args = parser.parse_args(argv)
    if args.dist is not None and any(args.dist.glob("topiclink-*")):
        print(f"check_wheel: --dist {args.dist}: holds topiclink-* files already; give an "
              "empty folder", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="topiclink-check-wheel-"))
    dist = args.dist.resolve() if args.dist else tmp / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    measures: dict[str, str | float] = {}
    failure = None
    try:
        wheel, sdist, measures["build"] = build(dist)
        measures.update(wheel=_mib(wheel.stat().st_size), sdist=_mib(sdist.stat().st_size))
        check_contents(wheel, sdist)
        (tmp / "user").mkdir()
        fresh_install(wheel, tmp / "user", args.datasets, measures)
    except CheckFailed as exc:
        failure = exc
    finally:
        if args.keep:
            print(f"check_wheel: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    for key, value in measures.items():
        text = f"{value:.1f} s" if isinstance(value, float) else value
        print(f"check_wheel: {key}: {text}")
    for line in WARNINGS:
        print(f"check_wheel: a user sees a warning: {line}")
    if failure is None and WARNINGS and args.strict_warnings:
        failure = CheckFailed(f"{len(WARNINGS)} warning(s) printed (--strict-warnings)")
    if failure is not None:
        print(f"check_wheel: FAILED: {failure}", file=sys.stderr)
        return 1
    print("check_wheel: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
