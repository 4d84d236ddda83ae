"""Finding a trained agent in `results/`, and deciding the board and the players from it.

The trained agent is the default opponent, so a newcomer can play right after installing;
`resolve_setup` turns what the user gave (or left out) into a `Setup` and says why.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Sequence

from azjax import agents, games, runs
from azjax.evaluate import strength
from azjax.games import base
from azjax.play.engines import (
  NO_TDLEAF_RUN,
  TDLEAF,
  EngineFactory,
  _needs_network,
  check_run,
  evaluation_text,
  parse_spec,
)
from azjax.play.session import Session
from azjax.play.texts import _relative, _takes_board_size, describe_game, parse_color
from azjax.runs import layout

# -- Finding trained agents ------------------------------------------------------------------------


def results_dirs() -> list[Path]:
  """Where trained runs are looked for: ./results, then the repository's results/ (in a
  checkout; an installed wheel has none, and then only ./results is searched)."""
  here = Path.cwd() / "results"
  checkout = Path(__file__).resolve().parents[2]  # azjax/play/checkpoints.py
  repo = checkout / "results"
  if not (checkout / "pyproject.toml").exists() or here.resolve() == repo.resolve():
    return [here]
  return [here, repo]


def _board_of(config) -> tuple[int, int]:
  env = games.make(config.game, **config.game_kwargs())
  return env.rows, env.cols


def trained_spec(run_dir: Path) -> agents.Spec:
  """The player of a run, the default opponent: its kind's (`azjax.runs.kinds`), "tdleaf" for
  a TD-Leaf run, "az" for an AlphaZero one."""
  return parse_spec(runs.kind_of(run_dir).play_kind)


def _tdleaf_note(run_dir: Path, depth: int | None) -> str:
  """"trained agent: RUN (TD-Leaf alpha-beta, depth 3, feature MLP; slider 4x4, 40
  iterations)": what a TD-Leaf run's player is."""
  from azjax import tdleaf
  from azjax.runs.loop import read_metrics

  config = tdleaf.Config.load(run_dir)
  rows = read_metrics(run_dir)  # metrics.jsonl, or a record's metrics.jsonl.gz
  iterations = max((int(r.get("iteration", 0)) for r in rows), default=0)
  trained = f", {iterations} iteration{'s' * (iterations != 1)}" if iterations else ""
  return (f"trained agent: {_relative(run_dir)} (TD-Leaf alpha-beta, depth "
          f"{depth or config.depth}, {evaluation_text(config)}; "
          f"{describe_game(config.make_env())}{trained})")


def find_checkpoint(game: str, rows: int | None = None, cols: int | None = None,
                    search: Sequence[Path] | None = None) -> Path | None:
  """A run directory under `results/` with a trained model for `game` (and board size).

  Among several, the strongest measured comes first (`<run>/strength.json`,
  `azjax.evaluate.strength`: mistakes against perfect play where a solver exists, else Elo in one
  pool), then an evaluated run (with `eval.md`), then one on the game's standard board
  (Breakthrough 8x8 before 6x6), then the shorter name (a preset's own run before its variants),
  then the name. `checkpoint_choice` says so for people.
  """
  found = _candidates(game, rows, cols, search)
  return found[0][0] if found else None


def _candidates(game: str, rows: int | None, cols: int | None,
                search: Sequence[Path] | None) -> list[tuple[Path, tuple[int, int], Any]]:
  """`(run, board, config)` of every trained `game` agent in `search`, best first (see
  `find_checkpoint`)."""
  from azjax.runs import checkpoint

  found = []
  for root in (results_dirs() if search is None else search):
    if not root.is_dir():
      continue
    for run in sorted(root.iterdir()):
      if not layout.model_path(run).is_dir() or not (run / layout.CONFIG).exists():
        continue
      try:
        config = checkpoint.read_config(run)
        board = _board_of(config)
      except (ValueError, TypeError, KeyError):
        continue  # A run written by another version; not ours to judge here.
      if config.game != game:
        continue
      if (rows and board[0] != rows) or (cols and board[1] != cols):
        continue
      found.append((run, board, config))
  standard = (games.make(game).rows, games.make(game).cols)
  ranking = strength.rank([run for run, _, _ in found])
  found.sort(key=lambda f: (ranking.rank(f[0]), not (f[0] / layout.EVAL_TABLE).exists(),
                            f[1] != standard, len(f[0].name), f[0].name))
  return found


