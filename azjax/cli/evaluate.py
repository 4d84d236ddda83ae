"""Evaluate a trained agent against baselines and write a markdown table.

`azjax evaluate` (the same: `python -m experiments.evaluate`):

    azjax evaluate --checkpoint results/breakthrough_cpu \
        --opponents random,mcts:200,mcts:1000 --games 200 --simulations 32

Each opponent plays `--games` games, half with each colour. `--raw-policy` evaluates the
network's raw policy (one forward pass per move) instead of the network with search;
`--alphabeta DEPTH [--width 8]` alpha-beta with the network's value as its evaluation and its
policy choosing the `--width` actions searched at every node (`azjax.alphabeta`). The table
is printed and appended to `<checkpoint>/eval.md` with the command that made it (`--out DIR`:
to `DIR/eval.md`; every mode writes its tables and plots there). A run in the committed
`results/` is written only when `--out` names it: by default its tables are printed only.

    azjax evaluate --checkpoint DIR --solver [--simulations 32,128] \
        [--positions FILE.npz] [--solver-out FILE.md]

strength against perfect play (`azjax.solver.benchmark`, tic-tac-toe and Connect Four): the
mistake rate, optimal-move rate and value accuracy of the raw policy and of search with each
`--simulations` count, by ply range and source, on the committed set of solver-labelled
positions (`--positions strong`: positions strong play reaches, `azjax.solver.strong_play`). The
table goes to eval.md as in the other modes; `--solver-out FILE.md` also writes it alone with
its command, and the metrics as `FILE.json` beside it. A finished benchmark of the final network
also writes `<checkpoint>/strength.json` (`azjax.evaluate.strength`: the mistake rate of the
search with the most simulations, and how it was measured; a run scored on several position
sets keeps one entry for each), by which `azjax play` picks the strongest agent of a game;
`--pool` writes each run's Elo there.
`--opponents solver` plays the perfect solver itself (random among the moves that keep its
result for its first two moves).

Every match of every mode is also appended to `<out>/matches.jsonl`, a JSON row each
(`azjax.evaluate.tournament.match_row`): the record the tables are rendered from. The modes'
logic is in the library (`azjax.evaluate.tournament`, `azjax.evaluate.ladder`, `azjax.plots`);
this module is its command line.

Three other modes:

    azjax evaluate --checkpoint DIR --ladder [--ladder-min 10 --ladder-max 20480]

the source projects' benchmark: rollout-MCTS opponents whose simulations double from
`--ladder-min` to `--ladder-max`, `--games` games per rung, and the same ladder played by the
source projects' control, a 50-simulation rollout MCTS (`--no-control` skips it). The table and
the average score over rungs are appended to `DIR/eval.md` and plotted in `DIR/ladder.png`
(`--engine openspiel`: OpenSpiel's C++ rollout MCTS as the rungs, `DIR/ladder_openspiel.png`).
Ctrl-C stops after the current match and still writes what was played. A ladder played in
pieces (`--ladder-max 640` in one process, `--ladder-min 1280` in another) is drawn as one by

    azjax evaluate --checkpoint DIR --ladder-plot DIR/ladder_all.png

which reads every ladder match in `DIR/matches.jsonl` (or, for a run evaluated before that
file existed, the ladder tables of its `eval.md`).

    azjax evaluate --checkpoint DIR --progress [--opponents random,mcts:200,RUN_DIR]

the Elo of every network snapshot the run saved (`DIR/models/<iteration>`, one per checkpoint):
each plays the `--opponents` anchors (specs, or run directories: a fixed stronger network, or
`RUN_DIR@ITERATION`, one of its snapshots; they also play each other) and the snapshot before it,
one maximum-likelihood fit rates them all, and `DIR/progress.png` plots Elo over training
minutes. The snapshots play stochastically here (raw policy: sampled; search: Gumbel noise at
the root), else two of them would repeat the same two games.

    azjax evaluate --pool DIR_OR_SPEC [DIR_OR_SPEC ...] [--checkpoint DIR]

a round robin: each item is a run directory or one of its snapshots, `RUN_DIR@ITERATION`
(`RUN_DIR/models/<ITERATION>`: two runs compared at equal training minutes), loaded with
`--simulations`, `--raw-policy` or `--alphabeta`, or an opponent spec (random,
mcts:<simulations>, alphabeta:<depth>, solver; see `--help`); `--checkpoint`, if given, joins
the pool first. Every pair plays `--games` games; the Elo fit (anchored at "random" if present,
else the first agent), its intervals and the pairwise score matrix are printed and appended to
the `eval.md` of the first run directory (`--game` names the game when no item is a run
directory; the tables are then only printed). Two networks with noiseless search replay one
game per seating from the initial position: `--openings PLIES` starts each pair of games from
its own random opening (default mode, `--pool`, `--progress`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import numpy as np

from azjax import agents, arena, console, plots, runs
from azjax.cli.common import command_line, prog
from azjax.cli.evaluate_output import (
  append_eval,
  output_dir,
  record,
  table_header,
  table_row,
  write_strength,
)
from azjax.evaluate import curves, ladder, strength, tournament
from azjax.runs import checkpoint, layout


def load_agent(args: argparse.Namespace, run_dir: str, step: int | None = None) -> tuple:
  """`(env, agent)` of a run directory as the flags ask: search with `--simulations`, the raw
  policy, or alpha-beta with the network as its evaluation (`--alphabeta`, `--width`); with
  `step`, the network snapshot `models/<step>`."""
  return runs.load(run_dir, simulations=args.simulations, raw_policy=args.raw_policy,
                   alphabeta_depth=args.alphabeta, alphabeta_width=args.width or None,
                   step=step)


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog=prog("evaluate"), description=__doc__.split("\n")[0],
      epilog="opponents (--opponents, --pool; SPEC = KIND[:N][:KEY=VALUE]...):\n"
      + agents.describe_kinds(tournament.OPPONENT_KINDS),
      formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--checkpoint", default=None,
                      help="a run directory (required unless --pool is given)")
  parser.add_argument("--opponents", default="random,mcts:200",
                      help="comma-separated player specs, e.g. random,mcts:200,alphabeta:2,"
                      "solver,openspiel-mcts:1000 (the kinds are listed below)")
  parser.add_argument("--games", type=int, default=200,
                      help="games per opponent, rung or pair (even)")
  parser.add_argument("--simulations", type=simulation_counts, default=32,
                      help="search simulations per move; with --solver a comma-separated list "
                      "(e.g. 32,128)")
  parser.add_argument("--raw-policy", action="store_true")
  parser.add_argument("--alphabeta", type=int, default=None, metavar="DEPTH",
                      help="the network plays alpha-beta of this depth with its value as the "
                      "evaluation, instead of MCTS")
  parser.add_argument("--width", type=int, default=8,
                      help="with --alphabeta: the actions searched at every node, the policy's "
                      "best (0: every action)")
  parser.add_argument("--snapshot", type=int, default=None, metavar="ITERATION",
                      help="play or score the run's network snapshot models/<ITERATION> instead "
                      "of its final network (opponents, --ladder, --solver)")
  parser.add_argument("--openings", type=int, default=0, metavar="PLIES",
                      help="start every pair of games (one per seating) from its own opening of "
                      "PLIES uniformly random moves: needed where both players are noiseless "
                      "networks, whose games from the initial position repeat (default, 0: the "
                      "initial position; default mode, --pool, --progress)")
  parser.add_argument("--seed", type=int, default=0)
  mode = parser.add_mutually_exclusive_group()
  mode.add_argument("--ladder", action="store_true",
                    help="play the doubling ladder of rollout-MCTS opponents")
  mode.add_argument("--solver", action="store_true",
                    help="mistakes against perfect play on solver-labelled positions, raw "
                    "policy and search, by ply range (tic-tac-toe, Connect Four)")
  mode.add_argument("--pool", nargs="+", metavar="DIR_OR_SPEC",
                    help="round robin with Elo between run directories (RUN_DIR@ITERATION: a "
                    "snapshot) and opponent specs")
  mode.add_argument("--progress", action="store_true",
                    help="Elo of every network snapshot of the run (models/<iteration>) over "
                    "training time, anchored by --opponents")
  mode.add_argument("--ladder-plot", metavar="PNG",
                    help="plot every ladder table of <checkpoint>/eval.md in one figure (a "
                    "ladder played in pieces, e.g. low and high rungs in two processes); a "
                    "player's later row for a rung replaces an earlier one")
  parser.add_argument("--positions", default=None, metavar="NPZ",
                      help="--solver: the labelled positions, a file or a packaged set's name "
                      "(strong: positions of strong play); default: the game's set packaged in "
                      "azjax/data/solver_positions/")
  parser.add_argument("--solver-out", default=None, metavar="FILE.md",
                      help="--solver: write the table there with its command, and FILE.json")
  parser.add_argument("--ladder-min", type=int, default=10, help="first rung's simulations")
  parser.add_argument("--ladder-max", type=int, default=20480, help="last rung's simulations")
  parser.add_argument("--engine", choices=("azjax", "openspiel"), default="azjax",
                      help="--ladder: whose rollout MCTS the rungs are: azjax's batched UCT, or "
                      "OpenSpiel's C++ MCTSBot (one per game, on the host; faster at high "
                      "simulations on a CPU)")
  parser.add_argument("--no-control", action="store_true",
                      help=f"--ladder: skip the {ladder.CONTROL_SIMULATIONS}-simulation MCTS "
                      "control")
  parser.add_argument("--game", default=None,
                      help="--pool: the game, when no item is a run directory")
  parser.add_argument("--out", default=None, metavar="DIR",
                      help="where eval.md and the plots go (default: the run evaluated, except "
                      "in the committed results/, where tables are only printed unless --out "
                      "names it)")
  return parser


@console.command
def main(argv: list[str] | None = None) -> None:
  parser = build_parser()
  args = parser.parse_args(argv)
  if args.games <= 0 or args.games % 2:
    parser.error(f"--games must be positive and even, got {args.games}")
  if isinstance(args.simulations, tuple) and not args.solver:
    parser.error("only --solver takes several --simulations")
  if args.solver and (args.alphabeta is not None or args.raw_policy):
    parser.error("--solver scores the raw policy and search; --alphabeta and --raw-policy "
                 "do not apply")
  if min(args.simulations if isinstance(args.simulations, tuple) else [args.simulations]) <= 0:
    parser.error(f"--simulations must be positive, got {args.simulations}")
  if args.alphabeta is not None and args.raw_policy:
    parser.error("--alphabeta and --raw-policy are two different players; give one")
  if args.alphabeta is not None and args.progress:
    parser.error("--progress rates snapshots with search or their raw policy, not --alphabeta")
  if args.openings < 0:
    parser.error(f"--openings must be >= 0 random plies, got {args.openings}")
  if args.openings and (args.ladder or args.solver or args.ladder_plot):
    parser.error("--openings applies to the default mode, --pool and --progress")
  if args.width < 0:
    parser.error(f"--width must be 0 (every action) or positive, got {args.width}")
  if args.snapshot is not None and (args.pool is not None or args.progress or args.ladder_plot):
    parser.error("--snapshot picks the network of --checkpoint that plays; --pool, --progress "
                 "and --ladder-plot do not take it")
  if args.pool is None and args.checkpoint is None:
    parser.error("the following argument is required: --checkpoint (unless --pool is given)")
  if args.ladder and not 0 < args.ladder_min <= args.ladder_max:
    parser.error(f"--ladder needs 0 < --ladder-min <= --ladder-max, got {args.ladder_min} and "
                 f"{args.ladder_max}")
  command = command_line(parser.prog, argv)
  if args.pool is not None:
    run_pool(parser, args, command)
  elif args.progress:
    run_progress(parser, args, command)
  elif args.ladder:
    run_ladder(parser, args, command)
  elif args.solver:
    run_solver(parser, args, command)
  elif args.ladder_plot:
    replot_ladders(parser, args)
  else:
    run_opponents(parser, args, command)


# -- Default mode: a list of opponents -------------------------------------------------------------


def run_opponents(parser: argparse.ArgumentParser, args: argparse.Namespace,
                  command: str) -> None:
  try:
    env, agent = load_agent(args, args.checkpoint, args.snapshot)
    opponents = [tournament.parse_opponent(env, spec)
                 for spec in args.opponents.split(",")]
    if args.openings and any(isinstance(o, tournament.OpenSpielMCTS) for o in opponents):
      raise ValueError("--openings: OpenSpiel's bots play from the initial position (their "
                       "rollouts already make the games differ)")
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  lines, rows = [table_header()], []
  key = jax.random.key(args.seed)
  print(lines[0], flush=True)
  bar = console.progress(len(opponents), "matches", unit="match")
  interrupted = False
  try:
    for opponent in opponents:
      bar.set_postfix_str(f"{agent.name} vs {opponent.name}")
      key, match_key = jax.random.split(key)
      result, seconds = tournament.timed_play(env, agent, opponent, args.games, match_key,
                                              args.openings)
      rows.append(tournament.match_row(result, seconds, mode="opponents", command=command,
                                       openings=args.openings))
      lines.append(table_row(result, seconds))
      console.echo(bar, lines[-1])
      bar.update(1)
  except KeyboardInterrupt:
    interrupted = console.interrupted(f"writing the {len(rows)} of {len(opponents)} matches "
                                      "played")
    lines.append(f"- interrupted after {len(rows)} of {len(opponents)} matches")
  finally:
    bar.close()
  if rows:
    out = output_dir(args, args.checkpoint)
    record(out, rows)
    append_eval(out, command, lines)
  if interrupted:
    sys.exit(console.INTERRUPTED)


def simulation_counts(text: str) -> int | tuple[int, ...]:
  """`--simulations`: "32" -> 32, "32,128" -> (32, 128) (several only with --solver)."""
  try:
    counts = tuple(int(x) for x in text.split(","))
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected an integer or a comma-separated list of "
                                     f"integers, got {text!r}") from None
  return counts[0] if len(counts) == 1 else counts


# -- Solver benchmark ------------------------------------------------------------------------------

# Positions searched at once by `--solver`: small enough that the bar moves and Ctrl-C acts
# within seconds. The 128x6 Connect Four network at 128 simulations takes about 0.5 s a position
# on 2 busy CPU cores whatever the batch (17 s a batch of 32, 61 s one of 128), so a larger batch
# would only make Ctrl-C wait longer.
SOLVER_BATCH = 32


def run_solver(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> None:
  """The network's mistakes against perfect play (`azjax.solver.benchmark`)."""
  import json  # noqa: PLC0415

  from azjax.solver import benchmark as solver_benchmark

  counts = args.simulations if isinstance(args.simulations, tuple) else (args.simulations,)
  try:
    env = runs.run_game(args.checkpoint)
    path = solver_benchmark.positions_path(env.name, args.positions)
    positions = solver_benchmark.Positions.load(path)
    # The run's players through its kind: AlphaZero's raw policy and search, TD-Leaf's
    # alpha-beta (its moves and root values).
    abstract, score = runs.solver_scorer(args.checkpoint, positions, (0, *counts),
                                           batch_size=SOLVER_BATCH)
    variables = checkpoint.load_model(args.checkpoint, abstract, step=args.snapshot)
    t0 = time.time()
    interrupted = False
    if isinstance(score, solver_benchmark.SolverBenchmark):
      # Player by player, batch by batch: the bar moves and Ctrl-C acts within seconds.
      done, interrupted = console.each(
          score.players, lambda name, bar: (name, score.player_actions(
              name, variables, jax.random.key(args.seed), on_batch=bar.update)),
          "solver benchmark", unit="batch", total=len(score.players) * score.num_batches,
          what="writing the players scored so far")
      results = score.metrics(dict(done))
    else:
      results = score(variables, jax.random.key(args.seed))
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  seconds = time.time() - t0
  if not results:
    sys.exit(console.INTERRUPTED)
  sources = "; ".join(f"src{i}: {int(np.sum(positions.source == i))} from {name}"
                      for i, name in enumerate(positions.sources))
  label = args.checkpoint + ("" if args.snapshot is None else f"@{args.snapshot}")
  shown = solver_benchmark.positions_label(path)
  lines = [f"Solver benchmark of {label} on {shown} ({len(positions)} positions; "
           f"{sources}); {seconds:.0f} s", "",
           solver_benchmark.markdown_table(results, positions.sources)]
  if interrupted:
    lines += ["", f"- interrupted: players {', '.join(results)} scored, of "
              f"policy, {', '.join(f'search{s}' for s in counts)}"]
  print("\n".join(lines), flush=True)
  append_eval(output_dir(args, args.checkpoint), command, lines)
  if not interrupted and args.snapshot is None:
    # Named as the tables name it: runs compare on this string, so no machine's path.
    write_strength(args, args.checkpoint, strength.from_solver(results, shown, command))
  if args.solver_out:
    out = Path(args.solver_out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"`{command}` (backend {jax.default_backend()})\n\n" + "\n".join(lines)
                   + "\n")
    # NaN (a rate over no positions) as null, which every JSON reader takes.
    metrics = {player: {part: {k: None if v != v else v for k, v in m.items()}
                        for part, m in parts.items()} for player, parts in results.items()}
    report = dict(command=command, checkpoint=args.checkpoint, snapshot=args.snapshot,
                  positions=shown, sources=list(positions.sources), seconds=seconds,
                  metrics=metrics)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out} and {out.with_suffix('.json')}", flush=True)
  if interrupted:
    sys.exit(console.INTERRUPTED)


