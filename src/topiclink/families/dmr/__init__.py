"""Dirichlet-multinomial regression (Mimno & McCallum 2008): document-feature priors on
the topic proportions.  ``algorithm`` (the sampler), ``estimator`` (:class:`DMR`)."""
