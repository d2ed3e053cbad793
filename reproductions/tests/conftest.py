"""Fixtures of the reproductions' tests (the few of ``tests/conftest.py`` they use)."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The shared dataset folder (``TOPICLINK_DATA``); skip when absent."""
    from topiclink.datasets import data_home

    try:
        home = data_home()
    except FileNotFoundError:
        pytest.skip("no data home: set TOPICLINK_DATA to the shared datasets folder")
    if not Path(home).exists():
        pytest.skip(f"data home {home} does not exist")
    return Path(home)


@pytest.fixture(autouse=True)
def _restore_topiclink_logger():
    """The CLI configures the 'topiclink' logger (level, handler); undo it after each test
    so that caplog-based tests see INFO records whatever ran before them."""
    import logging

    logger = logging.getLogger("topiclink")
    level, handlers = logger.level, list(logger.handlers)
    yield
    logger.setLevel(level)
    for h in list(logger.handlers):
        if h not in handlers:
            logger.removeHandler(h)
