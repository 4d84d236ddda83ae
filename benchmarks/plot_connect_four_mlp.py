"""Connect Four mistakes against perfect play over training minutes: the MLP against the ResNet.

The MLP runs and the session-17 ResNet runs trained on the same (slower) machine; the preset's
ResNet run (`results/efficiency/connect_four/resnet_run`) trained on a machine where an
iteration took 1.9 s instead of 2.85-2.95 s, so its minutes are also drawn multiplied by that
measured ratio (1.5).
Reads the training logs' own solver scorings (`solver/<player>/mistake_rate` in metrics.jsonl)
and prints a markdown table of the rates at fixed minutes (the last scoring at or before each).

    python -m benchmarks.plot_connect_four_mlp --out results/efficiency/connect_four/mlp
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from azjax.files import read_jsonl  # noqa: E402

HERE = Path("results/efficiency/connect_four")
SLOWER = 1.5  # the preset's machine against this one: 2.85-2.95 s an iteration against 1.9 s
CURVES = {  # name -> (metrics.jsonl, factor on its minutes, line style)
    "MLP 256x3 (mlp_run)": (HERE / "mlp_run/metrics.jsonl.gz", 1.0, "-"),
    "MLP 256x3, 12-minute screening": (HERE / "mlp/screen_12min/metrics.jsonl.gz", 1.0, "-"),
    "ResNet 32x3 preset (resnet_run), minutes x1.5": (HERE / "resnet_run/metrics.jsonl.gz",
                                                       SLOWER, "--"),
    "ResNet 32x3 preset (resnet_run), its own minutes": (HERE / "resnet_run/metrics.jsonl.gz", 1.0,
                                                          ":"),
    "ResNet 32x3, openings up to 36 (this machine)": (HERE / "openings/k36/metrics.jsonl.gz", 1.0,
                                                      "--"),
    "ResNet 32x3, Gumbel noise 0.5 (this machine)": (HERE / "gumbel05/metrics.jsonl.gz", 1.0, "--"),
}
PLAYERS = (("policy", "raw policy"), ("search32", "32 simulations"))
MARKS = (6, 12, 24, 48, 72, 96, 120)


def read_curve(path: Path, factor: float) -> list[dict]:
  """`[{"minutes", "policy", "search32"}]`: the scorings after iteration 0."""
  return [{"minutes": factor * row["seconds"] / 60,
           **{p: row[f"solver/{p}/mistake_rate"] for p, _ in PLAYERS}}
          for row in read_jsonl(path)
          if "solver/policy/mistake_rate" in row and row["iteration"] > 0]


def at(points: list[dict], minutes: float, player: str) -> str:
  before = [p for p in points if p["minutes"] <= minutes + 1e-9]
  if not before or points[-1]["minutes"] < minutes - 3:  # the run had stopped by then
    return ""
  return f"{100 * before[-1][player]:.1f}"


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", required=True)
  args = parser.parse_args(argv)
  out = Path(args.out)
  curves = {name: (read_curve(path, factor), style)
            for name, (path, factor, style) in CURVES.items()}
  fig, axes = plt.subplots(1, 2, figsize=(13, 5))
  for ax, (player, label) in zip(axes, PLAYERS):
    for name, (points, style) in curves.items():
      ax.plot([p["minutes"] for p in points], [100 * p[player] for p in points], style,
              label=name)
    ax.set_xlabel("training minutes (wall clock, 2 CPU cores)")
    ax.set_ylabel(f"{label}: mistakes (%)")
    ax.set_ylim(0, 30)
    ax.grid(alpha=0.3)
  axes[0].legend(fontsize=8)
  fig.suptitle("Connect Four: mistakes against perfect play (495 decisive positions)")
  fig.tight_layout()
  fig.savefig(out / "mistakes.png", dpi=100)
  lines = ["| run (raw / 32 simulations, %) | " + " | ".join(f"{m} min" for m in MARKS) + " |",
           "|---|" + "---|" * len(MARKS)]
  for name, (points, _) in curves.items():
    cells = [" / ".join(filter(None, (at(points, m, p) for p, _ in PLAYERS))) for m in MARKS]
    lines.append(f"| {name} | " + " | ".join(cells) + " |")
  (out / "table.md").write_text("\n".join(lines) + "\n")
  print("\n".join(lines))


if __name__ == "__main__":
  main()
