"""Supervised topic models: Gibbs gSLDA / MedLDA (Zhu, Zheng & Zhang) and variational
sLDA (Blei & McAuliffe, NIPS 2007).

``algorithm``, ``variational`` (+ ``kernels_variational``), ``estimator`` /
``estimator_variational``, ``synthetic``."""

#: what the family adds to the public packages (:func:`topiclink.registry.public_names`)
PUBLIC = {
    "topiclink.datasets": {"make_slda_data": "synthetic"},
    "topiclink.datasets.synthetic": {"SLDATruth": "synthetic", "make_slda_data": "synthetic"},
}
