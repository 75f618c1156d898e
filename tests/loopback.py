"""An HTTP server on loopback for the tests of downloads (pelt.download, tests/real_data.py): the
network's behaviours that matter to a resumable, checksummed download (a range honoured or ignored,
a connection dropped mid-body, a missing file) without the network."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``server.files``; honours ``Range: bytes=N-`` unless ``server.ignore_range``; sends
    only ``server.cut`` bytes of a body (then closes) when set, as a dropped connection would."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        server = self.server
        server.requests.append((self.path, self.headers.get("Range")))
        body = server.files.get(self.path.lstrip("/"))
        if body is None:
            self.send_error(404)
            return
        start = 0
        ranged = self.headers.get("Range")
        if ranged and not server.ignore_range:
            start = int(ranged.removeprefix("bytes=").rstrip("-"))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        payload = body[start:]
        self.wfile.write(payload if server.cut is None else payload[: server.cut])

    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@contextmanager
def serve(files: dict[str, bytes]) -> Iterator[http.server.ThreadingHTTPServer]:
    """A server of ``files`` (name -> body) at ``server.url``; ``server.requests`` records each request's
    path and ``Range`` header, and ``files``, ``ignore_range`` and ``cut`` can be changed while it runs."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.files, httpd.requests, httpd.ignore_range, httpd.cut = files, [], False, None
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
