"""Seconds per training iteration of the Connect Four preset with some fields changed.

    python results/efficiency/connect_four/mlp/time_iteration.py \\
        "net='resnet',channels=32,blocks=3" "net='resnet',channels=32,blocks=3,sgd_steps=0,lr_schedule='constant'" \\
        "net='resnet',channels=32,blocks=3,simulations=8" "net='resnet',channels=48,blocks=3" \\
        "net='resnet',channels=32,blocks=5" "net='mlp',hidden=256,blocks=2" "net='mlp',hidden=512,blocks=3"

Each argument is a list of `field=value` replacements of `azjax.config.preset("connect_four")`
(with `min_buffer=1`, so SGD runs from the first iteration). Each configuration compiles its
fused iteration, runs 4 warm-up iterations, then times 8; the mean is printed.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import jax

from azjax.config.presets import preset
from azjax.train import Trainer


def seconds_per_iteration(config, iterations: int = 8) -> float:
  trainer = Trainer.create(config)
  state = trainer.init()
  step = trainer.jit_iteration()
  for _ in range(4):
    state, _ = step(state)
  jax.block_until_ready(state)
  start = time.perf_counter()
  for _ in range(iterations):
    state, _ = step(state)
  jax.block_until_ready(state)
  return (time.perf_counter() - start) / iterations


def main() -> None:
  base = dataclasses.replace(preset("connect_four"), min_buffer=1)
  print("| changes to the preset | seconds an iteration |\n|---|---|")
  for arg in sys.argv[1:]:
    changes = eval(f"dict({arg})")  # noqa: S307 - a command-line list of field=value pairs
    print(f"| {arg} | {seconds_per_iteration(dataclasses.replace(base, **changes)):.3f} |",
          flush=True)


if __name__ == "__main__":
  main()
