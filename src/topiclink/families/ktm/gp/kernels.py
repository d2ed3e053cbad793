"""Covariance functions for kernel topic models, as :mod:`sklearn.gaussian_process.kernels`.

Everything here *is* a scikit-learn kernel: hyper-parameters are
:class:`~sklearn.gaussian_process.kernels.Hyperparameter` objects, ``kernel.theta`` holds
their logarithms, ``kernel.bounds`` the log bounds, ``kernel(X, eval_gradient=True)``
returns ``(K, dK/dtheta)`` with the gradient taken with respect to the *log*
hyper-parameters (stacked in the alphabetical order of the hyper-parameter names, as
scikit-learn does), and ``+``, ``*``, ``**`` build sums, products and powers (no kernel
algebra of our own).  The stock kernels the kernel topic model (Hennig et al., AISTATS
2012) uses are re-exported: :class:`RBF` (squared exponential), :class:`RationalQuadratic`,
:class:`ConstantKernel` (scaling, ``ConstantKernel(s) * k``), :class:`WhiteKernel`,
:class:`Sum`, :class:`Product`, :class:`Exponentiation`.

The kernels added here:

* :class:`SOTUKernel` -- the paper's State-of-the-Union kernel on ``[year, speaker]``;
* :class:`CategoricalKernel` -- 1 for equal categories, ``rho`` otherwise;
* :class:`ShortestPathKernel` -- the paper's graph kernel, a scaled (optionally
  anisotropic) squared exponential on vectors of shortest-path distances (build them with
  :func:`topiclink.families.ktm.gp.features.shortest_path_features`);
* :class:`OnColumns` -- restricts any kernel to some feature columns, so that kernels on
  different features compose: ``OnColumns(RBF(5.0), [0]) * OnColumns(CategoricalKernel(),
  [1])``.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist, pdist, squareform
from sklearn.gaussian_process.kernels import (
    RBF,
    ConstantKernel,
    Exponentiation,
    Hyperparameter,
    Kernel,
    NormalizedKernelMixin,
    Product,
    RationalQuadratic,
    StationaryKernelMixin,
    Sum,
    WhiteKernel,
)

__all__ = [
    "RBF",
    "RationalQuadratic",
    "ConstantKernel",
    "WhiteKernel",
    "Sum",
    "Product",
    "Exponentiation",
    "Kernel",
    "Hyperparameter",
    "squared_exponential",
    "rational_quadratic",
    "SOTUKernel",
    "CategoricalKernel",
    "ShortestPathKernel",
    "OnColumns",
]

_DEFAULT_BOUNDS = (1e-5, 1e5)


def squared_exponential(length_scale: float | np.ndarray = 1.0, amplitude: float = 1.0,
                        length_scale_bounds: object = _DEFAULT_BOUNDS,
                        amplitude_bounds: object = _DEFAULT_BOUNDS) -> Kernel:
    """``amplitude * exp(-|x - x'|^2 / (2 length_scale^2))`` as ``ConstantKernel * RBF``.

    ``length_scale`` may be a vector (one per feature column: an anisotropic kernel).
    """
    return (ConstantKernel(amplitude, amplitude_bounds)
            * RBF(length_scale, length_scale_bounds))


def rational_quadratic(length_scale: float = 1.0, alpha: float = 1.0, amplitude: float = 1.0,
                       length_scale_bounds: object = _DEFAULT_BOUNDS,
                       alpha_bounds: object = _DEFAULT_BOUNDS,
                       amplitude_bounds: object = _DEFAULT_BOUNDS) -> Kernel:
    """``amplitude * (1 + |x - x'|^2 / (2 alpha length_scale^2))^-alpha``
    as ``ConstantKernel * RationalQuadratic``."""
    return (ConstantKernel(amplitude, amplitude_bounds)
            * RationalQuadratic(length_scale, alpha, length_scale_bounds, alpha_bounds))


def _as_2d(X: object, name: str = "X") -> np.ndarray:
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), "
                         f"got shape {arr.shape}")
    return arr


def _empty_grad(K: np.ndarray) -> np.ndarray:
    return np.empty((K.shape[0], K.shape[1], 0))


class SOTUKernel(StationaryKernelMixin, Kernel):
    r"""The State-of-the-Union kernel of Hennig et al. (2012, sec. 4.1) on ``[year, speaker]``.

    A rational quadratic kernel "on the space of time and author identity, assigning a
    distance between documents linear in time ..., with an additional constant term if the
    authors of two documents are not the same":

    .. math::
        k(x, x') = a \left(1 + \frac{r^2}{2\alpha}\right)^{-\alpha}, \qquad
        r^2 = \frac{(t - t')^2}{\ell^2} + c\,[s \ne s'],

    with ``x = (t, s)`` (year, integer speaker code), length scale :math:`\ell`
    (``length_scale``, years; the paper starts at 5), scale mixture :math:`\alpha`
    (``alpha``), speaker constant :math:`c` (``speaker_constant``) and amplitude :math:`a`
    (``amplitude``).  The distance :math:`r` is linear in time for one speaker
    (:math:`r = |t - t'|/\ell`), and a different speaker adds the constant :math:`c` to the
    *squared* distance.

    Why the constant goes into :math:`r^2` and not into :math:`r`: :math:`r^2` above is the
    squared Euclidean distance between the embeddings :math:`(t/\ell,\ \sqrt{c/2}\,
    e_s)` (``e_s`` one-hot), so the kernel is positive semi-definite for every
    hyper-parameter value (Schoenberg; the rational quadratic is a scale mixture of squared
    exponentials).  The literal alternative :math:`r = |t - t'|/\ell + c[s \ne s']` is
    *not* a valid kernel: on random inputs its Gram matrices have eigenvalues as low as
    -0.47 (checked numerically).  The paper does not print a formula, so this is our
    reading.

    Gradients are analytic, with respect to the logs of the non-fixed hyper-parameters, in
    the order ``alpha, amplitude, length_scale, speaker_constant``.
    """

    def __init__(self, length_scale: float = 5.0, alpha: float = 1.0,
                 speaker_constant: float = 1.0, amplitude: float = 1.0,
                 length_scale_bounds: object = _DEFAULT_BOUNDS,
                 alpha_bounds: object = _DEFAULT_BOUNDS,
                 speaker_constant_bounds: object = _DEFAULT_BOUNDS,
                 amplitude_bounds: object = _DEFAULT_BOUNDS) -> None:
        self.length_scale = length_scale
        self.alpha = alpha
        self.speaker_constant = speaker_constant
        self.amplitude = amplitude
        self.length_scale_bounds = length_scale_bounds
        self.alpha_bounds = alpha_bounds
        self.speaker_constant_bounds = speaker_constant_bounds
        self.amplitude_bounds = amplitude_bounds

    @property
    def hyperparameter_length_scale(self) -> Hyperparameter:
        return Hyperparameter("length_scale", "numeric", self.length_scale_bounds)

    @property
    def hyperparameter_alpha(self) -> Hyperparameter:
        return Hyperparameter("alpha", "numeric", self.alpha_bounds)

    @property
    def hyperparameter_speaker_constant(self) -> Hyperparameter:
        return Hyperparameter("speaker_constant", "numeric", self.speaker_constant_bounds)

    @property
    def hyperparameter_amplitude(self) -> Hyperparameter:
        return Hyperparameter("amplitude", "numeric", self.amplitude_bounds)

    @staticmethod
    def _check(X: object, name: str) -> np.ndarray:
        arr = _as_2d(X, name)
        if arr.shape[1] != 2:
            raise ValueError(f"SOTUKernel: {name} must have two columns [year, speaker_code], "
                             f"got {arr.shape[1]}")
        return arr

    def __call__(self, X: object, Y: object = None,
                 eval_gradient: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Kernel matrix ``k(X, Y)`` (and, if ``eval_gradient``, ``dK/dlog(theta)``)."""
        X = self._check(X, "X")
        if Y is None:
            dt2 = squareform(pdist(X[:, :1], metric="sqeuclidean"))
            differ = (X[:, 1][:, None] != X[:, 1][None, :]).astype(np.float64)
        else:
            if eval_gradient:
                raise ValueError("Gradient can only be evaluated when Y is None.")
            Y = self._check(Y, "Y")
            dt2 = cdist(X[:, :1], Y[:, :1], metric="sqeuclidean")
            differ = (X[:, 1][:, None] != Y[:, 1][None, :]).astype(np.float64)
        ell, alpha, c, amp = (float(self.length_scale), float(self.alpha),
                              float(self.speaker_constant), float(self.amplitude))
        r2 = dt2 / ell**2 + c * differ
        base = 1.0 + r2 / (2.0 * alpha)
        K = amp * base**-alpha
        if not eval_gradient:
            return K
        grads = []  # alphabetical: alpha, amplitude, length_scale, speaker_constant
        if not self.hyperparameter_alpha.fixed:
            grads.append(K * (-alpha * np.log(base) + r2 / (2.0 * base)))
        if not self.hyperparameter_amplitude.fixed:
            grads.append(K.copy())
        if not self.hyperparameter_length_scale.fixed:
            grads.append(K * dt2 / (ell**2 * base))
        if not self.hyperparameter_speaker_constant.fixed:
            grads.append(-K * c * differ / (2.0 * base))
        G = np.stack(grads, axis=2) if grads else _empty_grad(K)
        return K, G

    def diag(self, X: object) -> np.ndarray:
        X = self._check(X, "X")
        return np.full(X.shape[0], float(self.amplitude))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(length_scale={self.length_scale:.3g}, "
                f"alpha={self.alpha:.3g}, speaker_constant={self.speaker_constant:.3g}, "
                f"amplitude={self.amplitude:.3g})")


class CategoricalKernel(StationaryKernelMixin, NormalizedKernelMixin, Kernel):
    r"""``k(x, x') = 1`` if the two rows are equal (same category), else ``rho``.

    Positive semi-definite for ``0 <= rho <= 1``: it is ``rho`` times the all-ones kernel
    plus ``1 - rho`` times the same-category indicator kernel; hence the default bounds
    ``rho_bounds=(1e-5, 1.0)``.  ``X`` holds category codes (any numbers); with several
    columns, two rows are in the same category when all their columns agree.  Scale it
    with ``ConstantKernel`` and restrict it to a column with :class:`OnColumns`.

    The gradient with respect to ``log rho`` is ``rho [x != x']``.
    """

    def __init__(self, rho: float = 0.5, rho_bounds: object = (1e-5, 1.0)) -> None:
        self.rho = rho
        self.rho_bounds = rho_bounds

    @property
    def hyperparameter_rho(self) -> Hyperparameter:
        return Hyperparameter("rho", "numeric", self.rho_bounds)

    def __call__(self, X: object, Y: object = None,
                 eval_gradient: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Kernel matrix ``k(X, Y)`` (and, if ``eval_gradient``, ``dK/dlog(rho)``)."""
        X = _as_2d(X)
        if Y is None:
            Y_ = X
        else:
            if eval_gradient:
                raise ValueError("Gradient can only be evaluated when Y is None.")
            Y_ = _as_2d(Y, "Y")
            if Y_.shape[1] != X.shape[1]:
                raise ValueError(f"X and Y have {X.shape[1]} and {Y_.shape[1]} columns")
        same = (X[:, None, :] == Y_[None, :, :]).all(axis=2)
        rho = float(self.rho)
        K = np.where(same, 1.0, rho)
        if not eval_gradient:
            return K
        if self.hyperparameter_rho.fixed:
            return K, _empty_grad(K)
        return K, np.where(same, 0.0, rho)[:, :, None]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rho={self.rho:.3g})"


class ShortestPathKernel(StationaryKernelMixin, Kernel):
    r"""The graph kernel of Hennig et al. (2012, sec. 4.2):

    .. math::
        k(d_1, d_2) = s \exp\!\left(-\tfrac12 (x_1 - x_2)^\top S (x_1 - x_2)\right),
        \qquad S = \mathrm{diag}_i(1/\ell_i^2),

    where ``x_d`` is document d's vector of shortest-path distances to every document
    (:func:`topiclink.families.ktm.gp.features.shortest_path_features`).  It is a squared
    exponential
    (an RBF) on those vectors, scaled by the amplitude ``s``: ``length_scale`` is a scalar
    (``S = I / length_scale^2``) or one length scale per column (the paper's diagonal
    ``S``).  The paper gives unlinked documents infinite distance; the features use a
    large finite value instead (see
    :func:`~topiclink.families.ktm.gp.features.shortest_path_features`),
    because ``inf - inf`` is undefined and would make the kernel NaN.

    Gradients: with respect to ``log amplitude`` and ``log length_scale`` (alphabetical
    order; one entry per length scale when anisotropic).
    """

    def __init__(self, length_scale: float | np.ndarray = 1.0, amplitude: float = 1.0,
                 length_scale_bounds: object = _DEFAULT_BOUNDS,
                 amplitude_bounds: object = _DEFAULT_BOUNDS) -> None:
        self.length_scale = length_scale
        self.amplitude = amplitude
        self.length_scale_bounds = length_scale_bounds
        self.amplitude_bounds = amplitude_bounds

    @property
    def anisotropic(self) -> bool:
        return np.iterable(self.length_scale) and len(self.length_scale) > 1

    @property
    def hyperparameter_length_scale(self) -> Hyperparameter:
        if self.anisotropic:
            return Hyperparameter("length_scale", "numeric", self.length_scale_bounds,
                                  len(self.length_scale))
        return Hyperparameter("length_scale", "numeric", self.length_scale_bounds)

    @property
    def hyperparameter_amplitude(self) -> Hyperparameter:
        return Hyperparameter("amplitude", "numeric", self.amplitude_bounds)

    def __call__(self, X: object, Y: object = None,
                 eval_gradient: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Kernel matrix ``k(X, Y)`` (and, if ``eval_gradient``, ``dK/dlog(theta)``)."""
        X = _as_2d(X)
        ell = np.atleast_1d(np.asarray(self.length_scale, dtype=np.float64)).ravel()
        if ell.size > 1 and ell.size != X.shape[1]:
            raise ValueError(f"ShortestPathKernel: {ell.size} length scales for "
                             f"{X.shape[1]} feature columns")
        Xs = X / ell
        if Y is None:
            d2 = squareform(pdist(Xs, metric="sqeuclidean"))
        else:
            if eval_gradient:
                raise ValueError("Gradient can only be evaluated when Y is None.")
            d2 = cdist(Xs, _as_2d(Y, "Y") / ell, metric="sqeuclidean")
        amp = float(self.amplitude)
        K = amp * np.exp(-0.5 * d2)
        if not eval_gradient:
            return K
        grads = []
        if not self.hyperparameter_amplitude.fixed:
            grads.append(K[:, :, None])
        if not self.hyperparameter_length_scale.fixed:
            if ell.size == 1:
                grads.append((K * d2)[:, :, None])
            else:
                diff2 = (Xs[:, None, :] - Xs[None, :, :]) ** 2
                grads.append(K[:, :, None] * diff2)
        G = np.concatenate(grads, axis=2) if grads else _empty_grad(K)
        return K, G

    def diag(self, X: object) -> np.ndarray:
        return np.full(_as_2d(X).shape[0], float(self.amplitude))

    def __repr__(self) -> str:
        ell = np.atleast_1d(np.asarray(self.length_scale, dtype=np.float64))
        ls = f"{ell[0]:.3g}" if ell.size == 1 else "[" + ", ".join(f"{v:.3g}" for v in ell) + "]"
        return f"{type(self).__name__}(length_scale={ls}, amplitude={self.amplitude:.3g})"


class OnColumns(Kernel):
    """``kernel`` applied to the feature columns ``columns`` only.

    Lets kernels on different features compose with scikit-learn's ``+`` and ``*``::

        OnColumns(RBF(5.0), [0]) * OnColumns(CategoricalKernel(0.3), [1])

    Hyper-parameters are the wrapped kernel's, prefixed ``kernel__`` (like
    :class:`~sklearn.gaussian_process.kernels.Exponentiation`).
    """

    def __init__(self, kernel: Kernel, columns: object) -> None:
        self.kernel = kernel
        self.columns = columns

    def _cols(self) -> np.ndarray:
        """The column positions: integers, or whole floats (``np.float64(2.0)``, as a
        model file or an array arithmetic may give them) read as those integers."""
        try:
            cols = np.atleast_1d(np.asarray(self.columns))
        except (TypeError, ValueError):
            cols = np.zeros(0)
        if cols.dtype.kind == "f" and cols.ndim == 1 and np.all(np.isfinite(cols)) \
                and np.all(cols == np.round(cols)):
            cols = cols.astype(np.int64)
        if cols.ndim != 1 or cols.size == 0 or cols.dtype.kind not in "iu":
            raise ValueError(f"OnColumns: columns must be a non-empty list of integer "
                             f"column positions, got {self.columns!r}")
        return cols

    def _take(self, X: object, name: str) -> np.ndarray:
        arr = _as_2d(X, name)
        cols = self._cols()
        if cols.max() >= arr.shape[1] or cols.min() < -arr.shape[1]:
            raise ValueError(f"OnColumns: {name} has {arr.shape[1]} columns, asked for "
                             f"columns {cols.tolist()}")
        return arr[:, cols]

    def get_params(self, deep: bool = True) -> dict:
        params = dict(kernel=self.kernel, columns=self.columns)
        if deep:
            params.update(("kernel__" + k, v) for k, v in self.kernel.get_params().items())
        return params

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return [Hyperparameter("kernel__" + h.name, h.value_type, h.bounds, h.n_elements,
                               h.fixed) for h in self.kernel.hyperparameters]

    @property
    def theta(self) -> np.ndarray:
        return self.kernel.theta

    @theta.setter
    def theta(self, theta: np.ndarray) -> None:
        self.kernel.theta = theta

    @property
    def bounds(self) -> np.ndarray:
        return self.kernel.bounds

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return False
        return (self.kernel == other.kernel
                and np.array_equal(np.atleast_1d(self.columns), np.atleast_1d(other.columns)))

    def __call__(self, X: object, Y: object = None,
                 eval_gradient: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """``kernel(X[:, columns], Y[:, columns], eval_gradient)``."""
        Xc = self._take(X, "X")
        Yc = None if Y is None else self._take(Y, "Y")
        return self.kernel(Xc, Yc, eval_gradient=eval_gradient)

    def diag(self, X: object) -> np.ndarray:
        return self.kernel.diag(self._take(X, "X"))

    def is_stationary(self) -> bool:
        return self.kernel.is_stationary()

    @property
    def requires_vector_input(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"{self.kernel!r}[columns={np.atleast_1d(self.columns).tolist()}]"
