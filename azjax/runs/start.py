"""Starting a learner's run directory, or resuming it: what every learner's `train` does once
its settings have passed the directory's rules (`azjax.runs.layout.check_run_dir`) and before
the one outer loop (`azjax.runs.loop.train`) takes over."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from azjax.runs import checkpoint, layout, loop


def open_run(run_dir: Path, fresh: Any, *, settings_file: str,
             save_settings: Callable[[Path], None], resume: bool, overwrite: bool,
             log=print) -> tuple[Any, loop.RunOutput]:
  """`(state, run)`: the state to train from and the loop's output for `run_dir`.

  With `overwrite` the earlier run's outputs are removed first (`layout.clear_run`); the
  settings are written (`save_settings(run_dir)`); with `resume` the newest intact checkpoint
  replaces `fresh` (a run with settings but no checkpoint starts from iteration 0, and says so)
  and metrics rows after it are dropped, so that every iteration is logged once.
  """
  if overwrite:
    removed = layout.clear_run(run_dir, settings_file)
    if removed:
      log(f"--overwrite: removed the earlier run's {', '.join(removed)} from {run_dir}")
  run_dir.mkdir(parents=True, exist_ok=True)
  save_settings(run_dir)
  mngr = checkpoint.manager(run_dir)
  state, have_checkpoint = fresh, False
  if resume:
    if mngr.latest_step() is None:
      log(f"{run_dir} holds {settings_file} but no checkpoint: the run starts from iteration 0")
    else:
      state, _, step = checkpoint.restore_intact(mngr, state, log=log)
      have_checkpoint = True
      log(f"resumed {run_dir} at iteration {step}")
    loop.prune_metrics(run_dir, int(state.iteration))
  it = int(state.iteration)
  return state, loop.RunOutput(run_dir=run_dir, manager=mngr, writer=loop.MetricsWriter(run_dir),
                               last_saved=it, have_checkpoint=have_checkpoint,
                               seconds_before=loop.seconds_before(run_dir, it))
