"""How `metrics.csv` / `metrics.jsonl` here (and in `../checkers_gpu`) were made from the
sessions' own metrics files, brought back from the GPU machine:

    python results/connect_four_gpu/join_sessions.py results/connect_four_gpu runs/c4 runs/c4b runs/c4d

Each later session was warm-started (`--init-from`), so its counters restart from 0: they are
made cumulative, its iteration-0 evaluation row (the previous session's network again) is
dropped, and a `session` column says which session a row comes from. The plots are redrawn.
"""

import csv
import json
import sys
from pathlib import Path

from azjax.driver import read_metrics
from azjax.plots import plot_run

COUNTERS = ("iteration", "positions", "games", "sgd_steps", "seconds")


def main(out: str, *sessions: str) -> None:
  out_dir, rows = Path(out), []
  offset = dict.fromkeys(COUNTERS, 0)
  for number, session in enumerate(sessions, start=1):
    for line in open(Path(session) / "metrics.jsonl"):
      row = json.loads(line)
      if number > 1 and row["iteration"] == 0:
        continue
      rows.append({**row, **{k: row[k] + offset[k] for k in COUNTERS}, "session": number})
    offset = {k: rows[-1][k] for k in COUNTERS}
  with open(out_dir / "metrics.jsonl", "w") as f:
    f.writelines(json.dumps(row) + "\n" for row in rows)
  keys = list(dict.fromkeys(k for row in rows for k in row))
  with open(out_dir / "metrics.csv", "w", newline="") as f:
    writer = csv.DictWriter(f, keys, restval="")
    writer.writeheader()
    writer.writerows(rows)
  plot_run(out_dir, read_metrics(out_dir))


if __name__ == "__main__":
  main(*sys.argv[1:])
