"""Knowledge-graph embedding peers of BPBFM from PyKEEN: RESCAL, DistMult, ComplEx,
RotatE, TuckER.

:class:`KGEmbeddingPeer` wraps a PyKEEN model (Ali et al., "PyKEEN 1.0", JMLR 2021) as a
tensor model with the verbs of :class:`~topiclink.estimators.capabilities.EntityFactorsMixin`
(``predict_proba``, ``score_tails``, ``score_heads``), so that the BPBFM protocols
(:mod:`topiclink_reproductions.bpbfm`) evaluate it exactly as BPBFM.  It lives beside the
protocols, as the tomotopy peer lives in :mod:`topiclink_reproductions.slda`.

PyKEEN (and torch) are optional: ``pip install "topiclink[bench]"``.  Nothing here imports
them at module import time; :func:`register_pykeen_peers` registers the runner names
``RESCAL``, ``DistMult``, ``ComplEx``, ``RotatE`` and ``TuckER`` only where PyKEEN is
installed (it looks for the package without importing it).

Training (one choice for the five models, after PyKEEN's documentation and the
benchmarking study behind it, Ali et al. 2021, "Bringing light into the dark", TPAMI):
the stochastic local closed world assumption (sLCWA, PyKEEN's default training loop) with
uniform head-or-tail corruption, the pointwise logistic loss (``BCEWithLogitsLoss``,
which makes ``sigmoid(score)`` the model's probability of a triple; ComplEx's own
softplus loss is the same loss written with labels +-1; RotatE: its own self-adversarial
negative sampling loss, ``NSSALoss``, Sun et al. 2019) and Adam.  Negatives that are
training triples are filtered out (exactly, not by PyKEEN's Bloom filter).  Held-out
entries (``tensor.missing``) are by default *not* filtered: in the kg protocol they are
exactly the valid and test triples, and never sampling them as negatives tells an SGD
model with many negatives where the answers are (Nations, RESCAL: filtered MRR 0.92
with ``exclude_missing=True``, far above BPBFM's 0.73 and the published values).
PyKEEN's LCWA (1-N scoring) is not used: it labels every unlisted tail of a seen (head,
relation) pair a negative.

``fit(tensor, on_batch=f)`` calls ``f(peer)`` after every optimiser step, with ``model_``
the model being trained and ``n_batches_`` the steps taken; ``f`` may score with the peer
(``score_tails_batch``, ...: the model is put in evaluation mode for it and back in
training mode after) and returns True to stop training there (a wall-time budget:
``benchmarks/kg_fb15k237_vs_pykeen.py``).
"""

from __future__ import annotations

import gc
import importlib.util
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.exceptions import NotFittedError

from topiclink.data.checks import DataError, check_memory
from topiclink.data.tensor import RelationalTensor
from topiclink.estimators.capabilities import EntityFactorsMixin
from topiclink.execution import resolve_n_jobs

__all__ = ["KGEmbeddingPeer", "PEER_MODELS", "PEER_DEFAULTS", "pykeen_available",
           "register_pykeen_peers"]

#: the PyKEEN models wrapped (runner names = PyKEEN names)
PEER_MODELS = ("RESCAL", "DistMult", "ComplEx", "RotatE", "TuckER")

