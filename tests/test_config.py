"""The config's one place of documentation: every field's help, docs/config.md, config files."""

import dataclasses
import json
import re
from pathlib import Path

import jax.numpy as jnp
import pytest

from azjax import config as config_lib
from azjax.cli import train as train_cli
from azjax.config import Config

try:
  import tomllib
except ModuleNotFoundError:  # Python 3.10.
  tomllib = None

ROOT = Path(__file__).resolve().parent.parent
FIELDS = dataclasses.fields(Config)
needs_toml = pytest.mark.skipif(tomllib is None, reason="reading TOML needs Python 3.11")


# -- Every field documented where it is declared ---------------------------------------------------


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_every_field_has_a_one_line_help(field):
  info = field.metadata
  assert isinstance(info.get("section"), config_lib.Section), field.name
  assert info["help"].strip() and "\n" not in info["help"], field.name
  assert config_lib.field_help(field.name).startswith(info["help"])
  # The allowed values hold for the default (a preset may only narrow them).
  if info["check"] is not None:
    assert info["check"].ok(field.default), field.name
  if config_lib.field_choices(field):
    assert field.default in config_lib.field_choices(field), field.name


def test_docs_config_md_is_up_to_date():
  """docs/config.md is generated from the declarations: a new key, a changed default or help, or
  a changed preset needs `python -m azjax.config --markdown > docs/config.md`."""
  expected = config_lib.reference_markdown()
  actual = (ROOT / "docs" / "config.md").read_text()
  assert actual == expected, ("docs/config.md is out of date: run "
                              "python -m azjax.config --markdown > docs/config.md")
  for field in FIELDS:
    assert f"| `{field.name}` |" in actual
  for name in config_lib.PRESETS:
    assert f"| `{name}` |" in actual


def test_the_markdown_command_prints_the_reference(capsys):
  config_lib.main(["--markdown"])
  assert capsys.readouterr().out == config_lib.reference_markdown()


def test_the_iterations_hyperparameters_are_the_traced_keys():
  """`azjax.train.Hyper` is built from the `traced` marks: it carries each traced value (ints as
  int32 arrays, so loop bounds stay integers), and a sweep batches exactly those and the seed."""
  from azjax import sweep, train

  config = config_lib.Config(learning_rate=0.25, min_buffer=7, temperature_moves=3)
  hyper = train.Hyper.from_config(config)
  assert train.HYPER_KEYS == config_lib.TRACED_KEYS
  arrays = hyper.as_arrays()
  for key in config_lib.TRACED_KEYS:
    assert getattr(hyper, key) == getattr(config, key)
    kind = jnp.int32 if isinstance(getattr(config, key), int) else jnp.float32
    assert getattr(arrays, key).dtype == kind, key
  assert set(sweep.BATCHED_KEYS) == {"seed", *config_lib.TRACED_KEYS}


def test_the_config_stays_a_frozen_hashable_value():
  config = config_lib.PRESETS["connect_four"]
  assert hash(config) == hash(dataclasses.replace(config))
  with pytest.raises(dataclasses.FrozenInstanceError):
    config.simulations = 3  # type: ignore[misc]
  assert Config.from_dict(json.loads(config.to_json())) == config
  assert config_lib.non_defaults(Config()) == {}
  assert config_lib.non_defaults(config)["game"] == "connect_four"


@pytest.mark.parametrize("field", [f for f in FIELDS if f.metadata["check"] is not None],
                         ids=lambda f: f.name)
def test_validate_applies_each_declared_range(field):
  check = field.metadata["check"]
  bad = next(v for v in (-1, 0, 1, 1.5) if not check.ok(v))
  value = float(bad) if isinstance(field.default, float) else int(bad)
  with pytest.raises(config_lib.ConfigError,
                     match=rf"config {field.name}=.*must be {re.escape(check.text)}") as err:
    dataclasses.replace(Config(), **{field.name: value}).validate()
  assert err.value.key == field.name


@pytest.mark.parametrize("key", ["optimizer", "lr_schedule", "gating_player"])
def test_validate_applies_each_declared_choice(key):
  with pytest.raises(ValueError, match=f"config {key}='nonsense': must be one of .* or "):
    dataclasses.replace(Config(), **{key: "nonsense"}).validate()


def _learner_configs():
  from azjax.klent.config import KlentConfig
  from azjax.tdleaf.config import Config as TDLeafConfig
  return [("config", Config(game="connect_four")), ("tdleaf", TDLeafConfig(game="connect_four")),
          ("klent", KlentConfig(game="connect_four"))]


