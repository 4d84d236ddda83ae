"""Network contracts: the config, the forward-pass signature, activation names, action masking.

Every network built by `azjax.nets.make` is a `flax.linen.Module` called as

    logits, value = model.apply(variables, obs, train=False)

with

* `obs`: `[B, R, C, P]` float32 observations from the mover's side (`B` games, an `R x C`
  board, `P` planes), as `Game.observe` returns them, batched.
* `logits`: `[B, A]` float32, raw and **unmasked** (`A = num_actions`). Mask them with
  `mask_logits` / `masked_log_softmax` before any softmax.
* `value`: `[B]` float32 in `[-1, 1]`, the expected outcome for the player to move.

`train=True` switches BatchNorm to batch statistics and updates the running averages, so a
training step calls `model.apply(variables, obs, train=True, mutable=["batch_stats"])` (a model
without BatchNorm returns an empty update).

Every network sows its activations into the `"intermediates"` collection under the names of
`activation_names(config)`, each one a float32 array (not a tuple, unlike flax's default `sow`):

* `"stem"`: after the stem (ResNet/CNN: the first 3x3 conv, `[B, R, C, channels]`; MLP: the
  first hidden layer, `[B, hidden]`).
* `"block_0"`, ..., `"block_{blocks-1}"`: after each residual block / conv layer / hidden layer,
  same shape as the stem.
* `"policy_trunk"`: the policy head's hidden activation, just before its output layer
  (dense head: `[B, R, C, 2]`; conv head: `[B, R, C, channels]`; MLP: `[B, hidden]`).
* `"value_trunk"`: the value head's hidden activation before the output unit
  (`[B, value_hidden]`).

`azjax.nets.activations` returns them as an ordered dict.

A network with `reply_head` also predicts the opponent's reply (KataGo's auxiliary policy
target): in training (`train=True`) its policy head sows `[B, A]` logits into the `"reply"`
collection, read with `reply_logits`; with `train=False` it computes nothing more.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

import jax
import jax.numpy as jnp

Array = jax.Array
Variables = dict[str, Any]  # {"params": ..., "batch_stats": ...} (batch_stats only with BatchNorm)

KINDS = ("resnet", "se_resnet", "mlp", "cnn")
DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}
POLICY_HEADS = ("dense", "conv")
# How convolutions are computed (the parameters are the same): "xla" is `lax.conv`, "matmul" one
# matrix product over the shifted boards (see `layers.MatmulConv`).
CONV_IMPLS = ("xla", "matmul")

# Illegal actions get this logit. It is finite, so an all-illegal row (a terminated game in a
# batch) gives a uniform distribution instead of NaNs, and far enough below any real logit that
# `exp` underflows to exactly 0 for an illegal action whenever one action is legal. It is small
# enough that sums and differences of a few of them stay finite in float32.
MASKED_LOGIT = -1e9


@dataclasses.dataclass(frozen=True)
class NetConfig:
  """Network hyperparameters. Frozen and hashable, so it can be a static argument of `jit`.
  These defaults are the only ones: `azjax.config.Config`'s network section reads them.

  Attributes:
    kind: "resnet", "se_resnet" (squeeze-and-excitation in every block), "mlp" or "cnn".
    channels: conv channels of the trunk (ResNet, CNN).
    blocks: residual blocks (ResNet), 3x3 conv layers after the stem (CNN) or hidden layers
      after the first (MLP). 0 gives a stem-only trunk.
    hidden: MLP width (trunk and policy head).
    se_ratio: squeeze-and-excitation reduction; the bottleneck has `channels // se_ratio` units
      (at least 1). Used by "se_resnet" only.
    value_hidden: width of the value head's hidden dense layer.
    dtype: compute dtype, "float32" or "bfloat16". Parameters are always float32; outputs and
      sown activations are float32.
    policy_head: "dense" (1x1 conv to 2 planes, flatten, dense to `num_actions`, as in the
      thesis) or "conv" (fully convolutional: 1x1 convs give `K` logits per square when
      `num_actions == R * C * K`, or one per column when `num_actions == C` (Connect Four);
      the value head then pools globally instead of flattening, so the whole network has the
      same parameters on every board size). "conv" needs a convolutional kind.
    conv_impl: "xla" (`lax.conv_general_dilated`) or "matmul" (`layers.MatmulConv`: the k x k
      shifted boards side by side, then one matrix product). Same parameters and outputs;
      "matmul" is meant for sweeps, where vmapping a convolution over per-run weights makes
      it a grouped one.
    residual: MLP only: each block two dense layers on a pre-LayerNorm residual stream
      (`mlp.py`), so the trunk has `2 * blocks + 1` hidden layers.
    reply_head: a second output of the policy head, the opponent's reply to the move (KataGo's
      auxiliary policy target), computed in training only and read with `reply_logits`.
  """

  kind: str = "resnet"
  channels: int = 32
  blocks: int = 2
  hidden: int = 64
  se_ratio: int = 4
  value_hidden: int = 32
  dtype: str = "float32"
  policy_head: str = "dense"
  conv_impl: str = "xla"
  reply_head: bool = False
  residual: bool = False

  def __post_init__(self):
    self.validate()

  def validate(self) -> NetConfig:
    """Checks every field; raises ValueError naming the first bad one. Returns `self`."""
    if self.kind not in KINDS:
      raise ValueError(f"NetConfig.kind: unknown kind {self.kind!r}; expected one of {KINDS}")
    for name in ("channels", "hidden", "se_ratio", "value_hidden"):
      value = getattr(self, name)
      if not _is_int(value) or value <= 0:
        raise ValueError(f"NetConfig.{name}: must be a positive int, got {value!r}")
    if not _is_int(self.blocks) or self.blocks < 0:
      raise ValueError(f"NetConfig.blocks: must be a non-negative int, got {self.blocks!r}")
    if self.dtype not in DTYPES:
      raise ValueError(
          f"NetConfig.dtype: unknown dtype {self.dtype!r}; expected one of {tuple(DTYPES)}")
    if self.policy_head not in POLICY_HEADS:
      raise ValueError(
          f"NetConfig.policy_head: unknown head {self.policy_head!r}; "
          f"expected one of {POLICY_HEADS}")
    if self.conv_impl not in CONV_IMPLS:
      raise ValueError(
          f"NetConfig.conv_impl: unknown {self.conv_impl!r}; expected one of {CONV_IMPLS}")
    if self.policy_head == "conv" and self.kind == "mlp":
      raise ValueError(
          "NetConfig.policy_head: 'conv' needs a convolutional kind (resnet, se_resnet, cnn), "
          "not 'mlp'")
    if not isinstance(self.residual, bool):
      raise ValueError(f"NetConfig.residual: must be a bool, got {self.residual!r}")
    if self.residual and self.kind != "mlp":
      raise ValueError(
          f"NetConfig.residual: only for an 'mlp' (a {self.kind!r} has its own blocks)")
    return self

  @property
  def compute_dtype(self) -> Any:
    """The jnp dtype of `dtype`."""
    return DTYPES[self.dtype]


def _is_int(value: Any) -> bool:
  return isinstance(value, int) and not isinstance(value, bool)


class Network(Protocol):
  """What `make` returns (a flax Module); see the module docstring for shapes."""

  def init(self, rngs: Any, obs: Array, *, train: bool) -> Variables:
    ...

  def apply(self, variables: Variables, obs: Array, *, train: bool, **kwargs) -> Any:
    ...


# The collection a network with `reply_head` sows its reply logits into (`layers.sow_reply`).
REPLY = "reply"


def reply_logits(updates: Variables) -> Array:
  """The opponent's reply logits `[B, A]` from the collections an `apply(..., train=True,
  mutable=[..., REPLY])` returned (a network with `reply_head`)."""
  (logits,) = jax.tree.leaves(updates[REPLY])
  return logits


def activation_names(config: NetConfig) -> list[str]:
  """Names of the sown activations, in forward order (the same for every kind)."""
  return (["stem"] + [f"block_{i}" for i in range(config.blocks)]
          + ["policy_trunk", "value_trunk"])


# -- Action masking -------------------------------------------------------------------------------


def mask_logits(logits: Array, legal_mask: Array) -> Array:
  """Replaces the logits of illegal actions with `MASKED_LOGIT` (finite, very negative).

  All actions can be illegal (a terminated game in a batch); a `-inf` mask would then give NaN
  in a softmax. With a finite mask such a row becomes uniform and nothing downstream is NaN.

  Args:
    logits: `[..., A]` float logits.
    legal_mask: `[..., A]` bool (broadcastable to `logits`), True for legal actions.
  Returns:
    `[..., A]` float32 masked logits.
  """
  logits = jnp.asarray(logits, jnp.float32)
  return jnp.where(legal_mask, logits, MASKED_LOGIT)


def masked_log_softmax(logits: Array, legal_mask: Array) -> Array:
  """`log_softmax` over legal actions only: `[..., A]` float32; illegal actions get about -1e9.

  Never NaN; an all-illegal row gives the uniform `-log(A)`.
  """
  return jax.nn.log_softmax(mask_logits(logits, legal_mask), axis=-1)


def masked_softmax(logits: Array, legal_mask: Array) -> Array:
  """Probabilities over legal actions: `[..., A]` float32, exactly 0 on illegal actions
  (when at least one is legal)."""
  return jax.nn.softmax(mask_logits(logits, legal_mask), axis=-1)