#: Per-model defaults for the small benchmark tensors (UMLS: 135 entities x 46 relations,
#: Nations: 14 x 55).  RESCAL: rank 20, in the range Nickel et al. (2011) and the BPBFM
#: paper use on these data (10-50; R d^2 + N d parameters); DistMult: d = 100 (Yang et al.
#: 2015); ComplEx: d = 100 complex numbers (200 real; Trouillon et al. 2016 use 100-200).
#: All: Adam with learning rate 0.01, an L2 penalty of 1e-3 on the embeddings used in a
#: batch, Xavier-uniform initialisation (PyKEEN's reproduction of Trouillon et al.; with
#: ComplEx's own N(0, 1) start and 1e-5 it overfits Nations: held-out AUC-ROC 0.71 against
#: 0.95), 200 epochs of batches of 512 with 10 negatives per positive.  RotatE (Sun et al.
#: 2019): d = 100 complex numbers, its self-adversarial loss (margin 9, temperature 1, the
#: paper's FB15k-237 setting), PyKEEN's initialisation (unit-modulus relations), no L2
#: penalty.  TuckER (Balazevic et al. 2019): d_e = d_r = 32, PyKEEN's initialisation,
#: dropout and batch normalisation, the logistic loss, no L2 penalty.
PEER_DEFAULTS: dict[str, dict[str, Any]] = {
    "RESCAL": {"embedding_dim": 20, "learning_rate": 0.01, "regularization": 1e-3},
    "DistMult": {"embedding_dim": 100, "learning_rate": 0.01, "regularization": 1e-3},
    "ComplEx": {"embedding_dim": 100, "learning_rate": 0.01, "regularization": 1e-3},
    "RotatE": {"embedding_dim": 100, "learning_rate": 0.01, "regularization": 0.0,
               "loss": "NSSALoss", "loss_kwargs": {"margin": 9.0,
                                                   "adversarial_temperature": 1.0}},
    "TuckER": {"embedding_dim": 32, "learning_rate": 0.01, "regularization": 0.0},
}
#: the models initialised Xavier-uniform and penalised by ``LpRegularizer`` here (RotatE
#: and TuckER keep PyKEEN's own initialisation: unit-modulus relations, TuckER's core)
_XAVIER_L2 = ("RESCAL", "DistMult", "ComplEx")

_INSTALL = 'pip install "topiclink[bench]"'


def pykeen_available() -> bool:
    """Whether PyKEEN is installed (found without importing it, nor torch)."""
    return importlib.util.find_spec("pykeen") is not None


def _import_pykeen() -> Any:
    try:
        import pykeen
        import torch  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"the PyKEEN peers ({', '.join(PEER_MODELS)}) need PyKEEN and "
                          f"torch: {_INSTALL} ({exc})") from exc
    return pykeen


