"""``search_k``: choosing K as R's ``stm::searchK`` (table, held-out likelihood, gensim's
NPMI coherence, stm's exclusivity and residual dispersion, n_jobs, checkpoints, CLI)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.stats import rankdata
from typer.testing import CliRunner

from topiclink.analysis import SearchK, exclusivity, residual_dispersion, search_k
from topiclink.analysis.search_k import COLUMNS
from topiclink.cli.app import app
from topiclink.data.corpus import Corpus
from topiclink.families.lda.estimator import LDA
from topiclink.metrics import npmi_coherence

runner = CliRunner()

ITERS = 5


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    """60 documents of 3 planted topics over 90 words."""
    rng = np.random.default_rng(7)
    V, K, D = 90, 3, 60
    phi = np.full((K, V), 0.05 / V)
    for k in range(K):
        phi[k, 30 * k:30 * (k + 1)] += 1.0 / 30
    phi /= phi.sum(axis=1, keepdims=True)
    theta = rng.dirichlet(np.full(K, 0.3), size=D)
    counts = np.vstack([rng.multinomial(int(rng.integers(30, 80)), theta[d] @ phi)
                        for d in range(D)])
    return Corpus(sp.csr_matrix(counts), vocabulary=[f"w{i}" for i in range(V)])


def _without_time(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns="fit_seconds")


# ---------------------------------------------------------------------- the table
def test_table_has_its_columns_in_the_order_of_k(corpus):
    result = search_k(LDA(max_iter=ITERS), corpus, K=[6, 2, 4], progress=False)
    assert isinstance(result, SearchK)
    assert list(result.table.columns) == list(COLUMNS)
    assert result.table["K"].tolist() == [6, 2, 4]
    assert (result.table["fit_seconds"] > 0).all()
    assert np.isfinite(_without_time(result.table).to_numpy(dtype=float)).all()
    assert len(result.test_index) == 12 and len(result.train_index) == 48
    assert not set(result.test_index) & set(result.train_index)


def test_each_measure_is_the_model_own_on_the_same_split(corpus):
    result = search_k(LDA(max_iter=ITERS), corpus, K=[3], held_out=0.25, fraction=0.4,
                      random_state=3, progress=False)
    train, test = corpus.subset(result.train_index), corpus.subset(result.test_index)
    model = LDA(n_topics=3, max_iter=ITERS, random_state=3).fit(train)
    ll, n = model.log_likelihood_completion(test, 0.4, 3)
    row = result.table.iloc[0]
    assert row["heldout_tokens"] == n
    assert row["heldout_loglik"] == pytest.approx(ll / n, rel=1e-12)
    coherence = npmi_coherence(model.components_, train.counts, 10, convention="gensim")
    assert row["coherence"] == pytest.approx(coherence.mean(), rel=1e-12)
    assert row["exclusivity"] == pytest.approx(exclusivity(model.components_).mean())
    assert row["residual_dispersion"] == pytest.approx(
        residual_dispersion(model.components_, model.doc_topic_, train.counts)[0])


def test_same_seed_same_table_and_n_jobs_changes_nothing(corpus):
    kwargs = {"K": [2, 3, 5], "random_state": 1, "progress": False}
    one = _without_time(search_k(LDA(max_iter=ITERS), corpus, **kwargs).table)
    again = _without_time(search_k(LDA(max_iter=ITERS), corpus, **kwargs).table)
    threads = search_k(LDA(max_iter=ITERS), corpus, n_jobs=3, prefer="threads", **kwargs)
    pd.testing.assert_frame_equal(one, again)
    pd.testing.assert_frame_equal(one, _without_time(threads.table))
    other = _without_time(search_k(LDA(max_iter=ITERS), corpus, K=[2, 3, 5],
                                   random_state=2, progress=False).table)
    assert not one.equals(other)


@pytest.mark.slow
def test_processes_give_the_table_of_one_process(corpus):
    kwargs = {"K": [2, 3], "progress": False}
    one = search_k(LDA(max_iter=ITERS), corpus, **kwargs)
    procs = search_k(LDA(max_iter=ITERS), corpus, n_jobs=2, prefer="processes", **kwargs)
    pd.testing.assert_frame_equal(_without_time(one.table), _without_time(procs.table))


# ---------------------------------------------------------------------- checkpoints
def test_a_rerun_skips_the_k_values_in_the_checkpoint(corpus, tmp_path, monkeypatch):
    fits: list[int] = []
    original = LDA.fit

    def counted(self, X, *args, **kwargs):
        fits.append(self.n_topics)
        return original(self, X, *args, **kwargs)

    monkeypatch.setattr(LDA, "fit", counted)
    folder = tmp_path / "ck"
    first = search_k(LDA(max_iter=ITERS), corpus, K=[2, 3], checkpoint_dir=folder,
                     progress=False)
    assert fits == [2, 3]
    assert sorted(p.name for p in folder.iterdir()) == ["K=2.json", "K=3.json",
                                                        "settings.json"]
    assert json.loads((folder / "K=3.json").read_text())["K"] == 3
    second = search_k(LDA(max_iter=ITERS), corpus, K=[4, 3, 2], checkpoint_dir=folder,
                      progress=False)
    assert fits == [2, 3, 4]
    assert second.table["K"].tolist() == [4, 3, 2]
    pd.testing.assert_frame_equal(second.table.iloc[1:].reset_index(drop=True),
                                  first.table.iloc[::-1].reset_index(drop=True))
    with pytest.raises(ValueError, match="other settings.*params"):
        search_k(LDA(max_iter=ITERS + 1), corpus, K=[2], checkpoint_dir=folder,
                 progress=False)
    with pytest.raises(ValueError, match="other settings.*data"):
        search_k(LDA(max_iter=ITERS), corpus.subset(np.arange(50)), K=[2],
                 checkpoint_dir=folder, progress=False)
    assert fits == [2, 3, 4]


# ---------------------------------------------------------------------- measures
def test_exclusivity_is_stm_formula(corpus):
    beta = np.random.default_rng(0).dirichlet(np.full(40, 0.2), size=4)
    beta[:, 5] = beta[0, 5]                       # ties, ranked at their mean as R does
    # R/exclusivity.R, frexw = 0.7, transcribed (tbeta is V x K)
    tbeta = beta.T
    mat = tbeta / tbeta.sum(axis=1, keepdims=True)
    ex = np.column_stack([rankdata(mat[:, k]) for k in range(4)]) / 40
    fr = np.column_stack([rankdata(tbeta[:, k]) for k in range(4)]) / 40
    frex = 1 / (0.7 / ex + 0.3 / fr)
    expected = [frex[np.argsort(-tbeta[:, k], kind="stable")[:7], k].sum() for k in range(4)]
    np.testing.assert_allclose(exclusivity(beta * 3.0, top_n=7), expected, rtol=1e-12)


def test_residual_dispersion_is_stm_check_residuals():
    rng = np.random.default_rng(1)
    beta = rng.dirichlet(np.ones(30), size=3)
    theta = rng.dirichlet(np.ones(3), size=300)
    x = np.vstack([rng.multinomial(200, t @ beta) for t in theta]).astype(float)
    # R/residuals.R transcribed, document by document, dense
    D, n_hat = 0.0, 0
    for d in range(300):
        q, m = theta[d] @ beta, x[d].sum()
        n_hat += int((q * m > 0.01).sum())
        D += np.sum((x[d] ** 2 - 2 * x[d] * q * m) / (m * q * (1 - q))) + np.sum(m * q / (1 - q))
    df = n_hat - 30 - (300 * 2 + 3 * 29)
    dispersion, got_df = residual_dispersion(beta, theta, sp.csr_matrix(x))
    assert got_df == df
    assert dispersion == pytest.approx(D / df, rel=1e-10)
    assert dispersion == pytest.approx(1.0, abs=0.1)          # the true model: about 1
    assert np.isnan(residual_dispersion(beta, theta[:2], sp.csr_matrix(x[:2]))[0])


def test_gensim_convention_differs_from_exact_where_it_should():
    counts = sp.csr_matrix(np.array([[1, 1, 0, 2], [1, 1, 3, 0], [1, 1, 0, 0],
                                     [0, 0, 0, 0]]))
    phi = np.array([[4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 4.0, 3.0]])
    exact = npmi_coherence(phi, counts, top_n=2)
    gensim = npmi_coherence(phi, counts, top_n=2, convention="gensim")
    # words 0 and 1 are in 3 of 4 documents, always together; 2 and 3 never together
    p = 3 / 4
    assert exact[0] == pytest.approx(np.log(p / p ** 2) / -np.log(p))
    assert gensim[0] == pytest.approx(np.log((p + 1e-12) / p ** 2) / -np.log(p + 1e-12))
    assert exact[1] == -1.0
    assert gensim[1] == pytest.approx(np.log(1e-12 / (1 / 16)) / -np.log(1e-12))
    with pytest.raises(ValueError, match="convention must be one of exact, gensim"):
        npmi_coherence(phi, counts, top_n=2, convention="c_npmi")


def _gensim_coherence(topic_word: np.ndarray, counts: sp.csr_matrix,
                      vocabulary: list[str]) -> np.ndarray:
    """gensim's c_npmi of the 10 most probable words, one window per document."""
    gensim_coherence = pytest.importorskip(
        "gensim.models.coherencemodel", reason="gensim (the test extra) is not installed")
    from gensim.corpora import Dictionary

    texts = [[vocabulary[j] for j, n in zip(counts[d].indices, counts[d].data, strict=True)
              for _ in range(int(n))] for d in range(counts.shape[0])]
    top = np.argsort(-topic_word, axis=1, kind="stable")[:, :10]
    model = gensim_coherence.CoherenceModel(
        topics=[[vocabulary[j] for j in row] for row in top], texts=texts,
        dictionary=Dictionary(texts), coherence="c_npmi", topn=10, processes=1,
        window_size=max(len(t) for t in texts))
    return np.asarray(model.get_coherence_per_topic())


