"""Kernel topic models (Hennig, Stern, Herbrich & Graepel, AISTATS 2012): a Gaussian-process
prior over document features on the topic proportions, through the Laplace bridge.

``kernels``, ``algorithm``, ``laplace``, ``gp/`` (kernels, features, regression),
``estimator``."""
