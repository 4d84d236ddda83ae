"""Playing against an agent: a game session independent of any user interface.

The terminal (`experiments/play.py`) and the web page (`azjax/web.py`) are thin layers over
three things defined here:

* **Engines**: the computer players. `Engine.analyse(state, key)` runs the agent's search on one
  position and returns an `Analysis`: the move it plays, its value estimate from its own side,
  and its top moves with visit shares, so a person sees *why* it played what it played. Engines
  are built from a player spec ("az", "az:128", "mcts:400", "alphabeta:2", "azab:3", "random",
  "solver", "policy"; `azjax.agents.parse_spec`, the kinds and their default strengths in
  `azjax.agents.KINDS`) by an `EngineFactory`, which caches them, so a new game against the
  same engine compiles nothing. Each engine moves as the agent of its spec does, on the same
  functions (`azjax.search.search` and its root statistics, `azjax.uct.root_search`,
  `azjax.alphabeta.root_search`, the solver), and only formats what they return.
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

import dataclasses
import datetime
import inspect
import math
import re
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import agents, games, render
from azjax.games import base

State = Any

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


# -- Analyses --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MoveStat:
  """One candidate move of an analysis."""

  move: str  # notation
  share: float | None  # share of the search spent on it (visits / total), if the engine searches
  value: float | None  # its value from the mover's side (engine's units, see Analysis)


@dataclasses.dataclass(frozen=True)
class Analysis:
  """What an engine found in one position, from the side of the player to move.

  `value_kind` says what `value` measures: "value" is an expected outcome in [-1, 1] (win +1,
  draw 0, loss -1), from a network or from random playouts; "score" is alpha-beta's
  evaluation (hand-written, material and advancement; or the network's value, in [-1, 1]
  for azab), +-1000 meaning a forced win or loss; None means the engine has no opinion
  (random play).
  """

  action: int
  move: str
  value: float | None  # the value of the position, i.e. of the move played, mover's side
  value_kind: str | None
  top: tuple[MoveStat, ...]
  method: str  # what the engine did, e.g. "Gumbel search, 64 simulations"
  seconds: float = 0.0
  share_label: str = "visit share"  # what the moves' shares are: "visit share" or "policy"


def value_text(env: base.Game, analysis: Analysis, player: int) -> str | None:
  """"value for black +0.42 (about 71% winning chances)", or None without an estimate."""
  side = side_name(env, player)
  if analysis.value is not None and analysis.value_kind == "value":
    v = float(analysis.value)
    return f"value for {side} {v:+.2f} (about {100 * (v + 1) / 2:.0f}% winning chances)"
  if analysis.value is not None and analysis.value_kind == "score":
    return f"evaluation for {side} {_score_text(analysis.value)}"
  return None


def describe(env: base.Game, analysis: Analysis, player: int, *, top: int = 4) -> str:
  """One line for people: the value estimate and the top moves of `analysis` by `player`."""
  value = value_text(env, analysis, player)
  parts = [value] if value else []
  moves = []
  for stat in analysis.top[:top]:
    text = stat.move
    if stat.share is not None:
      text += f" {100 * stat.share:.0f}%"
    if stat.value is not None:
      text += (f" (q {stat.value:+.2f})" if analysis.value_kind == "value"
               else f" ({_score_text(stat.value)})")
    moves.append(text)
  if moves:
    label = (f"top moves ({analysis.share_label})" if analysis.top[0].share is not None
             else "top moves")
    parts.append(f"{label}: " + ", ".join(moves))
  return "; ".join(parts) if parts else "no evaluation (random play)"


def _score_text(score: float) -> str:
  from azjax.alphabeta import WIN_SCORE

  if score >= WIN_SCORE - 100:
    return f"wins in {int(round(WIN_SCORE - score))} plies"
  if score <= -(WIN_SCORE - 100):
    return f"loses in {int(round(WIN_SCORE + score))} plies"
  return f"{score:+.2f}"


def _top_moves(env: base.Game, state: State, chosen: int, order_by: np.ndarray,
               shares: np.ndarray | None, values: np.ndarray | None,
               count: int = 8) -> tuple[MoveStat, ...]:
  """The legal moves sorted by `order_by` (descending), at most `count` of them.

  Among equals the move played comes first, then the better valued: Gumbel search often ends
  with a few moves at the same visit count and picks one of them by its Q-value and prior.
  """
  legal = env.legal_actions(state)

  def rank(a):
    value = np.nan_to_num(values[a], nan=-np.inf) if values is not None else 0.0
    return (-float(order_by[a]), a != chosen, -float(value))

  legal.sort(key=rank)
  stats = []
  for action in legal[:count]:
    stats.append(MoveStat(
        move=env.action_to_move(state, action),
        share=None if shares is None else float(shares[action]),
        value=None if values is None or not np.isfinite(values[action]) else float(values[action])))
  return tuple(stats)


# -- Engines ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Engine:
  """A computer player that can explain its moves.

  Attributes:
    name: label for people and records, e.g. "az-gumbel64 (results/breakthrough_cpu)".
    kind: its kind of player, a key of `ENGINES` (and of `azjax.agents.KINDS`).
    thinking: what it does on each move, for the "is thinking" line.
    analyse_fn: `(state, key) -> Analysis` for one live, unbatched state.
  """

  name: str
  kind: str
  thinking: str
  analyse_fn: Callable[[State, jax.Array], Analysis]
  compiled: bool = False  # Set after the first analysis: the next ones need no compilation.

  def analyse(self, state: State, key: jax.Array) -> Analysis:
    """Searches `state` (live, unbatched) and returns the move with its explanation."""
    start = time.perf_counter()
    analysis = self.analyse_fn(state, key)
    self.compiled = True
    return dataclasses.replace(analysis, seconds=time.perf_counter() - start)


def _random_engine(env: base.Game) -> Engine:
  def analyse(state, key):
    action = int(base.uniform_legal_action(key, state.legal_action_mask))
    return Analysis(action, env.action_to_move(state, action), None, None,
                    (), "a uniformly random legal move")

  return Engine("random", "random", "picking a random legal move", analyse, compiled=True)


def _solver_engine(env: base.Game, *, random_opening_moves: int = 2,
                   randomize: bool = False) -> Engine:
  """Perfect play (`azjax.solver`, tic-tac-toe and Connect Four), the exact value of every
  move shown; it moves as the solver agent with the same options does."""
  from azjax import solver

  try:
    solver.for_game(env)
  except solver.SolverUnavailable as err:
    raise ValueError(str(err)) from None

  def analyse(state, key):
    scores = solver.move_scores(env, state)
    seed = int(jax.random.bits(key, (), jnp.uint32))
    action = solver.solver_move(scores, np.asarray(state.board), seed,
                                random_opening_moves=random_opening_moves, randomize=randomize)
    values = solver.scores_to_values(scores)
    order = np.nan_to_num(scores, nan=-np.inf)
    return Analysis(action, env.action_to_move(state, action), float(values[action]), "value",
                    _top_moves(env, state, action, order, None, values),
                    "perfect play: every move solved exactly (+1 win, 0 draw, -1 loss)")

  return Engine("solver", "solver", "solving the position exactly", analyse, compiled=True)


def _visit_analysis(env: base.Game, state: State, action: int, visits: np.ndarray,
                    qvalues: np.ndarray, fallback_value: float, method: str) -> Analysis:
  """The analysis of a tree search from its root statistics (`[A]` visits and Q-values, mover's
  side). The position's value is that of the move played: the root's own mean also averages
  the simulations spent refuting worse moves, which understates a won position."""
  visits = visits.astype(np.float64)
  total = max(visits.sum(), 1.0)
  q = np.where(visits > 0, qvalues, np.nan)
  value = float(q[action]) if visits[action] > 0 else float(fallback_value)
  return Analysis(action, env.action_to_move(state, action), value, "value",
                  _top_moves(env, state, action, visits, visits / total, q), method)


def _mcts_engine(env: base.Game, *, simulations: int, c: float = math.sqrt(2.0),
                 max_depth: int | None = None) -> Engine:
  """Rollout MCTS, as the "mcts" agent plays it (`azjax.uct.root_search`)."""
  from azjax import uct

  if simulations < 1:
    raise ValueError(f"mcts: simulations must be >= 1, got {simulations}")
  run = jax.jit(lambda state, key: uct.root_search(env, state, key, simulations=simulations,
                                                   c=c, max_depth=max_depth))

  def analyse(state, key):
    stats = jax.device_get(run(state, key))
    visits = np.asarray(stats.visit_counts, np.float64)
    # A move no simulation went through (fewer simulations than moves) gets the visit-weighted
    # mean of the others.
    mean = float((visits * stats.qvalues).sum() / max(visits.sum(), 1.0))
    return _visit_analysis(env, state, int(stats.action), visits, stats.qvalues, mean,
                           f"rollout MCTS, {simulations} simulations")

  return Engine(f"mcts-{simulations}", "mcts",
                f"running {simulations} UCT simulations with random playouts", analyse)


def _alphabeta_engine(env: base.Game, *, depth: int, evaluation: Any = None,
                      network: _Network | None = None, width: int | None = None) -> Engine:
  """Full-width alpha-beta with the hand-written evaluation, or, with `network`, the network's
  alpha-beta ("azab"): its policy picks `width` moves a node and its value scores the leaves;
  both move as their agents do (`azjax.alphabeta.root_search`)."""
  from azjax import alphabeta

  prior = None
  if network is not None:
    evaluation, prior = alphabeta.network_functions(network.model, network.variables)
    prior = None if width is None else prior
  depth = alphabeta.validate(env, depth=depth, prior=prior, width=width)
  run = jax.jit(lambda state, key: alphabeta.root_search(
      env, state, key, depth=depth, evaluation=evaluation, prior=prior, width=width))
  method = f"depth-{depth} minimax" + ("" if width is None else
                                       f" over the network's {width} best moves a node")

  def analyse(state, key):
    action, values = jax.device_get(run(state, key))
    action = int(action)
    return Analysis(action, env.action_to_move(state, action), float(values[action]), "score",
                    _top_moves(env, state, action, values, None, values), method)

  if network is None:
    return Engine(f"alphabeta-d{depth}", "alphabeta",
                  f"searching every line {depth} plies deep", analyse)
  breadth = "every move" if width is None else f"the network's {width} best moves"
  return Engine(f"azab-d{depth}" + ("" if width is None else f"w{width}") + f" [{network.label}]",
                "azab", f"searching {breadth} a node {depth} plies deep, scoring the leaves "
                "with its value", analyse)


def _azab_engine(env: base.Game, *, network: _Network, depth: int,
                 width: int | None = agents.NETWORK_ALPHABETA_WIDTH) -> Engine:
  """The network's alpha-beta ("azab"), searching the policy's `width` best moves a node
  (None: every move), as `azjax.agents.make_network_alphabeta`."""
  return _alphabeta_engine(env, depth=depth, network=network, width=width)


@dataclasses.dataclass(frozen=True)
class _Network:
  """A trained network for the network engines: its run's config, the model and weights."""

  config: Any
  model: Any
  variables: Any
  label: str  # the run directory, for people


