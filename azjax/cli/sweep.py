"""Hyperparameter sweep (`azjax sweep`, the same as `python -m experiments.sweep`):

    azjax sweep --game breakthrough --grid learning_rate=1e-3,3e-4 --seeds 0,1,2,3

Runs that differ only in batchable values (learning rate, weight decay, seed, search noise, ...)
train together as one vmapped program; runs that change shapes (channels, simulations, batch
sizes, ...) form separate groups, trained one after another. See `azjax.sweep`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from azjax import config as config_lib
from azjax import console, games
from azjax.cli.common import (
  add_distributed_options,
  command_line,
  ending_together,
  prog,
  start_distributed,
)
from azjax.cli.train import (
  add_compile_cache_options,
  add_settings_options,
  build_config,
  use_compile_cache,
)


def parse_seeds(text: str | None) -> list[int] | None:
  """"0,1,2" -> [0, 1, 2]; "0-3" -> [0, 1, 2, 3]."""
  if text is None:
    return None
  try:
    if "-" in text and "," not in text:
      low, high = (int(x) for x in text.split("-", 1))
      return list(range(low, high + 1))
    return [int(x) for x in text.split(",") if x.strip()]
  except ValueError:
    raise ValueError(f"--seeds {text!r}: expected integers like 0,1,2 or 0-3") from None


@console.command
def main(argv: list[str] | None = None) -> None:
  from azjax import sweep  # The key lists; imports JAX but compiles nothing.

  parser = argparse.ArgumentParser(
      prog=prog("sweep"),
      description="Train a grid of configurations: batchable keys vmapped together, "
      "shape-changing keys as separate groups.",
      epilog="keys that batch (one vmapped program): " + ", ".join(sweep.BATCHED_KEYS)
      + ". Keys that form separate groups: " + ", ".join(sweep.GROUPED_KEYS)
      + ". Keys that cannot be swept: " + ", ".join(sweep.FIXED_KEYS) + ".")
  parser.add_argument("--game", help="one of " + ", ".join(games.GAMES))
  parser.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                      help="values of one key (repeatable: the cartesian product is swept)")
  parser.add_argument("--seeds", default=None, help="seeds of every combination: 0,1,2 or 0-3")
  parser.add_argument("--preset", default="auto",
                      help="auto (a GPU preset with an accelerator, else a CPU one) or one of: "
                      + ", ".join(config_lib.PRESETS))
  add_settings_options(parser, "a base config field (search.simulations=32; docs/config.md "
                       "lists them)")
  parser.add_argument("--minutes", type=float, default=None,
                      help="training time budget of each group; its clock starts once the "
                      "group's iteration has compiled")
  parser.add_argument("--iterations", type=int, default=None, help="iteration limit")
  parser.add_argument("--name", default=None, help="sweep name (default from game and keys)")
  parser.add_argument("--out", default="runs/sweeps",
                      help="parent of the sweep directory (default runs/sweeps; the committed "
                      "results/sweeps is written only when named)")
  parser.add_argument("--max-vmap", type=int, default=None,
                      help="at most this many runs in one vmapped program")
  parser.add_argument("--devices", type=int, default=None,
                      help="spread each group over the first N devices (default: all)")
  parser.add_argument("--loop-configs", action="store_true",
                      help="run the network one configuration at a time inside the vmapped "
                      "program (compiles longer; see benchmarks/sweep.py)")
  parser.add_argument("--no-memory-check", action="store_true",
                      help="skip the device-memory estimate")
  add_compile_cache_options(parser)
  parser.add_argument("--no-progress", action="store_true",
                      help="no progress bar (there is none when stderr is not a terminal)")
  add_distributed_options(parser)
  parser.add_argument("--summarize", metavar="SWEEP_DIR", default=None,
                      help="only rewrite the summary files of an existing sweep directory")
  parser.add_argument("--dry-run", action="store_true",
                      help="check the input, print the groups with their memory and time "
                      "estimates (from earlier sweeps' recorded times in --out and "
                      "results/sweeps, or the minutes budget), and exit")
  args = parser.parse_args(argv)
  if args.summarize:
    for path in sweep.summarize(args.summarize):
      print(path)
    return
  if not args.game:
    parser.error("--game is required")
  # Before anything starts JAX's backends (the "auto" preset asks which there are).
  primary = start_distributed(parser, args)
  with ending_together(args):
    _sweep(parser, args, argv, primary)


def _sweep(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str] | None,
           primary: bool) -> None:
  """The rest of `main`, once the processes of a distributed sweep have joined (`primary`:
  this process prints and writes the files)."""
  from azjax import sweep
  from azjax.sweep import timing as sweep_time

  try:
    base = build_config(args.game, args.preset, args.overrides, args.minutes, args.iterations,
                        config_file=args.config)
    grid = sweep.parse_grid(args.grid)
    seeds = parse_seeds(args.seeds)
    import jax
    if args.devices and jax.process_count() > 1 and args.devices != len(jax.devices()):
      # The first devices of the list would leave some processes without any.
      raise ValueError(f"--devices {args.devices}: a sweep of {jax.process_count()} processes "
                       f"trains on all of their {len(jax.devices())} devices")
    devices = jax.devices()[:args.devices] if args.devices else None
    planned = sweep.plan(base, grid, seeds, max_vmap=args.max_vmap, devices=devices,
                         memory_limit=None if args.no_memory_check else -1,
                         loop_configs=args.loop_configs)
  except ValueError as err:
    parser.exit(2, f"error: {err}\n")
  preset = config_lib.resolve_preset_name(args.preset, args.game)
  name = args.name or "_".join([preset] + [k for k in grid if k != "seed"] + ["seeds"])
  sweep_dir = Path(args.out) / name
  command = command_line(parser.prog, argv)
  print(f"azjax sweep: {args.game}, preset {preset}, {sum(len(g) for g, _, _ in planned)} runs "
        f"in {len(planned)} groups -> {sweep_dir}")
  if args.dry_run:
    records = sweep_time.recorded_timings(dict.fromkeys([args.out, "results/sweeps"]))
    times = []
    for i, (group, mesh, estimate) in enumerate(planned):
      per_run = estimate.per_device(sweep.sharding.data_size(mesh))
      print(f"group {i + 1}: {len(group)} runs on {sweep.sharding.describe(mesh)}, "
            f"~{per_run / 2**30:.2f} GiB per run: " + " | ".join(r.name for r in group.runs))
      times.append(sweep_time.estimate_time(group, mesh, records))
      print(f"  time: {sweep_time.describe_time(times[-1])}")
    print(sweep_time.describe_total(times))
    return
  use_compile_cache(args)
  try:
    summary = sweep.run_sweep(base, grid, sweep_dir, seeds, max_vmap=args.max_vmap,
                              devices=devices, progress=primary and not args.no_progress,
                              memory_limit=None if args.no_memory_check else -1,
                              loop_configs=args.loop_configs, command=command)
  except ValueError as err:
    print(f"error: {err}", file=sys.stderr)
    sys.exit(1)
  print("\n" + str(summary))
  if primary:  # Which alone wrote it.
    print((sweep_dir / "summary.md").read_text())
  if summary.interrupted:  # Ctrl-C: the runs stopped after their iteration and were saved.
    sys.exit(console.INTERRUPTED)


if __name__ == "__main__":
  main()
