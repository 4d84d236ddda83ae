"""TD-Leaf(lambda)'s algorithm: the evaluations it learns, the lambda-return targets and loss,
and the `Learner` (jitted self-play and learning); `azjax.tdleaf` describes it, `config.py`
declares its settings and `runs.py` trains runs with it."""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from azjax import agents, alphabeta, arena, nets, selfplay, train
from azjax.games import base
from azjax.tdleaf.config import Config

Array = jax.Array


# -- Evaluations -----------------------------------------------------------------------------------


class FeatureMLP(nn.Module):
  """`[..., F]` features -> `[...]` value in (-1, 1): two ReLU layers of `hidden`, tanh out."""

  hidden: int = 6

  @nn.compact
  def __call__(self, x: Array) -> Array:
    x = nn.relu(nn.Dense(self.hidden)(x))
    x = nn.relu(nn.Dense(self.hidden)(x))
    return jnp.tanh(nn.Dense(1)(x))[..., 0]


class LocalSum(nn.Module):
  """`[..., R, C, P]` planes -> `[...]` value in (-1, 1): `layers` 3x3 ReLU convolutions of
  `channels`, a 1x1 convolution to one number a square, summed over the pieces' squares (where
  either of the last two planes, the pieces' steps to go, is non-zero), divided by the board's
  width C, plus a bias, tanh.

  Why this shape transfers across board sizes: no weight depends on the board's size, empty
  squares add nothing (so a bigger board adds no constant), and each piece's term sees only its
  neighbourhood and its own steps to go. The division by C keeps a lead's value comparable: a
  race decided by D steps on an N x N board is about as safe as D * M / N steps on an M x M one
  (the noise of a longer race grows with it); without it a lead on 7x7 would saturate the tanh
  and leave alpha-beta unable to tell good leaves from better ones.
  """

  channels: int = 8
  layers: int = 2

  @nn.compact
  def __call__(self, x: Array) -> Array:
    pieces = (x[..., -2] != 0) | (x[..., -1] != 0)
    h = x
    for _ in range(self.layers):
      h = nn.relu(nn.Conv(self.channels, (3, 3))(h))
    per_square = nn.Conv(1, (1, 1))(h)[..., 0]
    total = jnp.sum(jnp.where(pieces, per_square, 0.0), axis=(-2, -1)) / x.shape[-2]
    return jnp.tanh(total + self.param("bias", nn.initializers.zeros, ()))


class Evaluator(NamedTuple):
  """A learned evaluation: `inputs(state)` is what the leaf keeps (`[F]` features, planes or
  the observation), `value(params, inputs)` its value from the mover's side, `init(key)` params."""

  inputs: Callable[[Any], Array]
  value: Callable[[Any, Array], Array]
  init: Callable[[Array], Any]


def make_evaluator(config: Config, env: base.Game) -> Evaluator:
  """The evaluation `config.evaluation` names, for `env` (see the module docstring).

  Raises:
    ValueError: "features" ("local") for a game without `evaluation_features`
      (`evaluation_planes`).
  """
  # The evaluations fed by a game hook rather than the observation: the hook, the model.
  hooked = {"features": ("evaluation_features", lambda: FeatureMLP(config.hidden)),
            "local": ("evaluation_planes", lambda: LocalSum(config.channels, config.blocks))}
  if config.evaluation in hooked:
    hook_name, make_model = hooked[config.evaluation]
    hook = getattr(env, hook_name)
    example = hook(env.init(jax.random.key(0)))
    if example is None:
      raise ValueError(f"tdleaf: {env.name} has no {hook_name}; use a network "
                       f"evaluation (--evaluation mlp or resnet)")
    model = make_model()
    return Evaluator(hook, lambda params, x: model.apply(params, x),
                     lambda key: model.init(key, example))
  net_config = nets.NetConfig(kind=config.evaluation, channels=config.channels,
                              blocks=config.blocks, hidden=config.hidden,
                              value_hidden=config.value_hidden, policy_head=config.head)
  model = nets.make(net_config, env.num_actions)

  def value(variables, x):
    return model.apply(variables, x[None], train=False)[1][0]

  return Evaluator(lambda state: state.observation, value,
                   lambda key: nets.init_variables(model, key, env.observation_shape))


# -- Targets and loss ------------------------------------------------------------------------------


