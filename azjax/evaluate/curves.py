"""Learning curves against perfect play: every network snapshot of a run on the solver benchmark.

A run saves a snapshot of its network with every checkpoint (`models/<iteration>`) and logs the
training seconds of every iteration (`metrics.jsonl`). `solver_curve` scores each snapshot on
a labelled position set (`azjax.solver.benchmark`) after the run, so the run itself spends no
time on it and runs trained side by side compare at equal wall-clock (and CPU) time:

>>> positions = solver_benchmark.Positions.load(solver_benchmark.positions_path("connect_four"))
>>> rows = solver_curve("runs/c4", positions, simulations=(0, 32))
>>> azjax.plots.plot_curves({"baseline": rows}, "mistakes.png")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import jax

from azjax import files, runs
from azjax.runs import checkpoint, layout
from azjax.solver import benchmark as solver_benchmark


def training_seconds(run_dir: str | Path) -> dict[int, tuple[float, int]]:
  """`{iteration: (training seconds, self-play positions)}` from a run's metrics.jsonl.

  Runs resumed before the seconds carried over across a resume restart their count at 0; such
  a restart is added to the time before it, so the seconds never go back.
  """
  path = layout.metrics_file(run_dir)
  out, offset, last = {}, 0.0, 0.0
  for row in files.read_jsonl(path) if path.exists() else []:
    if row.get("seconds") in (None, ""):
      continue
    seconds = float(row["seconds"])
    if seconds + offset < last:
      offset = last
    last = seconds + offset
    out[int(row["iteration"])] = (last, int(row.get("positions", 0)))
  return out


# Called with each row of a curve as it is made, how many are done and how many there will be.
OnRow = Callable[[dict[str, Any], int, int], None]


def solver_curve(run_dir: str | Path, positions: solver_benchmark.Positions, *,
                 simulations: Sequence[int] = (0, 32), every: int = 1,
                 key: jax.Array | None = None, on_row: OnRow | None = None
                 ) -> list[dict[str, Any]]:
  """One row per snapshot (every `every`-th, and always the last): its iteration, training
  minutes and positions, and for each of the run's players (AlphaZero: "policy", "search<s>";
  TD-Leaf: "alphabeta<depth>", through its run kind) the overall mistake rate, optimal-move
  rate and value accuracy on `positions`. `on_row(row, done, total)` is called as each row is
  made (a command's progress, and what it keeps on Ctrl-C).

  Raises:
    FileNotFoundError: the run has no snapshots (`models/`).
  """
  run_dir = Path(run_dir)
  snapshots = runs.players(run_dir).snapshots
  if not snapshots:
    raise FileNotFoundError(f"{run_dir}: no network snapshots (models/<iteration>) to score")
  snapshots = [s for i, s in enumerate(snapshots) if i % every == 0 or i == len(snapshots) - 1]
  abstract, score = runs.solver_scorer(run_dir, positions, tuple(simulations))
  seconds = training_seconds(run_dir)
  key = jax.random.key(0) if key is None else key
  rows = []
  for iteration in snapshots:
    variables = checkpoint.load_model(run_dir, abstract, step=iteration)
    # The same key for every snapshot: differences come from the networks alone.
    results = score(variables, key)
    secs, played = seconds.get(iteration, (float("nan"), 0))
    row: dict[str, Any] = {"iteration": iteration, "minutes": round(secs / 60, 2),
                           "positions": played}
    rows.append({**row, **solver_benchmark.overall(results)})
    if on_row is not None:
      on_row(rows[-1], len(rows), len(snapshots))
  return rows
