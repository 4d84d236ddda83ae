"""The local play page: the app's click logic, the HTTP layer, and a real headless browser.

The browser test drives an installed Chromium with Selenium, and skips in one line when there is
none: tests install nothing (`.ci/run` installs Debian's `chromium chromium-driver` first).
"""

import http.client
import json
import re
import shutil
import threading
from pathlib import Path

import pytest

from azjax import agents, games, play
from azjax.play import web

from positions import CHECKERS_CHOICE, tic_tac_toe_position


def post(app, path, **body):
  status, reply = app.handle("POST", path, body)
  assert status == 200
  return reply


def highlighted(svg: str) -> int:
  return svg.count('class="highlight"')


@pytest.fixture(scope="module")
def app(tmp_path_factory):
  """Breakthrough 5x5 against random play (fast to build); tests start it anew."""
  return web.App(web.Settings(game="breakthrough", rows=5, cols=5, opponent="random"),
                 save_dir=str(tmp_path_factory.mktemp("games")))


# -- The app: clicks, messages, settings -----------------------------------------------------------


def test_the_opponent_list_is_the_registrys(app):
  """The page offers every kind of `agents.KINDS` that play has an engine for, in its order,
  each with its one-line description; only OpenSpiel's bots (evaluate only) are left out."""
  assert web.OPPONENTS == play.opponents() == tuple(
      k for k, kind in agents.KINDS.items() if kind.plays in ("jax", "human"))
  options = app.state_json()["options"]
  assert options["opponents"] == [""] + list(web.OPPONENTS)
  assert options["descriptions"] == {k: agents.KINDS[k].help_line() for k in web.OPPONENTS}



def test_clicks_select_move_and_explain(app):
  post(app, "/api/new")
  assert post(app, "/api/click", square="")["message"] == "not a square of the board: ''"
  assert "not a square" in post(app, "/api/click", square="z9")["message"]
  state = post(app, "/api/click", square="c3")
  assert state["message"] == "c3 is empty: click one of your (white) pieces first"
  assert post(app, "/api/click", square="e5")["message"] == "e5 is not your piece: you play white"
  state = post(app, "/api/click", square="a1")
  assert state["selected"] == "a1" and state["message"] == ""
  assert highlighted(state["svg"]) == 3  # the piece, a2 and b2
  state = post(app, "/api/click", square="a3")  # too far: the rules say why
  assert "'a1a3' is not a one-step forward move" in state["message"]
  assert state["moves"] == [] and state["selected"] is None and highlighted(state["svg"]) == 0
  post(app, "/api/click", square="a1")
  state = post(app, "/api/click", square="b2")
  assert state["moves"] == ["a1b2"] and state["agent_to_move"] and not state["human_to_move"]
  assert state["thinking"].startswith("black (random) is thinking: picking a random legal move")
  state = post(app, "/api/agent")
  assert len(state["moves"]) == 2 and state["human_to_move"]
  assert state["analysis"]["text"] == "no evaluation (random play)"
  state = post(app, "/api/move", move="b2b9")
  assert "square b9 is off the 5x5 board" in state["message"]
  assert state["can_undo"]
  state = post(app, "/api/undo")
  assert state["moves"] == [] and state["message"].startswith("took back a1b2")
  assert not state["can_undo"]


def test_checkers_jumps_by_clicks(app):
  env = games.make("checkers")
  engine = app.factory.make(env, "random")
  app.session = play.Session(env, (None, engine), start=env.from_ascii(CHECKERS_CHOICE))
  app.selected = None
  state = post(app, "/api/click", square="c2")
  assert "c2 is empty" in state["message"]
  state = post(app, "/api/click", square="c3")
  assert state["selected"] == "c3"
  state = post(app, "/api/click", square="e5")
  # The same piece must go on: it stays selected, its next hop highlighted.
  assert state["moves"] == ["c3e5"] and state["selected"] == "e5"
  assert "must go on jumping with the piece on e5" in state["status"]
  assert highlighted(state["svg"]) == 2
  state = post(app, "/api/click", square="a3")  # another piece that could capture
  assert state["message"] == "you must go on jumping with the piece on e5"
  state = post(app, "/api/click", square="c3")  # an empty square that is no target
  assert "illegal move 'e5c3'" in state["message"] and state["moves"] == ["c3e5"]
  assert state["selected"] == "e5"
  state = post(app, "/api/click", square="g7")
  assert state["moves"] == ["c3e5g7"] and state["agent_to_move"]