def _load_network(run_dir: str | Path) -> _Network:
  """The trained network of `run_dir`, computing in float32 on a CPU as `azjax.agents.load`
  does (XLA:CPU emulates bfloat16 convolutions)."""
  from azjax import checkpoint

  config, _, model, abstract = agents.load_network(str(run_dir))
  return _Network(config, model, checkpoint.load_model(str(run_dir), abstract),
                  _relative(Path(run_dir)))


def _az_engine(env: base.Game, *, network: _Network, simulations: int,
               algorithm: str | None = None, **search_kwargs) -> Engine:
  """The trained network with its search, noiseless, as the "az" agent plays it: one
  `azjax.search.search` of a batch of one, read at the root (visit counts and Q-values). The
  search options default to the run's own."""
  from azjax import search

  algorithm = algorithm or network.config.search
  options = dict(max_num_considered_actions=network.config.max_num_considered_actions,
                 pb_c_init=network.config.pb_c_init)
  config = agents.evaluation_search_config(simulations, algorithm, **{**options, **search_kwargs})
  eval_fn = agents.network_eval_fn(network.model)

  @jax.jit
  def run(variables, state, key):
    states = jax.tree.map(lambda x: x[None], state)  # The search takes batches: B = 1.
    out = search.search(env, eval_fn, config, variables, states, key)
    return jax.tree.map(lambda x: x[0], out)

  method = f"{algorithm} search with the network, {simulations} simulations"

  def analyse(state, key):
    out = jax.device_get(run(network.variables, state, key))
    action = int(out.action)
    if out.visit_counts.sum() == 0:  # A single legal move: the search did not run.
      return Analysis(action, env.action_to_move(state, action), float(out.root_value),
                      "value", _top_moves(env, state, action, out.action_weights,
                                          out.action_weights, None), "the only legal move")
    return _visit_analysis(env, state, action, out.visit_counts, out.qvalues, out.root_value,
                           method)

  name = f"az-{algorithm}{simulations} [{network.label}]"
  title = "Gumbel MuZero" if algorithm == "gumbel" else "PUCT"
  return Engine(name, "az", f"{title} search, {simulations} simulations with the trained "
                "network", analyse)


