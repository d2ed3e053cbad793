"""The glossary of parameters: one entry per parameter that several estimators share.

Each :class:`Parameter` has a name, the forms it accepts (the
:mod:`topiclink.data.checks` constraints the estimators' ``_parameter_constraints``
tables take from here with :func:`shared`), a one-line doc and the paper symbol.  The
contract test (``tests/test_contract.py``) checks every registered estimator's signature
against it: a glossary parameter is declared with the glossary's forms (or a narrowing
the test lists), documented in the class docstring's Parameters section, and no
signature uses a name of :data:`ALIASES` (the other spellings of a glossary name).

The survey the glossary was written from (every registered estimator's parameters
grouped by meaning, with the drifts: one meaning under several names, one name with
several meanings) is the table of ``docs/adding-a-model.md``, "One vocabulary of
parameters"; the homonyms that remain are in :data:`HOMONYMS`.  Family-specific
parameters (BPBFM's ``priors``, a config of the paper's ``a``, ``gamma0``, ``c0``...;
LMV's ``n0``; KTM's ``tau``, ``kernel``...) stay outside the glossary; the contract test
lists them per family, so a new name is a decision, not an accident.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from topiclink.data.checks import (
    CALLBACKS,
    INIT_TOPICS,
    N_JOBS,
    N_TOPICS,
    NON_NEGATIVE,
    POSITIVE,
    PRIOR,
    RANDOM_STATE,
    VERBOSE,
    Constraint,
    Integer,
    NoneValue,
    Options,
    Real,
)
from topiclink.execution.params import is_client
from topiclink.execution.shards import Shards

__all__ = ["Parameter", "GLOSSARY", "ALIASES", "HOMONYMS", "shared",
           "ClientLike", "EXECUTOR", "SchemeForm", "SchemeCodec", "glossary_table",
           "RobbinsMonro", "Negatives", "Averaging"]

class ClientLike(Constraint):
    """A ``distributed.Client`` or a scheduler address (str of the form
    ``tcp://host:port``, :func:`topiclink.execution.dask.address_problem`, checked here
    so that a typo is refused before a fit tries to connect; ``"dask"``: the current
    client)."""

    def accepts(self, value: object) -> bool:
        from topiclink.execution.dask import address_problem

        if isinstance(value, str):
            return value == "dask" or address_problem(value) is None
        return is_client(value)

    def describe(self) -> str:
        from topiclink.execution.dask import ADDRESS_FORM

        return (f"a distributed.Client, a scheduler address ({ADDRESS_FORM}) or 'dask' "
                "(the current client)")


#: the accepted forms of ``executor``: None (this process), a thread count (-1: all
#: cores), a Dask client, a scheduler address or "dask" (the current client)
EXECUTOR = [NoneValue(), Integer(exclude=(0,)), ClientLike()]


@dataclass(frozen=True)
class Parameter:
    """One shared parameter.

    ``forms``: the constraints it accepts (None: the forms are each family's, e.g. the
    options of ``inference``); ``symbol``: the paper's; ``group``: what it belongs to
    (size, prior, run, stopping, averaging, online, negatives, supervision, execution,
    bookkeeping).
    """

    name: str
    forms: tuple[Constraint, ...] | None
    doc: str
    symbol: str = ""
    group: str = ""

    def describe(self) -> str:
        """What a value must be, as the one-line errors say it."""
        if self.forms is None:
            return "(the family's forms)"
        return " or ".join(form.describe() for form in self.forms)


def _p(name: str, forms: list[Constraint] | None, doc: str, symbol: str = "",
       group: str = "") -> Parameter:
    return Parameter(name, None if forms is None else tuple(forms), doc, symbol, group)


_ENTRIES = [
    # size and priors
    _p("n_topics", N_TOPICS, "Number of topics (BPBFM: latent factors).", "K", "size"),
    _p("doc_topic_prior", PRIOR, "Dirichlet prior of each document's topic proportions "
       "(a scalar, a vector (K,), or None for the family's default).", "alpha", "prior"),
    _p("topic_word_prior", POSITIVE, "Symmetric Dirichlet prior of the topics' word "
       "distributions.", "beta (LMV: eta)", "prior"),
    _p("init_topics", INIT_TOPICS, "Topic-word statistics (K, V) the topics start from "
       "(None: the model's own start).", "", "prior"),
    _p("init", [Options("random", "spectral")], "How the chain starts: 'random' topics, "
       "or 'spectral': the deterministic anchor-word topics of the word co-occurrences "
       "(Arora et al. 2013; stm's init.type = 'Spectral').", "", "prior"),
    # the run
    _p("sampler", [Options("auto", "gibbs", "mh", "warp")], "The token kernel: 'gibbs' "
       "(the exact conditional, O(K) per token), 'mh' (exact Metropolis-Hastings with "
       "O(1) document and word proposals, the family's link, label or prior term in the "
       "acceptance ratio; the sequential chain), LDA also 'warp' (the same proposals in "
       "WarpLDA's order, also on scheme='partition') and 'auto' (by the number of "
       "topics).", "", "run"),
    _p("max_iter", [Integer(1)], "Iterations (sweeps) per call of fit; "
       "fit(..., resume=True) runs this many more.", "", "run"),
    _p("evaluate_every", [Integer(0)], "Record the training objective every this many "
       "iterations (0: the last one only).", "", "run"),
    _p("transform_iter", [Integer(1)], "Iterations (sweeps or E-step rounds) per new "
       "document in transform.", "", "run"),
    _p("e_step_iter", [Integer(1)], "E-step rounds per document in each iteration.", "",
       "run"),
    _p("optimize_every", [Integer(0)], "Iterations between optimisations of the "
       "hyper-parameters (0: never).", "", "run"),
    # stopping
    _p("tol", NON_NEGATIVE, "Stop when the objective's relative change falls below tol "
       "(0: run max_iter iterations).", "", "stopping"),
    # posterior averaging
    _p("n_average", [Integer(1)], "Average the estimates over the last n_average "
       "iterations.", "", "averaging"),
    _p("burn_in", [Integer(0)], "Iterations, counted over the whole chain, before "
       "samples are kept.", "", "averaging"),
    _p("thinning", [Integer(1)], "Keep every thinning-th sample after burn_in.", "",
       "averaging"),
    _p("max_samples", [Integer(1)], "Keep at most this many samples (the latest).", "",
       "averaging"),
    # online inference
    _p("inference", None, '"batch", or the online variant ("online" or "stochastic"; '
       "the family's options).", "", "online"),
    _p("batch_size", [Integer(1)], "Items (documents, tensor entries) per minibatch of "
       "online inference.", "|S|", "online"),
    _p("step_a1", POSITIVE, "Scale of the online step sizes rho_t = A1 / (t + A2)^v.",
       "A1", "online"),
    _p("step_a2", POSITIVE, "Delay of the online step sizes rho_t = A1 / (t + A2)^v.",
       "A2 (BPBFM: t0; SVI: tau)", "online"),
    _p("step_v", [Real(0.5, 1.0, low_open=True)], "Decay of the online step sizes "
       "rho_t = A1 / (t + A2)^v, in (0.5, 1].", "v (BPBFM: w; SVI: kappa)", "online"),
    # negatives (gRTM's three build one Negatives config; the others mean other things)
    _p("negative_ratio", [Real(0, 1)], "Fraction of the unobserved training pairs drawn "
       "as negatives.", "", "negatives"),
    _p("negatives_per_link", [NoneValue(), Real(0, None, low_open=True)], "Negatives "
       "drawn per link of each document instead of negative_ratio.", "", "negatives"),
    _p("n_negatives", POSITIVE, "Non-links sampled per link.", "", "negatives"),
    _p("n_pseudo_negatives", [NoneValue(), Real(0, low_open=True)], "Pseudo-count of "
       "non-links of the regulariser (None: the number of links).", "rho", "negatives"),
    _p("c_neg", POSITIVE, "Regularisation constant of the negative pairs.", "c_-",
       "negatives"),
    # supervision
    _p("loss", None, 'The loss of the labels or links ("logistic" or "hinge").', "",
       "supervision"),
    _p("c", POSITIVE, "Regularisation constant: weight of the label or link likelihood.",
       "c", "supervision"),
    _p("hinge_cost", POSITIVE, "Margin of the hinge loss (>= 1).", "l", "supervision"),
    _p("weight_prior_var", POSITIVE, "Prior variance of every classifier or link "
       "weight.", "nu^2", "supervision"),
    # execution
    _p("n_jobs", N_JOBS, "Threads (-1: all cores); never changes the result.", "",
       "execution"),
    _p("scheme", None, 'The statistical scheme of the sweeps, which fixes the chain: "exact" '
       "(the sequential sampler) or a family's sharded scheme, by name (2 shards) or as "
       'topiclink.execution.Shards(name, n_shards) ("adlda", "partition", "shards").', "",
       "execution"),
    _p("executor", EXECUTOR, "Where the pieces of an iteration run; never changes the "
       "chain: None (this process, n_jobs threads), a thread count (-1: all cores), a "
       'distributed.Client, a scheduler address or "dask" (the current client).', "",
       "execution"),
    # bookkeeping
    _p("random_state", RANDOM_STATE, "Seed: None, an integer, a SeedSequence or a "
       "Generator.", "", "bookkeeping"),
    _p("verbose", VERBOSE, "Log progress (a bool or a level).", "", "bookkeeping"),
    _p("callbacks", CALLBACKS, "Objects whose on_iteration runs after every iteration.",
       "", "bookkeeping"),
]

#: name -> entry
GLOSSARY: dict[str, Parameter] = {p.name: p for p in _ENTRIES}

#: spellings of a glossary meaning that no signature may use -> the glossary's name
ALIASES: dict[str, str] = {
    "n_components": "n_topics", "num_topics": "n_topics", "n_factors": "n_topics", "k": "n_topics",
    "alpha": "doc_topic_prior", "eta": "topic_word_prior", "n_iter": "max_iter",
    "n_iterations": "max_iter", "iterations": "max_iter", "burnin": "burn_in",
    "thin": "thinning", "seed": "random_state", "n_threads": "n_jobs",
    "minibatch_size": "batch_size", "kappa": "step_v", "tau0": "step_a2",
    "parallel": "scheme", "n_shards": "scheme", "client": "executor",
}

#: names used with another meaning than the glossary's (a glossary name, or a glossary
#: symbol as a parameter name): name -> {estimator class: that meaning}.  Kept until they
#: are renamed; the contract test checks each is still there (a new parameter name is
#: caught by its per-family list)
HOMONYMS: dict[str, dict[str, str]] = {
    "burn_in": {"DMR": "sweeps before the first optimisation of lambda"},
}


def shared(*names: str) -> dict[str, list[Constraint]]:
    """The glossary's forms of ``names``, for an estimator's ``_parameter_constraints``
    (``{**shared("n_topics", "max_iter"), "sigma": POSITIVE}``).  KeyError for a name
    outside the glossary or one whose forms are the family's."""
    table: dict[str, list[Constraint]] = {}
    for name in names:
        forms = GLOSSARY[name].forms
        if forms is None:
            raise KeyError(f"{name!r}: the glossary leaves its forms to each family")
        table[name] = list(forms)
    return table


