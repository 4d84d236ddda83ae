"""Agents: one interface for every player the arena can seat, one table of the kinds of player,
and one way to build a player from a spec.

An `Agent` is a name and a **pure, batched, jittable** policy

    policy(states, key) -> actions      # states: a game State with leading dim `B`;
                                        # actions: `[B]` int32, legal for every live state
                                        # (any value for a terminated state)

so the arena can run a whole match, both agents included, inside one `jax.jit`. `agent.act`
is the same function jitted once per agent, for use from Python.

>>> env = azjax.games.make("tic_tac_toe")
>>> agent = make("mcts", env, simulations=400)
>>> agent = build("mcts:400", env)                # the same, from a spec
>>> actions = agent.act(states, key)              # states batched [B] -> int32[B]

**Kinds.** `KINDS` is the one table of players (name -> `Kind`): what each is (a one-line
summary, shown by --help texts, the terminal and the web page), the builder keyword a spec's
number sets and its default (the builder's own default), whether it needs a trained network,
and who plays it: an azjax `Agent` ("jax"), an OpenSpiel bot played through
`azjax.evaluate.openspiel_bridge` ("openspiel"), or a person at the board ("human").

**Specs.** `parse_spec` reads the grammar every entry point accepts (`Spec`):

    KIND[:N][:KEY=VALUE]...     e.g.  random  mcts:400  alphabeta:3  az  az:128:algorithm=puct
                                      azab:3  solver  solver:0  openspiel-mcts:1000  human

`N` is the kind's number (simulations, depth, ...; `Kind.number`), and each `KEY=VALUE` a
keyword of the kind's builder (ints, floats, true/false, none, else a string).

The algorithms live in their own modules, which know nothing of agents: `azjax.search` (mctx),
`azjax.uct` (rollout MCTS), `azjax.alphabeta`, `azjax.solver`; this module names them.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp

from azjax import alphabeta, search, solver, uct
from azjax.games import base

Array = jax.Array
PRNGKey = jax.Array
State = Any  # A game's State pytree; batched `[B, ...]` where a policy takes it.
# (states `[B, ...]`, key) -> actions `[B]` int32. Pure and jittable.
Policy = Callable[[State, PRNGKey], Array]
Builder = Callable[..., "Agent"]


@dataclasses.dataclass(frozen=True)
class Agent:
  """A named batched policy.

  Attributes:
    name: label used in match tables and Elo fits, e.g. "mcts-400".
    policy: pure function `(states [B], key) -> int32[B]`; the actions are legal for every
      live state and arbitrary for terminated ones. It may be traced inside a larger jit (the
      arena does), so it must not depend on Python-side state that changes between calls.
  """

  name: str
  policy: Policy

  @functools.cached_property
  def _jitted_policy(self) -> Policy:
    # cached_property writes to the instance __dict__ directly, so it works on a frozen
    # dataclass; the jit (and its compilation cache) lives as long as the agent.
    return jax.jit(self.policy)

  def act(self, states: State, key: PRNGKey) -> Array:
    """`[B]` int32 actions for the batched `states`, with the policy jitted once per agent."""
    return self._jitted_policy(states, key)

  def __repr__(self) -> str:
    return f"Agent({self.name!r})"


# -- Kinds -----------------------------------------------------------------------------------------

PLAYS = ("jax", "openspiel", "human")  # Who plays a kind: see the module docstring.


@dataclasses.dataclass(frozen=True)
class Kind:
  """One kind of player: a row of `KINDS`."""

  name: str
  summary: str  # one line for people
  builder: Builder | None = None  # `builder(env, **kwargs) -> Agent`; None unless plays "jax"
  number: str | None = None  # the keyword a spec's number sets ("simulations", "depth", ...)
  default: int | None = None  # its default
  minimum: int = 1  # its smallest value
  network: bool = False  # needs a trained network (`model`, `variables`)
  plays: str = "jax"  # "jax", "openspiel" or "human"

  def usage(self) -> str:
    """"mcts[:N]", "random": how a spec of this kind is written."""
    return self.name + ("[:N]" if self.number else "")

  def help_line(self) -> str:
    """"mcts[:N]  rollout MCTS ... (N simulations, default 1000)": a line of `describe_kinds`."""
    number = "" if self.number is None else (
        f" (N {self.number.replace('_', ' ')}, default {self.default})")
    return f"{self.usage():<18} {self.summary}{number}"

  def options(self) -> tuple[str, ...] | None:
    """The `KEY=VALUE` options a spec may give (the builder's keywords), None for any."""
    if self.builder is None:
      return ()
    params = inspect.signature(self.builder).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
      return None
    taken = {"env", "model", "variables", "name", self.number}
    return tuple(p.name for p in params if p.name not in taken)


KINDS: dict[str, Kind] = {}


def register(name: str, summary: str, *, number: str | None = None, minimum: int = 1,
             network: bool = False) -> Callable[[Builder], Builder]:
  """Decorator adding `builder(env, **kwargs) -> Agent` to `KINDS` as `name`; the default of
  `number` is the builder's own keyword default, so it is written once."""

  def decorator(builder: Builder) -> Builder:
    default = None
    if number is not None:
      default = inspect.signature(builder).parameters[number].default
    KINDS[name] = Kind(name, summary, builder, number, default, minimum, network)
    return builder

  return decorator


def kinds(*plays: str) -> tuple[str, ...]:
  """The names of the kinds played by `plays` (all kinds if none given), in table order."""
  return tuple(k for k, kind in KINDS.items() if not plays or kind.plays in plays)


def describe_kinds(names: tuple[str, ...] | None = None, indent: str = "  ") -> str:
  """The kinds `names` (default all), one line each: usage, summary and default strength."""
  return "\n".join(indent + KINDS[k].help_line() for k in (names or tuple(KINDS)))


# -- Specs -----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Spec:
  """A parsed player spec (see `parse_spec`).

  Attributes:
    kind: a key of `KINDS`.
    strength: the kind's number (`Kind.number`: simulations, depth, ...); None for its default.
    options: `(keyword, value)` pairs for the kind's builder, in the order given.
  """

  kind: str
  strength: int | None = None
  options: tuple[tuple[str, Any], ...] = ()

  @property
  def info(self) -> Kind:
    return KINDS[self.kind]

  def number(self, fallback: int | None = None) -> int | None:
    """The strength: the spec's own, else `fallback`, else the kind's default."""
    if self.strength is not None:
      return self.strength
    return fallback if fallback is not None else self.info.default

  def kwargs(self, fallback: int | None = None) -> dict[str, Any]:
    """The builder's keywords: the number (see `number`) and the options."""
    kwargs = dict(self.options)
    if self.info.number is not None:
      kwargs[self.info.number] = self.number(fallback)
    return kwargs

  def __str__(self) -> str:
    parts = [self.kind] + ([] if self.strength is None else [str(self.strength)])
    return ":".join(parts + [f"{k}={_format(v)}" for k, v in self.options])


def _format(value: Any) -> str:
  return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _parse_value(text: str) -> Any:
  """An option's value: int, float, true/false, none, else the string itself."""
  for convert in (int, float):
    try:
      return convert(text)
    except ValueError:
      pass
  return {"true": True, "false": False, "none": None}.get(text, text)


def parse_spec(text: str) -> Spec:
  """The `Spec` of `text` (`KIND[:N][:KEY=VALUE]...`, case-insensitive; see the module doc).

  Raises:
    ValueError: naming the bad spec and saying why: an unknown kind (listing the kinds), a
      number for a kind that takes none or one out of range, or an option the kind lacks.
  """
  kind, *parts = str(text).strip().lower().split(":")
  if kind not in KINDS:
    raise ValueError(f"unknown player {text!r}; kinds: {', '.join(KINDS)} (with a strength, e.g. "
                     "mcts:400, alphabeta:3; see --help)")
  info = KINDS[kind]
  strength, options = None, []
  for i, part in enumerate(parts):
    key, eq, value = part.partition("=")
    if eq:
      allowed = info.options()
      if allowed is not None and key not in allowed:
        raise ValueError(f"bad player {text!r}: {kind} has no option {key!r}; options: "
                         f"{', '.join(allowed) or 'none'}")
      options.append((key, _parse_value(value)))
    elif info.number is None:
      raise ValueError(f"bad player {text!r}: {kind} takes no number")
    elif i > 0 or not part.isdigit() or int(part) < info.minimum:
      raise ValueError(f"bad player {text!r}: {kind} takes a whole number of {info.number} >= "
                       f"{info.minimum} after the colon, e.g. {kind}:{info.default}")
    else:
      strength = int(part)
  return Spec(kind, strength, tuple(options))


def make(name: str, env: base.Game, **kwargs) -> Agent:
  """Builds the agent `name` (a kind played by JAX) for `env` with keyword options `kwargs`.

  Raises:
    ValueError: for an unknown name or one that is not an azjax agent (the message lists the
      available ones), or an option the builder does not take.
  """
  if name not in KINDS or KINDS[name].builder is None:
    raise ValueError(f"unknown agent {name!r}; available: {', '.join(kinds('jax'))}")
  builder = KINDS[name].builder
  try:
    inspect.signature(builder).bind(env, **kwargs)
  except TypeError as err:
    raise ValueError(f"agent {name!r}: bad option: {err}") from None
  return builder(env, **kwargs)


def build(spec: Spec | str, env: base.Game, *, fallback: int | None = None, **kwargs) -> Agent:
  """The agent of `spec` (a `Spec` or its text) for `env`.

  Args:
    spec: the player.
    env: the game.
    fallback: the strength when the spec gives none (else the kind's default).
    **kwargs: more builder keywords: `model` and `variables` for a network kind, `name`.
  Raises:
    ValueError: for a bad spec, a kind that is not an azjax agent (an OpenSpiel bot, a person),
      or a network kind without a network.
  """
  spec = parse_spec(spec) if isinstance(spec, str) else spec
  info = spec.info
  if info.builder is None:
    raise ValueError(f"{spec} is not an azjax agent: {info.summary}")
  if info.network and "model" not in kwargs:
    raise ValueError(f"{spec} needs a trained network (a run directory)")
  return make(spec.kind, env, **spec.kwargs(fallback), **kwargs)


# -- Random ----------------------------------------------------------------------------------------


def random_policy(states: State, key: PRNGKey) -> Array:
  """Uniform over each state's legal actions (0 for a terminated state)."""
  return base.uniform_legal_actions(key, states.legal_action_mask)


@register("random", "uniformly random legal moves")
def make_random(env: base.Game) -> Agent:
  """Uniformly random legal moves."""
  del env  # The legal mask is all it needs.
  return Agent("random", random_policy)


# -- Baselines: rollout MCTS, alpha-beta, the solver -----------------------------------------------


@register("mcts", "rollout MCTS, the source projects' vanilla UCT", number="simulations")
def make_mcts(env: base.Game, *, simulations: int = 1000, c: float = math.sqrt(2.0),
              max_depth: int | None = None) -> Agent:
  """UCT with uniformly random playouts: the source projects' "vanilla MCTS" (`azjax.uct`).

  Each move runs `uct.root_search` from every state of the batch (`simulations` simulations,
  UCB1 with constant `c`) and plays the most visited root child, ties broken at random.

  Cost per move: `simulations` sequential simulations, each a descent (a `while_loop` as deep
  as the tree), one game step and one playout to the end of the game (a `while_loop` as long as
  the longest playout in the batch, since the batch moves in lockstep). Memory: `B x
  (simulations + 1)` game states.
  """
  if simulations < 1:
    raise ValueError(f"mcts: simulations must be >= 1, got {simulations}")

  def search_one(state: State, key: PRNGKey) -> Array:
    return uct.root_search(env, state, key, simulations=simulations, c=c,
                           max_depth=max_depth).action

  def policy(states: State, key: PRNGKey) -> Array:
    keys = jax.random.split(key, states.legal_action_mask.shape[0])
    return jax.vmap(search_one)(states, keys)

  return Agent(f"mcts-{simulations}", policy)


@register("alphabeta", "alpha-beta with the game's hand-written evaluation", number="depth")
def make_alphabeta(env: base.Game, *, depth: int = 2,
                   evaluation: alphabeta.Evaluation | str | None = None,
                   max_leaves: int = 1 << 20, prior: alphabeta.Prior | None = None,
                   width: int | None = None, name: str | None = None) -> Agent:
  """Alpha-beta agent (see `azjax.alphabeta`).

  Without a `width` it is a real alpha-beta (`alphabeta.search`: pruning, move ordering,
  iterative deepening), which is fast for the cheap hand-written evaluations. With a `prior`
  and a `width` (the "azab" agent's network search) it is the full-width batched search over
  the prior's `width` best moves (`alphabeta.alphabeta_policy`), which batches an expensive
  evaluation over the whole tree.

  Args:
    env: the game.
    depth: plies searched (1..`alphabeta.MAX_DEPTH`; a selective search also within
      `alphabeta.check_depth`'s tree size). A checkers hop counts as a ply.
    evaluation: leaf evaluation `state -> float32[]` from the mover's side, or "zero" (pure
      search); default the game's own, `env.alphabeta_evaluation`.
    max_leaves: a selective search runs `max(1, max_leaves // width**depth)` roots at a time.
    prior, width: a selective search: only the `width` legal actions of highest `prior(state)`
      are expanded at each node (both or neither).
    name: default "alphabeta-d{depth}" (with "w{width}" for a selective search).
  Raises:
    ValueError: for a depth out of range, an unknown evaluation, a width below 1 or
      a width without a prior.
  """
  default = f"alphabeta-d{depth}" + ("" if width is None else f"w{width}")
  if width is not None or prior is not None:
    policy = alphabeta.alphabeta_policy(env, depth=depth, evaluation=evaluation,
                                        max_leaves=max_leaves, prior=prior, width=width)
    return Agent(name or default, policy)
  return Agent(name or default, alphabeta.search_policy(env, depth=depth, evaluation=evaluation))


@register("solver", "perfect play (tic-tac-toe, Connect Four)",
          number="random_opening_moves", minimum=0)
def make_solver(env: base.Game, *, random_opening_moves: int = 2,
                randomize: bool = False) -> Agent:
  """Perfect play for tic-tac-toe and Connect Four (see `azjax.solver`).

  Every move keeps the position's game-theoretic value. Among those it plays the best score
  (the fastest win, the slowest loss), uniform at random among equals, except for its first
  `random_opening_moves` moves, and all moves with `randomize=True`, where it picks uniformly
  among every move that keeps its result, so that matches against it are not the same game
  over and over.

  Raises:
    ValueError: for a game without a solver or a negative `random_opening_moves`.
    SolverUnavailable: Connect Four without the bitbully package.
  """
  if random_opening_moves < 0:
    raise ValueError(f"solver: random_opening_moves must be >= 0, got {random_opening_moves}")
  policy = solver.make_solver_policy(env, random_opening_moves=random_opening_moves,
                                     randomize=randomize)
  name = "solver" + ("-random" if randomize else
                     "" if random_opening_moves == 2 else f"-r{random_opening_moves}")
  return Agent(name, policy)


# -- Network agents --------------------------------------------------------------------------------


NETWORK_ALPHABETA_WIDTH = 8  # azab: the moves searched a node, the network policy's best


def network_eval_fn(model: Any) -> search.EvalFn:
  """The search's `EvalFn` of a Flax network in eval mode."""

  def eval_fn(variables, observation):
    return model.apply(variables, observation, train=False)

  return eval_fn


@register("policy", "the trained network's raw policy, no search", network=True)
def make_raw_policy(env: base.Game, *, model: Any, variables: Any, name: str = "policy",
                    sample: bool = False) -> Agent:
  """The network's raw policy: one forward pass, no search.

  This is the thesis' "compete" step. `model` is a Flax module from `azjax.nets.make` and
  `variables` its variables. By default it plays the most probable legal action; with
  `sample=True` it samples from the masked softmax (two deterministic players would repeat the
  same two games over and over, which is useless for gating).
  """
  from azjax.nets import mask_logits

  def policy(states: State, key: PRNGKey) -> Array:
    logits, _ = model.apply(variables, states.observation, train=False)
    logits = mask_logits(logits, states.legal_action_mask)
    if sample:
      return jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)
    return jnp.argmax(logits, axis=-1).astype(jnp.int32)

  return Agent(name=name, policy=policy)


