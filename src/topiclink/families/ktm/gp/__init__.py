"""Gaussian-process pieces for kernel topic models (Hennig et al., AISTATS 2012).

* :mod:`topiclink.families.ktm.gp.kernels` -- scikit-learn kernels: the stock ones
  re-exported plus the State-of-the-Union kernel, a categorical kernel, the shortest-path
  graph kernel and a column selector for composing kernels on different features;
* :mod:`topiclink.families.ktm.gp.features` -- radial basis, one-hot and shortest-path features;
* :mod:`topiclink.families.ktm.gp.regression` -- heteroscedastic GP regression (posterior,
  leave-one-out cavities, log evidence with analytic gradients, L-BFGS hyper-parameter
  fitting) and an inducing-point (FITC) approximation for large D.
"""

from __future__ import annotations

from topiclink.families.ktm.gp.features import (
    one_hot,
    radial_basis_features,
    shortest_path_features,
)
from topiclink.families.ktm.gp.kernels import (
    RBF,
    CategoricalKernel,
    ConstantKernel,
    OnColumns,
    Product,
    RationalQuadratic,
    ShortestPathKernel,
    SOTUKernel,
    Sum,
    WhiteKernel,
    rational_quadratic,
    squared_exponential,
)
from topiclink.families.ktm.gp.regression import (
    FITCGP,
    HeteroscedasticGP,
    HyperparameterFit,
    fit_hyperparameters,
    log_marginal_likelihood,
)

__all__ = [
    "RBF",
    "RationalQuadratic",
    "ConstantKernel",
    "WhiteKernel",
    "Sum",
    "Product",
    "squared_exponential",
    "rational_quadratic",
    "SOTUKernel",
    "CategoricalKernel",
    "ShortestPathKernel",
    "OnColumns",
    "radial_basis_features",
    "one_hot",
    "shortest_path_features",
    "HeteroscedasticGP",
    "FITCGP",
    "HyperparameterFit",
    "log_marginal_likelihood",
    "fit_hyperparameters",
]
