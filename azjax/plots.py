"""Every figure azjax draws, each a function from data to a PNG file (matplotlib, Agg).

    plot_run        a run's losses.png, winrate.png and mistakes.png (from metrics.jsonl)
    plot_curves     mistakes against perfect play over training minutes, one line a player
    plot_sweep      a sweep's curves.png and final.png
    plot_ladder     score against each rung of the rollout-MCTS ladder
    plot_progress   Elo of every snapshot of a run over training minutes
    plot_scores     Slider's score curves against a fixed alpha-beta player

matplotlib is imported inside the functions: training imports this module, and a run with no
plots to draw should not pay for it.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from azjax.runs import layout

if TYPE_CHECKING:
  from azjax.arena import EloFit, MatchResult


def _pyplot():
  """matplotlib's pyplot on the Agg backend (files only, no display)."""
  import matplotlib  # noqa: PLC0415
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # noqa: PLC0415
  return plt


def save(fig, path: str | Path, *, grid_ax=None) -> Path:
  """Tight layout, `path` (and its folder) written at 100 dpi, figure closed; with `grid_ax`
  a light grid on that axis first."""
  if grid_ax is not None:
    grid_ax.grid(True, alpha=0.3)
  fig.tight_layout()
  path = Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  fig.savefig(path, dpi=100)
  _pyplot().close(fig)
  return path


# -- A run -----------------------------------------------------------------------------------------


def _finish(fig, ax, ylabel: str, title: str, path: Path) -> Path:
  """Labels a plot over self-play positions and saves it."""
  ax.set_xlabel("self-play positions")
  ax.set_ylabel(ylabel)
  ax.legend()
  ax.set_title(title)
  return save(fig, path)


def plot_run(run_dir: str | Path, rows: Sequence[Mapping[str, Any]]) -> list[Path]:
  """Writes losses.png, winrate.png and mistakes.png (with `solver_every`) into `run_dir` from
  its metrics rows (`azjax.runs.loop.read_metrics`); returns their paths."""
  plt = _pyplot()
  run_dir = Path(run_dir)
  if not rows:
    return []
  out = []
  x = np.array([r["positions"] for r in rows], dtype=float)
  fig, ax = plt.subplots(figsize=(6, 4))
  # Markers keep a short run's few points visible (a line needs two finite points).
  marker = "o" if len(rows) <= 50 else None
  # AlphaZero's losses, or a learner's one (TD-Leaf's `loss`).
  keys = ("policy_loss", "value_loss", "reply_loss") if any(
      "policy_loss" in r for r in rows) else ("loss",)
  for key in keys:
    if key == "reply_loss" and not any(key in r for r in rows):
      continue  # Only runs with the auxiliary reply target (`reply_weight`) have one.
    y = np.array([r.get(key, np.nan) for r in rows], dtype=float)
    ax.plot(x, y, marker=marker, markersize=3, label=key)
  minutes = float(rows[-1].get("seconds", 0.0)) / 60
  out.append(_finish(fig, ax, "loss", f"{run_dir.name}: training losses "
                     f"({minutes:.1f} min of training)", run_dir / layout.LOSSES_PLOT))

  evals = [r for r in rows if any(k.startswith("eval/") for k in r)]
  if evals:
    fig, ax = plt.subplots(figsize=(6, 4))
    names = sorted({k for r in evals for k in r if k.startswith("eval/") and k.endswith("/score")})
    for name in names:
      pts = [(r["positions"], r[name], r.get(name.replace("/score", "/ci"), 0.0))
             for r in evals if name in r]
      px, py, pe = map(np.array, zip(*pts))
      ax.errorbar(px, py, yerr=pe, marker="o", capsize=3, label=name.split("/")[1])
    ax.set_ylim(0, 1.02)
    out.append(_finish(fig, ax, "score (win = 1, draw = 1/2)",
                       f"{run_dir.name}: score against baselines", run_dir / layout.WINRATE_PLOT))

  scored = [r for r in rows if any(k.startswith("solver/") for k in r)]
  if scored:  # Mistakes against perfect play (solver_every), over training minutes.
    def curve(prefix: str) -> list[dict[str, Any]]:
      return [{"minutes": r["seconds"] / 60, "positions": r["positions"],
               **{k.removeprefix(prefix): v for k, v in r.items() if k.startswith(prefix)}}
              for r in scored]
    curves = {run_dir.name: curve("solver/")}
    if any(k.startswith("solver_trained/") for k in scored[-1]):  # With ema_decay.
      curves = {f"{run_dir.name} (averaged)": curves[run_dir.name],
                f"{run_dir.name} (trained)": curve("solver_trained/")}
    out.append(plot_curves(curves, run_dir / layout.MISTAKES_PLOT))
  return out


