"""Tests of `azjax.nets`: shapes and dtypes, BatchNorm modes, the fully convolutional head, sown
activations, masking, config validation, jit, and a tiny overfit run that shows the heads learn.

Sizes are tiny (channels 8, blocks 2) so the whole file runs in seconds on a CPU.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from azjax import nets
from azjax.nets import cnn, mlp, resnet

# (observation shape, num_actions): tic-tac-toe, Connect Four (actions are columns), a 6x6
# Breakthrough-like board with 3 planes and K = 3 directions. Real forward passes use Connect
# Four (the board that exercises both head layouts); the others are checked abstractly.
BOARDS = [((3, 3, 2), 9), ((6, 7, 2), 7), ((6, 6, 3), 108)]
C4 = ((6, 7, 2), 7)
SMALL = dict(channels=8, blocks=2, hidden=16, value_hidden=8)
CONV_KINDS = ("resnet", "se_resnet", "cnn")
NAMES = ["stem", "block_0", "block_1", "policy_trunk", "value_trunk"]


def small_config(kind, **overrides):
  return nets.NetConfig(kind=kind, **{**SMALL, **overrides})


# rbg keys: on a CPU, threefry's initialisers compile several times slower, and this file's time
# is mostly compiling. Networks take any key.
KEY = jax.random.key(0, impl="rbg")


@functools.lru_cache(maxsize=None)
def build(config, shape, num_actions):
  """`(apply, variables)`: the network's `apply` under `jit` (one compile costs less than
  dispatching every op of a forward pass) and its initial variables. Shared between tests."""
  model = nets.make(config, num_actions)
  apply = jax.jit(model.apply, static_argnames=("train", "mutable"))
  return apply, nets.init_variables(model, KEY, shape)


@functools.lru_cache(maxsize=None)
def abstract_variables(config, shape, num_actions):
  """Shapes and dtypes of the initial variables, without computing them."""
  model = nets.make(config, num_actions)
  return jax.eval_shape(lambda: nets.init_variables(model, KEY, shape))


def abstract_apply(config, shape, num_actions, **kwargs):
  """Shapes and dtypes of the outputs of `apply` on 4 observations, without computing them."""
  model = nets.make(config, num_actions)
  variables = abstract_variables(config, shape, num_actions)
  return jax.eval_shape(lambda v, o: model.apply(v, o, **kwargs), variables,
                        jax.ShapeDtypeStruct((4, *shape), jnp.float32))


def random_obs(shape, batch=4, seed=1):
  return jax.random.bernoulli(jax.random.key(seed), 0.4, (batch, *shape)).astype(jnp.float32)


def shapes_and_dtypes(tree):
  return jax.tree.map(lambda x: (x.shape, x.dtype), tree)


# -- Shapes, dtypes, BatchNorm ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("kind", nets.KINDS)
def test_output_shapes_and_dtypes_on_every_board(kind, dtype):
  for policy_head in ("dense", "conv") if kind in CONV_KINDS else ("dense",):
    config = small_config(kind, dtype=dtype, policy_head=policy_head)
    for shape, num_actions in BOARDS:
      logits, value = abstract_apply(config, shape, num_actions, train=False)
      assert shapes_and_dtypes((logits, value)) == (
          ((4, num_actions), jnp.float32), ((4,), jnp.float32))
      (logits, value), updates = abstract_apply(
          config, shape, num_actions, train=True, mutable=["batch_stats"])
      assert shapes_and_dtypes((logits, value)) == (
          ((4, num_actions), jnp.float32), ((4,), jnp.float32))
      variables = abstract_variables(config, shape, num_actions)
      assert set(variables) == ({"params", "batch_stats"} if "resnet" in kind else {"params"})
      assert set(updates) == set(variables) - {"params"}
      # Parameters are float32 whatever the compute dtype.
      assert {x.dtype for x in jax.tree.leaves(variables)} == {jnp.dtype(jnp.float32)}


@pytest.mark.slow
@pytest.mark.parametrize("kind", nets.KINDS)
def test_forward_values_in_both_dtypes(kind):
  apply, variables = build(small_config(kind), *C4)
  # The bfloat16 network has the same float32 parameters, so it runs on the same variables.
  bf16_model = nets.make(small_config(kind, dtype="bfloat16"), C4[1])
  assert shapes_and_dtypes(variables) == shapes_and_dtypes(
      abstract_variables(small_config(kind, dtype="bfloat16"), *C4))
  obs = random_obs(C4[0])
  outputs = {"float32": apply(variables, obs, train=False),
             "bfloat16": jax.jit(bf16_model.apply, static_argnames="train")(
                 variables, obs, train=False)}
  for logits, value in outputs.values():
    assert logits.shape == (4, 7) and logits.dtype == jnp.float32
    assert value.shape == (4,) and value.dtype == jnp.float32
    assert bool(jnp.all(jnp.isfinite(logits)))
    assert bool(jnp.all(jnp.abs(value) <= 1.0))
  # Different observations give different outputs, and bfloat16 computes the same function,
  # rounded.
  assert not np.allclose(outputs["float32"][0][0], outputs["float32"][0][1])
  np.testing.assert_allclose(outputs["bfloat16"][0], outputs["float32"][0], atol=0.1)
  np.testing.assert_allclose(outputs["bfloat16"][1], outputs["float32"][1], atol=0.05)


@pytest.mark.parametrize("kind", nets.KINDS)
def test_bfloat16_computes_in_bfloat16(kind):
  shape, num_actions = C4
  config = small_config(kind, dtype="bfloat16")
  model = nets.make(config, num_actions)
  jaxpr = str(jax.make_jaxpr(lambda v, o: model.apply(v, o, train=False))(
      abstract_variables(config, shape, num_actions), random_obs(shape)))
  op = "dot_general" if kind == "mlp" else "conv_general_dilated"
  lines = [line for line in jaxpr.splitlines() if op in line]
  assert any("bf16[" in line.split("=")[0] for line in lines), "no bfloat16 matmul/conv"


@pytest.mark.parametrize("kind", ["resnet", "se_resnet"])
def test_batch_stats_update_only_in_training(kind):
  apply, variables = build(small_config(kind), *C4)
  obs = random_obs(C4[0])
  (logits, value), updates = apply(variables, obs, train=True, mutable=("batch_stats",))
  assert logits.shape == (4, 7) and value.shape == (4,)
  changed = jax.tree.map(lambda a, b: not np.allclose(a, b), variables["batch_stats"],
                         updates["batch_stats"])
  assert all(jax.tree.leaves(changed))  # every running mean and variance moved
  _, same = apply(variables, obs, train=False, mutable=("batch_stats",))
  jax.tree.map(np.testing.assert_array_equal, variables["batch_stats"], same["batch_stats"])
  # Training mode normalises with the batch statistics, so outputs differ from eval mode.
  eval_logits, _ = apply(variables, obs, train=False)
  assert not np.allclose(logits, eval_logits)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_nets_without_batchnorm_ignore_train(kind):
  apply, variables = build(small_config(kind), *C4)
  obs = random_obs(C4[0])
  (logits, value), updates = apply(variables, obs, train=True, mutable=("batch_stats",))
  assert not updates
  eval_logits, eval_value = apply(variables, obs, train=False)
  np.testing.assert_allclose(logits, eval_logits, rtol=1e-6)
  np.testing.assert_allclose(value, eval_value, rtol=1e-6)


# -- The fully convolutional policy head -----------------------------------------------------------


@pytest.mark.parametrize("kind", CONV_KINDS)
def test_conv_head_same_parameters_on_every_board_size(kind):
  config = small_config(kind, policy_head="conv")
  for planes, k in ((3, 3), (2, 1)):
    variables6 = abstract_variables(config, (6, 6, planes), 6 * 6 * k)
    variables8 = abstract_variables(config, (8, 8, planes), 8 * 8 * k)
    assert shapes_and_dtypes(variables6) == shapes_and_dtypes(variables8)
    assert nets.param_count(variables6) == nets.param_count(variables8)
    assert (nets.param_count(variables6["params"]["policy_head"])
            == nets.param_count(variables8["params"]["policy_head"]))
  # Connect Four's column actions too, and Slider's square actions plus a pass.
  assert shapes_and_dtypes(abstract_variables(config, (6, 7, 2), 7)) == shapes_and_dtypes(
      abstract_variables(config, (7, 9, 2), 9))
  assert shapes_and_dtypes(abstract_variables(config, (5, 5, 5), 5 * 5 * 3 + 1)) == (
      shapes_and_dtypes(abstract_variables(config, (7, 7, 5), 7 * 7 * 3 + 1)))
  # The dense head's parameters grow with the board.
  dense6 = abstract_variables(small_config(kind), (6, 6, 3), 108)
  dense8 = abstract_variables(small_config(kind), (8, 8, 3), 192)
  assert nets.param_count(dense6) < nets.param_count(dense8)


def test_conv_head_weights_play_other_board_sizes_square_major():
  """Weights made for 6x6 run on 8x8, and `logits.reshape(B, R, C, K)[b, r, c, k]` is the 1x1
  conv of the policy trunk at (r, c)."""
  config = small_config("resnet", policy_head="conv")
  _, variables = build(config, (6, 6, 3), 108)
  model8 = nets.make(config, 192)
  obs = random_obs((8, 8, 3))
  (logits, value), state = jax.jit(model8.apply, static_argnames=("train", "mutable"))(
      variables, obs, train=False, mutable=("intermediates",))
  assert logits.shape == (4, 192) and value.shape == (4,)
  trunk = state["intermediates"]["policy_trunk"]  # [B, 8, 8, channels]
  head = variables["params"]["policy_head"]["logits"]
  expected = jnp.einsum("brcf,fk->brck", trunk, head["kernel"][0, 0]) + head["bias"]
  np.testing.assert_allclose(logits.reshape(4, 8, 8, 3), expected, rtol=1e-4, atol=1e-5)


def test_conv_head_pass_logit_comes_after_the_square_actions():
  """With `R * C * K + 1` actions (Slider's pass last) the squares' logits are the 1x1 conv as
  without a pass, and the last one is a dense layer of the board-averaged policy trunk."""
  config = small_config("resnet", policy_head="conv")
  _, variables = build(config, (5, 5, 3), 5 * 5 * 3 + 1)
  model = nets.make(config, 5 * 5 * 3 + 1)
  obs = random_obs((5, 5, 3))
  (logits, _), state = jax.jit(model.apply, static_argnames=("train", "mutable"))(
      variables, obs, train=False, mutable=("intermediates",))
  trunk = state["intermediates"]["policy_trunk"]
  head = variables["params"]["policy_head"]
  squares = jnp.einsum("brcf,fk->brck", trunk, head["logits"]["kernel"][0, 0])
  np.testing.assert_allclose(logits[:, :-1].reshape(4, 5, 5, 3), squares + head["logits"]["bias"],
                             rtol=1e-4, atol=1e-5)
  pooled = trunk.mean(axis=(1, 2)) @ head["pass_logit"]["kernel"] + head["pass_logit"]["bias"]
  np.testing.assert_allclose(logits[:, -1], pooled[:, 0], rtol=1e-4, atol=1e-5)


def test_conv_head_rejects_an_action_count_it_cannot_lay_out():
  with pytest.raises(ValueError, match="num_actions=10"):
    abstract_variables(small_config("cnn", policy_head="conv"), (6, 7, 2), 10)


# -- Sown activations ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind, policy_head, residual",
                         [(kind, "dense", False) for kind in nets.KINDS]
                         + [(kind, "conv", False) for kind in CONV_KINDS]
                         + [("mlp", "dense", True)])
def test_intermediates_names_and_shapes(kind, policy_head, residual):
  (shape, num_actions), (rows, cols, _) = C4, C4[0]
  config = small_config(kind, policy_head=policy_head, residual=residual)
  assert nets.activation_names(config) == NAMES
  module = {"resnet": resnet, "se_resnet": resnet, "mlp": mlp, "cnn": cnn}[kind]
  assert module.layer_names(config) == NAMES
  if kind == "mlp":
    expected = dict.fromkeys(NAMES[:4], (4, 16))
  else:
    expected = dict.fromkeys(NAMES[:3], (4, rows, cols, 8))
    expected["policy_trunk"] = (4, rows, cols, 2 if policy_head == "dense" else 8)
  expected["value_trunk"] = (4, 8)
  expected = {name: (shape, jnp.float32) for name, shape in expected.items()}
  for train, mutable in ((False, ["intermediates"]), (True, ["intermediates", "batch_stats"])):
    _, state = abstract_apply(config, shape, num_actions, train=train, mutable=mutable)
    assert shapes_and_dtypes(state["intermediates"]) == expected


@pytest.mark.parametrize("kind", nets.KINDS)
def test_sowing_does_not_change_outputs(kind):
  apply, variables = build(small_config(kind), *C4)
  obs = random_obs(C4[0])
  (logits, value), state = apply(variables, obs, train=False, mutable=("intermediates",))
  assert set(state["intermediates"]) == set(NAMES)
  plain_logits, plain_value = apply(variables, obs, train=False)
  np.testing.assert_array_equal(logits, plain_logits)
  np.testing.assert_array_equal(value, plain_value)


def test_residual_mlp_parameters_by_hand():
  """Stem (84 -> 16 with a LayerNorm), two blocks of LayerNorm + two 16 x 16 dense layers, the
  trunk's last LayerNorm, then the plain MLP's heads: counted by hand on Connect Four."""
  (shape, num_actions), hidden = C4, 16
  params = abstract_variables(small_config("mlp", residual=True), shape, num_actions)["params"]
  block = 2 * hidden + 2 * (hidden * hidden + hidden)
  assert jax.tree.map(lambda x: x.shape, params["residual_1"]) == {
      "norm": {"scale": (hidden,), "bias": (hidden,)},
      "dense_0": {"kernel": (hidden, hidden), "bias": (hidden,)},
      "dense_1": {"kernel": (hidden, hidden), "bias": (hidden,)}}
  trunk = (6 * 7 * 2 * hidden + hidden) + 2 * hidden + 2 * block + 2 * hidden
  heads = (hidden * hidden + hidden) + (hidden * num_actions + num_actions) + (
      hidden * 8 + 8) + (8 + 1)
  assert sum(x.size for x in jax.tree.leaves(params)) == trunk + heads


def test_residual_mlp_blocks_add_to_the_stream():
  """A block whose last layer is zero passes the stream through unchanged, so each sown block
  output is the one before plus that block's update; the trunk's output is then
  ReLU(LayerNorm(stem))."""
  config = small_config("mlp", residual=True)
  apply, variables = build(config, *C4)
  params = jax.tree.map(lambda x: x, variables["params"])
  params["residual_0"]["dense_1"] = jax.tree.map(jnp.zeros_like, params["residual_0"]["dense_1"])
  obs = random_obs(C4[0])
  _, state = apply({"params": params}, obs, train=False, mutable=("intermediates",))
  acts = state["intermediates"]
  np.testing.assert_array_equal(acts["block_0"], acts["stem"])
  assert not np.allclose(acts["block_1"], acts["block_0"])  # block 1 is not zeroed
  params["residual_1"]["dense_1"] = jax.tree.map(jnp.zeros_like, params["residual_1"]["dense_1"])
  _, state = apply({"params": params}, obs, train=False, mutable=("intermediates",))
  stem = state["intermediates"]["stem"]
  np.testing.assert_array_equal(state["intermediates"]["block_1"], stem)
  mean = stem.mean(-1, keepdims=True)
  normed = (stem - mean) / np.sqrt(stem.var(-1, keepdims=True) + 1e-6)
  norm_out = params["norm_out"]
  trunk = jnp.maximum(normed * norm_out["scale"] + norm_out["bias"], 0)
  policy_hidden = params["policy_hidden"]
  np.testing.assert_allclose(
      state["intermediates"]["policy_trunk"],
      jnp.maximum(trunk @ policy_hidden["kernel"] + policy_hidden["bias"], 0),
      rtol=1e-4, atol=1e-5)


def test_activations_in_forward_order():
  config = small_config("mlp")
  apply, variables = build(config, *C4)
  obs = random_obs(C4[0])
  # Eager: under jit the returned dict's keys would come back sorted.
  acts = nets.activations(nets.make(config, C4[1]), variables, obs)
  assert list(acts) == NAMES
  _, state = apply(variables, obs, train=False, mutable=("intermediates",))
  jax.tree.map(functools.partial(np.testing.assert_allclose, rtol=1e-5, atol=1e-6), acts,
               state["intermediates"])
  # With no blocks the trunk is the stem alone.
  config = small_config("resnet", blocks=0)
  assert nets.activation_names(config) == ["stem", "policy_trunk", "value_trunk"]
  _, state = abstract_apply(config, *C4, train=False, mutable=["intermediates"])
  assert set(state["intermediates"]) == {"stem", "policy_trunk", "value_trunk"}


# -- Masking ---------------------------------------------------------------------------------------


def test_masking_never_nan_and_illegal_actions_get_no_probability():
  logits = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [50.0, -50.0, 0.0, 1e4]],
                    np.float32)
  legal = np.array([[True, False, True, False], [False] * 4, [False, True, False, False]])
  target = np.array([[0.5, 0.0, 0.5, 0.0], [0.0] * 4, [0.0, 1.0, 0.0, 0.0]], np.float32)

  @jax.jit  # (one compile instead of one per op)
  def compute(logits, legal):
    cross_entropy = lambda x: -jnp.sum(target * nets.masked_log_softmax(x, legal))
    return dict(
        log_probs=nets.masked_log_softmax(logits, legal),
        probs=nets.masked_softmax(logits, legal),
        masked=nets.mask_logits(logits, legal),
        grad=jax.grad(cross_entropy)(logits),
        # bfloat16 logits and a broadcast [A] mask.
        bf16_probs=nets.masked_softmax(logits.astype(jnp.bfloat16), legal[0]))

  out = jax.tree.map(np.asarray, compute(logits, legal))
  probs, log_probs, masked = out["probs"], out["log_probs"], out["masked"]
  assert all(np.all(np.isfinite(x)) for x in out.values())  # never NaN or inf
  np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-6)
  # Where some action is legal, legal actions share all the mass; illegal ones get exactly 0.
  assert np.all(probs[[0, 2]][~legal[[0, 2]]] == 0.0)
  np.testing.assert_allclose(probs[0, ::2], jax.nn.softmax(np.array([1.0, 3.0])), rtol=1e-6)
  np.testing.assert_allclose(probs[2, 1], 1.0)
  assert np.all(log_probs[[0, 2]][~legal[[0, 2]]] < -1e8)
  # All illegal (a terminated game): uniform, not NaN.
  np.testing.assert_allclose(probs[1], 0.25)
  np.testing.assert_allclose(log_probs[1], -np.log(4.0), rtol=1e-6)
  assert masked.dtype == np.float32
  np.testing.assert_array_equal(masked, np.where(legal, logits, nets.MASKED_LOGIT))
  np.testing.assert_allclose(out["bf16_probs"][:, 1::2], 0.0)
  assert out["bf16_probs"].dtype == np.float32


# -- Config validation -----------------------------------------------------------------------------


@pytest.mark.parametrize("field, kwargs", [
    ("kind", dict(kind="transformer")),
    ("channels", dict(channels=0)),
    ("channels", dict(channels=8.0)),
    ("blocks", dict(blocks=-1)),
    ("hidden", dict(hidden=-16)),
    ("se_ratio", dict(se_ratio=0)),
    ("value_hidden", dict(value_hidden=0)),
    ("dtype", dict(dtype="float16")),
    ("policy_head", dict(policy_head="attention")),
    ("policy_head", dict(kind="mlp", policy_head="conv")),
    ("conv_impl", dict(conv_impl="fft")),
    ("residual", dict(kind="resnet", residual=True)),
    ("residual", dict(kind="mlp", residual=1)),
])
def test_bad_config_raises_naming_the_field(field, kwargs):
  with pytest.raises(ValueError, match=f"NetConfig.{field}"):
    nets.NetConfig(**kwargs)
  with pytest.raises(ValueError, match=f"NetConfig.{field}"):
    dataclasses.replace(nets.NetConfig(), **kwargs)


# -- The matmul convolution -----------------------------------------------------------------------


@pytest.mark.parametrize("kernel, use_bias", [(3, False), (3, True), (1, True), (2, True)])
def test_matmul_conv_is_the_same_convolution(kernel, use_bias):
  from azjax.nets import layers

  x = jax.random.normal(jax.random.key(2), (3, 6, 7, 5))
  lax_conv = layers.conv(4, kernel, jnp.float32, use_bias=use_bias, name="c")
  matmul = layers.conv(4, kernel, jnp.float32, use_bias=use_bias, name="c", impl="matmul")
  params = lax_conv.init(KEY, x)
  # Same names, shapes and initial values from the same key: checkpoints move between the two.
  jax.tree.map(np.testing.assert_array_equal, matmul.init(KEY, x), params)
  if use_bias:  # A non-zero bias, so a misplaced one would show.
    params = jax.tree.map(lambda p: p + 0.5, params)
  np.testing.assert_allclose(matmul.apply(params, x), lax_conv.apply(params, x), atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("kind, policy_head", [("resnet", "conv"), ("cnn", "dense")])
def test_matmul_networks_match_and_vmap_without_grouped_convolutions(kind, policy_head):
  config = small_config(kind, policy_head=policy_head)
  matmul_config = dataclasses.replace(config, conv_impl="matmul")
  shape, num_actions = C4
  apply, variables = build(config, shape, num_actions)
  matmul_apply, matmul_variables = build(matmul_config, shape, num_actions)
  jax.tree.map(np.testing.assert_array_equal, matmul_variables, variables)
  obs = random_obs(shape)
  for a, b in zip(matmul_apply(variables, obs, train=False), apply(variables, obs, train=False)):
    np.testing.assert_allclose(a, b, atol=1e-5)

  # A sweep vmaps the network over per-run weights: with "matmul" no convolution is left, in
  # the forward pass or the weight gradient.
  model = nets.make(matmul_config, num_actions)

  def loss(v, o):
    logits, value = model.apply(v, o, train=False)
    return jnp.sum(logits) + jnp.sum(value)

  stacked = jax.tree.map(lambda x: jnp.stack([x, x]), variables)
  jaxpr = str(jax.make_jaxpr(jax.vmap(jax.grad(loss)))(stacked, jnp.stack([obs, obs])))
  assert "conv_general_dilated" not in jaxpr
  assert "conv_general_dilated" in str(jax.make_jaxpr(jax.grad(
      lambda v, o: jnp.sum(nets.make(config, num_actions).apply(v, o, train=False)[0])))(
          variables, obs))


def test_config_is_frozen_hashable_and_make_checks_actions():
  config = nets.NetConfig()
  assert config.validate() is config
  assert hash(config) == hash(nets.NetConfig())
  with pytest.raises(dataclasses.FrozenInstanceError):
    config.kind = "mlp"
  with pytest.raises(ValueError, match="num_actions"):
    nets.make(config, 0)


# -- jit -------------------------------------------------------------------------------------------


def test_jit_apply_matches_eager():
  config = small_config("resnet")
  apply, variables = build(config, *C4)
  model = nets.make(config, C4[1])
  obs = random_obs(C4[0])
  logits, value = apply(variables, obs, train=False)
  eager_logits, eager_value = model.apply(variables, obs, train=False)
  np.testing.assert_allclose(logits, eager_logits, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(value, eager_value, rtol=1e-5, atol=1e-5)


# -- Overfit: the heads are wired to learn ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("kind, residual", [("mlp", False), ("mlp", True), ("resnet", False)])
def test_overfits_a_fixed_batch(kind, residual):
  (shape, num_actions), batch = C4, 16
  apply, variables = build(small_config(kind, residual=residual), shape, num_actions)
  obs_key, policy_key, value_key = jax.random.split(jax.random.key(7), 3)
  obs = jax.random.bernoulli(obs_key, 0.4, (batch, *shape)).astype(jnp.float32)
  policy = jax.nn.one_hot(jax.random.randint(policy_key, (batch,), 0, num_actions), num_actions)
  value = jax.random.choice(value_key, jnp.array([-1.0, 0.0, 1.0]), (batch,))
  legal = jnp.ones((batch, num_actions), bool)

  def loss_fn(params, batch_stats, train):
    variables = {"params": params, **({"batch_stats": batch_stats} if batch_stats else {})}
    (logits, v), updates = apply(variables, obs, train=train, mutable=("batch_stats",))
    policy_loss = -jnp.mean(jnp.sum(policy * nets.masked_log_softmax(logits, legal), -1))
    return policy_loss + jnp.mean((v - value) ** 2), updates.get("batch_stats", batch_stats)

  optimizer = optax.adam(1e-2)

  @jax.jit
  def step(params, batch_stats, opt_state):
    grads, batch_stats = jax.grad(loss_fn, has_aux=True)(params, batch_stats, True)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), batch_stats, opt_state

  evaluate = jax.jit(lambda params, batch_stats: loss_fn(params, batch_stats, False)[0])
  params, batch_stats = variables["params"], variables.get("batch_stats", {})
  opt_state = optimizer.init(params)
  first = float(evaluate(params, batch_stats))
  for _ in range(100):
    params, batch_stats, opt_state = step(params, batch_stats, opt_state)
  # Evaluated in eval mode, so the BatchNorm running averages must have followed too.
  last = float(evaluate(params, batch_stats))
  assert last < 0.15 * first, (first, last)
