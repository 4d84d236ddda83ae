"""The game behind the web page (`azjax.play.web`): one `azjax.play.Session`, the click selection,
the settings form and the JSON state the page draws. The page only draws what this sends and
forwards clicks, so the tests drive `App` directly (`App.handle(method, path, body)`), without
a server.
"""

from __future__ import annotations

import argparse
import dataclasses
import threading
from typing import Any

from azjax import agents, games, play
from azjax.play import render

# The kinds of player the page offers: play's (`azjax.agents.KINDS`, in its order).
OPPONENTS = play.opponents()
# The most simulations an engine of the page may search: the top rung of the rollout-MCTS
# ladder. A move then takes seconds; far more would hold the session's lock for minutes.
MAX_SIMULATIONS = 20480
# The simulations of each kind that searches when the page's field is left empty.
SIMULATION_DEFAULTS = {k: agents.KINDS[k].default for k in OPPONENTS
                       if agents.KINDS[k].number == "simulations"}


@dataclasses.dataclass
class Settings:
  """What the page's settings form chooses."""

  game: str | None = None
  opponent: str | None = None  # engine spec; None: the trained agent if any, else mcts
  color: str = "white"  # the person's side, or "watch" for agent against agent
  sims: int | None = None
  depth: int | None = None
  rows: int | None = None
  cols: int | None = None
  checkpoint: str | None = None


