"""What a training iteration sharded over many devices sends between them, and how long it takes.

    python -m benchmarks.sharding                    # 8 simulated CPU devices here, all GPUs there
    python -m benchmarks.sharding --buffers 8192,65536 --devices 4

For each replay-buffer size: the compiled iteration's collectives (all-gather, all-reduce, ...)
read off its HLO with the bytes each one's result holds and the operation it came from, those
inside loops (run once per self-play move or search simulation) marked, then the time of one
iteration after compilation, against the same config on one device measured in the same run.
The data-parallel contract (`azjax/sharding.py`) is that self-play talks to no other device:
what grows with the buffer should be nothing but a per-row sampling weight.

On a machine without several devices the script simulates 8 CPU devices
(`--xla_force_host_platform_device_count`); their "communication" is a memory copy, so the times
are only a hint of what a real interconnect would see; the byte counts are the point.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

from azjax import cpu_devices  # (imports no JAX)

if "jax" not in sys.modules:
  # Simulated devices on a CPU-only machine (8, or as many as XLA_FLAGS already asks for), with
  # the thread pool their collectives need; a GPU machine ignores the flag (it is about the host
  # platform), so it is harmless there.
  os.environ.update(cpu_devices.environment(cpu_devices.requested_devices() or 8))

import jax  # noqa: E402  (after XLA_FLAGS)

from azjax import sharding, train  # noqa: E402
from azjax.config import Config  # noqa: E402

BASE = Config(game="breakthrough", game_options={"rows": 6, "cols": 6}, net="resnet",
              channels=16, blocks=1,
              value_hidden=16, simulations=4, selfplay_batch=64, selfplay_steps=4,
              min_buffer=1, train_batch=256, sgd_steps=2)


def time_iteration(config: Config, mesh, iterations: int) -> tuple[float, str]:
  """Seconds of one iteration (best of `iterations`, compilation excluded) and the HLO text."""
  trainer = train.Trainer.create(config, mesh=mesh)
  state = trainer.init()
  step = trainer.jit_iteration().lower(state).compile()  # compiled once: timed and read
  state, _ = jax.block_until_ready(step(state))
  best = float("inf")
  for _ in range(iterations):
    t0 = time.perf_counter()
    state, _ = jax.block_until_ready(step(state))
    best = min(best, time.perf_counter() - t0)
  return best, step.as_text()


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--buffers", default="8192,131072",
                      help="comma-separated replay-buffer sizes (rows)")
  parser.add_argument("--devices", type=int, default=0, help="devices to use (0: all)")
  parser.add_argument("--iterations", type=int, default=3, help="timed iterations (best kept)")
  args = parser.parse_args(argv)
  devices = jax.devices()[:args.devices or None]
  mesh = sharding.make_mesh(devices)
  print(f"# Sharded iteration; {sharding.describe(mesh)}, jax {jax.__version__}; breakthrough 6x6, "
        f"resnet 16x1, self-play {BASE.selfplay_batch} x {BASE.selfplay_steps} moves, "
        f"{BASE.sgd_steps} SGD steps of {BASE.train_batch}\n")
  rows = []
  for size in (int(s) for s in args.buffers.split(",")):
    config = dataclasses.replace(BASE, buffer_size=size)
    alone, _ = time_iteration(config, None, args.iterations)
    sharded, hlo = time_iteration(config, mesh, args.iterations)
    ops = sharding.collectives(hlo)
    loop_bytes = sum(op["bytes"] for op in ops if op["in_loop"])
    once_bytes = sum(op["bytes"] for op in ops if not op["in_loop"])
    largest = max(ops, key=lambda op: op["bytes"], default=None)
    rows.append((size, len(ops), loop_bytes, once_bytes, largest, alone, sharded))
    print(f"buffer {size}: collectives", flush=True)
    for op in sorted(ops, key=lambda op: -op["bytes"])[:8]:
      print(f"  {op['kind']:<18} {op['shape']:<28} {op['bytes']:>12,d} B  "
            f"{'loop ' if op['in_loop'] else 'once '} {op['source'][-70:]}")
  print("\n| buffer rows | collectives | bytes, ops in loops (per run of the loop) | bytes, "
        "other ops | largest | 1 device (s) | sharded (s) | sharded / 1 device |")
  print("|---|---|---|---|---|---|---|---|")
  for size, count, loop_bytes, once_bytes, largest, alone, sharded in rows:
    big = f"{largest['kind']} {largest['shape']}" if largest else ""
    print(f"| {size:,d} | {count} | {loop_bytes:,d} | {once_bytes:,d} | {big} | {alone:.3f} "
          f"| {sharded:.3f} | {sharded / alone:.2f} |")


if __name__ == "__main__":
  main()
