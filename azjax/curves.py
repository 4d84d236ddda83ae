"""Learning curves against perfect play: every network snapshot of a run on the solver benchmark.

A run saves a snapshot of its network with every checkpoint (`models/<iteration>`) and logs the
training seconds of every iteration (`metrics.jsonl`). `solver_curve` scores each snapshot on
a labelled position set (`azjax.solver_benchmark`) after the run, so the run itself spends no
time on it and runs trained side by side compare at equal wall-clock (and CPU) time:

>>> positions = solver_benchmark.Positions.load("results/solver_benchmark/connect_four.npz")
>>> rows = solver_curve("runs/c4", positions, simulations=(0, 32))
>>> plot_curves({"baseline": rows}, "mistakes.png")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import jax
import numpy as np

from azjax import agents, checkpoint, solver_benchmark, tdleaf
from azjax.config import write_atomic


def training_seconds(run_dir: str | Path) -> dict[int, tuple[float, int]]:
  """`{iteration: (training seconds, self-play positions)}` from a run's metrics.jsonl."""
  path = Path(run_dir) / "metrics.jsonl"
  rows = read_jsonl(path) if path.exists() else []
  return {int(r["iteration"]): (float(r.get("seconds", 0.0)), int(r.get("positions", 0)))
          for r in rows}


def solver_curve(run_dir: str | Path, positions: solver_benchmark.Positions, *,
                 simulations: Sequence[int] = (0, 32), every: int = 1,
                 key: jax.Array | None = None) -> list[dict[str, Any]]:
  """One row per snapshot (every `every`-th, and always the last): its iteration, training
  minutes and positions, and for each player ("policy", "search<s>") the overall mistake rate,
  optimal-move rate and value accuracy on `positions`.

  Raises:
    FileNotFoundError: the run has no snapshots (`models/`).
  """
  run_dir = Path(run_dir)
  snapshots = checkpoint.list_models(run_dir)
  if not snapshots:
    raise FileNotFoundError(f"{run_dir}: no network snapshots (models/<iteration>) to score")
  snapshots = [s for i, s in enumerate(snapshots) if i % every == 0 or i == len(snapshots) - 1]
  if tdleaf.is_run(run_dir):
    return _tdleaf_curve(run_dir, [i for i, _ in snapshots], positions, key)
  _, env, model, abstract = agents.load_network(str(run_dir))
  bench = solver_benchmark.SolverBenchmark(env, model, positions, simulations=simulations)
  seconds = training_seconds(run_dir)
  key = jax.random.key(0) if key is None else key
  rows = []
  for iteration, _ in snapshots:
    variables = checkpoint.load_model(run_dir, abstract, step=iteration)
    # The same key for every snapshot: differences come from the networks alone.
    results = bench(variables, key)
    secs, played = seconds.get(iteration, (float("nan"), 0))
    row: dict[str, Any] = {"iteration": iteration, "minutes": round(secs / 60, 2),
                           "positions": played}
    rows.append({**row, **solver_benchmark.overall(results)})
  return rows


def write_jsonl(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
  path = Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  write_atomic(path, "".join(json.dumps(dict(r)) + "\n" for r in rows))
  return path


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
  """The rows of a JSONL file; a last line cut short by a crash is skipped."""
  lines = [line for line in Path(path).read_text().splitlines() if line.strip()]
  rows = []
  for number, line in enumerate(lines, 1):
    try:
      rows.append(json.loads(line))
    except ValueError:
      if number < len(lines):
        raise ValueError(f"{path}, line {number}: not a JSON row") from None
  return rows


def _tdleaf_curve(run_dir: Path, iterations: Sequence[int],
                  positions: solver_benchmark.Positions, key: jax.Array | None):
  """`solver_curve` of a TD-Leaf run: its alpha-beta player ("alphabeta<depth>") at each
  snapshot; it has no raw policy and no value head to score."""
  learner, _ = tdleaf.load(run_dir)
  abstract = learner.evaluator.init(jax.random.key(0))
  states = positions.states(learner.env)
  seconds = training_seconds(run_dir)
  key = jax.random.key(0) if key is None else key
  name = f"alphabeta{learner.config.depth}"
  rows = []
  for iteration in iterations:
    params = checkpoint.load_model(run_dir, abstract, step=iteration)
    actions = np.asarray(learner.act(params, states, key))
    results = {name: solver_benchmark.move_metrics(positions, actions)}
    secs, played = seconds.get(iteration, (float("nan"), 0))
    rows.append({"iteration": iteration, "minutes": round(secs / 60, 2), "positions": played,
                 **solver_benchmark.overall(results)})
  return rows


def plot_curves(curves: Mapping[str, Sequence[Mapping[str, Any]]], path: str | Path, *,
                metric: str = "mistake_rate", x: str = "minutes") -> Path:
  """Plots `metric` of every player of every run against `x` ("minutes" or "positions"): one
  colour per run, a solid line for search and a dashed one for the raw policy."""
  import matplotlib  # noqa: PLC0415
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # noqa: PLC0415

  fig, ax = plt.subplots(figsize=(7, 4.5))
  for color, (name, rows) in zip(plt.rcParams["axes.prop_cycle"].by_key()["color"],
                                 curves.items()):
    players = sorted({k.split("/")[0] for r in rows for k in r if k.endswith("/" + metric)})
    for player in players:
      xs = np.array([r[x] for r in rows], float)
      ys = np.array([r.get(f"{player}/{metric}", np.nan) for r in rows], float)
      style = "--" if player == "policy" else "-"
      label = f"{name}: {'raw policy' if player == 'policy' else player}"
      ax.plot(xs, 100 * ys if metric.endswith("rate") else ys, style, marker=".", color=color,
              label=label)
  ax.set_xlabel("training minutes (wall clock)" if x == "minutes" else "self-play positions")
  ax.set_ylabel(metric.replace("_", " ") + (" (%)" if metric.endswith("rate") else ""))
  ax.grid(alpha=0.3)
  ax.legend(fontsize=8)
  fig.tight_layout()
  path = Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  fig.savefig(path, dpi=100)
  plt.close(fig)
  return path
