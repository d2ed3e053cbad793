"""The shared documentation of ``fit``'s ``checkpoint`` / ``checkpoint_every``
(:mod:`topiclink.estimators.fit_docs`): appended whole, once, to the docstring."""

from __future__ import annotations

import inspect

import pytest

import topiclink
from topiclink.estimators.fit_docs import (
    CHECKPOINT_PARAGRAPH,
    CHECKPOINT_PARAMETERS,
    documents_checkpoint,
    documents_checkpoint_parameters,
)


@pytest.mark.parametrize("name", sorted(topiclink.registered_estimators()))
def test_every_checkpointed_fit_documents_both_keywords(name):
    fit = topiclink.registered_estimators()[name].fit
    if "checkpoint" not in inspect.signature(fit).parameters:
        pytest.skip("fit takes no checkpoint")
    doc = inspect.getdoc(fit) or ""
    assert "checkpoint" in doc and "checkpoint_every" in doc
    assert doc.count(CHECKPOINT_PARAGRAPH) + doc.count(CHECKPOINT_PARAMETERS) <= 1


def test_the_text_is_appended_after_the_method_s_own():
    def fit() -> None:
        """Fit.

        More.
        """

    def fit_numpy() -> None:
        """Fit.

        Parameters
        ----------
        X : array
        """

    assert inspect.getdoc(documents_checkpoint(fit)) == "Fit.\n\nMore.\n\n" + \
        CHECKPOINT_PARAGRAPH
    assert inspect.getdoc(documents_checkpoint_parameters(fit_numpy)) == (
        "Fit.\n\nParameters\n----------\nX : array\n" + CHECKPOINT_PARAMETERS)
