"""Numba kernels of the topic machinery: the LDA sweeps (:mod:`.lda`), the
Metropolis-Hastings token kernel (:mod:`.lda_mh`), the variational document E-steps
(:mod:`.variational`, :mod:`.word_e_step`)."""
