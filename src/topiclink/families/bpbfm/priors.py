"""The priors of the Gibbs-sampled bilinear Poisson factor models (BPBFM-1, BPBFM-2).

Hu, Rai & Carin (AISTATS 2016), section 2 and its supplement: the paper's symbols as the
fields of one frozen config, :class:`BPBFMPriors`, given to
:class:`~topiclink.families.bpbfm.estimator.BilinearPoissonFactorModel` as ``priors=``
(the way :class:`~topiclink.parameters.RobbinsMonro` holds the online step sizes).  A
model file stores it as JSON (:class:`PriorsCodec`); ``topiclink fit bpbfm`` sets its
fields with ``--a``, ``--gamma0``, ... (:data:`PRIOR_FLAGS`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

__all__ = ["BPBFMPriors", "PriorsCodec", "PRIOR_FLAGS"]


@dataclass(frozen=True)
class BPBFMPriors:
    """The hyper-parameters of BPBFM's priors, by their names in the paper.

    The supplement gives the conditionals but no numerical values; the defaults are the
    usual weakly informative choices of the gamma-process edge partition models (Zhou
    2015), and a sparse Dirichlet for U's columns.  Every field is a finite number > 0.

    Parameters
    ----------
    a : float, default 0.1
        a: the concentration of the Dirichlet prior of each factor's column of U over
        the entities, ``U[:, k] ~ Dir(a, ..., a)``.
    gamma0 : float, default 1.0
        gamma_0: the mass of the gamma process of the factor weights, ``d_k ~
        Ga(gamma0 / K, rate c0)`` (the shrinkage that switches off unneeded factors).
    c0 : float, default 1.0
        c_0: the rate of the factor weights' prior, ``d_k ~ Ga(gamma0 / K, rate c0)``.
    e0 : float, default 1.0
        e_0: the shape of the diagonal scale's prior, ``eps ~ Ga(e0, rate f0)``
        (``shape_kk = eps d_k``, ``shape_k1k2 = d_k1 d_k2`` off the diagonal).
    f0 : float, default 1.0
        f_0: the rate of the diagonal scale's prior, ``eps ~ Ga(e0, rate f0)``.
    beta : float, default 1.0
        beta: the rate of the gamma prior of every entry of a relation matrix,
        ``Lambda^r_k1k2 ~ Ga(shape_k1k2, rate beta)`` (BPBFM-2: of the dictionary's
        ``G^m``).
    h0 : float, default 1.0
        h_0: the shape of the dictionary weights' prior, ``eta_mr ~ Ga(h0, rate q0)``
        (BPBFM-2).
    q0 : float, default 1.0
        q_0: the rate of the dictionary weights' prior, ``eta_mr ~ Ga(h0, rate q0)``
        (BPBFM-2).

    The full conditionals they enter are steps 2 and 4-7 of the sweep
    (:mod:`topiclink.families.bpbfm.algorithm`; the supplement's section 1).
    """

    a: float = 0.1
    gamma0: float = 1.0
    c0: float = 1.0
    e0: float = 1.0
    f0: float = 1.0
    beta: float = 1.0
    h0: float = 1.0
    q0: float = 1.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                    math.isfinite(value) and value > 0):
                raise ValueError(f"priors: {f.name} must be a finite number > 0, got "
                                 f"{value!r}")

    def as_kwargs(self) -> dict[str, float]:
        """The fields as keywords of the samplers
        (:class:`~topiclink.families.bpbfm.algorithm.BPBFMGibbs`)."""
        return {f.name: float(getattr(self, f.name)) for f in dataclasses.fields(self)}


#: command-line flag -> field of :class:`BPBFMPriors` (``topiclink fit bpbfm --gamma0 2``)
PRIOR_FLAGS: dict[str, str] = {f"--{f.name}": f.name for f in dataclasses.fields(BPBFMPriors)}


class PriorsCodec:
    """A model file stores the priors as ``{"a": 0.1, "gamma0": 1.0, ...}``; a field it
    lacks takes its default, an unknown one is refused."""

    schema = "bpbfm-priors/1"

    def encode(self, value: Any) -> Any:
        if not isinstance(value, BPBFMPriors):
            raise TypeError(f"priors must be a BPBFMPriors, got {type(value).__name__}")
        return value.as_kwargs()

    def decode(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError("the priors are stored as an object of numbers")
        known = {f.name for f in dataclasses.fields(BPBFMPriors)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown prior {unknown[0]!r}")
        return BPBFMPriors(**data)
