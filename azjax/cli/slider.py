"""The Slider command: `azjax slider` or `python -m experiments.slider`.

    azjax slider --algorithm tdleaf [--size 5] [--blocks random] [--depth 3] [--minutes 60]
    azjax slider --algorithm alphazero [--size 5] [--minutes 60] [train options...]
    azjax slider --score RUN [--sizes 5,6,7] [--games 200] [--depth D] [--out FILE.md]

Training is an alias: TD-Leaf(lambda) is `azjax tdleaf slider` (`azjax.cli.tdleaf`, with
`--size`, `--blocks` and `--depth` as `--set size=...` and so on, and every other TD-Leaf option
passed on), AlphaZero is `azjax train slider --preset slider_cpu` (`azjax.cli.train`). `--score`
plays a trained run (of any kind, through `azjax.runs.load`) against alpha-beta with the
hand-written evaluation, both colours, on each board size; `--curves` scores every snapshot.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

from azjax import plots
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
  parser.add_argument("--minutes", type=float, default=None,
                      help="training minutes (with --resume: minutes more, on top of those "
                      "trained)")
  parser.add_argument("--iterations", type=int, default=None)
  parser.add_argument("--run-dir", default=None,
                      help="default: a new runs/slider-<algorithm>-<date>-<time>")
  parser.add_argument("--resume", action="store_true", help="continue the run in --run-dir")
  parser.add_argument("--set", dest="overrides", action="append", default=[],
                      metavar="KEY=VALUE", help="a setting (TD-Leaf: azjax.tdleaf.Config, "
                      "AlphaZero: a config field)")
  parser.add_argument("--score", metavar="RUN", default=None,
                      help="score a trained run instead of training")
  parser.add_argument("--curves", metavar="RUN", nargs="+", default=None,
                      help="score every snapshot of these runs against the hand evaluation "
                      "(--games each, --depth, default 3) into --out DIR (curves.jsonl, .png, .md)")
  parser.add_argument("--every", type=int, default=1, help="--curves: every k-th snapshot")
  parser.add_argument("--versus", metavar="RUN", default=None,
                      help="--score: play this other trained run instead of the hand evaluation")
  parser.add_argument("--sizes", default="5", help="board sizes to score on (e.g. 5,6,7)")
  parser.add_argument("--games", type=int, default=200, help="games a size (even)")
  parser.add_argument("--simulations", type=int, default=32,
                      help="--score of an AlphaZero run: its search's simulations")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--out", default=None, help="also write the score table to this file")
  return parser


def score(run: str, sizes: list[int], games: int, depth: int | None, simulations: int,
          seed: int, versus: str | None = None) -> str:
  """A markdown table: the run's player (TD-Leaf: its alpha-beta at `depth`, default the
  run's; AlphaZero: its search with `simulations`) against alpha-beta with the hand-written
  evaluation at the same depth (AlphaZero: `depth`, default 3), `games` games a size, half
  with each colour."""
  import jax

  from azjax import agents, arena, runs

  lines = ["| board | player | opponent | games | W/D/L | as first | as second | score | 95% CI "
           "| seconds |", "|---|---|---|---|---|---|---|---|---|---|"]

  def player_of(run_dir: str, size: int):
    # A TD-Leaf run plays any size (its evaluation does not depend on it), at --depth; an
    # AlphaZero network only the size it was trained on (`runs.load` says so), with search.
    kind = runs.kind_of(run_dir)
    options = {} if runs.run_game(run_dir).size == size else {"game_options": {"size": size}}
    if kind.name == "tdleaf":
      options["alphabeta_depth"] = depth
    env, agent = runs.load(run_dir, simulations=simulations, **options)
    return env, agent, getattr(kind.read_config(Path(run_dir)), "depth", 3)

  for size in sizes:
    env, player, run_depth = player_of(run, size)
    hand_depth = depth or run_depth
    if versus is None:
      hand = agents.make_alphabeta(env, depth=hand_depth, name=f"alphabeta-d{hand_depth}(hand)")
    else:  # the other learner, each with its own search (TD-Leaf: its depth, AZ: simulations)
      _, hand, _ = player_of(versus, size)
    t = time.time()
    result = arena.play(env, player, hand, games, jax.random.key(seed + size))
    low, high = result.interval
    first, second = ("/".join(map(str, r)) for r in (result.first, result.second))
    lines.append(f"| {env.describe()} | {player.name} | {hand.name} | {result.num_games} | "
                 f"{result.wins}/{result.draws}/{result.losses} | {first} | {second} | "
                 f"{result.score:.3f} | [{low:.3f}, {high:.3f}] | {time.time() - t:.0f} |")
  return "\n".join(lines)


def curve(run: str, games: int, depth: int, simulations: int, every: int, seed: int) -> list[dict]:
  """One row per snapshot (`models/<iteration>`, every `every`-th and the last) of a TD-Leaf or
  AlphaZero run: its training minutes and its score against alpha-beta at `depth` with the
  hand-written evaluation (`games` games, both colours). The snapshot's weights are an argument
  of the jitted match, so a run compiles once."""
  import jax

  from azjax import agents, arena, runs, tdleaf
  from azjax.evaluate import curves
  from azjax.runs import checkpoint

  snapshots = list(runs.players(run).snapshots)
  snapshots = [s for k, s in enumerate(snapshots) if k % every == 0 or k == len(snapshots) - 1]
  if runs.kind_of(run).name == "tdleaf":  # Its learner's match takes the params: one compile.
    learner, _ = tdleaf.load(run)
    env, abstract = learner.env, learner.evaluator.init(jax.random.key(0))
    match = functools.partial(learner.match, env=learner.env, games_=games, depth=depth)
  else:
    config, env, model, abstract = agents.load_network(run)
    hand = agents.make_alphabeta(env, depth=depth)

    @jax.jit
    def match(variables, key):
      player = agents.make_alphazero(env, model=model, variables=variables,
                                     simulations=simulations,
                                     search_config=config.search_config())
      return arena.match_outcomes(env, player.policy, hand.policy, games,
                                  env.max_game_length, key)  # every game to its end
  seconds = curves.training_seconds(run)
  rows = []
  for iteration in snapshots:
    variables = checkpoint.load_model(run, abstract, step=iteration)
    result = arena.summarize(env, run, "hand", match(variables, jax.random.key(seed)))
    low, high = result.interval
    rows.append({"run": run, "iteration": iteration,
                 "minutes": round(seconds.get(iteration, (float("nan"), 0))[0] / 60, 2),
                 "score": result.score, "low": low, "high": high,
                 "wdl": [result.wins, result.draws, result.losses]})
    print(rows[-1], flush=True)
  return rows


def main(argv: list[str] | None = None) -> None:
  argv = sys.argv[1:] if argv is None else list(argv)
  args, rest = _parser().parse_known_args(argv)
  try:
    if args.score is not None:
      if rest:
        raise ValueError(f"unknown options for --score: {' '.join(rest)}")
      sizes = [int(s) for s in args.sizes.split(",") if s]
      table = f"`{command_line(prog('slider'), argv)}`\n\n" + score(
          args.score, sizes, args.games, args.depth, args.simulations, args.seed, args.versus)
      print(table)
      if args.out:
        Path(args.out).write_text(table + "\n")
      return
    if args.curves is not None:
      import json

      out = Path(args.out or "runs/slider_curves")
      out.mkdir(parents=True, exist_ok=True)
      depth = args.depth or 3
      rows = [row for run in args.curves
              for row in curve(run, args.games, depth, args.simulations, args.every, args.seed)]
      (out / "curves.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
      plots.plot_scores(rows, out / "curves.png", depth)
      table = ["| run | iteration | minutes | W/D/L | score | 95% CI |",
               "|---|---|---|---|---|---|"]
      table += [f"| {r['run']} | {r['iteration']} | {r['minutes']} | "
                f"{'/'.join(map(str, r['wdl']))} | {r['score']:.3f} | "
                f"[{r['low']:.3f}, {r['high']:.3f}] |" for r in rows]
      (out / "curves.md").write_text(f"`{command_line(prog('slider'), argv)}`\n\n"
                                     + "\n".join(table) + "\n")
      print(f"wrote {out}/curves.jsonl, curves.png, curves.md")
      return
    if args.algorithm == "alphazero":
      from azjax.cli import train

      options = ["--set", f"size={args.size}", "--set", f"game.blocks={args.blocks}"]
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
    from azjax.cli import tdleaf

    options = ["--set", f"game.size={args.size}", "--set", f"game.blocks={args.blocks}"]
    if args.depth is not None:
      options += ["--set", f"depth={args.depth}"]
    if args.resume:
      options = ["--resume"]  # the saved settings have the board and the depth
    for flag, value in (("--minutes", args.minutes), ("--iterations", args.iterations),
                        ("--run-dir", args.run_dir)):
      if value is not None:
        options += [flag, str(value)]
    for text in args.overrides:
      options += ["--set", text]
    return tdleaf.train("slider", options + rest)
  except ValueError as err:
    raise SystemExit(f"{prog('slider')}: {err}") from None


if __name__ == "__main__":
  main()
