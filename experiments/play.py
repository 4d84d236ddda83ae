"""Play against an agent in the terminal or in a browser, or watch two agents play.

    python -m experiments.play --help

A thin shim over `azjax.play.main` (the same command as `azjax play`).
"""

import sys

from azjax.play.main import main

if __name__ == "__main__":
  sys.exit(main())
