"""Slider: TD-Leaf(lambda) or AlphaZero (`azjax.cli.slider`).

    python -m experiments.slider --algorithm tdleaf --minutes 60
"""

from azjax.cli.slider import main

if __name__ == "__main__":
  main()
