"""Seconds per training iteration of a preset with some fields changed.

    python -m benchmarks.time_iteration \\
        "net='resnet',channels=32,blocks=3" \\
        "net='resnet',channels=32,blocks=3,sgd_steps=0,lr_schedule='constant'" \\
        "net='resnet',channels=32,blocks=3,simulations=8" "net='resnet',channels=48,blocks=3" \\
        "net='resnet',channels=32,blocks=5" "net='mlp',hidden=256,blocks=2" \\
        "net='mlp',hidden=512,blocks=3"

Each argument is a list of `field=value` replacements of the preset (`--preset NAME`, default
`connect_four`; with `min_buffer=1`, so SGD runs from the first iteration). Each configuration
compiles its fused iteration, runs `--warmup` (4) warm-up iterations, then times
`--iterations` (8); the mean is printed. Breakthrough 8x8's table
(`results/efficiency/breakthrough8/time_iteration.md`) came from `--preset breakthrough8_cpu
--warmup 2 --iterations 4 ...`.

`--devices N` splits each iteration over N CPU devices (`--xla_force_host_platform_device_count`,
the data-parallel path of `azjax/sharding.py`) instead of running it on one: whether a second
core is better used that way (on a 2-core machine it was not, docs/efficiency.md session 27).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

from azjax import cpu_devices  # (imports no JAX: devices are set before JAX starts)


def seconds_per_iteration(config, iterations: int = 8, warmup: int = 4, devices: int = 1) -> float:
  import jax

  from azjax import sharding
  from azjax.train import Trainer

  if devices > len(jax.devices()):
    raise SystemExit(f"--devices {devices}: JAX sees {len(jax.devices())} devices")
  mesh = sharding.make_mesh(jax.devices()[:devices]) if devices > 1 else None
  trainer = Trainer.create(config, mesh=mesh)
  state = trainer.init()
  step = trainer.jit_iteration()
  for _ in range(warmup):
    state, _ = step(state)
  jax.block_until_ready(state)
  start = time.perf_counter()
  for _ in range(iterations):
    state, _ = step(state)
  jax.block_until_ready(state)
  return (time.perf_counter() - start) / iterations


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("changes", nargs="+", help="field=value,... replacements of the preset")
  parser.add_argument("--preset", default="connect_four")
  parser.add_argument("--warmup", type=int, default=4)
  parser.add_argument("--iterations", type=int, default=8)
  parser.add_argument("--devices", type=int, default=1,
                      help="split each iteration over this many CPU devices")
  args = parser.parse_args(argv)
  # The host device count is fixed when JAX starts, so it is set before the first import.
  if args.devices > 1:
    if "jax" in sys.modules:
      raise SystemExit("--devices: run as python -m benchmarks.time_iteration (JAX has started)")
    os.environ.update(cpu_devices.environment(args.devices))
  from azjax.config.presets import preset

  base = dataclasses.replace(preset(args.preset), min_buffer=1)
  print(f"| changes to the {args.preset} preset | seconds an iteration |\n|---|---|")
  for arg in args.changes:
    changes = eval(f"dict({arg})")  # noqa: S307 - a command-line list of field=value pairs
    seconds = seconds_per_iteration(dataclasses.replace(base, **changes), args.iterations,
                                    args.warmup, args.devices)
    print(f"| {arg} | {seconds:.3f} |", flush=True)


if __name__ == "__main__":
  main()