def test_new_game_settings_and_errors(app, monkeypatch, tmp_path):
  monkeypatch.setattr(play.checkpoints, "results_dirs", lambda: [tmp_path])  # no trained agent
  state = post(app, "/api/new", game="tic_tac_toe", opponent="alphabeta", color="black")
  assert state["game"] == "tic_tac_toe" and state["agent_to_move"]
  assert state["players"] == ["X (alphabeta-d2)", "O (you)"]
  assert 'data-flip="false"' in state["svg"]  # a board that starts empty is not turned round
  state = post(app, "/api/agent")
  assert state["analysis"]["value_text"].startswith("evaluation for X")
  state = post(app, "/api/click", square=state["analysis"]["move"])  # an occupied square
  assert "illegal move" in state["message"]
  state = post(app, "/api/new", game="checkers", opponent="az")
  assert "no trained agent for checkers" in state["message"]
  assert state["game"] == "tic_tac_toe"  # the game in progress is kept
  state = post(app, "/api/new", game="connect_four", opponent="random", color="watch")
  assert state["humans"] == 0 and state["agent_to_move"]
  for _ in range(60):
    state = post(app, "/api/agent")
    if state["over"]:
      break
  assert state["over"] and state["saved"] and Path(state["saved"]).exists()
  assert post(app, "/api/click", square="d1")["message"] == "the game is over"


def test_the_board_turns_round_only_where_the_second_side_starts_at_the_top(app):
  """Playing black in checkers, the person's pieces are at the bottom; playing yellow in
  Connect Four the board stays upright (discs fall down), as does Slider's V (starting at the
  bottom already)."""
  flips = {}
  for game, color in (("checkers", "black"), ("connect_four", "yellow"), ("slider", "V"),
                      ("breakthrough", "white")):
    state = post(app, "/api/new", game=game, opponent="random", color=color)
    flips[game] = 'data-flip="true"' in state["svg"]
    # The form's "You play" names the side by its place, whatever colour was asked for.
    assert state["settings"]["color"] == ("white" if color == "white" else "black")
  assert flips == {"checkers": True, "connect_four": False, "slider": False,
                   "breakthrough": False}


def test_hint_suggests_a_move_without_playing_it(app):
  post(app, "/api/new", game="tic_tac_toe", opponent="random", color="white")
  env = app.session.env
  # X to move, and c1 wins; the opponent plays at random, so a rollout MCTS gives the hint.
  app.session = play.Session(env, app.session.engines,
                             start=tic_tac_toe_position(env, ["a1", "a2", "b1", "b2"]))
  state = post(app, "/api/hint")
  assert state["moves"] == [] and state["human_to_move"]
  assert state["hint"]["move"] == "c1" and state["hint"]["engine"].startswith("mcts-")
  assert state["message"].startswith(f"hint from {state['hint']['engine']}: c1; value for X +")
  assert state["message_kind"] == "info"
  assert highlighted(state["svg"]) == 1  # the suggested square
  state = post(app, "/api/click", square="c3")  # another move: the hint is gone
  assert state["hint"] is None and state["message"] == ""
  state = post(app, "/api/hint")
  assert state["message"] == "wait: it is not your turn" and state["message_kind"] == "error"


