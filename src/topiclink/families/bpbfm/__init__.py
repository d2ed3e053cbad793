"""Bilinear Poisson factor models of multi-relational data (BPBFM-1/-2; Hu, Rai & Carin,
AISTATS 2016).

``kernels`` / ``kernels_em``, ``algorithm`` (Gibbs), ``em`` / ``em_degrees`` (MAP-EM),
``online``, ``priors`` (the Gibbs priors' config), ``estimator`` (Gibbs: BPBFM-1 / -2),
``estimator_em`` (MAP-EM: BPBFM-1 and the degree-corrected model), ``estimator_base``
(what the three share), ``synthetic``, ``plots``."""

#: what the family adds to the public packages (:func:`topiclink.registry.public_names`)
PUBLIC = {
    "topiclink.datasets": {"make_bpbfm_data": "synthetic"},
    "topiclink.datasets.synthetic": {name: "synthetic" for name in (
        "BPBFMTruth", "draw_bpbfm_counts", "make_bpbfm_data", "planted_bpbfm_pattern")},
    "topiclink.plotting": {"plot_dictionary": "plots", "plot_relation_matrices": "plots"},
}
