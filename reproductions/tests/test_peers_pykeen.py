"""The PyKEEN peers (RESCAL, DistMult, ComplEx) of BPBFM: ids line up, clear ImportError.

The fits need the bench extra (PyKEEN, torch) and are skipped without it (CI); the
ImportError test runs everywhere.
"""

from __future__ import annotations

import builtins
import importlib.util

import numpy as np
import pytest

from topiclink.data.tensor import RelationalTensor
from topiclink.experiments.runner import model_names, unregister_model
from topiclink_reproductions.peers import pykeen as kge_peers


def _hide_pykeen(monkeypatch):
    real_import = builtins.__import__
    real_find_spec = importlib.util.find_spec

    def fake_import(name, *args, **kwargs):
        if name == "pykeen" or name.startswith("pykeen."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    def fake_find_spec(name, *args, **kwargs):
        return None if name == "pykeen" else real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec)


def test_clear_import_error_without_pykeen(monkeypatch):
    _hide_pykeen(monkeypatch)
    with pytest.raises(ImportError, match=r'pip install "topiclink\[bench\]"'):
        kge_peers.KGEmbeddingPeer("DistMult")
    assert not kge_peers.pykeen_available()
    for name in kge_peers.PEER_MODELS:
        unregister_model(name)
    assert kge_peers.register_pykeen_peers() == []
    assert not set(kge_peers.PEER_MODELS) & set(model_names())


def test_unknown_model_is_refused():
    with pytest.raises(ValueError, match="RESCAL, DistMult, ComplEx"):
        kge_peers.KGEmbeddingPeer("TransE")


def _tiny_tensor() -> tuple[RelationalTensor, tuple[int, int, int]]:
    """12 entities, 2 relations: entity 7 is the tail of (h, 0, .) for every head h but 7
    (and (3, 0, 7) is held out), a few random triples elsewhere; entity 11 is in no
    triple at all."""
    rng = np.random.default_rng(0)
    N, R = 12, 2
    triples = {(h, 0, 7) for h in range(N - 1) if h not in (3, 7)}
    while len(triples) < 24:
        h, t = rng.integers(0, N - 1, size=2)
        if h != t and t != 7:
            triples.add((int(h), 1, int(t)))
    arr = np.array(sorted(triples))
    names = np.array([f"e{i}" for i in range(N)])
    tensor = RelationalTensor(arr[:, 0], arr[:, 1], arr[:, 2], np.ones(len(arr)), N, R,
                              names, np.array(["likes", "knows"]),
                              missing=np.array([[3, 0, 7]]))
    return tensor, (3, 0, 7)


@pytest.mark.parametrize("name", ["RESCAL", "DistMult", "ComplEx"])
def test_ids_line_up(name):
    pytest.importorskip("pykeen")
    tensor, (h, r, t) = _tiny_tensor()
    model = kge_peers.KGEmbeddingPeer(name, embedding_dim=8, num_epochs=100, batch_size=32,
                                      learning_rate=0.05, num_negatives=4, exclude_missing=True,
                                      random_state=0).fit(tensor)
    N = tensor.n_entities
    # the held-out (3, likes, 7): entity 7 is the best tail of (3, likes, ?)
    tails = model.score_tails(h, r)
    assert tails.shape == (N,)
    assert int(np.argmax(tails)) == t
    # by name, the same
    np.testing.assert_allclose(model.score_tails("e3", "likes"), tails, rtol=1e-6)
    # (h, likes, 7) scores above (h, likes, 5) for the heads seen in a triple other than
    # 7 and 5 (symmetric DistMult scores (7, likes, 5) as the true (5, likes, 7))
    proba = model.predict_proba(np.arange(N), np.zeros(N, dtype=int), np.full(N, t))
    other = model.predict_proba(np.arange(N), np.zeros(N, dtype=int), np.full(N, 5))
    assert np.all((proba > 0) & (proba < 1))
    seen = np.setdiff1d(np.arange(N), [5, 7, 11])
    assert np.all(proba[seen] > other[seen])
    # score_heads of (?, likes, 7) agrees with predict_proba's order
    heads = model.score_heads(r, t)
    assert heads.shape == (N,)
    assert np.argsort(heads).tolist() == np.argsort(proba).tolist()
    # every entity has an embedding, the unseen 11 included
    assert model.embedding_.shape[0] == N
    assert model.n_parameters_ > 0 and model.fit_seconds_ > 0
    assert list(model.entity_names_) == list(tensor.entity_names)


def test_seeded_fit_is_reproducible_and_registered():
    pytest.importorskip("pykeen")
    from topiclink.experiments.runner import build_model, fit_model

    assert kge_peers.register_pykeen_peers() == list(kge_peers.PEER_MODELS)
    tensor, _ = _tiny_tensor()
    params = {"embedding_dim": 4, "num_epochs": 5, "random_state": 3}
    a = fit_model(build_model("DistMult", params), tensor=tensor)
    b = fit_model(build_model("DistMult", params), tensor=tensor)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)


@pytest.mark.parametrize("name", ["RESCAL", "DistMult", "ComplEx", "RotatE", "TuckER"])
def test_batch_scores_are_pykeens(name):
    """The matrix-product scores of a batch of queries are PyKEEN's score_t / score_h."""
    pytest.importorskip("pykeen")
    tensor, _ = _tiny_tensor()
    model = kge_peers.KGEmbeddingPeer(name, embedding_dim=6, num_epochs=3, batch_size=8,
                                      random_state=0).fit(tensor)
    a, r = np.array([0, 3, 7, 11, 3]), np.array([0, 1, 1, 0, 0])
    for axis in ("tail", "head"):
        np.testing.assert_allclose(model._score_rows(a, r, axis),
                                   model._pykeen_rows(a, r, axis), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(model.score_tails_batch(a, r)[1], model.score_tails(3, 1),
                               rtol=1e-5, atol=1e-5)


def test_on_batch_stops_training_and_scores():
    pytest.importorskip("pykeen")
    tensor, _ = _tiny_tensor()
    seen = []

    def on_batch(peer):
        assert peer.model_.training
        seen.append((peer.n_batches_, peer.score_tails_batch([0], [0]).shape))
        assert peer.model_.training          # back in training mode after scoring
        return peer.n_batches_ >= 5

    model = kge_peers.KGEmbeddingPeer("TuckER", embedding_dim=4, num_epochs=100,
                                      batch_size=8, random_state=0)
    model.fit(tensor, on_batch=on_batch)
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5]
    assert seen[0][1] == (1, tensor.n_entities)
    assert model.stopped_early_ and model.n_batches_ == 5
    assert model.epochs_ == pytest.approx(5 / 3)        # 24 triples, batches of 8
    assert len(model.losses_) == 1 and not model.model_.training
