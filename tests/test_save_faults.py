"""Saves and fit checkpoints that survive a full disk, a read-only folder and two writers
(issue 40, item 4).

- ``ENOSPC`` at any byte of a save or of a checkpoint write (simulated: ``os.write``
  writes up to the offset, then fails as a full disk does; or ``fsync`` fails): the
  previous file is byte-identical, no temporary file is left, and the error is one line
  raised by topiclink, saying the previous file is intact;
- a read-only folder (``chmod 0o555``; as root, where chmod stops nothing, the failure
  is simulated): one line naming the folder;
- two writers of one checkpoint, in two real processes: the second is refused on one
  line; a lock file left by a process killed with SIGKILL does not block the resume.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import topiclink
from topiclink.callbacks import LambdaCallback
from topiclink.estimators.checkpoint import CheckpointInUseError, checkpoint_lock
from topiclink.persistence import SaveError

ROOT = Path(__file__).resolve().parents[1]
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(scope="module")
def corpus():
    from topiclink.datasets import make_rtm_data

    (corpus, _), _ = make_rtm_data(n_docs=40, n_words=60, n_topics=3, doc_length=25,
                                   random_state=3)
    return corpus


def lda(seed: int = 0, max_iter: int = 3, callbacks=None):
    return topiclink.LDA(n_topics=3, max_iter=max_iter, random_state=seed,
                         callbacks=callbacks)


def assert_one_line_from_topiclink(exc: BaseException) -> None:
    import traceback

    message = str(exc)
    assert message and "\n" not in message, message
    last = traceback.extract_tb(exc.__traceback__)[-1].filename
    assert f"{os.sep}topiclink{os.sep}" in last and f"{os.sep}tests{os.sep}" not in last, last


def leftovers(folder: Path, *keep: Path) -> list[str]:
    """Files in ``folder`` other than ``keep`` (a temporary file left behind, a lock)."""
    return sorted(p.name for p in folder.iterdir() if p not in keep)


class FullDisk:
    """``os.write`` on the temporary files of saves writes up to ``offset`` bytes in all,
    then raises ENOSPC (a short write first, as a full disk does; a float: that share of
    the previous file's size); ``on_call`` picks the save that fails (1: the first).
    ``fsync=True``: every write goes through and the fsync fails instead.  ``snapshot``
    keeps the target's bytes at the failing save."""

    def __init__(self, monkeypatch, target: Path, offset: int = 0, *, on_call: int = 1,
                 fsync: bool = False):
        self.target, self.offset, self.on_call, self.fsync = target, offset, on_call, fsync
        self.calls, self.written, self.fds, self.snapshot = 0, 0, set(), None
        self.failed = False
        real_mkstemp, real_write, real_fsync = tempfile.mkstemp, os.write, os.fsync

        def mkstemp(*args, **kwargs):
            fd, name = real_mkstemp(*args, **kwargs)
            if Path(name).parent == target.parent and name.endswith(".tmp"):
                self.calls += 1
                self.fds.discard(fd)                  # a number reused after a close
                if self.calls == self.on_call:
                    self.fds.add(fd)
                    self.snapshot = target.read_bytes() if target.exists() else None
                    if isinstance(self.offset, float):  # a share of the previous file
                        self.offset = int(self.offset * len(self.snapshot or b""))
            return fd, name

        def write(fd, data):
            if fd not in self.fds or self.fsync:
                return real_write(fd, data)
            room = self.offset - self.written
            if room <= 0:
                self.failed = True
                raise OSError(errno.ENOSPC, "No space left on device")
            n = real_write(fd, bytes(data[:room]))
            self.written += n
            return n

        def fsync(fd):
            if fd in self.fds and self.fsync:
                self.failed = True
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_fsync(fd)

        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fsync", fsync)


# ---------------------------------------------------------------------- full disk
@pytest.mark.parametrize("where", [0, 1, 100, "half", "last", "fsync"])
def test_enospc_during_a_save_leaves_the_previous_file_intact(corpus, tmp_path, monkeypatch,
                                                              where):
    path = tmp_path / "model.npz"
    lda(seed=1).fit(corpus).save(path)
    before = path.read_bytes()
    other = lda(seed=2).fit(corpus)
    size = len(other.save(tmp_path / "size.npz").read_bytes())
    (tmp_path / "size.npz").unlink()
    offset = {"half": size // 2, "last": size - 1, "fsync": 0}.get(where, where)
    disk = FullDisk(monkeypatch, path, offset, fsync=where == "fsync")
    with pytest.raises(SaveError) as info:
        other.save(path)
    assert disk.failed
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOSPC
    assert str(info.value) == (f"cannot save model to {path}: no space left on device "
                               "(ENOSPC); the previous file is intact")
    assert_one_line_from_topiclink(info.value)
    assert path.read_bytes() == before
    assert leftovers(tmp_path, path) == []
    topiclink.load(path)                                # still a valid model file
    monkeypatch.undo()
    assert other.save(path).read_bytes() != before      # the disk has room again


def test_enospc_on_a_first_save_leaves_nothing(corpus, tmp_path, monkeypatch):
    path = tmp_path / "new.npz"
    FullDisk(monkeypatch, path, 50)
    with pytest.raises(SaveError, match=r"no space left on device \(ENOSPC\); nothing was "
                                        r"written$"):
        lda().fit(corpus).save(path)
    assert leftovers(tmp_path) == []


def test_a_path_that_is_a_folder_or_below_a_file(corpus, tmp_path):
    model = lda().fit(corpus)
    (tmp_path / "dir.npz").mkdir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(SaveError, match=r"dir.npz: that path is a folder; nothing was "
                                        r"written$") as info:
        model.save(tmp_path / "dir.npz")
    assert_one_line_from_topiclink(info.value)
    with pytest.raises(SaveError, match=f"the folder {tmp_path / 'file'} is a file, not a "
                                        "folder; nothing was written$"):
        model.save(tmp_path / "file" / "model.npz")
    assert leftovers(tmp_path, tmp_path / "dir.npz", tmp_path / "file") == []


def test_a_short_write_is_continued(corpus, tmp_path, monkeypatch):
    """``os.write`` may write fewer bytes than asked: the save goes on from there."""
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(data[:7])))
    model = lda().fit(corpus)
    path = model.save(tmp_path / "m.npz")
    monkeypatch.undo()
    assert path.read_bytes() == model.save(tmp_path / "n.npz").read_bytes()


