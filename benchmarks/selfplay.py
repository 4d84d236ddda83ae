"""Self-play and training throughput, with pgx + mctx on pgx's Connect Four as the peer.

    python -m benchmarks.selfplay                       # settings chosen by the backend
    python -m benchmarks.selfplay --setting gpu         # pgx AlphaZero example's settings
    python -m benchmarks.selfplay --setting cpu         # the CPU preset's settings

For each game: self-play positions/s and network evaluations/s (one per simulation plus the
root) of `selfplay.play_chunk`, and training samples/s of the SGD step; then the same search
settings and the same Flax network through pgx's `connect_four` and a plain mctx loop written
the way pgx's AlphaZero example writes it (vmapped `env.step` in the recurrent function, auto
reset). Compile time is excluded; each figure is the best of 3 timed calls.
"""

from __future__ import annotations

import argparse
import dataclasses

import jax
import jax.numpy as jnp
import mctx

from azjax import config as config_lib
from azjax import nets, replay, selfplay
from azjax.train import Trainer
from benchmarks.timing import best_time

SETTINGS = {
    # The pgx AlphaZero example: ResNet 128 x 6, Gumbel with 32 simulations.
    "gpu": dict(net="resnet", channels=128, blocks=6, simulations=32, selfplay_steps=16,
                train_batch=4096, sgd_steps=8, batches=(1024, 4096)),
    # The CPU preset (Breakthrough 6x6 on 2 cores).
    "cpu": dict(net="resnet", channels=32, blocks=3, simulations=16, selfplay_steps=8,
                train_batch=256, sgd_steps=8, batches=(128,)),
}
GAMES = {"breakthrough": dict(game="breakthrough", game_options={"rows": 8, "cols": 8}),
         "breakthrough_6x6": dict(game="breakthrough", game_options={"rows": 6, "cols": 6}),
         "checkers": dict(game="checkers"),
         "connect_four": dict(game="connect_four")}


def azjax_rates(game: str, setting: dict, batch: int, dtype: str) -> dict[str, float]:
  config = dataclasses.replace(
      config_lib.Config(), **GAMES[game], net=setting["net"], channels=setting["channels"],
      blocks=setting["blocks"], simulations=setting["simulations"],
      selfplay_batch=batch, selfplay_steps=setting["selfplay_steps"],
      buffer_size=batch * setting["selfplay_steps"] * 2, min_buffer=0,
      train_batch=setting["train_batch"], sgd_steps=setting["sgd_steps"],
      policy_head="dense" if game == "connect_four" else "conv", compute_dtype=dtype)
  trainer = Trainer.create(config)
  state = trainer.init()
  variables = trainer.variables(state)
  steps = config.selfplay_steps

  @jax.jit
  def chunk(sp, key):
    return selfplay.play_chunk(trainer.game, trainer.eval_fn, config.search_config(), variables,
                               sp, key, steps)[0]

  seconds, sp = best_time(chunk, state.selfplay, jax.random.PRNGKey(1))
  positions = batch * steps / seconds

  batches = replay.sample(sp.buffer, jax.random.PRNGKey(2), (config.sgd_steps, config.train_batch))
  unroll = config.sgd_steps if jax.default_backend() == "cpu" else 1

  @jax.jit
  def sgd(params, batch_stats, opt_state):
    def body(carry, batch):
      return trainer.sgd_step(*carry, batch)[:3], None
    return jax.lax.scan(body, (params, batch_stats, opt_state), batches, unroll=unroll)[0]

  train_seconds, _ = best_time(sgd, state.params, state.batch_stats, state.opt_state)
  return {"positions/s": positions,
          "evaluations/s": positions * (config.simulations + 1),
          "train samples/s": config.sgd_steps * config.train_batch / train_seconds}


