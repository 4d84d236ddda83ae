"""Train an AlphaZero agent for checkers by self-play.

    python -m experiments.checkers [--preset auto] [--set k=v]
"""

from experiments._cli import main

if __name__ == "__main__":
  main("checkers")
