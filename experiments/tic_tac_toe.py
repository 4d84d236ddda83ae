"""Train an AlphaZero agent for tic_tac_toe by self-play.

    python -m experiments.tic_tac_toe [--preset auto] [--set k=v]
    azjax train tic_tac_toe [--preset auto] [--set k=v]          (the same)
"""

from azjax.cli.train import main

if __name__ == "__main__":
  main("tic_tac_toe")
