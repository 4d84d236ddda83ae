"""Learning curves of runs against perfect play: `python -m experiments.efficiency --help`.

A shim over `azjax.cli.efficiency` (the same command as `azjax efficiency`).
"""

from azjax.cli.efficiency import main

if __name__ == "__main__":
  main()
