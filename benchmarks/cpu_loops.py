"""Why `Trainer.iteration` unrolls its SGD loop and avoids `lax.cond` on a CPU.

    python -m benchmarks.cpu_loops

Times a 3x3 convolution's forward pass and its gradient, 16 times over, three ways: inside a
`lax.scan` (a while loop), inside a `lax.cond` branch, and unrolled at the top level. On XLA:CPU
the gradient inside control flow is far slower than at the top level, while the forward pass is
not; the ratio column is what matters (absolute times depend on the machine).

Then times 32 whole SGD steps (loss, gradient, AdamW) of the Breakthrough 8x8 preset's MLP,
rolled (a `lax.scan` while loop) and unrolled: for a network without convolutions the loop is
the faster one, so `train.sgd_unroll` unrolls only convolutional networks.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from azjax import replay
from azjax.config.presets import preset
from azjax.train import Trainer
from benchmarks.timing import best_time

STEPS = 16


def _time(fn, *args) -> float:
  return best_time(jax.jit(fn), *args)[0]


def main() -> None:
  conv = nn.Conv(32, (3, 3))
  x = jnp.ones((STEPS, 256, 6, 6, 32))
  params = conv.init(jax.random.key(0), x[0])

  def forward(p, xi):
    return jnp.sum(conv.apply(p, xi) ** 2)

  grad = jax.grad(forward)

  def add(a, b):
    return jax.tree.map(jnp.add, a, b)

  def in_scan(fn):
    def run(p, x):
      zero = jax.tree.map(jnp.zeros_like, jax.eval_shape(fn, p, x[0]))
      return jax.lax.scan(lambda c, xi: (add(c, fn(p, xi)), None), zero, x)[0]
    return run

  def in_cond(fn):
    def run(p, x):
      return jax.lax.cond(x[0, 0, 0, 0, 0] > -1, lambda: unrolled(fn)(p, x),
                          lambda: jax.tree.map(jnp.zeros_like, jax.eval_shape(fn, p, x[0])))
    return run

  def unrolled(fn):
    def run(p, x):
      out = fn(p, x[0])
      for i in range(1, STEPS):
        out = add(out, fn(p, x[i]))
      return out
    return run

  print(f"# {STEPS} x conv 3x3, 32->32 channels, batch 256 on 6x6; backend "
        f"{jax.default_backend()}, jax {jax.__version__}")
  print("| pass | lax.scan | lax.cond | unrolled | scan / unrolled | cond / unrolled |")
  print("|---|---|---|---|---|---|")
  for name, fn in (("forward", forward), ("gradient", grad)):
    t_scan = _time(in_scan(fn), params, x)
    t_cond = _time(in_cond(fn), params, x)
    t_unrolled = _time(unrolled(fn), params, x)
    print(f"| {name} | {t_scan * 1e3:.1f} ms | {t_cond * 1e3:.1f} ms | {t_unrolled * 1e3:.1f} ms "
          f"| {t_scan / t_unrolled:.1f}x | {t_cond / t_unrolled:.1f}x |")


def mlp_sgd_steps() -> None:
  """32 SGD steps of the `breakthrough8_cpu` preset's network, rolled and unrolled."""
  steps = 32
  trainer = Trainer.create(preset("breakthrough8_cpu"))
  state = trainer.init()
  carry = (state.params, state.batch_stats, state.opt_state)

  def body(c, batch):  # the step `Trainer.iteration` scans over
    params, batch_stats, opt_state, _ = trainer.sgd_step(*c, batch)
    return (params, batch_stats, opt_state), None

  print(f"\n# {steps} SGD steps (loss, gradient, AdamW) of the breakthrough8_cpu preset's "
        f"network ({trainer.config.net} {trainer.config.hidden}x{trainer.config.blocks + 1})")
  print("| batch | rolled (lax.scan) | unrolled | rolled / unrolled |")
  print("|---|---|---|---|")
  for batch in (16, 256, 1024):
    batches = replay.sample(state.selfplay.buffer, jax.random.key(0), (steps, batch))
    t_rolled = _time(lambda c, b: jax.lax.scan(body, c, b)[0], carry, batches)
    t_unrolled = _time(lambda c, b: jax.lax.scan(body, c, b, unroll=steps)[0], carry, batches)
    print(f"| {batch} | {t_rolled / steps * 1e3:.2f} ms a step | "
          f"{t_unrolled / steps * 1e3:.2f} ms a step | {t_rolled / t_unrolled:.2f}x |")


if __name__ == "__main__":
  main()
  mlp_sgd_steps()
