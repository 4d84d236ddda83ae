"""Play against an agent in the terminal or in a browser, or watch two agents play.

    python -m experiments.play --help

A thin shim over `azjax.cli.play` (the same command as `azjax play`).
"""

import sys

from azjax.cli.play import main

if __name__ == "__main__":
  sys.exit(main())
