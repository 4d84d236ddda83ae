"""The Slider command: `azjax slider` or `python -m experiments.slider`.

    azjax slider --algorithm tdleaf [--size 5] [--blocks random] [--depth 3] [--minutes 60]
    azjax slider --algorithm alphazero [--size 5] [--minutes 60] [train options...]
    azjax slider --score RUN [--sizes 5,6,7] [--games 200] [--depth D] [--out FILE.md]

TD-Leaf(lambda) (`azjax.tdleaf`) trains an alpha-beta player's evaluation; AlphaZero trains the
`slider_cpu` preset through the training command (`azjax.cli.train`), so every train option
works there. `--score` plays a trained run (either kind, through `azjax.agents.load`) against
alpha-beta with the hand-written evaluation, both colours, on each board size.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from azjax.cli.common import command_line, prog


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog=prog("slider"), description="Slider: TD-Leaf(lambda) or AlphaZero, and scores "
      "against alpha-beta with the hand-written evaluation.")
  parser.add_argument("--algorithm", choices=("tdleaf", "alphazero"), default="tdleaf")
  parser.add_argument("--size", type=int, default=5, help="board side, 4..12 (default 5)")
  parser.add_argument("--blocks", default="random",
                      help="random (the course referee's draw), none, or squares 'c3,d4'")
  parser.add_argument("--depth", type=int, default=None,
                      help="alpha-beta plies (TD-Leaf training, default 3; --score: the "
                      "depth of both players, default the run's)")
  parser.add_argument("--minutes", type=float, default=None, help="training minutes")
  parser.add_argument("--iterations", type=int, default=None)
  parser.add_argument("--run-dir", default=None,
                      help="default: a new runs/slider-<algorithm>-<date>-<time>")
  parser.add_argument("--resume", action="store_true", help="continue the run in --run-dir")
  parser.add_argument("--set", dest="overrides", action="append", default=[],
                      metavar="KEY=VALUE", help="a TD-Leaf config field (azjax.tdleaf.Config)")
  parser.add_argument("--score", metavar="RUN", default=None,
                      help="score a trained run instead of training")
  parser.add_argument("--sizes", default="5", help="board sizes to score on (e.g. 5,6,7)")
  parser.add_argument("--games", type=int, default=200, help="games a size (even)")
  parser.add_argument("--simulations", type=int, default=32,
                      help="--score of an AlphaZero run: its search's simulations")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--out", default=None, help="also write the score table to this file")
  return parser


def _tdleaf_config(args) -> "tdleaf.Config":  # noqa: F821
  from azjax import tdleaf

  fields = {f.name: f for f in dataclasses.fields(tdleaf.Config)}
  values = {"game_options": {"size": args.size, "blocks": args.blocks}}
  if args.depth is not None:
    values["depth"] = args.depth
  for text in args.overrides:
    key, sep, value = text.partition("=")
    if not sep or key not in fields or key in ("game", "game_options"):
      raise ValueError(f"--set {text!r}: use KEY=VALUE with KEY one of "
                       f"{', '.join(k for k in fields if k not in ('game', 'game_options'))}")
    kind = type(fields[key].default)
    values[key] = value if kind is str else kind(float(value)) if kind is int else kind(value)
  if args.minutes is not None:
    values["minutes"] = args.minutes
  if args.iterations is not None:
    values["iterations"] = args.iterations
  return tdleaf.Config(**values).validate()


def score(run: str, sizes: list[int], games: int, depth: int | None, simulations: int,
          seed: int) -> str:
  """A markdown table: the run's player (TD-Leaf: its alpha-beta at `depth`, default the
  run's; AlphaZero: its search with `simulations`) against alpha-beta with the hand-written
  evaluation at the same depth (AlphaZero: `depth`, default 3), `games` games a size, half
  with each colour."""
  import jax

  from azjax import agents, arena, tdleaf

  lines = ["| board | player | opponent | games | W/D/L | as first | as second | score | 95% CI "
           "| seconds |", "|---|---|---|---|---|---|---|---|---|---|"]
  for size in sizes:
    if tdleaf.is_run(run):
      env, player = agents.load(run, game_options={"size": size}, alphabeta_depth=depth)
      hand_depth = depth or tdleaf.Config.load(run).depth
    else:
      env, player = agents.load(run, simulations=simulations)
      if env.size != size:
        raise ValueError(f"{run} is an AlphaZero run on {env.describe()}; it plays that size "
                         "only (--sizes {env.size})")
      hand_depth = depth or 3
    hand = agents.make_alphabeta(env, depth=hand_depth, name=f"alphabeta-d{hand_depth}(hand)")
    t = time.time()
    result = arena.play(env, player, hand, games, jax.random.key(seed + size))
    low, high = result.interval
    first, second = ("/".join(map(str, r)) for r in (result.first, result.second))
    lines.append(f"| {env.describe()} | {player.name} | {hand.name} | {result.num_games} | "
                 f"{result.wins}/{result.draws}/{result.losses} | {first} | {second} | "
                 f"{result.score:.3f} | [{low:.3f}, {high:.3f}] | {time.time() - t:.0f} |")
  return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
  argv = sys.argv[1:] if argv is None else list(argv)
  args, rest = _parser().parse_known_args(argv)
  try:
    if args.score is not None:
      if rest:
        raise ValueError(f"unknown options for --score: {' '.join(rest)}")
      sizes = [int(s) for s in args.sizes.split(",") if s]
      table = f"`{command_line(prog('slider'), argv)}`\n\n" + score(
          args.score, sizes, args.games, args.depth, args.simulations, args.seed)
      print(table)
      if args.out:
        Path(args.out).write_text(table + "\n")
      return
    if args.algorithm == "alphazero":
      from azjax.cli import train

      options = ["--set", f"size={args.size}", "--set", f"obstacles={args.blocks}"]
      for flag, value in (("--minutes", args.minutes), ("--iterations", args.iterations),
                          ("--run-dir", args.run_dir)):
        if value is not None:
          options += [flag, str(value)]
      if args.resume:
        options = [o for o in options[4:]] + ["--resume"]  # the saved config has the game
      if "--preset" not in rest:
        options += ["--preset", "slider_cpu"]
      for text in args.overrides:
        options += ["--set", text]
      return train.main("slider", options + rest)
    if rest:
      raise ValueError(f"unknown options for TD-Leaf: {' '.join(rest)}")
    from azjax import tdleaf

    config = _tdleaf_config(args)
    run_dir = args.run_dir or time.strftime("runs/slider-tdleaf-%Y%m%d-%H%M%S")
    tdleaf.train(config, run_dir, resume=args.resume)
  except ValueError as err:
    raise SystemExit(f"{prog('slider')}: {err}") from None


if __name__ == "__main__":
  main()
