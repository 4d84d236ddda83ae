"""The one tiny training configuration of the tests, shared so that its programs compile once.

`TINY` trains tic-tac-toe in about a second an iteration on a CPU. A test that needs another
setting replaces it (`dataclasses.replace(TINY, iterations=6)`): settings that do not shape a
program (iterations, checkpointing, evaluation counts, the seed) keep every compiled program
shared through the tests' compile cache (tests/conftest.py). `config(game)` gives the same
network and search sizes for the other games the tests train (`GAMES`).

A run trained with it once per test session is the `trained_run` fixture (tests/conftest.py).
"""

import dataclasses

from azjax.config import Config, override

TINY = Config(game="tic_tac_toe", net="mlp", hidden=32, blocks=1, value_hidden=16,
              simulations=8, selfplay_batch=16, selfplay_steps=4, buffer_size=512,
              min_buffer=32, train_batch=32, sgd_steps=2, iterations=4, eval_every=0,
              eval_games=0, checkpoint_every=0)

# The training-pipeline tests' variant (test_train, test_checkpoint, test_driver, ...): six
# iterations, a checkpoint every two, small evaluation matches; the same training programs.
TRAINING = dataclasses.replace(TINY, iterations=6, eval_games=8, eval_simulations=8,
                               eval_mcts_simulations=16, checkpoint_every=2)

# The games the tests train, with the rule options that keep them small.
GAMES = {"tic_tac_toe": {}, "connect_four": {}, "breakthrough": {"rows": 5, "cols": 5}}


def config(game: str = "tic_tac_toe", **overrides) -> Config:
  """`TINY` for `game` (one of `GAMES`), with `overrides`: settings, or options of the game
  (`rows=6`, `observation="thesis"`), as `--set` takes them (`azjax.config.override`)."""
  return override(TINY, [("game", game), *{**GAMES[game], **overrides}.items()])
