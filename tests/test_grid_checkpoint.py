"""A grid run with a checkpoint folder (issue 22): a killed run, run again, skips the
finished cells, resumes the interrupted fit and gives the table an uninterrupted run gives.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from topiclink.experiments.grid_checkpoint import GridCheckpoint, grid_checkpoint
from topiclink.experiments.runner import grid, run_grid

ROOT = Path(__file__).resolve().parents[1]


class Killed(Exception):
    pass


def _cells():
    return grid({"K": [2, 3, 4], "fold": [0, 1]})


def test_finished_cells_are_not_run_again(tmp_path):
    calls: list[dict] = []

    def run_cell(cell, context):
        calls.append(dict(cell.coords))
        if context == "die" and len(calls) == 4:
            raise Killed
        return {**cell.coords, "value": cell.seed % 1000, "scale": 0.5 * cell.coords["K"]}

    whole = run_grid(_cells(), run_cell, None, base_seed=3)
    calls.clear()
    folder = tmp_path / "ckpt"
    with pytest.raises(Killed), grid_checkpoint(folder, {"protocol": "toy"}, every=1):
        run_grid(_cells(), run_cell, "die", base_seed=3)
    assert len((folder / "cells.jsonl").read_text().splitlines()) == 3
    calls.clear()
    with grid_checkpoint(folder, {"protocol": "toy"}, every=1):
        again = run_grid(_cells(), run_cell, None, base_seed=3)
    assert calls == [{"K": 3, "fold": 1}, {"K": 4, "fold": 0}, {"K": 4, "fold": 1}]
    pd.testing.assert_frame_equal(whole, again)
    calls.clear()
    with grid_checkpoint(folder, {"protocol": "toy"}):
        run_grid(_cells(), run_cell, None, base_seed=3)
    assert calls == []


def test_a_folder_of_another_run_or_a_torn_line(tmp_path):
    folder = tmp_path / "ckpt"
    GridCheckpoint(folder, {"iterations": 5}).record({"K": 2}, {"K": 2, "x": 1.5})
    with pytest.raises(ValueError, match="iterations=5, this run has 6.*delete it"):
        GridCheckpoint(folder, {"iterations": 6})
    with open(folder / "cells.jsonl", "a") as fh:      # a kill in the middle of a write
        fh.write('{"coords": {"K": 3}, "ro')
    ck = GridCheckpoint(folder, {"iterations": 5})
    assert ck.row_of({"K": 2}) == (True, {"K": 2, "x": 1.5})
    assert ck.row_of({"K": 3}) == (False, None)
    (folder / "cells.jsonl").write_text('junk\n{"coords": {"K": 2}, "row": null}\n')
    with pytest.raises(ValueError, match="cells.jsonl:1: not a finished-cell record"):
        GridCheckpoint(folder, {"iterations": 5})
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        GridCheckpoint(tmp_path / "file", {})


def test_fits_of_a_cell_checkpoint_in_its_folder(tmp_path):
    import topiclink
    from topiclink.datasets import make_lda_data

    corpus, _ = make_lda_data(n_docs=20, n_words=30, n_topics=2, random_state=0)

    def run_cell(cell, context):
        model = topiclink.LDA(n_topics=cell.coords["K"], max_iter=3, random_state=cell.seed)
        model.fit(corpus)
        return {"K": cell.coords["K"], "ll": float(model.trace_["log_likelihood"][-1])}

    folder = tmp_path / "ckpt"
    with grid_checkpoint(folder, {}, every=1) as ck:
        run_grid(grid({"K": [2, 3]}), run_cell, None)
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.npz"))
        assert files == sorted(f"{ck.cell_folder({'K': k}).name}/LDA-0.npz" for k in (2, 3))


def _experiment(out: Path, ckpt: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.Popen(
        [sys.executable, "-m", "topiclink.cli.app", "experiment", "grtm", "--dataset", "cora",
         "--folds", "5", "--only-folds", "0,1", "--topics", "3", "--models",
         "Gibbs-gRTM,Var-RTM", "--c", "2", "--iterations", "6", "--out", str(out),
         "--checkpoint-dir", str(ckpt), "--checkpoint-every", "1", "--verbose"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_experiment_killed_then_run_again_resumes_at_the_first_unfinished_cell(tmp_path):
    """`topiclink experiment grtm --checkpoint-dir` killed with SIGKILL after its first
    row, run again with the same command: the finished cell is not refitted, the table
    equals an uninterrupted run's."""
    victim = _experiment(tmp_path / "out", tmp_path / "ckpt")
    for line in victim.stdout:
        if "fold 0" in line:                 # the first row is printed: kill
            victim.send_signal(signal.SIGKILL)
            break
    victim.wait(timeout=120)
    assert victim.returncode == -signal.SIGKILL
    finished = [json.loads(x) for x in
                (tmp_path / "ckpt" / "cells.jsonl").read_text().splitlines()]
    assert 1 <= len(finished) < 4
    again = _experiment(tmp_path / "out", tmp_path / "ckpt")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err[-3000:]
    assert "resuming from" in out
    assert f"{len(finished)} of 4 cells finished earlier, {4 - len(finished)} to run" in err
    reference = _experiment(tmp_path / "ref", tmp_path / "ref-ckpt")
    _, ref_err = reference.communicate(timeout=600)
    assert reference.returncode == 0, ref_err[-3000:]
    same = ["model", "K", "c", "fold", "link_rank", "word_rank", "auc", "n_pairs"]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "ref" / "grtm_results.csv")[same],
                                  pd.read_csv(tmp_path / "out" / "grtm_results.csv")[same])
    assert len((tmp_path / "ckpt" / "cells.jsonl").read_text().splitlines()) == 4
