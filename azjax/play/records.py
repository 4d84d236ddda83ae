"""Replaying game records: the PGN-like text `Session.record` writes, played back."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from azjax import games
from azjax.games import base
from azjax.play import render
from azjax.play.session import Session
from azjax.play.texts import _takes_board_size, side_name

# -- Replay ----------------------------------------------------------------------------------------

_TAG = re.compile(r'^\[(\w+)\s+"(.*)"\]$')
_RESULTS = ("1-0", "0-1", "1/2-1/2", "*")


@dataclasses.dataclass
class Replay:
  """A record played back: the game, its tags, every position, and the recorded result."""

  env: base.Game
  tags: dict[str, str]
  session: Session
  result: str

  @property
  def plies(self) -> int:
    """The number of actions played (a checkers multi-jump is one a hop)."""
    return len(self.session.moves)

  def position_text(self, ply: int) -> str:
    """What the move `ply` did, the board after it, and who is to move (or the result at the
    end): `ply` 0 is the start position."""
    session, env = self.session, self.env
    state = session.history[ply]
    if ply == 0:
      head = f"start position (ply 0 of {self.plies})"
    else:
      head = (f"ply {ply} of {self.plies}: {side_name(env, session.players[ply - 1])} plays "
              f"{session.moves[ply - 1]}")
    board = render.to_ascii(env, state).splitlines()[:-1]
    if ply == self.plies and session.over:
      status = "game over: " + session.result()[1]
    else:
      status = f"{side_name(env, int(state.current_player))} to move"
    return "\n".join([head] + board + [status])


def replay(text: str) -> Replay:
  """Plays a record written by `Session.record` back from the start position.

  Raises:
    ValueError: for an unknown game, a malformed record, or a move that is not legal where it
      stands (the message names the turn).
  """
  tags, words = {}, []
  for line in text.splitlines():
    line = line.strip()
    match = _TAG.match(line)
    if match:
      tags[match.group(1)] = match.group(2)
    elif line:
      words += line.split()
  game = tags.get("Game")
  if game not in games.GAMES:
    raise ValueError(f"record: unknown or missing game tag {game!r}")
  kwargs = {}
  if _takes_board_size(game) and "Board" in tags:
    board = re.fullmatch(r"(\d+)x(\d+)", tags["Board"])
    if not board:
      raise ValueError(f"record: bad board tag {tags['Board']!r}; expected like '6x6'")
    kwargs = {"rows": int(board.group(1)), "cols": int(board.group(2))}
  for option in tags.get("Options", "").split():  # `Session.game_options`: "size=4 blocks=none"
    key, eq, value = option.partition("=")
    if not eq:
      raise ValueError(f"record: bad option {option!r} in the options tag; expected KEY=VALUE")
    kwargs[key] = int(value) if value.isdigit() else value
  try:
    env = games.make(game, **kwargs)
  except (TypeError, ValueError) as err:
    raise ValueError(f"record: {game} with options {kwargs}: {err}") from None
  session = Session(env, (None, None))
  result, turn, previous = "*", 0, ""
  for word in words:
    if re.fullmatch(r"\d+\.", word):
      continue
    if word in _RESULTS:
      result = word
      continue
    # Each word is a whole turn: a checkers jump left unfinished is only possible at the end
    # (the player resigned instead of jumping on).
    if session.continuing_square():
      raise ValueError(f"record: turn {turn} ({previous}) stops in the middle of a jump")
    turn += 1
    try:
      session.play(word)
    except ValueError as err:
      raise ValueError(f"record: turn {turn} ({word}): {err}") from None
    previous = word
  if result in ("1-0", "0-1") and not session.over:
    session.resigned = 1 if result == "1-0" else 0  # A resignation: the board did not decide.
  return Replay(env, tags, session, result)


def replay_file(path: str | Path) -> Replay:
  return replay(Path(path).read_text())
