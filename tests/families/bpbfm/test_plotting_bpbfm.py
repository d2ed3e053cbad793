"""Pictures of a fitted BPBFM: the relation matrices Lambda^r and BPBFM-2's dictionary."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import topiclink.plotting as plotting  # noqa: E402
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel  # noqa: E402
from topiclink.families.bpbfm.synthetic import make_bpbfm_data  # noqa: E402
from topiclink.plotting import plot_dictionary, plot_relation_matrices  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    tensor, _ = make_bpbfm_data(24, 14, 3, model=2, n_dictionary=2, random_state=0,
                                density=0.08)
    kw = {"max_iter": 6, "burn_in": 2, "random_state": 0}
    return (BilinearPoissonFactorModel(3, **kw).fit(tensor),
            BilinearPoissonFactorModel(3, n_dictionary=2, **kw).fit(tensor))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _images(fig):
    return [im for ax in fig.axes for im in ax.images]


def test_exported():
    assert {"plot_relation_matrices", "plot_dictionary"} <= set(plotting.__all__)


def test_plot_relation_matrices_chosen_relations(fitted):
    model = fitted[0]
    fig = plot_relation_matrices(model, relations=["r3", 0, "r13"])
    assert isinstance(fig, matplotlib.figure.Figure)
    images = _images(fig)
    assert len(images) == 3
    titles = [im.axes.get_title() for im in images]
    assert titles == ["r3", "r0", "r13"]
    for im, r in zip(images, (3, 0, 13), strict=True):
        np.testing.assert_array_equal(np.asarray(im.get_array()), model.relation_matrices_[r])
    # one colour scale from 0 to the largest entry shown, one colour bar
    shown = model.relation_matrices_[[3, 0, 13]]
    assert {im.get_clim() for im in images} == {(0.0, shown.max())}
    assert len(fig.axes) == 3 + 1           # a row of 3 panels and one colour bar
    assert images[0].axes.get_ylabel() == "head factor k1"
    assert images[0].axes.get_xlabel() == "tail factor k2"
    assert [t.get_text() for t in images[0].axes.get_xticklabels()] == ["0", "1", "2"]


def test_plot_relation_matrices_default_and_max_panels(fitted):
    model = fitted[0]
    fig = plot_relation_matrices(model)                 # 14 relations > 12 panels
    images = _images(fig)
    assert len(images) == 12
    mass = model.relation_matrices_.sum(axis=(1, 2))
    expected = np.sort(np.argsort(-mass, kind="stable")[:12])
    assert [im.axes.get_title() for im in images] == [f"r{r}" for r in expected]
    assert "12 of 14 relations" in fig.get_suptitle()
    fig = plot_relation_matrices(model, max_panels=20)
    assert len(_images(fig)) == 14
    assert len(_images(plot_relation_matrices(model, relations="r5"))) == 1
    # a BPBFM-2 model has relation matrices too
    assert len(_images(plot_relation_matrices(fitted[1], relations=[1, 2]))) == 2


def test_plot_relation_matrices_errors(fitted):
    model = fitted[0]
    with pytest.raises(ValueError, match="unknown relation 'nope'"):
        plot_relation_matrices(model, relations=["r1", "nope"])
    with pytest.raises(ValueError, match=r"relation index 14 is not in \[0, 14\)"):
        plot_relation_matrices(model, relations=[14])
    with pytest.raises(ValueError, match="3 relations asked for, more than max_panels=2"):
        plot_relation_matrices(model, relations=[0, 1, 2], max_panels=2)
    with pytest.raises(ValueError, match="max_panels must be an integer >= 1"):
        plot_relation_matrices(model, max_panels=0)
    with pytest.raises(ValueError, match="relations is empty"):
        plot_relation_matrices(model, relations=[])
    with pytest.raises(ValueError, match="not fitted"):
        plot_relation_matrices(BilinearPoissonFactorModel(3))
    with pytest.raises(ValueError, match="needs a fitted BilinearPoissonFactorModel"):
        plot_relation_matrices(object())


def test_plot_dictionary(fitted):
    model = fitted[1]
    fig = plot_dictionary(model)
    assert isinstance(fig, matplotlib.figure.Figure)
    images = _images(fig)
    assert len(images) == 2 + 1                      # G^0, G^1 and eta
    for m in range(2):
        np.testing.assert_array_equal(np.asarray(images[m].get_array()), model.dictionary_[m])
        assert images[m].axes.get_title() == f"G^{m}"
    assert images[0].get_clim() == images[1].get_clim() == (0.0, model.dictionary_.max())
    eta = images[2]
    np.testing.assert_array_equal(np.asarray(eta.get_array()), model.relation_weights_)
    assert [t.get_text() for t in eta.axes.get_xticklabels()] == [f"r{r}" for r in range(14)]
    assert [t.get_text() for t in eta.axes.get_yticklabels()] == ["G^0", "G^1"]
    with pytest.raises(ValueError, match=r"BPBFM-1 \(n_dictionary=None\) and has no "
                                         "dictionary; plot_relation_matrices"):
        plot_dictionary(fitted[0])
