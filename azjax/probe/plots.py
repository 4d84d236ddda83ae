"""Plots of probing results (matplotlib, Agg backend; one PNG per call).

Every function takes the rows `experiments.probe` writes to its CSV tables (lists of dicts) so
that the plots can be redrawn from the CSVs alone.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

METRIC_LABELS = {"balanced_accuracy": "balanced accuracy", "r2": "R$^2$"}
METRIC_FLOOR = {"balanced_accuracy": 0.5, "r2": 0.0}  # chance


def _grid(count: int, *, width: float = 4.0, height: float = 3.0, cols: int = 3):
  cols = min(cols, count)
  rows = math.ceil(count / cols)
  fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
  for ax in axes.flat[count:]:
    ax.set_axis_off()
  return fig, list(axes.flat)


def _legend(fig, axes: list, count: int, **kwargs) -> None:
  """The first panel's legend, in a spare panel of the grid if there is one (it then hides no
  curve), else in the first panel."""
  handles, labels = axes[0].get_legend_handles_labels()
  target = axes[count] if len(axes) > count else axes[0]
  target.legend(handles, labels, loc="center" if target is not axes[0] else "best", **kwargs)


def _cell_text(value: float) -> str:
  text = f"{value:.2f}"
  return text[1:] if text.startswith("0.") else text


def _save(fig, path: str | Path) -> Path:
  path = Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  fig.tight_layout()
  fig.savefig(path, dpi=110)
  plt.close(fig)
  return path


def layer_scores(summary: Sequence[dict], path: str | Path, *, layers: Sequence[str],
                 title: str = "") -> Path:
  """Score per layer of the trained network, with the random-network and raw-input controls.

  `summary` rows: concept, probe, metric, layer, mean, std, random_mean, random_std,
  input_mean (one checkpoint, one probe per concept); the raw input is a horizontal line.
  """
  concepts = list(dict.fromkeys(r["concept"] for r in summary))
  fig, axes = _grid(len(concepts))
  positions = np.arange(len(layers))
  for ax, concept in zip(axes, concepts):
    rows = {r["layer"]: r for r in summary if r["concept"] == concept}
    first = next(iter(rows.values()))
    def column(key, rows=rows):
      return np.array([float(rows[l][key]) if l in rows else np.nan for l in layers])
    ax.errorbar(positions, column("mean"), yerr=column("std"), marker="o",
                capsize=3, label="trained")
    ax.errorbar(positions, column("random_mean"), yerr=column("random_std"), marker="s",
                linestyle="--", capsize=3, color="tab:gray", label="random network")
    ax.axhline(float(first["input_mean"]), color="tab:red", linestyle=":", label="raw input")
    ax.axhline(METRIC_FLOOR.get(first["metric"], 0.0), color="black", linewidth=0.5)
    ax.set_title(f"{concept} ({first['probe']})", fontsize=10)
    ax.set_ylabel(METRIC_LABELS.get(first["metric"], first["metric"]))
    ax.set_xticks(positions, [_short(l) for l in layers], rotation=45, fontsize=8)
    ax.grid(alpha=0.3)
  _legend(fig, axes, len(concepts), fontsize=8)
  if title:
    fig.suptitle(title, fontsize=11)
  return _save(fig, path)


def heatmaps(summary: Sequence[dict], path: str | Path, *, layers: Sequence[str],
             checkpoints: Sequence[str], title: str = "") -> Path:
  """What-when-where: one heatmap per concept, layers (rows) x checkpoints (columns).

  `summary` rows: concept, probe, metric, layer, checkpoint, mean.
  """
  concepts = list(dict.fromkeys(r["concept"] for r in summary))
  fig, axes = _grid(len(concepts), width=max(3.2, 0.55 * len(checkpoints) + 1.8),
                    height=0.42 * len(layers) + 1.6)
  for ax, concept in zip(axes, concepts):
    rows = [r for r in summary if r["concept"] == concept]
    grid = np.full((len(layers), len(checkpoints)), np.nan)
    for r in rows:
      if r["layer"] in layers and r["checkpoint"] in checkpoints:
        grid[list(layers).index(r["layer"]), list(checkpoints).index(r["checkpoint"])] = \
            float(r["mean"])
    metric = rows[0]["metric"]
    image = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=METRIC_FLOOR.get(metric, 0.0),
                      vmax=1.0)
    for (i, j), value in np.ndenumerate(grid):
      if np.isfinite(value):
        ax.text(j, i, _cell_text(value), ha="center",
                va="center", fontsize=6, color="white" if value < 0.8 else "black")
    ax.set_xticks(range(len(checkpoints)), checkpoints, rotation=60, fontsize=7)
    ax.set_yticks(range(len(layers)), [_short(l) for l in layers], fontsize=7)
    ax.set_title(f"{concept} ({rows[0]['probe']}, {METRIC_LABELS.get(metric, metric)})",
                 fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
  if title:
    fig.suptitle(title, fontsize=11)
  return _save(fig, path)


def tcav_bars(rows: Sequence[dict], path: str | Path, *, level: float = 0.05,
              title: str = "") -> Path:
  """TCAV score per layer for each concept, beside random-label CAVs; `*` marks p < `level`.

  `rows`: concept, layer, tcav_mean, tcav_std, random_mean, random_std, p_value.
  """
  concepts = list(dict.fromkeys(r["concept"] for r in rows))
  fig, axes = _grid(len(concepts))
  for ax, concept in zip(axes, concepts):
    part = [r for r in rows if r["concept"] == concept]
    x = np.arange(len(part))
    score = np.array([float(r["tcav_mean"]) for r in part])
    ax.bar(x - 0.2, score, 0.4, yerr=[float(r["tcav_std"]) for r in part], capsize=2,
           label="concept CAVs")
    ax.bar(x + 0.2, [float(r["random_mean"]) for r in part], 0.4,
           yerr=[float(r["random_std"]) for r in part], capsize=2, color="tab:gray",
           label="random CAVs")
    for i, r in enumerate(part):
      if float(r["p_value"]) < level:
        ax.text(i - 0.2, score[i] + float(r["tcav_std"]) + 0.02, "*", ha="center", fontsize=12)
    ax.axhline(0.5, color="black", linewidth=0.5)
    ax.set_ylim(0, 1.05)
    ax.set_xticks(x, [_short(r["layer"]) for r in part], rotation=45, fontsize=8)
    ax.set_title(concept, fontsize=10)
    ax.set_ylabel("TCAV score")
  _legend(fig, axes, len(concepts), fontsize=8)
  fig.suptitle((title + "\n" if title else "") + f"* p < {level} (t-test against random CAVs)",
               fontsize=10)
  return _save(fig, path)


def causal_curves(rows: Sequence[dict], path: str | Path, *, quantity: str = "value",
                  title: str = "") -> Path:
  """Mean `quantity` (e.g. value) against alpha, one line per layer; dashed: a random direction
  of the same norm. `rows`: concept, layer, direction ("concept"/"random"), alpha, quantity.
  """
  concepts = list(dict.fromkeys(r["concept"] for r in rows))
  fig, axes = _grid(len(concepts))
  colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
  for ax, concept in zip(axes, concepts):
    part = [r for r in rows if r["concept"] == concept]
    layers = list(dict.fromkeys(r["layer"] for r in part))
    for k, layer in enumerate(layers):
      for direction, style in (("concept", "-"), ("random", "--")):
        line = [r for r in part if r["layer"] == layer and r["direction"] == direction]
        if line:
          ax.plot([float(r["alpha"]) for r in line], [float(r[quantity]) for r in line],
                  linestyle=style, marker="o" if direction == "concept" else None,
                  markersize=3, color=colors[k % len(colors)],
                  label=_short(layer) if direction == "concept" else None)
    ax.set_title(concept, fontsize=10)
    ax.set_xlabel("alpha (x class-mean gap along the CAV)")
    ax.set_ylabel(f"mean {quantity}")
    ax.grid(alpha=0.3)
  _legend(fig, axes, len(concepts), fontsize=8,
          title="layer (dashed: a random direction\nof the same norm)", title_fontsize=8)
  if title:
    fig.suptitle(title, fontsize=11)
  return _save(fig, path)


def _short(layer: str) -> str:
  return layer.replace("block_", "b").replace("_trunk", "")
