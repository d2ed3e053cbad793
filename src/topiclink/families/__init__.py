"""One folder per model family, over the core.

A family folder holds everything of one model family, by role:

===========================  ==========================================================
``kernels*.py``              Numba kernels (numpy, numba and the core ``topiclink.kernels``)
``algorithm.py``, others     the sampler / optimiser: state, steps (the engine runs them)
``estimator*.py``            the scikit-learn estimators (they register themselves)
``synthetic*.py``            data drawn from the family's generative process, with the truth
``plots.py``                 the family's figures
===========================  ==========================================================

The core below the families: :mod:`topiclink.inference` (engine, online driver, sharded
runs, the collapsed-Gibbs and variational token machinery that every topic family builds
on), :mod:`topiclink.execution`, :mod:`topiclink.kernels` (shared sampling, special
functions, the LDA token sweeps), :mod:`topiclink.data`, :mod:`topiclink.estimators` (the
estimator base, capabilities, persistence of states), :mod:`topiclink.experiments` (the
protocol registry and runner) and the rest.  No family imports another; what two families
share is core.  The core finds the families through :mod:`topiclink.registry`
(:func:`~topiclink.registry.discover`, :func:`~topiclink.registry.public_names`), never by
a static import, so a new family is one new folder here.
"""
