"""Does more search help, and which search, at evaluation? One network, many searches.

Scores a Connect Four run's final network on the solver benchmark with the raw policy and with
Gumbel (the default evaluation search: no noise, Sequential Halving over the policy's top
actions) and PUCT (AlphaZero's; no Dirichlet noise, the most visited move) at several
simulation counts, and writes a markdown table of mistake rates by ply range.

    python -m benchmarks.search_settings results/efficiency/connect_four/mlp_run \
        --out results/efficiency/connect_four/search_settings.md
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import numpy as np

from azjax import runs
from azjax.solver import benchmark as solver_benchmark

SEARCHES = (("gumbel", 32), ("gumbel", 128), ("gumbel", 512),
            ("puct", 32), ("puct", 128), ("puct", 512))


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("run")
  parser.add_argument("--out", default=None, help="write the markdown table there")
  args = parser.parse_args(argv)
  path = solver_benchmark.positions_path("connect_four")
  positions = solver_benchmark.Positions.load(path)
  rows = ["| search | mistakes, all | plies 0-10 | 11-20 | 21-30 | 31-41 | random-play "
          "positions | self-play positions | optimal | seconds |",
          "|---|---|---|---|---|---|---|---|---|---|"]
  players = [("raw policy", dict(raw_policy=True))]
  players += [(f"{algorithm} {n}", dict(simulations=n, algorithm=algorithm))
              for algorithm, n in SEARCHES]
  for label, options in players:
    env, agent = runs.load(args.run, **options)
    start = time.time()
    actions = np.asarray(agent.act(positions.states(env), jax.random.key(0)))
    metrics = solver_benchmark.move_metrics(positions, actions, by_source=True)
    seconds = time.time() - start
    rate = {name: f"{100 * m['mistake_rate']:.1f}%" for name, m in metrics.items()}
    rows.append(f"| {label} | {rate['all']} | {rate['0-10']} | {rate['11-20']} | "
                f"{rate['21-30']} | {rate['31-41']} | {rate['src0']} | {rate['src1']} | "
                f"{100 * metrics['all']['optimal_rate']:.1f}% | {seconds:.0f} |")
    print(rows[-1], flush=True)
  command = " ".join(["python -m benchmarks.search_settings", *(argv or sys.argv[1:])])
  text = (f"`{command}`\n\nMistake rates over the decisive positions of "
          f"{solver_benchmark.positions_label(path)} (src0: random play, src1: self-play of "
          f"results/connect_four_gpu), network {args.run}:\n\n" + "\n".join(rows) + "\n")
  if args.out:
    with open(args.out, "w") as f:
      f.write(text)
  print(text)


if __name__ == "__main__":
  main()
