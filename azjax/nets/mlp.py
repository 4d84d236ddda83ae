"""A multilayer perceptron on the flattened board (the Connect Four source project's
comparison net). No BatchNorm (LayerNorm instead), so `train` changes nothing.

    obs [B, R, C, P] -> flatten [B, R * C * P]
    stem:     dense(hidden), LayerNorm, ReLU                    -> sown "stem"      [B, hidden]
    block_i:  dense(hidden), LayerNorm, ReLU                    -> sown "block_i"   [B, hidden]
    policy:   dense(hidden), ReLU                               -> sown "policy_trunk" [B, hidden]
              dense(num_actions)
              [dense(num_actions): the opponent's reply, in training, with reply_head]
    value:    dense(value_hidden), ReLU                         -> sown "value_trunk"
              dense(1), tanh

So the trunk has `blocks + 1` hidden layers. Parameter names: `dense_{j}`, `norm_{j}`
(j = 0 for the stem, i + 1 for block i), `policy_hidden`, `policy_logits`,
`value_head/{hidden,out}` (and `reply_logits`).

With `residual`, each block is instead two dense layers on a pre-LayerNorm residual stream (as
in a transformer's MLP blocks), so the trunk has `2 * blocks + 1` hidden layers and depth does
not cost trainability:

    stem:     dense(hidden), LayerNorm, ReLU                    -> sown "stem"      [B, hidden]
    block_i:  x + dense(hidden)(ReLU(dense(hidden)(LayerNorm(x))))
                                                                -> sown "block_i"   [B, hidden]
    trunk:    LayerNorm, ReLU (then the same heads)

Parameter names of block i: `residual_{i}/{norm,dense_0,dense_1}`; the trunk's last norm is
`norm_out`.
"""

from __future__ import annotations

from typing import Any

import flax.linen as nn
import jax.numpy as jnp

from azjax.nets import layers
from azjax.nets.base import Array, NetConfig, activation_names


class MLP(nn.Module):
  """`__call__(obs [B, R, C, P], *, train) -> (logits [B, A] float32, value [B] float32)`."""

  num_actions: int
  hidden: int = 256
  blocks: int = 2
  value_hidden: int = 64
  layer_norm: bool = True
  dtype: Any = jnp.float32
  reply_head: bool = False
  residual: bool = False

  @nn.compact
  def __call__(self, obs: Array, *, train: bool) -> tuple[Array, Array]:
    x = obs.reshape(obs.shape[0], -1)
    x = self._trunk(x)
    policy_trunk = nn.relu(layers.dense(self.hidden, self.dtype, name="policy_hidden")(x))
    logits = nn.Dense(self.num_actions, dtype=jnp.float32, param_dtype=jnp.float32,
                      name="policy_logits")(policy_trunk)
    if self.reply_head and (train or self.is_initializing()):
      layers.sow_reply(self, nn.Dense(self.num_actions, dtype=jnp.float32,
                                      param_dtype=jnp.float32, name="reply_logits")(policy_trunk))
    layers.sow(self, "policy_trunk", policy_trunk)
    value, value_trunk = layers.ValueHead(self.value_hidden, dtype=self.dtype,
                                          name="value_head")(x, train=train)
    layers.sow(self, "value_trunk", value_trunk)
    return logits.astype(jnp.float32), value.astype(jnp.float32)

  def _norm(self, name: str) -> nn.LayerNorm:
    return nn.LayerNorm(dtype=self.dtype, param_dtype=jnp.float32, name=name)

  def _trunk(self, x: Array) -> Array:
    """`[B, D] -> [B, hidden]`: the plain stack, or the residual one (module docstring)."""
    if not self.residual:
      for j in range(self.blocks + 1):
        x = layers.dense(self.hidden, self.dtype, name=f"dense_{j}")(x)
        if self.layer_norm:
          x = self._norm(f"norm_{j}")(x)
        x = layers.sow(self, "stem" if j == 0 else f"block_{j - 1}", nn.relu(x))
      return x
    x = nn.relu(self._norm("norm_0")(layers.dense(self.hidden, self.dtype, name="dense_0")(x)))
    x = layers.sow(self, "stem", x)
    for i in range(self.blocks):
      x = layers.sow(self, f"block_{i}", x + _ResidualBlock(self.hidden, self.dtype,
                                                           name=f"residual_{i}")(x))
    return nn.relu(self._norm("norm_out")(x))


class _ResidualBlock(nn.Module):
  """`[B, F] -> [B, F]`, the update a residual block adds: dense(ReLU(dense(LayerNorm(x))))."""

  features: int
  dtype: Any = jnp.float32

  @nn.compact
  def __call__(self, x: Array) -> Array:
    h = nn.LayerNorm(dtype=self.dtype, param_dtype=jnp.float32, name="norm")(x)
    h = nn.relu(layers.dense(self.features, self.dtype, name="dense_0")(h))
    return layers.dense(self.features, self.dtype, name="dense_1")(h)


def layer_names(config: NetConfig) -> list[str]:
  """Names of the sown activations, in forward order."""
  return activation_names(config)


def from_config(config: NetConfig, num_actions: int) -> MLP:
  return MLP(num_actions=num_actions, hidden=config.hidden, blocks=config.blocks,
             value_hidden=config.value_hidden, dtype=config.compute_dtype,
             reply_head=config.reply_head, residual=config.residual)