@pytest.mark.parametrize("offset", [0, 1000, 0.5, 0.99])
def test_enospc_during_a_checkpoint_write(corpus, tmp_path, monkeypatch, offset):
    """The third checkpoint write fails: the fit stops on one line, the second checkpoint
    is byte-identical, no temporary file or lock is left, and the same fit run again
    resumes from it and equals an uninterrupted fit."""
    path = tmp_path / "ckpt.npz"
    disk = FullDisk(monkeypatch, path, offset, on_call=3)
    with pytest.raises(SaveError) as info:
        lda(max_iter=6).fit(corpus, checkpoint=path, checkpoint_every=1)
    assert disk.failed and disk.snapshot is not None
    message = str(info.value)
    assert message.startswith("LDA.fit: the checkpoint after iteration 3 was not written "
                              f"(cannot save model to {path}: no space left on device "
                              "(ENOSPC); the previous file is intact)"), message
    assert message.endswith("to resume from the previous checkpoint")
    assert_one_line_from_topiclink(info.value)
    assert path.read_bytes() == disk.snapshot
    assert topiclink.load(path).n_iter_ == 2
    assert leftovers(tmp_path, path) == []
    monkeypatch.undo()
    resumed = lda(max_iter=6).fit(corpus, checkpoint=path, checkpoint_every=1)
    whole = lda(max_iter=6).fit(corpus)
    np.testing.assert_array_equal(resumed.components_, whole.components_)
    np.testing.assert_array_equal(resumed.doc_topic_, whole.doc_topic_)
    assert leftovers(tmp_path, path) == []


