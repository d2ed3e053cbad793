"""The command line through typer's CliRunner."""

from __future__ import annotations

import importlib.util

import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.execution import Shards

runner = CliRunner()


def test_version_and_help():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and "topiclink" in result.output
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for cmd in ("datasets", "fit", "info", "demo"):
        assert cmd in result.output


def test_fit_lda_then_info(tmp_path):
    out = tmp_path / "m.npz"
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "5", "-n", "15",
                                 "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert out.exists() and "model written to" in result.output
    result = runner.invoke(app, ["info", str(out), "--words", "4"])
    assert result.exit_code == 0, result.output
    assert "class: LDA(" in result.output and "topic  4" in result.output


def test_fit_lda_on_two_threads_and_with_the_mh_sampler(tmp_path):
    """--jobs 2: the partitioned sweep on 2 shards; --sampler mh: the MH kernel; bad
    values are one-line errors."""
    from topiclink import load

    out = tmp_path / "p.npz"
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "5", "-n", "5",
                                 "--jobs", "2", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    model = load(out)
    assert model.scheme == Shards("partition", 2) and model.executor == 2
    out = tmp_path / "mh.npz"
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "5", "-n", "5",
                                 "--sampler", "mh", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert load(out).sampler == "mh"
    for bad, message in ((["--jobs", "0"], "--jobs must be -1 or >= 1"),
                         (["--sampler", "fast"], "sampler must be")):
        result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", *bad,
                                     "--out", str(tmp_path / "x.npz")])
        assert result.exit_code == 1 and message in result.output, result.output
        assert "Traceback" not in result.output


def test_fit_unknown_dataset_is_one_line_error(tmp_path):
    result = runner.invoke(app, ["fit", "lda", "--dataset", "no-such-data", "--out",
                                 str(tmp_path / "m.npz")])
    assert result.exit_code == 1
    assert "error:" in result.output and "no-such-data" in result.output
    assert "Traceback" not in result.output


def test_fit_bad_topics_is_one_line_error(tmp_path):
    result = runner.invoke(app, ["fit", "lda", "-k", "1", "--out", str(tmp_path / "m.npz")])
    assert result.exit_code == 1 and "n_topics must be an integer >= 2" in result.output


def test_info_on_missing_or_bad_file(tmp_path):
    result = runner.invoke(app, ["info", str(tmp_path / "nope.npz")])
    assert result.exit_code == 1 and "not found" in result.output
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"garbage")
    result = runner.invoke(app, ["info", str(bad)])
    assert result.exit_code == 1 and "not a readable topiclink model" in result.output


def test_datasets_lists_bundled_cora():
    result = runner.invoke(app, ["datasets"])
    assert result.exit_code == 0, result.output
    assert "cora" in result.output and "2410" in result.output


@pytest.mark.slow
def test_demo_runs_and_beats_random(tmp_path):
    from topiclink.demo import run_demo

    lines: list[str] = []
    figures = run_demo(topics=8, iterations=40, seed=0, out=tmp_path, echo=lines.append)
    assert figures["Gibbs-gRTM_auc"] > figures["random_auc"] + 0.1
    assert figures["Gibbs-gRTM_link_rank"] < figures["random_link_rank"]
    assert (tmp_path / "demo_weights.png").exists()
    assert any("suggested citations" in line for line in lines)
    if importlib.util.find_spec("bokeh") is not None:   # the gRTM's report (issue 26)
        page = (tmp_path / "demo_report.html").read_text(encoding="utf-8")
        assert 'id="view-relational"' in page and "held-out precision@" in page
        assert any("open it in a browser" in line for line in lines)


