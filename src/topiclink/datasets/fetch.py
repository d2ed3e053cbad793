"""Download the files of a data set from its sources into the data home, verified.

:func:`fetch_dataset` (``topiclink datasets fetch NAME``; ``load_dataset(NAME)`` calls it
for what is missing) takes each missing file of the registry
(:mod:`~topiclink.datasets.sources`) from, in order, the mirror (``$TOPICLINK_DATA_MIRROR``
/ ``mirror=``: ``<mirror>/<data set>/<file>``, the layout of the data home, so a web
server of a data home is a mirror) and then its sources.  Each download

- streams to a temporary file ``.<file>.part`` next to its destination, with a ``tqdm``
  progress bar;
- resumes with an HTTP ``Range`` request after a cut connection, and retries cuts,
  time-outs and server errors (5xx, 429) with exponential back-off;
- is verified (size and sha256, or the archive's members) before an atomic
  :func:`os.replace`; a file that fails leaves nothing behind, the cache untouched;
- takes a lock file (``<data home>/.locks/<name>.lock``, :mod:`filelock`), so two
  processes fetching the same data set download it once and both succeed.

Every failure is one line (:class:`FetchError`): with no network, the URLs tried, the
file's name, size and sha256 and the folder to put it in by hand.

The client is :mod:`requests`: streaming bodies, separate connect and read time-outs
(a stalled server is detected between chunks), a ``Range`` header for resuming, a bound on
redirects (a loop fails fast) and distinct exceptions for each failure.  ``pooch`` was
considered: it keeps a registry and hashes too, but does not resume a partial download and
its downloaders would have to be replaced to do so; :mod:`urllib` would need the redirect,
range and error handling written by hand.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from topiclink.datasets.home import DATA_HOME_ENV, data_home
from topiclink.datasets.sources import DatasetSource, FileSource, Origin, get_source
from topiclink.datasets.verify import file_sha256, members_digest, open_member

__all__ = ["MIRROR_ENV", "TIMEOUT_ENV", "ChecksumError", "DatasetUnavailableError",
           "FetchError", "fetch_dataset", "missing_files"]

logger = logging.getLogger(__name__)

#: Environment variable: base URL of a mirror laid out as the data home.
MIRROR_ENV = "TOPICLINK_DATA_MIRROR"
#: Environment variable: seconds to wait for a connection or for the next bytes.
TIMEOUT_ENV = "TOPICLINK_DATA_TIMEOUT"
DEFAULT_TIMEOUT = 30.0
LOCK_TIMEOUT = 3600.0
_CHUNK = 1 << 16
_MAX_REDIRECTS = 10


class FetchError(OSError):
    """A data set could not be fetched (one line saying why and where)."""


class DatasetUnavailableError(FetchError, FileNotFoundError):
    """No origin of a file could be downloaded (network, HTTP errors): the data set is
    missing."""


class ChecksumError(FetchError):
    """Every download of a file had other bytes than the registry's sha256."""


class _Failed(Exception):
    """One origin failed; ``retry``: worth trying the same URL again."""

    def __init__(self, reason: str, retry: bool = False, checksum: bool = False) -> None:
        super().__init__(reason)
        self.retry = retry
        self.checksum = checksum


def _size(n: int) -> str:
    return f"{n:,} bytes"


def missing_files(source: DatasetSource, folder: Path,
                  files: Iterable[str] | None = None) -> list[FileSource]:
    """The files of ``source`` (default: the non-optional ones) absent from ``folder``."""
    wanted = ([f for f in source.files if not f.optional] if files is None
              else [source.file(n) for n in files])
    return [f for f in wanted if not (folder / f.name).is_file()]


@dataclass
class _Settings:
    timeout: float
    retries: int
    backoff: float
    progress: bool
    session: Any = None
    archives: dict[str, Path | _Failed] = field(default_factory=dict)
    local: dict[str, Path] = field(default_factory=dict)  # URL -> verified file in the folder
    tmp: Path | None = None