@pytest.mark.parametrize(("field", "value", "why"), [
    ("iterations", 10.0, "must be an int"), ("iterations", True, "must be an int"),
    ("seed", "1", "must be an int"), ("iterations", 0, "must be >= 1"),
    ("game", "go", "unknown game; available: "),
    ("game_options", {"rows": 5}, "connect_four has no option 'rows'")])
def test_every_learners_config_checks_its_declared_fields_in_one_way(field, value, why):
  """AlphaZero's, TD-Leaf's and KLENT's configs share `azjax.config.checks`: the same field
  with the same bad value gets the same reason, under the learner's own name."""
  for name, config in _learner_configs():
    bad = dataclasses.replace(config, **{field: value})
    with pytest.raises(config_lib.ConfigError,
                       match=re.escape(f"{name} {field}={value!r}: {why}")) as err:
      bad.validate()
    assert err.value.key == field


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "0.5", False])
def test_a_float_field_needs_a_finite_number_in_every_learners_config(value):
  for name, config in _learner_configs():
    with pytest.raises(config_lib.ConfigError, match=f"{name} minutes=.*must be a finite number"):
      dataclasses.replace(config, minutes=value).validate()


def test_a_learning_rate_floor_needs_the_cosine_schedule():
  with pytest.raises(ValueError, match="lr_floor=0.1: is where the cosine schedule ends; "
                     "lr_schedule='constant' has none"):
    Config(lr_floor=0.1).validate()
  Config(lr_floor=0.1, lr_schedule="cosine").validate()


def test_an_averaged_network_cannot_be_gated():
  with pytest.raises(ValueError, match="ema_decay=0.99: cannot average the network of a gated"):
    Config(ema_decay=0.99, gating=True).validate()
  Config(ema_decay=0.99).validate()
  with pytest.raises(ValueError, match="ema_decay=1.0: must be in \\[0, 1\\)"):
    Config(ema_decay=1.0).validate()


# -- A game's options ------------------------------------------------------------------------------


def test_a_games_options_are_checked_by_its_declaration():
  """`game_options` are the game's (`Game.options_spec`): names, types, ranges and values as it
  declares them, and whatever else its constructor checks (Slider's squares)."""
  assert Config(game="breakthrough", game_options={"observation": "attacks"}).validate()
  for game, options, why in [
      ("connect_four", {"observation": "thesis"}, "connect_four has no option 'observation'; "
       "it takes none"),
      ("breakthrough", {"size": 5}, "breakthrough has no option 'size'; its options are rows, "
       "cols, observation"),
      ("breakthrough", {"observation": "planes"}, "breakthrough: observation must be one of "
       "mover, thesis, attacks, got 'planes'"),
      ("breakthrough", {"rows": 27}, "breakthrough: rows must be in 2..26, got 27"),
      ("breakthrough", {"cols": "6"}, "breakthrough: cols must be an int, got '6'"),
      ("checkers", {"history": 9}, "checkers: history must be in 1..8, got 9"),
      ("slider", {"blocks": "z9"}, "slider: square z9 is off the 5x5 board")]:
    with pytest.raises(config_lib.ConfigError, match=re.escape(why)) as err:
      Config(game=game, game_options=options).validate()
    assert err.value.key == "game_options" and str(err.value).startswith("config game_options=")


def test_set_names_a_games_option_by_its_name():
  """`--set rows=6` sets the game's option (parsed by its declaration), `game.blocks=none` one
  whose name a setting has too (`blocks` is the network's); the game is set first."""
  override = config_lib.override
  config = override(Config(), [("rows", "6"), ("game", "breakthrough"), ("cols", "5")])
  assert config.game_options == {"rows": 6, "cols": 5}
  config = override(Config(game="slider"), [("game.blocks", "none"), ("blocks", "3"),
                                            ("size", "6")])
  assert config.game_options == {"blocks": "none", "size": 6} and config.blocks == 3
  with pytest.raises(ValueError, match=r"'rows' is an option of breakthrough, not of "
                     r"tic_tac_toe \(it takes none\)"):
    override(Config(), [("rows", "6")])
  with pytest.raises(ValueError, match="breakthrough: rows must be an int, got 'six'"):
    override(Config(game="breakthrough"), [("rows", "six")])
  with pytest.raises(ValueError, match="unknown key 'rowz'"):
    override(Config(game="breakthrough"), [("rowz", "6")])


