"""BPBFM-1 with observable patterns, fitted by MAP-EM
(:class:`PatternPoissonFactorModel`; the algorithm is
:mod:`topiclink.families.bpbfm.em_patterns`, the patterns
:mod:`topiclink.families.bpbfm.patterns`)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import POSITIVE, Integer, Options
from topiclink.data.tensor import RelationalTensor
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.schema import ArraySpec
from topiclink.families.bpbfm import kernels
from topiclink.families.bpbfm.em_patterns import (
    BPBFMPatternsEM,
    PatternEMState,
    rule_columns,
)
from topiclink.families.bpbfm.estimator_base import (
    SAVED_ARRAYS,
    Checkpoint,
    Every,
    PoissonFactorBase,
)
from topiclink.families.bpbfm.estimator_em import BilinearPoissonFactorModelEM
from topiclink.families.bpbfm.patterns import (
    CODE_WIDTH,
    PATTERN_KINDS,
    DirectedGraph,
    rule_text,
    split_code,
)
from topiclink.inference.engine import Algorithm, State
from topiclink.random import RandomState

__all__ = ["PatternPoissonFactorModel"]

#: the arrays this model saves beyond BPBFM-1's: the pattern weights (and each restart's),
#: the patterns (relation, code, support, exposure) and the training triples they read
PATTERN_ARRAYS = ("pattern_weights_", "samples_pattern_weights_", "pattern_relations_",
                  "pattern_codes_", "pattern_support_", "pattern_exposure_",
                  "train_triples_")


class PatternPoissonFactorModel(BilinearPoissonFactorModelEM):
    """BPBFM-1 plus observable patterns (additive relational effects), fitted by MAP-EM.

    The rate of (h, r, t) is ``u_h^T Lambda^r u_t + sum_p w_rp phi_p(h, t)``: the factor
    model's plus a non-negative rate per rule of relation r that covers (h, t), the rules
    mined from the training triples (1-hop: another relation, or any relation reversed;
    2-hop: paths ``h -p-> x -q-> t``; 3-hop: walks ``h -p-> x -q-> y -s-> t``;
    :mod:`topiclink.families.bpbfm.patterns`), each weight with a ``Gamma(1,
    pattern_prior)`` prior (Nickel, Jiang & Tresp, NIPS 2014, in BPBFM's Bernoulli-Poisson
    form; :mod:`topiclink.families.bpbfm.em_patterns`).  The factors need not carry what
    the graph's own structure states: on WN18RR (K = 100, 25 iterations) the test
    filtered MRR rises from BPBFM-1-EM's 0.03 to 0.37 (1-hop rules), 0.40 (1- and 2-hop)
    and 0.46 (1-, 2- and 3-hop, the default there; ``benchmarks/kg_patterns.py``).  The pattern
    weights are rules' rates: :meth:`pattern_rules` lists them.  Scoring reads the
    training triples, which the model keeps (``train_triples_``).

    Parameters
    ----------
    n_topics : int, default 10
        K (>= 2), the number of latent factors.
    max_iter : int, default 500
        At most this many iterations per call of ``fit`` (``resume=True`` adds more).
    tol : float, default 1e-5
        Stop when the log posterior per nonzero entry changes by less than ``tol``
        relative to its value in one iteration (0: run ``max_iter``).
    binary : bool or None, default None
        True: the tensor's nonzero entries are ones (Bernoulli-Poisson link); False:
        counts; None: binary when every nonzero value is 1.
    prior_rate : float, default 5.0
        The rate b of the ``Gamma(1, b)`` prior of every entry of U and Lambda^r.
    patterns : {"auto", "paths3", "paths", "inverse", "none"}, default "auto"
        The path rules: 1-, 2- and 3-hop patterns ("paths3"), 1- and 2-hop ("paths"),
        1-hop only ("inverse"), or none; "auto" is "paths3" where the graph has
        at most :data:`~topiclink.families.bpbfm.patterns.AUTO_MAX_WALKS` 3-hop walks
        (a cost bound), "paths" beyond.  Chosen on the valid MRR averaged over UMLS,
        Nations and WN18RR (``benchmarks/results/kg_patterns.json``, K = 20 / 10 / 100,
        25 iterations): "paths3" 0.769, "paths" 0.746, "inverse" 0.684; WN18RR gains most
        (0.459 against 0.399 and 0.371).  On FB15k-237 (8.3e9 walks: "auto" is "paths")
        mining 3-hop rules took 6 CPU minutes and scoring with its 13,413 rules far
        longer than the fit.
    pattern_prior : float, default 1.0
        The rate b_w of the ``Gamma(1, b_w)`` prior of every pattern weight
        (``w <- (w S + 1e-6) / (exposure + b_w)``); chosen with ``patterns`` (0.1 to 10
        change the mean valid MRR by less than 0.002).
    min_support : int, default 2
        A rule is kept when it covers at least this many training triples of its relation.
    max_patterns : int, default 30
        At most this many rules per relation and rule length (those of highest smoothed
        confidence).
    max_constant_rules : int, default 10
        At most this many *constant rules* per relation, side and body kind (those of
        highest smoothed confidence; 0: none): rules that fix one entity, AnyBURL's
        ``r(h, c) <- d(h, e)``, ``r(h, c) <- d(h, y)`` and ``r(h, c) <- true`` and their
        head-anchored mirrors (:mod:`topiclink.families.bpbfm.patterns`).  They are
        mined whatever ``patterns`` says: ``patterns="none", max_constant_rules=0`` is
        BPBFM-1-EM.  Chosen on the valid MRR averaged over UMLS, Nations and WN18RR
        (``benchmarks/results/kg_patterns.json``, with "paths3"): 0 0.769, 10 0.772,
        30 0.772, 100 0.768.  Graphs whose relations single out a few entities gain
        more from more: FB15k-237 (K = 100, 25 iterations, "paths") 0.251 without,
        0.291 with 30 and 0.301 with 100 (``kg_patterns_fb15k237_constants.json``);
        choose it on the validation triples (``topiclink select-kg --constant-rules``).
    n_chains : int, default 1
        Restarts, pooled as :class:`~topiclink.families.bpbfm.estimator_em.
        BilinearPoissonFactorModelEM`'s (the rules are the same for every restart, their
        weights each restart's).
    random_state, verbose, callbacks : as every estimator

    Attributes
    ----------
    embedding_, relation_matrices_, factor_weights_, n_active_factors_,
    samples_embedding_, samples_relation_matrices_, entity_names_, relation_names_ : as
        :class:`~topiclink.families.bpbfm.estimator_em.BilinearPoissonFactorModelEM`'s
    pattern_weights_ : (P,) each rule's rate w_rp (restart 0's)
    samples_pattern_weights_ : (S, P) each restart's
    pattern_relations_ : (P,) each rule's relation (sorted)
    pattern_codes_ : (P, 6) each rule's directed relations ``(d1, d2, d3)`` (d < R
        relation d, d >= R relation d - R reversed; -1 past a rule's last hop), then a
        constant rule's side (0: the tail fixed, 1: the head), fixed entity and body end
        (-1 for path rules; :func:`~topiclink.families.bpbfm.patterns.split_code`)
    pattern_support_, pattern_exposure_ : (P,) the training triples of its relation and
        the cells ``(h, t)``, ``h != t``, each rule covers
    train_triples_ : (T, 3) the training triples (head, relation, tail) the rules read
    n_parameters_ : R K^2 + N K + P
    trace_, state_ : as BilinearPoissonFactorModelEM's (``state_``: PatternEMState)
    """

    cli_name: ClassVar[str] = "bpbfm-patterns"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {"n_chains": ("--chains",)}
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"BPBFM-PAT-EM": {}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **BilinearPoissonFactorModelEM._parameter_constraints,
        "patterns": [Options(*PATTERN_KINDS)], "pattern_prior": POSITIVE,
        "min_support": [Integer(1)], "max_patterns": [Integer(1)],
        "max_constant_rules": [Integer(0)]}
    _saved_arrays: ClassVar[tuple[str, ...]] = (*SAVED_ARRAYS, *PATTERN_ARRAYS)
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **PoissonFactorBase._array_specs,
        "pattern_weights_": ArraySpec(("P",), "f", "nonnegative"),
        "samples_pattern_weights_": ArraySpec(("S", "P"), "f", "nonnegative"),
        "pattern_relations_": ArraySpec(("P",), "i", "nonnegative"),
        "pattern_codes_": ArraySpec(("P", CODE_WIDTH), "i", None),
        "pattern_support_": ArraySpec(("P",), "i", "nonnegative"),
        "pattern_exposure_": ArraySpec(("P",), "i", "nonnegative"),
        "train_triples_": ArraySpec(("T", 3), "i", "nonnegative"),
    }
    _state_class = PatternEMState

    patterns: str
    pattern_prior: float
    min_support: int
    max_patterns: int
    max_constant_rules: int

    def __init__(self, n_topics: int = 10, *, max_iter: int = 500, tol: float = 1e-5,
                 binary: bool | None = None, prior_rate: float = 5.0,
                 patterns: str = "auto", pattern_prior: float = 1.0,
                 min_support: int = 2, max_patterns: int = 30,
                 max_constant_rules: int = 10, n_chains: int = 1,
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    def _algorithm(self) -> BPBFMPatternsEM:
        """The algorithm, handed the rules of this estimator's last fit (kept in memory,
        not saved), which it reuses on the same data and options: ``resume=True`` does
        not mine again."""
        algorithm = BPBFMPatternsEM(int(self.n_topics), float(self.prior_rate),
                                    float(self.pattern_prior), str(self.patterns),
                                    int(self.min_support), int(self.max_patterns),
                                    int(self.max_constant_rules))
        algorithm.known = self.__dict__.get("_mined")
        return algorithm

    def _tensor_memory(self, tensor: RelationalTensor) -> int:
        """BPBFM-1-EM's, plus the training triples, their graph (both directions) and
        each entry's rules (a few per entry)."""
        return self._memory(tensor, 16 * int(tensor.n_entries))

    def fit(self, tensor: RelationalTensor, *, resume: bool = False,
            checkpoint: Checkpoint = None, checkpoint_every: Every = DEFAULT_EVERY
            ) -> PatternPoissonFactorModel:
        """Fit to a :class:`~topiclink.data.tensor.RelationalTensor` (its ``missing``
        entries are held out: left out of the likelihood and of the rules).
        ``resume=True`` continues for ``max_iter`` more iterations on the same tensor;
        ``n_chains``, ``checkpoint`` and ``checkpoint_every`` as
        :meth:`BilinearPoissonFactorModelEM.fit`."""
        self._fit(tensor, resume, checkpoint, checkpoint_every)
        return self

    def _published_extras(self) -> dict[str, str]:
        return {"pattern_weights_": "W"}

    def _publish(self, state: State, algorithm: Algorithm,
                 averaged: dict[str, np.ndarray] | None, names_e: np.ndarray,
                 names_r: np.ndarray, binary: bool,
                 kept: list[dict[str, np.ndarray]]) -> None:
        found = algorithm.pattern_set                       # type: ignore[attr-defined]
        self.pattern_relations_ = found.relation.copy()
        self.pattern_codes_ = found.codes.copy()
        self.pattern_support_ = found.support.copy()
        self.pattern_exposure_ = found.exposure.copy()
        self.train_triples_ = algorithm.triples.copy()      # type: ignore[attr-defined]
        self.__dict__["_mined"] = algorithm.known           # type: ignore[attr-defined]
        self.__dict__.pop("_graph", None)
        super()._publish(state, algorithm, averaged, names_e, names_r, binary, kept)

    _pooled_samples: ClassVar[tuple[str, ...]] = (
        *BilinearPoissonFactorModelEM._pooled_samples, "samples_pattern_weights_")

    def _count_parameters(self, N: int, K: int, R: int) -> int:
        return R * K * K + N * K + int(np.size(self.pattern_weights_))

    def _summary_title(self) -> str:
        return f"BPBFM-1 + {np.size(self.pattern_weights_)} rules (MAP-EM)"

    def _after_load(self) -> None:
        super()._after_load()
        self.__dict__.pop("_graph", None)

    # ------------------------------------------------------------------ the rules
    def _the_graph(self) -> DirectedGraph:
        """The training triples' graph (built on first use; not saved)."""
        graph = self.__dict__.get("_graph")
        if graph is None:
            T = np.asarray(self.train_triples_, dtype=np.int64)
            graph = DirectedGraph(T[:, 0], T[:, 1], T[:, 2], self.embedding_.shape[0],
                                  self.relation_matrices_.shape[0])
            self.__dict__["_graph"] = graph
        return graph

    def _pattern_rates(self, h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        """(S, n): each restart's pattern rate of the triples."""
        W = np.asarray(self.samples_pattern_weights_, dtype=np.float64)
        out = np.zeros((W.shape[0], np.size(h)))
        graph = self._the_graph()
        ptr = np.searchsorted(self.pattern_relations_,
                              np.arange(self.relation_matrices_.shape[0] + 1))
        for q in np.unique(r):
            sel = np.flatnonzero(r == q)
            lo, hi = int(ptr[q]), int(ptr[q + 1])
            if hi > lo:
                codes = [tuple(int(x) for x in c) for c in self.pattern_codes_[lo:hi]]
                F = rule_columns(graph, codes, h[sel], t[sel])
                out[:, sel] += (F @ W[:, lo:hi].T).T
        return out

    def _pattern_rows(self, a: np.ndarray, r: np.ndarray, axis: str
                      ) -> list[tuple[np.ndarray, list[tuple[int, sp.csr_array]],
                                      tuple[np.ndarray, sp.csr_array, sp.csr_array]]]:
        """Per relation of the queries: (their rows, [(path rule, its 0/1 rows over every
        candidate)], (the constant rules ps, A, B): their rows ``A diag(w[ps]) B``,
        :meth:`DirectedGraph.constant_factors`); a head query (?, r, t) reads each rule
        reversed at t."""
        graph = self._the_graph()
        ptr = np.searchsorted(self.pattern_relations_,
                              np.arange(self.relation_matrices_.shape[0] + 1))
        out = []
        for q in np.unique(r):
            rows = np.flatnonzero(r == q)
            paths, constants, codes = [], [], []
            for p in range(int(ptr[q]), int(ptr[q + 1])):
                code = tuple(int(x) for x in self.pattern_codes_[p])
                if axis == "head":
                    code = graph.reverse(code)
                if split_code(code)[1] >= 0:
                    constants.append(p)
                    codes.append(code)
                else:
                    paths.append((p, graph.rows(code, a[rows])))
            if paths or constants:
                A, B = graph.constant_factors(codes, a[rows])
                out.append((rows, paths, (np.array(constants, dtype=np.int64), A, B)))
        return out

    # ------------------------------------------------------------------ prediction
    def _triple_proba(self, h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Mean over the restarts of ``1 - exp(-(factor rate + pattern rate))``."""
        h, r, t = (np.asarray(x, dtype=np.int64) for x in (h, r, t))
        extra = self._pattern_rates(h, r, t)
        h32, r32, t32 = (x.astype(np.int32) for x in (h, r, t))
        out = np.zeros(h.size)
        for s, (U, L, V, _, _) in enumerate(self._kept()):
            out -= np.expm1(-(kernels.bilinear_rates(h32, r32, t32, U, L, V) + extra[s]))
        return out / self.samples_embedding_.shape[0]

    def _score_rows(self, a: np.ndarray, r: np.ndarray, axis: str) -> np.ndarray:
        """:meth:`PoissonFactorBase._score_rows` with each query's rules' rates added to
        the factor rates before ``1 - exp(-rate)``."""
        a = np.asarray(a, dtype=np.int64)
        r = np.asarray(r, dtype=np.int64)
        N = self.embedding_.shape[0]
        out = np.zeros((a.size, N))
        if a.size == 0:
            return out
        rules = self._pattern_rows(a, r, axis)
        W = np.asarray(self.samples_pattern_weights_, dtype=np.float64)
        buf = np.empty((a.size, N))
        for s, (U, L, V, _, _) in enumerate(self._kept()):
            Lq = L[r]
            if axis == "tail":
                np.matmul(np.einsum("nk,nkl->nl", U[a], Lq), V.T, out=buf)
            else:
                np.matmul(np.einsum("nkl,nl->nk", Lq, V[a]), U.T, out=buf)
            for rows, paths, (ps, A, B) in rules:
                total = A @ sp.diags_array(W[s, ps]) @ B
                for p, m in paths:
                    total = total + W[s, p] * m
                buf[rows] += total.toarray()                # type: ignore[union-attr]
            np.negative(buf, out=buf)
            np.expm1(buf, out=buf)
            out -= buf
        out /= self.samples_embedding_.shape[0]
        return out

    def pattern_rules(self, top: int | None = 5) -> Any:
        """Each relation's rules, strongest first, as a pandas DataFrame: ``relation``,
        ``rule`` (e.g. ``_hypernym(h, t) <- _derivationally_related_form(h, x),
        _hypernym(x, t)``), ``weight`` (its rate w_rp), ``probability`` (``1 -
        exp(-w_rp)``: of a cell only this rule covers), ``support`` (training triples of
        the relation it covers), ``exposure`` (cells it covers) and ``confidence``
        (support / exposure); at most ``top`` per relation (None: all)."""
        import pandas as pd

        self._check_fitted()
        names = np.asarray(self.relation_names_, dtype=str)
        entities = np.asarray(self.entity_names_, dtype=str)
        rows = []
        for p in range(np.size(self.pattern_weights_)):
            q = int(self.pattern_relations_[p])
            w = float(self.pattern_weights_[p])
            exposure = int(self.pattern_exposure_[p])
            rows.append({"relation": names[q],
                         "rule": rule_text(tuple(self.pattern_codes_[p]), names[q], names,
                                           entities),
                         "weight": w, "probability": float(-np.expm1(-w)),
                         "support": int(self.pattern_support_[p]), "exposure": exposure,
                         "confidence": int(self.pattern_support_[p]) / max(exposure, 1),
                         "_r": q})
        columns = ["relation", "rule", "weight", "probability", "support", "exposure",
                   "confidence"]
        if not rows:
            return pd.DataFrame(columns=columns)
        frame = pd.DataFrame(rows).sort_values(["_r", "weight"], ascending=[True, False],
                                               kind="stable")
        if top is not None:
            frame = frame.groupby("_r", sort=False).head(int(top))
        return frame[columns].reset_index(drop=True)

    def summary(self, n_entities: int = 5, n_pairs: int = 3) -> str:
        """BPBFM-1-EM's summary, then each relation's three strongest rules."""
        text = super().summary(n_entities, n_pairs)
        rules = self.pattern_rules(3)
        lines = [f"rule {row.rule} (w={row.weight:.3g}, support {row.support})"
                 for row in rules.itertuples()]
        return "\n".join([text, *lines])