def _describe(exc: BaseException) -> str:
    """A short reason for a requests / urllib3 exception."""
    import requests

    text = str(exc)
    if isinstance(exc, requests.exceptions.TooManyRedirects):
        return f"redirect loop (more than {_MAX_REDIRECTS} redirects)"
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return "connection timed out"
    if isinstance(exc, requests.exceptions.ReadTimeout) or "Read timed out" in text:
        return "server stalled (no data within the time-out)"
    if "Connection refused" in text:
        return "connection refused"
    if ("Name or service not known" in text or "nodename nor servname" in text
            or "Temporary failure in name resolution" in text or "getaddrinfo" in text
            or "NameResolutionError" in text):
        return "host not found (no network?)"
    if isinstance(exc, requests.exceptions.ChunkedEncodingError) or "IncompleteRead" in text:
        return "connection cut mid-file"
    return f"{type(exc).__name__}: {text.splitlines()[0][:200] if text else ''}".rstrip(": ")


def _looks_html(head: bytes) -> bool:
    start = head.lstrip()[:15].lower()
    return start.startswith((b"<!doctype html", b"<html"))


def _get_once(url: str, part: Path, name: str, settings: _Settings) -> None:
    """One request for ``url``, appending to ``part`` from its current size."""
    import requests
    from tqdm.auto import tqdm

    offset = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={offset}-"} if offset else {}
    try:
        with settings.session.get(url, stream=True, headers=headers,
                                  timeout=(settings.timeout, settings.timeout)) as r:
            if r.status_code == 416 and offset:
                part.unlink()
                raise _Failed("server refused to resume (HTTP 416)", retry=True)
            if r.status_code >= 500 or r.status_code == 429:
                raise _Failed(f"server error (HTTP {r.status_code})", retry=True)
            if r.status_code >= 400:
                raise _Failed(f"HTTP {r.status_code} {r.reason or ''}".rstrip())
            if r.status_code != 206:
                offset = 0  # the server sent the whole file
            ctype = r.headers.get("Content-Type", "")
            if "text/html" in ctype and not name.endswith((".html", ".htm")):
                raise _Failed(f"the server sent an HTML page (Content-Type {ctype}), not "
                              f"the file")
            length = r.headers.get("Content-Length")
            total = int(length) + offset if length and length.isdigit() else None
            with (_open_part(part, "ab" if offset else "wb") as out,
                  tqdm(total=total, initial=offset, unit="B", unit_scale=True,
                       unit_divisor=1024, desc=name, disable=not settings.progress,
                       leave=True) as bar):
                first = offset == 0
                for chunk in r.iter_content(_CHUNK):
                    if first and _looks_html(chunk) and not name.endswith((".html", ".htm")):
                        raise _Failed("the server sent an HTML page, not the file")
                    first = False
                    out.write(chunk)
                    bar.update(len(chunk))
            got = part.stat().st_size
            if total is not None and got < total:
                raise _Failed(f"truncated body ({_size(got)} of {_size(total)})", retry=True)
    except requests.exceptions.RequestException as exc:
        reason = _describe(exc)
        retry = not isinstance(exc, requests.exceptions.TooManyRedirects) and not any(
            k in reason for k in ("refused", "host not found"))
        raise _Failed(reason, retry=retry) from None


def _open_part(path: Path, mode: str) -> IO[bytes]:
    """The temporary file a download writes to (a seam for the tests' full disk)."""
    return open(path, mode)  # noqa: SIM115


def _download(url: str, part: Path, name: str, settings: _Settings) -> None:
    """Download ``url`` to ``part``, resuming and retrying; ``_Failed`` at the end."""
    attempt = 0
    while True:
        try:
            _get_once(url, part, name, settings)
            return
        except _Failed as exc:
            if not exc.retry or attempt >= settings.retries:
                raise
            attempt += 1
            wait = settings.backoff * 2 ** (attempt - 1)
            logger.info("%s: %s; retry %d/%d in %.1f s%s", url, exc, attempt,
                        settings.retries, wait,
                        " (resuming)" if part.exists() and part.stat().st_size else "")
            time.sleep(wait)


