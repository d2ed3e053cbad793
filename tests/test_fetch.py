"""Fetching data sets from their sources: the registry against the shared bytes, and
downloads from a real HTTP server on 127.0.0.1 (``scripts/serve_datasets.py``) serving
``$TOPICLINK_DATA`` as a mirror, told to misbehave.

The internet origins of the registry are removed in every test (:func:`_hermetic`): only
the loopback server is ever contacted.
"""

from __future__ import annotations

import dataclasses
import errno
import io
import os
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from scripts.serve_datasets import DatasetServer

from topiclink.datasets import fetch as fetch_module
from topiclink.datasets import sources as sources_module
from topiclink.datasets.fetch import (
    ChecksumError,
    DatasetUnavailableError,
    FetchError,
    fetch_dataset,
)
from topiclink.datasets.loaders import load_dataset
from topiclink.datasets.registry import dataset_specs
from topiclink.datasets.sources import DatasetSource, FileSource, Origin, dataset_sources
from topiclink.datasets.verify import file_sha256, members_digest

FAST = {"retries": 1, "backoff": 0.01, "progress": False}


@pytest.fixture(scope="module")
def shared(shared_datasets) -> Path:
    """The shared data sets ($TOPICLINK_DATA), the bytes the server serves."""
    if not (shared_datasets / "nations" / "train.txt").is_file():
        pytest.skip("TOPICLINK_DATA holds no nations/train.txt")
    return shared_datasets


@pytest.fixture(scope="module")
def _server(shared):
    with DatasetServer(shared) as server:
        yield server


@pytest.fixture
def server(_server):
    _server.clear()
    _server.delay = 0.0
    yield _server
    _server.clear()


def _without_internet(source: DatasetSource) -> DatasetSource:
    return dataclasses.replace(source, files=tuple(
        dataclasses.replace(f, origins=()) for f in source.files))


@pytest.fixture(autouse=True)
def _hermetic(monkeypatch, tmp_path):
    """Mirror-only sources, a fresh data home, no mirror variable."""
    real = sources_module.get_source
    monkeypatch.setattr(fetch_module, "get_source", lambda n: _without_internet(real(n)))
    monkeypatch.setenv("TOPICLINK_DATA", str(tmp_path / "home"))
    monkeypatch.delenv("TOPICLINK_DATA_MIRROR", raising=False)
    monkeypatch.delenv("TOPICLINK_DATA_TIMEOUT", raising=False)


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _leftovers(home: Path) -> list[str]:
    """Files in the data home other than the lock folder."""
    if not home.exists():
        return []
    return sorted(str(p.relative_to(home)) for p in home.rglob("*")
                  if ".locks" not in p.parts and p.is_file())


# ---------------------------------------------------------------------- the registry
def test_every_data_home_data_set_has_sources():
    specs = {n: s for n, s in dataset_specs().items() if s.location == "home"}
    srcs = dataset_sources()
    assert set(specs) <= set(srcs), set(specs) - set(srcs)
    for name, spec in specs.items():
        src = srcs[name]
        assert set(spec.required_files) <= {f.name for f in src.files}, name
        assert src.licence and src.citation and src.note, name
        for f in src.files:
            assert f.origins, f"{name}/{f.name} has no source URL"
            assert all(o.url.startswith(("https://", "http://")) for o in f.origins)
            assert len(f.sha256) == 64 and f.size > 0


def test_registry_matches_the_shared_bytes(shared):
    checked = 0
    for name, src in dataset_sources().items():
        for f in src.files:
            path = shared / name / f.name
            if not path.is_file():
                continue
            assert path.stat().st_size == f.size, f"{name}/{f.name}"
            assert file_sha256(path) == f.sha256, f"{name}/{f.name}"
            checked += 1
    assert checked >= 20


