"""A sweep's report: summary.csv (one row per run), summary.md (a ranking of the settings with
95% intervals and the groups' timings), curves.png (learning curves, mean over seeds with a
min-max band) and final.png (final scores with 95% intervals), from the runs' results
(`azjax.sweep.RunResult`) and metrics files.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from azjax import plots
from azjax.runs.loop import read_metrics

if TYPE_CHECKING:
  from azjax.sweep import GroupTiming, RunResult


def format_value(value: Any) -> str:
  """A grid value as run names and tables write it: `0.001`, `true`, `64`."""
  if isinstance(value, bool):
    return str(value).lower()
  if isinstance(value, float):
    return f"{value:g}"
  return str(value)


@dataclasses.dataclass(frozen=True)
class SettingScore:
  """A setting's final results pooled over its seeds."""

  setting: str
  seeds: int
  wins: int
  draws: int
  losses: int
  seed_scores: tuple[float, ...]

  @property
  def games(self) -> int:
    return self.wins + self.draws + self.losses

  @property
  def score(self) -> float:
    return (self.wins + 0.5 * self.draws) / self.games if self.games else math.nan

  @property
  def interval(self) -> tuple[float, float]:
    from azjax.arena import wilson_interval
    return wilson_interval(self.score, self.games) if self.games else (math.nan, math.nan)


def pool(results: Sequence[RunResult], opponent: str) -> dict[str, SettingScore]:
  """Per setting: the final games against `opponent` of all its seeds, pooled."""
  out: dict[str, list[RunResult]] = {}
  for r in results:
    out.setdefault(r.run.setting, []).append(r)
  pooled = {}
  for setting, members in out.items():
    finals = [m.final[opponent] for m in members if opponent in m.final]
    pooled[setting] = SettingScore(
        setting=setting, seeds=len(members), wins=sum(f.wins for f in finals),
        draws=sum(f.draws for f in finals), losses=sum(f.losses for f in finals),
        seed_scores=tuple(f.score for f in finals))
  return pooled


def _finite_mean(values: Iterable[float]) -> float:
  """Mean of the finite values (NaN if none: e.g. every seed diverged)."""
  finite = [v for v in values if math.isfinite(v)]
  return float(np.mean(finite)) if finite else math.nan


def rank(results: Sequence[RunResult]) -> tuple[list[str], list[str]]:
  """`(settings best first, opponents)`: by pooled score against the strongest opponent (the
  last evaluated), then the next, and so on; then by final value loss."""
  opponents = list(dict.fromkeys(k for r in results for k in r.final))
  pooled = {o: pool(results, o) for o in opponents}
  settings = list(dict.fromkeys(r.run.setting for r in results))
  value_loss = {s: _finite_mean(r.losses.get("value_loss", math.nan) for r in results
                                if r.run.setting == s) for s in settings}

  def key(setting):
    scores = [pooled[o][setting].score for o in reversed(opponents)]
    scores = [-s if math.isfinite(s) else math.inf for s in scores]
    vl = value_loss[setting]
    return (*scores, vl if math.isfinite(vl) else math.inf)

  return sorted(settings, key=key), opponents