def test_coherence_is_gensim_c_npmi_on_the_same_top_words(corpus):
    result = search_k(LDA(max_iter=ITERS), corpus, K=[3, 5], progress=False)
    train = corpus.subset(result.train_index)
    vocab = [str(v) for v in corpus.vocabulary]
    for k in (3, 5):
        model = LDA(n_topics=k, max_iter=ITERS, random_state=0).fit(train)
        beta = np.asarray(model.components_)
        expected = _gensim_coherence(beta, train.counts, vocab)
        ours = npmi_coherence(beta, train.counts, 10, convention="gensim")
        np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-6)
        table = result.table.set_index("K")
        assert table.loc[k, "coherence"] == pytest.approx(expected.mean(), abs=1e-6)


def test_gensim_equality_holds_for_empty_documents_and_extreme_pairs():
    rng = np.random.default_rng(4)
    counts = rng.poisson(0.4, size=(50, 25))
    counts[:, 0] = counts[:, 1] = 1             # a pair in every document
    counts[:25, 2], counts[25:, 2] = 2, 0       # a pair that never co-occurs
    counts[:25, 3], counts[25:, 3] = 0, 1
    phi = rng.random((3, 25))
    phi[0, :4] += 10
    vocab = [f"w{i}" for i in range(25)]
    for reference in (counts, np.vstack([counts, np.zeros((1, 25), dtype=int)])):
        csr = sp.csr_matrix(reference)          # the second with an empty document
        expected = _gensim_coherence(phi, csr, vocab)
        np.testing.assert_allclose(npmi_coherence(phi, csr, 10, convention="gensim"),
                                   expected, rtol=0, atol=1e-6)
        assert abs(npmi_coherence(phi, csr, 10)[0] - expected[0]) > 1e-3