def pgx_rates(setting: dict, batch: int, dtype: str) -> dict[str, float] | None:
  """pgx's connect_four with mctx's Gumbel MuZero, the same Flax network and simulations."""
  try:
    import pgx
  except ImportError:
    return None
  env = pgx.make("connect_four")
  model = nets.make(nets.NetConfig(kind=setting["net"], channels=setting["channels"],
                                   blocks=setting["blocks"], dtype=dtype), env.num_actions)
  variables = nets.init_variables(model, jax.random.key(0), env.observation_shape)

  def forward(obs, mask):
    logits, value = model.apply(variables, obs.astype(jnp.float32), train=False)
    return nets.mask_logits(logits, mask), value

  def recurrent_fn(params, key, action, state):
    del params, key
    player = state.current_player
    state = jax.vmap(env.step)(state, action)
    logits, value = forward(state.observation, state.legal_action_mask)
    reward = state.rewards[jnp.arange(state.rewards.shape[0]), player]
    value = jnp.where(state.terminated, 0.0, value)
    discount = jnp.where(state.terminated, 0.0, -1.0)
    return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits,
                                  value=value), state

  steps = setting["selfplay_steps"]

  @jax.jit
  def chunk(state, key):
    def body(state, key):
      search_key, reset_key = jax.random.split(key)
      logits, value = forward(state.observation, state.legal_action_mask)
      root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
      out = mctx.gumbel_muzero_policy(None, search_key, root, recurrent_fn,
                                      num_simulations=setting["simulations"],
                                      invalid_actions=~state.legal_action_mask)
      state = jax.vmap(env.step)(state, out.action)
      fresh = jax.vmap(env.init)(jax.random.split(reset_key, batch))
      done = state.terminated | state.truncated
      state = jax.tree.map(lambda f, s: jnp.where(done.reshape((-1,) + (1,) * (s.ndim - 1)), f, s),
                           fresh, state)
      return state, out.action_weights.sum()
    return jax.lax.scan(body, state, jax.random.split(key, steps))[0]

  state = jax.vmap(env.init)(jax.random.split(jax.random.key(0), batch))
  seconds, _ = best_time(chunk, state, jax.random.key(1))
  positions = batch * steps / seconds
  return {"positions/s": positions, "evaluations/s": positions * (setting["simulations"] + 1)}


def _fmt(x: float | None) -> str:
  if x is None:
    return "n/a"
  return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  default = "gpu" if jax.default_backend() == "gpu" else "cpu"
  parser.add_argument("--setting", choices=sorted(SETTINGS), default=default)
  parser.add_argument("--games", default=None, help="comma-separated; default by setting")
  parser.add_argument("--dtypes", default=None, help="float32,bfloat16")
  args = parser.parse_args(argv)
  setting = SETTINGS[args.setting]
  games = (args.games.split(",") if args.games else
           ["breakthrough", "connect_four"] if args.setting == "gpu" else
           ["breakthrough_6x6", "connect_four"])
  dtypes = (args.dtypes.split(",") if args.dtypes else
            ["float32", "bfloat16"] if args.setting == "gpu" else ["float32"])
  print(f"# Self-play and training throughput; setting {args.setting} "
        f"({setting['net']} {setting['channels']}x{setting['blocks']}, Gumbel "
        f"{setting['simulations']} simulations); backend {jax.default_backend()} "
        f"({jax.devices()[0].device_kind}), jax {jax.__version__}")
  print("| game | batch | dtype | azjax positions/s | network evals/s | train samples/s "
        "| pgx+mctx positions/s | azjax / pgx |")
  print("|---|---|---|---|---|---|---|---|")
  for game in games:
    for batch in setting["batches"]:
      for dtype in dtypes:
        ours = azjax_rates(game, setting, batch, dtype)
        peer = pgx_rates(setting, batch, dtype) if game == "connect_four" else None
        ratio = f"{ours['positions/s'] / peer['positions/s']:.2f}x" if peer else "-"
        print(f"| {game} | {batch} | {dtype} | {_fmt(ours['positions/s'])} "
              f"| {_fmt(ours['evaluations/s'])} | {_fmt(ours['train samples/s'])} "
              f"| {_fmt(peer['positions/s']) if peer else '-'} | {ratio} |", flush=True)


if __name__ == "__main__":
  main()