def _network_text(config: Any) -> str:
  """"ResNet 32x3" (channels x blocks), "MLP 256x3" (width x hidden layers of the trunk),
  or the network's name."""
  net = str(getattr(config, "net", "") or "network")
  label = {"resnet": "ResNet", "mlp": "MLP", "cnn": "CNN", "se_resnet": "SE-ResNet"}.get(
      net, net)
  channels, blocks = getattr(config, "channels", None), getattr(config, "blocks", None)
  hidden = getattr(config, "hidden", None)
  if channels and blocks and "resnet" in net:
    return f"{label} {channels}x{blocks}"
  if net == "mlp" and hidden and blocks and getattr(config, "residual", False):
    return f"residual {label} {hidden}x{2 * blocks + 1}"  # the stem and two a block
  if net == "mlp" and hidden and blocks:
    return f"{label} {hidden}x{blocks + 1}"  # the stem's layer and one per block
  return label


def checkpoint_choice(game: str, rows: int | None = None, cols: int | None = None,
                      search: Sequence[Path] | None = None) -> str | None:
  """Which trained agent `find_checkpoint` picks and why, for the line that shows it, e.g.

  "results/checkers (ResNet 32x3, 8x8), chosen from the 2 checkers agents in results/ because
  it and results/checkers_gpu tie on evaluation (eval.md) and board, so the shorter name (a
  preset's own run, not a variant) comes first; also there: results/checkers_gpu (ResNet
  128x6, 8x8) (--checkpoint DIR plays another)".

  None when there is no trained agent.
  """
  found = _candidates(game, rows, cols, search)
  if not found:
    return None
  (run, board, config), rest = found[0], found[1:]
  text = f"{_relative(run)} ({_network_text(config)}, {board[0]}x{board[1]})"
  if not rest:
    return text + f", the only {game} agent in results/"
  standard = (games.make(game).rows, games.make(game).cols)
  second = rest[0]
  ranking = strength.rank([r for r, _, _ in found])
  if ranking.rank(run) < ranking.rank(second[0]) and second[0] in ranking.order:
    why = (f"it is the strongest measured ({strength.FILE}): "
           f"{ranking.versus(run, second[0], str(_relative(second[0])))}")
  elif ranking.rank(run) < ranking.rank(second[0]):
    why = (f"it is measured ({ranking.text(run)}, {strength.FILE}) and "
           f"{_relative(second[0])} is not")
  elif (run / layout.EVAL_TABLE).exists() != (second[0] / layout.EVAL_TABLE).exists():
    why = f"it is evaluated ({layout.EVAL_TABLE}) and {_relative(second[0])} is not"
  elif (board == standard) != (second[1] == standard):
    why = f"it plays on the standard {standard[0]}x{standard[1]} board"
  else:
    why = (f"it and {_relative(second[0])} tie on evaluation ({layout.EVAL_TABLE}) and "
           "board, so the shorter name (a preset's own run, not a variant) comes first")
  others = ", ".join(f"{_relative(r)} ({_network_text(c)}, {b[0]}x{b[1]})" for r, b, c in rest)
  return (text + f", chosen from the {len(found)} {game} agents in results/ because {why}; "
          f"also there: {others} (--checkpoint DIR plays another)")


@dataclasses.dataclass
class Setup:
  """A resolved game: the environment, who plays each side, and notes for the user.

  Attributes:
    env: the game.
    players: spec of player 0 and player 1 ("human" for a person).
    run_dir: the trained agent's run directory, if any side is "az", "azab", "policy" or
      "tdleaf" (or one was given).
    notes: lines explaining choices made for the user (board size, default opponent).
  """

  env: base.Game
  players: tuple[agents.Spec, agents.Spec]
  run_dir: Path | None
  notes: list[str]

  def session(self, factory: EngineFactory, *, seed: int = 0, simulations: int | None = None,
              depth: int | None = None) -> "Session":
    """A new game between the players, with engines from `factory` (see `EngineFactory.make`)."""
    engines = tuple(factory.make(self.env, spec, self.run_dir, simulations=simulations,
                                 depth=depth) for spec in self.players)
    return Session(self.env, engines, seed=seed)