# ---------------------------------------------------------------------- bad inputs
class _NoTopics:
    def get_params(self, deep: bool = False) -> dict:
        return {"alpha": 1.0}


@pytest.mark.parametrize(("estimator", "kwargs", "message"), [
    (_NoTopics(), {}, "has no n_topics parameter"),
    (LDA(), {"K": [1, 3]}, "every K must be >= 2, got 1"),
    (LDA(), {"K": [3, 4, 3]}, "K 3 is given twice"),
    (LDA(), {"K": []}, "K is empty"),
    (LDA(), {"K": [2.5]}, "K must be integers"),
    (LDA(), {"held_out": 1.0}, r"held_out must be in \(0, 1\)"),
    (LDA(), {"fraction": 0}, r"fraction must be in \(0, 1\)"),
    (LDA(), {"n_jobs": 0}, "n_jobs must be >= 1 or -1"),
    (LDA(), {"prefer": "gpu"}, "prefer must be"),
    (LDA(), {"random_state": -1}, "random_state must be an integer >= 0"),
])
def test_bad_inputs_are_one_line_errors(corpus, estimator, kwargs, message):
    with pytest.raises(ValueError, match=message) as info:
        search_k(estimator, corpus, progress=False, **{"K": [2], **kwargs})
    assert "\n" not in str(info.value)


