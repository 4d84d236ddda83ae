"""Loss, optimizer and the fused training iteration (self-play chunk + buffer + K SGD steps).

`Trainer` holds the static parts of a run (game, network module, optimizer, configs) and builds
the one jitted function `iteration(state) -> (state, metrics)`. `TrainState` holds everything that
changes, so a checkpoint of it resumes the very same run. Gating is a step of its own after the
iteration (`azjax.runs.gating`); the outer loop is `azjax.runs.loop`, behind
`azjax.runs.driver` (one run) and `azjax.sweep` (many runs vmapped together).

Hyperparameters that change no shape (learning rate, weight decay, search noise, ...) can also
come in as traced values: `iteration(state, hyper)` with a `Hyper` of scalars, which is what
lets a sweep `jax.vmap` one program over configurations. Without `hyper` they are the config's
Python constants, exactly as in a single run. With a `mesh` (`azjax.sharding`), the games and
the replay buffer are split over its "data" axis and parameters are replicated.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from azjax import augment, games, nets, replay, selfplay, sharding
from azjax import config as config_lib
from azjax.config import Config
from azjax.games.base import Game, stack_states
from azjax.runs import checkpoint


@chex.dataclass(frozen=True)
class TrainState:
  params: Any
  batch_stats: Any  # BatchNorm running statistics ({} for networks without BatchNorm)
  best_params: Any  # with gating: the network self-play uses; else {}
  best_batch_stats: Any
  # With `ema_decay`: the moving average of `params` (`ema_update`), which is the run's network
  # (`checkpoint.model_variables`: what is saved, scored and played); else {}.
  ema_params: Any
  opt_state: Any
  selfplay: selfplay.SelfPlayState
  key: chex.Array  # raw uint32 PRNG key (saved in checkpoints as a plain array)
  iteration: chex.Array  # [] int32
  sgd_steps: chex.Array  # [] int32: optimizer updates applied so far
  positions: chex.Array  # [] int32: self-play positions played so far
  games_finished: chex.Array  # [] int32


class _HyperMethods:
  """The methods of `Hyper` (its fields are `config.TRACED_KEYS`)."""

  @classmethod
  def from_config(cls, config: Config) -> "Hyper":
    return cls(**{key: getattr(config, key) for key in config_lib.TRACED_KEYS})

  def as_arrays(self) -> "Hyper":
    """The same values as `[]` arrays (float32; int32 for the integer fields)."""
    return jax.tree.map(lambda v: jnp.asarray(v, jnp.int32 if isinstance(v, int) else
                                              jnp.float32), self)


# The hyperparameters the iteration reads as values rather than as program structure: one field
# for each `Config` field declared `traced=True` (`config.TRACED_KEYS`; their meanings are
# there). Each is a scalar: a Python number for a single run (`Hyper.from_config`, folded into
# the compiled program) or a traced `[]` array, stacked to `[K]` for a sweep of `K`
# configurations vmapped together. Changing one changes no array shape, so these are the keys a
# sweep batches (`azjax.sweep.BATCHED_KEYS`, with `seed`).
Hyper = chex.dataclass(frozen=True)(type("Hyper", (_HyperMethods,), {
    "__module__": __name__, "__annotations__": {key: Any for key in config_lib.TRACED_KEYS}}))

HYPER_KEYS = tuple(f.name for f in dataclasses.fields(Hyper))


class IterationKeys(NamedTuple):
  """The subkeys of one iteration, split from the state's key."""

  next: chex.Array  # the state's key for the next iteration
  selfplay: chex.Array
  sgd: chex.Array
  gating: chex.Array  # the gating match after the iteration (`azjax.runs.gating`)
  augment: chex.Array


def iteration_keys(key: chex.Array) -> IterationKeys:
  """One iteration's keys from the state's `key` (the same split with gating on or off)."""
  return IterationKeys(*jax.random.split(key, 5))


# -- Loss ------------------------------------------------------------------------------------------


