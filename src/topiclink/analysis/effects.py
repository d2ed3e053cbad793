"""How topic prevalence changes with document metadata: stm's ``estimateEffect``.

:func:`estimate_effect` regresses each topic's document proportions on a design built
from a formula (``formulaic``: ``"~ party + bs(year, df=5)"``, categorical ``C(x)``,
interactions ``a:b``) by ordinary least squares, as Roberts, Stewart & Tingley's ``stm``
does (JSS 2019, sec. 3.5; R/estimateEffect.R).  With ``uncertainty="global"`` it
propagates the uncertainty of the proportions by the *method of composition*: for each of
``n_draws`` draws of every training document's proportions from their posterior, the
regression is refitted and ``coef_draws`` coefficient vectors are drawn from its
normal approximation ``N(beta_hat, sigma_hat^2 (X'X)^-1)``; the pooled coefficient draws
carry both the regression's and the proportions' uncertainty.  ``uncertainty="none"``
regresses the posterior means once (the regression's uncertainty alone).

The posterior of document d's proportions is ``Dirichlet(c_d theta_d)``, with
``theta_d`` the model's ``doc_topic_`` row and ``c_d = N_d + a_d`` (its length in tokens
plus the total prior weight: ``doc_prior_[d].sum()`` where the model has per-document
priors -- KTM --, else ``alpha_.sum()``).  That is the exact conditional posterior of a
collapsed Gibbs sample (``theta_d | z ~ Dir(alpha_d + n_d)``) and of a variational fit
(``Dir(alpha_d + nu_d)``).  It leaves out the uncertainty of the topics themselves, as
stm's ``"Global"`` does.

:class:`TopicEffects` holds the draws: :meth:`~TopicEffects.summary` (stm's
``summary.estimateEffect``: estimate, standard error, t, p, interval per topic and term),
:meth:`~TopicEffects.predict` (expected proportions at new covariate values with bands),
:meth:`~TopicEffects.difference` (between two values of one covariate, the others held
at their median / most frequent value, as stm's ``plot(method = "difference")``) and
:meth:`~TopicEffects.plot` (``"pointestimate"``, ``"difference"``, ``"continuous"``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats

from topiclink.random import RandomState, as_generator

__all__ = ["TopicEffects", "estimate_effect", "doc_topic_draws", "continues_chain",
           "UNCERTAINTY", "CHAIN_SWEEPS"]

logger = logging.getLogger(__name__)

#: the choices of ``uncertainty`` (stm's ``"Global"`` and ``"None"``)
UNCERTAINTY = ("global", "none")
#: stm's defaults: 25 draws of the proportions, and (in ``summary``/``plot``) enough
#: coefficient draws per regression for 500 in all
N_DRAWS, COEF_DRAWS = 25, 20
#: sweeps between two proportion draws of a continued chain.  On DMR data with known
#: effects (``tests/test_effects.py``) draws of the one final state covered the truth
#: less often than nominal where the prior weighs against short documents; draws 5
#: sweeps apart along the chain covered it at the nominal rate
CHAIN_SWEEPS = 5


def _documents_lengths(documents: Any, n_docs: int) -> np.ndarray:
    """Tokens per document of ``documents`` (a Corpus, a document-term matrix)."""
    counts = getattr(documents, "counts", documents)
    if sp.issparse(counts):
        lengths = np.asarray(counts.sum(axis=1), dtype=np.float64).ravel()
    else:
        arr = np.asarray(counts, dtype=np.float64)
        if arr.ndim != 2:
            raise ValueError(f"estimate_effect: documents must be a Corpus or a (documents, "
                             f"words) matrix, got an array of shape {arr.shape}")
        lengths = arr.sum(axis=1)
    if lengths.shape[0] != n_docs:
        raise ValueError(f"estimate_effect: documents has {lengths.shape[0]} rows but the "
                         f"model was fitted on {n_docs} documents (pass its training "
                         "documents)")
    return lengths


def _concentration(model: Any, lengths: np.ndarray) -> np.ndarray:
    """The posterior Dirichlet parameters ``(N_d + a_d) theta_d`` (D, K) of ``model``'s
    current ``doc_topic_``."""
    theta = np.asarray(model.doc_topic_, dtype=np.float64)
    prior = getattr(model, "doc_prior_", None)
    if prior is not None:
        weight = np.asarray(prior, dtype=np.float64).sum(axis=1)
    else:
        weight = np.full(theta.shape[0], float(np.sum(getattr(model, "alpha_", 0.0))))
    return np.maximum((lengths + weight)[:, None] * theta, 1e-12)


def _dirichlet(concentration: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    draw = rng.standard_gamma(concentration)
    return draw / draw.sum(axis=-1, keepdims=True)


def continues_chain(model: Any) -> bool:
    """Whether ``model`` is a Markov chain whose ``fit(..., resume=True)`` draws further
    states (its class sets ``posterior_chain = True``: the collapsed Gibbs samplers)."""
    return bool(getattr(type(model), "posterior_chain", False)) and \
        getattr(model, "state_", None) is not None


def doc_topic_draws(model: Any, documents: Any, n_draws: int,
                    random_state: RandomState = None, *, chain_sweeps: int = 0,
                    fit_params: dict[str, Any] | None = None,
                    progress: bool = False) -> np.ndarray:
    """``n_draws`` draws (S, D, K) of the training documents' topic proportions.

    ``chain_sweeps = 0``: from the posterior ``Dirichlet((N_d + a_d) theta_d)`` of the
    model's one state (stm's method of composition).  ``chain_sweeps = m > 0`` (a model
    that :func:`continues_chain`): a copy of the chain is continued
    (``fit(documents, resume=True, **fit_params)``) and one Dirichlet draw is taken from
    each of ``n_draws`` further states, ``m`` sweeps apart, so the draws also carry the
    uncertainty of the topic assignments and of the fitted prior.  ``model`` is not
    changed.
    """
    theta = np.asarray(model.doc_topic_, dtype=np.float64)
    lengths = _documents_lengths(documents, theta.shape[0])
    rng = as_generator(random_state)
    if not chain_sweeps:
        conc = _concentration(model, lengths)
        return _dirichlet(np.broadcast_to(conc, (int(n_draws), *conc.shape)), rng)
    if not continues_chain(model):
        raise ValueError(f"estimate_effect: chain_sweeps={chain_sweeps} needs a fitted "
                         f"Markov chain; {type(model).__name__} is not one (chain_sweeps=0 "
                         "draws from the posterior of its one state)")
    import copy

    from tqdm.auto import tqdm

    needed = [name for name in getattr(model, "fit_requires", ("X",))
              if name != "X" and name not in (fit_params or {})]
    if needed:
        raise ValueError(f"estimate_effect: continuing the {type(model).__name__} chain "
                         f"needs its fit's {', '.join(needed)}: pass fit_params="
                         f"{{{', '.join(repr(n) + ': ...' for n in needed)}}} (the values "
                         "it was fitted with), or chain_sweeps=0")
    chain = copy.deepcopy(model)
    chain.set_params(max_iter=int(chain_sweeps), verbose=False, callbacks=None)
    out = np.empty((int(n_draws), *theta.shape))
    for s in tqdm(range(int(n_draws)), desc="estimate_effect: chain draws",
                  disable=not progress, leave=False):
        chain.fit(documents, resume=True, **(fit_params or {}))
        out[s] = _dirichlet(_concentration(chain, lengths), rng)
    return out


def _reference_row(metadata: pd.DataFrame) -> pd.DataFrame:
    """One row: each numeric column at its median, any other at its most frequent
    value (stm holds the covariates it does not vary there)."""
    row = {}
    for name, column in metadata.items():
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            row[name] = [column.median()]
        else:
            row[name] = [column.mode(dropna=True).iloc[0]]
    return pd.DataFrame(row).astype({c: metadata[c].dtype for c in metadata.columns
                                     if isinstance(metadata[c].dtype, pd.CategoricalDtype)})


@dataclass
class TopicEffects:
    """The result of :func:`estimate_effect`: coefficient draws per topic.

    Attributes
    ----------
    formula : the right-hand side, as given
    topics : (T,) the topics regressed (positions in the model)
    terms : (P,) the design's column names
    coefficients : (S, T, P) the pooled coefficient draws
    estimates : (T, P) the mean of the regressions' point estimates over the proportion
        draws (the point estimates of the posterior means with ``uncertainty="none"``)
    uncertainty : ``"global"`` or ``"none"``
    n_documents : the documents regressed
    metadata : the covariates (one row per document), for the reference values
    """

    formula: str
    topics: np.ndarray
    terms: list[str]
    coefficients: np.ndarray
    estimates: np.ndarray
    uncertainty: str
    n_documents: int
    metadata: pd.DataFrame = field(repr=False)
    model_spec: Any = field(repr=False)

    def _topic_rows(self, topics: Any) -> np.ndarray:
        if topics is None:
            return np.arange(self.topics.size)
        wanted = np.atleast_1d(np.asarray(topics, dtype=np.int64))
        rows = np.searchsorted(self.topics, wanted)
        bad = [int(t) for t, r in zip(wanted, rows, strict=True)
               if r >= self.topics.size or self.topics[r] != t]
        if bad:
            raise ValueError(f"TopicEffects: topic {bad[0]} was not regressed (regressed: "
                             f"{self.topics.tolist()})")
        return rows

    def summary(self, topics: Any = None, level: float = 0.95) -> pd.DataFrame:
        """stm's ``summary.estimateEffect``: per topic and term the estimate (mean of the
        draws), its standard error (their standard deviation), t, the two-sided p-value
        on ``n_documents - P`` degrees of freedom and the ``level`` interval of the
        draws."""
        _check_level(level)
        rows = self._topic_rows(topics)
        draws = self.coefficients[:, rows, :]
        est = draws.mean(axis=0)
        se = draws.std(axis=0, ddof=1)
        t = np.divide(est, se, out=np.full_like(est, np.nan), where=se > 0)
        df = max(self.n_documents - len(self.terms), 1)
        p = 2.0 * stats.t.sf(np.abs(t), df)
        q = (1.0 - level) / 2.0
        low, high = np.quantile(draws, [q, 1.0 - q], axis=0)
        T, P = est.shape
        return pd.DataFrame({
            "topic": np.repeat(self.topics[rows], P), "term": np.tile(self.terms, T),
            "estimate": est.ravel(), "std_error": se.ravel(), "t": t.ravel(),
            "p_value": p.ravel(), "low": low.ravel(), "high": high.ravel()})

    def design(self, newdata: pd.DataFrame) -> np.ndarray:
        """The design matrix of ``newdata`` (the formula's transforms as fitted: spline
        knots, category levels)."""
        try:
            matrix = self.model_spec.get_model_matrix(newdata)
        except Exception as exc:  # noqa: BLE001 - formulaic's errors, in one line
            cause = exc.__cause__ or exc
            reason = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
            if "extend beyond" in reason:
                reason = ("a value lies outside the range the formula's spline was fitted "
                          "on (predict within the training documents' range)")
            raise ValueError(f"TopicEffects: the covariates of newdata do not fit "
                             f"{self.formula!r}: {reason}") from None
        return np.asarray(matrix, dtype=np.float64)

    def _draws_at(self, newdata: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
        X = self.design(newdata)
        return np.einsum("np,stp->stn", X, self.coefficients[:, rows, :])

    def predict(self, newdata: pd.DataFrame, topics: Any = None,
                level: float = 0.95) -> pd.DataFrame:
        """Expected topic proportions at the covariate values of ``newdata`` (one row per
        topic and row of ``newdata``): the mean of the draws and their ``level``
        interval."""
        _check_level(level)
        rows = self._topic_rows(topics)
        values = self._draws_at(newdata, rows)              # (S, T, N)
        q = (1.0 - level) / 2.0
        low, high = np.quantile(values, [q, 1.0 - q], axis=0)
        T, N = values.shape[1:]
        out = pd.DataFrame({"topic": np.repeat(self.topics[rows], N),
                            "row": np.tile(np.arange(N), T),
                            "estimate": values.mean(axis=0).ravel(),
                            "low": low.ravel(), "high": high.ravel()})
        return out

    def _column(self, covariate: str) -> pd.Series:
        """The metadata column ``covariate`` (one-line ValueError naming the others)."""
        if covariate not in self.metadata.columns:
            raise ValueError(f"TopicEffects: no covariate {covariate!r} (metadata columns: "
                             f"{', '.join(map(str, self.metadata.columns))})")
        return self.metadata[covariate]

    def at(self, covariate: str, values: Any) -> pd.DataFrame:
        """Rows of covariates: ``covariate`` at each of ``values``, every other column at
        its reference (median or most frequent) value."""
        column = self._column(covariate)
        values = list(np.atleast_1d(np.asarray(values, dtype=object)))
        frame = pd.concat([_reference_row(self.metadata)] * len(values), ignore_index=True)
        frame[covariate] = pd.Series(values, dtype=None if pd.api.types.is_numeric_dtype(
            column) else column.dtype)
        return frame

    def difference(self, covariate: str, value: Any, reference: Any, topics: Any = None,
                   level: float = 0.95) -> pd.DataFrame:
        """Expected proportion at ``covariate = value`` minus at ``reference`` per topic
        (the others held at their reference values): the mean of the draws, their
        ``level`` interval and the share of draws above 0."""
        _check_level(level)
        rows = self._topic_rows(topics)
        values = self._draws_at(self.at(covariate, [value, reference]), rows)
        diff = values[:, :, 0] - values[:, :, 1]
        q = (1.0 - level) / 2.0
        low, high = np.quantile(diff, [q, 1.0 - q], axis=0)
        return pd.DataFrame({"topic": self.topics[rows], "estimate": diff.mean(axis=0),
                             "low": low, "high": high,
                             "share_above_zero": (diff > 0).mean(axis=0)})

    def plot(self, covariate: str, method: Literal["pointestimate", "difference",
                                                   "continuous"] = "pointestimate", *,
             topics: Any = None, value: Any = None, reference: Any = None,
             labels: dict[int, str] | None = None, level: float = 0.95,
             n_points: int = 100, ax: Any = None) -> Any:
        """stm's ``plot.estimateEffect``; returns the matplotlib Axes.

        ``"pointestimate"``: each topic's expected proportion at every level of a
        categorical ``covariate`` with its interval; ``"difference"``: ``value`` minus
        ``reference`` per topic, with a line at 0; ``"continuous"``: the expected
        proportion over the range of a numeric ``covariate``, a band per topic.
        """
        import matplotlib.pyplot as plt

        rows = self._topic_rows(topics)
        names = [(labels or {}).get(int(t), f"topic {int(t)}") for t in self.topics[rows]]
        made = ax is None
        if made:
            height = 4.0 if method == "continuous" else max(2.5, 0.45 * len(rows) + 1.5)
            _, ax = plt.subplots(figsize=(6.4, height))
        column = self._column(covariate)
        if method == "continuous":
            if not pd.api.types.is_numeric_dtype(column):
                raise ValueError(f"TopicEffects.plot: method 'continuous' needs a numeric "
                                 f"covariate; {covariate!r} is {column.dtype}")
            grid = np.linspace(float(column.min()), float(column.max()), int(n_points))
            pred = self.predict(self.at(covariate, grid), topics=self.topics[rows],
                                level=level)
            for topic, name in zip(self.topics[rows], names, strict=True):
                part = pred[pred["topic"] == topic]
                line, = ax.plot(grid, part["estimate"], label=name)
                ax.fill_between(grid, part["low"], part["high"], color=line.get_color(),
                                alpha=0.2, linewidth=0)
            ax.set_xlabel(covariate)
            ax.set_ylabel("expected topic proportion")
            ax.legend(fontsize="small")
        elif method == "difference":
            if value is None or reference is None:
                raise ValueError("TopicEffects.plot: method 'difference' needs value= and "
                                 "reference=")
            diff = self.difference(covariate, value, reference, topics=self.topics[rows],
                                   level=level)
            y = np.arange(len(rows))[::-1]
            ax.errorbar(diff["estimate"], y, xerr=[diff["estimate"] - diff["low"],
                                                   diff["high"] - diff["estimate"]],
                        fmt="o", capsize=3)
            ax.axvline(0.0, color="grey", linestyle="--", linewidth=1)
            ax.set_yticks(y, names)
            ax.set_xlabel(f"difference in expected proportion ({value} - {reference})")
        elif method == "pointestimate":
            levels = sorted(column.dropna().unique().tolist())
            pred = self.predict(self.at(covariate, levels), topics=self.topics[rows],
                                level=level)
            y = np.arange(len(rows))[::-1]
            offsets = np.linspace(-0.25, 0.25, len(levels)) if len(levels) > 1 else [0.0]
            for i, lvl in enumerate(levels):
                part = pred[pred["row"] == i]
                ax.errorbar(part["estimate"], y + offsets[i],
                            xerr=[part["estimate"] - part["low"],
                                  part["high"] - part["estimate"]],
                            fmt="o", capsize=3, label=str(lvl))
            ax.set_yticks(y, names)
            ax.set_xlabel("expected topic proportion")
            ax.legend(title=covariate, fontsize="small")
        else:
            raise ValueError(f"TopicEffects.plot: method must be 'pointestimate', "
                             f"'difference' or 'continuous', got {method!r}")
        ax.set_title(f"{self.formula} ({self.uncertainty} uncertainty, {level:.0%})",
                     fontsize="small")
        if made:
            ax.figure.tight_layout()                 # room for long topic labels
        return ax


def _check_level(level: float) -> None:
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")


def estimate_effect(model: Any, formula: str | Sequence[str], metadata: pd.DataFrame, *,
                    documents: Any = None, topics: Any = None,
                    uncertainty: Literal["global", "none"] = "global",
                    n_draws: int = N_DRAWS, coef_draws: int = COEF_DRAWS,
                    chain_sweeps: int | None = None, fit_params: dict[str, Any] | None = None,
                    progress: bool = True, random_state: RandomState = None
                    ) -> TopicEffects:
    """Regress topic proportions on covariates, with the proportions' uncertainty.

    Parameters
    ----------
    model : a fitted topic model (``doc_topic_``: its training documents' proportions)
    formula : the right-hand side in Wilkinson notation (``formulaic``), e.g.
        ``"~ party + bs(year, df=5)"``; an intercept is included unless ``- 1``.  Or a
        list of metadata columns: their sum, each numeric column linear and every other
        one a factor
    metadata : DataFrame, one row per training document, in the model's order
    documents : the training documents (Corpus or document-term matrix): their lengths
        give the posterior's concentration; required with ``uncertainty="global"``
    topics : the topics to regress (default every one)
    uncertainty : ``"global"`` (method of composition over ``n_draws`` posterior draws of
        the proportions) or ``"none"`` (the posterior means)
    n_draws : proportion draws (stm's ``nsims``, 25)
    coef_draws : coefficient draws per regression (``n_draws * coef_draws`` in all)
    chain_sweeps : with ``uncertainty="global"``, the sweeps between two proportion draws
        of a continued chain (a copy; :func:`doc_topic_draws`); 0: every draw from the
        posterior of the model's one state.  None: :data:`CHAIN_SWEEPS` for a Markov
        chain (:func:`continues_chain`), else 0
    fit_params : what the model's ``fit`` needs besides the documents to continue its
        chain (DMR: ``{"features": F}``, as it was fitted)
    progress : a tqdm bar over the chain's draws
    random_state : seed of every draw

    Returns
    -------
    TopicEffects
    """
    from formulaic import model_matrix

    if uncertainty not in UNCERTAINTY:
        raise ValueError(f"estimate_effect: uncertainty must be 'global' or 'none', got "
                         f"{uncertainty!r}")
    theta = getattr(model, "doc_topic_", None)
    if theta is None:
        raise ValueError(f"estimate_effect: {type(model).__name__} has no doc_topic_ (fit "
                         "it first; the effects are of its training documents' proportions)")
    theta = np.asarray(theta, dtype=np.float64)
    D, K = theta.shape
    if not isinstance(metadata, pd.DataFrame):
        raise TypeError(f"estimate_effect: metadata must be a pandas DataFrame, got "
                        f"{type(metadata).__name__}")
    if len(metadata) != D:
        raise ValueError(f"estimate_effect: metadata has {len(metadata)} rows but the model "
                         f"has {D} training documents")
    if int(n_draws) < 1 or int(coef_draws) < 1:
        raise ValueError("estimate_effect: n_draws and coef_draws must be >= 1")
    if uncertainty == "global" and documents is None:
        raise ValueError("estimate_effect: uncertainty='global' needs documents= (the "
                         "training documents, for the posterior of their proportions); "
                         "or pass uncertainty='none'")
    chosen = np.arange(K) if topics is None else np.unique(np.atleast_1d(
        np.asarray(topics, dtype=np.int64)))
    if chosen.size == 0 or chosen.min() < 0 or chosen.max() >= K:
        raise ValueError(f"estimate_effect: topics must be in 0..{K - 1}, got "
                         f"{np.atleast_1d(topics).tolist()}")
    meta = metadata.reset_index(drop=True)
    if not isinstance(formula, str):
        columns = [str(c) for c in formula]
        missing = [c for c in columns if c not in meta.columns]
        if not columns or missing:
            raise ValueError(f"estimate_effect: no metadata column {missing[0]!r} (columns: "
                             f"{', '.join(map(str, meta.columns))})" if missing else
                             "estimate_effect: give a formula or at least one column")
        formula = "~ " + " + ".join(f"`{c}`" if not c.isidentifier() else c
                                    for c in columns)
    rhs = formula.split("~", 1)[1] if "~" in formula else formula
    try:
        matrix = model_matrix(rhs, meta, na_action="raise")
    except Exception as exc:  # noqa: BLE001 - formulaic's parse and lookup errors
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"estimate_effect: formula {formula!r}: {reason}") from None
    X = np.asarray(matrix, dtype=np.float64)
    n, P = X.shape
    if n <= P:
        raise ValueError(f"estimate_effect: {n} documents for {P} regression terms")
    Q, R = np.linalg.qr(X)
    if np.min(np.abs(np.diag(R))) < 1e-10 * np.max(np.abs(np.diag(R))):
        raise ValueError(f"estimate_effect: the design of {formula!r} is rank deficient "
                         "(a term is a combination of others)")
    R_inv = np.linalg.inv(R)
    chol = R_inv                               # (X'X)^-1 = R^-1 R^-T: its square root
    rng = as_generator(random_state)
    if uncertainty == "global":
        sweeps = (CHAIN_SWEEPS if continues_chain(model) else 0) if chain_sweeps is None \
            else int(chain_sweeps)
        if sweeps < 0:
            raise ValueError(f"estimate_effect: chain_sweeps must be >= 0, got {sweeps}")
        thetas = doc_topic_draws(model, documents, int(n_draws), rng, chain_sweeps=sweeps,
                                 fit_params=fit_params, progress=progress)[:, :, chosen]
    else:
        thetas = theta[None, :, chosen]
    S = thetas.shape[0]
    T = chosen.size
    per = int(coef_draws) if uncertainty == "global" else int(n_draws) * int(coef_draws)
    coefficients = np.empty((S * per, T, P))
    estimates = np.zeros((T, P))
    for s in range(S):
        Y = thetas[s]                                          # (D, T)
        beta = R_inv @ (Q.T @ Y)                               # (P, T)
        resid = Y - X @ beta
        sigma = np.sqrt((resid * resid).sum(axis=0) / (n - P))  # (T,)
        noise = rng.standard_normal((per, T, P))
        # beta + sigma R^-1 e  ~  N(beta, sigma^2 (X'X)^-1)
        coefficients[s * per:(s + 1) * per] = (beta.T[None] + sigma[None, :, None]
                                               * np.einsum("pq,stq->stp", chol, noise))
        estimates += beta.T / S
    logger.info("estimate_effect: %d documents, %d terms, %d topics, %d coefficient draws "
                "(%s uncertainty)", n, P, T, coefficients.shape[0], uncertainty)
    return TopicEffects(formula=formula, topics=chosen, terms=list(matrix.columns),
                        coefficients=coefficients, estimates=estimates,
                        uncertainty=uncertainty, n_documents=n, metadata=meta,
                        model_spec=matrix.model_spec)