def test_fit_lda_from_user_files(tmp_path):
    texts = tmp_path / "docs.txt"
    texts.write_text("\n".join(
        ["graph neural network learning", "topic model inference sampling",
         "network graph links citation", "sampling gibbs topic model", "",
         "learning neural model network"] * 3))
    out = tmp_path / "t.npz"
    result = runner.invoke(app, ["fit", "lda", "--input", str(texts), "-k", "2", "-n", "5",
                                 "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    docword = tmp_path / "docword.tiny.txt"
    docword.write_text("3\n4\n5\n1 1 2\n1 2 1\n2 3 4\n3 4 1\n3 1 1\n")
    vocab = tmp_path / "vocab.tiny.txt"
    vocab.write_text("alpha\nbeta\ngamma\ndelta\n")
    result = runner.invoke(app, ["fit", "lda", "--input", str(docword), "--vocab", str(vocab),
                                 "-k", "2", "-n", "5", "--out", str(out), "--quiet",
                                 "--force"])
    assert result.exit_code == 0, result.output
    assert "alpha" in result.output or "gamma" in result.output
    bad = tmp_path / "docword.bad.txt"
    bad.write_text("3\n4\n5\n1 1 2\n1 x 1\n")
    result = runner.invoke(app, ["fit", "lda", "--input", str(bad), "--out", str(out),
                                 "--force"])
    assert result.exit_code == 1 and "docword.bad.txt:5" in result.output


def test_experiment_grtm_small(tmp_path):
    result = runner.invoke(app, ["experiment", "grtm", "--dataset", "cora", "--folds", "5",
                                 "--only-folds", "0", "--topics", "3", "--models",
                                 "Gibbs-gRTM,Gibbs-MMRTM,Var-RTM", "--c", "2",
                                 "--iterations", "5", "--out", str(tmp_path), "--quiet"])
    assert result.exit_code == 0, result.output
    import pandas as pd

    table = pd.read_csv(tmp_path / "grtm_results.csv")
    assert set(table["model"]) == {"Gibbs-gRTM", "Gibbs-MMRTM", "Var-RTM"}
    for col in ("link_rank", "word_rank", "auc", "z_seconds", "lambda_seconds",
                "weights_seconds", "test_seconds"):
        assert table[col].notna().all()
    assert (tmp_path / "grtm_link_rank.png").exists()
    # the same rows with configurations fitted in two processes
    par = tmp_path / "par"
    result = runner.invoke(app, ["experiment", "grtm", "--dataset", "cora", "--folds", "5",
                                 "--only-folds", "0", "--topics", "3", "--models",
                                 "Gibbs-gRTM,Gibbs-MMRTM,Var-RTM", "--c", "2",
                                 "--iterations", "5", "--workers", "2", "--out", str(par),
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    same = ["model", "K", "c", "fold", "link_rank", "word_rank", "auc", "n_pairs"]
    pd.testing.assert_frame_equal(table[same], pd.read_csv(par / "grtm_results.csv")[same])
    bad = runner.invoke(app, ["experiment", "grtm", "--models", "Nope", "--out",
                              str(tmp_path)])
    assert bad.exit_code == 1 and "unknown model 'Nope'" in bad.output
    bad = runner.invoke(app, ["experiment", "grtm", "--workers", "0", "--dataset", "cora",
                              "--out", str(tmp_path)])
    assert bad.exit_code == 1 and "workers must be >= 1" in bad.output


def test_experiment_slda_on_poliblog(tmp_path, shared_datasets):
    result = runner.invoke(app, ["experiment", "slda", "--dataset", "poliblog-rlda",
                                 "--task", "binary", "--topics", "3", "--models",
                                 "gSLDA,gMedLDA,LDA+SVM,vSLDA", "--c", "1,4", "--iterations",
                                 "5", "--out", str(tmp_path), "--quiet"])
    assert result.exit_code == 0, result.output
    import pandas as pd

    table = pd.read_csv(tmp_path / "slda_results.csv")
    assert set(table["model"]) == {"gSLDA", "gMedLDA", "LDA+SVM", "vSLDA"}
    assert table["accuracy"].between(0, 1).all()
    assert (table["n_iter"].between(1, 5)).all() and (table["seconds_per_iteration"] > 0).all()
    assert set(table.loc[table["model"] == "vSLDA", "c"]) == {1.0, 4.0}
    assert (tmp_path / "slda_accuracy_vs_c.png").exists()


def test_fit_rtm_then_suggest_links(tmp_path):
    """Bundled Cora: fit a small Gibbs-gRTM, then suggest links for a raw-text query; the
    table has the requested number of rows with titles; bad queries are one-line errors."""
    out = tmp_path / "rtm.npz"
    result = runner.invoke(app, ["fit", "rtm", "--dataset", "cora", "-k", "4", "-n", "5",
                                 "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "training pairs" in result.output and out.exists()
    result = runner.invoke(app, ["suggest", str(out), "--text",
                                 "reinforcement learning with neural networks", "--top", "3"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].split()[:3] == ["query", "rank", "target"] and len(lines) == 4
    for args, message in [(["--text", "zzzz qqqq"], "no word of the model"),
                          ([], "--text or --file"),
                          (["--file", str(tmp_path / "none.txt")], "not found")]:
        bad = runner.invoke(app, ["suggest", str(out), *args])
        assert bad.exit_code == 1 and message in bad.output, bad.output


def test_fit_slda_on_poliblog_and_suggest_refuses_it(tmp_path, shared_datasets):
    out = tmp_path / "slda.npz"
    result = runner.invoke(app, ["fit", "slda", "--dataset", "poliblog-rlda", "-k", "3",
                                 "-n", "5", "--c", "4", "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "training accuracy" in result.output and out.exists()
    bad = runner.invoke(app, ["suggest", str(out), "--text", "tax"])
    assert bad.exit_code == 1 and "has no links" in bad.output
    bad = runner.invoke(app, ["fit", "slda", "--dataset", "cora-linqs", "--loss", "square",
                              "-n", "2", "--quiet", "--out", str(out)])
    assert bad.exit_code == 1


def test_fit_on_a_dask_scheduler(tmp_path, shared_datasets):
    """--scheduler ADDRESS --shards S: LDA, Gibbs-gRTM and gSLDA trained on a Dask
    cluster (its address, as a user passes it), the parameters kept in the model file; a
    model without Dask support and a bad shard count are one-line errors."""
    distributed = pytest.importorskip("distributed")
    from topiclink import load

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        for command, extra in ((["fit", "lda"], ["-k", "4"]),
                               (["fit", "rtm"], ["-k", "4"]),
                               (["fit", "slda", "--dataset", "poliblog-rlda"], ["-k", "4"])):
            out = tmp_path / f"{command[1]}.npz"
            data = [] if "--dataset" in command else ["--dataset", "cora"]
            args = [*command, *data, *extra, "-n", "3", "--scheduler", address,
                    "--shards", "3", "--out", str(out), "--quiet"]
            result = runner.invoke(app, args)
            assert result.exit_code == 0, result.output
            model = load(out)
            assert model.scheme == Shards("adlda" if command[1] == "lda" else "shards", 3)
            assert model.executor == address
        result = runner.invoke(app, ["fit", "rtm", "--dataset", "cora", "--model", "Var-RTM",
                                     "-n", "2", "--scheduler", address])
        assert result.exit_code == 1 and "has no parameter 'executor'" in result.output
        result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "--shards", "0",
                                     "--scheduler", address])
        assert result.exit_code == 1 and "--shards must be >= 1" in result.output
        assert "Traceback" not in result.output