def _policy_engine(env: base.Game, *, network: _Network, sample: bool = False) -> Engine:
  """The trained network's raw policy, as the "policy" agent plays it: its most probable legal
  move (`sample`: a move drawn from it), the probabilities shown as the shares."""
  from azjax import nets

  eval_fn = agents.network_eval_fn(network.model)

  @jax.jit
  def run(variables, state, key):
    logits, value = eval_fn(variables, state.observation[None])
    logits = nets.mask_logits(logits[0].astype(jnp.float32), state.legal_action_mask)
    action = (jax.random.categorical(key, logits) if sample else jnp.argmax(logits))
    return action.astype(jnp.int32), jax.nn.softmax(logits), value[0]

  def analyse(state, key):
    action, prior, value = jax.device_get(run(network.variables, state, key))
    action = int(action)
    return Analysis(action, env.action_to_move(state, action), float(value), "value",
                    _top_moves(env, state, action, prior, prior, None),
                    "the network's raw policy, one forward pass", share_label="policy")

  return Engine(f"policy [{network.label}]", "policy",
                "one forward pass of the trained network", analyse)


# The engine of each kind that play offers (`agents.KINDS` says what each is):
# builder(env, network=..., **spec keywords) -> Engine; `network` only for network kinds.
ENGINES: dict[str, Callable[..., Engine]] = {
    "random": _random_engine, "mcts": _mcts_engine, "alphabeta": _alphabeta_engine,
    "solver": _solver_engine, "policy": _policy_engine, "az": _az_engine,
    "azab": _azab_engine,
}


