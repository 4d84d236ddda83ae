"""A local web page for playing against an agent: `python -m experiments.play --web`.

A stdlib `ThreadingHTTPServer` bound to 127.0.0.1 serves one page (`azjax/play/webui/`: HTML, CSS
and JavaScript, no external resources) and a small JSON API over one `azjax.play.Session`:

    GET  /                    the page
    GET  /static/<file>       its script and style sheet
    GET  /api/state           the position: SVG board, status, legal moves, last analysis, ...
    GET  /api/record          the game record (text)
    POST /api/click {square}  a click on the board (select a piece, move it, drop a disc)
    POST /api/move {move}     a move typed in notation
    POST /api/agent           the engine to move plays one move
    POST /api/hint            the move an engine suggests to the person to move (not played)
    POST /api/undo, /api/resign
    POST /api/new {game, opponent, color, sims}   a new game with these settings

`--checkpoint RUN` may be a TD-Leaf run (`azjax.tdleaf`): its alpha-beta player is then the
default opponent of its game, its analysis the search's value and principal variation (`pv`).

The game logic is all in Python (`App`, in `azjax.play.web_app`), so the page only draws what the
server sends and forwards clicks; the tests drive `App` directly and the page through a real
browser.

Only one person plays at a time (it is a local page), so one session behind a lock is the whole
state. While an engine thinks under that lock, `GET /api/state` answers at once with the
position as it stood (`"busy": true`) instead of waiting for the move. Requests with a foreign
`Host` header are refused (DNS rebinding), and POST bodies must be JSON (a cross-site form
cannot send that without the browser asking first).

Limits: a POST body is at most `MAX_BODY_BYTES` (413 beyond, 400 for a malformed
`Content-Length`); a connection that sends nothing for `REQUEST_TIMEOUT` seconds is closed (408
when a body was announced but did not come); engines from the page search 1..`MAX_SIMULATIONS`
simulations ("sims", and "mcts:N" or "az:N" as opponent); the listen queue holds
`LISTEN_BACKLOG` connections, so a burst of requests waits instead of being reset.
"""

from __future__ import annotations

import http.server
import json
import urllib.parse
import webbrowser
from pathlib import Path
from typing import Any, TextIO

from azjax.play.web_app import (  # noqa: F401  (the page's API: App and its settings live there)
  MAX_SIMULATIONS,
  OPPONENTS,
  SIMULATION_DEFAULTS,
  App,
  Settings,
  check_simulations,
)

STATIC_DIR = Path(__file__).resolve().parent / "webui"
_CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                  ".css": "text/css; charset=utf-8"}
MAX_BODY_BYTES = 64 * 1024  # The API's bodies are a few short fields.
REQUEST_TIMEOUT = 20.0  # Seconds a connection may stay silent (idle, or in the middle of a body).
LISTEN_BACKLOG = 128  # socketserver's default of 5 resets connections in a burst.


