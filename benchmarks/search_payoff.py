"""Why search barely improves on the raw policy in the opening: a network's value head and its
search, by ply, on solver-labelled positions.

    python -m benchmarks.search_payoff --run results/efficiency/connect_four/mlp_run \
        --positions strong --variant gumbel --variant gumbel:max_num_considered_actions=4 \
        --variant puct \
        --out results/solver_benchmark/search_payoff_connect_four_cpu.md

Three tables per run, over the positions of the set (`azjax.solver.positions`), with the ply
buckets `--plies` (default 0-10, 11-20, 21-41):

1. **Mistakes**, raw policy and each search variant at each `--simulations` count (the solver
   benchmark's player, `SolverBenchmark`): mistakes over the *decisive* positions (where some
   move loses value), by ply bucket and by source (e.g. solver / network games); and how many
   decisive positions of each bucket see search play another move than the raw policy.
2. **Value calibration**: the value head's estimate `v` of the position (mover's side) against
   the solver's value `V`, for won, drawn and lost positions apart: how many, the mean `v`, and
   the share read with the right sign (`v > 0` won, `v < 0` lost, `|v| < 1/3` drawn).
3. **The value head as a one-ply player**: each move valued by the value head one ply on
   (`-v(child)`, the reward where the move ends the game); the share of decisive positions
   where the best-valued move is a mistake, and the mean gap between the value of the position's
   best moves and of its losing ones (what a search that trusts the value head can separate).

A variant is `ALGORITHM[:key=value,...]` with `azjax.search.SearchConfig` fields, noiseless as
every evaluation player (`gumbel`: 16 considered actions, mctx's completed-Q transform).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from azjax import agents, runs
from azjax.games import base
from azjax.runs import checkpoint
from azjax.solver import benchmark as sb

PLY_BUCKETS = ((0, 10), (11, 20), (21, 41))
OUTCOMES = ((1.0, "won"), (0.0, "drawn"), (-1.0, "lost"))


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
  """`"gumbel:max_num_considered_actions=4"` -> `("gumbel", {"max_num_considered_actions": 4})`."""
  algorithm, _, options = text.partition(":")
  kwargs = {}
  for item in filter(None, options.split(",")):
    key, _, value = item.partition("=")
    kwargs[key] = agents._parse_value(value)
  return algorithm, kwargs


def _bucket_masks(positions: sb.Positions, buckets: Sequence[tuple[int, int]]):
  plies = positions.num_moves
  return [(f"{a}-{b}", (plies >= a) & (plies <= b)) for a, b in buckets]


def mistake_cells(positions: sb.Positions, actions: np.ndarray,
                  buckets: Sequence[tuple[int, int]] = PLY_BUCKETS) -> dict[str, tuple[int, int]]:
  """`{"<bucket>" or "<source>/<bucket>" or "all": (mistakes, decisive)}` of one player's moves
  `[N]`; a source is named by its description up to the colon."""
  rows = np.arange(len(positions))
  legal = (actions >= 0) & (actions < positions.scores.shape[1])
  safe = np.clip(actions, 0, positions.scores.shape[1] - 1)
  legal &= positions.legal[rows, safe]
  chosen = np.where(legal, positions.move_values[rows, safe], -1.0)
  mistake = positions.decisive & (chosen < positions.values)
  out = {}
  groups = [("", np.ones(len(positions), bool))] + [
      (positions.sources[i].split(":")[0].split(",")[0] + "/", positions.source == i)
      for i in range(len(positions.sources))]
  for prefix, group in groups:
    for name, mask in _bucket_masks(positions, buckets) + [("all", np.ones_like(group))]:
      m = group & mask
      out[prefix + name] = (int((m & mistake).sum()), int((m & positions.decisive).sum()))
  return out


def calibration(positions: sb.Positions, estimates: np.ndarray,
                buckets: Sequence[tuple[int, int]] = PLY_BUCKETS) -> list[dict[str, Any]]:
  """Rows `{"plies", "outcome", "positions", "mean", "right_sign"}` of value estimates `[N]`
  (mover's side) on the won, drawn and lost positions of each ply bucket; NaN over none."""
  v = np.asarray(estimates, np.float64)
  right = {1.0: v > 0, 0.0: np.abs(v) < sb.DRAW_BAND, -1.0: v < 0}
  rows = []
  for name, mask in _bucket_masks(positions, buckets):
    for value, outcome in OUTCOMES:
      m = mask & (positions.values == value)
      n = int(m.sum())
      rows.append(dict(plies=name, outcome=outcome, positions=n,
                       mean=float(v[m].mean()) if n else float("nan"),
                       right_sign=float(right[value][m].mean()) if n else float("nan")))
  return rows


def one_ply_values(env: base.Game, model: Any, variables: Any, states: Any) -> np.ndarray:
  """`[N, A]` each move's value by the value head one ply on, mover's side: `-v(child)`, or the
  mover's reward where the move ends the game; NaN for illegal moves. `states`: `[N]`."""

  @jax.jit
  def values(states):
    actions = jnp.arange(env.num_actions, dtype=jnp.int32)
    children = jax.vmap(jax.vmap(env.step, (None, 0)), (0, None))(states, actions)  # [N, A]
    flat = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), children)
    _, child_value = model.apply(variables, flat.observation, train=False)
    child_value = child_value.reshape(children.terminated.shape)
    mover = states.current_player[:, None]  # [N, 1]
    reward = jnp.where(mover == 0, children.rewards[..., 0], children.rewards[..., 1])
    value = jnp.where(children.terminated, reward, -child_value.astype(jnp.float32))
    return jnp.where(states.legal_action_mask, value, jnp.nan)

  return np.asarray(values(states), np.float64)


