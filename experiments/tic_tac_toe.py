"""Train an AlphaZero agent for tic_tac_toe by self-play.

    python -m experiments.tic_tac_toe [--preset auto] [--set k=v]
"""

from experiments._cli import main

if __name__ == "__main__":
  main("tic_tac_toe")
