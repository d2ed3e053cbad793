"""LDA (Blei, Ng & Jordan 2003) by collapsed Gibbs sampling: the estimator.

The token sweeps it runs (:mod:`topiclink.topics.kernels.lda`, :mod:`topiclink.topics.lda`) are
core, because every topic family builds on them."""