def one_ply_cells(positions: sb.Positions, move_values: np.ndarray,
                  buckets: Sequence[tuple[int, int]] = PLY_BUCKETS,
                  raw_actions: np.ndarray | None = None) -> list[dict[str, Any]]:
  """Rows `{"plies", "decisive", "mistakes", "gap"}`: the one-ply player's (argmax of
  `move_values` `[N, A]`) mistakes over the decisive positions of each bucket, and the mean gap
  there between the best-valued value-keeping move and the best-valued losing-value one; with
  `raw_actions` `[N]` also `"raw_mistakes"` and `"fixed"`, those of the raw policy's mistakes
  the one-ply player does not make."""
  exact = positions.move_values
  choice = np.nanargmax(move_values, axis=-1)
  rows_index = np.arange(len(positions))
  mistake = exact[rows_index, choice] < positions.values
  keeping = exact == positions.values[:, None]
  losing = positions.legal & (exact < positions.values[:, None])
  best_keeping = np.max(np.where(keeping, move_values, -np.inf), axis=-1)
  best_losing = np.max(np.where(losing, move_values, -np.inf), axis=-1)
  gap = best_keeping - best_losing
  rows = []
  for name, mask in _bucket_masks(positions, buckets) + [("all", np.ones(len(positions), bool))]:
    m = mask & positions.decisive
    d = int(m.sum())
    rows.append(dict(plies=name, decisive=d, mistakes=int((m & mistake).sum()),
                     gap=float(gap[m].mean()) if d else float("nan")))
    if raw_actions is not None:
      raw_mistake = exact[rows_index, raw_actions] < positions.values  # Raw moves are legal.
      rows[-1].update(raw_mistakes=int((m & raw_mistake).sum()),
                      fixed=int((m & raw_mistake & ~mistake).sum()))
  return rows


def _rate(mistakes: int, decisive: int) -> str:
  return f"{100 * mistakes / decisive:.1f}% ({mistakes}/{decisive})" if decisive else "-"