def resolve_setup(game: str | None = None, *, rows: int | None = None, cols: int | None = None,
                  checkpoint: str | None = None, opponent: str | None = None,
                  color: str = "white", watch: bool = False,
                  players: tuple[str | None, str | None] = (None, None),
                  depth: int | None = None) -> Setup:
  """Decides the board and the players from what the user gave, and says why.

  Args:
    game: one of `azjax.games.GAMES`; default: the checkpoint's game, else breakthrough.
    rows, cols: Breakthrough's board; default: the trained agent's board, else 8x8.
    checkpoint: a run directory, an AlphaZero run or a TD-Leaf run (`azjax.tdleaf`); default:
      the one `find_checkpoint` finds for the game.
    opponent: engine spec of the computer player; default: the trained agent if there is one
      ("az", or "tdleaf" for a TD-Leaf run), else rollout MCTS.
    color: the person's colour (see `parse_color`).
    watch: no person: the opponent plays both sides (agent-vs-agent).
    players: explicit specs for player 0 and 1 (e.g. ("az", "mcts:200")), overriding the rest.
    depth: the search depth asked for (--depth), for the note saying what a TD-Leaf run's
      player is.
  Raises:
    ValueError: for conflicting or impossible choices (the message says what to change).
  """
  notes = []
  if (rows or cols) and game in games.GAMES and not _takes_board_size(game):
    sized = [g for g in games.GAMES if _takes_board_size(g)]
    raise ValueError(f"--rows/--cols are for {', '.join(sized)}, not {game}")
  run_dir = None
  if checkpoint:
    run_env = runs.run_game(checkpoint)
    if game and game != run_env.name:
      raise ValueError(f"{checkpoint} holds a {run_env.name} agent, not {game}")
    game = run_env.name
    board = (run_env.rows, run_env.cols)
    if (rows and rows != board[0]) or (cols and cols != board[1]):
      raise ValueError(f"{checkpoint} plays on {board[0]}x{board[1]}, not "
                       f"{rows or board[0]}x{cols or board[1]}")
    run_dir = Path(checkpoint)
  game = game or games.DEFAULT_GAME
  if game not in games.GAMES:
    raise ValueError(f"unknown game {game!r}; available: {', '.join(games.GAMES)}")
  specs = [parse_spec(p) if p else None for p in players]
  opponent_spec = parse_spec(opponent) if opponent else None
  if run_dir is None and any(s is not None and s.kind == TDLEAF.name
                             for s in (opponent_spec, *specs)):
    raise ValueError(NO_TDLEAF_RUN)
  wants_az = (opponent_spec is None or _needs_network(opponent_spec)
              or any(_needs_network(s) for s in specs))
  if run_dir is None and wants_az:
    run_dir = find_checkpoint(game, rows, cols)
    if run_dir is not None:
      notes.append(f"trained agent: {checkpoint_choice(game, rows, cols)}")
  if run_dir is not None:
    env = runs.run_game(run_dir)
    standard = games.make(game)
    if not (rows or cols) and (env.rows, env.cols) != (standard.rows, standard.cols):
      notes.append(f"board {env.rows}x{env.cols}: the trained agent's board" + (
          f" (--rows {standard.rows} --cols {standard.cols} for the full board, against "
          "another opponent)" if _takes_board_size(game) else ""))
  else:
    env = games.make(game, **{k: v for k, v in (("rows", rows), ("cols", cols)) if v})
  if opponent_spec is None:
    opponent_spec = trained_spec(run_dir) if run_dir is not None else agents.Spec("mcts")
    if run_dir is None:
      notes.append(f"no trained agent for {describe_game(env)} in results/: playing rollout "
                   f"MCTS (train one with python -m experiments.{game})")
  human = agents.Spec("human")
  if watch:
    default = (opponent_spec, opponent_spec)
  else:
    me = parse_color(env, color)
    default = (human, opponent_spec) if me == 0 else (opponent_spec, human)
  final = tuple(s if s is not None else d for s, d in zip(specs, default))
  if any(_needs_network(s) for s in final) and run_dir is None:
    raise ValueError(f"no trained agent for {describe_game(env)} in results/: pass "
                     f"--checkpoint DIR, train one (python -m experiments.{game}), or choose "
                     "another opponent (mcts, alphabeta, random)")
  for spec in final:
    if run_dir is not None:
      check_run(spec, run_dir)  # az for a TD-Leaf run, tdleaf for an AlphaZero one
  trained = [s for s in final if s.kind == TDLEAF.name]
  if trained:
    notes.insert(0, _tdleaf_note(run_dir, trained[0].strength or depth))
  return Setup(env, final, run_dir, notes)  # type: ignore[arg-type]
