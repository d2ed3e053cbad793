"""A callback says what it needs of a sharded fit: ``reads_state`` (the sampler state,
gathered from the shards every sweep) -- no list of class names decides it."""

from __future__ import annotations

import topiclink.callbacks as cb
from topiclink.distributed import needs_full_state


class _Reads:
    def on_iteration(self, model, iteration, info):
        return model.state_.z is None


class _InfoOnly:
    reads_state = False

    def on_iteration(self, model, iteration, info):
        return info["log_likelihood"] > 0


def test_library_info_only_callbacks_need_no_state():
    assert not needs_full_state(None) and not needs_full_state([])
    info_only = [cb.ProgressBar(), cb.EarlyStopping(), cb.RelativeTolerance(1e-3),
                 cb.EvaluateEvery(lambda m: {}, every=5)]
    assert not needs_full_state(info_only)


def test_an_unknown_callback_is_taken_to_read_the_state():
    assert needs_full_state([_Reads()])
    assert needs_full_state([cb.ProgressBar(), cb.LambdaCallback(lambda m, i, info: None)])


def test_a_user_callback_declares_it_needs_no_state():
    assert not needs_full_state([_InfoOnly(), cb.ProgressBar()])
    declared = _Reads()
    declared.reads_state = False            # an instance may say it too
    assert not needs_full_state([declared])
    assert needs_full_state([_InfoOnly(), _Reads()])
