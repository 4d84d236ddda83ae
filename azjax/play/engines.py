"""Engines: the computer players of the terminal and the web page, which explain their moves.

Each engine moves as the agent of its spec does (`azjax.agents`), on the same search
functions, and only formats their root statistics into an `Analysis`; `EngineFactory` builds
and caches them, so a new game against the same engine compiles nothing.

A run directory is an AlphaZero run (`config.json`: its network plays as "az", "azab" or
"policy") or a TD-Leaf run (`tdleaf.json`, `azjax.tdleaf`: an alpha-beta player with a
learned evaluation, which plays as "tdleaf", play's own kind; see `TDLEAF`).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from azjax import agents
from azjax.games import base
from azjax.play.analysis import Analysis, State, _top_moves
from azjax.play.texts import _relative, describe_game

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
  """The trained network of `run_dir`, computing in float32 on a CPU as `azjax.runs.load`
  does (XLA:CPU emulates bfloat16 convolutions)."""
  from azjax import runs
  from azjax.runs import checkpoint

  config, _, model, abstract = agents.load_network(str(run_dir),
                                                   config=runs.network_config(run_dir))
  return _Network(config, model, checkpoint.load_model(str(run_dir), abstract),
                  _relative(Path(run_dir)))


def _az_engine(env: base.Game, *, network: _Network, simulations: int,
               algorithm: str | None = None, **search_kwargs) -> Engine:
  """The trained network with its search, noiseless, as the "az" agent plays it: one
  `azjax.search.search` of a batch of one, read at the root (visit counts and Q-values). The
  search is the run's own evaluation player (`Config.search_config(evaluation=True)`); only
  `simulations`, `algorithm` and `search_kwargs` (a spec's options) change it."""
  from azjax import search

  explicit = {**search_kwargs, **({} if algorithm is None else {"algorithm": algorithm})}
  config = network.config.search_config(evaluation=True, simulations=simulations, **explicit)
  algorithm = config.algorithm
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


# -- TD-Leaf runs ----------------------------------------------------------------------------------

# The trained player of a TD-Leaf run, a kind of play's own: `azjax.runs.load` builds it from the
# run directory, not from a model and variables, so `agents.KINDS` has no row
# for it. Its number is the search depth, by default the run's; like the network kinds it
# needs a run (`network`), a TD-Leaf one.
TDLEAF = agents.Kind("tdleaf", "a TD-Leaf run's alpha-beta with its learned evaluation "
                     "(--checkpoint of a TD-Leaf run; its default opponent)", number="depth",
                     network=True)
TDLEAF_HELP = f"{TDLEAF.usage():<18} {TDLEAF.summary} (N depth, default the run's)"


class _PlaySpec(agents.Spec):
  """A spec of play's own kind `TDLEAF` (`agents.Spec.info` reads `agents.KINDS`)."""

  @property
  def info(self) -> agents.Kind:
    return TDLEAF


NO_TDLEAF_RUN = ("tdleaf plays a TD-Leaf run: pass --checkpoint RUN (a directory with "
                 "tdleaf.json), or choose another opponent (mcts, alphabeta, random)")


def _parse_tdleaf(text: str) -> agents.Spec:
  """"tdleaf" or "tdleaf:N" (N the depth) as a spec."""
  _, *parts = str(text).strip().lower().split(":")
  if len(parts) > 1 or (parts and not (parts[0].isdigit() and int(parts[0]) >= 1)):
    raise ValueError(f"bad player {text!r}: tdleaf takes a search depth >= 1 after the colon, "
                     "e.g. tdleaf:4 (default: the run's depth)")
  return _PlaySpec("tdleaf", int(parts[0]) if parts else None)


@dataclasses.dataclass(frozen=True)
class _TdleafRun:
  """A trained TD-Leaf run for the tdleaf engine: its `azjax.tdleaf.Learner` and weights."""

  learner: Any
  params: Any
  label: str  # the run directory, for people


def _load_tdleaf(run_dir: str | Path) -> _TdleafRun:
  from azjax import tdleaf

  learner, params = tdleaf.load(str(run_dir))
  return _TdleafRun(learner, params, _relative(Path(run_dir)))


def evaluation_text(config: Any) -> str:
  """"feature MLP" or "ResNet value head": a TD-Leaf run's evaluation (`tdleaf.Config`)."""
  if config.evaluation == "features":
    return "feature MLP"
  label = {"resnet": "ResNet", "mlp": "MLP", "cnn": "CNN", "se_resnet": "SE-ResNet"}.get(
      config.evaluation, config.evaluation)
  return f"{label} value head"


def _tdleaf_engine(env: base.Game, *, run: _TdleafRun, depth: int | None = None) -> Engine:
  """A TD-Leaf run's trained player: `azjax.alphabeta.search` `depth` plies deep (default the
  run's) with the learned evaluation, as `azjax.runs.load(run)` plays it. The analysis is the
  search's value (mover's side; a learned value in (-1, 1), or a forced result) and principal
  variation; alpha-beta does not value the other moves, so there are no top moves."""
  from azjax import alphabeta

  learner = run.learner
  depth = depth or learner.config.depth

  @jax.jit
  def search(params, state, key):
    found = alphabeta.search(env, jax.tree.map(lambda x: x[None], state), key, depth=depth,
                             evaluation=learner.evaluation_on(env, params))
    found = jax.tree.map(lambda x: x[0], found)
    # The position before each move of the principal variation, to write the moves in
    # notation (past the line's end, -1, the steps are never read).
    _, before = jax.lax.scan(lambda s, a: (env.step(s, jnp.maximum(a, 0)), s), state, found.pv)
    return found.action, found.value, found.pv, before

  method = (f"depth-{depth} alpha-beta with the learned evaluation "
            f"({evaluation_text(learner.config)})")

  def analyse(state, key):
    action, value, pv, before = search(run.params, state, key)
    action, line = int(action), []
    for i, a in enumerate(np.asarray(pv)):
      if a < 0:
        break
      line.append(env.action_to_move(jax.tree.map(lambda x, i=i: x[i], before), int(a)))
    return Analysis(action, env.action_to_move(state, action), float(value), "score", (),
                    method, pv=tuple(line))

  return Engine(f"tdleaf-d{depth} [{run.label}]", "tdleaf",
                f"searching {depth} plies deep with alpha-beta, scoring the leaves with its "
                "learned evaluation", analyse)


def check_run(spec: agents.Spec, run_dir: str | Path) -> None:
  """Raises ValueError when `spec` cannot play the run `run_dir`: a network kind (az, azab,
  policy) and a TD-Leaf run, which has no policy-value network, or tdleaf and an AlphaZero run.
  The message says what plays the run (its kind's `play_kind`, `azjax.runs.kinds`)."""
  from azjax import runs

  if not spec.info.network:
    return
  run = _relative(Path(run_dir))
  kind = runs.kind_of(run_dir)
  if kind.play_kind == TDLEAF.name and spec.kind != TDLEAF.name:
    network = [k for k in opponents() if agents.KINDS[k].network]
    others = [k for k in opponents() if not agents.KINDS[k].network and k != "human"]
    raise ValueError(
        f"{spec}: {run} is a TD-Leaf run ({kind.summary}), not an AlphaZero network, so "
        f"{', '.join(network)} cannot play it; its player is the default opponent (leave the "
        f"opponent out, or tdleaf, tdleaf:N for depth N), and {', '.join(others)} play "
        "without it")
  if spec.kind == TDLEAF.name and kind.play_kind != TDLEAF.name:
    raise ValueError(f"{spec}: {run} is not a TD-Leaf run (its kind is {kind.name}: "
                     f"{kind.summary}); an AlphaZero run plays as az, azab or policy")


# The engine of each kind that play offers (`agents.KINDS` says what each is, `TDLEAF` for
# "tdleaf"): builder(env, network=..., **spec keywords) -> Engine; `network` only for the
# network kinds, `run` (a TD-Leaf run) only for tdleaf.
ENGINES: dict[str, Callable[..., Engine]] = {
    "random": _random_engine, "mcts": _mcts_engine, "alphabeta": _alphabeta_engine,
    "solver": _solver_engine, "policy": _policy_engine, "az": _az_engine,
    "azab": _azab_engine, "tdleaf": _tdleaf_engine,
}


def opponents() -> tuple[str, ...]:
  """The kinds of player play offers, in the order of `agents.KINDS`: every kind with an
  engine, and "human"."""
  return tuple(k for k in agents.KINDS if k in ENGINES or k == "human")


def parse_spec(text: str) -> agents.Spec:
  """`azjax.agents.parse_spec`, refusing the kinds play has no engine for; also play's own
  "tdleaf[:N]" (`TDLEAF`).

  Raises:
    ValueError: naming the bad spec, and listing the kinds play offers.
  """
  if str(text).strip().lower().split(":")[0] == TDLEAF.name:
    return _parse_tdleaf(text)
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
    self._networks: dict[str, _Network | _TdleafRun] = {}  # loaded runs, by directory

  def make(self, env: base.Game, spec: agents.Spec | str, run_dir: str | Path | None = None,
           *, simulations: int | None = None, depth: int | None = None) -> Engine | None:
    """The engine for `spec` in `env` (None for "human"); the network kinds need `run_dir`,
    an AlphaZero run, and tdleaf a TD-Leaf run (see `check_run`).

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
    if spec.kind == "tdleaf" and run_dir is None:
      raise ValueError(NO_TDLEAF_RUN)
    if spec.info.network and run_dir is None:
      raise ValueError(f"no trained agent for {describe_game(env)}: pass --checkpoint DIR, "
                       f"or train one (python -m experiments.{env.name}), or choose another "
                       "opponent (mcts, alphabeta, random)")
    run = str(run_dir) if spec.info.network else None
    if run is not None:
      check_run(spec, run)
    key = (env.variant_key(), spec.kind, tuple(sorted(kwargs.items(), key=str)), run)
    if key not in self._cache:
      if run is not None:
        if run not in self._networks:
          load = _load_tdleaf if spec.kind == "tdleaf" else _load_network
          self._networks[run] = load(run)
        kwargs["run" if spec.kind == "tdleaf" else "network"] = self._networks[run]
      engine = ENGINES[spec.kind]
      unknown = set(kwargs) - set(inspect.signature(engine).parameters)
      if unknown:
        raise ValueError(f"{spec}: play's {spec.kind} engine has no option "
                         f"{', '.join(sorted(unknown))}")
      self._cache[key] = engine(env, **kwargs)
    return self._cache[key]


