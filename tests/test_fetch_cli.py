"""``topiclink datasets`` (fast listing) and ``topiclink datasets fetch`` against a loopback
server of ``$TOPICLINK_DATA`` (``scripts/serve_datasets.py``, also as a process)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.datasets.home import data_home
from topiclink.datasets.sources import dataset_sources

runner = CliRunner()


@pytest.fixture(scope="module")
def shared(shared_datasets) -> Path:
    """The shared data sets ($TOPICLINK_DATA), the bytes the server serves."""
    if not (shared_datasets / "nations" / "train.txt").is_file():
        pytest.skip("TOPICLINK_DATA holds no nations/train.txt")
    return shared_datasets


@pytest.fixture
def served(shared, tmp_path):
    """``python scripts/serve_datasets.py SHARED --port-file F`` as a process: its URL."""
    port_file = tmp_path / "port"
    proc = subprocess.Popen([sys.executable, "scripts/serve_datasets.py", str(shared),
                             "--port-file", str(port_file)], stdout=subprocess.DEVNULL,
                            cwd=Path(__file__).resolve().parents[1])
    try:
        for _ in range(200):
            if port_file.exists():
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{int(port_file.read_text())}"
    finally:
        proc.terminate()
        proc.wait(10)


def test_cli_home_agrees_with_data_home(monkeypatch, tmp_path):
    from topiclink.cli.datasets import _home

    monkeypatch.delenv("TOPICLINK_DATA", raising=False)
    assert _home(None) == data_home() == Path("~/topiclink_data").expanduser()
    monkeypatch.setenv("TOPICLINK_DATA", str(tmp_path))
    assert _home(None) == data_home() == tmp_path
    assert _home(tmp_path / "x") == data_home(tmp_path / "x")


def test_listing_is_fast_and_imports_no_loader(tmp_path):
    """Under a second of CPU (wall time on a loaded 2-core machine says little): the
    listing imports neither the loaders nor numpy."""
    code = ("import sys; from topiclink.cli.app import main\n"
            "sys.argv = ['topiclink', 'datasets']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('imported', 'topiclink.datasets' in sys.modules, 'numpy' in sys.modules)")
    env = {**os.environ, "TOPICLINK_DATA": str(tmp_path)}
    best = None
    for _ in range(2):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = cpu if best is None else min(best, cpu)
    assert out.splitlines()[-1] == "imported False False", out
    for name in dataset_sources():
        assert f"\n{name} " in out
    assert best < 1.0, f"topiclink datasets took {best:.2f} s of CPU"


def test_listing_shows_size_licence_citation_and_cached(shared, tmp_path):
    result = runner.invoke(app, ["datasets", "--data-home", str(shared)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    row = next(line for line in lines if line.startswith("nations "))
    assert "yes" in row.split() and "KiB" in row
    i = lines.index(row)
    assert "MIT" in lines[i + 1] and "Dettmers" in lines[i + 2]
    assert "cora" in result.output and "2410" in result.output  # the bundled one
    result = runner.invoke(app, ["datasets", "--data-home", str(tmp_path)])
    row = next(line for line in result.output.splitlines() if line.startswith("nations "))
    assert " no " in row


def test_fetch_from_a_served_mirror_then_listed(served, tmp_path):
    home = tmp_path / "home"
    result = runner.invoke(app, ["datasets", "fetch", "nations", "umls", "--data-home",
                                 str(home), "--mirror", served])
    assert result.exit_code == 0, result.output
    assert f"nations: {home / 'nations'}" in result.output
    listing = runner.invoke(app, ["datasets", "--data-home", str(home)]).output
    for name in ("nations", "umls"):
        row = next(line for line in listing.splitlines() if line.startswith(f"{name} "))
        assert " yes " in row


def test_fetch_errors_are_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPICLINK_DATA", str(tmp_path / "home"))
    result = runner.invoke(app, ["datasets", "fetch", "nope"])
    assert result.exit_code == 2 and "unknown data set 'nope'" in result.output
    result = runner.invoke(app, ["datasets", "fetch"])
    assert result.exit_code == 2 and "'all'" in result.output
    result = runner.invoke(app, ["datasets", "--data-home", str(tmp_path / "missing")])
    assert result.exit_code == 1 and "data home not found" in result.output
    assert len(result.output.strip().splitlines()) == 1
