"""LDA + Regression, the LMV paper's baseline (variational LDA, then a logistic
regression of citations on topic pairs): ``estimator``."""
