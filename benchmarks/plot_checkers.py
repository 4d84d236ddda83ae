"""Checkers over training against OpenSpiel's MCTS with 1000 simulations (docs/efficiency.md).

Reads the matches `python -m experiments.evaluate --checkpoint results/checkers_cpu [--snapshot N]
--opponents openspiel-mcts:1000 ...` appended to `results/checkers_cpu/matches.jsonl`, pools the
games each network played (the final one was played twice, with seeds 0 and 1), puts every
snapshot at its training minutes (from the run's metrics.jsonl) and writes a markdown table and
the score with its 95% Wilson interval against minutes.

    python -m benchmarks.plot_checkers --out results/efficiency/checkers
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from azjax import arena  # noqa: E402
from azjax.runs import loop  # noqa: E402

RUN = Path("results/checkers_cpu")
OPPONENT = "openspiel-mcts1000"


def minutes_at(run: Path) -> dict[int, float]:
  """Training minutes at the end of every iteration of the run."""
  rows = loop.read_metrics(run)
  return {row["iteration"]: row["seconds"] / 60 for row in rows}


def pooled(run: Path) -> dict[int, list[int]]:
  """`{iteration: [wins, draws, losses]}` over every match against OPPONENT (the final network
  at the run's last iteration)."""
  last = max(minutes_at(run))
  out: dict[int, list[int]] = {}
  for line in (run / "matches.jsonl").read_text().splitlines():
    match = json.loads(line)
    if match["agent_b"] != OPPONENT:
      continue
    snapshot = re.search(r"@(\d+)\)$", match["agent_a"])
    iteration = int(snapshot.group(1)) if snapshot else last
    total = out.setdefault(iteration, [0, 0, 0])
    for i, key in enumerate(("wins", "draws", "losses")):
      total[i] += match[key]
  return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--run", default=str(RUN))
  parser.add_argument("--out", required=True)
  args = parser.parse_args(argv)
  run, out = Path(args.run), Path(args.out)
  out.mkdir(parents=True, exist_ok=True)
  minutes = minutes_at(run)
  rows = []
  for iteration, (wins, draws, losses) in pooled(run).items():
    games = wins + draws + losses
    score = (wins + draws / 2) / games
    low, high = arena.wilson_interval(score, games)
    rows.append((iteration, minutes[iteration], wins, draws, losses, score, low, high))
  lines = [f"Score of `{run}` against {OPPONENT} over training (64 simulations a move, both "
           "colours; `python -m benchmarks.plot_checkers --out "
           f"{out}`)", "",
           "| iteration | training minutes | W/D/L | score | 95% interval |",
           "|---|---|---|---|---|"]
  lines += [f"| {it} | {m:.1f} | {w}/{d}/{lo} | {s:.3f} | [{a:.3f}, {b:.3f}] |"
            for it, m, w, d, lo, s, a, b in rows]
  (out / "table.md").write_text("\n".join(lines) + "\n")
  print("\n".join(lines))

  fig, ax = plt.subplots(figsize=(6, 4))
  xs = [r[1] for r in rows]
  ax.errorbar(xs, [r[5] for r in rows], yerr=[[r[5] - r[6] for r in rows],
                                               [r[7] - r[5] for r in rows]],
              marker="o", capsize=3)
  ax.axhline(0.75, color="gray", linestyle="--", label="target 0.75")
  ax.set(xlabel="training minutes (2 CPU cores)", ylabel=f"score against {OPPONENT}",
         ylim=(0, 1), title="checkers_cpu: ResNet 32x4, 64 simulations a move")
  ax.legend()
  fig.tight_layout()
  fig.savefig(out / "score.png", dpi=120)
  print(f"wrote {out / 'table.md'} and {out / 'score.png'}")


if __name__ == "__main__":
  main()
