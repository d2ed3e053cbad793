"""Knowledge-graph embedding peers of BPBFM from PyKEEN: RESCAL, DistMult, ComplEx.

:class:`KGEmbeddingPeer` wraps a PyKEEN model (Ali et al., "PyKEEN 1.0", JMLR 2021) as a
tensor model with the verbs of :class:`~topiclink.models.capabilities.EntityFactorsMixin`
(``predict_proba``, ``score_tails``, ``score_heads``), so that the BPBFM protocols
(:mod:`topiclink.experiments.bpbfm`) evaluate it exactly as BPBFM.  It lives beside the
protocols, as the tomotopy peer lives in :mod:`topiclink.experiments.slda`.

PyKEEN (and torch) are optional: ``pip install "topiclink[bench]"``.  Nothing here imports
them at module import time; :func:`register_pykeen_peers` registers the runner names
``RESCAL``, ``DistMult`` and ``ComplEx`` only where PyKEEN is installed (it looks for the
package without importing it).

Training (one choice for the three models, after PyKEEN's documentation and the
benchmarking study behind it, Ali et al. 2021, "Bringing light into the dark", TPAMI):
the stochastic local closed world assumption (sLCWA, PyKEEN's default training loop) with
uniform head-or-tail corruption, the pointwise logistic loss (``BCEWithLogitsLoss``,
which makes ``sigmoid(score)`` the model's probability of a triple; ComplEx's own
softplus loss is the same loss written with labels +-1) and Adam.  Negatives that are
training triples are filtered out (exactly, not by PyKEEN's Bloom filter).  Held-out
entries (``tensor.missing``) are by default *not* filtered: in the kg protocol they are
exactly the valid and test triples, and never sampling them as negatives tells an SGD
model with many negatives where the answers are (Nations, RESCAL: filtered MRR 0.92
with ``exclude_missing=True``, far above BPBFM's 0.73 and the published values).
PyKEEN's LCWA (1-N scoring) is not used: it labels every unlisted tail of a seen (head,
relation) pair a negative.
"""

from __future__ import annotations

import gc
import importlib.util
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.exceptions import NotFittedError

from topiclink.data.checks import DataError
from topiclink.data.tensor import RelationalTensor
from topiclink.execution import resolve_n_jobs
from topiclink.models.capabilities import EntityFactorsMixin

__all__ = ["KGEmbeddingPeer", "PEER_MODELS", "PEER_DEFAULTS", "pykeen_available",
           "register_pykeen_peers"]

#: the PyKEEN models wrapped (runner names = PyKEEN names)
PEER_MODELS = ("RESCAL", "DistMult", "ComplEx")

#: Per-model defaults for the small benchmark tensors (UMLS: 135 entities x 46 relations,
#: Nations: 14 x 55).  RESCAL: rank 20, in the range Nickel et al. (2011) and the BPBFM
#: paper use on these data (10-50; R d^2 + N d parameters); DistMult: d = 100 (Yang et al.
#: 2015); ComplEx: d = 100 complex numbers (200 real; Trouillon et al. 2016 use 100-200).
#: All: Adam with learning rate 0.01, an L2 penalty of 1e-3 on the embeddings used in a
#: batch, Xavier-uniform initialisation (PyKEEN's reproduction of Trouillon et al.; with
#: ComplEx's own N(0, 1) start and 1e-5 it overfits Nations: held-out AUC-ROC 0.71 against
#: 0.95), 200 epochs of batches of 512 with 10 negatives per positive.
PEER_DEFAULTS: dict[str, dict[str, Any]] = {
    "RESCAL": {"embedding_dim": 20, "learning_rate": 0.01, "regularization": 1e-3},
    "DistMult": {"embedding_dim": 100, "learning_rate": 0.01, "regularization": 1e-3},
    "ComplEx": {"embedding_dim": 100, "learning_rate": 0.01, "regularization": 1e-3},
}

_INSTALL = 'pip install "topiclink[bench]"'


def pykeen_available() -> bool:
    """Whether PyKEEN is installed (found without importing it, nor torch)."""
    return importlib.util.find_spec("pykeen") is not None


