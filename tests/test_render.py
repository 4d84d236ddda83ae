"""ASCII and SVG rendering: exact text for scripted positions, SVG structure for every game."""

import importlib.util
import re
import xml.etree.ElementTree as ET

import jax
import pytest

from azjax import games
from azjax.games import notation
from azjax.play import render

SVG = "{http://www.w3.org/2000/svg}"


def available(name: str) -> bool:
  return importlib.util.find_spec(games._REGISTRY[name][0]) is not None


def needs(name: str):
  return pytest.mark.skipif(not available(name), reason=f"azjax.games.{name} not written yet")


_STEPS = {}


def play(env, moves: str, state=None):
  step = _STEPS.setdefault(env, jax.jit(env.step))
  state = env.init(jax.random.key(0)) if state is None else state
  for move in moves.split():
    state = step(state, env.move_to_action(state, move))
  return state


def squares_of(svg: str) -> dict[str, ET.Element]:
  """data-square name -> element; fails on a duplicate name."""
  root = ET.fromstring(svg)
  found = {}
  for element in root.iter():
    name = element.get("data-square")
    if name is not None:
      assert name not in found, f"two elements for {name}"
      found[name] = element
  return found


def classes(element: ET.Element) -> list[list[str]]:
  return [e.get("class", "").split() for e in element.iter()]


def has_class(element: ET.Element, name: str) -> bool:
  return any(name in c for c in classes(element))


# -- ASCII -----------------------------------------------------------------------------------------


def test_ascii_tic_tac_toe():
  env = games.make("tic_tac_toe")
  state = play(env, "b2 a1 c3")
  assert render.to_ascii(env, state) == "\n".join([
      "3  .  . [X]",
      "2  .  X  .",
      "1  O  .  .",
      "   a  b  c",
      "player 1 (O) to move",
  ])
  assert render.to_ascii(env, state, highlight_last=False).splitlines()[0] == "3  .  .  X"
  start = env.init(jax.random.key(0))
  assert render.to_ascii(env, start).splitlines()[-1] == "player 0 (X) to move"
  assert "[" not in render.to_ascii(env, start)


def test_ascii_tic_tac_toe_results():
  env = games.make("tic_tac_toe")
  won = play(env, "a1 a2 b1 b2 c1")
  assert render.to_ascii(env, won).splitlines()[-1] == "game over: player 0 (X) wins"
  assert render.to_ascii(env, won).splitlines()[2] == "1  X  X [X]"
  drawn = play(env, "b2 a1 a2 c2 b1 b3 a3 c1 c3")
  assert render.to_ascii(env, drawn).splitlines()[-1] == "game over: draw"


def test_ascii_connect_four():
  env = games.make("connect_four")
  state = play(env, "d d e c d")
  assert render.to_ascii(env, state) == "\n".join([
      "6  .  .  .  .  .  .  .",
      "5  .  .  .  .  .  .  .",
      "4  .  .  .  .  .  .  .",
      "3  .  .  . [X] .  .  .",
      "2  .  .  .  O  .  .  .",
      "1  .  .  O  X  X  .  .",
      "   a  b  c  d  e  f  g",
      "player 1 (O) to move",
  ])
  # The board reads back through from_ascii (brackets, ranks and files are ignored).
  again = env.from_ascii("\n".join(render.to_ascii(env, state).splitlines()[:-1]))
  assert (env.board_array(again) == env.board_array(state)).all()
  assert int(again.current_player) == 1


def test_ascii_connect_four_win_by_player_1():
  env = games.make("connect_four")
  state = play(env, "a b a b a b c b")
  lines = render.to_ascii(env, state).splitlines()
  assert lines[-1] == "game over: player 1 (O) wins"
  assert lines[2] == "4  . [O] .  .  .  .  ."


@needs("breakthrough")
def test_ascii_breakthrough_marks_from_and_to():
  env = games.make("breakthrough")
  state = play(env, "a2a3")
  lines = render.to_ascii(env, state).splitlines()
  assert len(lines) == env.rows + 2
  assert lines[-4].startswith("2 (.)")
  assert lines[-5].startswith("3 [")
  assert lines[-2].split() == list("abcdefgh")
  assert lines[-1].endswith("to move")


@needs("checkers")
def test_ascii_checkers():
  env = games.make("checkers")
  state = play(env, "c3d4")
  lines = render.to_ascii(env, state).splitlines()
  assert lines[-5] == "3  o  . (.) .  o  .  o  ."
  assert lines[-6] == "4  .  .  . [o] .  .  .  ."
  assert lines[-1] == "player 1 (x) to move"


# -- SVG -------------------------------------------------------------------------------------------


def all_square_names(env) -> set[str]:
  return {notation.square_name(s, env.cols) for s in range(env.rows * env.cols)}


