"""Model-file cases: truncated, corrupted, edited headers, swapped and shaped arrays."""

from __future__ import annotations

import functools
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from tests.fuzz.harness import Case

MODELS = ("LDA", "RelationalTopicModel", "SupervisedTopicModel", "VariationalRTM",
          "VariationalSLDA", "VisibilityTopicModel")


@functools.cache
def folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="topiclink-fuzz-"))


@functools.cache
def saved(name: str) -> Path:
    from tests.fuzz.cases_api import fitted

    return fitted(name).save(folder() / f"{name}.npz", full=True)


def members(path: Path) -> tuple[dict, dict]:
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "__header__"}
        header = json.loads(npz["__header__"].tobytes().decode())
    return header, arrays


def write(path: Path, header: dict, arrays: dict, list_arrays: bool = True) -> Path:
    """A model file with this header and these members (the header's array listing
    rewritten to match, unless ``list_arrays`` is False)."""
    if list_arrays:
        header = {**header, "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype)}
                                       for k, v in arrays.items()}}
    buf = io.BytesIO()
    np.savez(buf, __header__=np.frombuffer(json.dumps(header).encode(), np.uint8), **arrays)
    path.write_bytes(buf.getvalue())
    return path


def _load(path: Path) -> Any:
    import topiclink

    return topiclink.load(path)


def _edited(name: str, key: str, edit: Any) -> Any:
    header, arrays = members(saved(name))
    header, arrays = edit(header, arrays)
    return _load(write(folder() / f"{name}-{key}.npz", header, arrays))


def _detectable_truncation(cls: Any, member: str, arrays: dict) -> bool:
    """Dropping the last entry of ``member`` can be seen only if its first axis is tied to
    another saved array (or to ``n_topics``) through the class's shape schema."""
    spec = cls._array_specs.get(member)
    if spec is None or spec.shape is None or not spec.shape or spec.shape[0] == "*":
        return member == "classes_"
    symbol = spec.shape[0]
    if symbol == "K":
        return True
    return any(symbol in (other.shape or ()) for name, other in cls._array_specs.items()
               if name != member and name in arrays)


def _array_edits(cls: Any, arrays: dict) -> list[tuple[str, Any, str]]:
    """(label, edit, expect) for each saved array: every way it can be wrong."""
    out = []
    for member, value in sorted(arrays.items()):
        if member.startswith(("trace_/", "state_/", "run_/")):   # state: state_cases
            continue
        spec = cls._array_specs.get(member)
        out.append((f"drop-{member}", lambda h, a, m=member: (
            h, {k: v for k, v in a.items() if k != m}), "error"))
        expect = "error" if _detectable_truncation(cls, member, arrays) else "any"
        out.append((f"truncate-{member}", lambda h, a, m=member: (
            h, {**a, m: a[m][:-1] if a[m].ndim else a[m]}), expect))
        out.append((f"transpose-{member}", lambda h, a, m=member: (
            h, {**a, m: a[m].T[..., :1] if a[m].ndim >= 2 else a[m][None, :]}), "error"))
        if value.dtype.kind == "f":
            out.append((f"nan-{member}", lambda h, a, m=member: (
                h, {**a, m: np.where(np.arange(a[m].size).reshape(a[m].shape) == 0, np.nan,
                                     a[m])}), "error"))
            signed = spec is not None and spec.check == "finite"
            out.append((f"negate-{member}", lambda h, a, m=member: (h, {**a, m: -a[m] - 1}),
                        "any" if signed else "error"))
        if value.dtype.kind != "U":
            out.append((f"as-text-{member}", lambda h, a, m=member: (
                h, {**a, m: a[m].astype(str)}),
                "any" if member in ("classes_", "train_doc_ids_") else "error"))  # ids: text ok
    return out


def _header_edits() -> list[tuple[str, Any]]:
    def params(**kw: Any) -> Any:
        return lambda h, a: ({**h, "params": {**h["params"], **kw}}, a)

    return [
        ("param-unknown", params(bogus=1)), ("param-ntopics-neg", params(n_topics=-1)),
        ("param-ntopics-text", params(n_topics="3")), ("param-maxiter-bool", params(
            max_iter=True)), ("param-prior-neg", params(doc_topic_prior=-1.0)),
        ("param-seed-neg", params(random_state=-5)), ("param-njobs-zero", params(n_jobs=0)),
        ("params-list", lambda h, a: ({**h, "params": []}, a)),
        ("no-class", lambda h, a: ({k: v for k, v in h.items() if k != "class"}, a)),
        ("class-unknown", lambda h, a: ({**h, "class": "Nope"}, a)),
        ("class-number", lambda h, a: ({**h, "class": 3}, a)),
        ("version-2", lambda h, a: ({**h, "format_version": 2}, a)),
        ("version-text", lambda h, a: ({**h, "format_version": "1"}, a)),
        ("format-other", lambda h, a: ({**h, "format": "other"}, a)),
        ("attribute-unknown", lambda h, a: ({**h, "attributes": {**h["attributes"],
                                                                  "predict": 1}}, a)),
        ("attribute-list", lambda h, a: ({**h, "attributes": {**h["attributes"],
                                                               "n_iter_": [1]}}, a)),
        ("member-transform", lambda h, a: (h, {**a, "transform": np.zeros(2)})),
        ("member-fit", lambda h, a: (h, {**a, "fit": np.zeros(2)})),
        ("member-nested", lambda h, a: (h, {**a, "x/y": np.zeros(2)})),
        ("state-missing-array", lambda h, a: (h, {k: v for k, v in a.items()
                                                  if not k.startswith("state_/")})),
        ("state-class", lambda h, a: ({**h, "state": {**h["state"], "class": "X"}}, a)),
        ("state-fields", lambda h, a: ({**h, "state": {"class": h["state"]["class"],
                                                       "fields": []}}, a)),
        ("state-without-header", lambda h, a: ({k: v for k, v in h.items() if k != "state"},
                                               a)),
        ("codec-unknown", lambda h, a: ({**h, "param_schemas": {"n_topics": "x/1"}}, a)),
        ("codec-list", lambda h, a: ({**h, "param_schemas": [1]}, a)),
        ("trace-2d", lambda h, a: (h, {**a, "trace_/seconds": np.zeros((2, 2))})),
        ("trace-text", lambda h, a: (h, {**a, "trace_/seconds": np.array(["a"])})),
    ]


