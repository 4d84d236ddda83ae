"""Learning curves against perfect play: `azjax efficiency NAME=RUN ... --out DIR`.

Scores every network snapshot of each run on the solver benchmark (`azjax.evaluate.curves`) and
writes `DIR/<NAME>.jsonl` (one row per snapshot), `DIR/mistakes.png` (mistake rate against training
minutes), `DIR/mistakes_positions.png` (against self-play positions) and `DIR/curves.md` (the
rows as a table). `--replot` redraws from the JSONL files already in DIR. A run's JSONL grows as
each snapshot is scored: Ctrl-C keeps the rows scored, and the plots and the table show them.

    azjax efficiency baseline=runs/c4_base candidate=runs/c4_new \
        --out results/efficiency/connect_four

(the same: `python -m experiments.efficiency`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from azjax import console, files, plots
from azjax import runs as run_kinds
from azjax.cli.common import command_line, prog
from azjax.evaluate import curves
from azjax.solver import benchmark as solver_benchmark


def parse_runs(specs: list[str]) -> dict[str, Path]:
  """["name=dir", ...] (or bare dirs, named by their last component) -> {name: dir}."""
  runs = {}
  for spec in specs:
    name, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
    path = Path(path)
    runs[name or path.name] = path
  return runs


def markdown(curves_by_run: dict[str, list[dict]]) -> str:
  """A table per run: minutes, positions and each player's mistake and optimal-move rates."""
  lines = []
  for name, rows in curves_by_run.items():
    players = [k.split("/")[0] for k in rows[0] if k.endswith("/mistake_rate")]
    lines += [f"### {name}", "", "| iteration | minutes | positions | "
              + " | ".join(f"{p} mistakes | {p} optimal" for p in players) + " |",
              "|---|---|---|" + "---|---|" * len(players)]
    for r in rows:
      cells = " | ".join(
          f"{100 * r[f'{p}/mistake_rate']:.1f}% | {100 * r[f'{p}/optimal_rate']:.1f}%"
          for p in players)
      lines.append(f"| {r['iteration']} | {r['minutes']:.1f} | {r['positions']:,} | {cells} |")
    lines.append("")
  return "\n".join(lines)


@console.command
def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(prog=prog("efficiency"),
                                   description=__doc__.split("\n")[0])
  parser.add_argument("runs", nargs="*", metavar="NAME=RUN_DIR")
  parser.add_argument("--out", required=True, help="directory for the curves and plots")
  parser.add_argument("--positions", default=None,
                      help="labelled positions, a file or a shipped set's name (strong); "
                      "default: the game's packaged set")
  parser.add_argument("--simulations", default="0,32",
                      help="0 = the raw policy; others: search with that many simulations")
  parser.add_argument("--every", type=int, default=1, help="score every k-th snapshot")
  parser.add_argument("--replot", action="store_true", help="redraw from DIR/*.jsonl only")
  args = parser.parse_args(argv)
  out = Path(args.out)
  interrupted = False
  if args.every < 1:
    parser.error(f"--every {args.every}: must be >= 1")
  if args.replot:
    found = sorted(out.glob("*.jsonl"))
    if not found:
      parser.error(f"--replot: no *.jsonl in {out}")
    by_run = {p.stem: files.read_jsonl(p) for p in found}
  else:
    if not args.runs:
      parser.error("name at least one NAME=RUN_DIR (or --replot)")
    try:
      simulations = [int(s) for s in args.simulations.split(",")]
    except ValueError:
      parser.error(f"--simulations {args.simulations!r}: expected counts like 0,32")
    by_run = {}
    runs = parse_runs(args.runs)
    for number, (name, run_dir) in enumerate(runs.items(), 1):
      rows: list[dict] = []
      jsonl = out / f"{name}.jsonl"
      bar = console.progress(None, f"{name} ({number}/{len(runs)})", unit="snapshot")

      def on_row(row, done, total, bar=bar, rows=rows, jsonl=jsonl):
        rows.append(row)
        files.write_jsonl(rows, jsonl)  # At once: Ctrl-C, or a crash, keeps the rows scored.
        bar.total = total
        bar.update(1)

      try:
        path = solver_benchmark.positions_path(run_kinds.run_game(run_dir).name,
                                               args.positions)
        positions = solver_benchmark.Positions.load(path)
        curves.solver_curve(run_dir, positions, simulations=simulations, every=args.every,
                            on_row=on_row)
      except (FileNotFoundError, ValueError) as err:
        parser.exit(2, f"error: {err}\n")
      except KeyboardInterrupt:
        interrupted = console.interrupted(f"writing the {len(rows)} snapshots of {name} scored "
                                          "so far and the runs before it")
      finally:
        bar.close()
      if rows:
        by_run[name] = rows
        print(f"{name}: {len(rows)} snapshots -> {jsonl}")
      if interrupted:
        break
    if not by_run:  # Ctrl-C before the first snapshot was scored.
      sys.exit(console.INTERRUPTED)
  figures = [plots.plot_curves(by_run, out / "mistakes.png"),
             plots.plot_curves(by_run, out / "mistakes_positions.png", x="positions")]
  table = out / "curves.md"
  table.write_text(f"`{command_line(parser.prog, argv)}`\n\n" + markdown(by_run))
  print("wrote", ", ".join(str(p) for p in [*figures, table]))
  if interrupted:
    sys.exit(console.INTERRUPTED)


if __name__ == "__main__":
  main()
