"""Train an AlphaZero agent for breakthrough by self-play.

    python -m experiments.breakthrough [--preset auto] [--set k=v]
    azjax train breakthrough [--preset auto] [--set k=v]          (the same)
"""

from azjax.cli.train import main

if __name__ == "__main__":
  main("breakthrough")
