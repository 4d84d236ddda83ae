"""Time to the first training iteration on a cold and on a warm compilation cache.

    python -m benchmarks.compile_cache                          # preset tic_tac_toe
    python -m benchmarks.compile_cache --preset connect_four --repeats 2

Each measurement is a fresh Python process running the training command a user runs,
`python -m experiments.<game> --preset P --iterations 2 --compile-cache DIR`, in a new run
directory. The first process of a pair starts on an empty cache directory (cold: everything
compiles and is written to the cache); the second, on the directory the first filled (warm:
the same programs are read back). Columns: the process's own "compiled in N s" for the
training iteration (ahead-of-time compilation, `azjax.runs.loop.compile_step`), the time from
starting the process to the first iteration's metrics row (imports, checks, compiling, the
iteration-0 evaluation and the first iteration), and the whole process (two iterations, the
final evaluation, checkpoints, plots). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from azjax import config as config_lib

ROOT = Path(__file__).resolve().parents[1]


def measure(preset: str, cache: Path, run_dir: Path) -> dict[str, float]:
  """One training process on cache directory `cache`: `{"compile", "first_row", "total"}` s."""
  game = config_lib.PRESETS[preset].game
  command = [sys.executable, "-m", f"experiments.{game}", "--preset", preset, "--iterations",
             "2", "--run-dir", str(run_dir), "--no-progress", "--compile-cache", str(cache)]
  metrics = run_dir / "metrics.jsonl"
  start = time.time()
  proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
  first_row = None
  while proc.poll() is None:
    # The first iteration's row: iteration 1 in metrics.jsonl (row 0 is the untrained network).
    if first_row is None and metrics.exists() and any(
        json.loads(line).get("iteration") == 1
        for line in metrics.read_text().splitlines() if line.endswith("}")):
      first_row = time.time() - start
    time.sleep(0.05)
  total = time.time() - start
  out = proc.stdout.read()
  if proc.returncode != 0:
    raise RuntimeError(f"{' '.join(command)} failed:\n{out[-3000:]}")
  compiled = re.search(r"compiled in ([\d.]+) s", out)
  return {"compile": float(compiled.group(1)) if compiled else float("nan"),
          "first_row": first_row if first_row is not None else total, "total": total}


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(prog="python -m benchmarks.compile_cache",
                                   description=__doc__.split("\n\n")[0])
  parser.add_argument("--preset", default="tic_tac_toe", help=", ".join(config_lib.PRESETS))
  parser.add_argument("--repeats", type=int, default=1, help="cold/warm pairs")
  args = parser.parse_args(argv)
  rows = []
  with tempfile.TemporaryDirectory(prefix="azjax-compile-cache-") as tmp:
    for pair in range(args.repeats):
      cache = Path(tmp) / f"cache{pair}"  # Empty: the first process of the pair is cold.
      for kind in ("cold", "warm"):
        result = measure(args.preset, cache, Path(tmp) / f"run{pair}-{kind}")
        files = sum(1 for p in cache.rglob("*") if p.is_file())
        rows.append((pair + 1, kind, result, files))
        print(f"pair {pair + 1} {kind}: {result}", file=sys.stderr, flush=True)
  load = os.getloadavg()
  print(f"preset {args.preset}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        "(1 / 5 / 15 min) at the end\n")
  print("| pair | cache | iteration compiled in | first iteration done after | process total "
        "| cache files |")
  print("|---|---|---|---|---|---|")
  for pair, kind, r, files in rows:
    print(f"| {pair} | {kind} | {r['compile']:.1f} s | {r['first_row']:.1f} s "
          f"| {r['total']:.1f} s | {files} |")
  for pair in range(1, args.repeats + 1):
    cold, warm = (r for p, _, r, _ in rows if p == pair)
    print(f"\npair {pair}: warm/cold compile {warm['compile'] / cold['compile']:.2f}, "
          f"first iteration {warm['first_row'] / cold['first_row']:.2f}, "
          f"total {warm['total'] / cold['total']:.2f}")


if __name__ == "__main__":
  main()
