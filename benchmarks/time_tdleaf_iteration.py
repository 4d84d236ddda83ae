"""Times a TD-Leaf iteration and its Adam steps, rolled and unrolled, on trained runs.

    python -m benchmarks.time_tdleaf_iteration results/slider/tdleaf_local results/slider/tdleaf_vh

The figures in results/slider/README.md and docs/slider.md (run alone on the CPU): each run's
self-play, its `sgd_steps` Adam steps as a rolled and as an unrolled `lax.scan`, and a whole
iteration, each timed once after a call that compiles.
"""

from __future__ import annotations

import argparse
import functools
import time

import jax
import optax

from azjax import tdleaf


def seconds(fn, *args) -> float:
  """The time of one call of `fn(*args)` after one that compiles."""
  jax.block_until_ready(fn(*args))
  start = time.time()
  jax.block_until_ready(fn(*args))
  return time.time() - start


def time_run(run: str) -> str:
  """One line of timings for the TD-Leaf run `run`."""
  learner, params = tdleaf.load(run)
  play = jax.jit(learner.play)
  records = play(params, jax.random.key(0))
  loss = functools.partial(tdleaf.td_loss, learner.evaluator, learner.config.td_lambda)

  def learn(params, data, unroll):
    def sgd(carry, _):
      p, o = carry
      value, grads = jax.value_and_grad(loss)(p, data)
      updates, o = learner.optimizer.update(grads, o, p)
      return (optax.apply_updates(p, updates), o), value
    return jax.lax.scan(sgd, (params, learner.optimizer.init(params)), None,
                        length=learner.config.sgd_steps, unroll=unroll)

  state = learner.init(jax.random.key(0))._replace(params=params)
  rolled = seconds(jax.jit(functools.partial(learn, unroll=1)), params, records)
  unrolled = seconds(jax.jit(functools.partial(learn, unroll=True)), params, records)
  iteration = seconds(lambda s: learner.iteration(s, None), state)
  return (f"{run}: self-play {seconds(play, params, jax.random.key(1)):.1f} s, "
          f"{learner.config.sgd_steps} Adam steps rolled {rolled:.1f} s / unrolled "
          f"{unrolled:.1f} s, iteration {iteration:.1f} s")


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("runs", nargs="+", help="TD-Leaf run directories")
  args = parser.parse_args(argv)
  for run in args.runs:
    print(time_run(run), flush=True)


if __name__ == "__main__":
  main()
