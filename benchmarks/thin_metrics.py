"""Thins a run's metrics.jsonl to every Nth iteration, keeping every evaluation row.

    python -m benchmarks.thin_metrics RUN_DIR --every 10

Keeps every `--every`th row of the run's metrics.jsonl (and metrics.csv, where there is one),
every row that holds an evaluation or solver scoring, and the last row: the per-iteration rows
of a 21000-iteration run are 15 MB, too many for the record in results/.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path


def keep(rows: list[dict], every: int) -> list[bool]:
  """Which rows to keep: every `every`th iteration, the evaluations and the last row."""
  return [i == len(rows) - 1 or r["iteration"] % every == 0
          or any(k.startswith(("eval/", "solver/")) for k in r) for i, r in enumerate(rows)]


def thin(run: Path, every: int) -> tuple[int, int]:
  """Thins `run`'s metrics files in place; `(rows before, rows after)`."""
  rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()
          if line.strip()]
  kept_rows = [r for r, k in zip(rows, keep(rows, every)) if k]
  (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept_rows))
  kept = {r["iteration"] for r in kept_rows}
  path = run / "metrics.csv"
  if path.exists():
    with path.open() as f:
      head, *body = list(csv.reader(f))
    column = head.index("iteration")
    with path.open("w", newline="") as f:
      csv.writer(f).writerows([head] + [r for r in body if int(float(r[column])) in kept])
  return len(rows), len(kept_rows)


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("run", type=Path, help="the run directory")
  parser.add_argument("every", type=int, nargs="?", default=None, help="(as --every)")
  parser.add_argument("--every", dest="every_option", type=int, default=10,
                      help="keep every Nth iteration (default 10)")
  args = parser.parse_args(argv)
  before, after = thin(args.run, args.every or args.every_option)
  print(before, "->", after)


if __name__ == "__main__":
  main()
