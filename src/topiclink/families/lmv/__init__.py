"""The latent model of visibility (Tan, Chan & Zheng, AoAS 2016): LMV, LMVS, LMV(t) and the
Pairwise-Link-LDA baseline.

``kernels`` / ``kernels_sampled``, ``algorithm`` (batch variational), ``stochastic``
(LMVS), ``pairs`` / ``updates``, ``times``, ``estimator``, ``synthetic``, ``plots``."""

#: what the family adds to the public packages (:func:`topiclink.registry.public_names`)
PUBLIC = {
    "topiclink.datasets": {"make_lmv_data": "synthetic"},
    "topiclink.datasets.synthetic": {name: "synthetic" for name in (
        "LMVTruth", "make_lmv_data", "paper_blockmodel")},
    "topiclink.plotting": {name: "plots" for name in (
        "plot_blockmodel", "plot_visibility_by_topic", "plot_visibility_vs_citations",
        "recommendation_table", "term_scores", "top_words_by_term_score")},
}
