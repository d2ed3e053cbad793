"""The papers' evaluation protocols of topiclink, outside the library.

Each paper is a TOML file in ``papers/`` (data set, split, grid, models with their
settings, metrics, the claims to check), read by :mod:`topiclink_reproductions.spec` and
checked by :mod:`topiclink_reproductions.claims`; one module per protocol holds only
what data cannot say (a split rule, a model-fitting recipe) and registers its
:class:`~topiclink.experiments.registry.ProtocolSpec`.  ``topiclink experiment NAME``
finds the modules through the ``topiclink.experiments`` entry points of this
distribution; the library never imports it.  ``peers/`` wraps other libraries
(PyKEEN, tomotopy) as fit/predict models of the runner.
"""
