import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def tiny_counts():
    """A 6-document, 8-word count matrix with no empty document."""
    import numpy as np

    rng = np.random.default_rng(123)
    X = rng.poisson(1.0, size=(6, 8))
    X[:, 0] += 1
    return X


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The lab's copies of the data sets, named explicitly by ``TOPICLINK_DATA`` (CI sets it
    to the ``shared/datasets`` beside the clone); skip when it is not set or absent (a
    user's own data home is never used by the tests)."""
    env = os.environ.get("TOPICLINK_DATA", "").strip()
    if not env:
        pytest.skip("set TOPICLINK_DATA to the shared datasets folder")
    if not Path(env).is_dir():
        pytest.skip(f"TOPICLINK_DATA={env} does not exist")
    return Path(env)


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


BENCHMARKS = (Path(__file__).resolve().parents[1] / "benchmarks").resolve()


@pytest.fixture(autouse=True)
def _benchmarks_stay_off_sys_path():
    """No test leaves benchmarks/ on ``sys.path`` (a benchmark named like a package would
    shadow it in every later import and Dask worker of the run): the test that did fails,
    not a later one that happens to check."""
    yield
    leaked = [p for p in sys.path if Path(p or ".").resolve() == BENCHMARKS]
    if leaked:
        sys.path[:] = [p for p in sys.path if p not in leaked]
        pytest.fail("the test left benchmarks/ on sys.path (load a benchmark with "
                    "tests.benchmark_module, a sibling with importlib)", pytrace=False)


@pytest.fixture(scope="module", params=[1, 2, 4], ids=lambda w: f"{w}workers")
def client(request):
    """A Dask client on an in-process cluster of 1, 2 and 4 workers (not the default
    client: only a test that wants a current client makes one)."""
    distributed = pytest.importorskip("distributed")
    from tests.dask_cluster import cluster

    with cluster(request.param) as c, distributed.Client(c, set_as_default=False) as cl:
        yield cl


@pytest.fixture(scope="module")
def client2():
    """A Dask client on an in-process cluster of 2 workers."""
    distributed = pytest.importorskip("distributed")
    from tests.dask_cluster import cluster

    with cluster(2) as c, distributed.Client(c, set_as_default=False) as cl:
        yield cl