def write_summary(sweep_dir: Path, results: Sequence[RunResult], timings: Sequence[GroupTiming],
                  *, command: str | None = None, grid_keys: Sequence[str] = ()) -> list[Path]:
  """summary.csv, summary.md, curves.png and final.png in `sweep_dir`; returns their paths."""
  sweep_dir = Path(sweep_dir)
  if not results:
    return []
  order, opponents = rank(results)
  keys = [k for k in grid_keys if k != "seed"]
  # -- summary.csv: one row per run.
  fields = (["run", "setting", "rank", "group", *keys, "seed", "iterations", "positions", "games",
             "final_policy_loss", "final_value_loss", "diverged_at"]
            + [f"{o}_{c}" for o in opponents
               for c in ("score", "ci_low", "ci_high", "wins", "draws", "losses")])
  csv_path = sweep_dir / "summary.csv"
  with open(csv_path, "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(fields)
    for r in results:
      row = {"run": r.run.name, "setting": r.run.setting, "rank": order.index(r.run.setting) + 1,
             "group": r.group + 1, **{k: format_value(r.run.values[k]) for k in keys},
             "seed": r.run.values["seed"], "iterations": r.iterations, "positions": r.positions,
             "games": r.games, "final_policy_loss": f"{r.losses.get('policy_loss', math.nan):.4f}",
             "final_value_loss": f"{r.losses.get('value_loss', math.nan):.4f}",
             "diverged_at": r.diverged_at if r.diverged_at is not None else ""}
      for o in opponents:
        m = r.final.get(o)
        if m is not None:
          row.update({f"{o}_score": f"{m.score:.4f}", f"{o}_ci_low": f"{m.interval[0]:.4f}",
                      f"{o}_ci_high": f"{m.interval[1]:.4f}", f"{o}_wins": m.wins,
                      f"{o}_draws": m.draws, f"{o}_losses": m.losses})
      writer.writerow([row.get(k, "") for k in fields])
  # -- summary.md: the ranking and the groups.
  pooled = {o: pool(results, o) for o in opponents}
  by_setting = {s: [r for r in results if r.run.setting == s] for s in order}
  lines = [f"# Sweep {sweep_dir.name}", ""]
  if command:
    lines += ["```", command, "```", ""]
  lines += [f"{len(results)} runs, {len(order)} settings; scores are final (win = 1, draw = 1/2), "
            "each setting's games pooled over its seeds, with a 95% Wilson interval (it counts "
            "games, not seeds, so it leaves out seed-to-seed variation: the spread column "
            "gives the lowest and highest seed). Losses: mean of the last 5 iterations, "
            "averaged over seeds.", ""]
  header = "| rank | setting | seeds | " + " | ".join(
      f"vs {o} (95% CI) | {o} seed range" for o in opponents) + " | policy loss | value loss |"
  lines += [header, "|" + "---|" * (header.count("|") - 1)]
  for i, s in enumerate(order):
    cells = []
    for o in opponents:
      p = pooled[o][s]
      low, high = p.interval
      cells.append(f"{p.score:.3f} [{low:.3f}, {high:.3f}]" if p.games else "n/a")
      cells.append(f"{min(p.seed_scores):.2f}-{max(p.seed_scores):.2f}" if p.seed_scores
                   else "n/a")
    runs = by_setting[s]
    pl = _finite_mean(r.losses.get("policy_loss", math.nan) for r in runs)
    vl = _finite_mean(r.losses.get("value_loss", math.nan) for r in runs)
    diverged = sum(r.diverged_at is not None for r in runs)
    note = f" ({diverged} diverged)" if diverged else ""
    lines.append(f"| {i + 1} | {s}{note} | {len(runs)} | " + " | ".join(cells)
                 + f" | {pl:.3f} | {vl:.3f} |")
  if timings:  # (`--summarize` of an existing sweep has none)
    lines += ["", "| group | runs | vmapped on | iterations | compile "
              "| s / iteration |", "|---|---|---|---|---|---|"]
  for i, t in enumerate(timings):
    lines.append(f"| {i + 1} | {t.runs} | {t.mesh} | {t.iterations} | {t.compile_seconds:.1f} s "
                 f"| {t.seconds_per_iteration:.3f} |")
  lines += ["", "Per run: `summary.csv`; learning curves: `curves.png`; final scores: "
            "`final.png`; each run's own metrics, plots and checkpoints: `<run>/`.", ""]
  md_path = sweep_dir / "summary.md"
  md_path.write_text("\n".join(lines))
  metrics = {s: [read_metrics(r.run_dir) for r in by_setting[s]] for s in order}
  return [csv_path, md_path] + plots.plot_sweep(sweep_dir, metrics, pooled)
