"""Probe a trained network for human concepts: `python -m experiments.probe --help`.

A shim over `azjax.cli.probe` (the same command as `azjax probe`).
"""

from azjax.cli.probe import main

if __name__ == "__main__":
  main()
