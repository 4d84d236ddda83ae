"""Train an AlphaZero agent for checkers by self-play.

    python -m experiments.checkers [--preset auto] [--set k=v]
    azjax train checkers [--preset auto] [--set k=v]          (the same)
"""

from azjax.cli.train import main

if __name__ == "__main__":
  main("checkers")
