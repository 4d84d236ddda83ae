"""Flax networks behind one entry point: `make(NetConfig(...), num_actions)`.

>>> config = NetConfig(kind="se_resnet", channels=32, blocks=4)
>>> model = make(config, env.num_actions)
>>> variables = init_variables(model, jax.random.key(0), env.observation_shape)
>>> logits, value = model.apply(variables, obs, train=False)          # obs [B, R, C, P]
>>> (logits, value), updates = model.apply(                            # a training step
...     variables, obs, train=True, mutable=["batch_stats"])
>>> log_probs = masked_log_softmax(logits, legal_action_mask)
>>> acts = activations(model, variables, obs)                         # {"stem": ..., ...}

Kinds: "resnet" / "se_resnet" (`resnet.py`, the thesis' network), "mlp" (`mlp.py`), "cnn"
(`cnn.py`). Shapes, the `train` flag and the sown activation names are described in
`azjax.nets.base`.
"""

from __future__ import annotations

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from azjax.nets import cnn, mlp, resnet
from azjax.nets.base import (
  CONV_IMPLS,
  DTYPES,
  KINDS,
  MASKED_LOGIT,
  POLICY_HEADS,
  REPLY,
  Array,
  NetConfig,
  Network,
  Variables,
  activation_names,
  mask_logits,
  masked_log_softmax,
  masked_softmax,
  reply_logits,
)

_BUILDERS = {
    "resnet": resnet.from_config,
    "se_resnet": resnet.from_config,
    "mlp": mlp.from_config,
    "cnn": cnn.from_config,
}


def make(config: NetConfig, num_actions: int) -> nn.Module:
  """Builds the network `config` describes with `num_actions` policy logits.

  Raises:
    ValueError: for a bad config (naming the field) or a non-positive `num_actions`.
  """
  if not isinstance(config, NetConfig):
    raise ValueError(f"make: config must be a NetConfig, got {type(config).__name__}")
  config.validate()
  if isinstance(num_actions, bool) or not isinstance(num_actions, int) or num_actions <= 0:
    raise ValueError(f"make: num_actions must be a positive int, got {num_actions!r}")
  return _BUILDERS[config.kind](config, num_actions)


def init_variables(model: nn.Module, key: jax.Array,
                   observation_shape: Sequence[int]) -> Variables:
  """Initial variables for observations of shape `observation_shape` (`[R, C, P]`, unbatched).

  Returns:
    `{"params": ...}` plus `{"batch_stats": ...}` for networks with BatchNorm; none of the
    sown outputs ("intermediates", "reply"). Parameters are float32 whatever the compute dtype.
  """
  obs = jnp.zeros((1, *observation_shape), jnp.float32)

  # One compiled program instead of one dispatch per initialiser.
  @jax.jit
  def init(key, obs):
    variables = model.init(key, obs, train=False)
    return {name: tree for name, tree in variables.items()
            if name not in ("intermediates", REPLY)}

  return init(key, obs)


def param_count(variables: Variables) -> int:
  """Number of trainable scalars: the leaves of `variables["params"]` (or of the whole tree
  when it has no "params" key, e.g. a bare params tree). BatchNorm statistics do not count."""
  tree = variables["params"] if "params" in variables else variables
  return sum(int(x.size) for x in jax.tree.leaves(tree))


def activations(model: nn.Module, variables: Variables, obs: Array) -> dict[str, Array]:
  """The sown activations of `obs [B, R, C, P]` in eval mode, as `{name: float32 array}` in
  forward order (see `activation_names`)."""
  _, state = model.apply(variables, obs, train=False, mutable=["intermediates"])
  sown = state["intermediates"]
  order = ["stem"] + sorted((k for k in sown if k.startswith("block_")),
                            key=lambda k: int(k.split("_")[1])) + ["policy_trunk", "value_trunk"]
  return {name: sown[name] for name in order}


__all__ = [
    "CONV_IMPLS", "DTYPES", "KINDS", "MASKED_LOGIT", "POLICY_HEADS", "REPLY", "NetConfig",
    "Network", "Variables", "activation_names", "activations", "init_variables", "make",
    "mask_logits", "masked_log_softmax", "masked_softmax", "param_count", "reply_logits",
]
