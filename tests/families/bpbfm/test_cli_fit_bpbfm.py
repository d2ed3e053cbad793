"""``topiclink fit bpbfm``: a bilinear Poisson factor model on knowledge-graph triples."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app

runner = CliRunner()


@pytest.fixture
def nations_dir(shared_datasets):
    path = shared_datasets / "nations"
    if not (path / "train.txt").exists():
        pytest.skip(f"no nations data in {shared_datasets}")
    return path


def test_fit_bpbfm_on_nations(nations_dir, tmp_path):
    from topiclink import load
    from topiclink.datasets import load_nations

    out = tmp_path / "m.npz"
    result = runner.invoke(app, ["fit", "bpbfm", "--dataset", "nations", "-k", "3",
                                 "--iterations", "6", "--seed", "1", "--out", str(out),
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("BPBFM-1: 14 entities, 55 relations, K=3")
    assert "relation " in result.output
    assert "1592 train triples (not used: 199 valid, 201 test triples)" in result.output
    assert f"model written to {out}" in result.output
    model = load(out)
    assert (model.n_topics, model.max_iter, model.burn_in, model.n_iter_) == (3, 6, 3, 6)
    assert model.n_dictionary is None and model.binary_ is True
    assert model.embedding_.shape == (14, 3) and model.relation_names_.size == 55
    # the test triples get probabilities
    test = load_nations().tensor["test"]
    p = model.predict_proba(test.heads, test.relations, test.tails)
    assert p.shape == (201,) and np.isfinite(p).all()


def test_fit_bpbfm2_from_a_triples_folder(nations_dir, tmp_path):
    result = runner.invoke(app, ["fit", "bpbfm", "--dataset", "triples", "--data",
                                 str(nations_dir), "-k", "2", "--dictionary", "3", "-n", "4",
                                 "--burn-in", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("BPBFM-2 (M=3): 14 entities, 55 relations, K=2")
    assert "model not saved" in result.output


def test_the_prior_flags_set_the_priors_fields(nations_dir, tmp_path):
    """--gamma0 / --a / ... are fields of ``priors`` (BPBFMPriors); the others keep their
    defaults, and no flag leaves ``priors=None``."""
    from topiclink import load
    from topiclink.families.bpbfm.priors import BPBFMPriors

    out = tmp_path / "p.npz"
    result = runner.invoke(app, ["fit", "bpbfm", "--dataset", "nations", "-k", "2", "-n",
                                 "2", "--gamma0", "2.5", "--a", "0.3", "--out", str(out),
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    assert load(out).priors == BPBFMPriors(a=0.3, gamma0=2.5)
    plain = tmp_path / "plain.npz"
    result = runner.invoke(app, ["fit", "bpbfm", "--dataset", "nations", "-k", "2", "-n",
                                 "2", "--out", str(plain), "--quiet"])
    assert result.exit_code == 0, result.output
    assert load(plain).priors is None
    bad = runner.invoke(app, ["fit", "bpbfm", "--dataset", "nations", "-k", "2", "-n", "2",
                              "--priors-beta", "-1", "--quiet"])
    assert bad.exit_code == 1 and "beta must be a finite number > 0" in bad.output
    helps = " ".join(runner.invoke(app, ["fit", "bpbfm", "--help"],
                                   terminal_width=200).output.split())
    assert "--gamma0" in helps and "--q0" in helps and "a field of priors" in helps


def test_fit_bpbfm_errors(tmp_path):
    result = runner.invoke(app, ["fit", "bpbfm", "--dataset", "nations", "-k", "1"])
    assert result.exit_code == 1
    assert "n_topics must be an integer >= 2, got 1" in result.output
    assert len(result.output.strip().splitlines()) == 1
    result = runner.invoke(app, ["fit", "bpbfm", "-k", "3"])
    assert result.exit_code == 1 and "no data given" in result.output
    result = runner.invoke(app, ["fit", "bpbfm", "--dataset", "cora", "-k", "3", "-n", "2",
                                 "--quiet"])
    assert result.exit_code == 1
    assert "has no knowledge-graph triples" in result.output
    (tmp_path / "train.txt").write_text("a\tr\tb\nb\tr\n")
    result = runner.invoke(app, ["fit", "bpbfm", "--data", str(tmp_path), "-k", "2",
                                 "--quiet"])
    assert result.exit_code == 1
    assert "train.txt:2: expected 3 or 4" in result.output
    result = runner.invoke(app, ["fit", "--help"])
    assert "bpbfm" in result.output


@pytest.mark.parametrize("command", [["bpbfm-em"], ["bpbfm", "--model", "BPBFM-1-EM"]])
def test_fit_bpbfm_em_restarts_pooled(command, nations_dir, tmp_path):
    """fit bpbfm-em --chains 3 (or fit bpbfm --model BPBFM-1-EM): three restarts, their
    estimates pooled (one sample each)."""
    from topiclink import BilinearPoissonFactorModelEM, load

    out = tmp_path / "em.npz"
    result = runner.invoke(app, ["fit", *command, "--dataset", "nations", "-k", "3",
                                 "-n", "5", "--chains", "3",
                                 "--seed", "2", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("BPBFM-1 (MAP-EM): 14 entities"), result.output
    model = load(out)
    assert isinstance(model, BilinearPoissonFactorModelEM)
    assert model.n_chains == 3 and model.samples_embedding_.shape == (3, 14, 3)
    bad = runner.invoke(app, ["fit", "bpbfm", "--dataset", "nations", "-k", "3",
                              "--inference", "online", "--chains", "2", "--quiet"])
    assert bad.exit_code == 1 and "n_chains > 1 needs inference='batch'" in bad.output


def test_fit_bpbfm_dc(nations_dir, tmp_path):
    """fit bpbfm-dc: the degree-corrected model by MAP-EM, its own command."""
    result = runner.invoke(app, ["fit", "bpbfm-dc", "--dataset", "nations", "-k", "2",
                                 "-n", "3", "--degree-prior", "0.7", "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("degree-corrected BPBFM (MAP-EM"), result.output
