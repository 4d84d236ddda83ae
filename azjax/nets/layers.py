"""Layers shared by the networks: dtype-aware conv/dense/norm factories, squeeze-and-excitation,
the policy head and the value head.

Mixed precision: every layer computes in `dtype` (float32 or bfloat16) and keeps float32
parameters. The two output layers (policy logits, value unit) compute in float32: they are
tiny, and bfloat16's 8-bit mantissa would round logits to about 2 significant digits.
"""

from __future__ import annotations

from typing import Any

import flax.linen as nn
import jax.numpy as jnp

from azjax.nets.base import REPLY, Array

Dtype = Any

# Running averages move fast enough to track a network that changes every SGD step.
BN_MOMENTUM = 0.9
BN_EPSILON = 1e-5


def conv(features: int, kernel: int, dtype: Dtype, *, use_bias: bool, name: str,
         impl: str = "xla") -> nn.Module:
  """A `kernel x kernel` SAME-padded conv computing in `dtype` with float32 parameters;
  `impl` "matmul" computes it as `MatmulConv` (same parameters)."""
  if impl == "matmul":
    return MatmulConv(features, kernel, use_bias=use_bias, dtype=dtype, name=name)
  return nn.Conv(features, (kernel, kernel), padding="SAME", use_bias=use_bias, dtype=dtype,
                 param_dtype=jnp.float32, name=name)


class MatmulConv(nn.Module):
  """A SAME-padded `k x k` convolution as one matrix product: `[B, R, C, F] -> [B, R, C, out]`.

  The `k * k` shifted copies of the (zero-padded) board are laid side by side on the feature
  axis, `[B, R, C, k * k * F]`, and multiplied by the kernel flattened to `[k * k * F, out]`.
  Parameters are `nn.Conv`'s (names, shapes `[k, k, F, out]` and `[out]`, initialisers), so a
  network and its checkpoints work with either. Why it exists: `jax.vmap` over the *weights*
  (a sweep's configurations) turns a convolution into a grouped convolution and its weight
  gradient into a batch-grouped one, which accelerators run far below their matrix speed; a
  vmapped matrix product is a batched matrix product. Boards are small (at most 8 x 8), so
  the `k * k`-fold copy is cheap.
  """

  features: int
  kernel_size: int
  use_bias: bool = True
  dtype: Dtype = jnp.float32
  param_dtype: Dtype = jnp.float32

  @nn.compact
  def __call__(self, x: Array) -> Array:
    k = self.kernel_size
    kernel = self.param("kernel", nn.initializers.lecun_normal(),
                        (k, k, x.shape[-1], self.features), self.param_dtype)
    x, kernel = x.astype(self.dtype), kernel.astype(self.dtype)
    if k > 1:
      rows, cols = x.shape[1:3]
      low = (k - 1) // 2  # XLA's SAME: the extra row or column of an even kernel goes after.
      padded = jnp.pad(x, ((0, 0), (low, k - 1 - low), (low, k - 1 - low), (0, 0)))
      # Feature index (dy * k + dx) * F + f, matching the kernel's row-major flattening.
      x = jnp.concatenate([padded[:, dy:dy + rows, dx:dx + cols]
                           for dy in range(k) for dx in range(k)], axis=-1)
    y = jnp.dot(x, kernel.reshape(-1, self.features))
    if self.use_bias:
      bias = self.param("bias", nn.initializers.zeros_init(), (self.features,), self.param_dtype)
      y = y + bias.astype(self.dtype)
    return y


def dense(features: int, dtype: Dtype, *, name: str) -> nn.Dense:
  return nn.Dense(features, dtype=dtype, param_dtype=jnp.float32, name=name)


def batch_norm(train: bool, dtype: Dtype, *, name: str) -> nn.BatchNorm:
  """BatchNorm over all axes but the last; batch statistics (and running-average updates, in
  the mutable "batch_stats" collection) when `train`, running averages otherwise."""
  return nn.BatchNorm(use_running_average=not train, momentum=BN_MOMENTUM, epsilon=BN_EPSILON,
                      dtype=dtype, param_dtype=jnp.float32, name=name)