def lambda_returns(u: Array, reward: Array, last: Array, stop: Array, td_lambda: float) -> Array:
  """`[T]` lambda-returns of one slot's plies from player 0's side (see the module docstring):
  one game, or several one after another (a game's `last` move ends its returns; the next ply
  starts the next game).

  Args:
    u: `[T]` the positions' values (player 0's side); entries after the games are ignored.
    reward: `[T]` player 0's reward of each move: at a `last` move, the game's result.
    last: `[T]` bool, True at a game's final move (the move that ended it).
    stop: `[T]` bool, True where learning does not look past the position: an exploratory
      move was played from it, or the game was cut off there. Its target is `u` itself.
  """
  u_next = jnp.concatenate([u[1:], u[-1:]])

  def back(g_next, x):
    u_t, u_t1, reward_t, last_t, stop_t = x
    g = jnp.where(last_t, reward_t, (1.0 - td_lambda) * u_t1 + td_lambda * g_next)
    g = jnp.where(stop_t & ~last_t, u_t, g)
    return g, g

  _, g = jax.lax.scan(back, jnp.zeros_like(u[0]), (u, u_next, reward, last, stop), reverse=True)
  return g


class Trajectory(NamedTuple):
  """What `Learner.play` records, `[T, B]` (plies x games) unless noted."""

  inputs: Array  # [T, B, ...] the PV leaves' evaluation inputs
  leaf_sign: Array  # the root value is leaf_sign * evaluation(leaf) (mover's side)
  exact: Array  # bool: the PV ends the game; `value` is then exact
  value: Array  # the search's root value, mover's side
  mover: Array  # int32 player to move
  live: Array  # bool: a game was on at this ply (always, since slots restart their games)
  explored: Array  # bool: a random move was played
  ended: Array  # bool: this ply's move ended the game
  reward: Array  # player 0's reward of the move played
  nodes: Array  # positions the search stepped
  hand: Array  # int32: the hand-written evaluation's colour in this game, -1 in self-play


def position_values(evaluator: Evaluator, params: Any, t: Trajectory) -> Array:
  """`[T, B]` values of the recorded positions from player 0's side, with the current params
  (exact results stay exact: +-1 or 0)."""
  flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), t.inputs)
  evaluated = jax.vmap(lambda x: evaluator.value(params, x))(flat).reshape(t.mover.shape)
  mover_side = jnp.where(t.exact, jnp.sign(t.value), t.leaf_sign * evaluated)
  return jnp.where(t.mover == 0, mover_side, -mover_side)


def td_loss(evaluator: Evaluator, td_lambda: float, params: Any, t: Trajectory) -> Array:
  """Mean squared distance of the evaluated leaves' values to their (fixed) lambda-returns."""
  u = position_values(evaluator, params, t)
  live_next = jnp.concatenate([t.live[1:], jnp.zeros_like(t.live[:1])])
  stop = t.explored | (t.live & ~t.ended & ~live_next)  # a random move, or cut off
  returns = functools.partial(lambda_returns, td_lambda=td_lambda)
  g = jax.vmap(returns, in_axes=1, out_axes=1)(
      jax.lax.stop_gradient(u), jnp.where(t.live, t.reward, 0.0), t.ended, stop)
  weight = (t.live & ~t.exact).astype(jnp.float32)
  return jnp.sum(weight * (u - jax.lax.stop_gradient(g)) ** 2) / jnp.maximum(jnp.sum(weight), 1)


def keep(kept: Trajectory, records: Trajectory, slot: Array) -> Trajectory:
  """`kept` (`[R, T, B, ...]`, R iterations of games) with `records` (`[T, B, ...]`) written
  over slot `slot` (the oldest, when slots are used in turn)."""
  return jax.tree.map(lambda old, new: old.at[slot].set(new), kept, records)


def replayed(kept: Trajectory) -> Trajectory:
  """`[R, T, B, ...]` -> `[T, R * B, ...]`: every kept game a column, as `td_loss` reads
  them (slots never written hold no live plies, so they weigh nothing)."""
  def merge(x):
    x = jnp.moveaxis(x, 0, 1)
    return x.reshape((x.shape[0], -1) + x.shape[3:])

  return jax.tree.map(merge, kept)


# -- The learner -----------------------------------------------------------------------------------


class TrainState(NamedTuple):
  params: Any  # the evaluation's variables
  opt_state: Any
  iteration: Array  # [] int32
  key: Array
  positions: Array  # [] int32: the positions played so far (plies of all slots)
  games: Array  # [] int32: the games finished so far


