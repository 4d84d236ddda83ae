"""python results/efficiency/connect_four/mlp/thin_metrics.py RUN_DIR 10

Keep every `--every`th row of a run's metrics.jsonl and metrics.csv, plus every row that
holds an evaluation or solver scoring and the last row (the per-iteration rows of a 21000-iteration
run are 15 MB)."""
import csv, json, sys
from pathlib import Path
run, every = Path(sys.argv[1]), int(sys.argv[2])
rows = [json.loads(l) for l in (run / "metrics.jsonl").read_text().splitlines() if l.strip()]
def keep(i, r):
  return (i == len(rows) - 1 or r["iteration"] % every == 0
          or any(k.startswith(("eval/", "solver/")) for k in r))
kept = {r["iteration"] for i, r in enumerate(rows) if keep(i, r)}
(run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for i, r in enumerate(rows) if keep(i, r)))
path = run / "metrics.csv"
if path.exists():
  with path.open() as f:
    reader = list(csv.reader(f))
  head, body = reader[0], reader[1:]
  col = head.index("iteration")
  body = [r for r in body if int(float(r[col])) in kept]
  with path.open("w", newline="") as f:
    csv.writer(f).writerows([head] + body)
print(len(rows), "->", len(kept))