class Handler(http.server.BaseHTTPRequestHandler):
  """Serves the page and the API of `server.app`."""

  server: "Server"
  protocol_version = "HTTP/1.1"

  def setup(self) -> None:
    # The socket's timeout: a silent connection (idle keep-alive, a body that never comes)
    # frees its thread after `server.request_timeout` seconds.
    self.timeout = self.server.request_timeout
    super().setup()

  def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib's name)
    if self.server.verbose:
      super().log_message(format, *args)

  def _host_ok(self) -> bool:
    host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")

  def _send(self, status: int, content_type: str, data: bytes, close: bool = False) -> None:
    """Sends one reply; `close` ends the connection after it (a request whose body was not
    read: what follows on the connection is not a request)."""
    self.send_response(status)
    if close:
      self.close_connection = True
      self.send_header("Connection", "close")
    self.send_header("Content-Type", content_type)
    self.send_header("Content-Length", str(len(data)))
    self.send_header("Cache-Control", "no-store")
    self.send_header("X-Content-Type-Options", "nosniff")
    self.end_headers()
    try:
      self.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
      pass  # The page was closed or reloaded while the engine was thinking.

  def _json(self, status: int, payload: dict[str, Any], close: bool = False) -> None:
    self._send(status, "application/json", json.dumps(payload).encode(), close)

  def _read_body(self) -> bytes | None:
    """The request's body, or None once an error reply is sent: 400 for a malformed
    `Content-Length` or a body cut short, 413 above `MAX_BODY_BYTES`, 408 for one that stops
    coming."""
    text = self.headers.get("Content-Length")
    if text is None:
      return b""
    try:
      length = int(text)
      if length < 0:
        raise ValueError
    except ValueError:
      self._json(400, {"error": f"bad Content-Length: {text!r}"}, close=True)
      return None
    if length > MAX_BODY_BYTES:
      self._json(413, {"error": f"the body is {length} bytes; at most {MAX_BODY_BYTES}"},
                 close=True)
      return None
    try:
      raw = self.rfile.read(length)
    except TimeoutError:
      self._json(408, {"error": f"the body did not arrive within {self.timeout:g} s"},
                 close=True)
      return None
    if len(raw) < length:
      self._json(400, {"error": "the body is shorter than its Content-Length"}, close=True)
      return None
    return raw

  def do_GET(self) -> None:  # noqa: N802 (stdlib's name)
    if self.headers.get("Content-Length", "0") != "0":
      self.close_connection = True  # A body with a GET is not read: it is no next request.
    if not self._host_ok():
      return self._json(403, {"error": "this page answers on 127.0.0.1 only"})
    path = urllib.parse.urlsplit(self.path).path
    if path in ("/", "/index.html"):
      return self._static("index.html")
    if path.startswith("/static/"):
      return self._static(path.removeprefix("/static/"))
    if path == "/api/record":
      with self.server.app.lock:
        text = self.server.app.session.record()
      return self._send(200, "text/plain; charset=utf-8", text.encode())
    if path.startswith("/api/"):
      return self._json(*self._call("GET", path, {}))
    self._send(404, "text/plain; charset=utf-8", b"not found")

  def do_POST(self) -> None:  # noqa: N802
    if not self._host_ok():
      return self._json(403, {"error": "this page answers on 127.0.0.1 only"})
    raw = self._read_body()
    if raw is None:
      return
    if not (self.headers.get("Content-Type") or "").startswith("application/json"):
      return self._json(415, {"error": "send JSON"})
    try:
      body = json.loads(raw or b"{}")
      if not isinstance(body, dict):
        raise ValueError
    except ValueError:
      return self._json(400, {"error": "malformed JSON"})
    path = urllib.parse.urlsplit(self.path).path
    self._json(*self._call("POST", path, body))

  def _call(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """`App.handle`, with an unexpected error answered as a 500 (the page shows it)."""
    try:
      return self.server.app.handle(method, path, body)
    except Exception as err:  # noqa: BLE001 (a bug must not leave the page waiting forever)
      self.log_error("%s %s failed: %r", method, path, err)
      return 500, {"error": f"{type(err).__name__}: {err}"}

  def _static(self, name: str) -> None:
    path = (STATIC_DIR / name).resolve()
    if path.parent != STATIC_DIR or not path.is_file() or path.suffix not in _CONTENT_TYPES:
      return self._send(404, "text/plain; charset=utf-8", b"not found")
    self._send(200, _CONTENT_TYPES[path.suffix], path.read_bytes())


class Server(http.server.ThreadingHTTPServer):
  """The HTTP server of one `App`, on 127.0.0.1."""

  daemon_threads = True
  request_queue_size = LISTEN_BACKLOG

  def __init__(self, app: App, port: int = 0, *, verbose: bool = False,
               request_timeout: float = REQUEST_TIMEOUT):
    self.app = app
    self.verbose = verbose
    self.request_timeout = request_timeout
    super().__init__(("127.0.0.1", port), Handler)

  @property
  def url(self) -> str:
    return f"http://127.0.0.1:{self.server_address[1]}/"


def serve(app: App, *, port: int = 8765, open_browser: bool = False,
          stdout: TextIO | None = None) -> None:
  """Serves `app` until Ctrl-C."""
  import sys

  out = stdout or sys.stdout
  server = Server(app, port)
  print(f"azjax play: open {server.url} in a browser (Ctrl-C stops the server)", file=out,
        flush=True)
  for note in app.setup.notes:
    print(f"  ({note})", file=out, flush=True)
  if open_browser:
    webbrowser.open(server.url)
  try:
    server.serve_forever()
  except KeyboardInterrupt:
    print("\nstopped", file=out)
  finally:
    server.server_close()


__all__ = ["App", "Handler", "LISTEN_BACKLOG", "MAX_BODY_BYTES", "MAX_SIMULATIONS", "OPPONENTS",
           "REQUEST_TIMEOUT", "SIMULATION_DEFAULTS", "STATIC_DIR", "Server", "Settings",
           "check_simulations", "serve"]
