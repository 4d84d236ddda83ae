"""Evaluate a trained agent against baselines: `python -m experiments.evaluate --help`.

A shim over `azjax.cli.evaluate` (the same command as `azjax evaluate`).
"""

from azjax.cli.evaluate import main

if __name__ == "__main__":
  main()
