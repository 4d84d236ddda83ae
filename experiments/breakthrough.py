"""Train an AlphaZero agent for breakthrough by self-play.

    python -m experiments.breakthrough [--preset auto] [--set k=v]
"""

from experiments._cli import main

if __name__ == "__main__":
  main("breakthrough")
