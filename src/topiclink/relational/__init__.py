"""The relational machinery of the link models (gRTM and the families built on it).

- :mod:`~topiclink.relational.pairs` and :mod:`~topiclink.relational.negatives`: the
  training pairs, positive links and sampled non-links;
- :mod:`~topiclink.relational.augment`: the Polya-Gamma / inverse-Gaussian augmentation of
  every training pair;
- :mod:`~topiclink.relational.weights`: the link-weight (eta / U) conditional;
- :mod:`~topiclink.relational.pipeline`: one iteration's relational steps, overlapped;
- :mod:`topiclink.relational.kernels`: their Numba kernels.
"""
