"""Joins the metrics of a run trained over several warm-started sessions into one run directory.

    python -m benchmarks.join_sessions results/connect_four_gpu runs/c4 runs/c4b runs/c4d

How `metrics.jsonl` of results/connect_four_gpu (and results/checkers_gpu) was made from the
sessions' own metrics files, brought back from the GPU machine. Each later session was
warm-started (`--init-from`), so its counters restart from 0: they are made cumulative, its
iteration-0 evaluation row (the previous session's network again) is dropped, and a `session`
column says which session a row comes from. `metrics.csv` and the plots are written again.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from azjax.plots import plot_run
from azjax.runs.driver import read_metrics

COUNTERS = ("iteration", "positions", "games", "sgd_steps", "seconds")


def join(sessions: list[Path]) -> list[dict]:
  """The rows of every session's metrics.jsonl, counters cumulative, with a `session` number."""
  rows: list[dict] = []
  offset = dict.fromkeys(COUNTERS, 0)
  for number, session in enumerate(sessions, start=1):
    for line in (session / "metrics.jsonl").read_text().splitlines():
      if not line.strip():
        continue
      row = json.loads(line)
      if number > 1 and row["iteration"] == 0:
        continue
      rows.append({**row, **{k: row[k] + offset[k] for k in COUNTERS}, "session": number})
    offset = {k: rows[-1][k] for k in COUNTERS}
  return rows


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("out", type=Path, help="the run directory to write")
  parser.add_argument("sessions", type=Path, nargs="+", help="the sessions' run directories")
  args = parser.parse_args(argv)
  rows = join(args.sessions)
  args.out.mkdir(parents=True, exist_ok=True)
  (args.out / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
  keys = list(dict.fromkeys(k for row in rows for k in row))
  with open(args.out / "metrics.csv", "w", newline="") as f:
    writer = csv.DictWriter(f, keys, restval="")
    writer.writeheader()
    writer.writerows(rows)
  plot_run(args.out, read_metrics(args.out))


if __name__ == "__main__":
  main()
