"""Where `azjax evaluate` writes (`azjax.cli.evaluate`): the markdown tables appended to
`eval.md`, the match rows of `matches.jsonl` and a run's `strength.json`, each under the same
rule: beside the run evaluated, or in `--out DIR`, and never into the committed results/ unless
`--out` names the run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import jax

from azjax import arena, files
from azjax.evaluate import strength
from azjax.runs import layout


def table_header() -> str:
  """`MatchResult.MARKDOWN_HEADER` with a column for the match's wall time."""
  head, rule = arena.MatchResult.MARKDOWN_HEADER.split("\n")
  return f"{head} seconds |\n{rule}---|"


def table_row(result: arena.MatchResult, seconds: float) -> str:
  """A row of `table_header`'s table: `result.markdown_row()` and the match's wall time."""
  return result.markdown_row() + f" {seconds:.0f} |"


def output_dir(args: argparse.Namespace, default: str | Path | None) -> Path | None:
  """Where eval.md and plots go: `--out`, else `default` (the run evaluated), except in the
  committed results/ (written only when `--out` names it): None, print only."""
  if args.out:
    return Path(args.out)
  if default is None or layout.in_committed_results(default):
    return None
  return Path(default)


def append_eval(out: Path | None, command: str, lines: list[str]) -> None:
  """Appends `lines` to `out/eval.md` under the command that made them (atomically: the file
  is replaced whole); with `out` None says how to keep them."""
  if out is None:
    print("(tables not written to a file: --out DIR appends them to DIR/eval.md; a run in the "
          "committed results/ is written only when --out names it)", flush=True)
    return
  out.mkdir(parents=True, exist_ok=True)
  path = out / layout.EVAL_TABLE
  old = path.read_text() if path.exists() else ""
  files.write_atomic(path, old + f"\n`{command}` (backend {jax.default_backend()})\n\n"
                     + "\n".join(lines) + "\n")
  print(f"wrote {path}", flush=True)


def write_strength(args: argparse.Namespace, run_dir: str | Path,
                   measured: strength.Strength) -> None:
  """`strength.write_measured`: `run_dir/strength.json`, what play's default opponent is chosen
  by (not in the committed results/ unless `--out` names the run)."""
  path = strength.write_measured(run_dir, measured, out=args.out)
  if path is not None:
    print(f"wrote {path}: {measured.text()}", flush=True)


def record(out: Path | None, rows: list[dict]) -> None:
  """Appends match rows (`tournament.match_row`) to `out/matches.jsonl`, the record the
  markdown tables are rendered from (`--ladder-plot` reads it back); nothing when `out` is
  None."""
  if out is not None and rows:
    files.append_jsonl(rows, out / layout.MATCHES)
