"""TD-Leaf(lambda) on any game with an evaluation (`azjax.cli.tdleaf`).

    python -m experiments.tdleaf connect_four --set evaluation=mlp --minutes 30
"""

from azjax.cli.tdleaf import main

if __name__ == "__main__":
  main()