# -- Ladder ----------------------------------------------------------------------------------------


def run_ladder(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> None:
  try:
    env, agent = load_agent(args, args.checkpoint, args.snapshot)
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  players = [agent] + ([] if args.no_control else [ladder.control(env, args.engine)])
  simulations = ladder.rungs(args.ladder_min, args.ladder_max)
  played: ladder.Ladder = {p.name: [] for p in players}
  lines, rows = [ladder.HEADER], []
  print(ladder.HEADER, flush=True)
  # Progress counts opponent simulations: a rung takes about twice the time of the one before,
  # so counting rungs would promise the last ones far too soon.
  bar = console.progress(sum(simulations) * len(players), "ladder", unit="sim")
  bar.set_postfix_str(f"rung 1/{len(simulations)}")
  interrupted = False
  try:
    for sims, player, result, seconds in ladder.play_ladder(
        env, players, simulations, args.engine, args.games, jax.random.key(args.seed)):
      played[player.name].append((sims, result))
      rows.append(tournament.match_row(result, seconds, mode=ladder.MODE, command=command,
                                       engine=args.engine, player=player.name, rung=sims))
      lines.append(ladder.markdown_row(player.name, sims, result, seconds))
      rung = simulations.index(sims) + 1
      console.echo(bar, f"{lines[-1]}  <- rung {rung}/{len(simulations)}")
      bar.update(sims)
      bar.set_postfix_str(f"rung {min(rung + 1, len(simulations))}/{len(simulations)}")
  except KeyboardInterrupt:
    interrupted = console.interrupted("writing the rungs played so far")
  finally:
    bar.close()
  lines.append("")
  lines += [ladder.average_line(name, results) for name, results in played.items() if results]
  if interrupted:
    lines.append(f"- interrupted before the ladder ended (planned rungs {simulations[0]}.."
                 f"{simulations[-1]})")
  print("\n".join(lines[lines.index(""):]), flush=True)
  out = output_dir(args, args.checkpoint)
  if rows:
    record(out, rows)
    append_eval(out, command, lines)
  if rows and out is not None:
    path = plots.plot_ladder(played, out / layout.ladder_plot(args.engine),
                             title=f"{env.name}: score against the rollout-MCTS ladder "
                             f"({args.engine})")
    print(f"wrote {path}", flush=True)
  if interrupted:
    sys.exit(console.INTERRUPTED)


def replot_ladders(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
  """Every ladder of a run in one figure (`ladder.read_run`)."""
  run = Path(args.checkpoint)
  try:
    played = ladder.read_run(run)
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  for player, results in played.items():
    print(ladder.average_line(player, results))
  out = plots.plot_ladder(played, args.ladder_plot,
                          title=f"score against the rollout-MCTS ladder ({run.name})")
  print(f"wrote {out}")


# -- Pool: round robin and Elo ---------------------------------------------------------------------


def elo_lines(results: list[arena.MatchResult]) -> list[str]:
  """The Elo table of the agents that played `results` (or why there is none)."""
  try:
    fit = tournament.fit_played(results)
  except ValueError as err:
    return ["", f"no Elo fit: {err}"]
  return ["", f"Elo (anchor {fit.names[fit.anchor]} = 0):", "", fit.markdown()]


def run_pool(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> None:
  # Parse the specs first, before any model loads, so that a typo fails at once.
  for item in args.pool:
    if not Path(tournament.split_snapshot(item)[0]).is_dir() and "/" not in item:
      try:
        agents.parse_spec(item)
      except ValueError as err:
        parser.exit(2, f"error: --pool item {item!r} is neither a run directory nor an opponent "
                       f"spec: {err}\n")
  items = ([args.checkpoint] if args.checkpoint is not None else []) + list(args.pool)
  try:
    env, pool, run_dirs = tournament.build_pool(
        items, lambda d, step: load_agent(args, d, step), args.game)
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  names = [a.name for a in pool]
  lines, rows, results, scores = [table_header()], [], [], {}
  print(lines[0], flush=True)
  pairs = tournament.num_pairs(len(pool))
  bar = console.progress(pairs, "round robin", unit="pair")
  interrupted = False
  try:
    for i, j, result, seconds in tournament.round_robin(env, pool, args.games,
                                                        jax.random.key(args.seed), args.openings):
      results.append(result)
      rows.append(tournament.match_row(result, seconds, mode="pool", command=command,
                                       openings=args.openings))
      scores[i, j], scores[j, i] = result.score, 1.0 - result.score
      lines.append(table_row(result, seconds))
      console.echo(bar, f"{lines[-1]}  <- pair {len(results)}/{pairs}")
      bar.update(1)
  except KeyboardInterrupt:
    interrupted = console.interrupted("fitting and writing the matches played so far")
  finally:
    bar.close()
  tail = elo_lines(results) + ["", "Pairwise scores (row agent against column agent):", "",
                               tournament.score_matrix_markdown(names, scores)]
  if interrupted:
    tail += ["", f"- interrupted after {len(results)} of {pairs} pairs"]
  lines += tail
  print("\n".join(tail), flush=True)
  if results:
    out = output_dir(args, run_dirs[0] if run_dirs else None)
    record(out, rows)
    append_eval(out, command, lines)
  if results and not interrupted:
    for item, measured in strength.of_pool(items, names, results, args.games, command):
      write_strength(args, item, measured)
  if interrupted:
    sys.exit(console.INTERRUPTED)


# -- Progress: Elo of every snapshot over training ------------------------------------------------


def anchor(args: argparse.Namespace, env, spec: str) -> tournament.Player:
  """An anchor of `--progress`: an opponent spec, or a run directory or one of its snapshots
  (`RUN_DIR@ITERATION`): a fixed network, e.g. a stronger run's, played as `--simulations` /
  `--raw-policy` ask, without noise.

  Raises:
    FileNotFoundError: no such snapshot.
    ValueError: a bad spec, or a run of another game.
  """
  run_dir, step = tournament.split_snapshot(spec)
  if not Path(run_dir).is_dir():
    return tournament.parse_opponent(env, spec)
  other_env, agent = load_agent(args, run_dir, step)
  if (other_env.name, other_env.describe()) != (env.name, env.describe()):
    raise ValueError(f"--opponents {spec}: plays {other_env.describe()}, the run "
                     f"{env.describe()}")
  return agent


def run_progress(parser: argparse.ArgumentParser, args: argparse.Namespace,
                 command: str) -> None:
  """Each snapshot plays every `--opponents` anchor and the snapshot before it; one Elo fit
  (`tournament.snapshot_matches`)."""
  run_dir = Path(args.checkpoint)
  try:
    config, env, model, abstract = agents.load_network(
        str(run_dir), config=runs.network_config(run_dir))
    anchors = [anchor(args, env, spec) for spec in args.opponents.split(",")]
    if any(isinstance(a, tournament.OpenSpielMCTS) for a in anchors):
      azjax_kinds = [k for k in tournament.OPPONENT_KINDS if agents.KINDS[k].plays == "jax"]
      raise ValueError(f"--progress: anchors must be azjax opponents ({', '.join(azjax_kinds)})")
    snapshots = [step for step, _ in checkpoint.list_models(run_dir)]
    if not snapshots:
      raise FileNotFoundError(f"{run_dir}: no network snapshots in models/ (runs write one at "
                              "every checkpoint)")
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")

  # Stochastic players: two deterministic snapshots would replay the same two games over and
  # over. The raw policy samples from its softmax; search is the run's evaluation player with
  # Gumbel noise at the root kept on purpose (the one deliberate difference from it).
  def player(variables):
    if args.raw_policy:
      return agents.make_raw_policy(env, model=model, variables=variables, sample=True).policy
    return agents.make_alphazero(env, model=model, variables=variables,
                                 simulations=args.simulations,
                                 search_config=config.search_config(), gumbel_scale=1.0).policy

  lines, rows, results = [table_header()], [], []
  print(lines[0], flush=True)
  # The matches `snapshot_matches` plays: anchor pairs, each snapshot against every anchor, and
  # each snapshot after the first against the one before.
  count = len(anchors) * (len(anchors) - 1) // 2 + len(snapshots) * len(anchors) + (
      len(snapshots) - 1)
  bar = console.progress(count, "snapshot matches", unit="match")
  interrupted = False
  try:
    for name_a, name_b, result, seconds in tournament.snapshot_matches(
        env, run_dir, abstract, snapshots, player, anchors, args.games, jax.random.key(args.seed),
        args.openings):
      results.append(result)
      rows.append(tournament.match_row(result, seconds, mode="progress", command=command,
                                       openings=args.openings))
      lines.append(table_row(result, seconds))
      where = (f"snapshot {snapshots.index(int(name_a[2:])) + 1}/{len(snapshots)}"
               if name_a.startswith("it") else "anchors")
      console.echo(bar, f"{lines[-1]}  <- {where}")
      bar.update(1)
  except KeyboardInterrupt:
    interrupted = console.interrupted("fitting and writing the matches played so far")
  finally:
    bar.close()
  if not results:
    sys.exit(console.INTERRUPTED if interrupted else 1)
  fit = tournament.fit_played(results)
  tail = elo_lines(results)
  if interrupted:
    tail += ["", f"- interrupted: {len(results)} matches played"]
  lines += tail
  print("\n".join(tail), flush=True)
  out = output_dir(args, run_dir)
  record(out, rows)
  append_eval(out, command, lines)
  if out is not None:
    minutes = {it: seconds / 60 for it, (seconds, _) in curves.training_seconds(run_dir).items()}
    path = plots.plot_progress(fit, snapshots, minutes, out / layout.PROGRESS_PLOT,
                               title=f"{env.name}: Elo over training")
    print(f"wrote {path}", flush=True)
  if interrupted:
    sys.exit(console.INTERRUPTED)


if __name__ == "__main__":
  main()
