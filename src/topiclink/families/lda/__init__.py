"""LDA (Blei, Ng & Jordan 2003) by collapsed Gibbs sampling: the estimator.

The token sweeps it runs (:mod:`topiclink.kernels.lda`, :mod:`topiclink.inference.lda`) are
core, because every topic family builds on them."""
