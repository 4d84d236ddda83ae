"""A small plain CNN (the Connect Four source project's comparison net): no residuals, no
BatchNorm, so it has no "batch_stats" and `train` changes nothing.

    obs [B, R, C, P]
    stem:     3x3 conv(channels) + bias, ReLU                   -> sown "stem"
    block_i:  3x3 conv(channels) + bias, ReLU                   -> sown "block_i"
    policy:   `layers.PolicyHead` without BN                    -> sown "policy_trunk"
    value:    `layers.ValueHead` without BN                     -> sown "value_trunk"

Parameter names: `stem_conv`, `conv_{i}`, `policy_head/{conv,logits}`,
`value_head/{conv,hidden,out}`.
"""

from __future__ import annotations

from typing import Any

import flax.linen as nn
import jax.numpy as jnp

from azjax.nets import layers
from azjax.nets.base import Array, NetConfig, activation_names


class CNN(nn.Module):
  """`__call__(obs [B, R, C, P], *, train) -> (logits [B, A] float32, value [B] float32)`."""

  num_actions: int
  channels: int = 64
  blocks: int = 3
  value_hidden: int = 64
  policy_head: str = "dense"
  dtype: Any = jnp.float32
  conv_impl: str = "xla"
  reply_head: bool = False

  @nn.compact
  def __call__(self, obs: Array, *, train: bool) -> tuple[Array, Array]:
    def conv(name: str):
      return layers.conv(self.channels, 3, self.dtype, use_bias=True, name=name,
                         impl=self.conv_impl)

    x = nn.relu(conv("stem_conv")(obs))
    x = layers.sow(self, "stem", x)
    for i in range(self.blocks):
      x = nn.relu(conv(f"conv_{i}")(x))
      x = layers.sow(self, f"block_{i}", x)
    return layers.board_heads(
        self, x, train=train, num_actions=self.num_actions, policy_head=self.policy_head,
        conv_planes=self.channels, value_hidden=self.value_hidden, use_bn=False,
        dtype=self.dtype, conv_impl=self.conv_impl, reply=self.reply_head)


def layer_names(config: NetConfig) -> list[str]:
  """Names of the sown activations, in forward order."""
  return activation_names(config)


def from_config(config: NetConfig, num_actions: int) -> CNN:
  return CNN(num_actions=num_actions, channels=config.channels, blocks=config.blocks,
             value_hidden=config.value_hidden, policy_head=config.policy_head,
             dtype=config.compute_dtype, conv_impl=config.conv_impl,
             reply_head=config.reply_head)