def _raw(name: str, kind: str, k: int) -> Any:
    data = saved(name).read_bytes()
    path = folder() / f"{name}-raw-{kind}-{k}.npz"
    if kind == "cut":
        path.write_bytes(data[: len(data) * k // 20])
    elif kind == "flip":
        pos = (len(data) * (2 * k + 1)) // 40
        path.write_bytes(data[:pos] + bytes([data[pos] ^ 0xFF]) + data[pos + 1:])
    return _load(path)


def _state_resume(name: str, edit: Any) -> Any:
    """A loaded full model whose state arrays were edited, then resumed."""
    from tests.fuzz.cases_api import _resume_data

    header, arrays = members(saved(name))
    header, arrays = edit(header, arrays)
    model = _load(write(folder() / f"{name}-state.npz", header, arrays))
    return _resume_data(model)


def cases() -> list[Case]:
    out = []
    for name in MODELS:
        header, arrays = members(saved(name))
        import topiclink

        cls = getattr(topiclink, name)
        edits = _array_edits(cls, arrays) + [(k, e, "error") for k, e in _header_edits()]
        for label, edit, expect in edits:
            out.append(Case(f"file/{name}/{label}", "model-files",
                            lambda n=name, key=label, e=edit: _edited(n, key, e), expect))
        for k in range(1, 20):
            out.append(Case(f"file/{name}/cut-{k}of20", "model-files",
                            lambda n=name, kk=k: _raw(n, "cut", kk)))
        for k in range(20):
            out.append(Case(f"file/{name}/flip-{k}", "model-files",
                            lambda n=name, kk=k: _raw(n, "flip", kk), "any"))
        out.append(Case(f"file/{name}/valid", "model-files", lambda n=name: _load(saved(n)),
                        "accept", lambda m, n=name: type(m).__name__ == n))
    for kind, content in (("empty", b""), ("text", b"not a model\n"), ("zip", b"PK\x03\x04"),
                          ("random", bytes(range(256)) * 8)):
        def make(c: bytes = content, k: str = kind) -> Any:
            path = folder() / f"raw-{k}.npz"
            path.write_bytes(c)
            return _load(path)
        out.append(Case(f"file/raw/{kind}", "model-files", make))
    out.append(Case("file/raw/directory", "model-files", lambda: _load(folder())))
    out.extend(state_cases())
    out.extend(save_fault_cases())
    out.append(Case("file/raw/missing", "model-files", lambda: _load(folder() / "none.npz")))
    return out


def _state_edits() -> list[tuple[str, Any]]:
    def arr(name: str, f: Any) -> Any:
        return lambda h, a: (h, {**a, f"state_/{name}": f(a[f"state_/{name}"])})

    return [
        ("z-out-of-range", arr("z", lambda z: z + 10**6)),
        ("z-negative", arr("z", lambda z: z - 1)),
        ("z-short", arr("z", lambda z: z[..., :-1])),
        ("counts-off", arr("ndk", lambda c: c + 1)),
        ("nk-negative", arr("nk", lambda c: c - 10**6)),
        ("rng-short", arr("kernel_rng", lambda r: r[:0])),
        ("gamma-negative", arr("gamma", lambda g: -g)),
        ("phibar-nan", arr("phibar", lambda p: p * np.nan)),
        ("pairs-out-of-range", arr("pair_source", lambda p: p + 10**6)),
        ("b-zero", arr("b", lambda b: b * 0)),
        ("eta-wrong-shape", arr("eta", lambda e: e[..., :1])),
        ("run-sum-dropped", lambda h, a: (h, {k: v for k, v in a.items()
                                            if not k.startswith("run_/")})),
        ("run-sum-nan", _run_sums(lambda v: v * np.nan)),
        ("run-sum-transposed", _run_sums(lambda v: v.T[..., :1] if v.ndim >= 2
                                         else v[None, :])),
        ("run-sum-text", _run_sums(lambda v: v.astype(str))),
    ]


def _run_sums(f: Any) -> Any:
    """An edit of every averaging sum of a saved run (``run_/sum/*``)."""
    return lambda h, a: (h, {k: f(v) if k.startswith("run_/") else v for k, v in a.items()})


def state_cases() -> list[Case]:
    out = []
    for name in MODELS:
        _, arrays = members(saved(name))
        for label, edit in _state_edits():
            field = label.split("-")[0]
            if field == "run":
                if not any(k.startswith("run_/") for k in arrays):
                    continue
            else:
                key = {"z": "z", "counts": "ndk", "nk": "nk", "rng": "kernel_rng",
                       "gamma": "gamma", "phibar": "phibar", "pairs": "pair_source",
                       "b": "b", "eta": "eta"}[field]
                if f"state_/{key}" not in arrays:
                    continue
            out.append(Case(f"state/{name}/{label}", "model-files",
                            lambda n=name, e=edit: _state_resume(n, e)))
    return out


# ---------------------------------------------------------------------- faults while saving
def _faulty_save(name: str, fault: str, share: float) -> Any:
    """``save`` over an existing model file with the disk failing: ENOSPC after ``share``
    of the bytes (``write``), at the fsync, at the rename (``replace``, EIO), or a
    folder that refuses new files (``readonly``, EACCES).  The error must leave the
    previous file byte-identical and no temporary file; an AssertionError (a traceback)
    otherwise."""
    import contextlib
    import copy
    import errno
    import os
    from unittest import mock

    from tests.fuzz.cases_api import fitted

    where = folder() / f"fault-{name}-{fault}-{share}"
    where.mkdir(exist_ok=True)
    path = fitted(name).save(where / "model.npz")
    before = path.read_bytes()
    model = copy.deepcopy(fitted(name))
    model.n_iter_ += 1                                      # other bytes than the file's
    state = {"room": int(share * len(before)), "fds": set()}
    real_mkstemp, real_write = tempfile.mkstemp, os.write

    def mkstemp(*args: Any, **kwargs: Any) -> Any:
        if fault == "readonly":
            raise PermissionError(errno.EACCES, "Permission denied", str(where))
        fd, tmp = real_mkstemp(*args, **kwargs)
        state["fds"].add(fd)
        return fd, tmp

    def write(fd: int, data: Any) -> int:
        if fd not in state["fds"] or fault != "write":
            return real_write(fd, data)
        if state["room"] <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = real_write(fd, bytes(data[:state["room"]]))
        state["room"] -= n
        return n

    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def replace(*args: Any) -> None:
        raise OSError(errno.EIO, "Input/output error")

    patches = [mock.patch.object(tempfile, "mkstemp", mkstemp),
               mock.patch.object(os, "write", write)]
    if fault == "fsync":
        patches.append(mock.patch.object(os, "fsync", fsync))
    if fault == "replace":
        patches.append(mock.patch.object(os, "replace", replace))
    try:
        with contextlib.ExitStack() as stack:
            for patch in patches:
                stack.enter_context(patch)
            return model.save(path)
    finally:
        assert path.read_bytes() == before, "the previous file changed"
        left = sorted(p.name for p in where.iterdir() if p != path)
        assert not left, f"left behind: {left}"


def _faulty_checkpoint(fault: str) -> Any:
    """A fit whose checkpoint cannot be written (ENOSPC at the second write) or is held
    by another writer (the lock taken in this process)."""
    import errno
    import os
    from unittest import mock

    from tests.fuzz.cases_api import data, estimator
    from topiclink.estimators.checkpoint import checkpoint_lock

    path = folder() / f"ckpt-fault-{fault}.npz"
    path.unlink(missing_ok=True)
    if fault == "locked":
        with checkpoint_lock(path):
            return estimator("LDA").fit(data()["X"], checkpoint=path)
    calls = {"n": 0}
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] >= 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    with mock.patch.object(os, "fsync", fsync):
        est = estimator("RelationalTopicModel", max_iter=4)
        try:
            return est.fit(data()["X"], links=data()["links"], checkpoint=path,
                           checkpoint_every=1)
        finally:
            import topiclink

            assert topiclink.load(path).n_iter_ == 1, "the first checkpoint is damaged"


def save_fault_cases() -> list[Case]:
    out = []
    for name in ("LDA", "VariationalRTM"):
        for share in (0.0, 0.3, 0.99):
            out.append(Case(f"save-fault/{name}/enospc-{share}", "model-files",
                            lambda n=name, s=share: _faulty_save(n, "write", s)))
        for fault in ("fsync", "replace", "readonly"):
            out.append(Case(f"save-fault/{name}/{fault}", "model-files",
                            lambda n=name, f=fault: _faulty_save(n, f, 0.0)))
    for fault in ("enospc", "locked"):
        out.append(Case(f"save-fault/checkpoint-{fault}", "model-files",
                        lambda f=fault: _faulty_checkpoint(f)))
    return out
