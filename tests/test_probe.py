"""Probing: grouped splits, a planted feature found at its layer, TCAV on a network whose answer
is known, the causal check, and the export's files read back."""

import json
import re

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import games, nets
from azjax.config import Config
from azjax.games import breakthrough
from azjax.nets import layers
from azjax.probe import concepts, dataset, probes, tcav
from azjax.runs import checkpoint

BT = games.make("breakthrough", rows=6, cols=6)


# -- Grouped splits -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_grouped_split_never_leaks_a_game(seed):
  rng = np.random.default_rng(seed)
  groups = np.repeat(rng.permutation(40), rng.integers(1, 30, size=40))  # uneven games
  train, test = probes.grouped_split(groups, test_fraction=0.3, seed=seed)
  assert not set(groups[train]) & set(groups[test])
  np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(len(groups)))
  assert len(np.unique(groups[test])) == 12  # 30% of the 40 games


def test_grouped_split_seeds_differ_and_need_two_groups():
  groups = np.arange(100) // 5
  splits = {tuple(probes.grouped_split(groups, seed=s)[1]) for s in range(5)}
  assert len(splits) == 5
  with pytest.raises(ValueError, match="two groups"):
    probes.grouped_split(np.zeros(10))


# -- Random boards ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def boards():
  """1200 random 6x6 boards with 4 pieces a side on distinct squares (about half of them with
  a capture available), as observations `[N, 6, 6, 2]`, "capture available" labels and groups
  of 4. With the piece counts fixed, no linear function of the input says much about captures.
  """
  rng = np.random.default_rng(0)
  count = 1200
  flat = np.zeros((count, 36), np.int8)
  for row in flat:
    squares = rng.permutation(36)[:8]
    row[squares[:4]], row[squares[4:]] = 1, -1
  grids = flat.reshape(count, 6, 6)
  captures = jax.vmap(lambda g: jnp.any(breakthrough.moves(g)[3]))(jnp.asarray(grids))
  obs = np.stack([grids == 1, grids == -1], axis=-1).astype(np.float32)
  return obs, np.asarray(captures, np.float32), np.arange(count) // 4


# -- A planted feature -----------------------------------------------------------------------------

CNN = nets.NetConfig(kind="cnn", channels=4, blocks=2, value_hidden=4)


def planted_variables(model):
  """A CNN whose stem and block_0 copy the two input planes (mover, opponent) and whose
  block_1 computes, per square, "own piece here and an opponent piece diagonally ahead": a
  conjunction that no linear function of the input (nor of the copies) gives, but whose sum
  over the board is "capture available"."""
  variables = dataset.random_network(model, BT.observation_shape, 0)
  params = jax.tree.map(np.array, variables["params"])

  def copy_layer(conv):
    conv["kernel"][:] = 0.0
    conv["bias"][:] = 0.0
    conv["kernel"][1, 1, 0, 0] = conv["kernel"][1, 1, 1, 1] = 1.0

  copy_layer(params["stem_conv"])
  copy_layer(params["conv_0"])
  last = params["conv_1"]
  last["kernel"][:] = 0.0
  last["bias"][:] = 0.0
  # SAME 3x3 conv: out[r, c] += in[r + i - 1, c + j - 1] * kernel[i, j]; "ahead" is row + 1.
  for out, j in ((0, 0), (1, 2)):  # forward-left, forward-right
    last["kernel"][1, 1, 0, out] = 1.0  # own piece here
    last["kernel"][2, j, 1, out] = 1.0  # opponent piece diagonally ahead
    last["bias"][out] = -1.0  # ReLU(own + opponent - 1): 1 only when both
  return {**variables, "params": jax.tree.map(jnp.asarray, params)}