def opponents() -> tuple[str, ...]:
  """The kinds of player play offers, in the order of `agents.KINDS`: every kind with an
  engine, and "human"."""
  return tuple(k for k in agents.KINDS if k in ENGINES or k == "human")


def parse_spec(text: str) -> agents.Spec:
  """`azjax.agents.parse_spec`, refusing the kinds play has no engine for.

  Raises:
    ValueError: naming the bad spec, and listing the kinds play offers.
  """
  spec = agents.parse_spec(text)
  if spec.kind not in opponents():
    raise ValueError(f"{text!r}: {agents.KINDS[spec.kind].summary}; here use one of: "
                     f"{', '.join(opponents())}")
  return spec


def _needs_network(spec: agents.Spec | None) -> bool:
  return spec is not None and spec.info.network


class EngineFactory:
  """Builds engines and keeps them, so that a second game compiles nothing."""

  def __init__(self, *, simulations: int | None = None, depth: int | None = None):
    self.simulations = simulations
    self.depth = depth
    self._cache: dict[tuple, Engine] = {}
    self._networks: dict[str, _Network] = {}

  def make(self, env: base.Game, spec: agents.Spec | str, run_dir: str | Path | None = None,
           *, simulations: int | None = None, depth: int | None = None) -> Engine | None:
    """The engine for `spec` in `env` (None for "human"); the network kinds need `run_dir`.

    The strength is the spec's own ("mcts:400"), else `simulations` / `depth` (by what the
    kind's number is), else the factory's, else the kind's default (`azjax.agents.KINDS`).

    Raises:
      ValueError: for a bad spec, a network kind without a checkpoint, or an impossible depth.
    """
    spec = parse_spec(spec) if isinstance(spec, str) else spec
    if spec.kind == "human":
      return None
    fallback = {"simulations": simulations or self.simulations,
                "depth": depth or self.depth}.get(spec.info.number)
    kwargs = spec.kwargs(fallback)
    if spec.info.network and run_dir is None:
      raise ValueError(f"no trained agent for {describe_game(env)}: pass --checkpoint DIR, "
                       f"or train one (python -m experiments.{env.name}), or choose another "
                       "opponent (mcts, alphabeta, random)")
    run = str(run_dir) if spec.info.network else None
    key = (_env_key(env), spec.kind, tuple(sorted(kwargs.items(), key=str)), run)
    if key not in self._cache:
      if run is not None:
        if run not in self._networks:
          self._networks[run] = _load_network(run)
        kwargs["network"] = self._networks[run]
      engine = ENGINES[spec.kind]
      unknown = set(kwargs) - set(inspect.signature(engine).parameters)
      if unknown:
        raise ValueError(f"{spec}: play's {spec.kind} engine has no option "
                         f"{', '.join(sorted(unknown))}")
      self._cache[key] = engine(env, **kwargs)
    return self._cache[key]


