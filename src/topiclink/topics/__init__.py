"""The token-level topic machinery every topic family builds on.

- :mod:`~topiclink.topics.lda`: the collapsed Gibbs LDA algorithm (exact, partition and
  AD-LDA schemes) with :mod:`~topiclink.topics.partition`,
  :mod:`~topiclink.topics.adlda`, :mod:`~topiclink.topics.chunked` and
  :mod:`~topiclink.topics.threaded` for the sharded sweeps;
- :mod:`~topiclink.topics.var_lda` and :mod:`~topiclink.topics.variational`: what the
  variational EM algorithms share (the topic M-step, the document E-step);
- :mod:`~topiclink.topics.fixed_topics` and :mod:`~topiclink.topics.completion`:
  inference and perplexity with the topics fixed (prediction);
- :mod:`topiclink.topics.kernels`: the Numba kernels of all of these.
"""