class KGEmbeddingPeer(EntityFactorsMixin):
    """A PyKEEN knowledge-graph embedding model trained on a tensor's triples.

    Parameters
    ----------
    model : "RESCAL", "DistMult", "ComplEx", "RotatE" or "TuckER"
    embedding_dim : int or None
        d (ComplEx, RotatE: complex dimensions, 2 d real numbers; TuckER: d_e = d_r = d).
        None: ``PEER_DEFAULTS``.
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
        embeddings used in each batch (RESCAL, DistMult, ComplEx; 0: none).  None:
        ``PEER_DEFAULTS``.
    loss : str or None
        PyKEEN's loss name.  None: ``PEER_DEFAULTS`` (RotatE: ``NSSALoss``), else
        ``BCEWithLogitsLoss``.
    loss_kwargs : dict or None
        The loss's parameters.  None: ``PEER_DEFAULTS`` (RotatE: margin 9, temperature 1).
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
    fit_started_ : ``time.perf_counter()`` at the start of the training loop (set before
        the first ``on_batch``: a callback measures the training time with it)
    n_parameters_ : real numbers in the torch model (a complex parameter counts twice)
    losses_ : the training loss of every epoch (completed; a partial last epoch is not
        in it)
    n_batches_ : optimiser steps taken
    epochs_ : epochs taken, fractional (``n_batches_`` over the batches of an epoch)
    stopped_early_ : ``on_batch`` stopped the training
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("tensor",)
    _PARAMS: ClassVar[tuple[str, ...]] = (
        "model", "embedding_dim", "num_epochs", "learning_rate", "batch_size",
        "num_negatives", "exclude_missing", "regularization", "loss", "loss_kwargs", "n_jobs",
        "random_state", "verbose")

    def __init__(self, model: str = "DistMult", *, embedding_dim: int | None = None,
                 num_epochs: int = 200, learning_rate: float | None = None,
                 batch_size: int = 512, num_negatives: int = 10,
                 exclude_missing: bool = False,
                 regularization: float | None = None, loss: str | None = None,
                 loss_kwargs: dict[str, Any] | None = None, n_jobs: int | None = 1,
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
        self.loss = loss
        self.loss_kwargs = loss_kwargs
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {p: getattr(self, p) for p in self._PARAMS}

    def __repr__(self) -> str:
        args = ", ".join(f"{p}={getattr(self, p)!r}" for p in self._PARAMS)
        return f"{type(self).__name__}({args})"

    # ------------------------------------------------------------------ helpers
    _FALLBACK: ClassVar[dict[str, Any]] = {"loss": "BCEWithLogitsLoss", "loss_kwargs": {},
                                           "regularization": 0.0}

    def _setting(self, name: str) -> Any:
        value = getattr(self, name)
        if value is not None:
            return value
        return PEER_DEFAULTS[self.model].get(name, self._FALLBACK.get(name))

    def _threads(self) -> int:
        return resolve_n_jobs(self.n_jobs)

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit "
                                 "first")

    def _run(self, fn: Any) -> Any:
        """``fn()`` with ``n_jobs`` torch threads, gradients off and the model in
        evaluation mode (no dropout, batch normalisation from its running statistics;
        put back in training mode after when called during ``fit``)."""
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(self._threads())
        training = bool(self.model_.training)
        self.model_.eval()
        try:
            with torch.inference_mode():
                return fn()
        finally:
            self.model_.train(training)
            torch.set_num_threads(before)

    # ------------------------------------------------------------------ fitting
    def fit(self, tensor: RelationalTensor, *,
            on_batch: Callable[[KGEmbeddingPeer], bool] | None = None) -> KGEmbeddingPeer:
        """Train on the triples of ``tensor`` with a value > 0 (``missing`` entries are
        not positives; negatives only with ``exclude_missing=True``).  Every entity and
        relation of the tensor gets an embedding, seen in a triple or not; PyKEEN's ids
        are the tensor's ids.

        ``on_batch(self)`` runs after every optimiser step (``model_``, ``entity_names_``
        and ``relation_names_`` are set: it may score with this peer) and returns True to
        stop the training there."""
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
        self.entity_names_ = (np.asarray(tensor.entity_names, dtype=str)
                              if tensor.entity_names is not None
                              else np.arange(N).astype(str))
        self.relation_names_ = (np.asarray(tensor.relation_names, dtype=str)
                                if tensor.relation_names is not None
                                else np.arange(R).astype(str))
        before = torch.get_num_threads()
        torch.set_num_threads(self._threads())
        try:
            seed = (int(np.random.SeedSequence().entropy % 2**32) if self.random_state is None
                    else int(self.random_state) % 2**32)
            set_random_seed(seed)
            factory = CoreTriplesFactory(torch.as_tensor(triples), num_entities=N,
                                         num_relations=R)
            kwargs: dict[str, Any] = {}
            weight = float(self._setting("regularization"))
            if self.model in _XAVIER_L2:
                kwargs.update(entity_initializer="xavier_uniform_",
                              relation_initializer="xavier_uniform_")
                if weight > 0:
                    kwargs.update(regularizer=LpRegularizer, regularizer_kwargs={
                        "weight": weight, "p": 2.0, "normalize": False})
            elif weight > 0:
                raise ValueError(f"regularization: {self.model} takes no L2 penalty here "
                                 f"(got {weight})")
            model = model_resolver.make(
                self.model, triples_factory=factory,
                embedding_dim=int(self._setting("embedding_dim")),
                loss=str(self._setting("loss")),
                loss_kwargs=dict(self._setting("loss_kwargs") or {}),
                random_seed=seed, **kwargs)
            sampler = BasicNegativeSampler(
                mapped_triples=factory.mapped_triples, num_entities=N, num_relations=R,
                num_negs_per_pos=int(self.num_negatives), filterer=_known_filterer(
                    np.concatenate([triples, missing]) if self.exclude_missing else triples,
                    N, R))
            optimizer = torch.optim.Adam(model.get_grad_params(),
                                         lr=float(self._setting("learning_rate")))
            loop = SLCWATrainingLoop(model=model, triples_factory=factory,
                                     optimizer=optimizer, negative_sampler=sampler)
            watch = _BatchWatch(self, model, on_batch)
            # PyKEEN runs a full gc.collect() after every epoch (0.1-0.5 s with torch and
            # numba loaded, more than the epoch itself here): freezing the objects that
            # exist now leaves it only the epoch's garbage
            gc.freeze()
            t0 = time.perf_counter()
            self.fit_started_ = t0
            try:
                losses = loop.train(triples_factory=factory, num_epochs=int(self.num_epochs),
                                    batch_size=int(self.batch_size),
                                    use_tqdm=bool(self.verbose), use_tqdm_batch=False,
                                    drop_last=False, pin_memory=False,
                                    callbacks=watch.callback())
            except _StopTraining:
                losses = watch.epoch_losses
            self.fit_seconds_ = time.perf_counter() - t0
        finally:
            gc.unfreeze()
            torch.set_num_threads(before)
        model.eval()
        self.model_ = model
        self.losses_ = np.asarray(losses, dtype=np.float64)
        self.n_batches_ = watch.n_batches
        per_epoch = max(1, -(-int(triples.shape[0]) // int(self.batch_size)))
        self.epochs_ = watch.n_batches / per_epoch
        self.stopped_early_ = watch.stopped
        self.n_parameters_ = int(sum(p.numel() * (2 if p.is_complex() else 1)
                                     for p in model.parameters()))
        self._set_embedding()
        self.n_iter_ = len(self.losses_)
        return self

    def _set_embedding(self) -> None:
        import torch

        N = self.entity_names_.size
        with torch.no_grad():
            emb = self.model_.entity_representations[0](indices=None).detach()
        emb = torch.view_as_real(emb).reshape(N, -1) if emb.is_complex() else emb
        self.embedding_ = emb.reshape(N, -1).numpy().astype(np.float64)

    def snapshot_weights(self) -> dict[str, Any]:
        """A copy of the model's weights (its ``state_dict``, every tensor cloned), also
        during ``fit`` (from ``on_batch``); :meth:`restore_weights` puts them back (early
        stopping on a validation metric keeps the best epoch's weights so)."""
        if not hasattr(self, "model_"):
            raise NotFittedError(f"this {type(self).__name__} has no model yet")
        return {k: v.detach().clone() for k, v in self.model_.state_dict().items()}

    def restore_weights(self, weights: dict[str, Any]) -> KGEmbeddingPeer:
        """Load weights from :meth:`snapshot_weights` into the trained model (left in
        evaluation mode; ``embedding_`` follows)."""
        self._check_fitted()
        self.model_.load_state_dict(weights)
        self.model_.eval()
        self._set_embedding()
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

    def _check_batch_memory(self, call: str, n: int) -> None:
        """The mixin's check of a batch's scores, sized by the entity names:
        ``embedding_`` is set only when ``fit`` ends, and an ``on_batch`` callback scores
        during ``fit``."""
        N = np.asarray(self.entity_names_).size
        check_memory(16.0 * n * N, f"{call}: {n} queries x {N} entities",
                     "score fewer queries at a time")

    def _score_rows(self, a: np.ndarray, r: np.ndarray, axis: str) -> np.ndarray:
        """Raw scores of every entity for a batch of queries, (n, N) float64: by matrix
        products of the model's representations (:func:`_linear_scores`; PyKEEN's own
        ``score_t`` / ``score_h`` broadcast an (n, N, d) array: 10-40x slower on
        FB15k-237), the same scores up to rounding."""
        a = np.asarray(a, dtype=np.int64)
        r = np.asarray(r, dtype=np.int64)
        if a.size == 0:
            return np.zeros((0, self.entity_names_.size))
        out = self._run(lambda: _linear_scores(self.model, self.model_, a, r, axis))
        return out.reshape(a.size, -1).double().numpy()

    def _pykeen_rows(self, a: np.ndarray, r: np.ndarray, axis: str) -> np.ndarray:
        """The same scores by PyKEEN's ``score_t`` / ``score_h`` (the reference)."""
        import torch

        if axis == "tail":
            batch = torch.as_tensor(np.column_stack([a, r]).astype(np.int64))
            out = self._run(lambda: self.model_.score_t(batch))
        else:
            batch = torch.as_tensor(np.column_stack([r, a]).astype(np.int64))
            out = self._run(lambda: self.model_.score_h(batch))
        return out.reshape(len(a), -1).double().numpy()


def _linear_scores(name: str, model: Any, a: np.ndarray, r: np.ndarray, axis: str) -> Any:
    """Scores (n, N) of every candidate entity for the queries (``a[i]``, ``r[i]``) (``a``
    the head for ``axis="tail"``, else the tail), in float64, from the representations of
    a PyKEEN model in evaluation mode.  Each interaction is linear in the candidate's
    embedding (TuckER: in its batch-normalised embedding; RotatE: its squared distance
    ``|h r|^2 + |t|^2 - 2 Re(h r conj(t))``, expanded), so a query is one vector and the
    block one matrix product.  The formulas are PyKEEN's interactions (``pykeen.nn.
    modules``: DistMult, ComplEx, RESCAL ``h^T M_r t``, RotatE ``-|h r - t|_2``, TuckER
    ``bn1(bn0(h) x_1 (W x_2 r)) . t``)."""
    import torch

    ai, ri = torch.as_tensor(a), torch.as_tensor(r)
    E = model.entity_representations[0](indices=None).detach()
    A = model.entity_representations[0](indices=ai).detach()
    Rr = model.relation_representations[0](indices=ri).detach()
    if E.is_complex():
        E, A, Rr = E.to(torch.complex128), A.to(torch.complex128), Rr.to(torch.complex128)
    else:
        E, A, Rr = E.double(), A.double(), Rr.double()
    tail = axis == "tail"
    if name == "DistMult":
        return (A * Rr) @ E.T
    if name == "ComplEx":      # Re(sum h r conj(t))
        return torch.real((A * Rr) @ E.conj().T if tail else (Rr * A.conj()) @ E.T)
    if name == "RESCAL":       # h^T M_r t
        q = (torch.einsum("nd,nde->ne", A, Rr) if tail
             else torch.einsum("nde,ne->nd", Rr, A))
        return q @ E.T
    if name == "RotatE":       # -|h r - t|_2
        E2 = (E.abs() ** 2)
        if tail:
            hr = A * Rr
            d2 = ((hr.abs() ** 2).sum(-1, keepdim=True) + E2.sum(-1)[None, :]
                  - 2 * torch.real(hr @ E.conj().T))
        else:
            d2 = (E2 @ (Rr.abs() ** 2).T).T + (A.abs() ** 2).sum(-1, keepdim=True) \
                - 2 * torch.real((Rr * A.conj()) @ E.T)
        return -torch.sqrt(torch.clamp(d2, min=0.0))
    if name == "TuckER":
        inter = model.interaction
        W = torch.einsum("ijk,nj->nik", inter.core_tensor.detach().double(), Rr)

        def bn_affine(bn: Any, d: int) -> tuple[Any, Any]:
            """y = x s + c of a batch norm in evaluation mode (identity without one)."""
            if bn is None:
                return torch.ones(d, dtype=torch.float64), torch.zeros(d, dtype=torch.float64)
            s = bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + bn.eps)
            return s, bn.bias.detach().double() - bn.running_mean.double() * s

        s0, c0 = bn_affine(inter.head_batch_norm, E.shape[1])
        s1, c1 = bn_affine(inter.head_relation_batch_norm, E.shape[1])
        if tail:
            x = torch.einsum("nik,ni->nk", W, A * s0 + c0) * s1 + c1
            return x @ E.T
        q = torch.einsum("nik,nk->ni", W, A * s1)
        return q @ (E * s0 + c0).T + (A * c1).sum(-1, keepdim=True)
    raise ValueError(f"no scoring for {name!r}")


