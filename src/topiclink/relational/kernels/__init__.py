"""Numba kernels of the relational machinery: the relational token sweep (:mod:`.rtm`),
the augmentation draws (:mod:`.augment`), the link-weight statistics (:mod:`.weights`)
and the non-link sampler (:mod:`.negatives`)."""
