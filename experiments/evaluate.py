"""Evaluate a trained agent against baselines and write a markdown table.

    python -m experiments.evaluate --checkpoint results/breakthrough_cpu \
        --opponents random,mcts:200,mcts:1000 --games 200 --simulations 32

Each opponent plays `--games` games, half with each colour. `--raw-policy` evaluates the
network's raw policy (one forward pass per move) instead of the network with search. The table
is printed and appended to `<checkpoint>/eval.md` with the command that made it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

import jax

from azjax import agents, arena


def parse_opponent(env, spec: str) -> agents.Agent:
  """"random", "mcts:<simulations>" or "alphabeta:<depth>" -> an agent."""
  name, _, arg = spec.partition(":")
  if name == "random" and not arg:
    return agents.make("random", env)
  if name in ("mcts", "alphabeta"):
    try:
      number = int(arg or (1000 if name == "mcts" else 2))
    except ValueError:
      raise ValueError(f"opponent {spec!r}: expected {name}:<integer>") from None
    if name == "mcts":
      return agents.make("mcts", env, simulations=number)
    return agents.make("alphabeta", env, depth=number)
  raise ValueError(f"unknown opponent {spec!r}; use random, mcts:<simulations> or "
                   "alphabeta:<depth>")


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(prog="python -m experiments.evaluate",
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--checkpoint", required=True, help="a run directory")
  parser.add_argument("--opponents", default="random,mcts:200",
                      help="comma-separated: random, mcts:<simulations>, alphabeta:<depth>")
  parser.add_argument("--games", type=int, default=200, help="games per opponent (even)")
  parser.add_argument("--simulations", type=int, default=32)
  parser.add_argument("--raw-policy", action="store_true")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  if args.games <= 0 or args.games % 2:
    parser.exit(2, f"error: --games must be positive and even, got {args.games}\n")
  try:
    env, agent = agents.load(args.checkpoint, simulations=args.simulations,
                             raw_policy=args.raw_policy)
    opponents = [parse_opponent(env, spec) for spec in args.opponents.split(",")]
  except (FileNotFoundError, ValueError) as err:
    parser.exit(2, f"error: {err}\n")
  lines = [table_header()]
  key = jax.random.key(args.seed)
  for opponent in opponents:
    key, match_key = jax.random.split(key)
    t0 = time.time()
    result = arena.play(env, agent, opponent, args.games, match_key)
    lines.append(result.markdown_row() + f" {time.time() - t0:.0f} |")
    print(lines[-1] if len(lines) > 2 else "\n".join(lines), flush=True)
  command = "python -m experiments.evaluate " + " ".join(map(shlex.quote, sys.argv[1:] if
                                                              argv is None else argv))
  with open(Path(args.checkpoint) / "eval.md", "a") as f:
    f.write(f"\n`{command}` (backend {jax.default_backend()})\n\n" + "\n".join(lines) + "\n")


def table_header() -> str:
  """`MatchResult.MARKDOWN_HEADER` with a column for the match's wall time."""
  head, rule = arena.MatchResult.MARKDOWN_HEADER.split("\n")
  return f"{head} seconds |\n{rule}---|"


if __name__ == "__main__":
  main()
