"""The play command: argument parsing and dispatch to the terminal, the web page or a replay.

    azjax play                                   # vs the trained agent in results/
    azjax play --game checkers --opponent alphabeta:2 --color black
    azjax play --game connect_four --opponent mcts --sims 2000
    azjax play --watch --white az --black mcts:200 --delay 0.5
    azjax play --web                              # http://127.0.0.1:8765/
    azjax play --checkpoint runs/slider_tdleaf      # vs a TD-Leaf run's alpha-beta player
    azjax play --replay docs/games/breakthrough-20261123-194331.txt

`main(argv)` is `azjax play` and, from a checkout, `python -m experiments.play` (a shim); `run`
is the same with its input and output streams named (the tests drive the terminal through it).

In the terminal, type a move in notation (a2a3; checkers c3e5g7 for a double jump) or one of
the commands listed by `help`. Every game is saved under --save-dir as a move list with the
result (see `azjax.play.Session.record`).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

COMMANDS = """\
commands:
  a2a3       play a move (checkers: c3e5, or a whole jump path c3e5g7; connect four: d or d4;
             slider: e3+ for a piece leaving, - or pass to pass)
  moves      list the legal moves
  hint       ask the engine what it would play here (it does not play it)
  undo       take back your last move (and the reply to it)
  resign     give up this game
  rules      how the game is played, and the move notation
  board      show the board again
  legend     what the letters and brackets on the board mean
  new        start a new game with the same settings
  help       this list
  quit       leave (the game is saved)"""
# The words of the commands above, for the message about a word that is neither.
COMMAND_WORDS = ("moves", "hint", "undo", "resign", "rules", "board", "legend", "pass", "new",
                 "help", "quit")
# Replay's commands (`replay`).
REPLAY_HELP = ("Enter or 'n' = next move, 'p' = previous, 'f' = first (the start), 'l' = last, "
               "a number = that ply, 'q' = quit")


def build_parser() -> argparse.ArgumentParser:
  from azjax import agents, games, play
  from azjax.cli import common

  # Each game names its own sides (`Game.side_names`).
  colours = "; ".join(f"{name} {'/'.join(games.game_class(name).side_names).lower()}"
                      for name in games.GAMES)
  kinds = agents.KINDS
  parser = argparse.ArgumentParser(
      prog=common.prog("play"),
      description="Play against an agent (terminal or --web), or watch agents play (--watch).",
      epilog="players (SPEC = KIND[:N][:KEY=VALUE]...):\n"
      + agents.describe_kinds(play.opponents()) + "\n  " + play.TDLEAF_HELP,
      formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--game", default=None,
                      help=f"one of {', '.join(games.GAMES)} (default {games.DEFAULT_GAME})")
  parser.add_argument("--rows", type=int, default=None,
                      help="board rows, for a game with a board size (default: the trained "
                      "agent's board, else the game's own)")
  parser.add_argument("--cols", type=int, default=None, help="board columns, likewise")
  parser.add_argument("--checkpoint", default=None, metavar="DIR",
                      help="a trained run directory: an AlphaZero run (az, azab, policy) or a "
                      "TD-Leaf run (tdleaf: alpha-beta with its learned evaluation); default: "
                      "the AlphaZero run in results/ for the game")
  parser.add_argument("--opponent", default=None, metavar="SPEC",
                      help=f"one of {', '.join(play.opponents())}, optionally with a strength: "
                      "az:128, mcts:400 (simulations), alphabeta:3, azab:3 (depth); see the "
                      "list below. Default: the trained agent if results/ has one, else mcts")
  parser.add_argument("--sims", type=int, default=None,
                      help=f"simulations per move for az (default {kinds['az'].default}) and "
                      f"mcts (default {kinds['mcts'].default})")
  parser.add_argument("--depth", type=int, default=None,
                      help=f"alphabeta depth (default {kinds['alphabeta'].default}), azab depth "
                      f"(default {kinds['azab'].default}), tdleaf depth (default the run's)")
  parser.add_argument("--color", default="white",
                      help="your side: white (moves first) or black; also the game's own "
                      f"colours ({colours})")
  parser.add_argument("--watch", action="store_true",
                      help="agent against agent: --opponent plays both sides unless --white or "
                      "--black say otherwise")
  parser.add_argument("--white", default=None, metavar="SPEC",
                      help="the first player (a spec as for --opponent); implies watch mode "
                      "unless one side is human (terminal only; the page uses --opponent, "
                      "--color and --watch)")
  parser.add_argument("--black", default=None, metavar="SPEC", help="the second player")
  parser.add_argument("--delay", type=float, default=0.0,
                      help="seconds to wait after each move in watch mode")
  parser.add_argument("--seed", type=int, default=0, help="random seed of the engines")
  parser.add_argument("--save-dir", default="games", help="where game records go (default games/)")
  parser.add_argument("--no-save", action="store_true", help="do not save game records")
  parser.add_argument("--replay", default=None, metavar="FILE",
                      help="step through a saved game record, move by move (next, previous, "
                      "first, last)")
  parser.add_argument("--web", action="store_true", help="serve the game as a local web page")
  parser.add_argument("--port", type=int, default=8765, help="web port on 127.0.0.1 (0: any free)")
  parser.add_argument("--open", action="store_true", help="open the page in a browser (--web)")
  return parser


class Terminal:
  """The text interface: reads commands and moves from `stdin`, writes to `stdout`."""

  def __init__(self, args: argparse.Namespace, stdin: TextIO, stdout: TextIO):
    from azjax import play

    self.args, self.stdin, self.stdout = args, stdin, stdout
    self.factory = play.EngineFactory(simulations=args.sims, depth=args.depth)
    watch = args.watch or (bool(args.white or args.black) and "human" not in
                           (args.white, args.black))
    self.setup = play.resolve_setup(
        args.game, rows=args.rows, cols=args.cols, checkpoint=args.checkpoint,
        opponent=args.opponent, color=args.color, watch=watch, players=(args.white, args.black),
        depth=args.depth)
    self.session = self.setup.session(self.factory, seed=args.seed)
    self.announced = -1  # Number of moves at the last announced ending.
    # A person playing the second side alone sees the board from that side, where the game's
    # second side starts at the top (Breakthrough, checkers).
    humans = [p for p in (0, 1) if self.session.is_human(p)]
    self.flip = humans == [1] and play.second_side_at_top(self.session.env)

  def board(self) -> str:
    return self.session.board_text(flip=self.flip)

  def say(self, text: str = "") -> None:
    print(text, file=self.stdout, flush=True)

  def read(self, prompt: str) -> str | None:
    """One line of input, or None at the end of the input."""
    self.stdout.write(prompt)
    self.stdout.flush()
    line = self.stdin.readline()
    if not line:
      self.say()
      return None
    if not self.stdin.isatty():
      self.say(line.rstrip("\n"))  # Echo piped input, so a transcript reads like a session.
    return line.strip()

  # -- The game loop -----------------------------------------------------------------------------
  def run(self) -> int:
    from azjax import play

    session = self.session
    env = session.env
    self.say(f"azjax play: {play.describe_game(env)}, {session.player_label(0)} against "
             f"{session.player_label(1)}.")
    self.say(f"Board: {play.board_legend(env)}" + (
        "; turned round, your side at the bottom." if self.flip else "."))
    for note in self.setup.notes:
      self.say(f"  ({note})")
    humans = [p for p in (0, 1) if session.is_human(p)]
    if humans:
      self.say("Type a move like " + play.example_move(env) + ", or 'help' for the commands "
               "(moves, hint, undo, resign, rules, legend, quit).")
    self.say()
    self.say(self.board())
    while True:
      if session.over:
        self.finish()
        if not humans:
          return 0
        line = self.read("game over; 'undo', 'new' or 'quit'> ")
        if line is None or line.lower() in ("quit", "exit", "q"):
          return 0
        self.command(line)
        continue
      if session.human_to_move:
        line = self.read(f"{play.side_name(env, session.to_move)}> ")
        if line is None:
          self.finish()
          return 0
        if line.lower() in ("quit", "exit"):
          self.finish()
          return 0
        self.command(line)
      else:
        self.agent_turn()
        if not humans and self.args.delay > 0:
          time.sleep(self.args.delay)

  def agent_turn(self) -> None:
    from azjax import play

    session = self.session
    player = session.to_move
    engine = session.engines[player]
    side = play.side_name(session.env, player)
    note = "" if engine.compiled else " (compiling the search first: a few seconds, once)"
    self.say(f"{side} ({engine.name}) is thinking: {engine.thinking}{note}...")
    analysis = session.agent_move()
    self.say(f"{side} plays {analysis.move}  [{analysis.seconds:.2f} s]")
    self.say("  " + play.describe(session.env, analysis, player))
    self.say()
    self.say(self.board())

  def command(self, line: str) -> None:
    """Handles one line: a command or a move. Errors are printed, never raised."""
    from azjax import play

    session = self.session
    word = line.strip().lower()
    if not word:
      return
    if word in ("help", "?", "commands"):
      self.say(COMMANDS)
    elif word in ("moves", "legal", "list"):
      moves = session.legal_moves()
      self.say(f"legal moves ({len(moves)}): " + " ".join(moves) if moves else "no legal moves")
    elif word == "rules":
      self.say(play.rules(session.env))
    elif word in ("board", "show"):
      self.say(self.board())
    elif word == "legend":
      self.say(play.board_legend(session.env) + ".")
    elif word == "undo":
      try:
        undone = session.undo()
      except ValueError as err:
        self.say(f"cannot undo: {err}")
        return
      self.say("took back: " + (" ".join(undone) if undone else "the resignation"))
      self.say(self.board())
    elif word == "resign":
      try:
        session.resign()
      except ValueError as err:
        self.say(str(err))
    elif word == "hint":
      self.hint()
    elif word == "pass":
      move = _pass_move(session)
      if move is None:
        self.say("not played: passing is not a legal move here (type 'moves' for the legal "
                 "moves)")
      else:
        self.play_move(move)
    elif word == "new":
      self.finish(quiet=True)
      self.session = session = self.setup.session(self.factory, seed=self.args.seed + 1)
      self.announced = -1
      self.say("new game")
      self.say(self.board())
    elif not _looks_like_move(word):
      self.say(f"unknown command {line.strip()!r}; commands: {', '.join(COMMAND_WORDS)} "
               f"('help' says what each does), or type a move like "
               f"{play.example_move(session.env)}")
    else:
      self.play_move(line)

  def play_move(self, line: str) -> None:
    """Plays a person's move; a malformed or illegal one is answered with the game's reason."""
    from azjax import play

    session = self.session
    player = session.to_move
    try:
      played = session.play(line)
    except ValueError as err:
      self.say(f"not played: {err}")
      if not session.over:
        self.say("(type 'moves' for the legal moves, 'help' for the commands)")
      return
    alone = sum(session.is_human(p) for p in (0, 1)) == 1
    who = "you play" if alone else f"{play.side_name(session.env, player)} plays"
    self.say(f"{who} {' '.join(played)}")
    self.say()
    self.say(self.board())

  def hint(self) -> None:
    from azjax import play

    session = self.session
    if session.over:
      self.say("the game is over")
      return
    # The opponent's own search, unless it does not search (a person, random play).
    engine = session.hint_engine(lambda: self.factory.make(session.env, "mcts"))
    self.say(f"asking {engine.name}...")
    analysis = session.analyse(engine)
    self.say(f"hint: {analysis.move}; " + play.describe(session.env, analysis, session.to_move))

  def finish(self, quiet: bool = False) -> None:
    """Announces the result and saves the record, once per ending (not if no move was played).

    After an undo and a different ending the same record file is rewritten.
    """
    session = self.session
    if self.announced == len(session.moves):
      return
    self.announced = len(session.moves)
    if session.over and not quiet:
      self.say(session.result()[1] + ".")
    if self.args.no_save or not session.moves:
      return
    path = session.save(self.args.save_dir)
    if not quiet:
      self.say(f"game record saved to {path}")


def _looks_like_move(word: str) -> bool:
  """Whether a typed word is meant as a move rather than a command: it names a square or a
  number ("a2a3", "zz9", "e3+"), is one or two letters (a Connect Four column "d"), or is a pass
  ("-"). "hello" is none of these: an unknown command, not a malformed move."""
  word = word.strip()
  return (any(c.isdigit() for c in word) or len(word) <= 2
          or all(c in "-\u2013\u2014" for c in word))


def _pass_move(session) -> str | None:
  """The legal move that is a pass (notation without squares, Slider's "-"), if any."""
  from azjax import play

  return next((m for m in session.legal_moves()
               if play.move_squares(session.env, m) == (None, [])), None)


def replay(path: str, stdin: TextIO, stdout: TextIO) -> int:
  """Steps through the record at `path`, one position a command: Enter or 'n' the next move,
  'p' the previous, 'f' the start, 'l' the end, a number that ply, 'q' (or the end of the
  input) quits."""
  from azjax import play

  try:
    record = play.replay_file(path)
  except (OSError, ValueError) as err:
    print(f"error: {err}", file=sys.stderr)
    return 1

  def say(text: str = "") -> None:
    print(text, file=stdout, flush=True)

  session = record.session
  players = ", ".join(f"{side} {record.tags[side.capitalize()]}" for side in session.env.side_names
                      if side.capitalize() in record.tags)
  say(f"{path}: {play.describe_game(record.env)}, {len(session.turns())} turns "
      f"({record.plies} plies), result {record.result} "
      f"({record.tags.get('Termination', '')})" + (f"; {players}" if players else ""))
  say(f"Board: {play.board_legend(record.env)}.")
  say(REPLAY_HELP + ".")
  ply = 0
  say()
  say(record.position_text(ply))
  while True:
    stdout.write("replay> ")
    stdout.flush()
    line = stdin.readline()
    if not line:
      say()
      return 0
    if not stdin.isatty():
      say(line.rstrip("\n"))  # Echo piped input, so a transcript reads like a session.
    word = line.strip().lower()
    if word in ("q", "quit", "exit"):
      return 0
    target = _replay_target(word, ply, record.plies)
    if target is None:
      say(f"unknown command {line.strip()!r}: {REPLAY_HELP}")
      continue
    if target == ply:
      say("(already at the " + ("start)" if ply == 0 else "end)" if ply == record.plies
                                else f"ply {ply})"))
      continue
    ply = target
    say(record.position_text(ply))


def _replay_target(word: str, ply: int, plies: int) -> int | None:
  """The ply a replay command goes to from `ply` (of `plies`), or None for an unknown one."""
  if word in ("", "n", "next", "+"):
    return min(ply + 1, plies)
  if word in ("p", "prev", "previous", "back", "-"):
    return max(ply - 1, 0)
  if word in ("f", "first", "start"):
    return 0
  if word in ("l", "last", "end"):
    return plies
  if word.isdigit():
    return min(int(word), plies)
  return None


def main(argv: list[str] | None = None) -> int:
  """The play command on the command line `argv` (default `sys.argv[1:]`); its exit status."""
  return run(argv)


def run(argv: list[str] | None = None, *, stdin: TextIO | None = None,
        stdout: TextIO | None = None) -> int:
  """`main` reading from `stdin` and writing to `stdout` (default the process's own)."""
  args = build_parser().parse_args(argv)
  stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
  if args.replay:
    return replay(args.replay, stdin, stdout)
  if args.web:
    from azjax.play import web

    try:
      app = web.App.from_args(args)
    except (ValueError, FileNotFoundError) as err:
      print(f"error: {err}", file=sys.stderr)
      return 2
    web.serve(app, port=args.port, open_browser=args.open, stdout=stdout)
    return 0
  try:
    terminal = Terminal(args, stdin, stdout)
  except (ValueError, FileNotFoundError) as err:
    print(f"error: {err}", file=sys.stderr)
    return 2
  try:
    return terminal.run()
  except KeyboardInterrupt:
    terminal.say()
    terminal.finish()
    return 130


if __name__ == "__main__":
  sys.exit(main())
