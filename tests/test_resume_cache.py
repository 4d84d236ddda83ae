"""The compilation cache and a resumed run (issue 57): a fresh training state and a restored one
compile to the same programs, so the first `--resume` of a run loads every program from the
cache instead of compiling it again."""

import os
from pathlib import Path

import pytest

from azjax.config import Config
from azjax.runs import driver

# A config of its own (hidden=24 is in no other test), so that its first session compiles.
CONFIG = Config(game="tic_tac_toe", net="mlp", hidden=24, blocks=1, value_hidden=8,
                simulations=4, selfplay_batch=8, selfplay_steps=3, buffer_size=256,
                min_buffer=16, train_batch=16, sgd_steps=1, iterations=4, eval_every=2,
                eval_games=2, checkpoint_every=1)


def _entries() -> set[str]:
  return {p.name for p in Path(os.environ["AZJAX_COMPILE_CACHE"]).iterdir()}


@pytest.mark.slow
def test_the_first_resume_compiles_nothing_new(tmp_path):
  before = _entries()
  driver.train_and_evaluate(CONFIG, tmp_path, progress=False, max_iterations=2)
  fresh = _entries()
  assert fresh - before  # The first session compiled (and kept) its programs.
  summary = driver.train_and_evaluate(CONFIG, tmp_path, resume=True, progress=False)
  assert summary.iterations == 4
  assert _entries() == fresh, sorted(_entries() - fresh)