def test_a_too_small_corpus_is_refused(corpus):
    with pytest.raises(ValueError, match="too small: 2 documents give 0 held out"):
        search_k(LDA(), corpus.subset([0, 1]), K=[2], progress=False)
    with pytest.raises(ValueError, match="3 documents give 2 held out and 1 for training"):
        search_k(LDA(), corpus.subset([0, 1, 2]), K=[2], held_out=0.5, progress=False)


def test_plot_draws_four_panels(corpus):
    fig = search_k(LDA(max_iter=ITERS), corpus, K=[2, 3], progress=False).plot()
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 4 and "Held-out log-likelihood per token" in titles
    assert all(len(ax.lines[0].get_xdata()) == 2 for ax in fig.axes)


# ---------------------------------------------------------------------- CLI
def test_cli_search_k_on_sotu_writes_the_table_and_the_figure(tmp_path):
    out, ck = tmp_path / "out", tmp_path / "ck"
    args = ["search-k", "--dataset", "sotu", "--topics", "2,3", "-n", "2", "--out", str(out),
            "--checkpoint-dir", str(ck), "--jobs", "2", "-q"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "LDA on sotu: 192 training and 48 held-out documents" in result.output
    table = pd.read_csv(out / "search_k.csv")
    assert list(table.columns) == list(COLUMNS) and table["K"].tolist() == [2, 3]
    assert (out / "search_k.png").stat().st_size > 0
    assert sorted(p.name for p in ck.iterdir()) == ["K=2.json", "K=3.json", "settings.json"]
    again = runner.invoke(app, args)
    assert again.exit_code == 1 and again.output.startswith("error: ")
    assert "exists; give --force" in again.output
    resumed = runner.invoke(app, [*args, "--force"])
    assert resumed.exit_code == 0, resumed.output
    pd.testing.assert_frame_equal(pd.read_csv(out / "search_k.csv"), table)


@pytest.mark.parametrize(("args", "message"), [
    (["--topics", "1,3"], "--topics values must be >= 2"),
    (["--topics", "3,3"], "--topics has a K twice"),
    (["--model", "bpbfm"], "is not a topic model of documents"),
    (["--model", "nope"], "unknown model 'nope'"),
    ([], "give the documents"),
])
def test_cli_search_k_refuses_bad_options_on_one_line(args, message):
    extra = [] if not args or args[0] != "--topics" and args[0] != "--model" else \
        ["--dataset", "sotu"]
    result = runner.invoke(app, ["search-k", *extra, *args])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], \
        result.output
