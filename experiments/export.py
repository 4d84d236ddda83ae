"""Export a network and a probing dataset: `python -m experiments.export --help`.

A shim over `azjax.cli.export` (the same command as `azjax export`).
"""

from azjax.cli.export import main

if __name__ == "__main__":
  main()
