"""Two runs' snapshots matched at equal training minutes.

    python -m benchmarks.equal_minutes runs/bt8_s8 runs/bt8_mlp \\
        --minutes 25,50,75,100 --games 40 --simulations 64 --openings 4 --out runs/eq_s8

For each mark, each run plays with its latest snapshot (`RUN/models/ITERATION`) saved at or
before that many training minutes (the `seconds` its `metrics.jsonl` records at the
iteration), and the two play `--games` games through `experiments.evaluate --pool`, each pair
from its own random opening. Prints a markdown table (score of the first run, Wilson 95%
interval); each match's `eval.md` and `matches.jsonl` are kept under `--out/MINUTES`.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys

from azjax.evaluate import curves
from azjax.runs import checkpoint


def snapshot_minutes(run: pathlib.Path) -> dict[int, float]:
  """Training minutes at each snapshot of `run` ({iteration: minutes})."""
  seconds = curves.training_seconds(run)
  snapshots = [i for i, _ in checkpoint.list_models(run)]
  missing = [i for i in snapshots if i not in seconds]
  if not snapshots or missing:
    raise SystemExit(f"{run}: no snapshots (models/<iteration>)" if not snapshots else
                     f"{run}/metrics.jsonl has no row for snapshot iterations {missing}")
  return {i: seconds[i][0] / 60 for i in snapshots}


def latest_before(minutes: dict[int, float], mark: float) -> int:
  """The last snapshot saved at or before `mark` minutes."""
  before = [i for i, m in minutes.items() if m <= mark]
  if not before:
    raise SystemExit(f"no snapshot at or before {mark} minutes (the first is at "
                     f"{min(minutes.values()):.1f})")
  return max(before)


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("run_a", type=pathlib.Path)
  parser.add_argument("run_b", type=pathlib.Path)
  parser.add_argument("--minutes", required=True, help="comma-separated marks, e.g. 25,50,75")
  parser.add_argument("--games", type=int, default=40)
  parser.add_argument("--simulations", type=int, default=64)
  parser.add_argument("--openings", type=int, default=4)
  parser.add_argument("--out", type=pathlib.Path, required=True)
  args = parser.parse_args(argv)

  marks = [float(m) for m in args.minutes.split(",")]
  minutes_a, minutes_b = snapshot_minutes(args.run_a), snapshot_minutes(args.run_b)
  rows = []
  for mark in marks:
    it_a, it_b = latest_before(minutes_a, mark), latest_before(minutes_b, mark)
    out = args.out / f"{mark:g}"
    subprocess.run(
        [sys.executable, "-m", "experiments.evaluate", "--pool", f"{args.run_a}@{it_a}",
         f"{args.run_b}@{it_b}", "--games", str(args.games), "--simulations",
         str(args.simulations), "--openings", str(args.openings), "--out", str(out)],
        check=True, stdout=subprocess.DEVNULL)
    with open(out / "matches.jsonl") as f:
      match = json.loads(f.readlines()[-1])
    rows.append(
        f"| {mark:g} | {it_a} ({minutes_a[it_a]:.1f}) | {it_b} ({minutes_b[it_b]:.1f}) | "
        f"{match['wins']} / {match['draws']} / {match['losses']} | "
        f"{match['score']:.3f} [{match['low']:.3f}, {match['high']:.3f}] |")
    print(rows[-1], flush=True)
  print(f"\n| minutes | {args.run_a} iteration (min) | {args.run_b} iteration (min) | "
        f"W / D / L | score, 95% interval |\n|---|---|---|---|---|")
  print("\n".join(rows))


if __name__ == "__main__":
  main()