def test_planted_feature_found_at_its_layer_and_not_in_controls(boards):
  obs, y, groups = boards
  assert 0.4 < y.mean() < 0.6
  model = nets.make(CNN, BT.num_actions)
  planted = dataset.activations(model, planted_variables(model), obs)
  random = dataset.activations(model, dataset.random_network(model, BT.observation_shape, 1), obs)
  seeds = (0, 1)
  score = {layer: probes.scores("sgd", planted[layer], y, groups, seeds=seeds).mean
           for layer in ("input", "stem", "block_0", "block_1")}
  random_score = {layer: probes.scores("sgd", random[layer], y, groups, seeds=seeds).mean
                  for layer in ("stem", "block_0", "block_1")}
  assert max(score, key=score.get) == "block_1"
  assert score["block_1"] >= 0.97
  # Before the plant the layers hold what the input holds (measured: 0.57 each).
  for layer in ("input", "stem", "block_0"):
    assert score[layer] <= score["block_1"] - 0.25, (layer, score)
  # The random network of the same shape finds little anywhere (measured: 0.55-0.58).
  assert max(random_score.values()) <= score["block_1"] - 0.25, (random_score, score)


# -- TCAV on a hand-built network ----------------------------------------------------------------


class Hand(nn.Module):
  """obs `[B, 1, 2, 1]` -> activation h = (h0, h1) sown as "stem"; logits (h0, -h0), value
  tanh(h0). Moving h along +h0 makes action 0 more likely and action 1 less likely: the
  directional derivative of -log p(0) is -2 p(1) < 0, that of -log p(1) is 2 p(0) > 0."""

  @nn.compact
  def __call__(self, obs, *, train):
    del train
    h = layers.sow(self, "stem", obs.reshape(obs.shape[0], -1))
    return jnp.stack([h[:, 0], -h[:, 0]], axis=-1), jnp.tanh(h[:, 0])


