"""What play says to people about a game: its sides, rules and notation, typed moves.

Each game says its own (`azjax.games.base.Game`); these are the names the terminal and the web
page call, so neither reaches into a game for text.
"""

from __future__ import annotations

import re
from pathlib import Path

from azjax import games
from azjax.games import base

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
  return {"rows", "cols"} <= set(games.game_class(game).config_options)


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