class App:
  """The page's game: one session, the click selection, and saving of finished games."""

  def __init__(self, settings: Settings, *, seed: int = 0, save_dir: str | None = "games"):
    self.factory = play.EngineFactory()
    self.seed = seed
    self.save_dir = save_dir
    self.lock = threading.Lock()
    self.new_game(settings)
    # The page's last state, served while the lock is held (an engine thinking).
    self.snapshot = self.state_json()

  @property
  def message(self) -> str:
    """What the page says under the board: the reason a click or move was refused, or news."""
    return self._message

  @message.setter
  def message(self, text: str) -> None:
    self._message, self.message_kind = text, "error" if text else ""

  def say(self, text: str) -> None:
    """A message that is news, not an error (a take-back, a hint)."""
    self._message, self.message_kind = text, "info"

  @classmethod
  def from_args(cls, args: argparse.Namespace) -> "App":
    """The app for the command line of `azjax.cli.play`."""
    color = "watch" if args.watch else args.color
    settings = Settings(game=args.game, opponent=args.opponent, color=color, sims=args.sims,
                        depth=args.depth, rows=args.rows, cols=args.cols,
                        checkpoint=args.checkpoint)
    return cls(settings, seed=args.seed, save_dir=None if args.no_save else args.save_dir)

  # -- Actions (each called with the lock held) ----------------------------------------------
  def new_game(self, settings: Settings) -> None:
    """Starts a game with `settings`; on a ValueError the current game is kept."""
    check_simulations(settings)
    watch = settings.color == "watch"
    setup = play.resolve_setup(
        settings.game, rows=settings.rows, cols=settings.cols, checkpoint=settings.checkpoint,
        opponent=settings.opponent, color="white" if watch else settings.color, watch=watch,
        depth=settings.depth)
    # One factory for every game, so a game against an engine seen before compiles nothing.
    session = setup.session(self.factory, seed=self.seed, simulations=settings.sims,
                            depth=settings.depth)
    self.seed += 1
    self.settings, self.setup, self.session = settings, setup, session
    self.selected: str | None = None
    self.message = ""
    self.hint_of: tuple[int, play.Analysis, str] | None = None  # (ply, analysis, engine name)

  def click(self, square: str) -> None:
    """A click on `square`: select a piece, move the selected one, or drop a disc or mark.

    Anything that is not a legal move leaves the position as it is and sets `message` to the
    reason (the same text the terminal prints).
    """
    session = self.session
    if not session.human_to_move:
      self.message = "the game is over" if session.over else "wait: it is not your turn"
      return
    env = session.env
    try:
      games.notation.parse_squares(square, env.rows, env.cols, env.name)
    except ValueError:
      self.message = f"not a square of the board: {square!r}"
      return
    move = env.one_click_move(square)
    if move is not None:  # One click is a move (a disc or a mark).
      self.move(move)
      return
    targets = self._targets()
    if self.selected is None:
      if square in targets:
        self._select(square)
      else:
        self.message = self._why_not_selectable(square)
      return
    if square == self.selected and not session.continuing_square():
      self.selected, self.message = None, ""  # A second click on the piece puts it down.
    elif square in targets.get(self.selected, ()):
      self.move(self.selected + square)
    elif square in targets and not session.continuing_square():
      self._select(square)
    elif self._owner(square) == session.to_move:  # Another own piece that cannot move now.
      self.message = self._why_not_selectable(square)
    else:
      self.move(self.selected + square)  # Illegal: let the rules say why.

  def _select(self, square: str) -> None:
    """Selects the piece on `square`; a move of it with no target square to click (a Slider
    piece leaving the board) is said, and offered as a button (`special_moves`)."""
    self.selected, self.message = square, ""
    off = [m for m in self._special_moves() if m["from"] == square]
    if off:
      self.say(f"{square} can leave the board: press '{off[0]['label']}'" + (
          ", or click a target square" if self._targets().get(square) else ""))

  def move(self, text: str) -> None:
    """Plays a move typed in notation; an illegal one only sets `message`."""
    try:
      self.session.play(text)
      self.message = ""
    except ValueError as err:
      self.message = str(err)
    # A checkers piece in the middle of a jump stays selected: it is the only one that may move.
    self.selected = self.session.continuing_square()
    self._save_if_over()

  def agent(self) -> None:
    """The engine to move (if any) plays one move."""
    if self.session.over or self.session.human_to_move:
      return
    self.session.agent_move()
    self.message = ""
    self.selected = self.session.continuing_square() if self.session.human_to_move else None
    self._save_if_over()

  def hint(self) -> None:
    """The move an engine suggests to the person to move, with its evaluation; not played.

    The engine is the opponent's own search (a rollout MCTS where the opponent does not
    search), as the terminal's `hint`; the suggested move's squares are highlighted until the
    position changes.
    """
    session = self.session
    if not session.human_to_move:
      self.message = "the game is over" if session.over else "wait: it is not your turn"
      return
    engine = session.hint_engine(lambda: self.factory.make(session.env, "mcts"))
    analysis = session.analyse(engine)
    self.hint_of = (len(session.moves), analysis, engine.name)
    self.selected = session.continuing_square()
    self.say(f"hint from {engine.name}: {analysis.move}; "
             + play.describe(session.env, analysis, session.to_move))

  def _current_hint(self) -> play.Analysis | None:
    """The last hint, while its position is on the board and the person is to move."""
    if self.hint_of is None or not self.session.human_to_move:
      return None
    ply, analysis, _ = self.hint_of
    return analysis if ply == len(self.session.moves) else None

  def undo(self) -> None:
    try:
      undone = self.session.undo()
      self.say("took back " + (" ".join(undone) if undone else "the resignation"))
    except ValueError as err:
      self.message = f"cannot undo: {err}"
    self.selected = self.session.continuing_square()

  def resign(self) -> None:
    try:
      self.session.resign(self._human_side())
    except ValueError as err:
      self.message = str(err)
    self.selected = None
    self._save_if_over()

  def _color_choice(self) -> str:
    """The form's "You play" choice: "white" (first), "black" (second) or "watch", also for a
    game's own colour given on the command line ("--color yellow")."""
    if self.settings.color == "watch":
      return "watch"
    try:
      player = play.parse_color(self.session.env, self.settings.color)
    except ValueError:
      return "white"
    return ("white", "black")[player]

  def _default_opponents(self) -> dict[str, str]:
    """The kind the default opponent ("") is in each game: "az" where results/ has a trained
    agent, else "mcts" (found once, on the first call); in the game of a run given on the
    command line, that run's player ("az", or "tdleaf" for a TD-Leaf run)."""
    if not hasattr(self, "_defaults"):
      self._defaults = {g: "az" if play.find_checkpoint(g) else "mcts" for g in games.GAMES}
    defaults = dict(self._defaults)
    if self.settings.checkpoint and self.setup.run_dir is not None:
      defaults[self.session.env.name] = play.checkpoints.trained_spec(self.setup.run_dir).kind
    return defaults

  def _human_side(self) -> int | None:
    humans = [p for p in (0, 1) if self.session.is_human(p)]
    if len(humans) == 1:
      return humans[0]
    return None  # Both people (the one to move resigns) or watch mode (nobody may).

  def _save_if_over(self) -> None:
    if self.session.over and self.save_dir and self.session.moves:
      self.session.save(self.save_dir)

  def _special_moves(self) -> list[dict[str, Any]]:
    """The legal moves of the person to move that no click on a square can play, as buttons:
    a pass ("-" in Slider), and a selected piece's move off the board ("e3+")."""
    if not self.session.human_to_move:
      return []
    buttons = []
    for move in self.session.legal_moves():
      frm, to = play.move_squares(self.session.env, move)
      if to:
        continue
      if frm is None:
        buttons.append({"move": move, "from": None, "label": "Pass"})
      elif frm == self.selected:
        buttons.append({"move": move, "from": frm, "label": f"Move {frm} off the board"})
    return buttons

  def _targets(self) -> dict[str, list[str]]:
    """from-square -> target squares of the legal moves."""
    targets: dict[str, list[str]] = {}
    for move in self.session.legal_moves():
      frm, to = play.move_squares(self.session.env, move)
      targets.setdefault(frm or "", []).extend(to)
    return targets

  def _owner(self, square: str) -> int | None:
    """The player whose piece stands on `square`, or None if it is empty."""
    env = self.session.env
    (index,) = games.notation.parse_squares(square, env.rows, env.cols, env.name)
    code = int(env.board_array(self.session.state).reshape(-1)[index])
    return None if code == 0 else render.piece_owner(env, code)

  def _why_not_selectable(self, square: str) -> str:
    env = self.session.env
    owner = self._owner(square)
    side = play.side_name(env, self.session.to_move)
    if owner is None:
      return f"{square} is empty: click one of your ({side}) pieces first"
    if owner != self.session.to_move:
      return f"{square} is not your piece: you play {side}"
    if self.session.continuing_square():
      return f"you must go on jumping with the piece on {self.session.continuing_square()}"
    return f"the piece on {square} has no legal move" + (
        f" ({env.no_move_reason})" if env.no_move_reason else "")

  # -- The state the page draws --------------------------------------------------------------
  def state_json(self) -> dict[str, Any]:
    session, env = self.session, self.session.env
    humans = [p for p in (0, 1) if session.is_human(p)]
    # The person playing the second side sees the board from there, where that side starts at
    # the top (not Connect Four, where discs fall down).
    flip = humans == [1] and play.second_side_at_top(env)
    highlight = []
    targets = self._targets() if session.human_to_move else {}
    hint = self._current_hint()
    if self.selected:
      highlight = [self.selected] + targets.get(self.selected, [])
    elif hint is not None:  # The suggested move's squares.
      frm, to = play.move_squares(env, hint.move)
      highlight = ([frm] if frm else []) + to
    next_engine = None if session.over or session.human_to_move else (
        session.engines[session.to_move])
    last = next((i for i in range(len(session.analyses) - 1, -1, -1)
                 if session.analyses[i] is not None), None)
    analysis = None
    if last is not None:
      a, player = session.analyses[last], session.players[last]
      analysis = {
          "side": play.side_name(env, player), "player": session.player_label(player),
          "move": a.move, "value": a.value, "value_kind": a.value_kind,
          # The first player's winning chances, for an evaluation bar drawn from its side.
          "chance_first": None if a.value is None or a.value_kind != "value" else (
              (a.value + 1) / 2 if player == 0 else (1 - a.value) / 2),
          "value_text": play.value_text(env, a, player),
          "method": a.method, "seconds": round(a.seconds, 3),
          "top": [dataclasses.asdict(t) for t in a.top],
          "share_label": "visits" if a.share_label == "visit share" else a.share_label,
          "pv": list(a.pv),  # the line an alpha-beta engine expects (tdleaf), else []
          "text": play.describe(env, a, player),
          "current": last == len(session.analyses) - 1,
      }
    score, result = session.result()
    return {
        "game": env.name,
        "title": play.describe_game(env).replace("_", " "),
        "example": play.example_move(env),
        "svg": render.to_svg(env, session.state, size=480, flip=flip,
                             highlight_squares=highlight),
        "status": session.status(),
        "message": self.message,
        "message_kind": self.message_kind,
        "over": session.over,
        "result": score,
        "result_text": result,
        "to_move": play.side_name(env, session.to_move),
        "human_to_move": session.human_to_move,
        "agent_to_move": next_engine is not None,
        "thinking": None if next_engine is None else (
            f"{session.player_label(session.to_move)} is thinking: {next_engine.thinking}"
            + ("" if next_engine.compiled else " (compiling the search first: a few seconds)")),
        "selected": self.selected,
        "legal": session.legal_moves() if session.human_to_move else [],
        "special_moves": self._special_moves(),
        "hint": None if hint is None else {
            "move": hint.move, "engine": self.hint_of[2],
            "text": play.describe(env, hint, session.to_move)},
        "moves": session.turns(),
        "players": [session.player_label(0), session.player_label(1)],
        "sides": [play.side_name(env, 0), play.side_name(env, 1)],
        "analysis": analysis,
        "notes": self.setup.notes,
        "legend": play.legend(env),
        "can_undo": _can_undo(session),
        "saved": str(session.saved_path) if session.saved_path else None,
        "rules": play.rules(env),
        "humans": len(humans),
        "settings": {"game": env.name, "opponent": self.settings.opponent or "",
                     "color": self._color_choice(), "sims": self.settings.sims},
        # "" is the default opponent: the trained agent if results/ has one, else mcts.
        "options": {"games": list(games.GAMES), "opponents": [""] + list(OPPONENTS),
                    "descriptions": {k: agents.KINDS[k].help_line() for k in OPPONENTS},
                    # What an empty "simulations" field means, for each kind that searches.
                    "sims_defaults": SIMULATION_DEFAULTS,
                    "default_opponents": self._default_opponents()},
    }

  # -- HTTP --------------------------------------------------------------------------------------
  def handle(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Runs one API call; `(HTTP status, JSON reply)`. The reply is the new state.

    A state request while another call holds the lock (an engine thinking, a new game
    compiling) gets the last state at once, marked `"busy": true`, rather than waiting.
    """
    if method == "GET" and path == "/api/state":
      if not self.lock.acquire(blocking=False):
        return 200, {**self.snapshot, "busy": True}
    else:
      self.lock.acquire()
    try:
      try:
        if method == "GET" and path == "/api/state":
          pass
        elif method == "POST" and path == "/api/click":
          self.click(str(body.get("square", "")).lower())
        elif method == "POST" and path == "/api/move":
          self.move(str(body.get("move", "")))
        elif method == "POST" and path == "/api/agent":
          self.agent()
        elif method == "POST" and path == "/api/hint":
          self.hint()
        elif method == "POST" and path == "/api/undo":
          self.undo()
        elif method == "POST" and path == "/api/resign":
          self.resign()
        elif method == "POST" and path == "/api/new":
          self.new_game(_settings_from(body, self.settings))
        else:
          return 404, {"error": f"no such call: {method} {path}"}
      except (ValueError, FileNotFoundError) as err:
        self.message = str(err)  # A bad setting: said on the page, the game goes on.
      self.snapshot = self.state_json()
      return 200, {**self.snapshot, "busy": False}
    finally:
      self.lock.release()


def check_simulations(settings: Settings) -> None:
  """Raises ValueError unless the simulations the settings ask for (`sims`, or the opponent's
  own, "mcts:N" or "az:N") are in 1..`MAX_SIMULATIONS`."""
  asked = [("simulations", settings.sims)]
  if settings.opponent:
    spec = play.parse_spec(settings.opponent)
    if spec.info.number == "simulations":
      asked.append((f"opponent {settings.opponent}", spec.strength))
  for what, sims in asked:
    if sims is not None and not 1 <= sims <= MAX_SIMULATIONS:
      raise ValueError(f"{what}: simulations must be in 1..{MAX_SIMULATIONS}, got {sims}")


def _can_undo(session: play.Session) -> bool:
  if session.resigned is not None:
    return True
  return any(not bool(s.terminated) and session.is_human(int(s.current_player))
             for s in session.history[:-1])


def _settings_from(body: dict[str, Any], current: Settings) -> Settings:
  """Settings for a new game from the form; fields left out keep their value."""
  game = body.get("game") or current.game
  same_game = game == current.game
  sims = body.get("sims", current.sims)
  try:
    sims = int(sims) if sims not in (None, "") else None
  except (TypeError, ValueError):
    raise ValueError(f"simulations: expected a whole number, got {sims!r}") from None
  # An empty choice is the default opponent; a missing one keeps the current opponent.
  opponent = (body["opponent"] or None) if "opponent" in body else current.opponent
  return Settings(
      game=game, opponent=opponent, color=body.get("color") or current.color, sims=sims,
      depth=current.depth,
      # A size or checkpoint given on the command line belongs to its own game.
      rows=current.rows if same_game else None, cols=current.cols if same_game else None,
      checkpoint=current.checkpoint if same_game else None)
