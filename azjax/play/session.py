"""`Session`: one game between people and engines, with undo, resignation and a record.

Every position is kept, so undo is a truncation; moves typed by a person are parsed and checked
before anything is stepped (an illegal action is a loss for the mover, not an error).
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax.games import base, notation
from azjax.play import render
from azjax.play.analysis import Analysis, State
from azjax.play.engines import Engine
from azjax.play.texts import normalise_move, side_name

# -- Sessions --------------------------------------------------------------------------------------

_STEPS: dict[tuple, Callable] = {}


def _step_fn(env: base.Game) -> Callable:
  """`env.step`, jitted once per game and board (sessions and replays share it)."""
  key = env.variant_key()
  if key not in _STEPS:
    _STEPS[key] = jax.jit(env.step)
  return _STEPS[key]


class Session:
  """One game between people and engines, with undo, resignation and a record.

  `engines[p]` is player p's engine, or None for a person. Every position is kept in
  `history` (`history[0]` the start, `history[i + 1]` after `actions[i]`), so undo truncates
  the lists and never recomputes anything.
  """

  def __init__(self, env: base.Game, engines: Sequence[Engine | None], *, seed: int = 0,
               start: State | None = None):
    self.env = env
    self.engines = tuple(engines)
    self.history: list[State] = [env.init(jax.random.key(0)) if start is None else start]
    self.actions: list[int] = []
    self.moves: list[str] = []  # notation of each action, in order
    self.analyses: list[Analysis | None] = []  # the engine's analysis of each action
    self.players: list[int] = []  # who played each action
    self.resigned: int | None = None
    self.started = datetime.datetime.now()
    self.saved_path: Path | None = None
    self._key = jax.random.key(seed)
    self._step = _step_fn(env)

  # -- Queries ---------------------------------------------------------------------------------
  @property
  def state(self) -> State:
    return self.history[-1]

  @property
  def to_move(self) -> int:
    return int(self.state.current_player)

  @property
  def over(self) -> bool:
    return self.resigned is not None or bool(self.state.terminated)

  def is_human(self, player: int) -> bool:
    return self.engines[player] is None

  @property
  def human_to_move(self) -> bool:
    return not self.over and self.is_human(self.to_move)

  def legal_moves(self) -> list[str]:
    return [] if self.over else self.env.legal_moves(self.state)

  def continuing_square(self) -> str | None:
    """The square of the checkers piece that must go on jumping, or None."""
    square = int(getattr(self.state, "jump_square", -1))
    if square < 0 or self.over:
      return None
    absolute = notation.to_absolute_square(square, self.to_move, self.env.rows * self.env.cols)
    return notation.square_name(absolute, self.env.cols)

  def player_label(self, player: int) -> str:
    engine = self.engines[player]
    who = "you" if engine is None and sum(e is None for e in self.engines) == 1 else (
        "human" if engine is None else engine.name)
    return f"{side_name(self.env, player)} ({who})"

  def result(self) -> tuple[str, str]:
    """`(score, text)`: "1-0" / "0-1" / "1/2-1/2" / "*" and a sentence for people."""
    if self.resigned is not None:
      winner = 1 - self.resigned
      return ("1-0" if winner == 0 else "0-1",
              f"{side_name(self.env, self.resigned)} resigned: {side_name(self.env, winner)} wins")
    if not bool(self.state.terminated):
      return "*", "game not finished"
    rewards = np.asarray(self.state.rewards)
    if rewards[0] > 0:
      return "1-0", f"{side_name(self.env, 0)} wins"
    if rewards[1] > 0:
      return "0-1", f"{side_name(self.env, 1)} wins"
    return "1/2-1/2", "draw"

  def status(self) -> str:
    if self.over:
      return "game over: " + self.result()[1]
    line = f"{self.player_label(self.to_move)} to move"
    square = self.continuing_square()
    if square:
      line += f", and must go on jumping with the piece on {square}"
    return line

  def board_text(self, *, flip: bool = False) -> str:
    """The ASCII board (rank and file labels, last move marked) and the status line.

    With `flip` the board is turned round (rank 1 at the top, files from right to left), as the
    second player sees it across the table.
    """
    lines = render.to_ascii(self.env, self.state).splitlines()[:-1]
    if flip:
      lines = _turned_round(lines, self.env.rows, self.env.cols)
    return "\n".join(lines + [self.status()])

  # -- Moves -----------------------------------------------------------------------------------
  def parse(self, text: str) -> list[int]:
    """The actions of a move typed by a person, checked against the rules; changes nothing.

    Raises:
      ValueError: saying why the move is malformed or illegal, and listing the legal moves.
    """
    if self.over:
      raise ValueError("the game is over; type 'undo' to take back moves, or start a new game")
    move = normalise_move(text)
    if not move:
      raise ValueError("empty move; legal moves: " + " ".join(self.legal_moves()))
    if len(self.env.move_path(move)) > 1:
      # A whole path (a checkers multi-jump); it may stop midway, the player then goes on
      # move by move.
      return self.env.path_to_actions(self.state, move, complete=False)
    try:
      return [self.env.move_to_action(self.state, move)]
    except ValueError:
      clicked = self._as_click(move)
      if clicked is None:
        raise
      return [self.env.move_to_action(self.state, clicked)]

  def _as_click(self, move: str) -> str | None:
    """The move a typed square stands for where a click on it plays one (Connect Four: "d4" is
    column d, as a click on d4 is), or a bare file number in a game of columns ("4" is d);
    None for anything else."""
    env = self.env
    if re.fullmatch(r"\d+", move) and 1 <= int(move) <= env.cols:
      file = notation.FILES[int(move) - 1]
      column = {env.one_click_move(f"{file}{rank}") for rank in range(1, env.rows + 1)}
      # Only where every square of the file is the same move (a column, not a square).
      return column.pop() if len(column) == 1 and None not in column else None
    try:
      (square,) = notation.parse_squares(move, env.rows, env.cols, env.name)
    except ValueError:
      return None
    return env.one_click_move(notation.square_name(square, env.cols))

  def play(self, text: str) -> list[str]:
    """Plays a person's move (notation, or a checkers path); returns the notation of each action.

    Raises:
      ValueError: when it is not a person's turn, or the move is malformed or illegal; the
        position is then unchanged.
    """
    if not self.over and not self.is_human(self.to_move):
      raise ValueError(f"it is {self.player_label(self.to_move)}'s turn, not yours")
    actions = self.parse(text)
    return [self._apply(action, None) for action in actions]

  def agent_move(self) -> Analysis:
    """Lets the engine of the player to move choose and play one action; returns its analysis."""
    if self.over:
      raise ValueError("the game is over")
    engine = self.engines[self.to_move]
    if engine is None:
      raise ValueError(f"it is {self.player_label(self.to_move)}'s turn")
    analysis = self.analyse(engine)
    self._apply(analysis.action, analysis)
    return analysis

  def hint_engine(self, fallback: Callable[[], Engine]) -> Engine:
    """The engine that gives a person hints: the first engine of the game that searches (the
    opponent's own search), else `fallback()` (built only then; a person against a person or
    against random play)."""
    engine = next((e for e in self.engines if e is not None and e.kind != "random"), None)
    return engine if engine is not None else fallback()

  def analyse(self, engine: Engine) -> Analysis:
    """`engine`'s analysis of the current position (a hint, or its move), without playing it."""
    self._key, key = jax.random.split(self._key)
    return engine.analyse(self.state, key)

  def _apply(self, action: int, analysis: Analysis | None) -> str:
    state = self.state
    if not bool(np.asarray(state.legal_action_mask)[action]):  # Never step an illegal action.
      raise ValueError(f"illegal action {action}")
    move = self.env.action_to_move(state, action)
    self.players.append(int(state.current_player))
    self.history.append(self._step(state, jnp.int32(action)))
    self.actions.append(int(action))
    self.moves.append(move)
    self.analyses.append(analysis)
    return move

  def resign(self, player: int | None = None) -> None:
    """The player to move (or `player`) gives up."""
    if self.over:
      raise ValueError("the game is already over")
    self.resigned = self.to_move if player is None else int(player)

  def undo(self) -> list[str]:
    """Takes back moves up to the last position where a person was to move.

    That is the person's last move and the engine replies after it (in checkers, one hop).
    A resignation is taken back first, alone. Returns the undone moves (notation, in order).

    Raises:
      ValueError: when there is nothing a person can take back.
    """
    if self.resigned is not None:
      self.resigned = None
      return []
    for i in range(len(self.history) - 2, -1, -1):
      state = self.history[i]
      if not bool(state.terminated) and self.is_human(int(state.current_player)):
        undone = self.moves[i:]
        del self.history[i + 1:], self.actions[i:], self.moves[i:]
        del self.analyses[i:], self.players[i:]
        return undone
    raise ValueError("nothing to undo")

  # -- Records ---------------------------------------------------------------------------------
  def turns(self) -> list[str]:
    """The moves grouped by turn: a checkers multi-jump's hops joined into one path."""
    turns: list[str] = []
    for i, move in enumerate(self.moves):
      # Only a checkers multi-jump gives one player two actions in a row, and each hop
      # starts where the last one ended: "c3e5" + "e5g7" -> "c3e5g7".
      if i > 0 and self.players[i] == self.players[i - 1]:
        turns[-1] += move[len(_first_square(move)):]
      else:
        turns.append(move)
    return turns

  def record(self) -> str:
    """The game as PGN-like text: tags, then numbered turns in notation, then the result."""
    score, text = self.result()
    tags = {
        "Game": self.env.name,
        "Board": f"{self.env.rows}x{self.env.cols}",
        side_name(self.env, 0).capitalize(): self._player_tag(0),
        side_name(self.env, 1).capitalize(): self._player_tag(1),
        "Date": self.started.strftime("%Y-%m-%d %H:%M:%S"),
        "Result": score,
        "Termination": text,
    }
    options = self.game_options()
    if options:  # after the board, before the players
      tags = {"Game": tags.pop("Game"), "Board": tags.pop("Board"),
              "Options": " ".join(f"{k}={v}" for k, v in options.items()), **tags}
    lines = [f'[{k} "{v}"]' for k, v in tags.items()] + [""]
    words = []  # A move number stays on the line of its move.
    for i, turn in enumerate(self.turns()):
      words.append(f"{i // 2 + 1}. {turn}" if i % 2 == 0 else turn)
    words.append(score)
    lines += _wrap(words)
    return "\n".join(lines) + "\n"

  def game_options(self) -> dict[str, str]:
    """The constructor options, beyond the game and its rows and columns, that rebuild this
    game's start position (the record's `Options` tag): a board side (`size`, Slider's; a
    TD-Leaf run may play on any) and the neutral pieces on the start board (`blocks`), for a
    game built with them (its `options_spec`). Empty for the other games."""
    env = self.env
    args = {option.name for option in env.options_spec}
    options = {}
    if "size" in args:
      options["size"] = str(env.rows)
    if "blocks" in args:
      board = np.asarray(env.board_array(self.history[0])).reshape(-1)
      blocks = [notation.square_name(i, env.cols) for i, code in enumerate(board)
                if code != 0 and env.piece_owner(int(code)) is None]
      options["blocks"] = ",".join(blocks) or "none"
    return options

  def _player_tag(self, player: int) -> str:
    engine = self.engines[player]
    return "human" if engine is None else engine.name

  def save(self, directory: str | Path) -> Path:
    """Writes `record()` to `directory/<game>-<date>.txt` and returns the path.

    The first save picks a new name; later saves of the same session (after an undo and a
    different ending) overwrite that file, so one game is one file.
    """
    if self.saved_path is not None:
      self.saved_path.write_text(self.record())
      return self.saved_path
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"{self.env.name}-{self.started.strftime('%Y%m%d-%H%M%S')}"
    path = directory / f"{stem}.txt"
    n = 1
    while path.exists():
      n += 1
      path = directory / f"{stem}-{n}.txt"
    path.write_text(self.record())
    self.saved_path = path
    return path


def _turned_round(lines: list[str], rows: int, cols: int) -> list[str]:
  """`render.to_ascii`'s board lines (ranks top down, then the files) turned round by 180
  degrees: every square is three characters wide after the rank label."""
  width = len(str(rows))
  ranks, files = lines[:rows], lines[rows]
  turned = []
  for line in reversed(ranks):
    cells = line[width + 1:].ljust(3 * cols)
    flipped = "".join(cells[3 * c:3 * c + 3] for c in reversed(range(cols)))
    turned.append((line[:width + 1] + flipped).rstrip())
  cells = files[width + 1:].ljust(3 * cols)
  turned.append((files[:width + 1] + "".join(cells[3 * c:3 * c + 3]
                                              for c in reversed(range(cols)))).rstrip())
  return turned


def _first_square(move: str) -> str:
  match = re.match(r"[a-z]\d+", move)
  return match.group(0) if match else move


def _wrap(words: list[str], width: int = 80) -> list[str]:
  lines, line = [], ""
  for word in words:
    if line and len(line) + 1 + len(word) > width:
      lines.append(line)
      line = word
    else:
      line = f"{line} {word}" if line else word
  return lines + ([line] if line else [])