def value_target(outcome: chex.Array, root_value: chex.Array, mix: Any) -> chex.Array:
  """`[b]` value target: `(1 - mix) * outcome + mix * root_value`, both from the mover's side
  (the outcome, or with `value_lambda` its TD(lambda) return, `replay.lambda_return`).

  The outcome is unbiased but noisy (one game's result, decided by moves long after the
  position); the search's root value is a lower-variance, biased estimate. Mixing the two is
  what "Lessons from AlphaZero" (Prasad et al.) reports helps Connect Four learn faster.
  """
  return (1.0 - mix) * outcome + mix * root_value


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
  policy_loss = cross_entropy(logits, target_policy, legal_mask)
  value_loss = jnp.square(value - target_value)
  return policy_loss, value_loss


def cross_entropy(logits: chex.Array, target_policy: chex.Array,
                  legal_mask: chex.Array) -> chex.Array:
  """`[b]` cross-entropy of `target_policy [b, A]` (zero on illegal actions) under the logits
  `[b, A]` masked to `legal_mask`."""
  log_probs = jax.nn.log_softmax(nets.mask_logits(logits, legal_mask), axis=-1)
  # Illegal entries have weight 0; `where` keeps 0 * (-huge) from producing NaN.
  return -jnp.sum(jnp.where(target_policy > 0, target_policy * log_probs, 0.0), axis=-1)


def weighted_mean(x: chex.Array, weight: chex.Array) -> chex.Array:
  """The mean of `x [b]` over the rows where `weight [b]` (bool or 0/1) is set; 0 if none."""
  weight = weight.astype(x.dtype)
  return jnp.sum(weight * x) / jnp.maximum(jnp.sum(weight), 1.0)


def ema_update(average: Any, params: Any, decay: float, count: chex.Array) -> Any:
  """The moving average after one more update: `d * average + (1 - d) * params`, leaf by leaf.

  The decay is warmed up, `d = min(decay, (1 + count) / (10 + count))` after `count` earlier
  updates (as TensorFlow's `ExponentialMovingAverage` with `num_updates`), so that the
  average forgets the untrained initial network in a few updates rather than in `1 / (1 - decay)`.
  """
  count = jnp.asarray(count, jnp.float32)
  d = jnp.minimum(decay, (1.0 + count) / (10.0 + count))
  return jax.tree.map(lambda a, p: (d * a + (1.0 - d) * p).astype(a.dtype), average, params)


def l2_penalty(params: Any) -> chex.Array:
  """Sum of squares of the kernels (not biases or normalisation scales)."""
  leaves = jax.tree_util.tree_leaves_with_path(params)
  return sum(jnp.sum(jnp.square(x)) for path, x in leaves
             if getattr(path[-1], "key", None) == "kernel")


def _global_norm(tree: Any) -> chex.Array:
  # optax renamed tree_l2_norm to tree_norm in 0.2.5; support both.
  norm = getattr(optax.tree_utils, "tree_norm", None) or optax.tree_utils.tree_l2_norm
  return norm(tree)


def _unit_schedule(config: Config) -> optax.Schedule | None:
  """The learning-rate schedule for a peak of 1 (None: constant), so the peak can be traced."""
  total = max(config.iterations * config.sgd_steps, 1)
  if config.lr_schedule == "cosine":
    return optax.warmup_cosine_decay_schedule(
        0.0, 1.0, max(config.warmup_steps, 1), max(total, config.warmup_steps + 1),
        end_value=config.lr_floor)
  if config.warmup_steps:
    return optax.linear_schedule(0.0, 1.0, config.warmup_steps)
  return None


def make_optimizer(config: Config, hyper: Hyper | None = None) -> optax.GradientTransformation:
  """The optimizer of `config`; numbers from `hyper` (default: the config's), which may be traced.

  The optimizer state's structure depends on `config` alone, so the state made by one optimizer
  is updated by another built with other `hyper` values (what a vmapped sweep does).
  """
  hyper = Hyper.from_config(config) if hyper is None else hyper
  unit = _unit_schedule(config)
  peak = hyper.learning_rate
  schedule = peak if unit is None else (lambda count: peak * unit(count))
  if config.optimizer == "adamw":
    opt = optax.adamw(schedule, weight_decay=hyper.weight_decay)
  elif config.optimizer == "adam":
    opt = optax.adam(schedule)
  else:
    opt = optax.sgd(schedule, momentum=hyper.momentum, nesterov=True)
  if config.max_grad_norm > 0:
    opt = optax.chain(optax.clip_by_global_norm(hyper.max_grad_norm), opt)
  return opt