@register("az", "the trained network with search (Gumbel; az:N:algorithm=puct: PUCT)",
          number="simulations", network=True)
def make_alphazero(env: base.Game, *, model: Any, variables: Any, simulations: int = 64,
                   search_config: search.SearchConfig | None = None, name: str | None = None,
                   **search_kwargs) -> Agent:
  """The network with search (`azjax.search.search`), noiseless: an evaluation player.

  The search is `search_config` (the run's own, `Config.search_config()`; default
  `SearchConfig()`) made an evaluation player by `azjax.search.for_evaluation`, with
  `simulations`; extra keyword arguments are `SearchConfig` fields the caller sets explicitly
  (e.g. `algorithm="puct"`, `pb_c_init`).

  Raises:
    ValueError: for an unknown search option or an impossible value.
  """
  config = search.for_evaluation(search_config or search.SearchConfig(), simulations,
                                 **search_kwargs)
  eval_fn = network_eval_fn(model)

  def policy(states: State, key: PRNGKey) -> Array:
    return search.search(env, eval_fn, config, variables, states, key).action

  return Agent(name=name or f"az-{config.algorithm}{config.simulations}", policy=policy)


@register("azab", "alpha-beta over the trained network's best moves and values",
          number="depth", network=True)
def make_network_alphabeta(env: base.Game, *, model: Any, variables: Any, depth: int = 3,
                           width: int | None = NETWORK_ALPHABETA_WIDTH, name: str | None = None,
                           max_leaves: int = 1 << 14) -> Agent:
  """Alpha-beta with a learned evaluation: the network's value scores the leaves and, when
  `width` is set, its policy picks the `width` actions searched at every node (a node then
  costs one forward pass; a move `1 + width + ... + width**depth`). `width=None` searches
  every action (small games). `max_leaves` bounds the leaves searched at once: each is a
  forward pass, whose activations (`channels x squares` floats a layer, 128 KB for a ResNet
  128 on 8x8) are what fills memory."""
  evaluation, prior = alphabeta.network_functions(model, variables)
  return make_alphabeta(env, depth=depth, evaluation=evaluation, max_leaves=max_leaves,
                        prior=None if width is None else prior, width=width, name=name)