def test_configs_of_flat_game_options_still_load():
  """Configs written before `game_options` (every run's config.json under results/ up to session
  63) have flat keys for every game's options, 0 or "" (or "mover") for the game's default."""
  old = {"rows": 0, "cols": 0, "observation": "mover", "size": 0, "obstacles": "", "history": 0}
  assert Config.from_dict({**old, "game": "connect_four"}).game_options == {}
  assert Config.from_dict({**old, "game": "breakthrough", "rows": 6, "cols": 6,
                           "observation": "thesis"}).game_options == {
      "rows": 6, "cols": 6, "observation": "thesis"}
  assert Config.from_dict({**old, "game": "slider", "size": 5, "obstacles": "random"}
                          ).game_options == {"size": 5, "blocks": "random"}
  assert Config.from_dict({**old, "game": "checkers", "history": 5}).game_options == {
      "history": 5}
  toml = {"game": {"game": "breakthrough", "rows": 6}, "network": {"blocks": 2}}
  config = Config.from_dict(toml)
  assert config.game_options == {"rows": 6} and config.blocks == 2


def test_a_game_with_an_option_is_its_own_class_and_nothing_else(monkeypatch):
  """A new option needs its declaration in the game and nothing in the config: `--set` parses
  it, `validate` checks it, `--print-config` and docs/config.md list it."""
  from azjax import games
  from azjax.games.tic_tac_toe import TicTacToe

  class Handicapped(TicTacToe):
    options_spec = (games.Option("handicap", int, "moves the first player passes", low=0,
                                 high=2),)

    def __init__(self, handicap: int = 0):
      super().__init__()
      self.handicap = self.option("handicap").check(self.name, handicap)

  original = games.game_class
  monkeypatch.setattr(games, "game_class",
                      lambda name: Handicapped if name == "tic_tac_toe" else original(name))
  config = config_lib.override(Config(), [("handicap", "1")]).validate()
  assert config.game_options == {"handicap": 1}
  assert games.make(config.game, **config.game_kwargs()).handicap == 1
  with pytest.raises(ValueError, match="tic_tac_toe: handicap must be in 0..2, got 3"):
    config_lib.override(Config(), [("handicap", "3")])
  assert "game_options = {handicap = 1}" in config_lib.to_toml(config)
  assert "| tic_tac_toe | `handicap` | int | 0 | 0..2 | moves the first player passes |" in (
      config_lib.reference_markdown())


# -- --print-config and config files --------------------------------------------------------------


@needs_toml
@pytest.mark.parametrize("name", list(config_lib.PRESETS))
def test_printed_toml_has_every_key_with_its_help_and_reads_back(name, tmp_path):
  preset = config_lib.PRESETS[name]
  text = config_lib.to_toml(preset)
  for field in FIELDS:
    assert f"# {config_lib.field_help(field.name)}" in text, field.name
  assert Config.from_dict(tomllib.loads(text)) == preset
  (tmp_path / "preset.toml").write_text(text)
  assert Config.from_dict(config_lib.read_settings(tmp_path / "preset.toml")) == preset


@needs_toml
def test_print_config_formats(capsys):
  train_cli.main("tic_tac_toe", ["--preset", "tic_tac_toe", "--print-config", "toml"])
  out = capsys.readouterr().out
  assert 'net = "mlp"' in out and "# the network's kind" in out
  assert Config.from_dict(tomllib.loads(out)) == config_lib.PRESETS["tic_tac_toe"]
  train_cli.main("tic_tac_toe", ["--preset", "tic_tac_toe", "--print-config", "json"])
  assert Config.from_dict(json.loads(capsys.readouterr().out)) == config_lib.PRESETS[
      "tic_tac_toe"]
  # Captured (not a terminal), the plain flag prints JSON as before, for programs.
  train_cli.main("tic_tac_toe", ["--preset", "tic_tac_toe", "--print-config"])
  assert json.loads(capsys.readouterr().out)["net"] == "mlp"


TOML = """\
# Settings over the preset's.
simulations = 8
learning_rate = 3e-4
augment = true
"""
JSON = '{"simulations": 8, "learning_rate": 0.0003, "augment": true}'


@pytest.mark.parametrize("name, text", [("run.toml", TOML), ("run.json", JSON),
                                        ("no_suffix", JSON)])
def test_a_config_file_overrides_the_preset_and_set_overrides_the_file(tmp_path, name, text):
  path = tmp_path / name
  path.write_text(text)
  config = train_cli.build_config("tic_tac_toe", "tic_tac_toe", [], None, None,
                                  config_file=path)
  assert config == dataclasses.replace(config_lib.PRESETS["tic_tac_toe"], simulations=8,
                                       learning_rate=3e-4, augment=True)
  config = train_cli.build_config("tic_tac_toe", "tic_tac_toe", ["simulations=12"], 5.0, None,
                                  config_file=path)
  assert (config.simulations, config.learning_rate, config.minutes) == (12, 3e-4, 5.0)