@pytest.fixture(scope="module")
def hand():
  rng = np.random.default_rng(0)
  count = 400
  h = rng.standard_normal((count, 2)).astype(np.float32)
  actions = (rng.random(count) < 0.3).astype(np.int32)  # action 1 in about 30% of positions
  return dict(obs=h.reshape(count, 1, 2, 1), h=h, concept=(h[:, 0] > 0).astype(np.float32),
              actions=actions, mask=np.ones((count, 2), bool),
              groups=np.arange(count) // 4)


def test_tcav_gradients_match_the_hand_computed_ones(hand):
  grads = tcav.loss_gradients(Hand(), {}, hand["obs"], hand["mask"], hand["actions"], "stem",
                              (2,))
  p1 = 1.0 / (1.0 + np.exp(2.0 * hand["h"][:, 0]))  # softmax of (h0, -h0)
  expected = np.where(hand["actions"] == 0, -2.0 * p1, 2.0 * (1.0 - p1))
  np.testing.assert_allclose(grads[:, 0], expected, rtol=1e-4, atol=1e-6)
  np.testing.assert_array_equal(grads[:, 1], 0.0)
  # The input layer is the observation itself: the same gradients here.
  at_input = tcav.loss_gradients(Hand(), {}, hand["obs"], hand["mask"], hand["actions"],
                                 "input", (1, 2, 1))
  np.testing.assert_allclose(at_input, grads, rtol=1e-5)


def test_tcav_sign_and_score_are_known(hand):
  grads = tcav.loss_gradients(Hand(), {}, hand["obs"], hand["mask"], hand["actions"], "stem",
                              (2,))
  v = tcav.cav(hand["h"], hand["concept"])
  assert v[0] > 0.9  # the concept "h0 > 0" points along +h0
  share_of_action_0 = float(np.mean(hand["actions"] == 0))
  assert tcav.tcav_score(grads, v) == pytest.approx(share_of_action_0)
  assert tcav.tcav_score(grads, -v) == pytest.approx(1.0 - share_of_action_0)
  result = tcav.tcav_test(hand["h"], hand["concept"], grads, hand["groups"], runs=10)
  assert result.scores == pytest.approx([share_of_action_0] * 10)
  assert len(result.random_scores) == 10


def test_tcav_ignores_positions_with_one_legal_action(hand):
  grads = tcav.loss_gradients(Hand(), {}, hand["obs"], np.array([[True, False]] * 400),
                              hand["actions"] * 0, "stem", (2,))
  np.testing.assert_array_equal(grads, 0.0)
  assert np.isnan(tcav.tcav_score(grads, np.array([1.0, 0.0], np.float32)))


def test_t_test_separates_distinct_score_sets():
  assert tcav.t_test([0.8] * 10, [0.5, 0.45, 0.55, 0.5, 0.52, 0.48, 0.5, 0.47, 0.53, 0.5]) < 1e-6
  assert tcav.t_test([0.5] * 5, [0.5] * 5) == 1.0


def test_causal_curve_moves_the_value_along_the_concept_only(hand):
  alphas = (-1.0, 0.0, 1.0, 2.0)
  v = np.array([1.0, 0.0], np.float32)
  gap = tcav.class_gap(hand["h"], hand["concept"], v)
  assert gap > 1.0  # the mean of h0 over h0 > 0, minus that over h0 <= 0: about 1.6
  along = tcav.causal_curve(Hand(), {}, hand["obs"], hand["mask"], hand["actions"], "stem", v,
                            (2,), alphas, scale=gap)
  across = tcav.causal_curve(Hand(), {}, hand["obs"], hand["mask"], hand["actions"], "stem",
                             np.array([0.0, 1.0], np.float32), (2,), alphas, scale=gap)
  assert np.all(np.diff(along["value"]) > 0.05)
  assert along["value_change"][1] == pytest.approx(0.0, abs=1e-6)
  assert along["kl"][1] == pytest.approx(0.0, abs=1e-6) and along["kl"][-1] > 0.1
  np.testing.assert_allclose(across["value_change"], 0.0, atol=1e-6)
  np.testing.assert_allclose(across["top1_agreement"], 1.0)


def test_perturbation_hook_is_a_no_op_without_the_collection():
  model = nets.make(CNN, BT.num_actions)
  variables = dataset.random_network(model, BT.observation_shape, 0)
  obs = jnp.asarray(BT.init(jax.random.key(0)).observation)[None]
  apply_at = jax.jit(tcav.apply_at, static_argnums=(0, 3))
  plain = jax.jit(lambda v, o: model.apply(v, o, train=False))(variables, obs)
  zero = apply_at(model, variables, obs, "block_0", jnp.zeros((1, 6, 6, 4)))
  shifted = apply_at(model, variables, obs, "block_0", jnp.ones((1, 6, 6, 4)))
  jax.tree.map(np.testing.assert_array_equal, plain, zero)
  assert not np.allclose(plain[0], shifted[0])
  with pytest.raises(ValueError, match="cannot act"):
    tcav.apply_at(model, variables, obs, "value_trunk", jnp.zeros((1, 4)))


# -- Export ---------------------------------------------------------------------------------------

TINY_RUN = Config(game="breakthrough", game_options={"rows": 5, "cols": 5}, net="resnet",
                  channels=4, blocks=1, value_hidden=4, simulations=2, max_num_considered_actions=2,
                  eval_simulations=2)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
  from azjax.cli import export
  run_dir = tmp_path_factory.mktemp("run")
  env = games.make("breakthrough", **TINY_RUN.game_kwargs())
  model = nets.make(TINY_RUN.net_config(), env.num_actions)
  variables = dataset.random_network(model, env.observation_shape, 3)
  checkpoint.write_config(run_dir, TINY_RUN)
  checkpoint.save_model(run_dir, variables)
  # An earlier snapshot (another network) for `run_networks`.
  checkpoint.save_model(run_dir, dataset.random_network(model, env.observation_shape, 4), step=2)
  export.main(["--checkpoint", str(run_dir), "--states", "60", "--batch", "8"])
  return run_dir, env, model, variables


@pytest.mark.slow
def test_export_reloads_to_the_same_arrays(exported, tmp_path):
  run_dir, env, model, variables = exported
  out = run_dir / "export"
  ds = dataset.load(out)
  assert len(ds) == 60 and list(ds.activations) == ["input", "stem", "block_0", "policy_trunk",
                                                    "value_trunk"]
  # Parameters: the flat names of the model's variables, exactly.
  with np.load(out / "params.npz") as params:
    expected = checkpoint.flat_names(variables)
    assert sorted(params.files) == sorted(expected)
    for name, value in expected.items():
      np.testing.assert_array_equal(params[name], value)
  # Activations: what the network computes from the stored inputs.
  again = dataset.activations(model, variables, ds.activations["input"])
  for layer, value in again.items():
    np.testing.assert_allclose(ds.activations[layer], value, rtol=1e-5, atol=1e-6)
  # The table: boards in the mover's frame agree with the absolute ones, concepts with a
  # recomputation, and games do not repeat a position.
  absolute = ds.table["board_absolute"].reshape(len(ds), -1)
  mover = np.where(ds.table["player"][:, None] == 1, -ds.table["board"][:, ::-1],
                   ds.table["board"])
  np.testing.assert_array_equal(np.select([mover == 1, mover == -1], [1, 2], 0), absolute)
  assert len({row.tobytes() for row in ds.activations["input"]}) == len(ds)
  assert set(ds.concept_names) == set(concepts.concepts_for(env))
  assert np.all(np.isin(ds.table["outcome"], (-1.0, 1.0)))
  legal = ds.table["legal_mask"][np.arange(len(ds)), ds.table["action"]]
  assert legal.all()
  np.testing.assert_allclose(ds.table["search_policy"].sum(-1), 1.0, rtol=1e-5)
  meta = json.loads((out / "meta.json").read_text())
  assert meta["game"] == "breakthrough" and meta["num_states"] == 60
  # Every action index's move, for each player to move, and the run's metrics file.
  assert meta["action_moves"]["player0"][1] == env.action_to_move(env.init(jax.random.key(0)), 1)
  assert len(meta["action_moves"]["player1"]) == env.num_actions
  assert meta["metrics"] == str(run_dir / "metrics.jsonl")
  # Saving what was loaded gives the same files back.
  dataset.save(tmp_path / "copy", ds)
  copy = dataset.load(tmp_path / "copy")
  for name, value in ds.table.items():
    np.testing.assert_array_equal(copy.table[name], value)
  for name, value in ds.activations.items():
    np.testing.assert_array_equal(copy.activations[name], value)
  header = (out / "states.csv").read_text().splitlines()[0].split(",")
  assert header[:3] == ["game_id", "ply", "player"] and header[-1] == "board_absolute"


def test_run_networks_lists_snapshots_then_final(exported):
  run_dir, _, _, variables = exported
  found = dataset.run_networks(run_dir, variables)
  assert [(label, it) for label, it, _ in found] == [("2", 2), ("final", None)]
  jax.tree.map(np.testing.assert_array_equal, found[-1][2], variables)
  assert not np.array_equal(found[0][2]["params"]["stem_conv"]["kernel"],
                            variables["params"]["stem_conv"]["kernel"])
  assert [label for label, _, _ in dataset.run_networks(run_dir, variables,
                                                        snapshots=False)] == ["final"]


def test_probe_scores_nan_when_a_class_is_too_rare():
  x = np.random.default_rng(0).standard_normal((100, 3))
  y = np.zeros(100)
  y[:3] = 1
  assert np.isnan(probes.score("sgd", x, y, np.arange(100) // 10))
  with pytest.raises(ValueError, match="unknown kind"):
    probes.make_probe("svm")


def test_penalty_is_chosen_on_training_games_only():
  rng = np.random.default_rng(0)
  groups = np.arange(400) // 10
  x = rng.standard_normal((400, 5))
  # A clean linear target wants the weakest ridge penalty; pure noise wants the strongest
  # (shrinking to the mean beats fitting noise on held-out games).
  assert probes.choose_penalty("ridge", x, x @ np.arange(1.0, 6.0), groups) == 1.0
  assert probes.choose_penalty("ridge", x, rng.standard_normal(400), groups) == 1e5
  # Many noise units and few games: a classifier is better off strongly regularised.
  wide = rng.standard_normal((120, 2000))
  y = (wide[:, 0] > 0).astype(float)
  assert probes.choose_penalty("logistic", wide, y, np.arange(120) // 4) < 1.0
  # One game, or a class too rare on a side: the default, as no held-out score exists.
  default = probes.DEFAULT_PENALTY["sgd"]
  assert probes.choose_penalty("sgd", x, x[:, 0] > 0, np.zeros(400)) == default
  rare = np.zeros(400)
  rare[:3] = 1
  assert probes.choose_penalty("sgd", x, rare, groups) == default


def test_a_unit_constant_on_the_training_games_cannot_blow_up_a_probe():
  rng = np.random.default_rng(0)
  groups = np.arange(400) // 10
  x = rng.standard_normal((400, 8))
  y = x @ np.arange(1.0, 9.0)
  train, test = probes.grouped_split(groups, seed=0)
  # A dead unit that fires (barely) once in training, and strongly on the test games.
  dead = np.zeros(400)
  dead[train[0]] = 1e-6
  dead[test] = 5.0
  x = np.column_stack([x, dead])
  assert probes.score("ridge", x, y, groups, seed=0) > 0.9
  z = probes.FeatureScaler().fit(x[train]).transform(x[test])
  assert np.abs(z).max() < 1e4


def test_sample_games_takes_whole_games_until_the_size_is_reached():
  groups = np.repeat(np.arange(10), np.arange(1, 11))  # game g has g + 1 positions; 55 in all
  rows = probes.sample_games(groups, 20, seed=3)
  chosen = np.unique(groups[rows])
  assert len(rows) >= 20 and np.array_equal(rows, np.flatnonzero(np.isin(groups, chosen)))
  # Minimal: without its last game the sample would be too small.
  assert any(len(rows) - np.sum(groups == g) < 20 for g in chosen)
  np.testing.assert_array_equal(rows, probes.sample_games(groups, 20, seed=3))
  assert not np.array_equal(rows, probes.sample_games(groups, 20, seed=4))
  np.testing.assert_array_equal(probes.sample_games(groups, 100), np.arange(55))
  with pytest.raises(ValueError, match="positive"):
    probes.sample_games(groups, 0)


def test_pooled_features_sum_each_channel_over_the_board():
  x = np.random.default_rng(0).standard_normal((5, 3, 4, 6)).astype(np.float32)
  np.testing.assert_allclose(probes.features(x, "pooled"), x.sum(axis=(1, 2)), rtol=1e-6)
  assert probes.features(x, "flat").shape == (5, 72)
  vector = x[:, 0, 0]  # a layer without a board (the value trunk) is used as it is
  np.testing.assert_array_equal(probes.features(vector, "pooled"), vector)
  with pytest.raises(ValueError, match="unknown features 'mean'"):
    probes.features(x, "mean")


def test_pooled_probe_reads_a_count_concept_a_flat_probe_struggles_with():
  """"More own pieces than enemy pieces" on random 6x6 boards: a sum over squares, exact for
  the pooled probe; the flat probe must learn 72 equal weights from 300 positions."""
  rng = np.random.default_rng(0)
  n = 400
  own = rng.random((n, 6, 6)) < rng.uniform(0.1, 0.4, (n, 1, 1))
  enemy = (rng.random((n, 6, 6)) < rng.uniform(0.1, 0.4, (n, 1, 1))) & ~own
  boards = np.stack([own, enemy], -1).astype(np.float32)  # [N, 6, 6, 2], as an observation
  y = (own.sum((1, 2)) > enemy.sum((1, 2))).astype(np.float32)
  groups = np.arange(n) // 4
  pooled = probes.scores("logistic", probes.features(boards, "pooled"), y, groups,
                         seeds=(0, 1)).mean
  flat = probes.scores("logistic", probes.features(boards, "flat"), y, groups,
                       seeds=(0, 1)).mean
  assert pooled > 0.97
  assert pooled > flat + 0.03


@pytest.mark.slow
def test_probe_cli_on_an_export(exported, tmp_path):
  from azjax.cli import probe
  run_dir, _, _, _ = exported
  out = tmp_path / "probe"
  probe.main(["--run", str(run_dir), "--dataset", str(run_dir / "export"), "--out", str(out),
              "--seeds", "1", "--sweep-seeds", "1", "--tcav-runs", "2", "--alphas=-1,0,1",
              "--probes", "sgd,ridge", "--concepts", "material,capture_available", "--tune",
              "--tcav-states", "30"])
  for name in ("scores.csv", "summary.csv", "summary.md", "layers.png", "heatmaps.png"):
    assert (out / name).exists(), name
  summary = probe._read_csv(out / "summary.csv")
  # Both networks of the run and the random control, every body layer.
  assert {r["checkpoint"] for r in summary} == {"init", "2", "final"}
  assert {r["layer"] for r in summary} == {"stem", "block_0", "policy_trunk", "value_trunk"}
  assert {r["network"] for r in summary} == {"trained", "random"}


def test_probe_cli_tcav_on_a_sample_of_whole_games(exported, tmp_path):
  from azjax.cli import probe
  run_dir, _, _, _ = exported
  summary = tmp_path / "probe" / "summary.md"
  probe.main(["--checkpoint", str(run_dir), "--dataset", str(run_dir / "export"), "--out",
              str(tmp_path / "probe"), "--seeds", "1", "--probes", "sgd", "--concepts",
              "capture_available", "--tcav-runs", "2", "--tcav-states", "30", "--tcav-layers",
              "block_0", "--alphas=0,1"])
  found = re.search(r"TCAV and the causal check on (\d+) positions from (\d+) games",
                    summary.read_text())
  assert found and 30 <= int(found[1]) < 60
  assert {r["layer"] for r in probe._read_csv(tmp_path / "probe" / "tcav.csv")} == {"block_0"}


def test_probe_cli_pooled_features_without_tcav(exported, tmp_path):
  from azjax.cli import probe
  run_dir, _, _, _ = exported
  out = tmp_path / "probe"
  probe.main(["--checkpoint", str(run_dir), "--dataset", str(run_dir / "export"), "--out",
              str(out), "--seeds", "1", "--probes", "sgd", "--concepts", "material_advantage",
              "--features", "pooled", "--no-tcav"])
  scores = probe._read_csv(out / "scores.csv")
  assert {r["features"] for r in scores} == {"pooled"}
  assert not (out / "tcav.csv").exists() and not (out / "tcav.png").exists()
  assert "probe features: pooled" in (out / "summary.md").read_text()


def test_probe_run_without_snapshots_warns(exported, tmp_path, capsys):
  import shutil

  from azjax.cli import probe
  run_dir, _, _, _ = exported
  copy = tmp_path / "run"
  shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("models", "checkpoints"))
  probe.main(["--run", str(copy), "--dataset", str(run_dir / "export"), "--out",
              str(tmp_path / "probe"), "--seeds", "1", "--sweep-seeds", "1", "--probes", "sgd",
              "--concepts", "material_advantage", "--features", "pooled", "--no-tcav"])
  assert "has no network snapshots" in capsys.readouterr().err
