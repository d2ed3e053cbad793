"""The fixed-seed outputs recorded before the engine refactor are reproduced, bit for bit.

``tests/golden/record.py`` wrote ``fixed_seed_outputs.npz`` on the code before issue 9;
each configuration below is refitted with today's code and every recorded array must be
identical (same chain, same estimates, same predictions).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.golden.record import OUTPUT, configurations, datasets, fit_one


@pytest.fixture(scope="module")
def golden():
    with np.load(OUTPUT, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


@pytest.fixture(scope="module")
def data():
    return datasets()


@pytest.mark.parametrize("name", sorted(configurations()))
def test_fixed_seed_outputs_are_unchanged(name, golden, data):
    recorded = {k.split("/", 1)[1]: v for k, v in golden.items() if k.startswith(f"{name}/")}
    assert recorded, f"nothing recorded for {name}"
    now = fit_one(name, data)
    assert set(recorded) <= set(now), f"{name}: missing outputs {set(recorded) - set(now)}"
    for key, value in recorded.items():
        np.testing.assert_array_equal(np.asarray(now[key]), value, err_msg=f"{name}/{key}")