def test_slider_passes_and_leaving_pieces_are_buttons(app):
  """In Slider a pass and a piece leaving the board have no square to click: the page offers
  them as buttons (`special_moves`), a leaving piece's once it is selected."""
  env = games.make("slider", size=4, blocks="none")
  random = app.factory.make(env, "random")
  app.session = play.Session(env, (None, random), start=env.from_ascii("....\n..V.\n#...\nHV.."))
  app.selected = None
  state = app.state_json()
  assert state["legal"] == ["-"]
  assert state["special_moves"] == [{"move": "-", "from": None, "label": "Pass"}]
  state = post(app, "/api/move", move=state["special_moves"][0]["move"])
  assert state["moves"] == ["-"] and state["agent_to_move"]
  app.session = play.Session(env, (None, random), start=env.from_ascii("...H\n....\n....\n.V.."))
  assert app.state_json()["special_moves"] == []  # nothing selected yet
  state = post(app, "/api/click", square="d4")
  assert state["selected"] == "d4" and state["message_kind"] == "info"
  assert state["message"] == ("d4 can leave the board: press 'Move d4 off the board', or click "
                              "a target square")
  assert state["special_moves"] == [{"move": "d4+", "from": "d4", "label": "Move d4 off the board"}]
  state = post(app, "/api/move", move="d4+")
  assert state["over"] and state["result_text"] == "H wins"


def test_the_page_says_the_defaults(app):
  """The simulations an empty field means, per searching kind, and which kind the default
  opponent is in each game (the page's placeholder reads them)."""
  options = app.state_json()["options"]
  assert options["sims_defaults"] == {"mcts": agents.KINDS["mcts"].default,
                                      "az": agents.KINDS["az"].default}
  assert options["default_opponents"] == {
      g: "az" if play.find_checkpoint(g) else "mcts" for g in games.GAMES}


# -- A TD-Leaf run ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tdleaf_app(tmp_path_factory):
  """The page for `--checkpoint RUN` of a tiny TD-Leaf run (test_play's, trained once a test
  session): the run's alpha-beta player is the opponent."""
  from test_play import tiny_tdleaf_run

  run = tiny_tdleaf_run(tmp_path_factory)
  app = web.App(web.Settings(checkpoint=str(run)), save_dir=str(tmp_path_factory.mktemp("games")))
  return run, app


@pytest.mark.slow  # Trains a TD-Leaf run.
def test_tdleaf_run_new_game_and_moves(tdleaf_app):
  run, app = tdleaf_app
  name = f"tdleaf-d2 [{run}]"
  state = post(app, "/api/new", opponent="", color="white")
  assert state["game"] == "slider" and state["title"] == "slider 4x4"
  assert state["players"] == ["H (you)", f"V ({name})"]
  assert state["notes"][0].startswith(f"trained agent: {run} (TD-Leaf alpha-beta, depth 2, "
                                      "feature MLP; slider 4x4")
  options = state["options"]
  assert options["default_opponents"]["slider"] == "tdleaf"  # the run's player, not mcts
  state = post(app, "/api/move", move=state["legal"][0])
  assert state["agent_to_move"] and state["thinking"].startswith(
      f"V ({name}) is thinking: searching 2 plies deep with alpha-beta")
  state = post(app, "/api/agent")
  analysis = state["analysis"]
  assert state["human_to_move"] and len(state["moves"]) == 2
  assert analysis["move"] == state["moves"][1] and analysis["value_kind"] == "score"
  assert analysis["value_text"].startswith("evaluation for V ") and analysis["top"] == []
  assert analysis["pv"] and analysis["pv"][0] == analysis["move"]
  assert analysis["text"].endswith("principal variation: " + " ".join(analysis["pv"]))
  assert analysis["method"] == "depth-2 alpha-beta with the learned evaluation (feature MLP)"
  state = post(app, "/api/hint")  # the opponent's own search
  assert state["message"].startswith(f"hint from {name}: ") and state["hint"]["move"]
  # AlphaZero's kinds cannot play a TD-Leaf run: said, and the game goes on.
  for kind in ("az", "azab:3", "policy"):
    state = post(app, "/api/new", opponent=kind)
    assert state["message"].startswith(f"{kind}: ") and "is a TD-Leaf run" in state["message"]
    assert "its player is the default opponent" in state["message"]
    assert len(state["moves"]) == 2 and state["message_kind"] == "error"
  # Watching the run's player against itself, the engine compiled already.
  state = post(app, "/api/new", opponent="", color="watch")
  assert state["players"] == [f"H ({name})", f"V ({name})"]
  assert "compiling" not in state["thinking"]
  for _ in range(2):
    state = post(app, "/api/agent")
  assert len(state["moves"]) == 2 and state["analysis"]["pv"]
  # Another opponent on the run's board.
  state = post(app, "/api/new", opponent="random", color="black")
  assert state["title"] == "slider 4x4" and state["players"] == ["H (random)", "V (you)"]
  assert not any("TD-Leaf" in n for n in state["notes"])