def test_members_digest_of_the_repacked_hepth_abstracts(shared):
    f = dataset_sources()["hepth"].file("cit-HepTh-abstracts.tar.gz")
    path = shared / "hepth" / f.name
    if not path.is_file():
        pytest.skip("no hepth abstracts")
    assert members_digest(path) == (f.members_count, f.members_sha256) == (29555,
                                                                           f.members_sha256)


# ---------------------------------------------------------------------- fetch + load
def test_fetch_then_load_then_offline(server, tmp_path):
    home = tmp_path / "home"
    folder = fetch_dataset("nations", mirror=server.url, progress=False)
    assert folder == home / "nations"
    assert sorted(r.path for r in server.requests) == sorted(
        f"/nations/{n}" for n in ("nations.tar.gz", "train.txt", "valid.txt", "test.txt"))
    n = len(server.requests)
    os.environ["TOPICLINK_DATA_MIRROR"] = _closed_port_url()  # any download would fail
    try:
        ds = load_dataset("nations")
    finally:
        del os.environ["TOPICLINK_DATA_MIRROR"]
    assert ds.tensor["train"].n_entities == 14 and len(server.requests) == n
    assert _leftovers(home) == [f"nations/{x}" for x in
                                ("nations.tar.gz", "test.txt", "train.txt", "valid.txt")]


def test_load_dataset_downloads_what_is_missing(server, monkeypatch):
    monkeypatch.setenv("TOPICLINK_DATA_MIRROR", server.url + "/")
    ds = load_dataset("sampson-rlda")
    assert ds.tensor["train"].n_entities == 18
    assert [r.path for r in server.requests] == ["/sampson-rlda/sampson.rda"]
    with pytest.raises(FileNotFoundError, match="topiclink datasets fetch umls"):
        load_dataset("umls", download_if_missing=False)
    assert len(server.requests) == 1


def test_resume_after_a_cut_connection(server, tmp_path):
    server.fail("/umls/train.txt", "cut", times=1, at=0.5)
    fetch_dataset("umls", mirror=server.url, **FAST)
    got = [r.range for r in server.requests if r.path == "/umls/train.txt"]
    assert got[0] is None and got[1] is not None and got[1].startswith("bytes=")
    offset = int(got[1].split("=")[1].rstrip("-"))
    assert 0 < offset < 260013
    assert file_sha256(tmp_path / "home" / "umls" / "train.txt") == \
        dataset_sources()["umls"].file("train.txt").sha256


def test_corrupted_bytes_leave_nothing(server, tmp_path):
    server.fail("/sampson-rlda/sampson.rda", "corrupt")
    f = dataset_sources()["sampson-rlda"].file("sampson.rda")
    with pytest.raises(ChecksumError) as err:
        fetch_dataset("sampson-rlda", mirror=server.url, **FAST)
    msg = str(err.value)
    assert f"expected {f.sha256}, found " in msg and "\n" not in msg
    found = msg.split("found ")[1][:64]
    assert len(found) == 64 and found != f.sha256
    assert _leftovers(tmp_path / "home") == []
    assert not (tmp_path / "home" / "sampson-rlda").exists()


@pytest.mark.parametrize("fault,reason", [
    ("404", "HTTP 404"), ("500", "server error (HTTP 500)"), ("html", "HTML page"),
    ("redirect-loop", "redirect loop"), ("cut", "connection cut mid-file")])
def test_bad_downloads_fail_in_one_line(server, tmp_path, fault, reason):
    path = "/cora-rlda/cora.vocab.rda"
    server.fail(path, fault)
    f = dataset_sources()["cora-rlda"].file("cora.vocab.rda")
    with pytest.raises(DatasetUnavailableError) as err:
        fetch_dataset("cora-rlda", mirror=server.url, **FAST)
    msg = str(err.value)
    assert isinstance(err.value, FileNotFoundError)
    assert "\n" not in msg and reason in msg, msg
    assert server.url + path in msg and f.sha256 in msg and f"{f.size:,} bytes" in msg
    assert str(tmp_path / "home" / "cora-rlda") in msg
    # files fetched before it were verified and stay; nothing partial
    assert all(not p.endswith(".part") for p in _leftovers(tmp_path / "home"))
    assert "cora-rlda/cora.vocab.rda" not in _leftovers(tmp_path / "home")
    tries = sum(r.path == path for r in server.requests)
    # retried once (retries=1) when worth it; a loop stops after 10 redirects
    assert tries == {"500": 2, "cut": 2, "redirect-loop": 11}.get(fault, 1)


