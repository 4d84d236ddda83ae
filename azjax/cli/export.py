"""Export a trained network's parameters and a probing dataset (numpy files, no azjax needed).

    azjax export --checkpoint results/breakthrough_cpu --states 3000
    azjax export --checkpoint DIR --agent mcts:200 --opening-moves 4

(the same: `python -m experiments.export`).

Writes to `--out` (default `<checkpoint>/export`):

    params.npz        the network's parameters and BatchNorm statistics, flat names
                      ("params/res_block_0/conv_0/kernel", "batch_stats/stem_bn/mean", ...)
    meta.json         game, board size, layer shapes, concepts, how the states were collected,
                      the move notation of every action index ("action_moves": {"player0":
                      ["a2a3", ...], "player1": [...]}) and the run's metrics file ("metrics")
    states.npz        the state table (game id, ply, boards, player to move, legal mask, chosen
                      action, search policy and value, network value, outcome, every concept)
    states.csv        its scalar columns and the board as text
    activations.npz   every layer's activations of every state ("input" = the observation)

`azjax/probe/dataset.py` documents each array; the README's "Probing" section shows how to load
them with numpy alone. Positions come from self-play of the checkpoint (`--agent self`, the
run's self-play search with its noise) or from games of another agent (`random`,
`mcts:<simulations>`, `alphabeta:<depth>`, or `policy`: the checkpoint's raw policy, sampled);
every position is searched by the checkpoint all the same, for the policy and value columns.
Identical positions are kept once.

Progress shows on a terminal. The files appear together once all are written: Ctrl-C (or an
error) before that writes nothing and leaves an earlier export in `--out` as it was.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import jax
import numpy as np

from azjax import console, files
from azjax.cli.common import check_counts, prog
from azjax.runs import layout

PARAMS = "params.npz"  # The network's parameters, beside the dataset's files (`dataset.FILES`).


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog=prog("export"),
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--checkpoint", required=True, help="a run directory")
  parser.add_argument("--out", default=None, help="output directory (default <checkpoint>/export)")
  parser.add_argument("--states", type=int, default=3000, help="distinct positions")
  parser.add_argument("--agent", default="self",
                      help="who plays the games: self, policy, random, mcts:<n>, alphabeta:<d>")
  parser.add_argument("--simulations", type=int, default=None,
                      help="the checkpoint's search simulations (default: the run's self-play)")
  parser.add_argument("--batch", type=int, default=64, help="games played together")
  parser.add_argument("--opening-moves", type=int, default=0,
                      help="uniformly random plies at the start of every game")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--no-activations", action="store_true",
                      help="write the state table only")
  return parser


def mover_policy(spec: str, env, model, variables):
  """The policy choosing the moves (None: the checkpoint's own search) and a description."""
  from azjax import agents
  if spec == "self":
    return None, "self-play of the checkpoint"
  if spec == "policy":
    agent = agents.make_raw_policy(env, model=model, variables=variables, sample=True)
    return agent.policy, "the checkpoint's raw policy, sampled"
  from azjax.evaluate.tournament import parse_opponent
  agent = parse_opponent(env, spec)
  return agent.policy, f"games of {agent.name} against itself"


def action_moves(env) -> dict[str, list[str | None]]:
  """The move notation of every action index, for each player to move (`"player0"`,
  `"player1"`): Breakthrough's, checkers' and Slider's actions are in the mover's frame, so one
  index names two moves; None where an action names no move (it leaves the board)."""
  state = env.init(jax.random.key(0))
  table = {}
  for _ in range(2):
    names = []
    for action in range(env.num_actions):
      try:
        names.append(env.action_to_move(state, action))
      except (ValueError, IndexError):
        names.append(None)
    table[f"player{int(state.current_player)}"] = names
    state = env.step(state, env.legal_actions(state)[0])
  return table


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
  """Exits with a message naming the flag for a count that cannot be."""
  check_counts(parser, (("--states", args.states, 1), ("--batch", args.batch, 1),
                        ("--simulations", args.simulations, 1),
                        ("--opening-moves", args.opening_moves, 0)))


@console.command
def main(argv: list[str] | None = None) -> None:
  parser = build_parser()
  args = parser.parse_args(argv)
  check_args(parser, args)
  run_dir = Path(args.checkpoint)
  out = Path(args.out) if args.out else run_dir / layout.EXPORT

  from azjax import games, nets
  from azjax.probe import dataset
  from azjax.runs import checkpoint

  config = checkpoint.read_config(run_dir)
  env = games.make(config.game, **config.game_kwargs())
  model = nets.make(config.net_config(), env.num_actions)
  variables = checkpoint.load_model(run_dir,
                                    dataset.abstract_network(model, env.observation_shape))
  try:
    policy, source = mover_policy(args.agent, env, model, variables)
  except ValueError as err:
    sys.exit(f"error: {err}")
  # Self-play keeps the run's search noise on purpose (the games differ); another agent's
  # positions are labelled by the run's evaluation player.
  search_config = config.search_config(evaluation=policy is not None,
                                       simulations=args.simulations or None)

  bar = console.progress(args.states, "export: collecting positions", unit="pos")
  doing = "the positions were still being collected"
  try:
    states, table = dataset.collect(
        env, model, variables, search_config, num_states=args.states,
        key=jax.random.key(args.seed), batch=args.batch, policy=policy,
        opening_moves=args.opening_moves, on_round=console.reach(bar, args.states))
    bar.set_description_str("export: activations")
    doing = "the activations were being computed"
    acts = {} if args.no_activations else dataset.activations(
        model, variables, np.asarray(states.observation))
    bar.set_description_str("export: writing")
    doing = "the files were being written"
    # Into a folder first: an export is whole or not there (an earlier one's files left alone).
    with files.staged(out, replaces=(*dataset.FILES, PARAMS)) as stage:
      write(stage, env, config, run_dir, variables, table, acts,
            f"{source}; search {search_config.algorithm} {search_config.simulations} "
            f"simulations, gumbel_scale {search_config.gumbel_scale}; {args.opening_moves} "
            f"random opening plies; seed {args.seed}")
  except KeyboardInterrupt:
    console.interrupted(f"nothing written to {out}: {doing}")
    sys.exit(console.INTERRUPTED)
  finally:
    bar.close()
  games_count = len(np.unique(table["game_id"]))
  print(f"export: {len(table['game_id'])} positions from {games_count} games ({source}) "
        f"-> {out}")
  for name in sorted(p.name for p in out.iterdir() if p.name in (*dataset.FILES, PARAMS)):
    print(f"  {name:18s} {(out / name).stat().st_size / 1e6:8.2f} MB")


def write(directory: Path, env, config, run_dir: Path, variables, table: dict[str, np.ndarray],
          acts: dict[str, np.ndarray], source: str) -> None:
  """The export's files in `directory`: the dataset of `table` (`[N]` rows) and `acts`
  (`dataset.save`, with its meta.json; `source` says how the positions were found) and the
  network's parameters."""
  from azjax.probe import dataset
  from azjax.runs import checkpoint

  meta = dict(
      game=config.game, game_kwargs=config.game_kwargs(), checkpoint=str(run_dir),
      net=dataclasses.asdict(config.net_config()), num_actions=env.num_actions,
      observation_shape=list(env.observation_shape), source=source,
      concepts=dataset.concept_meta(env),
      # What the policy's indices mean: states.npz's "action" and the policy columns.
      action_moves=action_moves(env),
      # The run's training record (loss, games, evaluations per iteration).
      metrics=str(layout.metrics_file(run_dir)))
  dataset.save(directory, dataset.Dataset(table=table, activations=acts, meta=meta))
  checkpoint.export_npz(variables, directory / PARAMS)


if __name__ == "__main__":
  main()