def _import_pykeen() -> Any:
    try:
        import pykeen
        import torch  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"the PyKEEN peers (RESCAL, DistMult, ComplEx) need PyKEEN and "
                          f"torch: {_INSTALL} ({exc})") from exc
    return pykeen


class KGEmbeddingPeer(EntityFactorsMixin):
    """A PyKEEN knowledge-graph embedding model trained on a tensor's triples.

    Parameters
    ----------
    model : "RESCAL", "DistMult" or "ComplEx"
    embedding_dim : int or None
        d (ComplEx: complex dimensions, 2 d real numbers).  None: ``PEER_DEFAULTS``.
    num_epochs : int, default 200
    learning_rate : float or None
        Adam's step size.  None: ``PEER_DEFAULTS``.
    batch_size : int, default 512
    num_negatives : int, default 10
        Corrupted triples per positive (sLCWA), head or tail uniformly; negatives that are
        a training triple are dropped.
    exclude_missing : bool, default False
        Also drop negatives that are held-out entries (``tensor.missing``).  Only fair
        where the held-out entries do not depend on their values (the paper protocol's
        random cells); in the kg protocol they are the test triples (module docstring).
    regularization : float or None
        Weight of PyKEEN's L2 penalty (``LpRegularizer``, not normalised) on the
        embeddings used in each batch.  None: ``PEER_DEFAULTS``.
    n_jobs : int or None, default 1
        torch threads during ``fit`` and scoring (-1: all cores, -k: all but k - 1).
        1, like BPBFM in the protocols, so that timings compare models, not threads.
    random_state : int or None
        Seeds torch, numpy and Python (``pykeen.utils.set_random_seed``) before building
        and training the model.
    verbose : bool, default False
        Show PyKEEN's progress bars.

    Attributes
    ----------
    model_ : the trained ``pykeen.models.Model`` (on the CPU)
    embedding_ : (N, d) entity embeddings (ComplEx: (N, 2d), real and imaginary parts)
    entity_names_, relation_names_ : ndarray of str (the tensor's numbering: the PyKEEN
        ids are the tensor's ids)
    fit_seconds_ : wall time of the training loop (building the model and factory excluded)
    n_parameters_ : real numbers in the torch model (a complex parameter counts twice)
    losses_ : the training loss of every epoch
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("tensor",)
    _PARAMS: ClassVar[tuple[str, ...]] = (
        "model", "embedding_dim", "num_epochs", "learning_rate", "batch_size",
        "num_negatives", "exclude_missing", "regularization", "n_jobs", "random_state", "verbose")

    def __init__(self, model: str = "DistMult", *, embedding_dim: int | None = None,
                 num_epochs: int = 200, learning_rate: float | None = None,
                 batch_size: int = 512, num_negatives: int = 10,
                 exclude_missing: bool = False,
                 regularization: float | None = None, n_jobs: int | None = 1,
                 random_state: int | None = None, verbose: bool = False) -> None:
        if model not in PEER_MODELS:
            raise ValueError(f"model must be one of {', '.join(PEER_MODELS)}, got {model!r}")
        _import_pykeen()
        self.model = model
        self.embedding_dim = embedding_dim
        self.num_epochs = num_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.num_negatives = num_negatives
        self.exclude_missing = exclude_missing
        self.regularization = regularization
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {p: getattr(self, p) for p in self._PARAMS}

    def __repr__(self) -> str:
        args = ", ".join(f"{p}={getattr(self, p)!r}" for p in self._PARAMS)
        return f"{type(self).__name__}({args})"

    # ------------------------------------------------------------------ helpers
    def _setting(self, name: str) -> Any:
        value = getattr(self, name)
        return PEER_DEFAULTS[self.model][name] if value is None else value

    def _threads(self) -> int:
        return resolve_n_jobs(self.n_jobs)

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit "
                                 "first")

    def _run(self, fn: Any) -> Any:
        """``fn()`` with ``n_jobs`` torch threads and gradients off (prediction)."""
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(self._threads())
        try:
            with torch.inference_mode():
                return fn()
        finally:
            torch.set_num_threads(before)

    # ------------------------------------------------------------------ fitting
    def fit(self, tensor: RelationalTensor) -> KGEmbeddingPeer:
        """Train on the triples of ``tensor`` with a value > 0 (``missing`` entries are
        not positives; negatives only with ``exclude_missing=True``).  Every entity and
        relation of the tensor gets an embedding, seen in a triple or not; PyKEEN's ids
        are the tensor's ids."""
        _import_pykeen()
        import torch
        from pykeen.models import model_resolver
        from pykeen.regularizers import LpRegularizer
        from pykeen.sampling import BasicNegativeSampler
        from pykeen.training import SLCWATrainingLoop
        from pykeen.triples import CoreTriplesFactory
        from pykeen.utils import set_random_seed

        if not isinstance(tensor, RelationalTensor):
            raise TypeError(f"fit: expected a RelationalTensor, got {type(tensor).__name__}")
        keep = np.asarray(tensor.values) > 0
        if not keep.any():
            raise DataError("fit: the tensor has no nonzero entry (empty tensor)")
        N, R = int(tensor.n_entities), int(tensor.n_relations)
        triples = np.column_stack([tensor.heads[keep], tensor.relations[keep],
                                   tensor.tails[keep]]).astype(np.int64)
        missing = np.asarray(tensor.missing, dtype=np.int64).reshape(-1, 3)
        before = torch.get_num_threads()
        torch.set_num_threads(self._threads())
        try:
            seed = (int(np.random.SeedSequence().entropy % 2**32) if self.random_state is None
                    else int(self.random_state) % 2**32)
            set_random_seed(seed)
            factory = CoreTriplesFactory(torch.as_tensor(triples), num_entities=N,
                                         num_relations=R)
            model = model_resolver.make(
                self.model, triples_factory=factory,
                embedding_dim=int(self._setting("embedding_dim")),
                entity_initializer="xavier_uniform_", relation_initializer="xavier_uniform_",
                loss="BCEWithLogitsLoss",
                regularizer=LpRegularizer,
                regularizer_kwargs={"weight": float(self._setting("regularization")), "p": 2.0,
                                    "normalize": False},
                random_seed=seed)
            sampler = BasicNegativeSampler(
                mapped_triples=factory.mapped_triples, num_entities=N, num_relations=R,
                num_negs_per_pos=int(self.num_negatives), filterer=_known_filterer(
                    np.concatenate([triples, missing]) if self.exclude_missing else triples,
                    N, R))
            optimizer = torch.optim.Adam(model.get_grad_params(),
                                         lr=float(self._setting("learning_rate")))
            loop = SLCWATrainingLoop(model=model, triples_factory=factory,
                                     optimizer=optimizer, negative_sampler=sampler)
            # PyKEEN runs a full gc.collect() after every epoch (0.1-0.5 s with torch and
            # numba loaded, more than the epoch itself here): freezing the objects that
            # exist now leaves it only the epoch's garbage
            gc.freeze()
            t0 = time.perf_counter()
            losses = loop.train(triples_factory=factory, num_epochs=int(self.num_epochs),
                                batch_size=int(self.batch_size), use_tqdm=bool(self.verbose),
                                use_tqdm_batch=False, drop_last=False, pin_memory=False)
            self.fit_seconds_ = time.perf_counter() - t0
        finally:
            gc.unfreeze()
            torch.set_num_threads(before)
        model.eval()
        self.model_ = model
        self.losses_ = np.asarray(losses, dtype=np.float64)
        self.n_parameters_ = int(sum(p.numel() * (2 if p.is_complex() else 1)
                                     for p in model.parameters()))
        self.entity_names_ = (np.asarray(tensor.entity_names, dtype=str)
                              if tensor.entity_names is not None
                              else np.arange(N).astype(str))
        self.relation_names_ = (np.asarray(tensor.relation_names, dtype=str)
                                if tensor.relation_names is not None
                                else np.arange(R).astype(str))
        emb = model.entity_representations[0](indices=None).detach()
        emb = torch.view_as_real(emb).reshape(N, -1) if emb.is_complex() else emb
        self.embedding_ = emb.reshape(N, -1).numpy().astype(np.float64)
        self.n_iter_ = int(self.num_epochs)
        return self

    # ------------------------------------------------------------------ prediction
    def decision_function(self, heads: Any, relations: Any, tails: Any) -> np.ndarray:
        """The model's raw score (a logit) of each triple."""
        self._check_fitted()
        h = self._entity_index(heads, self.entity_names_, "heads")
        r = self._entity_index(relations, self.relation_names_, "relations")
        t = self._entity_index(tails, self.entity_names_, "tails")
        if not h.size == r.size == t.size:
            raise ValueError("heads, relations and tails must have the same length")
        return self._triple_scores(h, r, t)

    def _triple_scores(self, h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        import torch

        hrt = torch.as_tensor(np.column_stack([h, r, t]).astype(np.int64))
        out = self._run(lambda: torch.cat([self.model_.score_hrt(hrt[lo:lo + 65536])
                                           for lo in range(0, max(len(hrt), 1), 65536)]
                                          if len(hrt) else [torch.zeros((0, 1))]))
        return out.reshape(-1).double().numpy()

    def _triple_proba(self, h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        """``sigmoid(score)``: the probability the logistic loss trained."""
        s = self._triple_scores(h, r, t)
        return 0.5 * (1.0 + np.tanh(0.5 * s))

    def _scores(self, h: np.ndarray | None, r: np.ndarray, t: np.ndarray | None,
                axis: str) -> np.ndarray:
        """Raw scores (logits) of every entity: ``score_t`` / ``score_h`` of PyKEEN."""
        import torch

        if axis == "tail":
            batch = torch.as_tensor([[int(h[0]), int(r[0])]])  # type: ignore[index]
            out = self._run(lambda: self.model_.score_t(batch))
        else:
            batch = torch.as_tensor([[int(r[0]), int(t[0])]])  # type: ignore[index]
            out = self._run(lambda: self.model_.score_h(batch))
        return out.reshape(-1).double().numpy()


def _known_filterer(known: np.ndarray, n_entities: int, n_relations: int) -> Any:
    """A PyKEEN negative-sample filterer that drops exactly the ``known`` (m, 3) entries
    (sorted integer keys and ``torch.isin``: no false positives, unlike the Bloom
    filter)."""
    import torch
    from pykeen.sampling.filtering import Filterer

    N = int(n_entities)

    def keys(x: torch.Tensor) -> torch.Tensor:
        return (x[..., 1] * N + x[..., 0]) * N + x[..., 2]

    class KnownFilterer(Filterer):
        def __init__(self) -> None:
            super().__init__()
            arr = torch.as_tensor(np.asarray(known, dtype=np.int64).reshape(-1, 3))
            self.register_buffer("known_keys", torch.unique(keys(arr)))

        def contains(self, batch: torch.Tensor) -> torch.Tensor:
            return torch.isin(keys(batch), self.known_keys)

    return KnownFilterer()


# ---------------------------------------------------------------------- the runner
def _factory(name: str) -> Any:
    def build(**params: Any) -> KGEmbeddingPeer:
        return KGEmbeddingPeer(name, **params)

    build.__name__ = build.__qualname__ = f"build_{name}"
    return build


def register_pykeen_peers(names: Sequence[str] = PEER_MODELS) -> list[str]:
    """Register the PyKEEN peers as runner models (``fit(tensor)``, the K of a protocol
    as ``embedding_dim``) where PyKEEN is installed; returns the names registered (none
    without PyKEEN).  Imports neither PyKEEN nor torch; calling it twice is harmless."""
    from topiclink.experiments.runner import register_model

    if not pykeen_available():
        return []
    out = []
    for name in names:
        if name not in PEER_MODELS:
            raise ValueError(f"unknown PyKEEN peer {name!r}; known: {', '.join(PEER_MODELS)}")
        register_model(name, _FACTORIES[name],
                       params=[p for p in KGEmbeddingPeer._PARAMS if p != "model"],
                       fit_requires=("tensor",))
        out.append(name)
    return out


_FACTORIES = {name: _factory(name) for name in PEER_MODELS}
