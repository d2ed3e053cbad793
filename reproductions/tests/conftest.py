"""Fixtures of the reproductions' tests: the ones of ``tests/conftest.py`` they use (the
repository root is on ``pythonpath``), shared rather than written again."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

from tests.conftest import (  # noqa: E402, F401
    _benchmarks_stay_off_sys_path,
    _restore_topiclink_logger,
    shared_datasets,
)
