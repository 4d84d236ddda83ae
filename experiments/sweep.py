"""Train a grid of configurations (a hyperparameter sweep): `python -m experiments.sweep --help`.

A shim over `azjax.cli.sweep` (the same command as `azjax sweep`).
"""

from azjax.cli.sweep import main

if __name__ == "__main__":
  main()
