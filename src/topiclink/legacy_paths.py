"""The module paths of before the one-folder-per-family layout, importable for one release.

Each family now lives in ``topiclink/families/<family>/`` (see :mod:`topiclink.families`).
``import topiclink.models.rtm`` (or any path of :data:`MOVED`) still works: a finder on
:data:`sys.meta_path` hands back the module at its new path, so the old and the new name
are the same module object (monkeypatching either patches both), with a
:class:`DeprecationWarning` naming the new path.  Model files saved before the move name
their estimator's old module; they load through the same table.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

#: old module path -> new module path, both below ``topiclink.``
MOVED: dict[str, str] = {
    "datasets.synthetic._rtm_links": "families.rtm.synthetic_links",
    "datasets.synthetic.bpbfm": "families.bpbfm.synthetic",
    "datasets.synthetic.lmv": "families.lmv.synthetic",
    "datasets.synthetic.rtm": "families.rtm.synthetic",
    "datasets.synthetic.slda": "families.slda.synthetic",
    "experiments.bpbfm": "families.bpbfm.protocol",
    "experiments.grtm": "families.rtm.protocol",
    "experiments.kge_peers": "families.bpbfm.protocol_peers",
    "experiments.ktm": "families.ktm.protocol",
    "experiments.ktm_graph": "families.ktm.protocol_graph",
    "experiments.lmv": "families.lmv.protocol",
    "experiments.lmv_kdd": "families.lmv.protocol_kdd",
    "experiments.lmv_simulation": "families.lmv.protocol_simulation",
    "experiments.slda": "families.slda.protocol",
    "gp": "families.ktm.gp",
    "gp.features": "families.ktm.gp.features",
    "gp.kernels": "families.ktm.gp.kernels",
    "gp.regression": "families.ktm.gp.regression",
    "inference.bpbfm": "families.bpbfm.algorithm",
    "inference.bpbfm_em": "families.bpbfm.em",
    "inference.bpbfm_online": "families.bpbfm.online",
    "inference.dmr": "families.dmr.algorithm",
    "inference.ktm": "families.ktm.algorithm",
    "inference.laplace": "families.ktm.laplace",
    "inference.lmv": "families.lmv.algorithm",
    "inference.lmv_pairs": "families.lmv.pairs",
    "inference.lmv_stochastic": "families.lmv.stochastic",
    "inference.lmv_updates": "families.lmv.updates",
    "inference.rtm": "families.rtm.algorithm",
    "inference.rtm_shards": "families.rtm.shards",
    "inference.slda": "families.slda.algorithm",
    "inference.var_rtm": "families.rtm.variational",
    "inference.var_slda": "families.slda.variational",
    "kernels.bpbfm": "families.bpbfm.kernels",
    "kernels.bpbfm_em": "families.bpbfm.kernels_em",
    "kernels.ktm": "families.ktm.kernels",
    "kernels.lmv": "families.lmv.kernels",
    "kernels.lmv_sampled": "families.lmv.kernels_sampled",
    "kernels.lmv_words": "kernels.word_e_step",
    "kernels.var_rtm": "kernels.variational",
    "kernels.var_slda": "families.slda.kernels_variational",
    "models.bpbfm": "families.bpbfm.estimator",
    "models.dmr": "families.dmr.estimator",
    "models.ktm": "families.ktm.estimator",
    "models.lda": "families.lda.estimator",
    "models.lda_regression": "families.lda_regression.estimator",
    "models.lmv": "families.lmv.estimator",
    "models.rtm": "families.rtm.estimator",
    "models.slda": "families.slda.estimator",
    "models.times": "families.lmv.times",
    "models.var_rtm": "families.rtm.estimator_variational",
    "models.var_slda": "families.slda.estimator_variational",
    "plotting.bpbfm": "families.bpbfm.plots",
    "plotting.relational": "families.rtm.plots",
    "plotting.visibility": "families.lmv.plots",
}


def new_path(module: str) -> str:
    """The current path of ``module`` (itself when it did not move)."""
    short = module.removeprefix("topiclink.")
    return "topiclink." + MOVED[short] if module.startswith("topiclink.") and short in MOVED \
        else module


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolve an old module path of :data:`MOVED` to the module at its new path."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if new_path(fullname) == fullname:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        target = new_path(spec.name)
        warnings.warn(f"{spec.name} moved to {target}; the old path goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(target)

    def exec_module(self, module: ModuleType) -> None:
        """The module at the new path is already executed."""


def install() -> None:
    """Put the finder first on :data:`sys.meta_path`, once (first, so that a folder left
    behind at an old path, e.g. a stale ``__pycache__``, cannot shadow the move)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
