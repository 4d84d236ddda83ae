"""Playing against an agent: a game session independent of any user interface.

The terminal (`azjax.cli.play`) and the web page (`azjax/play/web.py`) are thin layers over
three things this package defines:

* **Engines**: the computer players. `Engine.analyse(state, key)` runs the agent's search on one
  position and returns an `Analysis`: the move it plays, its value estimate from its own side,
  and its top moves with visit shares, so a person sees *why* it played what it played. Engines
  are built from a player spec ("az", "az:128", "mcts:400", "alphabeta:2", "azab:3", "random",
  "solver", "policy"; `azjax.agents.parse_spec`, the kinds and their default strengths in
  `azjax.agents.KINDS`) by an `EngineFactory`, which caches them, so a new game against the
  same engine compiles nothing. Each engine moves as the agent of its spec does, on the same
  functions (`azjax.search.search` and its root statistics, `azjax.uct.root_search`,
  `azjax.alphabeta.root_search`, the solver), and only formats what they return. A TD-Leaf
  run (`azjax.tdleaf`, `--checkpoint RUN`) plays as "tdleaf[:depth]", play's own kind
  (`TDLEAF`): alpha-beta with its learned evaluation, its value and principal variation shown.
* **Session**: one game. Every position is kept, so undo is a truncation; moves typed by a
  person are parsed and checked before anything is stepped (in azjax an illegal action is a
  loss for the mover, not an error, so a typo must never reach `env.step`); checkers jumps may
  be typed hop by hop ("c3e5", then "e5g7") or as a whole path ("c3e5g7").
* **Records**: a finished (or abandoned) game is saved as a PGN-like text file, the move list in
  the games' notation with the result; `replay` plays a record back.

`find_checkpoint` looks in `results/` for a trained agent, which is the default opponent, so a
newcomer can play right after installing.

>>> factory = EngineFactory()
>>> setup = resolve_setup("tic_tac_toe", opponent=None, color="white")
>>> session = setup.session(factory)
>>> session.play("b2")          # the person's move
>>> analysis = session.agent_move()
>>> print(describe(session.env, analysis, player=1))
"""

from __future__ import annotations

# One module a job, layered texts -> analysis -> engines -> session -> checkpoints, records
# (each imports only those before it); this package re-exports the names the terminal, the web
# page and the tests use, so `from azjax import play` stays the one way in.
from azjax.play.analysis import Analysis, MoveStat, describe, value_text
from azjax.play.checkpoints import Setup, find_checkpoint, resolve_setup, results_dirs
from azjax.play.engines import (
  ENGINES,
  TDLEAF,
  TDLEAF_HELP,
  Engine,
  EngineFactory,
  _load_network,  # noqa: F401 (tests load a run's network)
  opponents,
  parse_spec,
)
from azjax.play.records import Replay, replay, replay_file
from azjax.play.session import Session
from azjax.play.texts import (
  board_legend,
  describe_game,
  example_move,
  legend,
  move_squares,
  normalise_move,
  parse_color,
  rules,
  second_side_at_top,
  side_name,
)

__all__ = [
    "ENGINES", "TDLEAF", "TDLEAF_HELP", "Analysis", "Engine", "EngineFactory", "MoveStat", "Replay",
    "Session", "Setup", "board_legend", "describe", "describe_game", "example_move",
    "find_checkpoint", "legend", "move_squares", "normalise_move", "opponents", "parse_color",
    "parse_spec", "replay", "replay_file", "resolve_setup", "results_dirs", "rules",
    "second_side_at_top", "side_name", "value_text",
]