class SchemeForm(Options):
    """A family's ``scheme``: one of its names (the words of the command line's
    ``--scheme``), or :class:`~topiclink.execution.Shards` of one of its sharded
    schemes."""

    def __init__(self, *names: str, sharded: tuple[str, ...] = ()) -> None:
        super().__init__(*names)
        self.names, self.sharded = names, sharded

    def accepts(self, value: object) -> bool:
        if isinstance(value, Shards):
            return value.scheme in self.sharded
        return isinstance(value, str) and value in self.names

    def describe(self) -> str:
        text = "one of " + ", ".join(repr(v) for v in self.names)
        if self.sharded:
            text += f" or Shards({' | '.join(repr(v) for v in self.sharded)}, n_shards)"
        return text


class SchemeCodec:
    """A model file stores a scheme's name, or ``{"scheme": name, "n_shards": n}`` for a
    :class:`~topiclink.execution.Shards`."""

    schema = "scheme/1"

    def encode(self, value: Any) -> Any:
        if isinstance(value, Shards):
            return {"scheme": value.scheme, "n_shards": value.n_shards}
        return value

    def decode(self, data: Any) -> Any:
        if isinstance(data, dict):
            return Shards(data["scheme"], data["n_shards"])
        if not isinstance(data, str):
            raise ValueError("a scheme is stored as a name or {scheme, n_shards}")
        return data