def sgd_unroll(steps: int, convolutional: bool = True) -> int:
  """How far to unroll a `lax.scan` of `steps` SGD steps: all of it for a convolutional
  network on a CPU, where XLA runs convolution gradients inside a while loop some 20x slower
  than outside one (benchmarks/cpu_loops.py measures it); not at all elsewhere (shorter
  compiles). An MLP's steps run faster rolled on a CPU: 3.6 against 5.5 ms a step of 256 for
  the Breakthrough 8x8 MLP 256x3, 0.7 against 3.3 ms a step of 16 (the same benchmark)."""
  return max(steps, 1) if convolutional and jax.default_backend() == "cpu" else 1


# -- Under a sweep's vmap --------------------------------------------------------------------------


def loop_under_vmap(fn):
  """`fn`, except that `jax.vmap` of it runs `fn` once per row (an unrolled loop) and stacks.

  Why: vmapping a convolution over per-row *weights* (a sweep's configurations) makes it a
  grouped convolution, which XLA:CPU runs several times slower than the separate convolutions
  (`benchmarks/sweep.py`). Everything around the network (search, game, replay) stays batched.
  Reverse-mode autodiff must happen inside `fn` (jax's custom_vmap does not transpose), which
  is how the SGD step and the network evaluation use it. Rows whose inputs are not batched are
  not copied: arguments without a batched leaf are passed whole.
  """
  wrapped = jax.custom_batching.custom_vmap(fn)

  @wrapped.def_vmap
  def rule(axis_size, in_batched, *args):
    def row(i):
      return jax.tree.map(lambda x, batched: x[i] if batched else x, list(args), list(in_batched))
    outs = [wrapped(*row(i)) for i in range(axis_size)]
    out = stack_states(outs)
    return out, jax.tree.map(lambda _: True, out)

  return wrapped


