"""Trains the TD-Leaf Connect Four run of results/connect_four_tdleaf (30 minutes).

    python -m benchmarks.connect_four_tdleaf --run-dir runs/connect_four_tdleaf

The configuration is `CONFIG`: an MLP evaluation (64 wide, one block) searched by alpha-beta
to depth 3, 64 games an iteration, 16 SGD steps at 0.003.
"""

from __future__ import annotations

import argparse

from azjax import tdleaf


def config():
  """The run's TD-Leaf configuration."""
  return tdleaf.Config(game="connect_four", evaluation="mlp", hidden=64, blocks=1, depth=3,
                       batch=64, max_plies=42, learning_rate=0.003, sgd_steps=16, minutes=30.0,
                       eval_every=0, checkpoint_every=10)


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--run-dir", required=True, help="a new directory for the run")
  args = parser.parse_args(argv)
  tdleaf.train(config(), args.run_dir)


if __name__ == "__main__":
  main()
