"""Loss, optimizer and the fused training iteration (self-play chunk + buffer + K SGD steps).

`Trainer` holds the static parts of a run (game, network module, optimizer, configs) and builds
the one jitted function `iteration(state) -> (state, metrics)`. `TrainState` holds everything that
changes, so a checkpoint of it resumes the very same run. The outer loop lives in
`azjax.driver`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from azjax import checkpoint, games, nets, replay, selfplay
from azjax.config import Config
from azjax.games.base import Game


@chex.dataclass(frozen=True)
class TrainState:
  params: Any
  batch_stats: Any  # BatchNorm running statistics ({} for networks without BatchNorm)
  best_params: Any  # with gating: the network self-play uses; else {}
  best_batch_stats: Any
  opt_state: Any
  selfplay: selfplay.SelfPlayState
  key: chex.Array  # raw uint32 PRNG key (saved in checkpoints as a plain array)
  iteration: chex.Array  # [] int32
  sgd_steps: chex.Array  # [] int32: optimizer updates applied so far
  positions: chex.Array  # [] int32: self-play positions played so far
  games_finished: chex.Array  # [] int32


# -- Loss -------------------------------------------------------------------------------------------


def loss_terms(logits: chex.Array, value: chex.Array, target_policy: chex.Array,
               legal_mask: chex.Array, target_value: chex.Array) -> tuple[chex.Array, chex.Array]:
  """Per-example policy cross-entropy and value squared error.

  Args:
    logits: `[b, A]` raw network logits (masked here before the softmax).
    value: `[b]` network value in [-1, 1].
    target_policy: `[b, A]` search action weights (sum to 1, zero on illegal actions).
    legal_mask: `[b, A]`.
    target_value: `[b]` game outcome from the mover's side.
  Returns:
    `(policy_loss [b], value_loss [b])`.
  """
  log_probs = jax.nn.log_softmax(nets.mask_logits(logits, legal_mask), axis=-1)
  # Illegal entries have weight 0; `where` keeps 0 * (-huge) from producing NaN.
  policy_loss = -jnp.sum(jnp.where(target_policy > 0, target_policy * log_probs, 0.0), axis=-1)
  value_loss = jnp.square(value - target_value)
  return policy_loss, value_loss


def l2_penalty(params: Any) -> chex.Array:
  """Sum of squares of the kernels (not biases or normalisation scales)."""
  leaves = jax.tree_util.tree_leaves_with_path(params)
  return sum(jnp.sum(jnp.square(x)) for path, x in leaves
             if getattr(path[-1], "key", None) == "kernel")


def _global_norm(tree: Any) -> chex.Array:
  # optax renamed tree_l2_norm to tree_norm in 0.2.5; support both.
  norm = getattr(optax.tree_utils, "tree_norm", None) or optax.tree_utils.tree_l2_norm
  return norm(tree)


def make_optimizer(config: Config) -> optax.GradientTransformation:
  total = max(config.iterations * config.sgd_steps, 1)
  if config.lr_schedule == "cosine":
    schedule = optax.warmup_cosine_decay_schedule(
        0.0, config.learning_rate, max(config.warmup_steps, 1), max(total, config.warmup_steps + 1))
  elif config.warmup_steps:
    schedule = optax.linear_schedule(0.0, config.learning_rate, config.warmup_steps)
  else:
    schedule = config.learning_rate
  if config.optimizer == "adamw":
    opt = optax.adamw(schedule, weight_decay=config.weight_decay)
  elif config.optimizer == "adam":
    opt = optax.adam(schedule)
  else:
    opt = optax.sgd(schedule, momentum=config.momentum, nesterov=True)
  if config.max_grad_norm > 0:
    opt = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), opt)
  return opt


# -- The run's static parts ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Trainer:
  """Static parts of a run; `iteration` is the fused, jitted step."""

  config: Config
  game: Game
  model: nn.Module
  optimizer: optax.GradientTransformation

  @classmethod
  def create(cls, config: Config) -> "Trainer":
    config.validate(num_devices=1)
    game = games.make(config.game, **config.game_kwargs())
    model = nets.make(config.net_config(), game.num_actions)
    return cls(config=config, game=game, model=model, optimizer=make_optimizer(config))

  # -- Network ------------------------------------------------------------------------------------
  def eval_fn(self, variables: Any, observation: chex.Array):
    """Network in inference mode: `[B, R, C, P] -> (logits [B, A], value [B])`."""
    return self.model.apply(variables, observation, train=False)

  @staticmethod
  def variables(state: TrainState) -> dict:
    """The network's variables: `{"params"}` plus `{"batch_stats"}` for BatchNorm networks."""
    return checkpoint.model_variables(state)

  def selfplay_variables(self, state: TrainState) -> dict:
    """The network self-play uses: the best one with gating, else the current one."""
    if not self.config.gating:
      return self.variables(state)
    return checkpoint.model_variables(
        state.replace(params=state.best_params, batch_stats=state.best_batch_stats))

  def gating_score(self, candidate: dict, best: dict, key: chex.Array) -> chex.Array:
    """`[]` score (wins + draws / 2, per game) of `candidate` against `best`, both colours."""
    from azjax import agents, arena  # Local import: agents imports this module's neighbours.

    candidate = {k: v for k, v in candidate.items() if v}
    best = {k: v for k, v in best.items() if v}
    if self.config.gating_player == "search":
      def player(variables):
        return agents.make_alphazero(self.game, model=self.model, variables=variables,
                                     simulations=self.config.eval_simulations,
                                     algorithm=self.config.search, gumbel_scale=1.0).policy
    else:
      def player(variables):
        return agents.make_raw_policy(self.game, model=self.model, variables=variables,
                                      sample=True).policy
    outcomes = arena.match_outcomes(self.game, player(candidate), player(best),
                                    self.config.gating_games, self.game.max_game_length, key)
    return jnp.mean((outcomes["outcome"] + 1.0) / 2.0)

  # -- Initial state --------------------------------------------------------------------------------
  def init(self, seed: int | None = None) -> TrainState:
    seed = self.config.seed if seed is None else seed
    key = jax.random.PRNGKey(seed)
    key, net_key, games_key = jax.random.split(key, 3)
    variables = nets.init_variables(self.model, net_key, self.game.observation_shape)
    params = variables["params"]
    batch_stats = variables.get("batch_stats", {})
    # Copies, not the same buffers: the iteration donates its whole state.
    best = jax.tree.map(jnp.copy, (params, batch_stats)) if self.config.gating else ({}, {})
    return TrainState(
        params=params,
        batch_stats=batch_stats,
        best_params=best[0],
        best_batch_stats=best[1],
        opt_state=self.optimizer.init(params),
        selfplay=selfplay.init(self.game, self.config.selfplay_batch, self.config.buffer_size,
                               games_key),
        key=key,
        iteration=jnp.int32(0),
        sgd_steps=jnp.int32(0),
        positions=jnp.int32(0),
        games_finished=jnp.int32(0),
    )

  # -- SGD ------------------------------------------------------------------------------------------
  def loss(self, params, batch_stats, batch):
    observation, target_policy, legal_mask, target_value = batch
    variables = {"params": params}
    mutable = []
    if batch_stats:
      variables["batch_stats"] = batch_stats
      mutable = ["batch_stats"]
    (logits, value), updates = self.model.apply(variables, observation, train=True,
                                                mutable=mutable)
    policy_loss, value_loss = loss_terms(logits, value, target_policy, legal_mask, target_value)
    policy_loss, value_loss = policy_loss.mean(), value_loss.mean()
    total = policy_loss + self.config.value_weight * value_loss
    if self.config.optimizer != "adamw":  # AdamW decays weights itself (decoupled).
      total = total + self.config.weight_decay * l2_penalty(params)
    metrics = {"loss": total, "policy_loss": policy_loss, "value_loss": value_loss}
    return total, (updates.get("batch_stats", batch_stats), metrics)

  def sgd_step(self, params, batch_stats, opt_state, batch):
    grads, (batch_stats, metrics) = jax.grad(self.loss, has_aux=True)(params, batch_stats, batch)
    updates, opt_state = self.optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    metrics["grad_norm"] = _global_norm(grads)
    return params, batch_stats, opt_state, metrics

  # -- The fused iteration ----------------------------------------------------------------------------
  def iteration(self, state: TrainState) -> tuple[TrainState, dict]:
    """Self-play chunk, then `sgd_steps` updates on samples from the buffer (if it is ready)."""
    config = self.config
    key, selfplay_key, sgd_key, gating_key = jax.random.split(state.key, 4)

    # -- Self-play with the current network (with gating: the best one so far).
    sp, stats = selfplay.play_chunk(self.game, self.eval_fn, config.search_config(),
                                    self.selfplay_variables(state), state.selfplay,
                                    selfplay_key, config.selfplay_steps)

    # -- K SGD steps, once enough positions have known outcomes.
    def train(carry):
      # All minibatches are drawn up front (see `replay.sample`), then scanned over.
      batches = replay.sample(sp.buffer, sgd_key, (config.sgd_steps, config.train_batch))

      def body(c, batch):
        params, batch_stats, opt_state = c
        params, batch_stats, opt_state, metrics = self.sgd_step(params, batch_stats, opt_state,
                                                                batch)
        return (params, batch_stats, opt_state), metrics

      # XLA:CPU runs convolution gradients inside a while loop some 20x slower than outside
      # one (benchmarks/cpu_loops.py measures it), so on a CPU the SGD loop is unrolled.
      unroll = config.sgd_steps if jax.default_backend() == "cpu" else 1
      carry, metrics = jax.lax.scan(body, carry, batches, unroll=max(unroll, 1))
      return carry, jax.tree.map(jnp.mean, metrics)

    # SGD runs unconditionally and its result is discarded until the buffer is ready: a
    # `lax.cond` would put it in a nested computation, where XLA:CPU's convolution gradients
    # are an order of magnitude slower; the waste is a few iterations at the start of a run.
    ready = (sp.buffer.num_targets >= max(config.min_buffer, 1)) & (config.sgd_steps > 0)
    old = (state.params, state.batch_stats, state.opt_state)
    new, metrics = train(old)
    params, batch_stats, opt_state = jax.tree.map(lambda n, o: jnp.where(ready, n, o), new, old)
    metrics = jax.tree.map(lambda m: jnp.where(ready, m, jnp.nan), metrics)

    # -- Gating: the trained network replaces the best one only if it beats it.
    best_params, best_batch_stats = state.best_params, state.best_batch_stats
    if config.gating:
      gating_score = self.gating_score({"params": params, "batch_stats": batch_stats},
                                       {"params": best_params, "batch_stats": best_batch_stats},
                                       gating_key)
      accept = ready & (gating_score > config.gating_threshold)
      metrics["gating_score"] = jnp.where(ready, gating_score, jnp.nan)
      metrics["gating_accepted"] = accept
      best_params, best_batch_stats = jax.tree.map(
          lambda n, b: jnp.where(accept, n, b), (params, batch_stats),
          (best_params, best_batch_stats))

    new_state = state.replace(
        params=params, batch_stats=batch_stats, opt_state=opt_state, selfplay=sp, key=key,
        best_params=best_params, best_batch_stats=best_batch_stats,
        iteration=state.iteration + 1,
        sgd_steps=state.sgd_steps + jnp.where(ready, config.sgd_steps, 0),
        positions=state.positions + stats.moves,
        games_finished=state.games_finished + stats.games_finished)
    finished = jnp.maximum(stats.games_finished, 1)
    metrics = dict(metrics)
    metrics.update(
        trained=ready,
        games_finished=stats.games_finished,
        mean_game_length=stats.game_length_sum / finished,
        first_player_win_rate=stats.first_player_wins / finished,
        draw_rate=stats.draws / finished,
        mean_abs_root_value=stats.root_value_abs_sum / stats.moves,
        buffer_targets=sp.buffer.num_targets,
    )
    return new_state, metrics

  def jit_iteration(self):
    """The iteration, jitted once; the state argument is donated (updated in place)."""
    return jax.jit(self.iteration, donate_argnums=0)