@needs_toml
def test_keys_by_section_dotted_or_in_tables(tmp_path):
  """`search.simulations=8` is `simulations=8`; a file may hold keys in their sections' tables
  (TOML or JSON) or at the top level, and a section that does not hold a key is refused."""
  assert config_lib.override(Config(), [("search.simulations", "8")]) == Config(simulations=8)
  with pytest.raises(ValueError, match=r"'network.simulations': simulations is in section "
                     r"'search' \(search.simulations\)"):
    config_lib.override(Config(), [("network.simulations", "8")])
  toml = tmp_path / "run.toml"
  toml.write_text("learning_rate = 0.01\n[search]\nsimulations = 8\n[network]\nblocks = 3\n")
  json_file = tmp_path / "run.json"
  json_file.write_text('{"learning_rate": 0.01, "search": {"simulations": 8}, "blocks": 3}')
  expected = Config(learning_rate=0.01, simulations=8, blocks=3)
  for path in (toml, json_file):
    assert train_cli.build_config("tic_tac_toe", "tiny", [], None, None,
                                  config_file=path) == expected


def test_a_runs_config_json_is_a_config_file(tmp_path):
  run = dataclasses.replace(config_lib.PRESETS["tic_tac_toe"], hidden=32, seed=7)
  config_lib.write_config(tmp_path, run)
  assert train_cli.build_config("tic_tac_toe", "tiny", [], None, None,
                                config_file=tmp_path / "config.json") == run


@pytest.mark.parametrize("text, message", [
    ("learnin_rate = 1e-3\n", r"unknown key 'learnin_rate'; did you mean learning_rate"),
    ('simulations = "many"\n', r"config simulations: expected int, got 'many'"),
    ("simulations = 8.5\n", r"config simulations: expected int, got 8.5"),
    ("augment = 1\n", r"config augment: expected bool, got 1"),
    ('{"learning_rate": "fast"}', r"config learning_rate: expected float, got 'fast'"),
    ("[serch]\nsimulations = 8\n", r"'serch' is a table, but the tables of a config are its "
     "sections: game, network, search"),
    ("[network]\nsimulations = 8\n", r"'network.simulations': simulations is in section "
     r"'search' \(search.simulations\)"),
    ("simulations = \n", r"not a valid TOML config file"),
    ('{"simulations": 8,}', r"not a valid JSON config file"),
    ('{"learning_rate": NaN}', r"NaN is not a finite number"),
])
def test_config_file_errors_name_the_file_and_the_key(tmp_path, text, message):
  path = tmp_path / "bad.cfg"
  path.write_text(text)
  with pytest.raises(ValueError, match=f"^{re.escape(str(path))}: .*{message}"):
    train_cli.build_config("tic_tac_toe", "tic_tac_toe", [], None, None, config_file=path)


def test_impossible_values_from_a_file_name_the_file(tmp_path):
  path = tmp_path / "bad.toml"
  path.write_text('learning_rate = -1.0\noptimizer = "adamw"\n')
  where = re.escape(str(path))
  with pytest.raises(ValueError, match=rf"learning_rate=-1.0: must be > 0 \(set in {where}\)"):
    train_cli.build_config("tic_tac_toe", "tic_tac_toe", [], None, None, config_file=path)
  # A value --set replaced is not the file's.
  with pytest.raises(ValueError, match=r"config learning_rate=-2.0: must be > 0$"):
    train_cli.build_config("tic_tac_toe", "tic_tac_toe", ["learning_rate=-2"], None, None,
                           config_file=path)
  path.write_text('game = "connect_four"\n')
  with pytest.raises(ValueError, match=rf"game='connect_four' \(from {where}\): .* trains "
                     "tic_tac_toe"):
    train_cli.build_config("tic_tac_toe", "tic_tac_toe", [], None, None, config_file=path)


def test_the_training_command_reports_config_file_errors(tmp_path, capsys):
  path = tmp_path / "run.toml"
  path.write_text("learnin_rate = 1e-3\n")
  with pytest.raises(SystemExit) as err:
    train_cli.main("tic_tac_toe", ["--config", str(path), "--print-config"])
  assert err.value.code == 2
  assert f"error: {path}: config: unknown key 'learnin_rate'" in capsys.readouterr().err
  with pytest.raises(SystemExit) as err:
    train_cli.main("tic_tac_toe", ["--config", str(tmp_path / "missing.toml")])
  assert err.value.code == 2 and "missing.toml: cannot read it" in capsys.readouterr().err
  with pytest.raises(SystemExit) as err:
    train_cli.main("tic_tac_toe", ["--resume", "--run-dir", str(tmp_path), "--config",
                                   str(path)])
  assert err.value.code == 2 and "drop --config" in capsys.readouterr().err