def glossary_table() -> str:
    """The glossary as a Markdown table (name, forms, symbol, doc), for the docs."""
    rows = ["| name | accepts | symbol | meaning |", "| --- | --- | --- | --- |"]
    for p in _ENTRIES:
        rows.append(f"| `{p.name}` | {p.describe()} | {p.symbol} | {p.doc} |")
    return "\n".join(rows)


# ---------------------------------------------------------------------- shared configs
@dataclass(frozen=True)
class RobbinsMonro:
    """Step sizes ``rho_t = a1 / (t + a2)^v`` (t = 0, 1, ...) of online inference.

    The glossary's ``step_a1``, ``step_a2``, ``step_v`` (:meth:`from_params`).  The
    papers' forms: SVI's ``(t + tau)^-kappa`` (Hoffman et al. 2013) is ``a1 = 1``,
    ``a2 = tau``, ``v = kappa``; BPBFM's ``(t + t0)^-w`` likewise; LMVS's
    ``A1 / (s_w + m/M + A2)^v`` is ``a1 = A1``, ``a2 = A2`` with ``t`` counted in sweeps
    from 1.  ``0.5 < v <= 1`` gives ``sum rho = inf`` and ``sum rho^2 < inf`` (Robbins &
    Monro 1951).
    """

    a1: float = 1.0
    a2: float = 1.0
    v: float = 0.7

    def __post_init__(self) -> None:
        if not (np.isfinite(self.a1) and self.a1 > 0):
            raise ValueError(f"step_a1 must be finite and > 0, got {self.a1!r}")
        if not (np.isfinite(self.a2) and self.a2 > 0):
            raise ValueError(f"step_a2 must be finite and > 0, got {self.a2!r}")
        if not 0.5 < self.v <= 1.0:
            raise ValueError(f"step_v must be in (0.5, 1], got {self.v!r}")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> RobbinsMonro:
        """The schedule of an estimator's parameters (``get_params()``): ``step_a1``
        (1 where the estimator has none), ``step_a2``, ``step_v``."""
        return cls(float(params.get("step_a1", 1.0)), float(params["step_a2"]),
                   float(params["step_v"]))

    def __call__(self, t: float) -> float:
        """rho at update ``t`` (a count, or a fraction of sweeps as in LMVS)."""
        if t < 0:
            raise ValueError(f"update counter must be >= 0, got {t}")
        return float(self.a1 / (t + self.a2) ** self.v)


