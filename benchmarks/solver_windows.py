"""Mistakes against perfect play at equal iterations: the mean of each run's solver scorings
over windows of iterations (neighbouring scorings move by about a point, so one scoring says
little; a window of several says more).

Reads the training logs' `solver/<player>/mistake_rate` (metrics.jsonl, one scoring every 50
iterations) and prints a markdown table, raw policy / 32 simulations (%):

    python -m benchmarks.solver_windows --windows 1-300,300-600,600-936 \
        "the preset"=results/efficiency/connect_four/resnet_run/metrics.jsonl.gz \
        "openings up to 36"=results/efficiency/connect_four/openings/k36/metrics.jsonl.gz

`--plot FILE.png` also draws every scoring of each run against self-play positions (the axis
of equal compute for runs with the same self-play sizes on a shared machine, whose minutes are
not comparable; `azjax.plots.plot_curves`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from azjax import files, plots


def scorings(path: Path) -> list[tuple[int, float, float, float]]:
  """`(iteration, minutes, raw, search32)` of each scoring after iteration 0."""
  out = []
  for row in files.read_jsonl(path):
    if "solver/policy/mistake_rate" in row and row["iteration"] > 0:
      out.append((row["iteration"], row["seconds"] / 60, row["solver/policy/mistake_rate"],
                  row["solver/search32/mistake_rate"]))
  return out


def curve(path: Path) -> list[dict]:
  """Every scoring after iteration 0 as `plots.plot_curves` rows: positions and each player's
  mistake rate."""
  return [{"positions": row["positions"],
           **{k[len("solver/"):]: v for k, v in row.items()
              if k.startswith("solver/") and k.endswith("/mistake_rate")}}
          for row in files.read_jsonl(path)
          if "solver/policy/mistake_rate" in row and row["iteration"] > 0]


def window_means(points, low: int, high: int) -> tuple[float, float, int] | None:
  """Mean raw and search mistakes (%) of the scorings with `low <= iteration <= high`."""
  inside = [p for p in points if low <= p[0] <= high]
  if not inside:
    return None
  return (100 * float(np.mean([p[2] for p in inside])),
          100 * float(np.mean([p[3] for p in inside])), len(inside))


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("runs", nargs="+", help="NAME=metrics.jsonl")
  parser.add_argument("--windows", required=True, help="LOW-HIGH,... iterations, inclusive")
  parser.add_argument("--plot", default=None, metavar="FILE.png",
                      help="also plot every scoring against self-play positions")
  args = parser.parse_args(argv)
  windows = [tuple(int(x) for x in w.split("-")) for w in args.windows.split(",")]
  print("| run | " + " | ".join(f"iterations {lo}-{hi}" for lo, hi in windows)
        + " | minutes at the last window's end |")
  print("|---|" + "---|" * (len(windows) + 1))
  for spec in args.runs:
    name, path = spec.split("=", 1)
    points = scorings(Path(path))
    cells = []
    for lo, hi in windows:
      m = window_means(points, lo, hi)
      cells.append("" if m is None else f"{m[0]:.1f} / {m[1]:.1f} ({m[2]})")
    last = [p for p in points if p[0] <= windows[-1][1]]
    print(f"| {name} | " + " | ".join(cells) + f" | {last[-1][1]:.1f} |")
  if args.plot:
    runs = dict(spec.split("=", 1) for spec in args.runs)
    plots.plot_curves({name: curve(Path(path)) for name, path in runs.items()}, args.plot,
                      x="positions")


if __name__ == "__main__":
  main()
