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
        [--positions results/solver_benchmark/connect_four.npz] [--solver-out FILE.md]

strength against perfect play (`azjax.solver_benchmark`, tic-tac-toe and Connect Four): the
mistake rate, optimal-move rate and value accuracy of the raw policy and of search with each
`--simulations` count, by ply range, on the committed set of solver-labelled positions. The
table goes to eval.md as in the other modes; `--solver-out FILE.md` also writes it alone with
its command, and the metrics as `FILE.json` beside it.
`--opponents solver` plays the perfect solver itself (random among the moves that keep its
result for its first two moves).

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

which reads every ladder table in `DIR/eval.md` (the plot only uses each rung's W/D/L).

    azjax evaluate --checkpoint DIR --progress [--opponents random,mcts:200]

the Elo of every network snapshot the run saved (`DIR/models/<iteration>`, one per checkpoint):
each plays the `--opponents` anchors (which also play each other) and the snapshot before it,
one maximum-likelihood fit
rates them all, and `DIR/progress.png` plots Elo over training minutes. The snapshots play
stochastically here (raw policy: sampled; search: Gumbel noise at the root), else two of them
would repeat the same two games.

    azjax evaluate --pool DIR_OR_SPEC [DIR_OR_SPEC ...] [--checkpoint DIR]

a round robin: each item is a run directory (loaded with `--simulations`, `--raw-policy` or
`--alphabeta`) or an opponent spec (random, mcts:<simulations>, alphabeta:<depth>, solver; see
`--help`);
`--checkpoint`, if given, joins the pool first. Every pair plays `--games` games; the Elo fit
(anchored at "random" if present, else the first agent), its intervals and the pairwise score
matrix are printed and appended to the `eval.md` of the first run directory (`--game` names
the game when no item is a run directory; the tables are then only printed).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import jax
import numpy as np

from azjax import agents, arena
from azjax.cli.common import command_line, prog

CONTROL_SIMULATIONS = 50  # The source projects' control: a 50-simulation rollout MCTS.


@dataclasses.dataclass(frozen=True)
class OpenSpielMCTS:
  """OpenSpiel's C++ rollout MCTS as an opponent (one bot per game, on the host), or
  as the ladder's control on the OpenSpiel engine (`label="control"`)."""

  simulations: int
  label: str = ""

  @property
  def name(self) -> str:
    name = f"openspiel-mcts{self.simulations}"
    return f"{self.label} ({name})" if self.label else name


# The kinds an opponent may be (`azjax.agents.KINDS`): the baselines, played by azjax or by
# OpenSpiel; a network plays as --checkpoint or as a --pool run directory.
OPPONENT_KINDS = tuple(k for k in agents.kinds("jax", "openspiel") if not agents.KINDS[k].network)


def parse_opponent(env, spec: str) -> agents.Agent | OpenSpielMCTS:
  """The opponent of a player spec (`azjax.agents.parse_spec`: "random", "mcts:200",
  "alphabeta:2", "solver", ...): an azjax agent, or for "openspiel-mcts:<simulations>"
  OpenSpiel's bot, played on the host (see `play`).

  Raises:
    ValueError: for a bad spec, or a kind that cannot be an opponent here (the message lists
      those that can).
  """
  parsed = agents.parse_spec(spec)
  if parsed.kind not in OPPONENT_KINDS:
    raise ValueError(f"opponent {spec!r} ({parsed.info.summary}) cannot be an opponent here; "
                     f"use one of: {', '.join(OPPONENT_KINDS)}")
  if parsed.info.plays == "openspiel":
    return OpenSpielMCTS(parsed.number())
  return agents.build(parsed, env)


def play(env, player: agents.Agent | OpenSpielMCTS, opponent: agents.Agent | OpenSpielMCTS,
         games: int, key: jax.Array) -> arena.MatchResult:
  """A colour-balanced match: batched in JAX, or side by side against OpenSpiel's bots (or,
  OpenSpiel's bot against another, for the ladder's control on the OpenSpiel engine)."""
  if isinstance(player, OpenSpielMCTS) or isinstance(opponent, OpenSpielMCTS):
    from azjax import openspiel_bridge  # noqa: PLC0415  (needs the open-spiel extra)

    seed = int(jax.random.randint(key, (), 0, 2**30))
    if isinstance(player, OpenSpielMCTS):
      if not isinstance(opponent, OpenSpielMCTS):
        raise ValueError("play: an OpenSpiel player needs an OpenSpiel opponent")
      return openspiel_bridge.match_bots(
          env, openspiel_bridge.openspiel_mcts_factory(player.simulations),
          openspiel_bridge.openspiel_mcts_factory(opponent.simulations), games, seed,
          name_a=player.name, name_b=opponent.name)
    return openspiel_bridge.match_vs_openspiel(
        env, player, openspiel_bridge.openspiel_mcts_factory(opponent.simulations), games,
        seed, bot_name=opponent.name)
  return arena.play(env, player, opponent, games, key)


def load_agent(args: argparse.Namespace, run_dir: str) -> tuple:
  """`(env, agent)` of a run directory as the flags ask: search with `--simulations`, the raw
  policy, or alpha-beta with the network as its evaluation (`--alphabeta`, `--width`)."""
  return agents.load(run_dir, simulations=args.simulations, raw_policy=args.raw_policy,
                     alphabeta_depth=args.alphabeta, alphabeta_width=args.width or None)


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog=prog("evaluate"), description=__doc__.split("\n")[0],
      epilog="opponents (--opponents, --pool; SPEC = KIND[:N][:KEY=VALUE]...):\n"
      + agents.describe_kinds(OPPONENT_KINDS),
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
  parser.add_argument("--seed", type=int, default=0)
  mode = parser.add_mutually_exclusive_group()
  mode.add_argument("--ladder", action="store_true",
                    help="play the doubling ladder of rollout-MCTS opponents")
  mode.add_argument("--solver", action="store_true",
                    help="mistakes against perfect play on solver-labelled positions, raw "
                    "policy and search, by ply range (tic-tac-toe, Connect Four)")
  mode.add_argument("--pool", nargs="+", metavar="DIR_OR_SPEC",
                    help="round robin with Elo between run directories and opponent specs")
  mode.add_argument("--progress", action="store_true",
                    help="Elo of every network snapshot of the run (models/<iteration>) over "
                    "training time, anchored by --opponents")
  mode.add_argument("--ladder-plot", metavar="PNG",
                    help="plot every ladder table of <checkpoint>/eval.md in one figure (a "
                    "ladder played in pieces, e.g. low and high rungs in two processes); a "
                    "player's later row for a rung replaces an earlier one")
  parser.add_argument("--positions", default=None, metavar="NPZ",
                      help="--solver: the labelled positions (default: the game's set in "
                      "results/solver_benchmark/)")
  parser.add_argument("--solver-out", default=None, metavar="FILE.md",
                      help="--solver: write the table there with its command, and FILE.json")
  parser.add_argument("--ladder-min", type=int, default=10, help="first rung's simulations")
  parser.add_argument("--ladder-max", type=int, default=20480, help="last rung's simulations")
  parser.add_argument("--engine", choices=("azjax", "openspiel"), default="azjax",
                      help="--ladder: whose rollout MCTS the rungs are: azjax's batched UCT, or "
                      "OpenSpiel's C++ MCTSBot (one per game, on the host; faster at high "
                      "simulations on a CPU)")
  parser.add_argument("--no-control", action="store_true",
                      help=f"--ladder: skip the {CONTROL_SIMULATIONS}-simulation MCTS control")
  parser.add_argument("--game", default=None,
                      help="--pool: the game, when no item is a run directory")
  parser.add_argument("--out", default=None, metavar="DIR",
                      help="where eval.md and the plots go (default: the run evaluated, except "
                      "in the committed results/, where tables are only printed unless --out "
                      "names it)")
  return parser


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
  if args.width < 0:
    parser.error(f"--width must be 0 (every action) or positive, got {args.width}")
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
    env, agent = load_agent(args, args.checkpoint)
    opponents = [parse_opponent(env, spec) for spec in args.opponents.split(",")]
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  lines = [table_header()]
  key = jax.random.key(args.seed)
  for opponent in opponents:
    key, match_key = jax.random.split(key)
    t0 = time.time()
    result = play(env, agent, opponent, args.games, match_key)
    lines.append(table_row(result, time.time() - t0))
    print(lines[-1] if len(lines) > 2 else "\n".join(lines), flush=True)
  append_eval(output_dir(args, args.checkpoint), command, lines)


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
  from azjax import checkpoint  # noqa: PLC0415

  if args.out:
    return Path(args.out)
  if default is None or checkpoint.in_committed_results(default):
    return None
  return Path(default)


def append_eval(out: Path | None, command: str, lines: list[str]) -> None:
  """Appends `lines` to `out/eval.md` under the command that made them (atomically: the file
  is replaced whole); with `out` None says how to keep them."""
  if out is None:
    print("(tables not written to a file: --out DIR appends them to DIR/eval.md; a run in the "
          "committed results/ is written only when --out names it)", flush=True)
    return
  from azjax import checkpoint  # noqa: PLC0415

  out.mkdir(parents=True, exist_ok=True)
  path = out / "eval.md"
  old = path.read_text() if path.exists() else ""
  checkpoint.write_atomic(path, old + f"\n`{command}` (backend {jax.default_backend()})\n\n"
                          + "\n".join(lines) + "\n")
  print(f"wrote {path}", flush=True)


def simulation_counts(text: str) -> int | tuple[int, ...]:
  """`--simulations`: "32" -> 32, "32,128" -> (32, 128) (several only with --solver)."""
  try:
    counts = tuple(int(x) for x in text.split(","))
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected an integer or a comma-separated list of "
                                     f"integers, got {text!r}") from None
  return counts[0] if len(counts) == 1 else counts


