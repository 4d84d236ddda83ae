"""Random-play throughput of every game, with OpenSpiel and pgx as peers.

    python -m benchmarks.games [--batches 1,64,1024] [--steps 1000] [--games breakthrough,...]

azjax: `B` games step together (`vmap`), the move loop is one `lax.scan` of `steps` moves with
uniform random legal actions and automatic reset; compile time is excluded (one warm-up call).
pgx (if installed): the same loop over pgx's `connect_four` (and `othello` for reference).
OpenSpiel: its C++ games through pyspiel, one game at a time from Python (`apply_action` on a
random legal action), which is how Python code uses them.
"""

from __future__ import annotations

import argparse
import random
import time

import jax
import jax.numpy as jnp

from azjax import games
from azjax.games import base

GAMES = {
    "breakthrough": ("breakthrough", {}, "breakthrough"),
    "breakthrough_6x6": ("breakthrough", {"rows": 6, "cols": 6},
                         "breakthrough(rows=6,columns=6)"),
    "checkers": ("checkers", {}, "checkers"),
    "connect_four": ("connect_four", {}, "connect_four"),
    "tic_tac_toe": ("tic_tac_toe", {}, "tic_tac_toe"),
}


def time_scan(init_fn, step_fn, mask_fn, terminated_fn, batch: int, steps: int,
              repeats: int = 3) -> float:
  """Steps per second of random play with auto-reset, best of `repeats` timed calls."""

  def body(states, key):
    act_key, reset_key = jax.random.split(key)
    actions = base.uniform_legal_actions(act_key, mask_fn(states))
    stepped = jax.vmap(step_fn)(states, actions)
    fresh = jax.vmap(init_fn)(jax.random.split(reset_key, batch))
    done = terminated_fn(stepped)
    states = jax.tree.map(
        lambda f, s: jnp.where(done.reshape((-1,) + (1,) * (s.ndim - 1)), f, s), fresh, stepped)
    return states, None

  @jax.jit
  def run(states, key):
    return jax.lax.scan(body, states, jax.random.split(key, steps))[0]

  states = jax.vmap(init_fn)(jax.random.split(jax.random.key(0), batch))
  states = jax.block_until_ready(run(states, jax.random.key(1)))  # Compile and warm up.
  best = float("inf")
  for i in range(repeats):
    t0 = time.perf_counter()
    states = jax.block_until_ready(run(states, jax.random.key(2 + i)))
    best = min(best, time.perf_counter() - t0)
  return batch * steps / best


def azjax_rate(name: str, batch: int, steps: int) -> float:
  game_name, kwargs, _ = GAMES[name]
  env = games.make(game_name, **kwargs)
  return time_scan(env.init, env.step, lambda s: s.legal_action_mask, lambda s: s.terminated,
                   batch, steps)


def pgx_rate(env_id: str, batch: int, steps: int) -> float | None:
  try:
    import pgx
  except ImportError:
    return None
  env = pgx.make(env_id)
  return time_scan(env.init, env.step, lambda s: s.legal_action_mask,
                   lambda s: s.terminated | s.truncated, batch, steps)


def openspiel_rate(spec: str, seconds: float = 2.0) -> float | None:
  try:
    import pyspiel
  except ImportError:
    return None
  game = pyspiel.load_game(spec)
  rng = random.Random(0)
  count, t0 = 0, time.perf_counter()
  while time.perf_counter() - t0 < seconds:
    state = game.new_initial_state()
    while not state.is_terminal():
      state.apply_action(rng.choice(state.legal_actions()))
      count += 1
  return count / (time.perf_counter() - t0)


def _fmt(rate: float | None) -> str:
  if rate is None:
    return "n/a"
  return f"{rate / 1e6:.2f}M" if rate >= 1e5 else f"{rate / 1e3:.1f}k"


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  default_batches = "1,64,1024,16384" if jax.default_backend() == "gpu" else "1,64,1024"
  parser.add_argument("--batches", default=default_batches)
  parser.add_argument("--steps", type=int, default=500, help="moves per timed scan")
  parser.add_argument("--games", default=",".join(GAMES))
  args = parser.parse_args(argv)
  batches = [int(b) for b in args.batches.split(",")]
  names = args.games.split(",")
  print(f"# Random-play steps/s; backend {jax.default_backend()} "
        f"({jax.devices()[0].device_kind}), jax {jax.__version__}, {args.steps} moves per scan")
  header = ["game"] + [f"azjax B={b}" for b in batches] + ["OpenSpiel (C++ via Python)",
                                                          f"azjax B={batches[-1]} / OpenSpiel"]
  print("| " + " | ".join(header) + " |")
  print("|" + "---|" * len(header))
  for name in names:
    rates = [azjax_rate(name, b, args.steps if b > 1 else max(args.steps, 2000)) for b in batches]
    peer = openspiel_rate(GAMES[name][2])
    ratio = f"{rates[-1] / peer:.1f}x" if peer else "n/a"
    print("| " + " | ".join([name] + [_fmt(r) for r in rates] + [_fmt(peer), ratio]) + " |",
          flush=True)
  # pgx as the peer for the JAX games.
  pgx_rows = [("connect_four", "connect_four")]
  if "connect_four" in names:
    print()
    header = ["game"] + [f"B={b}: azjax / pgx" for b in batches]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, env_id in pgx_rows:
      cells = []
      for b in batches:
        ours = azjax_rate(name, b, args.steps)
        peer = pgx_rate(env_id, b, args.steps)
        cells.append(f"{_fmt(ours)} / {_fmt(peer)} = {ours / peer:.2f}x" if peer else
                     f"{_fmt(ours)} / n/a")
      print("| " + " | ".join([name] + cells) + " |", flush=True)


if __name__ == "__main__":
  main()