def report(run: str, positions: sb.Positions, variants: Sequence[str],
           simulations: Sequence[int], buckets: Sequence[tuple[int, int]], seed: int) -> str:
  """The three tables of one run, in markdown."""
  _, env, model, abstract = agents.load_network(run)
  variables = checkpoint.load_model(run, abstract)
  key = jax.random.key(seed)
  players: dict[str, np.ndarray] = {}
  estimates = None
  for variant in variants:
    algorithm, kwargs = parse_variant(variant)
    start = time.time()
    bench = sb.SolverBenchmark(env, model, positions, simulations=(0, *simulations),
                               algorithm=algorithm, **kwargs)
    for name, (actions, values) in bench.actions(variables, key).items():
      if name == "policy":
        players.setdefault("raw policy", actions)
        estimates = values
      else:
        players[f"{variant} {name[len('search'):]}"] = actions
    print(f"{run} {variant}: {time.time() - start:.0f} s", file=sys.stderr, flush=True)
  cells = {name: mistake_cells(positions, actions, buckets) for name, actions in players.items()}
  groups = list(next(iter(cells.values())))
  names = list(players)
  lines = [f"### {run}", "", "Mistakes over the decisive positions (where some move loses "
           "value), by source and ply: rate (mistakes); the last rows count the decisive "
           "positions where the player's move differs from the raw policy's.", "",
           "| positions | decisive | " + " | ".join(names) + " |",
           "|---|---|" + "---|" * len(names)]
  for group in groups:
    decisive = cells[names[0]][group][1]
    label = group.replace("/", " ") if "/" in group else f"all {group}".replace("all all", "all")
    lines.append(f"| {label} | {decisive} | "
                 + " | ".join(_rate(*cells[n][group]).split(" (")[0]
                              + f" ({cells[n][group][0]})" for n in names) + " |")
  raw = players["raw policy"]
  for name, mask in _bucket_masks(positions, buckets):
    m = mask & positions.decisive
    lines.append(f"| moves changed, {name} | {int(m.sum())} | "
                 + " | ".join(str(int((m & (players[n] != raw)).sum())) for n in names) + " |")
  lines += ["", "Value head calibration (the network's value of the position, mover's side; "
            "right sign: > 0 won, < 0 lost, |v| < 1/3 drawn):", "",
            "| plies | outcome | positions | mean value | right sign |", "|---|---|---|---|---|"]
  for row in calibration(positions, estimates, buckets):
    mean = "-" if row["mean"] != row["mean"] else f"{row['mean']:+.2f}"
    right = "-" if row["right_sign"] != row["right_sign"] else f"{100 * row['right_sign']:.0f}%"
    lines.append(f"| {row['plies']} | {row['outcome']} | {row['positions']} | {mean} | {right} |")
  move_values = one_ply_values(env, model, variables, positions.states(env))
  lines += ["", "The value head as a one-ply player (best `-v(child)`) on the decisive "
            "positions; gap: best value-keeping move's value minus best losing move's; "
            "fixed: the raw policy's mistakes the one-ply player does not make:", "",
            "| plies | decisive | one-ply mistakes | mean gap | raw policy's mistakes fixed |",
            "|---|---|---|---|---|"]
  for row in one_ply_cells(positions, move_values, buckets, players["raw policy"]):
    lines.append(f"| {row['plies']} | {row['decisive']} | "
                 f"{_rate(row['mistakes'], row['decisive'])} | {row['gap']:+.2f} | "
                 f"{row['fixed']} of {row['raw_mistakes']} |")
  return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(prog="python -m benchmarks.search_payoff",
                                   description=__doc__.split("\n\n")[0])
  parser.add_argument("--run", action="append", required=True, metavar="RUN_DIR")
  parser.add_argument("--positions", default="strong",
                      help="a positions file or a shipped set's name (default: strong)")
  parser.add_argument("--variant", action="append", default=None,
                      help="ALGORITHM[:key=value,...]; repeatable (default: gumbel)")
  parser.add_argument("--simulations", default="32,128")
  parser.add_argument("--plies", default=",".join(f"{a}-{b}" for a, b in PLY_BUCKETS))
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--out", default=None, help="also write the tables to this .md file")
  args = parser.parse_args(argv)
  simulations = tuple(int(s) for s in args.simulations.split(","))
  buckets = tuple(tuple(int(x) for x in b.split("-")) for b in args.plies.split(","))
  variants = args.variant or ["gumbel"]
  start = time.time()
  sections = []
  for run in args.run:
    game = runs.run_game(run).name
    path = sb.positions_path(game, args.positions)
    positions = sb.Positions.load(path)
    sections.append(report(run, positions, variants, simulations, buckets, args.seed))
  command = "python -m benchmarks.search_payoff " + " ".join(argv or sys.argv[1:])
  text = "\n\n".join([f"`{command}`", f"Positions: {sb.positions_label(path)} ({len(positions)}; "
                      f"{int(positions.decisive.sum())} decisive). {platform.node()}, "
                      f"backend {jax.default_backend()}, {time.time() - start:.0f} s wall "
                      "(a shared 2-core machine: other jobs ran)."] + sections) + "\n"
  print(text)
  if args.out:
    with open(args.out, "w") as f:
      f.write(text)


if __name__ == "__main__":
  main()
