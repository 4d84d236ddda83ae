"""Convolutions for the training step on a CPU: XLA's against im2col ("matmul", as
`azjax.nets.layers.MatmulConv`), and float32 against bfloat16. Seven 3x3 SAME layers with ReLU
on a 6x7 board (Connect Four's), mean milliseconds of 20 calls after a warm-up:

    python -m benchmarks.conv_bench
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp


def xla_conv(x, w):
  return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))


def im2col_conv(x, w):
  rows, cols = x.shape[1:3]
  p = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
  x = jnp.concatenate([p[:, dy:dy + rows, dx:dx + cols] for dy in range(3) for dx in range(3)],
                      axis=-1)
  return jnp.dot(x, w.reshape(-1, w.shape[-1]))


def bench(conv, name, batch=256, channels=32, layers=7, dtype=jnp.float32):
  key = jax.random.PRNGKey(0)
  x = jax.random.normal(key, (batch, 6, 7, channels)).astype(dtype)
  ws = [(jax.random.normal(key, (3, 3, channels, channels)) * 0.05).astype(dtype)
        for _ in range(layers)]

  def f(ws, x):
    for w in ws:
      x = jax.nn.relu(conv(x, w))
    return jnp.sum(x.astype(jnp.float32))

  for label, fn in (("forward", jax.jit(f)), ("gradient", jax.jit(jax.grad(f)))):
    jax.block_until_ready(fn(ws, x))
    start = time.perf_counter()
    for _ in range(20):
      jax.block_until_ready(fn(ws, x))
    print(f"| {name} | {jnp.dtype(dtype).name} | {label} | "
          f"{(time.perf_counter() - start) / 20 * 1000:.1f} ms |")


def main(argv: list[str] | None = None) -> None:
  argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
  print(f"# batch 256, 32 channels, 7 layers; backend {jax.default_backend()}, "
        f"jax {jax.__version__}")
  print("| convolution | dtype | pass | time |\n|---|---|---|---|")
  bench(xla_conv, "xla")
  bench(im2col_conv, "matmul (im2col)")
  bench(xla_conv, "xla", dtype=jnp.bfloat16)


if __name__ == "__main__":
  main()