def test_stalled_server_times_out(server, tmp_path):
    server.fail("/nations/nations.tar.gz", "stall", stall_s=5.0)
    t0 = time.perf_counter()
    with pytest.raises(DatasetUnavailableError, match="stalled"):
        fetch_dataset("nations", mirror=server.url, timeout=0.5, retries=0, progress=False)
    assert time.perf_counter() - t0 < 4.0
    assert _leftovers(tmp_path / "home") == []


def test_no_network_names_url_size_hash_and_folder(tmp_path):
    url = _closed_port_url()
    f = dataset_sources()["nations"].file("nations.tar.gz")
    with pytest.raises(DatasetUnavailableError) as err:
        fetch_dataset("nations", mirror=url, **FAST)
    msg = str(err.value)
    assert "\n" not in msg and "connection refused" in msg
    for part in (f"{url}/nations/nations.tar.gz", "nations.tar.gz", "8,077 bytes", f.sha256,
                 str(tmp_path / "home" / "nations")):
        assert part in msg, (part, msg)
    assert not (tmp_path / "home" / "nations").exists()


def test_full_disk_leaves_nothing(server, tmp_path, monkeypatch):
    class Full(io.BytesIO):
        def write(self, b):  # noqa: ANN001
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fetch_module, "_open_part", lambda path, mode: Full())
    with pytest.raises(FetchError, match="no space left on device") as err:
        fetch_dataset("sampson-rlda", mirror=server.url, **FAST)
    assert "\n" not in str(err.value)
    assert _leftovers(tmp_path / "home") == []


def test_data_home_that_cannot_be_written(server, tmp_path, monkeypatch):
    # tests run as root, which chmod does not stop: a data home under a regular file
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("TOPICLINK_DATA", str(blocker / "home"))
    with pytest.raises(FetchError, match="cannot create") as err:
        fetch_dataset("sampson-rlda", mirror=server.url, **FAST)
    assert "TOPICLINK_DATA" in str(err.value) and "\n" not in str(err.value)
    assert server.requests == [] and blocker.read_text() == "x"


# ---------------------------------------------------------------------- archives
def _with_origins(name: str, **origins: tuple[Origin, ...]) -> DatasetSource:
    src = _without_internet(dataset_sources()[name])
    return dataclasses.replace(src, files=tuple(
        dataclasses.replace(f, origins=origins.get(f.name.replace(".", "_"), ()))
        for f in src.files))


def test_members_extracted_from_the_source_archive(server, tmp_path, monkeypatch):
    arch = Origin(f"{server.url}/nations/nations.tar.gz")
    src = _with_origins("nations", train_txt=(Origin(arch.url, "train.txt"),),
                        valid_txt=(Origin(arch.url, "valid.txt"),),
                        test_txt=(Origin(arch.url, "no-such.txt"), Origin(arch.url, "test.txt")))
    src = dataclasses.replace(src, files=tuple(f for f in src.files if f.name != "nations.tar.gz"))
    monkeypatch.setattr(fetch_module, "get_source", lambda n: src)
    fetch_dataset("nations", **FAST)
    assert [r.path for r in server.requests] == ["/nations/nations.tar.gz"]  # once
    assert load_dataset("nations").tensor["test"].n_entries == 201