def _env_key(env: base.Game) -> tuple:
  return (env.name, env.rows, env.cols, getattr(env, "observation", None))


def describe_game(env: base.Game) -> str:
  """"breakthrough 6x6", "checkers", ...: `env.describe()`."""
  return env.describe()


def _takes_board_size(game: str) -> bool:
  """Whether game `game` is built with a board size (`rows`, `cols`) of one's choice."""
  return {"rows", "cols"} <= set(games.game_class(game).config_options)


# -- Finding trained agents ------------------------------------------------------------------------


def results_dirs() -> list[Path]:
  """Where trained runs are looked for: ./results, then the repository's results/."""
  here = Path.cwd() / "results"
  repo = Path(__file__).resolve().parent.parent / "results"
  return [here] if here.resolve() == repo.resolve() else [here, repo]


def _board_of(config) -> tuple[int, int]:
  env = games.make(config.game, **config.game_kwargs())
  return env.rows, env.cols


def find_checkpoint(game: str, rows: int | None = None, cols: int | None = None,
                    search: Sequence[Path] | None = None) -> Path | None:
  """A run directory under `results/` with a trained model for `game` (and board size).

  Among several, an evaluated run (with `eval.md`) comes first, then one on the game's standard
  board (Breakthrough 8x8 before 6x6), then the shorter name (a preset's own run before its
  variants), then the name.
  """
  from azjax import checkpoint

  found = []
  for root in (results_dirs() if search is None else search):
    if not root.is_dir():
      continue
    for run in sorted(root.iterdir()):
      if not (run / "model").is_dir() or not (run / checkpoint.CONFIG_FILE).exists():
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
      found.append((run, board))
  standard = (games.make(game).rows, games.make(game).cols)
  found.sort(key=lambda f: (not (f[0] / "eval.md").exists(), f[1] != standard, len(f[0].name),
                            f[0].name))
  return found[0][0] if found else None