@pytest.mark.slow  # Trains a TD-Leaf run.
def test_tdleaf_run_over_http(tdleaf_app):
  """The new-game and move calls through the HTTP server."""
  run, app = tdleaf_app
  srv = web.Server(app, 0)
  thread = threading.Thread(target=srv.serve_forever, daemon=True)
  thread.start()
  try:
    headers = {"Content-Type": "application/json"}
    status, _, data = request(srv, "POST", "/api/new", json.dumps(
        {"opponent": "", "color": "white"}), headers)
    state = json.loads(data)
    assert status == 200 and state["players"][1] == f"V (tdleaf-d2 [{run}])"
    status, _, data = request(srv, "POST", "/api/move", json.dumps(
        {"move": state["legal"][0]}), headers)
    assert status == 200 and json.loads(data)["agent_to_move"]
    status, _, data = request(srv, "POST", "/api/agent", "{}", headers)
    state = json.loads(data)
    assert status == 200 and state["human_to_move"] and state["analysis"]["pv"]
    status, _, data = request(srv, "POST", "/api/new", json.dumps({"opponent": "az"}), headers)
    assert status == 200 and "is a TD-Leaf run" in json.loads(data)["message"]
  finally:
    srv.shutdown()
    srv.server_close()


# -- HTTP ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(app):
  srv = web.Server(app, 0)
  thread = threading.Thread(target=srv.serve_forever, daemon=True)
  thread.start()
  yield srv
  srv.shutdown()
  srv.server_close()


def request(srv, method, path, body=None, headers=None):
  conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=30)
  conn.request(method, path, body=body, headers=headers or {})
  reply = conn.getresponse()
  data = reply.read()
  conn.close()
  return reply.status, reply.getheader("Content-Type"), data


def test_http_serves_the_page_and_api_locally(server):
  assert server.server_address[0] == "127.0.0.1"
  status, kind, page = request(server, "GET", "/")
  assert status == 200 and kind.startswith("text/html") and b"/static/app.js" in page
  for name in ("app.js", "style.css"):
    status, _, data = request(server, "GET", f"/static/{name}")
    assert status == 200 and data
  # Every asset is local: no URL to another host in the page, its script or its style.
  for path in sorted(web.STATIC_DIR.iterdir()):
    if path.suffix in (".html", ".js", ".css"):
      assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]", path.read_text()), path.name
  status, kind, data = request(server, "GET", "/api/state")
  assert status == 200 and kind == "application/json" and "svg" in json.loads(data)
  status, kind, data = request(server, "GET", "/api/record")
  assert status == 200 and kind.startswith("text/plain") and b"[Game " in data
  assert request(server, "GET", "/static/../web.py")[0] == 404
  assert request(server, "GET", "/api/nothing")[0] == 404
  assert request(server, "GET", "/api/state", headers={"Host": "evil.example:80"})[0] == 403
  assert request(server, "POST", "/api/undo", body="square=a1",
                 headers={"Content-Type": "application/x-www-form-urlencoded"})[0] == 415
  assert request(server, "POST", "/api/click", body="{not json",
                 headers={"Content-Type": "application/json"})[0] == 400


# -- A real browser --------------------------------------------------------------------------------


def _find_chromium() -> tuple[str | None, str | None]:
  browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                  if shutil.which(n)), None)
  return browser, shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser():
  """A headless Chromium driven by Selenium, if one is installed (`.ci/run` installs it)."""
  webdriver = pytest.importorskip(
      "selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
  from selenium.webdriver.chrome.service import Service

  chromium, driver = _find_chromium()
  if not (chromium and driver):
    pytest.skip("no Chromium with chromedriver (apt-get install chromium chromium-driver)")
  options = webdriver.ChromeOptions()
  options.binary_location = chromium
  for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
               "--window-size=1200,900"):
    options.add_argument(flag)
  chrome = webdriver.Chrome(service=Service(driver), options=options)
  chrome.set_page_load_timeout(30)
  yield chrome
  chrome.quit()