# -- Players that are not azjax agents -------------------------------------------------------------

KINDS["openspiel-mcts"] = Kind(
    "openspiel-mcts", "OpenSpiel's C++ rollout MCTS on the host (evaluate only)",
    number="simulations", default=1000, plays="openspiel")
KINDS["human"] = Kind("human", "a person at the board (play only)", plays="human")


# -- Trained agents --------------------------------------------------------------------------------


def load_network(run_dir: str, *, compute_dtype: str | None = None, config: Any = None):
  """`(config, env, model, abstract variables)` of a run directory, without loading weights
  (`azjax.runs.checkpoint.load_model(run_dir, abstract, step=...)` reads them); for callers that
  build many players over one network shape, e.g. every snapshot of a run. The compute dtype
  defaults to float32 on a CPU (XLA:CPU emulates bfloat16 convolutions, some 50x slower), else
  the run's. A run's trained player, of any kind, is `azjax.runs.load`. `config`: the
  `azjax.config.Config` that describes the network, for a kind of run whose settings are not a
  config.json (KLENT's `player_config`); default: the run's config.json."""
  from azjax import games, nets
  from azjax.runs import checkpoint

  config = checkpoint.read_config(run_dir) if config is None else config
  env = games.make(config.game, **config.game_kwargs())
  net_config = config.net_config()
  if compute_dtype is None and jax.default_backend() == "cpu":
    compute_dtype = "float32"
  if compute_dtype is not None:
    net_config = dataclasses.replace(net_config, dtype=compute_dtype)
  model = nets.make(net_config, env.num_actions)
  abstract = nets.init_variables(model, jax.random.key(0), env.observation_shape)
  return config, env, model, abstract


def reading_with(env: base.Game, agent: Agent) -> Agent:
  """`agent` reading every position through `env.encoded`: a network trained on another
  observation encoding than the game object running the match sees its own.

  A game's `encoding_options` are the constructor options that change only the network's
  input, not the rules or the state (Breakthrough: `observation`); its `encoded(state)` (a
  `Game` method, the identity for a game with one encoding) is `state`, batched or not,
  observed as that game object encodes it. Runs
  that differ only in those options play each other (`tournament.rules_options`).
  """
  if not env.encoding_options:
    return agent
  return Agent(name=agent.name, policy=lambda states, key: agent.policy(env.encoded(states), key))


__all__ = [
    "Agent", "KINDS", "Kind", "NETWORK_ALPHABETA_WIDTH", "PLAYS", "Policy", "Spec", "build",
    "describe_kinds", "kinds", "load_network", "make",
    "make_alphabeta",
    "make_alphazero", "make_mcts", "make_network_alphabeta", "make_random", "make_raw_policy",
    "make_solver", "network_eval_fn", "parse_spec", "random_policy", "reading_with",
    "register",
]
