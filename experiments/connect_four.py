"""Train an AlphaZero agent for connect_four by self-play.

    python -m experiments.connect_four [--preset auto] [--set k=v]
    azjax train connect_four [--preset auto] [--set k=v]          (the same)
"""

from azjax.cli.train import main

if __name__ == "__main__":
  main("connect_four")
