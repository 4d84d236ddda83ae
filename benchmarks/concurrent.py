"""Whether the CPU runtime runs an iteration's self-play and its SGD at the same time when they
are two programs instead of one fused iteration.

    python -m benchmarks.concurrent --preset breakthrough8_cpu --repeats 5

Session 28 found that one fused program gains nothing from `overlap_sgd` (XLA:CPU runs its two
loops one after the other), and session 27 that a run gains at most 40% from its second core.
If two separately jitted programs, dispatched together, took less than the sum of their times,
a pipelined loop (SGD on iteration t's buffer beside iteration t+1's self-play) would make an
iteration cheaper. Prints the best of `--repeats` timed calls, in seconds, of: self-play alone
(`selfplay_steps` moves in each of `selfplay_batch` games), SGD alone (`sgd_steps` steps of
`train_batch`), the two one after the other, the two dispatched back to back and waited for
together (JAX's asynchronous dispatch), and the two called from two Python threads.
"""

from __future__ import annotations

import argparse
import dataclasses
import threading

import jax

from azjax import selfplay
from azjax.config.presets import preset
from azjax.train import Trainer, iteration_keys
from benchmarks.timing import best_time


def programs(config):
  """`(selfplay_fn, sgd_fn, state, keys)`: the two halves of the iteration, jitted apart."""
  trainer = Trainer.create(config)
  state = trainer.init()
  keys = iteration_keys(state.key)

  @jax.jit
  def selfplay_fn(state, key):
    sp, _ = selfplay.play_chunk(trainer.game, trainer.eval_fn, trainer.search_config(),
                                trainer.selfplay_variables(state), state.selfplay, key,
                                config.selfplay_steps, opening_moves=config.opening_moves)
    return sp.games

  @jax.jit
  def sgd_fn(state, sgd_key, augment_key):
    # The fresh buffer has no targets, but SGD runs unconditionally (its result is then
    # discarded), so its cost is the same as in a running loop.
    return trainer.train_on(state.selfplay.buffer, state, sgd_key, augment_key)[:3]

  return selfplay_fn, sgd_fn, state, keys


def timings(config, repeats: int) -> dict[str, float]:
  selfplay_fn, sgd_fn, state, keys = programs(config)
  run_sp = lambda: selfplay_fn(state, keys.selfplay)  # noqa: E731
  run_sgd = lambda: sgd_fn(state, keys.sgd, keys.augment)  # noqa: E731

  def sequential():
    jax.block_until_ready(run_sp())
    jax.block_until_ready(run_sgd())

  def threaded():
    threads = [threading.Thread(target=lambda f=f: jax.block_until_ready(f()))
               for f in (run_sp, run_sgd)]
    for t in threads:
      t.start()
    for t in threads:
      t.join()

  # `best_time` waits for what a way returns: both programs' outputs when dispatched together.
  ways = {"self-play alone": run_sp, "SGD alone": run_sgd, "one after the other": sequential,
          "dispatched together": lambda: (run_sp(), run_sgd()), "two threads": threaded}
  return {name: best_time(fn, repeats=repeats)[0] for name, fn in ways.items()}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("changes", nargs="*", default=[""],
                      help="field=value,... replacements of the preset (default: none)")
  parser.add_argument("--preset", default="breakthrough8_cpu")
  parser.add_argument("--repeats", type=int, default=5)
  args = parser.parse_args()
  header = None
  for arg in args.changes or [""]:
    changes = eval(f"dict({arg})")  # noqa: S307 - a command-line list of field=value pairs
    row = timings(dataclasses.replace(preset(args.preset), **changes), args.repeats)
    if header is None:
      header = f"| changes to the {args.preset} preset | " + " | ".join(row) + " |"
      print(header + "\n" + "|---" * (len(row) + 1) + "|")
    print(f"| {arg or 'none'} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |",
          flush=True)


if __name__ == "__main__":
  main()
