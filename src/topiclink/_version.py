"""The library's version: one place, read by the package, the model files and the reports."""

__version__ = "0.1.0"