@dataclass(frozen=True)
class Negatives:
    """Unobserved pairs drawn as negative training pairs, and their weight: the glossary's
    ``negative_ratio``, ``negatives_per_link`` and ``c_neg`` (:meth:`from_params`).

    The gRTM paper (Chen, Zhu, Xia & Zhang, TPAMI 2015, Sec. 5.1 and 5.3.3) trains on the
    observed links and a random subsample of the unobserved pairs (1 % of them in its
    experiments), a negative pair's regularisation constant fixed at 1 (``weight``,
    ``c_-``) while c of the positive pairs is tuned.  ``per_link`` None: ``ratio`` of all
    unobserved pairs (both orientations of an undirected pair); else document i draws
    ``max(1, round(per_link * p_i))`` negatives with p_i its positive pairs as a source
    (one orientation each; :func:`topiclink.relational.negatives.draw_negatives` draws
    them).
    """

    ratio: float = 0.01
    per_link: float | None = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not (np.isfinite(self.ratio) and 0.0 <= self.ratio <= 1.0):
            raise ValueError(f"negative_ratio must be in [0, 1], got {self.ratio!r}")
        if self.per_link is not None and not (np.isfinite(self.per_link)
                                              and self.per_link > 0):
            raise ValueError(f"negatives_per_link must be finite and > 0, got "
                             f"{self.per_link!r}")
        if not (np.isfinite(self.weight) and self.weight > 0):
            raise ValueError(f"c_neg must be finite and > 0, got {self.weight!r}")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Negatives:
        """The negatives of an estimator's parameters (``get_params()``):
        ``negative_ratio``, ``negatives_per_link`` (None where the estimator has none),
        ``c_neg`` (1 where it has none)."""
        per_link = params.get("negatives_per_link")
        return cls(float(params["negative_ratio"]),
                   None if per_link is None else float(per_link),
                   float(params.get("c_neg", 1.0)))


