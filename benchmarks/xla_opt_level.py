"""CPU time to compile, and to run, a tiny training iteration at XLA's backend optimisation levels.

    python -m benchmarks.xla_opt_level    # tic-tac-toe MLP, levels 3 (XLA's default), 2, 0

Why `tests/conftest.py` sets `--xla_backend_optimization_level=0`: tests compile far more than
they run. Each level is measured in a fresh Python process (XLA reads `XLA_FLAGS` once), on the
tiny MLP configuration of `tests/test_train.py`; times are the process's CPU seconds (user +
system), so a busy machine changes them less than wall-clock ones. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

# Run in the child process: the configuration of tests/test_train.py's TINY.
CHILD = """
import json, resource, sys
import jax
jax.config.update("jax_threefry_partitionable", False)
from azjax import train
from azjax.config import Config

def cpu():
  r = resource.getrusage(resource.RUSAGE_SELF)
  return r.ru_utime + r.ru_stime

config = Config(game=sys.argv[1], net="mlp", hidden=32, blocks=1, value_hidden=16, simulations=8,
                selfplay_batch=16, selfplay_steps=6, buffer_size=512, min_buffer=1,
                train_batch=32, sgd_steps=2, iterations=4)
trainer = train.Trainer.create(config)
state, step = trainer.init(), trainer.jit_iteration()
t0 = cpu(); lowered = step.lower(state); t1 = cpu(); compiled = lowered.compile(); t2 = cpu()
state, _ = compiled(state); jax.block_until_ready(state); t3 = cpu()
for _ in range(5):
  state, _ = compiled(state)
jax.block_until_ready(state); t4 = cpu()
print(json.dumps({"trace": t1 - t0, "compile": t2 - t1, "run5": t4 - t3}))
"""


def measure(game: str, level: int) -> dict:
  flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_backend_optimization_level={level}".strip()
  out = subprocess.run([sys.executable, "-c", CHILD, game], env=dict(os.environ, XLA_FLAGS=flags),
                       capture_output=True, text=True, check=True).stdout
  return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--game", default="tic_tac_toe")
  parser.add_argument("--levels", default="3,2,0", help="comma-separated optimisation levels")
  args = parser.parse_args(argv)
  print(f"# {args.game} MLP training iteration (tests/test_train.py's TINY), CPU seconds")
  print("| level | trace | compile | 5 iterations |")
  print("|---|---|---|---|")
  for level in (int(x) for x in args.levels.split(",")):
    r = measure(args.game, level)
    print(f"| {level} | {r['trace']:.2f} | {r['compile']:.2f} | {r['run5']:.3f} |")


if __name__ == "__main__":
  main()