# -- The run's static parts ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Trainer:
  """Static parts of a run; `iteration` is the fused, jitted step.

  With a `mesh` (see `azjax.sharding.make_mesh`), `init` places the state on it (games and
  replay rows split over the "data" axis, the rest replicated), `iteration` splits each training
  minibatch over "data", and `jit_iteration` compiles with those shardings: XLA partitions the
  program and averages the gradients across devices itself.
  """

  config: Config
  game: Game
  model: nn.Module
  optimizer: optax.GradientTransformation
  mesh: Any = None  # a jax.sharding.Mesh with a "data" axis, or None for one device
  # Under a sweep's vmap: evaluate the network and take SGD steps one configuration at a time
  # (`loop_under_vmap`) rather than with jax.vmap's batched convolutions. No effect otherwise.
  loop_configs: bool = False

  @classmethod
  def create(cls, config: Config, mesh: Any = None) -> "Trainer":
    """Validates `config` (batches divisible by the mesh's "data" axis) and builds the parts."""
    config.validate(num_devices=1 if mesh is None else sharding.data_size(mesh))
    game = games.make(config.game, **config.game_kwargs())
    model = nets.make(config.net_config(), game.num_actions)
    return cls(config=config, game=game, model=model, optimizer=make_optimizer(config),
               mesh=mesh)

  def hyper(self, hyper: Hyper | None = None) -> Hyper:
    """`hyper`, or for None this run's `Hyper` (Python numbers from the config, folded into
    the compiled program): the one place a method's optional `hyper` is resolved."""
    return Hyper.from_config(self.config) if hyper is None else hyper

  # -- Network ------------------------------------------------------------------------------------
  def eval_fn(self, variables: Any, observation: chex.Array):
    """Network in inference mode: `[B, R, C, P] -> (logits [B, A], value [B])`."""
    return self.model.apply(variables, observation, train=False)

  @staticmethod
  def variables(state: TrainState) -> dict:
    """The network's variables: `{"params"}` plus `{"batch_stats"}` for BatchNorm networks
    (with `ema_decay`, the averaged parameters)."""
    return checkpoint.model_variables(state)

  @staticmethod
  def trained_variables(state: TrainState) -> dict:
    """The variables as SGD left them (the same as `variables` without `ema_decay`)."""
    return checkpoint.model_variables(state.replace(ema_params={}))

  def selfplay_variables(self, state: TrainState) -> dict:
    """The network self-play uses: the best one with gating, else the trained one. (Not the
    average of `ema_decay`: self-play's data should follow the newest policy, and the
    average then changes no data, so a run's games are the same with it or without.)"""
    if not self.config.gating:
      return self.trained_variables(state)
    return checkpoint.model_variables(
        state.replace(params=state.best_params, batch_stats=state.best_batch_stats))

  # -- Initial state -------------------------------------------------------------------------------
  def init(self, seed: int | None = None) -> TrainState:
    """A fresh state for `seed` (default: the config's), placed on the mesh if there is one."""
    state = self.init_state(self.config.seed if seed is None else seed)
    return self.place(state)

  def network_fields(self, params: Any, batch_stats: Any) -> dict:
    """The state's fields of a network that starts a run (fresh or warm-started): `params` and
    `batch_stats`, the gating network and the average (`ema_decay`) as copies of them, or {}."""
    # Copies, not the same buffers: the iteration donates its whole state.
    best = jax.tree.map(jnp.copy, (params, batch_stats)) if self.config.gating else ({}, {})
    return dict(params=params, batch_stats=batch_stats, best_params=best[0],
                best_batch_stats=best[1],
                ema_params=jax.tree.map(jnp.copy, params) if self.config.ema_decay else {})

  def init_state(self, seed: int | chex.Array) -> TrainState:
    """A fresh state, pure in `seed` (an int or a traced `[]` int32, so it can be vmapped)."""
    key = jax.random.PRNGKey(seed)
    key, net_key, games_key = jax.random.split(key, 3)
    variables = nets.init_variables(self.model, net_key, self.game.observation_shape)
    params = variables["params"]
    batch_stats = variables.get("batch_stats", {})
    return TrainState(
        **self.network_fields(params, batch_stats),
        opt_state=self.optimizer.init(params),
        selfplay=selfplay.init(self.game, self.config.selfplay_batch, self.config.buffer_size,
                               games_key, self.config.opening_moves,
                               self.config.archive_size if self.config.archive_start else 0),
        key=key,
        iteration=jnp.int32(0),
        sgd_steps=jnp.int32(0),
        positions=jnp.int32(0),
        games_finished=jnp.int32(0),
    )

  def state_shardings(self, state: TrainState) -> TrainState:
    """The state's `NamedSharding`s on `self.mesh` (a pytree like `state`)."""
    return sharding.state_shardings(state, self.mesh)

  def place(self, state: TrainState) -> TrainState:
    """`state` moved onto the mesh with its shardings (unchanged without a mesh)."""
    if self.mesh is None:
      return state
    return jax.device_put(state, self.state_shardings(state))

  # -- SGD -----------------------------------------------------------------------------------------
  def loss(self, params, batch_stats, batch: replay.Batch, hyper: Hyper | None = None):
    """The mean losses of a `replay.Batch`; the policy term averages over its full searches,
    the opponent's reply term (with `reply_weight`) over the rows that have a reply."""
    hyper = self.hyper(hyper)
    observation, target_policy, legal_mask = batch.observation, batch.policy, batch.legal_mask
    target_value = value_target(batch.value, batch.root_value, hyper.value_target_mix)
    variables = {"params": params}
    mutable = [nets.REPLY] if self.config.reply_weight else []
    if batch_stats:
      variables["batch_stats"] = batch_stats
      mutable.append("batch_stats")
    (logits, value), updates = self.model.apply(variables, observation, train=True,
                                                mutable=mutable)
    policy_loss, value_loss = loss_terms(logits, value, target_policy, legal_mask, target_value)
    # Rows from playout cap randomisation's cheap searches carry no policy target.
    policy_loss = weighted_mean(policy_loss, batch.full_search)
    value_loss = value_loss.mean()
    total = policy_loss + hyper.value_weight * value_loss
    extra = {}
    if self.config.reply_weight:  # KataGo's auxiliary target: the opponent's reply.
      extra["reply_loss"] = weighted_mean(
          cross_entropy(nets.reply_logits(updates), batch.reply_policy,
                        batch.reply_legal_mask), batch.has_reply)
      total = total + self.config.reply_weight * extra["reply_loss"]
    if self.config.optimizer != "adamw":  # AdamW decays weights itself (decoupled).
      total = total + hyper.weight_decay * l2_penalty(params)
    metrics = {"loss": total, "policy_loss": policy_loss, "value_loss": value_loss, **extra}
    return total, (updates.get("batch_stats", batch_stats), metrics)

  def sgd_step(self, params, batch_stats, opt_state, batch, hyper: Hyper | None = None):
    """One optimizer update; `hyper` (maybe traced) replaces the config's numbers."""
    hyper = self.hyper(hyper)
    loss = functools.partial(self.loss, hyper=hyper)
    # Equal to `self.optimizer` for the config's own numbers; the state's structure is the same.
    optimizer = make_optimizer(self.config, hyper)
    grads, (batch_stats, metrics) = jax.grad(loss, has_aux=True)(params, batch_stats, batch)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    metrics["grad_norm"] = _global_norm(grads)
    return params, batch_stats, opt_state, metrics

  # -- The fused iteration -------------------------------------------------------------------------
  def search_config(self, hyper: Hyper | None = None):
    """The self-play search, its traced settings (those of the search section declared
    `traced`: noise and exploration) read from `hyper`."""
    hyper = self.hyper(hyper)
    traced = self.config.component_keys("search", traced=True)
    return self.config.search_config(**{to: getattr(hyper, key) for key, to in traced.items()})

  def cheap_search_config(self, hyper: Hyper | None = None):
    """Playout cap randomisation's cheap search (None when off), noise from `hyper` too."""
    cheap = self.config.cheap_search_config()
    if cheap is None:
      return None
    full = self.search_config(hyper)
    return dataclasses.replace(full, simulations=cheap.simulations,
                               max_num_considered_actions=cheap.max_num_considered_actions)

  def train_on(self, buffer: replay.ReplayBuffer, state: TrainState, sgd_key: chex.Array,
               augment_key: chex.Array, hyper: Hyper | None = None):
    """The iteration's `sgd_steps` updates of `state`'s network on samples from `buffer`, or
    none while the buffer has fewer than `min_buffer` targets.

    Returns `(params, batch_stats, opt_state, metrics, ready)`: the state's own when not
    `ready` (`[]` bool), and then every metric NaN.
    """
    config = self.config
    sgd_step = loop_under_vmap(self.sgd_step) if self.loop_configs else self.sgd_step

    def train(carry):
      # All minibatches are drawn up front (see `replay.sample`), then scanned over.
      batches = replay.sample(buffer, sgd_key, (config.sgd_steps, config.train_batch),
                              replies=config.reply_weight > 0,
                              value_lambda=config.value_lambda,
                              lambda_moves=config.value_lambda_moves)
      if config.augment:
        # Each sample's action arrays under its symmetry: the policy and legal mask, and the
        # opponent's reply and its legal mask when there are.
        names = ("policy", "legal_mask") + (
            ("reply_policy", "reply_legal_mask") if config.reply_weight else ())
        observation, *per_action = augment.random(
            augment_key, self.game, batches.observation, *(getattr(batches, n) for n in names))
        batches = batches._replace(observation=observation, **dict(zip(names, per_action)))
      # Data parallel: each device trains on its share of every minibatch; with parameters
      # replicated, XLA sums the gradients across devices (an all-reduce) by itself.
      batches = sharding.constrain(batches, self.mesh, batch_axis=1)

      def body(c, batch):
        params, batch_stats, opt_state = c
        params, batch_stats, opt_state, metrics = sgd_step(params, batch_stats, opt_state, batch,
                                                           hyper)
        return (params, batch_stats, opt_state), metrics

      unroll = sgd_unroll(config.sgd_steps, convolutional=config.net != "mlp")
      carry, metrics = jax.lax.scan(body, carry, batches, unroll=unroll)
      return carry, jax.tree.map(jnp.mean, metrics)

    # SGD runs unconditionally and its result is discarded until the buffer is ready: a
    # `lax.cond` would put it in a nested computation, where XLA:CPU's convolution gradients
    # are an order of magnitude slower; the waste is a few iterations at the start of a run.
    min_buffer = self.hyper(hyper).min_buffer
    ready = (buffer.num_targets >= jnp.maximum(min_buffer, 1)) & (config.sgd_steps > 0)
    old = (state.params, state.batch_stats, state.opt_state)
    new, metrics = train(old)
    params, batch_stats, opt_state = jax.tree.map(lambda n, o: jnp.where(ready, n, o), new, old)
    metrics = jax.tree.map(lambda m: jnp.where(ready, m, jnp.nan), metrics)
    return params, batch_stats, opt_state, metrics, ready

  def iteration(self, state: TrainState, hyper: Hyper | None = None) -> tuple[TrainState, dict]:
    """Self-play chunk, then `sgd_steps` updates on samples from the buffer (if it is ready).

    Args:
      state: the run's state.
      hyper: hyperparameters as values (traced, e.g. one row of a vmapped sweep); None uses the
        config's numbers as compile-time constants (a single run).
    """
    config = self.config
    key, selfplay_key, sgd_key, _, augment_key = iteration_keys(state.key)

    # -- Self-play with the current network (with gating, `azjax.runs.gating`: the best one so far).
    eval_fn = loop_under_vmap(self.eval_fn) if self.loop_configs else self.eval_fn
    sp, stats = selfplay.play_chunk(self.game, eval_fn, self.search_config(hyper),
                                    self.selfplay_variables(state), state.selfplay,
                                    selfplay_key, config.selfplay_steps,
                                    cheap_config=self.cheap_search_config(hyper),
                                    full_search_prob=config.full_search_prob,
                                    opening_moves=config.opening_moves,
                                    archive_start=config.archive_start)

    # -- K SGD steps, once enough positions have known outcomes. With `overlap_sgd` they sample
    # the buffer as it was before this chunk: self-play and SGD then share no data (self-play
    # reads the parameters the iteration starts with either way), so XLA may run them at once.
    buffer = state.selfplay.buffer if config.overlap_sgd else sp.buffer
    params, batch_stats, opt_state, metrics, ready = self.train_on(
        buffer, state, sgd_key, augment_key, hyper)
    ema_params = state.ema_params
    if config.ema_decay:  # Updated once an iteration, counting the iterations that trained.
      averaged = ema_update(ema_params, params, config.ema_decay,
                            state.sgd_steps // max(config.sgd_steps, 1))
      ema_params = jax.tree.map(lambda n, o: jnp.where(ready, n, o), averaged, ema_params)

    new_state = state.replace(
        params=params, batch_stats=batch_stats, ema_params=ema_params, opt_state=opt_state,
        selfplay=sp, key=key,
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

  def jit_iteration(self, step: Any = None):
    """The iteration (or `step`, a function like it: `azjax.runs.gating.gated`), jitted once; the
    state argument is donated (updated in place).

    With a mesh, the state keeps its shardings from one iteration to the next (the state
    passed in must be placed: `init` and `place` do it) and the metrics come back replicated.
    """
    step = self.iteration if step is None else step
    if self.mesh is None:
      return jax.jit(step, donate_argnums=0)
    shardings = self.state_shardings(jax.eval_shape(self.init_state, 0))
    return jax.jit(step, in_shardings=(shardings,),
                   out_shardings=(shardings, sharding.replicated(self.mesh)),
                   donate_argnums=0)