def _verify(path: Path, f: FileSource) -> None:
    """``_Failed(checksum=True)`` unless ``path`` holds the registry's bytes (or members)."""
    found = file_sha256(path)
    if found == f.sha256:
        return
    if f.by_members:
        try:
            count, digest = members_digest(path)
        except Exception as exc:  # not an archive at all
            raise _Failed(f"sha256 mismatch: expected {f.sha256}, found {found}, and not a "
                          f"readable archive ({type(exc).__name__})", checksum=True) from None
        if digest == f.members_sha256:
            logger.info("%s: other bytes than the registry's copy, same %d members: "
                        "accepted", f.name, count)
            return
        raise _Failed(f"sha256 mismatch: expected {f.sha256}, found {found}; members "
                      f"digest expected {f.members_sha256} ({f.members_count} members), "
                      f"found {digest} ({count} members)", checksum=True)
    size = path.stat().st_size
    sizes = f" ({_size(size)}, expected {_size(f.size)})" if size != f.size else ""
    raise _Failed(f"sha256 mismatch{sizes}: expected {f.sha256}, found {found}",
                  checksum=True)


def _archive(url: str, settings: _Settings) -> Path:
    """The archive at ``url``, downloaded once per fetch into a temporary folder."""
    local = settings.local.get(url)
    if local is not None and local.is_file():
        return local
    done = settings.archives.get(url)
    if isinstance(done, _Failed):
        raise done
    if done is None:
        assert settings.tmp is not None
        path = settings.tmp / f"archive{len(settings.archives)}"
        part = path.with_suffix(".part")
        try:
            _download(url, part, url.rsplit("/", 1)[-1], settings)
        except _Failed as exc:
            settings.archives[url] = exc
            raise
        os.replace(part, path)
        settings.archives[url] = done = path
    return done


def _from_origin(o: Origin, f: FileSource, part: Path, settings: _Settings) -> None:
    if o.member is None:
        _download(o.url, part, f.name, settings)
    else:
        archive = _archive(o.url, settings)
        try:
            with _open_part(part, "wb") as out:
                open_member(archive, o.member, out)
        except KeyError:
            raise _Failed(f"no member {o.member!r} in the archive") from None
        except Exception as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise
            raise _Failed(f"not a readable archive ({type(exc).__name__})") from None
    _verify(part, f)


def _fetch_file(f: FileSource, name: str, folder: Path, origins: Sequence[Origin],
                settings: _Settings) -> None:
    dest, part = folder / f.name, folder / f".{f.name}.part"
    failures: list[tuple[str, _Failed]] = []
    for o in origins:
        part.unlink(missing_ok=True)
        where = o.url if o.member is None else f"{o.url} (member {o.member})"
        try:
            _from_origin(o, f, part, settings)
        except _Failed as exc:
            part.unlink(missing_ok=True)
            failures.append((where, exc))
            logger.info("%s/%s: %s: %s", name, f.name, where, exc)
            continue
        except OSError as exc:
            part.unlink(missing_ok=True)
            what = ("no space left on device" if exc.errno == errno.ENOSPC
                    else exc.strerror or str(exc))
            raise FetchError(f"cannot write {part}: {what} (the file is {_size(f.size)}); "
                             f"nothing was kept") from None
        except BaseException:  # interrupted: nothing partial stays in the data home
            part.unlink(missing_ok=True)
            raise
        os.replace(part, dest)
        logger.info("%s/%s: %s from %s", name, f.name, _size(dest.stat().st_size), where)
        return
    tried = "; ".join(f"{w}: {e}" for w, e in failures) or "no source"
    what = f"{name}/{f.name} ({_size(f.size)}, sha256 {f.sha256})"
    if failures and all(e.checksum for _, e in failures):
        raise ChecksumError(f"{what}: every download had other bytes: {tried}; nothing was "
                            f"kept")
    raise DatasetUnavailableError(f"cannot download {what}: {tried}; put the file in "
                                  f"{folder}{os.sep} by hand (or point {DATA_HOME_ENV} to a "
                                  f"data home holding {name}{os.sep}{f.name})")


def _make_dir(path: Path, home: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"cannot create {path} in the data home {home}: "
                         f"{exc.strerror or exc}; set {DATA_HOME_ENV} to a writable "
                         f"folder") from None