@dataclass(frozen=True)
class Averaging:
    """Which iterations of a chain the estimate averages over: after ``burn_in``
    iterations (counted over the whole chain), every ``thinning``-th, at most
    ``max_samples`` of them (the latest; None: all).

    The glossary's two spellings are one rule (:meth:`from_params`): ``n_average`` (the
    topic models: the mean over the last n_average of ``max_iter`` iterations) is
    ``burn_in = max_iter - n_average``, ``thinning = 1``; BPBFM's ``burn_in``,
    ``thinning``, ``max_samples`` are kept samples of the posterior.
    """

    burn_in: int = 0
    thinning: int = 1
    max_samples: int | None = None

    def __post_init__(self) -> None:
        if self.burn_in < 0:
            raise ValueError(f"burn_in must be >= 0, got {self.burn_in!r}")
        if self.thinning < 1:
            raise ValueError(f"thinning must be >= 1, got {self.thinning!r}")
        if self.max_samples is not None and self.max_samples < 1:
            raise ValueError(f"max_samples must be >= 1, got {self.max_samples!r}")

    @classmethod
    def last(cls, n_average: int, n_iter: int) -> Averaging:
        """The mean over the last ``n_average`` of ``n_iter`` iterations (all of them
        when ``n_average >= n_iter``; none for 0)."""
        if n_average <= 0:
            return cls(burn_in=n_iter, thinning=1, max_samples=None)
        return cls(burn_in=max(0, n_iter - n_average), thinning=1, max_samples=None)

    @classmethod
    def from_params(cls, params: Mapping[str, Any], n_iter: int | None = None) -> Averaging:
        """From an estimator's parameters: ``n_average`` (over the last of ``n_iter``,
        default ``max_iter``) or ``burn_in`` / ``thinning`` / ``max_samples``."""
        if "n_average" in params:
            return cls.last(int(params["n_average"]),
                            int(params["max_iter"] if n_iter is None else n_iter))
        max_samples = params.get("max_samples")
        return cls(int(params.get("burn_in", 0)), int(params.get("thinning", 1)),
                   None if max_samples is None else int(max_samples))

    def keeps(self, iteration: int) -> bool:
        """Whether the chain's ``iteration``-th iteration (1-based: after that many
        iterations) enters the average."""
        after = int(iteration) - self.burn_in
        return after > 0 and after % self.thinning == 0

    def n_kept(self, n_iter: int) -> int:
        """How many of the first ``n_iter`` iterations are averaged (after the cap)."""
        kept = max(0, (int(n_iter) - self.burn_in) // self.thinning)
        return kept if self.max_samples is None else min(kept, self.max_samples)
