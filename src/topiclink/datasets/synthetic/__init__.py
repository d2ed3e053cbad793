"""Synthetic data drawn from the models' own generative processes, with the true parameters.

Every generator returns ``(data, truth)``: the data in the library's containers and a
small frozen dataclass holding the parameters that generated it, for planted-recovery
tests and examples.  All randomness comes from ``random_state`` (one
:class:`numpy.random.Generator`); the same seed gives the identical result.

Shared word model (LDA; Blei, Ng & Jordan 2003), for documents d = 1..D, topics k = 1..K,
vocabulary of V words::

    phi_k   ~ Dirichlet(beta)          k = 1..K            (topic_word, K x V)
    theta_d ~ Dirichlet(alpha)         d = 1..D            (doc_topic,  D x K)
    N_d     =  doc_length, or ~ Uniform{min..max}          (N_d >= 1: no empty document)
    z_dn    ~ Categorical(theta_d)     n = 1..N_d          (assignments)
    w_dn    ~ Categorical(phi_{z_dn})

and ``zbar_d = (1/N_d) sum_n onehot(z_dn)`` (the empirical topic proportions of the drawn
z, which the relational and supervised models condition on rather than theta).

With the defaults ``alpha = 0.1`` and ``beta = 0.01`` the K = 5 topics over V = 500 words
are sparse and nearly disjoint (each puts 90% of its mass on roughly 10-20 words; a few
entries of phi underflow to exactly 0) and most documents are dominated by one or two
topics, so a few hundred Gibbs sweeps recover them.

Modules: :mod:`~topiclink.datasets.synthetic.lda` (the word model and LDA),
:mod:`~topiclink.families.rtm.synthetic` (gRTM links), :mod:`~topiclink.families.slda.synthetic`
(sLDA labels), :mod:`~topiclink.families.lmv.synthetic` (LMV citations with visibility),
:mod:`~topiclink.families.bpbfm.synthetic` (BPBFM multi-relational tensors, no words);
:mod:`~topiclink.datasets.synthetic._common` holds the shared checks.
"""

from topiclink.datasets.synthetic._common import DocLength
from topiclink.datasets.synthetic.lda import LDATruth, make_lda_data
from topiclink.registry import exports, public_names

__all__ = ["DocLength", "LDATruth", "make_lda_data"]
__getattr__, __dir__ = exports(__name__, __all__)
__all__ += public_names(__name__)   # the families' names
