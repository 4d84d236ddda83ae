"""K configurations trained as one vmapped program against the same K trained one after another.

    python -m benchmarks.sweep                      # settings chosen by the backend
    python -m benchmarks.sweep --setting gpu        # Breakthrough 8x8, ResNet 64x4, batch 256
    python -m benchmarks.sweep --setting cpu        # Breakthrough 6x6, ResNet 16x2, batch 32
    python -m benchmarks.sweep --conv xla,matmul    # both convolutions (NetConfig.conv_impl)

The K configurations differ in learning rate and seed (what `python -m experiments.sweep
--grid learning_rate=... --seeds ...` batches). Vmapped: `azjax.sweep.group_program`, one
`jit(vmap(iteration))` over the stacked states. Sequential: K separate runs, each a `Trainer` of
its own config whose iteration is jitted once (`Trainer.jit_iteration`, as
`python -m experiments.<game>` runs it), one after another. Both on the same single device,
for the same number of iterations; the first iteration (compilation included) is timed apart
from the next `--iterations`, which are timed with a device sync after each one as the training
loop does. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from azjax import games, sweep
from azjax.config import Config
from azjax.train import Hyper, Trainer

SETTINGS = {
    # Small enough that 8 copies of the whole state fit on one H100 many times over; large
    # enough that one run alone is a realistic (and underused) GPU workload.
    "gpu": Config(game="breakthrough", game_options={"rows": 8, "cols": 8}, net="resnet",
                  channels=64, blocks=4,
                  policy_head="conv", compute_dtype="bfloat16", simulations=32,
                  selfplay_batch=256, selfplay_steps=16, buffer_size=65536, min_buffer=0,
                  train_batch=512, sgd_steps=16),
    "cpu": Config(game="breakthrough", game_options={"rows": 6, "cols": 6}, net="resnet",
                  channels=16, blocks=2,
                  policy_head="conv", simulations=8, selfplay_batch=32, selfplay_steps=8,
                  buffer_size=4096, min_buffer=0, train_batch=64, sgd_steps=4),
}
ITERATIONS = {"gpu": 10, "cpu": 5}


def configs(base: Config, k: int) -> list[Config]:
  """`k` configs: learning rates log-spaced over [1e-4, 3e-3], seeds 0..k-1."""
  rates = np.geomspace(1e-4, 3e-3, k)
  return [dataclasses.replace(base, learning_rate=float(lr), seed=i)
          for i, lr in enumerate(rates)]


def _timed(fn, *args):
  t0 = time.perf_counter()
  out = fn(*args)
  jax.block_until_ready(out)
  return time.perf_counter() - t0, out


def _group(runs: list[Config]) -> sweep.Group:
  members = [sweep.Run(name=f"learning_rate={c.learning_rate:g},seed={c.seed}",
                       setting=f"learning_rate={c.learning_rate:g}",
                       values={"learning_rate": c.learning_rate, "seed": c.seed}, config=c)
             for c in runs]
  (group,) = sweep.group_runs(members)  # Only batched keys differ: one group.
  return group


def time_vmapped(runs: list[Config], iterations: int, loop_configs: bool) -> dict[str, float]:
  """One jit(vmap(iteration)) over the K stacked runs (`loop_configs`: see azjax.sweep)."""
  group = _group(runs)
  t0 = time.perf_counter()
  program = sweep.group_program(group, loop_configs=loop_configs)
  states = jax.block_until_ready(program.init(jnp.array([c.seed for c in runs], jnp.int32)))
  hyper = sweep.stacked_hyper(group)
  init_seconds = time.perf_counter() - t0
  first, (states, _) = _timed(program.iteration, states, hyper)
  steady = 0.0
  for _ in range(iterations):
    seconds, (states, _) = _timed(program.iteration, states, hyper)
    steady += seconds
  positions = int(np.asarray(states.positions).sum())
  return {"init": init_seconds, "first": first, "steady": steady, "positions": positions,
          "compiles": 1}


def time_sequential(runs: list[Config], iterations: int, compile_each: bool) -> dict[str, float]:
  """The runs one after another, each `iterations + 1` iterations of its own jitted iteration.

  `compile_each`: every run compiles its own program, the config's numbers as constants
  (`Trainer.jit_iteration`, exactly a single run). Otherwise the first run's program, taking the
  numbers as arguments (`iteration(state, hyper)`), is compiled once and reused: the same work
  per iteration, without K compilations (for a short GPU session).
  """
  out = {"init": 0.0, "first": 0.0, "steady": 0.0, "positions": 0,
         "compiles": len(runs) if compile_each else 1}
  shared = None
  for config in runs:
    t0 = time.perf_counter()
    trainer = Trainer.create(config)
    if compile_each:
      step = trainer.jit_iteration()
    else:
      shared = shared or jax.jit(trainer.iteration, donate_argnums=0)
      hyper = Hyper.from_config(config).as_arrays()
      step = lambda state, hyper=hyper: shared(state, hyper)  # noqa: E731
    state = jax.block_until_ready(trainer.init())
    out["init"] += time.perf_counter() - t0
    first, (state, _) = _timed(step, state)
    out["first"] += first
    for _ in range(iterations):
      seconds, (state, _) = _timed(step, state)
      out["steady"] += seconds
    out["positions"] += int(state.positions)
    del state
  return out


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  default = "gpu" if jax.default_backend() == "gpu" else "cpu"
  parser.add_argument("--setting", choices=sorted(SETTINGS), default=default)
  parser.add_argument("--configs", type=int, default=8, help="K")
  parser.add_argument("--iterations", type=int, default=None,
                      help="timed iterations after the first (default by setting)")
  parser.add_argument("--vmap-modes", default="batched,loop",
                      help="vmapped variants to time: batched (jax.vmap's batched "
                      "convolutions), loop (the network one configuration at a time)")
  parser.add_argument("--conv", default="xla",
                      help="comma-separated network convolutions to time (conv_impl): xla "
                      "(lax.conv; vmapped over weights it becomes a grouped convolution), "
                      "matmul (the shifted boards times the flattened kernel)")
  parser.add_argument("--compile", choices=("each", "once"), default=None,
                      help="sequential runs: each compiles its own program (default on a CPU) "
                      "or they share one (default on an accelerator, to save device time)")
  args = parser.parse_args(argv)
  base = SETTINGS[args.setting]
  iterations = args.iterations or ITERATIONS[args.setting]
  compile_each = (args.compile or ("each" if jax.default_backend() == "cpu" else "once")) == "each"
  runs = configs(base, args.configs)
  device = jax.devices()[0]
  print(f"# Sweep: {args.configs} configs vmapped vs one after another; setting {args.setting} "
        f"({games.make(base.game, **base.game_kwargs()).describe()}, {base.net} "
        f"{base.channels}x{base.blocks} "
        f"{base.compute_dtype}, Gumbel {base.simulations} simulations, self-play batch "
        f"{base.selfplay_batch} x {base.selfplay_steps} moves, {base.sgd_steps} SGD steps of "
        f"{base.train_batch}); {iterations} timed iterations each after the first; device "
        f"{device.platform} ({device.device_kind}), jax {jax.__version__}", flush=True)
  rows = []  # (conv, name, timings)
  for conv in args.conv.split(","):
    conv_runs = [dataclasses.replace(c, conv_impl=conv) for c in runs]
    for mode in args.vmap_modes.split(","):
      rows.append((conv, f"vmapped, {mode} (1 program)",
                   time_vmapped(conv_runs, iterations, loop_configs=mode == "loop")))
      print(f"  {conv}, {rows[-1][1]}: {rows[-1][2]['steady']:.2f} s", flush=True)
    sequential = time_sequential(conv_runs, iterations, compile_each)
    name = f"sequential ({args.configs} runs, {sequential['compiles']} compilation"
    rows.append((conv, name + ("s)" if sequential["compiles"] > 1 else ")"), sequential))
    print(f"  {conv}, {rows[-1][1]}: {sequential['steady']:.2f} s", flush=True)
  assert all(r["positions"] == rows[-1][2]["positions"] for _, _, r in rows)
  print(f"| conv | mode | build + init (s) | first iteration, compile included (s) "
        f"| {iterations} iterations (s) | positions/s | total (s) | speed-up, iterations "
        "| speed-up, total | speed-up vs the fastest sequential, iterations |")
  print("|---|---|---|---|---|---|---|---|---|---|")
  total = lambda r: r["init"] + r["first"] + r["steady"]  # noqa: E731
  sequentials = {conv: r for conv, name, r in rows if name.startswith("sequential")}
  fastest = min(r["steady"] for r in sequentials.values())
  for conv, name, r in rows:
    seq = sequentials[conv]
    rate = r["positions"] * iterations / (iterations + 1) / r["steady"]
    print(f"| {conv} | {name} | {r['init']:.1f} | {r['first']:.1f} | {r['steady']:.2f} "
          f"| {rate:,.0f} | {total(r):.1f} | {seq['steady'] / r['steady']:.2f}x "
          f"| {total(seq) / total(r):.2f}x | {fastest / r['steady']:.2f}x |")
  print("\nspeed-up = the same conv's sequential time / this row's time (iterations: "
        "compilation excluded; total: building, initialising and compiling included)")


if __name__ == "__main__":
  main()
