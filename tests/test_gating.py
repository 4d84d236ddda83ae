"""Gating (azjax.runs.gating): the best network is kept or replaced."""

import dataclasses

import chex
import jax
import numpy as np
import pytest
import tiny

from azjax import train

# The training tests' tiny configuration (tests/tiny.py): its programs compile once.
TINY = tiny.TRAINING
# Each test compiles a gated iteration: the full suite's (test_train covers the iteration).
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("replaced", [False, True])
def test_gating_keeps_or_replaces_the_best_network(replaced, monkeypatch):
  """A score of 1 (no score can exceed the threshold of 1) keeps the initial network for
  self-play; a match won outright (score forced to 1 against a 0.55 threshold) replaces it."""
  from azjax.runs import gating
  config = dataclasses.replace(TINY, gating=True, gating_games=4,
                               gating_threshold=0.55 if replaced else 1.0)
  trainer = train.Trainer.create(config)
  if replaced:
    real = gating.score
    def won(trainer, candidate, best, key):
      return real(trainer, candidate, best, key) * 0.0 + 1.0
    monkeypatch.setattr(gating, "score", won)
  state = trainer.init()
  initial = jax.tree.map(np.asarray, state.params)
  iteration = trainer.jit_iteration(gating.gated(trainer))
  for _ in range(4):
    state, metrics = iteration(state)
  assert bool(metrics["trained"])
  assert 0.0 <= float(metrics["gating_score"]) <= 1.0
  assert bool(metrics["gating_accepted"]) == replaced
  chex.assert_trees_all_close(state.best_params, state.params if replaced else initial)
  moved = jax.tree.map(lambda a, b: bool(np.any(np.asarray(a) != b)), state.params, initial)
  assert any(jax.tree.leaves(moved))  # Training went on either way.
