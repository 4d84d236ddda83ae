"""The play page's limits: body size, malformed lengths, timeouts, a burst of connections, the
simulation range, and state requests answered while an engine thinks."""

import http.client
import json
import socket
import threading
import time

import pytest

from azjax.play import web


@pytest.fixture(scope="module")
def app():
  return web.App(web.Settings(game="tic_tac_toe", opponent="random"), save_dir=None)


@pytest.fixture(scope="module")
def server(app):
  srv = web.Server(app, 0, request_timeout=0.5)  # Short, so that the timeouts show quickly.
  threading.Thread(target=srv.serve_forever, daemon=True).start()
  yield srv
  srv.shutdown()
  srv.server_close()


def send_raw(srv, data: bytes) -> bytes:
  """Sends `data` on a new connection; all the server sends back before it closes it."""
  with socket.create_connection(("127.0.0.1", srv.server_address[1]), timeout=10) as conn:
    conn.sendall(data)
    chunks = []
    while chunk := conn.recv(65536):
      chunks.append(chunk)
  return b"".join(chunks)


def status_of(reply: bytes) -> int:
  return int(reply.split(b" ", 2)[1])


def post_head(length: str) -> bytes:
  return (b"POST /api/move HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          b"Content-Length: " + length.encode() + b"\r\n\r\n")


def get_json(srv, path: str, timeout: float = 10) -> tuple[int, dict]:
  conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=timeout)
  conn.request("GET", path)
  reply = conn.getresponse()
  data = json.loads(reply.read())
  conn.close()
  return reply.status, data


def test_bodies_and_lengths(server):
  # A 10 MB body is refused from its header, before a byte of it is read.
  assert status_of(send_raw(server, post_head("10000000"))) == 413
  assert status_of(send_raw(server, post_head("abc"))) == 400
  assert status_of(send_raw(server, post_head("-5"))) == 400
  # A body announced but not sent: the thread is freed after the timeout.
  t0 = time.monotonic()
  assert status_of(send_raw(server, post_head("100") + b'{"move":')) == 408
  assert time.monotonic() - t0 < 5
  body = b'{"move": "zz9"}'
  reply = send_raw(server, post_head(str(len(body))) + body + b"GET /api/state HTTP/1.1\r\n"
                   b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
  assert reply.count(b"HTTP/1.1 200") == 2  # A good body, then the next request on the line.


def test_idle_connections_are_closed(server):
  t0 = time.monotonic()
  assert send_raw(server, b"") == b""  # Nothing sent: the server hangs up.
  assert time.monotonic() - t0 < 5


def test_a_burst_of_connections_is_served(app):
  # A server of its own with the default timeout: the module's 0.5 s one closes the first
  # connections while a loaded machine is still opening the others (before any request).
  server = web.Server(app, 0)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  try:
    assert server.request_queue_size == web.LISTEN_BACKLOG >= 128
    port = server.server_address[1]
    conns = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(150)]
    for conn in conns:
      conn.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    statuses = []
    for conn in conns:
      with conn:
        statuses.append(conn.recv(12))
    assert statuses == [b"HTTP/1.1 200"] * len(conns)
  finally:
    server.shutdown()
    server.server_close()


def test_simulations_are_bounded(app):
  before = app.handle("POST", "/api/new", {"game": "tic_tac_toe", "opponent": "random"})[1]
  for body in ({"sims": 10**6}, {"sims": 0}, {"opponent": "mcts:200000"}, {"sims": "many"}):
    state = app.handle("POST", "/api/new", {"game": "connect_four", **body})[1]
    assert state["game"] == "tic_tac_toe", body  # The game in progress is kept.
    assert "simulations" in state["message"], body
  assert f"1..{web.MAX_SIMULATIONS}" in app.handle(
      "POST", "/api/new", {"sims": web.MAX_SIMULATIONS + 1})[1]["message"]
  assert before["settings"]["sims"] is None


def test_state_answers_while_the_engine_thinks(app, server, monkeypatch):
  state = app.handle("POST", "/api/new", {"game": "tic_tac_toe", "opponent": "random",
                                          "color": "black"})[1]
  assert state["agent_to_move"] and state["moves"] == []
  release = threading.Event()
  move = app.session.agent_move

  def slow_move():
    release.wait(20)
    move()

  monkeypatch.setattr(app.session, "agent_move", slow_move)
  thinking = threading.Thread(target=app.handle, args=("POST", "/api/agent", {}))
  thinking.start()
  try:
    while not app.lock.locked():
      time.sleep(0.01)
    status, state = get_json(server, "/api/state", timeout=5)
    assert status == 200 and state["busy"] and state["agent_to_move"] and state["thinking"]
  finally:
    release.set()
    thinking.join()
  status, state = get_json(server, "/api/state")
  assert not state["busy"] and len(state["moves"]) == 1 and state["human_to_move"]
