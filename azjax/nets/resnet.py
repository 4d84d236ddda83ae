"""The thesis' residual network, with optional squeeze-and-excitation in every block.

    obs [B, R, C, P]
    stem:     3x3 conv(channels), BN, ReLU                      -> sown "stem"
    block_i:  3x3 conv, BN, ReLU, 3x3 conv, BN, [SE], + skip, ReLU  -> sown "block_i"
    policy:   see `layers.PolicyHead` ("dense" or "conv")      -> sown "policy_trunk"
    value:    1x1 conv(1), BN, ReLU, flatten, dense(value_hidden), ReLU, dense(1), tanh
              (global average pool instead of the 1x1 conv with the "conv" policy head)
                                                                -> sown "value_trunk"

Parameter names: `stem_conv`, `stem_bn`, `res_block_{i}/{conv_0,bn_0,conv_1,bn_1,se}`,
`policy_head/{conv,bn,logits}`, `value_head/{conv,bn,hidden,out}`.
"""

from __future__ import annotations

from typing import Any, Optional

import flax.linen as nn
import jax.numpy as jnp

from azjax.nets import layers
from azjax.nets.base import Array, NetConfig, activation_names


class ResidualBlock(nn.Module):
  """Two 3x3 conv-BN layers with an identity skip: `relu(x + bn(conv(relu(bn(conv(x))))))`,
  with squeeze-and-excitation on the residual branch when `se_ratio` is set."""

  channels: int
  se_ratio: Optional[int] = None
  dtype: Any = jnp.float32
  conv_impl: str = "xla"

  @nn.compact
  def __call__(self, x: Array, *, train: bool) -> Array:  # [B, R, C, F] -> same
    y = layers.conv(self.channels, 3, self.dtype, use_bias=False, name="conv_0",
                    impl=self.conv_impl)(x)
    y = nn.relu(layers.batch_norm(train, self.dtype, name="bn_0")(y))
    y = layers.conv(self.channels, 3, self.dtype, use_bias=False, name="conv_1",
                    impl=self.conv_impl)(y)
    y = layers.batch_norm(train, self.dtype, name="bn_1")(y)
    if self.se_ratio is not None:
      y = layers.SqueezeExcite(self.se_ratio, self.dtype, name="se")(y)
    return nn.relu(x + y)


class ResNet(nn.Module):
  """AlphaZero-style residual network; `se_ratio=None` is the plain ResNet.

  `__call__(obs [B, R, C, P], *, train) -> (logits [B, A] float32, value [B] float32)`.
  """

  num_actions: int
  channels: int = 64
  blocks: int = 5
  se_ratio: Optional[int] = None
  value_hidden: int = 64
  policy_head: str = "dense"
  dtype: Any = jnp.float32
  conv_impl: str = "xla"
  reply_head: bool = False

  @nn.compact
  def __call__(self, obs: Array, *, train: bool) -> tuple[Array, Array]:
    x = layers.conv(self.channels, 3, self.dtype, use_bias=False, name="stem_conv",
                    impl=self.conv_impl)(obs)
    x = nn.relu(layers.batch_norm(train, self.dtype, name="stem_bn")(x))
    x = layers.sow(self, "stem", x)
    for i in range(self.blocks):
      x = ResidualBlock(self.channels, self.se_ratio, self.dtype, self.conv_impl,
                        name=f"res_block_{i}")(x, train=train)
      x = layers.sow(self, f"block_{i}", x)
    return layers.board_heads(
        self, x, train=train, num_actions=self.num_actions, policy_head=self.policy_head,
        conv_planes=self.channels, value_hidden=self.value_hidden, use_bn=True,
        dtype=self.dtype, conv_impl=self.conv_impl, reply=self.reply_head)


def layer_names(config: NetConfig) -> list[str]:
  """Names of the sown activations, in forward order."""
  return activation_names(config)


def from_config(config: NetConfig, num_actions: int) -> ResNet:
  return ResNet(
      num_actions=num_actions, channels=config.channels, blocks=config.blocks,
      se_ratio=config.se_ratio if config.kind == "se_resnet" else None,
      value_hidden=config.value_hidden, policy_head=config.policy_head,
      dtype=config.compute_dtype, conv_impl=config.conv_impl,
      reply_head=config.reply_head)