def plot_curves(curves: Mapping[str, Sequence[Mapping[str, Any]]], path: str | Path, *,
                metric: str = "mistake_rate", x: str = "minutes") -> Path:
  """Plots `metric` of every player of every run against `x` ("minutes" or "positions"): one
  colour per run, a solid line for search and a dashed one for the raw policy."""
  plt = _pyplot()

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
  ax.legend(fontsize=8)
  return save(fig, path, grid_ax=ax)


# -- A sweep ---------------------------------------------------------------------------------------


def _smooth(y: np.ndarray, width: int) -> np.ndarray:
  """Centered moving average that ignores NaNs (the iterations before training starts)."""
  if width <= 1:
    return y
  ok = np.isfinite(y)
  kernel = np.ones(width)
  num = np.convolve(np.where(ok, y, 0.0), kernel, mode="same")
  den = np.convolve(ok.astype(float), kernel, mode="same")
  with np.errstate(invalid="ignore", divide="ignore"):
    return np.where(ok, num / den, np.nan)


def plot_sweep(sweep_dir: str | Path, metrics: Mapping[str, Sequence[Sequence[Mapping]]],
               pooled: Mapping[str, Mapping[str, Any]]) -> list[Path]:
  """curves.png (losses and scores over positions: mean over seeds, min-max band) and final.png
  (each setting's pooled final score with its 95% interval, and each seed's).

  Args:
    metrics: `{setting: [each seed's metrics rows]}`, settings in the order to show (best
      first).
    pooled: `{opponent: {setting: SettingScore}}` (`azjax.sweep.report.pool`).
  """
  plt = _pyplot()
  sweep_dir = Path(sweep_dir)
  order = list(metrics)
  opponents = list(pooled)

  colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
  colour = {s: colours[i % len(colours)] for i, s in enumerate(order)}
  panels = [("policy_loss", "policy loss"), ("value_loss", "value loss")] + [
      (f"eval/{o}/score", f"score vs {o}") for o in opponents]
  fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
  for setting in order:
    runs = metrics[setting]
    for ax, (key, label) in zip(axes[0], panels):
      curves = []
      for rows in runs:
        pts = [(r["positions"], r[key]) for r in rows if key in r and r[key] is not None]
        if pts:
          curves.append(dict(pts))
      if not curves:
        continue
      # Runs of one setting share their x values (same batch sizes, same iterations).
      xs = sorted(set().union(*curves))
      ys = np.array([[c.get(x, np.nan) for x in xs] for c in curves], dtype=float)
      if not key.startswith("eval/"):
        ys = np.stack([_smooth(y, max(1, len(xs) // 25)) for y in ys])
      with warnings.catch_warnings():  # All-NaN columns (before training starts) are fine.
        warnings.simplefilter("ignore", RuntimeWarning)
        mean, low, high = np.nanmean(ys, 0), np.nanmin(ys, 0), np.nanmax(ys, 0)
      marker = "o" if key.startswith("eval/") else None
      ax.plot(xs, mean, color=colour[setting], marker=marker, ms=3, label=setting)
      if len(curves) > 1:
        ax.fill_between(xs, low, high, color=colour[setting], alpha=0.2, lw=0)
  for ax, (key, label) in zip(axes[0], panels):
    ax.set_xlabel("self-play positions (per run)")
    ax.set_title(label)
    if key.startswith("eval/"):
      ax.set_ylim(-0.02, 1.02)
  axes[0][-1].legend(fontsize=7, loc="lower right")
  fig.suptitle(f"{sweep_dir.name}: mean over seeds, band = lowest to highest seed", fontsize=10)
  out = [save(fig, sweep_dir / "curves.png")]
  if opponents:
    fig, axes = plt.subplots(1, len(opponents), figsize=(5 * len(opponents),
                                                         1.2 + 0.45 * len(order)), squeeze=False)
    for ax, o in zip(axes[0], opponents):
      for y, setting in enumerate(order):
        p = pooled[o][setting]
        if not p.games:
          continue
        low, high = p.interval
        ax.errorbar([p.score], [y], xerr=[[p.score - low], [high - p.score]], fmt="o",
                    color=colour[setting], capsize=4)
        ax.scatter(p.seed_scores, [y] * len(p.seed_scores), marker="|", s=120,
                   color=colour[setting], alpha=0.7)
      ax.set_yticks(range(len(order)), [f"{i + 1}. {s}" for i, s in enumerate(order)],
                    fontsize=8)
      ax.set_ylim(len(order) - 0.5, -0.5)  # Best on top.
      ax.set_xlim(-0.02, 1.02)
      ax.set_xlabel(f"final score vs {o} (95% CI; ticks: seeds)")
    out.append(save(fig, sweep_dir / "final.png"))
  return out


# -- Evaluation -----------------------------------------------------------------------------------


def plot_ladder(results: Mapping[str, Sequence[tuple[int, MatchResult]]], path: str | Path,
                title: str = "MCTS ladder") -> Path:
  """Score per rung (log2 x-axis) with 95% interval error bars, one line per player."""
  plt = _pyplot()
  import matplotlib.ticker  # noqa: PLC0415

  fig, ax = plt.subplots(figsize=(7, 4.5))
  for name, played in results.items():
    if not played:
      continue
    sims = np.array([s for s, _ in played])
    score = np.array([r.score for _, r in played])
    ci = np.array([r.interval for _, r in played])
    # Clipped: a perfect score's Wilson bound can sit a rounding error below it.
    yerr = np.clip(np.stack([score - ci[:, 0], ci[:, 1] - score]), 0.0, None)
    ax.errorbar(sims, score, yerr=yerr, marker="o", capsize=3, label=name)
  ax.axhline(0.5, color="grey", linestyle=":", linewidth=1)
  ax.set_xscale("log", base=2)
  ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
  ax.set_ylim(-0.02, 1.02)
  ax.set_xlabel("opponent: rollout-MCTS simulations per move")
  ax.set_ylabel("score (wins + draws / 2)")
  ax.set_title(title)
  ax.legend(fontsize=8)
  return save(fig, path, grid_ax=ax)


def plot_progress(fit: EloFit, steps: Sequence[int], minutes: Mapping[int, float],
                  path: str | Path, title: str) -> Path:
  """Elo of each snapshot (with its 95% interval) against training minutes (or iterations
  when the run has no metrics), with the anchors as horizontal lines."""
  plt = _pyplot()

  ratings = dict(zip(fit.names, fit.ratings))
  intervals = dict(zip(fit.names, fit.interval))
  shown = [s for s in steps if f"it{s}" in ratings]
  use_minutes = bool(shown) and all(s in minutes for s in shown)
  x = np.array([minutes[s] if use_minutes else s for s in shown], dtype=float)
  y = np.array([ratings[f"it{s}"] for s in shown])
  ci = np.array([intervals[f"it{s}"] for s in shown]).reshape(-1, 2)
  fig, ax = plt.subplots(figsize=(7, 4.5))
  ax.errorbar(x, y, yerr=np.clip(np.stack([y - ci[:, 0], ci[:, 1] - y]), 0.0, None),
              marker="o", capsize=3,
              label="snapshots")
  for name in fit.names:
    if not name.startswith("it"):
      ax.axhline(ratings[name], linestyle=":", linewidth=1, color="grey")
      ax.annotate(name, (x.min() if len(x) else 0, ratings[name]), fontsize=8, color="grey",
                  va="bottom")
  ax.set_xlabel("training minutes" if use_minutes else "iteration")
  ax.set_ylabel("Elo")
  ax.set_title(title)
  return save(fig, path, grid_ax=ax)


def plot_scores(rows: Sequence[Mapping[str, Any]], path: str | Path, depth: int) -> Path:
  """Score with its 95% interval against training minutes, one line per run (`rows`:
  `{"run", "minutes", "score", "low", "high"}`; `azjax.cli.slider --curves`)."""
  plt = _pyplot()

  fig, ax = plt.subplots(figsize=(7, 4.5))
  for run in dict.fromkeys(r["run"] for r in rows):
    mine = [r for r in rows if r["run"] == run]
    xs = [r["minutes"] for r in mine]
    errors = [[r["score"] - r["low"] for r in mine], [r["high"] - r["score"] for r in mine]]
    ax.errorbar(xs, [r["score"] for r in mine], yerr=errors, marker=".", capsize=2, label=run)
  ax.axhline(0.5, color="grey", lw=0.8)
  ax.set_xlabel("training minutes (wall clock)")
  ax.set_ylabel(f"score vs alpha-beta depth {depth}, hand evaluation")
  ax.set_ylim(0, 1)
  ax.legend(fontsize=8)
  return save(fig, path, grid_ax=ax)