class Page:
  """Small helpers over the Selenium driver for the play page."""

  def __init__(self, driver, url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    self.driver, self.by, self.wait = driver, By, WebDriverWait
    driver.get(url)
    self.idle(0)

  def updates(self) -> int:
    return int(self.driver.execute_script("return document.body.dataset.updates || 0"))

  def idle(self, after: int, timeout: float = 60) -> None:
    """Waits until the page drew a reply after `after` and has no request in flight."""
    self.wait(self.driver, timeout).until(lambda d: self.updates() > after and d.execute_script(
        "return document.body.dataset.busy === 'false'"))

  def click(self, square: str) -> None:
    before = self.updates()
    self.driver.find_element(self.by.CSS_SELECTOR, f'#board [data-square="{square}"]').click()
    self.idle(before)

  def press(self, element_id: str) -> None:
    before = self.updates()
    self.driver.find_element(self.by.ID, element_id).click()
    self.idle(before)

  def press_selector(self, selector: str) -> None:
    before = self.updates()
    self.driver.find_element(self.by.CSS_SELECTOR, selector).click()
    self.idle(before)

  def text(self, element_id: str) -> str:
    return self.driver.find_element(self.by.ID, element_id).text

  def count(self, selector: str) -> int:
    return len(self.driver.find_elements(self.by.CSS_SELECTOR, selector))


@pytest.mark.slow
def test_browser_plays_a_short_game(browser, trained_run, tmp_path):
  # A tiny trained agent on Breakthrough 6x6 (tests/conftest.py), two ranks of pieces a side.
  checkpoint = str(trained_run("breakthrough", rows=6, cols=6))
  app = web.App(web.Settings(game="breakthrough", checkpoint=checkpoint, sims=16),
                save_dir=str(tmp_path))
  srv = web.Server(app, 0)
  threading.Thread(target=srv.serve_forever, daemon=True).start()
  try:
    env = app.session.env
    page = Page(browser, srv.url)
    assert page.count("#board svg [data-square]") == env.rows * env.cols
    assert page.text("status") == "white (you) to move"
    # Clicks that are not moves: messages, and the position stays.
    page.click("d4")
    assert page.text("message") == "d4 is empty: click one of your (white) pieces first"
    page.click("a2")
    assert page.count("#board .highlight") == 3  # the piece and its two targets
    page.click("a4")
    assert "'a2a4' is not a one-step forward move for white" in page.text("message")
    assert page.count("#moves li") == 0 and page.count("#board .highlight") == 0
    # A move, the agent's reply and its evaluation beside the board.
    page.click("a2")
    page.click("a3")
    moves = page.text("moves").split()
    assert moves[0] == "a2a3" and len(moves) == 2
    assert page.text("status") == "white (you) to move"
    assert "value for black" in page.text("eval-text")
    assert page.count("#top tbody tr") >= 2
    assert page.count("#board .last-move") == 2
    # Typed notation, with the same messages as the terminal.
    field = browser.find_element(page.by.ID, "move-input")
    field.send_keys("zz9\n")
    page.wait(browser, 30).until(lambda d: "malformed move 'zz9'" in page.text("message"))
    page.press("undo")
    assert page.count("#moves li") == 0 and page.text("message").startswith("took back a2a3")
    browser.save_screenshot(str(tmp_path / "breakthrough.png"))
    # New game from the settings form: tic-tac-toe against random play, to the end.
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(page.by.ID, "game")).select_by_value("tic_tac_toe")
    Select(browser.find_element(page.by.ID, "opponent")).select_by_value("random")
    page.press("new")
    assert page.count("#board svg [data-square]") == 9
    for _ in range(5):
      if browser.execute_script("return document.body.dataset.over") == "true":
        break
      legal = browser.execute_script("return state.legal")
      page.click(legal[0])
    assert browser.execute_script("return document.body.dataset.over") == "true"
    assert page.text("status").startswith("game over: ")
    assert "record saved to" in page.text("notes")
    assert page.count("#board .piece") >= 5
    browser.save_screenshot(str(tmp_path / "tic_tac_toe.png"))
  finally:
    srv.shutdown()
    srv.server_close()