def test_svg_tic_tac_toe():
  env = games.make("tic_tac_toe")
  state = play(env, "b2 a1 c3")
  svg = render.to_svg(env, state, size=300, highlight_squares=["a3", 1])
  root = ET.fromstring(svg)
  assert root.tag == f"{SVG}svg" and root.get("data-game") == "tic_tac_toe"
  squares = squares_of(svg)
  assert set(squares) == all_square_names(env)
  assert all("square" in s.get("class").split() for s in squares.values())
  # The last move (c3) is highlighted, and only there.
  assert has_class(squares["c3"], "last-move")
  assert [n for n, s in squares.items() if has_class(s, "last-move")] == ["c3"]
  # Pieces: X on b2 and c3 (player 0), O on a1 (player 1).
  owners = {n: [c for c in sum(classes(s), []) if c.startswith("player")]
            for n, s in squares.items()}
  assert owners["b2"] == ["player0"] and owners["c3"] == ["player0"] and owners["a1"] == ["player1"]
  assert sum(bool(v) for v in owners.values()) == 3
  # Extra highlights (names or indices: 1 is b1).
  assert sorted(n for n, s in squares.items() if has_class(s, "highlight")) == ["a3", "b1"]
  assert "player 1 (O) to move" in root.find(f"{SVG}title").text
  assert root.get("width") == "300"


def test_svg_connect_four_and_flip():
  env = games.make("connect_four")
  state = play(env, "d d e")
  svg = render.to_svg(env, state)
  squares = squares_of(svg)
  assert set(squares) == all_square_names(env) and len(squares) == 42
  assert [n for n, s in squares.items() if has_class(s, "last-move")] == ["e1"]
  assert sum(has_class(s, "hole") for s in squares.values()) == 42
  assert has_class(squares["d2"], "player1") and has_class(squares["d1"], "player0")

  def corner(svg_text, name):
    rect = squares_of(svg_text)[name].find(f"{SVG}rect")
    return float(rect.get("x")), float(rect.get("y"))

  (ax, ay), (gx, gy) = corner(svg, "a1"), corner(svg, "g6")
  assert ax < gx and ay > gy  # a1 bottom-left, g6 top-right
  flipped = render.to_svg(env, state, flip=True)
  (ax, ay), (gx, gy) = corner(flipped, "a1"), corner(flipped, "g6")
  assert ax > gx and ay < gy
  texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
  assert texts == list("abcdefg") + [str(r) for r in range(1, 7)]


def test_svg_without_highlights_and_self_contained():
  env = games.make("connect_four")
  state = play(env, "d")
  svg = render.to_svg(env, state, highlight_last=False)
  assert not any(has_class(s, "last-move") for s in squares_of(svg).values())
  assert not re.search(r"href|<script|url\(|<image|@import", svg)


@pytest.mark.parametrize("name", games.GAMES)
def test_every_registered_game_renders(name):
  if not available(name):
    pytest.skip(f"azjax.games.{name} not written yet")
  env = games.make(name)
  state = env.init(jax.random.key(0))
  state = play(env, env.action_to_move(state, env.legal_actions(state)[0]), state)
  text = render.to_ascii(env, state)
  lines = text.splitlines()
  assert len(lines) == env.rows + 2
  assert lines[-2].split() == list(notation.FILES[:env.cols])
  assert [line.split()[0] for line in lines[:env.rows]] == [str(r) for r in range(env.rows, 0, -1)]
  assert "[" in text  # the last move
  for flip in (False, True):
    svg = render.to_svg(env, state, flip=flip, highlight_squares=[0])
    squares = squares_of(svg)
    assert set(squares) == all_square_names(env)
    frm, to = (int(s) for s in state.last_move)
    assert has_class(squares[notation.square_name(to, env.cols)], "last-move")
    pieces = sum(has_class(s, "piece") for s in squares.values())
    assert pieces == int((env.board_array(state) != 0).sum())


@needs("checkers")
def test_svg_checkers_kings_and_dark_squares():
  env = games.make("checkers")
  state = env.from_ascii("""
      . . . . . . . .
      . . . . . . . .
      . . . . . X . .
      . . . . . . . .
      . . . x . . . .
      . . o . . . . .
      . O . . . . . .
      . . . . . . . .""")
  squares = squares_of(render.to_svg(env, state))
  assert has_class(squares["b2"], "king") and has_class(squares["b2"], "player0")
  assert has_class(squares["f6"], "king") and has_class(squares["f6"], "player1")
  assert not has_class(squares["c3"], "king") and has_class(squares["c3"], "player0")
  assert not has_class(squares["d4"], "king") and has_class(squares["d4"], "player1")
  assert has_class(squares["a1"], "dark") and has_class(squares["b1"], "light")
  assert "player 0 (o) to move" in render.to_ascii(env, state)


@needs("breakthrough")
def test_svg_breakthrough_small_board():
  env = games.make("breakthrough", rows=5, cols=5)
  state = play(env, "b2b3" if env.rows > 5 else "b1b2")
  squares = squares_of(render.to_svg(env, state, size=250))
  assert set(squares) == all_square_names(env)
  assert [n for n, s in squares.items() if has_class(s, "last-move")] == sorted(
      [notation.square_name(int(s), env.cols) for s in state.last_move])