@dataclasses.dataclass
class Setup:
  """A resolved game: the environment, who plays each side, and notes for the user.

  Attributes:
    env: the game.
    players: spec of player 0 and player 1 ("human" for a person).
    run_dir: the trained agent's run directory, if any side is "az" or "azab".
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
                  players: tuple[str | None, str | None] = (None, None)) -> Setup:
  """Decides the board and the players from what the user gave, and says why.

  Args:
    game: one of `azjax.games.GAMES`; default: the checkpoint's game, else breakthrough.
    rows, cols: Breakthrough's board; default: the trained agent's board, else 8x8.
    checkpoint: a run directory; default: the one `find_checkpoint` finds for the game.
    opponent: engine spec of the computer player; default: the trained agent if there is one,
      else rollout MCTS.
    color: the person's colour (see `parse_color`).
    watch: no person: the opponent plays both sides (agent-vs-agent).
    players: explicit specs for player 0 and 1 (e.g. ("az", "mcts:200")), overriding the rest.
  Raises:
    ValueError: for conflicting or impossible choices (the message says what to change).
  """
  from azjax import checkpoint as ckpt

  notes = []
  if (rows or cols) and game in games.GAMES and not _takes_board_size(game):
    sized = [g for g in games.GAMES if _takes_board_size(g)]
    raise ValueError(f"--rows/--cols are for {', '.join(sized)}, not {game}")
  run_dir = None
  if checkpoint:
    config = ckpt.read_config(checkpoint)
    if game and game != config.game:
      raise ValueError(f"{checkpoint} holds a {config.game} agent, not {game}")
    game = config.game
    board = _board_of(config)
    if (rows and rows != board[0]) or (cols and cols != board[1]):
      raise ValueError(f"{checkpoint} plays on {board[0]}x{board[1]}, not "
                       f"{rows or board[0]}x{cols or board[1]}")
    run_dir = Path(checkpoint)
  game = game or games.DEFAULT_GAME
  if game not in games.GAMES:
    raise ValueError(f"unknown game {game!r}; available: {', '.join(games.GAMES)}")
  specs = [parse_spec(p) if p else None for p in players]
  opponent_spec = parse_spec(opponent) if opponent else None
  wants_az = (opponent_spec is None or _needs_network(opponent_spec)
              or any(_needs_network(s) for s in specs))
  if run_dir is None and wants_az:
    run_dir = find_checkpoint(game, rows, cols)
    if run_dir is not None:
      notes.append(f"trained agent: {_relative(run_dir)}")
  if run_dir is not None:
    env = games.make(game, **ckpt.read_config(run_dir).game_kwargs())
    standard = games.make(game)
    if not (rows or cols) and (env.rows, env.cols) != (standard.rows, standard.cols):
      notes.append(f"board {env.rows}x{env.cols}: the trained agent's board "
                   f"(--rows {standard.rows} --cols {standard.cols} for the full board, against "
                   "another opponent)")
  else:
    env = games.make(game, **{k: v for k, v in (("rows", rows), ("cols", cols)) if v})
  if opponent_spec is None:
    opponent_spec = agents.Spec("az") if run_dir is not None else agents.Spec("mcts")
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
  return Setup(env, final, run_dir, notes)  # type: ignore[arg-type]


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


# -- Sessions --------------------------------------------------------------------------------------

_STEPS: dict[tuple, Callable] = {}


def _step_fn(env: base.Game) -> Callable:
  """`env.step`, jitted once per game and board (sessions and replays share it)."""
  key = _env_key(env)
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
    absolute = base.to_absolute_square(square, self.to_move, self.env.rows * self.env.cols)
    return base.square_name(absolute, self.env.cols)

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

  def board_text(self) -> str:
    """The ASCII board (rank and file labels, last move marked) and the status line."""
    lines = render.to_ascii(self.env, self.state).splitlines()[:-1]
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
    return [self.env.move_to_action(self.state, move)]

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
    lines = [f'[{k} "{v}"]' for k, v in tags.items()] + [""]
    words = []  # A move number stays on the line of its move.
    for i, turn in enumerate(self.turns()):
      words.append(f"{i // 2 + 1}. {turn}" if i % 2 == 0 else turn)
    words.append(score)
    lines += _wrap(words)
    return "\n".join(lines) + "\n"

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
  env = games.make(game, **kwargs)
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


__all__ = [
    "ENGINES", "Analysis", "Engine", "EngineFactory", "MoveStat", "Replay",
    "Session", "Setup", "describe", "describe_game", "example_move",
    "find_checkpoint", "legend", "move_squares", "normalise_move", "opponents", "parse_color",
    "parse_spec", "replay",
    "replay_file", "resolve_setup", "results_dirs", "rules", "side_name", "value_text",
]
