"""A child process for the SIGKILL tests of tests/test_stream_checkpoints.py.

``python -m tests.stream_checkpoint_child SCENARIO CHECKPOINT OUT [SLOW]`` runs SCENARIO
with ``checkpoint=CHECKPOINT`` and a checkpoint at every minibatch boundary, prints
``minibatch i`` (flushed) after each minibatch it computes (i counts this process's
minibatches; the parent kills the process after one of them), sleeps SLOW seconds after
each, and saves the finished model to OUT with its full state.

Scenarios (the data and settings of tests/golden/record_stream.py):

- ``lmvs_stream`` / ``bpbfm_stream``: a stream of ``partial_fit`` calls.  Run again after
  a kill, the child does what a user's script does: it continues from
  ``topiclink.load(CHECKPOINT)`` (the model after the last call that ended; an unfitted
  model when none did) with the chunks that model has not seen, the first of them being
  the call that was killed, which resumes from its pass file;
- ``lmvs_fit`` / ``bpbfm_fit``: one online ``fit`` (sweeps of minibatches); run again, the
  same fit resumes inside the sweep it was killed in.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

SCENARIOS = ("lmvs_stream", "bpbfm_stream", "lmvs_fit", "bpbfm_fit")


def chunks(scenario: str) -> list[tuple[tuple, dict[str, Any]]]:
    """The (arguments, keywords) of each ``partial_fit`` call of a stream scenario."""
    from tests.golden.record_stream import bpbfm_chunks, lmv_chunks

    if scenario == "lmvs_stream":
        return [((docs,), {"links": links}) for docs, links, _ in lmv_chunks()]
    return [((chunk,), {}) for chunk in bpbfm_chunks()]


def build(scenario: str) -> Any:
    """The unfitted model of a scenario."""
    from tests.golden.record_stream import _bpbfm, _lmvs

    if scenario == "lmvs_stream":
        return _lmvs()
    if scenario == "lmvs_fit":
        return _lmvs(max_iter=3)
    if scenario == "bpbfm_stream":
        return _bpbfm()
    return _bpbfm(max_iter=3, burn_in=1)


def fit_data(scenario: str) -> tuple[tuple, dict[str, Any]]:
    from tests.golden.record_stream import bpbfm_tensor, lmv_data

    if scenario == "lmvs_fit":
        corpus, pairs, _ = lmv_data()
        return (corpus,), {"links": pairs}
    return (bpbfm_tensor(),), {}


def run(scenario: str, checkpoint: str | Path | None, every: Any = "1 minibatch") -> Any:
    """The scenario's model, checkpointed to ``checkpoint`` (None: no checkpoint); a
    stream continues from the checkpoint's model when there is one."""
    import topiclink

    options = {} if checkpoint is None else {"checkpoint": checkpoint,
                                             "checkpoint_every": every}
    if scenario.endswith("_fit"):
        args, kwargs = fit_data(scenario)
        return build(scenario).fit(*args, **kwargs, **options)
    if checkpoint is not None and Path(checkpoint).exists():
        model = topiclink.load(checkpoint)
        seen = len(model.state_.chunks) - 1          # the chunks of the calls that ended
    else:
        model, seen = build(scenario), 0
    for args, kwargs in chunks(scenario)[seen:]:
        model.partial_fit(*args, **kwargs, **options)
    return model


def _report_minibatches(scenario: str, slow: float) -> None:
    """Print ``minibatch i`` after each minibatch the scenario's algorithm computes."""
    if scenario.startswith("lmvs"):
        from topiclink.families.lmv.stochastic import StochasticLMV as cls
    else:
        from topiclink.families.bpbfm.online import BPBFMOnline as cls
    original = cls.minibatch_step
    count = [0]

    def reported(self: Any, *args: Any, **kwargs: Any) -> dict[str, float]:
        info = original(self, *args, **kwargs)
        count[0] += 1
        print(f"minibatch {count[0]}", flush=True)
        if slow:
            time.sleep(slow)
        return info

    cls.minibatch_step = reported  # type: ignore[method-assign]


def main(argv: list[str]) -> None:
    scenario, checkpoint, out = argv[:3]
    slow = float(argv[3]) if len(argv) > 3 else 0.0
    if scenario not in SCENARIOS:
        raise SystemExit(f"unknown scenario {scenario!r}")
    _report_minibatches(scenario, slow)
    model = run(scenario, checkpoint)
    model.save(out, full=True)


if __name__ == "__main__":
    main(sys.argv[1:])