def fetch_dataset(name: str, data_dir: str | os.PathLike[str] | None = None, *,
                  files: Sequence[str] | None = None, mirror: str | None = None,
                  force: bool = False, timeout: float | None = None, retries: int = 3,
                  backoff: float = 1.0, progress: bool = True) -> Path:
    """Download the missing files of data set ``name`` into the data home.

    Parameters
    ----------
    name : str
        A data set of :func:`~topiclink.datasets.sources.dataset_sources`.
    data_dir : str or path-like, optional
        The data home (folder of data set folders); default
        :func:`~topiclink.datasets.home.data_home` (``$TOPICLINK_DATA``, else
        ``~/topiclink_data``).
    files : sequence of str, optional
        The files wanted; default all but the optional ones.
    mirror : str, optional
        Base URL tried first (``<mirror>/<name>/<file>``); default
        ``$TOPICLINK_DATA_MIRROR``.
    force : bool
        Download the files again even if present.
    timeout : float, optional
        Seconds to wait for a connection or the next bytes; default
        ``$TOPICLINK_DATA_TIMEOUT`` or 30.
    retries, backoff : int, float
        Retries of a cut, stalled or failing (5xx) download, after ``backoff * 2**k`` s.
    progress : bool
        Show a progress bar per file.

    Returns
    -------
    Path
        The data set's folder.

    Raises
    ------
    ValueError
        Unknown data set, or a name of ``files`` that is not one of its files.
    DatasetUnavailableError
        A file could not be downloaded from any origin (also a ``FileNotFoundError``).
    ChecksumError
        Every download of a file had other bytes than the registry says.
    FetchError
        The data home cannot be written (or the disk is full); another process holds
        the lock for over an hour.
    """
    source = get_source(name)
    home = data_home(data_dir)
    folder = home / name
    known = [f.name for f in source.files]
    unknown = [n for n in files or () if n not in known]
    if unknown:
        raise ValueError(f"data set {name!r} has no file {unknown[0]!r}; its files: "
                         f"{', '.join(known)}")
    wanted = list(files) if files is not None else None
    todo = (missing_files(source, folder, wanted) if not force else
            [source.file(n) for n in wanted] if wanted is not None
            else [f for f in source.files if not f.optional])
    if not todo:
        return folder
    _make_dir(home / ".locks", home)
    from filelock import FileLock, Timeout

    lock = FileLock(str(home / ".locks" / f"{name}.lock"), timeout=LOCK_TIMEOUT)
    try:
        lock.acquire()
    except Timeout:
        raise FetchError(f"another process has been fetching {name!r} for over "
                         f"{LOCK_TIMEOUT:.0f} s (lock {lock.lock_file})") from None
    try:
        if not force:  # another process may have fetched them meanwhile
            todo = missing_files(source, folder, [f.name for f in todo])
        if not todo:
            logger.info("%s: fetched by another process", name)
            return folder
        return _fetch_locked(source, home, folder, todo, mirror, timeout, retries, backoff,
                             progress)
    finally:
        lock.release()


def _fetch_locked(source: DatasetSource, home: Path, folder: Path, todo: list[FileSource],
                  mirror: str | None, timeout: float | None, retries: int, backoff: float,
                  progress: bool) -> Path:
    import requests

    mirror = (mirror if mirror is not None else os.environ.get(MIRROR_ENV, "")).strip()
    if timeout is None:
        env = os.environ.get(TIMEOUT_ENV, "").strip()
        try:
            timeout = float(env) if env else DEFAULT_TIMEOUT
        except ValueError:
            raise FetchError(f"{TIMEOUT_ENV}={env!r} is not a number of seconds") from None
    created = not folder.exists()
    _make_dir(folder, home)
    settings = _Settings(timeout=timeout, retries=retries, backoff=backoff, progress=progress,
                         local={o.url: folder / f.name for f in source.files
                                for o in f.origins if o.member is None})
    t0 = time.perf_counter()
    try:
        with (requests.Session() as session,
              tempfile.TemporaryDirectory(prefix=".fetch-", dir=home) as tmp):
            session.max_redirects = _MAX_REDIRECTS
            # the bytes as stored (a gzip transfer encoding would upset Range offsets)
            session.headers.update({"User-Agent": "topiclink-fetch",
                                    "Accept-Encoding": "identity"})
            settings.session, settings.tmp = session, Path(tmp)
            for f in todo:
                origins = ((Origin(f"{mirror.rstrip('/')}/{source.name}/{f.name}"),)
                           if mirror else ()) + f.origins
                _fetch_file(f, source.name, folder, origins, settings)
    except BaseException:
        if created and folder.is_dir() and not any(folder.iterdir()):
            shutil.rmtree(folder, ignore_errors=True)
        raise
    logger.info("%s: %d file(s) fetched into %s in %.1f s", source.name, len(todo), folder,
                time.perf_counter() - t0)
    return folder