# ---------------------------------------------------------------------- read-only folder
def read_only(monkeypatch, folder: Path) -> None:
    """Make ``folder`` read-only: chmod 0o555, or, as root (whom chmod does not stop),
    refuse every file created in it with EACCES as the kernel would."""
    if not AS_ROOT:
        folder.chmod(0o555)
        return
    real_mkstemp, real_open, real_mkdir = tempfile.mkstemp, os.open, os.mkdir

    def denied(name) -> OSError:
        return PermissionError(errno.EACCES, "Permission denied", str(name))

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == folder:
            raise denied(Path(dir) / "tmpfile")
        return real_mkstemp(*args, dir=dir, **kwargs)

    def open_(name, flags, *args, **kwargs):
        if Path(name).parent == folder and flags & os.O_CREAT and not Path(name).exists():
            raise denied(name)
        return real_open(name, flags, *args, **kwargs)

    def mkdir(name, *args, **kwargs):
        if Path(name).parent == folder:
            raise denied(name)
        return real_mkdir(name, *args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "mkdir", mkdir)


@pytest.fixture
def locked_folder(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    yield folder
    folder.chmod(0o755)


@pytest.mark.parametrize("existing", [False, True])
def test_a_save_into_a_read_only_folder_names_it(corpus, locked_folder, monkeypatch,
                                                 existing):
    model = lda().fit(corpus)
    path = locked_folder / "model.npz"
    if existing:
        lda(seed=5).fit(corpus).save(path)
    before = path.read_bytes() if existing else None
    read_only(monkeypatch, locked_folder)
    with pytest.raises(SaveError) as info:
        model.save(path)
    assert info.value.errno == errno.EACCES
    assert str(info.value) == (
        f"cannot save model to {path}: the folder {locked_folder} is not writable "
        "(permission denied); " + ("the previous file is intact" if existing
                                   else "nothing was written"))
    assert_one_line_from_topiclink(info.value)
    monkeypatch.undo()
    locked_folder.chmod(0o755)
    assert leftovers(locked_folder, path) == []
    assert (path.read_bytes() if existing else None) == before


def test_a_save_below_a_read_only_folder_names_the_read_only_one(corpus, locked_folder,
                                                                 monkeypatch):
    model = lda().fit(corpus)
    read_only(monkeypatch, locked_folder)
    with pytest.raises(SaveError, match=f"the folder {locked_folder} is not writable"):
        model.save(locked_folder / "sub" / "deeper" / "model.npz")


def test_a_checkpoint_in_a_read_only_folder_is_refused_before_any_iteration(
        corpus, locked_folder, monkeypatch):
    seen = []
    read_only(monkeypatch, locked_folder)
    path = locked_folder / "ckpt.npz"
    est = lda(callbacks=[LambdaCallback(lambda m, i, info: seen.append(i))])
    with pytest.raises(SaveError) as info:
        est.fit(corpus, checkpoint=path)
    assert str(info.value).startswith(f"cannot save checkpoint to {path}: the folder "
                                      f"{locked_folder} is not writable")
    assert_one_line_from_topiclink(info.value)
    assert seen == []


# ---------------------------------------------------------------------- two writers
def _child(path: Path, out: Path, slow: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + str(ROOT),
           "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.checkpoint_child", "lda", str(path), str(out),
         str(slow)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)


def _wait_for_iteration(proc: subprocess.Popen, k: int) -> None:
    deadline = time.monotonic() + 300
    for line in proc.stdout:
        if line.startswith("iteration ") and int(line.split()[1]) >= k:
            return
        assert time.monotonic() < deadline
    raise AssertionError(f"the child ended before iteration {k}: {proc.stderr.read()}")


def test_a_second_process_is_refused_and_a_killed_holder_does_not_block(tmp_path):
    """A child fits with ``checkpoint=PATH`` slowly; this process, given the same path,
    is refused on one line naming the child; the child killed with SIGKILL leaves its
    lock file, which does not block this process from resuming the fit."""
    from tests.checkpoint_child import N_ITER, build

    path = tmp_path / "ckpt.npz"
    lock = tmp_path / "ckpt.npz.lock"
    holder = _child(path, tmp_path / "never.npz", slow=0.3)
    try:
        _wait_for_iteration(holder, 2)                    # its first checkpoint is written
        assert lock.read_text().strip() == str(holder.pid)
        est, args, kwargs = build("lda", [])
        with pytest.raises(CheckpointInUseError) as info:
            est.fit(*args, **kwargs, checkpoint=path, checkpoint_every=1)
        assert str(info.value) == (
            f"checkpoint {path} is in use by another fit (process {holder.pid} holds its "
            f"lock {lock}): never two writers of one checkpoint; wait for that fit to end, "
            "or give this one another checkpoint path")
        assert_one_line_from_topiclink(info.value)
        assert isinstance(info.value, OSError)
        assert not hasattr(est, "components_")            # refused before any work
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
    assert holder.returncode == -signal.SIGKILL
    assert lock.exists()                                  # stale: its holder was killed
    done = topiclink.load(path).n_iter_
    assert 1 <= done < N_ITER
    est, args, kwargs = build("lda", [])
    est.fit(*args, **kwargs, checkpoint=path, checkpoint_every=1)
    assert est.n_iter_ == N_ITER
    reference, args, kwargs = build("lda", [])
    reference.fit(*args, **kwargs)
    np.testing.assert_array_equal(est.components_, reference.components_)
    assert not lock.exists()                              # removed when the fit ended


def test_a_child_process_is_refused_while_this_one_holds_the_lock(tmp_path):
    path = tmp_path / "ckpt.npz"
    with checkpoint_lock(path) as lock:
        child = _child(path, tmp_path / "out.npz", slow=0.0)
        out, err = child.communicate(timeout=300)
    assert child.returncode == 1
    last = err.strip().splitlines()[-1]
    assert last == (f"topiclink.estimators.checkpoint.CheckpointInUseError: checkpoint {path} is "
                    f"in use by another fit (process {os.getpid()} holds its lock {lock}): "
                    "never two writers of one checkpoint; wait for that fit to end, or give "
                    "this one another checkpoint path"), err[-2000:]
    assert "iteration 1" not in out and not path.exists()
    assert not (tmp_path / "out.npz").exists() and not lock.exists()


def test_two_fits_of_one_process_on_one_checkpoint(corpus, tmp_path):
    """flock locks an open file, not a process: a second fit of this process is refused
    too, and the first goes on."""
    path = tmp_path / "ckpt.npz"
    refused = []

    def second(model, iteration, info):
        if iteration == 0:
            with pytest.raises(CheckpointInUseError) as exc:
                lda(seed=9).fit(corpus, checkpoint=path)
            refused.append(str(exc.value))

    est = lda(callbacks=[LambdaCallback(second)]).fit(corpus, checkpoint=path,
                                                      checkpoint_every=1)
    assert len(refused) == 1 and f"process {os.getpid()} holds" in refused[0]
    assert est.n_iter_ == 3 and topiclink.load(path).n_iter_ == 3
    assert leftovers(tmp_path, path) == []


def test_a_stale_lock_file_of_a_killed_process(corpus, tmp_path):
    """A lock file (with the pid of a process that is gone) but no lock held: taken over."""
    path = tmp_path / "ckpt.npz"
    (tmp_path / "ckpt.npz.lock").write_text("999999\n")
    est = lda().fit(corpus, checkpoint=path)
    assert est.n_iter_ == 3 and leftovers(tmp_path, path) == []


def test_checkpoint_folder_leaves_no_lock_file(corpus, tmp_path):
    from topiclink.estimators.checkpoint import checkpoint_folder

    with checkpoint_folder(tmp_path / "cells", every=1):
        lda().fit(corpus)
        lda(seed=1).fit(corpus)
    assert sorted(p.name for p in (tmp_path / "cells").iterdir()) == ["LDA-0.npz",
                                                                      "LDA-1.npz"]
