"""Codecs for estimator parameters that are not JSON (a GP kernel object, ...).

A model file stores parameters as JSON; a parameter that is an object declares a codec
in its estimator's ``_param_codecs``.  The codec writes a JSON description with a named
``schema`` and rebuilds the object from it, never through pickle: only classes of
whitelisted modules can be rebuilt.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Protocol

__all__ = ["ParamCodec", "SklearnKernelCodec"]


class ParamCodec(Protocol):
    """``encode(value) -> JSON``, ``decode(JSON) -> value``; ``schema`` names the format."""

    schema: str

    def encode(self, value: Any) -> Any:
        ...

    def decode(self, data: Any) -> Any:
        ...


class SklearnKernelCodec:
    """scikit-learn Gaussian-process kernels (sums, products, exponentiations and any
    kernel of ``sklearn.gaussian_process.kernels``, nested), with their hyper-parameters.

    ``{"kernel": "RBF", "params": {"length_scale": 2.0, "length_scale_bounds": [..]}}``;
    nested kernels (``k1``, ``k2``, ``kernel``) are encoded recursively.  Classes outside
    the whitelisted modules are refused in both directions.
    """

    schema = "sklearn-kernel/1"

    def __init__(self, modules: tuple[str, ...] = ("sklearn.gaussian_process.kernels",)
                 ) -> None:
        self.modules = modules

    def encode(self, value: Any) -> Any:
        cls = type(value)
        if cls.__module__ not in self.modules:
            raise TypeError(f"cannot store a kernel of class {cls.__module__}.{cls.__name__}")
        params = {}
        for name in inspect.signature(cls.__init__).parameters:
            if name == "self":
                continue
            v = getattr(value, name)
            if hasattr(v, "get_params") and hasattr(v, "theta"):
                params[name] = {"nested": self.encode(v)}
            elif isinstance(v, str):
                params[name] = v
            else:
                params[name] = _plain(v)
        return {"module": cls.__module__, "kernel": cls.__name__, "params": params}

    def decode(self, data: Any) -> Any:
        module = data.get("module")
        if module not in self.modules:
            raise ValueError(f"refusing to rebuild a kernel from module {module!r}")
        cls = getattr(importlib.import_module(module), data["kernel"], None)
        if not isinstance(cls, type):
            raise ValueError(f"unknown kernel {data.get('kernel')!r} in {module}")
        params = {}
        for name, v in data.get("params", {}).items():
            if isinstance(v, dict) and "nested" in v:
                params[name] = self.decode(v["nested"])
            elif isinstance(v, list):
                params[name] = _tuple_or_array(v)
            else:
                params[name] = v
        return cls(**params)


def _plain(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _tuple_or_array(value: list) -> Any:
    import numpy as np

    if value and all(isinstance(v, list) for v in value):
        return np.asarray(value, dtype=float)
    return tuple(value) if len(value) == 2 else np.asarray(value, dtype=float)
