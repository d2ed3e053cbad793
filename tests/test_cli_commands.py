"""The generic CLI commands: ``fit model NAME``, ``models``, ``evaluate``, ``--data DIR``
without ``--dataset``, and the module layout of the CLI."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app

runner = CliRunner()


def test_every_command_group_is_its_own_module():
    import topiclink.cli as cli

    for module in ("common", "fit", "experiment", "suggest", "info", "datasets", "evaluate",
                   "demo", "report"):
        __import__(f"{cli.__name__}.{module}")
    result = runner.invoke(app, ["--help"])
    for cmd in ("fit", "experiment", "evaluate", "suggest", "info", "models", "datasets",
                "demo", "report"):
        assert cmd in result.output
    result = runner.invoke(app, ["fit", "--help"])
    assert all(c in result.output for c in ("lda", "rtm", "lmv", "slda", "model"))


def test_models_lists_estimators_paper_names_and_fit_inputs():
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines()[1:] if line.strip()}
    assert "Gibbs-gRTM" in lines["RelationalTopicModel"]
    assert "X, links" in lines["RelationalTopicModel"]
    assert "X, y" in lines["SupervisedTopicModel"] and "classifier" in \
        lines["SupervisedTopicModel"]
    assert "LDA" in lines


def test_fit_model_by_paper_name_with_params_then_evaluate(tmp_path):
    """Gibbs-gRTM on 90% of the bundled Cora (--holdout), then `evaluate` scores the
    held-out 10% against the training documents (matched by document id)."""
    out = tmp_path / "g.npz"
    result = runner.invoke(app, [
        "fit", "model", "Gibbs-gRTM", "--dataset", "cora", "-k", "4", "--max-iter", "8",
        "--param", "c=2", "--param", "negative_ratio=0.005", "--param", "n_jobs=1",
        "--holdout", "0.1", "--seed", "3", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "training pairs" in result.output and "model written to" in result.output
    assert "link_auc" in result.output and "held-out" in result.output
    from topiclink import load

    model = load(out)
    assert (model.c, model.negative_ratio, model.n_topics, model.weights) == (2, 0.005, 4,
                                                                               "full")
    assert len(model.train_doc_ids_) == 2410 - 241
    csv = tmp_path / "r.csv"
    result = runner.invoke(app, ["evaluate", str(out), "--dataset", "cora", "--out", str(csv)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(csv).set_index("metric")
    assert set(table.index) >= {"perplexity", "link_auc", "link_pr_auc", "link_rank",
                                "random_link_rank"}
    assert (table["split"] == "held-out").all() and (table["estimator"] ==
                                                     "RelationalTopicModel").all()
    assert table.loc["perplexity", "documents"] == 241
    assert table.loc["link_rank", "targets"] == 2410 - 241
    assert 0.5 < table.loc["link_auc", "value"] <= 1.0
    assert table.loc["link_rank", "value"] < table.loc["random_link_rank", "value"]
    assert table.loc["perplexity", "value"] > 1


def test_fit_model_errors_are_one_line(tmp_path):
    out = str(tmp_path / "m.npz")
    for args, message in [
            (["fit", "model", "NoSuchModel"], "unknown model 'NoSuchModel'"),
            (["fit", "model", "LDA", "--param", "bogus=1"], "LDA has no parameter 'bogus'"),
            (["fit", "model", "LDA", "--param", "oops"], "--param takes key=value"),
            (["fit", "model", "Gibbs-gRTM", "-k", "1"], "n_topics must be an integer >= 2")]:
        result = runner.invoke(app, [*args, "--out", out, "--quiet"])
        assert result.exit_code == 1, result.output
        assert message in result.output and "Traceback" not in result.output, result.output


def test_fit_model_of_a_new_estimator_class_needs_no_registry(tmp_path):
    """The throwaway GSDMM of tests/examples: importing its module is all it takes."""
    import tests.examples.dmm.estimator  # noqa: F401

    out = tmp_path / "dmm.npz"
    result = runner.invoke(app, ["fit", "model", "DirichletMultinomialMixture", "-k", "3",
                                 "-n", "3", "--dataset", "cora", "--out", str(out),
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["fit", "model", "GSDMM", "-k", "3", "-n", "3",
                                 "--param", "doc_topic_prior=0.5", "--dataset", "cora",
                                 "--out", str(out), "--quiet", "--force"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["evaluate", str(out), "--dataset", "cora"])
    assert result.exit_code == 0, result.output
    assert "perplexity" in result.output
    assert "DirichletMultinomialMixture" in runner.invoke(app, ["models"]).output


def test_fit_and_evaluate_lda_on_user_files(tmp_path):
    texts = tmp_path / "docs.txt"
    texts.write_text("\n".join(["graph neural network learning", "topic model inference",
                                "network graph links citation", "sampling gibbs topic model",
                                "learning neural model network"] * 4))
    out = tmp_path / "lda.npz"
    result = runner.invoke(app, ["fit", "model", "LDA", "--input", str(texts), "-k", "2",
                                 "-n", "5", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["evaluate", str(out), "--input", str(texts)])
    assert result.exit_code == 0, result.output
    assert "perplexity" in result.output and "all" in result.output
    bad = runner.invoke(app, ["evaluate", str(out)])
    assert bad.exit_code == 1 and "--dataset NAME, --data DIR or --input" in bad.output
    bad = runner.invoke(app, ["evaluate", str(tmp_path / "none.npz"), "--dataset", "cora"])
    assert bad.exit_code == 1 and "not found" in bad.output


def test_evaluate_a_classifier_reports_accuracy(tmp_path):
    from topiclink.datasets import make_slda_data
    from topiclink.datasets.base import Dataset
    from topiclink.estimators.base import make_paper_model
    from topiclink.experiments.evaluation import evaluate_model

    (corpus, y), _ = make_slda_data(n_docs=80, n_words=60, n_topics=3, random_state=0)
    model = make_paper_model("gSLDA", n_topics=3, max_iter=5, random_state=0)
    model.fit(corpus.subset(range(60)), y[:60])
    test = Dataset(name="test", corpus=corpus.subset(range(60, 80)), labels=y[60:])
    ds = Dataset(name="planted", corpus=corpus.subset(range(60)), labels=y[:60], test=test)
    table = evaluate_model(model, ds).set_index("metric")
    assert list(table.index) == ["perplexity", "accuracy"]
    assert (table["split"] == "test").all() and (table["documents"] == 20).all()
    assert table.loc["accuracy", "value"] == pytest.approx(model.score(test.corpus, y[60:]))


def test_data_folder_without_dataset_is_detected(tmp_path):
    from topiclink.datasets import load_dataset

    folder = tmp_path / "uci"
    folder.mkdir()
    (folder / "docword.toy.txt").write_text("4\n4\n8\n1 1 2\n1 3 1\n2 2 1\n2 4 3\n"
                                            "3 1 1\n3 2 2\n4 3 2\n4 4 1\n")
    (folder / "vocab.toy.txt").write_text("apple\nbanana\ncherry\ndate\n")
    try:
        load_dataset(None, data_dir=folder)
    except (TypeError, FileNotFoundError) as exc:  # pragma: no cover - older datasets API
        pytest.skip(f"load_dataset(None, data_dir=...) is not available: {exc}")
    out = tmp_path / "m.npz"
    result = runner.invoke(app, ["fit", "model", "LDA", "--data", str(folder), "-k", "2",
                                 "-n", "3", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["fit", "lda", "--data", str(folder), "-k", "2", "-n", "3",
                                 "--out", str(out), "--quiet", "--force"])
    assert result.exit_code == 0, result.output
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["fit", "lda", "--data", str(empty), "--out", str(out),
                                 "--force"])
    assert result.exit_code == 1 and "no known data format" in result.output


def test_fit_lmv_stochastic_reads_directed_citations_then_suggest(tmp_path):
    """`fit lmv` loads the citations directed (the model refuses undirected links), fits
    LMVS, reports held-out link metrics and writes a file `suggest` ranks documents with."""
    out = tmp_path / "v.npz"
    result = runner.invoke(app, [
        "fit", "lmv", "--dataset", "cora", "-k", "4", "--inference", "stochastic",
        "-n", "3", "--batch-size", "400", "--n-jobs", "1", "--holdout", "0.1",
        "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "most visible" in result.output and "model written to" in result.output
    assert "link_rank" in result.output
    from topiclink import load

    model = load(out)
    assert (model.inference, model.n_topics, model.visibility) == ("stochastic", 4, True)
    assert model.visibility_.shape == (2410 - 241,)
    result = runner.invoke(app, ["suggest", str(out), "--text",
                                 "genetic algorithms crossover mutation population"])
    assert result.exit_code == 0, result.output
    assert "score" in result.output and len(result.output.splitlines()) >= 6
    result = runner.invoke(app, ["fit", "lmv", "--dataset", "cora", "--inference", "gibbs"])
    assert result.exit_code != 0 and "inference" in result.output
    assert len(result.output.strip().splitlines()) == 1
