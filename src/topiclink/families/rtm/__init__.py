"""Relational topic models: Gibbs gRTM with Polya-Gamma augmentation (Chen, Zhu, Xia &
Zhang, TPAMI 2015) and the variational RTM (Chang & Blei, AISTATS 2009).

``algorithm`` / ``shards`` (Gibbs, in process and sharded), ``variational``, ``estimator``
/ ``estimator_variational``, ``synthetic``, ``plots``."""

#: what the family adds to the public packages (:func:`topiclink.registry.public_names`)
PUBLIC = {
    "topiclink.datasets": {"make_rtm_data": "synthetic"},
    "topiclink.datasets.synthetic": {name: "synthetic" for name in (
        "RTM_BACKGROUND", "RTM_DIAGONAL", "RTM_NEXT_TOPIC", "RTMTruth", "make_rtm_data",
        "planted_rtm_weights")},
    "topiclink.plotting": {"plot_weight_matrix": "plots"},
    "topiclink.estimators": {"PAPER_VARIANTS": "estimator"},
}
