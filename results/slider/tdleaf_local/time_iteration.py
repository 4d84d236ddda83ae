"""Times a TD-Leaf iteration and its 16 Adam steps, rolled and unrolled, on the committed
networks (the figures in README.md and docs/slider.md; run alone on the CPU):

    python results/slider/tdleaf_local/time_iteration.py
"""

import functools
import time

import jax
import optax

from azjax import tdleaf

RUNS = ("results/slider/tdleaf_local", "results/slider/tdleaf_vh")


def seconds(fn, *args) -> float:
  jax.block_until_ready(fn(*args))  # compile
  start = time.time()
  jax.block_until_ready(fn(*args))
  return time.time() - start


for run in RUNS:
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
  print(f"{run}: self-play {seconds(play, params, jax.random.key(1)):.1f} s, "
        f"{learner.config.sgd_steps} Adam steps rolled {rolled:.1f} s / unrolled {unrolled:.1f} s, "
        f"iteration {seconds(lambda s: learner.iteration(s, None), state):.1f} s", flush=True)