def test_browser_small_window_rules_hint_and_slider(browser, tmp_path):
  """Slider on a 400 px wide window: the board fits, the rules keep their lines, a pass is a
  button, blocks are grey stones (not V's pieces), the Simulations field says its default, and
  Hint suggests a move without playing it."""
  app = web.App(web.Settings(game="slider", opponent="random"), save_dir=str(tmp_path))
  env = games.make("slider", size=4, blocks="none")
  # H's only piece is stuck (V to the right, a block above): passing is H's only move.
  app.session = play.Session(env, (None, app.factory.make(env, "random")),
                             start=env.from_ascii("....\n..V.\n#...\nHV..\n"))
  srv = web.Server(app, 0)
  threading.Thread(target=srv.serve_forever, daemon=True).start()
  try:
    browser.set_window_size(400, 900)
    page = Page(browser, srv.url)
    width = browser.execute_script("return window.innerWidth")
    assert width <= 400
    # Nothing sticks out sideways: no horizontal scrolling, the board within the window.
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    right = browser.execute_script(
        "return document.querySelector('#board svg').getBoundingClientRect().right")
    assert 0 < right <= width
    # A block is drawn apart from V's pieces (render.py: a grey square, nobody's), no crown.
    fills = browser.execute_script(
        "const fill = (s) => getComputedStyle(document.querySelector(s)).fill;"
        "return [fill('#board .piece.block rect'),"
        "        fill('#board .piece[data-piece=\"V\"] circle')];")
    assert fills[0] == "rgb(138, 138, 138)" and fills[0] != fills[1]
    assert browser.execute_script(
        "return document.querySelectorAll('#board .piece.block .crown').length === 0")
    # The rules keep their lines: one line box a line of the text, however narrow the window.
    browser.find_element(page.by.CSS_SELECTOR, "#rules-box summary").click()
    lines = browser.execute_script(
        "const el = $('rules'); const range = document.createRange();"
        "range.selectNodeContents(el);"
        "const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));"
        "return [tops.size, el.textContent.split('\\n').length,"
        "        getComputedStyle(el).whiteSpace];")
    assert lines[0] == lines[1] == len(env.rules_text.splitlines()) and lines[2] == "pre"
    # The Simulations field says what empty means for the opponent chosen.
    from selenium.webdriver.support.ui import Select

    sims = browser.find_element(page.by.ID, "sims")
    colour = Select(browser.find_element(page.by.ID, "color"))
    assert colour.first_selected_option.text == "first (H)"
    assert sims.get_attribute("placeholder") == "not used by random" and not sims.is_enabled()
    Select(browser.find_element(page.by.ID, "opponent")).select_by_value("")
    default = f"default {agents.KINDS['mcts'].default}"
    assert sims.get_attribute("placeholder") == default  # Slider's default opponent is mcts.
    assert sims.is_enabled()
    Select(browser.find_element(page.by.ID, "opponent")).select_by_value("alphabeta")
    assert sims.get_attribute("placeholder") == "not used by alphabeta" and not sims.is_enabled()
    Select(browser.find_element(page.by.ID, "opponent")).select_by_value("az")
    assert sims.get_attribute("placeholder") == f"default {agents.KINDS['az'].default}"
    # Hint: the move is suggested, not played.
    page.press("hint")
    assert page.text("message").startswith("hint from mcts-") and ": -;" in page.text("message")
    assert page.count("#moves li") == 0
    # The pass is a button; pressing it plays "-", then the engine replies.
    assert [b.text for b in browser.find_elements(page.by.CSS_SELECTOR, "#special button")] == [
        "Pass"]
    page.press_selector("#special button")
    assert browser.execute_script("return state.moves")[0] == "-"
    browser.save_screenshot(str(tmp_path / "slider_400px.png"))
  finally:
    browser.set_window_size(1200, 900)
    srv.shutdown()
    srv.server_close()
