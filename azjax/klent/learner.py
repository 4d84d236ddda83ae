"""KLENT's learner: search-free self-play, the regularised targets, SGD on a device buffer, in
one jitted `iteration(state) -> (state, metrics)` (as `azjax.train.Trainer.iteration` is).

One iteration:

1. Self-play: `selfplay_steps` plies in each of the `B = selfplay_batch` games, each move drawn
   from the policy network's masked softmax (no search). The policy network also gives V(s)
   and the Q network Q(s, .) of every position, from the mover's side, with the parameters the
   iteration starts with (the previous policy pi_k).
2. Value targets, per ply (`azjax.klent.targets.lambda_returns`): the lambda-return G_t,
   bootstrapped from V of the position each game reached at the chunk's end (a game that
   ended cuts it at its result).
3. The `T * B` samples (observation, legal mask, action, G) overwrite the buffer's oldest.
4. `sgd_steps` Adam(W) steps on uniform samples of the buffer (once it holds `min_buffer`):
   the policy's cross-entropy to the regularised target pi' (`targets.policy_target`),
   `value_weight * (V(s) - G)^2` and `q_weight * (Q(s, a) - G)^2` for the action played.
   pi' is computed for each sampled position from pi_k and Q_k, the two networks as the
   iteration started: the update is regularised towards the policy it improves on (the
   previous iterate), not towards whichever older policy played the sample; targets stored
   with the samples would pull the policy back towards the buffer's past.

The policy network is an ordinary `azjax.nets` (logits, value) network: its value head, trained
on the same lambda-returns, is the value `azjax.search` needs, so a KLENT network can be played
raw or searched like an AlphaZero one. The Q network is a second network of the same kind whose
`A` logits, through tanh, are the action values; it is used in training only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import optax

from azjax import nets, selfplay, train
from azjax.klent import targets
from azjax.klent.config import KlentConfig

Array = jax.Array


class Samples(NamedTuple):
  """The device buffer: `N = buffer_size` rows (unwritten rows are never sampled)."""

  observation: Array  # [N, R, C, P] float32, the mover's view
  legal_mask: Array  # [N, A] bool
  action: Array  # [N] int32, the move played
  ret: Array  # [N] float32, the lambda-return G from the mover's side


@chex.dataclass(frozen=True)
class KlentState:
  """Everything that changes in a run: a checkpoint of it resumes the same run exactly."""

  params: Any  # the policy network's params (the network that is played)
  batch_stats: Any  # its BatchNorm statistics ({} without BatchNorm)
  q_params: Any  # the Q network's
  q_batch_stats: Any
  opt_state: Any  # one Adam(W) state over {"policy": params, "q": q_params}
  games: Any  # [B] the games in play (a batched game State)
  buffer: Samples
  written: Array  # [] int32, samples written so far (the buffer holds min(written, N))
  key: Array  # raw uint32 PRNG key (a plain array in checkpoints)
  iteration: Array  # [] int32
  sgd_steps: Array  # [] int32, optimizer updates applied so far
  positions: Array  # [] int32, self-play positions played so far
  games_finished: Array  # [] int32


class Plies(NamedTuple):
  """One chunk of self-play, `[T, B]` unless noted."""

  observation: Array  # [T, B, R, C, P]
  legal_mask: Array  # [T, B, A]
  action: Array  # int32
  log_pi: Array  # [T, B, A] the policy's masked log-softmax
  q: Array  # [T, B, A] Q(s, .) from the mover's side
  value: Array  # V(s), mover's side
  reward: Array  # the move's reward to its mover
  player0_reward: Array  # the move's reward to player 0 (for the metrics)
  done: Array  # bool: the move ended the game
  flip: Array  # bool: the next position's mover is the other player


# optax renamed tree_l2_norm to tree_norm in 0.2.5 (as `azjax.train` does, support both).
_norm = getattr(optax.tree_utils, "tree_norm", None) or optax.tree_utils.tree_l2_norm


def _variables(params: Any, batch_stats: Any) -> dict:
  return {"params": params, **({"batch_stats": batch_stats} if batch_stats else {})}


class Learner:
  """The static parts of a KLENT run (game, networks, optimizer) and its jitted iteration."""

  def __init__(self, config: KlentConfig):
    self.config = config.validate()
    self.game = config.make_env()
    self.model = nets.make(config.net_config(), self.game.num_actions)
    self.optimizer = optax.adamw(config.learning_rate, weight_decay=config.weight_decay)
    self.iteration = jax.jit(self._iteration, donate_argnums=0)

  # -- Networks ---------------------------------------------------------------------------------

  def eval_fn(self, variables: Any, observation: Array) -> tuple[Array, Array]:
    """The policy network in inference mode: `[B, R, C, P] -> (logits [B, A], value [B])`,
    the (network, value) pair `azjax.search` and the evaluation players take."""
    return self.model.apply(variables, observation, train=False)

  def q_values(self, variables: Any, observation: Array) -> Array:
    """`[B, A]` Q(s, .) in (-1, 1) from the mover's side: the Q network's logits through tanh."""
    return jnp.tanh(self.model.apply(variables, observation, train=False)[0])

  @staticmethod
  def variables(state: KlentState) -> dict:
    """The policy network's variables (what is played, snapshotted and evaluated)."""
    return _variables(state.params, state.batch_stats)

  # -- Initial state ----------------------------------------------------------------------------

  def init(self, seed: int | None = None) -> KlentState:
    config = self.config
    key = jax.random.PRNGKey(config.seed if seed is None else seed)
    key, policy_key, q_key, games_key = jax.random.split(key, 4)
    shape = self.game.observation_shape
    policy = nets.init_variables(self.model, policy_key, shape)
    q = nets.init_variables(self.model, q_key, shape)
    params, q_params = policy["params"], q["params"]
    n, a = config.buffer_size, self.game.num_actions
    buffer = Samples(observation=jnp.zeros((n, *shape), jnp.float32),
                     legal_mask=jnp.zeros((n, a), bool), action=jnp.zeros(n, jnp.int32),
                     ret=jnp.zeros(n, jnp.float32))
    return KlentState(
        params=params, batch_stats=policy.get("batch_stats", {}), q_params=q_params,
        q_batch_stats=q.get("batch_stats", {}),
        opt_state=self.optimizer.init({"policy": params, "q": q_params}),
        games=selfplay.fresh_games(self.game, games_key, config.selfplay_batch),
        buffer=buffer, written=jnp.int32(0), key=key, iteration=jnp.int32(0),
        sgd_steps=jnp.int32(0), positions=jnp.int32(0), games_finished=jnp.int32(0))

  # -- Self-play --------------------------------------------------------------------------------

  def play(self, state: KlentState, key: Array) -> tuple[Any, Plies, Array]:
    """`(games, plies, bootstrap)`: `selfplay_steps` plies of every game with moves drawn from
    the policy, and `[B]` V of the positions reached (the lambda-returns' bootstrap)."""
    game = self.game
    policy_vars = self.variables(state)
    q_vars = _variables(state.q_params, state.q_batch_stats)

    def ply(games, key):
      move_key, restart_key = jax.random.split(key)
      obs, legal = games.observation, games.legal_action_mask
      logits, value = self.eval_fn(policy_vars, obs)
      log_pi = nets.masked_log_softmax(logits, legal)
      # Every slot holds a live game (ended ones restart at once), so some action is legal.
      action = jax.random.categorical(move_key, log_pi).astype(jnp.int32)
      mover = games.current_player
      after = jax.vmap(game.step)(games, action)
      rows = jnp.arange(action.shape[0])
      record = Plies(
          observation=obs.astype(jnp.float32), legal_mask=legal, action=action, log_pi=log_pi,
          q=self.q_values(q_vars, obs), value=value, reward=after.rewards[rows, mover],
          player0_reward=after.rewards[:, 0], done=after.terminated,
          flip=after.current_player != mover)
      return selfplay.restart_ended(game, after, restart_key), record

    games, plies = jax.lax.scan(ply, state.games,
                                jax.random.split(key, self.config.selfplay_steps))
    _, bootstrap = self.eval_fn(policy_vars, games.observation)
    return games, plies, bootstrap

  def chunk_returns(self, plies: Plies, bootstrap: Array) -> Array:
    """`[T, B]` the lambda-returns of a chunk, each from its ply's mover's side."""
    config = self.config
    return targets.lambda_returns(plies.value, plies.reward, plies.done, plies.flip, bootstrap,
                                  td_lambda=config.td_lambda, discount=config.discount)

  def target_policy(self, policy_vars: Any, q_vars: Any, observation: Array,
                    legal_mask: Array) -> Array:
    """`[b, A]` pi' of `[b]` positions from the policy `policy_vars` and the Q network
    `q_vars` (constants of the loss: no gradient flows into them)."""
    logits, _ = self.eval_fn(policy_vars, observation)
    q = self.q_values(q_vars, observation)
    config = self.config
    policy = targets.policy_target(nets.masked_log_softmax(logits, legal_mask), q, legal_mask,
                                   alpha=config.alpha, beta=config.beta)
    return jax.lax.stop_gradient(policy)

  # -- Loss and SGD -----------------------------------------------------------------------------

  def loss(self, params: dict, batch_stats: dict, batch: Samples,
           target_policy: Array) -> tuple[Array, tuple]:
    """The mean loss of a `[b]` batch and `(new batch_stats, terms)`.

    `params`, `batch_stats`: `{"policy": ..., "q": ...}`; `target_policy`: `[b, A]` pi'.
    """
    def apply(name):
      variables = _variables(params[name], batch_stats[name])
      if batch_stats[name]:
        out, updates = self.model.apply(variables, batch.observation, train=True,
                                        mutable=["batch_stats"])
        return out, updates["batch_stats"]
      return self.model.apply(variables, batch.observation, train=True), {}

    (logits, value), policy_stats = apply("policy")
    (q_logits, _), q_stats = apply("q")
    policy_loss = train.cross_entropy(logits, target_policy, batch.legal_mask)
    value_loss = jnp.square(value - batch.ret)
    q_taken = jnp.take_along_axis(jnp.tanh(q_logits), batch.action[:, None], axis=1)[:, 0]
    q_loss = jnp.square(q_taken - batch.ret)
    config = self.config
    total = jnp.mean(policy_loss + config.value_weight * value_loss + config.q_weight * q_loss)
    terms = {"policy_loss": jnp.mean(policy_loss), "value_loss": jnp.mean(value_loss),
             "q_loss": jnp.mean(q_loss)}
    return total, ({"policy": policy_stats, "q": q_stats}, terms)

  def sgd(self, state: KlentState, key: Array) -> tuple[KlentState, dict, Array]:
    """`sgd_steps` updates on uniform samples of the buffer's filled rows; none (and NaN
    metrics) until it holds `min_buffer` samples."""
    config = self.config
    filled = jnp.minimum(state.written, config.buffer_size)
    rows = jax.random.randint(key, (config.sgd_steps, config.train_batch), 0,
                              jnp.maximum(filled, 1))
    params = {"policy": state.params, "q": state.q_params}
    batch_stats = {"policy": state.batch_stats, "q": state.q_batch_stats}
    previous = self.variables(state), _variables(state.q_params, state.q_batch_stats)

    def step(carry, idx):
      params, batch_stats, opt_state = carry
      batch = jax.tree.map(lambda x: x[idx], state.buffer)
      target_policy = self.target_policy(*previous, batch.observation, batch.legal_mask)
      (total, (batch_stats, terms)), grads = jax.value_and_grad(self.loss, has_aux=True)(
          params, batch_stats, batch, target_policy)
      updates, opt_state = self.optimizer.update(grads, opt_state, params)
      return (optax.apply_updates(params, updates), batch_stats, opt_state), {
          "loss": total, "grad_norm": _norm(grads), **terms}

    old = (params, batch_stats, state.opt_state)
    new, metrics = jax.lax.scan(step, old, rows,
                                unroll=train.sgd_unroll(config.sgd_steps,
                                                        convolutional=config.net != "mlp"))
    # As in `Trainer.train_on`: SGD runs unconditionally and is discarded until the buffer is
    # ready (a `lax.cond` nests the computation, which XLA:CPU runs slower).
    ready = (filled >= jnp.maximum(config.min_buffer, 1)) & (config.sgd_steps > 0)
    params, batch_stats, opt_state = jax.tree.map(lambda n, o: jnp.where(ready, n, o), new, old)
    metrics = {k: jnp.where(ready, jnp.mean(v), jnp.nan) for k, v in metrics.items()}
    state = state.replace(params=params["policy"], q_params=params["q"],
                          batch_stats=batch_stats["policy"], q_batch_stats=batch_stats["q"],
                          opt_state=opt_state)
    return state, metrics, ready

  # -- The iteration ----------------------------------------------------------------------------

  def _iteration(self, state: KlentState) -> tuple[KlentState, dict]:
    config = self.config
    key, play_key, sgd_key = jax.random.split(state.key, 3)

    # -- Self-play with the current policy, no search.
    games, plies, bootstrap = self.play(state, play_key)

    # -- Value targets: lambda-returns bootstrapped from V_k. (pi' is computed at SGD time.)
    returns = self.chunk_returns(plies, bootstrap)

    # -- Into the buffer, over its oldest rows.
    def flat(x):
      return x.reshape((-1,) + x.shape[2:])

    new = Samples(observation=flat(plies.observation), legal_mask=flat(plies.legal_mask),
                  action=flat(plies.action), ret=flat(returns))
    count = new.action.shape[0]
    rows = (state.written + jnp.arange(count)) % config.buffer_size
    buffer = jax.tree.map(lambda b, n: b.at[rows].set(n), state.buffer, new)
    state = state.replace(buffer=buffer, written=state.written + count, games=games)

    # -- K SGD steps.
    state, metrics, ready = self.sgd(state, sgd_key)

    finished = jnp.sum(plies.done)
    per_game = jnp.maximum(finished, 1)
    pi = jnp.exp(plies.log_pi)
    legal = plies.legal_mask
    entropy = -jnp.sum(jnp.where(legal, pi * plies.log_pi, 0.0), axis=-1)
    # How far this chunk's pi' moves from pi_k: KL(pi' || pi_k) over the positions played.
    policy = targets.policy_target(plies.log_pi, plies.q, legal, alpha=config.alpha,
                                   beta=config.beta)
    log_target = jnp.log(jnp.maximum(policy, 1e-30))
    target_kl = jnp.sum(jnp.where(legal & (policy > 0), policy * (log_target - plies.log_pi),
                                  0.0), axis=-1)
    metrics.update(
        trained=ready, games_finished=finished,
        mean_game_length=count / per_game,  # plies per finished game in this chunk
        first_player_win_rate=jnp.sum(plies.done & (plies.player0_reward > 0)) / per_game,
        draw_rate=jnp.sum(plies.done & (plies.reward == 0)) / per_game,
        policy_entropy=jnp.mean(entropy), target_kl=jnp.mean(target_kl),
        mean_abs_return=jnp.mean(jnp.abs(returns)), buffer_targets=jnp.minimum(
            state.written, config.buffer_size))
    state = state.replace(iteration=state.iteration + 1,
                          sgd_steps=state.sgd_steps + jnp.where(ready, config.sgd_steps, 0),
                          positions=state.positions + count,
                          games_finished=state.games_finished + finished)
    return state, metrics