# -- Solver benchmark ------------------------------------------------------------------------------


def run_solver(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> None:
  """The network's mistakes against perfect play (`azjax.solver_benchmark`)."""
  import json  # noqa: PLC0415

  from azjax import checkpoint, solver, solver_benchmark, tdleaf  # noqa: PLC0415

  counts = args.simulations if isinstance(args.simulations, tuple) else (args.simulations,)
  try:
    if tdleaf.is_run(args.checkpoint):  # An alpha-beta player: its moves only.
      learner, params = tdleaf.load(args.checkpoint)
      env = learner.env
    else:
      config, env, model, abstract = agents.load_network(args.checkpoint)
    path = args.positions or solver_benchmark.DEFAULT_PATHS.get(env.name)
    if path is None:
      raise ValueError(f"--solver: no solver benchmark for {env.name} (solved games: "
                       f"{', '.join(solver.SOLVED_GAMES)})")
    positions = solver_benchmark.Positions.load(path)
    t0 = time.time()
    if tdleaf.is_run(args.checkpoint):
      actions = np.asarray(learner.act(params, positions.states(env), jax.random.key(args.seed)))
      results = {f"alphabeta{learner.config.depth}": solver_benchmark.move_metrics(
          positions, actions, by_source=True)}
    else:
      variables = checkpoint.load_model(args.checkpoint, abstract)
      results = solver_benchmark.evaluate_agent(
          env, model, variables, positions, simulations=(0, *counts), algorithm=config.search,
          key=jax.random.key(args.seed))
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  seconds = time.time() - t0
  sources = "; ".join(f"src{i}: {int(np.sum(positions.source == i))} from {name}"
                      for i, name in enumerate(positions.sources))
  lines = [f"Solver benchmark of {args.checkpoint} on {path} ({len(positions)} positions; "
           f"{sources}); {seconds:.0f} s", "", solver_benchmark.markdown_table(results)]
  print("\n".join(lines), flush=True)
  append_eval(output_dir(args, args.checkpoint), command, lines)
  if args.solver_out:
    out = Path(args.solver_out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"`{command}` (backend {jax.default_backend()})\n\n" + "\n".join(lines)
                   + "\n")
    # NaN (a rate over no positions) as null, which every JSON reader takes.
    metrics = {player: {part: {k: None if v != v else v for k, v in m.items()}
                        for part, m in parts.items()} for player, parts in results.items()}
    report = dict(command=command, checkpoint=args.checkpoint, positions=str(path),
                  sources=list(positions.sources), seconds=seconds, metrics=metrics)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out} and {out.with_suffix('.json')}", flush=True)