class SqueezeExcite(nn.Module):
  """Squeeze-and-excitation (Hu et al. 2018), the plain multiplicative variant.

  `x * sigmoid(W2 relu(W1 mean_hw(x)))`: a per-channel gate in (0, 1) computed from the board's
  global average, which lets a block weigh its channels by whole-board context. (The Leela /
  KataGo variant that also adds a per-channel bias is not used.)
  """

  ratio: int
  dtype: Dtype = jnp.float32

  @nn.compact
  def __call__(self, x: Array) -> Array:  # [B, R, C, F] -> [B, R, C, F]
    features = x.shape[-1]
    squeezed = jnp.mean(x.astype(jnp.float32), axis=(1, 2))  # [B, F]
    gate = nn.relu(dense(max(1, features // self.ratio), self.dtype, name="squeeze")(squeezed))
    gate = nn.sigmoid(dense(features, self.dtype, name="excite")(gate))  # [B, F]
    return x * gate[:, None, None, :].astype(x.dtype)


class PolicyHead(nn.Module):
  """Policy head on a `[B, R, C, F]` trunk. Returns `(logits [B, A] float32, trunk)`.

  kind "dense" (the thesis): 1x1 conv to 2 planes, [BN], ReLU -> `trunk [B, R, C, 2]`; flatten;
  dense to `A`.
  kind "conv" (fully convolutional, same parameters on every board size): 1x1 conv to
  `conv_planes` planes, [BN], ReLU -> `trunk [B, R, C, conv_planes]`; a 1x1 conv to `K` planes
  read square-major (`action = square * K + k`) when `A == R * C * K`; the same plus one last
  action (a pass, as in Slider) when `A == R * C * K + 1`, its logit a dense layer on the trunk
  averaged over the board; or, when `A == C` (the action is a column, as in Connect Four), one
  plane averaged over each column.
  """

  num_actions: int
  kind: str = "dense"
  conv_planes: int = 64
  use_bn: bool = True
  dtype: Dtype = jnp.float32
  conv_impl: str = "xla"
  reply: bool = False  # Also the opponent's reply logits, from the same trunk (`sow_reply`).

  @nn.compact
  def __call__(self, x: Array, *, train: bool) -> tuple[Array, Array]:
    batch, rows, cols, _ = x.shape
    planes = 2 if self.kind == "dense" else self.conv_planes
    h = conv(planes, 1, self.dtype, use_bias=not self.use_bn, name="conv",
             impl=self.conv_impl)(x)
    if self.use_bn:
      h = batch_norm(train, self.dtype, name="bn")(h)
    trunk = nn.relu(h)
    squares = rows * cols
    per_square = self.num_actions % squares == 0 or (self.num_actions % squares == 1
                                                     and self.num_actions > squares)
    if self.kind == "conv" and not per_square and self.num_actions != cols:
      raise ValueError(
          f"policy_head 'conv': num_actions={self.num_actions} is neither a multiple of the "
          f"{rows}x{cols} board's {squares} squares nor its {cols} columns; use 'dense'")

    def head_logits(prefix: str) -> Array:
      """`[B, A]` logits from the trunk, by layers named `{prefix}logits` (and pass_logit)."""
      if self.kind == "dense":
        return nn.Dense(self.num_actions, dtype=jnp.float32, param_dtype=jnp.float32,
                        name=f"{prefix}logits")(trunk.reshape(batch, -1))
      out = lambda k: conv(k, 1, jnp.float32, use_bias=True, name=f"{prefix}logits",
                           impl=self.conv_impl)(trunk)
      if not per_square:
        return jnp.mean(out(1)[..., 0], axis=1)  # [B, C]: one plane averaged over each column.
      # [B, R, C, K] flattens row-major to index (row * C + col) * K + k = square * K + k.
      k = self.num_actions // squares
      logits = out(k).reshape(batch, squares * k)
      if self.num_actions % squares:  # The pass: one logit from the whole board.
        pooled = jnp.mean(trunk.astype(jnp.float32), axis=(1, 2))
        pass_logit = nn.Dense(1, dtype=jnp.float32, param_dtype=jnp.float32,
                              name=f"{prefix}pass_logit")(pooled)
        logits = jnp.concatenate([logits, pass_logit], axis=-1)
      return logits

    if self.reply and (train or self.is_initializing()):
      sow_reply(self, head_logits("reply_"))
    return head_logits(""), trunk


class ValueHead(nn.Module):
  """Value head. Returns `(value [B] float32 in [-1, 1], trunk [B, hidden])`.

  On a `[B, R, C, F]` trunk: 1x1 conv to 1 plane, [BN], ReLU, flatten (the thesis), or, with
  `pool`, a global average over the board (fully convolutional). On a `[B, F]` trunk (MLP) the
  input is used as is. Then dense(`hidden`), ReLU -> `trunk`; dense(1); tanh.
  """

  hidden: int = 64
  pool: bool = False
  use_bn: bool = True
  dtype: Dtype = jnp.float32
  conv_impl: str = "xla"

  @nn.compact
  def __call__(self, x: Array, *, train: bool) -> tuple[Array, Array]:
    batch = x.shape[0]
    if x.ndim == 4 and self.pool:
      x = jnp.mean(x.astype(jnp.float32), axis=(1, 2))  # [B, F]
    elif x.ndim == 4:
      h = conv(1, 1, self.dtype, use_bias=not self.use_bn, name="conv", impl=self.conv_impl)(x)
      if self.use_bn:
        h = batch_norm(train, self.dtype, name="bn")(h)
      x = nn.relu(h).reshape(batch, -1)  # [B, R * C]
    trunk = nn.relu(dense(self.hidden, self.dtype, name="hidden")(x))
    out = nn.Dense(1, dtype=jnp.float32, param_dtype=jnp.float32, name="out")(trunk)
    return jnp.tanh(out[:, 0]), trunk


def sow_reply(module: nn.Module, logits: Array) -> None:
  """Stores the opponent's reply logits `[B, A]` (KataGo's auxiliary policy target, from a second
  output of the policy head) in the "reply" collection, for the loss (`nets.reply_logits`). The
  networks compute them only in training and at initialisation: self-play and evaluation never
  pay for them."""
  # Its own name: a variable may not share a name with a submodule of `module` ("logits").
  module.sow(REPLY, "opponent_reply", logits.astype(jnp.float32), init_fn=lambda: None,
             reduce_fn=lambda _, new: new)


def sow(module: nn.Module, name: str, x: Array) -> Array:
  """Stores `x` as float32 under `name` in the "intermediates" collection (overwriting, so the
  entry is the array itself, not flax's default tuple) and returns it. A no-op unless the
  collection is mutable, and free under `jit` then.

  Probing hook: when the variables passed to `apply` hold `{"perturbations": {name: delta}}`,
  `x + delta` is sown and returned instead, so the rest of the network sees the shifted
  activation. `azjax.probe.tcav` adds concept vectors this way, and takes the gradient of a
  loss with respect to a layer's activation as the gradient with respect to `delta` at 0.
  Without that collection (training, self-play) nothing changes. Only the body's layers
  (stem, blocks) feed the rest of the network; the head trunks are sown after their output.
  """
  if module.has_variable("perturbations", name):
    x = x + module.get_variable("perturbations", name).astype(x.dtype)
  module.sow("intermediates", name, x.astype(jnp.float32),
             init_fn=lambda: None, reduce_fn=lambda _, new: new)
  return x


def board_heads(module: nn.Module, x: Array, *, train: bool, num_actions: int,
                policy_head: str, conv_planes: int, value_hidden: int, use_bn: bool,
                dtype: Dtype, conv_impl: str, reply: bool = False) -> tuple[Array, Array]:
  """The policy and value heads of a convolutional body `x [B, R, C, F]`, created in
  `module`'s scope as "policy_head" and "value_head" (call it from its compact `__call__`),
  their trunks sown as "policy_trunk" and "value_trunk". The value head pools over the board
  with the fully convolutional ("conv") policy head. With `reply`, the policy head also sows the
  opponent's reply logits in training (`sow_reply`). Returns float32 `(logits [B, A],
  value [B])`."""
  logits, policy_trunk = PolicyHead(
      num_actions, kind=policy_head, conv_planes=conv_planes, use_bn=use_bn, dtype=dtype,
      conv_impl=conv_impl, reply=reply, name="policy_head")(x, train=train)
  sow(module, "policy_trunk", policy_trunk)
  value, value_trunk = ValueHead(
      value_hidden, pool=policy_head == "conv", use_bn=use_bn, dtype=dtype,
      conv_impl=conv_impl, name="value_head")(x, train=train)
  sow(module, "value_trunk", value_trunk)
  return logits.astype(jnp.float32), value.astype(jnp.float32)