class _StopTraining(Exception):  # noqa: N818 (a signal, not an error)
    """Raised by :class:`_BatchWatch` to leave PyKEEN's training loop mid-epoch."""


class _BatchWatch:
    """Counts optimiser steps and epoch losses and calls ``on_batch(peer)`` after every
    step (a PyKEEN ``TrainingCallback`` made by :meth:`callback`)."""

    def __init__(self, peer: KGEmbeddingPeer, model: Any,
                 on_batch: Callable[[KGEmbeddingPeer], bool] | None) -> None:
        self.peer, self.model, self.on_batch = peer, model, on_batch
        self.n_batches = 0
        self.epoch_losses: list[float] = []
        self.stopped = False

    def callback(self) -> Any:
        from pykeen.training.callbacks import TrainingCallback

        watch = self

        class Watch(TrainingCallback):
            # PyKEEN steps the optimiser in a callback registered after the user's, so
            # the step of batch b is taken after ``post_batch`` of b and before
            # ``pre_batch`` of b + 1: ``on_batch`` runs there
            def post_batch(self, epoch: int, batch: Any, **kwargs: Any) -> None:
                watch.n_batches += 1

            def pre_batch(self, **kwargs: Any) -> None:
                if watch.on_batch is None or watch.n_batches == 0:
                    return
                watch.peer.model_ = watch.model
                watch.peer.n_batches_ = watch.n_batches
                if watch.on_batch(watch.peer):
                    watch.stopped = True
                    raise _StopTraining

            def post_epoch(self, epoch: int, epoch_loss: float, **kwargs: Any) -> None:
                watch.epoch_losses.append(float(epoch_loss))

        return Watch()


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
