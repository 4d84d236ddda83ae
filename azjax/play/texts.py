"""What play says to people about a game: its sides, rules and notation, typed moves.

Each game says its own (`azjax.games.base.Game`); these are the names the terminal and the web
page call, so neither reaches into a game for text.
"""

from __future__ import annotations

import re
from pathlib import Path

from azjax import games
from azjax.games import base, notation

# -- Sides and rules (each game says its own; see `azjax.games.base.Game`) ----------------------


def side_name(env: base.Game, player: int) -> str:
  """"white", "black", "red", ... : the colour of `player` (0 or 1) in `env`."""
  return env.side_names[int(player)]


def parse_color(env: base.Game | str, text: str) -> int:
  """The player (0 or 1) named by `text`: a game's colour ("red"), "white"/"black" for any game
  (white = the side that moves first, as in chess), "first"/"second", or "0"/"1". `env` is the
  game or its name."""
  text = text.strip().lower()
  sides = games.game_class(env).side_names if isinstance(env, str) else env.side_names
  names = [n.lower() for n in sides]
  if text in names:
    return names.index(text)
  aliases = {"white": 0, "black": 1, "first": 0, "second": 1, "0": 0, "1": 1}
  if text in aliases:
    return aliases[text]
  choices = sorted(set(names) | set(aliases))
  raise ValueError(f"unknown colour {text!r}; use one of: {', '.join(choices)}")


def legend(env: base.Game) -> str | None:
  """What the ASCII board's letters mean ("w = white, b = black"), or None if obvious."""
  return env.legend()


def board_legend(env: base.Game) -> str:
  """Every marker of the text board (`Session.board_text`): the pieces (`legend`), the empty
  square, and the last move's brackets."""
  empty = env.piece_symbols.get(0, ".")
  parts = [env.legend() or "", f"{empty} = empty"]
  # A drop (Connect Four) has no from-square.
  if env.one_click_move(notation.square_name(0, env.cols)) is not None:
    parts.append(f"[{_any_piece(env)}] = the last move")
  else:
    parts.append(f"[{_any_piece(env)}] = the square the last move went to, ({empty}) = the "
                 "square it came from")
  return "; ".join(p for p in parts if p)


def _any_piece(env: base.Game) -> str:
  return next((s for c, s in sorted(env.piece_symbols.items()) if c != 0), "x")


def second_side_at_top(env: base.Game) -> bool:
  """Whether the second player's pieces start at the top of the board (Breakthrough,
  checkers): a person playing that side then sees the board turned round, their pieces at the
  bottom. Not in games that start empty (Connect Four, where discs fall down, and
  tic-tac-toe) or where the second side starts at the bottom (Slider's V)."""
  key = (env.name, env.rows, env.cols)
  if key not in _SECOND_SIDE_AT_TOP:
    _SECOND_SIDE_AT_TOP[key] = _second_side_at_top(env)
  return _SECOND_SIDE_AT_TOP[key]


_SECOND_SIDE_AT_TOP: dict[tuple, bool] = {}


def _second_side_at_top(env: base.Game) -> bool:
  import jax
  import numpy as np

  board = np.asarray(env.board_array(env.init(jax.random.key(0))))
  rows = np.arange(board.shape[0])[:, None] * np.ones_like(board)
  owner = lambda c: -1 if c == 0 or env.piece_owner(int(c)) is None else env.piece_owner(int(c))  # noqa: E731
  owners = np.vectorize(owner, otypes=[int])(board)
  if not ((owners == 0).any() and (owners == 1).any()):
    return False
  return float(rows[owners == 1].mean()) > float(rows[owners == 0].mean())


def example_move(env: base.Game) -> str:
  """A move in `env`'s notation, for prompts ("a2a3", "c3d4", "d", "b2")."""
  return env.example_move


def rules(env: base.Game) -> str:
  """A short tutorial of the rules of `env` and of the move notation."""
  return env.rules_text


def describe_game(env: base.Game) -> str:
  """"breakthrough 6x6", "checkers", ...: `env.describe()`."""
  return env.describe()


def _takes_board_size(game: str) -> bool:
  """Whether game `game` is built with a board size (`rows`, `cols`) of one's choice."""
  return {"rows", "cols"} <= {option.name for option in games.game_class(game).options_spec}


def _relative(path: Path) -> str:
  try:
    return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
  except ValueError:
    return str(path)


# -- Move input ------------------------------------------------------------------------------------

_SEPARATOR = re.compile(r"(?<=\d)[-x:](?=[a-z])")


def normalise_move(text: str) -> str:
  """Lower case, without spaces and the separators people type ("a2-a3", "c3xe5" -> "c3e5")."""
  text = re.sub(r"\s+", "", text.strip().lower())
  return _SEPARATOR.sub("", text)


def move_squares(env: base.Game, move: str) -> tuple[str | None, list[str]]:
  """For a click interface: `(from_square, target_squares)` of a legal move's notation.

  Breakthrough/checkers "a2a3" -> ("a2", ["a3"]); tic-tac-toe "b2" -> (None, ["b2"]);
  Connect Four "d" -> (None, every square of column d), since a click anywhere in the column
  drops the disc there (`env.move_squares`).
  """
  return env.move_squares(move)