class Learner:
  """Jitted self-play and learning for one `Config` (see the module docstring)."""

  def __init__(self, config: Config):
    self.config = config.validate()
    self.env = config.make_env()
    self.evaluator = make_evaluator(config, self.env)
    self.optimizer = optax.adam(config.learning_rate)
    self.iteration = jax.jit(self._iteration)
    self._hand = self.env.alphabeta_evaluation

  def init(self, key: Array) -> TrainState:
    init_key, key = jax.random.split(key)
    params = self.evaluator.init(init_key)
    return TrainState(params, self.optimizer.init(params), jnp.int32(0), key, jnp.int32(0),
                      jnp.int32(0))

  def evaluation(self, params: Any) -> Callable[[Any], Array]:
    """`state -> []` the learned evaluation with `params`, for `alphabeta.search`."""
    return self.evaluation_on(self.env, params)

  def play(self, params: Any, key: Array) -> Trajectory:
    """`max_plies` plies of self-play in `batch` slots (`[T, B]` records), each slot starting
    a fresh game (after its random opening) at the start and whenever its game ends."""
    config, env = self.config, self.env
    init_key, key = jax.random.split(key)
    states = selfplay.fresh_games(env, init_key, config.batch, config.opening_moves)
    evaluation = self.evaluation(params)

    n_hand = int(config.versus_hand * config.batch)  # the first n_hand slots play it

    def hand_colours(key):
      colour = jax.random.bernoulli(key, 0.5, (config.batch,)).astype(jnp.int32)
      return jnp.where(jnp.arange(config.batch) < n_hand, colour, -1)

    def ply(carry, key):
      states, hand = carry
      (search_key, explore_key, random_key, restart_key, hand_key,
       opponent_key) = jax.random.split(key, 6)
      found = alphabeta.search(env, states, search_key, depth=config.depth,
                               evaluation=evaluation)
      explored = jax.random.bernoulli(explore_key, config.epsilon, (config.batch,))
      random_moves = base.uniform_legal_actions(random_key, states.legal_action_mask)
      action = jnp.where(explored, random_moves, found.action)
      hand_moves = states.current_player == hand
      if n_hand:  # Searched in the hand's slots only.
        opponent = alphabeta.search(env, jax.tree.map(lambda x: x[:n_hand], states),
                                    opponent_key, depth=config.depth,
                                    evaluation=self._hand).action
        opponent = jnp.concatenate([opponent, jnp.zeros(config.batch - n_hand, jnp.int32)])
        action = jnp.where(hand_moves, opponent, action)
      live = ~states.terminated
      after = jax.vmap(env.step)(states, action)
      record = Trajectory(
          inputs=jax.vmap(self.evaluator.inputs)(found.leaf), leaf_sign=found.leaf_sign,
          exact=found.leaf_exact, value=found.value, mover=states.current_player, live=live,
          explored=explored & ~hand_moves & live, ended=live & after.terminated,
          reward=after.rewards[:, 0], nodes=jnp.where(live, found.nodes, 0), hand=hand)
      hand = jnp.where(after.terminated, hand_colours(hand_key), hand)
      return (selfplay.restart_ended(env, after, restart_key, config.opening_moves),
              hand), record

    hand_key, key = jax.random.split(key)
    _, records = jax.lax.scan(ply, (states, hand_colours(hand_key)),
                              jax.random.split(key, config.max_plies))
    return records

  def empty_replay(self) -> Trajectory | None:
    """The kept games before any are played: `[replay, T, B, ...]` with no live ply (None
    when `replay` is 1: each iteration learns from its own games only)."""
    if self.config.replay == 1:
      return None
    shapes = jax.eval_shape(self.play, self.init(jax.random.key(0)).params, jax.random.key(0))
    return jax.tree.map(lambda x: jnp.zeros((self.config.replay,) + x.shape, x.dtype), shapes)

  def _iteration(self, state: TrainState, kept: Trajectory | None
                 ) -> tuple[TrainState, Trajectory | None, dict]:
    config = self.config
    play_key, key = jax.random.split(state.key)
    records = self.play(state.params, play_key)
    loss = functools.partial(td_loss, self.evaluator, config.td_lambda)
    data = records
    if kept is not None:
      kept = keep(kept, records, state.iteration % config.replay)
      data = replayed(kept)

    def sgd(carry, _):
      params, opt_state = carry
      value, grads = jax.value_and_grad(loss)(params, data)
      updates, opt_state = self.optimizer.update(grads, opt_state, params)
      return (optax.apply_updates(params, updates), opt_state), value

    # Rolled, 16 steps on 9,600 positions took 31 s on a CPU; unrolled, 1.5 s.
    (params, opt_state), losses = jax.lax.scan(sgd, (state.params, state.opt_state), None,
                                               length=config.sgd_steps,
                                               unroll=train.sgd_unroll(config.sgd_steps))
    ended = records.ended
    finished = jnp.sum(ended)
    plies = jnp.sum(records.live)
    per_game = jnp.maximum(finished, 1)
    metrics = {
        "loss": losses[0], "games_finished": finished.astype(jnp.float32),
        "first_player_win_rate": jnp.sum(ended & (records.reward > 0)) / per_game,
        "draw_rate": jnp.sum(ended & (records.reward == 0)) / per_game,
        # Plies of the games cut off at the iteration's end count toward no game's length.
        "mean_game_length": jnp.sum(jnp.cumsum(ended[::-1], axis=0)[::-1] > 0) / per_game,
        "nodes_per_search": jnp.sum(records.nodes) / jnp.maximum(plies, 1),
        "iteration_positions": plies.astype(jnp.float32)}
    if config.versus_hand:
      # The learner's score in its finished games against the hand-written evaluation.
      against = ended & (records.hand >= 0)
      learner_reward = jnp.where(records.hand == 0, -records.reward, records.reward)
      metrics["training_vs_hand"] = (jnp.sum(against * (learner_reward + 1) / 2)
                                     / jnp.maximum(jnp.sum(against), 1))
    counted = TrainState(params, opt_state, state.iteration + 1, key,
                         state.positions + plies.astype(jnp.int32),
                         state.games + finished.astype(jnp.int32))
    return counted, kept, metrics

  # -- The trained player ----------------------------------------------------------------------

  def player(self, params: Any, env: base.Game | None = None, depth: int | None = None,
             name: str | None = None):
    """The alpha-beta `agents.Agent` with the learned evaluation (`params`) on `env` (default
    the run's game; the feature MLP plays any Slider size), at `depth` (default the run's)."""
    env = env or self.env
    depth = depth or self.config.depth
    evaluation = self.evaluation_on(env, params)
    return agents.Agent(name or f"tdleaf-d{depth}",
                        alphabeta.search_policy(env, depth=depth, evaluation=evaluation))

  @functools.partial(jax.jit, static_argnums=0)
  def decide(self, params: Any, states: Any, key: Array) -> tuple[Array, Array]:
    """`([B] int32, [B] float32)`: the trained player's moves in `states` and its search's
    root values (mover's side, exact results as +-1 or 0). The params are traced, so every
    snapshot of a run shares one compilation."""
    found = alphabeta.search(self.env, states, key, depth=self.config.depth,
                             evaluation=self.evaluation(params))
    return found.action, jnp.where(found.leaf_exact, jnp.sign(found.value), found.value)

  def act(self, params: Any, states: Any, key: Array) -> Array:
    """`[B]` int32: the trained player's moves in `states`."""
    return self.decide(params, states, key)[0]

  def evaluation_on(self, env: base.Game, params: Any) -> Callable[[Any], Array]:
    """The learned evaluation on another variant of the game (another Slider size)."""
    evaluator = self.evaluator if env is self.env else make_evaluator(self.config, env)
    return lambda state: evaluator.value(params, evaluator.inputs(state))

  @functools.partial(jax.jit, static_argnums=(0, 3, 4, 5))
  def match(self, params: Any, key: Array, env: base.Game, games_: int, depth: int) -> dict:
    """Per-game outcomes (`arena.match_outcomes`) of the learned evaluation against the game's
    hand-written one, both in alpha-beta at `depth`, half the games with each colour, each to
    its end (`max_game_length` bounds every game; the loop stops when all have ended)."""
    learned = alphabeta.search_policy(env, depth=depth,
                                      evaluation=self.evaluation_on(env, params))
    hand = alphabeta.search_policy(env, depth=depth, evaluation=env.alphabeta_evaluation)
    return arena.match_outcomes(env, learned, hand, games_, env.max_game_length, key)

  def score_against_hand(self, params: Any, key: Array, *, env: base.Game | None = None,
                         games_: int | None = None, depth: int | None = None):
    """The `arena.MatchResult` of `match`, from the learned evaluation's side."""
    env = env or self.env
    depth = depth or self.config.depth
    out = self.match(params, key, env, games_ or self.config.eval_games, depth)
    return arena.summarize(env, f"tdleaf-d{depth}", f"alphabeta-d{depth}(hand)", out)