# -- Ladder ----------------------------------------------------------------------------------------

LADDER_HEADER = ("| player | rung (MCTS simulations) | games | W | D | L | score | 95% CI "
                 "| seconds |\n|---|---|---|---|---|---|---|---|---|")


def ladder_rungs(low: int, high: int) -> list[int]:
  """`low, 2 low, 4 low, ...` up to `high` inclusive."""
  rungs = [low]
  while rungs[-1] * 2 <= high:
    rungs.append(rungs[-1] * 2)
  return rungs


def run_ladder(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> None:
  try:
    env, agent = load_agent(args, args.checkpoint)
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  players: list[agents.Agent | OpenSpielMCTS] = [agent]
  if not args.no_control:
    # The control plays with the rungs' own engine: OpenSpiel's MCTS (with its solver) is
    # stronger per simulation than azjax's plain UCT, so a mixed control would read low.
    if args.engine == "openspiel":
      players.append(OpenSpielMCTS(CONTROL_SIMULATIONS, label="control"))
    else:
      control = agents.make("mcts", env, simulations=CONTROL_SIMULATIONS)
      players.append(agents.Agent(f"control ({control.name})", control.policy))
  rungs = ladder_rungs(args.ladder_min, args.ladder_max)
  # results[player name] = [(rung simulations, MatchResult), ...]
  results: dict[str, list[tuple[int, arena.MatchResult]]] = {p.name: [] for p in players}
  lines = [LADDER_HEADER]
  print(LADDER_HEADER, flush=True)
  key = jax.random.key(args.seed)
  interrupted = False
  try:
    for index, sims in enumerate(rungs):
      opponent = (OpenSpielMCTS(sims) if args.engine == "openspiel" else
                  agents.make("mcts", env, simulations=sims))
      for player in players:
        key, match_key = jax.random.split(key)
        t0 = time.time()
        result = play(env, player, opponent, args.games, match_key)
        results[player.name].append((sims, result))
        low, high = result.interval
        lines.append(f"| {player.name} | {sims} | {result.num_games} | {result.wins} "
                     f"| {result.draws} | {result.losses} | {result.score:.3f} "
                     f"| [{low:.3f}, {high:.3f}] | {time.time() - t0:.0f} |")
        print(lines[-1], f"  <- rung {index + 1}/{len(rungs)}", flush=True)
  except KeyboardInterrupt:
    interrupted = True
    print("\ninterrupted: writing the rungs played so far", file=sys.stderr, flush=True)
  lines.append("")
  for name, played in results.items():
    if played:
      lines.append(average_line(name, played))
  if interrupted:
    lines.append(f"- interrupted before the ladder ended (planned rungs {rungs[0]}.."
                 f"{rungs[-1]})")
  print("\n".join(lines[lines.index(""):]), flush=True)
  out = output_dir(args, args.checkpoint)
  if any(results.values()):
    append_eval(out, command, lines)
  if any(results.values()) and out is not None:
    name = "ladder.png" if args.engine == "azjax" else f"ladder_{args.engine}.png"
    path = plot_ladder(results, out / name,
                       title=f"{env.name}: score against the rollout-MCTS ladder ({args.engine})")
    print(f"wrote {path}", flush=True)
  if interrupted:
    sys.exit(130)


def average_line(name: str, played: list[tuple[int, arena.MatchResult]]) -> str:
  """The ladder's headline for one player: its mean score over the rungs it played."""
  mean = np.mean([r.score for _, r in played])
  return (f"- {name}: average score {mean:.3f} over {len(played)} rung(s) "
          f"(MCTS {played[0][0]}..{played[-1][0]})")


def read_ladders(text: str) -> dict[str, dict[int, tuple[int, int, int]]]:
  """`{player: {rung: (wins, draws, losses)}}` from every ladder table (`LADDER_HEADER`) of an
  `eval.md`'s text, rungs in the order played; a later row for a player's rung replaces an
  earlier one."""
  header, rule = LADDER_HEADER.split("\n")
  lines = text.splitlines()
  ladders: dict[str, dict[int, tuple[int, int, int]]] = {}
  for start, line in enumerate(lines):
    if line != header or start + 1 >= len(lines) or lines[start + 1] != rule:
      continue
    for row in lines[start + 2:]:
      if not row.startswith("|"):
        break
      cells = [c.strip() for c in row.strip().strip("|").split("|")]
      player, rung, _, wins, draws, losses = cells[:6]
      ladders.setdefault(player, {})[int(rung)] = (int(wins), int(draws), int(losses))
  return ladders


def replot_ladders(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
  path = Path(args.checkpoint) / "eval.md"
  if not path.exists():
    parser.exit(2, f"error: {path} does not exist\n")
  ladders = read_ladders(path.read_text())
  if not ladders:
    parser.exit(2, f"error: {path} has no ladder table\n")
  # The tables hold no split by colour, and the plot needs none.
  results = {
      player: [(rung, arena.MatchResult(agent_a=player, agent_b=f"mcts-{rung}", game="",
                                        wins=w, draws=d, losses=l, first=(0, 0, 0),
                                        second=(0, 0, 0)))
               for rung, (w, d, l) in sorted(rungs.items())]
      for player, rungs in ladders.items()}
  for player, played in results.items():
    print(average_line(player, played))
  out = plot_ladder(results, args.ladder_plot, title=f"score against the rollout-MCTS ladder "
                    f"({path.parent.name})")
  print(f"wrote {out}")


def _save_figure(fig, ax, path: str | Path) -> Path:
  """Grid, tight layout, `path` written at 100 dpi, figure closed (both plots of this module)."""
  import matplotlib.pyplot as plt  # noqa: PLC0415

  ax.grid(True, alpha=0.3)
  fig.tight_layout()
  path = Path(path)
  fig.savefig(path, dpi=100)
  plt.close(fig)
  return path


def plot_ladder(results: dict[str, list[tuple[int, arena.MatchResult]]], path: str | Path,
                title: str = "MCTS ladder") -> Path:
  """Score per rung (log2 x-axis) with 95% interval error bars, one line per player."""
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  import matplotlib.ticker

  fig, ax = plt.subplots(figsize=(7, 4.5))
  for name, played in results.items():
    if not played:
      continue
    sims = np.array([s for s, _ in played])
    score = np.array([r.score for _, r in played])
    ci = np.array([r.interval for _, r in played])
    # Clipped: a perfect score's Wilson bound can sit a rounding error below it.
    yerr = np.clip(np.stack([score - ci[:, 0], ci[:, 1] - score]), 0.0, None)
    ax.errorbar(sims, score, yerr=yerr, marker="o", capsize=3, label=name)
  ax.axhline(0.5, color="grey", linestyle=":", linewidth=1)
  ax.set_xscale("log", base=2)
  ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
  ax.set_ylim(-0.02, 1.02)
  ax.set_xlabel("opponent: rollout-MCTS simulations per move")
  ax.set_ylabel("score (wins + draws / 2)")
  ax.set_title(title)
  ax.legend(fontsize=8)
  return _save_figure(fig, ax, path)


# -- Pool: round robin and Elo ---------------------------------------------------------------------


def _game_id(config) -> tuple[str, tuple]:
  return config.game, tuple(sorted(config.game_kwargs().items()))


def build_pool(args: argparse.Namespace) -> tuple[object, list[agents.Agent], list[str]]:
  """`(env, agents, run directories)` of `--checkpoint` + `--pool`; raises ValueError."""
  from azjax import checkpoint, games

  items = ([args.checkpoint] if args.checkpoint is not None else []) + list(args.pool)
  kinds = []
  for item in items:
    if Path(item).is_dir():
      kinds.append(("dir", item))
    elif "/" in item or Path(item).exists():
      raise ValueError(f"--pool item {item!r}: no such run directory")
    else:
      kinds.append(("spec", item))
  run_dirs = [item for kind, item in kinds if kind == "dir"]
  # Check the games from config.json before loading any model.
  games_of = {d: _game_id(checkpoint.read_config(d)) for d in run_dirs}
  distinct = sorted({g for g in games_of.values()})
  if args.game is not None and distinct and any(g[0] != args.game for g in distinct):
    raise ValueError(f"--game {args.game} but the run directories are "
                     + ", ".join(f"{d}: {g[0]}" for d, g in games_of.items()))
  if len(distinct) > 1:
    raise ValueError("all agents of a pool must play the same game; got "
                     + ", ".join(f"{d}: {g[0]}{dict(g[1]) or ''}" for d, g in games_of.items()))
  if not run_dirs and args.game is None:
    raise ValueError("--pool without a run directory needs --game to name the game")
  game, game_kwargs = distinct[0] if distinct else (args.game, ())
  env = games.make(game, **dict(game_kwargs))
  pool = []
  for kind, item in kinds:
    if kind == "dir":
      _, agent = load_agent(args, item)
    else:
      try:
        agent = parse_opponent(env, item)
      except ValueError as err:
        raise ValueError(f"--pool item {item!r} is neither a run directory nor an opponent "
                         f"spec: {err}") from None
      if isinstance(agent, OpenSpielMCTS):
        raise ValueError(f"--pool item {item!r}: OpenSpiel opponents play only in the default "
                         "mode and --ladder --engine openspiel")
    pool.append(agent)
  names = [a.name for a in pool]
  duplicates = sorted({n for n in names if names.count(n) > 1})
  if duplicates:
    raise ValueError(f"--pool lists the same agent twice: {', '.join(duplicates)}")
  if len(pool) < 2:
    raise ValueError("--pool needs at least two agents (with --checkpoint, if given)")
  return env, pool, run_dirs


def score_matrix_markdown(names: list[str], scores: dict[tuple[int, int], float]) -> str:
  """Row agent's score against the column agent (`#k` columns follow the row numbering)."""
  n = len(names)
  lines = ["| # | agent | " + " | ".join(f"#{j + 1}" for j in range(n)) + " |",
           "|---|---|" + "---|" * n]
  for i, name in enumerate(names):
    cells = ["-" if i == j else (f"{scores[i, j]:.3f}" if (i, j) in scores else "")
             for j in range(n)]
    lines.append(f"| {i + 1} | {name} | " + " | ".join(cells) + " |")
  return "\n".join(lines)


def run_pool(parser: argparse.ArgumentParser, args: argparse.Namespace, command: str) -> None:
  # Parse the specs first, before any model loads, so that a typo fails at once.
  for item in args.pool:
    if not Path(item).is_dir() and "/" not in item:
      try:
        agents.parse_spec(item)
      except ValueError as err:
        parser.exit(2, f"error: --pool item {item!r} is neither a run directory nor an opponent "
                       f"spec: {err}\n")
  try:
    env, pool, run_dirs = build_pool(args)
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  names = [a.name for a in pool]
  anchor = names.index("random") if "random" in names else 0
  lines = [table_header()]
  print(lines[0], flush=True)
  rows, scores = [], {}
  key = jax.random.key(args.seed)
  interrupted = False
  pairs = [(i, j) for i in range(len(pool)) for j in range(i + 1, len(pool))]
  try:
    for number, (i, j) in enumerate(pairs):
      key, match_key = jax.random.split(key)
      t0 = time.time()
      result = arena.play(env, pool[i], pool[j], args.games, match_key)
      rows.append(result.elo_row(i, j))
      scores[i, j], scores[j, i] = result.score, 1.0 - result.score
      lines.append(table_row(result, time.time() - t0))
      print(lines[-1], f"  <- pair {number + 1}/{len(pairs)}", flush=True)
  except KeyboardInterrupt:
    interrupted = True
    print("\ninterrupted: fitting the matches played so far", file=sys.stderr, flush=True)
  tail = ["", f"Elo (anchor {names[anchor]} = 0):", ""]
  try:
    tail.append(arena.fit_elo(names, rows, anchor=anchor).markdown())
  except ValueError as err:
    tail.append(f"no Elo fit: {err}")
  tail += ["", "Pairwise scores (row agent against column agent):", "",
           score_matrix_markdown(names, scores)]
  if interrupted:
    tail += ["", f"- interrupted after {len(rows)} of {len(pairs)} pairs"]
  lines += tail
  print("\n".join(tail), flush=True)
  if rows:
    append_eval(output_dir(args, run_dirs[0] if run_dirs else None), command, lines)
  if interrupted:
    sys.exit(130)


# -- Progress: Elo of every snapshot over training ------------------------------------------------


def _training_minutes(run_dir: Path) -> dict[int, float]:
  """`{iteration: minutes of training}` from the run's metrics, where it has them."""
  from azjax.driver import read_metrics  # noqa: PLC0415

  minutes, offset, last = {}, 0.0, 0.0
  for row in read_metrics(run_dir):
    if row.get("seconds") in (None, ""):
      continue
    seconds = float(row["seconds"])
    if seconds + offset < last:  # Runs resumed before seconds carried over restart at 0.
      offset = last
    last = seconds + offset
    minutes[int(row["iteration"])] = last / 60
  return minutes


def run_progress(parser: argparse.ArgumentParser, args: argparse.Namespace,
                 command: str) -> None:
  """Each snapshot plays every `--opponents` anchor and the snapshot before it; one Elo fit.

  The anchors tie the scale down (Elo 0 = uniform random when it is an anchor), the chain of
  neighbouring snapshots separates checkpoints that all beat the anchors. Every match reuses
  one compiled program: the networks' variables are arguments, not constants.
  """
  from azjax import checkpoint  # noqa: PLC0415

  run_dir = Path(args.checkpoint)
  try:
    config, env, model, abstract = agents.load_network(str(run_dir))
    snapshots = checkpoint.list_models(run_dir)
    if not snapshots:
      raise FileNotFoundError(f"{run_dir}: no network snapshots in models/ (runs write one at "
                              "every checkpoint)")
    anchors = [parse_opponent(env, spec) for spec in args.opponents.split(",")]
    if any(isinstance(a, OpenSpielMCTS) for a in anchors):
      azjax_kinds = [k for k in OPPONENT_KINDS if agents.KINDS[k].plays == "jax"]
      raise ValueError(f"--progress: anchors must be azjax opponents ({', '.join(azjax_kinds)})")
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")

  # Stochastic players: two deterministic snapshots would replay the same two games over and
  # over. The raw policy samples from its softmax; search adds Gumbel noise at the root.
  def player(variables):
    if args.raw_policy:
      return agents.make_raw_policy(env, model=model, variables=variables, sample=True).policy
    return agents.make_alphazero(env, model=model, variables=variables,
                                 simulations=args.simulations, algorithm=config.search,
                                 gumbel_scale=1.0).policy

  def outcomes_fn(policy_a, policy_b, key):
    return arena.match_outcomes(env, policy_a, policy_b, args.games, env.max_game_length, key)

  vs_anchor = {a.name: jax.jit(lambda v, k, p=a.policy: outcomes_fn(player(v), p, k))
               for a in anchors}
  vs_snapshot = jax.jit(lambda va, vb, k: outcomes_fn(player(va), player(vb), k))

  names = [f"it{step}" for step, _ in snapshots] + [a.name for a in anchors]
  index = {name: i for i, name in enumerate(names)}
  lines = [table_header()]
  print(lines[0], flush=True)
  rows = []
  key = jax.random.key(args.seed)
  previous = None
  interrupted = False
  try:
    # The anchors play each other too, so they are rated apart even when every snapshot beats
    # them all.
    for i, a in enumerate(anchors):
      for b in anchors[i + 1:]:
        key, match_key = jax.random.split(key)
        t0 = time.time()
        result = arena.play(env, a, b, args.games, match_key)
        rows.append(result.elo_row(index[a.name], index[b.name]))
        lines.append(table_row(result, time.time() - t0))
        print(lines[-1], "  <- anchors", flush=True)
    for number, (step, _) in enumerate(snapshots):
      variables = checkpoint.load_model(run_dir, abstract, step=step)
      matches = [(a.name, lambda k, a=a: vs_anchor[a.name](variables, k)) for a in anchors]
      if previous is not None:
        matches.append((previous[0], lambda k, pv=previous[1]: vs_snapshot(variables, pv, k)))
      for opponent, fn in matches:
        key, match_key = jax.random.split(key)
        t0 = time.time()
        result = arena.summarize(env, f"it{step}", opponent, fn(match_key))
        rows.append(result.elo_row(index[f"it{step}"], index[opponent]))
        lines.append(table_row(result, time.time() - t0))
        print(lines[-1], f"  <- snapshot {number + 1}/{len(snapshots)}", flush=True)
      previous = (f"it{step}", variables)
  except KeyboardInterrupt:
    interrupted = True
    print("\ninterrupted: fitting the matches played so far", file=sys.stderr, flush=True)
  played = sorted({r[0] for r in rows} | {r[1] for r in rows})
  if not rows:
    sys.exit(130 if interrupted else 1)
  # Fit only the agents that played (an interrupted run may leave snapshots out).
  keep = [names[i] for i in played]
  remap = {old: new for new, old in enumerate(played)}
  fit_rows = [(remap[r[0]], remap[r[1]], *r[2:]) for r in rows]
  anchor_name = "random" if "random" in keep else keep[0]
  fit = arena.fit_elo(keep, fit_rows, anchor=keep.index(anchor_name))
  tail = ["", f"Elo (anchor {anchor_name} = 0):", "", fit.markdown()]
  if interrupted:
    tail += ["", f"- interrupted: {len(rows)} matches played"]
  lines += tail
  print("\n".join(tail), flush=True)
  out = output_dir(args, run_dir)
  append_eval(out, command, lines)
  if out is not None:
    path = plot_progress(fit, [step for step, _ in snapshots], _training_minutes(run_dir),
                         out / "progress.png", title=f"{env.name}: Elo over training")
    print(f"wrote {path}", flush=True)
  if interrupted:
    sys.exit(130)


def plot_progress(fit: arena.EloFit, steps: list[int], minutes: dict[int, float],
                  path: str | Path, title: str) -> Path:
  """Elo of each snapshot (with its 95% interval) against training minutes (or iterations
  when the run has no metrics), with the anchors as horizontal lines."""
  import matplotlib  # noqa: PLC0415
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # noqa: PLC0415

  ratings = dict(zip(fit.names, fit.ratings))
  intervals = dict(zip(fit.names, fit.interval))
  shown = [s for s in steps if f"it{s}" in ratings]
  use_minutes = bool(shown) and all(s in minutes for s in shown)
  x = np.array([minutes[s] if use_minutes else s for s in shown], dtype=float)
  y = np.array([ratings[f"it{s}"] for s in shown])
  ci = np.array([intervals[f"it{s}"] for s in shown]).reshape(-1, 2)
  fig, ax = plt.subplots(figsize=(7, 4.5))
  ax.errorbar(x, y, yerr=np.clip(np.stack([y - ci[:, 0], ci[:, 1] - y]), 0.0, None),
              marker="o", capsize=3,
              label="snapshots")
  for name in fit.names:
    if not name.startswith("it"):
      ax.axhline(ratings[name], linestyle=":", linewidth=1, color="grey")
      ax.annotate(name, (x.min() if len(x) else 0, ratings[name]), fontsize=8, color="grey",
                  va="bottom")
  ax.set_xlabel("training minutes" if use_minutes else "iteration")
  ax.set_ylabel("Elo")
  ax.set_title(title)
  return _save_figure(fig, ax, path)


if __name__ == "__main__":
  main()
