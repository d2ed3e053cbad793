"""Serve a data home over HTTP on the loopback interface: a mirror for ``topiclink datasets
fetch`` (``TOPICLINK_DATA_MIRROR=http://127.0.0.1:PORT``), for the tests and CI.

``GET /<data set>/<file>`` returns ``ROOT/<data set>/<file>`` (single byte ranges
honoured: ``Range: bytes=N-`` or ``bytes=N-M``; ``HEAD`` too).  The tests tell it to
misbehave per path (:meth:`DatasetServer.fail`): cut the connection mid-file, corrupt a
byte, answer 404 / 500, stall, send an HTML page, redirect in a loop or ignore ``Range``.

Command line (blocks; the port is written to ``--port-file`` once listening)::

    python scripts/serve_datasets.py ROOT --port-file FILE [--port 0] [--host 127.0.0.1]

Importable: ``with DatasetServer(root) as server: ... server.url ...``.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["FAULTS", "DatasetServer", "Fault", "Request", "main"]

logger = logging.getLogger("serve_datasets")

#: What :meth:`DatasetServer.fail` can make a path do.
FAULTS = ("cut", "corrupt", "404", "500", "stall", "html", "redirect-loop", "ignore-range")
_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


@dataclass
class Fault:
    """A misbehaviour of one path, for ``times`` requests (``None``: all)."""

    kind: str
    times: int | None = None
    at: float = 0.5      # cut / corrupt / stall: fraction of the body sent first
    stall_s: float = 30.0

    def take(self) -> bool:
        if self.times is None:
            return True
        if self.times <= 0:
            return False
        self.times -= 1
        return True


@dataclass(frozen=True)
class Request:
    """One request the server received."""

    method: str
    path: str
    range: str | None


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        logger.debug("%s %s", self.address_string(), format % args)

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._serve(body=True)

    def _plain(self, code: int, text: str, ctype: str = "text/plain",
               extra: dict[str, str] | None = None) -> None:
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _serve(self, body: bool) -> None:
        srv = self.server
        path = unquote(urlsplit(self.path).path)
        with srv.lock:
            srv.requests.append(Request(self.command, path, self.headers.get("Range")))
            fault = next((f for f in srv.faults.get(path, ()) if f.take()), None)
            kind = fault.kind if fault is not None else None
        if srv.delay:
            time.sleep(srv.delay)
        if kind == "404":
            return self._plain(404, "not found")
        if kind == "500":
            return self._plain(500, "internal error")
        if kind == "redirect-loop":
            return self._plain(302, "moved", extra={"Location": path})
        if kind == "html":
            return self._plain(200, "<!DOCTYPE html><html><body>Sign in</body></html>",
                               ctype="text/html; charset=utf-8")
        file = (srv.root / path.lstrip("/")).resolve()
        if srv.root not in file.parents or not file.is_file():
            return self._plain(404, "not found")
        data = file.read_bytes()
        start, end = 0, len(data)
        rng = self.headers.get("Range")
        m = _RANGE.match(rng or "") if kind != "ignore-range" else None
        if m:
            start = int(m.group(1))
            end = min(int(m.group(2)) + 1, len(data)) if m.group(2) else len(data)
            if start >= len(data):
                return self._plain(416, "range not satisfiable",
                                   extra={"Content-Range": f"bytes */{len(data)}"})
        part = data[start:end]
        if kind == "corrupt":
            i = int(len(part) * fault.at)  # type: ignore[union-attr]
            part = part[:i] + bytes([part[i] ^ 0xFF]) + part[i + 1:]
        self.send_response(206 if m else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(part)))
        self.send_header("Accept-Ranges", "bytes")
        if m:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.end_headers()
        if not body:
            return None
        if kind in ("cut", "stall"):
            first = int(len(part) * fault.at)  # type: ignore[union-attr]
            self.wfile.write(part[:first])
            self.wfile.flush()
            if kind == "stall":
                time.sleep(fault.stall_s)  # type: ignore[union-attr]
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return None
        self.wfile.write(part)
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, root: Path, address: tuple[str, int]) -> None:
        super().__init__(address, _Handler)
        self.root = root
        self.faults: dict[str, list[Fault]] = {}
        self.requests: list[Request] = []
        self.delay = 0.0
        self.lock = threading.Lock()


class DatasetServer:
    """A data home served on ``host:port`` in a background thread (``port=0``: any free).

    Attributes
    ----------
    url : str
        ``http://host:port`` (the mirror base URL).
    requests : list of Request
        Every request received, in order.
    delay : float
        Seconds to wait before answering each request.
    """

    def __init__(self, root: str | os.PathLike[str], host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self._server = _Server(Path(root).resolve(), (host, port))
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._server.server_address[0]}:{self.port}"

    @property
    def requests(self) -> list[Request]:
        with self._server.lock:
            return list(self._server.requests)

    @property
    def delay(self) -> float:
        return self._server.delay

    @delay.setter
    def delay(self, seconds: float) -> None:
        self._server.delay = seconds

    def fail(self, path: str, kind: str, times: int | None = None, **options: float) -> None:
        """Make requests of ``path`` (``/<data set>/<file>``) misbehave (:data:`FAULTS`).

        Faults of one path queue up: each request takes the first that has ``times``
        left (``fail(p, "cut", times=1); fail(p, "ignore-range")``: a cut, then answers
        that ignore ``Range``)."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULTS)}")
        with self._server.lock:
            self._server.faults.setdefault(path, []).append(Fault(kind, times, **options))

    def clear(self) -> None:
        """Forget the faults and the requests."""
        with self._server.lock:
            self._server.faults.clear()
            self._server.requests.clear()

    def start(self) -> DatasetServer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="serve_datasets")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> DatasetServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="the data home to serve")
    parser.add_argument("--port-file", type=Path, help="write the port here once listening")
    parser.add_argument("--port", type=int, default=0, help="port (default: any free one)")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        parser.error(f"{args.root} is not a folder")
    server = _Server(args.root.resolve(), (args.host, args.port))
    if args.port_file is not None:
        fd, tmp = tempfile.mkstemp(dir=args.port_file.parent or ".", prefix=".port-")
        with os.fdopen(fd, "w") as f:
            f.write(f"{server.server_address[1]}\n")
        os.replace(tmp, args.port_file)
    print(f"serving {args.root} on http://{args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
