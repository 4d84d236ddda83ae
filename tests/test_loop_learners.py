"""The one outer loop with a learner of its own (`azjax.runs.loop.Learning`), a toy whose step is
plain Python: every iteration logged once, checkpoints and snapshots, the NaN stop, and Ctrl-C,
which saves the iteration it stops after before the final evaluation, which a second Ctrl-C
skips."""

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest

from azjax.runs import checkpoint, layout, loop


@dataclasses.dataclass(frozen=True)
class Settings:
  iterations: int = 5
  minutes: float = 0.0
  eval_every: int = 0
  eval_games: int = 0
  solver_every: int = 0
  checkpoint_every: int = 2


class ToyState(NamedTuple):
  params: dict
  iteration: jax.Array
  positions: jax.Array


def _toy(settings=Settings(), *, loss_at=None, interrupted=None, evaluate=None):
  """`(step, state, learning)`; the step's loss is NaN at iteration `loss_at`, and it sets
  `interrupted` (a Ctrl-C during that iteration) at iteration 2."""

  def step(state):
    it = state.iteration + 1
    if interrupted is not None and int(it) == 2:
      interrupted["flag"] = True
    loss = jnp.float32(jnp.nan if loss_at is not None and int(it) == loss_at else 1.0 / int(it))
    return ToyState({"w": state.params["w"] * 0.5}, it, state.positions + 10), {"loss": loss}

  state = ToyState({"w": jnp.ones(3)}, jnp.int32(0), jnp.int32(0))
  learning = loop.Learning(
      settings=settings, variables=lambda s: {"params": s.params},
      counters=lambda s: {"iteration": s.iteration, "positions": s.positions},
      evaluate=evaluate)
  return step, state, learning


def _run(run_dir):
  return loop.RunOutput(run_dir=run_dir, manager=checkpoint.manager(run_dir),
                        writer=loop.MetricsWriter(run_dir))


def test_a_learner_of_its_own_trains_through_the_loop(tmp_path):
  step, state, learning = _toy()
  run = _run(tmp_path)
  result = loop.train(step, state, [run], learning, progress=False, log=lambda *_: None)
  assert result.iterations == 5 and result.stopped_by == "iterations"
  rows = loop.read_metrics(tmp_path)
  assert [r["iteration"] for r in rows] == [1, 2, 3, 4, 5]
  assert rows[-1]["positions"] == 50 and rows[-1]["loss"] == pytest.approx(0.2)
  assert [s for s, _ in checkpoint.list_models(tmp_path)] == [2, 4, 5]
  assert run.manager.latest_step() == 5 and layout.model_path(tmp_path).is_dir()
  restored = checkpoint.load_model(tmp_path, {"params": state.params})
  assert float(restored["params"]["w"][0]) == pytest.approx(0.5 ** 5)


def test_a_nan_loss_stops_with_the_last_good_checkpoint(tmp_path):
  step, state, learning = _toy(loss_at=3)
  with pytest.raises(loop.NaNLossError, match=r"iteration 3: .*iteration 2\)"):
    loop.train(step, state, [_run(tmp_path)], learning, progress=False, log=lambda *_: None)


def test_ctrl_c_saves_first_and_a_second_one_skips_the_final_evaluation(tmp_path):
  interrupted = {"flag": False}
  saved_before = []

  def evaluate(variables, key):  # The final evaluation, cut short by a second Ctrl-C.
    saved_before.append(checkpoint.manager(tmp_path).latest_step())
    raise KeyboardInterrupt

  step, state, learning = _toy(Settings(checkpoint_every=10), interrupted=interrupted,
                               evaluate=evaluate)
  said = []
  result = loop.train(step, state, [_run(tmp_path)], learning, interrupted=interrupted,
                      progress=False, log=said.append)
  assert result.stopped_by == "interrupt" and result.iterations == 2
  assert saved_before == [2]  # The checkpoint was on disk before the evaluation began.
  assert [r["iteration"] for r in loop.read_metrics(tmp_path)] == [1, 2]
  assert any("skipped the final evaluation" in line for line in said)
  assert layout.model_path(tmp_path).is_dir()


def test_the_training_bar_is_the_consoles(tmp_path, monkeypatch):
  """Training shows `azjax.console.progress`'s bar (the one of every long command): counting
  iterations from where the run starts, its last state left on the terminal, the run's numbers
  as its postfix after every iteration."""
  from azjax import console

  made = []

  class Bar:
    def __init__(self, total, desc, **kwargs):
      self.args, self.updates, self.postfixes, self.closed = (total, desc, kwargs), 0, [], False
      made.append(self)

    def update(self, n=1):
      self.updates += n

    def set_postfix(self, postfix, refresh=True):
      self.postfixes.append(dict(postfix))

    def close(self):
      self.closed = True

  monkeypatch.setattr(console, "progress", Bar)
  step, state, learning = _toy()
  loop.train(step, state, [_run(tmp_path)], learning, desc="toy", log=lambda *_: None)
  (bar,) = made
  assert bar.args == (5, "toy", {"unit": "it", "initial": 0, "leave": True})
  assert bar.updates == 5 and len(bar.postfixes) == 5 and bar.closed
  assert bar.postfixes[-1]["loss"] == "0.200" and bar.postfixes[-1]["games"] == "0"