def test_each_component_setting_is_declared_once_in_config():
  """The network's and the search's settings come from their Config sections by name (or the
  field's `to`), not from a hand-written copy: every NetConfig and SearchConfig field is set by
  exactly one Config field, except the constants no run changes and `reply_head`, which the
  training option `reply_weight` implies."""
  from azjax.config.fields import _NETWORK, _SEARCH
  from azjax.nets import NetConfig
  from azjax.search import SearchConfig

  constants = {NetConfig: {"se_ratio", "reply_head"}, SearchConfig: {"pb_c_base"}}
  config = dataclasses.replace(Config(), net="cnn", channels=7, compute_dtype="bfloat16",
                               search="puct", simulations=5, temperature=0.5)
  for section, component in ((_NETWORK, NetConfig), (_SEARCH, SearchConfig)):
    values = config.component_values(section)
    fields = {f.name for f in dataclasses.fields(component)}
    assert set(values) == fields - constants[component], component
  assert config.net_config() == NetConfig(kind="cnn", channels=7, blocks=config.blocks,
                                          hidden=config.hidden, value_hidden=config.value_hidden,
                                          policy_head="dense", dtype="bfloat16")
  assert dataclasses.replace(config, reply_weight=0.15).net_config().reply_head
  assert config.search_config().algorithm == "puct"
  assert config.search_config().temperature == 0.5
  evaluation = config.search_config(evaluation=True)
  assert (evaluation.simulations, evaluation.gumbel_scale, evaluation.dirichlet_fraction,
          evaluation.temperature_moves) == (config.eval_simulations, 0.0, 0.0, 0)


def test_traced_search_settings_come_from_hyper():
  """`Trainer.search_config(hyper)` reads every search field declared `traced` from `hyper`
  (the seven noise and exploration settings) and the others from the config."""
  from azjax.train import Hyper, Trainer

  config = Config(net="mlp", hidden=8, blocks=1, value_hidden=8, simulations=5)
  trainer = Trainer.create(config)
  traced = config.component_keys("search", traced=True)
  assert sorted(traced) == sorted([
      "gumbel_scale", "gumbel_moves", "dirichlet_alpha", "dirichlet_fraction", "pb_c_init",
      "temperature", "temperature_moves"])
  hyper = dataclasses.replace(Hyper.from_config(config), gumbel_scale=0.5, gumbel_moves=7,
                              dirichlet_alpha=0.1, dirichlet_fraction=0.2, pb_c_init=3.0,
                              temperature=0.7, temperature_moves=9)
  assert trainer.search_config(hyper) == dataclasses.replace(
      config.search_config(), gumbel_scale=0.5, gumbel_moves=7, dirichlet_alpha=0.1,
      dirichlet_fraction=0.2, pb_c_init=3.0, temperature=0.7, temperature_moves=9)
  # Without `hyper`, the config's own numbers.
  assert trainer.search_config() == config.search_config()


# -- Moved from test_train.py ------------------------------------------------------------


@pytest.mark.parametrize("pairs, message", [
    ([("learning_rat", "0.1")], "unknown key 'learning_rat'; did you mean learning_rate"),
    ([("channels", "wide")], "channels: expected int"),
    ([("buffer_size", "100")], "buffer_size=100: must be a multiple of selfplay_batch"),
    ([("buffer_size", "32"), ("train_batch", "64"), ("selfplay_batch", "16"),
      ("min_buffer", "0")], "buffer_size=32: must hold at least one training batch"),
    ([("eval_games", "3")], "eval_games=3: must be even"),
    ([("game", "chess")], "game='chess': unknown game"),
    ([("net", "transformer")], "kind"),
    ([("search", "alphabeta")], "algorithm"),
])
def test_bad_config_names_the_key(pairs, message):
  with pytest.raises(ValueError, match=message):
    config_lib.override(Config(), pairs).validate()

def test_batch_not_divisible_by_devices():
  with pytest.raises(ValueError, match="selfplay_batch=64: must be divisible by the number"):
    Config().validate(num_devices=3)

def test_presets_are_valid():
  for name, preset in config_lib.PRESETS.items():
    preset.validate()
  assert config_lib.preset("auto", game="breakthrough").game == "breakthrough"
