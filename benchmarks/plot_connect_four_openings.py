"""Mistakes against perfect play over training, for the Connect Four runs of docs/efficiency.md.

Reads each run's curve (the training log's own solver scorings, `solver/<player>/mistake_rate`
in metrics.jsonl, or a `python -m experiments.efficiency` JSONL) and draws raw-policy and
32-simulation mistake rates against training minutes and against iterations (equal positions
and SGD steps), and prints a markdown table at fixed iterations.

    python -m benchmarks.plot_connect_four_openings --out results/efficiency/connect_four/openings
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from azjax import files  # noqa: E402

HERE = Path("results/efficiency/connect_four")
CURVES = {  # name -> (file, kind)
    "baseline": (HERE / "baseline.jsonl", "efficiency"),
    "augment+mix+sgd32": (HERE / "augment+mix+sgd32.jsonl", "efficiency"),
    "augment+mix+sgd32, rerun": (HERE / "rerun/metrics.jsonl.gz", "metrics"),
    "+ random openings (up to 12), cosine lr": (HERE / "openings/k12_run/metrics.jsonl.gz",
                                                 "metrics"),
    "the same with openings of up to 24 moves (20 min)": (HERE / "openings/k24/metrics.jsonl.gz",
                                                           "metrics"),
    "openings of up to 24 moves (the ResNet preset, sessions 11-17)": (
        HERE / "resnet_run/metrics.jsonl.gz", "metrics"),
    "the preset + playout cap randomisation (48 min)": (HERE / "pcr/metrics.jsonl.gz", "metrics"),
    # Session 17, on a machine 1.5x slower an iteration: compare these at equal iterations.
    "openings of up to 36 moves (48 min, slower machine)": (HERE / "openings/k36/metrics.jsonl.gz",
                                                             "metrics"),
    "the preset, Gumbel noise 0.5 in self-play (52 min, slower machine)": (
        HERE / "gumbel05/metrics.jsonl.gz", "metrics"),
}
PLAYERS = (("policy", "raw policy"), ("search32", "32 simulations"))


def read_curve(path: Path, kind: str) -> list[dict]:
  """`[{"iteration", "minutes", "policy", "search32"}]` from one curve file."""
  out = []
  for row in files.read_jsonl(path):
    prefix = "solver/" if kind == "metrics" else ""
    if f"{prefix}policy/mistake_rate" not in row or row["iteration"] == 0:
      continue
    minutes = row["seconds"] / 60 if kind == "metrics" else row["minutes"]
    out.append({"iteration": row["iteration"], "minutes": minutes,
                **{p: row[f"{prefix}{p}/mistake_rate"] for p, _ in PLAYERS}})
  return out


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", required=True)
  args = parser.parse_args(argv)
  out = Path(args.out)
  out.mkdir(parents=True, exist_ok=True)
  curves = {name: read_curve(path, kind) for name, (path, kind) in CURVES.items()}
  fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharey="row")
  for row, (player, label) in enumerate(PLAYERS):
    for col, x in enumerate(("minutes", "iteration")):
      ax = axes[row, col]
      for name, points in curves.items():
        ax.plot([p[x] for p in points], [100 * p[player] for p in points], label=name)
      ax.set_xlabel("training minutes" if x == "minutes" else "iterations (2048 positions each)")
      ax.set_ylabel(f"{label}: mistakes (%)")
      ax.grid(alpha=0.3)
  axes[0, 0].legend(fontsize=8)
  fig.suptitle("Connect Four: mistakes against perfect play (495 decisive positions)")
  fig.tight_layout()
  fig.savefig(out / "mistakes.png", dpi=100)
  marks = (250, 500, 1000, 1500, 2000)
  lines = ["| run | " + " | ".join(f"iteration {m}" for m in marks) + " | last |",
           "|---|" + "---|" * (len(marks) + 1)]
  for name, points in curves.items():
    # The nearest scoring (the efficiency JSONLs hold every other snapshot: 50, 150, ...).
    near = [min(points, key=lambda p: abs(p["iteration"] - m)) for m in marks]
    cells = [f"{100 * p['policy']:.1f} / {100 * p['search32']:.1f} ({p['minutes']:.0f} min"
             + ("" if p["iteration"] == m else f", it. {p['iteration']}") + ")"
             if abs(p["iteration"] - m) <= 100 else "" for m, p in zip(marks, near)]
    last = points[-1]
    cells.append(f"{100 * last['policy']:.1f} / {100 * last['search32']:.1f} "
                 f"(it. {last['iteration']}, {last['minutes']:.0f} min)")
    lines.append(f"| {name} | " + " | ".join(cells) + " |")
  table = "\n".join(lines) + "\n"
  (out / "table.md").write_text(
      "`python -m benchmarks.plot_connect_four_openings --out "
      f"{args.out}`\n\nMistakes raw / with 32 simulations (%), at equal iterations (the "
      "training minutes in brackets, and the iteration where the curve has no scoring at the "
      "mark):\n\n" + table)
  print(table)


if __name__ == "__main__":
  main()
