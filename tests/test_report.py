"""Reports of fitted models (issue 26): ``topiclink.report`` for every family, the page's
offline self-containment, its embedded data read back, the report shown inline,
``to_pyldavis``, the ``topiclink report`` command and its one-line errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import topiclink as tl
from tests.report_fixtures import FAMILIES, PRESIDENTS, make_report_data
from tests.report_fixtures import family_inputs as _inputs
from tests.report_fixtures import fit_family as _fit
from topiclink.cli.app import app
from topiclink.data import Links
from topiclink.report import (
    Limits,
    ReportInputs,
    build_report,
    report_data,
    to_pyldavis,
)
from topiclink.report.views.covariate import group_bands, group_view
from topiclink.report.views.topics import classical_mds, jensen_shannon

runner = CliRunner()
SMOKE = Path(__file__).parent / "js" / "report_smoke.js"


@pytest.fixture(scope="module")
def data():
    """The documents, links, labels, features and tensor of ``make_report_data``."""
    return make_report_data()


@pytest.fixture(scope="module")
def reports(data, tmp_path_factory):
    """Every family fitted small, its report built and written: name -> (model, report,
    page path)."""
    folder = tmp_path_factory.mktemp("reports")
    out = {}
    for name in FAMILIES:
        model = _fit(name, data)
        report = build_report(model, inputs=_inputs(name, data))
        out[name] = (model, report, report.save(folder / f"{name}.html"))
    return out


def embedded(html: str) -> dict:
    """The view data the page embeds, parsed back."""
    found = re.search(r'<script type="application/json" id="topiclink-data">(.*?)</script>',
                      html, re.S)
    assert found, "no embedded data"
    return json.loads(found.group(1))


def assert_offline(html: str) -> None:
    """No script, style sheet, image or frame is fetched from the network."""
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*[\"']?"
                         r"(https?:)?//", html, re.I)
    assert not re.search(r"@import\s+(url\()?[\"']?(https?:)?//", html, re.I)
    assert not re.search(r"<script\b[^>]*\bsrc\s*=", html, re.I)


# ---------------------------------------------------------------------- every family
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_report_of_every_family(reports, name):
    model, report, path = reports[name]
    html = path.read_text(encoding="utf-8")
    assert html == report.html and html.startswith("<!DOCTYPE html>")
    assert_offline(html)
    data = embedded(html)
    assert data == json.loads(json.dumps(report.data))
    assert set(data["views"]) == FAMILIES[name]
    for view in ["summary", *data["views"]]:
        assert f'id="view-{view}"' in html
    assert 'id="topiclink-data"' in html and "window.topiclinkReport" in html
    assert "Bokeh" in html            # BokehJS inlined
    assert 1.0e6 < len(html.encode()) < 3.0e6
    assert data["model"]["class"] == type(model).__name__
    if "topics" in data["views"]:
        topics = data["views"]["topics"]
        assert topics["n_topics"] == model.n_topics_ == len(topics["labels"])
        assert topics["term_score_words"] == model.top_words(10)
        assert topics["probability_words"] == model.top_words(10, by="probability")
        for k, words in enumerate(model.top_words(3)):
            assert topics["labels"][k] == f"{k}: {' '.join(words)}"
        assert np.isclose(sum(topics["prevalence"]), 1.0, atol=1e-3)
        docs = data["views"]["documents"]
        assert docs["n_docs"] == len(docs["theta"]) == np.shape(model.doc_topic_)[0]
        for row, theta in zip(docs["theta"][:5], np.asarray(model.doc_topic_)[:5],
                              strict=False):
            k, p = int(row[0]), row[1]
            assert k == int(np.argmax(theta)) and p == pytest.approx(theta[k], abs=6e-4)


def test_paper_names_of_the_variants(reports):
    names = {name: reports[name][1].data["model"]["name"] for name in reports}
    assert names["gRTM"] == "Gibbs-gRTM" and names["LMVS"] == "LMVS"
    assert names["PLLDA"] in ("PLLDA", "Pairwise-Link-LDA") and names["LMV"] == "LMV"
    assert names["MedLDA-ova"] in ("Gibbs MedLDA", "gMedLDA")


def test_relevance_candidates_cover_both_ends_of_the_slider(reports):
    model = reports["LDA"][0]
    topics = reports["LDA"][1].data["views"]["topics"]
    phi = np.asarray(model.components_)
    p_word = np.asarray(topics["prevalence"]) @ phi
    for k in range(model.n_topics_):
        words = {topics["words"][i] for i in topics["topic_words"][k]}
        n = topics["n_relevant"]
        by_p = [str(model.vocabulary_[j]) for j in np.argsort(-phi[k])[:n]]
        by_lift = [str(model.vocabulary_[j]) for j in np.argsort(-phi[k] / p_word)[:n]]
        assert set(by_p) <= words and set(by_lift) <= words


@pytest.mark.parametrize("name", ["LDA", "DMR"])
def test_topic_correlation_graph_in_the_topics_view(reports, name):
    """The graph's edges are topic_correlation's (stm's topicCorr), strongest first, and
    the page draws them."""
    from topiclink.analysis import topic_correlation

    model, report, path = reports[name]
    graph = report.data["views"]["topics"]["correlation"]
    edges = topic_correlation(model).edges()
    assert graph["source"] == edges["topic_a"].tolist()
    assert graph["target"] == edges["topic_b"].tolist()
    assert np.allclose(graph["correlation"], edges["correlation"], atol=1e-4)
    assert len(graph["x"]) == len(graph["y"]) == model.n_topics_
    html = path.read_text(encoding="utf-8")
    assert "Topics that appear together" in html and '"topic-graph"' in html


def test_topic_map_is_classical_mds_of_jensen_shannon():
    rng = np.random.default_rng(0)
    phi = rng.dirichlet(np.ones(30), size=5)
    dist = jensen_shannon(phi)
    assert np.allclose(dist, dist.T) and np.allclose(np.diag(dist), 0)
    assert dist.max() <= np.sqrt(np.log(2)) + 1e-9
    xy = classical_mds(dist, 2)
    full = classical_mds(dist, 5)
    recon = np.sqrt(((full[:, None, :] - full[None, :, :]) ** 2).sum(-1))
    assert xy.shape == (5, 2) and np.allclose(recon, dist, atol=0.05)


def test_relational_view_suggestions_truth_and_network(reports, data):
    model, report, _ = reports["gRTM"]
    rel = report.data["views"]["relational"]
    assert np.allclose(rel["matrix"], np.round(model.weights_, 5))
    sug = rel["suggestions"]
    assert sug["queries"] == list(range(data["corpus"].n_docs))
    scores = model.link_scores(None, queries=[3], direction="either")[0]
    scores[3] = -np.inf
    assert sug["targets"][3] == np.argsort(-scores, kind="stable")[:10].tolist()
    assert all(a >= b for a, b in zip(sug["scores"][3], sug["scores"][3][1:], strict=False))
    adjacency = data["links"].adjacency()
    assert sorted(rel["neighbours"][3]) == sorted(
        set(adjacency[3].indices) | set(adjacency[:, 3].nonzero()[0]))
    net = rel["network"]
    assert len(net["nodes"]) == len(net["x"]) == len(net["topic"]) <= 2000
    assert rel["held_out"] is None and "no held-out" in rel["held_out_note"]


def test_link_scores_of_chosen_training_documents(reports, data):
    model = reports["gRTM"][0]
    every = model.link_scores(None, targets=np.arange(40))
    assert np.allclose(model.link_scores(None, queries=[5, 2]), every[[5, 2]])
    assert np.allclose(model.link_scores(None, queries=[1], targets=[3, 4]),
                       every[[1]][:, [3, 4]])
    with pytest.raises(ValueError, match="queries picks training documents"):
        model.link_scores(data["corpus"], queries=[1])
    with pytest.raises(ValueError, match="give X_new, targets or queries"):
        model.link_scores()


def test_held_out_precision_and_the_network_cap(data):
    from topiclink.data.splits import train_test_split_documents

    fold = train_test_split_documents(data["corpus"], data["links"], test_size=0.25,
                                      random_state=0)
    model = tl.RelationalTopicModel(3, max_iter=4, random_state=0, negative_ratio=0.1).fit(
        fold.train_corpus, links=fold.train_links)
    inputs = ReportInputs(corpus=fold.train_corpus, links=fold.train_links,
                          held_out=fold.test_corpus, held_out_links=fold.test_links)
    data_ = report_data(model, inputs, Limits(max_network_nodes=10, max_suggestion_pairs=200))
    rel = data_["views"]["relational"]
    held = rel["held_out"]
    linked = int((np.asarray(fold.test_links.sum(axis=1)).ravel() > 0).sum())
    assert held["n_documents"] == linked
    assert 0 <= held["precision@10"] <= 1 and 0 <= held["precision@1"] <= 1
    assert len(rel["network"]["nodes"]) == 10 and "most connected" in rel["network"]["note"]
    n_train = fold.train_corpus.n_docs
    assert len(rel["suggestions"]["queries"]) == 200 // n_train


def test_visibility_view_ranks_and_counts_citations(reports, data):
    model, report, _ = reports["LMV"]
    vis = report.data["views"]["visibility"]
    tau = np.asarray(model.visibility_)
    assert vis["top"][0] == int(np.argmax(tau))
    assert all(tau[a] >= tau[b] for a, b in zip(vis["top"], vis["top"][1:], strict=False))
    assert vis["cited"] == np.bincount(data["directed"].target,
                                       minlength=tau.size).tolist()
    counts = np.asarray(vis["citation_topics"])
    assert counts.shape == (3, 3) and counts.sum() == (model.citation_topics_[:, 0] >= 0).sum()
    assert not reports["PLLDA"][1].data["views"]["visibility"]["fitted"]


def test_supervised_view_weights_and_misclassified(reports, data):
    for name, y in (("gSLDA", data["y2"]), ("MedLDA-ova", data["y3"])):
        model, report, _ = reports[name]
        sup = report.data["views"]["supervised"]
        assert np.allclose(sup["weights"], np.round(np.atleast_2d(model.coef_), 4))
        predicted = model.predict(data["corpus"])
        wrong = np.flatnonzero(predicted != y)
        assert [m[0] for m in sup["misclassified"]] == wrong.tolist()
        assert sup["accuracy"] == pytest.approx(1 - wrong.size / y.size)


def test_entities_view_tails_intervals_and_truth(reports, data):
    model, report, _ = reports["BPBFM"]
    ent = report.data["views"]["entities"]
    assert len(ent["matrices"]) == len(model.relation_names_)
    q = ent["queries"]
    assert len(q["heads"]) == 25 * 3           # every (head, relation) pair
    i = 7
    h, r = q["heads"][i], q["relations"][i]
    mean = model.score_tails(h, r)
    best = np.argsort(-mean, kind="stable")[:10]
    assert q["tails"][i][:3] == best[:3].tolist()
    assert np.allclose(q["mean"][i], np.round(mean[best], 4), atol=2e-4)
    for lo, hi in q["interval"][i]:
        assert 0 <= lo <= hi <= 1
    t = data["tensor"]
    observed = {(a, b, c) for a, b, c, v in zip(t.heads, t.relations, t.tails, t.values,
                                                 strict=True) if v > 0}
    marks = [int((h, r, tail) in observed) for tail in q["tails"][i]]
    assert q["true"][i] == marks
    assert [f["factor"] for f in ent["factors"]] == np.argsort(
        -model.factor_weights_, kind="stable").tolist()


def test_entities_table_lists_active_factors_with_shares():
    from topiclink.report.sections import _entities

    factors = [{"factor": 1, "weight": 0.7, "entities": ["a", "b"], "loadings": [0.0042, 1e-5]},
               {"factor": 0, "weight": 0.295, "entities": ["c"], "loadings": [0.5]},
               {"factor": 2, "weight": 0.005, "entities": ["d"], "loadings": [0.9]}]
    view = {"n_factors": 3, "matrices": [np.eye(3).tolist()], "relations": ["r"],
            "factors": factors, "queries": {"note": None}, "interval_note": None}
    body = _entities({"views": {"entities": view}}).html
    assert "a (0.42%), b (0.001%)" in body and "c (50%)" in body
    assert "d (" not in body                       # 0.5 % of the weight: not listed
    assert "1 of the 3 factors carry under 1% of the weight" in body


def test_covariate_views(reports, data):
    ktm = reports["KTM"][1].data["views"]["covariate"]
    assert ktm["empirical"] is not None and ktm["model"] is None
    prev = np.asarray(ktm["empirical"]["prevalence"])
    assert np.allclose(prev.sum(axis=1), 1, atol=1e-3)
    dmr_model, dmr_report, _ = reports["DMR"]
    dmr = dmr_report.data["views"]["covariate"]
    assert dmr["model"]["name"] == "year"
    assert 1980 < dmr["model"]["x"][0] < dmr["model"]["x"][-1] < 2020
    frame = pd.DataFrame({"year": dmr["model"]["x"]})
    assert np.allclose(dmr["model"]["prevalence"], dmr_model.predict_topics(frame), atol=1e-4)
    lda = build_report(reports["LDA"][0], inputs=ReportInputs(
        corpus=data["corpus"], covariate=np.arange(40) % 5, covariate_name="year"))
    assert lda.data["views"]["covariate"]["empirical"]["x"] == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------- groups (presidents)
def test_group_view_orders_averages_and_bands():
    """Groups in order along the covariate (a tie in group order), each group's mean
    topic mix (rows sum to 1), a band per run of one group cut half-way between runs; a
    group that returns (Cleveland) has two bands; documents without a group are left
    out."""
    rng = np.random.default_rng(3)
    theta = rng.dirichlet(np.ones(4), size=9)
    years = np.array([1893, 1885, 1889, 1889, 1901, 1886, 1897, 1890, 1999], dtype=float)
    names = np.array(["Cleveland", "Cleveland", "Harrison", "Cleveland", "McKinley",
                      "Cleveland", "McKinley", "Harrison", None], dtype=object)
    view = group_view(theta, names, years, "president", "year")
    assert view["groups"] == ["Cleveland", "Harrison", "McKinley"]
    assert view["documents"] == [4, 2, 2]
    shares = np.asarray(view["shares"])
    assert np.allclose(shares.sum(axis=1), 1, atol=1e-3)
    for g, name in enumerate(view["groups"]):
        assert np.allclose(shares[g], theta[names == name].mean(axis=0), atol=1e-4)
    assert view["first"] == [1885, 1889, 1897] and view["last"] == [1893, 1890, 1901]
    bands = view["bands"]
    # along the year: 1885 C, 1886 C, 1889 C, 1889 H (a tie: in group order, so that
    # it does not split Cleveland's run), 1890 H, 1893 C, 1897 M, 1901 M
    assert bands["label"] == ["Cleveland", "Harrison", "Cleveland", "McKinley"]
    assert bands["group"] == [0, 1, 0, 2]
    assert bands["start"] == [1885, 1889, 1891.5, 1895]
    assert bands["end"] == bands["start"][1:] + [1901]
    assert bands["documents"] == [3, 2, 1, 2]
    assert sum(bands["documents"]) == 8
    # without the covariate: first-document order, no bands
    plain = group_view(theta, names)
    assert plain["groups"] == ["Cleveland", "Harrison", "McKinley"] and plain["bands"] is None
    # a grouping that does not run along the covariate is not banded
    alternating = group_view(theta, np.array(["a", "b"] * 4 + ["a"]), np.arange(9.0),
                             "type", max_bands=5)
    assert alternating["bands"] is None and "not banded" in alternating["note"]
    assert group_view(theta, np.array([None] * 9, dtype=object)) is None
    empty = group_bands(np.zeros(0), np.zeros(0, dtype=object))
    assert empty["start"] == []


def test_the_president_view_of_ktm_and_dmr(reports):
    for name in ("KTM", "DMR"):
        groups = reports[name][1].data["views"]["covariate"]["groups"]
        assert groups["name"] == "president" and groups["groups"] == list(PRESIDENTS)
        assert np.allclose(np.asarray(groups["shares"]).sum(axis=1), 1, atol=1e-3)
        assert groups["documents"] == [10, 10, 10, 10]
        bands = groups["bands"]
        assert bands["label"] == list(PRESIDENTS)
        assert bands["start"] == [1990, 1994.5, 1999.5, 2004.5]
        assert bands["end"] == [1994.5, 1999.5, 2004.5, 2009]
        html = reports[name][1].html
        for source in ("group-topics-source", "covariate-empirical-bands-source"):
            assert source in html
        assert 'id="group-topic"' in html and "Topics by president" in html


def test_grouping_from_the_corpus_metadata(reports, data):
    """A corpus whose metadata has a president column is grouped by it (and its year
    is the covariate); group_column names another column, False turns it off; a column
    that is not there is a one-line error naming those that are."""
    from topiclink.data import DataError

    corpus = data["corpus"]
    meta = pd.DataFrame({"year": data["year"], "president": data["president"],
                         "party": np.where(data["year"] < 2000, "blue", "red")})
    with_meta = tl.Corpus(corpus.counts, vocabulary=corpus.vocabulary, titles=corpus.titles,
                          metadata=meta)
    lda = reports["LDA"][0]
    auto = build_report(lda, with_meta).data["views"]["covariate"]
    assert auto["groups"]["groups"] == list(PRESIDENTS)
    assert auto["empirical"]["name"] == "year"
    party = build_report(lda, with_meta, group_column="party").data["views"]["covariate"]
    assert party["groups"]["groups"] == ["blue", "red"]
    assert party["groups"]["bands"]["start"] == [1990, 1999.5]
    off = build_report(lda, with_meta, group_column=False).data["views"]["covariate"]
    assert off["groups"] is None and off["empirical"] is not None
    with pytest.raises(DataError, match="no metadata column 'speaker'.*year, president, "
                                        "party"):
        build_report(lda, with_meta, group_column="speaker")
    with pytest.raises(DataError, match="no metadata columns"):
        build_report(lda, corpus, group_column="president")
    # no grouping, no covariate: no covariate view (as before)
    assert "covariate" not in build_report(lda, corpus).data["views"]


def test_report_command_group_column(reports, data, tmp_path):
    """--group-column reads the column from --documents (and --dataset/--data); a
    column that is not there is a one-line error; it needs the data."""
    docs = tmp_path / "docs.csv"
    corpus = data["corpus"]
    lines = ["id,text,speaker"]
    counts = corpus.counts.tocsr()
    for d in range(corpus.n_docs):
        row = counts[d]
        text = " ".join(w for j, c in zip(row.indices, row.data, strict=True)  # letters only
                        for w in ["term" + "".join(chr(97 + int(i)) for i in str(j))] * int(c))
        lines.append(f"d{d},{text},{data['president'][d]}")
    docs.write_text("\n".join(lines) + "\n")
    model = tmp_path / "lda.npz"
    result = runner.invoke(app, ["fit", "lda", "--documents", str(docs), "-k", "2", "-n",
                                 "3", "--stop-words", "none", "--quiet", "--out",
                                 str(model)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "lda.html"
    result = runner.invoke(app, ["report", str(model), "--documents", str(docs),
                                 "--stop-words", "none", "--group-column", "speaker"])
    assert result.exit_code == 0, result.output
    groups = embedded(out.read_text(encoding="utf-8"))["views"]["covariate"]["groups"]
    assert groups["name"] == "speaker" and sorted(groups["groups"]) == list(PRESIDENTS)
    assert groups["bands"] is None          # no covariate: the groups' shares only
    assert "no metadata column 'party'" in _error_line(runner.invoke(
        app, ["report", str(model), "--documents", str(docs), "--stop-words", "none",
              "--group-column", "party", "--out", str(tmp_path / "p.html")]))
    assert "give the data too" in _error_line(runner.invoke(
        app, ["report", str(model), "--group-column", "speaker", "--out",
              str(tmp_path / "q.html")]))


def test_the_page_script_runs(reports):
    """The page's script under a minimal DOM (node; no browser, no Bokeh): the API
    selects topics and documents, moves the slider, searches, finds neighbours."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    for name in ("gRTM", "BPBFM", "gSLDA", "KTM"):
        path = reports[name][2]
        result = subprocess.run([node, str(SMOKE), str(path)], capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        if name == "BPBFM":
            assert out["selectRelation"] and out["selectQuery"]
            assert "90% interval" in out["tails"] and " \u2013 " in out["tails"]
            continue
        assert out["selectTopic"] and not out["badTopic"] and out["setLambda"]
        assert out["lambdaLabel"] == "1.00" and out["relevanceAt1"]
        assert out["selectDocument"] and not out["badDocument"]
        assert out["searchAll"] == 40 and out["searchFirst"] >= 1
        assert len(out["nearest"]) == 5
        if name == "gRTM":
            assert "true links" in out["suggestions"]
        if name == "KTM":                   # the chosen topic's shares by president
            groups = reports[name][1].data["views"]["covariate"]["groups"]
            k = out["groupTopic"]
            want = sorted(range(4), key=lambda g: (-groups["shares"][g][k], g))
            assert out["groupShares"] == [groups["groups"][g] for g in want]
            assert "mean share by president" in out["groupText"]


def test_report_shows_inline_and_saves(reports, data, tmp_path):
    model = reports["LDA"][0]
    report = build_report(model, data["corpus"])
    inline = report._repr_html_()
    assert inline.startswith("<iframe srcdoc=") and "&lt;!DOCTYPE html&gt;" in inline
    assert "topics" in repr(report)
    path = report.save(tmp_path / "lda.html")
    assert embedded(path.read_text(encoding="utf-8"))["views"]["documents"]["keywords"]


def test_inputs_that_do_not_fit_are_refused(reports, data):
    from topiclink.data import DataError

    model = reports["LDA"][0]
    with pytest.raises(DataError, match="the model was fitted on 40"):
        build_report(model, data["corpus"].subset(np.arange(10)))
    with pytest.raises(ValueError, match="max_network_nodes"):
        Limits(max_network_nodes=0)


def test_titles_cannot_break_out_of_the_page(reports, data):
    corpus = data["corpus"]
    titles = np.array(["</script><script>alert(1)</script> & <b>"] * corpus.n_docs)
    corpus = tl.Corpus(corpus.counts, vocabulary=corpus.vocabulary, titles=titles)
    report = build_report(reports["LDA"][0], corpus)
    assert "<script>alert(1)" not in report.html
    assert embedded(report.html)["views"]["documents"]["titles"][0] == titles[0]


# ---------------------------------------------------------------------- pyLDAvis
@pytest.mark.parametrize("name", sorted(n for n in FAMILIES if n != "BPBFM"))
def test_to_pyldavis_of_every_topic_model(reports, data, name):
    model = reports[name][0]
    args = to_pyldavis(model, data["corpus"])
    assert set(args) == {"topic_term_dists", "doc_topic_dists", "doc_lengths", "vocab",
                         "term_frequency"}
    K = model.n_topics_
    phi, theta = args["topic_term_dists"], args["doc_topic_dists"]
    V = len(args["vocab"])
    assert phi.shape == (K, V) and theta.shape == (40, K)
    assert args["doc_lengths"].shape == (40,) and args["term_frequency"].shape == (V,)
    assert np.allclose(phi.sum(axis=1), 1) and np.allclose(theta.sum(axis=1), 1)
    assert (args["term_frequency"] > 0).all()
    assert np.allclose(theta, np.asarray(model.doc_topic_) /
                       np.asarray(model.doc_topic_).sum(axis=1, keepdims=True))


def test_to_pyldavis_new_documents_and_refusals(reports, data):
    model = reports["LDA"][0]
    part = data["corpus"].subset(np.arange(7))
    args = to_pyldavis(model, part)
    assert args["doc_topic_dists"].shape == (7, 3)
    with pytest.raises(TypeError, match="not a fitted topic model"):
        to_pyldavis(reports["BPBFM"][0], data["corpus"])


def test_pyldavis_prepare_runs(reports, data):
    pyLDAvis = pytest.importorskip("pyLDAvis")
    for name in ("LDA", "gRTM", "LMV"):
        vis = pyLDAvis.prepare(**to_pyldavis(reports[name][0], data["corpus"]), n_jobs=1)
        assert len(vis.topic_coordinates) == 3


# ---------------------------------------------------------------------- the command
@pytest.fixture(scope="module")
def model_file(reports, tmp_path_factory):
    return reports["gRTM"][0].save(tmp_path_factory.mktemp("model") / "grtm.npz")


def _error_line(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error: "), result.output
    assert result.exit_code == 1
    return lines[-1]


def test_report_command_writes_an_offline_page(model_file, tmp_path):
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(model_file), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "written to" in result.output and "file://" in result.output
    html = out.read_text(encoding="utf-8")
    assert_offline(html)
    data = embedded(html)
    assert data["views"]["relational"]["network"] is None    # no links in a model file
    assert "attach the data" in data["views"]["relational"]["links_note"]


def test_report_command_default_name_and_force(model_file, tmp_path):
    copy = tmp_path / "m.npz"
    shutil.copy(model_file, copy)
    assert runner.invoke(app, ["report", str(copy)]).exit_code == 0
    page = tmp_path / "m.html"
    assert page.exists()
    page.write_text("keep")
    assert "--force" in _error_line(runner.invoke(app, ["report", str(copy)]))
    assert page.read_text() == "keep"
    result = runner.invoke(app, ["report", str(copy), "--force", "--title", "mine"])
    assert result.exit_code == 0, result.output
    assert "<title>mine</title>" in page.read_text(encoding="utf-8")


def test_report_command_errors(model_file, tmp_path):
    assert "model file not found" in _error_line(
        runner.invoke(app, ["report", str(tmp_path / "nope.npz")]))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a model")
    assert "not a readable topiclink model file" in _error_line(
        runner.invoke(app, ["report", str(bad), "--out", str(tmp_path / "b.html")]))
    assert not (tmp_path / "b.html").exists()
    assert "--out" in _error_line(runner.invoke(
        app, ["report", str(model_file), "--out", str(tmp_path)]))
    assert "data folder not found" in _error_line(runner.invoke(
        app, ["report", str(model_file), "--out", str(tmp_path / "c.html"), "--data",
              str(tmp_path / "missing")]))


def test_report_command_with_the_users_documents(tmp_path):
    """Fit on --documents/--edges, then report with the same files: the documents are
    matched by id (words searchable, true links marked, the network drawn)."""
    rng = np.random.default_rng(0)
    topics = (("citation", "network", "graph", "links"), ("gauge", "string", "brane", "field"))
    docs = tmp_path / "docs.csv"
    lines = ["id,title,text"]
    for i in range(30):
        lines.append(f"p{i},Paper {i},{' '.join(rng.choice(topics[i % 2], 20))}")
    docs.write_text("\n".join(lines) + "\n")
    edges = tmp_path / "edges.txt"
    edges.write_text("".join(f"p{i} p{j}\n" for i in range(30) for j in range(i)
                             if i % 2 == j % 2 and rng.random() < 0.3))
    files = ["--documents", str(docs), "--edges", str(edges), "--title-column", "title"]
    model = tmp_path / "m.npz"
    result = runner.invoke(app, ["fit", "rtm", *files, "-k", "2", "-n", "5", "--quiet",
                                 "--out", str(model)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "m.html"
    result = runner.invoke(app, ["report", str(model), *files])
    assert result.exit_code == 0, result.output
    data = embedded(out.read_text(encoding="utf-8"))
    rel = data["views"]["relational"]
    assert rel["network"] is not None and any(rel["neighbours"])
    assert data["views"]["documents"]["titles"][0] == "Paper 0"
    assert data["views"]["documents"]["keywords"] is not None
    assert data["model"]["data"] == "data: docs"
    result = runner.invoke(app, ["report", str(model), "--documents", str(docs), "--dataset",
                                 "cora", "--out", str(tmp_path / "x.html")])
    assert "not both" in _error_line(result)


def test_report_command_states_held_out_precision_of_a_holdout_fit(tmp_path):
    """`topiclink fit rtm --holdout F` keeps the training documents' ids in the model
    file; `topiclink report` with the same data matches them and scores the documents
    that were not in training (held-out precision@k, stated on the page)."""
    rng = np.random.default_rng(1)
    topics = (("citation", "network", "graph", "links"), ("gauge", "string", "brane", "field"))
    docs = tmp_path / "docs.csv"
    docs.write_text("id,text\n" + "".join(
        f"p{i},{' '.join(rng.choice(topics[i % 2], 20))}\n" for i in range(40)))
    edges = tmp_path / "edges.txt"
    edges.write_text("".join(f"p{i} p{j}\n" for i in range(40) for j in range(i)
                             if i % 2 == j % 2 and rng.random() < 0.3))
    files = ["--documents", str(docs), "--edges", str(edges)]
    model = tmp_path / "m.npz"
    result = runner.invoke(app, ["fit", "rtm", *files, "-k", "2", "-n", "5", "--quiet",
                                 "--holdout", "0.25", "--out", str(model)])
    assert result.exit_code == 0, result.output
    n_train = len(tl.load(model).train_doc_ids_)
    assert n_train < 40
    result = runner.invoke(app, ["report", str(model), *files])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "m.html").read_text(encoding="utf-8")
    held = embedded(html)["views"]["relational"]["held_out"]
    assert held is not None and 1 <= held["n_documents"] <= 40 - n_train
    assert 0 <= held["precision@1"] <= 1 and 'id="held-out"' in html


# ---------------------------------------------------------------------- a large model
@pytest.mark.slow
def test_a_25000_document_report_stays_small_and_quick(tmp_path):
    """A gRTM of 25,000 documents (K = 50, V = 20,000, ~100,000 links; arrays drawn at
    random, saved and loaded) with its links: the page stays under 30 MB and builds in
    well under a minute (``benchmarks/report_size.py`` measures it with a corpus)."""
    import time

    rng = np.random.default_rng(0)
    D, K, V = 25_000, 50, 20_000
    theta = rng.dirichlet(np.full(K, 0.1), size=D)
    model = tl.RelationalTopicModel(K, random_state=0)
    model.components_ = rng.dirichlet(np.full(V, 0.05), size=K)
    model.doc_topic_ = model.train_zbar_ = theta
    model.weights_ = np.diag(rng.uniform(5, 20, K))
    model.topic_weights_ = theta.mean(axis=0)
    model.vocabulary_ = np.array([f"term{j}" for j in range(V)])
    model.alpha_ = np.full(K, 0.1)
    model.train_doc_ids_ = np.arange(D)
    model.train_titles_ = np.array([f"document {d}" for d in range(D)])
    model.n_iter_, model.n_pairs_, model.n_negatives_ = 1, 1, 0
    model.directed_, model.mean_doc_length_, model.random_state_ = False, 100.0, 0
    model = tl.load(model.save(tmp_path / "big.npz"))
    pairs = np.column_stack([np.repeat(np.arange(D), 4), rng.integers(0, D, 4 * D)])
    links = Links.from_pairs(pairs[pairs[:, 0] != pairs[:, 1]], D, directed=False,
                             duplicates="drop")
    t0 = time.perf_counter()
    report = build_report(model, links=links)
    seconds = time.perf_counter() - t0
    assert report.size_bytes < 30e6 and seconds < 120
    rel = report.data["views"]["relational"]
    assert len(rel["network"]["nodes"]) == 2000
    assert len(rel["suggestions"]["queries"]) == 20_000_000 // D
    assert report.data["views"]["documents"]["n_docs"] == D