def test_repacked_archive_is_verified_by_its_members(shared, tmp_path, monkeypatch):
    orig = shared / "nations" / "nations.tar.gz"
    count, digest = members_digest(orig)
    root = tmp_path / "srv" / "x"
    root.mkdir(parents=True)
    with tarfile.open(orig) as t:
        members = [(m.name, t.extractfile(m).read()) for m in t if m.isfile()]

    def repack(path: Path, change: bool) -> None:
        with tarfile.open(path, "w:gz") as out:
            for i, (n, data) in enumerate(reversed(members)):
                info = tarfile.TarInfo(f"top/{n}")
                data = data + b"x" if change and i == 0 else data
                info.size, info.mtime = len(data), 0
                out.addfile(info, io.BytesIO(data))

    repack(root / "good.tar.gz", change=False)
    repack(root / "bad.tar.gz", change=True)
    assert file_sha256(root / "good.tar.gz") != file_sha256(orig)
    f = FileSource("nations.tar.gz", orig.stat().st_size, file_sha256(orig), (),
                   members_count=count, members_sha256=digest)
    with DatasetServer(tmp_path / "srv") as srv:
        for arch, ok in (("bad", False), ("good", True)):
            src = DatasetSource("x", "", "", "", (dataclasses.replace(
                f, origins=(Origin(f"{srv.url}/x/{arch}.tar.gz"),)),))
            monkeypatch.setattr(fetch_module, "get_source", lambda n, s=src: s)
            if ok:
                fetch_dataset("x", **FAST)
                assert members_digest(tmp_path / "home" / "x" / "nations.tar.gz")[1] == digest
            else:
                with pytest.raises(ChecksumError, match="members digest expected"):
                    fetch_dataset("x", **FAST)


# ---------------------------------------------------------------------- two processes
_CHILD = """
import sys
from topiclink.datasets import fetch, sources
real = sources.get_source
def offline(n):
    import dataclasses
    s = real(n)
    return dataclasses.replace(s, files=tuple(dataclasses.replace(f, origins=())
                                              for f in s.files))
fetch.get_source = offline
from topiclink.datasets.loaders import load_dataset
ds = load_dataset("nations")
print("triples", ds.tensor["train"].n_entries)
"""


def test_two_processes_fetch_once_and_both_load(server, tmp_path):
    server.delay = 0.4  # each file takes a while: the second process waits on the lock
    env = {**os.environ, "TOPICLINK_DATA": str(tmp_path / "home"),
           "TOPICLINK_DATA_MIRROR": server.url, "NUMBA_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert "triples 1592" in out
    paths = [r.path for r in server.requests]
    assert sorted(paths) == sorted(set(paths)) and len(paths) == 4, paths


def test_server_ignoring_range_restarts_the_file(server, tmp_path):
    server.fail("/umls/train.txt", "cut", times=1)
    server.fail("/umls/train.txt", "ignore-range")  # then 200 with the whole file
    fetch_dataset("umls", mirror=server.url, **FAST)
    got = [r.range for r in server.requests if r.path == "/umls/train.txt"]
    assert len(got) == 2 and got[1] is not None
    assert file_sha256(tmp_path / "home" / "umls" / "train.txt") == \
        dataset_sources()["umls"].file("train.txt").sha256


def test_mirror_missing_a_file_falls_back_to_the_source(server, tmp_path, monkeypatch):
    src = _with_origins("sampson-rlda",
                        sampson_rda=(Origin(f"{server.url}/sampson-rlda/sampson.rda"),))
    monkeypatch.setattr(fetch_module, "get_source", lambda n: src)
    server.fail("/mirror/sampson-rlda/sampson.rda", "404")
    fetch_dataset("sampson-rlda", mirror=f"{server.url}/mirror", **FAST)
    assert [r.path for r in server.requests] == ["/mirror/sampson-rlda/sampson.rda",
                                                 "/sampson-rlda/sampson.rda"]
    assert load_dataset("sampson-rlda").tensor["train"].n_entities == 18


def test_unknown_names_are_value_errors():
    with pytest.raises(ValueError, match="fetchable: .*nations"):
        fetch_dataset("nope")
    with pytest.raises(ValueError, match="has no file 'x.txt'; its files: nations.tar.gz"):
        fetch_dataset("nations", files=["x.txt"])
